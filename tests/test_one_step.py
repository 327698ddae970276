"""Unit tests of :mod:`numerics.rare_gates.one_step` (minibatch SGD and the common-gate step from a fixed theta).

Statistics: a minibatch-gradient mean over N independent minibatches is compared with the population
gradient :func:`numerics.rare_gates.model.objective_grad` componentwise, ``|mean - exact| <= Z se``
with the sample standard error; Z = 4.5 (two-sided normal tail 6.8e-6 per comparison; 5 points x 2
tasks x 6 components + 2 x 2 drift components = 64 comparisons, family-wise false alarm <= 4.4e-4).
The summands are bounded (inputs on a disk), so the CLT at N = 2^15 minibatches is accurate there.
Seeds are fixed and were not tuned.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from numerics.rare_gates import model
from numerics.rare_gates import one_step as O

Z = 4.5
N = 2**15
LAM = 0.05
POINTS = [
    np.array([0.6, 0.6, 0.6, 0.001, 0.6, -0.001]),  # target clone, tiny split
    np.array([0.8, 0.4, 0.9, 0.3, -0.2, 1.1]),
    np.array([-0.5, 1.2, 0.3, -0.7, 1.0, 0.2]),
    np.array([1.1, 0.2, 0.1, 0.9, 0.7, -0.6]),
    O.target_clone_state(0.9, 0.4, psi=0.3) + np.array([0.0, 0.0, 0.0, 0.01, 0.0, -0.01]),
]


@pytest.mark.parametrize("task", ["source", "target"])
@pytest.mark.parametrize("k", range(len(POINTS)))
def test_minibatch_gradient_mean_matches_population_gradient(task, k):
    th = POINTS[k]
    g = O.minibatch_gradients(th, task, LAM, 4, N, seed=7_000 + 10 * k + (task == "target"))
    exact = model.objective_grad(th, task, LAM)
    se = g.std(axis=0, ddof=1) / math.sqrt(N)
    assert np.all(np.abs(g.mean(axis=0) - exact) <= Z * se + 1e-15), (g.mean(axis=0) - exact, se)


def test_sgd_step_is_theta_minus_eta_gradient():
    th = POINTS[1]
    g = O.minibatch_gradients(th, "target", LAM, 8, 50, seed=3)
    post = O.sgd_step(th, "target", LAM, 0.01, 8, 50, seed=3)
    assert np.allclose(post, th - 0.01 * g, rtol=0, atol=1e-15)


def test_multi_step_runners_start_like_the_one_step_functions():
    th = POINTS[4]
    one = O.sgd_step(th, "source", LAM, 0.02, 8, 30, seed=11)
    run = O.sgd_steps(th, "source", LAM, 0.02, 8, 30, 1, seed=11)
    assert np.allclose(one, run, rtol=0, atol=1e-14)
    one = O.common_gate_step(th, LAM, 0.02, 8, 30, seed=12)
    run = O.common_gate_steps(th, LAM, 0.02, 8, 30, 1, seed=12)
    assert np.allclose(one, run, rtol=0, atol=1e-14)


@pytest.mark.parametrize("B", [0.9, 1.2])
def test_common_gate_drift_mean(B):
    """E[v | theta] = U/2 - q u (Section 7.1): read off the mean of Q, whose off-diagonal block is -eta v."""
    th = O.target_clone_state(B, 0.3, psi=-0.4)
    eta = 0.5
    Q = O.common_gate_matrix(th, LAM, eta, 4, N, seed=21)
    v = -Q[:, 1:, 0] / eta
    U = th[0] * th[2:4] + th[1] * th[4:6]
    u = (th[2:4] + th[4:6]) / np.linalg.norm(th[2:4] + th[4:6])
    exact = U / 2 - (2 / math.pi) * u
    se = v.std(axis=0, ddof=1) / math.sqrt(N)
    assert np.all(np.abs(v.mean(axis=0) - exact) <= Z * se)


def test_common_gate_step_is_the_printed_projective_map():
    """e+ = P_{Qh} Q e and rho+ - rho = h^T Q^2 e/|Qh|^2 (Section 7.2), minibatch by minibatch."""
    th = O.from_target_coordinates(np.array([0.7, 0.6, 0.2]), 0.2, np.array([0.0, -0.02, 0.06]))
    c = O.target_coordinates(th)
    h, e, rho = c["h"], c["e"], float(c["rho"])
    Q = O.common_gate_matrix(th, LAM, 0.05, 4, 64, seed=31)
    post = O.common_gate_step(th, LAM, 0.05, 4, 64, seed=31)
    cp = O.target_coordinates(post)
    for i in range(64):
        Qh, Qe = Q[i] @ h, Q[i] @ e
        e_plus = Qe - (Qh @ Qe) / (Qh @ Qh) * Qh
        assert np.allclose(cp["e"][i], e_plus, rtol=0, atol=1e-14)
        assert math.isclose(cp["rho"][i] - rho, h @ Q[i] @ Q[i] @ e / (Qh @ Qh), abs_tol=1e-14)


def test_coordinates_round_trip_and_separations():
    th = POINTS[1]
    c = O.target_coordinates(th)
    back = O.from_target_coordinates(c["h"], float(c["rho"]), c["e"])
    assert np.allclose(back, th, rtol=0, atol=1e-14)
    assert abs(float(c["h"] @ c["e"])) < 1e-14
    assert math.isclose(O.angle(np.array([1.0, 1.0, 1.0, 0.0, 0.0, 2.0])), math.pi / 2)
    assert math.isclose(O.projective_separation(np.array([2.0, 1.0, 2.0, 0.0, 0.0, 1.0])), math.sqrt(2.0))
    x = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, -1.0]])
    assert O.disagreements(np.array([1.0, 1.0, 1.0, 0.5, 1.0, -0.5]), x).tolist() == [True, False, True]
    assert O.disagreements(np.array([1.0, 1.0, 0.1, 1.0, -0.1, 1.0]), x).tolist() == [False, True, False]


def test_disk_sampler_moments():
    x = O.sample_disk(np.random.default_rng(5), (N,))
    r2 = np.sum(x * x, axis=1)
    assert r2.max() <= 4.0
    assert abs(r2.mean() - 2.0) <= Z * r2.std(ddof=1) / math.sqrt(N)  # E|X|^2 = 2


def test_same_seed_same_draws():
    a = O.sgd_step(POINTS[2], "target", LAM, 0.01, 4, 10, seed=99)
    b = O.sgd_step(POINTS[2], "target", LAM, 0.01, 4, 10, seed=np.random.default_rng(99))
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.0, 4, 10, seed=1), "eta"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, float("nan"), 4, 10, seed=1), "eta"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 0, 10, seed=1), "b"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 2.0, 10, seed=1), "b"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 4, True, seed=1), "n"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 4, 10, seed=-1), "seed"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 4, 10, seed=1.5), "seed"),
        (lambda: O.sgd_step(POINTS[0], "target", -0.1, 0.01, 4, 10, seed=1), "lam"),
        (lambda: O.sgd_step(POINTS[0], "target", True, 0.01, 4, 10, seed=1), "lam"),
        (lambda: O.sgd_step(POINTS[0], "regression", LAM, 0.01, 4, 10, seed=1), "task"),
        (lambda: O.sgd_step(np.ones(5), "target", LAM, 0.01, 4, 10, seed=1), "theta"),
        (lambda: O.sgd_step(np.full(6, np.inf), "target", LAM, 0.01, 4, 10, seed=1), "theta"),
        (lambda: O.sgd_step(POINTS[0], "target", LAM, 0.01, 2**14, 2**14, seed=1), r"n \* b"),
        (lambda: O.sgd_steps(POINTS[0], "target", LAM, 0.01, 4, 10, -1, seed=1), "steps"),
        (lambda: O.common_gate_step(POINTS[0], LAM, -1.0, 4, 10, seed=1), "eta"),
        (lambda: O.common_gate_step(np.zeros(6), LAM, 0.01, 4, 10, seed=1), "theta"),
        (lambda: O.common_gate_steps(POINTS[0], LAM, 0.01, 4, 10, 2.0, seed=1), "steps"),
        (lambda: O.target_clone_state(0.9, 1.0), "p"),
        (lambda: O.target_clone_state(-0.9, 0.5), "B"),
        (lambda: O.from_target_coordinates(np.zeros(3), 0.1, np.ones(3)), "h"),
        (lambda: O.from_target_coordinates(np.ones(3), float("inf"), np.ones(3)), "rho"),
        (lambda: O.projective_separation(np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])), "amplitudes"),
        (lambda: O.sample_gradients(POINTS[0], "target", np.ones((3, 3))), "x"),
    ],
)
def test_bad_input_raises_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_allocation_increment_form_and_bound():
    """l_a^+ - l_a from the SGD step equals Appendix 11.1's log-ratio form and obeys the per-batch bound."""
    th = np.array([0.8, 0.5, 0.7, 0.2, 0.45, -0.1])
    r = O.allocation_increment(th, LAM, 0.01, 8, 4000, seed=3)
    assert np.max(np.abs(r["dl"] - r["dl_form"])) <= 1e-14  # rounding of O(1) denominators (about 50 ulp of 1)
    assert np.all(np.abs(r["dl"]) <= r["bound"] * (1 + 1e-9))
    assert r["disagree"].any() and r["wedge_u"] <= 1 + 1e-12  # |u_i.X| <= d |X| on a disagreement


def test_coupled_runs_agree_until_the_first_disagreement():
    th = O.target_clone_state(0.9, 0.5) + np.array([0.0, 0.0, 0.0, 0.01, 0.0, -0.01])
    r = O.coupled_target_runs(th, LAM, 0.01, 8, 6, 200, seed=5, risk_every=50)
    assert np.all(r["dev_before"] <= 1e-12)  # summation order only
    dis = r["n_dis"] < 200
    assert dis.any() and np.all(r["dev_after"][dis] > 1e-8)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: O.allocation_increment(np.array([0.0, 1, 1, 0, 1, 0]), LAM, 0.01, 4, 2, 0), "amplitudes"),
        (lambda: O.allocation_increment(POINTS[1], LAM, -0.01, 4, 2, 0), "eta"),
        (lambda: O.coupled_target_runs(POINTS[0], LAM, 0.01, 4, 2, 0, 0), "steps"),
        (lambda: O.coupled_target_runs(POINTS[0], LAM, 0.01, 4, 2, 5, 0, risk_every=0), "risk_every"),
    ],
)
def test_new_helpers_reject_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
