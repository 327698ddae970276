"""Leaf coordinates, their gradient-flow conservation and the edge-of-stability balancing gap (Appendix E).

Setting (Appendix E.2). One mode, homogeneous depth L > 2, H pathways with per-layer values
a_h (sigma_h = a_h^L), residual r = sum_h a_h^L - sigma_*, GD recursion (54)
a_h <- a_h - eta r a_h^{L-1}, its gradient-flow limit da_h/dt = -r a_h^{L-1};
a_* = (sigma_*/H)^{1/L}, lambda_min = L H a_*^{2L-2}; delta_h = a_h - mean(a), G = sum_h delta_h^2;
q_h = a_h^{2-L}, z_h = q_h - mean(q), V = sum_h z_h^2.

Results (each function's docstring has its doctest; L is a symbol unless stated):

- Proposition E.3: dq_h/dt = (L-2) r for every h, so z is conserved under GF; the leaf is
  a_h = (m + z_h)^{-1/(L-2)} (:func:`gf_leaf`);
- Eq. (57): V = (L-2)^2 a_*^{2-2L} G + O(G^{3/2}) (:func:`variance_equivalence`);
- Proposition E.4, Eqs. (58)-(59): on the zero-loss point of the leaf z,
  Lambda(z) = lambda_min + L(L-1)/(L-2) a_*^{4L-6} ||z||^2 + O(||z||^3) (:func:`leaf_sharpness_expansion`);
- Eq. (60): on the zero-loss manifold lambda = lambda_min + L(L-1)(L-2) a_*^{2L-4} G + O(G^{3/2})
  (:func:`zero_loss_expansion`);
- Lemma E.5 (61) and Lemma E.6 (62): a_h^{2-L} <- F_c(a_h^{2-L}), F_c(u) = u^{L-1}/(u-c)^{L-2}, c = eta r;
  F_c'(u) = u^{L-2}(u - (L-1)c)/(u-c)^{L-1}, and 1 - F_c' = g(c)/(u-c)^{L-1} with
  g(c) = (u-c)^{L-1} - u^{L-2}(u - (L-1)c), g(0) = 0, g'(c) = (L-1)(u^{L-2} - (u-c)^{L-2})
  (:func:`one_dimensional_map`);
- Lemma E.9, Eq. (64): r' = -r + beta r + A r^2 - B r^3 + O(r^4) (:func:`normal_form`);
- beyond the text: the sharpness moves with the residual, beta(t+1) - beta(t) = 4 A(t) r(t) + O(r^2)
  (:func:`sharpness_shift`), so |beta| <= C r^2 (Hypothesis E.10) cannot hold at two
  consecutive small-residual steps: the constant both steps need is >= 2A/|r| + O(1)
  (:func:`bracketing_consecutive`; :func:`two_step_under_bracketing` gives (65) when it does hold);
  on a GD two-cycle beta(t) = -2 A r(t) + O(r^2) and
  r(t) + r(t+1) = -A r(t)^2 + O(r^3), the opposite sign of (65) (:func:`two_cycle`);
- the two-step transverse multiplier (Section E.5): frozen (kappa fixed) it is
  1 - (kappa^2 + kappa S) r^2 with r + r' = S r^2 (the paper's form for S = A); with kappa following
  the mean, kappa(t+1) = kappa(t)(1 - eta (L-2) abar^{L-2} r(t)) + O(r^2), it is
  1 - (kappa^2 (2L-3)/(L-1) + kappa S) r^2 (:func:`two_step_multiplier`);
- Eq. (69): G_dagger = (2 - eta lambda_min)/(eta C_lambda) from (60) (:func:`stopping_gap`).

Reference: arXiv 2606.05219, Appendix E (Eqs. (53)-(69)); Section 5.1 (the mechanism paragraph).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from derivations.memo import memo
from derivations.validation import integer

L = sp.Symbol("L", positive=True)  # depth, L > 2 where the statement needs it
eta = sp.Symbol("eta", positive=True)
r = sp.Symbol("r", real=True)  # mode residual
a_star = sp.Symbol("a_star", positive=True)  # balanced per-layer value (sigma_*/H)^{1/L}
eps = sp.Symbol("epsilon", positive=True)  # expansion parameter
m = sp.Symbol("m", positive=True)  # position along a GF leaf
c = sp.Symbol("c", real=True)  # eta r in Lemma E.5
u = sp.Symbol("u", positive=True)  # a^{2-L}
kappa = sp.Symbol("kappa", positive=True)  # eta (L-1) abar^{L-2}
A, S = sp.symbols("A S", real=True)  # normal-form coefficient, and r + r' = S r^2


def zero_by_exponents(expr: sp.Expr, bases: Sequence[sp.Symbol] = ()) -> sp.Expr:
    """Simplify a sum of monomials whose exponents are symbolic: 0 when it vanishes identically.

    Each base b in ``bases`` (a positive symbol) becomes exp(log_b); after expansion every term
    is coefficient x exp(exponent), terms are grouped by their exponent reduced with
    ``cancel`` (a rational function of L), and each group's coefficient is simplified. Plain
    ``simplify`` stalls on a_*^{2(L^2-3L+2)/(L-2)} - a_*^{2L-2}; this does not.

    >>> zero_by_exponents(a_star**(2*(L**2 - 3*L + 2)/(L - 2)) - a_star**(2*L - 2), [a_star])
    0
    """
    logs = {b: sp.Symbol(f"log_{b}", real=True) for b in bases}
    e = sp.sympify(expr).subs({b: sp.exp(logs[b]) for b in bases})
    for _ in range(4):  # (exp x)^y -> exp(x y) until no such power is left
        e = e.replace(lambda t: t.is_Pow and isinstance(t.base, sp.exp), lambda t: sp.exp(t.base.args[0] * t.exp))
        e = sp.expand(sp.powsimp(sp.expand(e), force=True))
    groups: dict = {}
    for term in sp.Add.make_args(e):
        factors = sp.Mul.make_args(term)
        k = sp.cancel(sp.expand(sum(f.args[0] for f in factors if isinstance(f, sp.exp))))
        coef = sp.Mul(*[f for f in factors if not isinstance(f, sp.exp)])
        groups[k] = groups.get(k, 0) + coef
    out = sp.Add(*[sp.simplify(cf) * sp.exp(k) for k, cf in groups.items()])
    out = out.subs({v: sp.log(b) for b, v in logs.items()})
    return sp.simplify(
        sp.powsimp(
            out.replace(lambda t: isinstance(t, sp.exp), lambda t: sp.exp(sp.expand_log(t.args[0], force=True))),
            force=True,
        )
    )


def _z(e, bases=(a_star,)) -> sp.Expr:
    return zero_by_exponents(e, bases)


def _taylor2(base, k, shift):
    """(base + shift)^k to second order in a small ``shift`` (binomial series)."""
    x_ = shift / base
    return base**k * (1 + k * x_ + k * (k - 1) / 2 * x_**2)


def _centered(Hn: int, name: str) -> list:
    """Hn symbols summing to zero (the last is minus the sum of the others)."""
    integer(Hn, "Hn", 2)
    v = list(sp.symbols(f"{name}1:{Hn}", real=True))
    return v + [-sum(v)]


def gf_leaf() -> dict:
    """Proposition E.3: dq_h/dt under da_h/dt = -r a_h^{L-1}, and the leaf curve.

    >>> g = gf_leaf()
    >>> g["dq_dt"] == (L - 2)*r, g["leaf_inverse_residual"]
    (True, 0)
    """
    a = sp.Symbol("a", positive=True)
    adot = -r * a ** (L - 1)
    dq = _z(sp.diff(a ** (2 - L), a) * adot, (a,))
    zh = sp.Symbol("z_h", real=True)
    leaf_a = (m + zh) ** (-1 / (L - 2))
    v = sp.Symbol("v", positive=True)  # m + z_h > 0 on the leaf
    inv = _z(leaf_a.subs(zh, v - m) ** (2 - L) - v, (v,))
    return {"dq_dt": sp.factor(dq), "leaf_inverse_residual": inv}


def variance_equivalence(Hn: int = 3) -> dict:
    """Eq. (57): a_h = a_* + eps delta_h (sum delta = 0) gives V = (L-2)^2 a_*^{2-2L} eps^2 sum delta^2 + O(eps^3).

    ``coefficient_residual`` is the eps^2 coefficient of V minus the paper's, 0; ``eps1`` the
    eps^1 coefficient (0).

    >>> ve = variance_equivalence(3)
    >>> ve["eps1"], ve["coefficient_residual"]
    (0, 0)
    """
    d = _centered(Hn, "delta")
    q = [_taylor2(a_star, 2 - L, eps * dh) for dh in d]
    qbar = sum(q) / Hn
    ser = sp.expand(sum((qh - qbar) ** 2 for qh in q))  # coefficients up to eps^2 are exact
    c1 = _z(ser.coeff(eps, 1))
    c2 = ser.coeff(eps, 2)
    want = (L - 2) ** 2 * a_star ** (2 - 2 * L) * sum(dh**2 for dh in d)
    return {"eps1": c1, "coefficient_residual": _z(c2 - want)}


def leaf_sharpness_expansion(Hn: int = 3) -> dict:
    """Eq. (58): the zero-loss point of the leaf z = eps zeta (sum zeta = 0) has
    Lambda = lambda_min + k eps^2 ||zeta||^2 + O(eps^3).

    Units: q = a^{2-L} scales as a_*^{2-L}, so write m = a_*^{2-L}(1 + mu) and z = a_*^{2-L} eps zhat.
    Then a_h^L = (m + z_h)^{-L/(L-2)} = a_*^L (1 + mu + eps zhat_h)^{-L/(L-2)} and
    a_h^{2L-2} = a_*^{2L-2} (1 + mu + eps zhat_h)^{-(2L-2)/(L-2)} (``scale_residuals``: the exponent
    identities (2-L)(-L/(L-2)) = L and (2-L)(-(2L-2)/(L-2)) = 2L-2, both 0). Zero loss,
    sum_h (1 + mu + eps zhat_h)^{-L/(L-2)} = H, fixes mu = mu1 eps + mu2 eps^2 order by order; and
    (58) becomes, after dividing by L a_*^{2L-2},
    sum_h (1 + mu + eps zhat_h)^{-(2L-2)/(L-2)} = H + (L-1)/(L-2) eps^2 ||zhat||^2 + O(eps^3), since
    a_*^{4L-6} ||z||^2 = a_*^{4L-6} a_*^{4-2L} ||zhat||^2 = a_*^{2L-2} ||zhat||^2 (``scale_residuals``, third).

    Keys: ``mu1`` (0), ``lambda0_residual`` (0), ``eps1`` (0), ``coefficient_residual`` (0),
    ``mu2`` (the leaf shift).

    >>> le = leaf_sharpness_expansion(3)
    >>> le["mu1"], le["lambda0_residual"], le["eps1"], le["coefficient_residual"], le["scale_residuals"]
    (0, 0, 0, 0, [0, 0, 0])
    """
    zeta = _centered(Hn, "zeta")
    mu1, mu2 = sp.symbols("mu1 mu2", real=True)
    mm = mu1 * eps + mu2 * eps**2
    kL, kS = -L / (L - 2), -(2 * L - 2) / (L - 2)
    cons = sp.expand(sum(_taylor2(sp.Integer(1), kL, mm + eps * zh) for zh in zeta) - Hn)  # exact to eps^2
    mu1v = sp.solve(sp.simplify(cons.coeff(eps, 1)), mu1)
    mu1v = mu1v[0] if mu1v else sp.nan
    mu2v = sp.solve(sp.simplify(cons.coeff(eps, 2).subs(mu1, mu1v)), mu2)[0]
    Lam = sp.expand(sum(_taylor2(sp.Integer(1), kS, mm + eps * zh) for zh in zeta).subs({mu1: mu1v, mu2: mu2v}))
    want = (L - 1) / (L - 2) * sum(zh**2 for zh in zeta)
    scale = [
        sp.simplify((2 - L) * kL - L),
        sp.simplify((2 - L) * kS - (2 * L - 2)),
        sp.simplify(4 * L - 6 + 2 * (2 - L) - (2 * L - 2)),
    ]
    return {
        "mu1": sp.simplify(mu1v),
        "mu2": sp.factor(mu2v),
        "lambda0_residual": sp.simplify(Lam.coeff(eps, 0) - Hn),
        "eps1": sp.simplify(Lam.coeff(eps, 1)),
        "coefficient_residual": sp.simplify(Lam.coeff(eps, 2) - want),
        "scale_residuals": scale,
    }


def zero_loss_expansion(Hn: int = 3) -> dict:
    """Eq. (60), directly on the zero-loss manifold: a_h = abar + eps delta_h, sum delta = 0.

    The constraint sum_h a_h^L = H a_*^L fixes abar = a_* + b2 eps^2 + O(eps^3); then
    Lambda = L sum_h a_h^{2L-2} = lambda_min + C eps^2 sum delta^2 + O(eps^3). ``C_residual`` is
    C - L(L-1)(L-2) a_*^{2L-4} (0); ``eps1`` the first-order term (0).

    >>> ze = zero_loss_expansion(3)
    >>> ze["eps1"], ze["C_residual"]
    (0, 0)
    """
    d = _centered(Hn, "delta")
    b1, b2 = sp.symbols("b1 b2", real=True)
    abar = a_star + b1 * eps + b2 * eps**2
    cons = sp.expand(sum(_taylor2(a_star, L, abar - a_star + eps * dh) for dh in d) - Hn * a_star**L)
    b1v = sp.solve(_z(cons.coeff(eps, 1)), b1)[0]
    b2v = sp.solve(_z(cons.coeff(eps, 2).subs(b1, b1v)), b2)[0]
    Lam = sp.expand(L * sum(_taylor2(a_star, 2 * L - 2, abar - a_star + eps * dh) for dh in d))
    Lam = sp.expand(Lam.subs({b1: b1v, b2: b2v}))
    G = sum(dh**2 for dh in d)
    return {
        "eps1": _z(Lam.coeff(eps, 1)),
        "C_residual": _z(Lam.coeff(eps, 2) - L * (L - 1) * (L - 2) * a_star ** (2 * L - 4) * G),
    }


@memo
def one_dimensional_map() -> dict:
    """Lemmas E.5-E.6: the map F_c and its derivative.

    - ``residual_61``: log of (a - eta r a^{L-1})^{2-L} minus log F_c(a^{2-L}) at c = eta r, for
      a - eta r a^{L-1} > 0 (compared as logarithms of positive quantities; 0);
    - ``residual_Fprime``: F_c' - u^{L-2}(u - (L-1)c)/(u-c)^{L-1} (0);
    - ``one_minus_Fprime_residual``: 1 - F_c' - g(c)/(u-c)^{L-1} (0);
    - ``g_at_0`` (0) and ``g_prime_residual``: g'(c) - (L-1)(u^{L-2} - (u-c)^{L-2}) (0).

    >>> om = one_dimensional_map()
    >>> om["residual_61"], om["residual_Fprime"], om["one_minus_Fprime_residual"], om["g_at_0"], om["g_prime_residual"]
    (0, 0, 0, 0, 0)
    """
    a = sp.Symbol("a", positive=True)
    w = sp.Symbol("w", positive=True)  # stands for 1 - c/u = 1 - eta r a^{L-2} > 0
    # a+ = a (1 - eta r a^{L-2}) = a w;  F_c(u) with u = a^{2-L}, c = u (1 - w)
    uu = a ** (2 - L)
    cc = uu * (1 - w)
    lhs = sp.expand_log(sp.log((a * w) ** (2 - L)), force=True)
    rhs = sp.expand_log(sp.log(uu ** (L - 1) / (uu - cc) ** (L - 2)), force=True)
    F = u ** (L - 1) / (u - c) ** (L - 2)
    Fp = sp.diff(F, u)
    g = (u - c) ** (L - 1) - u ** (L - 2) * (u - (L - 1) * c)
    v = sp.Symbol("v", positive=True)  # u - c > 0 (the proviso of Lemma E.5)

    def zero(e):
        return _z(e.subs(c, u - v), (u, v))

    return {
        "residual_61": sp.simplify(sp.expand(lhs - rhs)),
        "residual_Fprime": zero(Fp - u ** (L - 2) * (u - (L - 1) * c) / (u - c) ** (L - 1)),
        "one_minus_Fprime_residual": zero(1 - Fp - g / (u - c) ** (L - 1)),
        "g_at_0": sp.simplify(g.subs(c, 0)),
        "g_prime_residual": zero(sp.diff(g, c) - (L - 1) * (u ** (L - 2) - (u - c) ** (L - 2))),
    }


def _pathways(Hn):
    return list(sp.symbols(f"a1:{Hn + 1}", positive=True))


def normal_form(Hn: int = 2) -> dict:
    """Lemma E.9, Eq. (64), for symbolic L: r' expanded in r to third order.

    r' = sum_h a_h^L (1 - eta r a_h^{L-2})^L - sigma_* with sigma_* = sum_h a_h^L - r. Keys: the
    residuals of the coefficients of r^1, r^2, r^3 against -1 + beta = 1 - eta lambda,
    A = (eta^2/2) Lambda_3 and -B = -(eta^3/6) Lambda_4 (all 0); ``r0`` (0).

    >>> nf = normal_form(2)
    >>> nf["r0"], nf["r1_residual"], nf["r2_residual"], nf["r3_residual"]
    (0, 0, 0, 0)
    """
    a = _pathways(Hn)
    sig = sum(ah**L for ah in a) - r
    rp = sum(ah**L * (1 - eta * r * ah ** (L - 2)) ** L for ah in a) - sig
    ser = sp.expand(sp.series(rp, r, 0, 4).removeO())
    lam = L * sum(ah ** (2 * L - 2) for ah in a)
    L3 = L * (L - 1) * sum(ah ** (3 * L - 4) for ah in a)
    L4 = L * (L - 1) * (L - 2) * sum(ah ** (4 * L - 6) for ah in a)
    return {
        "r0": _z(ser.coeff(r, 0), a),
        "r1_residual": _z(ser.coeff(r, 1) - (1 - eta * lam), a),
        "r2_residual": _z(ser.coeff(r, 2) - eta**2 / 2 * L3, a),
        "r3_residual": _z(ser.coeff(r, 3) + eta**3 / 6 * L4, a),
    }


def sharpness_shift(Hn: int = 2) -> dict:
    """beta(t+1) - beta(t) to first order in r: 4 A(t) r(t) (not in the paper; it decides Hypothesis E.10).

    beta = 2 - eta lambda, lambda = L sum_h a_h^{2L-2}, one GD step (54). ``residual`` is the r^1
    coefficient of beta(t+1) - beta(t) minus 4 A = 2 eta^2 Lambda_3 (0); ``r0`` (0).

    >>> ss = sharpness_shift(2)
    >>> ss["r0"], ss["residual"]
    (0, 0)
    """
    a = _pathways(Hn)
    lam = L * sum(ah ** (2 * L - 2) for ah in a)
    lam_next = L * sum((ah * (1 - eta * r * ah ** (L - 2))) ** (2 * L - 2) for ah in a)
    dbeta = sp.expand(sp.series(-eta * (lam_next - lam), r, 0, 2).removeO())
    A_ = eta**2 / 2 * L * (L - 1) * sum(ah ** (3 * L - 4) for ah in a)
    return {"r0": _z(dbeta.coeff(r, 0), a), "residual": _z(dbeta.coeff(r, 1) - 4 * A_, a)}


def bracketing_consecutive(Hn: int = 2) -> dict:
    """Hypothesis E.10 (ii) at two consecutive steps forces |r(t)| >= 2A/C_beta + O(r): no fixed C_beta as r -> 0.

    From (54): beta(t+1) - beta(t) = 4 A r - D r^2 + O(r^3) with D = 6 (2L-3)/(L-2) B (``shift2_residual`` 0,
    pathway variables, symbolic L). Suppose |beta(t)| <= C r^2 and |beta(t+1)| <= C r'^2; write beta(t) = b r^2
    (|b| <= C), so r' = -r + A r^2 + (b - B) r^3 + O(r^4) by (64). Then b' := beta(t+1)/r'^2 has the Laurent series
    ``b_next`` = 4A/r + (b + 8A^2 - D) + O(r), and C >= max(|b|, |b'|) >= |b' - b|/2 = 2A/|r| + O(1): the smallest
    constant that serves both steps times |r| tends to ``c_times_r`` = 2A > 0 (the limit of r (b' - b)/2 as
    r -> 0+). So E.10 (ii) cannot hold at two consecutive steps with 0 < |r| < 2A/C_beta (to leading order), and a
    fixed C_beta cannot serve a residual that shrinks.

    >>> bc = bracketing_consecutive(2)
    >>> bc["shift1_residual"], bc["shift2_residual"], bc["c_times_r"], bc["b_next_lead"]
    (0, 0, 2*A, 4*A)
    """
    a = _pathways(Hn)
    lam = L * sum(ah ** (2 * L - 2) for ah in a)
    lam_next = L * sum((ah * (1 - eta * r * ah ** (L - 2))) ** (2 * L - 2) for ah in a)
    dbeta = sp.expand(sp.series(-eta * (lam_next - lam), r, 0, 3).removeO())
    A_ = eta**2 / 2 * L * (L - 1) * sum(ah ** (3 * L - 4) for ah in a)
    B_ = eta**3 / 6 * L * (L - 1) * (L - 2) * sum(ah ** (4 * L - 6) for ah in a)
    D_of_B = 6 * (2 * L - 3) / (L - 2)  # D = D_of_B * B
    b, B = sp.symbols("b B", real=True)
    r1 = -r + A * r**2 + (b - B) * r**3
    beta_next = b * r**2 + 4 * A * r - D_of_B * B * r**2
    b_next = sp.series(beta_next / r1**2, r, 0, 1).removeO()
    lead = sp.limit(r * (b_next - b) / 2, r, 0, "+")
    return {
        "shift1_residual": _z(dbeta.coeff(r, 1) - 4 * A_, a),
        "shift2_residual": _z(dbeta.coeff(r, 2) + D_of_B * B_, a),
        "b_next_lead": sp.expand(b_next * r).subs(r, 0),
        "b_next_const": sp.simplify(sp.expand(b_next).coeff(r, 0)),
        "c_times_r": sp.simplify(lead),
    }


def two_step_under_bracketing() -> dict:
    """Eq. (65) from (64) under Hypothesis E.10 (beta = b r^2, |b| <= C_beta).

    r' = -r + beta r + A r^2 - B r^3 with beta = b r^2. Keys: ``sum_r2`` the r^2 coefficient of
    r + r' (A), ``prod_r2`` the r^2 coefficient of r r' (-1), ``lead`` the r^1 coefficient of r' (-1:
    sign alternation for small r).

    >>> tb = two_step_under_bracketing()
    >>> tb["lead"], tb["sum_r2"], tb["prod_r2"]
    (-1, A, -1)
    """
    b, B = sp.symbols("b B", real=True)
    r1 = -r + b * r**2 * r + A * r**2 - B * r**3
    return {
        "lead": sp.expand(r1).coeff(r, 1),
        "sum_r2": sp.expand(r + r1).coeff(r, 2),
        "prod_r2": sp.expand(r * r1).coeff(r, 2),
    }


def two_cycle() -> dict:
    """A period-two orbit of the normal form: beta(t) = b1 r + O(r^2) with b1 forced to -2A.

    With r' = -r + beta r + A r^2, beta' = beta + 4 A r (:func:`sharpness_shift`) and
    r'' = -r' + beta' r' + A r'^2, period two (r'' = r) at order r^2 gives ``b1`` = -2A, and then
    ``sum_coefficient`` (r + r')/r^2 = -A: the opposite sign of (65).

    >>> tc = two_cycle()
    >>> tc["b1"], tc["sum_coefficient"]
    (-2*A, -A)
    """
    b1 = sp.Symbol("b1", real=True)
    beta = b1 * r
    r1 = -r + beta * r + A * r**2
    beta1 = beta + 4 * A * r
    r2 = -r1 + beta1 * r1 + A * r1**2
    e = sp.expand(r2 - r)
    sol = sp.solve(e.coeff(r, 2), b1)[0]
    return {"b1": sol, "sum_coefficient": sp.expand((r + r1).subs(b1, sol)).coeff(r, 2)}


@memo
def two_step_multiplier() -> dict:
    """The two-step transverse multiplier to order r^2, frozen and with kappa following the mean.

    One step multiplies delta_h by 1 - kappa(t) r(t) + O(r delta) with kappa(t) = eta (L-1) abar(t)^{L-2};
    abar(t+1) = abar - eta r abar^{L-1} + O(r G) gives kappa(t+1) = kappa - kappa^2 (L-2)/(L-1) r + O(r^2).
    With r' = -r + S r^2:

    - ``frozen``: the r^2 coefficient of (1 - kappa r)(1 - kappa r'): -(kappa^2 + kappa S) (the paper's
      m_t for S = A);
    - ``moving``: the same with kappa(t+1): -(kappa^2 (2L-3)/(L-1) + kappa S);
    - ``kappa_next_residual``: the r^1 coefficient of kappa(t+1) minus -kappa^2 (L-2)/(L-1) (0).

    >>> tm = two_step_multiplier()
    >>> tm["frozen"], sp.factor(tm["moving"])
    (-A*kappa - kappa**2, -kappa*(A*L - A + 2*L*kappa - 3*kappa)/(L - 1))
    """
    ab = sp.Symbol("abar", positive=True)
    kap = eta * (L - 1) * ab ** (L - 2)
    kap_next = eta * (L - 1) * (ab - eta * r * ab ** (L - 1)) ** (L - 2)
    k1 = sp.series(kap_next, r, 0, 2).removeO().coeff(r, 1)
    k1_res = _z(k1 + kap**2 * (L - 2) / (L - 1), (ab,))
    r1 = -r + S * r**2
    frozen = sp.expand((1 - kappa * r) * (1 - kappa * r1)).coeff(r, 2)
    moving = sp.expand((1 - kappa * r) * (1 - (kappa - kappa**2 * (L - 2) / (L - 1) * r) * r1)).coeff(r, 2)
    return {
        "frozen": frozen.subs(S, A),
        "moving": sp.simplify(moving.subs(S, A)),
        "moving_S": sp.simplify(moving),
        "kappa_next_residual": k1_res,
    }


def stopping_gap() -> dict:
    """Eq. (69) from (60): solving lambda_min + C_lambda G = 2/eta for G.

    >>> sg = stopping_gap()
    >>> sg["residual"]
    0
    """
    lam_min, C, G = sp.symbols("lambda_min C_lambda G", positive=True)
    sol = sp.solve(sp.Eq(lam_min + C * G, 2 / eta), G)[0]
    return {"G_dagger": sol, "residual": sp.simplify(sol - (2 - eta * lam_min) / (eta * C))}


@memo
def balanced_two_cycle() -> dict:
    """Eq. (67) on the balanced line: the period-two orbit of (54) just beyond eta lambda_min = 2.

    With a_h = a for every h (G = 0), (54) is one map of rho = r/sigma_*. Write a = a_*(1 + rho)^{1/L}
    (so r = H a^L - sigma_* = sigma_* rho, sigma_* = H a_*^L) and eta = (2 + chi)/lambda_min, chi the
    sharpness excess eta lambda_min - 2 of the balanced minimum (E.6). Then
    eta r a^{L-2} = (2 + chi) rho w^{1-2/L}/L with w = 1 + rho (``step_residual``: 0), and
    rho' = w (1 - eta r a^{L-2})^L - 1 = g1 rho + g2 rho^2 + g3 rho^3 + O(rho^4).

    The second iterate is rho'' - rho = rho P(rho, chi) with P = c1 chi + c2 rho^2 + O(chi rho, chi^2, rho^3)
    (``P_rho1``: the rho^1 coefficient of P at chi = 0, 0), so the period-two points satisfy
    rho^2 = K chi + O(chi^{3/2}) with K = -c1/c2 = 1/(g2^2 + g3) at chi = 0: a real orbit needs chi > 0
    (K > 0), and its mean square is sigma_*^2 K chi + O(chi^2) (the two points shift alike at the next
    order). Keys (at chi = 0 unless named): ``g1`` (-1 - chi, all chi), ``g2``, ``g3``, ``K`` (units
    sigma_*^2: <r^2> = sigma_*^2 K chi), ``A_sigma`` = sigma_* A and ``B_sigma2`` = sigma_*^2 B of (64) at
    the balanced point, ``g2_plus_A`` (0: the exact map's quadratic coefficient is -A, not the +A of (64),
    because beta moves with r), and ``K_frozen`` = 1/(A^2 - B), what (64) with beta held fixed would give.

    >>> bt = balanced_two_cycle()
    >>> bt["step_residual"], bt["P_rho1"], bt["g1"], bt["g2_plus_A"], sp.factor(bt["K"])
    (0, 0, -chi - 1, 0, 3*L**2/(4*(L - 1)*(5*L - 4)))
    """
    rho = sp.Symbol("rho", real=True)
    chi = sp.Symbol("chi", real=True)
    w = sp.Symbol("w", positive=True)  # 1 + rho
    Hs = sp.Symbol("H", positive=True)
    lam_min = L * Hs * a_star ** (2 * L - 2)
    et = (2 + chi) / lam_min
    # from the definitions: a = a_* w^{1/L}, r = H a^L - sigma_* with sigma_* = H a_*^L
    a_ = a_star * w ** (1 / L)
    r_ = Hs * a_**L - Hs * a_star**L
    x_def = et * r_ * a_ ** (L - 2)
    x_red = (2 + chi) * (w - 1) * w ** (1 - 2 / L) / L
    step_res = _z(sp.expand(x_def - x_red), (a_star, w))
    g = (1 + rho) * (1 - (2 + chi) * rho * (1 + rho) ** (1 - 2 / L) / L) ** L - 1
    ser = sp.expand(sp.series(g, rho, 0, 4).removeO())
    g1, g2, g3 = (sp.factor(ser.coeff(rho, k)) for k in (1, 2, 3))
    G1, G2, G3 = sp.symbols("G1:4")  # compose with plain symbols first (fast), then substitute
    y = G1 * rho + G2 * rho**2 + G3 * rho**3
    second = sp.expand(G1 * y + G2 * y**2 + G3 * y**3 - rho)
    P = sum(second.coeff(rho, k) * rho ** (k - 1) for k in (1, 2, 3))  # (rho'' - rho)/rho to rho^2
    P = sp.expand(P.subs({G1: g1, G2: g2, G3: g3}))
    c1 = sp.factor(sp.diff(P.coeff(rho, 0), chi).subs(chi, 0))
    c2 = sp.factor(P.coeff(rho, 2).subs(chi, 0))
    K = sp.factor(-c1 / c2)
    # (64)'s coefficients at the balanced point, eta = 2/lambda_min, in units of sigma_* = H a_*^L
    e0 = 2 / lam_min
    A_s = _z(sp.expand(e0**2 / 2 * L * (L - 1) * Hs * a_star ** (3 * L - 4) * Hs * a_star**L))
    B_s = _z(sp.expand(e0**3 / 6 * L * (L - 1) * (L - 2) * Hs * a_star ** (4 * L - 6) * (Hs * a_star**L) ** 2))
    g2_0, g3_0 = sp.factor(g2.subs(chi, 0)), sp.factor(g3.subs(chi, 0))
    return {
        "step_residual": step_res,
        "g1": sp.expand(g1),
        "g2": g2_0,
        "g3": g3_0,
        "P_rho1": sp.factor(P.coeff(rho, 1).subs(chi, 0)),
        "K": K,
        "K_residual": sp.factor(K - 1 / (g2_0**2 + g3_0)),
        "A_sigma": sp.factor(A_s),
        "B_sigma2": sp.factor(B_s),
        "g2_plus_A": sp.factor(g2_0 + A_s),
        "K_frozen": sp.factor(1 / (A_s**2 - B_s)),
    }


def two_path_zero_loss() -> dict:
    """The zero-loss curve of two pathways (H = 2), on which lambda is a function of the gap G (E.6's lambda(G)).

    x^L + y^L = sigma_* with x >= y >= 0 (a_1 = x, a_2 = y), lambda = L (x^{2L-2} + y^{2L-2}),
    G = (x - y)^2/2. Along the curve dy/dx = -(x/y)^{L-1}; then

    - ``dlam_dx_residual``: d lambda/dx - 2L(L-1) x^{L-1}(x^{L-2} - y^{L-2}) (0): positive for x > y, L > 2;
    - ``dG_dx_residual``: dG/dx - (x - y)(1 + (x/y)^{L-1}) (0): positive for x > y;

    so lambda is strictly increasing in G from the balanced point (x = y = a_*: G = 0, lambda = lambda_min,
    ``balanced_residual`` 0) to the one-path point (y = 0, x = sigma_*^{1/L}: ``G_one_path`` =
    sigma_*^{2/L}/2, ``one_path_lambda`` = L sigma_*^{2-2/L} = S_1). Hence lambda(G_dagger) = 2/eta has a
    root G_dagger in [0, G_one_path) iff lambda_min <= 2/eta < S_1.

    >>> tp = two_path_zero_loss()
    >>> tp["dlam_dx_residual"], tp["dG_dx_residual"], tp["balanced_residual"], tp["one_path_residual"]
    (0, 0, 0, 0)
    """
    x, y, sig = sp.symbols("x y sigma_star", positive=True)
    dydx = -((x / y) ** (L - 1))  # implicit derivative of x^L + y^L = const
    lam = L * (x ** (2 * L - 2) + y ** (2 * L - 2))
    dlam = sp.diff(lam, x) + sp.diff(lam, y) * dydx
    Gx = (x - y) ** 2 / 2
    dG = sp.diff(Gx, x) + sp.diff(Gx, y) * dydx
    res_lam = _z(sp.expand(dlam - 2 * L * (L - 1) * x ** (L - 1) * (x ** (L - 2) - y ** (L - 2))), (x, y))
    res_G = sp.simplify(sp.expand(dG - (x - y) * (1 + (x / y) ** (L - 1))))
    bal = _z(sp.expand(lam.subs({x: a_star, y: a_star}) - L * 2 * a_star ** (2 * L - 2)))
    x1 = sig ** (1 / L)
    one_lam = sp.powsimp(sp.expand_power_base(L * x1 ** (2 * L - 2), force=True), force=True)
    return {
        "dlam_dx_residual": res_lam,
        "dG_dx_residual": res_G,
        "balanced_residual": bal,
        "G_one_path": sp.simplify(x1**2 / 2),
        "one_path_lambda": one_lam,
        "one_path_residual": sp.simplify(sp.expand_power_base(one_lam - L * sig ** (2 - 2 / L), force=True)),
    }
