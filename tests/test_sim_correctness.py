"""Correctness of the rare-gates simulators against the model's population quantities.

Statistical checks use fixed seeds (never tuned) and state their sample sizes and
false-alarm rates; deterministic checks are exact or state their tolerance. The
population gradient and risk come from :mod:`numerics.rare_gates.model`, itself checked
against an mpmath oracle (tests/test_model_oracle.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from numerics.rare_gates import model
from numerics.rare_gates import sim_kernels as K
from numerics.rare_gates import sim_rng as R
from numerics.rare_gates.initialization import wilson_interval
from numerics.rare_gates.simulate import angles, balanced_checkpoint, simulate_extended, simulate_gd, simulate_sgd

Z95 = 1.959963984540054
# Bonferroni over the 6 coordinates of a gradient or parameter vector: z = 4 has two-sided
# normal tail 6.3e-5 per coordinate, so a family false-alarm rate below 4e-4.
Z_FAMILY = 4.0
THETA = np.array([0.7, 0.5, 0.9, 0.4, -0.3, 0.8])  # separated units, both gates active on a half-plane
EPS = np.finfo(float).eps


def _one_step_gradients(task: str, lam: float, S: int, b: int, seed: int) -> np.ndarray:
    """Per-stream minibatch gradients (S, 6) of one SGD step with eta = 1: theta0 - theta1."""
    th0 = np.tile(THETA, (S, 1))
    ids = np.arange(S)
    out = K.outputs(S)
    par = K.SGDParams(task == "target", b, 1.0, lam, 1, 0, 0.4, False, 0.0, K.NOISE_NONE)
    K._sgd_streams(th0, R.seed_states(seed, ids), R.seed_states(seed, ids, R.PHASE_NOISE), par, 64, out)
    # theta1 = theta0 - g exactly up to one rounding of theta1 (|error| <= ulp(1) ~ 2e-16,
    # negligible against the standard errors ~1e-3 below)
    return th0 - out.theta


@pytest.mark.parametrize("task, lam", [("target", 0.05), ("source", 0.0)])
def test_sample_gradient_is_unbiased(task, lam):
    """Mean of S independent minibatch gradients vs model.objective_grad, within Z_FAMILY x SE.

    S = 256 streams x b = 4096 inputs (about 1e6 inputs); SE from the spread across streams
    (255 degrees of freedom, so the normal quantile is adequate). Family false-alarm rate
    below 4e-4 per task.
    """
    g = _one_step_gradients(task, lam, 256, 4096, seed=12)
    mean = g.mean(axis=0)
    se = g.std(axis=0, ddof=1) / math.sqrt(g.shape[0])
    exact = model.objective_grad(THETA, task, lam)
    assert np.all(se > 0)
    assert np.all(np.abs(mean - exact) <= Z_FAMILY * se), (mean - exact) / se


def test_gd_kernel_is_objective_grad_steps_exactly():
    """GD = theta <- theta - eta objective_grad(theta), bit for bit (same arithmetic), both phases."""
    rows = np.array([THETA, [0.6, 0.9, 1.0, 0.1, 0.8, -0.5]])
    eta, lam = 0.01, 0.05
    res = simulate_gd(rows, eta=eta, horizon=0.5, lam=lam, stop_at_recovery=False, source_time=0.3)
    for i in range(2):
        th = rows[i].copy()
        for _ in range(30):
            th = th - eta * model.objective_grad(th, "source", lam)
        assert np.array_equal(res.checkpoint[i], th)
        for _ in range(50):
            th = th - eta * model.objective_grad(th, "target", lam)
        assert np.array_equal(res.final_theta[i], th)
    assert res.config["source_updates"] == 30 and res.config["target_updates"] == 50


def test_gd_recovery_is_first_check_below_threshold():
    res = simulate_gd(delta0=1e-3, eta=0.01, horizon=40.0, check_every=10)
    n = int(round(res.recovery_time[0] / 0.01))
    th = balanced_checkpoint(1e-3)
    risks = []
    for k in range(n + 1):
        if k % 10 == 0:
            risks.append(model.target_risk(th))
        th = th - 0.01 * model.objective_grad(th, "target", 0.05)
    assert risks[-1] <= 0.4 < min(risks[:-1])


def test_sgd_tracks_gd_with_small_step():
    """eta = 1e-4, b = 16, t = 0.5 (5000 updates), lam = 0.05, 256 streams, from separated units.

    Mean deviation: |mean(theta_SGD - theta_GD)| <= Z_FAMILY SE + 1e-5 per coordinate; the
    allowance bounds the O(eta) second-order bias (Hessian x the SGD covariance, about
    eta t sigma^2 / b ~ 3e-7 here, taken 30x larger). Tracking: every stream within
    10 sqrt(eta t / b) = 0.018 of GD in every coordinate (the per-coordinate spread is about
    sqrt(eta t / b) x sigma_g with sigma_g ~ 0.3, so 10x is a ~30-sigma margin).
    """
    eta, t, b = 1e-4, 0.5, 16
    sgd = simulate_sgd(THETA, b=b, eta=eta, horizon=t, streams=256, seed=21, check_every=10**6, stop_at_recovery=False)
    gd = simulate_gd(THETA, eta=eta, horizon=t, check_every=10**6, stop_at_recovery=False)
    d = sgd.final_theta - gd.final_theta
    se = d.std(axis=0, ddof=1) / math.sqrt(d.shape[0])
    assert np.all(np.abs(d.mean(axis=0)) <= Z_FAMILY * se + 1e-5), d.mean(axis=0) / se
    assert np.max(np.abs(d)) <= 10 * math.sqrt(eta * t / b)
    assert np.all(sgd.updates == 5000)


def test_gate_disagreement_frequency_is_delta_over_pi():
    """Frozen parameters (eta = 0) at angle delta = 0.3, units rotated by 1.1 rad.

    N = 64 streams x 64 inputs x 250 updates = 1,024,000 inputs; the count must lie in the
    Wilson 95% interval around the observed fraction containing delta/pi (false alarm 5%).
    """
    delta, rot = 0.3, 1.1
    th = np.array([0.7, 0.6, math.cos(rot), math.sin(rot), 1.3 * math.cos(rot + delta), 1.3 * math.sin(rot + delta)])
    S, b, n_up = 64, 64, 250
    th0 = np.tile(th, (S, 1))
    ids = np.arange(S)
    out = K.outputs(S)
    par = K.SGDParams(True, b, 0.0, 0.0, n_up, 0, 0.4, False, 0.0, K.NOISE_NONE)
    K._sgd_streams(th0, R.seed_states(5, ids), R.seed_states(5, ids, R.PHASE_NOISE), par, 64, out)
    assert np.array_equal(out.theta, th0)  # eta = 0 leaves the parameters exactly in place
    N = S * b * n_up
    k = int(out.disagreements.sum())
    lo, hi = wilson_interval(k, N, Z95)
    assert lo <= delta / math.pi <= hi, (k / N, delta / math.pi)


def test_disk_inputs_law():
    """1e6 draws: E|X|^2 = 2 and P(X1 > 0) = P(X2 > 0) = 1/2 within 4 SE; all within radius 2."""
    x = R.disk_inputs(0, 0, 1_000_000)
    n = x.shape[0]
    r2 = x[:, 2] ** 2
    assert abs(r2.mean() - 2.0) <= Z_FAMILY * r2.std() / math.sqrt(n)
    for col in (0, 1):
        p = np.mean(x[:, col] > 0)
        assert abs(p - 0.5) <= Z_FAMILY * 0.5 / math.sqrt(n)
    assert x[:, 2].max() < 2.0 and x[:, 2].min() >= 0.0


def test_sincos_accuracy():
    """cos/sin of 2 pi u (u = 53-bit uniform of a uint64) within 2 ulp(1) = 4.4e-16 of
    longdouble NumPy, on 2000 random words and the quadrant and reflection edges."""
    rng = np.random.default_rng(0)
    edges = np.array(
        [0, 1 << 61, 1 << 62, 3 << 61, 1 << 63, 3 << 62, 2**64 - 1, (1 << 61) + (1 << 11), (1 << 61) - (1 << 11)],
        dtype=np.uint64,
    )
    raw = np.concatenate([rng.integers(0, 2**64 - 1, size=2000, dtype=np.uint64), edges])
    cs = np.array([R._sincos_2pi(np.uint64(r)) for r in raw])
    u = (raw >> np.uint64(11)).astype(np.longdouble) * np.longdouble(2.0) ** -53
    phi = 2 * np.longdouble("3.14159265358979323846264338327950288") * u
    ref = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    assert np.max(np.abs(cs - ref)) <= 2 * EPS


def _risk_lower(th):
    return K._risk_lower(*[float(v) for v in th])


coord = st.floats(-2.0, 2.0, allow_nan=False)


@given(st.tuples(coord, coord, coord, coord, coord, coord))
@example((0.6708203932499369, 0.6708203932499369, 0.6708203932499369, 3e-6, 0.6708203932499369, -3e-6))
@example((0.5, -0.5, 1.0, 1e-9, 1.0, 0.0))
def test_risk_lower_bound_is_below_risk(th):
    th = np.array(th)
    if math.hypot(th[2], th[3]) == 0.0 or math.hypot(th[4], th[5]) == 0.0:
        return
    assert _risk_lower(th) <= model.target_risk(th)


@given(st.floats(1e-12, 0.3), st.floats(0.1, 1.5), st.floats(-1.5, 1.5), st.floats(0.0, 6.3))
def test_risk_lower_bound_is_tight_near_clones(delta, a1, a2, rot):
    """Near clones (d > 0, small angle) the bound is within 1e-10 + delta^3 of the risk, so it
    settles the checks of the constructed runs without atan2."""
    th = np.array([a1, a2, math.cos(rot), math.sin(rot), 0.8 * math.cos(rot + delta), 0.8 * math.sin(rot + delta)])
    gap = model.target_risk(th) - _risk_lower(th)
    assert 0.0 <= gap <= 1e-10 + delta**3


def test_noise_controls():
    """One update of b = 1 with and without noise s = 0.1 (eta = 0.01) on 4096 streams.

    The inputs are the same (separate noise generator), so the difference / (s sqrt eta) is
    xi: independent N(0, I_3) per unit, or one vector shared by both. 15 statistics at
    z = 4 (6 means, 6 variances, 3 cross-unit correlations): family false alarm < 1e-3.
    """
    S = 4096
    kw = dict(b=1, eta=0.01, horizon=0.01, streams=S, seed=2, stop_at_recovery=False)
    clean = simulate_sgd(THETA, **kw)
    ind = simulate_sgd(THETA, noise_s=0.1, noise="independent", **kw)
    shared = simulate_sgd(THETA, noise_s=0.1, noise="shared", **kw)
    for res in (ind, shared):
        assert np.array_equal(res.disagreements, clean.disagreements)
    sd = 0.1 * math.sqrt(0.01)
    unit1, unit2 = [0, 2, 3], [1, 4, 5]
    xi = (ind.final_theta - clean.final_theta) / sd
    assert np.all(np.abs(xi.mean(axis=0)) <= Z_FAMILY / math.sqrt(S))
    assert np.all(np.abs(xi.var(axis=0, ddof=1) - 1.0) <= Z_FAMILY * math.sqrt(2.0 / S))
    for i, j in zip(unit1, unit2):
        assert abs(np.corrcoef(xi[:, i], xi[:, j])[0, 1]) <= Z_FAMILY / math.sqrt(S)
    xs = (shared.final_theta - clean.final_theta) / sd
    # rounding: theta + sd xi then minus theta loses up to ulp(1) / sd ~ 2e-14 relative
    assert np.allclose(xs[:, unit1], xs[:, unit2], rtol=0, atol=1e-12)
    assert abs(xs[:, 0].var(ddof=1) - 1.0) <= Z_FAMILY * math.sqrt(2.0 / S)


def test_extended_precision_gives_same_times():
    """80-bit longdouble replays of 3 streams (same draws) give the float64 recovery and
    first-disagreement times exactly (Appendix 19's remark, at a small scale)."""
    kw = dict(delta0=1e-2, b=16, eta=0.01, horizon=20.0, streams=3, seed=0)
    f64 = simulate_sgd(**kw)
    ext = simulate_extended(**kw)
    assert ext.recovered.all()
    assert np.array_equal(ext.recovery_time, f64.recovery_time)
    assert np.array_equal(ext.first_disagreement_time, f64.first_disagreement_time)
    assert np.array_equal(ext.disagreements, f64.disagreements)
    # the trajectories agree to far better than the risk margin (~1e-9 after 1000 updates)
    assert np.allclose(ext.final_theta, f64.final_theta, rtol=0, atol=1e-9)


def test_balanced_checkpoint_and_angles():
    for d in (1e-5, 1e-2, 3.0):
        th = balanced_checkpoint(d)
        assert math.isclose(angles(th)[0], d, rel_tol=4 * EPS)
        assert th[0] == th[1] == math.sqrt(0.45)
        assert math.isclose(math.hypot(th[2], th[3]), math.sqrt(0.45), rel_tol=2 * EPS)


# Bad parameters that every SGD entry point refuses, naming the parameter (tests/test_dd_kernel.py reuses them).
BAD_SGD_PARAMETERS = [
    *[(dict(b=v), "b") for v in (0, 2.0)],
    *[(dict(eta=v), "eta") for v in (0.0, float("nan"))],
    (dict(lam=-1.0), "lam"),
    *[(dict(delta0=v), "delta0") for v in (0.0, math.pi)],
    (dict(streams=0), "streams"),
    (dict(horizon=-1.0), "horizon"),
    (dict(check_every=0), "check_every"),
]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        *BAD_SGD_PARAMETERS,
        (dict(check_every=1.5), "check_every"),
        (dict(noise_s=-0.1), "noise_s"),
        (dict(seed=-1), "seed"),
        (dict(seed=2**64), "seed"),
        (dict(seed=1.0), "seed"),
        (dict(noise="both"), "noise"),
        (dict(first_stream=-2), "first_stream"),
        (dict(threads=0), "threads"),
        (dict(source_time=-1.0), "source_time"),
    ],
)
def test_api_rejects_bad_parameters(kwargs, name):
    base = dict(delta0=1e-3, b=4, eta=0.01, horizon=1.0, streams=2)
    base.update(kwargs)
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        simulate_sgd(**base)


def test_api_rejects_bad_theta():
    with pytest.raises(ValueError, match="theta0"):
        simulate_sgd(np.zeros(5), b=1, eta=0.1, horizon=1.0)
    with pytest.raises(ValueError, match="theta0/delta0"):
        simulate_sgd(THETA, delta0=1e-3, b=1, eta=0.1, horizon=1.0)
    with pytest.raises(ValueError, match="theta0"):
        simulate_gd(np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0]), eta=0.1, horizon=1.0)
