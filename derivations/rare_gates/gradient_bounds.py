"""Bounds on per-sample gradients on bounded parameter sets (Sections 1, 3; Appendix 10; Section 7.4).

The model (Section 3): ``f(x) = a_1 relu(w_1.x) + a_2 relu(w_2.x)``, inputs on the disk of radius
``R`` (``R = 2``: ``E|X|^2 = R^2/2 = 2``), labels ``relu(x_1)`` (source) or ``|x|`` (target), both in
``[0, R]``; per-sample loss ``l = (f(x) - y(x))^2/2``. On a gate chart (``relu' = 1{w_i.x > 0}``)

    d l/d a_i = res relu(w_i.x),   d l/d w_i = res a_i 1{w_i.x > 0} x,   res = f(x) - y(x),

so ``||grad l||^2 = res^2 sum_i (relu(w_i.x)^2 + a_i^2 1{w_i.x > 0} |x|^2)``. On the box
``|a_i| <= A``, ``|w_i| <= W``: ``|f| <= 2 A W R`` and ``0 <= y <= R`` give ``|res| <= 2 A W R + R``,
and each bracket term is at most ``W^2 R^2`` or ``A^2 R^2``, hence

    ||grad l|| <= G(A, W, R) = (2 A W R + R) R sqrt(2 (A^2 + W^2)),

attained (both gates open, ``a_i = -A``, ``w_i = W x/|x|``, ``|x| = R``). The population gradient is
the mean of sample gradients, so ``||grad R_task|| <= G`` (Jensen) and the risk is Lipschitz with
constant ``G`` on every convex subset of the box (mean value theorem). A minibatch gradient is a mean
of sample gradients, so the centred batch-gradient error of Appendix 10 has ``||xi|| <= 2 G``.

>>> sample_gradient_bound().subs({A: 1, W: 1, R: DISK_RADIUS})
24
"""

from __future__ import annotations

import sympy as sp

A = sp.Symbol("A", positive=True)  # bound on |a_i|
W = sp.Symbol("W", positive=True)  # bound on |w_i|
R = sp.Symbol("R", positive=True)  # the disk's radius
DISK_RADIUS = sp.Integer(2)  # E|X|^2 = R^2/2 = 2 (derivations.rare_gates.kernels)


def gate_chart_gradient_identity() -> sp.Expr:
    """``||grad l||^2 - res^2 (sum_i (w_i.x)^2 + a_i^2 |x|^2)`` on the chart with both gates open (expands to 0).

    >>> gate_chart_gradient_identity()
    0
    """
    a1, a2, u0, u1, v0, v1, x0, x1, y = sp.symbols("a1 a2 u0 u1 v0 v1 x0 x1 y", real=True)
    s1, s2 = u0 * x0 + u1 * x1, v0 * x0 + v1 * x1  # w_i.x > 0: relu is the identity on this chart
    res = a1 * s1 + a2 * s2 - y
    loss = res**2 / 2
    grad = [sp.diff(loss, v) for v in (a1, a2, u0, u1, v0, v1)]
    norm2 = sum(g**2 for g in grad)
    return sp.expand(norm2 - res**2 * (s1**2 + s2**2 + (a1**2 + a2**2) * (x0**2 + x1**2)))


def residual_bound() -> sp.Expr:
    """``|f(x) - y(x)| <= 2 A W R + R`` on the box, for either label (``0 <= y <= R``)."""
    return 2 * A * W * R + R


def sample_gradient_bound() -> sp.Expr:
    """``G = (2 A W R + R) R sqrt(2 (A^2 + W^2))``: the sup of ``||grad l||`` over the box and the disk."""
    return residual_bound() * R * sp.sqrt(2 * (A**2 + W**2))


def noise_bound() -> sp.Expr:
    """``M = 2 G``: ``||xi|| = ||g_batch - grad R_task|| <= ||g_batch|| + ||grad R_task||``, each at most ``G``."""
    return 2 * sample_gradient_bound()


def risk_lipschitz_bound() -> sp.Expr:
    """``L_R = G``: ``||grad R_task|| <= E ||grad l|| <= G`` on the box; R_task is G-Lipschitz on its convex subsets."""
    return sample_gradient_bound()
