"""Population risks of the two-unit model, clone amplitudes and risk levels (Sections 1, 3, 4, 16, 17).

The risk is R = E[(f(X) - y(X))^2] / 2 with f(x) = sum_i a_i relu(w_i^T x). Expanding
the square, every term is a kernel integral from :mod:`.kernels`:
E[relu(w_i.X) relu(w_j.X)] = r_i r_j J(t_ij), E[relu(w_i.X) relu(X_1)] = r_i J(angle to e1),
E[relu(w_i.X)|X|] = q r_i, E[relu(X_1)^2] = J(0), E|X|^2 = 2. Only the products
omega_i = a_i r_i and the angles enter.
"""

from functools import cache

import sympy as sp

from .kernels import J_kernel, disk_expectation, q_constant
from .symbols import B, delta, lam, omega, omega1, omega2, rho, t

_alpha, _beta = sp.symbols("alpha beta", nonnegative=True)  # angles of the units to e1


def J_of(angle: sp.Expr) -> sp.Expr:
    """The kernel J evaluated at ``angle``."""
    return J_kernel().subs(t, angle)


def target_risk(om1: sp.Expr = omega1, om2: sp.Expr = omega2, d: sp.Expr = delta) -> sp.Expr:
    """R_t(omega1, omega2, delta): target risk of two units at angle ``d``.

    >>> sp.simplify(target_risk(d=sp.pi).subs({omega1: 0, omega2: 0}))
    1
    """
    q = q_constant()
    Ey2 = disk_expectation(rho**2)
    Ef2 = om1**2 * J_of(0) + om2**2 * J_of(0) + 2 * om1 * om2 * J_of(d)
    Efy = q * (om1 + om2)
    return sp.expand(sp.Rational(1, 2) * (Ef2 - 2 * Efy + Ey2))


def source_risk(
    om1: sp.Expr = omega1, om2: sp.Expr = omega2, al: sp.Expr = _alpha, be: sp.Expr = _beta, d: sp.Expr = delta
) -> sp.Expr:
    """R_s: source risk, units at angles ``al`` and ``be`` to e1 and ``d`` to each other.

    >>> source_risk(0, 0, 0, 0, 0)
    1/4
    """
    Ey2 = J_of(0)
    Ef2 = om1**2 * J_of(0) + om2**2 * J_of(0) + 2 * om1 * om2 * J_of(d)
    Efy = om1 * J_of(al) + om2 * J_of(be)
    return sp.expand(sp.Rational(1, 2) * (Ef2 - 2 * Efy + Ey2))


@cache
def proportional_target_risk() -> sp.Expr:
    """R_t on the positively proportional family (delta = 0), omega = omega1 + omega2 (Eq. (37)).

    >>> q = sp.Symbol('q'); sp.simplify(proportional_target_risk() - (1 + omega**2/4 - 2/sp.pi*omega))
    0
    """
    expr = target_risk(d=0)
    return sp.simplify(expr.subs(omega2, omega - omega1))


@cache
def collapsed_risk_level() -> sp.Expr:
    """R_col = min over omega of the proportional target risk (Eq. (2), (37)).

    >>> collapsed_risk_level()
    1 - 4/pi**2
    """
    r = proportional_target_risk()
    (crit,) = sp.solve(sp.diff(r, omega), omega)
    return sp.simplify(r.subs(omega, crit))


@cache
def min_risk_at_angle() -> sp.Expr:
    """R_min(delta) = min over omega1, omega2 of R_t at separation delta (a reading of Eq. (38)).

    The quadratic form has matrix [[1/2, J], [J, 1/2]], positive definite for J < 1/2, so
    the minimiser is symmetric and unique: R_min = 1 - q^2 / (1/2 + J(delta)).

    >>> sp.simplify(min_risk_at_angle() - (1 - (2/sp.pi)**2 / (sp.Rational(1, 2) + J_of(delta))))
    0
    """
    r = target_risk()
    sol = sp.solve([sp.diff(r, omega1), sp.diff(r, omega2)], [omega1, omega2], dict=True)[0]
    return sp.simplify(r.subs(sol))


def clone_amplitude(task: str) -> sp.Expr:
    """Optimal clone amplitude B = sum_i a_i r_i on the balanced clone (Section 4).

    On a clone f = B relu(e.x); at balance a_i = r_i the weight decay is lam * B, the
    minimum of (lam/2)(a_i^2 + r_i^2) at fixed a_i r_i. Source: B_s = 1 - 2 lam; target:
    B_t = 2 (q - lam).

    >>> clone_amplitude('source'), clone_amplitude('target')
    (1 - 2*lambda, -2*lambda + 4/pi)
    """
    if task == "source":
        risk = source_risk(B, 0, 0, 0, 0)
    elif task == "target":
        risk = target_risk(B, 0, 0)
    else:
        raise ValueError(f"task must be 'source' or 'target'; got {task!r}")
    (sol,) = sp.solve(sp.diff(risk + lam * B, B), B)
    return sp.expand(sol)


@cache
def target_rate_A() -> sp.Expr:
    """A = B_t / 2 = q - lam, the target angular growth rate at the clone (Section 4).

    >>> target_rate_A()
    -lambda + 2/pi
    """
    return sp.expand(clone_amplitude("target") / 2)


@cache
def good_risk_level() -> tuple[sp.Expr, dict]:
    """R_good: target risk at the separated stationary point (delta = pi, omega_i = 2A) (Appendix 16).

    Returns (R_good, stationarity), where stationarity maps each partial derivative of
    the target objective F_t = R_t + lam (omega1 + omega2) (balanced weight decay) in
    (omega1, omega2) to its value there, and includes dR_t/ddelta at pi.

    >>> sp.simplify(good_risk_level()[0] - (1 - 2*(2/sp.pi)**2 + 2*lam**2))
    0
    """
    A = target_rate_A()
    F = target_risk() + lam * (omega1 + omega2)
    point = {omega1: 2 * A, omega2: 2 * A, delta: sp.pi}
    stationarity = {
        "dF/domega1": sp.simplify(sp.diff(F, omega1).subs(point)),
        "dF/domega2": sp.simplify(sp.diff(F, omega2).subs(point)),
        "dR/ddelta": sp.simplify(sp.diff(target_risk(), delta).subs(point)),
    }
    return sp.simplify(target_risk().subs(point)), stationarity


_GOOD_RISK_BINDING_LEVEL = sp.Rational(3, 10)


def good_risk_threshold_lambda(level: sp.Expr = _GOOD_RISK_BINDING_LEVEL) -> sp.Expr:
    """The weight decay at which R_good reaches ``level`` (Appendix 13: binding condition R_good < 0.3).

    >>> sp.simplify(good_risk_threshold_lambda() - sp.sqrt(4/sp.pi**2 - sp.Rational(7, 20)))
    0
    """
    r, _ = good_risk_level()
    sols = [s for s in sp.solve(sp.Eq(r, level), lam) if s.is_positive]
    (sol,) = sols
    return sp.simplify(sol)
