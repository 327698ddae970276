"""Gaussian initialisation, the sets D0 and K, and the initial target risk (Appendix 18; Sections 1, 3).

Initialisation: ``a_i ~ N(0, 1)`` and ``w_i ~ N(0, I_2)``, all independent; ``r_i = |w_i|``,
``omega_i = a_i r_i`` and ``vartheta_i`` is the polar angle of ``w_i`` measured from ``e1``.

Reconstructed reading of the sets (the defining display of D0 was lost in conversion):

* ``D0 = {a_1, a_2 > 0, omega_1 + omega_2 < 3/4, vartheta_1 > 0 > vartheta_2,
  vartheta_1 - vartheta_2 < pi}`` *in either labelling of the units*, i.e. the two hidden
  vectors lie on opposite sides of ``e1`` with an angle below ``pi`` between them (the
  display in Section 3 shows the labelled form "after relabelling").
* ``K`` (Appendix 18, display kept): ``m <= a_i <= M``, ``m <= |w_i| <= M``,
  ``omega_1 + omega_2 <= 3/4 - m``, ``vartheta_1 >= m``, ``vartheta_2 <= -m``,
  ``vartheta_1 - vartheta_2 <= pi - m``, again in either labelling. The factor
  ``3m/pi = 2 labellings x 3 strips x m/(2 pi)`` in the paper's bound on ``P(D0 \\ K)``
  only makes sense for the symmetrised set, and only the symmetrised ``D0`` has
  ``P(D0) > 1.06%`` (the labelled one has half of it, about ``0.54%``).

Everything below is integrated from the Gaussian law; nothing is copied from the paper.

>>> sp.simplify(p_d0() - (1 - sp.Rational(7, 4) * sp.exp(-sp.Rational(3, 4))) / 16)
0
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.calculus.util import maximum

from ..memo import memo
from .kernels import J_kernel, disk_expectation, q_constant
from .symbols import a1, a2, delta, omega1, omega2, r1, r2, rho, t, th1, th2, x

PI = sp.pi
a = sp.Symbol("a", positive=True)  # an output weight, restricted to a > 0
y = sp.Symbol("y", positive=True)  # a generic positive threshold
m = sp.Symbol("m", positive=True)  # the inner margin of K
M = sp.Symbol("M", positive=True)  # the outer radius of K
S = sp.Symbol("S", nonnegative=True)  # omega_1 + omega_2
u1, u2 = sp.symbols("u1 u2", real=True)  # polar angles of w_1, w_2 in (-pi, pi]

OMEGA_CAP = sp.Rational(3, 4)  # omega_1 + omega_2 < 3/4 in D0


def _require(condition: bool, what: str) -> None:
    """Raise ``ArithmeticError`` when a step of a derivation does not hold."""
    if not condition:
        raise ArithmeticError(f"derivation step failed: {what}")


def std_normal_density(z: sp.Expr) -> sp.Expr:
    """phi(z) = exp(-z^2/2)/sqrt(2 pi), the N(0, 1) density.

    >>> std_normal_density(sp.Integer(0))
    sqrt(2)/(2*sqrt(pi))
    """
    return sp.exp(-(z**2) / 2) / sp.sqrt(2 * PI)


@cache
def polar_gaussian_factors() -> tuple[sp.Expr, sp.Expr]:
    """The N(0, I_2) density in polar coordinates factorises: (radial density of |w|, angular density).

    ``(2 pi)^-1 exp(-|w|^2/2) dw = [rho exp(-rho^2/2) drho] [dvartheta / (2 pi)]`` (Jacobian ``rho``),
    so ``|w|`` is Rayleigh, ``vartheta`` is uniform on ``(-pi, pi]``, and they are independent.

    >>> radial, angular = polar_gaussian_factors()
    >>> radial, angular
    (rho*exp(-rho**2/2), 1/(2*pi))
    >>> sp.integrate(radial, (rho, 0, sp.oo)), sp.integrate(angular, (u1, -sp.pi, sp.pi))
    (1, 1)
    """
    joint = sp.exp(-(rho**2) / 2) / (2 * PI) * rho  # density times the polar Jacobian
    radial = sp.integrate(joint, (u1, -PI, PI))
    angular = sp.simplify(joint / radial)
    return radial, angular


@memo
def rayleigh_survival(level: sp.Expr) -> sp.Expr:
    """P(|w| > level) for w ~ N(0, I_2), integrated from the Rayleigh density.

    >>> rayleigh_survival(y)
    exp(-y**2/2)
    """
    radial, _ = polar_gaussian_factors()
    return sp.simplify(sp.integrate(radial, (rho, level, sp.oo)))


@cache
def omega_tail_integral() -> sp.Expr:
    """P(a > 0, a r > x) = int_0^oo phi(a) P(r > x/a) da (Appendix 18, first display).

    SymPy evaluates the integral in closed form (it returns a cosh/sinh combination that
    simplifies to the paper's ``e^{-x}/2``).

    >>> omega_tail_integral()
    exp(-x)/2
    """
    integrand = std_normal_density(a) * rayleigh_survival(x / a)
    return sp.simplify(sp.integrate(integrand, (a, 0, sp.oo)))


@cache
def omega_subdensity() -> sp.Expr:
    """Sub-density of omega = a r on {a > 0}: -d/dx P(a > 0, a r > x) = e^{-x}/2.

    Given ``a > 0`` (probability 1/2), omega is Exp(1), and since the angle is independent
    of ``(a, r)`` (:func:`polar_gaussian_factors`), omega is independent of vartheta.

    >>> omega_subdensity()
    exp(-x)/2
    """
    return sp.simplify(-sp.diff(omega_tail_integral(), x))


@cache
def omega_sum_subdensity() -> sp.Expr:
    """Sub-density of omega_1 + omega_2 on {a_1, a_2 > 0}: the convolution x e^{-x}/4.

    >>> omega_sum_subdensity()
    x*exp(-x)/4
    """
    f = omega_subdensity()
    z = sp.Symbol("z", positive=True)
    return sp.simplify(sp.integrate(f.subs(x, z) * f.subs(x, x - z), (z, 0, x)))


def omega_sum_subdensity_max() -> sp.Expr:
    """sup_{x > 0} x e^{-x}/4 = 1/(4e), attained at x = 1 (certified by SymPy's ``maximum``).

    >>> omega_sum_subdensity_max()
    exp(-1)/4
    """
    return maximum(omega_sum_subdensity(), x, sp.Interval(0, sp.oo))


@memo
def p_positive_heads_and_sum_below(cap: sp.Expr = OMEGA_CAP) -> sp.Expr:
    """P(a_1, a_2 > 0, omega_1 + omega_2 < cap) = (1 - (1 + cap) e^{-cap}) / 4.

    >>> p_positive_heads_and_sum_below(y)
    (-y + exp(y) - 1)*exp(-y)/4
    """
    return sp.simplify(sp.integrate(omega_sum_subdensity(), (x, 0, cap)))


@memo
def angle_probability(labelled: bool = False) -> sp.Expr:
    """P of the angular part of D0 for independent uniform angles on (-pi, pi].

    Labelled: ``vartheta_1 in (0, pi)``, ``vartheta_2 in (vartheta_1 - pi, 0)``; either
    labelling adds the disjoint mirror event with the units swapped.

    >>> angle_probability(labelled=True), angle_probability()
    (1/8, 1/4)
    """
    _, angular = polar_gaussian_factors()
    dens = angular**2
    one = sp.integrate(sp.integrate(dens, (u2, u1 - PI, 0)), (u1, 0, PI))
    mirror = sp.integrate(sp.integrate(dens, (u1, u2 - PI, 0)), (u2, 0, PI))
    return one if labelled else sp.simplify(one + mirror)


@memo
def p_d0(labelled: bool = False) -> sp.Expr:
    """P(D0) = P(a_i > 0, omega_1 + omega_2 < 3/4) x P(angles), by independence of angles and (a, r).

    Either labelling (the reading that reproduces the paper): ``(1/16)(1 - (7/4) e^{-3/4})``;
    labelled only: half of it.

    >>> sp.N(p_d0(), 8), sp.N(p_d0(labelled=True), 8)
    (0.010834908, 0.0054174541)
    """
    return sp.simplify(p_positive_heads_and_sum_below() * angle_probability(labelled))


def k_violation_terms() -> dict[str, dict[str, sp.Expr]]:
    """The six terms of the paper's bound on P(D0 \\ K) with the probabilities they dominate.

    Each entry has ``exact`` (the probability of that violated constraint of K, for both
    units or both labellings together; for the angles, the sum of the three strip
    probabilities inside the angular part of D0, which bounds their union) and ``bound``
    (the paper's term, derived here; valid for ``m <= pi/2``):

    * ``a_small``: ``P(0 < a < m) = int_0^m phi <= m phi(0)``, two units: ``2m/sqrt(2 pi)``;
    * ``w_small``: ``P(|w| < m) = 1 - e^{-m^2/2} <= m^2/2`` (the leading Taylor term, an
      upper bound since ``1 - e^{-z} <= z``), two units: ``m^2``;
    * ``a_large``: ``P(a > M) <= int_M^oo (a/M) phi(a) da = phi(M)/M`` (Mills), two units;
    * ``w_large``: ``P(|w| > M) = e^{-M^2/2}``, two units;
    * ``angles``: strips ``vartheta_1 < m``, ``vartheta_2 > -m``, ``vartheta_1 - vartheta_2 > pi - m``,
      each of probability ``m/(2 pi)`` (a uniform angle, or the difference of two, mod 2 pi),
      three strips in each of two labellings: ``3m/pi`` (inside D0 each strip has at most
      ``m/(4 pi)``, so this term is conservative by a factor of about two);
    * ``omega_sum``: ``P(a_i > 0, 3/4 - m < S < 3/4) <= m sup(x e^{-x}/4) = m/(4e)``.

    >>> terms = k_violation_terms()
    >>> sp.simplify(sum(v["bound"] for v in terms.values()) - paper_k_bound()) == 0
    True
    """
    return {name: dict(entry) for name, entry in _k_violation_terms().items()}


@cache
def _k_violation_terms() -> dict[str, dict[str, sp.Expr]]:
    """Cached builder for :func:`k_violation_terms` (callers get copies)."""
    phi0 = std_normal_density(sp.Integer(0))
    radial, angular = polar_gaussian_factors()
    dens2 = angular**2
    # the three strips inside the labelled angular part of D0 (their sum bounds their union)
    gap = sp.integrate(sp.integrate(dens2, (u2, u1 - PI, u1 - PI + m)), (u1, 0, PI - m)) + sp.integrate(
        sp.integrate(dens2, (u2, u1 - PI, 0)), (u1, PI - m, PI)
    )
    one_label = (
        sp.integrate(sp.integrate(dens2, (u2, u1 - PI, 0)), (u1, 0, m))  # vartheta_1 < m
        + sp.integrate(sp.integrate(dens2, (u1, 0, u2 + PI)), (u2, -m, 0))  # vartheta_2 > -m
        + gap  # vartheta_1 - vartheta_2 > pi - m
    )
    strip_marginal = sp.integrate(angular, (u1, 0, m))  # one uniform angle in a strip of width m
    return {
        "a_small": {
            "exact": 2 * sp.integrate(std_normal_density(a), (a, 0, m)),
            "bound": 2 * m * phi0,
        },
        "w_small": {
            "exact": 2 * sp.integrate(radial, (rho, 0, m)),
            "bound": 2 * sp.series(sp.integrate(radial, (rho, 0, m)), m, 0, 3).removeO(),
        },
        "a_large": {
            "exact": 2 * sp.integrate(std_normal_density(a), (a, M, sp.oo)),
            "bound": sp.simplify(2 * sp.integrate(a / M * std_normal_density(a), (a, M, sp.oo))),
        },
        "w_large": {
            "exact": 2 * rayleigh_survival(M),
            "bound": 2 * rayleigh_survival(M),
        },
        "angles": {
            "exact": sp.simplify(2 * one_label),
            "bound": 2 * 3 * strip_marginal,
        },
        "omega_sum": {
            "exact": sp.integrate(omega_sum_subdensity(), (x, OMEGA_CAP - m, OMEGA_CAP)),
            "bound": m * omega_sum_subdensity_max(),
        },
    }


@memo
def k_bound() -> sp.Expr:
    """Our bound on P(D0 \\ K): the sum of the derived terms of :func:`k_violation_terms`.

    >>> sp.N(k_bound().subs({m: sp.Rational(1, 10**4), M: 5}), 6)
    0.000192536
    """
    return sp.Add(*(v["bound"] for v in k_violation_terms().values()))


def paper_k_bound() -> sp.Expr:
    """The paper's display (Appendix 18), typed as quoted: the object under test, not a derivation.

    >>> paper_k_bound().has(m, M)
    True
    """
    return (
        2 * m / sp.sqrt(2 * PI)
        + m**2
        + 2 * sp.exp(-(M**2) / 2) / (M * sp.sqrt(2 * PI))
        + 2 * sp.exp(-(M**2) / 2)
        + 3 * m / PI
        + m / (4 * sp.E)
    )


def k_constraints() -> list[sp.Expr]:
    """The defining inequalities of K (labelled form) as SymPy relations.

    >>> len(k_constraints())
    8
    """
    return [
        sp.And(m <= a1, a1 <= M),
        sp.And(m <= a2, a2 <= M),
        sp.And(m <= r1, r1 <= M),
        sp.And(m <= r2, r2 <= M),
        a1 * r1 + a2 * r2 <= OMEGA_CAP - m,
        th1 >= m,
        th2 <= -m,
        th1 - th2 <= PI - m,
    ]


@cache
def target_risk() -> sp.Expr:
    """R_t = E[(f(X) - |X|)^2]/2 for a_1, a_2 > 0, in terms of omega_i and the angle delta.

    Expanding the square with ``E sigma(u.X) sigma(v.X) = |u||v| J(angle)``, ``J(0) = 1/2``,
    ``E sigma(w.X)|X| = q |w|`` and ``E|X|^2 = 2`` (all from :mod:`.kernels`):

    >>> expected = (
    ...     1 + (omega1**2 + omega2**2) / 4 + omega1 * omega2 * J_kernel().subs(t, delta)
    ...     - 2 / sp.pi * (omega1 + omega2)
    ... )
    >>> sp.simplify(target_risk() - expected)
    0
    """
    J = J_kernel()
    q = q_constant()
    second_moment = disk_expectation(rho**2)
    ef2 = omega1**2 * J.subs(t, 0) + omega2**2 * J.subs(t, 0) + 2 * omega1 * omega2 * J.subs(t, delta)
    efy = q * (omega1 + omega2)
    return sp.expand((ef2 - 2 * efy + second_moment) / 2)


@memo
def initial_risk_lower_bound() -> sp.Expr:
    """1 + S^2/8 - q S: drop the cross term (J >= 0) and use omega_1^2 + omega_2^2 >= S^2/2.

    The two steps are checked: ``J(pi) = 0`` and ``J' = -g = -(pi - t) sin t/(2 pi) <= 0`` on
    ``[0, pi]`` give ``J >= 0``; ``omega_1^2 + omega_2^2 - S^2/2 = (omega_1 - omega_2)^2/2``.

    >>> initial_risk_lower_bound()
    S**2/8 - 2*S/pi + 1
    """
    J = J_kernel()
    _require(sp.simplify(J.subs(t, PI)) == 0, "J(pi) = 0")
    _require(sp.simplify(sp.diff(J, t) + (PI - t) * sp.sin(t) / (2 * PI)) == 0, "J' = -(pi - t) sin t / (2 pi)")
    risk = target_risk()
    cross = sp.simplify(risk - risk.subs(delta, PI))
    _require(sp.simplify(cross - omega1 * omega2 * J.subs(t, delta)) == 0, "the cross term is omega1 omega2 J(delta)")
    # drop the cross term (>= 0) and the square (omega1 - omega2)^2/8 (>= 0)
    lb = sp.expand((risk - cross - (omega1 - omega2) ** 2 / 8).subs(omega1, S - omega2))
    _require(not lb.has(omega2), "the bound depends on S only")
    return lb


@memo
def initial_risk_infimum() -> sp.Expr:
    """inf over D0 of the target risk: 1 + 9/128 - 3/(2 pi) = 0.59284... (Appendix 18; Appendix 13's 0.5928).

    The lower bound ``1 + S^2/8 - qS`` decreases for ``S < 4q`` and ``S < 3/4 < 4q``, so its
    infimum over ``S < 3/4`` is its value at ``3/4``; it is approached in D0 by
    ``omega_1 = omega_2 -> 3/8`` and angle ``-> pi`` (``J(pi) = 0``), so the bound is sharp.

    >>> initial_risk_infimum()
    137/128 - 3/(2*pi)
    >>> sp.N(initial_risk_infimum(), 6)
    0.592848
    """
    lb = initial_risk_lower_bound()
    q = q_constant()
    _require(sp.simplify(sp.diff(lb, S) - (S / 4 - q)) == 0, "d/dS of the bound is S/4 - q")
    _require(bool(OMEGA_CAP < 4 * q), "3/4 < 4q, so the bound decreases on [0, 3/4]")
    return sp.expand(lb.subs(S, OMEGA_CAP))
