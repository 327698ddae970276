"""Tests of :mod:`numerics.stats` against published values, SciPy, closed forms and brute-force simulation.

Published references (the tables live in :mod:`verify.instruments`, which calibrates the audit with them):

* Newcombe RG (1998a), Two-sided confidence intervals for the single proportion: comparison
  of seven methods, Stat. Med. 17:857-872, Table I: Wilson score (method 3) and
  Clopper-Pearson (method 5) intervals for 81/263, 15/148, 0/20, 1/29, printed to 4 decimals;
* Newcombe RG (1998b), Interval estimation for the difference between independent
  proportions: comparison of eleven methods, Stat. Med. 17:873-890, Table II, examples
  (a)-(h) of the hybrid score interval (method 10), 4 decimals;
* Fisher RA (1935), The Design of Experiments: the lady tasting tea, table (3, 1; 1, 3),
  two-sided p = 0.4857 (= 34/70), one-sided 0.2429 (= 17/70).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from numerics import stats as S
from numerics.rare_gates import experiments as E
from numerics.rare_gates import initialization as I
from verify.instruments import NEWCOMBE_1998A, NEWCOMBE_1998B, r4

_r4 = r4


# --- published values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("k, n, wilson, cp", NEWCOMBE_1998A)
def test_intervals_match_newcombe_1998a(k, n, wilson, cp):
    assert _r4(S.wilson_interval(k, n)) == wilson
    assert _r4(S.clopper_pearson_interval(k, n)) == cp


@pytest.mark.parametrize("k1, n1, k2, n2, expected", NEWCOMBE_1998B)
def test_newcombe_matches_newcombe_1998b(k1, n1, k2, n2, expected):
    assert _r4(S.newcombe_difference(k1, n1, k2, n2)) == expected


def test_fisher_tea_tasting():
    assert round(S.fisher_exact_p(3, 4, 1, 4), 4) == 0.4857
    assert S.fisher_exact_p(3, 4, 1, 4) == pytest.approx(34 / 70, rel=1e-12)  # (1 + 16 + 16 + 1)/70
    assert S.fisher_exact_p(3, 4, 1, 4, alternative="greater") == pytest.approx(17 / 70, rel=1e-12)
    assert S.fisher_exact_p(3, 4, 1, 4, alternative="less") == pytest.approx(69 / 70, rel=1e-12)


def test_bonferroni_quantiles():
    assert S.z_bonferroni(1) == pytest.approx(1.959963984540054, abs=1e-12)  # the two-sided 95% quantile
    assert round(S.z_bonferroni(20), 4) == 3.0233  # Phi^-1(1 - 0.05/40), normal tables
    assert S.z_bonferroni(5, alpha=0.01) == pytest.approx(sps.norm.isf(0.001), rel=1e-14)


# --- definitions and edge cases -----------------------------------------------------------------------


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.floats(0.5, 4.0))
def test_wilson_is_the_score_interval(kn, z):
    """Each finite end p solves |k/n - p| = z sqrt(p(1 - p)/n): residual within 1e-12 (float64 rounding of
    O(1) terms)."""
    k, n = kn
    lo, hi = S.wilson_interval(k, n, z)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    for p in (lo, hi):
        if 0.0 < p < 1.0:
            assert abs(abs(k / n - p) - z * math.sqrt(p * (1 - p) / n)) < 1e-12
    assert (lo == 0.0) == (k == 0) and (hi == 1.0) == (k == n)


def test_wilson_intervals_agree_with_the_scalar_function():
    lo, hi = S.wilson_intervals(np.arange(65), 64, S.z_bonferroni(20))
    assert all((lo[k], hi[k]) == S.wilson_interval(k, 64, S.z_bonferroni(20)) for k in range(65))
    with pytest.raises(ValueError, match=r"k must be a non-empty 1-d array of integers in \[0, 64\]"):
        S.wilson_intervals([3, 65], 64)


def test_clopper_pearson_is_the_beta_interval():
    for k, n in [(0, 10), (3, 10), (10, 10), (7, 64)]:
        lo, hi = S.clopper_pearson_interval(k, n, alpha=0.1)
        assert lo == (0.0 if k == 0 else pytest.approx(sps.beta.ppf(0.05, k, n - k + 1), rel=1e-12))
        assert hi == (1.0 if k == n else pytest.approx(sps.beta.isf(0.05, k + 1, n - k), rel=1e-12))


def test_fisher_grid_matches_scipy_on_every_table():
    for n1, n2 in [(4, 4), (10, 7), (20, 20), (12, 40)]:
        for alt in S.ALTERNATIVES:
            grid = S.fisher_p_grid(n1, n2, alt)
            for k1 in range(n1 + 1):
                for k2 in range(n2 + 1):
                    ref = sps.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative=alt)[1]
                    # 1e-12 relative: sums of <= 41 hypergeometric terms from log-gamma values of O(100)
                    assert grid[k1, k2] == pytest.approx(ref, rel=1e-12, abs=1e-300), (n1, n2, alt, k1, k2)


def test_newcombe_rejection_table_matches_the_scalar_interval():
    z = S.z_bonferroni(20)
    n1, n2 = 30, 17
    table = S._newcombe_rejects(n1, n2, z)  # the full table
    for k1 in range(n1 + 1):
        for k2 in range(n2 + 1):
            lo, hi = S.newcombe_difference(k1, n1, k2, n2, z)
            assert table[k1, k2] == (lo > 0 or hi < 0), (k1, k2)


# --- power --------------------------------------------------------------------------------------------


def _simulated_rejections(p1, n1, p2, n2, rejects, reps, seed):
    rng = np.random.Generator(np.random.Philox(key=np.array([seed, 0], dtype=np.uint64)))
    k1, k2 = rng.binomial(n1, p1, reps), rng.binomial(n2, p2, reps)
    tables, counts = np.unique(np.stack([k1, k2], axis=1), axis=0, return_counts=True)
    hits = sum(int(c) for (a, b), c in zip(tables, counts) if rejects(int(a), int(b)))
    return hits / reps


@pytest.mark.parametrize(
    "p1, n1, p2, n2, test",
    [
        (0.219, 64, 0.109, 64, "newcombe"),
        (0.4, 128, 0.25, 90, "newcombe"),
        (0.05, 153, 0.0, 153, "fisher"),
        (0.3, 40, 0.6, 60, "fisher"),
    ],
)
def test_power_matches_brute_force_simulation(p1, n1, p2, n2, test):
    """Enumeration against 20000 simulated table pairs judged by the scalar interval or test: agree within
    4 Monte Carlo standard errors (false alarm 6e-5 per case)."""
    z = S.z_bonferroni(20) if test == "newcombe" else S.Z95
    if test == "newcombe":

        def rejects(a, b):
            lo, hi = S.newcombe_difference(a, n1, b, n2, z)
            return lo > 0 or hi < 0
    else:

        def rejects(a, b):
            return S.fisher_exact_p(a, n1, b, n2) < 0.05

    reps = 20000
    sim = _simulated_rejections(p1, n1, p2, n2, rejects, reps, seed=20260)
    exact = S.power_two_sample(p1, n1, p2, n2, test=test, z=z)
    se = math.sqrt(max(exact * (1 - exact), 1 / reps) / reps)
    assert abs(sim - exact) <= 4 * se


def test_power_is_the_size_at_the_null():
    # the exact Fisher test is conservative: its size is at most the level at every p
    for p in (0.05, 0.3, 0.5, 0.9):
        assert S.power_two_sample(p, 64, p, 64, test="fisher") <= 0.05
    assert S.power_two_sample(1.0, 64, 1.0, 64) == 0.0  # both samples all-successes: never rejects
    assert S.power_two_sample(1.0, 64, 0.0, 64) == 1.0


def test_power_one_sample_by_direct_summation():
    p0, p, n, z = 0.3, 0.4, 90, 1.7
    direct = sum(
        sps.binom.pmf(k, n, p)
        for k in range(n + 1)
        if not S.wilson_interval(k, n, z)[0] <= p0 <= S.wilson_interval(k, n, z)[1]
    )
    assert S.power_one_sample(p0, p, n, z=z) == pytest.approx(direct, rel=1e-12)
    direct_cp = sum(
        sps.binom.pmf(k, n, p)
        for k in range(n + 1)
        if not S.clopper_pearson_interval(k, n, 0.05)[0] <= p0 <= S.clopper_pearson_interval(k, n, 0.05)[1]
    )
    assert S.power_one_sample(p0, p, n, interval="clopper-pearson", alpha=0.05) == pytest.approx(direct_cp, rel=1e-12)
    # at p = p0 it is the false-alarm rate; Clopper-Pearson is conservative
    assert S.power_one_sample(p0, p0, n, interval="clopper-pearson") <= 0.05


def test_power_normal_closed_form():
    assert S.power_normal(0.0, 1.0, S.Z95) == pytest.approx(0.05, rel=1e-12)
    assert S.power_normal(2.0, 0.5, 1.0) == pytest.approx(sps.norm.sf(-2.0) + sps.norm.cdf(-6.0), rel=1e-12)


def test_power_by_simulation_is_keyed_per_replicate():
    def trial(rng):
        return bool(rng.random() < 0.25)

    a = S.power_by_simulation(trial, reps=3000, seed=7)
    b = S.power_by_simulation(trial, reps=1500, seed=7)
    assert a.reps == 3000 and a.mc_error == pytest.approx(math.sqrt(a.power * (1 - a.power) / 3000))
    assert abs(a.power - 0.25) <= 4 * a.mc_error  # 4 SE: false alarm 6e-5
    # replicate i depends on (seed, i) only: the first 1500 replicates are the same in both runs
    hits_first = round(b.power * 1500)
    assert hits_first == sum(
        trial(np.random.Generator(np.random.Philox(key=np.array([7, i], dtype=np.uint64)))) for i in range(1500)
    )


def test_smallest_n():
    assert S.smallest_n(lambda n: 1 - 0.9**n) == 16  # 1 - 0.9^16 = 0.815 >= 0.8 > 1 - 0.9^15 = 0.794
    assert S.smallest_n(lambda n: 0.5, n_max=64) is None
    n = S.smallest_n(lambda m: S.power_two_sample(0.3, m, 0.5, m, test="fisher"))
    assert (
        S.power_two_sample(0.3, n, 0.5, n, test="fisher")
        >= 0.8
        > S.power_two_sample(0.3, n - 1, 0.5, n - 1, test="fisher")
    )


# --- validation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: S.wilson_interval(5, 0), r"n must be an integer >= 1; got 0"),
        (lambda: S.wilson_interval(-1, 10), r"k must be an integer in \[0, 10\]; got -1"),
        (lambda: S.wilson_interval(1.0, 10), r"k must be an integer"),
        (lambda: S.wilson_interval(True, 10), r"k must be an integer"),
        (lambda: S.wilson_interval(1, 10, z=0.0), r"z must be a finite real number in \(0, 30\]; got 0.0"),
        (lambda: S.wilson_interval(1, 10, z=float("nan")), r"z must be a finite real number in \(0, 30\]"),
        (
            lambda: S.clopper_pearson_interval(1, 10, alpha=0.0),
            r"alpha must be a finite real number in \(0, 1\); got 0.0",
        ),
        (lambda: S.newcombe_difference(1, 10, 11, 10), r"k2 must be an integer in \[0, 10\]; got 11"),
        (lambda: S.fisher_exact_p(1, 0, 1, 4), r"n1 must be an integer >= 1"),
        (lambda: S.fisher_exact_p(1, 4, 1, 4, alternative="both"), r"alternative must be one of"),
        (lambda: S.z_bonferroni(2, alpha=1.5), r"alpha must be a finite real number in \(0, 1\); got 1.5"),
        (lambda: S.z_bonferroni(2.0), r"m must be an integer >= 1; got 2.0"),
        (lambda: S.power_two_sample(1.2, 10, 0.5, 10), r"p1 must be a finite real number in \[0, 1\]; got 1.2"),
        (lambda: S.power_two_sample(0.2, 10, 0.5, 10, test="wald"), r"test must be one of 'newcombe', 'fisher'"),
        (lambda: S.power_two_sample(0.2, 10, 0.5, 10, alternative="above"), r"alternative must be one of"),
        (
            lambda: S.power_two_sample(0.2, 10, 0.5, 10, test="fisher", level=0.0),
            r"level must be a finite real number in \(0, 1\)",
        ),
        (
            lambda: S.power_one_sample(0.2, 0.5, 10, interval="exact"),
            r"interval must be one of 'wilson', 'clopper-pearson'",
        ),
        (lambda: S.power_of_region(3, 0.5, [True, False]), r"reject must hold n \+ 1 = 4 booleans"),
        (lambda: S.power_normal(1.0, 0.0, 1.0), r"se must be a finite real number > 0; got 0.0"),
        (
            lambda: S.power_by_simulation(lambda rng: True, reps=0, seed=1),
            r"reps must be an integer >= 1; got 0",
        ),
        (lambda: S.power_by_simulation("x", reps=10, seed=1), r"trial must be a callable"),
        (lambda: S.smallest_n(lambda n: 1.0, target=1.0), r"target must be a finite real number in \(0, 1\)"),
    ],
)
def test_errors_name_the_parameter_and_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- the rare-gates statistics delegate here, with the same results -----------------------------------


def _textbook_wilson(k, n, z):
    """The closed form the rare-gates module computed before delegating (oracle for the delegation)."""
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


def _textbook_newcombe(k1, n1, k2, n2, z):
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _textbook_wilson(k1, n1, z)
    l2, u2 = _textbook_wilson(k2, n2, z)
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def test_rare_gates_statistics_delegate_with_the_same_results():
    """Over a grid of (k, n) and the audit's quantiles: equal to the former closed forms within 4e-16
    (statsmodels takes the level alpha = 2 Phi(-z) and recomputes z from it, a round trip of a few ulp)."""
    zs = (S.Z95, S.z_bonferroni(20), 3.2905267314919255)
    worst = 0.0
    for n in (*range(1, 41), 64, 128, 512):
        for k in range(n + 1):
            for z in zs:
                ours = E.wilson(k, n, z)
                assert ours == S.wilson_interval(k, n, z) == I.wilson_interval(k, n, z)
                worst = max(worst, *(abs(a - b) for a, b in zip(ours, _textbook_wilson(k, n, z))))
    assert worst <= 4e-16
    for n1, n2 in [(64, 64), (7, 13), (512, 128)]:
        for k1 in range(0, n1 + 1, max(1, n1 // 8)):
            for k2 in range(0, n2 + 1, max(1, n2 // 32)):
                ours = E.newcombe_difference(k1, n1, k2, n2, S.Z95)
                assert ours == S.newcombe_difference(k1, n1, k2, n2, S.Z95)
                assert all(abs(a - b) <= 1e-15 for a, b in zip(ours, _textbook_newcombe(k1, n1, k2, n2, S.Z95)))
                assert E.fisher_p(k1, n1, k2, n2) == S.fisher_exact_p(k1, n1, k2, n2)
    assert E.z_bonferroni(20) == S.z_bonferroni(20) == float(sps.norm.isf(0.05 / 40))


def test_one_sided_newcombe_power_is_the_two_sided_power_split_by_direction():
    """The one-sided Newcombe check rejects only in its direction: its two directions add up to the two-sided power,
    and at equal proportions each is about half the two-sided size."""
    for p1, p2 in ((0.6, 0.3), (0.3, 0.3), (0.2, 0.35)):
        both = S.power_two_sample(p1, 80, p2, 90)
        up = S.power_two_sample(p1, 80, p2, 90, alternative="greater")
        down = S.power_two_sample(p1, 80, p2, 90, alternative="less")
        assert up + down == pytest.approx(both, abs=1e-12)
    assert S.power_two_sample(0.6, 80, 0.3, 90, alternative="greater") > 0.9
    assert S.power_two_sample(0.6, 80, 0.3, 90, alternative="less") < 1e-6
