"""Hypothesis properties and finite-difference checks of numerics.rare_gates.model.

Every float strategy is bounded to the model's domain: heads and weight components in
[-3, 3], hidden vectors built in polar form with norm in [0.1, 3] where a property
needs them nonzero, angles in [0, pi], scale factors in [1/4, 4]. Subnormal components
are excluded from the kernel strategies (allow_subnormal=False) because they reach a
known overflow (see test_model_oracle.test_kernel_subnormal_negative_dot_is_finite).

Tolerances are absolute in the natural scale of the quantity (|u||v| for the kernel,
the sum of the magnitudes of the risk's terms for a risk), because rotating or
rescaling float inputs perturbs them by O(eps) relative, and K is Lipschitz in u with
constant |grad_u K| <= (1 + pi)|v| / (2 pi) < |v|.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from numerics.rare_gates import model
from tests.oracle import J_mp
from tests.test_model_montecarlo import polar_thetas

EPS = np.finfo(float).eps

coord = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)
vec = st.tuples(coord, coord).map(np.array)
head = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)
angle_in_0_pi = st.floats(0.0, math.pi, allow_nan=False)
rotation = st.floats(-math.pi, math.pi, allow_nan=False)
scale = st.floats(0.25, 4.0, allow_nan=False)


@st.composite
def nonzero_vec(draw):
    r = draw(st.floats(0.1, 3.0))
    phi = draw(rotation)
    return np.array([r * math.cos(phi), r * math.sin(phi)])


@st.composite
def thetas(draw):
    return np.concatenate([[draw(head), draw(head)], draw(nonzero_vec()), draw(nonzero_vec())])


def rotate(v: np.ndarray, alpha: float) -> np.ndarray:
    c, s = math.cos(alpha), math.sin(alpha)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def risk_scale(theta) -> float:
    """Sum of magnitudes of the risk's terms: (sum |a_i||w_i|)^2/2 + 2 (sum |a_i||w_i|) + 2."""
    m = abs(theta[0]) * math.hypot(theta[2], theta[3]) + abs(theta[1]) * math.hypot(theta[4], theta[5])
    return 0.5 * m * m + 2.0 * m + 2.0


# kernel: each rotated component carries <= 2 roundings (|delta u| <= 2 eps |u|), moving K
# by <= 2 eps |u||v| per vector, plus the two evaluations' own absolute error, a few eps
# |u||v| (the cross product alone: 2 eps |u||v|): 16 eps |u||v|. Where K or the
# products fall below the normal range each of the ~4 roundings can cost a whole
# subnormal ulp, so FLOOR = 4 x 2^-1074 is added.
TOL_K_ABS = 16.0
FLOOR = 4 * 2.0**-1074


@given(vec, vec, rotation)
@example(np.array([0.3, 0.7]), np.array([-0.3, -0.7]), 1.0)  # exactly opposite: K = 0
@example(np.array([0.0, 1.5]), np.array([0.0, 5.540390989024536e-220]), 1.0)  # |v|^2 underflows
def test_kernel_rotation_invariant(u, v, alpha):
    k0 = model.kernel(u, v)
    k1 = model.kernel(rotate(u, alpha), rotate(v, alpha))
    bound = TOL_K_ABS * EPS * math.hypot(*u) * math.hypot(*v) + FLOOR
    assert abs(k1 - k0) <= bound


@given(vec, vec)
def test_kernel_symmetric_bitwise(u, v):
    # |u0 v1 - u1 v0| and u.v are computed bitwise-symmetrically (fl(a - b) = -fl(b - a)).
    assert model.kernel(u, v) == model.kernel(v, u)


# components either 0 or of magnitude >= 1e-100: products stay normal under 2^+-20
coord_not_tiny = st.one_of(st.just(0.0), st.floats(1e-100, 3.0), st.floats(-3.0, -1e-100))
vec_not_tiny = st.tuples(coord_not_tiny, coord_not_tiny).map(np.array)


@given(vec_not_tiny, vec_not_tiny, st.integers(-20, 20))
def test_kernel_homogeneous_power_of_two_exact(u, v, k):
    # Scaling u by 2^k is exact, scales c = |u x v| and d = u.v exactly and leaves
    # atan2(c, d) and c/|d| unchanged, so K(2^k u, v) = 2^k K(u, v) bitwise as long as
    # the result is a normal number (subnormal results lose the bits that carry it).
    c = 2.0**k
    lhs, rhs = model.kernel(c * u, v), c * model.kernel(u, v)
    if min(abs(lhs), abs(rhs)) >= 1e-290:
        assert lhs == rhs
    else:
        assert abs(lhs - rhs) <= 1e-290


@given(vec, vec, scale)
@example(np.array([0.0, 1.5]), np.array([0.0, 5.540390989024536e-220]), 1.5)  # |v|^2 underflows
@example(np.array([0.0, 8.933758019715961e-161]), np.array([0.0, 8.933758019715961e-161]), 2.0)  # K subnormal
def test_kernel_positively_homogeneous(u, v, c):
    lhs = model.kernel(c * u, v)
    rhs = c * model.kernel(u, v)
    assert abs(lhs - rhs) <= TOL_K_ABS * EPS * c * math.hypot(*u) * math.hypot(*v) + FLOOR


@given(nonzero_vec(), nonzero_vec())
def test_kernel_is_norms_times_J(u, v):
    # K(u, v) = |u||v| J(angle): the float angle from atan2 is off by <= ~3 eps (the
    # cross product's rounding is <= 2 eps |u||v|), |J'| = g <= 0.3, J itself is within
    # 32 eps of 1/2 at most: all within the 16 eps |u||v| absolute check.
    t = math.atan2(abs(u[0] * v[1] - u[1] * v[0]), u @ v)
    nu, nv = math.hypot(*u), math.hypot(*v)
    assert abs(model.kernel(u, v) - nu * nv * model.J(t)) <= TOL_K_ABS * EPS * nu * nv + FLOOR


# Risks: 0.5 (quad - 2 lin + C) with ~12 roundings against partial sums bounded by the
# risk scale; inputs perturbed by rotation/rescaling by 2 eps relative move each term by
# O(eps) of its size: 64 eps x scale.
TOL_RISK = 64.0


@given(thetas(), rotation)
def test_target_risk_rotation_invariant(theta, alpha):
    rot = theta.copy()
    rot[2:4] = rotate(theta[2:4], alpha)
    rot[4:6] = rotate(theta[4:6], alpha)
    assert abs(model.target_risk(rot) - model.target_risk(theta)) <= TOL_RISK * EPS * risk_scale(theta)


@given(thetas(), scale, scale)
def test_risk_rescaling_leaves_predictor_and_risk_unchanged(theta, c1, c2):
    # a_i -> c_i a_i, w_i -> w_i / c_i: a_i relu(w_i.x) is unchanged (relu is positively
    # homogeneous), hence so are both risks.
    scaled = theta.copy()
    scaled[0], scaled[1] = c1 * theta[0], c2 * theta[1]
    scaled[2:4], scaled[4:6] = theta[2:4] / c1, theta[4:6] / c2
    tol = TOL_RISK * EPS * risk_scale(theta)
    assert abs(model.source_risk(scaled) - model.source_risk(theta)) <= tol
    assert abs(model.target_risk(scaled) - model.target_risk(theta)) <= tol


def _swap(theta):
    return np.array([theta[1], theta[0], theta[4], theta[5], theta[2], theta[3]])


@given(thetas(), st.sampled_from(["source", "target"]), st.floats(0.0, 1.0))
def test_swapping_units_is_a_symmetry(theta, task, lam):
    # the risk's sum is re-ordered (not bitwise); the gradient code treats unit i with the
    # same operations in the same order whichever index it has, so it swaps bitwise.
    sw = _swap(theta)
    assert abs(model.objective(sw, task, lam) - model.objective(theta, task, lam)) <= 8 * EPS * risk_scale(theta) * (
        1 + lam
    )
    np.testing.assert_array_equal(model.objective_grad(sw, task, lam), _swap(model.objective_grad(theta, task, lam)))


# J is decreasing: J' = -g <= 0. Each float value carries <= 32 eps relative error
# (test_model_oracle.tol_J), so a reversed pair is allowed only within 64 eps of J;
# where the exact drop exceeds that allowance the float values must be strictly ordered.
J_ALLOW = 64.0


@given(angle_in_0_pi, angle_in_0_pi)
@example(2.071823178129441e-06, 2.0718248980146987e-06)  # float J reversed by 1 ulp (rounding)
@example(np.nextafter(math.pi / 2, 0.0), math.pi / 2)  # the two branches of model._J meet
def test_J_decreasing(t1, t2):
    lo, hi = min(t1, t2), max(t1, t2)
    j_lo, j_hi = model.J(lo), model.J(hi)
    allowance = J_ALLOW * EPS * j_lo
    assert j_lo >= j_hi - allowance
    if float(J_mp(lo) - J_mp(hi)) > allowance:
        assert j_lo > j_hi


@given(angle_in_0_pi)
@example(2.367397386401194e-203)  # float g exceeds t/2 by one ulp here (rounding, see below)
@example(5e-324)
@example(math.pi)
def test_g_between_zero_and_half_t(t):
    # 0 <= g(t) <= t/2 (Appendix 14). For t below ~1e-16, g = t/2 (1 - t/pi) rounds to
    # t/2 and the float g may land one ulp above t/2: allow 2 eps relative.
    val = model.g(t)
    assert 0.0 <= val <= (t / 2) * (1 + 2 * EPS) + 2.0**-1074


# Finite differences. Central differences with step h have truncation error
# h^2 |F'''| / 6 and rounding error <= 2 eps |F| / h. On the parameter boxes below
# |F'''| / 6 <= 10 (1 + |F|) (measured 1.5 (1 + |F|) from h = 1e-3 and 1e-4 runs,
# which are truncation dominated); h = 1e-5 ~ eps^(1/3) balances the two, giving
# 1e-9 (1 + |F|) + 4.4e-11 (1 + |F|): tolerance 1.5e-9 (1 + |F|).
FD_H = 1e-5
FD_TOL = 1.5e-9


def central_difference(theta, task, lam, h=FD_H):
    out = np.empty(6)
    for k in range(6):
        up, dn = theta.copy(), theta.copy()
        up[k] += h
        dn[k] -= h
        out[k] = (model.objective(up, task, lam) - model.objective(dn, task, lam)) / (up[k] - dn[k])
    return out


def _fd_points():
    rng = np.random.default_rng([20_251_129, 7])
    pts = [
        np.array([1.0, 0.5, 1.0, 0.2, -0.3, 0.8]),
        np.array([0.7, 0.7, 0.9, 0.3, 0.9, 0.3 + 1e-3]),  # nearly cloned
        np.array([1.3, -0.6, 0.2, -1.1, -0.2, 1.1 - 1e-3]),  # nearly opposite
        np.array([0.9, 1.1, 1.0, 1e-3, 0.5, -0.4]),  # w1 nearly along the source label e1
    ]
    return [*pts, *polar_thetas(rng, 6, 3.0, (0.3, 3.0))]


@pytest.mark.parametrize("lam", [0.0, 0.05, 0.2, 1.0])
@pytest.mark.parametrize("task", ["source", "target"])
def test_objective_grad_matches_central_differences(task, lam):
    for theta in _fd_points():
        grad = model.objective_grad(theta, task, lam)
        fd = central_difference(theta, task, lam)
        tol = FD_TOL * (1.0 + abs(model.objective(theta, task, lam)))
        assert np.max(np.abs(grad - fd)) <= tol, f"theta={theta.tolist()} grad={grad} fd={fd}"


@given(thetas(), st.sampled_from(["source", "target"]), st.floats(0.0, 1.0))
def test_objective_grad_matches_central_differences_property(theta, task, lam):
    # Norms >= 0.1 let F''' grow like 1/|w|^2 for the angle terms: tolerance x 100.
    grad = model.objective_grad(theta, task, lam)
    fd = central_difference(theta, task, lam)
    assert np.max(np.abs(grad - fd)) <= 100 * FD_TOL * (1.0 + abs(model.objective(theta, task, lam)))


@given(thetas(), st.sampled_from(["source", "target"]), st.floats(0.0, 1.0))
def test_weight_decay_adds_lam_theta(theta, task, lam):
    # F = R + lam/2 |theta|^2, so grad F(lam) - grad F(0) = lam theta (one rounding per entry).
    diff = model.objective_grad(theta, task, lam) - model.objective_grad(theta, task, 0.0)
    scale_ = np.abs(model.objective_grad(theta, task, 0.0)) + lam * np.abs(theta)
    assert np.all(np.abs(diff - lam * theta) <= 4 * EPS * scale_ + 1e-300)
