"""The Gauss-Newton form of the Hessian (Appendix C.1, Eq. (36)), derived on generic layers.

Model (Eqs. (1)-(3), (35)). H pathways of L square d x d layers, Omega_h = W_hL ... W_h1,
M = sum_h Omega_h, loss f = (1/2)||M - M_*||_F^2. Every layer entry and every target entry is a
symbol (a generic point, not the SVS set); the loss is a polynomial over QQ.

Result (:func:`gauss_newton`), by differentiating f twice in every layer entry:

    Hess f = J^T J + sum_{a,b} R_ab Hess M_ab,      R = M - M_*,  J = d vec(M)/d theta,

as a polynomial identity in all layer and target entries. Hence

- at a zero-loss point (M_* = M(theta), substituted into the polynomials) the residual term
  vanishes identically and Hess f = J^T J: Eq. (36) holds with equality at every global minimum,
  SVS or not;
- J = [A_1, ..., A_H] with A_h = d vec(Omega_h)/d theta_h (Omega_h depends on pathway h only), so
  the (h, k) block of J^T J is A_h^T A_k, as (36) writes it;
- the residual term is block-diagonal across pathways (d^2 M/d theta_h d theta_k = 0 for h != k):
  the off-diagonal blocks equal A_h^T A_k at every point, not only at minima;
- away from a global minimum the diagonal blocks differ from A_h^T A_h by sum R_ab Hess M_ab,
  which is nonzero for L >= 2 (:func:`gauss_newton` evaluates it at a rational point with M_* = 0);
  for L = 1 M is linear in theta and the residual term is identically 0.

Parameter order is that of :func:`numerics.multipath.sharpness.flatten`: pathway by pathway,
layer W_h1 first, entries row-major.

>>> out = gauss_newton(2, 2, 2)
>>> out["identity"], out["zero_loss_residual"], out["cross_blocks_exact"], out["residual_nonzero"]
(True, True, True, True)
>>> gauss_newton(2, 2, 1)["residual_identically_zero"]
True

Reference: arXiv 2606.05219, Appendix C.1 (Eqs. (35)-(36)); Appendix C.3 (the Gram form at r_i = 0).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import sympy as sp
from sympy import QQ
from sympy.polys.rings import ring

from derivations.validation import integer


def _check(d: int, H: int, L: int) -> None:
    for name, v in (("d", d), ("H", H), ("L", L)):
        integer(v, name, 1)
    if d * d * H * L > 48:
        raise ValueError(f"the generic instance must have at most 48 layer entries; got d^2 H L = {d * d * H * L}")


def _matmul(A, B, zero):
    n = len(A)
    return [[sum((A[i][k] * B[k][j] for k in range(n)), zero) for j in range(n)] for i in range(n)]


def _point(d: int, H: int, L: int) -> list:
    """A fixed rational layer point (entries (1 + (3k mod 7))/4 with alternating signs), in flatten order."""
    n = d * d * H * L
    return [QQ((-1) ** k * (1 + (3 * k) % 7), 4) for k in range(n)]


def _value(p, vals, conv):
    """p at the point ``vals`` (one value per generator), summed term by term (fast for many terms);
    ``conv`` turns a rational coefficient into the number type of ``vals``."""
    out = 0
    for monom, coef in p.items():
        t = conv(coef)
        for v, e in zip(vals, monom):
            if e:
                t = t * v**e
        out = out + t
    return out


@cache
def _polynomials(d: int, H: int, L: int) -> dict:
    """The loss's Hessian, J^T J and the residual term as ring polynomials (upper triangle), and the flags."""
    _check(d, H, L)
    names = [f"w{h + 1}_{l + 1}_{i}{j}" for h in range(H) for l in range(L) for i in range(d) for j in range(d)]
    tnames = [f"m_{i}{j}" for i in range(d) for j in range(d)]
    R, *gens = ring(names + tnames, QQ)
    th, mg = gens[: len(names)], gens[len(names) :]
    per = d * d
    W = [
        [[[th[(h * L + l) * per + i * d + j] for j in range(d)] for i in range(d)] for l in range(L)] for h in range(H)
    ]
    eye = [[R.one if i == j else R.zero for j in range(d)] for i in range(d)]
    M = [[R.zero] * d for _ in range(d)]
    for h in range(H):
        P = eye
        for l in range(L):
            P = _matmul(W[h][l], P, R.zero)
        M = [[M[i][j] + P[i][j] for j in range(d)] for i in range(d)]
    Mflat = [M[i][j] for i in range(d) for j in range(d)]
    res = [Mflat[k] - mg[k] for k in range(per)]
    f = sum((e * e for e in res), R.zero) * QQ(1, 2)
    n = len(th)
    grad = [f.diff(t) for t in th]
    dM = [[Mk.diff(t) for t in th] for Mk in Mflat]
    flags = {
        "identity": True,
        "zero_loss_residual": True,
        "cross_blocks_exact": True,
        "residual_identically_zero": True,
    }
    block = [k // (L * per) for k in range(n)]
    subs_m = list(zip(mg, Mflat))
    hess, gn, resid = {}, {}, {}
    for r_ in range(n):
        for c_ in range(r_, n):
            hs = grad[r_].diff(th[c_])
            jtj = sum((dM[k][r_] * dM[k][c_] for k in range(per)), R.zero)
            rt = sum((res[k] * dM[k][r_].diff(th[c_]) for k in range(per)), R.zero)
            flags["identity"] &= hs - jtj - rt == 0
            flags["residual_identically_zero"] &= rt == 0
            flags["zero_loss_residual"] &= rt.compose(subs_m) == 0
            if block[r_] != block[c_]:
                flags["cross_blocks_exact"] &= rt == 0
            hess[(r_, c_)], gn[(r_, c_)], resid[(r_, c_)] = hs, jtj, rt
    return {"gens": gens, "names": names, "tnames": tnames, "n": n, "hess": hess, "gn": gn, "resid": resid, **flags}


def evaluate(d: int, H: int, L: int, theta, target) -> dict:
    """The three n x n matrices (``hessian``, ``gauss_newton``, ``residual``) at layer entries ``theta``
    (flatten order) and target entries ``target`` (row-major), as nested lists of the input's number type
    (Fractions or sympy Rationals stay exact, floats give floats)."""
    P = _polynomials(d, H, L)
    theta, target = list(theta), list(target)
    if len(theta) != P["n"] or len(target) != d * d:
        raise ValueError(f"theta must have {P['n']} entries and target {d * d}; got {len(theta)} and {len(target)}")
    vals = theta + target
    if all(isinstance(v, sp.Rational) for v in vals):

        def conv(q):
            return sp.Rational(int(q.numerator), int(q.denominator))
    elif all(isinstance(v, (int, Fraction)) and not isinstance(v, bool) for v in vals):

        def conv(q):
            return Fraction(int(q.numerator), int(q.denominator))
    else:

        def conv(q):
            return int(q.numerator) / int(q.denominator)

    n = P["n"]
    out = {}
    for key, name in (("hess", "hessian"), ("gn", "gauss_newton"), ("resid", "residual")):
        tab = P[key]
        m = [[None] * n for _ in range(n)]
        for (r_, c_), p in tab.items():
            m[r_][c_] = m[c_][r_] = _value(p, vals, conv)
        out[name] = m
    return out


@cache
def gauss_newton(d: int, H: int, L: int) -> dict:
    """Exact Hessian, Gauss-Newton term and residual term of (1/2)||M - M_*||_F^2 on generic layers.

    Returns booleans ``identity`` (Hess f - J^T J - sum R_ab Hess M_ab == 0 as polynomials in all
    layer and target entries), ``zero_loss_residual`` (the residual term is 0 after M_* := M(theta)),
    ``cross_blocks_exact`` (residual term zero in every (h, k) block with h != k),
    ``residual_identically_zero`` (as polynomials, before substituting), ``residual_nonzero``
    (nonzero at the rational point of :func:`_point` with M_* = 0); ``n`` the number of layer
    entries, ``residual_at_point`` (that rational matrix, SymPy) and ``blocks`` (index ranges of
    the pathways).
    """
    P = _polynomials(d, H, L)
    n, per = P["n"], d * d
    at = [sp.Rational(v.numerator, v.denominator) for v in _point(d, H, L)] + [sp.Integer(0)] * per
    res_pt = sp.Matrix(evaluate(d, H, L, at[:n], at[n:])["residual"])
    return {
        "identity": bool(P["identity"]),
        "zero_loss_residual": bool(P["zero_loss_residual"]),
        "cross_blocks_exact": bool(P["cross_blocks_exact"]),
        "residual_identically_zero": bool(P["residual_identically_zero"]),
        "residual_nonzero": res_pt != sp.zeros(n, n),
        "n": n,
        "residual_at_point": res_pt,
        "blocks": [(h * L * per, (h + 1) * L * per) for h in range(H)],
    }
