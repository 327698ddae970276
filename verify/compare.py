"""Compare the verdicts of two audit reports: a rerun must not change any verdict.

Usage::

    python -m verify.compare BASE/report.json OTHER/report.json [--format text|json]

Claims that ran in both reports (neither ``not-run``) are compared; the command lists every
claim whose verdict differs and exits 1 if there is one, 0 otherwise, 2 on bad input. Its
use: ``pytest verify --perturb 1e-12 --report-dir perturbed`` reruns every simulation from a
start moved by a rounding-sized amount, and this command then shows that no verdict hangs
on one trajectory (``.ci/run`` does this for the simulations of all three papers).

``--rule neighbourhood`` compares a rerun at a neighbour of a chosen setting (``tox -e neighbourhood``:
the central-flow EoS claims with the sizes ``eos_c_excess``, ``eos_scale``): there a verdict may move
between confirmed (or confirmed-reading) and inconclusive, since the same assertions can have another
power at another setting; such moves are listed as ``power`` and do not fail. Any other move fails.
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


RULES = ("exact", "neighbourhood")
#: The moves the neighbourhood rule tolerates: a check that passes on both sides with power >= 0.8 on one only.
POWER_MOVES = frozenset(frozenset({v, "inconclusive"}) for v in ("confirmed", "confirmed-reading"))


def compare(base: dict[str, str], other: dict[str, str], rule: str = "exact") -> dict:
    """Claims run in both, and those whose verdicts differ (``changed``: the moves the rule does not tolerate).

    ``rule`` 'exact': every move counts; 'neighbourhood': a move in :data:`POWER_MOVES` is listed under
    ``power`` instead (the key is present only under that rule).

    >>> compare({"A": "confirmed", "B": "discrepancy", "C": "not-run"}, {"A": "confirmed", "B": "check-failed"})
    {'compared': ['A', 'B'], 'changed': [{'id': 'B', 'base': 'discrepancy', 'other': 'check-failed'}]}
    >>> compare({"A": "confirmed", "B": "confirmed"}, {"A": "inconclusive", "B": "discrepancy"}, "neighbourhood")
    {'compared': ['A', 'B'], 'changed': [{'id': 'B', 'base': 'confirmed', 'other': 'discrepancy'}], \
'power': [{'id': 'A', 'base': 'confirmed', 'other': 'inconclusive'}]}
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}; got {rule!r}")
    both = sorted(c for c in base if c in other and "not-run" not in (base[c], other[c]))
    moved = [{"id": c, "base": base[c], "other": other[c]} for c in both if base[c] != other[c]]
    if rule == "exact":
        return {"compared": both, "changed": moved}
    power = [m for m in moved if frozenset({m["base"], m["other"]}) in POWER_MOVES]
    return {"compared": both, "changed": [m for m in moved if m not in power], "power": power}


def main(argv=None) -> int:
    """Entry point; returns the exit status (141, quietly, when the reader closes the pipe)."""
    return run_main("python -m verify.compare", lambda: _main(argv))


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m verify.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the reference report.json")
    parser.add_argument("other", help="the report.json of the rerun")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--rule",
        choices=RULES,
        default="exact",
        help="exact (default): any changed verdict fails; neighbourhood: confirmed <-> inconclusive (power) is "
        "listed, not failed",
    )
    args = parser.parse_args(argv)
    try:
        out = compare(load_verdicts(args.base), load_verdicts(args.other), args.rule)
    except ValueError as exc:
        print(f"python -m verify.compare: error: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(out))
    else:
        for c in out["changed"]:
            print(f"{c['id']}: {c['base']} -> {c['other']}")
        for c in out.get("power", []):
            print(f"{c['id']}: {c['base']} -> {c['other']} (power; tolerated by the neighbourhood rule)")
        tail = f", {len(out['power'])} moved by power (tolerated)" if "power" in out else ""
        print(f"{len(out['compared'])} claims compared, {len(out['changed'])} verdicts changed{tail}")
    return 1 if out["changed"] else 0


if __name__ == "__main__":
    sys.exit(main())
