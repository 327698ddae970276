"""Every enclosure a numerics CLI prints contains its constant, and is no wider than it must be.

CLIs: ``numerics.rare_gates.constants``, ``numerics.table_wcr --certify`` and
``numerics.rare_gates.initialization``. For each printed enclosure at d digits the
strings are read back as exact decimals (Fraction) and the constant, recomputed at
2d + 10 digits by a path independent of the interval arithmetic (closed forms in mpmath,
mpmath.findroot, the Newton solve of numerics.multipath.wcr), must lie inside,
non-strictly. Width: at most two units in the last printed place beyond the certified
width (one unit of outward rounding at each end). The value column, stated as rounded to
nearest, must be within half a unit (plus the slack below) and inside the enclosure.

Tolerances. ``ref_slack``: the reference carries 2d + 10 digits with guard digits, so
its relative error is below 10^-(2d+5); a wrongly rounded end point misses by up to a
unit, 10^-(d-1) relative, so the slack cannot hide one. ``NEAREST``: values come from
numbers with at least 5 guard digits and mpmath.nstr, which rounds a (d+3)-digit string
half-up, so a value may be off by 0.5 + 10^-3 units; 0.502 covers that.
"""

import csv
import io
import json
import re
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from derivations.rare_gates import risk
from derivations.rare_gates.symbols import delta
from numerics import table_wcr
from numerics.intervals import bounds
from numerics.multipath import wcr
from numerics.rare_gates import constants as C
from numerics.rare_gates import initialization as I
from tests.exact_oracle import exact, floor_log10

DIGITS = (12, 20, 35, 50)
NEAREST = Fraction(502, 1000)  # see the module docstring
SLOW = settings(max_examples=max(10, settings.default.max_examples // 5))  # each example builds a whole table


# ------------------------------------------------------------------ exact reading of printed numbers
def unit_sig(v: Fraction, digits: int) -> Fraction:
    """One unit in the ``digits``-th significant place of v."""
    return Fraction(10) ** (floor_log10(v) - digits + 1)


def n_significant(s: str) -> int:
    digits = s.lstrip("-").replace(".", "").split("e")[0].lstrip("0")
    return len(digits)


def ref_slack(ref: Fraction, digits: int, is_exact: bool) -> Fraction:
    return Fraction(0) if is_exact else abs(ref) * Fraction(10) ** -(2 * digits + 5)


def check_sig_enclosure(lo_s, hi_s, ref, digits, *, is_exact=False, extra_width=Fraction(0), value_s=None):
    """The printed [lo_s, hi_s] (``digits`` significant digits) contains ``ref``; narrow; the value is nearest."""
    lo, hi = Fraction(lo_s), Fraction(hi_s)
    slack = ref_slack(ref, digits, is_exact)
    assert lo - slack <= ref <= hi + slack, (lo_s, hi_s, ref)
    assert n_significant(lo_s) <= digits and n_significant(hi_s) <= digits
    if ref != 0:
        unit = unit_sig(max(abs(lo), abs(hi)), digits)
        assert hi - lo <= 2 * unit + extra_width, (lo_s, hi_s)
    if value_s is not None:
        v = Fraction(value_s)
        assert lo <= v <= hi, (value_s, lo_s, hi_s)
        if ref != 0:
            assert abs(v - ref) <= NEAREST * unit_sig(ref, digits) + slack, (value_s, ref)


# ------------------------------------------------------------------ numerics.rare_gates.constants
def constants_references(lv: Fraction, digits: int) -> dict:
    """Each row's constant at 2 digits + 10, from its closed form (mpmath only; B_s exact)."""
    dps = 2 * digits + 10
    with mpmath.workdps(dps + 10):
        lam = mpmath.mpf(lv.numerator) / lv.denominator
        q = 2 / mpmath.pi
        out = {
            "q": q,
            "R_col": 1 - q**2,
            "B_t": 2 * (q - lam),
            "A": q - lam,
            "R_good": 1 - 2 * q**2 + 2 * lam**2,
            "lam_R_good_0.3": mpmath.sqrt(q**2 - mpmath.mpf(7) / 20),
            "tau_GF_slope": lam / (q - lam),
        }
        rmin = sp.lambdify(delta, risk.min_risk_at_angle(), modules="mpmath")
        out["delta_star"] = mpmath.findroot(
            lambda d: rmin(d) - mpmath.mpf(2) / 5, mpmath.mpf("1.5"), tol=mpmath.mpf(10) ** -dps
        )
    refs = {k: (exact(v), False) for k, v in out.items()}
    refs["B_s"] = (1 - 2 * lv, True)
    return refs


def check_constants_rows(rows, lv, digits):
    refs = constants_references(lv, digits)
    assert {r["name"] for r in rows} == set(refs)
    for r in rows:
        ref, is_exact = refs[r["name"]]
        # delta_star: the certified bracket is 10**-(digits+3) wide, 1e-2 units at delta ~ 1.5
        check_sig_enclosure(*r["enclosure"], ref, digits, is_exact=is_exact, value_s=r["value"])


@pytest.mark.parametrize("digits", DIGITS)
def test_constants_table_enclosures(digits):
    check_constants_rows(C.constants_table("1/20", digits), Fraction(1, 20), digits)


@SLOW
@given(
    st.builds(Fraction, st.integers(1, 999), st.just(2000)) | st.builds(Fraction, st.integers(1, 49), st.just(100)),
    st.integers(min_value=1, max_value=60),
)
@example(Fraction(1, 20), 1)
@example(Fraction(49, 100), 60)
@example(Fraction(1, 2000), 7)
def test_constants_table_enclosures_property(lv, digits):
    check_constants_rows(C.constants_table(f"{lv.numerator}/{lv.denominator}", digits), lv, digits)


def test_constants_nearest_rounding_would_fail():
    # the defect this guards against: nstr's nearest rounding of both ends gave [x, x]
    lo, hi = bounds(C.enclose(2 / sp.pi, 12))
    nearest = (mpmath.nstr(lo, 17), mpmath.nstr(hi, 17))
    ref, _ = constants_references(Fraction(1, 20), 12)["q"]
    assert nearest[0] == nearest[1] and not Fraction(nearest[0]) <= ref <= Fraction(nearest[1])


def run_main(module, argv, capsys):
    code = module.main(argv)
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    return out


ENCLOSURE_RE = re.compile(r"in \[([^,\]]+), ([^\]]+)\]")


@pytest.mark.parametrize("digits", DIGITS)
def test_constants_cli_text(digits, capsys):
    out = run_main(C, ["--digits", str(digits)], capsys)
    lines = out.strip().splitlines()
    refs = constants_references(Fraction(1, 20), digits)
    names = [ln.split()[0] for ln in lines[0::2]]
    assert names == list(r["name"] for r in C.constants_table("1/20", 1))
    for name_line, enc_line in zip(lines[0::2], lines[1::2]):
        name, value_s = name_line.split()
        lo_s, hi_s = ENCLOSURE_RE.search(enc_line).groups()
        ref, is_exact = refs[name]
        check_sig_enclosure(lo_s, hi_s, ref, digits, is_exact=is_exact, value_s=value_s)


def test_constants_cli_json(capsys):
    rows = json.loads(run_main(C, ["--digits", "35", "--lam", "0.125", "--format", "json"], capsys))
    check_constants_rows(rows, Fraction(1, 8), 35)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--digits", "0"], r"argument --digits: must be an integer in \[1, 1000\]; got '0'"),
        (["--lam", "0.5"], r"argument --lam: lam must lie in \(0, 1/2\)"),
        (["--lam", "x"], r"argument --lam: lam must be a number in \(0, 1/2\)"),
    ],
)
def test_constants_cli_bad_input(argv, match, capsys):
    assert C.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and re.search(match, err)


@pytest.mark.parametrize("bad", [0, -1, 10_001, 2.0, True])
def test_constants_table_rejects_bad_digits(bad):
    with pytest.raises(ValueError, match=r"digits must be an integer in \[1, 10000\]"):
        C.constants_table("1/20", bad)


# ------------------------------------------------------------------ numerics.table_wcr --certify
def check_wcr_row(row, digits):
    """The row's enclosure (digits + 3 decimals) and values against a Newton solve at 2 digits + 10."""
    L = row["L"]
    y_ref, g_ref = (exact(v) for v in wcr.y_and_gamma(L, 2 * digits + 10))
    lo_s, hi_s = row["enclosure"]
    places = digits + 3
    assert all(len(s.split(".")[1]) == places for s in (lo_s, hi_s))
    lo, hi = Fraction(lo_s), Fraction(hi_s)
    slack = ref_slack(g_ref, digits, False)
    assert lo - slack <= g_ref <= hi + slack, (L, lo_s, hi_s)
    # certified width < 10^-(digits+1), plus one unit of 10^-(digits+3) of outward rounding at each end
    assert hi - lo < Fraction(1, 10 ** (digits + 1)) + Fraction(2, 10**places)
    for key, ref in (("y", y_ref), ("gamma_wcr", g_ref), ("ratio_to_2", g_ref / 2)):
        assert abs(Fraction(row[key]) - ref) <= NEAREST * unit_sig(ref, digits) + ref_slack(ref, digits, False), (
            L,
            key,
        )
    # (the value, rounded at ``digits`` significant digits, is coarser than the enclosure's
    # digits + 3 decimals, so it need not lie inside it)


@pytest.mark.parametrize("digits", DIGITS)
def test_wcr_table_enclosures(digits):
    for row in table_wcr.wcr_table(list(table_wcr.PAPER_DEPTHS) + [7, 10**6, 10**12], digits, certify=True):
        check_wcr_row(row, digits)


@pytest.mark.parametrize("L, digits", [(2, 12), (5, 35), (100, 50), (10**9, 20)])
def test_wcr_enclosure_is_the_certificate_rounded_outward_by_one_unit_at_most(L, digits):
    cert = wcr.certify(L, digits)
    lo_s, hi_s = table_wcr.wcr_table([L], digits, certify=True)[0]["enclosure"]
    unit = Fraction(1, 10 ** (digits + 3))
    assert Fraction(lo_s) <= exact(cert.gamma_lo) < Fraction(lo_s) + unit
    assert Fraction(hi_s) - unit < exact(cert.gamma_hi) <= Fraction(hi_s)


@SLOW
@given(st.integers(min_value=2, max_value=10**6), st.integers(min_value=1, max_value=60))
@example(2, 1)
@example(10**6, 60)
def test_wcr_table_enclosures_property(L, digits):
    check_wcr_row(table_wcr.wcr_table([L], digits, certify=True)[0], digits)


@pytest.mark.parametrize("digits", DIGITS)
def test_wcr_cli_json_and_text(digits, capsys):
    depths = ["2", "3", "7", "100", "1000000"]
    rows = json.loads(
        run_main(table_wcr, ["--certify", "--digits", str(digits), "--format", "json", "--L", *depths], capsys)
    )
    assert [r["L"] for r in rows] == [int(d) for d in depths]
    for row in rows:
        check_wcr_row(row, digits)
    out = run_main(table_wcr, ["--certify", "--digits", str(digits), "--L", *depths], capsys)
    for line, row in zip(out.strip().splitlines()[1:], rows):
        L, y, g, ratio = line.split()[:4]
        lo_s, hi_s = re.search(r"\[([^,\]]+), ([^\]]+)\]", line).groups()
        assert [int(L), y, g, ratio, [lo_s, hi_s]] == [
            row["L"],
            row["y"],
            row["gamma_wcr"],
            row["ratio_to_2"],
            row["enclosure"],
        ]


def test_wcr_cli_csv_defaults(capsys):
    out = run_main(table_wcr, ["--certify", "--format", "csv"], capsys)
    records = list(csv.DictReader(io.StringIO(out)))
    assert [int(r["L"]) for r in records] == list(table_wcr.PAPER_DEPTHS)
    for r in records:
        check_wcr_row(
            {
                "L": int(r["L"]),
                "y": r["y"],
                "gamma_wcr": r["gamma_wcr"],
                "ratio_to_2": r["ratio_to_2"],
                "enclosure": [r["enclosure_lo"], r["enclosure_hi"]],
            },
            12,
        )


# ------------------------------------------------------------------ numerics.rare_gates.initialization
def initialization_references(m: str, M: str, digits: int) -> dict:
    """Each enclosed constant at 2 digits + 10 from mpmath point arithmetic (no mpmath.iv)."""
    dps = 2 * digits + 10
    with mpmath.workdps(dps + 10):
        p_d0 = (1 - mpmath.mpf(7) / 4 * mpmath.exp(-mpmath.mpf(3) / 4)) / 16  # (1/16)(1 - (7/4) e^{-3/4})
        bound = I.k_bound(m, M, dps + 10)
        lower = p_d0 - bound
        refs = {
            "P(D0)": p_d0,
            "P(D0) labelled": p_d0 / 2,
            f"bound on P(D0 \\ K) (m={m}, M={M})": bound,
            "P(K) >= P(D0) - bound": lower,
            "0.99 (P(D0) - bound)": mpmath.mpf(99) / 100 * lower,
            "initial-risk infimum 1 + 9/128 - 3/(2 pi)": 1 + mpmath.mpf(9) / 128 - 3 / (2 * mpmath.pi),
        }
    return {k: exact(v) for k, v in refs.items()}


def check_initialization_rows(rows, m, M, digits):
    refs = initialization_references(m, M, digits)
    enclosed = [r for r in rows if r["lo"]]
    assert {r["name"] for r in enclosed} == set(refs)
    for r in enclosed:
        check_sig_enclosure(r["lo"], r["hi"], refs[r["name"]], digits, value_s=r["value"])


@pytest.mark.parametrize("digits", DIGITS)
def test_initialization_constants_enclosures(digits):
    check_initialization_rows(I.constants(digits), I.DEFAULT_M_INNER, I.DEFAULT_M_OUTER, digits)


@given(
    st.integers(1, 9),
    st.integers(2, 6),
    st.integers(2, 12),
    st.integers(min_value=1, max_value=60),
)
@example(1, 4, 5, 12)
@example(7, 2, 2, 1)
def test_initialization_enclosures_property(c, k, M, digits):
    m = f"{c}e-{k}"
    check_initialization_rows(I.constants(digits, m, str(M)), m, str(M), digits)


@pytest.mark.parametrize("digits", DIGITS)
def test_initialization_cli_text_and_json(digits, capsys):
    rows = json.loads(run_main(I, ["--dps", str(digits), "--format", "json"], capsys))
    check_initialization_rows(rows, I.DEFAULT_M_INNER, I.DEFAULT_M_OUTER, digits)
    out = run_main(I, ["--dps", str(digits)], capsys)
    refs = initialization_references(I.DEFAULT_M_INNER, I.DEFAULT_M_OUTER, digits)
    seen = 0
    for line in out.strip().splitlines():
        match = ENCLOSURE_RE.search(line)
        if match:
            name, value_s = line[: match.start()].strip().rsplit(": ", 1)
            check_sig_enclosure(*match.groups(), refs[name], digits, value_s=value_s)
            seen += 1
    assert seen == len(refs)


def test_initialization_cli_csv_and_markdown(capsys):
    out = run_main(I, ["--dps", "20", "--m", "2e-4", "--M", "6", "--format", "csv"], capsys)
    check_initialization_rows(list(csv.DictReader(io.StringIO(out))), "2e-4", "6", 20)
    md = run_main(I, ["--dps", "20", "--format", "markdown"], capsys).strip().splitlines()
    rows = [dict(zip(["name", "value", "lo", "hi"], (c.strip() for c in ln.strip("|").split("|")))) for ln in md[2:]]
    check_initialization_rows(rows, I.DEFAULT_M_INNER, I.DEFAULT_M_OUTER, 20)


def test_initialization_format_enclosure_is_outward():
    enc = I.p_d0_enclosure()
    text = I.format_enclosure(enc, 12)
    lo_s, hi_s = text.strip("[]").split(", ")
    lo, hi = I.endpoints(enc)
    assert Fraction(lo_s) <= exact(lo) and exact(hi) <= Fraction(hi_s)
    with pytest.raises(ValueError, match=r"enclosure must be an mpmath.iv interval"):
        I.format_enclosure(0.5, 12)
    with pytest.raises(ValueError, match=r"digits must be an integer >= 1"):
        I.format_enclosure(enc, 0)
