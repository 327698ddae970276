"""Compare two audit reports claim by claim: verdict changes and value changes.

Usage::

    python -m verify diff OLD/report.json NEW/report.json [--format text|json]

Reads both report schema versions (a report without ``schema_version`` is version 0).
Lists the claims whose verdict changed among those that ran in both reports (neither
``not-run``: the comparison of :mod:`verify.compare`), the claims that ran in one report
only, the claims added to or removed from the registry between the two, and the claims
run in both whose values changed (our recorded text, with the relative change of each
number where both sides record numbers under the same label).

Exit status: 1 when a verdict changed between two runs of a claim, 0 otherwise (value
changes, claims run in one report only, added or removed claims are listed but do not
fail); 2 on bad input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from numerics.cli_support import write_line

from .compare import compare
from .report import migrate, parse_values, short_value


def load_report(path) -> dict:
    """The report at ``path`` in schema version 1 (ValueError with the path on a missing or malformed file)."""
    p = Path(path)
    try:
        return migrate(json.loads(p.read_text()))
    except FileNotFoundError:
        raise ValueError(f"report {p} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"report {p} is a directory, not a report.json") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"report {p} is not an audit report.json ({exc})") from None


def _numbers(values: list[dict]) -> dict[str, float]:
    """Each label's value where it is one number (labels unnamed are numbered by position)."""
    out = {}
    for i, v in enumerate(values):
        x = v.get("value")
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            out[v.get("label") or f"#{i + 1}"] = float(x)
    return out


def _relative(a: float, b: float) -> float:
    if a == b:
        return 0.0
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale and math.isfinite(scale) else math.inf


def value_change(old: dict, new: dict) -> dict | None:
    """How our values of one claim changed between two reports; None when the recorded text is the same.

    >>> value_change({"id": "A", "ours": "x = 1.0", "values": [{"label": "x", "value": 1.0}]},
    ...              {"id": "A", "ours": "x = 1.5", "values": [{"label": "x", "value": 1.5}]})["relative"]
    {'x': 0.3333333333333333}
    """
    if (old.get("ours") or "") == (new.get("ours") or ""):
        return None
    a = _numbers(old.get("values") or parse_values(old.get("ours") or ""))
    b = _numbers(new.get("values") or parse_values(new.get("ours") or ""))
    relative = {k: _relative(a[k], b[k]) for k in a if k in b and a[k] != b[k]}
    return {"id": old["id"], "old": old.get("ours") or "", "new": new.get("ours") or "", "relative": relative}


def diff_reports(old: dict, new: dict) -> dict:
    """Verdict and value changes from report ``old`` to report ``new`` (both as dicts, any schema version).

    >>> a = {"claims": [{"id": "A", "verdict": "confirmed", "ours": "1"}, {"id": "B", "verdict": "not-run"}]}
    >>> b = {"schema_version": 1, "claims": [{"id": "A", "verdict": "discrepancy", "ours": "2"},
    ...      {"id": "B", "verdict": "confirmed"}, {"id": "C", "verdict": "not-run"}]}
    >>> d = diff_reports(a, b)
    >>> d["verdicts"], d["ran_in_one"], d["added"], [v["id"] for v in d["values"]]
    ([{'id': 'A', 'base': 'confirmed', 'other': 'discrepancy'}], [{'id': 'B', 'old': 'not-run', 'new': 'confirmed'}], \
['C'], ['A'])
    """
    old, new = migrate(old), migrate(new)
    a = {c["id"]: c for c in old["claims"]}
    b = {c["id"]: c for c in new["claims"]}
    verdicts = compare({k: c["verdict"] for k, c in a.items()}, {k: c["verdict"] for k, c in b.items()})
    ran_in_one = [
        {"id": k, "old": a[k]["verdict"], "new": b[k]["verdict"]}
        for k in a
        if k in b and a[k]["verdict"] != b[k]["verdict"] and "not-run" in (a[k]["verdict"], b[k]["verdict"])
    ]
    changes = [value_change(a[k], b[k]) for k in verdicts["compared"]]
    return {
        "old": {"generated": old.get("generated"), "git_revision": old.get("git_revision")},
        "new": {"generated": new.get("generated"), "git_revision": new.get("git_revision")},
        "compared": len(verdicts["compared"]),
        "verdicts": verdicts["changed"],
        "ran_in_one": ran_in_one,
        "added": [k for k in b if k not in a],
        "removed": [k for k in a if k not in b],
        "values": [c for c in changes if c is not None],
    }


def render_text(d: dict) -> str:
    """The diff as text: one section per kind of change, then a one-line count."""
    lines = []
    if d["verdicts"]:
        lines.append(f"verdicts changed ({len(d['verdicts'])}):")
        lines += [f"  {c['id']}: {c['base']} -> {c['other']}" for c in d["verdicts"]]
    if d["ran_in_one"]:
        lines.append(f"run in one report only ({len(d['ran_in_one'])}):")
        lines += [f"  {c['id']}: {c['old']} -> {c['new']}" for c in d["ran_in_one"]]
    for key, title in (("added", "claims added"), ("removed", "claims removed")):
        if d[key]:
            lines.append(f"{title} ({len(d[key])}): {', '.join(d[key])}")
    if d["values"]:
        lines.append(f"values changed ({len(d['values'])}):")
        for c in d["values"]:
            rel = ", ".join(f"{k}: {short_value(v, 2)}" for k, v in c["relative"].items())
            lines.append(f"  {c['id']}: {_cut(c['old'])} -> {_cut(c['new'])}")
            if rel:
                lines.append(f"    relative change: {rel}")
    lines.append(
        f"{d['compared']} claims compared, {len(d['verdicts'])} verdicts changed, {len(d['values'])} values changed"
    )
    return "\n".join(lines)


def _cut(text: str, width: int = 80) -> str:
    text = text or "—"
    return text if len(text) <= width else text[: width - 1] + "…"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of the ``diff`` command."""
    parser.add_argument("old", help="the reference report.json (schema version 0 or 1)")
    parser.add_argument("new", help="the report.json to compare with it")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")


def run(args: argparse.Namespace) -> int:
    """Print the diff of the parsed ``args``; returns the exit status (ValueError on a bad report)."""
    d = diff_reports(load_report(args.old), load_report(args.new))
    if not write_line(json.dumps(d, indent=2) if args.format == "json" else render_text(d)):
        return 141  # the reader closed the pipe
    return 1 if d["verdicts"] else 0


def help_text() -> str:
    """The command's help: this module's docstring."""
    return __doc__ or ""
