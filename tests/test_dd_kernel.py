"""The double-double SGD kernel (:mod:`numerics.rare_gates.dd_kernel`) and :func:`simulate_extended`.

Claimed precision, checked here against an mpmath reference at 40 digits fed the same
float64 inputs: after ``k <= 400`` updates the state agrees to a relative ``1e-30`` of its
largest coordinate (measured 2e-32 to 9e-32; its hi part alone is 5e-17 off), the dd target
risk to ``1e-30`` absolute and the dd angle to ``1e-30`` absolute (so an angle of 1e-25 has
about five correct digits). On Table 2 streams the dd runs give the float64 recovery and
first-disagreement times (Appendix 19's claim).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from numerics import bench
from numerics.rare_gates import dd_kernel as D
from numerics.rare_gates import experiments as E
from numerics.rare_gates import sim_kernels as K
from numerics.rare_gates import sim_rng as R
from numerics.rare_gates.simulate import balanced_checkpoint, simulate_extended, simulate_sgd
from numerics.sweep.codec import decode, encode, equal
from tests.test_sim_correctness import BAD_SGD_PARAMETERS

mp = mpmath.mp
DPS = 40


# --- the mpmath reference -------------------------------------------------------------------------


def _mp_risk(th):
    """Target risk of mpf parameters (model._risk's formulas)."""
    a1, a2, u0, u1, v0, v1 = th
    c = abs(u0 * v1 - u1 * v0)
    d = u0 * v0 + u1 * v1
    k12 = (c + (mp.pi - mp.atan2(c, d)) * d) / (2 * mp.pi)
    n1, n2 = u0 * u0 + u1 * u1, v0 * v0 + v1 * v1
    quad = a1 * a1 * n1 / 2 + a2 * a2 * n2 / 2 + 2 * a1 * a2 * k12
    lin = 2 / mp.pi * (a1 * mp.sqrt(n1) + a2 * mp.sqrt(n2))
    return (quad - 2 * lin + 2) / 2


def _mp_angle(th):
    _, _, u0, u1, v0, v1 = th
    return mp.atan2(abs(u0 * v1 - u1 * v0), u0 * v0 + u1 * v1)


def _mp_sgd(theta0, xs, b, eta, lam, n, target=True):
    """n SGD updates in mpf from the float64 inputs xs (rows x0, x1, |x|): (state, disagreements, first)."""
    th = [mp.mpf(float(v)) for v in theta0]
    eta, lam = mp.mpf(eta), mp.mpf(lam)
    count, first = 0, -1
    for k in range(n):
        g = [mp.mpf(0)] * 6
        dis = 0
        for x0, x1, rho in xs[k * b : (k + 1) * b]:
            x0, x1 = mp.mpf(float(x0)), mp.mpf(float(x1))
            y = mp.mpf(float(rho)) if target else max(x0, 0)
            z1 = th[2] * x0 + th[3] * x1
            z2 = th[4] * x0 + th[5] * x1
            h1, h2 = (z1 if z1 > 0 else 0), (z2 if z2 > 0 else 0)
            r = th[0] * h1 + th[1] * h2 - y
            q1, q2 = (r if z1 > 0 else 0), (r if z2 > 0 else 0)
            for i, t in enumerate((r * h1, r * h2, q1 * x0, q1 * x1, q2 * x0, q2 * x1)):
                g[i] += t
            dis += (z1 > 0) != (z2 > 0)
        a = (1, 1, th[0], th[0], th[1], th[1])
        th = [th[i] - eta * (a[i] * g[i] / b + lam * th[i]) for i in range(6)]
        if dis:
            count += dis
            first = k + 1 if first < 0 else first
    return th, count, first


def _dd_run(theta0, b, eta, lam, n, seed, streams, check_every=0, exact=False, lo0=None, target=True, stop=True):
    th = np.ascontiguousarray(np.atleast_2d(theta0), dtype=float)
    S = th.shape[0]
    lo = np.zeros_like(th) if lo0 is None else np.ascontiguousarray(np.atleast_2d(lo0))
    st = R.seed_states(seed, np.asarray(streams), R.PHASE_TARGET, 0)
    out = D.dd_outputs(S)
    D._dd_streams(
        th, lo, st, K.SGDParams(target, b, eta, lam, n, check_every, 0.4, stop, 0.0, K.NOISE_NONE), exact, out
    )
    return out


def _rel_state_error(hi, lo, ref):
    err = max(abs((mp.mpf(float(h)) + mp.mpf(float(l_))) - r) for h, l_, r in zip(hi, lo, ref))
    return float(err / max(abs(r) for r in ref))


CASES = [  # theta0, b, eta, lam, updates, target
    (balanced_checkpoint(1e-2), 16, 0.01, 0.05, 400, True),
    (np.array([0.9, -0.4, 1.1, 0.3, -0.7, 0.8]), 3, 0.02, 0.05, 300, True),
    (np.array([0.5, 0.7, 0.2, -1.3, 0.9, 0.1]), 1, 0.01, 0.0, 400, False),
    (balanced_checkpoint(1e-5), 64, 0.01, 0.05, 60, True),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_agrees_with_mpmath(case):
    theta0, b, eta, lam, n, target = CASES[case]
    seed, stream = 11 + case, 3
    hi, lo, _, _, first, count, upd, _ = _dd_run(theta0, b, eta, lam, n, seed, [stream], target=target)
    xs = R.disk_inputs(seed, stream, n * b)
    with mp.workdps(DPS):
        ref, ref_count, ref_first = _mp_sgd(theta0, xs, b, eta, lam, n, target)
        assert upd[0] == n and count[0] == ref_count and first[0] == ref_first
        assert _rel_state_error(hi[0], lo[0], ref) <= 1e-30
        # the final state's dd risk and angle, against mpmath at the dd state itself
        th = [mp.mpf(float(h)) + mp.mpf(float(l_)) for h, l_ in zip(hi[0], lo[0])]
        rh, rl = D.target_risk_dd(hi[0], lo[0])[0]
        assert abs(mp.mpf(rh) + mp.mpf(rl) - _mp_risk(th)) <= 1e-30
        ah, al = D.angles_dd(hi[0], lo[0])[0]
        assert abs(mp.mpf(ah) + mp.mpf(al) - _mp_angle(th)) <= 1e-30
    # and the lo part matters: the float64 kernel's state is about 1e-16 away
    assert np.max(np.abs(lo[0])) > 0.0


def _dd_of(values):
    hi = np.array([float(v) for v in values])
    lo = np.array([float(v - mp.mpf(h)) for v, h in zip(values, hi)])
    return hi, lo


@pytest.mark.parametrize("delta", [3e-32, 1e-25, 1e-19, 1e-15, 1e-5, 0.7, 2.0, 3.1])
def test_angle_and_risk_of_dd_states(delta):
    """Angles from 1e-25 to near pi and risks of dd parameters (both signs of a_i), against mpmath."""
    with mp.workdps(DPS):
        r = mp.sqrt(mp.mpf(0.45))
        for a1, a2 in ((r, r), (mp.mpf(-0.3), mp.mpf(1.2))):
            th = [
                a1,
                a2,
                r * mp.cos(delta / 2),
                r * mp.sin(delta / 2),
                1.1 * r * mp.cos(delta / 2),
                -1.1 * r * mp.sin(delta / 2),
            ]
            hi, lo = _dd_of(th)
            exact = [mp.mpf(float(h)) + mp.mpf(float(l_)) for h, l_ in zip(hi, lo)]  # the dd state itself
            ah, al = D.angles_dd(hi, lo)[0]
            assert abs(mp.mpf(ah) + mp.mpf(al) - _mp_angle(exact)) <= 1e-31
            rh, rl = D.target_risk_dd(hi, lo)[0]
            assert abs(mp.mpf(rh) + mp.mpf(rl) - _mp_risk(exact)) <= 1e-30
        if 1e-25 <= delta <= 1e-5:  # the dd state resolves the angle: a few digits at 1e-25
            assert ah == pytest.approx(delta, rel=1e-5)


def test_dd_constants():
    with mp.workdps(DPS):
        for (h, l_), v in (
            ((D.PI_HI, D.PI_LO), mp.pi),
            ((D.INV_2PI_HI, D.INV_2PI_LO), 1 / (2 * mp.pi)),
            ((D.Q_HI, D.Q_LO), 2 / mp.pi),
        ):
            assert abs(mp.mpf(h) + mp.mpf(l_) - v) <= 1e-32 * abs(v)
        for t in (1e-20, 0.3, 1.0, math.pi / 2, 3.0, math.pi):
            sh, sl, ch, cl = D._sincos(t)
            assert abs(mp.mpf(sh) + mp.mpf(sl) - mp.sin(t)) <= 1e-31
            assert abs(mp.mpf(ch) + mp.mpf(cl) - mp.cos(t)) <= 1e-31


# --- the kernel against the float64 kernel ---------------------------------------------------------


def test_same_inputs_and_times_as_float64():
    """Same streams: the same draws (equal final generator states), disagreements and event times."""
    S, b, n = 12, 16, 3000
    th = np.tile(balanced_checkpoint(1e-2), (S, 1))
    st = R.seed_states(5, np.arange(S), R.PHASE_TARGET, 0)
    f64 = K.outputs(S)
    K._sgd_streams(
        th, st, st.copy(), K.SGDParams(True, b, 0.01, 0.05, n, 10, 0.4, True, 0.0, K.NOISE_NONE), K.LANES, f64
    )
    hi, lo, dst, rec, first, count, upd, _ = _dd_run(th, b, 0.01, 0.05, n, 5, np.arange(S), check_every=10)
    assert np.all(rec >= 0)  # every stream recovers here: the comparison has events
    assert np.array_equal(rec, f64[3]) and np.array_equal(first, f64[4]) and np.array_equal(count, f64[5])
    assert np.array_equal(upd, f64[6]) and np.array_equal(dst, f64[1])
    assert np.allclose(hi, f64[0], rtol=0, atol=1e-9)


def test_precheck_exact_checks_and_splits_give_the_same_results():
    """The float64 risk pre-check changes no outcome; a stream's results do not depend on its batch."""
    S, b, n = 6, 4, 1500
    th = np.tile(balanced_checkpoint(3e-2), (S, 1))
    fast = _dd_run(th, b, 0.01, 0.05, n, 8, np.arange(S), check_every=7)
    exact = _dd_run(th, b, 0.01, 0.05, n, 8, np.arange(S), check_every=7, exact=True)
    alone = _dd_run(th[:1], b, 0.01, 0.05, n, 8, [4], check_every=7)
    assert np.any(fast[3] >= 0)
    for a, e in zip(fast[:7], exact[:7]):
        assert np.array_equal(a, e)
    for a, e in zip(fast[:7], alone[:7]):
        assert np.array_equal(a[4], e[0])


def test_continuing_from_a_dd_state_is_one_run():
    """A run continued from its (hi, lo) state and generator state equals the one-shot run."""
    th = balanced_checkpoint(1e-3)
    one = _dd_run(th, 8, 0.01, 0.05, 400, 2, [1], stop=False)
    half = _dd_run(th, 8, 0.01, 0.05, 200, 2, [1], stop=False)
    out = D.dd_outputs(1)
    D._dd_streams(
        half[0], half[1], half[2], K.SGDParams(True, 8, 0.01, 0.05, 200, 0, 0.4, False, 0.0, K.NOISE_NONE), False, out
    )
    assert np.array_equal(out[0], one[0]) and np.array_equal(out[1], one[1]) and np.array_equal(out[2], one[2])


@pytest.fixture(scope="module")
def table2():
    """The five Table 2 settings (Appendix 19 seeds), streams 0..7, through t = 200."""
    return E.extended_rerun(None, horizon=200.0, streams=8)


def test_table2_runs_give_the_float64_times(table2):
    """Appendix 19: extended precision gives the same recovery and first-disagreement times."""
    assert [(c["b"], c["delta0"]) for c in table2] == list(E.TABLE2_SETTINGS)
    recoveries = sum(int(np.isfinite(c["f64_recovery"]).sum()) for c in table2)
    disagreements = sum(int(np.isfinite(c["f64_first"]).sum()) for c in table2)
    assert recoveries > 0 and disagreements > 0  # events to compare
    for c in table2:
        assert np.array_equal(c["ext_recovery"], c["f64_recovery"], equal_nan=True)
        assert np.array_equal(c["ext_first"], c["f64_first"], equal_nan=True)


def test_unrecovered_angle_goes_below_the_float64_floor():
    """A quiet Table 2 stream (b = 16, delta0 = 1e-5) through t = 700: the float64 angle sits at its
    rounding floor (~1e-16..1e-15), the dd angle keeps decaying (about exp(-lambda t)) far below 1e-19."""
    b, d = 16, 1e-5
    seed = E.table2_seed(b, d)
    kw = dict(delta0=d, b=b, eta=0.01, horizon=700.0, streams=1, first_stream=0, seed=seed)
    ext = simulate_extended(**kw)
    f64 = simulate_sgd(**kw)
    assert not ext.recovered[0] and not f64.recovered[0]
    assert ext.final_theta_lo is not None and ext.final_theta_lo.shape == (1, 6)
    assert ext.final_angle[0] < 1e-19 < 1e-17 < f64.final_angle[0]
    assert ext.final_angle[0] == pytest.approx(D.angles_dd(ext.final_theta, ext.final_theta_lo)[0, 0])


def test_result_encodes_losslessly():
    res = simulate_extended(delta0=1e-2, b=4, eta=0.01, horizon=1.0, streams=2, seed=1)
    skeleton, arrays = encode(res)
    back = decode(skeleton, arrays)
    assert equal(back, res) and back.final_theta_lo is not None


# --- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, name",
    [
        *BAD_SGD_PARAMETERS,
        (dict(first_stream=-1), "first_stream"),
        (dict(seed=-1), "seed"),
        (dict(threshold=float("inf")), "threshold"),
        (dict(block_updates=0), "block_updates"),
        (dict(delta0=None, theta0=np.zeros(5)), "theta0"),
        (dict(theta0=np.zeros(6)), "theta0"),
    ],
)
def test_bad_inputs_raise_naming_the_parameter(kwargs, name):
    kw = dict(delta0=1e-2, b=4, eta=0.01, horizon=1.0, streams=2)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=name):
        simulate_extended(**kw)
    if name not in ("block_updates",):  # the float64 entry point says the same
        with pytest.raises(ValueError, match=name):
            simulate_sgd(**kw)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(source_time=0.5), "source_time"),
        (dict(noise_s=0.1), "noise_s"),
        (dict(trace=True), "trace"),
        (dict(progress=lambda done, total: None), "progress"),
        (dict(threads=0), "threads"),
    ],
)
def test_double_double_refuses_what_it_does_not_run(kwargs, name):
    """simulate_extended takes simulate_sgd's keywords; what the dd kernel has no path for is refused by name."""
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        simulate_extended(delta0=1e-2, b=4, eta=0.01, horizon=1.0, streams=2, **kwargs)
    with pytest.raises(ValueError, match=r"^arithmetic must be one of 'float64', 'double-double'; got 'quad'"):
        simulate_sgd(delta0=1e-2, b=4, eta=0.01, horizon=1.0, streams=2, arithmetic="quad")


def test_double_double_is_an_arithmetic_of_simulate_sgd():
    """simulate_extended is simulate_sgd(arithmetic='double-double') with 4 streams by default; the thread
    count and a run to the horizon (no stop) are supported, and the numbers do not depend on the threads."""
    kw = dict(delta0=1e-2, b=4, eta=0.01, horizon=1.0, seed=3)
    ext = simulate_extended(**kw)
    assert ext.stream_ids.tolist() == [0, 1, 2, 3] and ext.config["optimizer"] == "sgd-double-double"
    same = simulate_sgd(**kw, streams=4, threads=1, arithmetic="double-double")
    assert np.array_equal(same.final_theta_lo, ext.final_theta_lo) and np.array_equal(same.final_theta, ext.final_theta)
    through = simulate_extended(**kw, stop_at_recovery=False)
    assert through.config["stop_at_recovery"] is False and np.all(through.updates == 100)


def test_bad_dd_rows():
    with pytest.raises(ValueError, match="same shape"):
        D.angles_dd(np.zeros(6), np.zeros(5))
    with pytest.raises(ValueError, match="same shape"):
        D.target_risk_dd(np.zeros((2, 5)), np.zeros((2, 5)))


def test_bench_has_an_extended_row():
    """``python -m numerics.bench --json`` reports the dd kernel (b = 16, one thread) beside float64."""
    rows = bench.measure_numba(1, 0.01)
    (row,) = [r for r in rows if "extended" in r["name"]]
    assert (row["b"], row["threads"]) == (16, 1) and row["inputs_per_s"] > 0 and row["ratio_to_float64"] > 0
