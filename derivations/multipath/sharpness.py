"""Mode-wise sharpness at global minima and the equal-split theorem (Section 4, Appendices C-D).

Setting. Homogeneous depth L, H pathways, SVS set restricted to the depth-balanced
manifold: every layer of pathway h carries a_hi = sigma_hi^{1/L} in mode i, so
sigma_hi = a_hi^L, and a global minimum has sum_h sigma_hi = sigma_*i for every i.

Results (each function's docstring has its doctest):

- Jacobian of sigma_hi in one layer value: d(prod_l x_l)/dx_l = sigma_hi^{1-1/L} at
  x_l = sigma_hi^{1/L} (:func:`layer_derivative`), so ||J_i||^2 = L sum_h sigma_hi^{2-2/L}
  (Eqs. (13), (39)-(40), Proposition 4.1, Lemma C.1);
- the full Hessian of the d x d parametrisation at a rational depth-balanced global minimum,
  exactly (:func:`full_hessian`): it equals J^T J (J the Jacobian of vec M); in the basis
  U e_i e_j^T V^T the matrix J J^T is diagonal with entries
  K_ij = sum_h sum_{l=1}^L a_hi^{2(L-l)} a_hj^{2(l-1)}; K_ii = lambda_i. So mode i contributes the
  single eigenvalue lambda_i (its rank-one block, and the Hessian of L_i has rank one),
  while the cross-mode directions (i != j) carry the further nonzero eigenvalues K_ij,
  which never exceed (lambda_i + lambda_j)/2 (:func:`cross_mode_bound`); hence the
  sharpness is max_i lambda_i as the paper states;
- Theorem 4.2 / C.2 / D.2 (:func:`equal_split`): at the equal split sum_h = sigma_*,
  lambda = L H^{2/L-1} sigma_*^{2-2/L} (Eq. (15)); x^p is strictly convex for p = 2 - 2/L > 1
  (L > 2), linear at L = 2 (every split gives 2 sigma_*), and constant (x^0) at L = 1 where
  every split gives H; for 1 < L < 2 (not a network depth) p in (0, 1) and the equal split
  maximises instead;
- the reduction factor (16)/(43) H^{2/L-1}: d/dH = (2/L - 1) H^{2/L-2} < 0 for L > 2 and
  d/dL = -2 log(H) H^{2/L-1}/L^2 < 0 for H > 1 (:func:`reduction_factor`).

Reference: arXiv 2606.05219, Section 4 (Eqs. (13)-(16)); Appendix C (Eqs. (35)-(44)); Appendix D.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import sympy as sp
from sympy import QQ
from sympy.polys.rings import ring

from ..memo import memo
from .gauss_newton import _value
from .svs import _chain, svs_point

L = sp.Symbol("L", positive=True)  # depth (real positive where the statement allows it)
H = sp.Symbol("H", positive=True)  # number of pathways
sigma = sp.Symbol("sigma_star", positive=True)  # target singular value sigma_*i
s = sp.Symbol("s", positive=True)  # one pathway's share in a two-pathway split
x, y = sp.symbols("x y", positive=True)  # squared layer values a_hi^2, a_hj^2
l = sp.Symbol("l", positive=True)  # layer index in the cross-mode sum


def p_exponent(depth: int | sp.Expr = L) -> sp.Expr:
    """p = 2 - 2/L, the exponent of the mode sharpness (Appendix C.4)."""
    return 2 - 2 / sp.sympify(depth)


def mode_eigenvalue(sigmas: Iterable[sp.Expr], depth: int | sp.Expr = L) -> sp.Expr:
    """lambda_i = L sum_h sigma_hi^{2-2/L} (Eq. (13)) for the given pathway values.

    >>> a, b = sp.symbols("a b", positive=True)
    >>> mode_eigenvalue([a**3, b**3], 3)
    3*a**4 + 3*b**4
    """
    return sp.powsimp(
        sp.expand_power_base(sum(sp.sympify(depth) * sh ** p_exponent(depth) for sh in sigmas), force=True), force=True
    )


def layer_derivative(depth: int) -> sp.Expr:
    """d sigma_hi / d sigma_hi^{(l)} at the depth-balanced point, for an integer depth, minus sigma^{1-1/L}.

    sigma_hi = prod_l x_l; differentiate in x_1 and evaluate at x_l = sigma^{1/L}. The
    residual against the paper's sigma^{1-1/L} (Appendix C.3) is 0.

    >>> [layer_derivative(k) for k in range(1, 6)]
    [0, 0, 0, 0, 0]
    """
    xs = sp.symbols(f"x1:{depth + 1}", positive=True)
    d = sp.diff(sp.Mul(*xs), xs[0]).subs({xi: sigma ** sp.Rational(1, depth) for xi in xs})
    return sp.simplify(d - sigma ** (1 - sp.Rational(1, depth)))


def jacobian_norm_residual() -> sp.Expr:
    """||J_i||^2 with L entries sigma_h^{1-1/L} per pathway, minus L sigma_h^{2-2/L}, symbolic L (Eq. (39)).

    >>> jacobian_norm_residual()
    0
    """
    sh = sp.Symbol("sigma_h", positive=True)
    return sp.simplify(L * (sh / sh ** (1 / L)) ** 2 - L * sh ** (2 - 2 / L))


def _identity(q):
    return q


@cache
def full_hessian(d: int, Hn: int, Ln: int, a: tuple, loss: str = "full") -> dict:
    """Exact Hessian of (1/2)||M - M_*||_F^2 in all H L d^2 layer entries at a depth-balanced global minimum.

    ``a[h][i]`` (rationals) are the per-layer values, W_hl = Q_{h,l+1} diag(a_h) Q_hl^T with the
    exact rational orthogonal frame of :func:`derivations.multipath.svs.svs_point` (U != V),
    and M_* = U diag(sum_h a_hi^L) V^T, so the loss is 0 there. ``loss="mode0"`` takes the
    mode-1 loss (1/2)(u_1^T M v_1 - sigma_*1)^2 instead.

    Returns ``hessian`` (the exact rational matrix, by differentiating the loss twice),
    ``J`` (Jacobian of vec M, by differentiating M), ``T`` (columns vec(U e_i e_j^T V^T), in
    the order (i, j) row-major), ``lambda`` (L sum_h a_hi^{2L-2}, Eq. (13)) and ``K``
    (sum_h sum_l a_hi^{2(L-l)} a_hj^{2(l-1)}).

    >>> out = full_hessian(2, 2, 2, ((1, 2), (3, 1)))
    >>> out["hessian"] == out["J"].T * out["J"], out["lambda"]
    (True, [20, 10])
    """
    P = svs_point(d, Hn, Ln)
    wn = [f"w{h}_{k}_{i}{j}" for h in range(Hn) for k in range(Ln) for i in range(d) for j in range(d)]
    R, *gens = ring(wn, QQ)
    G = dict(zip(wn, gens))
    W = [[[[G[f"w{h}_{k}_{i}{j}"] for j in range(d)] for i in range(d)] for k in range(Ln)] for h in range(Hn)]
    eye = [[R.one if i == j else R.zero for j in range(d)] for i in range(d)]
    M = [[R.zero] * d for _ in range(d)]
    for h in range(Hn):
        Pm = _chain(W[h], 0, Ln - 1, eye, R.zero)
        M = [[M[i][j] + Pm[i][j] for j in range(d)] for i in range(d)]
    a = tuple(tuple(sp.Rational(v) for v in row) for row in a)
    sig = [sum(a[h][i] ** Ln for h in range(Hn)) for i in range(d)]
    U, V = P["U"], P["V"]
    Mstar = U * sp.diag(*sig) * V.T
    if loss == "full":
        f = sum(((M[i][j] - R(Mstar[i, j])) ** 2 for i in range(d) for j in range(d)), R.zero) * QQ(1, 2)
    elif loss == "mode0":
        m00 = sum((R(U[i, 0] * V[j, 0]) * M[i][j] for i in range(d) for j in range(d)), R.zero)
        f = (m00 - R(sig[0])) ** 2 * QQ(1, 2)
    else:
        raise ValueError(f"loss must be 'full' or 'mode0'; got {loss!r}")
    point = []
    for h in range(Hn):
        for k in range(Ln):
            Wv = P["Q"][h][k + 1] * sp.diag(*a[h]) * P["Q"][h][k].T
            point += [(W[h][k][i][j], Wv[i, j]) for i in range(d) for j in range(d)]
    vals = [QQ.convert(v) for _, v in point]
    n = len(gens)
    grads = [f.diff(g) for g in gens]

    def at_point(q) -> sp.Rational:  # exact value at the point, term by term (PolyElement.__call__ is slow here)
        return sp.Rational(_value(q, vals, _identity))

    Hm = sp.Matrix(n, n, lambda r, c: at_point(grads[r].diff(gens[c])) if r <= c else 0)
    Hm = Hm + Hm.T - sp.diag(*[Hm[k, k] for k in range(n)])
    J = sp.Matrix(d * d, n, lambda r, c: at_point(M[r // d][r % d].diff(gens[c])))
    T = sp.Matrix.hstack(*[(U[:, i] * V[:, j].T).reshape(d * d, 1) for i in range(d) for j in range(d)])
    lam = [Ln * sum(a[h][i] ** (2 * Ln - 2) for h in range(Hn)) for i in range(d)]
    K = [
        [
            sum(a[h][i] ** (2 * (Ln - k)) * a[h][j] ** (2 * (k - 1)) for h in range(Hn) for k in range(1, Ln + 1))
            for j in range(d)
        ]
        for i in range(d)
    ]
    return {"hessian": Hm, "J": J, "T": T, "lambda": lam, "K": K}


def d1_hessian(Hn: int, Ln: int) -> dict:
    """d = 1 with symbolic per-layer values a_h: the Hessian at sum_h a_h^L = sigma_* and its eigenvalues.

    >>> out = d1_hessian(2, 3)
    >>> sorted(out["eigenvalues"].items(), key=str)
    [(0, 5), (3*(a_1**4 + a_2**4), 1)]
    """
    a = sp.symbols(f"a_1:{Hn + 1}", positive=True)
    w = [[sp.Symbol(f"w_{h + 1}{k + 1}") for k in range(Ln)] for h in range(Hn)]
    sig = sp.Symbol("sigma_star", positive=True)
    f = (sum(sp.Mul(*w[h]) for h in range(Hn)) - sig) ** 2 / 2
    flat = [v for row in w for v in row]
    Hm = (
        sp.hessian(f, flat)
        .subs({w[h][k]: a[h] for h in range(Hn) for k in range(Ln)})
        .subs(sig, sum(ah**Ln for ah in a))
    )
    Hm = Hm.applyfunc(sp.expand)
    return {"hessian": Hm, "eigenvalues": {sp.factor(k) if k != 0 else k: v for k, v in Hm.eigenvals().items()}}


def cross_mode_bound() -> dict:
    """The pairing identity behind K_ij <= (lambda_i + lambda_j)/2, for symbolic L and l.

    ``identity``: x^{L-1} + y^{L-1} - x^{L-l} y^{l-1} - x^{l-1} y^{L-l} - (x^{L-l} - y^{L-l})(x^{l-1} - y^{l-1}),
    which is 0; the product has two factors of equal sign (both >= 0 or both <= 0 for
    x, y > 0, 1 <= l <= L), so pairing the terms l and L + 1 - l of
    sum_l x^{L-l} y^{l-1} gives sum_l x^{L-l} y^{l-1} <= L (x^{L-1} + y^{L-1})/2. With x = a_hi^2,
    y = a_hj^2 and summed over h: K_ij <= (lambda_i + lambda_j)/2.

    >>> cross_mode_bound()["identity"]
    0
    """
    lhs = x ** (L - 1) + y ** (L - 1) - x ** (L - l) * y ** (l - 1) - x ** (l - 1) * y ** (L - l)
    prod = (x ** (L - l) - y ** (L - l)) * (x ** (l - 1) - y ** (l - 1))
    e = sp.powsimp(sp.expand(lhs - prod), force=True)
    return {"identity": sp.simplify(e), "product": prod}


@memo
def equal_split() -> dict:
    """Theorem 4.2 (Eqs. (14)-(15), (42), (50)) from the mode sharpness (13).

    - ``lambda_min``: lambda at sigma_h = sigma_*/H, simplified: L H^{2/L-1} sigma_*^{2-2/L};
    - ``residual_15``: lambda_min minus the paper's (15): 0;
    - ``convexity``: d^2/dx^2 x^p = p (p - 1) x^{p-2} with p = 2 - 2/L: the sign is that of
      (2 - 2/L)(1 - 2/L), > 0 for L > 2 (strictly convex: Jensen gives the unique minimiser),
      0 at L = 2, < 0 for 1 < L < 2, 0 at L = 1;
    - ``two_path``: lambda(s) = L (s^p + (sigma_* - s)^p) for H = 2; ``two_path_slope_at_half``: its
      derivative at s = sigma_*/2 (0: the equal split is stationary for every L);
    - ``depth2``: lambda at L = 2 for H = 2 (2 sigma_*, independent of s); ``depth1``: the
      Hessian eigenvalue at L = 1 (H, independent of the split: J_i = (1, ..., 1) since
      d sigma_h/d W_h = 1; (13) reproduces it only with 0^0 = 1).

    >>> es = equal_split()
    >>> es["residual_15"], es["two_path_slope_at_half"], es["depth2"]
    (0, 0, 2*sigma_star)
    >>> sp.factor(es["convexity"])
    2*(L - 2)*(L - 1)/L**2
    """
    p = p_exponent()
    lam_eq = L * H * (sigma / H) ** p
    lam_eq_s = sp.powsimp(sp.expand_power_base(lam_eq, force=True), force=True)
    paper = L * H ** (2 / L - 1) * sigma ** (2 - 2 / L)
    two = L * (s**p + (sigma - s) ** p)
    slope = sp.simplify(sp.diff(two, s).subs(s, sigma / 2))
    return {
        "lambda_min": sp.simplify(lam_eq_s),
        "residual_15": sp.simplify(sp.expand_power_base(lam_eq_s - paper, force=True)),
        "convexity": sp.simplify(p * (p - 1)),
        "two_path": two,
        "two_path_slope_at_half": slope,
        "two_path_curvature": sp.simplify(sp.diff(two, s, 2)),
        "depth2": sp.simplify(two.subs(L, 2)),
        "depth1": sp.Symbol("H"),
    }


def reduction_factor() -> dict:
    """Eq. (16)/(43): lambda_min / lambda_one-path and its derivatives in H and L.

    - ``ratio``: L H (sigma/H)^p / (L sigma^p), simplified to H^{2/L-1};
    - ``dH``, ``dL``: the partial derivatives of H^{2/L-1};
    - ``dH_over_ratio`` = (2/L - 1)/H (< 0 iff L > 2), ``dL_over_ratio`` = -2 log(H)/L^2 (< 0 iff H > 1).

    >>> rf = reduction_factor()
    >>> sp.simplify(rf["ratio"] - H**(2/L - 1)), sp.simplify(rf["dH_over_ratio"] - (2/L - 1)/H), rf["dL_over_ratio"]
    (0, 0, -2*log(H)/L**2)
    """
    p = p_exponent()
    ratio = sp.powsimp(sp.expand_power_base(L * H * (sigma / H) ** p / (L * sigma**p), force=True), force=True)
    ratio = sp.simplify(ratio)
    dH, dL = sp.diff(ratio, H), sp.diff(ratio, L)
    return {
        "ratio": ratio,
        "dH": dH,
        "dL": dL,
        "dH_over_ratio": sp.simplify(dH / ratio),
        "dL_over_ratio": sp.simplify(dL / ratio),
    }


def one_path_maximal(depth: int, Hn: int) -> dict:
    """Convexity consequence (Conclusion, Appendix C.4): on the simplex sum_h sigma_h = sigma_*,
    lambda is maximal at a vertex.

    Returns the value at a vertex (one-path: L sigma_*^p) and at the equal split; for a convex
    function the maximum over a simplex is attained at a vertex and every vertex gives the
    same value, so single-path allocations are the sharpest global minima (L > 2).

    >>> sp.simplify(one_path_maximal(4, 2)["vertex"] - 4*sigma**sp.Rational(3, 2))
    0
    """
    p = p_exponent(depth)
    vertex = depth * sigma**p
    eq = depth * Hn * (sigma / Hn) ** p
    return {"vertex": vertex, "equal": sp.simplify(eq)}
