"""Checks of the gradient and risk bounds on bounded parameter sets (Sections 1, 3, 7.4; Appendix 10).

Derivation: :mod:`derivations.rare_gates.gradient_bounds` (SymPy). Sample gradients from
:func:`numerics.rare_gates.one_step.sample_gradients`, population gradients and risks from
:mod:`numerics.rare_gates.model` (float64), fixed seeds.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from derivations.rare_gates import gradient_bounds as GB
from derivations.rare_gates.risk import collapsed_risk_level
from numerics.rare_gates import model
from numerics.rare_gates import one_step as OS
from verify.audit import claim

Q = 2.0 / math.pi  # derivations.rare_gates.kernels.q_constant
RADIUS = float(GB.DISK_RADIUS)
ROUND = 1e-12  # relative: float64 rounding of O(10^3) gradient norms from ~20 operations


@cache
def _g_function():
    return sp.lambdify((GB.A, GB.W, GB.R), GB.sample_gradient_bound(), "math")


def _g_bound(a_max: float, w_max: float) -> float:
    return float(_g_function()(a_max, w_max, RADIUS))


def _lipschitz_bound(a_max: float, w_max: float) -> float:
    return float(sp.lambdify((GB.A, GB.W, GB.R), GB.risk_lipschitz_bound(), "math")(a_max, w_max, RADIUS))


def _box_points(rng, n: int, a_max: float, w_max: float) -> np.ndarray:
    """Random theta in the box |a_i| <= A, |w_i| <= W, with a quarter on its faces and corners."""
    a = rng.uniform(-a_max, a_max, size=(n, 2))
    w = rng.normal(size=(n, 2, 2))
    w *= (w_max * rng.uniform(0, 1, size=(n, 2)) ** 0.5 / np.linalg.norm(w, axis=-1))[..., None]
    k = n // 4
    a[:k] = -a_max * rng.choice([-1.0, 1.0], size=(k, 1)) * np.ones((k, 2))
    w[:k] *= (w_max / np.linalg.norm(w[:k], axis=-1))[..., None]
    return np.concatenate([a, w.reshape(n, 4)], axis=1)


@claim(
    "RG-10.xibound",
    reading="xi = g_batch - grad R_task (the weight decay is exact in both and cancels); 'bounded parameter sets' "
    "read as the box |a_i| <= A, |w_i| <= W, checked at K's box (A = W = M = 5, RG-18.Kbound's fitted M) and a "
    "box around the target tube (A = W = 1.2); inputs on the disk of radius 2 (E|X|^2 = 2), not the unit disk",
)
def test_noise_bound(audit):
    assert GB.gate_chart_gradient_identity() == 0
    rng = np.random.default_rng(10_2611)
    rows = []
    worst_ratio, worst_xi_ratio, best_ratio = 0.0, 0.0, 0.0
    for a_max, w_max in ((5.0, 5.0), (1.2, 1.2)):
        g_max = float(_g_bound(a_max, w_max))
        m_bound = 2.0 * g_max
        thetas = _box_points(rng, 120, a_max, w_max)
        sup_g, sup_xi = 0.0, 0.0
        for j, th in enumerate(thetas):
            task = ("source", "target")[j % 2]
            x = OS.sample_disk(rng, (256,))
            if j < 30:  # inputs on the rim along w_1 (both gates open when w_2 is near w_1): the bound's extremal x
                w1 = th[2:4] / np.linalg.norm(th[2:4])
                th = th.copy()
                th[4:6] = np.linalg.norm(th[4:6]) * w1
                x[:8] = RADIUS * w1
            g = OS.sample_gradients(th, task, x)
            norms = np.linalg.norm(g, axis=1)
            sup_g = max(sup_g, float(norms.max()))
            if np.linalg.norm(th[2:4]) > 0 and np.linalg.norm(th[4:6]) > 0:
                pop = model.objective_grad(th, task, 0.0)
                for b in (1, 16):
                    gb = g[: (256 // b) * b].reshape(-1, b, 6).mean(axis=1)
                    sup_xi = max(sup_xi, float(np.linalg.norm(gb - pop, axis=1).max()))
        rows.append((a_max, w_max, g_max, sup_g, m_bound, sup_xi))
        worst_ratio = max(worst_ratio, sup_g / g_max)
        worst_xi_ratio = max(worst_xi_ratio, sup_xi / m_bound)
        best_ratio = max(best_ratio, sup_g / g_max)
    for a_max, w_max, g_max, sup_g, m_bound, sup_xi in rows:
        audit.ours(
            f"G = {g_max:.5g}, sampled sup ||grad l|| = {sup_g:.5g}; M = 2G = {m_bound:.5g}, sampled sup ||xi|| = "
            f"{sup_xi:.5g}",
            label=f"box |a_i| <= {a_max:g}, |w_i| <= {w_max:g}",
        )
    audit.evidence(
        "Derived (SymPy, derivations.rare_gates.gradient_bounds): on the chart with both gates open ||grad l||^2 = "
        "res^2 (sum_i (w_i.x)^2 + a_i^2 |x|^2) exactly; with |res| <= 2AWR + R (|f| <= 2AWR, 0 <= y <= R for both "
        "labels) this gives G = (2AWR + R) R sqrt(2(A^2 + W^2)) on the box, and ||xi|| <= M = 2G (batch gradient "
        "and population gradient are means of sample gradients). Sampled: 120 theta per box (a quarter on the "
        "faces, 30 with w_2 along w_1 and inputs on the rim along w_1), 256 inputs each, both tasks, batches b = 1 "
        f"and 16 against the float64 population gradient. Largest sampled ||grad l||/G = {worst_ratio:.6f} (the "
        f"bound is attained at a_i = -A, w_1 = w_2 = W x/|x|, |x| = R), largest ||xi||/M = {worst_xi_ratio:.3f}; "
        f"tolerance 1 + {ROUND:g} (float64 rounding). The noise bound is finite on every bounded box; on K's box "
        f"(outer margin 5) it is {rows[0][4]:.4g}, which enters Lemma 7's exponent a^2/(48 M^2 ...) as a constant."
    )
    assert all(math.isfinite(r[4]) for r in rows)
    assert worst_ratio <= 1.0 + ROUND and worst_xi_ratio <= 1.0 + ROUND
    assert best_ratio >= 0.99  # the derived G is the supremum (sharp), so it is not a loose, unfalsifiable bound


def _tube_points(rng, n: int, eps: float) -> np.ndarray:
    """States within eps of the target proportional family: target clones (B in [0.1, 4q], allocation p in
    [0.05, 0.95], any direction) moved by e, ||e|| <= eps, off the common direction (Section 7's coordinates)."""
    out = []
    for _ in range(n):
        th_p = OS.target_clone_state(rng.uniform(0.1, 4 * Q), rng.uniform(0.05, 0.95), rng.uniform(-math.pi, math.pi))
        c = OS.target_coordinates(th_p)
        e = rng.normal(size=3)
        e *= eps * rng.uniform(0, 1) / np.linalg.norm(e)
        out.append(OS.from_target_coordinates(c["h"], float(c["rho"]), e))
    return np.array(out)


@claim(
    "RG-7.4.lipschitz",
    reading="the compact tube read as the states within epsilon of the target proportional family with B = "
    "omega_1 + omega_2 in [0.1, 4q] (RG-17.Bbound's range) and allocation in [0.05, 0.95]; then |a_i|, |w_i| <= "
    "sqrt(4q) + epsilon (||theta - theta_P|| = ||e||, RG-7.4.geom) and L_R <= G(sqrt(4q) + eps, sqrt(4q) + eps); "
    "epsilon = 0.1",
)
def test_risk_lipschitz_on_tube(audit):
    eps = 0.1
    rng = np.random.default_rng(74_2611)
    pts = _tube_points(rng, 200, eps)
    box = math.sqrt(4 * Q) + eps
    l_r = _lipschitz_bound(box, box)
    a_obs = float(np.abs(pts[:, :2]).max())
    w_obs = float(max(np.linalg.norm(pts[:, 2:4], axis=1).max(), np.linalg.norm(pts[:, 4:6], axis=1).max()))
    grad = np.array([np.linalg.norm(model.objective_grad(p, "target", 0.0)) for p in pts])
    risk = np.array([model.target_risk(p) for p in pts])
    i, j = rng.integers(0, len(pts), size=(2, 2000))
    keep = i != j
    quot = np.abs(risk[i] - risk[j])[keep] / np.linalg.norm(pts[i] - pts[j], axis=1)[keep]
    r_col = float(sp.N(collapsed_risk_level(), 20))
    audit.ours(l_r, 6, label=f"derived L_R on the tube (eps = {eps})")
    audit.ours(float(grad.max()), 6, label="sampled sup ||grad R_t|| on the tube")
    audit.ours(float(quot.max()), 6, label="sampled sup |R_t(theta) - R_t(theta')|/||theta - theta'||")
    audit.ours((r_col - 0.4) / l_r, 4, label="epsilon < (R_col - 0.4)/L_R with our L_R")
    audit.evidence(
        f"{len(pts)} tube states (target clones moved by ||e|| <= {eps} off the common direction): |a_i| <= "
        f"{a_obs:.3f}, |w_i| <= {w_obs:.3f}, inside the derived box {box:.3f}. The float64 population gradient "
        f"||grad R_t|| is at most {grad.max():.4g} and the difference quotient over {int(keep.sum())} random pairs "
        f"at most {quot.max():.4g}, both below the derived L_R = G = {l_r:.4g} (derivations.rare_gates."
        "gradient_bounds: ||grad R|| <= E||grad l|| <= G on the box; the box is convex, so the mean value theorem "
        "bounds the quotient; the tube itself need not be convex, but its pairs' segments stay in the box). "
        f"With R_col = 1 - 4/pi^2 = {r_col:.4f}, L_R epsilon < R_col - 0.4 holds for epsilon < "
        f"{(r_col - 0.4) / l_r:.3g} with our (worst-case) L_R; the sampled quotients suggest about "
        f"{(r_col - 0.4) / quot.max():.2g} would do. Tolerance 1 + {ROUND:g} (float64 rounding)."
    )
    assert math.isfinite(l_r) and a_obs <= box and w_obs <= box
    assert grad.max() <= l_r * (1 + ROUND) and quot.max() <= l_r * (1 + ROUND)
