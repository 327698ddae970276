"""The time-stepped central flow (numerics.central_flow.stepped): its order, agreement with the hybrid flow, errors."""

from __future__ import annotations

import numpy as np
import pytest

from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import stepped as ST
from numerics.central_flow.models import mf_model, scalar_model

RK4_RATIO = (12.0, 20.0)  # error ratio when dt halves: RK4 gives ~2^4 = 16; a third-order slip ~8, fifth ~32
HYB_TOL = 1e-9  # the hybrid flow's own error at the samples (rtol 1e-12 per step, ~1e3 steps)


@pytest.fixture(scope="module")
def scalar_case():
    """Scalar draw 0 (below the edge at t = 0) and its hybrid flow on [0, 3.5]: one event, the contact near t = 1.22."""
    model, th, eta = E.scalar_setting(E.SEED, 0)
    grid = np.round(np.arange(0.0, 3.5 + 1e-9, 0.25), 12)
    hyb = F.hybrid_flow(model, th, eta, 3.5, grid)
    assert [e["kind"] for e in hyb.events] == ["mode"] and 1.0 < hyb.contact < 1.5
    return model, th, eta, grid, hyb


def _err(run: ST.SteppedRun, ref: np.ndarray) -> float:
    return float(np.max(np.abs(run.theta - ref)))


def test_order_gradient_flow_phase(scalar_case):
    model, th, eta, grid, hyb = scalar_case
    sub = grid[(grid > 0) & (grid <= 1.0)]  # below the edge throughout: k = 0, a smooth polynomial field
    errs = [_err(ST.stepped_central_flow(model, th, eta, 0.0, 1.0, dt, sub), hyb.theta[1 : sub.size + 1])
            for dt in (0.25, 0.125)]  # fmt: skip
    assert RK4_RATIO[0] <= errs[0] / errs[1] <= RK4_RATIO[1]


def test_order_central_flow_phase(scalar_case):
    model, th, eta, grid, hyb = scalar_case
    i0 = int(np.searchsorted(grid, 1.5))  # on the edge (k = 1) from t = 1.5 on
    sub, ref = grid[i0 + 1 :], hyb.theta[i0 + 1 :]
    runs = [ST.stepped_central_flow(model, hyb.theta[i0], eta, 1.5, 3.5, dt, sub) for dt in (0.25, 0.125)]
    assert all(np.all(r.k == 1) and np.all(r.sigma2 > 0) for r in runs)
    errs = [_err(r, ref) for r in runs]
    assert RK4_RATIO[0] <= errs[0] / errs[1] <= RK4_RATIO[1]
    # on the edge: lambda eta/2 = 1 held to the scheme's error (O(dt^4) per unit time, dt = 0.125: ~1e-6)
    assert np.max(np.abs(runs[1].lam - 1.0)) < 1e-5


def test_contact_located_like_the_hybrid_flow(scalar_case):
    """From below the edge through the contact: the GF step that would overshoot is shortened onto the edge."""
    model, th, eta, grid, hyb = scalar_case
    runs = [ST.stepped_central_flow(model, th, eta, 0.0, 3.5, dt, grid[1:]) for dt in (0.05, 0.025)]
    for run in runs:
        assert len(run.contacts) == 1 and run.negative_sigma2 == [] and run.pattern_changes == 0
        assert run.k.tolist() == [int(t >= hyb.contact) for t in grid[1:]]
    # the contact time and the state converge at RK4's order (without the landing the switch would overshoot by up
    # to dt, a first-order error): ~1e-6 and ~1e-7 at dt = 0.05
    dtc = [abs(run.contacts[0] - hyb.contact) for run in runs]
    errs = [_err(run, hyb.theta[1:]) for run in runs]
    assert RK4_RATIO[0] <= dtc[0] / dtc[1] <= RK4_RATIO[1] and RK4_RATIO[0] <= errs[0] / errs[1] <= RK4_RATIO[1]
    assert errs[0] < 1e-6


def test_matches_hybrid_flow_on_a_relu_draw_without_boundary_events():
    """ReLU draw 7 of the audit: smooth CF from t = 1.3 to 3.4 (contact at 1.22, next gate change at 4.47)."""
    model, th, eta = E.relu_setting(E.SEED, 7)
    grid = np.round(np.arange(0.0, 3.4 + 1e-9, 0.1), 12)
    hyb = F.hybrid_flow(model, th, eta, 3.4, grid)
    assert hyb.contact < 1.3 and all(e["t"] < 1.3 for e in hyb.events)
    i0 = 13
    run = ST.stepped_central_flow(model, hyb.theta[i0], eta, grid[i0], 3.4, 0.05, grid[i0 + 1 :])
    scale = np.abs(hyb.theta[i0 + 1 :]).max()
    assert run.pattern_changes == 0 and np.all(run.k == 1) and run.stop is None
    assert _err(run, hyb.theta[i0 + 1 :]) / scale < 1e-8  # RK4 at dt = 0.05 here: ~4e-10 (+ the hybrid's 1e-9)


def test_dt_convergence_and_gaps():
    model = mf_model(np.diag([1.0, 0.5]), 2)
    th = 0.3 * np.arange(1, 9, dtype=float) / 8
    out = ST.dt_convergence(model, th, 0.9, 0.0, 2.0, 0.2, [1.0, 2.0], halvings=2)
    assert len(out["runs"]) == 3 and len(out["gaps"]) == 2 and out["order"] == 4
    assert RK4_RATIO[0] <= out["ratios"][0] <= RK4_RATIO[1]
    with pytest.raises(ValueError, match="same times"):
        ST.max_rel_gap(out["runs"][0], ST.stepped_central_flow(model, th, 0.9, 0.0, 2.0, 0.2, [0.5, 2.0]))


def test_a_diverging_run_stops():
    run = ST.stepped_central_flow(scalar_model(1.0), [3.0, 3.0], 0.01, 0.0, 1e6, 1e5, [1e5, 1e6])
    assert run.stop is not None and run.t_end < 1e6 and run.t.size == 0


M = scalar_model(1.0)
GOOD = {"model": M, "theta0": [1.3, 0.4], "eta": 0.9, "t0": 0.0, "T": 1.0, "dt": 0.1}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"eta": 0.0}, "eta must be a finite real number > 0; got 0.0"),
        ({"eta": float("nan")}, "eta must be a finite real number > 0"),
        ({"dt": -0.1}, "dt must be a finite real number > 0; got -0.1"),
        ({"t0": -1.0}, "t0 must be a finite real number >= 0; got -1.0"),
        ({"T": 0.0}, "T must be a finite real number > t0 = 0.0; got 0.0"),
        ({"theta0": [1.0]}, r"theta0 must have shape \(2,\); got \(1,\)"),
        ({"theta0": [1.0, np.inf]}, "theta0 must contain only finite numbers"),
        ({"dt": 1e-9}, "dt must be >= "),
        ({"t_eval": [0.5, 2.0]}, r"t_eval must be strictly increasing inside \[0.0, 1.0\]"),
        ({"t_eval": [[0.5]]}, "t_eval must be a non-empty 1-D array"),
    ],
)
def test_input_errors(change, message):
    with pytest.raises(ValueError, match=message) as info:
        ST.stepped_central_flow(**{**GOOD, **change})
    assert "\n" not in str(info.value)


def test_other_input_errors():
    with pytest.raises(ValueError, match="halvings must be an integer >= 1; got 0"):
        ST.dt_convergence(M, [1.3, 0.4], 0.9, 0.0, 1.0, 0.1, halvings=0)
    with pytest.raises(ValueError, match="model must be a ReLU model"):
        ST.one_sided(M, [1.3, 0.4], 0.9, (0, 0))
    model, th, eta = E.relu_setting(E.SEED, 7)
    with pytest.raises(ValueError, match=r"pair must be \(i, j\) with 0 <= i < 6, 0 <= j < 3; got \(6, 0\)"):
        ST.one_sided(model, th, eta, (6, 0))
    with pytest.raises(ValueError, match="pair must be a \\(sample i, neuron j\\) index pair"):
        ST.one_sided(model, th, eta, "ab")
