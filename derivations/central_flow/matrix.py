"""Two-layer matrix factorisation: the raw breaking matrix B~ (Appendix C, boxed; Figure 2).

Model: L(U, V) = ||U V^T - Y||_F^2 / 2 (reading: the squared Frobenius loss, grad^2 F = I;
the paper's text does not display the loss, and the boxed B~ holds for this F), U in
R^{n x r}, V in R^{m x r}. Sigma = E[delta delta^T] for a random delta = (delta_U, delta_V);
symbolically Sigma = sum_k delta_k delta_k^T over a few symbolic samples, so E[.] is the
sum over samples. Since every quantity below is linear in Sigma and the rank-one matrices
delta delta^T span Sym(D), an identity proved for symbolic samples holds for every Sigma.

Derivation (Section 3 and Appendix C). <H, Sigma> = E[delta^T H delta] splits into
- the residual part 2 <U V^T - Y, E[delta_U delta_V^T]>, constant along Delta_A because
  U V^T is invariant (this is H_c; its rate vanishes for every loss F);
- the Gauss-Newton part E||delta_U V^T + U delta_V^T||^2 = tr(R_U P_V) + tr(P_U R_V)
  + 2 tr C, with P_U = U^T U, P_V = V^T V, R_U = E[delta_U^T delta_U], R_V = E[delta_V^T delta_V],
  and the r x r cross term C := E[delta_U^T U delta_V^T V] = M V, M := E[delta_U^T U delta_V^T] (r x m;
  the paper's definition of M is lost, see :func:`cross_factor_links`).

Along Delta_A (U' = U A, V' = -V A^T, A in Sym(r)): P_U' = A P_U + P_U A,
P_V' = -(A P_V + P_V A), tr(C)' = tr(A (N - N')), so
D_{Delta_A} <H, Sigma> = tr(A B~) with

    B~ = P_U R_V + R_V P_U - P_V R_U - R_U P_V + 2 (N - N'),
    N := E[delta_V^T V delta_U^T U],   N' := E[delta_U^T U delta_V^T V],

which is the reading of the lost definitions of N and N' under which the paper's
N - N' = E[[delta_V^T V, delta_U^T U]] holds. Then Psi_A' = -eta tr(A B~) = -eta <A, sym(B~)>
and Psi' = -eta sym(B~).

>>> U, V, Y = mf_symbols(1, 1, 1)
>>> loss(U, V, Y)
(U_0_0*V_0_0 - Y_0_0)**2/2
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import sympy as sp
from sympy.polys.domains import QQ

from .laws import (
    _compose,
    _directional_poly,
    _expand,
    _expand_matrix,
    _hessian_poly,
    _JetRing,
    _loss_pairing,
    _poly,
    _ring,
    _sum,
    directional,
    generator,
    generic_loss,
    matrix_symbols,
    symmetric_symbols,
    vec,
)


def mf_symbols(n: int, m: int, r: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """(U, V, Y): symbolic n x r, m x r factors and the n x m target."""
    return matrix_symbols("U", n, r), matrix_symbols("V", m, r), matrix_symbols("Y", n, m)


def along_symmetry(n: int, m: int, r: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix, sp.Matrix, list, sp.Matrix]:
    """(U, V, Y, A, theta, Delta_A): the setting of a rate along the symmetry direction, A in Sym(r).

    U, V, Y as :func:`mf_symbols`; A symmetric (symbols ``A_i_j``); theta = vec(U, V) as a list,
    the variables that :func:`~derivations.central_flow.laws.directional` differentiates in;
    Delta_A = generator(U, V, A).
    """
    U, V, Y = mf_symbols(n, m, r)
    A = symmetric_symbols("A", r)
    return U, V, Y, A, list(vec(U, V)), generator(U, V, A)


def samples(n: int, m: int, r: int, K: int) -> list[tuple[sp.Matrix, sp.Matrix]]:
    """K symbolic oscillation samples (delta_U^(k), delta_V^(k)); Sigma = sum_k delta^(k) delta^(k)T."""
    return [(matrix_symbols(f"dU{k}", n, r), matrix_symbols(f"dV{k}", m, r)) for k in range(K)]


def loss(U: sp.Matrix, V: sp.Matrix, Y: sp.Matrix) -> sp.Expr:
    """L = ||U V^T - Y||_F^2 / 2."""
    E = U * V.T - Y
    return sum((e**2 for e in E), sp.Integer(0)) / 2


def dphi(U: sp.Matrix, V: sp.Matrix, dU: sp.Matrix, dV: sp.Matrix) -> sp.Matrix:
    """dphi(theta) delta = delta_U V^T + U delta_V^T (Appendix C, 'Hessian contraction').

    >>> U, V, _ = mf_symbols(2, 2, 1); (dU, dV), = samples(2, 2, 1, 1)
    >>> theta = list(vec(U, V)); d = list(vec(dU, dV))
    >>> J = (U * V.T).reshape(4, 1).jacobian(theta)
    >>> (J * sp.Matrix(d)).reshape(2, 2) - dphi(U, V, dU, dV) == sp.zeros(2, 2)
    True
    """
    return dU * V.T + U * dV.T


def contractions(U: sp.Matrix, V: sp.Matrix, deltas: Iterable[tuple[sp.Matrix, sp.Matrix]]) -> dict[str, sp.Matrix]:
    """P_U, P_V, R_U, R_V, N, N' (Appendix C; N, N' as reconstructed in the module docstring)."""
    r = U.shape[1]
    R_U, R_V, N, Np = (sp.zeros(r, r) for _ in range(4))
    for dU, dV in deltas:
        R_U += dU.T * dU
        R_V += dV.T * dV
        N += dV.T * V * dU.T * U
        Np += dU.T * U * dV.T * V
    return {"P_U": U.T * U, "P_V": V.T * V, "R_U": R_U, "R_V": R_V, "N": N, "N'": Np}


def breaking_matrix(U: sp.Matrix, V: sp.Matrix, deltas: Iterable[tuple[sp.Matrix, sp.Matrix]]) -> sp.Matrix:
    """B~ = P_U R_V + R_V P_U - P_V R_U - R_U P_V + 2 (N - N') (Appendix C, boxed)."""
    c = contractions(U, V, deltas)
    B = c["P_U"] * c["R_V"] + c["R_V"] * c["P_U"] - c["P_V"] * c["R_U"] - c["R_U"] * c["P_V"]
    return _expand_matrix(B + 2 * (c["N"] - c["N'"]))


def commutator_expectation(U: sp.Matrix, V: sp.Matrix, deltas: Iterable[tuple[sp.Matrix, sp.Matrix]]) -> sp.Matrix:
    """E[[delta_V^T V, delta_U^T U]], the paper's expression for N - N'."""
    r = U.shape[1]
    out = sp.zeros(r, r)
    for dU, dV in deltas:
        X, Z = dV.T * V, dU.T * U
        out += X * Z - Z * X
    return _expand_matrix(out)


def sym(M: sp.Matrix) -> sp.Matrix:
    """sym(M) = (M + M^T)/2."""
    return (M + M.T) / 2


@cache
def drift_identity(n: int, m: int, r: int, K: int = 2) -> tuple[sp.Expr, sp.Expr]:
    """(ours, paper): D_{Delta_A} <H, Sigma> from the Hessian of L, and tr(A B~), A in Sym(r) symbolic.

    >>> ours, paper = drift_identity(2, 2, 1, 1)
    >>> sp.expand(ours - paper)
    0
    """
    U, V, Y, A, theta, delta = along_symmetry(n, m, r)
    deltas = samples(n, m, r, K)
    R, gens, pair = _loss_pairing(loss(U, V, Y), theta, deltas, delta)
    ours = _directional_poly(pair, gens, [_poly(R, d) for d in delta]).as_expr()
    paper = _expand((A * breaking_matrix(U, V, deltas)).trace())
    return ours, paper


def cross_term_rate(n: int, m: int, r: int, K: int = 2) -> tuple[sp.Expr, sp.Expr]:
    """(ours, paper): D_{Delta_A} 2 tr C with C = E[delta_U^T U delta_V^T V], and 2 tr(A E[[delta_V^T V, delta_U^T U]]).

    C (r x r) is the cross term of the Gauss-Newton part; C = M V for the r x m M of :func:`cross_factor_links`.

    >>> ours, paper = cross_term_rate(2, 1, 2, 1)
    >>> sp.expand(ours - paper)
    0
    """
    U, V, _, A, theta, delta = along_symmetry(n, m, r)
    deltas = samples(n, m, r, K)
    C = sp.zeros(r, r)
    for dU, dV in deltas:
        C += dU.T * U * dV.T * V
    ours = directional(2 * C.trace(), theta, delta)
    paper = _expand(2 * (A * commutator_expectation(U, V, deltas)).trace())
    return ours, paper


def gram_rates(n: int, m: int, r: int) -> dict[str, sp.Matrix]:
    """P_U' and P_V' along Delta_A (A in Sym(r)), differentiated, minus the paper's A P_U + P_U A and -(A P_V + P_V A).

    >>> all(M == sp.zeros(2, 2) for M in gram_rates(2, 3, 2).values())
    True
    """
    U, V, _, A, theta, delta = along_symmetry(n, m, r)
    PU, PV = U.T * U, V.T * V
    dPU = PU.applyfunc(lambda e: directional(e, theta, delta))
    dPV = PV.applyfunc(lambda e: directional(e, theta, delta))
    return {
        "P_U": _expand_matrix(dPU - (A * PU + PU * A)),
        "P_V": _expand_matrix(dPV + (A * PV + PV * A)),
    }


@cache
def residual_part_rate(n: int, m: int, r: int) -> sp.Expr:
    """D_{Delta_A} <H_c, Sigma> for an arbitrary loss F (jet of order 3) and a general symmetric Sigma: 0.

    H_c(theta) = sum_a (d_a F)(phi(theta)) grad^2 phi_a; grad^2 phi_a is constant (phi is
    bilinear) and d_a F(phi(theta)) is invariant along Delta_A (Section 3, 'Collapse to the
    factor dimension').

    >>> residual_part_rate(2, 1, 1)
    0
    """
    U, V, _ = mf_symbols(n, m, r)
    A = matrix_symbols("A", r, r)
    theta = list(vec(U, V))
    phi = list(U * V.T)
    jet = generic_loss(phi, order=3)
    Sigma = symmetric_symbols("S", len(theta))
    R = _ring(jet.F_z, jet.z, list(jet.base), phi, theta, Sigma, A)
    gens = [_poly(R, t) for t in theta]
    F = _poly(R, jet.F_z)
    z = [_poly(R, zi) for zi in jet.z]
    at_phi = {R.index(zi): _poly(R, p) for zi, p in zip(z, phi)}  # z -> phi(theta): (d_a F)(phi(theta))
    at_base = {R.index(_poly(R, c)): _poly(R, p) for c, p in jet.base.items()}  # c -> phi(theta)
    S = [[_poly(R, Sigma[i, j]) for j in range(len(theta))] for i in range(len(theta))]
    n_t = range(len(theta))
    Hc_pair = R.zero
    for a, p in enumerate(phi):
        Hp = _hessian_poly(_poly(R, p), gens)
        Hc_pair += _compose(F.diff(z[a]), at_phi) * _sum(R, (Hp[i][j] * S[j][i] for i in n_t for j in n_t))
    rate = _directional_poly(Hc_pair, gens, [_poly(R, d) for d in generator(U, V, A)])
    return _compose(rate, at_base).as_expr()


@cache
def generic_loss_drift(n: int, m: int, r: int) -> tuple[sp.Expr, sp.Expr]:
    """(D_{Delta_A} <H, Sigma> for an arbitrary loss F (jet of order 3), the same with grad^2 F = I).

    The rate involves F only through K = grad^2 F(phi): neither grad F nor grad^3 F enters
    (Section 3, 'Collapse to the factor dimension'); with K = I it is tr(A B~) of the
    squared loss. Sigma is a general symmetric matrix; E[.] in B~ is then read off Sigma.

    >>> rate, _ = generic_loss_drift(1, 1, 1)
    >>> sorted(str(s) for s in rate.free_symbols if s.name.startswith('F_'))
    ['F_K_0_0']
    """
    U, V, _, _, theta, delta = along_symmetry(n, m, r)
    jet = generic_loss(list(U * V.T), order=3)
    Sigma = symmetric_symbols("S", len(theta))
    J = _JetRing(jet, theta, Sigma, delta)
    rate = _compose(_directional_poly(J.pairing(Sigma), J.theta, [J.poly(d) for d in delta]), J.at_base)
    identity = {kk: int(kk.name.split("_")[2] == kk.name.split("_")[3]) for kk in jet.hess.free_symbols}
    at_identity = {J.R.index(J.poly(kk)): J.R.ground_new(QQ(v)) for kk, v in identity.items()}
    return rate.as_expr(), _compose(rate, at_identity).as_expr()


def breaking_matrix_from_sigma(n: int, m: int, r: int) -> sp.Matrix:
    """B~ with every expectation E[delta_p delta_q] read as the entry Sigma_pq of a general symmetric Sigma."""
    U, V, _ = mf_symbols(n, m, r)
    ((dU, dV),) = samples(n, m, r, 1)
    B = breaking_matrix(U, V, [(dU, dV)])
    d = list(vec(dU, dV))
    Sigma = symmetric_symbols("S", len(d))
    out = sp.zeros(r, r)
    for i in range(r):
        for j in range(r):
            poly = sp.Poly(B[i, j], *d)
            acc = sp.Integer(0)
            for mon, coeff in poly.terms():
                idx = [k for k, e in enumerate(mon) for _ in range(e)]
                acc += coeff * Sigma[idx[0], idx[1]]
            out[i, j] = sp.expand(acc)
    return out


def cross_factor_links(
    n: int, m: int, r: int, K: int = 2
) -> dict[str, tuple[sp.Expr | sp.Matrix, sp.Expr | sp.Matrix]]:
    """The three links of the cross term under the reading M := E[delta_U^T U delta_V^T] (r x m).

    Returns ``{link: (ours, paper)}``, each pair equal after expansion:

    - ``Mdot``: D_{Delta_A} M (delta held fixed, A in Sym(r)) and the printed E[delta_U^T U A delta_V^T];
    - ``cross``: the cross term of E|delta_U V^T + U delta_V^T|_F^2, i.e. that minus
      tr(R_U P_V) + tr(P_U R_V), and 2 tr(M V);
    - ``rate``: D_{Delta_A} tr(M V) and tr(A (N - N')) (N, N' as in :func:`contractions`),
      through the product rule tr(M' V) + tr(M V'), V' = -V A.

    >>> links = cross_factor_links(2, 1, 2, 1)
    >>> all(sp.expand(o - p) == sp.zeros(*o.shape) if isinstance(o, sp.MatrixBase) else sp.expand(o - p) == 0
    ...     for o, p in links.values())
    True
    """
    U, V, _, A, theta, delta = along_symmetry(n, m, r)
    deltas = samples(n, m, r, K)
    M = sp.zeros(r, m)
    Mdot_paper = sp.zeros(r, m)
    gn = sp.Integer(0)
    for dU, dV in deltas:
        M += dU.T * U * dV.T
        Mdot_paper += dU.T * U * A * dV.T
        J = dphi(U, V, dU, dV)
        gn += sum((e**2 for e in J), sp.Integer(0))
    Mdot = M.applyfunc(lambda e: directional(e, theta, delta))
    c = contractions(U, V, deltas)
    cross = _expand(gn - (c["R_U"] * c["P_V"]).trace() - (c["P_U"] * c["R_V"]).trace())
    rate = directional((M * V).trace(), theta, delta)
    product_rule = _expand((Mdot_paper * V).trace() + (M * (-V * A)).trace())
    return {
        "Mdot": (_expand_matrix(Mdot), _expand_matrix(Mdot_paper)),
        "cross": (cross, _expand(2 * (M * V).trace())),
        "rate": (rate, _expand((A * (c["N"] - c["N'"])).trace())),
        "product_rule": (rate, product_rule),
    }
