"""Proof steps of Appendix 14 (the bound on log h_i) and Appendix 15 (Lemma 9, the quadratic expansion at S).

Coordinates as in :mod:`.dynamics`: unit 1 at angle ``alpha >= 0`` above e1, unit 2 at angle
``beta >= 0`` below it, ``delta = alpha + beta <= pi``; ``omega_i = a_i r_i``, ``h_i = a_i/r_i``,
``k_i = a_i^2 - r_i^2`` and ``q_i = -dR_s/domega_i`` (the radial gain: the derivative of the source
risk along the product ``a_i w_i`` at fixed direction; the reading of Appendix 14's lost
definitions, as in :func:`.dynamics.appendix14_laws`). Everything is derived from the source
polar risk and flow of :mod:`.dynamics` (:func:`.dynamics.polar_risk`, :func:`.dynamics.polar_flow`).

The region of Lemma 9 (its definition was lost in conversion) is read as
``D = {a_i, r_i > 0, alpha, beta > 0, alpha + beta < pi, omega_i < 1}``: the boundaries that the
proof shows are never reached are ``omega_i = 0`` (zero units), ``omega_i = 1``, ``alpha = 0``,
``beta = 0`` and ``delta = pi``.
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType

import sympy as sp

from .dynamics import alpha, beta, clone_amplitude, p, polar_flow, polar_risk
from .symbols import a1, a2, lam, omega1, omega2, r1, r2

h1, h2 = sp.symbols("h1 h2", positive=True)  # h_i = a_i / r_i
k1, k2 = sp.symbols("k1 k2", real=True)  # k_i = a_i^2 - r_i^2
k0 = sp.Symbol("K_0", nonnegative=True)  # |k_i(0)|
s = sp.Symbol("s", nonnegative=True)  # integration time
tau = sp.Symbol("tau", nonnegative=True)  # elapsed time
eps = sp.Symbol("epsilon", positive=True)  # scale of the normal coordinates chi
Bt_, mu, dl = sp.symbols("Btilde mu delta_n", real=True)  # normal coordinates B - B_s, mean angle, separation
kap1, kap2 = sp.symbols("kappa1 kappa2", real=True)  # k_i / epsilon

MEANS = ("weighted", "midpoint")


@cache  # SymPy results are immutable; cached to keep the audit fast
def source_gains() -> MappingProxyType:
    """``q_i = -dR_s/domega_i`` in ``(omega_1, omega_2, alpha, beta)`` (Appendices 14, 15).

    The source risk depends on ``a_i, r_i`` only through ``omega_i = a_i r_i``, so it is written
    with ``a_i = omega_i/r_i`` and differentiated in ``omega_i``; the result is free of ``r_i``.
    It equals ``J(alpha) - omega_1 J(0) - omega_2 J(delta)`` (and the mirror for ``q_2``):

    >>> from derivations.rare_gates.kernels import J_kernel
    >>> from derivations.rare_gates.symbols import t
    >>> J = J_kernel()
    >>> q = source_gains()
    >>> sp.simplify(q[1] - (J.subs(t, alpha) - omega1 * J.subs(t, 0) - omega2 * J.subs(t, alpha + beta)))
    0
    """
    R = sp.expand(polar_risk("source").subs({a1: omega1 / r1, a2: omega2 / r2}))
    if R.has(r1) or R.has(r2):
        raise RuntimeError("the source risk should depend on a_i, r_i only through omega_i = a_i r_i")
    return MappingProxyType({1: sp.expand(-sp.diff(R, omega1)), 2: sp.expand(-sp.diff(R, omega2))})


def _gain_in(i: int) -> sp.Expr:
    """``q_i`` with ``omega_j = a_j r_j`` written out, for comparison with the polar flow."""
    return source_gains()[i].subs({omega1: a1 * r1, omega2: a2 * r2})


def product_velocity(i: int) -> sp.Expr:
    """``omega_i' = a_i' r_i + a_i r_i'`` under source gradient flow of ``F_s`` (Appendix 15, the lost Eq. (33)).

    It equals ``(a_i^2 + r_i^2) q_i - 2 lambda omega_i``:

    >>> sp.simplify(product_velocity(1) - ((a1**2 + r1**2) * _gain_in(1) - 2 * lam * a1 * r1))
    0
    """
    if i not in (1, 2):
        raise ValueError(f"i must be 1 or 2; got {i!r}")
    v = polar_flow("source")
    a, r = (a1, r1) if i == 1 else (a2, r2)
    return sp.expand(v[a] * r + a * v[r])


def logh_velocity(i: int) -> sp.Expr:
    """``(log h_i)' = a_i'/a_i - r_i'/r_i`` under source gradient flow (Appendix 14).

    >>> k, om = a1**2 - r1**2, a1 * r1
    >>> sp.simplify(logh_velocity(1) + k / om * _gain_in(1))
    0
    """
    if i not in (1, 2):
        raise ValueError(f"i must be 1 or 2; got {i!r}")
    v = polar_flow("source")
    a, r = (a1, r1) if i == 1 else (a2, r2)
    return sp.expand(v[a] / a - v[r] / r)


def h_coordinates() -> dict:
    """``a_i = sqrt(omega_i h_i)``, ``r_i = sqrt(omega_i/h_i)``: the parameters in (omega_i, h_i)."""
    return {
        a1: sp.sqrt(omega1 * h1),
        r1: sp.sqrt(omega1 / h1),
        a2: sp.sqrt(omega2 * h2),
        r2: sp.sqrt(omega2 / h2),
    }


@cache  # SymPy results are immutable; cached to keep the audit fast
def angle_velocities() -> MappingProxyType:
    """Source ``alpha'``, ``beta'`` in ``(omega_i, h_i, alpha, beta)`` (Appendix 15, the lost Eq. (30)).

    ``alpha' = -r_1^{-2} dF_s/dalpha = h_1 (omega_2 g(delta) - g(alpha))`` and the mirror for beta:

    >>> from derivations.rare_gates.kernels import g_kernel
    >>> from derivations.rare_gates.symbols import t
    >>> g = g_kernel()
    >>> v = angle_velocities()
    >>> sp.simplify(v[alpha] - h1 * (omega2 * g.subs(t, alpha + beta) - g.subs(t, alpha)))
    0
    """
    v = polar_flow("source")
    sub = h_coordinates()
    return MappingProxyType({x: sp.expand(v[x].subs(sub)) for x in (alpha, beta)})


def delta_velocity_at_pi() -> sp.Expr:
    """``delta' = alpha' + beta'`` on the face ``delta = pi`` (``beta = pi - alpha``) of D (Lemma 9).

    >>> from derivations.rare_gates.kernels import g_kernel
    >>> from derivations.rare_gates.symbols import t
    >>> g = g_kernel()
    >>> sp.simplify(delta_velocity_at_pi() + h1 * g.subs(t, alpha) + h2 * g.subs(t, sp.pi - alpha))
    0
    """
    v = angle_velocities()
    return sp.simplify((v[alpha] + v[beta]).subs(beta, sp.pi - alpha))


def logh_budget() -> tuple[sp.Expr, sp.Expr]:
    """``int_0^tau |k_i(s)|/2 ds`` with ``|k_i(s)| = K_0 e^{-2 lambda s}``, ``K_0 = |k_i(0)|`` (RG-14.laws); tau -> oo.

    >>> logh_budget()[1]
    K_0/(4*lambda)
    """
    integrand = k0 * sp.exp(-2 * lam * s) / 2
    finite = sp.simplify(sp.integrate(integrand, (s, 0, tau)))
    return finite, sp.limit(finite, tau, sp.oo)


def balance_parameters(omega: sp.Expr, k: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``(a, r)`` with ``a r = omega``, ``a^2 - r^2 = k``, a, r > 0, for ``omega > 0``.

    Then ``a^2 + r^2 = sqrt(k^2 + 4 omega^2)``, written ``2 omega sqrt(1 + (k/(2 omega))^2)`` (equal for
    omega > 0) so that series in k need no sign information on omega:

    >>> om, kk = sp.symbols("omega k", positive=True)
    >>> a, r = balance_parameters(om, kk)
    >>> sp.simplify(a * r - om), sp.simplify(a**2 - r**2 - kk)
    (0, 0)
    """
    root = 2 * omega * sp.sqrt(1 + (k / (2 * omega)) ** 2)
    return sp.sqrt((root + k) / 2), sp.sqrt((root - k) / 2)


def normal_point(mean: str = "weighted") -> dict:
    """Polar coordinates at normal displacement ``epsilon chi`` from the point of S with allocation p (App. 15).

    ``chi = (Btilde, mu, delta, kappa_1, kappa_2)``: ``B = omega_1 + omega_2 = B_s + epsilon Btilde``,
    ``omega_1 = p B``, ``omega_2 = (1 - p) B``, separation ``alpha + beta = epsilon delta``,
    ``k_i = epsilon kappa_i``. ``mean`` fixes the mean angle mu (lost definition):
    ``"weighted"``: ``mu = p vartheta_1 + (1 - p) vartheta_2`` (the omega-weighted mean, equal to
    ``arg(a_1 w_1 + a_2 w_2) + O(delta^3)``); ``"midpoint"``: ``mu = (vartheta_1 + vartheta_2)/2``,
    with ``vartheta_1 = alpha``, ``vartheta_2 = -beta``. Returns the omegas, angles and balances.
    """
    if mean not in MEANS:
        raise ValueError(f"mean must be one of {MEANS}; got {mean!r}")
    Bs = clone_amplitude("source")
    Bn = Bs + eps * Bt_
    share = p if mean == "weighted" else sp.Rational(1, 2)
    th1 = eps * (mu + (1 - share) * dl)  # vartheta_1
    th2 = eps * (mu - share * dl)  # vartheta_2
    return {omega1: p * Bn, omega2: (1 - p) * Bn, alpha: th1, beta: -th2, k1: eps * kap1, k2: eps * kap2}


@cache  # SymPy results are immutable; cached to keep the audit fast
def quadratic_expansion(mean: str = "weighted") -> sp.Expr:
    """Second-order Taylor coefficient of ``F_s`` at S in the normal coordinates chi (Appendix 15).

    ``F_s = R_s(omega, alpha, beta) + (lambda/2) sum_i (a_i^2 + r_i^2)`` with the parameters from
    :func:`balance_parameters`, expanded in epsilon (chi -> epsilon chi) to ``O(epsilon^3)``: F is a
    polynomial in epsilon and its transcendental atoms, each replaced by its ``sp.series``.
    The polar risk uses the analytic branch ``J(t)`` for the angles to e1; where an angle is negative
    the true kernel is ``J(|t|)``, whose 2-jet at 0 is the same (``J(t) - J(-t) = O(t^3)``; RG-14.C2),
    so the second-order coefficient is that of F_s. Returns ``(F_s - (lambda - lambda^2))/epsilon^2``
    to leading order, after checking that the zeroth and first orders vanish. The midpoint mean is
    the linear change of coordinates ``mu_weighted = mu_midpoint + (p - 1/2) delta`` of the result.
    """
    if mean not in MEANS:
        raise ValueError(f"mean must be one of {MEANS}; got {mean!r}")
    if mean == "midpoint":
        return sp.expand(quadratic_expansion("weighted").subs(mu, mu + (p - sp.Rational(1, 2)) * dl))
    pt = normal_point(mean)
    R = polar_risk("source").subs({a1: omega1 / r1, a2: omega2 / r2})
    R = sp.expand(R).subs({omega1: pt[omega1], omega2: pt[omega2], alpha: pt[alpha], beta: pt[beta]})
    # weight decay (lambda/2)(a^2 + r^2) = lambda omega sqrt(1 + y), y = (k/(2 omega))^2 = O(epsilon^2):
    # sqrt(1 + y) to O(y^2) = O(epsilon^4) by sp.series in y
    y = sp.Symbol("y", nonnegative=True)
    root = sp.series(sp.sqrt(1 + y), y, 0, 2).removeO()
    decay: sp.Expr = sp.Integer(0)
    for om, k in ((omega1, k1), (omega2, k2)):
        a, r = balance_parameters(om, k)
        if sp.simplify(a**2 + r**2 - 2 * om * sp.sqrt(1 + (k / (2 * om)) ** 2)) != 0:
            raise RuntimeError("a^2 + r^2 is not 2 omega sqrt(1 + (k/(2 omega))^2)")
        decay += lam * om * root.subs(y, (k / (2 * om)) ** 2)
    decay = decay.subs({omega1: pt[omega1], omega2: pt[omega2], k1: pt[k1], k2: pt[k2]})
    F = R + decay - (lam - lam**2)
    # F is a polynomial in epsilon and in its non-polynomial atoms (sin, cos of epsilon-terms, inverse
    # powers of B_s + epsilon Btilde): replacing each atom by its sp.series to O(epsilon^3) and truncating
    # gives F's series
    atoms = [f for f in F.atoms(sp.Function, sp.Pow) if f.has(eps) and not (f.is_Pow and f.exp.is_positive)]
    G = sp.expand(F.xreplace({f: sp.series(f, eps, 0, 3).removeO() for f in atoms}))
    if not G.is_polynomial(eps):
        raise RuntimeError("F_s is not a polynomial in epsilon and its transcendental atoms")
    c0, c1 = sp.cancel(G.coeff(eps, 0)), sp.cancel(G.coeff(eps, 1))
    if c0 != 0 or c1 != 0:
        raise RuntimeError(f"F_s - (lambda - lambda^2) has nonzero order 0 or 1 at S: {c0}, {c1}")
    return sp.expand(sp.cancel(G.coeff(eps, 2)))


def q2_clone_limit() -> sp.Expr:
    """``q_2`` at unit 1 on the source clone and unit 2 vanishing: ``omega_1 = B_s, alpha = 0, omega_2 = 0`` (App. 15).

    ``q_2`` is continuous in ``(omega_1, alpha, omega_2)``, so this is its limit for every beta:

    >>> from derivations.rare_gates.kernels import J_kernel
    >>> from derivations.rare_gates.symbols import t
    >>> sp.simplify(q2_clone_limit() - 2 * lam * J_kernel().subs(t, beta))
    0
    """
    q2 = source_gains()[2]
    return sp.simplify(q2.subs({omega1: clone_amplitude("source"), alpha: 0, omega2: 0}))
