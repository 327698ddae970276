"""Unit tests of the population gradient-flow integrator (numerics/rare_gates/population_flow.py)."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from derivations.rare_gates import dynamics as dyn
from derivations.rare_gates.dynamics import alpha, beta
from derivations.rare_gates.symbols import a1, a2, lam, r1, r2
from numerics.rare_gates import population_flow as pf

LAM = 0.05
X0 = np.array([0.6, 0.4, 0.5, 0.3, 0.7, -0.2])  # a point of D (unit 1 above e1, unit 2 below)


def _logistic(B0, Bstar, t):
    return Bstar * B0 / (B0 + (Bstar - B0) * math.exp(-Bstar * t))


@pytest.mark.parametrize("task, Bstar", [("source", 1 - 2 * LAM), ("target", 2 * (2 / math.pi - LAM))])
def test_exact_logistic_solution(task, Bstar):
    # balanced proportional family: B' = B(B_* - B) exactly (derivations.rare_gates.dynamics.amplitude_transient)
    th = np.array([0.4, 0.6, 0.4, 0.0, 0.6, 0.0])
    ts = np.linspace(0.0, 10.0, 11)
    res = pf.flow(th, task, LAM, ts)
    B = pf.trajectory_observables(res.states, task, LAM)["B"]
    exact = np.array([_logistic(0.52, Bstar, t) for t in ts])
    assert np.max(np.abs(B - exact)) <= 1e-12


def test_balance_law_is_exact():
    # k_i(t) = k_i(0) e^{-2 lambda t} for any risk of the products a_i w_i (Appendix 14)
    ts = np.linspace(0.0, 20.0, 5)
    res = pf.flow(X0, "source", LAM, ts)
    ob = pf.trajectory_observables(res.states, "source", LAM)
    k0 = X0[0] ** 2 - X0[2] ** 2 - X0[3] ** 2
    assert np.max(np.abs(ob["k1"] - k0 * np.exp(-2 * LAM * ts))) <= 1e-11


def test_two_tolerances_agree_and_order():
    ts = np.array([0.0, 30.0])
    ref = pf.flow(X0, "source", LAM, ts, rtol=1e-13).states[-1]
    errs = {}
    for rtol in (1e-6, 1e-9, 1e-12):
        errs[rtol] = float(np.max(np.abs(pf.flow(X0, "source", LAM, ts, rtol=rtol).states[-1] - ref)))
    assert errs[1e-12] <= 1e-11
    assert errs[1e-9] <= 1e-8 and errs[1e-6] <= 1e-5
    assert errs[1e-12] < errs[1e-9] < errs[1e-6]


def test_one_step_convergence_order():
    # one accepted DOP853 step of size h from X0 (loose rtol so it is not rejected): local error ~ h^9
    errs = []
    for h in (0.8, 0.4, 0.2):
        one = pf.flow(X0, "source", LAM, [0.0, h], rtol=1e-3, h_init=h)
        assert one.n_steps == 1 and one.n_rejected == 0
        ref = pf.flow(X0, "source", LAM, [0.0, h], rtol=1e-14).states[-1]
        errs.append(float(np.max(np.abs(one.states[-1] - ref))))
    orders = [math.log2(errs[i] / errs[i + 1]) - 1 for i in range(2)]  # global-order estimate p = log2 ratio - 1
    assert min(orders) >= 7.0, (errs, orders)


def test_agrees_with_scipy_dop853():
    ts = np.linspace(0.0, 50.0, 6)
    ours = pf.flow(X0, "target", LAM, ts).states
    sol = solve_ivp(
        lambda t, y: pf.field(y, "target", LAM), (0.0, 50.0), X0, method="DOP853", t_eval=ts, rtol=1e-12, atol=1e-14
    )
    assert np.max(np.abs(sol.y.T - ours)) <= 1e-9


def test_logpolar_matches_cartesian():
    ts = np.linspace(0.0, 400.0, 9)
    for task in ("source", "target"):
        tt = ts if task == "source" else ts[:3]
        cart = pf.trajectory_observables(pf.flow(X0, task, LAM, tt).states, task, LAM)
        lp = pf.logpolar_observables(pf.flow(pf.to_logpolar(X0), task, LAM, tt, coords="logpolar").states)
        assert np.max(np.abs(np.log(cart["delta"] / lp["delta"]))) <= 1e-9
        assert np.max(np.abs(cart["B"] - lp["B"])) <= 1e-10
        assert np.max(np.abs(pf.from_logpolar(pf.to_logpolar(X0)) - X0)) <= 1e-15


def test_logpolar_field_matches_sympy_polar_flow():
    # the closed-form log-polar field against derivations.rare_gates.dynamics.polar_flow (SymPy, lambdified)
    rng = np.random.default_rng(7)
    for task in ("source", "target"):
        v = dyn.polar_flow(task)
        syms = (a1, a2, r1, r2, alpha, beta, lam)
        fns = {k: sp.lambdify(syms, e, "mpmath") for k, e in v.items()}
        for _ in range(5):
            A1, A2, R1, R2 = rng.uniform(0.3, 1.5, size=4)
            AL, BE = rng.uniform(0.05, 1.4, size=2)
            args = (A1, A2, R1, R2, AL, BE, LAM)
            out = np.empty(6)
            pf._logpolar_field(np.log([A1, A2, R1, R2, AL, BE]), task == "target", LAM, out)
            want = [float(fns[a1](*args)) / A1, float(fns[a2](*args)) / A2, float(fns[r1](*args)) / R1]
            want += [float(fns[r2](*args)) / R2, float(fns[alpha](*args)) / AL, float(fns[beta](*args)) / BE]
            assert np.max(np.abs(out - np.array(want))) <= 1e-12


def test_observables_batch_match_scalar():
    res = pf.flow(X0, "source", LAM, np.linspace(0.0, 100.0, 6))
    ob = pf.trajectory_observables(res.states, "source", LAM)
    for j, s in enumerate(res.states):
        o = pf.observables(s)
        for key in ("omega1", "B", "k2", "delta", "d", "e"):
            assert abs(ob[key][j] - o[key]) <= 1e-14 * max(1.0, abs(o[key]))
        assert abs(ob["dlogdelta"][j] - pf.log_delta_rate(s, "source", LAM)) <= 1e-14
        assert abs(ob["Bdot"][j] - pf.amplitude_rate(s, "source", LAM)) <= 1e-14
        assert np.max(np.abs(np.array([ob["q1"][j], ob["q2"][j]]) - pf.radial_gains(s, "source"))) <= 1e-14


def test_small_angles_keep_relative_accuracy():
    # a pair at angle 1e-200 keeps its angle's log-rate at -lambda to high relative accuracy
    th = pf.from_polar(math.sqrt(0.45), math.sqrt(0.45), math.sqrt(0.45), math.sqrt(0.45), 5e-201, -5e-201)
    res = pf.flow(th, "source", LAM, np.array([0.0, 20.0]))
    d = pf.trajectory_observables(res.states, "source", LAM)["delta"]
    assert abs(math.log(d[1] / d[0]) / 20.0 + LAM) <= 1e-9


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"task": "sauce"}, "task"),
        ({"times": [0.0, 0.0]}, "times"),
        ({"times": [1.0]}, "times"),
        ({"rtol": 0.1}, "rtol"),
        ({"rtol": -1.0}, "rtol"),
        ({"atol": 0.0}, "atol"),
        ({"lam": -0.1}, "lam"),
        ({"max_steps": 0}, "max_steps"),
        ({"h_init": float("nan")}, "h_init"),
        ({"coords": "spherical"}, "coords"),
        ({"theta0": np.zeros(6)}, "theta0"),
        ({"theta0": np.ones(5)}, "theta0"),
    ],
)
def test_bad_input(kwargs, name):
    args = {"theta0": X0, "task": "source", "lam": LAM, "times": [0.0, 1.0]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        pf.flow(args.pop("theta0"), args.pop("task"), args.pop("lam"), args.pop("times"), **args)


def test_bad_observable_input():
    with pytest.raises(ValueError, match="theta"):
        pf.to_logpolar(np.array([0.5, 0.5, 1.0, 0.1, 1.0, 0.2]))  # both units above e1: not in D
    with pytest.raises(ValueError, match="states"):
        pf.trajectory_observables(np.ones((3, 5)), "source", LAM)
    with pytest.raises(ValueError, match="task"):
        pf.trajectory_observables(X0[None, :], "sauce", LAM)


def test_max_steps_exhausted():
    with pytest.raises(RuntimeError, match="max_steps"):
        pf.flow(X0, "source", LAM, [0.0, 100.0], max_steps=3)


def test_source_normal_coordinates_project_onto_the_manifold():
    share, s1, s2 = 0.3, math.sqrt(0.3 * 0.9), math.sqrt(0.7 * 0.9)  # B_s = 0.9 at lambda = 0.05
    on_s = np.array([s1, s2, s1, 0.0, s2, 0.0])
    normal = np.array([0.0, 0.0, 0.0, 1.0, 0.0, -1.0]) * 1e-3  # transverse: orthogonal to the plane of S
    sh, xi = pf.source_normal_coordinates(np.stack([on_s, on_s + normal]), 0.05)
    assert np.allclose(sh, share, rtol=0, atol=1e-15) and np.allclose(xi[0], 0, atol=1e-15)
    assert np.allclose(xi[1], normal, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("states", "lam_value", "name"),
    [([[1, 1, 1, 0, 1, 0]], 0.5, "lam"), ([[1, 1, 1, 0, 1]], 0.05, "states"), ([[-1, 1, -1, 0, 1, 0]], 0.05, "states")],
)
def test_source_normal_coordinates_bad_input(states, lam_value, name):
    with pytest.raises(ValueError, match=name):
        pf.source_normal_coordinates(states, lam_value)
