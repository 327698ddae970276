"""The worst-case-return (WCR) threshold of a deep linear chain (Section 6, Appendix F).

Model. A chain of ``L`` scalar layers a_1, ..., a_L fits the target sigma with the loss
(1/2)(a_1 ... a_L - sigma)^2. On balanced layers a_l = w every layer's gradient is
w^{L-1}(w^L - sigma), so gradient descent with step eta keeps the layers balanced and the
per-layer scale follows the deep-chain map (Eq. (19))

    f_eta(w) = w - eta w^{L-1} (w^L - sigma),      w_* = sigma^{1/L}.

With u = w / w_* and alpha = eta sigma^{2 - 2/L} (Eq. (71)) it becomes (Eq. (72))

    g_alpha(u) = u + alpha u^{L-1} (1 - u^L),

and gamma := eta S_1 = L alpha with S_1 = L sigma^{2-2/L}. Everything below is derived
from these two maps; the paper's formulas are only compared with, never typed in as
results.

Notation (Appendix F.4): y = c^L for the maximiser c of g_alpha on [0, 1],
A(y) = (2L-2) y - (L-2), B(y) = (2L-1) y - (L-1), r = A/B, and t = 2y - 1 (F.6).

Main results (each function's docstring shows its doctest):

- (76) g'(c) = 0  <=>  alpha = 1/(c^{L-2} B) = y^{2/L-1}/B;  (77) v_max = g(c) = c A/B;
- eliminating c from the boundary system (79) g'(c) = 0, g(g(c)) = 0 gives (83)
  B = r^{L-2}(y r^L - 1) and, multiplied by B^{2L-2}, (80)
  B^{2L-1} = A^{L-2}(y A^L - B^L), for every L (symbolic L) and, by resultants with
  exact integer L, for L = 2, 3, 4;
- gamma_WCR = L y^{2/L-1}/B (81);
- uniqueness: in t, psi(t) = r^{L-2}(y r^L - 1)/B is a product of positive strictly
  decreasing factors, psi(0) = 2^{L-1}(2^{L-1} - 1) > 1 and psi(1) = 0, so (83) has exactly
  one root and it has t in (0, 1) (this module proves the derivative identities);
- closed form for L = 2: y = (9 + 2 sqrt 3)/23 and gamma_WCR(2) = 3 sqrt 3 - 2; for
  L = 3 the quintic for y has Galois group S_5, so no closed form in radicals exists.

Reference: arXiv 2606.05219, Section 6, Eqs. (19)-(23); Appendix F, Eqs. (70)-(87).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

from derivations.validation import integer

L = sp.Symbol("L", integer=True, positive=True)  # depth (number of layers), L >= 2
w = sp.Symbol("w", positive=True)  # per-layer scale
sigma = sp.Symbol("sigma", positive=True)  # target singular value sigma_{*1}
eta = sp.Symbol("eta", positive=True)  # step size
u = sp.Symbol("u", positive=True)  # normalised scale w / w_*
alpha = sp.Symbol("alpha", positive=True)  # normalised step eta sigma^{2-2/L}
c = sp.Symbol("c", positive=True)  # maximiser of g_alpha on [0, 1]
v = sp.Symbol("v", positive=True)  # an overshoot value g_alpha(c) > 1
y = sp.Symbol("y", positive=True)  # y = c^L
t = sp.Symbol("t", positive=True)  # t = 2y - 1 (Appendix F.6)
gamma = sp.Symbol("gamma", positive=True)  # gamma = eta S_1 = L alpha
_a, _b, _r = sp.symbols("a b r", positive=True)  # stand-ins for A(y), B(y), r = A/B


def _zero(expr) -> bool:
    """True when ``expr`` simplifies to 0 (power bases of positive symbols are split first)."""
    e = sp.powsimp(sp.expand(sp.expand_power_base(expr, force=True)), force=True)
    return sp.simplify(e) == 0


def chain_loss() -> sp.Expr:
    """The deep-chain loss (1/2)(w^L - sigma)^2 in the per-layer scale (Figure 5).

    Each of the L layers receives 1/L of its w-derivative, so (19) is f = w - (eta/L) dloss/dw:

    >>> sp.simplify(chain_map() - (w - eta / L * sp.diff(chain_loss(), w)))
    0
    """
    return (w**L - sigma) ** 2 / 2


def chain_map() -> sp.Expr:
    """The deep-chain GD map f_eta(w) = w - eta w^{L-1}(w^L - sigma) (Eq. (19)).

    >>> chain_map().subs({w: sigma**(1/L)}).simplify() == sigma**(1/L)
    True
    """
    return w - eta * w ** (L - 1) * (w**L - sigma)


def sharpness_S1() -> sp.Expr:
    """S_1 = L sigma^{2-2/L}, the single-path sharpness of the dominant mode (Section 6)."""
    return L * sigma ** (2 - 2 / L)


def balanced_chain(depth: int) -> dict:
    """GD on the ``depth``-layer scalar chain, restricted to balanced layers (Appendix F.1).

    Returns the per-layer gradients of (1/2)(a_1...a_L - sigma)^2 at a_l = w (all equal
    to w^{L-1}(w^L - sigma), so balance is preserved and the scale follows (19)) and the
    Hessian eigenvalues at the minimiser a_l = sigma^{1/L} (top one S_1).

    >>> out = balanced_chain(3)
    >>> out["gradients"][0] == w**2 * (w**3 - sigma), out["hessian_eigenvalues"]
    (True, {3*sigma**(4/3): 1, 0: 2})
    """
    _check_depth(depth)
    a = sp.symbols(f"a1:{depth + 1}", positive=True)
    loss = (sp.Mul(*a) - sigma) ** 2 / 2
    grads = [sp.factor(sp.diff(loss, ai).subs({aj: w for aj in a})) for ai in a]
    hess = sp.hessian(loss, a).subs({aj: sigma ** sp.Rational(1, depth) for aj in a})
    return {"gradients": grads, "hessian_eigenvalues": hess.eigenvals()}


def map_slope_at_target() -> sp.Expr:
    """f_eta'(w_*) = 1 - eta S_1: overshoot onset at eta_1 = 1/S_1, stability edge 2/S_1 (Section 6).

    >>> sp.simplify(map_slope_at_target() - (1 - eta * sharpness_S1()))
    0
    """
    return sp.simplify(sp.diff(chain_map(), w).subs(w, sigma ** (1 / L)))


def g_map(at: sp.Expr = u, a: sp.Expr = alpha) -> sp.Expr:
    """The normalised map g_alpha(u) = u + alpha u^{L-1}(1 - u^L) (Eq. (72))."""
    return at + a * at ** (L - 1) * (1 - at**L)


def normalisation_residual() -> sp.Expr:
    """f_eta(w_* u)/w_* - g_alpha(u) at alpha = eta sigma^{2-2/L}; it is 0 (Eqs. (71)-(72)).

    The map therefore depends on (eta, sigma) only through alpha, and gamma = eta S_1 =
    L alpha: the ratio eta_WCR/eta_1 = gamma_WCR(L) is independent of sigma (Eq. (21)).

    >>> normalisation_residual()
    0
    >>> sp.simplify(eta * sharpness_S1() - L * eta * sigma**(2 - 2/L))
    0
    """
    ws = sigma ** (1 / L)
    lhs = chain_map().subs(w, ws * u) / ws
    rhs = g_map().subs(alpha, eta * sigma ** (2 - 2 / L))
    d = lhs - rhs
    return sp.Integer(0) if _zero(d) else sp.simplify(d)


def h_factor(at: sp.Expr = u) -> sp.Expr:
    """h(u) = u^{L-2}((2L-1)u^L - (L-1)), so that g_alpha'(u) = 1 - alpha h(u) (Lemma F.1)."""
    return at ** (L - 2) * ((2 * L - 1) * at**L - (L - 1))


@cache
def lemma_F1() -> dict:
    """Lemma F.1 for symbolic L: the identities behind (i) and (ii).

    Keys (all residuals simplify to 0):

    - ``g(1)``: g_alpha(1) (equals 1);
    - ``g_prime_residual``: g_alpha' - (1 - alpha h): the paper's formula for g';
    - ``g_prime_at_1``: g_alpha'(1) (equals 1 - alpha L);
    - ``decreasing_identity``: h(u) - L - [(u^{L-2} - 1)((2L-1)u^L - (L-1)) + (2L-1)(u^L - 1)];
      for u >= 1 both bracketed terms are >= 0 (u^k >= 1 for k >= 0), so h >= L and
      g' <= 1 - alpha L < 0 on [1, inf) when alpha > 1/L: (ii);
    - ``onset_identity``: L - h(u) - [L(1 - u^{L-2}) + (2L-1)u^{L-2}(1 - u^L)]; on [0, 1] both
      terms are >= 0, so g' >= 1 - alpha L >= 0 when alpha <= 1/L (no overshoot below the
      onset), while for alpha > 1/L g'(1) < 0 and g > 1 just left of 1: (i).

    >>> F1 = lemma_F1()
    >>> F1["g(1)"], F1["g_prime_at_1"] == 1 - alpha*L
    (1, True)
    >>> F1["g_prime_residual"], F1["decreasing_identity"], F1["onset_identity"]
    (0, 0, 0)
    """
    g = g_map()
    gp = sp.diff(g, u)
    h = h_factor()
    dec = h - L - ((u ** (L - 2) - 1) * ((2 * L - 1) * u**L - (L - 1)) + (2 * L - 1) * (u**L - 1))
    ons = L - h - (L * (1 - u ** (L - 2)) + (2 * L - 1) * u ** (L - 2) * (1 - u**L))
    return {
        "g(1)": sp.simplify(g.subs(u, 1)),
        "g_prime_residual": sp.Integer(0) if _zero(gp - (1 - alpha * h)) else gp - (1 - alpha * h),
        "g_prime_at_1": sp.expand(sp.simplify(gp.subs(u, 1))),
        "decreasing_identity": sp.Integer(0) if _zero(dec) else dec,
        "onset_identity": sp.Integer(0) if _zero(ons) else ons,
    }


def A_of(at: sp.Expr = y) -> sp.Expr:
    """A(y) = (2L-2) y - (L-2) (Appendix F.4)."""
    return (2 * L - 2) * at - (L - 2)


def B_of(at: sp.Expr = y) -> sp.Expr:
    """B(y) = (2L-1) y - (L-1) (Appendix F.4); B > 0 exactly on y > (L-1)/(2L-1)."""
    return (2 * L - 1) * at - (L - 1)


@cache
def critical_point_identities() -> dict:
    """Eqs. (76)-(77) from the map, for symbolic L.

    - ``alpha_c``: the alpha solving g_alpha'(c) = 0, 1/(c^{L-2} B(c^L)) (76);
    - ``residual_76``: g_alpha'(c) at that alpha (0);
    - ``residual_76_y``: 1/(c^{L-2} B) - y^{2/L-1}/B at c = y^{1/L} (0): the second form of (76);
    - ``residual_77``: g_alpha(c) - c A/B at y = c^L (0): v_max = c A(y)/B(y) (77);
    - ``A_minus_B``: A - B = 1 - y, so r = A/B = 1 + (1 - y)/B.

    The maximiser is unique: g' = 1 - alpha h with h < 0 where B(u^L) < 0 and h strictly
    increasing from 0 to h(1) = L where B(u^L) > 0, so for alpha > 1/L the equation
    alpha h(c) = 1 has one root c in (0, 1), g rises before it and falls after it.

    >>> ids = critical_point_identities()
    >>> ids["residual_76"], ids["residual_76_y"], ids["residual_77"], ids["A_minus_B"]
    (0, 0, 0, 1 - y)
    """
    a_c = 1 / (c ** (L - 2) * B_of(c**L))
    r76 = sp.diff(g_map(), u).subs(u, c).subs(alpha, a_c)
    r76y = (1 / (c ** (L - 2) * B_of(y))).subs(c, y ** (1 / L)) - y ** (2 / L - 1) / B_of(y)
    r77 = g_map(c, a_c) - c * A_of(c**L) / B_of(c**L)
    return {
        "alpha_c": a_c,
        "residual_76": sp.simplify(r76),
        "residual_76_y": sp.Integer(0) if _zero(r76y) else r76y,
        "residual_77": sp.simplify(r77),
        "A_minus_B": sp.expand(A_of() - B_of()),
    }


def return_alpha() -> sp.Expr:
    """The alpha at which g_alpha(v) = 0 for v > 1: 1/(v^{L-2}(v^L - 1)) (proof of Theorem 6.2).

    >>> sp.simplify(g_map(v, return_alpha()))
    0
    """
    return 1 / (v ** (L - 2) * (v**L - 1))


@cache
def eliminate_boundary_system() -> dict:
    """Eliminate c from (79) g'(c) = 0, g(g(c)) = 0 for symbolic L: gives (83) and (80).

    Steps, each an identity checked by SymPy with c, r, A, B positive:

    1. (76) alpha = 1/(c^{L-2} B) and the return condition alpha = 1/(v^{L-2}(v^L - 1)) at
       v = v_max = c r (77) must agree; the ratio of the denominators is
       ``ratio`` = (c r)^{L-2}((c r)^L - 1)/c^{L-2} = r^{L-2}(y r^L - 1) at c^L = y, so
       the boundary is B = r^{L-2}(y r^L - 1): Eq. (83) (``eq83``, as lhs - rhs);
    2. with r = A/B, (83) times B^{2L-2} is B^{2L-1} - A^{L-2}(y A^L - B^L): Eq. (80)
       (``residual_80`` is the difference, 0);
    3. gamma = L alpha = L y^{2/L-1}/B: Eq. (81) (``gamma_81``).

    >>> el = eliminate_boundary_system()
    >>> sp.simplify(el["ratio"] - _r**(L - 2)*(y*_r**L - 1))
    0
    >>> el["residual_80"]
    0
    >>> sp.simplify(el["gamma_81"] - L*y**(2/L - 1)/B_of(y))
    0
    """
    ratio = (c * _r) ** (L - 2) * ((c * _r) ** L - 1) / c ** (L - 2)
    ratio = sp.powsimp(sp.expand(sp.expand_power_base(ratio, force=True)), force=True).subs(c**L, y)
    ratio = sp.factor(ratio)
    eq83 = _b - ratio
    times = (eq83.subs(_r, _a / _b)) * _b ** (2 * L - 2)
    eq80 = _b ** (2 * L - 1) - _a ** (L - 2) * (y * _a**L - _b**L)
    res80 = times - eq80
    gamma_81 = L * critical_point_identities()["alpha_c"].subs(c, y ** (1 / L))
    gamma_81 = sp.powsimp(sp.expand_power_base(gamma_81, force=True), force=True)
    return {
        "ratio": ratio,
        "eq83": eq83,
        "residual_80": sp.Integer(0) if _zero(res80) else res80,
        "gamma_81": gamma_81,
    }


def root_polynomial(depth: int) -> sp.Poly:
    """Eq. (80) as the polynomial B^{2L-1} - A^{L-2}(y A^L - B^L) in y for integer ``depth``.

    >>> root_polynomial(2).as_expr()
    23*y**3 - 18*y**2 + 3*y
    """
    _check_depth(depth)
    Ai = A_of().subs(L, depth)
    Bi = B_of().subs(L, depth)
    return sp.Poly(sp.expand(Bi ** (2 * depth - 1) - Ai ** (depth - 2) * (y * Ai**depth - Bi**depth)), y)


def _p80_in_c(depth: int) -> sp.Expr:
    """Eq. (80)'s polynomial at y = c^L, as an expression in c."""
    return sp.expand(root_polynomial(depth).as_expr().subs(y, c**depth))


def _check_depth(depth):
    integer(depth, "depth", 2)


@cache
def eliminate_exact(depth: int) -> dict:
    """Eliminate alpha and c from (79) with the maps themselves, for integer ``depth`` (resultant).

    The numerators of g_alpha'(c) and g_alpha(g_alpha(c)) are polynomials in (alpha, c);
    their resultant in alpha vanishes exactly on the c of the boundary system. It factors
    as const * c^m * A(c^L)^k * P80(c^L), where P80 is Eq. (80)'s polynomial: the extra
    factors vanish only at c = 0 or A = 0, i.e. y = (L-2)/(2L-2) < (L-1)/(2L-1), outside
    the interval. ``cofactor`` is the resultant divided by P80(c^L); ``extraneous`` the
    non-constant factors of the cofactor.

    >>> ex = eliminate_exact(3)
    >>> ex["divides"], ex["extraneous"]
    (True, [c, 4*c**3 - 1])
    """
    _check_depth(depth)
    a_ = sp.Symbol("alpha", positive=True)
    g = c + a_ * c ** (depth - 1) * (1 - c**depth)

    def gmap(z):
        return z + a_ * z ** (depth - 1) * (1 - z**depth)

    num_gp = sp.numer(sp.together(sp.diff(g, c)))
    num_gg = sp.numer(sp.together(gmap(g)))
    res = sp.Poly(sp.resultant(num_gp, num_gg, a_), c)
    p80 = _p80_in_c(depth)
    quo, rem = sp.div(res, sp.Poly(p80, c))
    factors = [f for f, _ in sp.factor_list(quo.as_expr())[1]]
    return {
        "resultant": res,
        "divides": rem.is_zero,
        "cofactor": quo,
        "extraneous": sorted(factors, key=lambda f: sp.Poly(f, c).degree()),
    }


def roots_in_interval(depth: int) -> int:
    """Number of distinct real roots of (80) in ((L-1)/(2L-1), 1) (exact Sturm count).

    >>> [roots_in_interval(k) for k in (2, 3, 4, 5, 6)]
    [1, 1, 1, 1, 1]
    """
    p = root_polynomial(depth)
    lo, hi = sp.Rational(depth - 1, 2 * depth - 1), sp.Integer(1)
    sq = sp.Poly(sp.quo(p, sp.gcd(p, p.diff(y))), y)  # square-free part: count distinct roots
    n = sq.count_roots(lo, hi)
    return n - int(sq.eval(lo) == 0) - int(sq.eval(hi) == 0)  # open interval


@cache
def closed_form_L2() -> dict:
    """The exact root for L = 2: y = (9 + 2 sqrt 3)/23 and gamma_WCR(2) = 3 sqrt 3 - 2.

    (80) at L = 2 is y(23 y^2 - 18 y + 3) = 0; its only root in (1/3, 1) is
    (9 + 2 sqrt 3)/23 (the other, (9 - 2 sqrt 3)/23 ~ 0.241, is below 1/3), and (81) gives
    gamma = 2/(3y - 1) = 23/(2 + 3 sqrt 3) = 3 sqrt 3 - 2 = 3.19615...

    >>> cf = closed_form_L2()
    >>> cf["y"] == (9 + 2*sp.sqrt(3))/23, cf["gamma"] == 3*sp.sqrt(3) - 2
    (True, True)
    >>> cf["gamma_minimal_polynomial"]
    gamma**2 + 4*gamma - 23
    """
    p = root_polynomial(2)
    inside = [s for s in sp.solve(p.as_expr(), y) if sp.Rational(1, 3) < s < 1]
    (ys,) = inside
    g = sp.radsimp(sp.simplify(eliminate_boundary_system()["gamma_81"].subs({L: 2, y: ys})))
    return {
        "y": sp.nsimplify(ys),
        "gamma": sp.simplify(g),
        "gamma_minimal_polynomial": sp.minimal_polynomial(g, gamma),
    }


@cache
def gamma_polynomial(depth: int) -> sp.Expr:
    """A polynomial with integer coefficients that gamma_WCR(depth) is a root of.

    Resultant in c of P80(c^L) and gamma c^{L-2} B(c^L) - L (the latter is (81)); the
    irreducible factor that vanishes at gamma_WCR is returned (pick it numerically).

    >>> gamma_polynomial(2)
    gamma**2 + 4*gamma - 23
    >>> sp.degree(gamma_polynomial(3), gamma)
    15
    """
    _check_depth(depth)
    p80 = _p80_in_c(depth)
    q = sp.expand(gamma * c ** (depth - 2) * B_of(c**depth).subs(L, depth) - depth)
    res = sp.resultant(p80, q, c)
    factors = [f for f, _ in sp.factor_list(res)[1] if sp.degree(f, gamma) > 0]
    good = []
    for f in factors:
        for root in sp.Poly(f, gamma).real_roots():
            if root.is_positive and sp.N(root, 30) > 2:
                good.append(f)
                break
    (f,) = good
    return -f if sp.Poly(f, gamma).LC() < 0 else f


def galois_group_of_y(depth: int) -> tuple[Any, bool]:
    """Galois group of the (irreducible) polynomial (80) in y; sympy handles degrees <= 6.

    For L = 3 it is S_5 (order 120), not solvable: gamma_WCR(3) has no expression in
    radicals (Q(gamma^3) = Q(y), since gamma^3 = 27/(y B(y)^3) has the same degree 5).

    >>> G, alt = galois_group_of_y(3); G.order(), G.is_solvable
    (120, False)
    """
    p = root_polynomial(depth)
    (f,) = [f for f, _ in sp.factor_list(p.as_expr())[1] if sp.degree(f, y) > 1]
    return sp.galois_group(sp.Poly(f, y))


@cache
def t_form() -> dict:
    """The t-coordinates of Appendix F.6: y = (1+t)/2 gives exact A, B and r.

    A = L t + 1 - t, B = L t + (1 - t)/2 (so B = L t + O(1) exactly), r - 1 = (1-t)/(2B),
    and the lower end y = (L-1)/(2L-1) of the interval is t = -1/(2L-1).

    >>> tf = t_form()
    >>> tf["A"], tf["B"], tf["t_lower"]
    (L*t - t + 1, L*t - t/2 + 1/2, -1/(2*L - 1))
    >>> sp.simplify(tf["r_minus_1"] - (1 - t)/(2*tf["B"]))
    0
    """
    A = sp.expand(A_of((1 + t) / 2))
    B = sp.expand(B_of((1 + t) / 2))
    return {
        "A": A,
        "B": B,
        "r_minus_1": sp.factor(sp.simplify(A / B - 1)),
        "t_lower": sp.factor(2 * sp.Rational(1, 1) * (L - 1) / (2 * L - 1) - 1),
    }


@cache
def psi_monotonicity() -> dict:
    """Derivative identities in t proving that (83) has exactly one root (Theorem 6.2, (78)).

    psi(t) := r^{L-2}(y r^L - 1)/B, so g_alpha(v_max) > 0 iff psi < 1 (divide (76) by the
    return alpha). With A, B from :func:`t_form`:

    - ``dlog_r``: d(log r)/dt = -L/(2 A B) < 0;
    - ``dlog_yrL``: d(log(y r^L))/dt = -(1-t)(L-1)(3L - (1-t)(2L-1)) / (2 A B (1+t)) < 0 for
      t in (-1/(2L-1), 1) (then 3L - (1-t)(2L-1) > L > 0);
    - ``dB``: dB/dt = L - 1/2 > 0;
    - ``yrL_at_1``: y r^L at t = 1 (equals 1, so y r^L - 1 > 0 and decreasing on the interval);
    - ``psi_at_0``: psi(0) = 2^{L-1}(2^{L-1} - 1), > 1 for L >= 2.

    So log psi = (L-2) log r + log(y r^L - 1) - log B is strictly decreasing from +inf
    (B -> 0+) through psi(0) > 1 to -inf (t -> 1): one root, with t in (0, 1).

    >>> pm = psi_monotonicity()
    >>> pm["dlog_r_residual"], pm["dlog_yrL_residual"], pm["dB"], pm["yrL_at_1"]
    (0, 0, L - 1/2, 1)
    >>> sp.simplify(pm["psi_at_0"] - 2**(L - 1)*(2**(L - 1) - 1))
    0
    """
    tf = t_form()
    A, B = tf["A"], tf["B"]
    r = A / B
    yy = (1 + t) / 2
    dlog_r = sp.diff(sp.log(r), t)
    dlog_yrl = sp.diff(sp.log(yy) + L * sp.log(r), t)
    claimed_r = -L / (2 * A * B)
    claimed_yrl = -(1 - t) * (L - 1) * (3 * L - (1 - t) * (2 * L - 1)) / (2 * A * B * (1 + t))
    psi0 = (r ** (L - 2) * (yy * r**L - 1) / B).subs(t, 0)
    return {
        "dlog_r": claimed_r,
        "dlog_r_residual": sp.simplify(dlog_r - claimed_r),
        "dlog_yrL": claimed_yrl,
        "dlog_yrL_residual": sp.simplify(dlog_yrl - claimed_yrl),
        "dB": sp.diff(B, t),
        "yrL_at_1": sp.simplify((yy * r**L).subs(t, 1)),
        "psi_at_0": sp.simplify(psi0),
    }


@cache
def large_L_limits() -> dict:
    """Limits as L -> oo at fixed t in (0, 1), behind the asymptotics of Appendix F.6.

    - ``r_minus_1_times_2Lt``: lim 2 L t (r - 1) = 1 - t (so r = 1 + (1 + O(t))/(2Lt): the
      first part of (84) holds as t -> 0);
    - ``log_rL_minus_half_over_t``: lim (L log r - 1/(2t)) = -1/2. Hence
      r^L = exp(1/(2t) - 1/2 + o(1)), not exp(1/(2t) + o(1)) as (84) states: the o(1/(Lt))
      error of r, multiplied by L, is o(1/t), not o(1);
    - ``gamma_t_over_2``: lim gamma t/2 = 1/(1+t) (so gamma ~ 2/t as t -> 0).

    >>> lim = large_L_limits()
    >>> lim["r_minus_1_times_2Lt"], lim["log_rL_minus_half_over_t"], lim["gamma_t_over_2"]
    (1 - t, -1/2, 1/(t + 1))
    """
    tf = t_form()
    r_m1 = tf["r_minus_1"]
    g81 = eliminate_boundary_system()["gamma_81"].subs(y, (1 + t) / 2)
    return {
        "r_minus_1_times_2Lt": sp.simplify(sp.limit(2 * L * t * r_m1, L, sp.oo)),
        "log_rL_minus_half_over_t": sp.simplify(sp.limit(L * sp.log(1 + r_m1) - 1 / (2 * t), L, sp.oo)),
        "gamma_t_over_2": sp.simplify(sp.limit(g81 * t / 2, L, sp.oo)),
    }


@cache
def overshoot_amplitudes() -> dict:
    """The worst overshoot at the boundary alpha_WCR in per-layer and end-to-end units (Eq. (23)).

    The worst overshoot is v_max w_* with v_max = g_alpha(c) = c A/B = y^{1/L} r (77), c^L = y.
    Measured in the per-layer scalar w of (19) (Definition 6.1's variable) it exceeds the
    target by f_eta(c) - w_* = (v_max - 1) w_*; end to end (sigma = w^L) by
    f_eta(c)^L - sigma = (v_max^L - 1) sigma. Relative to the target both are functions of y
    alone, hence of L alone at the root of (80) (as gamma_WCR is, Eq. (21)):

    - ``per_layer``: v_max - 1 = y^{1/L} A/B - 1;
    - ``end_to_end``: v_max^L - 1 = y (A/B)^L - 1;
    - ``end_to_end_at_root``: y r^L - 1 solved from the boundary equation (83) B = r^{L-2}(y r^L - 1):
      B r^{2-L} (``b``, ``r`` the stand-ins of B(y), r(y));
    - ``per_layer_residual``: (1 + end_to_end)^{1/L} - 1 - per_layer (0): the per-layer amplitude is
      the L-th root of the end-to-end ratio, so it is ~ log(1 + end_to_end)/L for large L.

    >>> amp = overshoot_amplitudes()
    >>> amp["end_to_end_at_root"], amp["per_layer_residual"]
    (b*r**(2 - L), 0)
    >>> y2 = closed_form_L2()["y"]   # L = 2: per-layer 0.275..., end to end 0.626...
    >>> [sp.N(amp[k].subs({L: 2, y: y2}), 10) for k in ("per_layer", "end_to_end")]
    [0.2750499538, 0.6257523846]
    """
    per_r = y ** (1 / L) * _r - 1  # in the stand-in r > 0 (A > B > 0 on the root interval)
    e2e_r = y * _r**L - 1
    X = sp.Symbol("X", positive=True)  # stand-in for y r^L - 1
    eq83 = eliminate_boundary_system()["eq83"]
    (x_root,) = sp.solve(eq83.subs(y, (X + 1) / _r**L), X)
    res = (1 + e2e_r) ** (1 / L) - 1 - per_r
    r = A_of() / B_of()
    return {
        "per_layer": per_r.subs(_r, r),
        "end_to_end": e2e_r.subs(_r, r),
        "end_to_end_at_root": sp.powsimp(sp.simplify(x_root), force=True),
        "per_layer_residual": sp.Integer(0) if _zero(res) else res,
    }


@cache
def sign_flip_parity(depths: tuple[int, ...] = (2, 3, 4, 5, 6, 7)) -> dict:
    """What a per-layer crossing of the origin does end to end, by the parity of the depth (Section 6).

    With w = -s < 0 (s > 0) and L = 2k or 2k + 1 (k a positive integer):

    - ``sigma_even``: (-s)^{2k} - s^{2k} (0): for even L the end-to-end value w^L stays = s^L > 0;
    - ``sigma_odd``: (-s)^{2k+1} + s^{2k+1} (0): for odd L it is -s^L < 0, a sign flip of sigma;
    - ``map_even``: f_eta(-s) + f_eta(s) at L = 2k (0): f_eta of (19) is odd, so GD through -s is
      the mirror image of GD through s, with the same end-to-end values w^L at every step;
    - ``map_odd``: f_eta(-s) + f_eta(s) at L = 2k + 1 (2 eta sigma s^{2k}, not 0): no such symmetry;
    - ``layers``: for each integer depth d of ``depths`` and free (unbalanced) layer values
      a_1..a_d of one pathway, with loss (1/2)(a_1...a_d - sigma)^2 and one GD step G(a) = a - eta grad:
      ``step`` = G(-a) + G(a) (0 for even d: negating every layer of the pathway commutes with GD)
      and ``product`` = prod(-a) - (-1)^d prod(a) (0). In a multi-pathway network the other
      pathways enter pathway h's gradient only through the shared residual sum_h prod_l a_hl - sigma,
      which the negation leaves unchanged for even d.

    >>> sf = sign_flip_parity((2, 3))
    >>> sf["sigma_even"], sf["sigma_odd"], sf["map_even"], sf["map_odd"]
    (0, 0, 0, 2*eta*s**(2*k)*sigma)
    >>> sf["layers"][2]["step"], sf["layers"][3]["step"] == 0
    ([0, 0], False)
    """
    k = sp.Symbol("k", integer=True, positive=True)
    s = sp.Symbol("s", positive=True)
    ev, od = 2 * k, 2 * k + 1
    f_ev, f_od = chain_map().subs(L, ev), chain_map().subs(L, od)
    layers = {}
    for d in depths:
        _check_depth(d)
        a = sp.symbols(f"a1:{d + 1}", real=True)
        loss = (sp.Mul(*a) - sigma) ** 2 / 2

        def step(vals, a=a, loss=loss):
            sub = dict(zip(a, vals, strict=True))
            return [vals[i] - eta * sp.diff(loss, a[i]).subs(sub, simultaneous=True) for i in range(len(a))]

        neg = [-ai for ai in a]
        layers[d] = {
            "step": [sp.expand(p + q) for p, q in zip(step(neg), step(list(a)), strict=True)],
            "product": sp.expand(sp.Mul(*neg) - (-1) ** d * sp.Mul(*a)),
        }
    return {
        "sigma_even": sp.simplify((-s) ** ev - s**ev),
        "sigma_odd": sp.simplify((-s) ** od + s**od),
        "map_even": sp.simplify(f_ev.subs(w, -s) + f_ev.subs(w, s)),
        "map_odd": sp.simplify(f_od.subs(w, -s) + f_od.subs(w, s)),
        "layers": layers,
    }
