"""``python -m verify.mutation list|check|run``: the mutation catalogue and its runner.

    python -m verify.mutation list [--format text|json] [--only ID ...]
    python -m verify.mutation check [--format text|json] [--only ID ...]
    python -m verify.mutation run [--format text|json] [--only ID ...] [--jobs N] [--timeout S]
                                  [--baseline-timeout S] [--work-dir DIR]

``list`` prints the catalogue; ``check`` verifies that every mutant still applies to the
current tree (its ``old`` snippet occurs as specified, its file, checks and tests exist) and
exits 1 listing the stale ones; ``run`` applies each mutant alone to a scratch copy of the
repository, runs its audit checks and its library tests there and compares with a baseline
run of the unmutated tree. With ``--format json`` the output ends with exactly one JSON
line ``{"mutants": N, "killed_by_audit": K, "killed_by_tests": K2, "survivors": [...]}``,
preceded by one ``{"mutant": {...}}`` line per mutant. ``--strict`` makes ``run`` exit 1
when a mutant survives the audit.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from numerics.cli_support import run_main

from .catalogue import AREAS, CATALOGUE, CatalogueError, load_catalogue, problems, select


def repo_root() -> Path:
    """The repository this package belongs to (two levels above ``verify/mutation``)."""
    return Path(__file__).resolve().parents[2]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m verify.mutation",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--format", choices=("text", "json"), default="text")
    common.add_argument("--only", nargs="+", metavar="ID", default=[], help="these mutants only")
    common.add_argument("--catalogue", type=Path, default=CATALOGUE, help=argparse.SUPPRESS)
    common.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
    sub.add_parser("list", parents=[common], help="print the catalogue")
    sub.add_parser("check", parents=[common], help="verify that every mutant applies to the current tree")
    run = sub.add_parser("run", parents=[common], help="run the mutants against the audit and the tests")
    run.add_argument("--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    run.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per pytest run before a mutant counts as hung (default 600)",
    )
    run.add_argument(
        "--baseline-timeout",
        type=float,
        default=None,
        help="seconds per pytest run of the unmutated tree before the run is abandoned (default: --timeout)",
    )
    run.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="slots, shared sweep store and cached baselines (default: <temp>/paper-audit-mutation)",
    )
    run.add_argument("--strict", action="store_true", help="exit 1 when a mutant survives the audit")
    return p


_OUTPUT = threading.Lock()  # one line at a time from the job threads


def _emit(line: str) -> None:
    with _OUTPUT:
        print(line, flush=True)


def main(argv=None) -> int:
    """Entry point; returns the exit status (141, quietly, when the reader closes the pipe)."""
    return run_main("python -m verify.mutation", lambda: _main(argv))


def _main(argv=None) -> int:
    args = _parser().parse_args(argv)
    root = (args.root or repo_root()).resolve()
    try:
        mutants = select(load_catalogue(args.catalogue), args.only)
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "list":
        if args.format == "json":
            for m in mutants:
                _emit(
                    json.dumps(
                        {
                            "id": m.id,
                            "area": m.area,
                            "description": m.description,
                            "file": m.file,
                            "checks": list(m.checks),
                            "tests": list(m.tests),
                        }
                    )
                )
        else:
            for m in mutants:
                _emit(f"{m.id:<34} {m.area:<13} {m.file}\n    {m.description}")
            counts = {a: sum(m.area == a for m in mutants) for a in AREAS}
            _emit(f"{len(mutants)} mutants: " + ", ".join(f"{a} {n}" for a, n in counts.items()))
        return 0
    stale = problems(mutants, root)
    if args.command == "check":
        if args.format == "json":
            _emit(json.dumps({"mutants": len(mutants), "stale": stale}))
        else:
            for s in stale:
                _emit(f"stale: {s}")
            _emit(f"{len(mutants)} mutants, {len(stale)} problems" + ("" if stale else ": every mutant applies"))
        return 1 if stale else 0
    if stale:
        for s in stale:
            print(f"stale: {s}", file=sys.stderr)
        print("error: fix the stale mutants first (python -m verify.mutation check)", file=sys.stderr)
        return 1
    from .runner import DEFAULT_TIMEOUT, RunError, Runner, summary

    if args.jobs < 1:
        print("error: --jobs must be >= 1", file=sys.stderr)
        return 2
    for flag, t in (("--timeout", args.timeout), ("--baseline-timeout", args.baseline_timeout)):
        if t is not None and not t > 0:
            print(f"error: {flag} must be a positive number of seconds; got {t!r}", file=sys.stderr)
            return 2
    runner = Runner(
        root,
        jobs=args.jobs,
        work=args.work_dir,
        timeout=args.timeout if args.timeout is not None else DEFAULT_TIMEOUT,
        baseline_timeout=args.baseline_timeout,
    )

    def show(o):
        if args.format == "json":
            _emit(json.dumps({"mutant": o.as_dict()}))
        else:
            status = "timeout" if o.timeout else ("killed" if o.killed_by_audit else "SURVIVED")
            tests = "" if o.killed_by_tests is None else f"; tests: {'killed' if o.killed_by_tests else 'survived'}"
            _emit(f"{o.id:<34} audit: {status} ({o.audit_reason or 'no change'}){tests}")

    try:
        outcomes = runner.run(mutants, on_result=show)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    result = summary(outcomes)
    if args.format == "json":
        _emit(json.dumps(result))
    else:
        _emit(
            f"{result['mutants']} mutants: {result['killed_by_audit']} killed by the audit, "
            f"{result['killed_by_tests']} by the library tests; survivors: {', '.join(result['survivors']) or 'none'}"
        )
    return 1 if args.strict and result["survivors"] else 0
