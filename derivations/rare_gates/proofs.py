"""Algebra of the proof steps and corollary arithmetic (Sections 3, 5, 7; Appendices 10-13, 17).

The paper leaves most constants of its proofs unspecified (``C``, ``c_*``, ``gamma``, ``L``,
``kappa``...): what can be derived here is the algebra that connects the displayed bounds,
with those constants kept as positive symbols. Each function rebuilds one step from the
definitions the paper states (the bound it starts from, the coordinates of Section 7, the
common-gate SGD step of the model) and returns the SymPy objects the checks compare with
the paper's printed forms.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from types import MappingProxyType

import sympy as sp

from derivations.memo import memo
from derivations.validation import integer

from .dynamics import alpha, beta, eta, polar_flow
from .symbols import a1, a2, lam, r1, r2, t

# positive constants of the paper's bounds (values unspecified by the paper)
C, b, gamma, C0, c_star, c0, c1, c_T = sp.symbols("C b gamma C_0 c_star c_0 c_1 c_T", positive=True)
T, H, L = sp.symbols("T H L", positive=True)  # source time, target horizon, burn-in time
N = sp.Symbol("N", positive=True, integer=True)  # number of target updates
prob = sp.Symbol("p", positive=True)  # recovery probability of Section 5
kappa, R_W, F_e, W0 = sp.symbols("kappa R_W F_e W_0", positive=True)  # Appendix 12 block quantities
ell, M, L_F, a_tol = sp.symbols("ell M L_F a", positive=True)  # Appendix 10: block length, noise bound, Lipschitz, tol
varrho, L_Psi = sp.symbols("varrho L_Psi", positive=True)  # Appendix 10: level of Psi and its Lipschitz constant
Delta0, d0 = sp.symbols("Delta_0 d_0", positive=True)  # initial target / source projective separations
x = sp.Symbol("x", positive=True)  # a generic small quantity (eta lambda, e^{-lambda T}, ...)
k = sp.Symbol("k", real=True)  # exponent excess: gamma C_0 = 1 + k


@memo
def small_step_limit(expr: sp.Expr) -> sp.Expr:
    """``lim_{eta -> 0+} expr``."""
    return sp.limit(expr, eta, 0, "+")


# ---------------------------------------------------------------- Section 1: the horizon in terms of T


def horizon_log_excess(slack: sp.Expr) -> sp.Expr:
    """``log e^{c_*/eta} - log e^{c_* T}`` at ``1/eta = T + slack``: the failure horizon ``e^{c_*/eta}`` against
    ``e^{c_* T}`` (Section 1: 'exponential in T when T <~ 1/eta'); it has the sign of ``slack``.

    >>> horizon_log_excess(sp.Symbol("u"))
    c_star*u
    """
    horizon = sp.exp(c_star / eta)
    excess = sp.expand_log(sp.log(horizon), force=True) - sp.expand_log(sp.log(sp.exp(c_star * T)), force=True)
    return sp.simplify(excess.subs(eta, 1 / (T + slack)))


def log_time_window_is_open() -> sp.Expr:
    """``lim_{eta -> 0+} (log(b/eta) - 1/eta)``: -oo, so the window log(b/eta) <~ T <~ 1/eta, where the horizon is
    exponential in T, is non-empty for small steps (Section 1)."""
    return small_step_limit(sp.log(b / eta) - 1 / eta)


# ---------------------------------------------------------------- Corollary 2 (Section 3)


def exponential_term_at_log_time(rate: sp.Expr, coefficient: sp.Expr) -> sp.Expr:
    """``(C b/eta) e^{-rate T}`` at ``T = coefficient log(1/eta)``, as a power of eta (Corollary 2; Section 5).

    >>> exponential_term_at_log_time(gamma, C0)
    C*b*eta**(C_0*gamma - 1)
    """
    term = C * b / eta * sp.exp(-rate * T)
    at = term.subs(T, coefficient * sp.log(1 / eta))
    return sp.expand_power_base(sp.powdenest(at.rewrite(sp.Pow), force=True), force=True)


def exponential_term_slope() -> sp.Expr:
    """``d/dT`` of ``(C b/eta) e^{-gamma T}``: negative, so ``T >= C_0 log(1/eta)`` bounds the term by its value
    there."""
    return sp.diff(C * b / eta * sp.exp(-gamma * T), T)


HALF = sp.Rational(1, 2)


def excursion_term(horizon_fraction: sp.Expr = HALF) -> sp.Expr:
    """The last term ``C(1 + (T+H)/eta) e^{-c_*/eta}`` of (4) at ``T = H = e^{f c_*/eta}`` (Corollary 2).

    Corollary 2 allows ``T, H <= e^{c_*/(2 eta)}`` (``f = 1/2``), which gives the printed
    ``C(1 + 2 eta^{-1} e^{c_*/(2 eta)}) e^{-c_*/eta}``.
    """
    edge = sp.exp(horizon_fraction * c_star / eta)
    return C * (1 + (edge + edge) / eta) * sp.exp(-c_star / eta)


def particular_case_ratios() -> MappingProxyType:
    """Ratios behind Corollary 2's particular case ``T <= c_0/eta``, ``H = e^{c_1 T}``.

    ``time``: ``(c_0/eta) / e^{c_*/(2 eta)}`` (needs to be <= 1 for small eta);
    ``horizon``: ``e^{c_1 c_0/eta} / e^{c_*/(2 eta)} = e^{(c_1 c_0 - c_*/2)/eta}``;
    ``burn_in``: ``C_0 log(1/eta) - (L + 1)`` (needs to be >= 0 eventually).
    """
    return MappingProxyType(
        {
            "time": (c0 / eta) / sp.exp(c_star / (2 * eta)),
            "horizon": sp.simplify(sp.exp(c1 * c0 / eta) / sp.exp(c_star / (2 * eta))),
            "burn_in": C0 * sp.log(1 / eta) - (L + 1),
        }
    )


# ---------------------------------------------------------------- Section 5 / Corollary 5 / Proposition 6


def proposition6_bound(n_updates: sp.Expr = N) -> sp.Expr:
    """Right side of Proposition 6's display: ``C b e^{-lambda T} min{N, 1/eta} + C (N+1) e^{-c/eta}``."""
    return C * b * sp.exp(-lam * T) * sp.Min(n_updates, 1 / eta) + C * (n_updates + 1) * sp.exp(-c_star / eta)


def necessary_size_thresholds() -> MappingProxyType:
    """Where the disagreement term ``C b e^{-lambda T} min{N, 1/eta}`` equals ``p/2`` (Section 5).

    Recovery with probability ``p`` needs the bound to reach p; when the excursion term is at
    most p/2 (horizons ``N + 1 <= e^{c/(2 eta)}`` and small eta), the disagreement term must
    reach p/2. Since ``min{N, 1/eta}`` is at most N and at most 1/eta, that needs
    ``N b >= c_p e^{lambda T}`` and ``b >= c_p eta e^{lambda T}``. Returns the batch sizes
    solving each branch at equality, ``N b`` and ``b/(eta e^{lambda T})`` from them, and the
    excursion term at the horizon edge ``N + 1 = e^{c/(2 eta)}``.
    """
    bN = sp.solve(sp.Eq(C * b * sp.exp(-lam * T) * N, prob / 2), b)[0]
    beta_ = sp.solve(sp.Eq(C * b * sp.exp(-lam * T) / eta, prob / 2), b)[0]
    return MappingProxyType(
        {
            "b_N": bN,
            "b_eta": beta_,
            "c_p_samples": sp.simplify(N * bN * sp.exp(-lam * T)),
            "c_p_batch": sp.simplify(beta_ / (eta * sp.exp(lam * T))),
            "excursion_at_edge": sp.simplify(C * sp.exp(c_star / (2 * eta)) * sp.exp(-c_star / eta)),
        }
    )


# ---------------------------------------------------------------- Section 7: coordinates and the common gate


def _geometric_sum(ratio: sp.Expr, count: sp.Expr) -> sp.Expr:
    """``sum_{n < count} ratio^n`` by SymPy summation for a ratio in (0, 1) (``count`` may be oo)."""
    n = sp.Symbol("n", integer=True, nonnegative=True)
    r = sp.Symbol("r", positive=True)
    total = sp.Sum(r**n, (n, 0, count - 1)).doit()
    if isinstance(total, sp.Piecewise):  # the branch for 0 < r < 1 (the only one used here)
        branch = next(expr for expr, cond in total.args if cond.subs(r, sp.Rational(1, 2)) == sp.true)
        if branch.has(sp.Sum):
            raise RuntimeError(f"unexpected geometric sum {total}")
        total = branch
    return total.subs(r, ratio)


def _vec(name: str, n: int) -> sp.Matrix:
    return sp.Matrix(sp.symbols(f"{name}1:{n + 1}", real=True))


def common_gate_step(batch: int = 2) -> MappingProxyType:
    """One SGD step of the common-gate process (Section 7.1) on a symbolic batch, and its matrix Q.

    Units ``z_i = (a_i, w_i)``; ``f_aux(x) = g U.x`` with ``U = a_1 w_1 + a_2 w_2`` and gate
    values ``g_j`` fixed (the common gate is evaluated, not differentiated: its derivative
    vanishes off the gate boundary); objective ``(1/2b) sum_j (f_aux(X_j) - |X_j|)^2 +
    (lambda/2)|theta|^2``. With ``v = (1/b) sum_j (f_aux(X_j) - |X_j|) g_j X_j`` the step is
    ``z_i^+ = Q z_i`` for both units, ``Q = [[1 - eta lambda, -eta v^T], [-eta v, (1 - eta lambda) I]]``.
    Returns the step (``z1_next``, ``z2_next``), ``z1``, ``z2`` and ``Q``.
    """
    aa = sp.symbols("A1 A2", real=True)
    ws = [sp.Matrix(sp.symbols(f"w{i}x w{i}y", real=True)) for i in (1, 2)]
    xs = [sp.Matrix(sp.symbols(f"X{j}x X{j}y", real=True)) for j in range(batch)]
    gs = sp.symbols(f"g0:{batch}", real=True)
    ns = sp.symbols(f"n0:{batch}", positive=True)  # |X_j|
    U = aa[0] * ws[0] + aa[1] * ws[1]
    resid = [gs[j] * U.dot(xs[j]) - ns[j] for j in range(batch)]
    theta = [aa[0], *ws[0], aa[1], *ws[1]]
    obj = sum(r**2 for r in resid) / (2 * batch) + lam / 2 * sum(v**2 for v in theta)
    step = sp.Matrix([v - eta * sp.diff(obj, v) for v in theta])
    vv = sum((resid[j] * gs[j] * xs[j] for j in range(batch)), sp.zeros(2, 1)) / batch
    s = 1 - eta * lam
    Q = sp.Matrix([[s, -eta * vv[0], -eta * vv[1]], [-eta * vv[0], s, 0], [-eta * vv[1], 0, s]])
    z1 = sp.Matrix([aa[0], *ws[0]])
    z2 = sp.Matrix([aa[1], *ws[1]])
    return MappingProxyType({"z1_next": step[:3, 0], "z2_next": step[3:, 0], "z1": z1, "z2": z2, "Q": Q})


def projective_coordinates(h: sp.Matrix, d: sp.Matrix) -> tuple[sp.Expr, sp.Matrix]:
    """``rho = h.d/|h|^2`` and ``e = d - rho h`` (Section 7, Coordinates)."""
    rho = h.dot(d) / h.dot(h)
    return rho, d - rho * h


def projector(v: sp.Matrix) -> sp.Matrix:
    """``P_v = I - v v^T/|v|^2`` (Section 7.2)."""
    return sp.eye(v.shape[0]) - v * v.T / v.dot(v)


def projective_step(Q: sp.Matrix, h: sp.Matrix, d: sp.Matrix) -> MappingProxyType:
    """One common-gate step ``h -> Qh``, ``d_z -> Q d_z`` in the projective coordinates (Section 7.2).

    Returns ``e_next`` and ``drho = rho^+ - rho`` computed from the definitions, and the
    paper's forms ``P_{Qh} Q e`` and ``h^T Q^2 e/|Qh|^2`` (and ``h^T Q^T Q e/|Qh|^2``, the form
    the definitions give for any Q).
    """
    rho, e = projective_coordinates(h, d)
    hp, dp = Q * h, Q * d
    rho_p, e_p = projective_coordinates(hp, dp)
    nq = hp.dot(hp)
    return MappingProxyType(
        {
            "e": e,
            "e_next": e_p,
            "drho": rho_p - rho,
            "paper_e_next": projector(hp) * Q * e,
            "paper_drho": (h.T * Q**2 * e)[0] / nq,
            "gram_drho": (h.T * Q.T * Q * e)[0] / nq,
        }
    )


def rational_residual(expr: sp.Expr) -> sp.Expr:
    """Expanded numerator of ``expr`` over a common denominator (0 iff ``expr`` is identically 0)."""
    return sp.expand(sp.numer(sp.together(expr)))


def sqrt_contraction_gap() -> sp.Expr:
    """``(1 - x/4)^2 - (1 - x/2)`` with ``x = eta lambda``: ``x^2/16 >= 0`` (Section 7.2, second bound from the first).

    Jensen gives ``E||e^+|| <= sqrt(E||e^+||^2) <= sqrt(1 - x/2) ||e||`` and ``sqrt(1 - x/2) <= 1 - x/4``
    for ``0 <= x <= 4``.
    """
    return sp.expand((1 - x / 4) ** 2 - (1 - x / 2))


def proportional_parameter() -> MappingProxyType:
    """Units in the Section 7 coordinates and the proportional parameter theta_P (Section 7.4).

    ``z_{1,2} = (h +- d_z)/sqrt 2``; theta_P replaces ``d_z`` by ``rho h``:
    ``z_{1,2}^P = (1 +- rho) h/sqrt 2``. Returns ``z1``, ``z2`` rebuilt from ``(h, rho, e)``,
    ``|theta - theta_P|^2 - |e|^2``, the orthogonality defect of the change of coordinates
    and the symbols used.
    """
    z1, z2 = _vec("z1_", 3), _vec("z2_", 3)
    h = (z1 + z2) / sp.sqrt(2)
    d = (z1 - z2) / sp.sqrt(2)
    rho, e = projective_coordinates(h, d)
    zp1, zp2 = (1 + rho) * h / sp.sqrt(2), (1 - rho) * h / sp.sqrt(2)
    gap = (z1 - zp1).dot(z1 - zp1) + (z2 - zp2).dot(z2 - zp2) - e.dot(e)
    Mc = sp.Matrix(sp.BlockMatrix([[sp.eye(3), sp.eye(3)], [sp.eye(3), -sp.eye(3)]])) / sp.sqrt(2)
    return MappingProxyType(
        {
            "z1_rebuilt": ((1 + rho) * h + e) / sp.sqrt(2),
            "z2_rebuilt": ((1 - rho) * h - e) / sp.sqrt(2),
            "z1": z1,
            "z2": z2,
            "distance_gap": gap,
            "orthogonality": sp.simplify(Mc.T * Mc - sp.eye(6)),
            "e_dot_h": e.dot(h),
        }
    )


def hidden_angle() -> tuple[sp.Expr, tuple[sp.Symbol, ...]]:
    """Angle between the hidden vectors ``(1 + rho) w + e_w`` and ``(1 - rho) w - e_w`` (times sqrt 2), ``w = r e1``.

    With ``e_w = (eps_1, eps_2)`` small: the angle is ``atan(eps_2/((1+rho) r + eps_1)) +
    atan(eps_2/((1-rho) r - eps_1))``. Returns it and ``(rho, r, eps_1, eps_2)``.
    """
    rho_, r_ = sp.Symbol("rho", real=True), sp.Symbol("r", positive=True)
    e1_, e2_ = sp.symbols("epsilon_1 epsilon_2", real=True)
    ang = sp.atan(e2_ / ((1 + rho_) * r_ + e1_)) + sp.atan(e2_ / ((1 - rho_) * r_ - e1_))
    return ang, (rho_, r_, e1_, e2_)


def hazard_sum(n_updates: sp.Expr = N) -> sp.Expr:
    """``sum_{n < N} (1 - eta lambda/4)^n``: the sum of Section 7.4's ``E||e_n|| 1 <= Delta_0 (1 - eta lambda/4)^n``.

    The summed disagreement hazard is ``(b C_ang/pi) Delta_0`` times this; it equals
    ``(1 - r^N)/(1 - r)`` with ``1/(1 - r) = 4/(eta lambda)``.
    """
    return _geometric_sum(1 - eta * lam / 4, n_updates)


# ---------------------------------------------------------------- Appendix 12


def target_linearisation() -> MappingProxyType:
    """``h_a'`` and ``r'`` from the target gradient flow at proportional units (Appendix 12).

    Units along one direction (``alpha = beta = 0``), arbitrary ``a_i, r_i > 0`` (no balance
    assumed); ``h_a = (a_1 + a_2)/sqrt 2``, ``r = (r_1 + r_2)/sqrt 2`` (the e1-component of
    ``w = (w_1 + w_2)/sqrt 2``), ``B = a_1 r_1 + a_2 r_2``. Also returns the transverse
    velocities of both units (0 on the family).
    """
    v = polar_flow("target")
    at = {alpha: 0, beta: 0}
    return MappingProxyType(
        {
            "ha_dot": sp.simplify(((v[a1] + v[a2]) / sp.sqrt(2)).subs(at)),
            "r_dot": sp.simplify(((v[r1] + v[r2]) / sp.sqrt(2)).subs(at)),
            "h_a": (a1 + a2) / sp.sqrt(2),
            "r": (r1 + r2) / sp.sqrt(2),
            "B": a1 * r1 + a2 * r2,
            "angles": (sp.simplify(v[alpha].subs(at)), sp.simplify(v[beta].subs(at))),
        }
    )


def forced_lyapunov_solution() -> sp.Expr:
    """Solution of ``W' = -kappa W + F_e``, ``W(0) = W_0`` (the equality case of (25), Appendix 12), by dsolve."""
    Wf = sp.Function("W")
    sol = sp.dsolve(sp.Eq(Wf(t).diff(t), -kappa * Wf(t) + F_e), Wf(t), ics={Wf(0): W0})
    return sp.simplify(sol.rhs)


def block_end_bound(block: sp.Expr, forcing: sp.Expr, start: sp.Expr) -> sp.Expr:
    """``e^{-kappa l} W(0) + forcing`` at ``W(0) = start`` after a block of length ``l`` (Appendix 12)."""
    return sp.exp(-kappa * block) * start + forcing


# ---------------------------------------------------------------- Appendix 10 (Lemma 7)


def lemma7_tail(dimension: int = 6) -> tuple[sp.Expr, sp.Expr]:
    """Prefactor and exponent of Lemma 7's tail from coordinatewise Azuma and a union bound (Appendix 10).

    Martingale ``S_m = eta sum_{j<m} xi_{j+1}`` with ``|xi| <= M`` over ``n`` updates, ``n eta <= l + 1``.
    Gronwall turns a tolerance a on the path into ``a e^{-L_F (l+1)}`` on the error terms; half of
    it, ``y = a e^{-L_F (l+1)}/2``, goes to the martingale. Each of the ``dimension`` coordinates
    obeys Azuma's maximal inequality ``P(max_m |S_m^k| >= y/sqrt(dim)) <= 2 exp(-(y^2/dim)/(2 n eta^2 M^2))``;
    the union over coordinates gives prefactor ``2 dim`` and the exponent returned (with
    ``n eta^2 <= (l + 1) eta``). θ has 6 coordinates (a_1, a_2, w_1, w_2).
    """
    y = a_tol * sp.exp(-L_F * (ell + 1)) / 2
    n_eta2 = (ell + 1) * eta
    exponent = (y**2 / dimension) / (2 * n_eta2 * M**2)
    return sp.Integer(2 * dimension), sp.simplify(exponent)


def block_count(n_updates: int, block: Fraction, step: Fraction, rounding: str = "ceil") -> int:
    """Number of blocks of ``n_blk = ceil(l/eta)`` updates that meet updates ``0..N`` (Appendix 10).

    ``rounding="floor"`` uses ``floor(l/eta)`` instead (for the check that the ceiling matters).
    """
    if n_updates < 0:
        raise ValueError(f"n_updates must be >= 0; got {n_updates!r}")
    if block <= 0 or step <= 0:
        raise ValueError(f"block and step must be > 0; got {block!r}, {step!r}")
    ratio = Fraction(block) / Fraction(step)
    n_blk = math.ceil(ratio) if rounding == "ceil" else math.floor(ratio)
    if n_blk < 1:
        raise ValueError(f"a block must hold at least one update; got l/eta = {ratio}")
    return n_updates // n_blk + 1


def source_decay_factor() -> sp.Expr:
    """``(1 - gamma eta)^n e^{gamma T}`` at ``n = (T - L)/eta - 1`` (the floor's worst case, Appendix 11.3)."""
    n_worst = (T - L) / eta - 1
    return (1 - gamma * eta) ** n_worst * sp.exp(gamma * T)


# ---------------------------------------------------------------- Appendix 17 (Lemma 14)


def escape_error_integrals() -> MappingProxyType:
    """Integrals of the error terms of ``d/dt log delta = A + O(delta + |B - B_t| + |k_i|)`` (Appendix 17, Lemma 14).

    ``delta``: ``int_0^{t_*} delta_i e^{A t} dt`` up to the exit time ``t_* = log(delta_star/delta_i)/A``;
    ``balance``: ``int_0^oo C_0 e^{-2 lambda (T + t)} dt``; ``amplitude``: ``int_0^oo (B_t - B(t)) dt`` along
    the target transient ``B(t)`` from ``B_0`` (:func:`.dynamics.amplitude_transient`'s law, with a
    positive symbol for B_t); ``exit_time``: ``t_*`` at ``delta_i = C_s e^{-lambda T}``.
    """
    A_, d_star, d_i, C_s = sp.symbols("A delta_star delta_i C_s", positive=True)
    Bt_, B0_ = sp.symbols("B_t B_0", positive=True)
    s = sp.Symbol("s", nonnegative=True)
    t_exit = sp.log(d_star / d_i) / A_
    integ_delta = sp.simplify(sp.integrate(d_i * sp.exp(A_ * s), (s, 0, t_exit)))
    integ_k = sp.integrate(C0 * sp.exp(-2 * lam * (T + s)), (s, 0, sp.oo))
    E = sp.exp(-Bt_ * s)
    transient = Bt_ * B0_ / (B0_ + (Bt_ - B0_) * E)  # solves B' = B(B_t - B), B(0) = B_0
    residual = sp.simplify(sp.diff(transient, s) - transient * (Bt_ - transient))
    anti = -sp.log(B0_ + (Bt_ - B0_) * E)  # candidate antiderivative of B_t - B
    anti_residual = sp.simplify(sp.diff(anti, s) - (Bt_ - transient))
    integ_B = sp.simplify(sp.limit(anti, s, sp.oo) - anti.subs(s, 0))
    return MappingProxyType(
        {
            "delta": integ_delta,
            "balance": sp.simplify(integ_k),
            "amplitude": integ_B,
            "transient_residual": residual,
            "antiderivative_residual": anti_residual,
            "exit_time": sp.expand(sp.expand_log(t_exit.subs(d_i, C_s * sp.exp(-lam * T)), force=True)),
            "symbols": (A_, d_star, d_i, C_s, Bt_, B0_),
        }
    )


# ---------------------------------------------------------------- small arithmetic helpers of the checks


def absorption_ratio(n_updates: Fraction, batch: Fraction, step: Fraction, delta0: Fraction) -> Fraction:
    """``(Delta_0 + Delta_0^2) / (2 b Delta_0 min{N, 1/eta})`` (Section 7.4): at most 1 when the exit terms are
    absorbed into the disagreement term."""
    for name, value in (("n_updates", n_updates), ("batch", batch), ("step", step), ("delta0", delta0)):
        if not Fraction(value) > 0:
            raise ValueError(f"{name} must be > 0; got {value!r}")
    big = Fraction(batch) * Fraction(delta0) * min(Fraction(n_updates), 1 / Fraction(step))
    return (Fraction(delta0) + Fraction(delta0) ** 2) / (2 * big)


def psi_block_levels(a_lpsi: sp.Expr) -> MappingProxyType:
    """Levels of Psi along a block (Appendix 10): kept ``<= 3 varrho/2 + a L_Psi``, ends ``<= varrho/2 + a L_Psi``."""
    return MappingProxyType({"keep": 3 * varrho / 2 + a_lpsi, "end": varrho / 2 + a_lpsi})


def checkpoint_records(durations: list[int], optimizers: int, initialisations: int) -> int:
    """Records with ``T > 0`` of the identical-checkpoint experiment: one per (T, source optimizer, draw) (Sec. 8)."""
    return sum(1 for d in durations if d > 0) * optimizers * initialisations


def grid_cells(*axes: list) -> int:
    """Number of cells of a grid whose axes vary independently (Section 8)."""
    return math.prod(len(axis) for axis in axes)


def composition_slack() -> sp.Expr:
    """``2(1 + (T+H)/eta) - [(1 + T/eta) + (1 + H/eta)]``: merging the source and target exceptional terms (App. 13)."""
    return sp.simplify(2 * (1 + (T + H) / eta) - ((1 + T / eta) + (1 + H / eta)))


def balanced_projective_error() -> tuple[sp.Expr, tuple[sp.Symbol, sp.Symbol]]:
    """|e| at a balanced checkpoint: units z_i = (s, s cos(d/2), +-s sin(d/2)) (Appendix 19's construction).

    From the Section 7 coordinates h = (z1 + z2)/sqrt 2, d_z = (z1 - z2)/sqrt 2: here d_z is
    orthogonal to h, so rho = 0 and |e| = |d_z| = sqrt 2 s sin(d/2). Returns (|e|, (s, d)).

    >>> err, (s_, d_) = balanced_projective_error()
    >>> sp.simplify(err - sp.sqrt(2) * s_ * sp.sin(d_ / 2))
    0
    """
    s_, d_ = sp.symbols("s delta_0", positive=True)
    z1 = sp.Matrix([s_, s_ * sp.cos(d_ / 2), s_ * sp.sin(d_ / 2)])
    z2 = sp.Matrix([s_, s_ * sp.cos(d_ / 2), -s_ * sp.sin(d_ / 2)])
    rho, e = projective_coordinates((z1 + z2) / sp.sqrt(2), (z1 - z2) / sp.sqrt(2))
    assert sp.simplify(rho) == 0
    norm = sp.sqrt(2) * s_ * sp.sin(d_ / 2)  # the root of |e|^2 that is positive for 0 < delta_0 < pi
    assert sp.simplify(e.dot(e) - norm**2) == 0
    return norm, (s_, d_)


# ---------------------------------------------------------------- Section 7.4: the coupling behind the event inclusion


def two_gate_step(batch: int = 2) -> MappingProxyType:
    """One actual SGD step of the two-unit model on a symbolic batch, each unit with its own gate (Section 7.4).

    Unit ``i`` has gate values ``G{i}_{j}`` on input ``X_j`` (evaluated, not differentiated, as for
    ReLU off its gate boundary): ``f(X_j) = sum_i G{i}_{j} a_i w_i.X_j``. Same symbols as
    :func:`common_gate_step` otherwise. Returns the step (``z1_next``, ``z2_next``), the common-gate
    step and ``agree``/``one_disagrees``, substitutions that give both units the common gate
    ``g_j`` on every input or on every input but ``X_0``.
    """
    cg = common_gate_step(batch)
    aa = sp.symbols("A1 A2", real=True)
    ws = [sp.Matrix(sp.symbols(f"w{i}x w{i}y", real=True)) for i in (1, 2)]
    xs = [sp.Matrix(sp.symbols(f"X{j}x X{j}y", real=True)) for j in range(batch)]
    gs = sp.symbols(f"g0:{batch}", real=True)
    ns = sp.symbols(f"n0:{batch}", positive=True)
    gates = [sp.symbols(f"G{i}_0:{batch}", real=True) for i in (1, 2)]
    resid = [sum(gates[i][j] * aa[i] * ws[i].dot(xs[j]) for i in range(2)) - ns[j] for j in range(batch)]
    theta = [aa[0], *ws[0], aa[1], *ws[1]]
    obj = sum(r**2 for r in resid) / (2 * batch) + lam / 2 * sum(v**2 for v in theta)
    step = sp.Matrix([v - eta * sp.diff(obj, v) for v in theta])
    agree = {gates[i][j]: gs[j] for i in range(2) for j in range(batch)}
    one = dict(agree)
    one[gates[1][0]] = 1 - gs[0]  # unit 2's gate differs on X_0
    return MappingProxyType(
        {
            "z1_next": step[:3, 0],
            "z2_next": step[3:, 0],
            "cg_z1_next": cg["Q"] * cg["z1"],
            "cg_z2_next": cg["Q"] * cg["z2"],
            "agree": agree,
            "one_disagrees": one,
        }
    )


def first_exit_inclusion(horizon: int, index: str = "batch") -> list[tuple[int, int, int]]:
    """Counterexamples to Proposition 6's event inclusion over integer paths (Section 7.4).

    A path has ``n_dis`` (its first disagreement), ``zeta`` (its tube exit) and a crossing state
    ``m <= horizon`` with risk <= 0.4. Before both, SGD equals the common-gate process in the
    tube, whose risk is above 0.4: the crossing needs ``m > n_dis`` (``index="batch"``: ``n_dis``
    is the update whose batch holds the disagreeing input, so state ``n_dis`` is still common-gate)
    or ``m >= n_dis`` (``index="state"``: ``n_dis`` is the first state that differs), or
    ``m >= zeta``. Returns every admissible ``(m, n_dis, zeta)`` with ``n_dis, zeta <= horizon + 1``
    outside ``{n_dis < N ^ zeta} U {zeta <= N}`` at ``N = horizon``.
    """
    if index not in ("batch", "state"):
        raise ValueError(f"index must be 'batch' or 'state'; got {index!r}")
    integer(horizon, "horizon", 0)
    out = []
    for m, nd, zt in itertools.product(range(horizon + 1), repeat=3):
        for n_dis, zeta in ((nd, zt), (nd, horizon + 1), (horizon + 1, zt)):
            escaped = m > n_dis if index == "batch" else m >= n_dis
            if not (escaped or m >= zeta):
                continue  # the crossing is impossible on this path
            if not (n_dis < min(horizon, zeta) or zeta <= horizon):
                out.append((m, n_dis, zeta))
    return sorted(set(out))


# ---------------------------------------------------------------- Appendix 11.1: the source update in (a_i, u_i)


def source_ratio_update(batch: int = 2) -> MappingProxyType:
    """One source SGD step written in ``a_i`` and ``u_i = w_i/a_i`` (Appendix 11.1), for ``a_i > 0``.

    Model step: objective ``(1/2b) sum_j (f(X_j) - y_j)^2 + (lambda/2)|theta|^2`` with
    ``f(x) = sum_i a_i G_ij w_i.x`` (gates evaluated). Writes ``w_i = a_i u_i`` (so that
    ``relu(w_i.x) = a_i relu(u_i.x)`` and the gates of ``w_i`` and ``u_i`` agree) and returns the
    model's ``a_i^+`` and ``u_i^+ = w_i^+/a_i^+`` with the paper's forms
    ``a_i [s - (eta/b) sum_j R_j relu(u_i.X_j)]`` and
    ``[s u_i - (eta/b) sum_j R_j relu'(u_i.X_j) X_j] / [s - (eta/b) sum_j R_j relu(u_i.X_j)]``,
    ``s = 1 - eta lambda``, ``R_j = f(X_j) - y_j``; and ``e^{l_a^+ - l_a} = (a_1^+/a_2^+)/(a_1/a_2)`` with the
    ratio whose log the paper writes for ``l_a^+ - l_a`` (both rational, so compared without logs). ``w_next`` and
    ``paper_w_next = a_i (s u_i - (eta/b) sum_j R_j relu'(u_i.X_j) X_j)`` are polynomial: with ``a_next`` equal to
    ``a_i [s - ...]`` they give ``u_i^+`` without a rational simplification.
    """
    aa = sp.symbols("a_1 a_2", positive=True)
    us = [sp.Matrix(sp.symbols(f"u{i}x u{i}y", real=True)) for i in (1, 2)]
    xs = [sp.Matrix(sp.symbols(f"X{j}x X{j}y", real=True)) for j in range(batch)]
    ys = sp.symbols(f"y0:{batch}", real=True)
    G = [sp.symbols(f"G{i}_0:{batch}", real=True) for i in (1, 2)]
    W = [sp.Matrix(sp.symbols(f"W{i}x W{i}y", real=True)) for i in (1, 2)]  # w_i before substitution
    f = [sum(aa[i] * G[i][j] * W[i].dot(xs[j]) for i in range(2)) for j in range(batch)]
    theta = [aa[0], *W[0], aa[1], *W[1]]
    obj = sum((f[j] - ys[j]) ** 2 for j in range(batch)) / (2 * batch) + lam / 2 * sum(v**2 for v in theta)
    step = [v - eta * sp.diff(obj, v) for v in theta]
    to_u = {W[i][k]: aa[i] * us[i][k] for i in range(2) for k in range(2)}
    a_next = [sp.expand(step[0].subs(to_u)), sp.expand(step[3].subs(to_u))]
    w_next = [sp.Matrix(step[1:3]).subs(to_u), sp.Matrix(step[4:6]).subs(to_u)]
    R = [f[j].subs(to_u) - ys[j] for j in range(batch)]
    decay = 1 - eta * lam  # the paper's varsigma
    relu_u = [[G[i][j] * us[i].dot(xs[j]) for j in range(batch)] for i in range(2)]
    den = [decay - eta / batch * sum(R[j] * relu_u[i][j] for j in range(batch)) for i in range(2)]
    paper_u = [
        (decay * us[i] - eta / batch * sum((R[j] * G[i][j] * xs[j] for j in range(batch)), sp.zeros(2, 1))) / den[i]
        for i in range(2)
    ]
    return MappingProxyType(
        {
            "a_next": a_next,
            "paper_a_next": [aa[i] * den[i] for i in range(2)],
            "u_next": [w_next[i] / a_next[i] for i in range(2)],
            "paper_u_next": paper_u,
            "w_next": w_next,
            "paper_w_next": [aa[i] * paper_u[i] * den[i] for i in range(2)],
            "dl_ratio": (a_next[0] / a_next[1]) / (aa[0] / aa[1]),
            "paper_dl_ratio": den[0] / den[1],
            "a": aa,
        }
    )


# ---------------------------------------------------------------- Theorem 1: the fresh term and the confidence level


def fresh_term_absorption() -> MappingProxyType:
    """``C e^{-c_f/eta}`` against the warm excursion term ``C (1 + (T+H)/eta) e^{-c_*/eta}`` (App. 13, (4)).

    The union bound of Theorem 1 adds the fresh failure ``C e^{-c_f/eta}`` to the warm bound;
    after ``c_* <= c_f`` it is at most the excursion term (then ``2C`` covers both). Returns the
    ratio fresh/excursion and its limits as ``eta -> 0`` with ``c_f = c_* + k`` for ``k > 0``,
    ``k = 0``, ``k < 0`` (``T, H`` fixed).
    """
    cf = sp.Symbol("c_f", positive=True)
    ratio = sp.exp(-cf / eta) / ((1 + (T + H) / eta) * sp.exp(-c_star / eta))
    kp, kn = sp.Symbol("k_pos", positive=True), sp.Symbol("k_neg", negative=True)
    return MappingProxyType(
        {
            "ratio": sp.simplify(ratio),
            "c_f": cf,
            "limits": tuple(small_step_limit(ratio.subs(cf, c_star + kk)) for kk in (kp, 0, kn)),
        }
    )


def conditional_confidence(level: sp.Expr) -> MappingProxyType:
    """The conditional confidence on K after Corollary 2, ``1 - eps/2 - r(eta)`` (Section 3, after Corollary 2).

    ``r(eta)`` collects the terms that vanish as ``eta -> 0`` (second and last terms of (4) at the
    edges of Corollary 2, and the fresh term): ``C b eta^{gamma C_0 - 1} + C(1 + 2 eta^{-1}
    e^{c_*/(2 eta)}) e^{-c_*/eta} + C e^{-c_*/eta}``. For a target ``level``, ``eps = 1 - level``
    leaves the margin ``(1 - level)/2`` for ``r``. Returns the limit of the confidence as
    ``eta -> 0`` at ``eps = 1 - level`` and the eps a confidence of exactly one would need.
    """
    eps = sp.Symbol("varepsilon", positive=True)
    r = (
        C * b * eta ** (gamma * C0 - 1)
        + C * (1 + 2 / eta * sp.exp(c_star / (2 * eta))) * sp.exp(-c_star / eta)
        + C * sp.exp(-c_star / eta)
    )
    conf = 1 - eps / 2 - r
    limit = small_step_limit(conf.subs(C0, 2 / gamma))  # gamma C_0 = 2 > 1, Corollary 2's condition
    return MappingProxyType(
        {
            "confidence": conf,
            "limit_at_level": sp.simplify(limit.subs(eps, 1 - level)),
            "eps_for_one": sp.solve(sp.Eq(limit, 1), eps),
            "eps": eps,
        }
    )


# ---------------------------------------------------------------- Corollary 5


def corollary5_from_proposition6() -> MappingProxyType:
    """Proposition 6's bound at a source-GF checkpoint: ``Delta_0 <= C_e d``, ``d <= C_d e^{-lambda T}`` (Section 5).

    Returns the disagreement term ``C b Delta_0 min{N, 1/eta}`` at ``Delta_0 = C_e C_d e^{-lambda T}``,
    Corollary 5's ``C' b e^{-lambda T} min{N, 1/eta}`` with ``C' = C C_e C_d``, and the source time
    ``T_0`` after which the checkpoint meets Proposition 6's entry condition ``Delta_0 <= eps_0``.
    """
    Ce, Cd, eps0 = sp.symbols("C_e C_d epsilon_0", positive=True)
    delta0 = Ce * Cd * sp.exp(-lam * T)
    prop6 = C * b * Delta0 * sp.Min(N, 1 / eta) + C * (N + 1) * sp.exp(-c_star / eta)
    return MappingProxyType(
        {
            "at_checkpoint": prop6.subs(Delta0, delta0),
            "corollary5": (C * Ce * Cd) * b * sp.exp(-lam * T) * sp.Min(N, 1 / eta)
            + C * (N + 1) * sp.exp(-c_star / eta),
            "entry_time": sp.expand_log(sp.solve(sp.Eq(delta0, eps0), T)[0], force=True),
            "symbols": (Ce, Cd, eps0),
        }
    )


def allocation_increment_order() -> MappingProxyType:
    """Order of the allocation increment ``rho^+ - rho = h^T Q^2 e/|Qh|^2`` for ``Q = s I + eta V`` (Appendix 12).

    ``V`` is a generic symmetric 3x3 matrix (the data part of the common-gate step, Section 7.2), ``s = 1 - eta
    lambda``, and ``e`` is orthogonal to ``h`` by its definition (``e = d_z - rho h``), generated as ``h x k`` for a
    generic ``k``. Returns the numerator ``h^T Q^2 e``, its ``eta^0`` coefficient (``s^2 h^T e``, zero because
    ``e`` is orthogonal to ``h``), and the residual of ``h^T Q^2 e - eta h^T (2 s V + eta V^2) e`` (zero): the
    increment is ``eta`` times a bilinear form in ``h`` and ``e``, so ``|rho^+ - rho| <= C eta |e|`` on the tube.

    >>> o = allocation_increment_order(); o["zeroth"], o["residual"]
    (0, 0)
    """
    v = sp.symbols("v0:6", real=True)
    V = sp.Matrix([[v[0], v[1], v[2]], [v[1], v[3], v[4]], [v[2], v[4], v[5]]])
    h, kk = _vec("h", 3), _vec("k", 3)
    e = h.cross(kk)
    decay = 1 - eta * lam
    Q = decay * sp.eye(3) + eta * V
    numerator = sp.expand((h.T * Q**2 * e)[0])
    zeroth = sp.expand(numerator.subs(eta, 0))
    residual = sp.expand(numerator - eta * (h.T * (2 * decay * V + eta * V**2) * e)[0])
    return MappingProxyType({"numerator": numerator, "zeroth": zeroth, "residual": residual})


def clone_gradient_difference(width: int = 3) -> list[sp.Expr]:
    """Per-sample gradient of unit 1 minus that of unit 2 at identical units, for a width-``width`` network.

    ``f(x) = sum_i a_i sigma(w_i.x)`` in two input dimensions, loss ``(f(x) - y)^2/2`` with ``sigma`` an undefined
    function (any activation, its derivative at the gate included). Units 1 and 2 are set equal after
    differentiating; the four components (a, w) of the difference are returned (all zero: an SGD step on any batch,
    and the population field, move identical units identically, so they stay identical; Sections 2 and 9).

    >>> clone_gradient_difference(3)
    [0, 0, 0]
    """
    width = integer(width, "width", 2)
    sigma = sp.Function("sigma")
    x0, x1 = sp.symbols("x0 x1", real=True)
    a = sp.symbols(f"a0:{width}", real=True)
    w = [sp.symbols(f"w{i}_0:2", real=True) for i in range(width)]
    f = sum(a[i] * sigma(w[i][0] * x0 + w[i][1] * x1) for i in range(width))
    loss = (f - sp.Symbol("target", real=True)) ** 2 / 2
    same = {a[1]: a[0], w[1][0]: w[0][0], w[1][1]: w[0][1]}
    diffs = [sp.diff(loss, a[0]) - sp.diff(loss, a[1])]
    diffs += [sp.diff(loss, w[0][k]) - sp.diff(loss, w[1][k]) for k in range(2)]
    return [sp.simplify(d.subs(same)) for d in diffs]


def noise_on_difference() -> MappingProxyType:
    """Unit difference ``d_z = (z_1 - z_2)/sqrt 2`` after parameter noise ``s sqrt(eta) xi_i`` (Appendix 20).

    Shared noise (``xi_1 = xi_2``) leaves ``d_z`` unchanged; independent noise adds ``s sqrt(eta)(xi_1 - xi_2)/sqrt 2``,
    whose per-component variance is ``s^2 eta``.

    >>> o = noise_on_difference(); o["shared"], o["independent_variance"]
    (0, eta*s**2)
    """
    s_n = sp.Symbol("s", positive=True)
    z1, z2 = sp.symbols("z1 z2", real=True)  # one component of each unit
    xi1, xi2 = sp.symbols("xi1 xi2", real=True)
    d = (z1 - z2) / sp.sqrt(2)
    shared = sp.simplify(((z1 + s_n * sp.sqrt(eta) * xi1) - (z2 + s_n * sp.sqrt(eta) * xi1)) / sp.sqrt(2) - d)
    indep = sp.simplify(((z1 + s_n * sp.sqrt(eta) * xi1) - (z2 + s_n * sp.sqrt(eta) * xi2)) / sp.sqrt(2) - d)
    # xi1, xi2 independent standard normal: Var(a xi1 + c xi2) = a^2 + c^2
    lin = sp.expand(indep)
    var = sp.simplify(lin.coeff(xi1) ** 2 + lin.coeff(xi2) ** 2)
    return MappingProxyType({"shared": shared, "independent": indep, "independent_variance": var})


def tracking_error_residual(steps: int = 4) -> sp.Expr:
    """``theta_m - phi_{m eta}`` minus Lemma 7's ``epsilon_m`` (Appendix 10) for ``m <= steps``, before ``tau``.

    ``theta_{n+1} = theta_n + eta F(theta_n) + eta xi_{n+1}`` (SGD as a noisy Euler step) and ``phi_{(j+1) eta} =
    phi_{j eta} + I_j`` with ``I_j = int_{j eta}^{(j+1) eta} F(phi_s) ds`` (GF), ``theta_0 = phi_0``; ``F`` at the
    iterates and at the flow's grid points are free symbols. Returns the sum over m of the squared residuals
    (zero: the decomposition is an identity for m <= tau).

    >>> tracking_error_residual(3)
    0
    """
    steps = integer(steps, "steps", 1)
    Ft = sp.symbols(f"Ftheta0:{steps}", real=True)  # F(theta_j)
    Fp = sp.symbols(f"Fphi0:{steps}", real=True)  # F(phi_{j eta})
    xi = sp.symbols(f"xi1:{steps + 1}", real=True)  # xi_{j+1}
    integ = sp.symbols(f"I0:{steps}", real=True)  # int over step j of F(phi_s)
    start = sp.Symbol("theta0", real=True)
    theta, phi, total = start, start, sp.Integer(0)
    for m in range(1, steps + 1):
        j = m - 1
        theta = theta + eta * Ft[j] + eta * xi[j]
        phi = phi + integ[j]
        eps_m = (
            eta * sum(Ft[i] - Fp[i] for i in range(m))
            + eta * sum(xi[i] for i in range(m))  # 1_{j < tau} = 1 for m <= tau
            - sum(integ[i] - eta * Fp[i] for i in range(m))  # int [F(phi_s) - F(phi_{j eta})] ds
        )
        total += sp.expand(theta - phi - eps_m) ** 2
    return sp.expand(total)
