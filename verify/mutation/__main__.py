"""``python -m verify.mutation``: see :mod:`verify.mutation.cli`."""

import sys

from verify.mutation.cli import main

if __name__ == "__main__":
    sys.exit(main())
