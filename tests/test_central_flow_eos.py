"""Unit tests of the EoS diagnostics (numerics.central_flow.eos) and the EoS settings of experiments."""

import numpy as np
import pytest

from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow.models import scalar_model


def test_period_two_amplitude_of_pure_oscillation():
    it = np.array([[1.0 + 0.1 * (-1) ** k, 2.0] for k in range(6)])
    amp = EOS.period_two_amplitude(it)
    assert np.isnan(amp[0]) and np.isnan(amp[-1])
    assert np.allclose(amp[1:-1], 0.1 / np.linalg.norm(it[1:-1], axis=1))


def test_edge_stats_counts_and_sustained():
    lam = np.r_[0.5, np.ones(10) * 1.05] * 2.0  # eta = 1: lambda eta/2 = 1.05 after step 0
    st = EOS.edge_stats(lam, 1.0, np.full(11, 0.01), window=10)
    assert st["first"] == 1 and st["frac_eos"] == 1.0 and st["sustained"]
    st = EOS.edge_stats(lam, 1.0, np.zeros(11), window=10)  # converged: no oscillation
    assert st["frac_osc"] == 0.0 and not st["sustained"]
    assert EOS.edge_stats(np.ones(3), 1.0, np.zeros(3))["first"] is None


@pytest.mark.parametrize(
    "kwargs, match",
    [({"eta": 0.0}, "eta"), ({"window": 0}, "window"), ({"band": -1.0}, "band"), ({"need": 1.5}, "need")],
)
def test_edge_stats_bad_input(kwargs, match):
    args = {"lam": np.ones(4), "eta": 1.0, "amp": np.zeros(4), **kwargs}
    with pytest.raises(ValueError, match=match):
        EOS.edge_stats(**args)


def test_tracking_tolerance_and_bad_input():
    assert EOS.tracking_tolerance(0.01, 0.1) == pytest.approx(10 * (0.01 + 0.01))
    with pytest.raises(ValueError, match="C"):
        EOS.tracking_tolerance(0.1, 0.1, C=0.0)
    with pytest.raises(ValueError, match="iterates"):
        EOS.period_two_amplitude(np.ones((2, 2)))


def test_tracking_errors_zero_against_itself_on_a_fixed_point():
    model = scalar_model(1.0)
    it = np.tile([1.0, 1.0], (5, 1))  # a minimum: GD stays
    out = EOS.tracking_errors(model, it, 0.5, [0.5, 1.5], it[:2], [0.0, 0.0])
    assert max(out["errors"].values()) == 0.0
    with pytest.raises(ValueError, match="half-integer"):
        EOS.tracking_errors(model, it, 0.5, [1.0], it[:1], [0.0])


def test_scalar_recursion_is_exact():
    model, th, eta = E.eos_problem("scalar", 0.9, 0.95, 0.3, 0, 1)
    bud = E.scalar_h_budget(F.gradient_descent(model, th, eta, 100), eta, model.data["y"])
    assert bud["recursion"] < 1e-12
    assert bud["energy"] == pytest.approx(np.log(bud["h0"] / bud["hK"]), rel=1e-9)


def test_eos_problem_bad_input_and_relu_calibration():
    with pytest.raises(ValueError, match="model"):
        E.eos_problem("cnn", 0.9, 1.0, 0.3, 0, 0)
    with pytest.raises(ValueError, match="scale"):
        E.eos_problem("mf", 0.9, 1.0, -0.3, 0, 0)
    with pytest.raises(ValueError, match="steps"):
        E.eos_scan("mf", 0.9, 1.0, 0.3, steps=10)
    with pytest.raises(ValueError, match="model"):
        E.eos_track("cnn", 0)
    with pytest.raises(ValueError, match="model"):
        E.eos_separate("relu", 0)
    with pytest.raises(ValueError, match="i must"):
        E.eos_separate("mf", -1)
    model, th, eta = E.relu_eos_setting(0, 0)
    assert model.preacts is not None and model.preacts(th).shape == (6, 3)
    assert EOS.sharpness_series(model, th[None, :])[0] * eta / 2 < 1


def test_catapult_end_waits_for_the_centre_to_slow_to_the_tolerance_scale():
    """A centre moving slower than the oscillation but faster than 1/TRACK_C of it is still the catapult's relaxation.

    Iterates x_k = c_k (1 + (-1)^k A) in 2-D, with the centre c_k moving by a relative 0.3 A per step for 30 steps
    and 1e-6 A after: the old test (step <= amplitude) accepted step 0; the tolerance's scale (TRACK_C step <=
    amplitude: C rho must stay below a) ends the catapult only where the fast relaxation stops.
    """
    A, n = 0.02, 80
    rate = np.where(np.arange(n) < 30, 0.3 * A, 1e-6 * A)
    centre = np.cumprod(1 + rate)[:, None] * np.array([1.0, 0.5])
    it = centre * (1 + A * (-1.0) ** np.arange(n))[:, None]
    lam = np.full(n, 2.0 / 0.9)  # at the edge throughout
    k = EOS.catapult_end(it, lam, 0.9, 0, window=n - 3)
    assert k is not None and 28 <= k <= 31
    mids = 0.5 * (it[1:] + it[:-1])
    speed = np.linalg.norm(np.diff(mids, axis=0), axis=1) / np.linalg.norm(mids[:-1], axis=1)
    amp = EOS.period_two_amplitude(it)
    assert np.all(speed[1:20] <= amp[1:20])  # the old rule's slow centre: it would have ended the catapult at once
    assert np.all(EOS.TRACK_C * speed[k : n - 3] <= amp[k : n - 3])
