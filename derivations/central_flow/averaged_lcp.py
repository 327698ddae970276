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
from sympy.polys.domains import QQ

from .laws import _compose, _hessian_poly, _poly, _ring, _sum, gradient, vec
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
    g = gradient(L, theta)
    moments = {k: sp.Integer(0) if k % 2 else sp.factorial2(k - 1) for k in range(1, 8)}
    # Exact polynomial arithmetic over Q: sqrt(s) enters only through the shift xi sqrt(s) q, so it is a ring
    # generator rs standing for sqrt(s) that appears with the power of xi; after the xi-average only even powers
    # remain, and rs^(2k) is s^k.
    rs = sp.Dummy("sqrt_s")
    R = _ring(L, theta, q, [xi, s, rs])
    Lp = _poly(R, L)
    th = [_poly(R, t) for t in theta]
    qp = [_poly(R, qk) for qk in q]
    XI, S, RS = _poly(R, xi), _poly(R, s), _poly(R, rs)
    i_xi, i_s, i_rs = R.index(XI), R.index(S), R.index(RS)
    H = _hessian_poly(Lp, th)
    qHq = _sum(R, (qp[a] * H[a][b] * qp[b] for a in range(len(q)) for b in range(len(q))))
    shift = {R.index(t): t + XI * RS * qk for t, qk in zip(th, qp)}
    gaps = []
    for t in th:
        gk = Lp.diff(t)
        avg: dict = {}
        for mon, coef in _compose(gk, shift).items():
            k = mon[i_xi]
            if mon[i_rs] != k:
                raise ArithmeticError("sqrt(s) entered other than through the shift xi sqrt(s) q")
            moment = moments[k] if k else 1
            if moment == 0:
                continue
            m = list(mon)
            m[i_xi], m[i_rs], m[i_s] = 0, 0, mon[i_s] + mon[i_rs] // 2
            key = tuple(m)
            v = avg.get(key, QQ.zero) + coef * QQ(int(moment))
            if v:
                avg[key] = v
            else:
                avg.pop(key)
        mean = R.zero
        mean.update(avg)
        gaps.append((mean - gk - S * qHq.diff(t) * QQ(1, 2)).as_expr())
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
