"""Tests of numerics.multipath.gd: validation, kernels against references, invariants, determinism."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numerics.multipath import gd
from numerics.multipath import sharpness as ns
from numerics.multipath import wcr as nw

EPS = np.finfo(float).eps
PROP = settings(max_examples=40, deadline=None, derandomize=True)


def _layers(a, depths):
    """d = 1 full network with every layer of pathway h equal to a_h."""
    return [[np.array([[float(a[h])]]) for _ in range(L)] for h, L in enumerate(depths)]


def _explicit_hessian(a, depths, sigma):
    """Hessian of (1/2)(sum_h prod_l w_hl - sigma)^2 at w_hl = a_h, written out entry by entry."""
    idx = [(h, l) for h, L in enumerate(depths) for l in range(L)]
    prods = [a[h] ** L for h, L in enumerate(depths)]
    r = sum(prods) - sigma
    n = len(idx)
    Hm = np.zeros((n, n))
    for i, (h, l) in enumerate(idx):
        gi = a[h] ** (depths[h] - 1)
        for j, (k, m) in enumerate(idx):
            gj = a[k] ** (depths[k] - 1)
            Hm[i, j] = gi * gj + (r * a[h] ** (depths[h] - 2) if h == k and l != m else 0.0)
    return Hm


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gd.simulate_svs([3, 0], [1.0], 0.1, [1e-2, 1e-2], 10), "depths"),
        (lambda: gd.simulate_svs(3, [1.0], 0.1, [1e-2], 10), "depths"),
        (lambda: gd.simulate_svs([], [1.0], 0.1, [1e-2], 10), "depths"),
        (lambda: gd.simulate_svs([3, 2.5], [1.0], 0.1, [1e-2, 1e-2], 10), "depths"),
        (lambda: gd.simulate_svs([3, 3], [-1.0], 0.1, [1e-2, 1e-2], 10), "sigma_star"),
        (lambda: gd.simulate_svs([3, 3], [1.0], -0.1, [1e-2, 1e-2], 10), "eta"),
        (lambda: gd.simulate_svs([3, 3], [1.0], "0.1", [1e-2, 1e-2], 10), "eta"),
        (lambda: gd.simulate_svs([3, 3], [1.0], np.ones(5), [1e-2, 1e-2], 10), "eta"),
        (lambda: gd.simulate_svs([3, 3], [1.0], np.r_[np.ones(9), np.nan], [1e-2, 1e-2], 10), "eta"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 0.0], 10), "alphas"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2], 10), "alphas"),
        (lambda: gd.simulate_svs([3, 3], [1.0, 0.5], 0.1, np.ones((2, 3)) * 1e-2, 10), "alphas"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 1e-2], -1), "n_steps"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 1e-2], 1.5), "n_steps"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 1e-2], 10, record_every=0), "record_every"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 1e-2], 10, tol=-1.0), "tol"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, [1e-2, 1e-2], 10, compensated=1), "compensated"),
        (lambda: gd.simulate_svs([3, 3], [1.0], 0.1, None, 10, a0=[[0.5], [np.inf]]), "a0"),
        (lambda: gd.warmup_schedule(1.0, 5, 3, 3, 0.1), "hold"),
        (lambda: gd.warmup_schedule(-1.0, 5, 1, 1, 0.1), "eta"),
        (lambda: gd.warmup_schedule(1.0, 5, 1, 1, 0.0), "eta0"),
        (lambda: gd.mode_sharpness([0.5, -0.5], [3, 3]), "sigmas"),
        (lambda: gd.mode_sharpness([0.5], [3, 3]), "sigmas"),
        (lambda: gd.mode_sharpness([0.5, 0.5], [3, 3], residual=float("nan")), "residual"),
        (lambda: gd.halting_point(2, 0.5), "L"),
        (lambda: gd.halting_point(20, 0.01), "eta"),
        (lambda: gd.halting_point(20, 0.5), "eta"),
        (lambda: gd.simulate_full([], np.eye(2), 0.1, 10), "Ws"),
        (lambda: gd.simulate_full([[np.eye(2)], [np.eye(3)]], np.eye(2), 0.1, 10), "Ws"),
        (lambda: gd.simulate_full([[np.eye(2)]], np.eye(3), 0.1, 10), "M_star"),
        (lambda: gd.simulate_full([[np.eye(2)]], np.eye(2), 0.1, 10, activation="relu"), "activation"),
        (lambda: gd.svs_initialisation([1e-2], [3], np.ones((2, 2)), np.eye(2)), "U"),
        (lambda: gd.svs_initialisation([1e-2], [3], np.eye(2), np.eye(2), frames=[[np.eye(2)]]), "frames"),
        (lambda: gd.gaussian_initialisation(np.random.RandomState(0), 2, [3]), "rng"),
        (lambda: gd.gaussian_initialisation(np.random.default_rng(0), 0, [3]), "d"),
        (lambda: gd.hessian_top([[np.eye(2)]], np.eye(2), h=2.0), "h"),
        (lambda: gd.chain_orbit(1, 3.0), "L"),
        (lambda: gd.chain_orbit(3, -3.0), "gamma"),
    ],
)
def test_bad_parameters_raise_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------------ sharpness
@PROP
@given(
    depths=st.lists(st.integers(1, 8), min_size=1, max_size=4),
    data=st.data(),
    r=st.floats(-0.5, 0.5),
)
@example(depths=[3, 3], data=None, r=0.0)
def test_mode_sharpness_is_top_eigenvalue_of_explicit_hessian(depths, data, r):
    if data is None:
        a = np.array([0.7, 0.2])
    else:
        a = np.array(data.draw(st.lists(st.floats(0.0, 1.3), min_size=len(depths), max_size=len(depths))))
    sigma = float(sum(a[h] ** L for h, L in enumerate(depths)) - r)
    want = np.linalg.eigvalsh(_explicit_hessian(a, depths, sigma))[-1]
    got = gd._mode_sharpness(a, np.array(depths, dtype=np.int64), sum(a[h] ** L for h, L in enumerate(depths)) - sigma)
    scale = 1 + np.abs(np.linalg.eigvalsh(_explicit_hessian(a, depths, sigma))).max()
    assert abs(got - want) <= 1e-12 * scale  # bisection to 4 ulps vs LAPACK's backward-stable eigvalsh


def test_mode_sharpness_matches_fd_hessian_of_the_network():
    a, depths = np.array([0.9, 0.6]), [3, 4]
    sigma = 0.8  # r != 0: the residual term of the Hessian matters
    M_star = np.array([[sigma]])
    fd = np.linalg.eigvalsh(ns.fd_hessian(_layers(a, depths), M_star, 1e-5))[-1]
    r = sum(a[h] ** L for h, L in enumerate(depths)) - sigma
    got = gd._mode_sharpness(a, np.array(depths, dtype=np.int64), r)
    assert abs(got - fd) < 1e-7 * fd  # central differences: O(h^2) = 1e-10, rounding eps/h = 1e-11


@PROP
@given(depths=st.lists(st.integers(2, 9), min_size=1, max_size=4), data=st.data())
def test_mode_sharpness_at_zero_residual_is_eq17(depths, data):
    s = data.draw(st.lists(st.floats(1e-3, 2.0), min_size=len(depths), max_size=len(depths)))
    want = float(ns.hetero_sharpness(s, depths, 30))
    assert abs(gd.mode_sharpness(s, depths) - want) <= 64 * EPS * want  # a^L and a^{L-1} roundings, a few dozen ops


def test_hessian_top_matches_numerics_fd_hessian():
    rng = np.random.default_rng(7)
    Ws = [[rng.normal(0, 0.6, (2, 2)) for _ in range(3)], [rng.normal(0, 0.6, (2, 2)) for _ in range(2)]]
    M = rng.normal(size=(2, 2))
    want = np.linalg.eigvalsh(ns.fd_hessian(Ws, M, 1e-5))[-1]
    assert abs(gd.hessian_top(Ws, M) - want) < 1e-8 * abs(want)  # same FD scheme, two gradient codes (1e-13 apart)


# ------------------------------------------------------------------ the SVS kernel
def _reference(a0, depths, sigma, eta, n):
    a = np.array(a0, dtype=float)
    for _ in range(n):
        r = sum(a[h] ** L for h, L in enumerate(depths)) - sigma
        a = np.array([a[h] - eta * r * a[h] ** (L - 1) for h, L in enumerate(depths)])
    return a


@PROP
@given(depths=st.lists(st.integers(1, 7), min_size=1, max_size=3), g=st.floats(0.1, 1.9), n=st.integers(1, 200))
def test_svs_kernel_matches_python_recursion(depths, g, n):
    a0 = np.linspace(0.9, 0.5, len(depths))
    eta = g / sum(depths)  # the Hessian's top eigenvalue is at most sum_h L_h here: a stable step
    ref = _reference(a0, depths, 1.0, eta, n)
    run = gd.simulate_svs(depths, [1.0], eta, None, n, a0=a0[:, None], compensated=False)
    # integer powers by repeated multiplication (numba) vs C pow (Python): a few ulps per step; below 2/S_1 no growth
    assert np.abs(run.a_final[:, 0] - ref).max() <= 1e-12


def test_compensated_agrees_in_stable_runs():
    plain = gd.simulate_svs([5, 5], [1.0, 0.5], 0.25, [1e-3, 0.9e-3], 20000, compensated=False)
    comp = gd.simulate_svs([5, 5], [1.0, 0.5], 0.25, [1e-3, 0.9e-3], 20000, compensated=True)
    assert np.abs(plain.a_final - comp.a_final).max() <= 1e-13  # eta S_1 = 1.25: contraction, rounding-level difference


def test_unstable_minimum_reached_at_rounding_level():
    """Documents both arithmetics at a minimum that a warm-up makes unstable after convergence.

    H = 4, L = 5, alpha_0 = 1e-2 (the MP-sim.6.warmup setting): plain float64 loses every increment
    once |eta r a^{L-1}| < ulp(a)/2 and stays at the single-path-like minimum with lambda > 2/eta;
    the compensated state keeps them and re-balances. One chain (H = 1, L = 3): the compensated
    residual evaluates to exactly 0 there, so it is the one that stays, while plain rounding
    noise (~3e-16) seeds the instability. Exact GD would escape in both cases, after a number of
    steps set by how closely the first phase converged. A run held at such a point is not
    reported as converged, although its residual is below ``tol``.
    """
    H, L = 4, 5
    eta = 0.5 * (float(nw.gamma_wcr(L, 15)) + 2 * H ** (1 - 2 / L)) / L
    n = 300_000
    sched = gd.warmup_schedule(eta, n, 0, 100_000, 0.5 / L)
    al = 1e-2 * 0.9 ** np.arange(H)
    p = gd.simulate_svs([L] * H, [1.0], sched, al, n, record_every=n, tol=1e-12, compensated=False)
    c = gd.simulate_svs([L] * H, [1.0], sched, al, n, record_every=n, tol=1e-12, compensated=True)
    # frozen at an unstable minimum, and (tol notwithstanding) never called converged: GD cannot hold it
    assert not p.converged and p.steps == n and p.final_sharpness * eta / 2 > 1.1
    assert np.abs(p.residual[-1]).max() < 1e-12
    assert c.converged and c.final_sharpness * eta / 2 <= 1  # re-balanced to the stability boundary
    n = 3000
    sched = np.r_[np.full(2000, 0.5 / 3), np.full(n - 2000, 2.5 / 3)]
    p1 = gd.simulate_svs([3], [1.0], sched, [1e-2], n, record_every=1, compensated=False)
    c1 = gd.simulate_svs([3], [1.0], sched, [1e-2], n, record_every=1, compensated=True)
    assert np.abs(p1.residual[-500:]).max() > 1e-2 and np.abs(c1.residual[-500:]).max() < 1e-100


def test_flip_overshoot_and_divergence_bookkeeping():
    L = 5
    eta = 1.1 * float(nw.eta_wcr(L, 1, 15))
    run = gd.simulate_svs([L], [1.0], eta, None, 50, record_every=1, a0=[[float(nw.two_step(eta, L, 1, 12)[0])]])
    # start at the maximiser c: step 0 gives the worst overshoot (r > 0 from t = 1), step 1 crosses zero
    assert run.first_overshoot[0] == 1 and run.flipped and run.first_flip[0] == 2
    assert run.amin_after_overshoot[0, 0] <= 0
    big = gd.simulate_svs([3], [1.0], 50.0, None, 100, a0=[[1.2]])
    assert big.status == gd.STATUS_DIVERGED and big.steps < 100
    calm = gd.simulate_svs([3], [1.0], 0.1, None, 100, a0=[[0.5]])
    assert not calm.flipped and calm.first_overshoot[0] == -1 and np.isinf(calm.amin_after_overshoot[0, 0])


def test_tol_stops_only_after_the_schedule_settles():
    n = 50_000
    sched = gd.warmup_schedule(2.5 / 3, n, 0, 20_000, 0.3 / 3)
    run = gd.simulate_svs([3, 3], [1.0], sched, [1e-2, 0.9e-2], n, tol=1e-12)
    assert run.steps >= 19_999 and run.converged  # eta settles at step 19999; the single path converged long before
    const = gd.simulate_svs([3, 3], [1.0], 0.3 / 3, [1e-2, 0.9e-2], n, tol=1e-12)
    assert const.converged and const.steps < 20_000


def test_records_and_shapes():
    run = gd.simulate_svs([3, 4], [1.0, 0.5, 0.2], 0.2, [1e-2, 5e-3], 1000, record_every=100)
    assert run.t.tolist() == list(range(0, 1001, 100))
    assert run.sigma.shape == (11, 2, 3) and run.residual.shape == (11, 3) and run.sharpness.shape == (11, 3)
    np.testing.assert_allclose(run.residual, run.sigma.sum(axis=1) - [1.0, 0.5, 0.2], atol=1e-15)
    np.testing.assert_allclose(gd.initial_layers([1e-4, 1e-2], [2, 2]).ravel(), [1e-2, 1e-1], rtol=1e-15)
    assert gd.initial_layers(np.full((2, 3), 1e-3), [3, 3]).shape == (2, 3)


def test_runs_are_deterministic_and_do_not_touch_inputs():
    al = np.array([1e-3, 0.9e-3])
    r1 = gd.simulate_svs([20, 20], [1.0], 0.14, al, 20000)
    r2 = gd.simulate_svs([20, 20], [1.0], 0.14, al, 20000)
    assert np.array_equal(r1.sigma, r2.sigma) and np.array_equal(r1.sharpness, r2.sharpness)
    assert al.tolist() == [1e-3, 0.9e-3]
    rng = np.random.default_rng(3)
    Ws = gd.gaussian_initialisation(rng, 3, [2, 3])
    before = [[W.copy() for W in p] for p in Ws]
    f1 = gd.simulate_full(Ws, np.eye(3), 0.3, 500, activation="tanh")
    f2 = gd.simulate_full(Ws, np.eye(3), 0.3, 500, activation="tanh")
    assert np.array_equal(f1.F, f2.F)
    assert all(np.array_equal(a, b) for p, q in zip(Ws, before) for a, b in zip(p, q))


# ------------------------------------------------------------------ full matrices
def test_linear_gradient_matches_eq34():
    rng = np.random.default_rng(11)
    Ws = [[rng.normal(0, 0.5, (3, 3)) for _ in range(L)] for L in (1, 3, 4)]
    M = rng.normal(size=(3, 3))
    loss, G = gd.loss_and_gradient(Ws, M)
    ref = ns.full_gradient(Ws, M)
    assert abs(loss - ns.loss(Ws, M)) <= 1e-13 * loss
    assert max(float(np.abs(g - r).max()) for p, q in zip(G, ref) for g, r in zip(p, q)) <= 1e-13


def test_tanh_gradient_matches_finite_differences():
    rng = np.random.default_rng(5)
    Ws = [[rng.normal(0, 0.7, (2, 2)) for _ in range(3)], [rng.normal(0, 0.7, (2, 2)) for _ in range(2)]]
    M = rng.normal(size=(2, 2))
    _, G = gd.loss_and_gradient(Ws, M, "tanh")
    h = 1e-6
    for pth, lay, p, q in [(0, 0, 0, 1), (0, 2, 1, 1), (1, 0, 1, 0), (1, 1, 0, 0)]:
        up = [[W.copy() for W in x] for x in Ws]
        dn = [[W.copy() for W in x] for x in Ws]
        up[pth][lay][p, q] += h
        dn[pth][lay][p, q] -= h
        fd = (gd.loss_and_gradient(up, M, "tanh")[0] - gd.loss_and_gradient(dn, M, "tanh")[0]) / (2 * h)
        assert abs(fd - G[pth][lay][p, q]) < 1e-8  # O(h^2) truncation ~1e-12, rounding eps/h ~ 1e-10


def test_full_gd_step_matches_numerics_gd_step():
    rng = np.random.default_rng(2)
    Ws = [[rng.normal(0, 0.5, (2, 2)) for _ in range(L)] for L in (2, 3)]
    M = rng.normal(size=(2, 2))
    run = gd.simulate_full(Ws, M, 0.05, 1)
    ref = ns.gd_step(Ws, M, 0.05)
    assert max(float(np.abs(a - b).max()) for p, q in zip(run.W, ref) for a, b in zip(p, q)) <= 1e-15


@PROP
@given(H=st.integers(1, 3), L=st.integers(2, 5), g=st.floats(0.2, 1.9), seed=st.integers(0, 2**32 - 1))
def test_full_matrices_reproduce_mode_recursion_with_nonsymmetric_frames(H, L, g, seed):
    rng = np.random.default_rng(seed)  # frames only
    d = 2
    U, V = ns.random_orthogonal(rng, d), ns.random_orthogonal(rng, d)
    frames = [[ns.random_orthogonal(rng, d) for _ in range(L - 1)] for _ in range(H)]
    sig = np.array([1.0, 0.6])
    al = 1e-2 * 0.9 ** np.arange(H)
    eta = g / L
    run = gd.simulate_full(
        gd.svs_initialisation(al, [L] * H, U, V, frames), U @ np.diag(sig) @ V.T, eta, 300, record_every=30
    )
    svs = gd.simulate_svs([L] * H, sig, eta, al, 300, record_every=30, compensated=False)
    assert np.abs(run.mode_values(U, V) - svs.sigma).max() <= 1e-11  # eta < 2/S_1: rounding does not grow


def test_svs_initialisation_is_eq11_in_the_target_basis():
    V = ns.random_orthogonal(np.random.default_rng(0), 3)
    Ws = gd.svs_initialisation([1e-3, 1e-6], [3, 2], V, V)
    np.testing.assert_allclose(Ws[0][1], 0.1 * np.eye(3), atol=1e-15)
    np.testing.assert_allclose(Ws[1][0], 1e-3 * np.eye(3), atol=1e-15)


def test_gaussian_initialisation_variance():
    Ws = gd.gaussian_initialisation(np.random.default_rng(1), 50, [3])
    x = np.concatenate([W.ravel() for W in Ws[0]])
    assert abs(x.var() / (0.02 / 100) - 1) < 0.05  # 7500 draws: relative SE of a variance sqrt(2/7500) = 1.6%, 3 SE


# ------------------------------------------------------------------ helpers
def test_warmup_schedule_shape():
    s = gd.warmup_schedule(1.0, 10, 2, 4, 0.2)
    assert s[:2].tolist() == [0.2, 0.2] and s[5] == 1.0 and s[-1] == 1.0
    assert np.all(np.diff(s) >= 0)


@given(L=st.integers(3, 40), u=st.floats(0.0, 1.0))
def test_halting_point_solves_the_boundary(L, u):
    S1, lmin = L, L * 2 ** (2 / L - 1)
    eta = 2 / (lmin + u * (S1 - lmin))
    s = gd.halting_point(L, eta, 1.0, 30)
    with mpmath.workdps(40):
        p = 2 - mpmath.mpf(2) / L
        lam = L * (s**p + (1 - s) ** p)
        assert abs(lam - 2 / mpmath.mpf(eta)) <= mpmath.mpf(10) ** -20 * S1 or s in (0.5, 1.0)  # 30-digit bisection
    assert 0.5 <= s <= 1.0


@pytest.mark.parametrize("L", [2, 3, 5, 10, 20])
def test_chain_orbit_sign_matches_gamma_wcr(L):
    g = float(nw.gamma_wcr(L, 15))
    assert gd.chain_orbit(L, 0.97 * g)["g_g_c"] > 0 > gd.chain_orbit(L, 1.03 * g)["g_g_c"]
    o = gd.chain_orbit(L, 3.0)
    assert abs(o["g_c"] - (o["c"] + 3.0 / L * o["c"] ** (L - 1) * (1 - o["c"] ** L))) < 1e-12


def test_figures_return_figures():
    import matplotlib.pyplot as plt

    from numerics.multipath import figures as F

    run = gd.simulate_svs([3, 3], [1.0], 0.5, [1e-2, 0.9e-2], 3000, record_every=10)
    figs = [
        F.figure1({"x": (0.5, run)}, 3.0, 2.38),
        F.figure2({"x": run}, 1.0, {"x": 0.7}),
        F.figure4({(3, 3): run}, {(3, 3): (0.5, 0.5)}),
        F.figure6({(3, 3.0): gd.chain_orbit(3, 3.0)}, {3: 3.661}),
    ]
    assert all(type(f).__name__ == "Figure" for f in figs)
    for f in figs:
        plt.close(f)
    assert math.isfinite(run.final_sharpness)
