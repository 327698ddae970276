"""Commands of the audit suite (``python -m verify COMMAND``).

Usage::

    python -m verify coverage [--paper NAME] [--format text|json]
    python -m verify list [--paper NAME] [--verdict VERDICT] [--report PATH] [--format text|json]
    python -m verify diff OLD/report.json NEW/report.json [--format text|json]

Commands:

    coverage    every labelled item of each paper (sections, theorems, figures, tables,
                numbered equations) with the claims that cover it, the reason it holds
                no checkable claim, or "uncovered" (see ``python -m verify coverage -h``)
    list        the registered claims with their checks' node ids (from the report, else
                found in the check modules' source) and their last verdicts (from
                verify-report/report.json or --report PATH)
    diff        verdict and value changes between two audit reports (exit 1 when a
                verdict changed; see ``python -m verify diff -h``)

Exit status: that of the command; 2 on bad input (one line on stderr); 141 when the reader
closes the pipe (``| head``).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from numerics.cli_support import PlainHelpFormatter, closed_pipe, write_line
from verify import coverage, diff
from verify.registry import PAPERS, load_registry
from verify.report import VERDICTS, _sort_key

PROG = "python -m verify"
DEFAULT_REPORT = Path("verify-report") / "report.json"
CHECKS_ROOT = Path(__file__).resolve().parent


def build_parser() -> argparse.ArgumentParser:
    """The dispatcher: one subcommand per audit command."""
    parser = coverage.OneLineParser(prog=PROG, description=__doc__, formatter_class=PlainHelpFormatter)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=coverage.OneLineParser)
    _add_command(commands, "coverage", "the coverage map of the papers' labelled items", coverage)
    sub = commands.add_parser(
        "list",
        help="the registered claims, their checks and last verdicts",
        description="The registered claims with their checks' node ids and their verdicts in the last report.",
    )
    sub.add_argument("--paper", type=_paper_arg, metavar="NAME", help=f"one paper: {', '.join(PAPERS)}")
    sub.add_argument("--verdict", type=_verdict_arg, metavar="VERDICT", help=f"one verdict: {', '.join(VERDICTS)}")
    sub.add_argument(
        "--report", type=Path, default=None, help=f"the report to read verdicts from (default {DEFAULT_REPORT})"
    )
    sub.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    sub.set_defaults(run=run_list)
    _add_command(commands, "diff", "verdict and value changes between two reports", diff)
    return parser


def _add_command(commands, name: str, summary: str, module) -> None:
    """Subcommand ``name`` served by ``module`` (its ``help_text()``, ``add_arguments(parser)`` and ``run``)."""
    sub = commands.add_parser(name, help=summary, description=module.help_text(), formatter_class=PlainHelpFormatter)
    module.add_arguments(sub)
    sub.set_defaults(run=module.run)


def _paper_arg(text: str) -> str:
    if text not in PAPERS:
        raise argparse.ArgumentTypeError(f"unknown paper {text!r}; choose from {', '.join(PAPERS)}")
    return text


def _verdict_arg(text: str) -> str:
    if text not in VERDICTS:
        raise argparse.ArgumentTypeError(f"unknown verdict {text!r}; choose from {', '.join(VERDICTS)}")
    return text


def check_nodeids(root: Path = CHECKS_ROOT) -> dict[str, list[str]]:
    """{claim id: node ids of its checks}, read from the ``@claim``/``@discrepancy`` decorators of the check modules.

    Static (the modules are parsed, not imported): a parametrized check is listed once,
    without its parameters.
    """
    out: dict[str, list[str]] = {}
    base = root.parent
    for path in sorted(root.rglob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(), filename=str(path))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        rel = path.relative_to(base).as_posix()
        for prefix, fn in _functions(tree.body, ""):
            for deco in fn.decorator_list:
                cid = _claim_of(deco)
                if cid is not None:
                    out.setdefault(cid, []).append(f"{rel}::{prefix}{fn.name}")
    return out


def _functions(body: list[ast.stmt], prefix: str):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield prefix, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from _functions(node.body, f"{prefix}{node.name}::")


def _claim_of(deco: ast.expr) -> str | None:
    if not isinstance(deco, ast.Call) or not deco.args:
        return None
    func = deco.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    first = deco.args[0]
    if name in ("claim", "discrepancy") and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def list_claims(
    report: dict | None, paper: str | None = None, verdict: str | None = None, nodeids: dict | None = None
) -> list[dict]:
    """The registered claims (optionally of one ``paper`` and last ``verdict``) with checks and verdicts.

    ``report``: the last audit report (its verdicts, ``last_run`` and the node ids of the
    checks that ran), or None; ``nodeids``: node ids found in the source
    (:func:`check_nodeids`), used where the report names no check.
    """
    registry = load_registry()
    nodeids = check_nodeids() if nodeids is None else nodeids
    last = {c["id"]: c for c in (report or {}).get("claims", [])}
    rows = []
    for cid, c in registry.items():
        entry = last.get(cid) or {}
        ran = [o["nodeid"] for o in entry.get("check_outcomes") or []]
        row = {
            "id": cid,
            "paper": c.paper,
            "where": c.where,
            "kind": c.kind,
            "verdict": entry.get("verdict"),
            "last_run": entry.get("last_run"),
            "checks": ran or nodeids.get(cid, []),
        }
        if (paper is None or row["paper"] == paper) and (verdict is None or row["verdict"] == verdict):
            rows.append(row)
    order = {p: i for i, p in enumerate(PAPERS)}
    return sorted(rows, key=lambda r: (order.get(r["paper"], len(order)), _sort_key(r["id"])))


def run_list(args: argparse.Namespace) -> int:
    """Print the claims of the parsed ``args``; returns the exit status."""
    path = args.report if args.report is not None else DEFAULT_REPORT
    report = None
    if args.report is not None or path.exists():
        report = diff.load_report(path)
    rows = list_claims(report, args.paper, args.verdict)
    if args.format == "json":
        text = json.dumps({"report": str(path) if report else None, "claims": rows}, indent=2)
    else:
        lines = [] if report is not None else [f"(no report at {path}: verdicts unknown)"]
        width = max((len(r["id"]) for r in rows), default=2)
        for r in rows:
            lines.append(f"{r['id']:<{width}}  {r['verdict'] or '?':<17}  {r['where']}")
            lines += [f"{'':<{width}}    {nodeid}" for nodeid in r["checks"]]
        lines.append(f"{len(rows)} claims")
        text = "\n".join(lines)
    return 0 if write_line(text) else 141


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: the command line), run the command; returns the exit status."""
    args = None
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise coverage.UsageError(f"{PROG}: error: a command is required (coverage, list, diff)")
        status = args.run(args)
        sys.stdout.flush()  # a reader that left (``| head``) shows here, not at the interpreter's exit
        return status
    except BrokenPipeError:  # every command: the reader closed the pipe; end quietly
        return closed_pipe()
    except coverage.UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except coverage.CoverageError as exc:
        print(f"{PROG} {args.command if args else ''}: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a bad report file (diff, list)
        print(f"{PROG} {args.command if args else ''}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
