"""Float64 population quantities of the two-unit ReLU model on the disk.

Parameters are ``theta = (a1, a2, w1[0], w1[1], w2[0], w2[1])``; the predictor is
``f(x) = a1 relu(w1.x) + a2 relu(w2.x)`` and inputs are uniform on the disk of radius 2
(E|X|^2 = 2). Risks are ``R = E[(f(X) - y(X))^2] / 2`` with source label ``relu(x1)``
and target label ``|x|``; the objectives add ``lam/2 |theta|^2``.

The leaf functions are numba-compiled (``cache=True``) so the simulators reuse them;
the public functions validate their inputs and raise ``ValueError`` naming the
parameter. Cancellation is avoided at both ends of [0, pi]: near 0 nothing cancels,
near pi the kernel is evaluated from s = pi - t (split into a double-double pi) by a
series, and the Cartesian kernel uses ``atan2`` and ``x - atan(x)`` by series.

>>> round(float(J(0.0)), 15), round(float(g(np.pi / 2)), 15)
(0.5, 0.25)
>>> source_risk(np.array([0.0, 0.0, 1.0, 0.0, 0.0, 1.0]))
0.25
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numba import njit

from numerics import validation as V

TWO_PI = 2.0 * math.pi
PI_HI = math.pi
PI_LO = 1.2246467991473532e-16  # pi - PI_HI to double precision
Q = 2.0 / math.pi  # E[relu(e1.X)|X|]; derived in derivations.rare_gates.kernels.q_constant
TASKS = ("source", "target")


@njit(cache=True)
def _sin_minus_x_cos(s):
    """sin(s) - s cos(s) without cancellation for small s (series below 0.5)."""
    if s >= 0.5:
        return math.sin(s) - s * math.cos(s)
    s2 = s * s
    term = s * s2 / 3.0  # k = 1 term: 2k s^(2k+1)/(2k+1)!
    total = 0.0
    k = 1
    while k < 20:
        total += term
        # ratio of term k+1 to term k: -(k+1)/k * s^2 / ((2k+2)(2k+3))
        term *= -(k + 1.0) / k * s2 / ((2.0 * k + 2.0) * (2.0 * k + 3.0))
        k += 1
    return total


@njit(cache=True)
def _x_minus_atan(x):
    """x - atan(x) for x >= 0 without cancellation for small x (series below 0.25)."""
    if x >= 0.25:
        return x - math.atan(x)
    x2 = x * x
    total = 0.0
    term = x * x2
    k = 1
    while k < 40:
        total += term / (2.0 * k + 1.0) * (1.0 if k % 2 == 1 else -1.0)
        term *= x2
        k += 1
    return total


@njit(cache=True)
def _J(t):
    if t <= 0.5 * math.pi:
        return (math.sin(t) + (math.pi - t) * math.cos(t)) / TWO_PI
    s = (PI_HI - t) + PI_LO
    return _sin_minus_x_cos(s) / TWO_PI


@njit(cache=True)
def _g(t):
    if t <= 0.5 * math.pi:
        return (math.pi - t) * math.sin(t) / TWO_PI
    s = (PI_HI - t) + PI_LO
    return s * math.sin(s) / TWO_PI


@njit(cache=True)
def _two_prod(a, b):
    """Dekker's TwoProduct: a*b = p + e exactly (Veltkamp splitting, no FMA needed)."""
    p = a * b
    split = 134217729.0  # 2**27 + 1
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@njit(cache=True)
def _cross(u0, u1, v0, v1):
    """u0 v1 - u1 v0 with a relative error of a few ulp even when the products cancel (Kahan/Dekker)."""
    p1, e1 = _two_prod(u0, v1)
    p2, e2 = _two_prod(u1, v0)
    return (p1 - p2) + (e1 - e2)


@njit(cache=True)
def _K(u0, u1, v0, v1):
    """E[relu(u.X) relu(v.X)] = (|c| + (pi - t) d) / (2 pi), c = u x v, d = u.v.

    The cross product is compensated, so nearly opposite u, v (where K ~ c^3/(6 pi d^2))
    keep their relative accuracy.
    """
    c = abs(_cross(u0, u1, v0, v1))
    d = u0 * v0 + u1 * v1
    if c == 0.0 and d <= 0.0:
        return 0.0
    if d >= 0.0:
        return (c + (math.pi - math.atan2(c, d)) * d) / TWO_PI
    # obtuse: pi - t = atan2(c, |d|); c + (pi - t) d = c - |d| atan2(c, |d|)
    ad = -d
    if c >= 0.25 * ad:  # x = c/|d| >= 0.25: no cancellation worth a series, and no overflow of c/|d|
        return (c - ad * math.atan2(c, ad)) / TWO_PI
    return ad * _x_minus_atan(c / ad) / TWO_PI


@njit(cache=True)
def _gradK(u0, u1, v0, v1, out):
    """Gradient of K(u, v) in u: ((|c|/|u|) u/|u| + (pi - t) v) / (2 pi); u must be nonzero.

    Written with |u| = hypot(u0, u1) rather than |u|^2, which would underflow for |u| < 1e-154.
    """
    c = abs(_cross(u0, u1, v0, v1))
    d = u0 * v0 + u1 * v1
    pmt = math.atan2(c, -d)  # pi - t, accurate at both ends
    nu = math.hypot(u0, u1)
    cn = c / nu
    out[0] = (cn * (u0 / nu) + pmt * v0) / TWO_PI
    out[1] = (cn * (u1 / nu) + pmt * v1) / TWO_PI


@njit(cache=True)
def _risk(theta, target):
    a1, a2 = theta[0], theta[1]
    k11 = 0.5 * (theta[2] ** 2 + theta[3] ** 2)
    k22 = 0.5 * (theta[4] ** 2 + theta[5] ** 2)
    k12 = _K(theta[2], theta[3], theta[4], theta[5])
    quad = a1 * a1 * k11 + a2 * a2 * k22 + 2.0 * a1 * a2 * k12
    if target:
        lin = Q * (a1 * math.hypot(theta[2], theta[3]) + a2 * math.hypot(theta[4], theta[5]))
        return 0.5 * (quad - 2.0 * lin + 2.0)
    lin = a1 * _K(theta[2], theta[3], 1.0, 0.0) + a2 * _K(theta[4], theta[5], 1.0, 0.0)
    return 0.5 * (quad - 2.0 * lin + 0.5)


@njit(cache=True)
def _risk_grad(theta, target, lam, out):
    """Gradient of R + lam/2 |theta|^2 into ``out`` (hidden vectors must be nonzero)."""
    a = (theta[0], theta[1])
    w = ((theta[2], theta[3]), (theta[4], theta[5]))
    tmp = np.empty(2)
    for i in range(2):
        j = 1 - i
        wi, wj = w[i], w[j]
        kii = 0.5 * (wi[0] ** 2 + wi[1] ** 2)
        kij = _K(wi[0], wi[1], wj[0], wj[1])
        norm_i = math.hypot(wi[0], wi[1])
        if target:
            ky = Q * norm_i
        else:
            ky = _K(wi[0], wi[1], 1.0, 0.0)
        out[i] = a[i] * kii + a[j] * kij - ky + lam * a[i]
        gx = 0.5 * a[i] * a[i] * wi[0]
        gy = 0.5 * a[i] * a[i] * wi[1]
        _gradK(wi[0], wi[1], wj[0], wj[1], tmp)
        gx += a[i] * a[j] * tmp[0]
        gy += a[i] * a[j] * tmp[1]
        if target:
            gx -= a[i] * Q * wi[0] / norm_i
            gy -= a[i] * Q * wi[1] / norm_i
        else:
            _gradK(wi[0], wi[1], 1.0, 0.0, tmp)
            gx -= a[i] * tmp[0]
            gy -= a[i] * tmp[1]
        out[2 + 2 * i] = gx + lam * wi[0]
        out[3 + 2 * i] = gy + lam * wi[1]


def _check_angle(t: npt.ArrayLike) -> np.ndarray:
    return V.reals(t, "t", None, 0.0, math.pi, hi_text="pi")


def _check_theta(theta: npt.ArrayLike) -> np.ndarray:
    return V.reals(theta, "theta", (6,), what=" = (a1, a2, w1x, w1y, w2x, w2y)")


def _check_lam(lam: float) -> float:
    return V.real(lam, "lam (weight decay)", 0.0)


def is_target(task: str) -> bool:
    """Whether ``task`` is ``'target'`` (else ``'source'``); a ValueError naming ``task`` otherwise."""
    return V.choice(task, "task", TASKS) == "target"


def J(t: npt.ArrayLike) -> np.ndarray | float:
    """J(t) = (sin t + (pi - t) cos t) / (2 pi) for t in [0, pi] (Appendix 14), elementwise."""
    arr = _check_angle(t)
    return np.vectorize(_J, otypes=[float])(arr) if arr.ndim else _J(float(arr))


def g(t: npt.ArrayLike) -> np.ndarray | float:
    """g(t) = -J'(t) = (pi - t) sin t / (2 pi) for t in [0, pi] (Appendix 14), elementwise."""
    arr = _check_angle(t)
    return np.vectorize(_g, otypes=[float])(arr) if arr.ndim else _g(float(arr))


def kernel(u: npt.ArrayLike, v: npt.ArrayLike) -> float:
    """E[relu(u.X) relu(v.X)] = |u||v| J(angle(u, v)) for u, v in R^2."""
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    for name, z in (("u", u), ("v", v)):
        if z.shape != (2,) or not np.all(np.isfinite(z)):
            raise ValueError(f"{name} must be a finite vector of shape (2,); got {z!r}")
    return _K(u[0], u[1], v[0], v[1])


def source_risk(theta: npt.ArrayLike) -> float:
    """Population source risk E[(f - relu(x1))^2]/2 (no weight decay)."""
    return _risk(_check_theta(theta), False)


def target_risk(theta: npt.ArrayLike) -> float:
    """Population target risk E[(f - |x|)^2]/2 (no weight decay); the paper's R_t."""
    return _risk(_check_theta(theta), True)


def objective(theta: npt.ArrayLike, task: str, lam: float) -> float:
    """F = R_task + lam/2 |theta|^2, ``task`` in {'source', 'target'}."""
    th = _check_theta(theta)
    target = is_target(task)
    return _risk(th, target) + 0.5 * _check_lam(lam) * float(th @ th)


def objective_grad(theta: npt.ArrayLike, task: str, lam: float) -> np.ndarray:
    """Gradient of :func:`objective` (the negative population field); hidden vectors must be nonzero."""
    th = _check_theta(theta)
    target = is_target(task)
    lam = _check_lam(lam)
    if math.hypot(th[2], th[3]) == 0.0 or math.hypot(th[4], th[5]) == 0.0:
        raise ValueError("theta: hidden vectors w1 and w2 must be nonzero for the gradient")
    out = np.empty(6)
    _risk_grad(th, target, lam, out)
    return out
