"""The SVS parametrisation and its invariance under gradient descent (Section 3, Appendix B, E.1).

Model (Eqs. (1)-(4)). H pathways of L square d x d layers, Omega_h = W_hL ... W_h1,
M = sum_h Omega_h, loss (1/2)||M - M_*||_F^2 with M_* = U_* Sigma_* V_*^T, and GD
W_hl <- W_hl - eta grad_{W_hl} loss.

SVS set (Definition B.1, Eq. (26)). W_hl = Q_{h,l+1} Sigma_hl Q_hl^T with fixed orthogonal
Q_h1 = V_*, Q_{h,L+1} = U_* and diagonal Sigma_hl = diag(s_{h,l,1}, ..., s_{h,l,d}).

Everything here is exact: orthogonal matrices are rational (Cayley transforms of rational
skew-symmetric matrices, so Q^T Q = I holds in exact arithmetic), the layer values are
symbols, and gradients are obtained by differentiating the loss in the d^2 entries of
every layer (generic symbolic matrices), never from the paper's formula (34).

Results:

- Lemma B.2, Eqs. (10)/(30): on the SVS set the loss is sum_i (1/2)(sum_h sigma_hi - sigma_*i)^2
  with sigma_hi = prod_l s_{h,l,i} (:func:`lemma_B2_residual`);
- Eq. (34) and the layer update (33): the gradient is W_{h,L:l+1}^T (M - M_*) W_{h,l-1:1}^T, and
  Q_{h,l+1}^T grad Q_hl = diag(r_i prod_{j != l} s_{h,j,i}) (:func:`gradient_identities`); hence a GD
  step keeps the SVS form with the same Q's (Lemma E.1, Proposition B.4) and moves each
  diagonal entry by -eta r_i prod_{j != l} s_{h,j,i};
- Proposition B.4 / Lemma E.2: on the depth-balanced manifold (s_{h,l,i} = a_hi for every l) every
  layer of pathway h gets the same update, a_hi - eta r_i a_hi^{L-1} (:func:`balanced_step`);
- Section 3.3: the initialisation (11) W_hl(0) = alpha_h^{1/L} I lies in the SVS set iff
  U_*^T V_* is diagonal with positive entries, i.e. U_* = V_* (a symmetric positive
  semi-definite target), as Lemma E.1 assumes (:func:`identity_init_offdiagonal`).

Reference: arXiv 2606.05219, Section 3 (Eqs. (1)-(12)); Appendix B (Eqs. (25)-(34)); Appendix E.1.
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy import QQ
from sympy.polys.rings import ring

from derivations.memo import memo
from derivations.validation import integer

eta = sp.Symbol("eta", positive=True)  # step size


def cayley(S: sp.Matrix) -> sp.Matrix:
    """The Cayley transform (I - S)(I + S)^{-1}: orthogonal (exactly) for skew-symmetric S.

    >>> Q = cayley(sp.Matrix([[0, sp.Rational(1, 2)], [-sp.Rational(1, 2), 0]]))
    >>> Q, sp.simplify(Q.T * Q - sp.eye(2)) == sp.zeros(2, 2)
    (Matrix([
    [3/5, -4/5],
    [4/5,  3/5]]), True)
    """
    S = sp.Matrix(S)
    if S.shape[0] != S.shape[1] or S.T != -S:
        raise ValueError("S must be a square skew-symmetric matrix")
    eye = sp.eye(S.shape[0])
    return (eye - S) * (eye + S).inv()


def rational_orthogonal(d: int, seed: int) -> sp.Matrix:
    """A deterministic exact rational orthogonal d x d matrix (Cayley transform), one per ``seed``.

    Different seeds give different matrices; entries of the skew generator are small
    rationals (seed + i + 2j) / (7 + i), so nothing is random.

    >>> Q = rational_orthogonal(3, 1); Q.T * Q == sp.eye(3)
    True
    """
    _check_sizes(d)
    S = sp.zeros(d, d)
    for i in range(d):
        for j in range(i + 1, d):
            S[i, j] = sp.Rational(seed + i + 2 * j, 7 + i)
            S[j, i] = -S[i, j]
    return cayley(S)


def _check_sizes(d, H=1, L=1):
    """d, H and L must be integers >= 1 (bools refused); a ValueError naming the first that is not."""
    for name, val in (("d", d), ("H", H), ("L", L)):
        integer(val, name, 1)


@cache
def svs_point(d: int, H: int, L: int) -> dict:
    """A symbolic point of the SVS set (Definition B.1) with a non-symmetric target.

    Keys: ``U``, ``V`` (target singular vectors, U != V), ``Q[h][l]`` for l = 0..L (Q[h][0] = V,
    Q[h][L] = U; the paper's Q_{h,l+1} is ``Q[h][l]``), ``s[h][l][i]`` the diagonal entries
    (positive symbols), ``sigma_star`` (positive symbols), ``W[h][l]`` the layers
    Q[h][l+1] diag(s[h][l]) Q[h][l]^T, ``M`` the network map and ``M_star``.

    >>> P = svs_point(2, 1, 2)
    >>> sp.simplify(P["U"].T * P["M"] * P["V"] - sp.diag(*[P["s"][0][0][i] * P["s"][0][1][i] for i in range(2)]))
    Matrix([
    [0, 0],
    [0, 0]])
    """
    _check_sizes(d, H, L)
    U = rational_orthogonal(d, 11)
    V = rational_orthogonal(d, 3)
    Q = [[V] + [rational_orthogonal(d, 20 + 5 * h + l) for l in range(1, L)] + [U] for h in range(H)]
    s = [[[sp.Symbol(f"s_{h + 1}{l + 1}{i + 1}", positive=True) for i in range(d)] for l in range(L)] for h in range(H)]
    sig = [sp.Symbol(f"sigma_star{i + 1}", positive=True) for i in range(d)]
    W = [[Q[h][l + 1] * sp.diag(*s[h][l]) * Q[h][l].T for l in range(L)] for h in range(H)]
    M = sp.zeros(d, d)
    for h in range(H):
        P = sp.eye(d)
        for l in range(L):
            P = W[h][l] * P
        M += P
    return {"U": U, "V": V, "Q": Q, "s": s, "sigma_star": sig, "W": W, "M": M, "M_star": U * sp.diag(*sig) * V.T}


def mode_values(P: dict) -> list:
    """sigma_hi = prod_l s_{h,l,i} (Eq. (28)) as a list over h of lists over i."""
    s = P["s"]
    return [[sp.Mul(*[s[h][l][i] for l in range(len(s[h]))]) for i in range(len(s[h][0]))] for h in range(len(s))]


def mode_residuals(P: dict) -> list:
    """r_i = sum_h sigma_hi - sigma_*i (Eq. (32))."""
    sv = mode_values(P)
    return [sum(sv[h][i] for h in range(len(sv))) - P["sigma_star"][i] for i in range(len(P["sigma_star"]))]


def lemma_B2_residual(d: int, H: int, L: int) -> sp.Expr:
    """(1/2)||M - M_*||_F^2 - sum_i (1/2)(sum_h sigma_hi - sigma_*i)^2 on the SVS set: 0 (Lemma B.2, (10), (30)).

    >>> lemma_B2_residual(2, 2, 2)
    0
    """
    P = svs_point(d, H, L)
    R = P["M"] - P["M_star"]
    full = sum(e**2 for e in R) / 2
    modes = sum(r**2 for r in mode_residuals(P)) / 2
    return sp.expand(full - modes)


def _mm(A, B, zero):
    """Product of two square matrices given as nested lists of ring elements."""
    n = len(A)
    return [[sum((A[i][k] * B[k][j] for k in range(n)), zero) for j in range(n)] for i in range(n)]


def _tr(A):
    return [list(row) for row in zip(*A)]


def _prod(items, one):
    out = one
    for x in items:
        out = out * x
    return out


def _chain(Ws, lo, hi, eye, zero):
    """W_hi ... W_lo (0-based, inclusive); the identity when hi < lo (convention of (34))."""
    P = eye
    for l in range(lo, hi + 1):
        P = _mm(Ws[l], P, zero)
    return P


@cache
def _gradient_ring(d: int, H: int, L: int) -> dict:
    """Generic layers, target, SVS values and the differentiated gradient, in a polynomial ring over QQ.

    Ring arithmetic (sympy.polys.rings) keeps the exact expansion fast; every identity
    checked with it is a polynomial identity over the rationals.
    """
    _check_sizes(d, H, L)
    wn = [f"w{h}_{l}_{i}{j}" for h in range(H) for l in range(L) for i in range(d) for j in range(d)]
    tn = [f"t{i}{j}" for i in range(d) for j in range(d)]
    sn = [f"s{h}_{l}_{i}" for h in range(H) for l in range(L) for i in range(d)]
    gn = [f"g{i}" for i in range(d)]
    R, *gens = ring(wn + tn + sn + gn, QQ)
    G = dict(zip(wn + tn + sn + gn, gens))
    W = [[[[G[f"w{h}_{l}_{i}{j}"] for j in range(d)] for i in range(d)] for l in range(L)] for h in range(H)]
    T = [[G[f"t{i}{j}"] for j in range(d)] for i in range(d)]
    s = [[[G[f"s{h}_{l}_{i}"] for i in range(d)] for l in range(L)] for h in range(H)]
    sig = [G[f"g{i}"] for i in range(d)]
    eye = [[R.one if i == j else R.zero for j in range(d)] for i in range(d)]
    M = [[R.zero] * d for _ in range(d)]
    for h in range(H):
        P = _chain(W[h], 0, L - 1, eye, R.zero)
        M = [[M[i][j] + P[i][j] for j in range(d)] for i in range(d)]
    loss = sum(((M[i][j] - T[i][j]) ** 2 for i in range(d) for j in range(d)), R.zero) * QQ(1, 2)
    grad = [[[[loss.diff(W[h][l][i][j]) for j in range(d)] for i in range(d)] for l in range(L)] for h in range(H)]
    P = svs_point(d, H, L)  # the same rational orthogonal frame, rebuilt in the ring
    Q = [[[[R(P["Q"][h][l][i, j]) for j in range(d)] for i in range(d)] for l in range(L + 1)] for h in range(H)]
    diag = lambda v: [[v[i] if i == j else R.zero for j in range(d)] for i in range(d)]  # noqa: E731
    Wsvs = [[_mm(_mm(Q[h][l + 1], diag(s[h][l]), R.zero), _tr(Q[h][l]), R.zero) for l in range(L)] for h in range(H)]
    Mstar = _mm(_mm(Q[0][L], diag(sig), R.zero), _tr(Q[0][0]), R.zero)
    return {
        "R": R,
        "W": W,
        "T": T,
        "M": M,
        "grad": grad,
        "s": s,
        "sigma": sig,
        "Q": Q,
        "W_svs": Wsvs,
        "M_star": Mstar,
        "eye": eye,
    }


@cache
def gradient_identities(d: int, H: int, L: int) -> dict:
    """Eq. (34) for generic layers, and Eq. (33) at a symbolic SVS point; all residuals are zero.

    - ``residual_34``: grad_{W_hl} - W_{h,L:l+1}^T (M - M_*) W_{h,l-1:1}^T for generic entries
      (the gradient obtained by differentiating the loss in every entry);
    - ``residual_33``: Q_{h,l+1}^T grad_{W_hl} Q_hl - diag(r_i prod_{j != l} s_{h,j,i}) at the SVS point
      of :func:`svs_point` (the differentiated gradient, evaluated there).

    Both are lists of SymPy matrices with every entry 0. The second shows at once that the
    gradient lies in span{Q_{h,l+1} e_i e_i^T Q_hl^T} (the SVS set is invariant, Lemma E.1)
    and that the diagonal entries move as in (33).

    >>> g = gradient_identities(2, 2, 2)
    >>> all(m.is_zero_matrix for m in g["residual_34"] + g["residual_33"])
    True
    """
    gr = _gradient_ring(d, H, L)
    R, W, T, M, eye = gr["R"], gr["W"], gr["T"], gr["M"], gr["eye"]
    zero = R.zero
    resid = [[M[i][j] - T[i][j] for j in range(d)] for i in range(d)]
    res34 = []
    for h in range(H):
        for l in range(L):
            left = _tr(_chain(W[h], l + 1, L - 1, eye, zero))
            right = _tr(_chain(W[h], 0, l - 1, eye, zero))
            f = _mm(_mm(left, resid, zero), right, zero)
            g = gr["grad"][h][l]
            res34.append(sp.Matrix(d, d, lambda i, j, f=f, g=g: (g[i][j] - f[i][j]).as_expr()))
    sub = [
        (W[h][l][i][j], gr["W_svs"][h][l][i][j]) for h in range(H) for l in range(L) for i in range(d) for j in range(d)
    ]
    sub += [(T[i][j], gr["M_star"][i][j]) for i in range(d) for j in range(d)]
    s, sig, Q = gr["s"], gr["sigma"], gr["Q"]
    r = [sum((_prod([s[h][l][i] for l in range(L)], R.one) for h in range(H)), zero) - sig[i] for i in range(d)]
    res33 = []
    for h in range(H):
        for l in range(L):
            G = [[gr["grad"][h][l][i][j].compose(sub) for j in range(d)] for i in range(d)]
            rot = _mm(_mm(_tr(Q[h][l + 1]), G, zero), Q[h][l], zero)
            want = [
                [r[i] * _prod([s[h][j][i] for j in range(L) if j != l], R.one) if i == k else zero for k in range(d)]
                for i in range(d)
            ]
            res33.append(sp.Matrix(d, d, lambda i, j, a=rot, b=want: (a[i][j] - b[i][j]).as_expr()))
    return {"residual_34": res34, "residual_33": res33}


def balanced_step(d: int, H: int, L: int) -> dict:
    """One GD step from a depth-balanced SVS point (s_{h,l,i} = a_hi for all l): Prop. B.4, Lemma E.2.

    Returns ``new[h][l][i]``, the updated diagonal entries from (33) (whose derivation is
    :func:`gradient_identities`), ``a`` the symbols a_hi, ``spread`` the list over (h, i) of
    max_l new - min_l new (each 0: the step keeps depth balance), and ``recursion``
    new - (a - eta r a^{L-1}) (Eq. (54); each 0).

    >>> out = balanced_step(2, 2, 3)
    >>> set(out["spread"]), set(out["recursion"])
    ({0}, {0})
    """
    _check_sizes(d, H, L)
    a = [[sp.Symbol(f"a_{h + 1}{i + 1}", positive=True) for i in range(d)] for h in range(H)]
    sig = [sp.Symbol(f"sigma_star{i + 1}", positive=True) for i in range(d)]
    r = [sum(a[h][i] ** L for h in range(H)) - sig[i] for i in range(d)]
    new = [
        [[a[h][i] - eta * r[i] * sp.Mul(*[a[h][i] for j in range(L) if j != l]) for i in range(d)] for l in range(L)]
        for h in range(H)
    ]
    spread = [sp.expand(new[h][l][i] - new[h][0][i]) for h in range(H) for i in range(d) for l in range(L)]
    rec = [
        sp.expand(new[h][l][i] - (a[h][i] - eta * r[i] * a[h][i] ** (L - 1)))
        for h in range(H)
        for l in range(L)
        for i in range(d)
    ]
    return {"new": new, "a": a, "spread": spread, "recursion": rec}


def identity_init_offdiagonal() -> dict:
    """Section 3.3: is W_hl(0) = c I in the SVS set, and does GD keep M diagonal in the target basis?

    With d = 2, H = 1, L = 2, c = 1/2, Sigma_* = diag(2, 1):

    - ``symmetric``: target V Sigma V^T (U = V): U^T M(t) V off-diagonal entries after one and
      two GD steps (all 0: the trajectory stays in the SVS set, Lemma E.1);
    - ``nonsymmetric``: target U Sigma V^T with U = rotation(3/5, 4/5) != V = I: c I = U D V^T
      would need U^T V = D/c diagonal, which fails; the off-diagonal entries of U^T M(1) V
      are nonzero, so the trajectory leaves the set.

    >>> out = identity_init_offdiagonal()
    >>> out["symmetric"], out["nonsymmetric"][0] != 0
    ([0, 0, 0, 0], True)
    """
    c = sp.Rational(1, 2)
    Sig = sp.diag(2, 1)
    V = rational_orthogonal(2, 3)
    U_ns = cayley(sp.Matrix([[0, sp.Rational(1, 2)], [-sp.Rational(1, 2), 0]]))
    out = {}
    for name, (U, Vt) in {"symmetric": (V, V), "nonsymmetric": (U_ns, sp.eye(2))}.items():
        Mstar = U * Sig * Vt.T
        W1, W2 = c * sp.eye(2), c * sp.eye(2)
        offs = []
        for _ in range(2):
            R = W2 * W1 - Mstar
            g1, g2 = W2.T * R, R * W1.T  # (34) with L = 2, derived in gradient_identities
            W1, W2 = W1 - sp.Rational(1, 5) * g1, W2 - sp.Rational(1, 5) * g2
            B = U.T * (W2 * W1) * Vt
            offs += [sp.simplify(B[0, 1]), sp.simplify(B[1, 0])]
        out[name] = offs
    return out


# ------------------------------------------------------------------ Appendix C.2: one frame pair for every layer
def _layer_product(layers: list) -> sp.Matrix:
    """W_L ... W_1 for ``layers`` = [W_1, ..., W_L] (the pathway map of Eq. (1))."""
    P = sp.eye(layers[0].shape[0])
    for W in layers:
        P = W * P
    return P


@memo
def uniform_frame_product(d: int = 2, L: int = 2) -> dict:
    """Appendix C.2 writes every layer as W_hl = U Sigma_hl V^T and concludes Omega_h = U (prod_l Sigma_hl) V^T.

    Exact, with the rational frames of :func:`svs_point` (U != V) and symbolic positive diagonals
    s_{l,i}, one pathway of depth L:

    - ``residual_c2``: W_L ... W_1 - U (prod_l Sigma_l) V^T for W_l = U Sigma_l V^T (nonzero);
    - ``core_residual``: U^T (W_L ... W_1) V - Sigma_L P Sigma_{L-1} P ... P Sigma_1 with P = V^T U (zero: the
      product does not telescope, a factor V^T U sits between consecutive layers);
    - ``P_minus_I``: V^T U - I. For L = 2 the rotated residual U^T residual_c2 V has entries
      s_{2,i} (P - I)_{ij} s_{1,j}, a zero polynomial iff P = I, i.e. U = V (``rotated_residual_L2``);
    - ``symmetric_residual``: the same residual with U = V (zero: C.2 holds for symmetric targets);
    - ``chained_residual``: W_L ... W_1 - U (prod Sigma_l) V^T for the chained frames of Definition B.1,
      W_l = Q_{l+1} Sigma_l Q_l^T with Q_1 = V, Q_{L+1} = U (zero: Eq. (27) telescopes);
    - ``loss_gap``: (1/2)||Omega - M_*||_F^2 - (1/2) sum_i (prod_l s_{l,i} - sigma_*i)^2 under C.2's layers with
      M_* = U Sigma_* V^T (nonzero: Eq. (37) fails there, while it holds on Definition B.1's set, MP-3.10).

    >>> out = uniform_frame_product(2, 2)
    >>> sum(e != 0 for e in out["residual_c2"]), out["core_residual"].is_zero_matrix
    (4, True)
    >>> out["chained_residual"].is_zero_matrix
    True
    >>> out["symmetric_residual"].is_zero_matrix, out["loss_gap"] == 0
    (True, False)
    """
    _check_sizes(d, 1, L)
    P0 = svs_point(d, 1, L)
    U, V, Q = P0["U"], P0["V"], P0["Q"][0]
    s = [[sp.Symbol(f"s_{l + 1}{i + 1}", positive=True) for i in range(d)] for l in range(L)]
    sig = [sp.Symbol(f"sigma_star{i + 1}", positive=True) for i in range(d)]
    Sig = [sp.diag(*s[l]) for l in range(L)]
    prodSig = sp.eye(d)
    for S in Sig:
        prodSig = S * prodSig
    Pm = V.T * U

    def residual(Uf, Vf):
        return (_layer_product([Uf * S * Vf.T for S in Sig]) - Uf * prodSig * Vf.T).applyfunc(sp.expand)

    uniform = _layer_product([U * S * V.T for S in Sig])
    core = Sig[0]
    for S in Sig[1:]:
        core = S * Pm * core
    chained = _layer_product([Q[l + 1] * Sig[l] * Q[l].T for l in range(L)])
    Mstar = U * sp.diag(*sig) * V.T
    full = sum(e**2 for e in (uniform - Mstar)) / 2
    modes = sum((sp.Mul(*[s[l][i] for l in range(L)]) - sig[i]) ** 2 for i in range(d)) / 2
    res = residual(U, V)
    out = {
        "U": U,
        "V": V,
        "s": s,
        "residual_c2": res,
        "core_residual": (U.T * uniform * V - core).applyfunc(sp.expand),
        "P_minus_I": Pm - sp.eye(d),
        "symmetric_residual": residual(V, V),
        "chained_residual": (chained - U * prodSig * V.T).applyfunc(sp.expand),
        "loss_gap": sp.expand(full - modes),
    }
    if L == 2:
        want = sp.Matrix(d, d, lambda i, j: s[1][i] * (Pm - sp.eye(d))[i, j] * s[0][j])
        out["rotated_residual_L2"] = (U.T * res * V - want).applyfunc(sp.expand)
    return out


# ------------------------------------------------------------------ Section 3.2: mode coefficients vs singular values
def _sorted_singular_values(A: sp.Matrix) -> list:
    """Exact singular values of A, non-increasing (square roots of the eigenvalues of A^T A, with multiplicity)."""
    ev = (A.T * A).eigenvals()
    vals = [sp.sqrt(sp.nsimplify(k)) for k, m in ev.items() for _ in range(m)]
    return sorted(vals, key=lambda x: -x)


def _svs_pathway(U: sp.Matrix, V: sp.Matrix, layer_values: list, seed: int) -> sp.Matrix:
    """Omega = W_L ... W_1 for chained rational frames Q_1 = V, Q_{L+1} = U and the given diagonals."""
    d, L = U.shape[0], len(layer_values)
    Q = [V] + [rational_orthogonal(d, seed + l) for l in range(1, L)] + [U]
    return _layer_product([Q[l + 1] * sp.diag(*layer_values[l]) * Q[l].T for l in range(L)])


def mode_singular_values() -> dict:
    """Section 3.2: is sigma_hi = u_*i^T Omega_h v_*i (Eq. (8)) the i-th singular value of Omega_h on the SVS set?

    d = 2, rational chained frames (U != V), exact rationals. Each example maps to ``mode``
    (sigma_hi over i, = prod_l of the layer entries, Eq. (28)), ``eq8`` (u_*i^T Omega v_*i computed from the
    matrix), ``singular`` (the singular values of Omega_h, non-increasing), ``pair_residual`` (Omega v_*i -
    sigma_hi u_*i and Omega^T u_*i - sigma_hi v_*i, all zero: (u_*i, v_*i) is a singular pair with value
    sigma_hi, or (u_*i, -v_*i) with |sigma_hi| when sigma_hi < 0) and ``ith`` (sigma_hi equals the i-th largest
    singular value, for every i):

    - ``sorted``: one pathway, L = 2, layer entries (3/2, 1/2) and (1, 1/3): sigma = (3/2, 1/6), sorted;
    - ``global_min_unsorted``: two depth-balanced pathways (L = 2) at a global minimum, per-layer values
      (1/2, 3/5) and (1, 1/5), target sigma_* = (5/4, 2/5) (non-increasing): pathway 1 has sigma_1 = (1/4, 9/25);
    - ``negative``: one pathway, L = 2, layer entries (-1/2, 1) and (1, 1): sigma = (-1/2, 1), allowed by Eq. (6)
      (any diagonal), excluded by Definition B.1 (non-negative entries).

    ``global_min_loss`` is (1/2)||Omega_1 + Omega_2 - M_*||^2 for the second example (0).

    >>> out = mode_singular_values()
    >>> [out[k]["ith"] for k in ("sorted", "global_min_unsorted", "negative")]
    [True, False, False]
    >>> out["global_min_unsorted"]["mode"], out["global_min_unsorted"]["singular"], out["global_min_loss"]
    ([1/4, 9/25], [9/25, 1/4], 0)
    >>> out["negative"]["mode"], out["negative"]["singular"]
    ([-1/2, 1], [1, 1/2])
    """
    R = sp.Rational
    U, V = rational_orthogonal(2, 11), rational_orthogonal(2, 3)
    cases = {
        "sorted": [[R(3, 2), R(1, 2)], [1, R(1, 3)]],
        "global_min_unsorted": [[R(1, 2), R(3, 5)], [R(1, 2), R(3, 5)]],
        "negative": [[R(-1, 2), 1], [1, 1]],
    }
    out: dict = {}
    for name, layers in cases.items():
        Om = _svs_pathway(U, V, layers, 40)
        mode = [sp.Mul(*[layers[l][i] for l in range(len(layers))]) for i in range(2)]
        eq8 = [sp.nsimplify((U[:, i].T * Om * V[:, i])[0, 0]) for i in range(2)]
        sv = _sorted_singular_values(Om)
        pair = [(Om * V[:, i] - mode[i] * U[:, i]).applyfunc(sp.simplify) for i in range(2)]
        pair += [(Om.T * U[:, i] - mode[i] * V[:, i]).applyfunc(sp.simplify) for i in range(2)]
        out[name] = {
            "mode": mode,
            "eq8": eq8,
            "singular": sv,
            "pair_residual": pair,
            "ith": all(sp.simplify(mode[i] - sv[i]) == 0 for i in range(2)),
        }
    Om2 = _svs_pathway(U, V, [[1, R(1, 5)], [1, R(1, 5)]], 50)
    Om1 = _svs_pathway(U, V, cases["global_min_unsorted"], 40)
    Mstar = U * sp.diag(R(5, 4), R(2, 5)) * V.T
    out["global_min_loss"] = sp.simplify(sum(e**2 for e in (Om1 + Om2 - Mstar)) / 2)
    out["global_min_pathway2"] = [sp.nsimplify((U[:, i].T * Om2 * V[:, i])[0, 0]) for i in range(2)]
    return out
