"""Population dynamics of the rare-gates model (Sections 3, 4, 6, 7, 9 and Appendices 11-14).

Coordinates. Unit i has output weight ``a_i``, hidden vector ``w_i = r_i (cos vartheta_i,
sin vartheta_i)`` and product ``omega_i = a_i r_i``. Where two units are compared we put
unit 1 at angle ``alpha >= 0`` above e1 and unit 2 at angle ``beta >= 0`` below it
(``vartheta_1 = alpha``, ``vartheta_2 = -beta``), so their angle is ``delta = alpha + beta``
(valid for ``delta <= pi``). Everything is integrated from the model definitions in
:mod:`.kernels`: the two-unit kernel ``|u||v| J(t)``, the radial overlap ``q = 2/pi`` and
``E|X|^2 = 2``.

Gradient flow of ``F = R + (lambda/2)|theta|^2`` in these coordinates: ``a_i' = -dF/da_i``,
``r_i' = -dF/dr_i`` (radial part of ``w_i' = -grad_w F``) and ``vartheta_i' = -r_i^{-2}
dF/dvartheta_i`` (its angular part), hence ``alpha' = -r_1^{-2} dF/dalpha`` and
``beta' = -r_2^{-2} dF/dbeta``.
"""

from __future__ import annotations

import itertools
from functools import cache
from types import MappingProxyType

import mpmath
import sympy as sp

from ..memo import memo
from .kernels import J_kernel, disk_expectation, disk_radius, gated_second_moment, q_constant
from .symbols import B, a1, a2, delta, lam, omega1, omega2, phi, r1, r2, rho, t

alpha, beta = sp.symbols("alpha beta", nonnegative=True)  # angles of w1 above and w2 below e1
eta = sp.Symbol("eta", positive=True)  # SGD step size
tau = sp.Symbol("tau", nonnegative=True)  # physical time of a flow
B0 = sp.Symbol("B_0", positive=True)  # clone amplitude at the task switch
s_star = sp.Symbol("s_star", positive=True)  # e1-component of both hidden vectors at the target clone
varphi = sp.Symbol("varphi", positive=True)  # transverse coordinate: w_{1,2} = (s_star, +-varphi)
p = sp.Symbol("p", positive=True)  # allocation omega_1 / B along a clone family, 0 < p < 1
m1, m2 = sp.symbols("m1 m2", positive=True)  # m_i = r_i / a_i (Section 6)
psi = sp.Symbol("psi", real=True)  # direction of a gate vector u = (cos psi, sin psi)
U1, U2 = sp.symbols("U1 U2", real=True)  # components of U = sum_i a_i w_i

TASKS = ("source", "target")


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {task!r}")


@cache  # SymPy results are immutable; cached to keep the audit fast
def polar_risk(task: str, *, common_gate: bool = False) -> sp.Expr:
    """Population risk ``R = E[(f - y)^2]/2`` in (a_i, r_i, alpha, beta) coordinates (Sections 3, 14).

    ``E f^2 = omega_1^2 J(0) + omega_2^2 J(0) + 2 omega_1 omega_2 J(alpha + beta)``; the source
    label relu(x1) is a unit along e1, so ``E f y = omega_1 J(alpha) + omega_2 J(beta)`` and
    ``E y^2 = J(0)``; the target label |x| gives ``E f y = q (omega_1 + omega_2)`` and
    ``E y^2 = E|X|^2``. ``common_gate=True`` (target only) replaces ``q |w_i|`` by the linear
    ``q w_i.e1`` (Section 4's common-gate comparison).

    On the balanced proportional family the target risk is ``1 + B^2/4 - q B`` (Appendix 16):

    >>> R = polar_risk("target").subs({alpha: 0, beta: 0, a1: r1, a2: r2})
    >>> sp.simplify(R - (1 + (r1**2 + r2**2)**2 / 4 - 2 / sp.pi * (r1**2 + r2**2)))
    0
    """
    _check_task(task)
    J = J_kernel()
    w1, w2 = a1 * r1, a2 * r2
    ef2 = (w1**2 + w2**2) * J.subs(t, 0) + 2 * w1 * w2 * J.subs(t, alpha + beta)
    if task == "source":
        if common_gate:
            raise ValueError("common_gate applies to the target task only")
        efy = w1 * J.subs(t, alpha) + w2 * J.subs(t, beta)
        ey2 = J.subs(t, 0)
    else:
        q = q_constant()
        efy = q * (w1 * sp.cos(alpha) + w2 * sp.cos(beta)) if common_gate else q * (w1 + w2)
        ey2 = disk_expectation(rho**2)
    return sp.expand((ef2 - 2 * efy + ey2) / 2)


@cache  # SymPy results are immutable; cached to keep the audit fast
def polar_flow(task: str, *, common_gate: bool = False) -> MappingProxyType:
    """Gradient-flow velocities of ``F = R + (lambda/2)|theta|^2`` in (a_i, r_i, alpha, beta) (Appendix 14).

    The angular equation: ``alpha' = (a_1 a_2 r_2 / r_1) g(delta) + (source label term)``; for the
    target the label does not depend on angles, so

    >>> v = polar_flow("target")
    >>> from derivations.rare_gates.kernels import g_kernel
    >>> g = g_kernel().subs(t, alpha + beta)
    >>> sp.simplify(v[alpha] - a1 * a2 * r2 / r1 * g)
    0
    """
    R = polar_risk(task, common_gate=common_gate)
    F = R + lam / 2 * (a1**2 + a2**2 + r1**2 + r2**2)
    return MappingProxyType(
        {
            a1: -sp.diff(F, a1),
            a2: -sp.diff(F, a2),
            r1: -sp.diff(F, r1),
            r2: -sp.diff(F, r2),
            alpha: -sp.diff(F, alpha) / r1**2,
            beta: -sp.diff(F, beta) / r2**2,
        }
    )


def appendix14_laws() -> dict:
    """Conservation and balance laws of Appendix 14 for ANY risk of the products ``a_i w_i``.

    With ``R = R(a_1 w_1, a_2 w_2)`` a generic SymPy Function, ``q_i = -dR/domega_i`` the
    derivative along ``a_i w_i = omega_i w_i/|w_i|`` (the radial gain), ``k_i = a_i^2 - r_i^2``,
    ``h_i = a_i/r_i`` and ``s_i = a_i + r_i``, gradient flow of ``R + (lambda/2)|theta|^2`` gives
    (Appendix 14, reading of the lost definitions)::

        k_i' = -2 lambda k_i,  h_i' = q_i (1 - h_i^2),  (log h_i)' = -(k_i/omega_i) q_i,
        (log s_i)' = q_i - lambda.

    Returns, for i = 1, 2, the derived time derivatives and the quantities they involve.

    >>> law = appendix14_laws()[1]
    >>> sp.simplify(law["dk"] + 2 * lam * law["k"]), sp.simplify(law["dlogs"] - (law["q"] - lam))
    (0, 0)
    """
    ws = sp.symbols("w1x w1y w2x w2y", real=True)
    x1, y1, x2, y2 = ws
    theta = [a1, a2, *ws]
    Rf = sp.Function("R")
    F = Rf(a1 * x1, a1 * y1, a2 * x2, a2 * y2) + lam / 2 * sum(v**2 for v in theta)
    vel = {v: -sp.diff(F, v) for v in theta}

    def ddt(expr):
        return sum(sp.diff(expr, v) * vel[v] for v in theta)

    om = sp.Symbol("omega_dummy", positive=True)
    out = {}
    for i, (a, x, y) in enumerate(((a1, x1, y1), (a2, x2, y2)), start=1):
        r = sp.sqrt(x**2 + y**2)
        # R with unit i's product written as omega * (unit direction of w_i)
        args = [a1 * x1, a1 * y1, a2 * x2, a2 * y2]
        args[2 * (i - 1)] = om * x / r
        args[2 * (i - 1) + 1] = om * y / r
        q = -sp.diff(Rf(*args), om).subs(om, a * r)
        k, h, s = a**2 - r**2, a / r, a + r
        out[i] = {
            "q": q,
            "omega": a * r,
            "k": k,
            "h": h,
            "s": s,
            "dk": ddt(k),
            "dh": ddt(h),
            "dlogh": ddt(sp.log(h)),
            "dlogs": ddt(sp.log(s)),
        }
    return out


@cache  # SymPy results are immutable; cached to keep the audit fast
def balanced_family_flow(task: str) -> MappingProxyType:
    """Gradient flow restricted to the balanced proportional family (Section 4, Appendix 12).

    On ``a_i = r_i = sqrt(omega_i)``, ``w_i = r_i e1`` the angular velocities and the balance
    velocities ``k_i' = 2 a_i a_i' - 2 r_i r_i'`` vanish (the family is invariant), and the
    amplitude ``B = omega_1 + omega_2`` obeys a logistic law: ``B' = B(B_t - B)``,
    ``B_t = 2(q - lambda)`` for the target and ``B' = B(B_s - B)``, ``B_s = 1 - 2 lambda``
    for the source.

    >>> Bt, Bs = 2 * (2 / sp.pi - lam), 1 - 2 * lam
    >>> sp.simplify(balanced_family_flow("target")["Bdot"] - B * (Bt - B))
    0
    >>> sp.simplify(balanced_family_flow("source")["Bdot"] - B * (Bs - B))
    0
    """
    v = polar_flow(task)
    point = {a1: sp.sqrt(omega1), r1: sp.sqrt(omega1), a2: sp.sqrt(omega2), r2: sp.sqrt(omega2)}
    at = {alpha: 0, beta: 0}

    def on_family(expr):
        return sp.simplify(expr.subs(at).subs(point))

    bdot = v[a1] * r1 + a1 * v[r1] + v[a2] * r2 + a2 * v[r2]
    bdot = sp.simplify(on_family(bdot).subs(omega2, B - omega1))
    return MappingProxyType(
        {
            "Bdot": bdot,
            "angles": (on_family(v[alpha]), on_family(v[beta])),
            "balance": (on_family(2 * a1 * v[a1] - 2 * r1 * v[r1]), on_family(2 * a2 * v[a2] - 2 * r2 * v[r2])),
        }
    )


@cache  # SymPy results are immutable; cached to keep the audit fast
def clone_amplitude(task: str) -> sp.Expr:
    """The nonzero rest point of ``B' = B(B_* - B)``: ``B_s = 1 - 2 lambda``, ``B_t = 2(q - lambda)`` (Section 4).

    >>> clone_amplitude("source"), clone_amplitude("target")
    (1 - 2*lambda, -2*lambda + 4/pi)
    """
    bdot = balanced_family_flow(task)["Bdot"]
    roots = [r for r in sp.solve(bdot, B) if r != 0]
    if len(roots) != 1:
        raise RuntimeError(f"expected one nonzero clone amplitude, got {roots}")
    return sp.expand(roots[0])


def amplitude_transient() -> sp.Expr:
    """Solution of the target amplitude law ``B' = B(B_t - B)``, ``B(0) = B_0`` (Section 4), by dsolve.

    dsolve runs with a positive symbol for B_t (it cannot fit the initial condition with
    ``B_t = 4/pi - 2 lambda`` inserted), which is substituted afterwards. The result equals
    ``B_t B_0 / (B_0 + (B_t - B_0) e^{-B_t tau})``:

    >>> Bt = clone_amplitude("target")
    >>> sp.simplify(amplitude_transient() - Bt * B0 / (B0 + (Bt - B0) * sp.exp(-Bt * tau)))
    0
    """
    Bt = sp.Symbol("B_t", positive=True)
    Bf = sp.Function("Bf")
    sol = sp.dsolve(sp.Eq(Bf(tau).diff(tau), Bf(tau) * (Bt - Bf(tau))), Bf(tau), ics={Bf(0): B0})
    return sol.rhs.subs(Bt, clone_amplitude("target"))


def transverse_velocity(*, common_gate: bool = False) -> sp.Expr:
    """Exact transverse velocity ``v = d/dt (e2.w_1)`` at ``w_{1,2} = (s_star, +-varphi)``, ``a_i = s_star`` (Sec. 4).

    From the polar flow: ``e2.w_1 = r_1 sin alpha`` so ``v = r_1' sin alpha + r_1 cos alpha alpha'``
    with ``r_i = sqrt(s_star^2 + varphi^2)`` and ``alpha = beta = atan(varphi/s_star)``
    (``varphi > 0``; by the mirror symmetry y -> -y, which swaps the units, v is odd in varphi).
    ``common_gate=True`` replaces ``q|w|`` by ``q w.e1``. At the target clone ``s_star^2 = A``
    and ``v = A varphi + O(varphi^2)``, ``v_com = -lambda varphi + O(varphi^2)``:

    >>> A = clone_amplitude("target") / 2
    >>> lin = sp.series(transverse_velocity(), varphi, 0, 2).removeO().subs(s_star, sp.sqrt(A))
    >>> sp.simplify(lin - A * varphi)
    0
    """
    v = polar_flow("target", common_gate=common_gate)
    r = sp.sqrt(s_star**2 + varphi**2)
    ang = sp.atan(varphi / s_star)
    point = {a1: s_star, a2: s_star, r1: r, r2: r, alpha: ang, beta: ang}
    return (v[r1] * sp.sin(alpha) + r1 * sp.cos(alpha) * v[alpha]).subs(point)


def radial_drift() -> sp.Expr:
    """Exact radial velocity ``r_1'`` at ``w_{1,2} = (s_star, +-varphi)``, ``a_i = s_star``, target flow (Section 4)."""
    r = sp.sqrt(s_star**2 + varphi**2)
    ang = sp.atan(varphi / s_star)
    point = {a1: s_star, a2: s_star, r1: r, r2: r, alpha: ang, beta: ang}
    return polar_flow("target")[r1].subs(point)


@memo
def angular_equation() -> sp.Expr:
    """Target ``delta' = alpha' + beta' = a_1 a_2 r_1 r_2 (r_1^{-2} + r_2^{-2}) g(delta)`` (Section 4, Appendix 14).

    At ``w_{1,2} = (s_star, +-varphi)`` with ``a_i = s_star`` this is exactly ``2 s_star^2 g(delta)``:

    >>> from derivations.rare_gates.kernels import g_kernel
    >>> g = g_kernel().subs(t, alpha + beta)
    >>> sp.simplify(angular_equation() - a1 * a2 * r1 * r2 * (1 / r1**2 + 1 / r2**2) * g)
    0
    """
    v = polar_flow("target")
    return sp.simplify(v[alpha] + v[beta])


@memo
def source_angle_jacobian() -> sp.Matrix:
    """Jacobian of ``(alpha', beta')`` in ``(alpha, beta)`` on S at ``omega_1 = p B_s`` (Appendices 15, 17).

    Its eigenvalues are ``-1/2`` (common rotation toward e1) and ``-lambda``; ``(1, 1)`` is a
    left eigenvector for ``-lambda``, i.e. ``delta' = -lambda delta + O(delta^2)``:

    >>> M = source_angle_jacobian()
    >>> sp.simplify(sp.Matrix([[1, 1]]) * M + lam * sp.Matrix([[1, 1]]))
    Matrix([[0, 0]])
    """
    v = polar_flow("source")
    Bs = clone_amplitude("source")
    w1, w2 = sp.sqrt(p * Bs), sp.sqrt((1 - p) * Bs)
    point = {a1: w1, r1: w1, a2: w2, r2: w2}
    jac = sp.Matrix([[sp.diff(v[x], y) for y in (alpha, beta)] for x in (alpha, beta)])
    return sp.simplify(jac.subs({alpha: 0, beta: 0}).subs(point))


@memo
def target_angle_rate() -> sp.Expr:
    """Linear growth rate of delta at a target clone ``a_i = r_i``, ``omega_1 = p B_t`` (Sections 3, 4).

    ``delta' = B_t g(delta) = (B_t/2) delta + O(delta^2)`` for every allocation p, i.e. rate
    ``A = q - lambda``:

    >>> target_angle_rate()
    -lambda + 2/pi
    """
    Bt = clone_amplitude("target")
    w1, w2 = sp.sqrt(p * Bt), sp.sqrt((1 - p) * Bt)
    ddelta = angular_equation().subs({a1: w1, r1: w1, a2: w2, r2: w2})
    # ddelta depends on alpha, beta only through delta = alpha + beta; set beta = 0
    rate = sp.diff(ddelta.subs(beta, 0), alpha).subs(alpha, 0)
    return sp.simplify(rate)


def gf_delay_slope() -> sp.Expr:
    """Slope of ``tau_GF(T)``: source angle decay rate over target growth rate (Section 3, Eq. (3); Section 4).

    Source GF shrinks delta as ``C e^{-lambda T}``; target GF regrows it at rate A, so the
    time to reach a fixed separation is ``log(1/delta_s(T))/A + O(1) = (lambda/A) T + O(1)``.

    >>> gf_delay_slope()
    lambda/(-lambda + 2/pi)
    """
    M = source_angle_jacobian()
    row = sp.Matrix([[1, 1]]) * M  # = -rate_s (1, 1): delta' = -rate_s delta
    rate_s = sp.simplify(-row[0])
    if sp.simplify(row[1] - row[0]) != 0:
        raise RuntimeError("(1, 1) is not a left eigenvector of the source angle Jacobian")
    return rate_s / target_angle_rate()


def projective_distance_sq() -> sp.Expr:
    """``d^2 = |w_1/a_1 - w_2/a_2|^2`` with ``m_i = r_i/a_i`` and angle delta between the units (Section 6).

    >>> sp.simplify(projective_distance_sq() - ((m1 - m2)**2 + 2 * m1 * m2 * (1 - sp.cos(delta))))
    0
    """
    th = sp.Symbol("vartheta", real=True)
    u1 = m1 * sp.Matrix([sp.cos(th + delta), sp.sin(th + delta)])
    u2 = m2 * sp.Matrix([sp.cos(th), sp.sin(th)])
    diff = u1 - u2
    return sp.simplify(sp.trigsimp(diff.dot(diff)))


def source_clone_residual() -> sp.Expr:
    """Residual ``f - y`` on the source manifold as a multiple of relu(x1): ``B_s - 1 = -2 lambda`` (Appendix 11.1).

    On S, ``f = sum_i a_i relu(r_i x1) = (omega_1 + omega_2) relu(x1) = B_s relu(x1)``.

    >>> source_clone_residual()
    -2*lambda
    """
    return clone_amplitude("source") - 1


def projective_update_jacobian() -> tuple[sp.Matrix, sp.Matrix]:
    """Averaged first-order Jacobian of the common-gate projective update at the source minimum (Sec. 3, App. 11.1).

    ``u+ = (varsigma u - m)/(varsigma - u.m)``, ``varsigma = 1 - eta lambda``,
    ``m = (eta/b) sum_j R_j 1{e1.X_j > 0} X_j``. Writing ``m = eta mu``, the Jacobian in u is
    expanded to first order in eta; it is linear in mu there, so averaging replaces mu by
    ``E mu = (B_s - 1) E[1{X_1>0} X X^T] e1 = -lambda e1``. Returns ``(Jbar, E mu)``; at
    ``u = e1``, ``Jbar = I - eta lambda (I + e1 e1^T)``:

    >>> Jbar, Emu = projective_update_jacobian()
    >>> e1 = sp.Matrix([1, 0])
    >>> sp.simplify(Jbar - (sp.eye(2) - eta * lam * (sp.eye(2) + e1 * e1.T))), Emu.T
    (Matrix([
    [0, 0],
    [0, 0]]), Matrix([[-lambda, 0]]))
    """
    u = sp.Matrix(sp.symbols("u_1 u_2", real=True))
    mu = sp.Matrix(sp.symbols("mu_1 mu_2", real=True))
    varsigma = 1 - eta * lam
    m = eta * mu
    update = (varsigma * u - m) / (varsigma - u.dot(m))
    jac = update.jacobian(u)
    first = jac.applyfunc(lambda e: sp.series(e, eta, 0, 2).removeO())
    e1 = sp.Matrix([1, 0])
    Emu = source_clone_residual() * gated_second_moment() * e1  # residual = (B_s - 1) relu(x1)
    avg = first.subs({u[0]: 1, u[1]: 0}).subs({mu[0]: Emu[0], mu[1]: Emu[1]})
    return sp.simplify(avg), Emu


@memo
def gated_moments(direction: sp.Expr = psi) -> tuple[sp.Matrix, sp.Matrix]:
    """``E[1{u.X>0} X X^T]`` and ``E[1{u.X>0} |X| X]`` for ``u = (cos psi, sin psi)``, X uniform on the disk.

    The gate is open for input angles in ``(psi - pi/2, psi + pi/2)``:

    >>> G, m = gated_moments()
    >>> G, sp.simplify(m.T)
    (Matrix([
    [1/2,   0],
    [  0, 1/2]]), Matrix([[2*cos(psi)/pi, 2*sin(psi)/pi]]))
    """
    c = disk_radius()
    area = sp.pi * c**2
    e = [sp.cos(phi), sp.sin(phi)]
    arc = (phi, direction - sp.pi / 2, direction + sp.pi / 2)
    rad2 = sp.integrate(rho**2 * rho, (rho, 0, c)) / area  # |X|^2 weight times the disk Jacobian rho
    rad1 = sp.integrate(rho * rho * rho, (rho, 0, c)) / area  # |X| * |X| (one from X, one from |X|)
    G = sp.Matrix(2, 2, lambda i, j: sp.simplify(rad2 * sp.integrate(e[i] * e[j], arc)))
    m = sp.Matrix(2, 1, lambda i, _: sp.simplify(rad1 * sp.integrate(e[i], arc)))
    return G, m


@memo
def common_gate_drift() -> sp.Matrix:
    """``E[v | theta]`` for ``v = (f_aux - |X|) 1{u.X>0} X``, ``f_aux = 1{u.X>0} U.X`` (Section 7.1).

    Rotation invariance gives ``U/2 - q u``:

    >>> u = sp.Matrix([sp.cos(psi), sp.sin(psi)])
    >>> sp.simplify(common_gate_drift() - (sp.Matrix([U1, U2]) / 2 - q_constant() * u))
    Matrix([
    [0],
    [0]])
    """
    G, m = gated_moments()
    return sp.simplify(G * sp.Matrix([U1, U2]) - m)


def disagreement_probability_2d() -> sp.Expr:
    """P(1{u.X>0} != 1{v.X>0}) for unit u, v at angle delta in [0, pi], X rotation invariant in R^2 (Sections 4, 7, 9).

    Over one period ``[-pi/2, 3pi/2)`` of the input angle the gate signs change only at
    ``-pi/2, delta - pi/2, pi/2, delta + pi/2``; for every delta in (0, pi) these keep this
    order, so the disagreement indicator is constant on each piece (its value is read at the
    piece's midpoint for a delta inside (0, pi)) and the probability is the SymPy integral of
    those constants against the uniform angular density ``1/(2 pi)``:

    >>> disagreement_probability_2d()
    delta/pi

    Any dimension: the gates depend on X only through its orthogonal projection P X onto
    span(u, v), since ``u.X = u.PX``; rotations of that plane (extended by the identity on its
    complement) preserve the law of X, so the direction of PX is uniform on the plane's
    circle whenever ``P X != 0`` a.s., and the two-dimensional result applies verbatim.
    """
    cuts = [-sp.pi / 2, delta - sp.pi / 2, sp.pi / 2, delta + sp.pi / 2, 3 * sp.pi / 2]
    witness = sp.pi / 3  # any delta in (0, pi) gives the same sign pattern
    total = sp.Integer(0)
    for lo, hi in itertools.pairwise(cuts):
        mid = ((lo + hi) / 2).subs(delta, witness)
        open_u = sp.cos(mid) > 0
        open_v = sp.cos(mid - witness) > 0
        indicator = 1 if bool(open_u) != bool(open_v) else 0
        total += sp.integrate(sp.Integer(indicator) / (2 * sp.pi), (phi, lo, hi))
    return sp.simplify(total)


def disagreement_probability_sphere(angle: mpmath.mpf | float, dps: int = 30) -> mpmath.mpf:
    """P(gates of u, v at ``angle`` disagree) for X uniform on the sphere S^2, by mpmath quadrature.

    Coordinates adapted to u only: ``u = e3``, ``v = (sin angle, 0, cos angle)``,
    ``X = (sin th cos ph, sin th sin ph, cos th)``. For fixed th the gate of v is open where
    ``cos ph > kappa(th) = -cot(angle) cot(th)``, so the ph-integral of the piecewise-constant
    indicator is summed exactly between its breakpoints ``+-acos(kappa)``; the th-integral
    (weight ``sin th / (4 pi)``) is done by tanh-sinh quadrature split at ``pi/2`` and at
    ``pi/2 +- min(angle, pi - angle)``, where the breakpoints appear. Works at ``dps + 10``
    digits and returns an mpf (``0 < angle < pi``).

    >>> float(disagreement_probability_sphere(mpmath.mpf(1), dps=15) * mpmath.pi)
    1.0
    """
    if dps < 5:
        raise ValueError(f"dps must be at least 5; got {dps!r}")
    with mpmath.workdps(dps + 10):
        d = mpmath.mpf(angle)
        if not (0 < d < mpmath.pi):
            raise ValueError(f"angle must lie in (0, pi); got {angle!r}")
        cot_d = mpmath.cot(d)

        def inner(th):
            gate_u = mpmath.cos(th) > 0
            kappa = -cot_d * mpmath.cot(th)
            if kappa >= 1:
                open_len = mpmath.mpf(0)  # v's gate closed for every ph
            elif kappa <= -1:
                open_len = 2 * mpmath.pi  # v's gate open for every ph
            else:
                open_len = 2 * mpmath.acos(kappa)  # |ph| < acos(kappa)
            dis_len = (2 * mpmath.pi - open_len) if gate_u else open_len
            return dis_len * mpmath.sin(th) / (4 * mpmath.pi)

        m = min(d, mpmath.pi - d)
        cuts = sorted({mpmath.mpf(0), mpmath.pi / 2 - m, mpmath.pi / 2, mpmath.pi / 2 + m, mpmath.pi})
        value = mpmath.quad(inner, cuts)
    return +value


def common_gate_separation_rates() -> MappingProxyType:
    """Mean common-gate rates of the separation at a balanced proportional point of amplitude B (Sections 4, 7.1).

    At ``a_i = r_i``, ``w_i = r_i e1`` (so ``U = sum_i a_i w_i = B e1`` and the common gate is
    ``1{x1 > 0}``), the common-gate step ``z_i -> Q z_i`` has mean generator ``(E Q - I)/eta =
    -lambda I - [[0, m^T], [m, 0]]`` with ``m = E[v] = U/2 - q e1`` (:func:`common_gate_drift`) on
    ``z = (a, w_x, w_y)``. The shared direction is ``h ~ (1, 1, 0)``; the separation ``d_z``
    orthogonal to it has the imbalance direction ``(1, -1, 0)`` and the transverse direction
    ``(0, 0, 1)``. Returns the generator, the three directions and their rates (eigenvalues:
    negative = contraction).
    """
    m = common_gate_drift().subs({psi: 0, U1: B, U2: 0})
    M = sp.zeros(3, 3)
    M[0, 1:] = m.T
    M[1:, 0] = m
    gen = -lam * sp.eye(3) - M
    dirs = {"shared": sp.Matrix([1, 1, 0]), "imbalance": sp.Matrix([1, -1, 0]), "transverse": sp.Matrix([0, 0, 1])}
    rates = {}
    for name, v in dirs.items():
        image = gen * v
        rate = sp.simplify(image.dot(v) / v.dot(v))
        if any(sp.simplify(c) != 0 for c in image - rate * v):
            raise RuntimeError(f"{name} is not an eigenvector of the common-gate generator")
        rates[name] = rate
    return MappingProxyType({"generator": gen, "directions": dirs, "rates": rates})
