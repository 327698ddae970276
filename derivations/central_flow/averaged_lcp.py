"""The averaged central flow's fixed point inside one activation region is a 1 x 1 LCP (SymPy).

numerics.central_flow.averaged fixes the oscillation variance s by a complementarity condition:
s >= 0, w = -r(s) >= 0, s w = 0, with r(s) = c . v(s) + gamma (lambda - 2/eta), v(s) = -eta E[grad
L(theta + xi sqrt(s) q)], xi ~ N(0, 1), q the top unit eigenvector of the Hessian and c = grad(q^T H q).
Inside one region the loss L = (1/2) sum_i |U D_i V^T x_i - y_i|^2 is a quartic polynomial, so the
Gaussian average is a finite sum (E xi = E xi^3 = 0, E xi^2 = 1):

    E[grad L(theta + xi d)] = grad L + (1/2) grad(d^T H d)          (exact; :func:`averaged_gradient_identity`)

and with d = sqrt(s) q, grad(d^T H d) = s c, so w(s) = M s + b with

    M = eta |c|^2 / 2,    b = eta c . grad L - gamma (lambda - 2/eta)      (:func:`region_lcp`)

LCP(M, b) has one solution for every b iff M is a P-matrix: here iff c != 0. (The solution:
s = max(0, -b / M).) A mixed LCP with a free block A (the eigenvector's tangent coordinates) and
one complementary variable has one solution for every right-hand side iff A is nonsingular and the
Schur complement m - w^T A^{-1} u > 0; that Schur complement is det(full) / det(A)
(:func:`schur_is_det_ratio`): the quantity numerics.central_flow.acf_unique certifies across
boundaries, where no closed form exists.

>>> gap, _ = averaged_gradient_identity(1, 2, 1, 2, ((1,), (1,)))
>>> gap
0
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .laws import gradient, hessian, vec
from .relu import region_loss, relu_symbols


def _setting(n: int, d: int, r: int, N: int, gates: tuple):
    U, V, X, Y = relu_symbols(n, d, r, N)
    theta = list(vec(U)) + list(vec(V))
    q = sp.symbols(f"q0:{len(theta)}", real=True)
    return U, V, X, Y, theta, q, region_loss(U, V, X, Y, gates)


@cache
def averaged_gradient_identity(n: int, d: int, r: int, N: int, gates: tuple) -> tuple[sp.Expr, list]:
    """E_xi[grad L(theta + xi sqrt(s) q)] - (grad L + (s/2) grad(q^T H q)), expanded: 0 when the identity holds.

    The average is taken term by term over the polynomial in xi with the N(0, 1) moments E xi^k.
    Returns (the largest remaining entry, simplified; the gradient list).
    """
    U, V, X, Y, theta, q, L = _setting(n, d, r, N, gates)
    xi, s = sp.symbols("xi s", real=True)
    shift = {t: t + xi * sp.sqrt(s) * qk for t, qk in zip(theta, q)}
    g = gradient(L, theta)
    moments = {k: sp.Integer(0) if k % 2 else sp.factorial2(k - 1) for k in range(1, 8)}
    H = hessian(L, theta)
    qHq = sum(q[a] * H[a, b] * q[b] for a in range(len(q)) for b in range(len(q)))
    c = gradient(qHq, theta)
    gaps = []
    for gk, ck in zip(g, c):
        poly = sp.Poly(sp.expand(gk.xreplace(shift)), xi)
        avg = sum(coef * (moments[m[0]] if m[0] else 1) for m, coef in zip(poly.monoms(), poly.coeffs()))
        gaps.append(sp.expand(avg - gk - s * ck / 2))
    return next((e for e in gaps if e != 0), sp.Integer(0)), g


@cache
def region_lcp(n: int, d: int, r: int, N: int, gates: tuple) -> dict[str, sp.Expr]:
    """w(s) = -r(s) inside one region, with c, grad L and lambda as symbols: its slope M, intercept b, curvature.

    r(s) = c . v(s) + gamma (lambda - 2/eta) with v(s) = -eta (grad L + (s/2) c) (the identity above).
    """
    k = n * r + d * r
    c = sp.Matrix(sp.symbols(f"c0:{k}", real=True))
    gL = sp.Matrix(sp.symbols(f"g0:{k}", real=True))
    s, eta, gamma, lam = sp.symbols("s eta gamma lambda", positive=True)
    v = -eta * (gL + s * c / 2)
    w = -((c.T * v)[0] + gamma * (lam - 2 / eta))
    return {
        "w": sp.expand(w),
        "M": sp.simplify(sp.diff(w, s)),
        "b": sp.expand(w.subs(s, 0)),
        "curvature": sp.diff(w, s, 2),
        "M_expected": eta * (c.T * c)[0] / 2,
        "b_expected": eta * (c.T * gL)[0] - gamma * (lam - 2 / eta),
    }


def schur_is_det_ratio(k: int = 2) -> sp.Expr:
    """m - w^T A^{-1} u - det([[A, u], [w^T, m]]) / det(A) for a symbolic k x k block A: 0 (the Schur identity)."""
    A = sp.Matrix(k, k, lambda i, j: sp.Symbol(f"a{i}{j}"))
    u = sp.Matrix(sp.symbols(f"u0:{k}"))
    w = sp.Matrix(sp.symbols(f"w0:{k}"))
    m = sp.Symbol("m")
    full = A.row_join(u).col_join(w.T.row_join(sp.Matrix([[m]])))
    return sp.simplify(m - (w.T * A.inv() * u)[0] - full.det() / A.det())
