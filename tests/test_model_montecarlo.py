"""Closed-form risks, kernel and risk gradient against Monte Carlo means on the disk.

X is uniform on the disk of radius 2 (r = 2 sqrt(U), phi = 2 pi V). Each parameter
point has its own stream, keyed by (SEED, point index) through numpy's SeedSequence,
so a point's sample does not depend on which other points run. No global seeding.

Statistics: each comparison asks |closed form - sample mean| <= Z * SE with SE the
sample standard deviation / sqrt(N). Z = 4.5 has a two-sided normal false-alarm rate
of 6.8e-6 per comparison; with N = 2^18 draws of bounded summands the CLT error of
that rate is negligible. The module makes 7 points x 2 tasks x (1 risk + 6 gradient
components) + 7 x 3 kernels + 3 sampler moments = 122 comparisons, so the
family-wise false-alarm rate is at most 122 x 6.8e-6 = 8.3e-4 (Bonferroni). The
seed is fixed and was not tuned. Power: SEs are 2e-4 to 8e-3, so an error of a few
percent in a constant (say q = 0.6 for 2/pi) is detected.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from numerics.rare_gates import model

SEED = 20_251_129
N = 2**18
Z = 4.5  # two-sided normal tail 6.8e-6 per comparison (see module docstring)

FIXED_POINTS = [
    np.array([1.0, 0.5, 1.0, 0.2, -0.3, 0.8]),
    np.array([0.7, 0.7, 0.9, 0.3, 0.9, 0.28]),  # nearly cloned units (disagreement wedge ~0.02)
    np.array([1.3, -0.6, 0.2, -1.1, -0.25, 1.0]),  # nearly opposite units, one negative head
    np.array([2.0, 1.5, -0.4, 0.05, 0.6, -0.9]),
]
N_RANDOM = 3


def polar_thetas(rng: np.random.Generator, n: int, head: float, radius: tuple[float, float]) -> list[np.ndarray]:
    """``n`` parameter points (a1, a2, w1, w2): heads uniform in [-head, head], each hidden vector in polar
    form, its norm uniform in ``radius`` and its angle in [-pi, pi] (per point: heads, norms, angles)."""
    pts = []
    for _ in range(n):
        a = rng.uniform(-head, head, 2)
        r = rng.uniform(*radius, 2)
        ph = rng.uniform(-math.pi, math.pi, 2)
        w = [r[i] * trig(ph[i]) for i in (0, 1) for trig in (math.cos, math.sin)]  # w1 then w2
        pts.append(np.array([a[0], a[1], *w]))
    return pts


def _points():
    rng = np.random.default_rng([SEED, 10_000])  # the stream that draws the random points
    return [*FIXED_POINTS, *polar_thetas(rng, N_RANDOM, 2.0, (0.3, 2.0))]


POINTS = _points()


def disk_sample(rng: np.random.Generator, n: int) -> np.ndarray:
    """n points uniform on the disk of radius 2, shape (n, 2)."""
    r = 2.0 * np.sqrt(rng.random(n))
    phi = 2.0 * math.pi * rng.random(n)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi)])


def sample_loss_and_grad(theta: np.ndarray, x: np.ndarray, task: str):
    """Per-sample loss (f - y)^2 / 2 and its gradient in theta, relu'(0) = 0; shapes (n,), (n, 6)."""
    a1, a2 = theta[0], theta[1]
    w1, w2 = theta[2:4], theta[4:6]
    z1, z2 = x @ w1, x @ w2
    h1, h2 = np.maximum(z1, 0.0), np.maximum(z2, 0.0)
    y = np.maximum(x[:, 0], 0.0) if task == "source" else np.hypot(x[:, 0], x[:, 1])
    resid = a1 * h1 + a2 * h2 - y
    grad = np.empty((x.shape[0], 6))
    grad[:, 0] = resid * h1
    grad[:, 1] = resid * h2
    grad[:, 2:4] = (resid * a1 * (z1 > 0.0))[:, None] * x
    grad[:, 4:6] = (resid * a2 * (z2 > 0.0))[:, None] * x
    return 0.5 * resid**2, grad


def _assert_within(closed: float, samples: np.ndarray, what: str):
    mean = samples.mean()
    se = samples.std(ddof=1) / math.sqrt(samples.size)
    assert abs(closed - mean) <= Z * se, (
        f"{what}: closed form {closed!r}, MC {mean!r} +- {se:.3g} (z = {(closed - mean) / se:.2f})"
    )


@pytest.mark.parametrize("idx", range(len(POINTS)))
@pytest.mark.parametrize("task", ["source", "target"])
def test_risk_and_gradient_match_monte_carlo(idx, task):
    theta = POINTS[idx]
    rng = np.random.default_rng([SEED, idx, 0 if task == "source" else 1])
    x = disk_sample(rng, N)
    loss, grad = sample_loss_and_grad(theta, x, task)
    risk = model.source_risk(theta) if task == "source" else model.target_risk(theta)
    _assert_within(risk, loss, f"{task} risk at point {idx}")
    closed_grad = model.objective_grad(theta, task, 0.0)
    for k in range(6):
        _assert_within(closed_grad[k], grad[:, k], f"{task} gradient[{k}] at point {idx}")


@pytest.mark.parametrize("idx", range(len(POINTS)))
def test_kernel_matches_monte_carlo(idx):
    theta = POINTS[idx]
    w1, w2 = theta[2:4], theta[4:6]
    rng = np.random.default_rng([SEED, idx, 2])
    x = disk_sample(rng, N)
    h1, h2 = np.maximum(x @ w1, 0.0), np.maximum(x @ w2, 0.0)
    e1 = np.maximum(x[:, 0], 0.0)
    _assert_within(model.kernel(w1, w2), h1 * h2, f"K(w1, w2) at point {idx}")
    _assert_within(model.kernel(w1, (1.0, 0.0)), h1 * e1, f"K(w1, e1) at point {idx}")
    _assert_within(model.kernel(w2, w2), h2 * h2, f"K(w2, w2) at point {idx}")


def test_disk_sample_moments():
    # The sampler itself: E|X|^2 = 2 (radius 2) and E X = 0, each within Z SE (counted
    # in the family of the module docstring).
    x = disk_sample(np.random.default_rng([SEED, 99]), N)
    assert np.all(np.hypot(x[:, 0], x[:, 1]) <= 2.0)
    r2 = (x**2).sum(axis=1)
    _assert_within(2.0, r2, "E|X|^2")
    _assert_within(0.0, x[:, 0], "E X1")
    _assert_within(0.0, x[:, 1], "E X2")
