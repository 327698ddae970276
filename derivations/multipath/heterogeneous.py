"""Heterogeneous depths: sharpness, the Lagrange conditions and gradient-flow growth rates (Section 5).

Setting. Pathway h has depth L_h and per-layer value a_h = sigma_h^{1/L_h} in the mode
considered (depth-balanced manifold (45)); sigma_h = a_h^{L_h}; the mode residual is
r = sum_h sigma_h - sigma_*.

Results (each function's docstring has its doctest):

- Proposition 5.1, Eq. (17): lambda = sum_h L_h sigma_h^{2-2/L_h} (the Jacobian has L_h entries
  sigma_h^{1-1/L_h} per pathway) (:func:`hetero_eigenvalue`, :func:`hetero_d1_hessian` for the
  full Hessian with d = 1);
- Eq. (18): d lambda/d sigma_h = 2 (L_h - 1) sigma_h^{1-2/L_h}; equalising it gives
  sigma_h(mu) = (mu / (2(L_h - 1)))^{L_h/(L_h - 2)}, strictly increasing in mu for L_h > 2, and
  lambda is strictly convex on the constraint set when every L_h > 2, so the minimiser is
  the unique solution of sum_h sigma_h(mu) = sigma_* (:func:`lagrange`);
- equal shares at the optimum (two pathways, L_1 < L_2): sigma_1 = sigma_2 exactly at
  sigma_* = 2 s_c with s_c = ((L_2 - 1)/(L_1 - 1))^{-L_1 L_2 / (2 (L_2 - L_1))}; the shallower
  pathway carries more iff sigma_* > 2 s_c (:func:`share_crossover`);
- single-path sharpness L_h sigma_*^{2-2/L_h}: the shallow pathway's is larger iff
  sigma_* < (L_2/L_1)^{-L_1 L_2 / (2 (L_2 - L_1))} (:func:`single_path_crossover`);
- gradient flow on the depth-balanced manifold, da_h/dt = -r a_h^{L_h-1}: the per-layer rate is
  -r sigma_h^{(L_h-1)/L_h}, the end-to-end rate d sigma_h/dt = -L_h r sigma_h^{2-2/L_h}; for equal
  depths the ratio of end-to-end rates is (sigma_h/sigma_k)^{2-2/L} and that of per-layer
  rates (a_h/a_k)^{L-1} (:func:`growth_rates`).

Reference: arXiv 2606.05219, Section 5.1 (symmetry breaking), Section 5.3 (Eqs. (17)-(18)),
Appendix C.6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy as sp

from derivations.memo import memo
from derivations.validation import integer

sigma = sp.Symbol("sigma_star", positive=True)  # target singular value of the mode
mu = sp.Symbol("mu", positive=True)  # Lagrange multiplier of (18)
Lh, Lk = sp.symbols("L_h L_k", positive=True)  # depths (real where a statement allows it)
sh, sk = sp.symbols("sigma_h sigma_k", positive=True)  # end-to-end pathway values
ah, ak = sp.symbols("a_h a_k", positive=True)  # per-layer values
r = sp.Symbol("r", real=True)  # mode residual
L1, L2 = sp.symbols("L_1 L_2", positive=True)


def _depths(depths) -> list[int]:
    """The depths as ints, each an integer >= 1 (:func:`derivations.validation.integer`); the error names the list."""
    try:
        return [integer(d, "depth", 1) for d in depths]
    except ValueError:
        raise ValueError(f"depths must be integers >= 1; got {depths!r}") from None


def hetero_eigenvalue(sigmas: Iterable[sp.Expr], depths: Iterable[int | sp.Expr]) -> sp.Expr:
    """lambda = sum_h L_h sigma_h^{2-2/L_h} (Eq. (17)).

    >>> a, b = sp.symbols("a b", positive=True)
    >>> hetero_eigenvalue([a, b], [2, 4])
    2*a + 4*b**(3/2)
    """
    return sum(
        sp.sympify(d) * sv ** (2 - sp.Rational(2, d) if isinstance(d, int) else 2 - 2 / d)
        for sv, d in zip(sigmas, depths)
    )


def hetero_d1_hessian(depths: Sequence[int]) -> dict:
    """d = 1, pathways of the given integer depths, per-layer values a_h: Hessian at zero loss.

    ``eigenvalues``: the nonzero eigenvalue is sum_h L_h a_h^{2L_h-2} = (17) at sigma_h = a_h^{L_h}.

    >>> out = hetero_d1_hessian([2, 3])
    >>> sorted(out["eigenvalues"].items(), key=str)
    [(0, 4), (2*a_1**2 + 3*a_2**4, 1)]
    """
    depths = _depths(depths)
    a = sp.symbols(f"a_1:{len(depths) + 1}", positive=True)
    w = [[sp.Symbol(f"w_{h + 1}{k + 1}") for k in range(d)] for h, d in enumerate(depths)]
    f = (sum(sp.Mul(*row) for row in w) - sigma) ** 2 / 2
    flat = [v for row in w for v in row]
    Hm = sp.hessian(f, flat).subs({w[h][k]: a[h] for h, d in enumerate(depths) for k in range(d)})
    Hm = Hm.subs(sigma, sum(a[h] ** d for h, d in enumerate(depths))).applyfunc(sp.expand)
    return {"hessian": Hm, "eigenvalues": {sp.expand(k): v for k, v in Hm.eigenvals().items()}}


def lagrange() -> dict:
    """Eq. (18) and the allocation it implies, for a symbolic depth L_h.

    - ``marginal``: d/d sigma_h of L_h sigma_h^{2-2/L_h}; ``residual_18``: marginal - 2(L_h - 1) sigma_h^{1-2/L_h} (0);
    - ``allocation``: sigma_h(mu) = (mu/(2(L_h-1)))^{L_h/(L_h-2)}; ``solves_18``: the marginal at
      sigma_h(mu) minus mu, as log(marginal) - log(mu) (0);
    - ``curvature``: d^2/d sigma_h^2 of L_h sigma_h^{2-2/L_h} = 2(L_h-1)(L_h-2)/L_h sigma_h^{-2/L_h}
      (> 0 for L_h > 2: lambda is a separable strictly convex function);
    - ``dlog_alloc``: d log sigma_h / d log mu = L_h/(L_h-2) (> 0 for L_h > 2: sum_h sigma_h(mu)
      is strictly increasing, so the constraint fixes mu uniquely);
    - ``marginal_at_0``: the marginal as sigma_h -> 0+ for L_h = 3..7 (0, as for every L_h > 2 since
      the exponent 1 - 2/L_h is positive: every pathway gets a positive share, no corner).

    >>> lg = lagrange()
    >>> lg["residual_18"], lg["solves_18"], lg["dlog_alloc"], set(lg["marginal_at_0"].values())
    (0, 0, L_h/(L_h - 2), {0})
    >>> sp.factor(lg["curvature"] * sh**(2/Lh))
    2*(L_h - 2)*(L_h - 1)/L_h
    """
    term = Lh * sh ** (2 - 2 / Lh)
    marg = sp.diff(term, sh)
    alloc = (mu / (2 * (Lh - 1))) ** (Lh / (Lh - 2))
    # compare logarithms: simplify stalls on the nested powers, expand_log (positive symbols) does not
    solves = sp.expand_log(sp.log(marg.subs(sh, alloc)) - sp.log(mu), force=True)
    return {
        "marginal": sp.simplify(marg),
        "residual_18": sp.simplify(marg - 2 * (Lh - 1) * sh ** (1 - 2 / Lh)),
        "allocation": alloc,
        "solves_18": sp.simplify(solves),
        "curvature": sp.simplify(sp.diff(term, sh, 2)),
        "dlog_alloc": sp.simplify(sp.diff(sp.log(alloc), mu) * mu),
        "marginal_at_0": {d: sp.limit(2 * (d - 1) * sh ** (1 - sp.Rational(2, d)), sh, 0, "+") for d in range(3, 8)},
    }


def share_crossover() -> dict:
    """Two pathways, depths L_1 < L_2: where the optimal shares are equal.

    Equal shares s need equal marginals, 2(L_1-1) s^{1-2/L_1} = 2(L_2-1) s^{1-2/L_2}, so
    ``s_c`` = ((L_2-1)/(L_1-1))^{L_1 L_2/(2(L_1 - L_2))} and sigma_* = 2 s_c. ``exponent_gap``
    is L_1/(L_1-2) - L_2/(L_2-2) = 2(L_2 - L_1)/((L_1-2)(L_2-2)) > 0: the shallow allocation
    grows faster in mu, so above the crossover (larger mu, larger sigma_*) the shallow
    pathway carries more, below it the deeper one does.

    >>> sc = share_crossover()
    >>> sc["residual"], sp.factor(sc["exponent_gap"])
    (0, -2*(L_1 - L_2)/((L_1 - 2)*(L_2 - 2)))
    """
    s_c = ((L2 - 1) / (L1 - 1)) ** (L1 * L2 / (2 * (L1 - L2)))
    lhs = 2 * (L1 - 1) * s_c ** (1 - 2 / L1)
    rhs = 2 * (L2 - 1) * s_c ** (1 - 2 / L2)
    res = sp.simplify(
        sp.powsimp(sp.expand_power_base(sp.expand_log(sp.log(lhs) - sp.log(rhs), force=True), force=True), force=True)
    )
    return {"s_c": s_c, "residual": sp.simplify(res), "exponent_gap": sp.simplify(L1 / (L1 - 2) - L2 / (L2 - 2))}


def single_path_crossover() -> dict:
    """Single-path sharpness L_h sigma_*^{2-2/L_h}: where the shallow and the deep one are equal.

    ``sigma_c`` = (L_2/L_1)^{L_1 L_2/(2(L_1 - L_2))}; ``log_ratio`` = log of shallow/deep single-path
    sharpness = log(L_1/L_2) + (2/L_2 - 2/L_1) log sigma_*, decreasing in sigma_* for L_1 < L_2: the
    shallow one is sharper iff sigma_* < sigma_c. At sigma_* = 1 the ratio is L_1/L_2 < 1.

    >>> sp_ = single_path_crossover()
    >>> sp_["log_ratio_at_c"], sp_["ratio_at_1"]
    (0, L_1/L_2)
    """
    sig_c = (L2 / L1) ** (L1 * L2 / (2 * (L1 - L2)))
    log_ratio = sp.log(L1 / L2) + (2 / L2 - 2 / L1) * sp.log(sigma)
    at_c = sp.simplify(sp.expand_log(log_ratio.subs(sigma, sig_c), force=True))
    ratio1 = sp.simplify((L1 * sigma ** (2 - 2 / L1) / (L2 * sigma ** (2 - 2 / L2))).subs(sigma, 1))
    return {"sigma_c": sig_c, "log_ratio": log_ratio, "log_ratio_at_c": at_c, "ratio_at_1": ratio1}


@memo
def growth_rates() -> dict:
    """Gradient-flow growth rates on the depth-balanced manifold (Sections 5.1 and 5.3).

    From da_h/dt = -r a_h^{L_h - 1} (the GF limit of (54)) and sigma_h = a_h^{L_h}:

    - ``per_layer``: da_h/dt in terms of sigma_h: -r sigma_h^{(L_h-1)/L_h};
    - ``end_to_end``: d sigma_h/dt = -L_h r sigma_h^{2-2/L_h};
    - ``ratio_end_to_end``: (d sigma_h/dt)/(d sigma_k/dt) at L_h = L_k = L: (sigma_h/sigma_k)^{2-2/L};
    - ``ratio_per_layer``: (da_h/dt)/(da_k/dt) at equal depth: (a_h/a_k)^{L-1}.

    >>> g = growth_rates()
    >>> g["per_layer_residual"], g["end_to_end_residual"], g["ratio_end_to_end_residual"], g["ratio_per_layer_residual"]
    (0, 0, 0, 0)
    """
    L = sp.Symbol("L", positive=True)
    adot_h = -r * ah ** (Lh - 1)
    per_layer = adot_h.subs(ah, sh ** (1 / Lh))
    sdot_h = sp.diff(ah**Lh, ah) * adot_h
    sdot_h_sig = sdot_h.subs(ah, sh ** (1 / Lh))
    e2e = sdot_h_sig.subs(Lh, L) / sdot_h_sig.subs({Lh: L, sh: sk})
    pl = adot_h.subs(Lh, L) / adot_h.subs({Lh: L, ah: ak})

    def z(e):
        return sp.simplify(sp.powsimp(sp.expand_power_base(e, force=True), force=True))

    return {
        "per_layer": z(per_layer),
        "per_layer_residual": z(per_layer + r * sh ** ((Lh - 1) / Lh)),
        "end_to_end": z(sdot_h_sig),
        "end_to_end_residual": z(sdot_h_sig + Lh * r * sh ** (2 - 2 / Lh)),
        "ratio_end_to_end_residual": z(e2e - (sh / sk) ** (2 - 2 / L)),
        "ratio_per_layer_residual": z(pl - (ah / ak) ** (L - 1)),
        "ratio_end_to_end_in_a": z(e2e.subs({sh: ah**L, sk: ak**L})),
    }


@memo
def early_growth() -> dict:
    """Gradient flow from a small start (Sections 5.1 and 5.3, 'grows exponentially faster').

    While sum_h sigma_h << sigma_* the residual is r = -sigma_* (the linearised early phase), and the
    depth-balanced GF da_h/dt = -r a_h^{L-1} becomes da/dt = sigma_* a^{L-1}. Separating variables
    (sympy.integrate of a^{1-L} from a_0 to a equals sigma_* t, solved for a):

    - ``solution``: a(t) = u^{-1/(L-2)} with u = a_0^{2-L} - (L-2) sigma_* t (``u``, ``du_dt`` = -(L-2) sigma_*);
      ``ode_residual`` and ``initial_residual`` are 0. So a^{2-L} falls linearly in t and a blows up at
      ``blowup`` T = a_0^{2-L}/((L-2) sigma_*): power-law growth, sigma = a^L = ((L-2) sigma_* (T - t))^{-L/(L-2)};
    - ``log_rate``: d log sigma/dt = L sigma_*/u, ``log_rate_residual``: log_rate - L sigma_* sigma^{1-2/L} (0): the
      exponential rate of a pathway is not a constant but grows with sigma itself;
    - ``log_rate_slope``: d^2 log sigma/dt^2 = L (L-2) sigma_*^2/u^2 (> 0 for L > 2; 0 only for L = 2);
    - ``ratio_residual``: sigma_1/sigma_2 - (u_2/u_1)^{L/(L-2)} for two pathways of one depth (0): the ratio is a
      power of a ratio of two linear functions of t, algebraic, not exp(c t);
    - ``L2``: at L = 2 the solution (a_0 exp(sigma_* t), from integrate of 1/a) and d log sigma/dt = 2 sigma_*, the
      same constant for every pathway: exponential growth at equal rates, the ratio stays sigma_1(0)/sigma_2(0).

    >>> g = early_growth()
    >>> g["ode_residual"], g["initial_residual"], g["log_rate_residual"], g["ratio_residual"], g["du_dt"]
    (0, 0, 0, 0, -sigma_star*(L - 2))
    >>> g["log_rate"], sp.factor(g["log_rate_slope"])
    (L*sigma_star/u, L*sigma_star**2*(L - 2)/u**2)
    >>> g["L2"]
    {'solution': a_0*exp(sigma_star*t), 'log_rate': 2*sigma_star}
    """
    L, t, a, a0, b0, u, v = sp.symbols("L t a a_0 b_0 u v", positive=True)

    def z(e):
        return sp.simplify(sp.powsimp(sp.powdenest(sp.expand_power_base(e, force=True), force=True), force=True))

    sol = sp.solve(sp.Eq(sp.integrate(a ** (1 - L), (a, a0, a), conds="none"), sigma * t), a)
    if len(sol) != 1:  # pragma: no cover - one positive branch for positive symbols
        raise RuntimeError(f"expected one solution branch; got {sol}")
    base, ex = sol[0].as_base_exp()
    du = sp.factor(sp.diff(base, t))
    au = u**ex  # a(t) in terms of u = base(t) > 0 before the blow-up
    sig_u = au**L
    log_rate = sp.simplify(sp.diff(sp.log(sig_u), u) * du)
    slope = sp.simplify(sp.diff(log_rate, u) * du)
    a2 = sp.solve(sp.Eq(sp.integrate(1 / a, (a, a0, a)), sigma * t), a)[0]
    return {
        "solution": sol[0],
        "u": base,
        "du_dt": du,
        "ode_residual": z(sp.diff(au, u) * du - sigma * au ** (L - 1)),
        "initial_residual": sp.simplify(sol[0].subs(t, 0) - a0),
        "blowup": sp.solve(sp.Eq(base, 0), t)[0],
        "log_rate": log_rate,
        "log_rate_residual": z(log_rate - L * sigma * z(sig_u ** (1 - 2 / L))),
        "log_rate_slope": slope,
        "ratio_residual": z(sig_u / (v**ex) ** L - (v / u) ** (L / (L - 2))),
        "L2": {"solution": a2, "log_rate": sp.simplify(sp.diff(sp.log(a2**2), t))},
    }
