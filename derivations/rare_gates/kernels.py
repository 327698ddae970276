"""Input law and the arc-cosine kernels J, g of the rare-gates paper (Sections 3, 4, 14).

Inputs X are uniform on the disk of radius ``disk_radius()``; the hidden units are
bias-free ReLUs sigma(w^T x). Everything here is integrated from those definitions.
"""

from functools import cache

import sympy as sp

from ..memo import memo
from .symbols import phi, rho, t

PI = sp.pi


@cache
def disk_radius() -> sp.Expr:
    """Radius of the input disk fixed by E|X|^2 = 2 (Section 3).

    For X uniform on the disk of radius c, E|X|^2 = int_0^c rho^2 (2 rho / c^2) drho = c^2/2.

    >>> disk_radius()
    2
    """
    c = sp.Symbol("c", positive=True)
    second_moment = sp.integrate(rho**2 * 2 * rho / c**2, (rho, 0, c))
    (sol,) = sp.solve(sp.Eq(second_moment, 2), c)
    return sol


@memo
def disk_expectation(integrand_polar: sp.Expr) -> sp.Expr:
    """E[h(X)] for X uniform on the disk, h given in polar coordinates (rho, phi), phi in [-pi, pi].

    >>> disk_expectation(rho**2)
    2
    """
    c = disk_radius()
    density = 1 / (PI * c**2)
    inner = sp.integrate(integrand_polar * rho, (rho, 0, c))
    return sp.simplify(density * sp.integrate(inner, (phi, -PI, PI)))


@cache
def gaussian_radial_second_moment() -> sp.Expr:
    """E R^2 for X ~ N(0, I_2): the Rayleigh law gives 2, the same as the disk (Section 3).

    >>> gaussian_radial_second_moment()
    2
    """
    return sp.integrate(rho**2 * rho * sp.exp(-(rho**2) / 2), (rho, 0, sp.oo))


@cache
def J_kernel() -> sp.Expr:
    """J(t) = E[sigma(u^T X) sigma(v^T X)] for unit u, v at angle t in [0, pi] (Appendix 14).

    With u = e1 and v at angle t both gates are open for phi in [t - pi/2, pi/2]; the
    integral over the disk gives

    >>> sp.simplify(J_kernel() - (sp.sin(t) + (sp.pi - t) * sp.cos(t)) / (2 * sp.pi))
    0
    """
    c = disk_radius()
    radial = sp.integrate(rho**2 * rho, (rho, 0, c)) / (PI * c**2)
    angular = sp.integrate(sp.cos(phi) * sp.cos(phi - t), (phi, t - PI / 2, PI / 2))
    return sp.simplify(sp.expand_trig(radial * angular))


@cache
def g_kernel() -> sp.Expr:
    """g(t) = -J'(t) (Appendix 14).

    >>> sp.simplify(g_kernel() - (sp.pi - t) * sp.sin(t) / (2 * sp.pi))
    0
    """
    return sp.simplify(-sp.diff(J_kernel(), t))


@cache
def q_constant() -> sp.Expr:
    """q = E[sigma(e1^T X) |X|], the overlap of one unit with the radial target (Section 4).

    >>> q_constant()
    2/pi
    """
    c = disk_radius()
    radial = sp.integrate(rho * rho * rho, (rho, 0, c)) / (PI * c**2)
    angular = sp.integrate(sp.cos(phi), (phi, -PI / 2, PI / 2))
    return sp.simplify(radial * angular)


@cache
def gated_second_moment() -> sp.ImmutableMatrix:
    """E[1{X_1 > 0} X X^T]: the common-gate Gram matrix (Section 4, Eq. (8)).

    >>> gated_second_moment()
    Matrix([
    [1/2,   0],
    [  0, 1/2]])
    """
    c = disk_radius()
    radial = sp.integrate(rho**2 * rho, (rho, 0, c)) / (PI * c**2)
    e = [sp.cos(phi), sp.sin(phi)]
    return sp.ImmutableMatrix(
        2, 2, lambda i, j: sp.simplify(radial * sp.integrate(e[i] * e[j], (phi, -PI / 2, PI / 2)))
    )


@cache
def gated_radial_moment() -> sp.ImmutableMatrix:
    """E[1{X_1 > 0} |X| X] = q e1 (Section 4, Eq. (8)).

    >>> gated_radial_moment()
    Matrix([
    [2/pi],
    [   0]])
    """
    c = disk_radius()
    radial = sp.integrate(rho * rho * rho, (rho, 0, c)) / (PI * c**2)
    e = [sp.cos(phi), sp.sin(phi)]
    return sp.ImmutableMatrix(2, 1, lambda i, _: sp.simplify(radial * sp.integrate(e[i], (phi, -PI / 2, PI / 2))))
