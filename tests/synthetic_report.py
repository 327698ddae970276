"""A small synthetic audit report with every verdict, recorded values, a tolerance, power and figures.

Built the way the plugin builds one (an :class:`~verify.audit.Audit` per check, its records
copied into a :class:`~verify.report.CheckResult`), so the report tests exercise the same path.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import mpmath
import sympy

from verify.audit import Audit
from verify.registry import Claim
from verify.report import CheckResult, build_report, write_report

HOSTILE = "<script>alert('x')</script> & \"quoted\" | pipe"


def png_bytes(width: int = 3, height: int = 2) -> bytes:
    """A valid RGB PNG of ``width`` x ``height`` pixels (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([200, 40, 40]) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def _claim(cid: str, paper: str = "rare_gates", kind: str = "constant", unverifiable=None, statement=None) -> Claim:
    return Claim(
        cid, paper, f"Section {cid[-1]}", statement or f"statement of {cid}", "0.5947152...", kind, unverifiable
    )


REGISTRY = {
    "T-1.ok": _claim("T-1.ok"),
    "T-1.read": _claim("T-1.read", kind="closed-form"),
    "T-1.disc": _claim("T-1.disc", statement=HOSTILE),
    "T-1.mc": _claim("T-1.mc", kind="simulation"),
    "T-1.unv": _claim("T-1.unv", unverifiable="the authors' 64 saved initialisations"),
    "T-1.fail": _claim("T-1.fail"),
    "T-2.fig": _claim("T-2.fig", paper="multipath", kind="simulation"),
    "T-2.none": _claim("T-2.none", paper="multipath", kind="qualitative"),
    "T-3.cf": _claim("T-3.cf", paper="central_flow", kind="theorem"),
}


def _result(cid: str, outcome: str, audit: Audit, **kw) -> CheckResult:
    return CheckResult(
        nodeid=f"verify/t/test_{cid.replace('.', '_').replace('-', '_')}.py::test_{outcome}",
        claim_id=cid,
        outcome=outcome,
        values=list(audit.values),
        notes=list(audit.notes),
        figures=list(audit.figures),
        powers=list(audit.powers),
        **kw,
    )


def synthetic_report(directory: Path) -> dict:
    """Build the report, write report.json/.md/.html and two figures into ``directory``; return the report."""
    figures = directory / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    (figures / "t_fig.png").write_bytes(png_bytes(4, 3))
    (figures / "t_shared.png").write_bytes(png_bytes(2, 2))
    results = []
    a = Audit("T-1.ok")
    a.ours(1 - (2 / sympy.pi) ** 2, label="R_col")
    a.ours(mpmath.iv.mpf([0.5, 0.75]), label="enclosure")
    a.tolerance(1e-12, "4500 x float64 eps over 20 steps")
    a.evidence("SymPy minimisation.")
    results.append(_result("T-1.ok", "passed", a))
    a = Audit("T-1.read")
    a.ours(sympy.Rational(1, 3))
    results.append(_result("T-1.read", "passed", a, reading="q read as 2/pi"))
    a = Audit("T-1.disc")
    a.ours({(1, 2): [0.25, 0.5], "n": 3}, label="rows")
    a.evidence(HOSTILE)
    results.append(_result("T-1.disc", "passed", a))
    results.append(_result("T-1.disc", "xfailed", Audit("T-1.disc"), discrepancy="paper 0.6, ours 0.59"))
    a = Audit("T-1.mc")
    a.ours(0.59471, label="estimate")
    a.power(0.42, alternative="a relative 25% in the proportion", method="exact binomial")
    results.append(_result("T-1.mc", "passed", a))
    results.append(_result("T-1.fail", "failed", Audit("T-1.fail"), message="AssertionError: 1 == 2"))
    a = Audit("T-2.fig")
    a.ours([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], label="sigma")
    a.figures += ["figures/t_fig.png", "figures/t_shared.png", "figures/t_absent.png"]
    results.append(_result("T-2.fig", "passed", a))
    a = Audit("T-3.cf")
    a.ours(float("nan"), label="undefined ratio")
    a.figures.append("figures/t_shared.png")
    results.append(_result("T-3.cf", "passed", a))
    report = build_report(REGISTRY, results, "quick", directory)
    write_report(report, directory)
    return report


def version0_report(ours: str) -> dict:
    """A one-claim report as written before schema version 1 (no schema_version, ours as text only)."""
    return {
        "generated": "2026-01-01T00:00:00+00:00",
        "profile": "quick",
        "git_revision": "abc1234",
        "summary": {"multipath": {"confirmed": 1}},
        "claims": [
            {
                "id": "MP-6.map",
                "paper": "multipath",
                "where": "Section 6",
                "statement": "s",
                "kind": "constant",
                "paper_value": "0.25",
                "ours": ours,
                "verdict": "confirmed",
                "reading": "",
                "discrepancy": "",
                "evidence": "e",
                "figures": [],
                "checks": ["verify/m/test_a.py::test_b [passed]"],
                "power": None,
                "alternative": None,
            }
        ],
        "sweeps": None,
        "instruments": [],
    }
