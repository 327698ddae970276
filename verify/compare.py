"""Compare the verdicts of two audit reports: a rerun must not change any verdict.

Usage::

    python -m verify.compare BASE/report.json OTHER/report.json [--format text|json]

Claims that ran in both reports (neither ``not-run``) are compared; the command lists every
claim whose verdict differs and exits 1 if there is one, 0 otherwise, 2 on bad input. Its
use: ``pytest verify --perturb 1e-12 --report-dir perturbed`` reruns every simulation from a
start moved by a rounding-sized amount, and this command then shows that no verdict hangs
on one trajectory (``.ci/run`` does this for the simulations of all three papers).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from numerics.cli_support import run_main


def load_verdicts(path) -> dict[str, str]:
    """{claim id: verdict} of a report.json (ValueError with the path on a missing or malformed file)."""
    p = Path(path)
    try:
        report = json.loads(p.read_text())
        return {c["id"]: c["verdict"] for c in report["claims"]}
    except FileNotFoundError:
        raise ValueError(f"report {p} does not exist") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"report {p} is not an audit report.json ({exc})") from None


def compare(base: dict[str, str], other: dict[str, str]) -> dict:
    """Claims run in both, and those whose verdicts differ.

    >>> compare({"A": "confirmed", "B": "discrepancy", "C": "not-run"}, {"A": "confirmed", "B": "check-failed"})
    {'compared': ['A', 'B'], 'changed': [{'id': 'B', 'base': 'discrepancy', 'other': 'check-failed'}]}
    """
    both = sorted(c for c in base if c in other and "not-run" not in (base[c], other[c]))
    changed = [{"id": c, "base": base[c], "other": other[c]} for c in both if base[c] != other[c]]
    return {"compared": both, "changed": changed}


def main(argv=None) -> int:
    """Entry point; returns the exit status (141, quietly, when the reader closes the pipe)."""
    return run_main("python -m verify.compare", lambda: _main(argv))


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m verify.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the reference report.json")
    parser.add_argument("other", help="the report.json of the rerun")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    try:
        out = compare(load_verdicts(args.base), load_verdicts(args.other))
    except ValueError as exc:
        print(f"python -m verify.compare: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(out))
    else:
        for c in out["changed"]:
            print(f"{c['id']}: {c['base']} -> {c['other']}")
        print(f"{len(out['compared'])} claims compared, {len(out['changed'])} verdicts changed")
    return 1 if out["changed"] else 0


if __name__ == "__main__":
    sys.exit(main())
