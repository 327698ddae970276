"""Two-layer ReLU inside a fixed activation region (Appendix D; Figures 3 and 4).

Model: g(theta, x) = U sigma(V^T x), U in R^{n x r} (columns u_j), V in R^{d x r} (columns
v_j), data x_1..x_N (rows of X) with targets y_i (rows of Y), loss (reading: the sum of
squares, as the paper's sums over i in N_e suggest) L = (1/2) sum_i |g(theta, x_i) - y_i|^2.
In a fixed activation region the gates s_i = 1[V^T x_i > 0], D_i = diag(s_i), are
constants and L = (1/2) sum_i |U D_i V^T x_i - y_i|^2, a polynomial in theta.

Readings of the lost definitions (the paper keeps P_U, R_U, Pi, N_e, N'_e):
pi_i := D_i V^T x_i (the activations), Pi := sum_i pi_i pi_i^T, alpha_i := D_i delta_V^T x_i
(the gated oscillation of the pre-activations), R_alpha := sum_i E[alpha_i alpha_i^T], so
N_e = sum_i E[alpha_i pi_i^T delta_U^T U] and N'_e = sum_i E[delta_U^T U alpha_i pi_i^T] are
the paper's, and

    B~_ReLU = P_U R_alpha + R_alpha P_U - Pi R_U - R_U Pi + 2 (N_e - N'_e),

the matrix-factorisation B~ with (P_V, R_V, N, N') -> (Pi, R_alpha, N_e, N'_e) (with
X = I and all gates open it is exactly the MF matrix). Derivation: as for MF, the residual
part of <H, Sigma> is invariant along Delta_A for A in Diag(r) (the outputs are, and A
commutes with D_i), and pi_i' = -A pi_i, U' = U A, so D_{Delta_A} <H, Sigma> = tr(A B~_ReLU)
for diagonal A; only diag(B~_ReLU) is observed: B_ReLU = P_Diag(r) B~_ReLU,
Psi_A' = -eta <A, B_ReLU> and h_j' = -eta (B~_ReLU)_jj.

>>> U, V, X, Y = relu_symbols(1, 2, 2, 2)
>>> region_loss(U, V, X, Y, ((1, 1), (1, 0))).has(V[0, 1] * X[1, 0])
False
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

import sympy as sp
from sympy.polys.domains import QQ

from .laws import (
    _compose,
    _directional_poly,
    _expand,
    _expand_matrix,
    _hessian_poly,
    _loss_pairing,
    _NotPolynomial,
    _poly,
    _ring,
    _sum,
    directional,
    eta,
    gradient,
    hessian,
    matrix_symbols,
    vec,
)


def relu_symbols(n: int, d: int, r: int, N: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix, sp.Matrix]:
    """(U, V, X, Y): n x r, d x r weights, N x d inputs (rows x_i), N x n targets (rows y_i)."""
    return matrix_symbols("U", n, r), matrix_symbols("V", d, r), matrix_symbols("X", N, d), matrix_symbols("Y", N, n)


def samples(n: int, d: int, r: int, K: int) -> list[tuple[sp.Matrix, sp.Matrix]]:
    """K symbolic oscillation samples (delta_U^(k), delta_V^(k)); Sigma = sum_k delta^(k) delta^(k)T."""
    return [(matrix_symbols(f"dU{k}", n, r), matrix_symbols(f"dV{k}", d, r)) for k in range(K)]


def _gate(gates, i: int) -> sp.Matrix:
    return sp.diag(*gates[i])


def region_loss(U: sp.Matrix, V: sp.Matrix, X: sp.Matrix, Y: sp.Matrix, gates: Sequence[Sequence[int]]) -> sp.Expr:
    """L = (1/2) sum_i |U D_i V^T x_i - y_i|^2 with the gates D_i = diag(gates[i]) held fixed."""
    total = sp.Integer(0)
    for i in range(X.shape[0]):
        e = U * _gate(gates, i) * V.T * X[i, :].T - Y[i, :].T
        total += (e.T * e)[0]
    return total / 2


def contractions(
    U: sp.Matrix,
    V: sp.Matrix,
    X: sp.Matrix,
    gates: Sequence[Sequence[int]],
    deltas: Iterable[tuple[sp.Matrix, sp.Matrix]],
) -> dict[str, sp.Matrix]:
    """P_U, R_U, Pi, R_alpha, N_e, N'_e (Appendix D; readings in the module docstring)."""
    r = U.shape[1]
    out = {k: sp.zeros(r, r) for k in ("R_U", "Pi", "R_alpha", "N_e", "N'_e")}
    out["P_U"] = U.T * U
    for i in range(X.shape[0]):
        pi = _gate(gates, i) * V.T * X[i, :].T
        out["Pi"] += pi * pi.T
    for dU, dV in deltas:
        out["R_U"] += dU.T * dU
        for i in range(X.shape[0]):
            Di = _gate(gates, i)
            pi = Di * V.T * X[i, :].T
            alpha = Di * dV.T * X[i, :].T
            out["R_alpha"] += alpha * alpha.T
            out["N_e"] += alpha * pi.T * dU.T * U
            out["N'_e"] += dU.T * U * alpha * pi.T
    return out


def breaking_matrix(
    U: sp.Matrix,
    V: sp.Matrix,
    X: sp.Matrix,
    gates: Sequence[Sequence[int]],
    deltas: Iterable[tuple[sp.Matrix, sp.Matrix]],
) -> sp.Matrix:
    """B~_ReLU = P_U R_alpha + R_alpha P_U - Pi R_U - R_U Pi + 2 (N_e - N'_e)."""
    c = contractions(U, V, X, gates, deltas)
    B = c["P_U"] * c["R_alpha"] + c["R_alpha"] * c["P_U"] - c["Pi"] * c["R_U"] - c["R_U"] * c["Pi"]
    return _expand_matrix(B + 2 * (c["N_e"] - c["N'_e"]))


def project_diag(B: sp.Matrix) -> sp.Matrix:
    """P_Diag(r) B: the diagonal part (the orthogonal projection onto Diag(r))."""
    return sp.diag(*[B[j, j] for j in range(B.shape[0])])


def _region_ring(U, V, X, Y, gates, deltas, *extra):
    """(R, theta generators, <H, Sigma> of the region loss) in one polynomial ring over Q."""
    return _loss_pairing(region_loss(U, V, X, Y, gates), list(vec(U, V)), deltas, [eta], *extra)


@cache
def drift_identity(n: int, d: int, r: int, N: int, gates: tuple, K: int = 2) -> tuple[sp.Expr, sp.Expr]:
    """(ours, paper): D_{Delta_A} <H, Sigma> from the region loss's Hessian, and tr(A B~_ReLU), A diagonal symbolic.

    >>> ours, paper = drift_identity(1, 2, 2, 2, ((1, 1), (0, 1)), 1)
    >>> sp.expand(ours - paper)
    0
    """
    U, V, X, Y = relu_symbols(n, d, r, N)
    lam = sp.symbols(f"lambda0:{r}", real=True)
    A = sp.diag(*lam)
    deltas = samples(n, d, r, K)
    direction = vec(U * A, -V * A)
    R, gens, pair = _region_ring(U, V, X, Y, gates, deltas, direction)
    ours = _directional_poly(pair, gens, [_poly(R, e) for e in direction]).as_expr()
    paper = _expand((A * breaking_matrix(U, V, X, gates, deltas)).trace())
    return ours, paper


@cache
def law_rates(n: int, d: int, r: int, N: int, gates: tuple, K: int = 2) -> tuple[list, list]:
    """(ours, paper): h_j' = -(eta/2) D_{grad h_j} <H, Sigma> from the Hessian, and -eta (B~_ReLU)_jj (Figure 3)."""
    U, V, X, Y = relu_symbols(n, d, r, N)
    deltas = samples(n, d, r, K)
    R, gens, pair = _region_ring(U, V, X, Y, gates, deltas)
    minus_half_eta = -_poly(R, eta) * QQ(1, 2)
    B = breaking_matrix(U, V, X, gates, deltas)
    ours, paper = [], []
    for j in range(r):
        hj = _poly(R, (U[:, j].T * U[:, j])[0] - (V[:, j].T * V[:, j])[0])
        ours.append((minus_half_eta * _directional_poly(pair, gens, [hj.diff(t) for t in gens])).as_expr())
        paper.append(_expand(-eta * B[j, j]))
    return ours, paper


def output_rate(n: int, d: int, r: int, N: int, gates: tuple) -> sp.Matrix:
    """D_{Delta_A} of the outputs U D_i V^T x_i for A diagonal: zero (U' = U A, V' = -V A keep the function).

    >>> output_rate(2, 2, 3, 2, ((1, 0, 1), (0, 1, 1)))
    Matrix([
    [0, 0],
    [0, 0]])
    """
    U, V, X, _ = relu_symbols(n, d, r, N)
    A = sp.diag(*sp.symbols(f"lambda0:{r}", real=True))
    theta = list(vec(U, V))
    direction = vec(U * A, -V * A)
    cols = [U * _gate(gates, i) * V.T * X[i, :].T for i in range(N)]
    return sp.Matrix.hstack(*cols).applyfunc(lambda e: directional(e, theta, direction))


def gram_rates(n: int, d: int, r: int, N: int, gates: tuple) -> dict[str, sp.Matrix]:
    """P_U' - (A P_U + P_U A) and Pi' + (A Pi + Pi A) along Delta_A, A diagonal: both zero.

    >>> all(M == sp.zeros(2, 2) for M in gram_rates(1, 2, 2, 2, ((1, 1), (1, 0))).values())
    True
    """
    U, V, X, _ = relu_symbols(n, d, r, N)
    A = sp.diag(*sp.symbols(f"lambda0:{r}", real=True))
    theta = list(vec(U, V))
    direction = vec(U * A, -V * A)
    c = contractions(U, V, X, gates, [])
    rate = {k: c[k].applyfunc(lambda e: directional(e, theta, direction)) for k in ("P_U", "Pi")}
    return {
        "P_U": _expand_matrix(rate["P_U"] - (A * c["P_U"] + c["P_U"] * A)),
        "Pi": _expand_matrix(rate["Pi"] + (A * c["Pi"] + c["Pi"] * A)),
    }


def averaged_gradient_gap(loss: sp.Expr, theta: Iterable[sp.Basic], points: Sequence[Sequence[sp.Expr]]) -> sp.Matrix:
    """E[grad L(theta + delta)] - (grad L + (1/2) grad <H, Sigma>) for delta uniform on ``points``.

    ``points`` are perturbation vectors with mean 0 (Appendix D, 'Across activation
    boundaries': w' = -eta E[grad L(w + delta)], E[delta] = 0); Sigma = E[delta delta^T]. For a
    polynomial loss of degree <= 4 the gap is the third-moment term
    E[grad^4 L[delta, delta, delta]]/6, so it vanishes for a symmetric law (points = {+d, -d}).
    """
    theta = list(theta)
    k = len(points)
    pts = [sp.Matrix(p) for p in points]
    try:
        R = _ring(loss, theta, *pts)
        L = _poly(R, loss)
        gens = [_poly(R, t) for t in theta]
        if any(not t.is_generator for t in gens):
            raise _NotPolynomial("theta must be symbols")
        P = [[_poly(R, x) for x in p] for p in pts]
    except _NotPolynomial:
        g = gradient(loss, theta)
        H = hessian(loss, theta)
        Sigma = sp.zeros(len(theta), len(theta))
        avg = sp.zeros(len(theta), 1)
        for p in pts:
            Sigma += p * p.T / k
            avg += g.subs(dict(zip(theta, [t + pi for t, pi in zip(theta, p)])), simultaneous=True) / k
        cf = g + gradient(_expand((H * Sigma).trace()), theta) / 2
        return _expand_matrix(avg - cf)
    n, inv_k, half = len(gens), QQ(1, k), QQ(1, 2)
    g = [L.diff(t) for t in gens]
    H = _hessian_poly(L, gens)
    Sigma = [[_sum(R, (p[i] * p[j] for p in P)) * inv_k for j in range(n)] for i in range(n)]
    pairing = _sum(R, (H[i][j] * Sigma[j][i] for i in range(n) for j in range(n)))
    shifts = [{R.index(t): t + p[j] for j, t in enumerate(gens)} for p in P]  # theta -> theta + delta
    gap = []
    for i, t in enumerate(gens):
        avg = _sum(R, (_compose(g[i], shift) for shift in shifts)) * inv_k
        gap.append((avg - g[i] - pairing.diff(t) * half).as_expr())
    return sp.Matrix(gap)


def gates_at(V: sp.Matrix, X: sp.Matrix) -> tuple:
    """The gate pattern 1[x_i^T v_j > 0] at exact (rational) V and X, as a tuple of rows."""
    Z = X * V
    return tuple(tuple(1 if Z[i, j] > 0 else 0 for j in range(Z.shape[1])) for i in range(Z.shape[0]))


def fixed_gate_ratio(V: sp.Matrix, X: sp.Matrix, qV: sp.Matrix, sigma2: sp.Expr) -> sp.Expr:
    """min_{i,j} |z_ij| / |delta z_ij| with z = X V and delta z = sqrt(sigma^2) X q_V (Figures 3-4).

    The fixed-gate condition |z_ij| > sqrt(sigma^2) |q_{v_j}^T x_i| for all (i, j) is this ratio > 1.
    """
    Z, dZ = X * V, sp.sqrt(sigma2) * X * qV
    return min(
        (abs(Z[i, j]) / abs(dZ[i, j]) for i in range(Z.shape[0]) for j in range(Z.shape[1]) if dZ[i, j] != 0),
        default=sp.oo,
    )
