"""Float64 J, g, kernel and risks of numerics.rare_gates.model against the mpmath oracle.

Each float input is taken at its exact binary value and the oracle (tests/oracle.py)
evaluates the paper's formulas at 50 significant digits plus guard digits, so the
comparison measures the library's forward error alone. Angles come from a log-spaced
grid of distances s in [1e-16, pi/2] to both ends of [0, pi] (t = s and t = pi - s),
plus hand-picked points within 1e-12 and 1e-15 of 0 and pi, float(pi) itself, pi/2
(where J and g switch formula) and pi - 0.5 (where J switches from series to direct).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from numerics.rare_gates import model
from tests.oracle import J_mp, K_mp, cross_dot, g_mp, risk_mp, risk_scale_mp

EPS = np.finfo(float).eps

_S = np.logspace(-16, math.log10(math.pi / 2), 161)
_SPECIAL = [
    0.0,
    1e-300,
    5e-324,
    1e-15,
    1e-12,
    math.pi / 2,
    np.nextafter(math.pi / 2, 0.0),
    np.nextafter(math.pi / 2, 4.0),
    math.pi - 0.5,
    np.nextafter(math.pi - 0.5, 0.0),
    np.nextafter(math.pi - 0.5, 4.0),
    math.pi - 1e-12,
    math.pi - 1e-15,
    np.nextafter(math.pi, 0.0),
    math.pi,
]
ANGLES = np.unique(np.concatenate([_S, math.pi - _S, _SPECIAL]))


TINY = np.finfo(float).tiny  # smallest normal float64
SUBNORMAL_ULP = 2.0**-1074


def rel_err(x: float, ref: mpmath.mpf) -> float:
    """|x - ref| / |ref| in units of float64 epsilon, computed in mpmath.

    Below the normal range no relative accuracy is representable: there a result
    within half a subnormal ulp of the reference counts as exact (0).
    """
    if abs(ref) < TINY:
        return 0.0 if abs(mpmath.mpf(float(x)) - ref) <= SUBNORMAL_ULP else math.inf
    with mpmath.workdps(30):
        return float(abs(mpmath.mpf(float(x)) - ref) / abs(ref)) / EPS


def tol_J(t: float) -> float:
    """Allowed relative error of J(t) in units of eps, by branch of model._J.

    - t <= pi/2: sin t + (pi - t) cos t >= 1 is a sum of non-negative terms (up to
      t = pi/2) of at most pi; 5 roundings (pi - t, sin, cos, product, sum, /2pi): 8.
    - pi - t < 0.5: the series for sin s - s cos s (s = pi - t from a double-double
      pi, one rounding) has positive ratio-bounded terms: 8.
    - otherwise the direct sin s - s cos s, s in [0.5, pi/2], cancels by at most
      (sin s + s cos s)/(sin s - s cos s) <= 23 (at s = 0.5); one ulp of each term
      then costs <= 23 eps, plus the roundings above: 32.
    """
    return 32.0 if (math.pi / 2 < t and math.pi - t >= 0.5) else 8.0


# g = (pi - t) sin t / (2 pi) or s sin s / (2 pi): a product, four roundings
# (pi - t, sin, product, division) plus 0.4 eps from pi - float(pi) below pi/2: 6 eps.
TOL_G = 6.0


@pytest.mark.parametrize("t", [math.pi, math.pi - 1e-15, math.pi - 1e-12, math.pi - 1e-6, math.pi - 0.4])
def test_oracle_J_agrees_with_series_near_pi(t):
    # Self-check of the oracle's guard digits by an independent route:
    # 2 pi J(pi - s) = sin s - s cos s = sum_k (-1)^(k+1) 2k s^(2k+1) / (2k+1)!, at 80 digits.
    with mpmath.workdps(80):
        s = mpmath.pi - mpmath.mpf(t)
        series = mpmath.nsum(
            lambda k: (-1) ** (k + 1) * 2 * k * s ** (2 * k + 1) / mpmath.factorial(2 * k + 1), [1, mpmath.inf]
        )
        ref = series / (2 * mpmath.pi)
        assert abs(J_mp(t) - ref) <= abs(ref) * mpmath.mpf(10) ** -45


@pytest.mark.parametrize("gap", [1e-15, 1e-9, 1e-3])
def test_oracle_kernel_agrees_with_norms_times_J(gap):
    # K(u, v) = |u||v| J(angle) with the angle from exact c, d at 100 digits.
    u, v = (0.3, 0.7), (-0.3, -0.7 + gap)
    c, d = cross_dot(u, v)
    with mpmath.workdps(100):
        t = mpmath.atan2(c, d)
        s = mpmath.pi - t
        j = (mpmath.sin(s) - s * mpmath.cos(s)) / (2 * mpmath.pi)  # no cancellation issue at 100 digits
        ref = mpmath.hypot(*map(mpmath.mpf, u)) * mpmath.hypot(*map(mpmath.mpf, v)) * j
        assert abs(K_mp(u, v) - ref) <= abs(ref) * mpmath.mpf(10) ** -45


def test_J_matches_oracle_on_log_grid():
    values = model.J(ANGLES)
    assert values.shape == ANGLES.shape and not np.any(np.isnan(values))
    errs = np.array([rel_err(v, J_mp(t)) for v, t in zip(values, ANGLES)])
    allowed = np.array([tol_J(t) for t in ANGLES])
    bad = [(t, e, a) for t, e, a in zip(ANGLES, errs, allowed) if not e <= a]
    assert not bad, f"J: relative error above tolerance (t, err/eps, tol/eps): {bad[:5]}"


@pytest.mark.parametrize("s", [1e-12, 1e-15, 2.0**-50, 1e-8])
def test_J_near_pi_keeps_relative_accuracy(s):
    # J(pi - s) ~ s^3 / (6 pi) is tiny; a clipped arccos or the direct formula would
    # return 0 or noise of size eps; the series must keep it to 8 eps.
    t = math.pi - s
    ref = J_mp(t)
    assert float(ref) < 1e-20
    assert rel_err(model.J(t), ref) <= 8.0


def test_J_at_float_pi_is_the_tiny_positive_value():
    # float(pi) lies 1.22e-16 below pi, so J(float(pi)) = (1.22e-16)^3/(6 pi) ~ 9.7e-50, not 0.
    ref = J_mp(math.pi)
    assert 9e-50 < float(ref) < 1e-49
    assert rel_err(model.J(math.pi), ref) <= 8.0


@pytest.mark.parametrize("t", [1e-15, 1e-12, 1e-6])
def test_J_near_zero(t):
    assert rel_err(model.J(t), J_mp(t)) <= 8.0


def test_g_matches_oracle_on_log_grid():
    values = model.g(ANGLES)
    assert not np.any(np.isnan(values))
    errs = np.array([rel_err(v, g_mp(t)) for v, t in zip(values, ANGLES)])
    bad = [(t, e) for t, e in zip(ANGLES, errs) if not e <= TOL_G]
    assert not bad, f"g: relative error above {TOL_G} eps (t, err/eps): {bad[:5]}"
    assert model.g(0.0) == 0.0


def test_scalar_and_array_paths_agree_bitwise():
    arr = model.J(ANGLES)
    assert all(model.J(float(t)) == v for t, v in zip(ANGLES[::7], arr[::7]))
    garr = model.g(ANGLES)
    assert all(model.g(float(t)) == v for t, v in zip(ANGLES[::7], garr[::7]))
    assert model.J(np.asarray(ANGLES.reshape(-1, 1))).shape == (ANGLES.size, 1)


# Kernel: (|c| + (pi - t) d) / (2 pi). With one vector on a coordinate axis the cross
# and dot products are single (exact-ish) products, so the comparison isolates the
# atan2 / x - atan(x) evaluation. The direct x - atan(x) for x >= 0.25 (the series
# threshold) cancels by atan(x) / (x - atan x) <= 49, so one ulp of atan costs up to
# ~50 eps of K (worst measured: 22 eps): 64 eps.
TOL_K = 64.0

_RADII = [2.0**-30, 0.3, 1.0, 7.0, 2.0**30]


@pytest.mark.parametrize("r", _RADII)
def test_kernel_axis_aligned_matches_oracle(r):
    worst = 0.0
    for t in ANGLES:
        v = np.array([1.7 * math.cos(t), 1.7 * math.sin(t)])
        for u, w in (((r, 0.0), v), (v, (r, 0.0)), ((0.0, r), v[::-1].copy())):
            ref = K_mp(u, w)
            val = model.kernel(u, w)
            assert not math.isnan(val)
            worst = max(worst, rel_err(val, ref))
    assert worst <= TOL_K, f"kernel worst relative error {worst:.3g} eps"


def test_kernel_x_minus_atan_threshold():
    # u = e1, v = (-1, x): c = x, d = -1 exactly; sweep x across the series threshold 0.25.
    xs = np.concatenate([np.linspace(0.2, 0.35, 301), [np.nextafter(0.25, 0.0), 0.25]])
    worst = max(rel_err(model.kernel((1.0, 0.0), (-1.0, x)), K_mp((1.0, 0.0), (-1.0, x))) for x in xs)
    assert worst <= TOL_K, f"worst {worst:.3g} eps"


def _random_pairs(seed: int, n: int, gap_lo: float, gap_hi: float, base: float):
    """Pairs at angle base + gap, gap log-uniform in [gap_lo, gap_hi] with random sign."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        phi = rng.uniform(-math.pi, math.pi)
        gap = 10.0 ** rng.uniform(math.log10(gap_lo), math.log10(gap_hi)) * rng.choice([-1.0, 1.0])
        r1, r2 = 10.0 ** rng.uniform(-3, 1, 2)
        u = r1 * np.array([math.cos(phi), math.sin(phi)])
        v = r2 * np.array([math.cos(phi + base + gap), math.sin(phi + base + gap)])
        yield u, v


@pytest.mark.parametrize("base", [0.0, math.pi / 3, math.pi / 2, 2.5])
def test_kernel_generic_directions_matches_oracle(base):
    # Angles up to 3.0: the cross product is compensated (Dekker TwoProduct), so c carries
    # a few ulp of relative error, K ~ c^3 near pi triples it: within TOL_K. Angles closer
    # to pi are covered by the nearly-opposite test below.
    worst = max(rel_err(model.kernel(u, v), K_mp(u, v)) for u, v in _random_pairs(11, 150, 1e-15, 0.5, base))
    assert worst <= TOL_K, f"worst {worst:.3g} eps"


@pytest.mark.parametrize("s", [1e-4, 1e-8, 1e-12, 1e-15])
def test_kernel_nearly_opposite_exact_cross_product(s):
    # c and d exact (u on an axis, v = (-1, s') with s' = s): K ~ s^3/(6 pi) must keep
    # relative accuracy, as J does near pi.
    for u, v in (((1.0, 0.0), (-1.0, s)), ((0.0, 2.0), (s, -3.0)), ((-0.5, 0.0), (4.0, -s))):
        ref = K_mp(u, v)
        assert float(ref) > 0.0
        assert rel_err(model.kernel(u, v), ref) <= TOL_K


def test_kernel_nearly_opposite_generic_directions_relative_accuracy():
    worst = 0.0
    for u, v in _random_pairs(12, 40, 1e-15, 1e-4, math.pi):
        c, _ = cross_dot(u, v)
        if c == 0:
            continue
        worst = max(worst, rel_err(model.kernel(u, v), K_mp(u, v)))
    assert worst <= TOL_K, f"worst relative error {worst:.3g} eps"


def test_kernel_subnormal_negative_dot_is_finite():
    for u, v in (((1.0, 0.0), (-5e-324, 1.0)), ((1.0, 0.0), (-1e-309, 3.0))):
        val = model.kernel(u, v)
        assert rel_err(val, K_mp(u, v)) <= TOL_K, f"kernel{u, v} = {val}"


def test_kernel_degenerate_cases_are_exact():
    assert model.kernel((0.0, 0.0), (1.0, 2.0)) == 0.0
    assert model.kernel((1.0, 2.0), (-1.0, -2.0)) == 0.0  # exactly opposite: gates never both open
    assert model.kernel((2.0, 0.0), (2.0, 0.0)) == 2.0  # |u|^2 / 2 = E relu(u.X)^2
    assert model.kernel((1.0, 0.0), (0.0, 1.0)) == 1.0 / (2.0 * math.pi)  # J(pi/2) = 1/(2 pi)


# Risks: 0.5 (quad - 2 lin + C) has ~12 roundings, each bounded by eps times the
# magnitude of the partial sums, which risk_scale_mp bounds (sum of |terms|); kernels
# add <= 64 eps of their own size, which the scale also bounds: 16 eps x scale (a
# backward-error bound; the risk itself may be small, e.g. 0 at the source optimum).
TOL_RISK = 16.0


def _risk_points(seed: int, n: int):
    rng = np.random.default_rng(seed)
    pts = [rng.uniform(-3.0, 3.0, 6) for _ in range(n)]
    pts += [
        np.array([1.0, 0.0, 1.0, 0.0, 0.0, 0.0]),  # source optimum: R_s = 0 exactly
        np.array([0.8, 0.3, 1.0, 1e-12, 1.0, -1e-12]),  # nearly cloned units
        np.array([1.2, 0.7, 0.3, 0.9, -0.3, -0.9 + 1e-13]),  # nearly opposite units
        np.array([2.0, -1.5, 1e-8, 3.0, -2.5, 1e-15]),  # tiny components
        np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    ]
    return pts


@pytest.mark.parametrize("task", ["source", "target"])
def test_risks_match_oracle(task):
    fn = model.source_risk if task == "source" else model.target_risk
    for theta in _risk_points(21, 60):
        val = fn(theta)
        ref, scale = risk_mp(theta, task), risk_scale_mp(theta, task)
        err = float(abs(mpmath.mpf(val) - ref) / scale) / EPS
        assert err <= TOL_RISK, f"{task} risk at {theta.tolist()}: {val!r} vs {mpmath.nstr(ref, 20)} ({err:.3g} eps)"


def test_risk_known_values():
    assert model.source_risk([1.0, 0.0, 1.0, 0.0, 0.0, 0.0]) == 0.0
    assert model.source_risk(np.zeros(6)) == 0.25  # E relu(x1)^2 / 2
    assert model.target_risk(np.zeros(6)) == 1.0  # E|X|^2 / 2
    # one unit with weight w and head a against |x|: R = (a^2 |w|^2/2 - 2 a (2/pi)|w| + 2)/2
    a, w = 0.75, 1.5
    expected = (a * a * w * w / 2 - 2 * a * (2 / math.pi) * w + 2) / 2
    assert model.target_risk([a, 0.0, 0.0, w, 0.0, 0.0]) == pytest.approx(expected, rel=4 * EPS)
