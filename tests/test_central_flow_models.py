"""numerics.central_flow.models: float64 gradients and Hessians vs differences and SymPy; input validation.

Finite differences use the five-point stencil (f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / (12 h),
which is exact for polynomials of degree <= 4. The three losses are polynomials of degree
<= 4 along any line (the ReLU loss inside one activation region), and their gradients of
degree <= 3, so the stencil error is rounding only: with each evaluation accurate to about
16 eps |f| (short sums of products) and stencil weights summing to 18/12, the error is
below 32 eps max|f| / h; the tolerance 64 eps max|f| / h doubles it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.central_flow import laws
from derivations.central_flow import matrix as dm
from derivations.central_flow import relu as dr
from derivations.central_flow import scalar as ds
from numerics.central_flow import models

EPS = np.finfo(float).eps


def _stencil(f, x, direction, h):
    """Five-point derivative of f at x along direction, and max |f| over the stencil."""
    vals = [f(x + k * h * direction) for k in (-2, -1, 1, 2)]
    deriv = (vals[0] - 8 * vals[1] + 8 * vals[2] - vals[3]) / (12 * h)
    return deriv, max(np.max(np.abs(v)) for v in vals)


def _check_grad_hess(loss, grad, hess, theta, h, gates=None):
    g, H = grad(theta), hess(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = 1.0
        if gates is not None:  # the stencil must stay inside one activation region
            assert all(np.array_equal(gates(theta + k * h * e), gates(theta)) for k in (-2, -1, 1, 2))
        d, fmax = _stencil(loss, theta, e, h)
        assert abs(d - g[i]) <= 64 * EPS * fmax / h
        dg, gmax = _stencil(grad, theta, e, h)
        assert np.all(np.abs(dg - H[:, i]) <= 64 * EPS * gmax / h)


@pytest.mark.parametrize("seed", range(5))
def test_scalar_against_stencil(seed):
    rng = np.random.default_rng(seed)
    theta, y = rng.normal(size=2) * 2, float(rng.normal())
    _check_grad_hess(
        lambda t: models.scalar_loss(t, y),
        lambda t: models.scalar_grad(t, y),
        lambda t: models.scalar_hessian(t, y),
        theta,
        h=0.1,
    )


@given(n=st.integers(1, 4), m=st.integers(1, 4), r=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_mf_against_stencil(n, m, r, seed):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(n, m))
    theta = rng.normal(size=(n + m) * r)
    _check_grad_hess(
        lambda t: models.mf_loss(t, Y, r),
        lambda t: models.mf_grad(t, Y, r),
        lambda t: models.mf_hessian(t, Y, r),
        theta,
        h=0.05,
    )
    H = models.mf_hessian(theta, Y, r)
    assert np.array_equal(H, H.T)


@given(
    n=st.integers(1, 3), d=st.integers(1, 4), r=st.integers(1, 3), N=st.integers(1, 6), seed=st.integers(0, 2**32 - 1)
)
def test_relu_against_stencil(n, d, r, N, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(N, d)), rng.normal(size=(N, n))
    theta = rng.normal(size=(n + d) * r)
    _, V = models.mf_unpack(theta, n, d, r)
    margin = np.min(np.abs(X @ V))
    # step small enough that theta +- 2h e_i cannot cross a boundary: |dz| <= 2h max|x_ik|
    h = min(0.05, 0.2 * margin / max(np.max(np.abs(X)), 1e-300))
    if h < 1e-6:  # a pre-activation too close to 0 for a clean stencil; rare, and not this test's concern
        return
    _check_grad_hess(
        lambda t: models.relu_loss(t, X, Y, r),
        lambda t: models.relu_grad(t, X, Y, r),
        lambda t: models.relu_hessian(t, X, Y, r),
        theta,
        h=h,
        gates=lambda t: models.relu_gates(t, X, Y, r),
    )
    H = models.relu_hessian(theta, X, Y, r)
    assert np.array_equal(H, H.T)


def _close_to_sympy(ours, ref_exact):
    """Float64 array vs exact SymPy values: |diff| <= 32 eps (1 + |ref|) entrywise (short sums of O(1) products)."""
    ref = np.array(ref_exact, dtype=float).reshape(ours.shape)
    assert np.all(np.abs(ours - ref) <= 32 * EPS * (1 + np.abs(ref)) * max(1.0, np.max(np.abs(ref))))


def _rat(rng, shape):
    return [sp.Rational(int(k), 8) for k in rng.integers(-20, 21, size=int(np.prod(shape)))]


@pytest.mark.parametrize("seed", range(3))
def test_scalar_against_sympy(seed):
    rng = np.random.default_rng(seed)
    uu, vv, yy = _rat(rng, (3,))
    sub = {ds.u: uu, ds.v: vv, ds.y: yy}
    theta = np.array([float(uu), float(vv)])
    _close_to_sympy(models.scalar_hessian(theta, float(yy)), ds.hessian().subs(sub))
    _close_to_sympy(models.scalar_grad(theta, float(yy)), laws.gradient(ds.loss(), ds.THETA).subs(sub).T)
    # two roundings in u v - y, one in the square, one in the halving; 8 eps covers them
    assert models.scalar_loss(theta, float(yy)) == pytest.approx(float(ds.loss().subs(sub)), rel=8 * EPS, abs=8 * EPS)


@pytest.mark.parametrize("shape", [(2, 3, 2), (1, 2, 3), (3, 1, 1)])
def test_mf_against_sympy(shape):
    n, m, r = shape
    rng = np.random.default_rng(sum(shape))
    U, V, Y = dm.mf_symbols(n, m, r)
    theta_syms = list(laws.vec(U, V))
    vals = _rat(rng, (len(theta_syms),))
    yvals = _rat(rng, (n * m,))
    sub = {**dict(zip(theta_syms, vals)), **dict(zip(Y, yvals))}
    L = dm.loss(U, V, Y)
    theta = np.array([float(x) for x in vals])
    Yn = np.array([float(x) for x in yvals]).reshape(n, m)
    _close_to_sympy(models.mf_hessian(theta, Yn, r), laws.hessian(L, theta_syms).subs(sub))
    _close_to_sympy(models.mf_grad(theta, Yn, r), laws.gradient(L, theta_syms).subs(sub).T)


@pytest.mark.parametrize("shape", [(2, 3, 2, 4), (1, 2, 3, 3)])
def test_relu_against_sympy(shape):
    n, d, r, N = shape
    rng = np.random.default_rng(sum(shape))
    U, V, X, Y = dr.relu_symbols(n, d, r, N)
    theta_syms = list(laws.vec(U, V))
    vals, xvals, yvals = _rat(rng, (len(theta_syms),)), _rat(rng, (N * d,)), _rat(rng, (N * n,))
    Vex = sp.Matrix(d, r, vals[n * r :])
    Xex = sp.Matrix(N, d, xvals)
    if any(z == 0 for z in Xex * Vex):
        pytest.fail("pick another seed: the rational point lies on a boundary")
    gates = dr.gates_at(Vex, Xex)
    sub = {**dict(zip(theta_syms, vals)), **dict(zip(X, xvals)), **dict(zip(Y, yvals))}
    L = dr.region_loss(U, V, X, Y, gates)
    theta = np.array([float(x) for x in vals])
    Xn = np.array([float(x) for x in xvals]).reshape(N, d)
    Yn = np.array([float(x) for x in yvals]).reshape(N, n)
    _close_to_sympy(models.relu_hessian(theta, Xn, Yn, r), laws.hessian(L, theta_syms).subs(sub))
    _close_to_sympy(models.relu_grad(theta, Xn, Yn, r), laws.gradient(L, theta_syms).subs(sub).T)
    # a sum over N <= 4 samples of short dot products: 32 eps relative covers the roundings
    assert models.relu_loss(theta, Xn, Yn, r) == pytest.approx(float(L.subs(sub)), rel=32 * EPS)


def test_pack_unpack_roundtrip():
    rng = np.random.default_rng(0)
    U, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    U2, V2 = models.mf_unpack(models.mf_pack(U, V), 3, 4, 2)
    assert np.array_equal(U, U2) and np.array_equal(V, V2)


# --- input validation ----------------------------------------------------------------------------

Y23 = np.zeros((2, 3))
TH = np.ones((2 + 3) * 2)


@pytest.mark.parametrize("fn", [models.scalar_loss, models.scalar_grad, models.scalar_hessian])
@pytest.mark.parametrize(
    "theta, msg",
    [
        (np.ones(3), r"theta must have shape \(2,\)"),
        (np.ones((2, 1)), r"theta must be a 1-D array"),
        (np.array([1.0, math.nan]), r"theta must contain only finite numbers"),
        (np.array([1.0, math.inf]), r"theta must contain only finite numbers"),
        ("ab", r"theta must be a 1-D array of finite real numbers"),
        (np.array([True, False]), r"theta must be a 1-D array of finite real numbers"),
    ],
)
def test_scalar_bad_theta(fn, theta, msg):
    with pytest.raises(ValueError, match=msg):
        fn(theta, 1.0)


@pytest.mark.parametrize("y", [math.nan, math.inf, "1", None, True, [1.0]])
def test_scalar_bad_target(y):
    with pytest.raises(ValueError, match=r"y must be a finite real number"):
        models.scalar_loss(np.ones(2), y)


@pytest.mark.parametrize("fn", [models.mf_loss, models.mf_grad, models.mf_hessian])
@pytest.mark.parametrize(
    "theta, Y, r, msg",
    [
        (np.ones(9), Y23, 2, r"theta must have length \(n \+ m\) r = 10; got 9"),
        (TH, Y23, 0, r"r \(the inner dimension\) must be an integer >= 1"),
        (TH, Y23, 2.0, r"r \(the inner dimension\) must be an integer >= 1"),
        (TH, Y23, True, r"r \(the inner dimension\) must be an integer >= 1"),
        (TH, np.zeros(3), 2, r"Y must be a 2-D array"),
        (TH, np.full((2, 3), math.nan), 2, r"Y must contain only finite numbers"),
        (np.where(np.arange(10) == 3, math.nan, 1.0), Y23, 2, r"theta must contain only finite numbers"),
        ([[1, 2], [3]], Y23, 2, r"theta must be a 1-D array of finite real numbers"),
    ],
)
def test_mf_bad_inputs(fn, theta, Y, r, msg):
    with pytest.raises(ValueError, match=msg):
        fn(theta, Y, r)


def test_mf_pack_mismatch():
    with pytest.raises(ValueError, match=r"U and V must have the same number of columns"):
        models.mf_pack(np.ones((2, 2)), np.ones((3, 1)))


@pytest.mark.parametrize("n, m", [(0, 2), (2, -1), (1.5, 2)])
def test_mf_unpack_bad_dims(n, m):
    with pytest.raises(ValueError, match=r"(n|m) must be an integer >= 1"):
        models.mf_unpack(np.ones(4), n, m, 1)


X42 = np.array([[1.0, 0.5], [-0.3, 1.0], [0.2, -1.0], [1.0, 1.0]])
Y41 = np.zeros((4, 1))
TH_RELU = np.array([1.0, -0.5, 0.7, 0.3, -0.2, 0.9])  # n = 1, d = 2, r = 2


@pytest.mark.parametrize("fn", [models.relu_loss, models.relu_grad, models.relu_hessian, models.relu_gates])
@pytest.mark.parametrize(
    "theta, X, Y, r, msg",
    [
        (TH_RELU[:5], X42, Y41, 2, r"theta must have length \(n \+ m\) r = 6; got 5"),
        (TH_RELU, X42[:3], Y41, 2, r"X and Y must have the same number of rows"),
        (TH_RELU, X42.ravel(), Y41, 2, r"X must be a 2-D array"),
        (TH_RELU, np.zeros((0, 2)), np.zeros((0, 1)), 2, r"X must hold at least one sample"),
        (TH_RELU, np.where(X42 > 0.9, math.inf, X42), Y41, 2, r"X must contain only finite numbers"),
        (TH_RELU, X42, Y41, -1, r"r \(the inner dimension\) must be an integer >= 1"),
    ],
)
def test_relu_bad_inputs(fn, theta, X, Y, r, msg):
    with pytest.raises(ValueError, match=msg):
        fn(theta, X, Y, r)


def test_relu_hessian_on_boundary():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    theta = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.5])  # V = [[0, 1], [1, 0.5]]: x_1^T v_1 = 0
    with pytest.raises(ValueError, match=r"theta lies on an activation boundary"):
        models.relu_hessian(theta, X, np.zeros((2, 1)), 2)
    assert np.all(np.isfinite(models.relu_grad(theta, X, np.zeros((2, 1)), 2)))
