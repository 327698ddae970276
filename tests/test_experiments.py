"""Library tests of :mod:`numerics.rare_gates.experiments` and :mod:`numerics.rare_gates.figures`.

D0 draws are checked against an independent membership count (``initialization._d0_chunk``)
and against the laws derived in :mod:`derivations.rare_gates.initialization`; source chains
against single warm runs (bit for bit); the statistics against known values, SciPy and
properties (hypothesis, bounded to their domains). Experiment functions run at tiny sizes
for shapes, keying and determinism. Statistical checks use fixed seeds and state their
false-alarm rates.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import isotonic_regression

from numerics.rare_gates import experiments as E
from numerics.rare_gates import figures as F
from numerics.rare_gates.initialization import _d0_chunk
from numerics.rare_gates.simulate import angles, simulate_gd, simulate_sgd

P_D0 = (1 - 1.75 * math.exp(-0.75)) / 16  # derivations.rare_gates.initialization.p_d0(), either labelling
ALPHA = 1e-3  # false-alarm rate of each distributional test below (fixed seeds, never tuned)


# --- D0 ----------------------------------------------------------------------------------------------


def test_in_d0_matches_the_independent_membership_count():
    """Same Gaussian vectors through in_d0 and through initialization._d0_chunk (a separate implementation)."""
    n = 200_000
    ref, _ = _d0_chunk(np.random.Generator(np.random.Philox(key=np.array([5, 0], dtype=np.uint64))), n)
    rng = np.random.Generator(np.random.Philox(key=np.array([5, 0], dtype=np.uint64)))
    a = rng.standard_normal((n, 2))
    w = rng.standard_normal((n, 2, 2))
    theta = np.column_stack([a[:, 0], a[:, 1], w[:, 0, 0], w[:, 0, 1], w[:, 1, 0], w[:, 1, 1]])
    assert int(E.in_d0(theta).sum()) == ref


def test_in_d0_frequency_matches_p_d0():
    """Fraction of N(0, I_6) vectors in D0 within z = 3.29 (two-sided 1e-3) standard errors of P(D0)."""
    n = 400_000
    x = np.random.Generator(np.random.Philox(key=np.array([6, 0], dtype=np.uint64))).standard_normal((n, 6))
    k = int(E.in_d0(x).sum())
    assert abs(k / n - P_D0) <= 3.29 * math.sqrt(P_D0 * (1 - P_D0) / n)


@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=6, max_size=6))
@example([0.3, 0.3, 0.5, 0.5, 0.5, -0.5])
def test_in_d0_is_symmetric_in_the_units(v):
    th = np.array(v)
    swapped = th[[1, 0, 4, 5, 2, 3]]
    assert E.in_d0(th)[0] == E.in_d0(swapped)[0]


@pytest.mark.parametrize(
    "theta",
    [
        [-0.3, 0.3, 0.5, 0.5, 0.5, -0.5],  # a_1 < 0
        [0.3, 0.3, 0.5, 0.5, 0.5, 0.1],  # same side of e1
        [0.3, 0.3, -0.5, 0.01, -0.5, -0.01],  # opposite sides of e1, but across -e1
        [1.0, 1.0, 0.5, 0.5, 0.5, -0.5],
    ],
)  # omega_1 + omega_2 >= 3/4
def test_in_d0_rejects(theta):
    assert not E.in_d0(np.array(theta))[0]


@pytest.fixture(scope="module")
def draws():
    return E.d0_initialisations(1500, seed=77)


def test_d0_draws_are_in_d0_and_keyed(draws):
    assert np.all(E.in_d0(draws))
    assert np.array_equal(E.d0_initialisations(10, seed=77), draws[:10])
    assert not np.array_equal(E.d0_initialisations(10, seed=78), draws[:10])


def test_d0_draws_have_the_derived_laws(draws):
    """On D0: omega_1 + omega_2 has density prop. to x e^{-x} on (0, 3/4) and the angle CDF is (x/pi)^2.

    Both laws from derivations.rare_gates.initialization (omega_sum_subdensity; uniform polar
    angles on opposite sides of e1). KS tests at ALPHA each.
    """
    s = draws[:, 0] * np.hypot(draws[:, 2], draws[:, 3]) + draws[:, 1] * np.hypot(draws[:, 4], draws[:, 5])
    norm = 1 - 1.75 * math.exp(-0.75)  # int_0^{3/4} x e^{-x} dx

    def cdf_s(x):
        return (1 - (1 + x) * np.exp(-x)) / norm

    assert stats.kstest(s, cdf_s).pvalue > ALPHA
    assert stats.kstest(angles(draws), lambda x: (np.asarray(x) / math.pi) ** 2).pvalue > ALPHA


@pytest.mark.parametrize("kw, name", [({"n": 0}, "n"), ({"n": 2, "seed": -1}, "seed"), ({"n": 1.5}, "n")])
def test_d0_initialisations_errors(kw, name):
    with pytest.raises(ValueError, match=name):
        E.d0_initialisations(**kw)


# --- chains and small experiments --------------------------------------------------------------------


def test_sgd_source_chain_equals_warm_runs():
    init = E.d0_initialisations(5, seed=3)
    chain = E.sgd_source_chain(init, (0, 0.3, 0.5), b=4, eta=0.01, seed=11)
    assert np.array_equal(chain[0], init)
    first = simulate_sgd(
        init, b=4, eta=0.01, horizon=0.01, streams=5, seed=E.derive_seed(11, "source", 1), source_time=0.3
    ).checkpoint
    assert np.array_equal(chain[1], first)
    second = simulate_sgd(
        first, b=4, eta=0.01, horizon=0.01, streams=5, seed=E.derive_seed(11, "source", 2), source_time=0.2
    ).checkpoint
    assert np.array_equal(chain[2], second)


@pytest.mark.parametrize("times", [(1, 2), (0, 2, 1), (), (0, 0)])
def test_chain_times_are_validated(times):
    with pytest.raises(ValueError, match="times"):
        E.sgd_source_chain(np.zeros((1, 6)), times, b=1, eta=0.01, seed=0)


@pytest.fixture(scope="module")
def tiny_table1():
    return E.identical_checkpoints(3, (0, 0.5, 1.0), eta=0.01, horizon=0.5, seed=5, init_seed=9)


def test_identical_checkpoints_shapes_and_pairing(tiny_table1):
    t = tiny_table1
    assert t["init"].shape == (3, 6) and t["times"].tolist() == [0.0, 0.5, 1.0]
    for src in ("sgd", "gd"):
        assert t[src]["checkpoint"].shape == (3, 3, 6) and t[src]["sgd_recovery"].shape == (3, 3)
        assert np.array_equal(t[src]["checkpoint"][0], t["init"])
    for key in ("sgd_recovery", "sgd_first", "sgd_disagreements", "gd_recovery"):  # T = 0: one column, both sources
        assert np.array_equal(t["sgd"][key][0], t["gd"][key][0], equal_nan=True)


def test_gd_chain_equals_one_gd_run(tiny_table1):
    one = simulate_gd(tiny_table1["init"], eta=0.01, horizon=0.01, source_time=1.0).checkpoint
    assert np.array_equal(tiny_table1["gd"]["checkpoint"][-1], one)


def test_identical_checkpoints_is_deterministic(tiny_table1):
    again = E.identical_checkpoints(3, (0, 0.5, 1.0), eta=0.01, horizon=0.5, seed=5, init_seed=9)
    for src in ("sgd", "gd"):
        for key, val in tiny_table1[src].items():
            assert np.array_equal(val, again[src][key], equal_nan=True), (src, key)


def test_gd_offsets_shape_and_value(tiny_table1):
    off = E.gd_offsets(tiny_table1)
    assert off.shape == (2, 2, 3)
    i = (0, 1, 2)
    expect = tiny_table1["sgd"]["gd_recovery"][2, 2] - math.log(1 / tiny_table1["sgd"]["angle"][2, 2]) / E.A_RATE
    assert off[i] == expect or (math.isnan(off[i]) and math.isnan(expect))


def test_gd_step_halving_is_gd_in_both_phases():
    h = E.gd_step_halving(2, T=0.5, etas=(0.02, 0.01), horizon=0.2, check_every=1)
    assert h["hit"].shape == (2, 2)
    one = simulate_gd(E.d0_initialisations(2), eta=0.01, horizon=0.2, check_every=1, source_time=0.5)
    assert np.array_equal(h["hit"][1], one.recovery_time, equal_nan=True)


def test_long_horizons_and_paths_share_streams():
    lh = E.long_horizons(6, settings=((8, 1e-2),), horizon=3.0, seed=4)
    ap = E.angle_paths(6, settings=((8, 1e-2),), horizon=3.0, seed=4)
    assert np.array_equal(lh[0]["recovery"], ap[0]["recovery"], equal_nan=True)
    assert np.array_equal(lh[0]["first"], ap[0]["first"], equal_nan=True)
    assert ap[0]["trace_angle"].shape == (6, 31) and ap[0]["trace_angle"][0, 0] == pytest.approx(1e-2, rel=1e-12)
    assert E.table2_seed(16, 1e-5) != E.table2_seed(16, 1e-4) != E.table2_seed(64, 1e-4)


def test_extended_rerun_selection_and_agreement():
    out = E.extended_rerun(3, horizon=0.5, settings=((64, 1e-2),), streams=8, seed=2)[0]
    assert out["ids"].size <= 3 and np.all(np.diff(out["ids"]) > 0)
    assert np.array_equal(out["f64_first"], out["ext_first"], equal_nan=True)
    assert np.array_equal(out["f64_recovery"], out["ext_recovery"], equal_nan=True)


def test_gamma_grid_cells_share_streams():
    cells = E.gamma_grid(3, delta0s=(1e-2,), bs=(1, 4), etas=(0.01,), horizon=0.3, seed=1)
    assert [(c["b"], c["gamma"]) for c in cells] == [(1, 1.0), (4, 4.0)]
    assert all(c["recovery"].size == 3 for c in cells)


def test_small_controls_and_design_shapes():
    wd = E.weight_decay_controls(2, horizon=0.5)
    assert [w["lam"] for w in wd] == [0.0, 0.01, 0.05]
    nz = E.parameter_noise(2, horizon=0.5)
    assert [(z["mode"], z["s"]) for z in nz] == [
        ("none", 0.0),
        ("independent", 1e-7),
        ("independent", 1e-6),
        ("independent", 1e-5),
        ("shared", 1e-7),
        ("shared", 1e-6),
        ("shared", 1e-5),
    ]
    js = E.joint_sweep(2, etas=(0.01,), times=(0, 0.5), horizon=0.2)
    assert js["recovered"].shape == (1, 2, 2) and js["angle"].shape == (1, 2, 2)


def test_trajectory_uses_the_last_checkpoint(tiny_table1):
    tr = E.trajectory(tiny_table1, index=1, sgd_streams=2, horizon=0.5)
    assert tr["checkpoint_angle"] == tiny_table1["sgd"]["angle"][-1, 1]
    assert tr["sgd_angle"].shape == (2, 6) and tr["gd_angle"].shape == (6,)
    assert tr["gd_angle"][0] == pytest.approx(tr["checkpoint_angle"], rel=1e-12)


# --- statistics ----------------------------------------------------------------------------------------


def test_sizes_and_seeds():
    assert E.sizes("full").table1_inits >= 64 and E.sizes("quick").joint_inits == 0
    assert len(set(E.SEEDS.values())) == len(E.SEEDS)
    assert E.derive_seed(1, "a", 2) == E.derive_seed(1, "a", 2) != E.derive_seed(1, "a", 3)


@given(st.integers(0, 80), st.integers(1, 80), st.integers(0, 80), st.integers(1, 80))
@example(0, 7, 7, 7)  # statsmodels' lower bound was -1.0000000000000002 here (found by the dev profile)
def test_newcombe_is_antisymmetric_and_contains_the_estimate(k1, n1, k2, n2):
    k1, k2 = min(k1, n1), min(k2, n2)
    lo, hi = E.newcombe_difference(k1, n1, k2, n2)
    rlo, rhi = E.newcombe_difference(k2, n2, k1, n1)
    assert lo == pytest.approx(-rhi, abs=1e-12) and hi == pytest.approx(-rlo, abs=1e-12)
    assert lo <= k1 / n1 - k2 / n2 <= hi and -1 <= lo and hi <= 1


def test_newcombe_known_values():
    """Newcombe (1998), Table II, examples (a)-(b) of method 10."""
    assert [round(v, 4) for v in E.newcombe_difference(56, 70, 48, 80)] == [0.0524, 0.3339]
    assert [round(v, 4) for v in E.newcombe_difference(9, 10, 3, 10)] == [0.1705, 0.8090]


def test_z_bonferroni():
    assert E.z_bonferroni(1) == pytest.approx(1.959963984540054, abs=1e-12)
    assert E.z_bonferroni(20) == pytest.approx(stats.norm.isf(0.05 / 40), abs=1e-12)
    with pytest.raises(ValueError, match="m"):
        E.z_bonferroni(0)


@given(st.floats(1e-4, 1e3), st.floats(0.05, 3.0))
@example(2.0, 2.0)
def test_kappa_eff_inverts_the_poisson_form(gamma, kappa):
    """Round trip where p is well conditioned: exponent <= 10, so 1 - p >= 4.5e-5 and log(1 - p) loses at
    most ~1e-16/4.5e-5 relative (far from 1 the inversion is ill-conditioned, and the audit never goes there)."""
    exponent = kappa * gamma / (math.pi * E.LAM)
    p = -math.expm1(-exponent)
    if 0 < p < 1 and exponent <= 10:
        assert E.kappa_eff(p, gamma) == pytest.approx(kappa, rel=1e-9)


def test_fisher_p_matches_scipy():
    assert E.fisher_p(3, 10, 8, 12) == pytest.approx(stats.fisher_exact([[3, 7], [8, 4]])[1], rel=1e-12)


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 30)), min_size=1, max_size=12))
def test_isotonic_matches_scipy(cells):
    k = [min(a, b) for a, b in cells]
    n = [b for _, b in cells]
    ours = E.isotonic_increasing(k, n)
    ref = isotonic_regression(np.array(k) / np.array(n), weights=np.array(n, dtype=float)).x
    assert np.allclose(ours, ref, atol=1e-12)
    assert np.all(np.diff(ours) >= -1e-15)


def test_binomial_deviance_zero_at_the_saturated_fit():
    k, n = np.array([0, 3, 10]), np.array([10, 10, 10])
    assert E.binomial_deviance(k, n, k / n) == 0.0
    assert E.binomial_deviance(k, n, np.full(3, 13 / 30)) > 0.0


def test_monotone_in_gamma_test_separates_monotone_from_reversed():
    g = np.array([0.01, 0.1, 1.0, 10.0])
    n = np.full(4, 64)
    ok = E.monotone_in_gamma_test(g, [4, 20, 50, 64], n, reps=400)
    bad = E.monotone_in_gamma_test(g, [64, 50, 20, 4], n, reps=400)
    assert ok["deviance"] == 0.0 and ok["p_value"] == 1.0
    assert bad["p_value"] < 0.01
    tied = E.monotone_in_gamma_test(np.array([1.0, 1.0]), [10, 30], np.array([64, 64]), reps=50)
    assert tied["n"].tolist() == [128.0]  # equal Gamma: one cell


def test_cluster_bootstrap_is_reproducible():
    v = np.arange(50.0)[:, None]
    assert E.cluster_bootstrap(v, np.mean, reps=100) == E.cluster_bootstrap(v, np.mean, reps=100)


def test_half_time_and_helpers():
    assert math.isnan(E.half_time([0, 25, 50], [1.0, 0.9, 0.7]))  # never reaches one half
    assert E.half_time([0, 25, 50], [1.0, 0.5, 0.2]) == 25.0
    assert math.isnan(E.floor_time(np.arange(2.0), np.array([1.0, 1.0])))
    with pytest.raises(ValueError, match="two"):
        E.log_slope([0.0, 1.0], [1.0, np.nan])
    assert float(E.poisson_reference(0.0)) == 0.0


# --- figures -------------------------------------------------------------------------------------------


def test_figures_build(tiny_table1):
    cells = E.gamma_grid(2, delta0s=(1e-2,), bs=E.FIG3A_B, etas=E.FIG3A_ETA, horizon=0.2, seed=1)
    lh = E.long_horizons(2, settings=((8, 1e-2),), horizon=1.0)
    wd = E.weight_decay_controls(2, horizon=0.3)
    nz = E.parameter_noise(2, horizon=0.3)
    js = E.joint_sweep(2, etas=(0.01, 0.005), times=(0, 0.5), horizon=0.2)
    tr = E.trajectory(tiny_table1, sgd_streams=2, horizon=0.5)
    figs = [
        F.figure1(tr),
        F.figure2(tiny_table1, 3.9),
        F.figure3a(cells, tiny_table1, [(0.01, 0.08, "x")]),
        F.recovery_curve_figure(lh, horizon=1.0, paper={(8, 1e-2): [0.1, 0.2, 0.3]}),
        F.figure4(js, (0.25,)),
        F.figure5(wd, nz, paper_noise={("none", 0.0): 0.04}),
    ]
    assert all(isinstance(f, plt.Figure) for f in figs)
    for f in figs:
        plt.close(f)
