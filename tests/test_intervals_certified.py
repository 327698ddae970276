"""Tests of numerics.intervals: exact outward formatting and the certification predicates.

The formatter is checked against an independent oracle in exact rational arithmetic
(Fraction, floor/ceil on integers); the predicates on failing and borderline inputs
(straddling, touching, no sign change, wrong monotonicity, too little precision); the
certified root against mpmath.findroot at high precision, including a deliberately wrong
function whose enclosure must miss the true root (so the containment check can fail).
"""

import decimal
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st
from mpmath import iv

from numerics.intervals import (
    bounds,
    certainly_above,
    certainly_below,
    certified_decreasing_root,
    directed_fixed_str,
    directed_str,
    enclose,
    format_enclosure,
    format_enclosure_fixed,
    interval_str,
    iv_workdps,
    value,
)
from tests.exact_oracle import exact, floor_log10

DIGITS = (12, 20, 35, 50)  # the precisions the CLIs are run at


# ------------------------------------------------------------------ an independent oracle
def oracle_sig(v: Fraction, digits: int, up: bool) -> Fraction:
    """v rounded towards +inf (up) or -inf to ``digits`` significant digits, exactly."""
    if v == 0:
        return Fraction(0)
    q = Fraction(10) ** (floor_log10(v) - digits + 1)
    n = v / q
    k = -((-n.numerator) // n.denominator) if up else n.numerator // n.denominator
    return k * q


def n_significant(s: str) -> int:
    return len(decimal.Decimal(s).as_tuple().digits)


mpfs = st.builds(
    lambda man, exp: mpmath.mpf(man) * mpmath.mpf(2) ** exp,
    st.integers(min_value=-(2**200), max_value=2**200),
    st.integers(min_value=-700, max_value=700),
)


# ------------------------------------------------------------------ directed_str / directed_fixed_str
@given(mpfs, st.integers(min_value=1, max_value=60), st.booleans())
@example(-mpmath.mpf(2) / 3, 5, False)  # negative: mpf.man_exp drops the sign
@example(-mpmath.mpf(2) / 3, 5, True)
@example(mpmath.mpf("9.9999"), 2, True)  # carry into a new decade
@example(mpmath.mpf(2) ** -1000, 3, True)  # far below decimal's default exponent range
@example(mpmath.mpf(0), 4, False)
def test_directed_str_matches_exact_oracle(x, digits, up):
    with mpmath.workprec(800):  # the strategy's products are exact at this precision
        s = directed_str(x, digits, up)
        v = exact(x)
    assert Fraction(s) == oracle_sig(v, digits, up)
    assert (Fraction(s) >= v) if up else (Fraction(s) <= v)
    assert n_significant(s) <= digits


@given(mpfs, st.integers(min_value=0, max_value=40), st.booleans())
@example(-mpmath.mpf(1) / 1000, 2, False)
@example(mpmath.mpf("2.5"), 0, True)
def test_directed_fixed_str_matches_exact_oracle(x, places, up):
    with mpmath.workprec(800):
        s = directed_fixed_str(x, places, up)
        v = exact(x)
    scaled = v * 10**places
    n = -((-scaled.numerator) // scaled.denominator) if up else scaled.numerator // scaled.denominator
    assert Fraction(s) == Fraction(n, 10**places)
    assert (len(s.split(".")[1]) if "." in s else 0) == places


@pytest.mark.parametrize("digits", DIGITS)
def test_enclosure_of_irrational_has_positive_width_and_contains(digits):
    # the reported defect: nstr gave [x, x] rounded to nearest, missing the true value
    for expr in (2 / sp.pi, 1 - 4 / sp.pi**2, sp.sqrt(2), -sp.E):
        lo, hi = bounds(enclose(expr, digits))
        lo_s, hi_s = format_enclosure(lo, hi, digits)
        ref = exact(value(expr, 2 * digits + 10))
        slack = abs(ref) * Fraction(10) ** -(2 * digits + 5)  # the reference's own error (10 guard digits)
        assert Fraction(lo_s) < Fraction(hi_s)
        assert Fraction(lo_s) - slack <= ref <= Fraction(hi_s) + slack
        unit = Fraction(10) ** (floor_log10(max(abs(Fraction(lo_s)), abs(Fraction(hi_s)))) - digits + 1)
        assert Fraction(hi_s) - Fraction(lo_s) <= 2 * unit


def test_exact_values_print_exactly():
    assert format_enclosure(mpmath.mpf("0.5"), mpmath.mpf("0.5"), 12) == ("0.5", "0.5")
    assert format_enclosure(3, 3, 1) == ("3", "3")
    assert directed_str(12345678901234, 10, up=False) == "1.234567890e+13"  # the 10 digits, zero kept
    assert directed_str(Fraction(1, 3), 3, up=True) == "0.334"
    assert directed_str(decimal.Decimal("0.1"), 3, up=True) == "0.1"
    assert directed_str(0.1, 20, up=False) == "0.10000000000000000555"  # a float is its binary value
    assert interval_str(iv.mpf([-1, 2]) / 3, 4) == "[-0.3334, 0.6667]"


def test_infinite_ends_print_as_inf():
    assert format_enclosure(mpmath.mpf("-inf"), mpmath.mpf("inf"), 5) == ("-inf", "inf")
    assert format_enclosure_fixed(mpmath.mpf(1), mpmath.mpf("inf"), 2) == ("1.00", "inf")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: directed_str(1, 0, True), r"digits must be an integer >= 1; got 0"),
        (lambda: directed_str(1, 2.0, True), r"digits must be an integer >= 1"),
        (lambda: directed_str(1, True, True), r"digits must be an integer >= 1"),
        (lambda: directed_fixed_str(1, -1, True), r"places must be an integer >= 0; got -1"),
        (lambda: directed_str(1, 3, "up"), r"up must be True .* or False"),
        (lambda: directed_str(mpmath.mpf("nan"), 3, True), r"x must not be NaN"),
        (lambda: directed_str(float("nan"), 3, True), r"x must not be NaN"),
        (lambda: directed_str("0.5", 3, True), r"x must be a real number"),
        (lambda: directed_str(True, 3, True), r"x must be a real number"),
        (lambda: format_enclosure(2, 1, 5), r"lo must not exceed hi"),
        (lambda: format_enclosure(mpmath.mpf("inf"), 1, 5), r"lo must not exceed hi"),
        (lambda: format_enclosure("a", 1, 5), r"lo must be a real number"),
        (lambda: format_enclosure_fixed(1, 0, 2), r"lo must not exceed hi"),
        (lambda: interval_str(0.5, 3), r"e must be an mpmath iv interval"),
    ],
)
def test_formatter_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ bounds
@pytest.mark.parametrize("bad", [0.5, mpmath.mpf(1), (1, 2), None, "0.5", sp.Rational(1, 2)])
def test_bounds_rejects_non_intervals(bad):
    with pytest.raises(ValueError, match=r"e must be an mpmath iv interval"):
        bounds(bad)


def test_bounds_are_exact_at_any_ambient_precision():
    with iv_workdps(80):
        e = iv.mpf(1) / 3
    raw_lo, raw_hi = e._mpi_
    with mpmath.workdps(5):  # a low ambient precision must not round the end points
        lo, hi = bounds(e)

    def raw(t):  # (sign, man, exp, bc) read exactly
        return (-1) ** t[0] * Fraction(t[1]) * Fraction(2) ** t[2]

    assert exact(lo) == raw(raw_lo) and exact(hi) == raw(raw_hi)
    assert exact(lo) < Fraction(1, 3) < exact(hi)


# ------------------------------------------------------------------ certainly_above / certainly_below
@pytest.mark.parametrize(
    "e, x",
    [
        (iv.mpf(["0.3", "0.5"]), "0.4"),  # straddles a decimal level
        (iv.mpf([3, 4]), "pi"),  # straddles an irrational level
        (iv.mpf([-1, 1]), 0),
        (iv.mpf(["1/4", "3/4"]), sp.Rational(1, 2)),
        (iv.mpf([0.25, 0.75]), Fraction(1, 2)),
    ],
)
def test_straddling_is_neither_above_nor_below(e, x):
    assert not certainly_above(e, x)
    assert not certainly_below(e, x)


@pytest.mark.parametrize("x", ["0.5", "1/2", sp.Rational(1, 2), Fraction(1, 2), mpmath.mpf("0.5")])
def test_touching_the_level_is_not_strict(x):
    below_touching = iv.mpf([0.25, 0.5])  # upper end equals x exactly
    above_touching = iv.mpf([0.5, 0.75])  # lower end equals x exactly
    point = iv.mpf(0.5)
    assert not certainly_below(below_touching, x) and not certainly_above(below_touching, x)
    assert not certainly_above(above_touching, x) and not certainly_below(above_touching, x)
    assert not certainly_above(point, x) and not certainly_below(point, x)
    assert certainly_below(iv.mpf([0.25, 0.375]), x) and certainly_above(iv.mpf([0.625, 0.75]), x)


def test_irrational_level_is_resolved_at_the_intervals_precision():
    with iv_workdps(200):
        pi_iv = iv.pi + 0  # a 200-digit enclosure of pi
    p_lo, p_hi = bounds(pi_iv)
    just_below = iv.mpf([3, p_lo])  # ends ~1e-200 below pi: a 40-digit enclosure of pi could not tell
    just_above = iv.mpf([p_hi, 4])
    assert certainly_below(just_below, "pi") and not certainly_above(just_below, "pi")
    assert certainly_above(just_above, "pi") and not certainly_below(just_above, "pi")
    assert not certainly_below(pi_iv, "pi") and not certainly_above(pi_iv, "pi")


dyadic = st.builds(lambda n, k: Fraction(n, 2**k), st.integers(-(10**6), 10**6), st.integers(0, 30))


@given(dyadic, dyadic, st.one_of(dyadic, st.builds(Fraction, st.integers(-(10**6), 10**6), st.integers(1, 1000))))
@example(Fraction(1, 4), Fraction(1, 2), Fraction(1, 2))
@example(Fraction(1, 2), Fraction(1, 2), Fraction(1, 2))
def test_predicates_decide_exactly_on_dyadic_intervals(a, b, x):
    # dyadic end points are exact in iv, so the predicates must equal the exact comparisons
    lo, hi = min(a, b), max(a, b)
    e = iv.mpf([mpmath.mpf(lo.numerator) / lo.denominator, mpmath.mpf(hi.numerator) / hi.denominator])
    assert certainly_below(e, x) == (hi < x)
    assert certainly_above(e, x) == (lo > x)
    assert not (certainly_below(e, x) and certainly_above(e, x))


@pytest.mark.parametrize(
    "x, match",
    [
        (0.4, r"x must be an exact number .*float"),
        (True, r"x must be an exact number"),
        ("abc", r"x must be a finite real number without free symbols"),
        ("y + 1", r"x must be a finite real number without free symbols"),
        ("oo", r"x must be a finite real number"),
        ("nan", r"x must be a finite real number"),
        ("I", r"x must be a finite real number"),
        (mpmath.mpf("inf"), r"x must be a finite real number"),
        ("1/0", r"x must be"),
        (object(), r"x must be an exact real number"),
    ],
)
def test_predicates_reject_bad_levels(x, match):
    e = iv.mpf([0, 1])
    with pytest.raises(ValueError, match=match):
        certainly_below(e, x)
    with pytest.raises(ValueError, match=match):
        certainly_above(e, x)


@pytest.mark.parametrize("bad", [0.5, (0, 1), mpmath.mpf(0)])
def test_predicates_reject_non_intervals(bad):
    with pytest.raises(ValueError, match=r"e must be an mpmath iv interval"):
        certainly_below(bad, "0.4")
    with pytest.raises(ValueError, match=r"e must be an mpmath iv interval"):
        certainly_above(bad, "0.4")


# ------------------------------------------------------------------ certified_decreasing_root
def cos_iv(x):
    return iv.cos(x)


def reference_root(f, level, start, dps):
    """mpmath.findroot (secant) at ``dps`` digits: independent of the interval bisection."""
    with mpmath.workdps(dps):
        return mpmath.findroot(lambda t: f(t) - mpmath.mpf(level), mpmath.mpf(start), tol=mpmath.mpf(10) ** (-dps + 5))


def contains(e, x) -> bool:
    lo, hi = bounds(e)
    return exact(lo) <= exact(x) <= exact(hi)


@pytest.mark.parametrize("dps", DIGITS)
def test_root_contains_independent_root_and_is_narrow(dps):
    root = certified_decreasing_root(cos_iv, "1/2", "0.1", "3", dps)
    ref = reference_root(mpmath.cos, "0.5", 1, 2 * dps + 10)
    lo, hi = bounds(root)
    with mpmath.workdps(3 * dps):
        assert lo <= ref <= hi
        assert abs(ref - mpmath.pi / 3) < mpmath.mpf(10) ** (-2 * dps)  # the reference is right
        assert hi - lo < mpmath.mpf(10) ** (-dps)


@pytest.mark.parametrize("dps", DIGITS)
def test_shifted_level_misses_the_true_root(dps):
    # the containment check can fail: solving cos x = 1/2 + 10^-(dps/2) instead of 1/2 moves the
    # root by ~10^-(dps/2) / sin(pi/3), far more than the enclosure width 10^-dps
    shift = mpmath.mpf(10) ** (-(dps // 2))

    def wrong_iv(x):
        return iv.cos(x) - iv.mpf(shift)

    wrong = certified_decreasing_root(wrong_iv, "1/2", "0.1", "3", dps)
    ref = reference_root(mpmath.cos, "0.5", 1, 2 * dps + 10)
    assert not contains(wrong, ref)


@given(st.integers(min_value=-999, max_value=999), st.integers(min_value=5, max_value=60))
@example(0, 5)
@example(999, 30)
def test_root_of_cos_at_random_levels(level_milli, dps):
    level = Fraction(level_milli, 1000)
    root = certified_decreasing_root(cos_iv, level, 0, "3.14159", dps)
    with mpmath.workdps(2 * dps + 10):
        ref = mpmath.acos(mpmath.mpf(level.numerator) / level.denominator)
        lo, hi = bounds(root)
        assert lo <= ref <= hi and hi - lo < mpmath.mpf(10) ** (-dps)


def test_root_far_from_the_origin():
    # an absolute width of 10^-10 at 10^20 needs 31 significant digits: the working precision
    # grows with the magnitude of the bracket (it would otherwise bisect forever)
    c = sp.Integer(10) ** 20 + sp.Rational(1, 3)
    c_iv = enclose(c, 60)
    root = certified_decreasing_root(lambda x: c_iv - x, 0, 10**20 - 1, 10**20 + 1, 10)
    lo, hi = bounds(root)
    assert exact(lo) <= Fraction(10**20) + Fraction(1, 3) <= exact(hi)
    assert exact(hi) - exact(lo) < Fraction(1, 10**10)


def test_exact_root_at_a_bisection_point_is_returned_as_a_point():
    root = certified_decreasing_root(lambda x: 1 - x, "1/2", 0, 1, 20)
    assert bounds(root) == (mpmath.mpf("0.5"), mpmath.mpf("0.5"))


@pytest.mark.parametrize(
    "f_iv, level, lo, hi, match",
    [
        (cos_iv, "1/2", "0.1", "1.0", r"no certified sign change"),  # cos 1 > 1/2: no root inside
        (cos_iv, "2", "0.1", "3", r"no certified sign change"),  # level out of range
        (lambda x: -iv.cos(x), "-1/2", "0.1", "3", r"no certified sign change"),  # increasing
        (lambda x: iv.mpf("0.5") + 0 * x, "1/2", "0.1", "3", r"no certified sign change"),  # constant = level
        (lambda x: (x - 1) ** 2, "1/4", 0, 3, r"no certified sign change"),  # not monotone: f(0) > 1/4 < f(3)
        (cos_iv, "1/2", "3", "0.1", r"lo must be below hi"),
        (cos_iv, "1/2", "1", "1", r"lo must be below hi"),
        (cos_iv, "1/2", "inf", "3", r"lo must be a finite real number"),
        (cos_iv, "1/2", "0.1", "abc", r"hi must be a finite real number"),
        (cos_iv, 0.5, "0.1", "3", r"level must be an exact number"),  # a float level is ambiguous
        (lambda x: 0.5, "1/2", "0.1", "3", r"f_iv must return an mpmath iv interval"),
    ],
)
def test_root_bad_brackets_and_functions_raise(f_iv, level, lo, hi, match):
    with pytest.raises(ValueError, match=match):
        certified_decreasing_root(f_iv, level, lo, hi, 20)


def test_root_precision_too_low_raises():
    fuzz = iv.mpf(["-1e-20", "1e-20"])  # an evaluation no finer than 1e-20

    def fuzzy_cos(x):
        return iv.cos(x) + fuzz

    with pytest.raises(ValueError, match=r"interval precision too low to separate the root at dps=30; raise dps"):
        certified_decreasing_root(fuzzy_cos, "1/2", "0.1", "3", 30)
    root = certified_decreasing_root(fuzzy_cos, "1/2", "0.1", "3", 15)  # coarse enough: it succeeds
    assert contains(root, reference_root(mpmath.cos, "0.5", 1, 40))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_root_rejects_bad_dps(bad):
    with pytest.raises(ValueError, match=r"dps \(decimal digits\) must be an integer >= 1"):
        certified_decreasing_root(cos_iv, "1/2", "0.1", "3", bad)


def test_value_and_enclose_bad_input():
    with pytest.raises(ValueError, match=r"dps \(decimal digits\) must be an integer >= 1"):
        enclose(sp.pi, 0)
    with pytest.raises(ValueError, match=r"free symbols \['y'\]"):
        enclose("y + 1", 20)
    with pytest.raises(ValueError, match=r"free symbols"):
        value(sp.Symbol("z"), 20)
