"""Reference curves and derived numbers quoted in the simulation sections (Section 8; Appendices 19, 20).

Online SGD draws ``b`` fresh inputs per update and makes ``1/eta`` updates per unit of
physical time. Two units at angle ``delta`` have gates that disagree on a wedge of input
directions of probability ``delta/pi`` (:func:`disagreement_probability`), so disagreeing
samples arrive at rate ``b delta / (pi eta)`` per unit time. The paper's reference curves
integrate this rate along an assumed angle path:

* Poisson reference (Section 8): angle ``delta0 e^{-lambda t}`` on ``[0, oo)``, exponent
  ``b delta0/(pi eta lambda) = Gamma/(pi lambda)`` with the budget ``Gamma = b delta0/eta``;
* frozen-angle reference (Table 2): angle ``delta0`` on ``[0, t]``, exponent ``Gamma t/pi``;
* Appendix 20's ``Lambda(t)``: angle ``0.85 delta0 e^{-lambda s}`` on ``[0, t]``. The factor
  ``0.85`` is not derived in the text; the common-gate amplitude transient from ``B = 0.9``
  alone would give about ``0.88`` (:func:`transient_intensity_factor`).

The common-gate mean flow (gate of ``e1`` for both units, Section 7.1) keeps balanced
symmetric units balanced, shrinks their transverse parts at exactly ``lambda``, and moves
the shared amplitude by ``dB/dt = B(B_t - B)``; the angle therefore decays as
``delta0 e^{-lambda t} sqrt(B0/B(t))`` (:func:`common_gate_angle`).

>>> in_budget(poisson_exponent())
Gamma/(pi*lambda)
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..memo import memo
from .initialization import target_risk
from .kernels import g_kernel, gated_radial_moment, gated_second_moment
from .symbols import delta, lam, omega1, omega2, phi, t

PI = sp.pi
b = sp.Symbol("b", positive=True)  # batch size
eta = sp.Symbol("eta", positive=True)  # step size
delta0 = sp.Symbol("delta0", positive=True)  # angle at the task switch
Gamma = sp.Symbol("Gamma", positive=True)  # disagreement budget b delta0 / eta
kappa = sp.Symbol("kappa", positive=True)  # intensity factor
p_hat = sp.Symbol("p", positive=True)  # a recovered fraction in (0, 1)
s_noise = sp.Symbol("s", positive=True)  # parameter-noise scale
time = sp.Symbol("time", nonnegative=True)  # physical target time
u = sp.Symbol("u", nonnegative=True)  # integration variable in time
B = sp.Symbol("B", positive=True)  # clone amplitude sum_i a_i |w_i|
B0 = sp.Symbol("B0", positive=True)  # amplitude at the checkpoint
v_var = sp.Symbol("v", positive=True)  # a stationary variance
r = sp.Symbol("r", positive=True)  # hidden norm
floor = sp.Symbol("floor", positive=True)  # smallest resolved angle
T_half = sp.Symbol("T_half", positive=True)  # source time of half recovery


@memo
def disagreement_probability(angle: sp.Expr = delta) -> sp.Expr:
    """P(the gates of two units at angle ``angle`` in [0, pi] differ) for rotation-invariant inputs.

    With ``u = e1`` and ``v`` at angle ``angle``, the gates differ on the directions
    ``(pi/2, pi/2 + angle)`` and ``(-pi/2, angle - pi/2)``:

    >>> disagreement_probability()
    delta/pi
    """
    density = 1 / (2 * PI)  # uniform input direction
    wedge = sp.integrate(density, (phi, PI / 2, PI / 2 + angle)) + sp.integrate(density, (phi, -PI / 2, angle - PI / 2))
    return sp.simplify(wedge)


def disagreement_rate(angle: sp.Expr) -> sp.Expr:
    """Disagreeing samples per unit time: b samples per update, 1/eta updates per unit time.

    >>> disagreement_rate(delta0)
    b*delta0/(pi*eta)
    """
    return b / eta * disagreement_probability(angle)


def in_budget(expr: sp.Expr) -> sp.Expr:
    """Express ``expr`` through the budget: substitute ``b = Gamma eta / delta0``.

    >>> in_budget(b * delta0 / eta)
    Gamma
    """
    return sp.simplify(expr.subs(b, Gamma * eta / delta0))


@cache
def poisson_exponent() -> sp.Expr:
    """int_0^oo b (delta0 e^{-lambda t}/pi) / eta dt: expected disagreements along the decaying angle.

    >>> poisson_exponent()
    b*delta0/(pi*eta*lambda)
    """
    return sp.simplify(sp.integrate(disagreement_rate(delta0 * sp.exp(-lam * time)), (time, 0, sp.oo)))


def poisson_reference() -> sp.Expr:
    """1 - exp(-Gamma/(pi lambda)): recovery probability if the first disagreement always triggered it.

    >>> poisson_reference()
    1 - exp(-Gamma/(pi*lambda))
    """
    return 1 - sp.exp(-in_budget(poisson_exponent()))


def frozen_reference() -> sp.Expr:
    """1 - exp(-Gamma t/pi): the same with the angle frozen at delta0 on [0, t] (Table 2).

    >>> frozen_reference()
    1 - exp(-Gamma*time/pi)
    """
    return 1 - sp.exp(-in_budget(sp.integrate(disagreement_rate(delta0), (u, 0, time))))


def integrated_intensity(factor: sp.Expr = kappa) -> sp.Expr:
    """Lambda(t) = int_0^t b (factor delta0 e^{-lambda u}/pi) / eta du (Appendix 20 with factor 0.85).

    >>> sp.simplify(integrated_intensity() - kappa * b * delta0 / (sp.pi * eta) * (1 - sp.exp(-lam * time)) / lam)
    0
    """
    return sp.simplify(sp.integrate(disagreement_rate(factor * delta0 * sp.exp(-lam * u)), (u, 0, time)))


@cache
def kappa_eff() -> sp.Expr:
    """Solve p = 1 - exp(-kappa Gamma/(pi lambda)) for kappa (Appendix 19).

    >>> kappa_eff()
    -pi*lambda*log(1 - p)/Gamma
    """
    model = 1 - sp.exp(-kappa * in_budget(poisson_exponent()))
    # p = model  <=>  log(1 - p) = log(1 - model), both sides positive for p in (0, 1)
    (sol,) = sp.solve(sp.Eq(sp.log(1 - p_hat), sp.expand_log(sp.log(1 - model))), kappa)
    if sp.simplify(model.subs(kappa, sol) - p_hat) != 0:
        raise ArithmeticError("kappa_eff does not invert the Poisson reference")
    return sol


def ou_difference_variance() -> tuple[sp.Expr, sp.Expr]:
    """Stationary variance of the transverse difference under independent per-unit noise.

    Per step the difference ``D`` of the two units' transverse coordinates obeys
    ``D+ = (1 - eta lambda) D + s sqrt(eta) (xi_1 - xi_2)``, ``Var(xi_1 - xi_2) = 2``
    (the common-gate data term is identical for balanced units and cancels). Returns the
    exact discrete stationary variance and its small-step limit ``s^2/lambda``; the
    continuous OU process ``dD = -lambda D dt + sqrt(2) s dW`` gives the same limit.

    >>> discrete, limit = ou_difference_variance()
    >>> sp.simplify(discrete - 2 * s_noise**2 / (lam * (2 - eta * lam))), limit
    (0, s**2/lambda)
    """
    (discrete,) = sp.solve(sp.Eq(v_var, (1 - eta * lam) ** 2 * v_var + 2 * s_noise**2 * eta), v_var)
    discrete = sp.factor(discrete)
    limit = sp.limit(discrete, eta, 0)
    (lyapunov,) = sp.solve(sp.Eq(-2 * lam * v_var + 2 * s_noise**2, 0), v_var)
    if sp.simplify(limit - lyapunov) != 0:
        raise ArithmeticError("discrete and continuous stationary variances disagree")
    return discrete, limit


@cache
def target_clone_objective() -> sp.Expr:
    """Target objective on the balanced proportional family, as a function of B = omega_1 + omega_2.

    Parallel units (angle 0) have risk ``1 + B^2/4 - qB``; with balance ``a_i = |w_i|`` the
    decay ``(lambda/2) sum_i (a_i^2 + |w_i|^2) = lambda sum_i omega_i = lambda B``.

    >>> target_clone_objective()
    B**2/4 + B*lambda - 2*B/pi + 1
    """
    w2 = sp.Symbol("w2", nonnegative=True)
    parallel = sp.expand(target_risk().subs(delta, 0).subs(omega1, B - omega2).subs(omega2, w2))
    if parallel.has(w2):
        raise ArithmeticError("parallel-unit risk should depend on B only")
    return sp.expand(parallel + lam * B)


def target_clone_amplitude() -> sp.Expr:
    """B_t = argmin of :func:`target_clone_objective` = 2(q - lambda).

    >>> target_clone_amplitude()
    -2*lambda + 4/pi
    """
    (sol,) = sp.solve(sp.diff(target_clone_objective(), B), B)
    return sp.expand(sol)


@memo
def target_clone_norm() -> sp.Expr:
    """Hidden norm r at the balanced target clone: a_i = r_i = r, B_t = 2 r^2, so r = sqrt(B_t/2).

    >>> sp.N(target_clone_norm().subs(lam, sp.Rational(1, 20)), 6)
    0.765911
    """
    (sol,) = sp.solve(sp.Eq(2 * r**2, target_clone_amplitude()), r)
    return sol


def angle_noise_scale() -> sp.Expr:
    """Stationary transverse std over the hidden norm: s/(r sqrt(lambda)) at the target clone.

    >>> sp.N(angle_noise_scale().subs({lam: sp.Rational(1, 20), s_noise: 1}), 5)
    5.8390
    """
    _, var = ou_difference_variance()
    return sp.sqrt(var) / target_clone_norm()


@cache
def escape_rate() -> sp.Expr:
    """A: linear rate of the population angle at the balanced target clone, q - lambda.

    Rotating ``w_i`` by ``dpsi`` moves it by ``r dpsi``, so the angle flow is
    ``d delta/dt = -(2/r^2) dR/d delta = 2 r^2 g(delta)`` for balanced units (``omega_i = r^2``;
    the ``q`` term and weight decay do not depend on angles). With ``g'(0) = 1/2`` and
    ``r^2 = B_t/2`` the linear rate is ``q - lambda``.

    >>> escape_rate()
    -lambda + 2/pi
    """
    rr = sp.Symbol("rr", positive=True)
    risk = target_risk().subs({omega1: rr**2, omega2: rr**2})
    flow = -2 / rr**2 * sp.diff(risk, delta)
    if sp.simplify(flow - 2 * rr**2 * g_kernel().subs(t, delta)) != 0:
        raise ArithmeticError("angle flow should be 2 r^2 g(delta)")
    rate = sp.limit(flow / delta, delta, 0)
    return sp.expand(rate.subs(rr, target_clone_norm()))


@cache
def common_gate_symmetric_flow() -> dict[str, sp.Expr]:
    """Common-gate mean flow for balanced symmetric units a_i = p, w_i = (p, +-y).

    Both units use the gate of ``e1``: ``dw_i/dt = -a_i (G U - q e1) - lambda w_i`` and
    ``da_i/dt = -w_i . (G U - q e1) - lambda a_i`` with ``U = sum_j a_j w_j``,
    ``G = E[1{X_1 > 0} X X^T]`` and ``E[1{X_1 > 0}|X| X] = q e1`` (:mod:`.kernels`).
    Returns the rates ``y'/y`` and ``p'/p``, and ``a' - p'`` (zero: balance is kept).

    >>> flow = common_gate_symmetric_flow()
    >>> pp = sp.Symbol("p", positive=True)
    >>> flow["transverse_rate"], sp.expand(flow["parallel_rate"] - (2 / sp.pi - lam - pp**2)), flow["balance_drift"]
    (-lambda, 0, 0)
    """
    pp, yy = sp.symbols("p y", positive=True)
    G = gated_second_moment()
    qvec = gated_radial_moment()
    w = [sp.Matrix([pp, yy]), sp.Matrix([pp, -yy])]
    a_i = [pp, pp]
    U = a_i[0] * w[0] + a_i[1] * w[1]
    resid = G * U - qvec
    wdot = [-a_i[k] * resid - lam * w[k] for k in range(2)]
    adot = [-(w[k].T * resid)[0] - lam * a_i[k] for k in range(2)]
    return {
        "transverse_rate": sp.simplify(wdot[0][1] / yy),
        "parallel_rate": sp.simplify(wdot[0][0] / pp),
        "balance_drift": sp.simplify(adot[0] - wdot[0][0]),
    }


def regularised_transverse_path() -> dict[str, sp.Expr]:
    """The transverse part y(t) of the common-gate mean flow with L2 toward zero and toward a reference (Section 9).

    Regularisation toward a reference point ``theta_ref`` (Kumar et al., 2025: toward the
    initialisation) replaces the weight-decay term ``-lambda theta`` by ``-lambda (theta - theta_ref)``.
    For balanced symmetric units ``a_i = p, w_i = (p, +-y)`` and a symmetric reference
    ``a_ref = p_r, w_ref = (p_r, +-y_r)`` the common-gate flow of :func:`common_gate_symmetric_flow`
    gives ``y' = -lambda (y - y_r)`` (the gated residual has no transverse part), solved from
    ``y(0) = y0``. Returns the derived ``rate`` ``y'`` and the paths ``to_zero`` (``y_r = 0``) and
    ``to_reference``; the separation angle is ``2 atan(y/p)``, so it contracts to 0 in the first
    case and moves to the reference's in the second: apart, when the checkpoint's separation
    ``y0`` is below the initialisation's ``y_r``.

    >>> path = regularised_transverse_path()
    >>> path["to_zero"], path["to_reference"]
    (y0*exp(-lambda*time), y_r + (y0 - y_r)*exp(-lambda*time))
    """
    pp, yy, pr, yr, y0 = sp.symbols("p y p_r y_r y0", positive=True)
    G = gated_second_moment()
    qvec = gated_radial_moment()
    w = [sp.Matrix([pp, yy]), sp.Matrix([pp, -yy])]
    w_ref = sp.Matrix([pr, yr])
    U = pp * w[0] + pp * w[1]
    rate = sp.simplify((-pp * (G * U - qvec) - lam * (w[0] - w_ref))[1])
    if sp.simplify(rate + lam * (yy - yr)) != 0:
        raise ArithmeticError("the transverse rate toward a reference should be -lambda (y - y_r)")
    y = sp.Function("y")
    paths = {}
    for name, ref in (("to_zero", 0), ("to_reference", yr)):
        sol = sp.dsolve(sp.Eq(y(time).diff(time), rate.subs({yy: y(time), yr: ref})), y(time), ics={y(0): y0})
        paths[name] = sp.collect(sp.expand(sol.rhs), sp.exp(-lam * time))
    return {"rate": rate, **paths}


@cache
def common_gate_amplitude() -> sp.Expr:
    """B(t) = B_t B0 / (B0 + (B_t - B0) e^{-B_t t}), the solution of dB/dt = B(B_t - B).

    ``B = 2 p^2`` and ``p'/p`` from :func:`common_gate_symmetric_flow` give
    ``B' = 2 B (p'/p) = B(B_t - B)``; the logistic solution is checked by substitution.

    >>> sol = common_gate_amplitude()
    >>> sp.simplify(sol.subs(time, 0) - B0)
    0
    """
    Bt = target_clone_amplitude()
    pp = sp.Symbol("p", positive=True)
    rate = common_gate_symmetric_flow()["parallel_rate"]
    b_dot = sp.expand(2 * B * rate.subs(pp, sp.sqrt(B / 2)))
    if sp.simplify(b_dot - B * (Bt - B)) != 0:
        raise ArithmeticError("amplitude equation should be dB/dt = B (B_t - B)")
    sol = Bt * B0 / (B0 + (Bt - B0) * sp.exp(-Bt * time))
    if sp.simplify(sp.diff(sol, time) - sol * (Bt - sol)) != 0:
        raise ArithmeticError("logistic solution does not solve the amplitude equation")
    return sol


@memo
def common_gate_angle() -> sp.Expr:
    """Small-angle path delta0 e^{-lambda t} sqrt(B0/B(t)): transverse part decays at lambda, p = sqrt(B/2).

    >>> expr = common_gate_angle().subs(
    ...     {lam: sp.Rational(1, 20), B0: sp.Rational(9, 10), delta0: sp.Rational(1, 10**4)}
    ... )
    >>> sp.N(expr.subs(time, 100), 4)
    5.901e-7
    """
    if common_gate_symmetric_flow()["transverse_rate"] != -lam:
        raise ArithmeticError("transverse rate should be -lambda")
    return delta0 * sp.exp(-lam * time) * sp.sqrt(B0 / common_gate_amplitude())


def transient_intensity_factor() -> sp.Expr:
    """int_0^oo lambda e^{-lambda t} sqrt(B0/B(t)) dt: the intensity factor the amplitude transient implies.

    Not claimed by the paper; it is our comparison for the unexplained 0.85 of Appendix 20.
    Returned unevaluated (evaluate numerically with ``sp.N``).

    >>> f = transient_intensity_factor().subs({lam: sp.Rational(1, 20), B0: sp.Rational(9, 10)})
    >>> round(float(sp.N(f, 15)), 3)
    0.881
    """
    integrand = lam * common_gate_angle() / delta0
    return sp.Integral(integrand, (time, 0, sp.oo))


def resolution_time() -> sp.Expr:
    """Time at which delta0 e^{-lambda t} reaches ``floor``: log(delta0/floor)/lambda.

    >>> sp.simplify(resolution_time() - sp.log(delta0 / floor) / lam)
    0
    """
    (sol,) = sp.solve(sp.Eq(delta0 * sp.exp(-lam * time), floor), time)
    return sp.simplify(sol)


def half_recovery_offset() -> sp.Expr:
    """T_1/2 - lambda^{-1} log(b/eta): the source time left after the angle reaches eta/b (Appendix 19).

    If the angle decays as ``C e^{-lambda T}``, the budget ``b delta_T/eta`` reaches a fixed
    level at ``T = lambda^{-1} log(b/eta) + const``; the offset is that constant.

    >>> sp.simplify(half_recovery_offset() - (T_half - sp.log(b / eta) / lam))
    0
    """
    (t_star,) = sp.solve(sp.Eq(b * sp.exp(-lam * time) / eta, 1), time)
    return T_half - sp.simplify(t_star)


def gd_log_angle_spacing() -> sp.Expr:
    """Change of A^{-1} log(1/delta0) per decade of delta0: log(10)/A (Appendix 19).

    >>> sp.simplify(gd_log_angle_spacing() - sp.log(10) / (2 / sp.pi - lam))
    0
    """
    return sp.log(10) / escape_rate()


def gd_hitting_offset(hit_time: sp.Expr, angle: sp.Expr) -> sp.Expr:
    """The offset c in hit_time = A^{-1} log(1/angle) + c.

    >>> tau = sp.Symbol("tau")
    >>> sp.simplify(gd_hitting_offset(tau, delta0) - (tau - sp.log(1 / delta0) / (2 / sp.pi - lam)))
    0
    """
    return hit_time - sp.log(1 / angle) / escape_rate()
