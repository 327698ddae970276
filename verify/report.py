"""Turn check outcomes into verdicts per claim and write the audit report.

Verdicts (README.md, "Reading a verdict"):

- ``confirmed``: every check of the claim passed (a Monte Carlo check with power >= 0.8
  against its stated alternative);
- ``confirmed-reading``: passed, with at least one check relying on a stated reading (a
  reading fitted to the paper's number is flagged ``fitted`` with its alternatives);
- ``inconclusive``: every check passed, but a Monte Carlo check's power against its
  alternative is below 0.8: not rejected, and the check could not have told;
- ``vacuous``: every check passed, but what they confirm is an implication whose premise
  fails where the paper applies it (a check marked ``vacuous`` says which shows it): true
  and empty;
- ``discrepancy``: the paper's side failed in the one expected way (``PaperClaimFails``)
  while our own side passed;
- ``unverifiable``: the registry says why the claim cannot be checked;
- ``check-failed``: a check failed (a regression: the audit run is red);
- ``not-run``: the claim's checks were deselected or skipped in this run.

report.json follows ``verify/report.schema.json`` (schema version 1: the run's
environment, per claim our values as numbers with their text, tolerances with reasons,
power); a report without ``schema_version`` is version 0 and :func:`migrate` lifts it.
report.md and report.html (:mod:`verify.report_html`, one self-contained file) are
written beside it by :func:`write_report`.
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal
from importlib import metadata
from pathlib import Path

from numerics.provenance import git_dirty, git_revision

from .registry import PAPERS, Claim

VERDICTS = (
    "confirmed",
    "confirmed-reading",
    "inconclusive",
    "vacuous",
    "discrepancy",
    "unverifiable",
    "check-failed",
    "not-run",
)
FLAGGED = ("discrepancy", "check-failed", "inconclusive", "vacuous")
POWER_REQUIRED = 0.8
SCHEMA_VERSION = 2
READABLE_VERSIONS = (0, 1, 2)  # 1 -> 2 added the verdict 'vacuous' and the claim field 'vacuous'

PACKAGES = ("numpy", "scipy", "sympy", "mpmath", "numba", "llvmlite")


@dataclass
class CheckResult:
    nodeid: str
    claim_id: str
    outcome: str  # passed | failed | xfailed | xpassed | skipped
    reading: str | None = None
    discrepancy: str | None = None
    values: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    message: str = ""
    powers: list[dict] = field(default_factory=list)
    fitted: dict | None = None
    by_construction: str | None = None
    vacuous: str | None = None


def verdict_for(claim: Claim, checks: list[CheckResult]) -> str:
    """The claim's verdict from its registry entry and the outcomes of its checks."""
    if claim.unverifiable:
        return "unverifiable"
    ran = [c for c in checks if c.outcome != "skipped"]
    if not ran:
        return "not-run"
    if any(c.outcome in ("failed", "xpassed") for c in ran):
        return "check-failed"
    if any(c.outcome == "xfailed" for c in ran):
        return "discrepancy"
    if any(p["power"] < POWER_REQUIRED for c in ran for p in c.powers):
        return "inconclusive"
    if any(c.vacuous for c in ran):
        return "vacuous"
    if any(c.reading for c in ran):
        return "confirmed-reading"
    return "confirmed"


def _git_revision(root: Path) -> str:
    """The checked-out commit (:func:`numerics.provenance.git_revision`), 'unknown' outside a checkout."""
    return git_revision() or "unknown"


def environment() -> dict:
    """What the numbers were computed with: Python and library versions, BLAS, CPU, OS."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return {**versions, "blas": _blas(), "cpu": _cpu(), "os": platform.platform()}


def _blas() -> dict | str:
    """The BLAS numpy uses: threadpoolctl's view of the loaded library, else numpy's build config."""
    try:
        import numpy as np
    except ImportError:
        return "unknown"
    try:
        from threadpoolctl import threadpool_info

        libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if libs:
            lib = libs[0]
            return {
                "name": str(lib.get("internal_api", "unknown")),
                "version": str(lib.get("version") or "unknown"),
                "source": "threadpoolctl",
            }
    except ImportError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return {
            "name": str(blas.get("name", "unknown")),
            "version": str(blas.get("version", "unknown")),
            "source": "numpy.show_config",
        }
    except (TypeError, KeyError, AttributeError, ValueError):
        return "unknown"


def _cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict:
    """The CPU model and feature flags of the first processor in /proc/cpuinfo (where present)."""
    fields: dict[str, str] = {}
    try:
        for line in cpuinfo.read_text().splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name") or fields.get("Model") or platform.processor() or "unknown"
    flags = (fields.get("flags") or fields.get("Features") or "").split()
    return {"model": model, "flags": flags}


def _values(r: CheckResult) -> list[dict]:
    """A check's recorded values as ``{label, value, text}`` (data from :class:`verify.audit.Recorded`)."""
    out = []
    for v in r.values:
        if hasattr(v, "value") and hasattr(v, "text"):
            out.append({"label": getattr(v, "label", None), "value": v.value, "text": v.text})
        else:
            out.extend(parse_values(str(v)))
    return out


def _tolerances(r: CheckResult) -> list[dict]:
    """A check's tolerances (carried by :class:`verify.audit.ToleranceNote` evidence sentences)."""
    found = (getattr(n, "tolerance", None) for n in r.notes)
    return [dict(t) for t in found if isinstance(t, dict)]


_FRACTION = re.compile(r"^-?\d+/\d+$")


def _number(text: str):
    """``text`` as an int or float when it is one number (a fraction's ``p/q = decimal`` form included), else None."""
    t = text.strip()
    if " = " in t and _FRACTION.match(t.split(" = ")[0].strip()):
        t = t.split(" = ", 1)[1].strip()
    try:
        return int(t)
    except ValueError:
        pass
    try:
        x = float(t)
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def parse_values(ours: str) -> list[dict]:
    """Best-effort ``{label, value, text}`` entries from a version-0 ``ours`` text (``"label = text; ..."``).

    >>> parse_values("a = 0.5; 1/3 = 0.33333; [1, 2]")
    [{'label': 'a', 'value': 0.5, 'text': '0.5'}, {'label': None, 'value': 0.33333, 'text': '1/3 = 0.33333'}, \
{'label': None, 'value': '[1, 2]', 'text': '[1, 2]'}]
    """
    out = []
    for part in (p.strip() for p in ours.split("; ")):
        if not part:
            continue
        label, text = None, part
        head, sep, tail = part.partition(" = ")
        if sep and _number(head) is None and not _FRACTION.match(head.strip()):
            label, text = head.strip(), tail.strip()
        num = _number(text)
        out.append({"label": label, "value": text if num is None else num, "text": text})
    return out


def _distinct_readings(readings) -> list[str]:
    """The checks' readings of one claim, each once: a reading that another extends (the paper's side often
    repeats our side's reading and adds its own clause) is dropped, so the joined text never repeats itself.

    >>> _distinct_readings(["a b", "a b; c", None, "d", "d"])
    ['a b; c', 'd']
    """
    unique = sorted({r for r in readings if r})
    return [r for r in unique if not any(r != other and r in other for other in unique)]


def build_report(
    registry: dict[str, Claim],
    results: list[CheckResult],
    profile: str,
    root: Path,
    sweeps: dict | None = None,
    instruments: list[dict] | None = None,
) -> dict:
    """The report as a JSON-ready dict (schema version 1) with a top-level ``claims`` list.

    ``sweeps`` (optional): where the simulation cells came from (store, scheduler, and per
    experiment the cells reused and computed), shown in the report. ``instruments``
    (optional): the calibrations of :mod:`verify.instruments` run, each
    ``{"name", "reference", "outcome", "message"}``.
    """
    by_claim: dict[str, list[CheckResult]] = {}
    for r in results:
        by_claim.setdefault(r.claim_id, []).append(r)
    claims = []
    for cid in sorted(registry, key=_sort_key):
        c = registry[cid]
        checks = by_claim.get(cid, [])
        verdict = verdict_for(c, checks)
        readings = _distinct_readings(r.reading for r in checks)
        evidence = " ".join(n for r in checks for n in r.notes)
        if c.unverifiable:
            evidence = c.unverifiable
        discrepancies = sorted({r.discrepancy for r in checks if r.discrepancy and r.outcome == "xfailed"})
        if verdict == "not-run" and not evidence:
            evidence = "not run in this run: " + ("; ".join(r.message for r in checks if r.message) or "deselected")
        if verdict == "check-failed":
            evidence = (evidence + " CHECK FAILED: " + "; ".join(r.message for r in checks if r.message)).strip()
        powers = [p for r in checks for p in r.powers]
        weakest = min(powers, key=lambda p: p["power"]) if powers else None
        fitted = {k: v for r in checks if r.fitted for k, v in r.fitted.items()}
        claims.append(
            {
                "id": cid,
                "paper": c.paper,
                "where": c.where,
                "statement": c.statement,
                "kind": c.kind,
                "paper_value": c.paper_value,
                "ours": "; ".join(v for r in checks for v in r.values),
                "values": [v for r in checks for v in _values(r)],
                "tolerance": [t for r in checks for t in _tolerances(r)],
                "verdict": verdict,
                "reading": " | ".join(readings),
                "discrepancy": " ".join(discrepancies),
                "evidence": evidence,
                "figures": [f for r in checks for f in r.figures],
                "checks": [f"{r.nodeid} [{r.outcome}]" for r in checks],
                "check_outcomes": [{"nodeid": r.nodeid, "outcome": r.outcome, "message": r.message} for r in checks],
                "power": weakest["power"] if weakest else None,
                "alternative": weakest["alternative"] if weakest else None,
                "power_checks": powers,
                "fitted": bool(fitted),
                "alternatives": fitted,
                "by_construction": " ".join(sorted({r.by_construction for r in checks if r.by_construction})),
                "vacuous": " ".join(sorted({r.vacuous for r in checks if r.vacuous})),
            }
        )
    summary = {p: dict(Counter(x["verdict"] for x in claims if x["paper"] == p)) for p in PAPERS}
    return {
        "schema_version": SCHEMA_VERSION,
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "profile": profile,
        "git_revision": _git_revision(root),
        "git_dirty": git_dirty(),
        "environment": environment(),
        "summary": summary,
        "claims": claims,
        "sweeps": sweeps,
        "instruments": sorted(instruments or [], key=lambda i: i["name"]),
    }


def migrate(report: dict) -> dict:
    """``report`` in the current schema version (a copy), every claim with its fields.

    Version 1 lacks the claim field ``vacuous`` (``""``; version 1 had no such verdict).
    Version 0 (no ``schema_version``) lacks the environment (``null``), the dirty flag,
    tolerances and the values as data: values are parsed back from ``ours``
    (:func:`parse_values`). A version-1 report may hold claims kept from a version-0 run by
    a partial-run merge; they are completed the same way. ValueError on a document that is
    no audit report or has an unknown version.

    >>> m = migrate({"claims": [{"id": "A", "verdict": "confirmed", "ours": "x = 2", "checks": ["t.py::a [passed]"]}]})
    >>> m["schema_version"], m["claims"][0]["values"], m["claims"][0]["check_outcomes"][0]["outcome"]
    (2, [{'label': 'x', 'value': 2, 'text': '2'}], 'passed')
    """
    if not isinstance(report, dict) or not isinstance(report.get("claims"), list):
        raise ValueError("not an audit report (no claims list)")
    version = report.get("schema_version", 0)
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise ValueError(f"unknown report schema_version {version!r} (this suite reads {readable})")
    out = {**report, "schema_version": SCHEMA_VERSION}
    for key, default in (("git_dirty", None), ("environment", None), ("instruments", []), ("sweeps", None)):
        out.setdefault(key, default)
    claims = []
    for c in report["claims"]:
        if not isinstance(c, dict) or "id" not in c or "verdict" not in c:
            raise ValueError("not an audit report (a claim without id or verdict)")
        c = dict(c)
        if "values" not in c:
            c["values"] = parse_values(str(c.get("ours") or ""))
        c.setdefault("tolerance", [])
        c.setdefault("vacuous", "")
        if "check_outcomes" not in c:
            c["check_outcomes"] = [_check_outcome(s) for s in c.get("checks") or []]
        claims.append(c)
    out["claims"] = claims
    return out


def _check_outcome(text: str) -> dict:
    nodeid, _, outcome = text.rpartition(" [")
    if not nodeid or not outcome.endswith("]"):
        return {"nodeid": text, "outcome": "unknown", "message": ""}
    return {"nodeid": nodeid, "outcome": outcome[:-1], "message": ""}


def _sort_key(cid: str):
    # numbers sort numerically and before words at the same position ("RG-7.2" < "RG-7.drift")
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in cid.replace("-", ".").split(".")]


# ------------------------------------------------------------------ short forms of our values

_PAPER_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def paper_digits(paper_value: str, default: int = 4) -> int:
    """Significant digits of the most precise decimal number the paper prints (``default`` when it prints none).

    Integers are left out: in a quoted formula they are mostly indices and exponents.

    >>> paper_digits("0.5947152..."), paper_digits("W_{l+1}^T W_l = 0"), paper_digits("about 3.0e-4, eta = 2/S")
    (7, 4, 2)
    """
    best = 0
    for num in _PAPER_NUMBER.findall(paper_value):
        mant = num.lstrip("-").lower().split("e")[0]
        if "." in mant or "e" in num.lower():
            best = max(best, len(mant.replace(".", "").lstrip("0")))
    return max(2, min(best, 17)) if best else default


def short_value(value, digits: int, items: int = 4, truncate: bool = False) -> str:
    """``value`` (JSON data) in short form: numbers to ``digits`` significant digits, long lists cut.

    ``truncate``: cut the digits instead of rounding (the paper's ``0.5947152...`` convention).

    >>> short_value([0.123456, 2, "x"], 3), short_value({"a": 1.0e-9, "b": [1, 2, 3, 4, 5]}, 2)
    ('[0.123, 2, x]', '{a: 1e-09, b: [1, 2, 3, 4, …]}')
    >>> short_value(0.59471526, 7), short_value(0.59471526, 7, truncate=True)
    ('0.5947153', '0.5947152')
    """
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int) and abs(value) < 10**15:
        return str(value)
    if isinstance(value, (int, float)):
        return _significant(float(value), digits, truncate)
    if isinstance(value, list):
        inner = [short_value(v, digits, items, truncate) for v in value[:items]]
        return "[" + ", ".join(inner + (["…"] if len(value) > items else [])) + "]"
    if isinstance(value, dict):
        keys = list(value)
        inner = [f"{k}: {short_value(value[k], digits, items, truncate)}" for k in keys[:items]]
        return "{" + ", ".join(inner + (["…"] if len(keys) > items else [])) + "}"
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _significant(x: float, digits: int, truncate: bool) -> str:
    if truncate and x != 0 and math.isfinite(x):
        d = Decimal(repr(x))
        x = float(d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_DOWN))
    return f"{x:.{digits}g}"


def verdict_qualifier(c: dict) -> str:
    """What qualifies a claim's verdict in the index: ' (fitted)', ' (by construction)', both, or ''.

    A consistency-only claim (its check holds by construction, or its reading was fitted to the
    paper's number) reads differently from a substantive one of the same verdict.

    >>> verdict_qualifier({"fitted": True, "by_construction": "m, M chosen to reproduce it"})
    ' (fitted, by construction)'
    >>> verdict_qualifier({"fitted": False, "by_construction": None})
    ''
    """
    parts = [name for name, on in (("fitted", c.get("fitted")), ("by construction", c.get("by_construction"))) if on]
    return f" ({', '.join(parts)})" if parts else ""


def short_ours(claim: dict, width: int = 100) -> str:
    """Our values of ``claim`` to the paper's digits (cut, not rounded, after a quoted ``...``); "—" when none."""
    paper = claim.get("paper_value") or ""
    digits = paper_digits(paper)
    truncate = bool(re.search(r"\d\.\.\.|\d…", paper))
    values = claim.get("values")
    if values is None:
        values = parse_values(claim.get("ours") or "")
    text = "; ".join(short_value(v["value"], digits, truncate=truncate) for v in values)
    if not text:
        return "—"
    return text if len(text) <= width else text[: width - 1] + "…"


def figure_claims(report: dict) -> dict[str, list[str]]:
    """Each figure of the report with the ids of the claims it belongs to, in report order."""
    out: dict[str, list[str]] = {}
    for c in report["claims"]:
        for fig in c.get("figures") or []:
            ids = out.setdefault(fig, [])
            if c["id"] not in ids:
                ids.append(c["id"])
    return out


def figure_caption(fig: str, claim_ids: list[str], profile: str) -> str:
    """A figure's caption: its name, the claims it shows and the profile it was computed with."""
    return f"{Path(fig).stem}: {', '.join(claim_ids)} (profile {profile})"


# ------------------------------------------------------------------------------ report.md


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _revision_line(report: dict) -> str:
    dirty = report.get("git_dirty")
    mark = " with uncommitted changes" if dirty else (" (dirty state unknown)" if dirty is None else "")
    return f"revision `{report['git_revision']}`{mark}"


def _environment_line(env: dict | None) -> str:
    if not env:
        return "Environment: not recorded."
    blas = env.get("blas")
    blas_text = f"{blas['name']} {blas['version']}" if isinstance(blas, dict) else str(blas)
    libs = ", ".join(f"{k} {env.get(k, '?')}" for k in ("python", *PACKAGES))
    cpu = env.get("cpu") or {}
    return f"Environment: {libs}; BLAS {blas_text}; CPU {cpu.get('model', 'unknown')}; {env.get('os', 'unknown')}."


def render_markdown(report: dict) -> str:
    """A person-readable report.md: summary, flagged claims, then per paper an index and every claim."""
    report = migrate(report)
    lines = [
        "# Audit report",
        "",
        f"Generated {report['generated']} (profile `{report['profile']}`, {_revision_line(report)}).",
        "",
        _environment_line(report.get("environment")),
        "",
        "## Summary",
        "",
        "| paper | " + " | ".join(VERDICTS) + " |",
        "|---|" + "---|" * len(VERDICTS),
    ]
    for paper, counts in report["summary"].items():
        if counts:
            lines.append(f"| {paper} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS) + " |")
    flagged = [c for c in report["claims"] if c["verdict"] in FLAGGED]
    lines += ["", "## Discrepancies, failed checks, inconclusive and vacuous claims", ""]
    if not flagged:
        lines.append("None.")
    for c in flagged:
        lines.append(
            f"- **{c['id']}** ({c['where']}) [{c['verdict']}]: paper `{_md_escape(c['paper_value'])}`, "
            f"ours `{_md_escape(short_ours(c))}`. {_md_escape(c['discrepancy'] or c['evidence'])}"
        )
    if report.get("instruments"):
        lines += [
            "",
            "## Instruments",
            "",
            "Calibrated on cases with known answers before the verdicts are trusted (verify/instruments.py).",
            "",
            "| instrument | reference | outcome |",
            "|---|---|---|",
        ]
        lines += [
            f"| {_md_escape(i['name'])} | {_md_escape(i['reference'])} | "
            f"{i['outcome'] + (': ' + _md_escape(i['message']) if i['message'] else '')} |"
            for i in report["instruments"]
        ]
    sweeps = report.get("sweeps")
    if sweeps and sweeps["experiments"]:
        lines += [
            "",
            "## Simulation sweeps",
            "",
            f"Cells from the result store `{sweeps['store']}`; computed on: {sweeps['scheduler']}. 'done at': "
            "seconds from the start of the sweep run to the experiment's last cell (experiments' cells interleave, "
            "so there is no per-experiment wall time); 'cpu (s)': the workers' CPU seconds for the cells computed in "
            "this run (numba compilation included, so the first cells of a cold start carry it).",
            "",
            "| experiment | cells | reused | computed | failed | done at (s) | cpu (s) |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {e['name']} | {e['cells']} | {e['reused']} | {e['computed']} | {e['failed']} | {e['wall_s']} "
            f"| {e.get('cpu_s', '')} |"
            for e in sweeps["experiments"]
        ]
    captions = figure_claims(report)
    for paper in PAPERS:
        rows = [c for c in report["claims"] if c["paper"] == paper]
        if not rows:
            continue
        lines += ["", f"## {paper}: {PAPERS[paper]}", ""]
        lines += [
            "Index (our values to the paper's digits; full digits under each claim):",
            "",
            "| id | where | verdict | paper | ours |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {c['id']} | {_md_escape(c['where'])} | {c['verdict']}{verdict_qualifier(c)} | "
            f"{_md_escape(c['paper_value'])} | "
            f"{_md_escape(short_ours(c))} |"
            for c in rows
        ]
        lines.append("")
        for c in rows:
            lines += _markdown_claim(c, captions, report["profile"])
    return "\n".join(lines) + "\n"


def _markdown_claim(c: dict, captions: dict[str, list[str]], profile: str) -> list[str]:
    lines = [
        f"### {c['id']} — {c['verdict']}",
        "",
        f"- where: {c['where']} ({c['kind']})",
        f"- statement: {_md_escape(c['statement'])}",
        f"- paper: `{_md_escape(c['paper_value'])}`",
        f"- ours: `{_md_escape(c['ours']) or '—'}`",
    ]
    if len(c.get("values") or []) > 1:
        for v in c["values"]:
            label = _md_escape(v["label"]) if v.get("label") else "value"
            lines.append(f"  - {label}: `{_md_escape(str(v['text']))}`")
    for t in c.get("tolerance") or []:
        label = f" ({_md_escape(t['label'])})" if t.get("label") else ""
        lines.append(f"- tolerance{label}: `{t['value']}`: {_md_escape(t['reason'])}")
    if c["reading"]:
        lines.append(f"- reading{' (fitted)' if c.get('fitted') else ''}: {_md_escape(c['reading'])}")
    for alt, gives in (c.get("alternatives") or {}).items():
        lines.append(f"  - alternative reading: {_md_escape(alt)} gives {_md_escape(gives)}")
    if c.get("by_construction"):
        lines.append(f"- holds by construction: {_md_escape(c['by_construction'])}")
    if c.get("vacuous"):
        lines.append(f"- vacuous: {_md_escape(c['vacuous'])}")
    for pw in c.get("power_checks") or []:
        label = f" ({pw['label']})" if pw.get("label") else ""
        lines.append(
            f"- power{label}: {pw['power']:.3f} against {_md_escape(pw['alternative'])} [{_md_escape(pw['method'])}]"
        )
    if c["discrepancy"]:
        lines.append(f"- discrepancy: {_md_escape(c['discrepancy'])}")
    lines.append(f"- evidence: {_md_escape(c['evidence']) or '—'}")
    for fig in c.get("figures", []):
        caption = figure_caption(fig, captions.get(fig, [c["id"]]), profile)
        lines += ["", f"![{_md_escape(caption).replace(']', '')}]({fig})", ""]
    lines.append("")
    return lines


def write_report(report: dict, directory: Path) -> tuple[Path, Path]:
    """Write report.json, report.md and report.html into ``directory`` (created if needed).

    Returns the paths of report.json and report.md; report.html lies beside them.
    """
    from .report_html import render_html

    directory.mkdir(parents=True, exist_ok=True)
    j = directory / "report.json"
    m = directory / "report.md"
    report = migrate(report)  # a merged report may keep claims of a version-0 run: complete them
    _write_atomically(j, json.dumps(report, indent=2) + "\n")
    _write_atomically(m, render_markdown(report))
    _write_atomically(directory / "report.html", render_html(report, directory))
    return j, m


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``: a reader sees the old
    file or the new one, never half of one (the library tests read the audit's report while it runs in CI)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
