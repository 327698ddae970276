"""Commands of the audit suite (``python -m verify COMMAND``).

Usage::

    python -m verify coverage [--paper NAME] [--format text|json]

Commands:

    coverage    every labelled item of each paper (sections, theorems, figures, tables,
                numbered equations) with the claims that cover it, the reason it holds
                no checkable claim, or "uncovered" (see ``python -m verify coverage -h``)

Exit status: that of the command; 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from verify import coverage

PROG = "python -m verify"


def build_parser() -> argparse.ArgumentParser:
    """The dispatcher: one subcommand per audit command."""
    parser = coverage.OneLineParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=coverage.OneLineParser)
    sub = commands.add_parser(
        "coverage",
        help="the coverage map of the papers' labelled items",
        description=coverage.help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    coverage.add_arguments(sub)
    sub.set_defaults(run=coverage.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), run the command; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise coverage.UsageError(f"{PROG}: error: a command is required (coverage)")
        return args.run(args)
    except coverage.UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except coverage.CoverageError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
