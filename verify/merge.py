"""Merge a partial audit run into the stored report.

A run of some claims (``pytest verify --claim MP-6.map``, ``--paper multipath``, ``-k``, a
path, ``-x`` stopping early) updates the claims it ran and keeps every other claim as the
stored report has it, with the time of its last run (``last_run``), so a partial run never
turns a full report into ``not-run``.

:func:`merge_reports` is pure: report dicts in, a report dict out; the plugin reads
``report.json``, merges and writes (report.md follows from the merged dict).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .registry import PAPERS


def summarize(claims: Iterable[dict]) -> dict[str, dict[str, int]]:
    """Verdict counts per paper, in the form of ``build_report``'s ``summary``.

    >>> summarize([{"paper": "multipath", "verdict": "confirmed"}])["multipath"]
    {'confirmed': 1}
    """
    claims = list(claims)
    return {p: dict(Counter(c["verdict"] for c in claims if c["paper"] == p)) for p in PAPERS}


def merge_reports(old: dict | None, new: dict, ran: set[str], selection: list[str] | None = None) -> dict:
    """``new`` (this run's report) merged into ``old`` (the stored one, or None).

    ``ran``: the ids of the claims this run ran in full; their entries come from ``new``
    with ``last_run`` set to ``new["generated"]``. Every other claim keeps its entry of
    ``old`` (its ``last_run`` too, ``None`` where ``old`` predates ``last_run``); a claim
    absent from ``old`` takes its ``new`` entry (``not-run``) with ``last_run`` ``None``.
    The claims and their order are those of ``new`` (the current registry): a claim
    dropped from the registry leaves the report. Instruments are merged by name (this
    run's calibration wins); ``sweeps``, ``generated``, ``profile`` and ``git_revision`` are
    this run's; ``summary`` is recounted from the merged claims. ``run`` records
    ``{"selection": selection or None for a full run, "partial": bool}``; ``partial``
    holds when some claim of ``new`` did not run.

    >>> old = {"claims": [{"id": "A", "paper": "multipath", "verdict": "confirmed", "last_run": "t0"}]}
    >>> new = {"generated": "t1", "claims": [
    ...     {"id": "A", "paper": "multipath", "verdict": "not-run"},
    ...     {"id": "B", "paper": "multipath", "verdict": "discrepancy"}]}
    >>> m = merge_reports(old, new, {"B"}, ["--claim B"])
    >>> [(c["id"], c["verdict"], c["last_run"]) for c in m["claims"]]
    [('A', 'confirmed', 't0'), ('B', 'discrepancy', 't1')]
    >>> m["run"], m["summary"]["multipath"]
    ({'selection': ['--claim B'], 'partial': True}, {'confirmed': 1, 'discrepancy': 1})
    """
    old_claims = {c["id"]: c for c in (old or {}).get("claims", [])}
    stamp = new.get("generated")
    claims = []
    for entry in new["claims"]:
        cid = entry["id"]
        if cid in ran:
            claims.append({**entry, "last_run": stamp})
        elif cid in old_claims:
            kept = old_claims[cid]
            claims.append({**kept, "last_run": kept.get("last_run")})
        else:
            claims.append({**entry, "last_run": None})
    partial = not {c["id"] for c in new["claims"]} <= ran
    instruments = {i["name"]: i for i in (old or {}).get("instruments") or []}
    instruments.update({i["name"]: i for i in new.get("instruments") or []})
    return {
        **new,
        "summary": summarize(claims),
        "claims": claims,
        "instruments": sorted(instruments.values(), key=lambda i: i["name"]),
        "run": {"selection": list(selection) if partial and selection is not None else None, "partial": partial},
    }
