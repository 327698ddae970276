"""Turn check outcomes into verdicts per claim and write the audit report.

Verdicts (README.md, "Reading a verdict"):

- ``confirmed``: every check of the claim passed (a Monte Carlo check with power >= 0.8
  against its stated alternative);
- ``confirmed-reading``: passed, with at least one check relying on a stated reading (a
  reading fitted to the paper's number is flagged ``fitted`` with its alternatives);
- ``inconclusive``: every check passed, but a Monte Carlo check's power against its
  alternative is below 0.8: not rejected, and the check could not have told;
- ``discrepancy``: the paper's side failed in the one expected way (``PaperClaimFails``)
  while our own side passed;
- ``unverifiable``: the registry says why the claim cannot be checked;
- ``check-failed``: a check failed (a regression: the audit run is red);
- ``not-run``: the claim's checks were deselected or skipped in this run.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .registry import PAPERS, Claim

VERDICTS = ("confirmed", "confirmed-reading", "inconclusive", "discrepancy", "unverifiable", "check-failed", "not-run")
POWER_REQUIRED = 0.8


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
    if any(c.reading for c in ran):
        return "confirmed-reading"
    return "confirmed"


def _git_revision(root: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def build_report(
    registry: dict[str, Claim],
    results: list[CheckResult],
    profile: str,
    root: Path,
    sweeps: dict | None = None,
    instruments: list[dict] | None = None,
) -> dict:
    """The report as a JSON-ready dict with a top-level ``claims`` list.

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
        readings = sorted({r.reading for r in checks if r.reading})
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
                "verdict": verdict,
                "reading": " ".join(readings),
                "discrepancy": " ".join(discrepancies),
                "evidence": evidence,
                "figures": [f for r in checks for f in r.figures],
                "checks": [f"{r.nodeid} [{r.outcome}]" for r in checks],
                "power": weakest["power"] if weakest else None,
                "alternative": weakest["alternative"] if weakest else None,
                "power_checks": powers,
                "fitted": bool(fitted),
                "alternatives": fitted,
                "by_construction": " ".join(sorted({r.by_construction for r in checks if r.by_construction})),
            }
        )
    summary = {p: dict(Counter(x["verdict"] for x in claims if x["paper"] == p)) for p in PAPERS}
    return {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "profile": profile,
        "git_revision": _git_revision(root),
        "summary": summary,
        "claims": claims,
        "sweeps": sweeps,
        "instruments": sorted(instruments or [], key=lambda i: i["name"]),
    }


def _sort_key(cid: str):
    # numbers sort numerically and before words at the same position ("RG-7.2" < "RG-7.drift")
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in cid.replace("-", ".").split(".")]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict) -> str:
    """A person-readable report.md: summary per paper, discrepancies, then every claim."""
    lines = [
        "# Audit report",
        "",
        f"Generated {report['generated']} (profile `{report['profile']}`, revision `{report['git_revision']}`).",
        "",
        "## Summary",
        "",
        "| paper | " + " | ".join(VERDICTS) + " |",
        "|---|" + "---|" * len(VERDICTS),
    ]
    for paper, counts in report["summary"].items():
        if counts:
            lines.append(f"| {paper} | " + " | ".join(str(counts.get(v, 0)) for v in VERDICTS) + " |")
    flagged = [c for c in report["claims"] if c["verdict"] in ("discrepancy", "check-failed", "inconclusive")]
    lines += ["", "## Discrepancies, failed checks and inconclusive claims", ""]
    if not flagged:
        lines.append("None.")
    for c in flagged:
        lines.append(
            f"- **{c['id']}** ({c['where']}): paper `{c['paper_value']}`, ours `{c['ours']}`. "
            f"{c['discrepancy'] or c['evidence']}"
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
            f"Cells from the result store `{sweeps['store']}`; computed on: {sweeps['scheduler']}.",
            "",
            "| experiment | cells | reused | computed | failed | wall s |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {e['name']} | {e['cells']} | {e['reused']} | {e['computed']} | {e['failed']} | {e['wall_s']} |"
            for e in sweeps["experiments"]
        ]
    for paper in PAPERS:
        rows = [c for c in report["claims"] if c["paper"] == paper]
        if not rows:
            continue
        lines += ["", f"## {paper}: {PAPERS[paper]}", ""]
        for c in rows:
            lines += [
                f"### {c['id']} — {c['verdict']}",
                "",
                f"- where: {c['where']} ({c['kind']})",
                f"- statement: {_md_escape(c['statement'])}",
                f"- paper: `{_md_escape(c['paper_value'])}`",
                f"- ours: `{_md_escape(c['ours']) or '—'}`",
            ]
            if c["reading"]:
                lines.append(f"- reading{' (fitted)' if c.get('fitted') else ''}: {_md_escape(c['reading'])}")
            for alt, gives in (c.get("alternatives") or {}).items():
                lines.append(f"  - alternative reading: {_md_escape(alt)} gives {_md_escape(gives)}")
            if c.get("by_construction"):
                lines.append(f"- holds by construction: {_md_escape(c['by_construction'])}")
            for pw in c.get("power_checks") or []:
                label = f" ({pw['label']})" if pw.get("label") else ""
                lines.append(
                    f"- power{label}: {pw['power']:.3f} against {_md_escape(pw['alternative'])} "
                    f"[{_md_escape(pw['method'])}]"
                )
            if c["discrepancy"]:
                lines.append(f"- discrepancy: {_md_escape(c['discrepancy'])}")
            lines.append(f"- evidence: {_md_escape(c['evidence']) or '—'}")
            for fig in c.get("figures", []):
                lines.append(f"- figure: [{fig}]({fig})")
            lines.append("")
    return "\n".join(lines) + "\n"


def write_report(report: dict, directory: Path) -> tuple[Path, Path]:
    """Write report.json and report.md into ``directory`` (created if needed)."""
    directory.mkdir(parents=True, exist_ok=True)
    j = directory / "report.json"
    m = directory / "report.md"
    j.write_text(json.dumps(report, indent=2) + "\n")
    m.write_text(render_markdown(report))
    return j, m
