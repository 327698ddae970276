"""numerics.rare_gates.initialization.in_k / k_slack against the SymPy constraints of K."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from derivations.rare_gates import initialization as D
from derivations.rare_gates.symbols import a1, a2, r1, r2, th1, th2
from numerics.rare_gates import initialization as N
from numerics.rare_gates.experiments import in_d0

SWAP = np.array([1, 0, 4, 5, 2, 3])


def _sympy_in_k(rows: np.ndarray, m: float, M: float) -> np.ndarray:
    """Labelled K from derivations' k_constraints, evaluated in either labelling."""
    test = sp.lambdify((a1, a2, r1, r2, th1, th2, D.m, D.M), sp.And(*D.k_constraints()), "math")
    out = []
    for x in rows:
        vals = []
        for y in (x, x[SWAP]):
            args = (y[0], y[1], math.hypot(y[2], y[3]), math.hypot(y[4], y[5]))
            vals.append(bool(test(*args, math.atan2(y[3], y[2]), math.atan2(y[5], y[4]), m, M)))
        out.append(any(vals))
    return np.array(out)


def _points(n: int, seed: int) -> np.ndarray:
    """Gaussian rows and rows near K's faces (m = 0.05, M = 2 make every face likely to bind)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)) * rng.choice([0.1, 0.5, 1.0, 3.0], size=(n, 1))
    x[: n // 2, :2] = np.abs(x[: n // 2, :2])
    return x


def test_in_k_matches_sympy_constraints():
    x = _points(4000, 1)
    for m, M in ((0.05, 2.0), (1e-4, 5.0)):
        ours = N.in_k(x, m, M)
        assert np.array_equal(ours, _sympy_in_k(x, m, M))
    assert 50 < N.in_k(x, 0.05, 2.0).sum() < len(x)  # both outcomes occur: the comparison is not vacuous


def test_in_k_is_inside_d0_and_swap_symmetric():
    x = _points(4000, 2)
    k = N.in_k(x, 0.05, 2.0)
    assert k.any() and np.all(in_d0(x)[k])
    assert np.array_equal(k, N.in_k(x[:, SWAP], 0.05, 2.0))
    assert np.allclose(N.k_slack(x, 0.05, 2.0), N.k_slack(x[:, SWAP], 0.05, 2.0), rtol=0, atol=0)


def test_k_slack_faces():
    base = np.array([0.5, 0.5, 0.5 * math.cos(1.0), 0.5 * math.sin(1.0), 0.5 * math.cos(-1.0), 0.5 * math.sin(-1.0)])
    assert N.in_k(base, 0.05, 2.0)[0]
    near_opposite = base.copy()
    near_opposite[4:6] = 0.5 * math.cos(-(math.pi - 1.0 - 0.04)), 0.5 * math.sin(-(math.pi - 1.0 - 0.04))
    assert not N.in_k(near_opposite, 0.05, 2.0)[0]  # vartheta_1 - vartheta_2 = pi - 0.04 > pi - m
    assert N.k_slack(near_opposite, 0.05, 2.0)[0] == pytest.approx(-0.01, abs=1e-12)
    small_head = base.copy()
    small_head[0] = 0.04
    assert not N.in_k(small_head, 0.05, 2.0)[0]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"theta": np.zeros(5)}, "theta"),
        ({"theta": np.ones(6), "m": 0}, "m must"),
        ({"theta": np.ones(6), "M": "1e-5"}, "M must"),
    ],
)
def test_k_slack_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        N.k_slack(**kwargs)
