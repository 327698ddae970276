"""Library tests of numerics.central_flow.boundary (GD against the averaged central flow across a boundary event)."""

import numpy as np
import pytest

from numerics.central_flow import boundary as BD
from numerics.central_flow import experiments as E
from numerics.central_flow import sweeps as SW
from numerics.central_flow.models import scalar_model


def test_problem_adds_one_teacher_inactive_sample_at_the_margin():
    model, th, eta = BD.boundary_problem(0, 3)
    base, th_base, _ = E.eos_problem("relu", 0.9, 1.002, 0.3, 0, 3)
    X, Y = model.data["X"], model.data["Y"]
    assert np.array_equal(th, th_base) and np.array_equal(X[:-1], base.data["X"]) and eta == 0.9
    w = np.linalg.lstsq(base.data["X"], base.data["Y"][:, 0], rcond=None)[0]
    assert abs(np.linalg.norm(X[-1]) - 1) < 1e-12
    assert abs(X[-1] @ w / np.linalg.norm(w) + BD.BOUNDARY_SETTING["margin"]) < 1e-12  # below the teacher's boundary
    assert Y[-1, 0] == 0.0
    again = BD.boundary_problem(0, 3)[0]
    assert np.array_equal(again.data["X"], X)  # keyed by (seed, draw)


@pytest.mark.parametrize(("kwargs", "name"), [({"margin": 1.5}, "margin"), ({"margin": -0.1}, "margin")])
def test_problem_refuses_a_bad_margin(kwargs, name):
    with pytest.raises(ValueError, match=name):
        BD.boundary_problem(0, 0, **kwargs)


def test_problem_refuses_a_negative_draw():
    with pytest.raises(ValueError, match="draw"):
        BD.boundary_problem(0, -1)


def test_frozen_model_is_the_region_loss():
    model, th, _ = BD.boundary_problem(0, 0)
    G = model.gates(th)
    fz = BD.frozen_model(model, G)
    assert fz.preacts is None
    assert np.allclose(fz.grad(th), model.grad(th), rtol=0, atol=1e-14)
    assert np.allclose(fz.hessian(th), model.hessian(th), rtol=0, atol=1e-14)
    assert abs(fz.loss(th) - model.loss(th)) < 1e-14
    # off the region it keeps the old gates: its gradient is the polynomial loss's (central differences)
    far = th + 0.3 * np.random.default_rng(0).normal(size=th.size)
    h = 1e-6
    num = np.array([(fz.loss(far + h * e) - fz.loss(far - h * e)) / (2 * h) for e in np.eye(th.size)])
    assert np.allclose(num, fz.grad(far), rtol=1e-6, atol=1e-8)


def test_frozen_model_refuses_bad_input():
    model, th, _ = BD.boundary_problem(0, 0)
    with pytest.raises(ValueError, match="gates"):
        BD.frozen_model(model, np.ones((3, 3)))
    with pytest.raises(ValueError, match="gates"):
        BD.frozen_model(model, 0.5 * np.ones(model.gates(th).shape))
    with pytest.raises(ValueError, match="model"):
        BD.frozen_model(scalar_model(1.0), np.ones((1, 1)))


def test_event_refuses_bad_input():
    model, th, eta = BD.boundary_problem(0, 0)
    with pytest.raises(ValueError, match="steps"):
        BD.boundary_event(model, th, eta, 10)
    with pytest.raises(ValueError, match="eta"):
        BD.boundary_event(model, th, -1.0, 1000)
    with pytest.raises(ValueError, match="model"):
        BD.boundary_event(scalar_model(1.0), np.array([1.0, 0.5]), 0.9, 1000)


def test_track_refuses_bad_input():
    with pytest.raises(ValueError, match="i"):
        BD.boundary_track(-1)
    with pytest.raises(ValueError, match="post"):
        BD.boundary_track(0, post=0)


def test_track_draw_zero_crosses_at_the_edge_and_tracks_before_it():
    r = BD.boundary_track(0, post=5)
    assert r["used"] and r["settle"] < r["event"] and r["band"] <= BD.BAND
    assert r["dir"] == 0 and r["pairs"][0][0] == 6  # the extra sample (the last row) turns a unit off
    assert abs(r["qjump"]) < 1e-3  # a weak event: the reason the check has no power (CF-1.track-relu-across)
    assert max(r["errors"]["acf"]["pre"].values()) <= r["tol"] < r["a"]
    assert r["acf_residual"] <= 1e-8


def test_sweep_cells_follow_the_profile():
    exp = SW.EXPERIMENTS["central_flow.boundary_track"]
    quick = exp.cells(exp.sizes("quick", {}))
    full = exp.cells(exp.sizes("full", {}))
    assert [c["kwargs"]["i"] for c in quick] == list(range(BD.BOUNDARY_SIZES["quick"]["tries"]))
    assert [c["kwargs"]["i"] for c in full] == list(range(BD.BOUNDARY_SIZES["full"]["tries"]))
    assert {c["kwargs"]["post"] for c in full} == {BD.BOUNDARY_SIZES["full"]["post"]}
