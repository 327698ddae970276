"""Tests of numerics.multipath.sharpness: validation, properties, oracle comparisons."""

import mpmath
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from numerics.intervals import bounds
from numerics.multipath import sharpness as ns
from numerics.multipath.wcr import gamma_wcr

EPS = np.finfo(float).eps
log_sigma = st.floats(-6.0, 6.0).map(lambda e: 10.0**e)  # sigma_* over twelve decades


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ns.mode_sharpness([1, 2], 1), "L"),
        (lambda: ns.mode_sharpness([1, -2], 3), "sigmas"),
        (lambda: ns.mode_sharpness([], 3), "sigmas"),
        (lambda: ns.mode_sharpness("12", 3), "sigmas"),
        (lambda: ns.mode_sharpness([1, 2], 3.5), "L"),
        (lambda: ns.mode_sharpness([1, 2], True), "L"),
        (lambda: ns.mode_sharpness([1, 2], 3, dps=0), "dps"),
        (lambda: ns.hetero_sharpness([1, 2], [3]), "same length"),
        (lambda: ns.hetero_sharpness([1, 2], [3, 1]), "depths"),
        (lambda: ns.lambda_min(0, 3, 1), "H"),
        (lambda: ns.lambda_min(2, 3, 0), "sigma"),
        (lambda: ns.lambda_min(2, 3, float("inf")), "sigma"),
        (lambda: ns.lambda_min(2, 3, "abc"), "sigma"),
        (lambda: ns.lambda_min(2, 3, True), "sigma"),
        (lambda: ns.single_path_sharpness(1, 1), "L"),
        (lambda: ns.reduction_factor(2, 0), "L"),
        (lambda: ns.ceilings(2, 1), "L"),
        (lambda: ns.eta_max(2, 3, -1), "sigma"),
        (lambda: ns.rebalanced_rank([1, 0], 2, 3), "sigmas_star"),
        (lambda: ns.optimal_allocation([3, 2], 1), "depths"),
        (lambda: ns.optimal_allocation([], 1), "depths"),
        (lambda: ns.optimal_allocation([3, 4], -1), "sigma"),
        (lambda: ns.certify_allocation([3, 4], 1, dps=0), "dps"),
        (lambda: ns.share_crossover(4, 4), "L1"),
        (lambda: ns.share_crossover(2, 4), "L1"),
        (lambda: ns.single_path_crossover(5, 3), "L1"),
        (lambda: ns.leaf_sharpness([1, 1], 3), "z"),
        (lambda: ns.leaf_sharpness([0.1, -0.1], 2), "L"),
        (lambda: ns.eos_two_cycle(2), "L"),
        (lambda: ns.eos_two_cycle(3, H=1), "H"),
        (lambda: ns.eos_two_cycle(3, excess=0.0), "excess"),
        (lambda: ns.eos_two_cycle(3, delta0=0.7), "delta0"),
        (lambda: ns.eos_two_cycle(3, steps=10, window=20), "window"),
        (lambda: ns.eos_two_cycle(3, steps=2.5), "steps"),
        (lambda: ns.gradient_flow([0.5, -0.1], 3), "a0"),
        (lambda: ns.gradient_flow([0.5, 0.4], [3, 4, 5]), "L"),
        (lambda: ns.gradient_flow([0.5, 0.4], 3, T=0), "T"),
        (lambda: ns.random_orthogonal(np.random.default_rng(0), 0), "d"),
    ],
)
def test_bad_parameters_raise_naming_them(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------------ closed forms
@given(H=st.integers(1, 8), L=st.integers(2, 30), sig=log_sigma)
@example(H=1, L=2, sig=1.0)
def test_lambda_min_is_the_equal_split(H, L, sig):
    with mpmath.workdps(50):
        eq = ns.mode_sharpness([mpmath.mpf(sig) / H] * H, L, 40)
        lm = ns.lambda_min(H, L, sig, 40)
        assert abs(eq - lm) <= mpmath.mpf(10) ** -37 * lm  # both at 40 digits with guard digits


@given(H=st.integers(1, 8), L=st.integers(2, 30), sig=log_sigma)
def test_reduction_factor_times_single_path(H, L, sig):
    with mpmath.workdps(50):
        lhs = ns.reduction_factor(H, L, 40) * ns.single_path_sharpness(L, sig, 40)
        rhs = ns.lambda_min(H, L, sig, 40)
        assert abs(lhs - rhs) <= mpmath.mpf(10) ** -37 * rhs  # a product of two 40-digit values


def test_precision_is_honoured():
    lo, hi = ns.lambda_min(3, 7, "0.3", 25), ns.lambda_min(3, 7, "0.3", 60)
    with mpmath.workdps(70):
        assert abs(lo - hi) <= mpmath.mpf(10) ** -24 * hi  # 25 significant digits
        assert (
            abs(hi - 7 * mpmath.mpf(3) ** (mpmath.mpf(2) / 7 - 1) * mpmath.mpf("0.3") ** (2 - mpmath.mpf(2) / 7))
            <= mpmath.mpf(10) ** -59 * hi
        )
    assert mpmath.mp.dps == 15  # no global precision change


@given(sig=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=6), L=st.integers(2, 12))
def test_mode_sharpness_matches_float64(sig, L):
    want = L * sum(s ** (2 - 2 / L) for s in sig)
    got = float(ns.mode_sharpness(sig, L, 30))
    assert abs(got - want) <= 64 * EPS * max(1.0, want)  # float64 oracle: a few roundings per term


def test_hetero_reduces_to_homogeneous():
    s = ["0.2", "0.3", "0.5"]
    assert ns.hetero_sharpness(s, [4, 4, 4], 30) == ns.mode_sharpness(s, 4, 30)


def test_ceilings_match_their_parts():
    for H, L in [(2, 2), (4, 4), (8, 20), (3, 11)]:
        c = ns.ceilings(H, L, 15)
        assert c["gamma_max"] == min(c["gamma_balanced"], c["gamma_wcr"])
        assert (c["binding"] == "balanced") == (c["gamma_balanced"] < c["gamma_wcr"])
        with mpmath.workdps(30):
            assert abs(c["gamma_wcr"] - gamma_wcr(L, 25)) < mpmath.mpf(10) ** -18


def test_ceiling_table_shape_and_eta_max():
    t = ns.ceiling_table(range(2, 4), range(2, 5), 10)
    assert [(r["H"], r["L"]) for r in t] == [(2, 2), (2, 3), (2, 4), (3, 2), (3, 3), (3, 4)]
    em = ns.eta_max(2, 3, 1, 15)
    with mpmath.workdps(30):
        assert abs(em - 2 / (3 * mpmath.mpf(2) ** (mpmath.mpf(2) / 3 - 1))) < mpmath.mpf(10) ** -14


def test_rebalanced_rank_counts_modes():
    assert ns.rebalanced_rank([1, 0.99, 0.2], 2, 2) == 0  # L = 2: gamma_max = 2, nothing re-balances
    assert ns.rebalanced_rank([1, 0.99, 0.2], 8, 10) == 2
    assert ns.rebalanced_rank([5], 8, 10) == 1


# ------------------------------------------------------------------ heterogeneous allocation
depth_lists = st.lists(st.integers(3, 12), min_size=1, max_size=5)


@given(ds=depth_lists, sig=st.floats(-4.0, 4.0).map(lambda e: 10.0**e))
@example(ds=[3, 7], sig=1.0)
@example(ds=[3, 3], sig=1e-4)
def test_allocation_satisfies_lagrange(ds, sig):
    al = ns.optimal_allocation(ds, sig, 30)
    with mpmath.workdps(40):
        assert abs(mpmath.fsum(al.sigmas) - mpmath.mpf(sig)) <= mpmath.mpf(10) ** -27 * mpmath.mpf(sig)  # 30 digits
        for s, L in zip(al.sigmas, ds):
            assert abs(2 * (L - 1) * s ** (1 - mpmath.mpf(2) / L) - al.mu) <= mpmath.mpf(10) ** -26 * al.mu
        assert all(s > 0 for s in al.sigmas)


@given(L=st.integers(3, 12), H=st.integers(1, 5), sig=st.floats(-3.0, 3.0).map(lambda e: 10.0**e))
def test_equal_depths_give_equal_split(L, H, sig):
    al = ns.optimal_allocation([L] * H, sig, 30)
    with mpmath.workdps(40):
        assert all(abs(s - mpmath.mpf(sig) / H) <= mpmath.mpf(10) ** -27 * mpmath.mpf(sig) for s in al.sigmas)
        assert abs(al.lam - ns.lambda_min(H, L, sig, 30)) <= mpmath.mpf(10) ** -27 * al.lam


def test_certified_allocation_contains_the_solution():
    for ds in ([3, 7], [4, 5, 6]):
        cert = ns.certify_allocation(ds, "0.7", 25)
        al = ns.optimal_allocation(ds, "0.7", 40)
        lo, hi = bounds(cert["mu"])
        assert lo <= al.mu <= hi and hi - lo < mpmath.mpf(10) ** -24
        for enc, s in zip(cert["sigmas"], al.sigmas):
            lo, hi = bounds(enc)
            assert lo <= s <= hi
        lo, hi = bounds(cert["sum"])
        with mpmath.workdps(40):
            assert lo <= mpmath.mpf("0.7") <= hi


def test_allocation_is_monotone_in_the_target():
    a, b = ns.optimal_allocation([3, 5, 7], 1, 30), ns.optimal_allocation([3, 5, 7], 2, 30)
    assert all(y > x for x, y in zip(a.sigmas, b.sigmas)) and b.mu > a.mu


def test_crossovers():
    for L1, L2 in [(3, 4), (3, 7), (5, 6)]:
        sc = ns.share_crossover(L1, L2, 30)
        al = ns.optimal_allocation([L1, L2], sc, 30)
        assert abs(al.sigmas[0] - al.sigmas[1]) < mpmath.mpf(10) ** -25 * sc
        c = ns.single_path_crossover(L1, L2, 30)
        a, b = ns.single_path_sharpness(L1, c, 30), ns.single_path_sharpness(L2, c, 30)
        assert abs(a - b) < mpmath.mpf(10) ** -25 * a
    assert ns.optimal_allocation([3, 7], 1, 20).eta_star > 0


# ------------------------------------------------------------------ leaves and dynamics
def test_leaf_at_zero_is_the_balanced_minimum():
    m, lam = ns.leaf_sharpness([0, 0, 0], 4, "0.6", 30)
    with mpmath.workdps(40):
        a_star = (mpmath.mpf("0.6") / 3) ** (mpmath.mpf(1) / 4)
        assert abs(m - a_star ** (-2)) < mpmath.mpf(10) ** -28
        assert abs(lam - ns.lambda_min(3, 4, "0.6", 30)) < mpmath.mpf(10) ** -27


@given(L=st.integers(3, 8), z=st.floats(-0.5, 0.5))
def test_leaf_sharpness_is_smallest_on_the_balanced_leaf(L, z):
    _, lam = ns.leaf_sharpness([z, -z], L, 1, 30)
    with mpmath.workdps(40):
        assert lam >= ns.lambda_min(2, L, 1, 30) * (1 - mpmath.mpf(10) ** -25)  # 30 digits


def test_gradient_flow_conserves_the_leaf_coordinate():
    a0 = np.array([0.4, 0.6, 0.9])
    aT = ns.gradient_flow(a0, 4, 1.0, 2.0)
    q0, qT = a0**-2.0, aT**-2.0
    assert np.abs((qT - qT.mean()) - (q0 - q0.mean())).max() < 1e-9  # DOP853 at rtol 1e-12
    assert np.abs(aT - a0).max() > 1e-2


def test_eos_two_cycle_is_deterministic_and_sane():
    a = ns.eos_two_cycle(3, 2, 2e-3, steps=12000, window=100)
    b = ns.eos_two_cycle(3, 2, 2e-3, steps=12000, window=100)
    assert np.array_equal(a["r"], b["r"]) and np.array_equal(a["G"], b["G"])
    assert a["alternates"] and a["c_measured"] > 0 and len(a["r"]) == 102
    assert abs(a["beta_over_r"] + 2 * a["A"]) < 0.02 * a["A"]  # the two-cycle relation beta = -2A r + O(r^2)


# ------------------------------------------------------------------ full matrices
def _random_layers(seed, d, depths):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal((d, d)) * 0.6 for _ in range(L)] for L in depths], rng.standard_normal((d, d))


@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 3), depths=st.lists(st.integers(1, 3), min_size=1, max_size=2))
def test_gradient_matches_finite_differences(seed, d, depths):
    Ws, Mstar = _random_layers(seed, d, depths)
    G = ns.flatten(ns.full_gradient(Ws, Mstar))
    th, h = ns.flatten(Ws), 1e-6
    fd = np.array(
        [
            (ns.loss(ns.unflatten(th + h * e, Ws), Mstar) - ns.loss(ns.unflatten(th - h * e, Ws), Mstar)) / (2 * h)
            for e in np.eye(th.size)
        ]
    )
    # central differences: truncation O(h^2) ~ 1e-12 and rounding eps |loss| / h ~ 1e-10 x scale
    assert np.abs(fd - G).max() <= 1e-6 * max(1.0, np.abs(G).max(), ns.loss(Ws, Mstar))


@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 3), depths=st.lists(st.integers(1, 3), min_size=1, max_size=2))
def test_jacobian_matches_finite_differences(seed, d, depths):
    Ws, _ = _random_layers(seed, d, depths)
    J = ns.full_jacobian(Ws)
    th, h = ns.flatten(Ws), 1e-6
    fd = np.stack(
        [
            (ns.network(ns.unflatten(th + h * e, Ws)) - ns.network(ns.unflatten(th - h * e, Ws))).ravel() / (2 * h)
            for e in np.eye(th.size)
        ],
        axis=1,
    )
    assert np.abs(fd - J).max() <= 1e-7 * max(1.0, np.abs(J).max())  # O(h^2) truncation, eps/h rounding


def test_fd_hessian_is_gauss_newton_at_a_global_minimum():
    rng = np.random.default_rng(5)
    U, V = ns.random_orthogonal(rng, 2), ns.random_orthogonal(rng, 2)
    frames = [[V, ns.random_orthogonal(rng, 2), ns.random_orthogonal(rng, 2), U] for _ in range(2)]
    a = rng.uniform(0.5, 1.2, size=(2, 2))
    Ws = ns.svs_layers(frames, [[a[h]] * 3 for h in range(2)])
    Mstar = ns.network(Ws)
    J = ns.full_jacobian(Ws)
    Hfd = ns.fd_hessian(Ws, Mstar, 1e-5)
    assert np.abs(Hfd - J.T @ J).max() <= 1e-7 * np.abs(J.T @ J).max()  # O(h^2) ~ 1e-10 plus eps/h ~ 1e-11


def test_random_orthogonal_is_orthogonal():
    Q = ns.random_orthogonal(np.random.default_rng(1), 5)
    assert np.abs(Q.T @ Q - np.eye(5)).max() < 32 * EPS  # Householder QR: O(d eps)


def test_gd_step_decreases_the_loss_for_a_small_step():
    Ws, Mstar = _random_layers(3, 3, [2, 3])
    assert ns.loss(ns.gd_step(Ws, Mstar, 1e-4), Mstar) < ns.loss(Ws, Mstar)
