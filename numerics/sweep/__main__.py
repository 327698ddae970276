"""``python -m numerics.sweep``: see :mod:`numerics.sweep.cli`."""

import sys

from numerics.sweep.cli import main

if __name__ == "__main__":
    sys.exit(main())
