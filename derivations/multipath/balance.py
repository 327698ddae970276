"""Depth-wise balance within a pathway: the gradient-flow conservation law and its GD analogue (Section 5.2).

Model (Eqs. (1)-(4)): H pathways of L square d x d layers, Omega_h = W_hL ... W_h1,
M = sum_h Omega_h, loss (1/2)||M - M_*||_F^2. Gradients are obtained by differentiating the
loss in every entry of generic symbolic layers (never from the paper's formula (34)), with a
generic target, in a polynomial ring over the rationals (sympy.polys.rings), so every
identity below is an exact polynomial identity.

For adjacent layers l, l+1 of one pathway:

- **the law**: along gradient flow dW/dt = -grad, the matrix
  C_l = W_{l+1}^T W_{l+1} - W_l W_l^T is constant (its time derivative is the zero polynomial)
  (:func:`flow_derivatives`, ``standard``);
- **as printed** in Section 5.2, W_{l+1} W_{l+1}^T - W_l^T W_l: its time derivative along the flow
  is not zero (``printed``; :func:`printed_counterexample` gives an exact rational point where it
  is not), so the printed transposes are swapped with respect to Omega_h = W_hL ... W_h1;
- **GD**: one step W <- W - eta G changes C_l by exactly eta^2 (G_{l+1}^T G_{l+1} - G_l G_l^T)
  (:func:`gd_change`): the first-order change vanishes (that is the law), so GD keeps a
  balanced start balanced up to eta^2 per step, and exactly where G_{l+1}^T G_{l+1} = G_l G_l^T
  (e.g. on the depth-balanced SVS set, where all layers of a pathway are equal).

Reference: arXiv 2606.05219, Section 5.2 ("Contrast with Depth-Wise Balancing").

>>> flow_derivatives(2, 1, 2)["standard_zero"]
True
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import sympy as sp
from sympy import QQ
from sympy.polys.rings import ring

from derivations.multipath.svs import _mm, _tr  # products of ring-element matrices (nested lists)
from derivations.validation import integer


def _check(d: int, H: int, L: int) -> None:
    for name, v, lo, hi in (("d", d, 1, 3), ("H", H, 1, 3), ("L", L, 2, 4)):  # the exact expansion's reach
        integer(v, name, lo, hi)


def _sub(A, B):
    return [[a - b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


@cache
def _system(d: int, H: int, L: int, with_eta: bool) -> dict:
    """Generic layers W[h][l] (d x d), generic target, the loss and its differentiated gradient, in one ring."""
    _check(d, H, L)
    wn = [f"w{h}_{l}_{i}{j}" for h in range(H) for l in range(L) for i in range(d) for j in range(d)]
    tn = [f"t{i}{j}" for i in range(d) for j in range(d)]
    R, *gens = ring(wn + tn + (["eta"] if with_eta else []), QQ)
    G = dict(zip(wn + tn + (["eta"] if with_eta else []), gens))
    W = [[[[G[f"w{h}_{l}_{i}{j}"] for j in range(d)] for i in range(d)] for l in range(L)] for h in range(H)]
    T = [[G[f"t{i}{j}"] for j in range(d)] for i in range(d)]
    eye = [[R.one if i == j else R.zero for j in range(d)] for i in range(d)]
    M = [[R.zero] * d for _ in range(d)]
    for h in range(H):
        P = eye
        for l in range(L):
            P = _mm(W[h][l], P, R.zero)  # Omega_h = W_hL ... W_h1
        M = [[M[i][j] + P[i][j] for j in range(d)] for i in range(d)]
    loss = sum(((M[i][j] - T[i][j]) ** 2 for i in range(d) for j in range(d)), R.zero) * QQ(1, 2)
    grad = [[[[loss.diff(W[h][l][i][j]) for j in range(d)] for i in range(d)] for l in range(L)] for h in range(H)]
    return {"R": R, "W": W, "T": T, "grad": grad, "eta": G.get("eta")}


def _standard(W, h, l, zero):
    return _sub(_mm(_tr(W[h][l + 1]), W[h][l + 1], zero), _mm(W[h][l], _tr(W[h][l]), zero))


def _printed(W, h, l, zero):
    return _sub(_mm(W[h][l + 1], _tr(W[h][l + 1]), zero), _mm(_tr(W[h][l]), W[h][l], zero))


def _flow_derivative(S: dict, form, h: int, l: int) -> list:
    """d/dt of ``form`` (C_l or the printed matrix) along gradient flow: -sum_w dC/dw grad_w."""
    W, grad, zero = S["W"], S["grad"], S["R"].zero
    C = form(W, h, l, zero)
    d = len(C)
    layers = [(h, l), (h, l + 1)]  # C depends on these two layers only
    return [
        [
            -sum(
                (C[i][j].diff(W[a][b][p][q]) * grad[a][b][p][q] for a, b in layers for p in range(d) for q in range(d)),
                zero,
            )
            for j in range(d)
        ]
        for i in range(d)
    ]


@cache
def flow_derivatives(d: int = 2, H: int = 2, L: int = 3) -> dict:
    """Time derivatives along gradient flow of the standard law and of the printed form, for every adjacent pair.

    Returns ``standard`` and ``printed`` (lists over (h, l) of d x d lists of ring polynomials),
    ``standard_zero`` (every entry of every standard derivative is the zero polynomial) and
    ``printed_terms`` (the number of monomials of the printed form's derivative, summed over entries).
    """
    S = _system(d, H, L, False)
    pairs = [(h, l) for h in range(H) for l in range(L - 1)]
    std = [_flow_derivative(S, _standard, h, l) for h, l in pairs]
    prt = [_flow_derivative(S, _printed, h, l) for h, l in pairs]
    return {
        "pairs": pairs,
        "standard": std,
        "printed": prt,
        "standard_zero": all(e == 0 for m in std for row in m for e in row),
        "printed_terms": sum(len(e.terms()) for m in prt for row in m for e in row),
        "system": S,
    }


def printed_counterexample(d: int = 2, H: int = 2, L: int = 3, seed: int = 1) -> dict:
    """An exact rational point (layers and target) where the printed form's flow derivative is nonzero.

    Entries are small rationals k/7, k in -7..7, from a fixed linear congruential sequence
    (``seed``); returns the point, the printed derivative's largest |entry| there (a Fraction, > 0)
    and the standard law's (exactly 0).

    >>> printed_counterexample(2, 1, 2)["printed_max"] > 0
    True
    """
    D = flow_derivatives(d, H, L)
    S = D["system"]
    R = S["R"]
    x = seed
    values = []
    for _ in R.gens:
        x = (1103515245 * x + 12345) % 2**31
        values.append(QQ(x % 15 - 7, 7))
    point = list(zip(R.gens, values))

    def at(poly):
        v = poly.evaluate(point) if point else poly
        return Fraction(int(v.numerator), int(v.denominator))

    printed = [abs(at(e)) for m in D["printed"] for row in m for e in row]
    standard = [abs(at(e)) for m in D["standard"] for row in m for e in row]
    return {
        "point": {str(g): Fraction(int(v.numerator), int(v.denominator)) for g, v in point},
        "printed_max": max(printed),
        "standard_max": max(standard),
    }


@cache
def gd_change(d: int = 2, H: int = 2, L: int = 3) -> dict:
    """C_l(W - eta G) - C_l(W) - eta^2 (G_{l+1}^T G_{l+1} - G_l G_l^T) for every adjacent pair: all zero.

    ``residual_zero``: every entry is the zero polynomial (in the layers, the target and eta);
    ``first_order_zero``: the change has no term linear in eta (the conservation law again).
    """
    S = _system(d, H, L, True)
    R, W, grad, eta = S["R"], S["W"], S["grad"], S["eta"]
    zero = R.zero
    Wn = [
        [[[W[h][l][i][j] - eta * grad[h][l][i][j] for j in range(d)] for i in range(d)] for l in range(L)]
        for h in range(H)
    ]
    res, first = [], []
    for h in range(H):
        for l in range(L - 1):
            change = _sub(_standard(Wn, h, l, zero), _standard(W, h, l, zero))
            G = grad[h]
            pred = _sub(_mm(_tr(G[l + 1]), G[l + 1], zero), _mm(G[l], _tr(G[l]), zero))
            res += [change[i][j] - eta**2 * pred[i][j] for i in range(d) for j in range(d)]
            first += [change[i][j].diff(eta).evaluate([(eta, QQ(0))]) for i in range(d) for j in range(d)]
    return {"residual_zero": all(e == 0 for e in res), "first_order_zero": all(e == 0 for e in first)}


def as_sympy(poly) -> sp.Expr:
    """A ring polynomial as a SymPy expression (for display)."""
    return poly.as_expr()
