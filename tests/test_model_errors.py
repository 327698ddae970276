"""Input validation of numerics.rare_gates.model: ValueError naming the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from numerics.rare_gates import model

THETA = np.array([1.0, 0.5, 1.0, 0.2, -0.3, 0.8])


@pytest.mark.parametrize("fn", [model.objective, model.objective_grad])
@pytest.mark.parametrize("lam", [-1e-12, -1.0, math.nan, math.inf, -math.inf, "0.1", None, [0.1]])
def test_bad_lambda(fn, lam):
    with pytest.raises(ValueError, match=r"lam \(weight decay\) must be a finite real number >= 0"):
        fn(THETA, "source", lam)


@pytest.mark.parametrize("lam", [0, 0.0, 0.05, np.float64(0.2), 3])
def test_good_lambda_accepted(lam):
    assert math.isfinite(model.objective(THETA, "target", lam))
    assert np.all(np.isfinite(model.objective_grad(THETA, "target", lam)))


def test_numpy_integer_lambda_accepted():
    assert model.objective(THETA, "source", np.int64(1)) == model.objective(THETA, "source", 1)


@pytest.mark.parametrize("fn", [model.J, model.g])
@pytest.mark.parametrize(
    "t", [-1e-300, -0.1, math.pi + 1e-15, 3.2, math.nan, math.inf, [0.1, math.nan], np.array([0.5, 4.0])]
)
def test_angle_outside_range(fn, t):
    with pytest.raises(ValueError, match=r"t must hold finite real numbers in \[0, pi\]"):
        fn(t)


@pytest.mark.parametrize("fn", [model.J, model.g])
def test_angle_endpoints_accepted(fn):
    assert np.all(np.isfinite(fn(np.array([0.0, math.pi]))))


@pytest.mark.parametrize(
    "fn",
    [
        model.source_risk,
        model.target_risk,
        lambda th: model.objective(th, "source", 0.1),
        lambda th: model.objective_grad(th, "target", 0.1),
    ],
)
@pytest.mark.parametrize("theta", [np.zeros(5), np.zeros(7), np.zeros((2, 3)), np.zeros((6, 1)), 1.0, []])
def test_theta_wrong_shape(fn, theta):
    with pytest.raises(ValueError, match=r"theta must be an array of shape \(6,\)"):
        fn(theta)


@pytest.mark.parametrize(
    "fn",
    [
        model.source_risk,
        model.target_risk,
        lambda th: model.objective(th, "target", 0.1),
        lambda th: model.objective_grad(th, "source", 0.1),
    ],
)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("pos", [0, 3, 5])
def test_theta_not_finite(fn, bad, pos):
    theta = THETA.copy()
    theta[pos] = bad
    with pytest.raises(ValueError, match=r"theta must hold finite real numbers"):
        fn(theta)


@pytest.mark.parametrize("task", ["source", "target"])
@pytest.mark.parametrize("zero", [(2, 3), (4, 5)])
def test_zero_hidden_vector_in_gradient(task, zero):
    theta = THETA.copy()
    theta[list(zero)] = 0.0
    with pytest.raises(ValueError, match=r"theta: hidden vectors w1 and w2 must be nonzero"):
        model.objective_grad(theta, task, 0.1)
    # the risk itself is defined there (a zero unit contributes nothing)
    assert math.isfinite(model.objective(theta, task, 0.1))


@pytest.mark.parametrize("task", ["source", "target"])
def test_tiny_hidden_vector_gradient(task):
    tiny = THETA.copy()
    tiny[2:4] = [1e-170, 0.0]
    small = THETA.copy()
    small[2:4] = [1e-9, 0.0]
    # the gradient depends on w1 only through its direction up to O(|w1|) terms
    np.testing.assert_allclose(
        model.objective_grad(tiny, task, 0.1), model.objective_grad(small, task, 0.1), rtol=1e-7, atol=1e-7
    )


@pytest.mark.parametrize("task", ["Source", "src", "", None, 1, "target "])
def test_unknown_task(task):
    with pytest.raises(ValueError, match=r"task must be one of 'source', 'target'"):
        model.objective(THETA, task, 0.1)
    with pytest.raises(ValueError, match=r"task must be one of 'source', 'target'"):
        model.objective_grad(THETA, task, 0.1)


@pytest.mark.parametrize(
    "name, args",
    [
        ("u", ((1.0, 2.0, 3.0), (1.0, 0.0))),
        ("v", ((1.0, 0.0), (math.nan, 1.0))),
        ("u", ((math.inf, 0.0), (1.0, 0.0))),
        ("v", ((1.0, 0.0), 1.0)),
    ],
)
def test_kernel_bad_vectors(name, args):
    with pytest.raises(ValueError, match=rf"{name} must be a finite vector of shape \(2,\)"):
        model.kernel(*args)
