"""Checks of the proof steps of Appendix 14 (bound on log h_i) and Appendix 15 (Lemma 9, quadratic expansion, q_2).

Symbolic results come from :mod:`derivations.rare_gates.lemma_steps` (built on the source polar risk
and flow of :mod:`derivations.rare_gates.dynamics`). Inequalities over the region are proved by SymPy
from sign-definite decompositions (integrals of g >= 0, factor signs by ``solveset``); each is then
evaluated at 30 digits with mpmath on a dense grid of the region plus random points (a numerical check,
not the proof), with a negative control showing that the same check fails for a changed constant or
outside the region. Trajectory checks integrate the independent float64 population model
:mod:`numerics.rare_gates.model` with RK4.
"""

from __future__ import annotations

import math
from functools import cache

import mpmath
import numpy as np
import sympy as sp

from derivations.rare_gates import lemma_steps as ls
from derivations.rare_gates.dynamics import alpha, beta, clone_amplitude, p
from derivations.rare_gates.kernels import J_kernel, g_kernel
from derivations.rare_gates.symbols import a1, a2, lam, omega1, omega2, r1, r2, t
from numerics.rare_gates import model
from verify.audit import claim

PI = sp.pi
LAM = sp.Rational(1, 20)  # the paper's weight decay in every experiment
LAM_F = 0.05
DPS = 30
GRID = 90  # grid step pi/90 on [0, pi] for alpha and beta (triangle alpha + beta <= pi: 4186 points)
ZERO = mpmath.mpf(10) ** -26  # 30-digit arithmetic: a value >= -1e-26 is >= 0 up to rounding of O(1) sums
FLOAT_TOL = 1e-12  # float64 rounding in the model's O(1) sums (~5000 ulp)
RK4_TOL = 1e-7  # RK4 (dt = 0.025) global error ~ C dt^4 = C x 4e-7 with rates C <= 1 here (measured <= 1e-9)
J, G = J_kernel(), g_kernel()
d_ = sp.Symbol("delta", nonnegative=True)

REGION_READING = (
    "Lemma 9's region D (definition lost in conversion) read as a_i, r_i > 0, alpha, beta >= 0 (angles of w_1 above "
    "and w_2 below e1), delta = alpha + beta <= pi, omega_i = a_i r_i <= 1; q_i = -dR_s/domega_i (the radial gain, "
    "as in RG-14.laws), h_i = a_i/r_i, k_i = a_i^2 - r_i^2; the lost Eq. (30) is read as the source angular "
    "equation alpha' = -r_1^{-2} dF_s/dalpha = h_1(omega_2 g(delta) - g(alpha)) (derived), Eq. (33) as "
    "omega_i' = (a_i^2 + r_i^2) q_i - 2 lambda omega_i (derived)."
)
LAWS_READING = (
    "Appendix 14's definitions were lost; read as h_i = a_i/r_i, k_i = a_i^2 - r_i^2, omega_i = a_i r_i and "
    "q_i = -dR_s/domega_i (the radial gain). The bound's hypotheses were lost too: read as holding on Lemma 9's "
    "region (delta <= pi, omega_j <= 1), where it is used; it is equivalent to q_i >= -omega_i/2 and fails outside "
    "(shown in the evidence)."
)


@cache  # the same factor signs recur across checks; solveset is slow
def _nonneg_on(expr, interval) -> bool:
    """SymPy: ``expr(t) < 0`` has no solution on ``interval`` (a factor-sign proof)."""
    return sp.solveset(expr < 0, t, interval) == sp.S.EmptySet


@cache
def _g_nonneg() -> bool:
    """g = (pi - t) sin t/(2 pi) >= 0 on [0, pi]: the factorisation and both factor signs (SymPy)."""
    return (
        _zero(G - (PI - t) * sp.sin(t) / (2 * PI))
        and _nonneg_on(PI - t, sp.Interval(0, PI))
        and _nonneg_on(sp.sin(t), sp.Interval(0, PI))
    )


@cache
def _g_positive_inside() -> bool:
    """g > 0 on (0, pi): both factors pi - t and sin t are positive there (SymPy solveset)."""
    inside = sp.Interval.open(0, PI)
    no_zero = sp.solveset(PI - t <= 0, t, inside) == sp.S.EmptySet
    return no_zero and sp.solveset(sp.sin(t) <= 0, t, inside) == sp.S.EmptySet


def _zero(expr) -> bool:
    """SymPy: ``expr`` is identically 0 (expand first, simplify only if needed)."""
    return sp.expand(expr) == 0 or sp.simplify(expr) == 0


def _int_g(lo, hi) -> sp.Expr:
    """``int_lo^hi g`` (SymPy)."""
    return sp.integrate(G, (t, lo, hi))


@cache
def _jgrid() -> tuple:
    """J and g at k pi/GRID, k = 0..GRID, in 30-digit arithmetic (grid sums alpha + beta stay on the grid)."""
    Jf, gf = sp.lambdify(t, J, "mpmath"), sp.lambdify(t, G, "mpmath")
    with mpmath.workdps(DPS):
        xs = [mpmath.pi * k / GRID for k in range(GRID + 1)]
        return xs, [Jf(x) for x in xs], [gf(x) for x in xs]


def _triangle():
    """Index pairs (i, j) with alpha = x_i, beta = x_j, i + j <= GRID (delta <= pi)."""
    return [(i, j) for i in range(GRID + 1) for j in range(GRID + 1 - i)]


def _random_region(rng, n):
    """n random region points (alpha, beta, omega_1, omega_2) with alpha + beta <= pi, omega_i in [0, 1]."""
    out: list[tuple] = []
    while len(out) < n:
        a, b = rng.uniform(0, math.pi, 2)
        if a + b <= math.pi:
            out.append((a, b, *rng.uniform(0, 1, 2)))
    return out


def _theta(om, h, al, be):
    """Model parameters (a1, a2, w1, w2) from omega_i, h_i and the angles (unit 2 below e1)."""
    a = [math.sqrt(o * x) for o, x in zip(om, h, strict=True)]
    r = [math.sqrt(o / x) for o, x in zip(om, h, strict=True)]
    return np.array([a[0], a[1], r[0] * math.cos(al), r[0] * math.sin(al), r[1] * math.cos(be), -r[1] * math.sin(be)])


def _model_rates(th):
    """From the float64 model's source field: q_i, alpha', beta', omega_i', (log h_i)' and h_i, k_i, omega_i."""
    v = -model.objective_grad(th, "source", LAM_F)
    g0 = model.objective_grad(th, "source", 0.0)  # risk gradient only: dR/da_i = r_i dR/domega_i = -r_i q_i
    out = {}
    for i in range(2):
        a, w, va, vw = th[i], th[2 + 2 * i : 4 + 2 * i], v[i], v[2 + 2 * i : 4 + 2 * i]
        r2_ = float(w @ w)
        r = math.sqrt(r2_)
        out[f"q{i + 1}"] = -g0[i] / r
        out[f"theta{i + 1}dot"] = float(w[0] * vw[1] - w[1] * vw[0]) / r2_
        out[f"omega{i + 1}dot"] = va * r + a * float(w @ vw) / r
        out[f"logh{i + 1}dot"] = va / a - float(w @ vw) / r2_
        out[f"h{i + 1}"], out[f"k{i + 1}"], out[f"omega{i + 1}"] = a / r, a * a - r2_, a * r
    out["alphadot"], out["betadot"] = out["theta1dot"], -out["theta2dot"]
    return out


# initial states (omega_1, omega_2), (h_1, h_2), alpha, beta inside D
STARTS = (
    ((0.5, 0.8), (2.0, 0.5), 2.0, 0.6),  # alpha(0) > pi/2
    ((0.9, 0.3), (0.4, 3.0), 0.3, 2.5),  # beta(0) > pi/2
    ((0.95, 0.5), (2.0, 1.0), 1.0, 1.0),  # q_1 < 0 with k_1 > 0: |log h_1| grows at first
    ((0.3, 0.9), (1.0, 1.5), 0.05, 1.2),  # alpha rises at first (omega_2 g(delta) > g(alpha))
    ((0.2, 0.2), (1.0, 1.5), 1.5, 1.6),  # delta(0) = 3.1, near pi
)
DT, STEPS, EVERY = 0.025, 800, 4  # RK4 up to t = 20, states recorded every 4 steps


@cache
def _trajectories():
    """RK4 of the float64 source field from STARTS; per start arrays of t, alpha, beta, omega_i, h_i, k_i, D+."""

    def field(x):
        return -model.objective_grad(x, "source", LAM_F)

    runs = []
    for om, h, al, be in STARTS:
        th = _theta(om, h, al, be)
        rows = []
        for n in range(STEPS + 1):
            if n:
                k_1 = field(th)
                k_2 = field(th + DT / 2 * k_1)
                k_3 = field(th + DT / 2 * k_2)
                k_4 = field(th + DT * k_3)
                th = th + DT / 6 * (k_1 + 2 * k_2 + 2 * k_3 + k_4)
            if n % EVERY:
                continue
            m = _model_rates(th)
            al_t = math.atan2(th[3], th[2])
            be_t = -math.atan2(th[5], th[4])
            dini = [math.copysign(1.0, m[f"k{i}"]) * m[f"logh{i}dot"] for i in (1, 2)]
            rows.append(
                (n * DT, al_t, be_t, m["omega1"], m["omega2"], m["h1"], m["h2"], m["k1"], m["k2"], dini[0], dini[1])
            )
        runs.append(np.array(rows))
    return runs


# ---------------------------------------------------------------- Appendix 14


@claim("RG-14.dini", reading=LAWS_READING)
def test_dini_logh(audit):
    q = ls.source_gains()
    kk = sp.Symbol("kappa", positive=True)  # |k|
    for i, (a, r) in enumerate(((a1, r1), (a2, r2)), start=1):
        k, om = a**2 - r**2, a * r
        qi = q[i].subs({omega1: a1 * r1, omega2: a2 * r2})
        # (log h_i)' = -(k_i/omega_i) q_i under the source flow (RG-14.laws, here for the source q_i)
        assert _zero(ls.logh_velocity(i) + k / om * qi)
        # k = r^2 (h^2 - 1): sign(k) = sign(h - 1) = sign(log h), so D+|log h| = sign(k)(log h)' where k != 0
        assert _zero(k - r**2 * ((a / r) ** 2 - 1))
    # with |k| = kappa: sign(k) * (-(k/omega) q) = -(kappa/omega) q for both signs of k, and
    # kappa/2 - (-(kappa/omega) q) = (kappa/omega)(q + omega/2)
    qq, om = sp.symbols("q omega", positive=True)
    for sgn in (1, -1):
        dplus = sgn * (-(sgn * kk) / om * qq)
        assert _zero(kk / 2 - dplus - kk / om * (qq + om / 2))
    # q_i + omega_i/2 >= 0 on D is RG-15.L9qlow (proof and grid there); its grid minimum:
    low = _qlow_grid()["min"]
    assert low >= -ZERO
    # float64 model at 400 random points of D: D+|log h_i| <= |k_i|/2
    rng = np.random.default_rng(14_9001)
    worst = -math.inf
    for al, be, o1, o2 in _random_region(rng, 400):
        th = _theta((max(o1, 1e-3), max(o2, 1e-3)), tuple(rng.uniform(0.3, 3.0, 2)), al, be)
        m = _model_rates(th)
        for i in (1, 2):
            worst = max(worst, math.copysign(1.0, m[f"k{i}"]) * m[f"logh{i}dot"] - abs(m[f"k{i}"]) / 2)
    assert worst <= FLOAT_TOL
    # along the five RK4 trajectories (which stay in D): D+|log h_i| <= |k_i|/2
    traj = max(float(np.max(run[:, 9 + i] - np.abs(run[:, 7 + i]) / 2)) for run in _trajectories() for i in (0, 1))
    assert traj <= FLOAT_TOL
    # negative controls: (1) outside D (omega_2 = 1.5 > 1) the bound fails; (2) |k|/2 -> 0.45 |k| fails in D
    out = _model_rates(_theta((0.5, 1.5), (2.0, 1.0), 0.3, 0.3))
    excess = out["logh1dot"] - abs(out["k1"]) / 2
    near = _model_rates(_theta((0.5, 0.5), (2.0, 1.0), math.pi - 0.01, 0.005))  # q_1 ~ -omega_1/2 here
    tight = near["logh1dot"] / abs(near["k1"])
    assert excess > 0.1 and tight > 0.45
    audit.ours(low, 6, label="min over D's grid of q_i + omega_i/2 (= (omega_i/|k_i|)(|k_i|/2 - D+|log h_i|))")
    audit.ours(worst, 3, label="max over 400 random D points of D+|log h_i| - |k_i|/2 (float64 model)")
    audit.evidence(
        "SymPy: (log h_i)' = -(k_i/omega_i) q_i from the source polar flow; sign(k_i) = sign(log h_i) since k_i = "
        "r_i^2 (h_i^2 - 1); hence |k_i|/2 - D+|log h_i| = (|k_i|/omega_i)(q_i + omega_i/2) (both signs of k_i; at "
        "k_i = 0 both sides are 0), >= 0 on D by RG-15.L9qlow (30-digit grid minimum "
        f"{mpmath.nstr(low, 3)}). float64 model: max of D+|log h_i| - |k_i|/2 over 400 random D points {worst:.3g}, "
        f"along 5 RK4 source trajectories {traj:.3g} (tolerance 1e-12, rounding). Negative controls: outside D "
        f"(omega_2 = 1.5, alpha = beta = 0.3) D+|log h_1| - |k_1|/2 = {excess:.3f} > 0; near alpha = pi, beta = 0 "
        f"D+|log h_1|/|k_1| = {tight:.4f} > 0.45, so the constant 1/2 cannot be lowered to 0.45."
    )


@claim("RG-14.loghbound", reading=LAWS_READING)
def test_logh_integrated_bound(audit):
    finite, limit = ls.logh_budget()
    tau, K0 = ls.tau, ls.k0
    # int_0^tau |k(0)| e^{-2 lambda s}/2 ds = |k(0)| (1 - e^{-2 lambda tau})/(4 lambda) <= |k(0)|/(4 lambda)
    assert _zero(finite - K0 * (1 - sp.exp(-2 * lam * tau)) / (4 * lam))
    assert _zero(limit - K0 / (4 * lam))
    assert _zero(limit - finite - K0 * sp.exp(-2 * lam * tau) / (4 * lam))  # the gap is >= 0
    audit.ours(limit, label="sup_t int_0^t |k_i(s)|/2 ds")
    # RK4 trajectories of the float64 model: |log h_i(t)| <= |log h_i(0)| + |k_i(0)|(1 - e^{-2 lambda t})/(4 lambda)
    worst, grew = -math.inf, -math.inf
    for run in _trajectories():
        tt = run[:, 0]
        for i in (0, 1):
            logh = np.abs(np.log(run[:, 5 + i]))
            budget = abs(run[0, 7 + i]) * (1 - np.exp(-2 * LAM_F * tt)) / (4 * LAM_F)
            worst = max(worst, float(np.max(logh - logh[0] - budget)))
            grew = max(grew, float(np.max(logh - logh[0])))
    assert worst <= RK4_TOL
    # negative control: without the |k_i(0)|/(4 lambda) term the bound fails (|log h_1| grows on start 3)
    assert grew > 1e-3
    audit.ours(worst, 3, label="max over trajectories of |log h_i(t)| - |log h_i(0)| - budget(t)")
    audit.evidence(
        "SymPy: D+|log h_i| <= |k_i|/2 (RG-14.dini) with k_i(t) = k_i(0) e^{-2 lambda t} (RG-14.laws) integrates "
        "(comparison lemma for Dini derivatives) to |log h_i(t)| - |log h_i(0)| <= |k_i(0)|(1 - e^{-2 lambda t})/"
        "(4 lambda) <= |k_i(0)|/(4 lambda). float64 model, RK4 (dt = 0.025, t <= 20, lambda = 1/20) from 5 starts in "
        f"D: max of |log h_i(t)| - |log h_i(0)| - budget(t) = {worst:.3g} (tolerance 1e-7, RK4 error). Negative "
        f"control: |log h_i(t)| <= |log h_i(0)| alone fails (growth {grew:.4f} on the start with q_1 < 0, k_1 > 0)."
    )


# ---------------------------------------------------------------- Appendix 15, Lemma 9


@cache
def _qlow_grid():
    """30-digit min of q_1 + omega_1/2 = J(alpha) - omega_2 J(delta) over the grid, omega_2 in {0, 1} (linear)."""
    xs, Jv, _ = _jgrid()
    with mpmath.workdps(DPS):
        vals = [(Jv[i] - w * Jv[i + j], i, j, w) for i, j in _triangle() for w in (0, 1)]
        low = min(vals, key=lambda v: v[0])
        ctrl = min(Jv[i] - mpmath.mpf("1.05") * Jv[i + j] for i, j in _triangle())  # omega_2 = 1.05 (outside D)
    return {"min": low[0], "at": (xs[low[1]], xs[low[2]], low[3]), "ctrl": ctrl}


@claim("RG-15.L9qlow", reading=REGION_READING)
def test_gain_lower_bound(audit):
    q = ls.source_gains()
    # q_1 + omega_1/2 = [J(alpha) - J(delta)] + (1 - omega_2) J(delta)
    #                 = int_alpha^delta g + (1 - omega_2) int_delta^pi g
    q1_split = (J.subs(t, alpha) - J.subs(t, alpha + beta)) + (1 - omega2) * J.subs(t, alpha + beta)
    q2_split = (J.subs(t, beta) - J.subs(t, alpha + beta)) + (1 - omega1) * J.subs(t, alpha + beta)
    assert _zero(q[1] + omega1 / 2 - q1_split)
    assert _zero(q[2] + omega2 / 2 - q2_split)
    x, y = sp.symbols("x y", nonnegative=True)
    assert _zero(J.subs(t, x) - J.subs(t, y) - _int_g(x, y))  # J(x) - J(y) = int_x^y g
    assert _zero(J.subs(t, d_) - _int_g(d_, PI))  # J(delta) = int_delta^pi g (J(pi) = 0)
    assert _g_nonneg()  # so both brackets are >= 0 for alpha <= delta <= pi and omega_2 <= 1
    grid = _qlow_grid()
    # random points: exact formula at 30 digits
    rng = np.random.default_rng(15_9001)
    qf = sp.lambdify((alpha, beta, omega1, omega2), q[1] + omega1 / 2, "mpmath")
    with mpmath.workdps(DPS):
        rnd = min(qf(*map(mpmath.mpf, pt)) for pt in _random_region(rng, 300))
    # float64 model's q_i (from its risk gradient) against the formula at 50 random points
    qn = sp.lambdify((alpha, beta, omega1, omega2), q[1], "math")
    err = 0.0
    for al, be, o1, o2 in _random_region(rng, 50):
        m = _model_rates(_theta((o1 + 0.01, o2 + 0.01), (1.3, 0.7), al, be))
        err = max(err, abs(m["q1"] - qn(al, be, o1 + 0.01, o2 + 0.01)))
    assert err <= FLOAT_TOL
    assert grid["min"] >= -ZERO and rnd >= -ZERO
    assert grid["ctrl"] < -mpmath.mpf("1e-3")  # negative control: omega_2 = 1.05 breaks it
    audit.ours(grid["min"], 6, label="grid min of q_1 + omega_1/2 over D")
    audit.ours(grid["ctrl"], 6, label="control: grid min with omega_2 = 1.05")
    a_, b_, w_ = grid["at"]
    audit.evidence(
        "SymPy: q_1 + omega_1/2 = int_alpha^delta g + (1 - omega_2) int_delta^pi g (identities simplified to 0), with "
        "g = (pi - t) sin t/(2 pi) >= 0 on [0, pi] (factor signs by solveset): a proof for alpha <= delta <= pi, "
        "omega_2 <= 1; q_2 by the mirror identity. Numerical check (30 digits): grid step pi/90 on alpha + beta <= pi "
        f"with omega_2 in {{0, 1}} (the expression is linear in omega_2): min {mpmath.nstr(grid['min'], 3)} at "
        f"alpha = {mpmath.nstr(a_, 4)}, beta = {mpmath.nstr(b_, 4)}, omega_2 = {w_} (equality wherever beta = 0 and "
        "omega_2 = 1, and at alpha = delta = pi: the constant -1/2 is sharp); 300 random points min "
        f"{mpmath.nstr(rnd, 3)}. float64 model q_1 = -(dR/da_1)/r_1 "
        f"matches the formula to {err:.2g} (tolerance 1e-12). Negative control: omega_2 = 1.05 gives grid min "
        f"{mpmath.nstr(grid['ctrl'], 4)} < 0."
    )


@claim("RG-15.L9qtop", reading=REGION_READING)
def test_gain_nonpositive_at_unit_product(audit):
    q = ls.source_gains()
    q1_top = q[1].subs(omega1, 1)
    # q_1(omega_1 = 1) = -[J(0) - J(alpha)] - omega_2 J(delta) = -int_0^alpha g - omega_2 int_delta^pi g
    assert _zero(q1_top + _int_g(0, alpha) + omega2 * _int_g(alpha + beta, PI))
    assert _g_nonneg()
    # Eq. (33): omega_i' = (a_i^2 + r_i^2) q_i - 2 lambda omega_i, so omega_i' <= -2 lambda < 0 where q_i <= 0
    qa = q[1].subs({omega1: a1 * r1, omega2: a2 * r2})
    assert _zero(ls.product_velocity(1) - ((a1**2 + r1**2) * qa - 2 * lam * a1 * r1))
    xs, Jv, _ = _jgrid()
    with mpmath.workdps(DPS):
        top = max(Jv[i] - Jv[0] - w * Jv[i + j] for i, j in _triangle() for w in (0, 1))
        ctrl = max(Jv[i] - mpmath.mpf("0.9") / 2 - w * Jv[i + j] for i, j in _triangle() for w in (0, 1))
    # float64 model at omega_1 = 1: omega_1' < 0 at 200 random points; control omega_1 = 0.9 has omega_1' > 0
    rng = np.random.default_rng(15_9002)
    worst = -math.inf
    for al, be, _, o2 in _random_region(rng, 200):
        m = _model_rates(_theta((1.0, max(o2, 1e-3)), tuple(rng.uniform(0.3, 3.0, 2)), al, be))
        worst = max(worst, m["omega1dot"])
    ctrl_rate = _model_rates(_theta((0.9, 0.01), (3.0, 1.0), 0.01, 0.5))["omega1dot"]
    assert top <= ZERO and worst < 0
    assert ctrl > mpmath.mpf("0.04") and ctrl_rate > 0  # negative control: at omega_1 = 0.9 the sign flips
    audit.ours(top, 6, label="grid max of q_1 at omega_1 = 1")
    audit.ours(worst, 6, label="max omega_1' at omega_1 = 1 (float64 model, 200 random points, lambda = 1/20)")
    audit.evidence(
        "SymPy: at omega_1 = 1, q_1 = -int_0^alpha g - omega_2 int_delta^pi g <= 0 (g >= 0 by factor signs), and "
        "omega_1' = (a_1^2 + r_1^2) q_1 - 2 lambda omega_1 (Eq. (33) as derived from the polar flow) <= -2 lambda < 0. "
        f"Numerical check: 30-digit grid (step pi/90, omega_2 in {{0, 1}}) max of q_1 = {mpmath.nstr(top, 3)}; "
        f"float64 model omega_1' at 200 random points with omega_1 = 1: max {worst:.4f} < 0. Negative control: at "
        f"omega_1 = 0.9 the grid max of q_1 is {mpmath.nstr(ctrl, 4)} > 0 and the model gives omega_1' = "
        f"{ctrl_rate:.4f} > 0 (alpha = 0.01, omega_2 = 0.01)."
    )


def _angle_field_error(rng, n=60) -> float:
    """max |alpha', beta' (derived) - model| at n random D points (float64)."""
    v = ls.angle_velocities()
    args = (alpha, beta, omega1, omega2, ls.h1, ls.h2)
    fa = sp.lambdify(args, v[alpha].subs(lam, LAM), "math")
    fb = sp.lambdify(args, v[beta].subs(lam, LAM), "math")
    err = 0.0
    for al, be, o1, o2 in _random_region(rng, n):
        hh = tuple(rng.uniform(0.3, 3.0, 2))
        pt = (al, be, o1 + 0.01, o2 + 0.01, *hh)
        m = _model_rates(_theta((o1 + 0.01, o2 + 0.01), hh, al, be))
        err = max(err, abs(m["alphadot"] - fa(*pt)), abs(m["betadot"] - fb(*pt)))
    return err


@claim("RG-15.L9inward", reading=REGION_READING)
def test_angle_lower_bound(audit):
    v = ls.angle_velocities()
    h1 = ls.h1
    ga, gd = G.subs(t, alpha), G.subs(t, alpha + beta)
    assert _zero(v[alpha] - h1 * (omega2 * gd - ga))  # Eq. (30), derived
    # alpha' + h_1 alpha/2 = h_1 [omega_2 g(delta) + (alpha/2 - g(alpha))]
    # alpha/2 - g(alpha) = [pi (alpha - sin alpha) + alpha sin alpha]/(2 pi), alpha - sin alpha = int_0^alpha (1 - cos)
    x = sp.Symbol("x", nonnegative=True)
    assert _zero(x / 2 - G.subs(t, x) - (PI * (x - sp.sin(x)) + x * sp.sin(x)) / (2 * PI))
    assert _zero(x - sp.sin(x) - sp.integrate(1 - sp.cos(t), (t, 0, x)))
    assert all(_nonneg_on(f, sp.Interval(0, PI)) for f in (1 - sp.cos(t), t, sp.sin(t)))  # x sin x >= 0 too
    assert _g_nonneg()
    # inward at alpha = 0: alpha' = h_1 omega_2 g(beta) > 0 for omega_2 > 0, 0 < beta < pi
    assert _zero(v[alpha].subs(alpha, 0) - h1 * omega2 * G.subs(t, beta))
    assert _g_positive_inside()
    # numerical: (alpha' + h_1 c alpha)/h_1 = omega_2 g(delta) - g(alpha) + c alpha; linear in omega_2 with
    # coefficient g(delta) >= 0, so its minimum over omega_2 in [0, 1] is at omega_2 = 0
    xs, _, gv = _jgrid()
    with mpmath.workdps(DPS):
        low = min(w * gv[i + j] - gv[i] + xs[i] / 2 for i, j in _triangle() for w in (0, 1))
        ctrl = min(mpmath.mpf("1e-3") * gv[i + j] - gv[i] + mpmath.mpf("0.45") * xs[i] for i, j in _triangle())
    err = _angle_field_error(np.random.default_rng(15_9003))
    assert low >= -ZERO
    assert ctrl < -mpmath.mpf("1e-4")  # negative control: 0.45 alpha (omega_2 = 1e-3) fails near alpha = pi/2
    assert err <= FLOAT_TOL
    audit.ours(low, 6, label="grid min of alpha'/h_1 + alpha/2 over D")
    audit.ours(ctrl, 6, label="control: grid min with alpha/2 -> 0.45 alpha, omega_2 = 1e-3")
    audit.evidence(
        "SymPy: alpha' = h_1(omega_2 g(delta) - g(alpha)) from the source polar flow (Eq. (30)); alpha' + h_1 alpha/2 "
        "= h_1[omega_2 g(delta) + (pi(alpha - sin alpha) + alpha sin alpha)/(2 pi)], every term >= 0 on D (alpha - "
        "sin alpha = int_0^alpha (1 - cos), factor signs by solveset), so alpha' >= -h_1 alpha/2 >= -h_max alpha/2 "
        "(h_max = sup_t max_i h_i, finite by RG-14.loghbound); at alpha = 0, alpha' = h_1 omega_2 g(beta) > 0 "
        "(inward); beta by the mirror. Numerical check (30 digits, grid step pi/90, omega_2 in {0, 1}): min "
        f"{mpmath.nstr(low, 3)}; float64 model angular velocities match the derived ones to {err:.2g} (tolerance "
        f"1e-12). Negative control: with 0.45 alpha in place of alpha/2 (omega_2 = 1e-3) the grid min is "
        f"{mpmath.nstr(ctrl, 4)} < 0."
    )


@claim("RG-15.L9adec", reading=REGION_READING)
def test_angle_decreases_above_half_pi(audit):
    v = ls.angle_velocities()
    h1 = ls.h1
    ga, gd = G.subs(t, alpha), G.subs(t, alpha + beta)
    # alpha' + h_1 (1 - omega_2) g(alpha) = h_1 omega_2 (g(delta) - g(alpha)) = h_1 omega_2 int_alpha^delta g'
    assert _zero(v[alpha] + h1 * (1 - omega2) * ga - h1 * omega2 * (gd - ga))
    dg = sp.diff(G, t)
    assert _zero(dg - ((PI - t) * sp.cos(t) - sp.sin(t)) / (2 * PI))
    upper = sp.Interval(PI / 2, PI)
    # on [pi/2, pi]: (pi - t) >= 0, -cos t >= 0, sin t >= 0, so g' <= 0 (RG-15.gdec) and g(delta) <= g(alpha)
    assert _nonneg_on(PI - t, upper) and _nonneg_on(-sp.cos(t), upper) and _nonneg_on(sp.sin(t), upper)
    assert _g_nonneg()  # and -h_1(1 - omega_2) g(alpha) <= 0 for omega_2 <= 1
    xs, _, gv = _jgrid()
    half = GRID // 2
    with mpmath.workdps(DPS):
        # alpha'/h_1 = omega_2 g(delta) - g(alpha): linear in omega_2, maximum over [0, 1] at an end
        top = max(w * gv[i + j] - gv[i] for i, j in _triangle() if i >= half for w in (0, 1))
        gap = max(gv[i + j] - gv[i] for i, j in _triangle() if i >= half)  # g(delta) - g(alpha) <= 0
        lo = round(GRID / mpmath.pi)  # control: threshold 1.0 instead of pi/2
        ctrl = max(gv[i + j] - gv[i] for i, j in _triangle() if i >= lo)
    assert top <= ZERO and gap <= ZERO
    assert ctrl > mpmath.mpf("1e-4")  # negative control: alpha' > 0 at some alpha >= 1.0 (omega_2 = 1)
    audit.ours(top, 6, label="grid max of alpha'/h_1 over alpha >= pi/2 in D")
    audit.ours(ctrl, 6, label="control: grid max of alpha'/h_1 (omega_2 = 1) over alpha >= 1")
    audit.evidence(
        "SymPy: alpha' + h_1(1 - omega_2) g(alpha) = h_1 omega_2 (g(delta) - g(alpha)) from the derived Eq. (30); "
        "g' = ((pi - t) cos t - sin t)/(2 pi) <= 0 on [pi/2, pi] by factor signs, so for pi/2 <= alpha <= delta <= pi "
        "alpha' <= -h_1(1 - omega_2) g(alpha) <= 0 (omega_2 <= 1, g >= 0). Numerical check (30 digits, grid step "
        f"pi/90, alpha >= pi/2, omega_2 in {{0, 1}}): max alpha'/h_1 = {mpmath.nstr(top, 3)}, max g(delta) - g(alpha) "
        f"= {mpmath.nstr(gap, 3)}. Negative control: with the threshold pi/2 lowered to 1 (below the maximiser of g, "
        f"near 1.11) alpha'/h_1 reaches {mpmath.nstr(ctrl, 4)} > 0 at omega_2 = 1."
    )


@claim("RG-15.L9cap", reading=REGION_READING)
def test_angle_caps_along_trajectories(audit):
    # the invariance argument: alpha' <= 0 wherever alpha >= pi/2 in D (RG-15.L9adec), so alpha(t) cannot exceed
    # max{alpha(0), pi/2}; max{alpha(0), pi/2} < pi as alpha(0) <= delta(0) < pi. Checked on RK4 trajectories.
    runs = _trajectories()
    worst, inside, rise = -math.inf, math.inf, -math.inf
    for run in runs:
        for col in (1, 2):
            ang = run[:, col]
            cap = max(float(ang[0]), math.pi / 2)
            worst = max(worst, float(np.max(ang - cap)))
            rise = max(rise, float(np.max(ang - ang[0])))
        delta_t = run[:, 1] + run[:, 2]
        slack = (run[:, 1], run[:, 2], math.pi - delta_t, run[:, 3], run[:, 4], 1 - run[:, 3], 1 - run[:, 4])
        inside = min(inside, min(float(np.min(x)) for x in slack))
    assert worst <= RK4_TOL
    assert inside > 0  # the trajectories stay in D (Lemma 9's invariance), so the caps apply
    assert rise > 1e-2  # negative control: alpha(t) <= alpha(0) without the pi/2 fails (alpha rises at first)
    audit.ours(worst, 3, label="max over trajectories of angle(t) - max{angle(0), pi/2}")
    audit.evidence(
        "alpha' <= 0 wherever alpha >= pi/2 in D (RG-15.L9adec; beta by the mirror), so alpha(t) <= max{alpha(0), "
        "pi/2} < pi. float64 model, RK4 (dt = 0.025, t <= 20, lambda = 1/20) from 5 starts in D (alpha(0) or beta(0) "
        f"above pi/2 on two): max of angle(t) - max{{angle(0), pi/2}} = {worst:.3g} (tolerance 1e-7, RK4 error); the "
        f"trajectories stay in D (smallest slack {inside:.3g}). Negative control: the bound without pi/2 "
        f"(angle(t) <= angle(0)) fails, alpha rising by {rise:.4f} on the start with alpha(0) = 0.05."
    )


@claim("RG-15.L9dpi", reading=REGION_READING)
def test_separation_velocity_at_pi(audit):
    dd = ls.delta_velocity_at_pi()
    h1, h2 = ls.h1, ls.h2
    paper = -h1 * G.subs(t, alpha) - h2 * G.subs(t, PI - alpha)  # -h_1 g(alpha) - h_2 g(beta), beta = pi - alpha
    assert _zero(dd - paper)
    # g > 0 on (0, pi): for alpha, beta > 0 with alpha + beta = pi both g's are > 0, so delta' < 0
    assert _g_positive_inside()
    audit.ours(sp.factor(dd), label="delta' at delta = pi")
    rng = np.random.default_rng(15_9004)
    worst, err = -math.inf, 0.0
    fd = sp.lambdify((alpha, omega1, omega2, h1, h2), dd, "math")
    for al in rng.uniform(0.01, math.pi - 0.01, 100):
        om, hh = tuple(rng.uniform(0.05, 1.0, 2)), tuple(rng.uniform(0.3, 3.0, 2))
        m = _model_rates(_theta(om, hh, al, math.pi - al))
        rate = m["alphadot"] + m["betadot"]
        worst = max(worst, rate)
        err = max(err, abs(rate - fd(al, *om, *hh)))
    corner = _model_rates(_theta((0.5, 0.5), (1.0, 1.0), 0.0, math.pi))
    corner_rate = corner["alphadot"] + corner["betadot"]
    assert worst < 0 and err <= FLOAT_TOL
    assert abs(corner_rate) <= FLOAT_TOL  # negative control: at alpha = 0, beta = pi strictness fails (delta' = 0)
    audit.evidence(
        "SymPy: alpha' + beta' from the source polar flow at beta = pi - alpha simplifies to -h_1 g(alpha) - "
        "h_2 g(beta) (g(pi) = 0 removes the omega terms); g > 0 on (0, pi) (solveset), so delta' < 0 for alpha, "
        f"beta > 0. float64 model at 100 random points of the face delta = pi: max delta' = {worst:.4f} < 0, "
        f"agreement with the derived form {err:.2g} (tolerance 1e-12). Negative control: at the corner alpha = 0, "
        f"beta = pi, delta' = {corner_rate:.2g} (strictness needs alpha, beta > 0, which Lemma 9 provides)."
    )


# ---------------------------------------------------------------- Appendix 15, quadratic expansion and q_2

QUAD_READING = (
    "The normal coordinates chi (definitions lost) are read as Btilde = omega_1 + omega_2 - B_s, p = omega_1/B "
    "(tangent), delta = vartheta_1 - vartheta_2, mu = p vartheta_1 + (1 - p) vartheta_2 (the omega-weighted mean "
    "angle, = arg(a_1 w_1 + a_2 w_2) + O(delta^3)) and k_i = a_i^2 - r_i^2; omega_i in the k-terms at S."
)


@claim(
    "RG-15.quad",
    reading=QUAD_READING,
    fitted={
        "mu = (vartheta_1 + vartheta_2)/2 (midpoint angle)": (
            "adds a cross term B_s (2p - 1) mu delta/4 and changes the delta^2 coefficient, unless p = 1/2"
        )
    },
)
def test_quadratic_expansion(audit):
    Q = ls.quadratic_expansion("weighted")
    Bs = clone_amplitude("source")
    Bt, mu, dl, kp1, kp2 = ls.Bt_, ls.mu, ls.dl, ls.kap1, ls.kap2
    o1, o2 = p * Bs, (1 - p) * Bs
    paper = (
        Bt**2 / 4 + Bs * mu**2 / 4 + lam * Bs * p * (1 - p) * dl**2 / 2 + lam * (kp1**2 / (8 * o1) + kp2**2 / (8 * o2))
    )
    assert sp.cancel(Q - paper) == 0
    coeffs = {m: sp.factor(sp.expand(Q).coeff(m)) for m in (Bt**2, mu**2, dl**2, kp1**2, kp2**2)}
    assert sp.cancel(Q - sum(c * m for m, c in coeffs.items())) == 0  # no cross terms
    audit.ours(
        "; ".join(f"{sp.sstr(m)}: {sp.sstr(c)}" for m, c in coeffs.items()), label="second-order coefficients of F_s"
    )
    mid = ls.quadratic_expansion("midpoint")
    cross = sp.factor(mid.coeff(mu, 1).coeff(dl, 1))
    assert _zero(cross - Bs * (2 * p - 1) / 4)  # the alternative reading gives a cross term
    # float64 model: remainder F_s - (lambda - lambda^2) - eps^2 Q(chi) = O(eps^3) at random chi, p
    Qf = sp.lambdify((p, Bt, mu, dl, kp1, kp2), Q.subs(lam, LAM), "math")
    wrong = paper.subs(kp1, 0) + lam * kp1**2 / (4 * o1)  # control: 1/8 -> 1/4 in the k_1 term
    Wf = sp.lambdify((p, Bt, mu, dl, kp1, kp2), wrong.subs(lam, LAM), "math")
    Bs_f, base = float(Bs.subs(lam, LAM)), LAM_F - LAM_F**2
    rng = np.random.default_rng(15_9005)

    def model_theta(pp, chi):
        b, m_, d, c1, c2 = chi
        om = (pp * (Bs_f + b), (1 - pp) * (Bs_f + b))
        ar = []
        for o, k in zip(om, (c1, c2), strict=True):
            root = math.sqrt(k * k + 4 * o * o)
            ar.append((math.sqrt((root + k) / 2), math.sqrt((root - k) / 2)))
        t1, t2 = m_ + (1 - pp) * d, m_ - pp * d  # vartheta_1, vartheta_2
        return np.array(
            [ar[0][0], ar[1][0], ar[0][1] * math.cos(t1), ar[0][1] * math.sin(t1)]
            + [ar[1][1] * math.cos(t2), ar[1][1] * math.sin(t2)]
        )

    ratios = {1e-2: 0.0, 1e-3: 0.0}
    for _ in range(20):
        pp, chi = rng.uniform(0.2, 0.8), rng.normal(size=5)
        for e in ratios:
            rem = model.objective(model_theta(pp, e * chi), "source", LAM_F) - base
            ratios[e] = max(ratios[e], abs(rem - e * e * Qf(pp, *chi)) / (e * e * float(chi @ chi)))
    # control at a pure k_1 displacement chi = (0, 0, 0, 1, 0), eps = 1e-3, p = 1/2
    unit = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    rem = model.objective(model_theta(0.5, 1e-3 * unit), "source", LAM_F) - base
    ctrl = abs(rem - 1e-6 * Wf(0.5, *unit)) / 1e-6
    # o(|chi|^2): the relative remainder shrinks ~10x from eps = 1e-2 to 1e-3 (O(eps^3)); rounding 1e-17/1e-6
    assert ratios[1e-3] <= 0.2 * ratios[1e-2] and ratios[1e-3] <= 1e-2
    assert ctrl > 10 * ratios[1e-3]  # negative control: the changed constant leaves an O(eps^2) remainder
    audit.evidence(
        "SymPy: F_s = R_s(omega, alpha, beta) + (lambda/2) sum_i sqrt(k_i^2 + 4 omega_i^2) in the normal coordinates "
        "chi -> eps chi at the point of S with allocation p, each transcendental atom replaced by its sp.series to "
        "O(eps^3); orders 0 and 1 vanish and the eps^2 coefficient equals the paper's form exactly (symbolic p, "
        "lambda; cancel). The analytic J branch has the 2-jet of J(|t|) (RG-14.C2): negative angles do not change it. "
        "float64 model at 20 random (p, chi): max |F_s - (lambda - lambda^2) - eps^2 Q|/(eps^2|chi|^2) = "
        f"{ratios[1e-2]:.2g} at eps = 1e-2, {ratios[1e-3]:.2g} at eps = 1e-3 (shrinks like eps: o(|chi|^2)). "
        f"Negative controls: the midpoint mean angle gives a cross term {sp.sstr(cross)} mu delta; with 1/8 -> 1/4 in "
        f"the k_1 term the relative remainder stays >= {ctrl:.3g} at eps = 1e-3."
    )


Q2_READING = (
    "The surrounding text was lost; read as the limit in the omega-limit analysis where unit 1 approaches the "
    "source clone (omega_1 -> B_s, alpha -> 0) and unit 2 vanishes (omega_2 -> 0), uniformly in beta in [0, pi]."
)


@claim(
    "RG-15.q2",
    reading=Q2_READING,
    fitted={"omega_2 not tending to 0": "q_2 = 2 lambda J(beta) - omega_2/2 + o(1)"},
)
def test_q2_limit(audit):
    q2 = ls.source_gains()[2]
    Bs = clone_amplitude("source")
    lim = ls.q2_clone_limit()
    assert _zero(lim - 2 * lam * J.subs(t, beta))
    audit.ours(lim, label="q_2 at omega_1 = B_s, alpha = 0, omega_2 = 0")
    # uniform bound: q_2 - 2 lambda J(beta) = (B_s - omega_1) J(beta) + omega_1 (J(beta) - J(alpha + beta)) - omega_2/2
    split = (Bs - omega1) * J.subs(t, beta) + omega1 * (J.subs(t, beta) - J.subs(t, alpha + beta)) - omega2 / 2
    assert _zero(q2 - 2 * lam * J.subs(t, beta) - split)
    # 0 <= J <= 1/2 and 0 <= g <= 1/2 on [0, pi] (g <= (pi - t)/(2 pi)), so
    # |q_2 - 2 lambda J(beta)| <= |omega_1 - B_s|/2 + omega_1 alpha/2 + omega_2/2 -> 0
    assert _zero((PI - t) / (2 * PI) - G - (PI - t) * (1 - sp.sin(t)) / (2 * PI))
    assert _nonneg_on(PI - t, sp.Interval(0, PI)) and _nonneg_on(1 - sp.sin(t), sp.Interval(0, PI))
    assert _nonneg_on(sp.Rational(1, 2) - (PI - t) / (2 * PI), sp.Interval(0, PI))
    assert _zero(J.subs(t, 0) - sp.Rational(1, 2)) and _g_nonneg()
    gap = sp.lambdify((alpha, beta, omega1, omega2), (q2 - 2 * lam * J.subs(t, beta)).subs(lam, LAM), "mpmath")
    Jm = sp.lambdify(t, J, "mpmath")
    bound_ok, sups = True, []
    with mpmath.workdps(DPS):
        bs = mpmath.mpf(sp.N(Bs.subs(lam, LAM), DPS + 5))
        betas = [mpmath.pi * k / 200 for k in range(201)]
        at_limit = max(abs(gap(0, b, bs, 0)) for b in betas)
        for eta in ("1e-1", "1e-2", "1e-3", "1e-4"):
            e = mpmath.mpf(eta)
            worst = max(abs(gap(e, b, bs + e, e)) for b in betas)
            bound_ok &= worst <= (e + (bs + e) * e + e) / 2 + ZERO
            sups.append(worst)
        held = max(abs(gap(mpmath.mpf("1e-4"), b, bs, mpmath.mpf("0.2"))) for b in betas)  # omega_2 held at 0.2
        wrong = max(abs(gap(0, b, bs, 0) + Jm(b) / 20) for b in betas)  # paper's 2 lambda -> lambda
    assert bound_ok and at_limit <= ZERO
    assert sups[-1] <= mpmath.mpf("2e-4")
    assert held > mpmath.mpf("0.09") and wrong > mpmath.mpf("0.02")  # negative controls
    audit.ours(sups[-1], 4, label="sup_beta |q_2 - 2 lambda J(beta)| at omega_1 = B_s + 1e-4, alpha = omega_2 = 1e-4")
    audit.evidence(
        "SymPy: q_2 at (omega_1, alpha, omega_2) = (B_s, 0, 0) simplifies to (1 - B_s) J(beta) = 2 lambda J(beta) "
        "(B_s = 1 - 2 lambda derived); q_2 - 2 lambda J(beta) = (B_s - omega_1) J(beta) + omega_1 (J(beta) - "
        "J(alpha + beta)) - omega_2/2 with 0 <= J <= 1/2, 0 <= g <= 1/2 (solveset), so |q_2 - 2 lambda J(beta)| <= "
        "(|omega_1 - B_s| + omega_1 alpha + omega_2)/2 -> 0 uniformly in beta. Numerical (30 digits, lambda = 1/20, "
        "201 beta values, omega_1 - B_s = alpha = omega_2 = eta): sup gap "
        + ", ".join(mpmath.nstr(x, 3) for x in sups)
        + " for eta = 1e-1..1e-4, each within the bound. Negative controls: with omega_2 held at 0.2 the gap stays "
        f"{mpmath.nstr(held, 3)}; the constant lambda in place of 2 lambda leaves {mpmath.nstr(wrong, 3)} at the limit."
    )
