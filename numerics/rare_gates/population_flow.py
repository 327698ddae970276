"""High-accuracy population gradient flow of the rare-gates model (Appendices 13-17).

The flow is ``theta' = -grad F(theta)`` with ``F = R_task + (lam/2)|theta|^2`` and the
float64 gradient of :mod:`numerics.rare_gates.model` (its numba leaf ``_risk_grad``, which
evaluates the kernels without cancellation at both ends of [0, pi] and computes cross
products with compensated arithmetic). It is integrated by an adaptive Dormand-Prince 8(5,3)
method, the scheme of SciPy's ``DOP853`` with SciPy's own coefficient tables and step
control, compiled with numba so that trajectories of thousands of time units take
milliseconds. The error norm weights each component by ``atol + rtol |y|``; with the default
``atol = 1e-300`` every component, including transverse components of size ``1e-9``, is
controlled *relatively*, so angles between the units stay accurate down to the float64
range (the angle itself is read off with ``atan2`` of a compensated cross product, never by
subtracting polar angles).

Observables in the paper's coordinates (all from the Cartesian state): products
``omega_i = a_i |w_i|``, amplitude ``B``, balances ``k_i = a_i^2 - |w_i|^2``, ``h_i = a_i/|w_i|``,
the separation ``delta``, the projective distance ``d = |w_1/a_1 - w_2/a_2|`` (Section 6,
Appendix 11), the radial gains ``q_i = -dR/domega_i`` (Appendix 14) and the target projective
coordinate ``e`` of Section 7 (``z_i = (a_i, w_i)``, ``h = (z_1 + z_2)/sqrt 2``,
``d_z = (z_1 - z_2)/sqrt 2``, ``e = d_z - (h.d_z/|h|^2) h``).

>>> th0 = np.array([0.5, 0.5, 0.5, 0.0, 0.5, 0.0])  # balanced proportional: B' = B(B_s - B)
>>> out = flow(th0, "source", 0.05, [0.0, 2.0])
>>> Bs = 0.9; B0 = 0.5
>>> exact = Bs * B0 / (B0 + (Bs - B0) * math.exp(-Bs * 2.0))
>>> bool(abs(observables(out.states[-1])["B"] - exact) < 1e-12)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit
from scipy.integrate._ivp import dop853_coefficients as _dop

from numerics.rare_gates import model
from numerics.validation import choice, integer, positive, real, reals

_A = np.ascontiguousarray(_dop.A[: _dop.N_STAGES, : _dop.N_STAGES], dtype=np.float64)
_B = np.ascontiguousarray(_dop.B, dtype=np.float64)
_C = np.ascontiguousarray(_dop.C[: _dop.N_STAGES], dtype=np.float64)
_E3 = np.ascontiguousarray(_dop.E3, dtype=np.float64)
_E5 = np.ascontiguousarray(_dop.E5, dtype=np.float64)
_NS = int(_dop.N_STAGES)  # 12 stages; K has a 13th row, the derivative at the new point

Q_TARGET = model.Q  # q = 2/pi
TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class FlowResult:
    """States of one flow at the requested times, with the integrator's step counts."""

    times: np.ndarray  # (m,)
    states: np.ndarray  # (m, 6) rows (a1, a2, w1x, w1y, w2x, w2y)
    n_steps: int  # accepted steps
    n_rejected: int  # rejected steps


@njit(cache=True)
def _field(y, target, lam, out):
    model._risk_grad(y, target, lam, out)
    for i in range(6):
        out[i] = -out[i]


@njit(cache=True)
def _logpolar_field(y, target, lam, out):
    """Field in log-polar coordinates y = (log a1, log a2, log r1, log r2, log alpha, log beta).

    Unit 1 at angle alpha above e1, unit 2 at beta below it (delta = alpha + beta, both stay > 0:
    Appendix 15, Lemma 9). With omega_i = a_i r_i, h_i = a_i / r_i and the radial gains
    q_i = -dR/domega_i (source: J(alpha_i) - omega_i/2 - omega_j J(delta); target:
    q - omega_i/2 - omega_j J(delta)): (log a_i)' = q_i/h_i - lambda, (log r_i)' = h_i q_i - lambda,
    alpha' = h_1 (omega_2 g(delta) - g(alpha)), beta' = h_2 (omega_1 g(delta) - g(beta)) (no label
    terms for the target). Products and ratios are formed as exponentials of sums, so a unit
    whose omega_i is below the float64 range keeps an exact log-coordinate.
    """
    la1, la2, lr1, lr2, lal, lbe = y[0], y[1], y[2], y[3], y[4], y[5]
    o1, o2 = math.exp(la1 + lr1), math.exp(la2 + lr2)
    h1, h2 = math.exp(la1 - lr1), math.exp(la2 - lr2)
    al, be = math.exp(lal), math.exp(lbe)
    dl = min(al + be, math.pi)
    Jd, Gd = model._J(dl), _g_over_t(dl)
    ratio_a = 1.0 + math.exp(lbe - lal)  # delta / alpha, exact also when alpha underflows
    ratio_b = 1.0 + math.exp(lal - lbe)  # delta / beta
    if target:
        q1 = Q_TARGET - 0.5 * o1 - o2 * Jd
        q2 = Q_TARGET - 0.5 * o2 - o1 * Jd
        dlal = h1 * o2 * Gd * ratio_a
        dlbe = h2 * o1 * Gd * ratio_b
    else:
        q1 = model._J(min(al, math.pi)) - 0.5 * o1 - o2 * Jd
        q2 = model._J(min(be, math.pi)) - 0.5 * o2 - o1 * Jd
        dlal = h1 * (o2 * Gd * ratio_a - _g_over_t(min(al, math.pi)))
        dlbe = h2 * (o1 * Gd * ratio_b - _g_over_t(min(be, math.pi)))
    out[0] = q1 / h1 - lam
    out[1] = q2 / h2 - lam
    out[2] = h1 * q1 - lam
    out[3] = h2 * q2 - lam
    out[4] = dlal
    out[5] = dlbe


@njit(cache=True)
def _g_over_t(t):
    """g(t)/t = (pi - t) sin(t) / (2 pi t), with the limit 1/2 at t = 0."""
    if t < 0.5:
        sinc = 1.0 if t == 0.0 else math.sin(t) / t
        return (math.pi - t) * sinc / TWO_PI
    return model._g(t) / t


@njit(cache=True)
def _rhs(kind, y, target, lam, out):
    if kind == 0:
        _field(y, target, lam, out)
    else:
        _logpolar_field(y, target, lam, out)


@njit(cache=True)
def _integrate(kind, y0, t_out, target, lam, rtol, atol, h_init, max_steps, A, Bw, C, E3, E5, ns):
    n = 6
    m = t_out.shape[0]
    res = np.empty((m, n))
    K = np.empty((ns + 1, n))
    y = y0.copy()
    ynew = np.empty(n)
    tmp = np.empty(n)
    f = np.empty(n)
    _rhs(kind, y, target, lam, f)
    t = t_out[0]
    res[0] = y
    h = h_init
    steps = 0
    rejected = 0
    for j in range(1, m):
        t_next = t_out[j]
        while t < t_next:
            if steps + rejected >= max_steps:
                return res, -1, rejected
            h_eff = min(h, t_next - t)
            last = h_eff >= t_next - t
            K[0] = f
            for s in range(1, ns):
                for i in range(n):
                    acc = 0.0
                    for r in range(s):
                        acc += A[s, r] * K[r, i]
                    tmp[i] = y[i] + h_eff * acc
                _rhs(kind, tmp, target, lam, K[s])
            for i in range(n):
                acc = 0.0
                for r in range(ns):
                    acc += Bw[r] * K[r, i]
                ynew[i] = y[i] + h_eff * acc
            _rhs(kind, ynew, target, lam, K[ns])
            e5 = 0.0
            e3 = 0.0
            for i in range(n):
                sc = atol + rtol * max(abs(y[i]), abs(ynew[i]))
                a5 = 0.0
                a3 = 0.0
                for r in range(ns + 1):
                    a5 += E5[r] * K[r, i]
                    a3 += E3[r] * K[r, i]
                e5 += (a5 / sc) ** 2
                e3 += (a3 / sc) ** 2
            if e5 == 0.0 and e3 == 0.0:
                err = 0.0
            else:
                err = h_eff * e5 / math.sqrt((e5 + 0.01 * e3) * n)
            finite = True
            for i in range(n):
                if not math.isfinite(ynew[i]):
                    finite = False
            if finite and err <= 1.0:
                t = t_next if last else t + h_eff
                for i in range(n):
                    y[i] = ynew[i]
                    f[i] = K[ns, i]
                steps += 1
                factor = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** (-1.0 / 8.0))
                if not last or factor < 1.0:
                    h = h_eff * factor
            else:
                rejected += 1
                factor = 0.2 if not finite else max(0.2, 0.9 * err ** (-1.0 / 8.0))
                h = h_eff * factor
                if h < 1e-14 * max(1.0, abs(t)):
                    return res, -2, rejected
        res[j] = y
    return res, steps, rejected


OBS_COLUMNS = (
    "omega1", "omega2", "B", "k1", "k2", "h1", "h2", "theta1", "theta2",
    "delta", "d", "e", "dlogdelta", "Bdot", "q1", "q2",
)  # fmt: skip


@njit(cache=True)
def _two_cross(u0, u1, v0, v1):
    return model._cross(u0, u1, v0, v1)


@njit(cache=True)
def _obs_batch(states, target, lam, out):
    v = np.empty(6)
    g0 = np.empty(6)
    for j in range(states.shape[0]):
        y = states[j]
        a1, a2 = y[0], y[1]
        r1, r2 = math.hypot(y[2], y[3]), math.hypot(y[4], y[5])
        o1, o2 = a1 * r1, a2 * r2
        cs = _two_cross(y[2], y[3], y[4], y[5])
        c = abs(cs)
        dd = y[2] * y[4] + y[3] * y[5]
        delta = math.atan2(c, dd)
        m1, m2 = r1 / abs(a1), r2 / abs(a2)
        dist = math.sqrt((m1 - m2) ** 2 + 4.0 * m1 * m2 * math.sin(delta / 2) ** 2)
        w01 = _two_cross(a1, y[2], a2, y[4])
        w02 = _two_cross(a1, y[3], a2, y[5])
        w12 = cs
        zs = math.sqrt((a1 + a2) ** 2 + (y[2] + y[4]) ** 2 + (y[3] + y[5]) ** 2)
        e_norm = math.sqrt(2.0) * math.hypot(math.hypot(w01, w02), w12) / zs
        _field(y, target, lam, v)
        sgn = 1.0 if cs >= 0 else -1.0
        dc = sgn * (_two_cross(v[2], v[3], y[4], y[5]) + _two_cross(y[2], y[3], v[4], v[5]))
        ddd = v[2] * y[4] + v[3] * y[5] + y[2] * v[4] + y[3] * v[5]
        nrm = math.hypot(c, dd)  # not c^2 + dd^2, which underflows for hidden norms below 1e-154
        rate = (dc * (dd / nrm) - (c / nrm) * ddd) / (nrm * delta) if delta > 0 else math.nan
        bdot = v[0] * r1 + a1 * (y[2] * v[2] + y[3] * v[3]) / r1 + v[1] * r2 + a2 * (y[4] * v[4] + y[5] * v[5]) / r2
        model._risk_grad(y, target, 0.0, g0)
        row = out[j]
        row[0], row[1], row[2] = o1, o2, o1 + o2
        row[3], row[4] = a1 * a1 - r1 * r1, a2 * a2 - r2 * r2
        row[5], row[6] = a1 / r1, a2 / r2
        row[7], row[8] = math.atan2(y[3], y[2]), math.atan2(y[5], y[4])
        row[9], row[10], row[11], row[12], row[13] = delta, dist, e_norm, rate, bdot
        row[14], row[15] = -g0[0] / r1, -g0[1] / r2


def trajectory_observables(states: npt.ArrayLike, task: str, lam: float) -> dict[str, np.ndarray]:
    """The columns :data:`OBS_COLUMNS` for each row of ``states`` (compiled; same formulas as
    :func:`observables`, :func:`log_delta_rate`, :func:`amplitude_rate`, :func:`radial_gains`)."""
    st = np.ascontiguousarray(np.atleast_2d(np.asarray(states, dtype=float)))
    if st.ndim != 2 or st.shape[1] != 6 or not np.all(np.isfinite(st)):
        raise ValueError(f"states must be a finite array of shape (m, 6); got shape {st.shape}")
    if np.any(np.hypot(st[:, 2], st[:, 3]) == 0) or np.any(np.hypot(st[:, 4], st[:, 5]) == 0):
        raise ValueError("states: hidden vectors w1 and w2 must be nonzero")
    if np.any(st[:, 0] == 0) or np.any(st[:, 1] == 0):
        raise ValueError("states: output weights a1, a2 must be nonzero")
    target = model.is_target(task)
    lam = model._check_lam(lam)
    out = np.empty((st.shape[0], len(OBS_COLUMNS)))
    _obs_batch(st, target, lam, out)
    return {name: out[:, i].copy() for i, name in enumerate(OBS_COLUMNS)}


def _check_times(times: npt.ArrayLike) -> np.ndarray:
    ts = np.asarray(times, dtype=float)
    if ts.ndim != 1 or ts.size < 2 or not np.all(np.isfinite(ts)) or ts[0] < 0 or np.any(np.diff(ts) <= 0):
        raise ValueError(f"times must be a finite increasing 1-d array of >= 2 times >= 0; got {times!r}")
    return np.ascontiguousarray(ts)


def _check_state(theta: npt.ArrayLike, name: str = "theta0") -> np.ndarray:
    th = reals(theta, name, (6,), what=" = (a1, a2, w1x, w1y, w2x, w2y)")
    if math.hypot(th[2], th[3]) == 0.0 or math.hypot(th[4], th[5]) == 0.0:
        raise ValueError(f"{name}: hidden vectors w1 and w2 must be nonzero; got {theta!r}")
    return th


def flow(
    theta0: npt.ArrayLike,
    task: str,
    lam: float,
    times: npt.ArrayLike,
    *,
    rtol: float = 1e-12,
    atol: float = 1e-300,
    h_init: float = 1e-3,
    max_steps: int = 2_000_000,
    coords: str = "cartesian",
) -> FlowResult:
    """Population gradient flow of ``F = R_task + (lam/2)|theta|^2`` from ``theta0``, sampled at ``times``.

    ``times[0]`` is the time of ``theta0``; every output time is hit exactly (the step is cut
    there). ``rtol`` must lie in [1e-15, 1e-3]; ``atol`` > 0 is the absolute floor of the
    error scale. Raises ``RuntimeError`` when ``max_steps`` is exhausted or the step size
    underflows (a hidden vector reaching zero, for instance).

    ``coords="logpolar"``: ``theta0`` and the states are ``(log a1, log a2, log r1, log r2, log alpha,
    log beta)`` (see :func:`to_logpolar`; unit 1 above e1, unit 2 below it) and the field is the
    closed-form polar one of :func:`_logpolar_field`, for units whose products leave the float64 range.
    """
    kind = 0 if choice(coords, "coords", ("cartesian", "logpolar")) == "cartesian" else 1
    if kind == 0:
        th = _check_state(theta0)
    else:
        th = reals(theta0, "theta0", (6,), what=" of log-polar coordinates")
    target = model.is_target(task)
    lam = model._check_lam(lam)
    ts = _check_times(times)
    rtol = real(rtol, "rtol", 1e-15, 1e-3)
    atol = positive(atol, "atol")
    h_init = positive(h_init, "h_init")
    max_steps = integer(max_steps, "max_steps", 1)
    res, steps, rejected = _integrate(
        kind, th, ts, target, lam, rtol, atol, h_init, max_steps, _A, _B, _C, _E3, _E5, _NS
    )
    if steps == -1:
        raise RuntimeError(f"flow: max_steps = {max_steps} exhausted before t = {ts[-1]}")
    if steps == -2:
        raise RuntimeError("flow: step size underflow (the field is singular or not finite along the path)")
    return FlowResult(ts, res, int(steps), int(rejected))


def field(theta: npt.ArrayLike, task: str, lam: float) -> np.ndarray:
    """The population field ``-grad F`` (the right-hand side integrated by :func:`flow`)."""
    return -model.objective_grad(theta, task, lam)


def _cross(u: np.ndarray, v: np.ndarray) -> float:
    """u x v with compensated products (the model's Dekker/Kahan cross product)."""
    return float(model._cross(float(u[0]), float(u[1]), float(v[0]), float(v[1])))


def separation(theta: npt.ArrayLike) -> float:
    """Angle delta in [0, pi] between w_1 and w_2, by atan2 of a compensated cross product."""
    th = _check_state(theta, "theta")
    u, v = th[2:4], th[4:6]
    return math.atan2(abs(_cross(u, v)), float(u @ v))


def observables(theta: npt.ArrayLike) -> dict[str, float]:
    """omega_i, B, k_i, h_i, the angles vartheta_i from e1, delta, d = |w1/a1 - w2/a2| and |e| (Section 7)."""
    th = _check_state(theta, "theta")
    a = th[:2]
    w = (th[2:4], th[4:6])
    r = np.array([math.hypot(*w[0]), math.hypot(*w[1])])
    if a[0] == 0.0 or a[1] == 0.0:
        raise ValueError(f"theta: output weights a1, a2 must be nonzero; got {theta!r}")
    omega = a * r
    u1, u2 = w[0] / a[0], w[1] / a[1]
    # d^2 = (m1 - m2)^2 + 2 m1 m2 (1 - cos delta), 1 - cos delta = 2 sin^2(delta/2): no cancellation
    delta = separation(th)
    m = r / np.abs(a)
    d = math.sqrt((m[0] - m[1]) ** 2 + 4.0 * m[0] * m[1] * math.sin(delta / 2) ** 2)
    # |e| = sqrt2 |z1 ^ z2| / |z1 + z2| for z_i = (a_i, w_i) in R^3 (component of d_z orthogonal to h)
    z1, z2 = np.array([a[0], *w[0]]), np.array([a[1], *w[1]])
    wedge = np.array(
        [
            _cross(z1[[0, 1]], z2[[0, 1]]),
            _cross(z1[[0, 2]], z2[[0, 2]]),
            _cross(z1[[1, 2]], z2[[1, 2]]),
        ]
    )
    e_norm = math.sqrt(2.0) * float(np.linalg.norm(wedge)) / float(np.linalg.norm(z1 + z2))
    return {
        "omega1": float(omega[0]),
        "omega2": float(omega[1]),
        "B": float(omega.sum()),
        "k1": float(a[0] ** 2 - r[0] ** 2),
        "k2": float(a[1] ** 2 - r[1] ** 2),
        "h1": float(a[0] / r[0]),
        "h2": float(a[1] / r[1]),
        "theta1": math.atan2(w[0][1], w[0][0]),
        "theta2": math.atan2(w[1][1], w[1][0]),
        "delta": delta,
        "d": d,
        "e": e_norm,
        "u_diff": float(np.linalg.norm(u1 - u2)),
    }


def radial_gains(theta: npt.ArrayLike, task: str) -> np.ndarray:
    """q_i = -dR/domega_i, the derivative along a_i w_i at fixed direction (Appendix 14): -(dR/da_i)/|w_i|."""
    th = _check_state(theta, "theta")
    grad = model.objective_grad(th, task, 0.0)
    return np.array([-grad[0] / math.hypot(th[2], th[3]), -grad[1] / math.hypot(th[4], th[5])])


def log_delta_rate(theta: npt.ArrayLike, task: str, lam: float) -> float:
    """d/dt log delta along the flow: (c' dd - c dd') / ((c^2 + dd^2) delta), c = |w1 x w2|, dd = w1.w2."""
    th = _check_state(theta, "theta")
    v = field(th, task, lam)
    u, w = th[2:4], th[4:6]
    du, dw = v[2:4], v[4:6]
    c_signed = _cross(u, w)
    sgn = 1.0 if c_signed >= 0 else -1.0
    c = abs(c_signed)
    dc = sgn * (_cross(du, w) + _cross(u, dw))
    dd = float(u @ w)
    ddd = float(du @ w + u @ dw)
    delta = math.atan2(c, dd)
    nrm = math.hypot(c, dd)
    return (dc * (dd / nrm) - (c / nrm) * ddd) / (nrm * delta)


def amplitude_rate(theta: npt.ArrayLike, task: str, lam: float) -> float:
    """B' = sum_i (a_i' |w_i| + a_i w_i.w_i'/|w_i|) along the flow."""
    th = _check_state(theta, "theta")
    v = field(th, task, lam)
    out = 0.0
    for i in range(2):
        w, dw = th[2 + 2 * i : 4 + 2 * i], v[2 + 2 * i : 4 + 2 * i]
        r = math.hypot(*w)
        out += v[i] * r + th[i] * float(w @ dw) / r
    return out


_E_A = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 0.0]) / math.sqrt(2.0)  # S = {s1 sqrt2 e_A + s2 sqrt2 e_B, s1^2 + s2^2 = B_s}
_E_B = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0]) / math.sqrt(2.0)


def source_normal_coordinates(states: npt.ArrayLike, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Nearest points of the source manifold S and the normal displacements from them (Appendices 11.2, 15).

    ``S = {a_i = r_i = sqrt(omega_i), w_i = r_i e1, omega_1 + omega_2 = B_s}``, ``B_s = 1 - 2 lam``, is the
    arc of radius ``sqrt(2 B_s)`` about 0 in the plane of ``e_A = (1, 0, 1, 0, 0, 0)/sqrt2`` and
    ``e_B = (0, 1, 0, 0, 1, 0)/sqrt2``; the nearest point of a state is its projection onto that plane scaled
    to the radius. Returns ``share`` (omega_1 / B_s at the nearest point, the allocation
    ``l_a = (1/2) log(share / (1 - share))``) and ``xi`` = state - nearest point, orthogonal to S there.

    >>> share, xi = source_normal_coordinates([[0.3, 0.9, 0.3, 0.01, 0.9, 0.0]], 0.05)
    >>> round(float(share[0]), 6), bool(abs(xi[0] @ [-0.9, 0.3, -0.9, 0.0, 0.3, 0.0]) < 1e-15)
    (0.1, True)
    """
    lam = real(lam, "lam", 0.0, 0.5, hi_open=True)  # B_s = 1 - 2 lam > 0
    th = np.atleast_2d(np.asarray(states, dtype=float))
    if th.ndim != 2 or th.shape[1] != 6 or not np.all(np.isfinite(th)):
        raise ValueError(f"states must be finite rows of 6 parameters (a1, a2, w1x, w1y, w2x, w2y); got {states!r}")
    x, y = th @ _E_A, th @ _E_B
    if np.any((x <= 0.0) | (y <= 0.0)):
        raise ValueError("states must project onto the interior of S (a1 + w1x > 0 and a2 + w2x > 0)")
    n = np.hypot(x, y)
    radius = math.sqrt(2.0 * (1.0 - 2.0 * lam))
    nearest = radius * (np.outer(x / n, _E_A) + np.outer(y / n, _E_B))
    return (x / n) ** 2, th - nearest


def from_polar(a1: float, a2: float, r1: float, r2: float, th1: float, th2: float) -> np.ndarray:
    """Cartesian state (a1, a2, w1, w2) with w_i = r_i (cos th_i, sin th_i)."""
    for name, val in (("a1", a1), ("a2", a2), ("r1", r1), ("r2", r2)):
        positive(val, name)
    for name, val in (("th1", th1), ("th2", th2)):
        if not (isinstance(val, (int, float, np.floating)) and math.isfinite(val)):
            raise ValueError(f"{name} must be a finite angle; got {val!r}")
    return np.array([a1, a2, r1 * math.cos(th1), r1 * math.sin(th1), r2 * math.cos(th2), r2 * math.sin(th2)])


def labelled(theta: npt.ArrayLike) -> np.ndarray:
    """``theta`` with the units swapped when w_2 (not w_1) lies above e1 (D and D0 allow either labelling)."""
    th = _check_state(theta, "theta")
    if math.atan2(th[3], th[2]) < 0 < math.atan2(th[5], th[4]):
        th = th[[1, 0, 4, 5, 2, 3]]
    return th


def to_logpolar(theta: npt.ArrayLike) -> np.ndarray:
    """(log a1, log a2, log r1, log r2, log alpha, log beta) of a Cartesian state with a_i > 0, w_1 above
    e1 and w_2 below it (vartheta_1 = alpha > 0 > vartheta_2 = -beta, alpha + beta < pi: the set D)."""
    th = labelled(theta)
    t1, t2 = math.atan2(th[3], th[2]), math.atan2(th[5], th[4])
    if not (th[0] > 0 and th[1] > 0 and t1 > 0 > t2 and t1 - t2 < math.pi):
        raise ValueError(
            f"theta must have a_i > 0, vartheta_1 > 0 > vartheta_2, vartheta_1 - vartheta_2 < pi; got {theta!r}"
        )
    r1, r2 = math.hypot(th[2], th[3]), math.hypot(th[4], th[5])
    return np.array([math.log(th[0]), math.log(th[1]), math.log(r1), math.log(r2), math.log(t1), math.log(-t2)])


def from_logpolar(y: npt.ArrayLike) -> np.ndarray:
    """Cartesian state of log-polar coordinates (inverse of :func:`to_logpolar`; may underflow to 0)."""
    la1, la2, lr1, lr2, lal, lbe = (float(v) for v in np.asarray(y, dtype=float))
    r1, r2, al, be = math.exp(lr1), math.exp(lr2), math.exp(lal), math.exp(lbe)
    return np.array(
        [math.exp(la1), math.exp(la2), r1 * math.cos(al), r1 * math.sin(al), r2 * math.cos(be), -r2 * math.sin(be)]
    )


def logpolar_observables(y: npt.ArrayLike) -> dict[str, np.ndarray]:
    """log omega_i, B, k_i (may underflow), log h_i, alpha, beta, delta for rows of log-polar states."""
    Y = np.atleast_2d(np.asarray(y, dtype=float))
    if Y.ndim != 2 or Y.shape[1] != 6:
        raise ValueError(f"y must have shape (m, 6); got {Y.shape}")
    la, lr, lang = Y[:, 0:2], Y[:, 2:4], Y[:, 4:6]
    lom = la + lr
    ang = np.exp(lang)
    return {
        "log_omega1": lom[:, 0],
        "log_omega2": lom[:, 1],
        "B": np.exp(lom).sum(axis=1),
        "k1": np.exp(2 * la[:, 0]) - np.exp(2 * lr[:, 0]),
        "k2": np.exp(2 * la[:, 1]) - np.exp(2 * lr[:, 1]),
        "log_h1": la[:, 0] - lr[:, 0],
        "log_h2": la[:, 1] - lr[:, 1],
        "alpha": ang[:, 0],
        "beta": ang[:, 1],
        "delta": ang.sum(axis=1),
    }
