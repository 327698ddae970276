"""The averaged central flow that continues the ReLU hybrid flow past a stop (:mod:`numerics.central_flow.averaged`).

Exact small cases (a boundary met at the oscillation's centre; a law far inside one region, where
the construction is the central flow), the batched derivatives against the model's own, the
line weights' masses and gradients against differences, and bad input.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from numerics.central_flow import averaged as AV
from numerics.central_flow import models
from numerics.central_flow import spectra as SPEC

EPS = np.finfo(float).eps


def _tiny(seed: int) -> tuple[models.Model, np.ndarray]:
    rng = np.random.default_rng(seed)
    model = models.relu_model(rng.normal(size=(4, 2)), rng.normal(size=(4, 1)), 2)
    return model, rng.normal(size=model.dim)


# seed 19 of _tiny: the central flow at eta = 2 / lambda_max has s > 0 and every |z_ij| > 90 sqrt(s) |a_ij|
# (the first of seeds 0-19 whose law stays inside the region to far below rounding: mass beyond 90 sd is 0)
INSIDE_SEED = 19


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_derivatives_are_the_models(seed):
    model, th = _tiny(seed)
    rng = np.random.default_rng(100 + seed)
    P = th + rng.normal(size=(5, model.dim))
    S = (rng.uniform(size=(5, 4, 2)) > 0.5).astype(float)
    got = AV._grads(model, P, S)
    for k in range(5):
        assert np.allclose(got[k], model.grad(P[k], S[k]), rtol=1e-13, atol=1e-13)
    q = rng.normal(size=model.dim)
    curv = AV._curvs(model, th, q, S)
    for k in range(5):
        assert np.allclose(curv[k], model.curvature_grad(th, q, S[k]), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("seed", [0, 3])
def test_line_weights_masses_and_their_gradient(seed):
    model, th = _tiny(seed)
    d = 0.7 * np.random.default_rng(seed).normal(size=model.dim)
    lw = AV.line_weights(model, th, d)
    assert abs(lw["mass"].sum() - 1.0) < 8 * EPS * lw["mass"].size
    assert np.all(lw["lo"][1:] == lw["hi"][:-1]) and np.all(np.diff(lw["hi"][:-1]) > 0)
    h = 1e-6  # central differences of the masses with d frozen; the pieces keep their order for steps this small
    fd = np.array(
        [
            (AV.line_weights(model, th + h * e, d)["mass"] - AV.line_weights(model, th - h * e, d)["mass"]) / (2 * h)
            for e in np.eye(model.dim)
        ]
    ).T
    assert np.allclose(fd, lw["grad"], rtol=1e-6, atol=1e-8)  # O(h^2) truncation plus eps / h rounding


def test_expected_hessian_on_a_boundary_is_the_two_sides_average():
    model = models.relu_model(np.eye(2), np.array([[1.0], [0.5]]), 1)
    th = np.array([1.3, 0.8, 0.0])  # z_1 = x_1 . v = 0.8 > 0, z_2 = x_2 . v = 0: on the boundary of sample 2
    d = np.array([0.0, 0.0, 0.4])  # the oscillation moves z_2 only
    H = AV.expected_hessian(model, th, d)
    on, off = np.array([[1.0], [1.0]]), np.array([[1.0], [0.0]])
    assert np.allclose(H, 0.5 * (model.hessian(th, on) + model.hessian(th, off)), rtol=0, atol=4 * EPS)
    inside = th + np.array([0.0, 0.0, 50.0])  # z_2 = 50 = 125 sd of the law: one region to rounding
    assert np.array_equal(AV.expected_hessian(model, inside, d), model.hessian(inside))


def test_inside_one_region_it_is_the_central_flow():
    model, th = _tiny(INSIDE_SEED)
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th))[-1])  # the state lies on the edge
    cf = SPEC.central_flow_velocity(model, th, eta)
    s = float(cf["sigma2"][0])
    assert s > 0 and np.min(np.abs(model.preacts(th) / model.preacts(np.sqrt(s) * cf["Q"][:, 0]))) > 90
    out = AV.averaged_cf_velocity(model, th, eta)
    assert abs(out["s"] - s) <= 1e-12 * s and out["residual"] <= AV.FIXED_TOL
    # the quartic region loss and a symmetric law: E[grad L(theta + delta)] = grad L + (s/2) c exactly
    assert np.linalg.norm(out["velocity"] - cf["velocity"]) <= 1e-12 * np.linalg.norm(cf["velocity"])
    run = AV.averaged_central_flow(model, th, eta, 0.0, 0.5, [0.25, 0.5])
    assert run["max_residual"] <= AV.FIXED_TOL and np.all(run["s"] > 0)
    assert np.allclose(run["lam"] * eta / 2, 1.0, rtol=0, atol=1e-6)  # held on the edge (rtol 1e-7 over 0.5)


def test_the_fixed_point_on_a_boundary_is_complementary():
    model = models.relu_model(np.array([[1.0, 0.2], [0.3, 1.0], [1.0, -1.0]]), np.array([[1.0], [0.4], [0.2]]), 1)
    th = np.array([1.4, 0.6, 0.6])  # z_3 = 0.6 - 0.6 = 0: on the boundary of sample 3
    assert model.preacts(th)[2, 0] == 0.0
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th, model.gates(th)))[-1])
    out = AV.averaged_cf_velocity(model, th, eta)
    assert out["residual"] <= AV.FIXED_TOL and out["s"] >= 0
    assert out["rate"] <= 0 if out["s"] == 0 else abs(out["rate"]) <= 1e-6
    assert np.all(np.isfinite(out["velocity"])) and out["gap"] > 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, th: AV.averaged_cf_velocity(models.scalar_model(1.0), [1.0, 0.5], 0.9), "model must be a ReLU"),
        (lambda m, th: AV.averaged_cf_velocity(m, th, 0.0), "eta"),
        (lambda m, th: AV.averaged_cf_velocity(m, th[:-1], 0.9), "theta must have shape"),
        (lambda m, th: AV.averaged_cf_velocity(m, th, 0.9, q0=th), "q0 and s0 must be given together"),
        (lambda m, th: AV.averaged_cf_velocity(m, th, 0.9, q0=0 * th, s0=0.1), "q0 must be a nonzero"),
        (lambda m, th: AV.averaged_cf_velocity(m, th, 0.9, q0=th, s0=-1.0), "s0 must be a finite number >= 0"),
        (lambda m, th: AV.expected_hessian(m, th, th[:3]), "d must have shape"),
        (lambda m, th: AV.averaged_central_flow(m, th, 0.9, 1.0, 1.0), "T must exceed t0"),
        (lambda m, th: AV.averaged_central_flow(m, th, 0.9, 0.0, 1.0, [0.5, 2.0]), "t_eval must be"),
        (lambda m, th: AV.averaged_central_flow(m, th, 0.9, 0.0, 1.0, [0.0, 1.0]), r"inside \(0.0, 1.0\]"),
        (lambda m, th: AV.averaged_central_flow(m, th, 0.9, 0.0, 1.0, [np.nan]), "of finite times"),
        (lambda m, th: AV.averaged_central_flow(m, th, 0.9, 0.0, 1.0, rtol=0.0), "rtol"),
    ],
)
def test_bad_input_names_the_parameter(call, message):
    model, th = _tiny(0)
    with pytest.raises(ValueError, match=message):
        call(model, th)


# --- uniqueness of the fixed point (numerics.central_flow.acf_unique) ----------------------------------------


def test_p_matrix_margin_passes_and_fails():
    from numerics.central_flow import acf_unique as UQ

    assert UQ.p_matrix_margin([[3.0]]) == pytest.approx(3.0)
    assert UQ.p_matrix_margin(np.array([[2.0, -1.0], [1.0, 1.0]])) == pytest.approx(1.0)  # minors 2, 1, 3
    assert UQ.p_matrix_margin(np.array([[1.0, 2.0], [2.0, 1.0]])) == pytest.approx(-3.0)  # det < 0: not P
    assert UQ.p_matrix_margin([[-0.5]]) == pytest.approx(-0.5)  # the 1 x 1 LCP with a decreasing w(s): not P


def test_inside_one_region_the_certificate_is_the_exact_lcp():
    from numerics.central_flow import acf_unique as UQ

    model, th = _tiny(INSIDE_SEED)
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th))[-1])
    cert = UQ.uniqueness_certificate(model, th, eta, scan_points=6, starts=3)
    # w(s) = (eta |c|^2 / 2) s + b exactly (derivations.central_flow.averaged_lcp): margin 1, slope 1 on the scan
    assert abs(cert["margin"] - 1.0) < 1e-4 and np.allclose(cert["scan_margin"], 1.0, atol=1e-6)
    assert cert["contraction"] < 1e-6 and cert["unique"] and cert["same"] >= 1 and cert["other"] == 0


def test_the_certificate_on_a_boundary_and_its_failure_when_the_rate_is_reversed(monkeypatch):
    from numerics.central_flow import acf_unique as UQ

    model = models.relu_model(np.array([[1.0, 0.2], [0.3, 1.0], [1.0, -1.0]]), np.array([[1.0], [0.4], [0.2]]), 1)
    th = np.array([1.4, 0.6, 0.6])  # on the boundary of sample 3
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th, model.gates(th)))[-1])
    fp = AV.averaged_cf_velocity(model, th, eta)
    lin = UQ.linearised_lcp(model, th, eta, fp["s"], fp["q"])
    assert fp["s"] == 0 and lin["margin"] > 0 and lin["free_sv"] > 0  # s* = 0: the right derivative of g
    # on the boundary g jumps at s = 0: g(0) > 0 (theta's own region) but g(0+) < 0 (the two sides averaged), so a
    # second fixed point s > 0 lies just above 0; the scan's log-spaced low points see g < 0 there: not unique
    cert = UQ.uniqueness_certificate(model, th, eta, scan_points=6, starts=3)
    assert cert["g0"] > 0 and cert["scan_g"][0] < 0 and not cert["unique"]
    second = AV._newton(model, th, eta, fp["q"], 1e-3)  # the second fixed point, found by Newton (s = 7.8e-4)
    assert second is not None and second["s"] > 0 and second["residual"] <= AV.FIXED_TOL
    assert cert["scan_s"][0] < second["s"] < cert["scan_s"][UQ.SCAN_LOW_POINTS]  # below the s^(1/2)-spaced points
    # a rate with its sign reversed makes w(s) decreasing: the 1 x 1 P-matrix test fails (margin -1 of the exact one)
    state = AV._state
    monkeypatch.setattr(AV, "_state", lambda *a: {**(st := state(*a)), "rate": -st["rate"]})
    assert UQ.linearised_lcp(model, th, eta, fp["s"], fp["q"])["margin"] < 0


def test_the_eigen_sub_problem_agrees_from_two_starts():
    from numerics.central_flow import acf_unique as UQ

    model, th = _tiny(0)
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th))[-1])
    a = UQ.eigen_fixed_point(model, th, eta, 0.05, np.ones(model.dim))
    b = UQ.eigen_fixed_point(model, th, eta, 0.05, -np.arange(1.0, model.dim + 1))
    assert a["converged"] and b["converged"]
    assert min(np.linalg.norm(a["q"] - b["q"]), np.linalg.norm(a["q"] + b["q"])) <= UQ.SAME_Q


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda UQ, m, th: UQ.p_matrix_margin(np.ones((2, 3))), "M must be a finite square matrix"),
        (lambda UQ, m, th: UQ.eigen_fixed_point(m, th, 0.9, -1.0, th), "s must be"),
        (lambda UQ, m, th: UQ.eigen_fixed_point(m, th, 0.9, 0.1, 0 * th), "q0 must be a nonzero"),
        (lambda UQ, m, th: UQ.linearised_lcp(m, th, 0.0, 0.1, th), "eta"),
        (lambda UQ, m, th: UQ.uniqueness_certificate(m, th, 0.9, scan_points=1), "scan_points must be"),
        (lambda UQ, m, th: UQ.uniqueness_certificate(m, th, 0.9, starts=-1), "starts must be"),
        (lambda UQ, m, th: UQ.uniqueness_certificate(models.scalar_model(1.0), [1.0, 0.5], 0.9), "model must be a"),
    ],
)
def test_uniqueness_bad_input_names_the_parameter(call, message):
    from numerics.central_flow import acf_unique as UQ

    model, th = _tiny(0)
    with pytest.raises(ValueError, match=message):
        call(UQ, model, th)


def test_the_region_lcp_derivation():
    import sympy as sp

    from derivations.central_flow import averaged_lcp as ALCP

    assert ALCP.averaged_gradient_identity(1, 2, 1, 2, ((1,), (1,)))[0] == 0
    lcp = ALCP.region_lcp(1, 2, 1, 2, ((1,), (1,)))
    assert sp.simplify(lcp["M"] - lcp["M_expected"]) == 0 and lcp["curvature"] == 0
    assert ALCP.schur_is_det_ratio(2) == 0


# --- the fixed point's Newton fallback (averaged._newton) ----------------------------------------------------

# ReLU draw 8 (experiments.relu_setting(SEED, 8)) at pull-back rate gamma = 2, on its averaged continuation past the
# hybrid flow's stop, states recorded in data/relu_draw8_states.json:
# - "oscillation": the state theta of one right-hand-side call and the warm start (q0, s0) the call before left. There
#   DT_q has an eigenvalue below -1 (|DT_q| ~ 2): plain sweeps settle on a period-two orbit.
# - "fold": the same run near a fold: at its theta two fixed points (the warm branch "old", and "new", 0.04 away in q)
#   both pass the acceptance test; 1.3e-3 further on (theta + step) the old branch has ended and the solver jumps.
DRAW8 = json.loads((Path(__file__).parent / "data" / "relu_draw8_states.json").read_text())
OSC, FOLD = DRAW8["oscillation"], DRAW8["fold"]


def _draw8():
    from numerics.central_flow import experiments as E

    model, _, eta = E.relu_setting(E.SEED, 8)
    return model, eta


def test_newton_solves_a_state_where_the_plain_sweeps_oscillate(monkeypatch):
    from numerics.central_flow import acf_unique as UQ

    monkeypatch.setattr(AV, "RELAX", 2.0)
    model, eta = _draw8()
    th, q0, s0 = np.array(OSC["theta"]), np.array(OSC["q0"]), OSC["s0"]
    got = AV._newton(model, th, eta, q0, s0)
    assert got is not None and got["solver"] == "newton" and got["residual"] <= AV.FIXED_TOL
    assert abs(got["rate"]) <= AV.FIXED_TOL * (np.linalg.norm(got["c"]) * np.linalg.norm(got["velocity"]) + 4 / eta)
    # plain sweeps of q at the solution's s: a period-two orbit (q_{k+2} = q_k, q_{k+1} != q_k), never converging
    memo: dict = {}
    qs = [q0 / np.linalg.norm(q0)]
    for _ in range(80):
        qs.append(AV._state(model, th, eta, got["s"], qs[-1], memo)["q_new"])
    assert np.linalg.norm(qs[-1] - qs[-3]) < 1e-6 and np.linalg.norm(qs[-1] - qs[-2]) > 1e-3
    assert UQ.linearised_lcp(model, th, eta, got["s"], got["q"])["contraction"] > 1  # |DT_q| > 1 at the solution
    # the Anderson sweeps from the same warm start stall; the call is still solved warm (no cold restart), by Newton
    assert AV._fixed_point(model, th, eta, q0, s0) is None
    warm = AV.averaged_cf_velocity(model, th, eta, q0, s0)
    assert warm["start"] == "warm" and warm["solver"] == "newton"
    cold = AV.averaged_cf_velocity(model, th, eta)  # the same fixed point from the region's central flow
    assert abs(cold["s"] - got["s"]) <= UQ.SAME_S * got["s"] and np.linalg.norm(cold["q"] - got["q"]) <= UQ.SAME_Q


def test_newton_on_the_exact_cases():
    model, th = _tiny(INSIDE_SEED)  # inside one region: the central flow's (s, q)
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th))[-1])
    cf = SPEC.central_flow_velocity(model, th, eta)
    s, q = float(cf["sigma2"][0]), cf["Q"][:, 0]
    rng = np.random.default_rng(5)
    got = AV._newton(model, th, eta, q + 0.05 * rng.normal(size=model.dim), 1.3 * s)
    # r is linear in s here (slope -M, M = eta |c|^2 / 2): an accepted |r| <= FIXED_TOL x scale puts s within that / M
    scale = np.linalg.norm(got["c"]) * np.linalg.norm(got["velocity"]) + AV.RELAX * 2 / eta
    M = eta * float(got["c"] @ got["c"]) / 2
    assert got is not None and abs(got["s"] - s) <= 1.01 * AV.FIXED_TOL * scale / M
    assert min(np.linalg.norm(got["q"] - q), np.linalg.norm(got["q"] + q)) <= 1e-7
    # on its bound: from just above s* = 0 (r(0) < 0, here inside one region) the Fischer-Burmeister equation
    # puts s at 0
    got = AV._newton(model, th, eta / 2, q, 1e-6)  # eta halved: 2/eta = 2 lambda, so r(0) < 0 and s* = 0
    ref = AV.averaged_cf_velocity(model, th, eta / 2)
    assert ref["s"] == 0 and got is not None and got["s"] == 0 and got["rate"] <= 0


def test_near_a_fold_two_fixed_points_coexist_and_newton_gives_up_on_the_ended_branch(monkeypatch):
    """Rate gamma = 2, draw 8: the fixed point is not unique at FOLD["theta"]; the warm branch ends just after it."""
    monkeypatch.setattr(AV, "RELAX", 2.0)
    model, eta = _draw8()
    th = np.array(FOLD["theta"])
    old = AV._solve(model, th, eta, np.array(FOLD["old"]["q"]), FOLD["old"]["s"])
    new = AV._solve(model, th, eta, np.array(FOLD["new"]["q"]), FOLD["new"]["s"])
    assert old is not None and new is not None  # both accepted: |q - q^| <= FIXED_TOL and |r| <= FIXED_TOL x scale
    assert np.linalg.norm(old["q"] - new["q"]) > 0.01 and abs(old["s"] - new["s"]) > 0.01 * new["s"]
    ahead = th + np.array(FOLD["step"])
    assert AV._newton(model, ahead, eta, old["q"], old["s"]) is None  # a positive minimum of |R|: it stalls
    assert AV.averaged_cf_velocity(model, ahead, eta, old["q"], old["s"])["start"] == "cold"  # the jump


def test_the_continuation_counts_its_fallbacks():
    model, th = _tiny(INSIDE_SEED)
    eta = 2.0 / float(np.linalg.eigvalsh(model.hessian(th))[-1])
    run = AV.averaged_central_flow(model, th, eta, 0.0, 0.2, [0.1, 0.2])
    assert run["restarts"] == 0 and run["newton"] == 0 and run["damped"] == 0  # the first call starts cold: no restart
