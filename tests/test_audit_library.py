"""The audit machinery: rounds_to, format_value, the claims registry, verdicts, the report
and the pytest plugin end to end (pytester).

Report tests replace ``verify.report._git_revision`` with a constant so that no test
runs git.
"""

from __future__ import annotations

import doctest
import json
import textwrap
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

import verify.audit
from verify.audit import Audit, format_value, rounds_to
from verify.registry import KINDS, PAPERS, Claim, RegistryError, load_registry
from verify.report import VERDICTS, CheckResult, build_report, render_markdown, verdict_for, write_report

pytest_plugins = ["pytester"]

R = sympy.Rational

# --------------------------------------------------------------------------- rounds_to


@pytest.mark.parametrize(
    "ours, quoted, expected",
    [
        (R(58662, 100000), "0.587", True),
        (mpmath.mpf("0.58662"), "0.587", True),
        (0.58662, "0.587", True),
        (R(58650001, 10**8), "0.587", True),  # just above the lower half-way point
        (R(58649999, 10**8), "0.587", False),  # just below it
        (R(58749999, 10**8), "0.587", True),
        (R(58750001, 10**8), "0.587", False),
        (R(-58662, 100000), "-0.587", True),
        (R(-5875001, 10**7), "-0.587", False),
        (R(124, 10), "12", True),
        (R(126, 10), "12", False),
        (R(1, 2), "+0.5", True),
        (sympy.pi, "3.14159", True),
        (sympy.pi, "3.14160", False),
        (sympy.pi, "3.1416", True),
        ("0.5864", "0.587", False),
        ("0.58651", "0.587", True),
    ],
)
def test_rounds_to_rounding(ours, quoted, expected):
    assert rounds_to(ours, quoted) is expected


@pytest.mark.parametrize(
    "ours, quoted, expected",
    [
        (1 - 4 / sympy.pi**2, "0.5947152...", True),  # R_col = 1 - q^2, q = 2/pi
        (R(5947152, 10**7), "0.5947152...", True),  # exactly the quoted digits
        (R(59471529999, 10**11), "0.5947152...", True),
        (R(5947153, 10**7), "0.5947152...", False),  # next truncation
        (R(59471519999, 10**11), "0.5947152...", False),
        (R(59471526, 10**8), "0.5947153", True),  # the same number rounds up but truncates down
        (R(59471526, 10**8), "0.5947153...", False),
        (R(-59471526, 10**8), "-0.5947152...", True),  # interior of a negative truncation
        (R(-59471519, 10**8), "-0.5947152...", False),
        (mpmath.mpf(2) / 3, "0.666...", True),
        (mpmath.mpf(2) / 3, "0.667...", False),
    ],
)
def test_rounds_to_truncation(ours, quoted, expected):
    assert rounds_to(ours, quoted) is expected


def test_rounds_to_negative_truncation_endpoints():
    assert rounds_to(R(-1, 2), "-0.5...") is True
    assert rounds_to(R(-3, 5), "-0.5...") is False


@pytest.mark.parametrize(
    "ours, quoted, expected",
    [
        (R(1234, 10**8), "1.23e-5", True),  # unit 1e-7
        (R(1236, 10**8), "1.23e-5", False),
        (R(60215, 10**4) * 10**23, "6.02E+23", True),
        (R(60251, 10**4) * 10**23, "6.02E+23", False),
        (2400, "2e3", True),  # unit 1e3
        (2600, "2e3", False),
        (R(12399, 10**9), "1.23e-5...", True),
        (R(12401, 10**9), "1.23e-5...", False),
        (R(-1234, 10**8), "-1.23e-5", True),
    ],
)
def test_rounds_to_exponents(ours, quoted, expected):
    assert rounds_to(ours, quoted) is expected


def test_rounds_to_strips_whitespace():
    assert rounds_to(R(1, 3), "  0.333  ")
    assert rounds_to(R(1, 3), "0.333... ")


def test_audit_module_doctests():
    # verify/ is not in pytest's testpaths, so its doctests run here.
    result = doctest.testmod(verify.audit, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# ------------------------------------------------------------------------- format_value


@pytest.mark.parametrize(
    "value, digits, expected",
    [
        ("as quoted", 5, "as quoted"),
        (True, 5, "True"),
        (3, 5, "3"),
        (Fraction(1, 3), 5, "1/3"),
        (sympy.Integer(7), 5, "7"),
        (R(1, 3), 5, "1/3 = 0.33333"),
        (R(-2, 3), 4, "-2/3 = -0.6667"),
        (R(9, 10), 50, "9/10 = 0.9"),
        (sympy.pi, 10, "3.141592654"),
        (-sympy.pi, 5, "-3.1416"),
        (sympy.Float(0.5), 50, "0.5"),
        (sympy.Symbol("x") + 1, 5, "x + 1"),
        (mpmath.mpf(1) / 3, 10, "0.3333333333"),
        (0.1, 50, "0.1"),
        (1e-300, 50, "1e-300"),
        ([0.5, R(1, 2)], 5, "[0.5, 1/2 = 0.5]"),
        ({"a": 0.5, "b": R(1, 4)}, 5, "a: 0.5; b: 1/4 = 0.25"),
    ],
)
def test_format_value(value, digits, expected):
    assert format_value(value, digits) == expected


def test_format_value_fifty_digits_by_default():
    text = format_value(sympy.sqrt(2))
    with mpmath.workdps(60):
        assert text.startswith("1.41421356237309504880168872420969807856967187537")
        assert len(text.replace(".", "")) == 50


def test_format_value_mpf_at_working_precision():
    with mpmath.workdps(60):
        x = mpmath.mpf(1) / 7
    assert format_value(x, 50) == "0.14285714285714285714285714285714285714285714285714"


def test_format_value_interval():
    assert format_value(mpmath.iv.mpf([1, 2]), 5) == "[1, 2]"
    lo, hi = format_value(mpmath.iv.mpf([1, 2]) / 3, 5).strip("[]").split(", ")
    assert (lo, hi) == ("0.33333", "0.66667")


def test_format_value_interval_printed_encloses():
    x = mpmath.iv.mpf(["0.66666666666666666", "1"])
    lo, hi = (mpmath.mpf(s) for s in format_value(x, 5).strip("[]").split(", "))
    with mpmath.workdps(60):
        assert lo <= mpmath.mpf(x.a) and hi >= mpmath.mpf(x.b)


def test_format_value_negative_interval_rounds_outward():
    from mpmath import iv

    e = -iv.mpf(2) / 3
    assert format_value(e, 5) == "[-0.66667, -0.66666]"  # the lower end rounds down, away from zero


def test_paper_claim_raises_only_the_dedicated_failure():
    from verify.audit import PaperClaimFails, paper_claim

    paper_claim(True, "holds")
    with pytest.raises(PaperClaimFails, match="ours 2"):
        paper_claim(False, "ours 2")
    with pytest.raises(TypeError, match="needs a bool"):
        paper_claim(0.5, "not a truth value")  # a number is a bug of the check, not a finding


def test_claim_marker_rejects_a_fitted_reading_without_its_alternatives():
    from verify.audit import claim

    with pytest.raises(ValueError, match="fitted needs the reading"):
        claim("T-1.a", fitted={"other": "22.2"})
    with pytest.raises(ValueError, match="fitted must map"):
        claim("T-1.a", reading="r", fitted={})


@pytest.mark.parametrize("power", [-0.1, 1.5, float("nan")])
def test_audit_power_rejects_values_outside_0_1(power):
    with pytest.raises(ValueError, match="power must lie in"):
        Audit("T-1.a").power(power, alternative="a", method="m")


def test_audit_power_needs_alternative_and_method():
    with pytest.raises(ValueError, match="non-empty alternative"):
        Audit("T-1.a").power(0.9, alternative="", method="m")


@pytest.mark.parametrize(
    "value, digits",
    [(sympy.Float(1e20), 5), (sympy.pi * sympy.Integer(10) ** -10, 10), (sympy.pi * sympy.Integer(10) ** 20, 10)],
)
def test_format_value_exponent_notation(value, digits):
    with mpmath.workdps(60):
        printed = mpmath.mpf(format_value(value, digits))
        exact = mpmath.mpf(sympy.N(value, 60))
        assert abs(printed - exact) <= abs(exact) * mpmath.mpf(10) ** (1 - digits)


def test_format_value_numpy_scalar():
    assert format_value(np.float64(0.5)) == "0.5"


def test_audit_recorder():
    rec = Audit("T-1.a")
    rec.ours(R(1, 3), digits=5, label="R")
    rec.ours(0.25)
    rec.evidence("  computed exactly. ")
    assert rec.values == ["R = 1/3 = 0.33333", "0.25"]
    assert rec.notes == ["computed exactly."]


# ---------------------------------------------------------------------------- registry


def _claim_toml(**fields) -> str:
    base = {
        "id": "T-1.a",
        "paper": "rare_gates",
        "where": "Section 1",
        "statement": "a statement",
        "paper_value": "0.5",
        "kind": "constant",
    }
    base.update(fields)
    lines = ["[[claim]]"]
    for k, v in base.items():
        if v is not None:
            lines.append(f"{k} = {json.dumps(v) if isinstance(v, str) else v}")
    return "\n".join(lines) + "\n\n"


def _write(directory: Path, name: str, *claims: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(claims))
    return path


def test_registry_loads_nested_files(tmp_path):
    _write(tmp_path, "rare_gates/a.toml", _claim_toml(), _claim_toml(id="T-1.b", kind="theorem"))
    _write(tmp_path, "multipath/b.toml", _claim_toml(id="T-2.a", paper="multipath", unverifiable="private data"))
    reg = load_registry(tmp_path)
    assert sorted(reg) == ["T-1.a", "T-1.b", "T-2.a"]
    assert reg["T-1.a"] == Claim("T-1.a", "rare_gates", "Section 1", "a statement", "0.5", "constant", None, "a.toml")
    assert reg["T-2.a"].unverifiable == "private data"


def test_registry_empty_directory(tmp_path):
    assert load_registry(tmp_path) == {}


@pytest.mark.parametrize("field", ["id", "paper", "where", "statement", "paper_value", "kind"])
def test_registry_missing_field(tmp_path, field):
    _write(tmp_path, "a.toml", _claim_toml(**{field: None}))
    with pytest.raises(RegistryError, match=rf"a.toml: claim #1 lacks {field}"):
        load_registry(tmp_path)


def test_registry_blank_field_counts_as_missing(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml(), _claim_toml(id="T-1.b", statement="   "))
    with pytest.raises(RegistryError, match=r"claim #2 lacks statement"):
        load_registry(tmp_path)


def test_registry_unknown_kind(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml(kind="conjecture"))
    with pytest.raises(RegistryError, match=r"claim T-1.a has kind 'conjecture'"):
        load_registry(tmp_path)
    assert "conjecture" not in KINDS


def test_registry_unknown_paper(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml(paper="other_paper"))
    with pytest.raises(RegistryError, match=r"claim T-1.a has paper 'other_paper'"):
        load_registry(tmp_path)
    assert "other_paper" not in PAPERS


def test_registry_unknown_field(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml(tolerance="1e-6"))
    with pytest.raises(RegistryError, match=r"unknown fields \['tolerance'\]"):
        load_registry(tmp_path)


def test_registry_duplicate_id_across_files(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml())
    _write(tmp_path, "b.toml", _claim_toml(statement="another"))
    with pytest.raises(RegistryError, match=r"duplicate claim id T-1.a in b.toml and a.toml"):
        load_registry(tmp_path)


def test_registry_duplicate_id_in_one_file(tmp_path):
    _write(tmp_path, "a.toml", _claim_toml(), _claim_toml())
    with pytest.raises(RegistryError, match=r"duplicate claim id T-1.a"):
        load_registry(tmp_path)


def test_registry_error_is_a_value_error():
    assert issubclass(RegistryError, ValueError)


def test_registry_paper_value_must_be_a_string(tmp_path):
    (tmp_path / "a.toml").write_text(_claim_toml().replace('paper_value = "0.5"', "paper_value = 0.590"))
    with pytest.raises(RegistryError, match="paper_value"):
        load_registry(tmp_path)


def test_packaged_registry_is_well_formed():
    reg = load_registry()
    for cid, c in reg.items():
        assert cid == c.id and c.paper in PAPERS and c.kind in KINDS
        assert isinstance(c.paper_value, str), f"{cid}: paper_value must be the quoted string"


# ---------------------------------------------------------------------------- verdicts


def _claim(cid="T-1.a", unverifiable=None, paper="rare_gates") -> Claim:
    return Claim(cid, paper, "Section 1", "a statement", "0.5", "constant", unverifiable, "t.toml")


def _check(outcome, cid="T-1.a", reading=None, discrepancy=None, **kw) -> CheckResult:
    return CheckResult(
        nodeid=f"t.py::test_{outcome}", claim_id=cid, outcome=outcome, reading=reading, discrepancy=discrepancy, **kw
    )


def _power(p):
    return {"power": p, "alternative": "a relative 25% in the proportion", "method": "exact binomial", "label": None}


VERDICT_CASES = [
    (_claim(), [_check("passed")], "confirmed"),
    (_claim(), [_check("passed"), _check("skipped")], "confirmed"),
    (_claim(), [_check("passed"), _check("passed", reading="q read as 2/pi")], "confirmed-reading"),
    (_claim(), [_check("xfailed", discrepancy="paper 0.6, ours 0.59"), _check("passed")], "discrepancy"),
    (_claim(), [_check("xfailed", discrepancy="d"), _check("failed")], "check-failed"),
    (_claim(), [_check("xpassed", discrepancy="d")], "check-failed"),
    (_claim(), [_check("failed", reading="r")], "check-failed"),
    (_claim(unverifiable="needs the authors' seeds"), [], "unverifiable"),
    (_claim(unverifiable="needs the authors' seeds"), [_check("passed")], "unverifiable"),
    (_claim(), [], "not-run"),
    (_claim(), [_check("skipped"), _check("skipped")], "not-run"),
    (_claim(), [_check("passed", powers=[_power(0.79)])], "inconclusive"),
    (_claim(), [_check("passed", powers=[_power(0.8)])], "confirmed"),
    (_claim(), [_check("passed", powers=[_power(0.95), _power(0.5)])], "inconclusive"),
    (_claim(), [_check("passed", reading="r", powers=[_power(0.9)])], "confirmed-reading"),
    (_claim(), [_check("passed", reading="r", powers=[_power(0.3)])], "inconclusive"),
    (_claim(), [_check("failed", powers=[_power(0.3)])], "check-failed"),
    (_claim(), [_check("xfailed", discrepancy="d"), _check("passed", powers=[_power(0.3)])], "discrepancy"),
    (_claim(), [_check("passed", reading="r", fitted={"other": "22.2"})], "confirmed-reading"),
    (_claim(), [_check("passed", reading="r"), _check("passed", vacuous="premise fails: T-2")], "vacuous"),
    (_claim(), [_check("passed", vacuous="premise fails", powers=[_power(0.3)])], "inconclusive"),
    (_claim(), [_check("passed", vacuous="premise fails"), _check("failed")], "check-failed"),
    (_claim(), [_check("xfailed", discrepancy="d"), _check("passed", vacuous="premise fails")], "discrepancy"),
]


@pytest.mark.parametrize("claim, checks, verdict", VERDICT_CASES)
def test_verdict_for(claim, checks, verdict):
    assert verdict_for(claim, checks) == verdict


def test_every_verdict_is_reachable():
    """Each verdict the report knows is one that verdict_for gives in a case above, and no other."""
    assert {verdict_for(claim, checks) for claim, checks, _ in VERDICT_CASES} == set(VERDICTS)
    assert len(VERDICTS) == len(set(VERDICTS))


def test_vacuous_needs_its_reason_and_reaches_the_report(tmp_path, no_git):
    from verify.audit import claim

    with pytest.raises(ValueError, match="vacuous must say why"):
        claim("T-1", vacuous=" ")
    checks = [_check("passed", cid="T-1.vac", vacuous="its premise fails on GD (T-2)")]
    report = build_report({"T-1.vac": _claim("T-1.vac")}, checks, "quick", tmp_path)
    (c,) = report["claims"]
    assert c["verdict"] == "vacuous" and c["vacuous"] == "its premise fails on GD (T-2)"
    assert "- vacuous: its premise fails on GD (T-2)" in render_markdown(report)


def test_index_marks_fitted_and_by_construction_verdicts(tmp_path, no_git):
    """A consistency-only claim reads differently in the index from a substantive one of the same verdict."""
    checks = [
        _check("passed", cid="T-1.fit", reading="m, M chosen", fitted={"m = 1e-3": "2e-3"}, by_construction="m, M fit"),
        _check("passed", cid="T-1.sub", reading="q read as 2/pi"),
    ]
    report = build_report({c: _claim(c) for c in ("T-1.fit", "T-1.sub")}, checks, "quick", tmp_path)
    md = render_markdown(report)
    assert "| T-1.fit | Section 1 | confirmed-reading (fitted, by construction) |" in md
    assert "| T-1.sub | Section 1 | confirmed-reading |" in md


# ------------------------------------------------------------------------------ report

REPORT_KEYS = {"id", "paper", "where", "statement", "paper_value", "ours", "verdict", "evidence"}


@pytest.fixture
def no_git(monkeypatch):
    monkeypatch.setattr("verify.report._git_revision", lambda root: "test-rev")


def _six_claims():
    reg = {
        "T-1.ok": _claim("T-1.ok"),
        "T-1.read": _claim("T-1.read"),
        "T-1.disc": _claim("T-1.disc"),
        "T-1.unv": _claim("T-1.unv", unverifiable="the authors' 64 saved initialisations"),
        "T-1.fail": _claim("T-1.fail"),
        "T-2.none": _claim("T-2.none", paper="multipath"),
    }
    results = [
        _check("passed", "T-1.ok", values=["0.5"], notes=["exact."]),
        _check("passed", "T-1.read", reading="q = 2/pi", values=["1/2 = 0.5"], notes=["reading."]),
        _check("xfailed", "T-1.disc", discrepancy="paper 0.6, ours 0.59 | see Eq. (3)", values=["0.59"]),
        _check("failed", "T-1.fail", message="AssertionError: 1 == 2"),
    ]
    return reg, results


def test_readings_of_several_checks_are_joined_once(no_git, tmp_path):
    """A paper-side check that repeats our side's reading and adds a clause shows the longer text once."""
    reg, _ = _six_claims()
    ours = "D0 in either labelling"
    results = [
        _check("passed", "T-1.read", reading=ours),
        _check("passed", "T-1.read", reading=ours + "; m = 1e-4 (lost)"),
        _check("xfailed", "T-1.read", reading="K as displayed", discrepancy="false as displayed"),
        _check("passed", "T-1.read", reading=ours),
    ]
    by_id = {c["id"]: c for c in build_report(reg, results, "quick", tmp_path)["claims"]}
    assert by_id["T-1.read"]["reading"] == "D0 in either labelling; m = 1e-4 (lost) | K as displayed"


def test_build_report(no_git, tmp_path):
    reg, results = _six_claims()
    report = build_report(reg, results, "quick", tmp_path)
    assert report["git_revision"] == "test-rev" and report["profile"] == "quick"
    by_id = {c["id"]: c for c in report["claims"]}
    assert {cid: c["verdict"] for cid, c in by_id.items()} == {
        "T-1.ok": "confirmed",
        "T-1.read": "confirmed-reading",
        "T-1.disc": "discrepancy",
        "T-1.unv": "unverifiable",
        "T-1.fail": "check-failed",
        "T-2.none": "not-run",
    }
    for c in report["claims"]:
        assert REPORT_KEYS <= set(c)
    assert by_id["T-1.ok"]["ours"] == "0.5" and by_id["T-1.ok"]["evidence"] == "exact."
    assert by_id["T-1.read"]["reading"] == "q = 2/pi"
    assert by_id["T-1.disc"]["discrepancy"] == "paper 0.6, ours 0.59 | see Eq. (3)"
    assert by_id["T-1.unv"]["evidence"] == "the authors' 64 saved initialisations"
    assert "CHECK FAILED: AssertionError: 1 == 2" in by_id["T-1.fail"]["evidence"]
    assert report["summary"]["rare_gates"] == {
        "confirmed": 1,
        "confirmed-reading": 1,
        "discrepancy": 1,
        "unverifiable": 1,
        "check-failed": 1,
    }
    assert report["summary"]["multipath"] == {"not-run": 1}


def test_report_claims_sorted_numerically(no_git, tmp_path):
    reg = {cid: _claim(cid) for cid in ["RG-10.a", "RG-9.b", "RG-9.2", "RG-9.10", "RG-9.drift"]}
    report = build_report(reg, [], "quick", tmp_path)
    assert [c["id"] for c in report["claims"]] == ["RG-9.2", "RG-9.10", "RG-9.b", "RG-9.drift", "RG-10.a"]


def test_write_report_and_markdown(no_git, tmp_path):
    reg, results = _six_claims()
    report = build_report(reg, results, "full", tmp_path)
    json_path, md_path = write_report(report, tmp_path / "out" / "nested")
    assert json_path == tmp_path / "out" / "nested" / "report.json" and md_path.name == "report.md"
    loaded = json.loads(json_path.read_text())
    assert loaded == report
    assert isinstance(loaded["claims"], list) and all(REPORT_KEYS <= set(c) for c in loaded["claims"])
    md = md_path.read_text()
    assert md == render_markdown(report)
    for c in report["claims"]:
        assert f"### {c['id']} — {c['verdict']}" in md
    assert "## Discrepancies, failed checks, inconclusive and vacuous claims" in md
    assert "**T-1.disc**" in md and "**T-1.fail**" in md
    assert "paper 0.6, ours 0.59 \\| see Eq. (3)" in md  # pipes escaped in the claim entries
    assert "| rare_gates | 1 | 1 | 0 | 0 | 1 | 1 | 1 | 0 |" in md
    assert "| multipath | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in md


def test_markdown_without_findings(no_git, tmp_path):
    report = build_report({"T-1.ok": _claim("T-1.ok")}, [_check("passed", "T-1.ok")], "quick", tmp_path)
    assert "None." in render_markdown(report)


def test_report_lists_instruments(no_git, tmp_path):
    rows = [
        {"name": "rounds_to", "reference": "half a unit", "outcome": "failed", "message": "AssertionError: x"},
        {"name": "Fisher's exact test", "reference": "tea tasting", "outcome": "passed", "message": ""},
    ]
    report = build_report(
        {"T-1.ok": _claim("T-1.ok")}, [_check("passed", "T-1.ok")], "quick", tmp_path, instruments=rows
    )
    assert [i["name"] for i in report["instruments"]] == ["Fisher's exact test", "rounds_to"]
    md = render_markdown(report)
    assert "## Instruments" in md and "| rounds_to | half a unit | failed: AssertionError: x |" in md
    assert build_report({}, [], "quick", tmp_path)["instruments"] == []


def test_every_instrument_calibrates_and_a_wrong_one_is_named(monkeypatch):
    from numerics import stats as S
    from verify import instruments

    assert all(not i.calibrate() for i in instruments.INSTRUMENTS)
    monkeypatch.setattr(S, "fisher_exact_p", lambda *a, **k: 0.5)
    fisher = next(i for i in instruments.INSTRUMENTS if i.name == "Fisher's exact test")
    assert fisher.calibrate() and "expected 17/70" in " ".join(fisher.calibrate())


# ------------------------------------------------------------------ plugin (pytester)

_INI = """
[pytest]
markers =
    claim(id, reading=None, discrepancy=None): ties a check to a registered paper claim
"""


def test_plugin_writes_report_for_a_packaged_claim(pytester, no_git):
    if "RG-16.Rcol" not in load_registry():
        pytest.skip("RG-16.Rcol is not registered yet in verify/claims; the plugin needs a registered id")
    pytester.makeini(_INI)
    pytester.makepyfile(
        test_rcol=textwrap.dedent(
            """
            import sympy
            from verify.audit import claim, rounds_to

            @claim("RG-16.Rcol")
            def test_rcol(audit):
                ours = 1 - (2 / sympy.pi) ** 2
                audit.ours(ours)
                audit.evidence("pytester smoke check")
                assert rounds_to(ours, "0.5947152...")
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "out", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*paper audit*", "report: *report.md*report.json*"])
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    by_id = {c["id"]: c for c in report["claims"]}
    assert by_id["RG-16.Rcol"]["verdict"] == "confirmed"
    assert by_id["RG-16.Rcol"]["ours"].startswith("0.594715")
    assert by_id["RG-16.Rcol"]["evidence"] == "pytester smoke check"
    assert (pytester.path / "out" / "report.md").exists()


_INNER_CHECKS = """
import pytest
from verify.audit import claim, discrepancy, paper_claim

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("teardown broke")

@claim("T-1.ok")
def test_ok(audit):
    audit.ours(0.5)
    audit.evidence("fine")

@claim("T-1.read", reading="q read as 2/pi")
def test_read(audit):
    audit.ours(1)

@claim("T-1.disc")
def test_disc_ours(audit):
    audit.ours(0.59)

@discrepancy("T-1.disc", reason="paper 0.6, ours 0.59")
def test_disc(audit):
    paper_claim(0.59 == 0.6, "ours 0.59, paper 0.6")

@claim("T-1.d_ours_bad")
def test_d_ours_bad():
    assert 0.58 == 0.59  # our own side regressed

@discrepancy("T-1.d_ours_bad", reason="paper 0.6, ours 0.59")
def test_d_ours_bad_paper():
    paper_claim(0.59 == 0.6, "ours 0.59, paper 0.6")

@discrepancy("T-1.d_other_exc", reason="paper 0.6, ours 0.59")
def test_d_other_exc():
    assert 0.59 == 0.6  # a plain assert is not the dedicated failure

@discrepancy("T-1.d_setup", reason="paper 0.6, ours 0.59")
def test_d_setup(broken):
    paper_claim(False, "never reached")

@claim("T-1.setup")
def test_setup(broken):
    pass

@claim("T-1.teardown")
def test_teardown(broken_teardown):
    pass

@claim("T-1.weak")
def test_weak(audit):
    audit.power(0.42, alternative="a relative 25% in the proportion", method="exact binomial enumeration")

@claim("T-1.strong")
def test_strong(audit):
    audit.power(0.91, alternative="a relative 25% in the proportion", method="exact binomial enumeration")

@claim("T-1.fit", reading="risk checked every update", fitted={"every ten updates (Appendix 19)": "22.2"})
def test_fit():
    pass

@claim("T-1.fail")
def test_fail():
    assert 1 == 2

@claim("T-1.skip")
def test_skip():
    pytest.skip("not now")

@discrepancy("T-1.xpass", reason="claimed mismatch")
def test_xpass():
    pass

def test_unmarked():
    pass
"""


@pytest.fixture
def temp_registry(tmp_path, monkeypatch):
    """Point the plugin at a temporary registry (the plugin imports load_registry by name)."""
    d = tmp_path / "claims"
    _write(
        d,
        "rare_gates/t.toml",
        *(
            _claim_toml(id=cid)
            for cid in [
                "T-1.ok",
                "T-1.read",
                "T-1.disc",
                "T-1.fail",
                "T-1.skip",
                "T-1.xpass",
                "T-1.d_ours_bad",
                "T-1.d_other_exc",
                "T-1.d_setup",
                "T-1.setup",
                "T-1.teardown",
                "T-1.weak",
                "T-1.strong",
                "T-1.fit",
            ]
        ),
        _claim_toml(id="T-1.unv", unverifiable="private data"),
    )
    monkeypatch.setattr("verify.plugin.load_registry", lambda directory=None: load_registry(d))
    return d


def _run_inner(pytester):
    pytester.makeini(_INI)
    pytester.makepyfile(test_inner=_INNER_CHECKS)
    result = pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "rep", "-p", "no:cacheprovider")
    report = json.loads((pytester.path / "rep" / "report.json").read_text())
    return result, {c["id"]: c for c in report["claims"]}


def test_plugin_end_to_end_verdicts(pytester, temp_registry, no_git):
    result, by_id = _run_inner(pytester)
    # the strict XPASS, the failed own side and the plain assert in a discrepancy check are failures;
    # the broken fixtures are errors (setup) and a pass followed by an error (teardown)
    result.assert_outcomes(passed=8, failed=4, skipped=1, xfailed=2, errors=3)
    assert {cid: c["verdict"] for cid, c in by_id.items()} == {
        "T-1.ok": "confirmed",
        "T-1.read": "confirmed-reading",
        "T-1.disc": "discrepancy",
        "T-1.fail": "check-failed",
        "T-1.skip": "not-run",
        "T-1.xpass": "check-failed",
        "T-1.unv": "unverifiable",
        "T-1.d_ours_bad": "check-failed",
        "T-1.d_other_exc": "check-failed",
        "T-1.d_setup": "check-failed",
        "T-1.setup": "check-failed",
        "T-1.teardown": "check-failed",
        "T-1.weak": "inconclusive",
        "T-1.strong": "confirmed",
        "T-1.fit": "confirmed-reading",
    }
    assert "error in setup: RuntimeError: fixture broke" in by_id["T-1.setup"]["evidence"]
    assert "error in setup: RuntimeError: fixture broke" in by_id["T-1.d_setup"]["evidence"]
    assert "error in teardown: RuntimeError: teardown broke" in by_id["T-1.teardown"]["evidence"]
    assert "AssertionError" in by_id["T-1.d_other_exc"]["evidence"]
    assert by_id["T-1.weak"]["power"] == 0.42 and by_id["T-1.weak"]["alternative"].startswith("a relative 25%")
    assert by_id["T-1.strong"]["power"] == 0.91 and by_id["T-1.ok"]["power"] is None
    assert by_id["T-1.fit"]["fitted"] is True and by_id["T-1.fit"]["alternatives"] == {
        "every ten updates (Appendix 19)": "22.2"
    }
    assert by_id["T-1.ok"]["fitted"] is False
    assert by_id["T-1.ok"]["ours"] == "0.5" and by_id["T-1.ok"]["evidence"] == "fine"
    assert by_id["T-1.read"]["reading"] == "q read as 2/pi"
    assert by_id["T-1.disc"]["discrepancy"] == "paper 0.6, ours 0.59" and by_id["T-1.disc"]["ours"] == "0.59"
    assert "assert 1 == 2" in by_id["T-1.fail"]["evidence"]
    out = result.stdout.str()
    assert (
        "discrepancies, failed checks, inconclusive and vacuous claims:" in out
        and "T-1.disc [discrepancy] paper: 0.5 | ours: 0.59" in out
    )


def test_plugin_strict_xpass_explained(pytester, temp_registry, no_git):
    _, by_id = _run_inner(pytester)
    assert "the paper's claim now holds" in by_id["T-1.xpass"]["evidence"]


def test_plugin_rejects_unregistered_claim(pytester, temp_registry, no_git):
    pytester.makeini(_INI)
    pytester.makepyfile(test_bad="from verify.audit import claim\n\n@claim('T-9.nope')\ndef test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "rep", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*checks name unregistered claims*", "*T-9.nope*"])


def test_plugin_inert_without_claims(pytester, temp_registry, no_git):
    pytester.makeini(_INI)
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "rep", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "rep").exists()


# ------------------------------------------------------------------ @uses and the results mapping
def test_uses_validates_experiment_names():
    from verify.audit import uses

    assert uses("rare_gates.table2", "rare_gates.grid").args == ("rare_gates.table2", "rare_gates.grid")
    with pytest.raises(ValueError, match="unknown experiment 'rare_gates.tabel2'"):
        uses("rare_gates.tabel2")
    with pytest.raises(ValueError, match="in full"):
        uses("table2")
    with pytest.raises(ValueError, match="at least one"):
        uses()


class _FakeSweeps:
    def __init__(self, cells: dict):
        self.cells, self.read = cells, []

    def has_cells(self, name):
        return self.cells[name]

    def result(self, name):
        self.read.append(name)
        return {"name": name}


def test_results_reads_declared_experiments_only():
    from verify.sweeps import Results

    fake = _FakeSweeps({"rare_gates.table2": True, "rare_gates.joint": False})
    res = Results(fake, ("rare_gates.table2", "rare_gates.joint"), "verify/x.py::test_y")
    assert res["rare_gates.table2"] == {"name": "rare_gates.table2"}
    with pytest.raises(KeyError, match="without declaring it: add it to @uses"):
        res["rare_gates.grid"]
    with pytest.raises(pytest.skip.Exception, match="rare_gates.joint has no cells at these sizes"):
        res["rare_gates.joint"]
    assert fake.read == ["rare_gates.table2"]
