"""``python -m numerics.multipath``: see :mod:`numerics.multipath.cli`."""

import sys

from numerics.multipath.cli import main

if __name__ == "__main__":
    sys.exit(main())
