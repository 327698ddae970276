"""One-step expectation statements of the rare-gates proofs, by Monte Carlo over independent minibatches.

Sections 2, 4, 6, 7.2, 7.4 and Appendix 11.2. Every state is a fixed parameter theta; from it
:mod:`numerics.rare_gates.one_step` draws ``n`` independent minibatches of ``b`` inputs uniform on the
disk and returns the post-step parameters, of actual SGD or of the common-gate process of Section 7.1.

Statistics. An expectation inequality ``E[X+] <= c X`` is estimated as the mean ratio ``X+/X`` over
``n`` independent draws with its CLT standard error (the ratios are bounded: inputs lie on a disk, so
the CLT with n >= 10^4 is accurate far beyond the stated level); it is *confirmed* when the upper end
of the two-sided interval at ``z`` lies below ``c``, with ``z`` Bonferroni-corrected over the states of
one check (:func:`numerics.stats.z_bonferroni`, family-wise 95%). The alternative of each check is
the paper's contraction rate halved (or, where stated, a competing scaling); its power is the
probability that the check does not confirm when the truth is that alternative, from the normal law
of the estimate with our measured standard error (weakest state recorded). Seeds are fixed per
check and state (``SEED + index``), chosen once and not tuned.

Regime. States are in the paper's tubes: for the target, balanced proportional points
``a_i = r_i = sqrt(omega_i)`` of amplitude ``B = omega_1 + omega_2`` in ``[B_s, B_t]`` (the task-switch
value 0.9 and the target clone 2(q - lambda)), allocation ``p = omega_1/B = 0.4`` (``rho = -0.101``),
perturbed by ``e`` of norm 1e-3 orthogonal to ``h`` (``Delta_0 = ||e|| <= epsilon_0``); for the source,
points of the source manifold S (``B = B_s``, ``w_i = r_i e1``) split by angle 1e-3 or 1e-2 with a
small balance or off-manifold error. Step sizes and batch sizes are the paper's simulation values
(eta = 0.01, b = 16) unless stated; lambda = 0.05.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from scipy import stats as scistats

from derivations.rare_gates import dynamics as dyn
from derivations.rare_gates import source_manifold as sm
from derivations.rare_gates.kernels import disk_radius
from derivations.rare_gates.symbols import delta, phi
from derivations.rare_gates.symbols import lam as lam_sym
from derivations.rare_gates.symbols import rho as rho_s
from numerics import stats as S
from numerics.rare_gates import one_step as O
from numerics.rare_gates import population_flow as pf
from verify.audit import claim, uses
from verify.rare_gates import power as PW

LAM = 0.05  # the paper's weight decay
Q_F = 2.0 / math.pi
B_S = 1.0 - 2.0 * LAM  # source clone amplitude (RG-4.Bvals)
B_T = 2.0 * (Q_F - LAM)  # target clone amplitude
ETA, BATCH = 0.01, 16  # the paper's simulation values (Figure 3, Table 2)
E_NORM = 1e-3  # ||e|| = Delta_0 at the target states
SEED = 2026_12_01

COMMON_READING = (
    "Section 7's lost definitions read as: z_i = (a_i, w_i) the full neurons, h = (z1 + z2)/sqrt 2, "
    "d_z = (z1 - z2)/sqrt 2, rho = h.d_z/|h|^2, e = d_z - rho h; the common-gate process of Section 7.1 is SGD on "
    "f_aux = g U.x, g = 1{w.x > 0} with w the hidden part of h and U = a1 w1 + a2 w2, so each z_i -> Q z_i with "
    "Q = (1 - eta lambda) I - eta [[0, v^T], [v, 0]] (which reproduces the printed e+ = P_{Qh} Q e and "
    "rho+ - rho = h^T Q^2 e/|Qh|^2)."
)
DELTA_READING = (
    COMMON_READING + " Delta_n = ||e~_n||, the e-coordinate of the common-gate (auxiliary) process started at the "
    "checkpoint: for actual SGD the conditional mean of ||e+|| grows at the population rate A (measured here), so "
    "the statement can only concern the auxiliary process the proof couples to."
)


def _ci(x: np.ndarray, z: float) -> tuple[float, float, float, float]:
    m = float(np.mean(x))
    se = float(np.std(x, ddof=1) / math.sqrt(x.size))
    return m, se, m - z * se, m + z * se


def _power_below(bound: float, alternative: float, se: float, z: float) -> float:
    """P(mean + z se >= bound) for a normal mean at ``alternative`` with s.e. ``se``: the check does not confirm."""
    return float(scistats.norm.cdf((alternative - bound) / se + z))


class _Below:
    """The checks 'E[X] < bound' of one claim over ``k`` states, at the Bonferroni z over them (family-wise 95%).

    Each :meth:`check` asserts that the upper end lies below its bound and keeps the weakest power against the
    state's alternative; :meth:`record` records that power and returns its evidence sentence.
    """

    def __init__(self, k: int):
        self.z = S.z_bonferroni(k)
        self.power = 1.0

    def check(self, x: np.ndarray, bound: float, alternative: float, name: str) -> tuple[float, float, float, float]:
        """Mean, s.e. and interval of ``x`` at this z; fails when the upper end is not below ``bound``."""
        m, se, lo, hi = _ci(x, self.z)
        self.power = min(self.power, _power_below(bound, alternative, se, self.z))
        assert hi < bound, f"{name}: upper {hi} >= bound {bound}"
        return m, se, lo, hi

    def record(self, audit, alternative: str, estimate: str = "mean ratio", over: str = "state") -> str:
        return PW.record(
            audit,
            self.power,
            alternative=alternative,
            method=f"normal law of the {estimate} with our measured s.e., z = {self.z:.3f}; weakest {over}",
        )


def _tube_states() -> list[tuple[str, np.ndarray, float, int]]:
    out = []
    for B in (B_S, B_T):
        base = O.target_clone_state(B, 0.4)
        c = O.target_coordinates(base)
        h, rho = c["h"], float(c["rho"])
        u = h[1:] / np.linalg.norm(h[1:])
        perp = np.array([-u[1], u[0]])
        dirs = {
            "angular": np.array([0.0, *perp]),
            "balance": np.array([1.0, *(-u)]) / math.sqrt(2.0),
            "mixed": np.array([1.0, *(-u + 2.0 * perp)]) / math.sqrt(6.0),
        }
        for name, e in dirs.items():
            th = O.from_target_coordinates(h, rho, E_NORM * e / np.linalg.norm(e))
            for eta, b in ((ETA, BATCH), (0.05, 1)):
                out.append((f"B={B:.3f} {name} eta={eta:g} b={b}", th, eta, b))
    return out


@functools.cache
def _common_gate_ratios(n: int = 20_000) -> list[tuple[str, float, np.ndarray]]:
    """||e+||/||e|| over n minibatches at each tube state (eta recorded)."""
    rows = []
    for k, (label, th, eta, b) in enumerate(_tube_states()):
        e0 = float(np.linalg.norm(O.target_coordinates(th)["e"]))
        post = O.common_gate_step(th, LAM, eta, b, n, seed=SEED + k)
        rows.append((label, eta, np.linalg.norm(O.target_coordinates(post)["e"], axis=1) / e0))
    return rows


def _contraction_check(audit, power_of: int, rate_num: float, label: str) -> None:
    rows = _common_gate_ratios()
    below = _Below(len(rows))
    worst_margin, lines = math.inf, []
    for name, eta, r in rows:
        bound = 1.0 - eta * LAM * rate_num
        alt = 1.0 - eta * LAM * rate_num / 2.0  # the claimed rate halved
        m, _, _, hi = below.check(r**power_of, bound, alt, name)
        rate = (1.0 - m) / (eta * LAM)
        lines.append(f"{name}: {m:.7f} (hi {hi:.7f}, bound {bound:.7f}; rate {rate:.3f} lambda)")
        worst_margin = min(worst_margin, (bound - hi) / (eta * LAM))
    audit.ours(worst_margin, 3, label=f"min over states of (bound - upper end)/(eta lambda), {label}")
    text = below.record(
        audit,
        f"{label} contraction rate half the paper's ({rate_num / 2:g} eta lambda per step): the upper end must then "
        "reach the bound",
    )
    audit.evidence(
        f"Common-gate step, 20000 minibatches per state, lambda = {LAM}; E[{label}+]/{label} with family-wise 95% "
        f"interval (z = {below.z:.3f} over {len(rows)} states): " + "; ".join(lines) + ". First-order prediction from "
        "E v = U/2 - q u (RG-7.drift): angular rate lambda, balance rate lambda + q - B/2 (2 lambda at B_t), squared "
        f"rates doubled; the paper's bound is a factor ~4 weaker. {text}"
    )


@claim("RG-7.2.esq", reading=COMMON_READING)
def test_common_gate_second_moment(audit):
    _contraction_check(audit, 2, 0.5, "||e||^2")


@claim("RG-7.2.eabs", reading=COMMON_READING)
def test_common_gate_first_moment(audit):
    _contraction_check(audit, 1, 0.25, "||e||")


# --- source projective separation (Section 6, Appendix 11.2) --------------------------------------------------


def _source_state(p: float, angle: float, balance: float = 0.0, scale: float = 1.0, psi: float = 0.0) -> np.ndarray:
    r1, r2 = math.sqrt(p * B_S) * scale, math.sqrt((1.0 - p) * B_S) * scale
    t1, t2 = psi + angle / 2.0, psi - angle / 2.0
    return np.array(
        [r1 * (1.0 + balance), r2, r1 * math.cos(t1), r1 * math.sin(t1), r2 * math.cos(t2), r2 * math.sin(t2)]
    )


# The derived rates of the averaged first-order projective update at the source minimum,
# I - eta lambda (I + e1 e1^T) (dyn.projective_update_jacobian, checked under RG-3.projlin): lambda across e1 (the
# angle) and 2 lambda along e1 (the balance). Not recomputed here: its SymPy series costs ~9 s of the 25 s budget.
DERIVED_SOURCE_RATE = LAM


@claim(
    "RG-6.dstep",
    reading="gamma read as the paper fixes it, some gamma in [lambda/2, lambda): the check confirms at "
    "gamma = lambda/2 and reports the measured rate against the derived slowest rate lambda of "
    "projective_update_jacobian",
)
def test_source_one_step(audit):
    states = {
        "S, p=0.4, angle 1e-3": _source_state(0.4, 1e-3),
        "S, p=0.4, angle 1e-2": _source_state(0.4, 1e-2),
        "p=0.4, angle 1e-3, balance 1e-3": _source_state(0.4, 1e-3, balance=1e-3),
        "p=0.7, angle 1e-3, off S (scale 1.01, direction 0.01)": _source_state(0.7, 1e-3, scale=1.01, psi=0.01),
    }
    n = 20_000
    below = _Below(len(states))
    bound = 1.0 - ETA * LAM / 2.0  # gamma = lambda/2
    alt = 1.0 - ETA * LAM / 4.0  # gamma halved
    lines, rates = [], {}
    for k, (name, th) in enumerate(states.items()):
        d0 = O.projective_separation(th)
        post = O.sgd_step(th, "source", LAM, ETA, BATCH, n, seed=SEED + 100 + k)
        m, _, lo, hi = below.check(O.projective_separation(post) / d0, bound, alt, name)
        g_hat, g_lo, g_hi = ((1.0 - v) / (ETA * LAM) for v in (m, hi, lo))
        rates[name] = (g_hat, g_lo, g_hi)
        lines.append(
            f"{name}: E d+/d = {m:.7f} (hi {hi:.7f} < {bound:.6f}); gamma = {g_hat:.3f} [{g_lo:.3f}, {g_hi:.3f}] lambda"
        )
    ang = rates["S, p=0.4, angle 1e-3"]
    audit.ours(ang[0], 4, label="measured gamma/lambda at S, angle 1e-3")
    text = below.record(audit, "source contraction rate lambda/4 (half the smallest admissible gamma = lambda/2)")
    audit.evidence(
        f"Actual source SGD step (both gates, relu'(0) = 0), eta = {ETA}, b = {BATCH}, {n} minibatches per state, "
        f"family-wise 95% (z = {below.z:.3f}): "
        + "; ".join(lines)
        + ". The derived averaged-Jacobian rates (RG-3.projlin) are "
        "lambda (transverse) and 2 lambda (along e1, balance): the angular states contract at lambda within 3% "
        f"(O(delta, eta) corrections), the balance state faster. {text}"
    )
    assert (
        abs(ang[0] - DERIVED_SOURCE_RATE / LAM) < 0.03
    )  # O(delta + eta) corrections to the first-order rate, measured 1.000 +- 0.008 (95%)


@claim(
    "RG-11.2.dsum",
    reading="run from a point of the inner source tube; zeta_s (tube exit) is not reached, so the indicator is 1; "
    "the infinite sum is the sum over 800 steps (t = 80 = 4/lambda) plus the tail E[d_N] eta/(1 - r), r the "
    "measured per-step ratio of E d_n over the last 200 steps",
)
def test_source_sum(audit):
    eta, b, streams, steps = 0.1, 16, 128, 800
    th = _source_state(0.4, 1e-2, balance=2e-3)
    d0 = O.projective_separation(th)
    acc = np.zeros(streams)
    means = np.empty(steps + 1)
    last = {}

    def rec(k, thetas):
        d = O.projective_separation(thetas)
        means[k] = d.mean()
        if k < steps:
            acc[:] += eta * d
        else:
            last["d"] = d

    O.sgd_steps(th, "source", LAM, eta, b, streams, steps, seed=SEED + 200, record=rec)
    r = (means[steps] / means[steps - 200]) ** (1.0 / 200)
    tail = last["d"] * eta / (1.0 - r)
    total = (acc + tail) / d0
    m, se, lo, hi = _ci(total, S.Z95)
    bound_half = 2.0 / LAM  # d0/gamma at gamma = lambda/2, in units of d0
    gamma_max = 1.0 / hi / LAM  # largest gamma/lambda whose bound the interval clears
    audit.ours(m, 5, label="E sum eta d_n / d_0")
    audit.ours(gamma_max, 4, label="largest gamma/lambda with d_0/gamma above the upper end")
    # per-step decay along the run against (1 - gamma eta)^n at gamma = lambda/2
    ks = np.array([100, 200, 400, 800])
    env = (1.0 - eta * LAM / 2.0) ** ks
    ratio = means[ks] / d0
    alt = 1.0 / (LAM / 4.0)  # gamma = lambda/4: the sum would be 4/lambda
    text = PW.record(
        audit,
        _power_below(bound_half, alt, se, S.Z95),
        alternative="contraction at lambda/4 (half the smallest admissible gamma): the sum would be d_0 4/lambda",
        method="normal law of the mean sum with our measured s.e., z = 1.960",
    )
    audit.evidence(
        f"Actual source SGD, eta = {eta}, b = {b}, {streams} independent streams of {steps} steps from S with "
        f"angle 1e-2 and balance error 2e-3 (d_0 = {d0:.5f}): E sum eta d_n / d_0 = {m:.3f} [{lo:.3f}, {hi:.3f}] "
        f"(95%, tail {float(np.mean(tail) / d0):.3f}), below 1/gamma = {bound_half:.0f} at gamma = lambda/2 and below "
        f"1/gamma for every gamma <= {gamma_max:.3f} lambda; the derived value 1/lambda = 20 for rate lambda. "
        f"E d_n/d_0 at n = {[int(k) for k in ks]}: {np.array2string(ratio, precision=4)} vs (1 - gamma eta)^n = "
        f"{np.array2string(env, precision=4)}. {text}"
    )
    assert hi < bound_half
    assert np.all(ratio < env)
    assert gamma_max > 0.9  # the sum matches the derived rate lambda to within 10% (eta = 0.1 corrections)


# --- Appendix 11.2: the normal Lyapunov function, along the population source flow ---------------------------

LYAP_SHARES = (0.1, 0.3, 0.5, 0.7, 0.9)  # allocations omega_1/B_s of the base points: an interior segment of S
LYAP_RADII = (0.02, 0.2)  # normal distances of the starts (|theta| ~ 1.3 on S): a thin tube and a wide one
LYAP_RANDOM = 8  # random normal directions per base point, besides the +- eigen-directions of the normal Hessian
LYAP_DT, LYAP_HORIZON = 0.1, 80.0  # rates read from W(t + dt)/W(t) on [0, 80] (= 4/lambda)
LYAP_FLOOR = 1e-20  # W below this (|xi| < 1e-10, float64 xi then known to ~1e-6 relative) is not used
# The sup of d log W/dt over a run is reached at the horizon, where the slowest normal mode (rate lambda, W-rate
# 2 lambda) dominates: the next one (2 lambda) still weighs e^{-2 lambda 80} = 3.4e-4 there (moving the rate by
# < 1e-3 relative), and the nonlinear terms O(|xi|) with |xi| <= 0.2 e^{-4} = 3.7e-3 (about 4e-3 relative):
# 1e-2 relative is 2.5x the larger of the two.
LYAP_TOL = 1e-2


@functools.cache
def _lyapunov_runs() -> dict:
    """Sup over source-flow runs from the tube of d log W_s/dt for P = H(l_a) and P = I, per tube radius."""
    H_sym = sm.manifold_hessian(dyn.p).subs(lam_sym, sp.Rational(1, 20))
    entries = [[sp.lambdify(dyn.p, H_sym[i, j], "numpy") for j in range(6)] for i in range(6)]

    def hessians(share: np.ndarray) -> np.ndarray:
        return np.stack(
            [np.stack([np.broadcast_to(np.asarray(f(share), float), share.shape) for f in row], -1) for row in entries],
            -2,
        )

    rng = np.random.default_rng(SEED + 300)
    times = np.arange(0.0, LYAP_HORIZON + LYAP_DT / 2, LYAP_DT)
    out: dict = {}
    for radius in LYAP_RADII:
        worst = {"P=H": -np.inf, "P=I": -np.inf}
        runs = 0
        for share in LYAP_SHARES:
            s1, s2 = math.sqrt(share * B_S), math.sqrt((1 - share) * B_S)
            base = np.array([s1, s2, s1, 0.0, s2, 0.0])
            tangent = np.array([-s2, s1, -s2, 0.0, s1, 0.0]) / math.sqrt(2 * B_S)
            mu, vec = np.linalg.eigh(hessians(np.array(share)))
            dirs = [sign * vec[:, k] for k in range(6) if mu[k] > 1e-9 for sign in (1.0, -1.0)]
            for _ in range(LYAP_RANDOM):
                v = rng.standard_normal(6)
                v -= (v @ tangent) * tangent
                dirs.append(v / np.linalg.norm(v))
            for v in dirs:
                states = pf.flow(base + radius * v, "source", LAM, times).states
                shares, xi = pf.source_normal_coordinates(states, LAM)
                w = {
                    "P=H": np.einsum("ti,tij,tj->t", xi, hessians(shares), xi),
                    "P=I": np.einsum("ti,ti->t", xi, xi),
                }
                for name, wv in w.items():
                    keep = wv[1:] >= LYAP_FLOOR
                    rate = np.diff(np.log(np.maximum(wv, LYAP_FLOOR)))[keep] / LYAP_DT
                    worst[name] = max(worst[name], float(rate.max()))
                runs += 1
        out[radius] = {"worst": worst, "runs": runs}
    return out


@claim(
    "RG-11.2.lyap",
    reading="the lost definitions reconstructed: xi is the normal displacement from the nearest point of S "
    "(whose allocation is l_a), P(l_a) the Hessian of F_s there restricted to the normal space (W_s ~ 2(F_s - "
    "min F_s)); the Euclidean P = I is shown beside it. 'dW_s/dt <= -kappa W_s' is checked in its integrated form "
    "W_s(t + 0.1) <= e^{-0.1 kappa} W_s(t) along population source flows from a tube about S, with the linear rate "
    "kappa = 2 lambda (derived: H^2 - lambda H >= 0)",
)
def test_normal_lyapunov_function(audit):
    lin = sm.normal_lyapunov_rates()
    lam_q = sp.Rational(1, 20)
    psd = {name: all(sp.nsimplify(r).subs(lam_sym, lam_q) >= 0 for r in lin[name]) for name in ("P=H", "P=I")}
    kappa_lin = 2 * LAM  # the smallest normal rate of H is lambda (RG-15.rates); W = xi^T P xi decays at twice it
    audit.ours(
        "; ".join(f"{n}: " + ", ".join(f"{sp.sstr(r)} (x{m})" for r, m in lin[n].items()) for n in ("P=H", "P=I")),
        label="spectra of H^2 - lambda H (P = H) and N(H - lambda I)N (P = I) on S",
    )
    audit.ours(sp.sstr(lin["lambda_max"]), label="largest lambda with both spectra >= 0")
    runs = _lyapunov_runs()
    for radius, r in runs.items():
        audit.ours(
            ", ".join(f"{n}: {-v / LAM:.4f}" for n, v in r["worst"].items()),
            label=f"kappa/lambda measured (-sup d log W_s/dt / lambda) on the tube |xi| <= {radius:g}",
        )
    audit.tolerance(
        LYAP_TOL,
        "relative, measured kappa against 2 lambda: the horizon's residual of the next-slowest mode (< 1e-3) and "
        "the nonlinear terms at |xi| <= 3.7e-3 (~4e-3); the discrete rate is an average of the instantaneous "
        "one, so it can only understate the sup",
    )
    n_runs = sum(r["runs"] for r in runs.values())
    audit.evidence(
        f"SymPy: H t = 0 on S (the tangent is the kernel) and, by the spectral theorem over the normal rates "
        f"(RG-15.rates), H^2 - lambda H and N(H - lambda I)N are positive semidefinite for lambda <= "
        f"{lin['lambda_max']}, so the linearisation gives dW_s/dt <= -2 lambda W_s for both P, with equality on the "
        f"slowest normal mode. Population source flow (DOP853, rtol 1e-12) from {n_runs} starts at normal distance "
        f"{' and '.join(f'{r:g}' for r in LYAP_RADII)} from base points with omega_1/B_s in {list(LYAP_SHARES)} "
        f"(the +- eigen-directions of H and {LYAP_RANDOM} random normal directions each), to t = {LYAP_HORIZON:g}: "
        "every run satisfies W_s(t + 0.1) <= e^{-0.1 kappa} W_s(t) with kappa the measured value above, equal to the "
        "linear 2 lambda, reached at the horizon. The check fails if either spectrum has a negative entry at lambda = "
        "1/20, or a run's rate exceeds -2 lambda (1 - tol), or the measured kappa is not 2 lambda (1 +- tol)."
    )
    assert lin["H t"].is_zero_matrix
    assert all(psd.values())
    for r in runs.values():
        for worst in r["worst"].values():
            assert worst <= -kappa_lin * (1 - LYAP_TOL)  # the Lyapunov inequality with kappa = 2 lambda (1 - tol)
            assert worst >= -kappa_lin * (1 + LYAP_TOL)  # and 2 lambda is attained: the rate is sharp


# --- target phase (Section 6, Section 7.4) ----------------------------------------------------------------------


@claim("RG-6.Dstep", reading=DELTA_READING)
def test_target_one_step(audit):
    th0 = _tube_states()[0][1]  # B = B_s, angular e, the task-switch checkpoint
    visited = {}

    def rec(k, thetas):
        if k in (0, 250, 500):
            visited[k] = thetas[0].copy()

    O.common_gate_steps(th0, LAM, ETA, BATCH, 1, 500, seed=SEED + 300, record=rec)
    n = 20_000
    below = _Below(len(visited))
    bound = 1.0 - ETA * LAM / 4.0
    alt = 1.0 - ETA * LAM / 8.0
    lines = []
    for k, th in visited.items():
        c = O.target_coordinates(th)
        e0 = float(np.linalg.norm(c["e"]))
        post = O.common_gate_step(th, LAM, ETA, BATCH, n, seed=SEED + 310 + k)
        m, _, _, hi = below.check(np.linalg.norm(O.target_coordinates(post)["e"], axis=1) / e0, bound, alt, f"step {k}")
        Bk = th[0] * math.hypot(th[2], th[3]) + th[1] * math.hypot(th[4], th[5])
        lines.append(f"step {k} (B = {Bk:.3f}, rho = {float(c['rho']):.3f}): {m:.7f} (hi {hi:.7f} < {bound:.7f})")
    # contrast: actual SGD from the checkpoint with the splitting at 1e-2 expands at the population rate A
    c = O.target_coordinates(th0)
    big = O.from_target_coordinates(c["h"], float(c["rho"]), c["e"] * 10.0)
    e_big = float(np.linalg.norm(O.target_coordinates(big)["e"]))
    act = O.sgd_step(big, "target", LAM, ETA, BATCH, 40_000, seed=SEED + 320)
    ma, sa, la, _ = _ci(np.linalg.norm(O.target_coordinates(act)["e"], axis=1) / e_big, S.Z95)
    growth = (ma - 1.0) / ETA
    audit.ours(growth, 3, label="actual SGD (E||e+||/||e|| - 1)/eta at ||e|| = 1e-2 (population rate A = 0.587)")
    text = below.record(audit, "contraction rate eta lambda/8 per step (half the paper's)")
    audit.evidence(
        f"Common-gate process, eta = {ETA}, b = {BATCH}, at states one stream visits from the task-switch checkpoint "
        f"(B = B_s, angular e of norm 1e-3), {n} minibatches each, family-wise 95% (z = {below.z:.3f}): "
        + "; ".join(lines)
        + f". Contrast, actual SGD from the same checkpoint with ||e|| = 1e-2: E||e+||/||e|| = {ma:.5f} "
        f"(lower {la:.5f}), growth {growth:.3f} per unit time against A = q - lambda = {Q_F - LAM:.3f}. {text}"
    )
    assert la > 1.0  # actual SGD does not contract: the rare wedge samples carry the population rate
    assert abs(growth - (Q_F - LAM)) < 5 * sa / ETA + 0.05  # A within 5 s.e. plus O(eta, ||e||) corrections


@claim(
    "RG-7.4.etilde",
    reading=COMMON_READING + " e~_n is e of the common-gate process from the checkpoint; no stream leaves the tube "
    "(|rho| and B are reported), so the indicator 1{n < zeta_t} is 1 and dropping it only enlarges the left side.",
)
def test_target_multi_step(audit):
    th0 = _tube_states()[0][1]
    streams, steps = 500, 400
    checkpoints = (100, 200, 400)
    norms, rho_max, B_range = {}, [0.0], [math.inf, -math.inf]

    def rec(k, thetas):
        if k % 50:
            return
        c = O.target_coordinates(thetas)
        rho_max[0] = max(rho_max[0], float(np.max(np.abs(c["rho"]))))
        if k in checkpoints:
            norms[k] = np.linalg.norm(c["e"], axis=1)
            Bk = thetas[:, 0] * np.hypot(thetas[:, 2], thetas[:, 3]) + thetas[:, 1] * np.hypot(
                thetas[:, 4], thetas[:, 5]
            )
            B_range[0], B_range[1] = min(B_range[0], float(Bk.min())), max(B_range[1], float(Bk.max()))

    rec(0, th0[None, :])
    O.common_gate_steps(th0, LAM, ETA, BATCH, streams, steps, seed=SEED + 400, record=rec)
    below = _Below(len(checkpoints))
    lines = []
    for k in checkpoints:
        bound = (1.0 - ETA * LAM / 4.0) ** k
        m, _, _, hi = below.check(norms[k] / E_NORM, bound, (1.0 - ETA * LAM / 8.0) ** k, f"n = {k}")
        lines.append(f"n = {k}: {m:.5f} (hi {hi:.5f}) vs (1 - eta lambda/4)^n = {bound:.5f}")
    rate = -math.log(float(np.mean(norms[400])) / E_NORM) / (400 * ETA * LAM)
    audit.ours(rate, 3, label="effective rate of E||e~_n|| over 400 steps, in units of lambda")
    text = below.record(audit, "(1 - eta lambda/8)^n, the rate halved", estimate="mean", over="n")
    audit.evidence(
        f"Common-gate process from the task-switch checkpoint (B = B_s, p = 0.4, angular e, Delta_0 = 1e-3), "
        f"eta = {ETA}, b = {BATCH}, {streams} independent streams: "
        + "; ".join(lines)
        + f" (family-wise 95%, z = {below.z:.3f}). Along the runs (every 50 steps) max |rho| = {rho_max[0]:.3f} and "
        f"B in [{B_range[0]:.3f}, {B_range[1]:.3f}] (the amplitude transient toward B_t): inside the tube. {text}"
    )


# --- Section 4: one wedge sample; activation frequency ----------------------------------------------------------


def _wedge_inputs(angle_between: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Inputs uniform on the disk conditioned on the gates of (cos, +-sin)(angle/2) directions disagreeing."""
    side = rng.integers(0, 2, n) * 2 - 1
    ph = side * math.pi / 2 + angle_between * (rng.random(n) - 0.5)
    r = 2.0 * np.sqrt(rng.random(n))
    return np.stack((r * np.cos(ph), r * np.sin(ph)), axis=-1)


@claim(
    "RG-4.jump",
    reading="the splitting is the angle delta between w1 and w2 at the target clone w_{1,2} = (s_*, +-varphi), "
    "a_i = s_*; 'one such sample changes the splitting' read as the change of delta by that sample's term "
    "(eta/b) grad l(x) of the minibatch step; 'order' checked as exponents (1, -1, 0) of E|change| in "
    "(eta, b, delta) over a grid with eta/(b delta) <= 0.07 (linear response) and an O(1) constant",
)
def test_wedge_sample_jump(audit):
    s_star = math.sqrt(B_T / 2.0)
    rng = np.random.default_rng(SEED + 500)
    n = 4000
    cells = {}  # (eta, b, delta) -> (mean |change|, s.e., fraction increasing)
    for dl in (1e-3, 1e-2):  # independent wedge samples per delta; the same samples across (eta, b)
        ph = s_star * math.tan(dl / 2.0)
        th = np.array([s_star, s_star, s_star, ph, s_star, -ph])
        x = _wedge_inputs(dl, n, rng)
        assert np.all(O.disagreements(th, x))
        grads = O.sample_gradients(th, "target", x)
        d0 = O.angle(th)
        for eta in (1e-4, 1e-3):
            for b in (16, 64):
                change = O.angle(th[None, :] - (eta / b) * grads) - d0
                a = np.abs(change)
                cells[eta, b, dl] = (float(a.mean()), float(a.std(ddof=1) / math.sqrt(n)), float(np.mean(change > 0)))
    # exponents from ratios of cell means; eta and b within one delta (same samples: linear response in the step),
    # delta across the two independent sample sets (its s.e. from both cells by the delta method)
    lg = math.log(10.0)
    alpha = math.log(cells[1e-3, 16, 1e-2][0] / cells[1e-4, 16, 1e-2][0]) / lg
    beta = math.log(cells[1e-3, 64, 1e-2][0] / cells[1e-3, 16, 1e-2][0]) / math.log(4.0)
    m1, s1, _ = cells[1e-3, 16, 1e-3]
    m2, s2, _ = cells[1e-3, 16, 1e-2]
    gam = math.log(m2 / m1) / lg
    gam_se = math.hypot(s1 / m1, s2 / m2) / lg
    z = S.Z95
    kappa = np.array([m * b / eta for (eta, b, _), (m, _, _) in cells.items()])
    up = [f for (_, _, f) in cells.values()]
    audit.ours(alpha, 4, label="exponent of eta")
    audit.ours(beta, 4, label="exponent of b")
    audit.ours(gam, 4, label="exponent of delta (of the relative change: this minus 1)")
    audit.ours(float(np.median(kappa)), 3, label="E|change| b/eta (median over cells)")
    # alternative: no O(1) jump, a change proportional to the splitting (order eta delta/b: delta-exponent 1)
    power = S.power_normal(1.0, gam_se, z * gam_se)
    text = PW.record(
        audit,
        power,
        alternative="a change of order eta delta/b (delta-exponent 1: no O(1) jump, only the common-gate scale)",
        method="normal law of the fitted delta-exponent with its delta-method s.e., z = 1.960",
    )
    audit.evidence(
        f"Target clone s_* = sqrt(B_t/2), {n} independent wedge inputs per delta (uniform on the disk conditioned on "
        "disagreement, all checked to disagree); change of the angle by one sample's term of a step, grid eta in "
        "{1e-4, 1e-3}, b in {16, 64}, delta in {1e-3, 1e-2}. Exponents of E|change|: eta "
        f"{alpha:.4f}, b {beta:.4f} (these two hold by linear response: the term is (eta/b) grad l by definition, so "
        f"they only show the angle responds linearly here), delta {gam:.4f} +- {gam_se:.4f} (95%: "
        f"{gam - z * gam_se:.4f}, {gam + z * gam_se:.4f}), the substantive part: an O(1) jump that does not shrink "
        f"with the splitting. E|change| b/eta over the 8 cells: [{kappa.min():.3f}, {kappa.max():.3f}], so the "
        f"relative change is ({kappa.min():.2f} to {kappa.max():.2f}) x eta/(b delta). Fraction of wedge samples "
        f"that increase delta: {min(up):.3f} to {max(up):.3f}. {text}"
    )
    assert abs(alpha - 1.0) < 0.02 and abs(beta + 1.0) < 0.02  # linear response; 0.02: O(eta/(b delta)) curvature
    assert abs(gam) <= z * gam_se + 0.02  # 0.02: the same curvature
    assert 0.05 < kappa.min() and kappa.max() < 20.0  # an O(1) constant


@claim("RG-4.half")
def test_half_activation(audit):
    # one unit's gate depends on X only through its direction: for w at direction psi the gate is open on the arc
    # (psi - pi/2, psi + pi/2); integrate the disk's uniform density over that sector (radius from disk_radius)
    c = disk_radius()
    psi_s = sp.Symbol("psi", real=True)
    inner = sp.integrate(rho_s, (rho_s, 0, c))  # polar Jacobian rho
    frac = sp.simplify(sp.integrate(inner / (sp.pi * c**2), (phi, psi_s - sp.pi / 2, psi_s + sp.pi / 2)))
    disagree = dyn.disagreement_probability_2d()
    audit.ours(frac, label="P(w.X > 0)")
    audit.ours(disagree, label="P(gates differ)")
    assert frac == sp.Rational(1, 2)  # for every psi: no dependence on the other unit, hence on delta
    assert sp.simplify(disagree - delta / sp.pi) == 0
    # Monte Carlo cross-check at the target clone for several delta, Wilson 95% (Bonferroni over 3 x 3 proportions)
    n = 250_000
    rng = np.random.default_rng(SEED + 600)
    z = S.z_bonferroni(9)
    lines = []
    for dl in (1e-2, 0.3, 2.0):
        th = np.array([1.0, 1.0, math.cos(dl / 2), math.sin(dl / 2), math.cos(dl / 2), -math.sin(dl / 2)])
        x = O.sample_disk(rng, (n,))
        k1, k2 = int(np.sum(x @ th[2:4] > 0)), int(np.sum(x @ th[4:6] > 0))
        kd = int(np.sum(O.disagreements(th, x)))
        for k, p0 in ((k1, 0.5), (k2, 0.5), (kd, dl / math.pi)):
            lo, hi = S.wilson_interval(k, n, z)
            assert lo <= p0 <= hi
        lines.append(
            f"delta = {dl:g}: {k1 / n:.4f}, {k2 / n:.4f} active; {kd / n:.5f} differ (delta/pi {dl / math.pi:.5f})"
        )
    base_power = S.power_one_sample(0.5, 0.505, n, z=z)
    text = PW.record(
        audit,
        base_power,
        alternative="an activation frequency 0.505 (a 1% relative departure from one half)",
        method=f"exact binomial enumeration of the Wilson interval at z = {z:.3f}, n = {n}",
    )
    audit.evidence(
        "SymPy: P(w.X > 0) for w at any direction psi = the disk's uniform mass of the sector "
        "(psi - pi/2, psi + pi/2) = 1/2; it does not involve the other unit, so it holds for every delta, while the "
        "gates differ with probability delta/pi (RG-9.wedge derivation). Monte Carlo cross-check, 250000 inputs per "
        "delta, Wilson intervals family-wise 95%: " + "; ".join(lines) + f". {text}"
    )


# --- Section 2: angle of order eta/b, time of order lambda^{-1} log(b/eta) ---------------------------------------


@claim(
    "RG-2.scale",
    reading="'within angle of order eta/b' read through the expected number of sampled disagreements along the "
    "contracting common-gate process (the paper's Poisson count, Section 8): sum_n b E[delta_n]/pi = "
    "b delta_0/(pi (1 - r)) with r = E[delta+]/delta the measured one-step ratio, so the threshold angle is "
    "delta* = pi (1 - r)/b; the time is that of source contraction from a fixed angle delta_s to delta* at the "
    "measured source angle rate. The b^-1 in delta* is built into this reading and 1 - r is proportional to eta "
    "per step by its definition, so the fitted exponents test only that the one-step ratio's rate (1 - r)/eta does "
    "not depend on b or eta, and the time's slope in log(b/eta) that the source rate is lambda",
    by_construction="the headline scaling delta* ~ eta/b: the reading puts b^-1 into delta* = pi (1 - r)/b, and "
    "1 - r is proportional to eta per step by its definition, so eta/b holds whatever the data; the data decide only "
    "that the one-step rate (1 - r)/eta is flat in b and eta (fitted exponents), its value pi (q - B_s/2), and the "
    "source rate lambda (the time's slope). A diffusive threshold eta/sqrt(b) could not show up in this reading",
)
def test_scaling_eta_over_b(audit):
    th = _tube_states()[0][1]  # task-switch checkpoint, angular e
    d_ang = O.angle(th)
    n = 8000
    cells = []
    for k, (eta, b) in enumerate((e, b) for e in (0.005, 0.01, 0.02) for b in (4, 16, 64)):
        post = O.common_gate_step(th, LAM, eta, b, n, seed=SEED + 700 + k)
        r = O.angle(post) / d_ang
        m, se = float(r.mean()), float(r.std(ddof=1) / math.sqrt(n))
        cells.append((eta, b, math.pi * (1.0 - m) / b, math.pi * se / b))
    X = np.array([[1.0, math.log(e), math.log(b)] for e, b, *_ in cells])
    yv = np.array([math.log(c[2]) for c in cells])
    W = np.diag([(c[2] / c[3]) ** 2 for c in cells])
    cov = np.linalg.inv(X.T @ W @ X)
    coef = cov @ X.T @ W @ yv
    resid = yv - X @ coef
    chi2_dof = float(resid @ W @ resid) / (len(cells) - 3)
    se = np.sqrt(np.diag(cov) * max(chi2_dof, 1.0))
    z = S.z_bonferroni(3)
    # source time: angle decay rate at S (one-step ratio of the angle under actual source SGD)
    src = _source_state(0.4, 1e-3)
    post = O.sgd_step(src, "source", LAM, ETA, BATCH, 20_000, seed=SEED + 790)
    ms, ses, _, _ = _ci(O.angle(post) / O.angle(src), S.Z95)
    rate = (1.0 - ms) / ETA
    rate_lo, rate_hi = (1.0 - ms - S.Z95 * ses) / ETA, (1.0 - ms + S.Z95 * ses) / ETA
    slope = 1.0 / rate  # T* = log(delta_s/delta*)/rate = (1/rate) log(b/eta) + const
    audit.ours(coef[1], 4, label="exponent of eta in delta*")
    audit.ours(coef[2], 4, label="exponent of b in delta*")
    audit.ours(slope * LAM, 4, label="lambda x slope of T* in log(b/eta)")
    const, const_se = cells[4][2] * 16 / 0.01, cells[4][3] * 16 / 0.01
    const_pred = math.pi * (Q_F - B_S / 2.0)
    power = S.power_normal(0.5, float(se[2]), z * float(se[2]))
    text = PW.record(
        audit,
        power,
        alternative="a one-step contraction rate (1 - r)/eta growing like b^(1/2) (it would move delta*'s fitted "
        "b-exponent to -1/2); not a diffusive threshold as such, which this reading cannot see (b^-1 is built in)",
        method=f"normal law of the fitted exponent with its weighted least-squares s.e., z = {z:.3f}",
    )
    audit.evidence(
        f"Common-gate step from the task-switch checkpoint, {n} minibatches per cell, eta in {{0.005, 0.01, 0.02}}, "
        f"b in {{4, 16, 64}}: delta* = pi (1 - r)/b from {min(c[2] for c in cells):.3g} to "
        f"{max(c[2] for c in cells):.3g}; weighted fit log delta* = c + alpha log eta + beta log b: alpha = "
        f"{coef[1]:.4f} +- {se[1]:.4f}, beta = {coef[2]:.4f} +- {se[2]:.4f} (chi2/dof {chi2_dof:.2f}); delta* b/eta = "
        f"{const:.4f} +- {const_se:.4f} at eta = 0.01, b = 16, against pi (q - B_s/2) = {const_pred:.4f}: at the "
        "task switch the angle contracts at q - B/2 (lambda from e, the rest from the growth of |w| during the "
        "amplitude transient; lambda at the target clone). Source angle rate at S (actual SGD, "
        f"eta = {ETA}, b = {BATCH}, 20000 minibatches): {rate:.5f} [{rate_lo:.5f}, {rate_hi:.5f}] (95%), so the time "
        f"to reach delta* is (1/rate) log(b/eta) + O(1) with slope {slope:.2f} = {slope * LAM:.3f}/lambda. {text}"
    )
    assert abs(coef[1] - 1.0) <= z * se[1] + 0.02  # 0.02: O(eta) corrections to 1 - r = eta lambda + O(eta^2/b)
    assert abs(coef[2] + 1.0) <= z * se[2] + 0.02
    assert abs(const - const_pred) <= S.Z95 * const_se + 0.02 * const_pred  # 2%: O(eta) terms of 1 - r
    assert rate_lo <= LAM * 1.05 and rate_hi >= LAM * 0.95  # source angle rate lambda within 5% (O(delta, eta))


SCALE_ORDER_TOL = 0.25  # 'of order': halfway between eta/b (exponents 1, -1) and eta/sqrt(b) (b-exponent -1/2)


@claim(
    "RG-2.scale",
    reading="the data side of 'within angle of order eta/b': in the 24 constructed cells of Figure 3(a) (our "
    "rare_gates.grid, delta0 in 1e-5..1e-2, b in {1, 16, 64}, eta in {0.01, 0.002}, H = 200) the recovery "
    "intensity is fitted as a binomial regression with the Poisson-count link, -log(1 - p) = exp(c + beta_G log "
    "Gamma + beta_b log b + beta_eta log eta), Gamma = b delta0/eta; the threshold angle delta* (intensity one) then "
    "scales as eta^(1 - beta_eta/beta_G) b^-(1 + beta_b/beta_G), and 'of order eta/b' is read as both exponents "
    f"within {SCALE_ORDER_TOL} of 1 and -1 (halfway to the diffusive eta/sqrt(b)). The cells share streams, so the "
    "binomial standard errors treat correlated counts as independent",
)
@uses("rare_gates.grid")
def test_scaling_in_figure3a_cells(audit, results):
    grid = results["rare_gates.grid"]
    k = np.array([int(np.isfinite(np.asarray(c["recovery"], dtype=float)).sum()) for c in grid])
    n = np.array([np.asarray(c["recovery"]).size for c in grid])
    b = np.array([float(c["b"]) for c in grid])
    eta = np.array([float(c["eta"]) for c in grid])
    gam = np.array([float(c["gamma"]) for c in grid])
    X = np.column_stack([np.ones(gam.size), np.log(gam), np.log(b), np.log(eta)])
    with np.errstate(over="ignore"):  # expm1 of the intensity overflows harmlessly in cells with k = n
        fit = S.cloglog_fit(k, n, X)
    beta, se, cov = fit.coef, fit.se(), fit.cov
    z = S.z_bonferroni(2)
    exp_b, exp_eta = -(1 + beta[2] / beta[1]), 1 - beta[3] / beta[1]
    grad_b = np.array([0.0, beta[2] / beta[1] ** 2, -1 / beta[1], 0.0])  # delta method
    grad_eta = np.array([0.0, beta[3] / beta[1] ** 2, 0.0, -1 / beta[1]])
    se_b, se_eta = (float(np.sqrt(g @ cov @ g)) for g in (grad_b, grad_eta))
    power = S.power_normal(0.5, se_b, SCALE_ORDER_TOL)
    audit.ours(f"{beta[1]:.3f} +- {se[1]:.3f}", label="beta_G (log Gamma)")
    audit.ours(f"{beta[2]:.3f} +- {se[2]:.3f}", label="beta_b (log b beyond Gamma)")
    audit.ours(f"{beta[3]:.3f} +- {se[3]:.3f}", label="beta_eta (log eta beyond Gamma)")
    audit.ours(f"eta^({exp_eta:.3f} +- {se_eta:.3f}) b^({exp_b:.3f} +- {se_b:.3f})", label="threshold angle delta*")
    audit.tolerance(SCALE_ORDER_TOL, "'of order': halfway between eta/b and the diffusive eta/sqrt(b) in the exponent")
    text = PW.record(
        audit,
        power,
        alternative="a diffusive threshold delta* ~ eta/sqrt(b): the b-exponent -1/2 instead of -1",
        method=f"normal law of the fitted b-exponent (delta-method s.e. {se_b:.3f} from the binomial regression; "
        "cells treated as independent although they share streams)",
    )
    beyond = [nm for nm, i in (("b", 2), ("eta", 3)) if abs(beta[i]) > z * se[i]]
    audit.evidence(
        f"{gam.size} cells x {n[0]} streams from the Figure 3(a) grid (the experiment RG-sim.fig3a.gamma reads); "
        "complementary log-log binomial fit (numerics.stats.cloglog_fit) of the recovered counts on log Gamma, "
        f"log b and log eta: beta_G = {beta[1]:.3f} +- {se[1]:.3f}, beta_b = {beta[2]:.3f} +- {se[2]:.3f}, beta_eta "
        f"= {beta[3]:.3f} +- {se[3]:.3f}. Threshold angle delta* ~ eta^{exp_eta:.2f} b^{exp_b:.2f} (+- {se_eta:.2f}, "
        f"{se_b:.2f}): eta/b to within the order tolerance, far from eta/sqrt(b). Exact dependence on Gamma alone is "
        + (
            f"rejected at the binomial level for {' and '.join(beyond)} (beyond {z:.2f} s.e., Bonferroni over two; "
            "the shared streams make these s.e. approximate), a small correction to the order"
            if beyond
            else f"not rejected (beta_b, beta_eta within {z:.2f} s.e., Bonferroni over two)"
        )
        + f". {text}"
    )
    assert beta[1] > 0
    assert abs(exp_b + 1) <= SCALE_ORDER_TOL and abs(exp_eta - 1) <= SCALE_ORDER_TOL


# ---------------------------------------------------------------- Proposition 6's event inclusion (Section 7.4)

INCL_DELTA0 = 1e-4  # checkpoint angle: Gamma = b delta0/eta = 0.16, so about a third of the streams disagree by t = 20
INCL_STREAMS, INCL_STEPS = 64, 2000  # t = 20 at eta = 0.01: past the GD hitting time from 1e-4 (about 18)
COUPLING_TOL = 1e-12  # SGD and common-gate arithmetic differ only in summation order: ~1e-15 per step, 2000 steps
SEPARATE_MIN = 1e-8  # one disagreeing input moves the off-gate unit by eta/b |R| a_i |X| ~ 1e-4; far above rounding


@claim(
    "RG-7.4.incl",
    reading=COMMON_READING + " n_dis is the index of the first update whose batch holds an input on which the two "
    "units' gates differ (state n_dis is then still common-gate); with n_dis the index of the first state that "
    "differs, the inclusion needs n_dis <= N instead. The coupling is the proof's content: checked symbolically "
    "(one step) and along sampled paths, where it is an exact identity for every path, not an estimate, so no power "
    "statement applies; the data check that every recovery follows a sampled disagreement is RG-sim.disfirst. The "
    "batch-index reading of n_dis is chosen because it makes the inclusion hold (fitted)",
    fitted={
        "n_dis the index of the first state that differs (the state-index reading)": "the inclusion as printed fails: "
        "SymPy's enumeration of integer paths (m, n_dis, zeta) up to N = 6 finds crossings at m = n_dis = N outside "
        "{n_dis < N ^ zeta} U {zeta <= N} (the counterexamples are listed in the evidence); it needs n_dis <= N"
    },
)
def test_event_inclusion(audit):
    from derivations.rare_gates import proofs as pf

    tg = pf.two_gate_step()
    agree = [sp.expand(e) for k in ("z1", "z2") for e in tg[f"{k}_next"].subs(tg["agree"]) - tg[f"cg_{k}_next"]]
    split = [sp.expand(e) for k in ("z1", "z2") for e in tg[f"{k}_next"].subs(tg["one_disagrees"]) - tg[f"cg_{k}_next"]]
    bad_batch = pf.first_exit_inclusion(6, "batch")
    bad_state = pf.first_exit_inclusion(6, "state")
    s = math.sqrt(B_S / 2.0)
    h = INCL_DELTA0 / 2.0
    theta = np.array([s, s, s * math.cos(h), s * math.sin(h), s * math.cos(h), -s * math.sin(h)])
    runs = O.coupled_target_runs(theta, LAM, ETA, BATCH, INCL_STREAMS, INCL_STEPS, SEED + 74, risk_every=20)
    dis = runs["n_dis"] < INCL_STEPS
    hit = runs["n_hit"] >= 0
    audit.ours(f"{sum(e != 0 for e in split)} of 6 components differ", label="one disagreeing input (SymPy)")
    audit.ours(
        f"{int(dis.sum())} of {INCL_STREAMS} streams disagree by t = {INCL_STEPS * ETA:g}; {int(hit.sum())} reach "
        f"risk <= 0.4, each after its first disagreement",
        label="coupled paths",
    )
    audit.ours(
        f"{float(runs['dev_before'].max()):.1e} before n_dis; {float(np.nanmin(runs['dev_after'])):.1e} or more one "
        "update after",
        label="largest |theta_SGD - theta_cg| before, smallest after",
    )
    audit.evidence(
        "SymPy: one SGD step of the two-unit model on a batch of 2, each unit with its own gate values, equals the "
        "common-gate step z_i -> Q z_i component by component once both units take the common gate on every input "
        f"(residuals {agree}); with unit 2's gate flipped on one input, {sum(e != 0 for e in split)} of the 6 "
        "components differ. Integer paths (m, n_dis, zeta) up to N = 6 on which a crossing at m <= N is possible "
        f"(m > n_dis or m >= zeta) and which lie outside the union: {len(bad_batch)} with n_dis the batch index, "
        f"{len(bad_state)} with n_dis the state index (e.g. {bad_state[:2]}). Sampled paths: target SGD and the "
        f"common-gate process on the same inputs from a balanced checkpoint at amplitude B_s, angle {INCL_DELTA0:g} "
        f"(b = {BATCH}, eta = {ETA}, lambda = {LAM}, {INCL_STREAMS} streams, {INCL_STEPS} updates, risk every 20 "
        f"updates): they agree to {COUPLING_TOL:g} through state n_dis (summation-order rounding) and separate by "
        f"more than {SEPARATE_MIN:g} one update later; the common-gate paths' smallest risk is "
        f"{float(runs['cg_min_risk'].min()):.4f} > 0.4, and every SGD crossing comes after its stream's n_dis."
    )
    assert all(e == 0 for e in agree) and any(e != 0 for e in split)
    assert bad_batch == [] and bad_state
    assert np.all(runs["dev_before"] <= COUPLING_TOL)
    assert dis.any() and np.all(runs["dev_after"][dis] > SEPARATE_MIN)
    assert np.all(runs["cg_min_risk"] > 0.4)
    assert hit.any() and np.all(runs["n_dis"][hit] < runs["n_hit"][hit])


# ---------------------------------------------------------------- Appendix 11.1: allocation increment and local bounds

ALLOC_LEVELS = (1e-2, 1e-4, 1e-6)  # angle = balance error = this level: d from 1.4e-2 down to 1.4e-6
ALLOC_BATCHES = 20_000  # minibatches per state
FORM_TOL = 1e-14  # |dl - dl_form|: rounding of O(1) denominators and O(eta) log1p terms (about 50 ulp of 1)
BOUND_SLACK = 1e-9  # relative slack on the almost-sure per-batch bound (float64 rounding of its three factors)
FLOOR_FACTOR = 2.0  # max |dl|/(eta d) may vary by at most 2x over 4 decades of d; a floor c eta would give 1e4


def _alloc_runs() -> list[dict]:
    out = []
    for i, level in enumerate(ALLOC_LEVELS):
        th = _source_state(0.4, level, balance=level)
        r = O.allocation_increment(th, LAM, ETA, BATCH, ALLOC_BATCHES, SEED + 110 + i)
        u = np.stack((th[2:4] / th[0], th[4:6] / th[1]))
        r["theta"], r["u"] = th, u
        r["angle"] = float(O.angle(th))
        out.append(r)
    return out


@functools.cache
def _alloc_cached() -> tuple[dict, ...]:
    return tuple(_alloc_runs())


@claim(
    "RG-11.1.alloc",
    reading="States of the source tube: the point of S with allocation p = 0.4, unit 1 rotated by an angle and its "
    "amplitude raised by the same relative amount (both 1e-2, 1e-4, 1e-6), eta = 0.01, b = 16, lambda = 0.05. "
    "C made explicit: per batch |log(x/y)| <= |x - y|/min(x, y) and |relu(s) - relu(t)| <= |s - t| give "
    "|l_a^+ - l_a| <= eta d mean_j(|R_j| |X_j|)/min_i den_i, and on the tube |R| <= (B + 1)|X|, |X| <= 2 give "
    "C = 4(B + 1)/(1 - eta lambda - 4 eta (B + 1) max|u_i|). Both bounds hold for every batch (almost surely), so "
    "the sampled batches test an inequality, not an estimate: no power statement applies.",
)
def test_allocation_increment(audit):
    runs = _alloc_cached()
    form_err = max(float(np.max(np.abs(r["dl"] - r["dl_form"]))) for r in runs)
    worst_bound = max(float(np.max(np.abs(r["dl"]) / r["bound"])) for r in runs)
    ratios = [float(np.max(np.abs(r["dl"]))) / (ETA * r["d"]) for r in runs]
    consts = []
    for r in runs:
        Babs = float(np.sum(np.abs(r["theta"][:2]) * np.hypot(r["theta"][2::2][:2], r["theta"][3::2][:2])))
        umax = float(np.max(np.hypot(r["u"][:, 0], r["u"][:, 1])))
        consts.append(4 * (Babs + 1) / (1 - ETA * LAM - 4 * ETA * (Babs + 1) * umax))
    audit.ours(
        ", ".join(f"{v:.4f}" for v in ratios),
        label="max |l_a^+ - l_a|/(eta d) at d = " + ", ".join(f"{r['d']:.1e}" for r in runs),
    )
    audit.ours(f"{min(consts):.3f}", label="explicit tube constant C")
    audit.ours(f"{worst_bound:.4f}", label="max |dl| / per-batch bound")
    audit.evidence(
        f"{ALLOC_BATCHES} minibatches per state. l_a^+ - l_a from the model's SGD step (numerics.rare_gates.one_step"
        f".sample_gradients) agrees with the paper's log-ratio form to {form_err:.1e} (tolerance {FORM_TOL:g}: "
        "rounding). Per-batch bound eta d mean(|R||X|)/min den holds on every batch (largest ratio "
        f"{worst_bound:.4f}: nearly tight). max |dl|/(eta d) = {', '.join(f'{v:.4f}' for v in ratios)} over d from "
        f"{runs[0]['d']:.1e} to {runs[-1]['d']:.1e}: flat (within a factor {FLOOR_FACTOR:g}), so there is no additive "
        f"floor (a floor c eta would raise the ratio by 1e4 over these decades); all below the explicit C = "
        f"{min(consts):.2f}."
    )
    assert form_err <= FORM_TOL
    assert worst_bound <= 1.0 + BOUND_SLACK
    assert max(ratios) <= FLOOR_FACTOR * min(ratios)
    assert all(v <= c for v, c in zip(ratios, consts))


@claim(
    "RG-11.1.local",
    reading="The states of RG-11.1.alloc; G = some input of the batch has different gates for u_1, u_2. Constants "
    "made explicit: P(G) = 1 - (1 - delta/pi)^b <= b delta/pi <= b d/(2 sqrt(|u_1||u_2|)) (delta the angle; "
    "d^2 >= 4|u_1||u_2| sin^2(delta/2) and sin(delta/2) >= delta/pi); on G, u_1.X and u_2.X differ in sign, so "
    "|u_i.X| <= |(u_1 - u_2).X| <= d|X| (C = 1), and |X_1| <= |u_i.X| + |u_i - e1||X| <= (r_0 + d)|X| with "
    "r_0 = max_i |u_i - e1| (C = 1). The sampled frequency of G is compared with the exact P(G) by a Wilson "
    "interval (Bonferroni over the states that observe G).",
)
def test_allocation_local_bounds(audit):
    runs = _alloc_cached()
    rows, worst_u, worst_x1, powers = [], 0.0, 0.0, []
    m = sum(int(r["disagree"].sum()) > 0 for r in runs)
    z = S.z_bonferroni(max(m, 1))
    for r in runs:
        k, n = int(r["disagree"].sum()), r["disagree"].size
        p_exact = -math.expm1(BATCH * math.log1p(-r["angle"] / math.pi))
        norms = np.hypot(r["u"][:, 0], r["u"][:, 1])
        c_d = BATCH / (2 * math.sqrt(float(norms[0] * norms[1])))
        r0 = float(np.max(np.hypot(r["u"][:, 0] - 1.0, r["u"][:, 1])))
        assert p_exact <= c_d * r["d"]
        if k:
            lo, hi = S.wilson_interval(k, n, z)
            assert lo <= p_exact <= hi
            assert r["wedge_u"] <= 1.0 + 1e-12 and r["wedge_x1"] <= r0 + r["d"] + 1e-12  # rounding of ratios ~1
            worst_u = max(worst_u, r["wedge_u"])
            worst_x1 = max(worst_x1, r["wedge_x1"] / (r0 + r["d"]))
            powers.append(S.power_one_sample(p_exact, min(2 * p_exact, 1.0), n, z=z))
        rows.append(f"d = {r['d']:.1e}: {k}/{n} (exact P(G) {p_exact:.3g} <= C d = {c_d * r['d']:.3g})")
    audit.ours("; ".join(rows), label="batches with a disagreeing input")
    audit.ours(f"{worst_u:.4f}", label="max |u_i.X|/(d |X|) on G (bound 1)")
    audit.ours(f"{worst_x1:.4f}", label="max |X_1|/((r_0 + d)|X|) on G (bound 1)")
    audit.evidence(
        f"{ALLOC_BATCHES} minibatches of {BATCH} per state; the exact P(G) is the disagreement law of RG-4.half "
        f"raised to the batch. Wilson intervals at z = {z:.3f}."
    )
    audit.evidence(
        PW.record(
            audit,
            max(powers),
            alternative="a disagreement probability twice the exact one (a wedge of twice the angle)",
            method="exact binomial power of the Wilson check at the state with the most disagreements (the "
            "states share nothing but the model; the check fails if any state rejects)",
        )
    )
    assert m >= 1
