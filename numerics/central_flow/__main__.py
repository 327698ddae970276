"""``python -m numerics.central_flow``: see :mod:`numerics.central_flow.cli`."""

import sys

from numerics.central_flow.cli import main

if __name__ == "__main__":
    sys.exit(main())
