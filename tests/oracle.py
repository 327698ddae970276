"""Independent mpmath oracle for the float64 quantities of numerics.rare_gates.model.

Every function takes float64 inputs, converts them to their *exact* binary values
(``mpmath.mpf(float)`` is exact) and evaluates the paper's formulas (Appendix 14)

    J(t) = (sin t + (pi - t) cos t) / (2 pi),   g(t) = (pi - t) sin t / (2 pi),
    K(u, v) = (|u x v| + (pi - angle(u, v)) u.v) / (2 pi) = |u||v| J(angle(u, v)),

directly, with no series and no branch, at ``DPS`` = 50 significant digits plus guard
digits: near t = pi, sin t and pi - t (or atan2 near pi) are only accurate to an
absolute 10^-dps, i.e. they lose log10(1/s) digits relative (s = pi - t), and the
numerator of J then cancels from O(s) down to s^3/3, losing 2 log10(1/s) more; so
3 log10(1/s) + 10 digits are added. The cross and dot products are formed exactly
(``mpmath.fmul/fsub/fneg(..., exact=True)``; note that ``abs`` of an mpf rounds to
the working precision, so it is not used on them).
Precision is always local (``mpmath.workdps``), never ``mp.dps``.

>>> import math
>>> float(J_mp(0.0)), float(g_mp(math.pi / 2))
(0.5, 0.25)
"""

from __future__ import annotations

import mpmath

DPS = 50  # target significant digits of every oracle value


def _guard(s) -> int:
    """Guard digits for a distance s to pi (or tan of it): 3 log10(1/s) + 10 (module docstring)."""
    if s == 0 or abs(s) >= 1:
        return 10
    return int(3 * -mpmath.log10(abs(s))) + 10


def _pi_minus(t) -> mpmath.mpf:
    """pi - t for an exact t, to about 10 digits at least (enough to size the guard)."""
    with mpmath.workdps(DPS + 40):  # pi - t loses <= 17 digits for t near float(pi)
        return +(mpmath.pi - t)


def J_mp(t) -> mpmath.mpf:
    """J at the exact value of ``t`` (a float or an mpf), to about DPS digits."""
    t = mpmath.mpf(t)
    with mpmath.workdps(DPS + _guard(_pi_minus(t))):
        return (mpmath.sin(t) + (mpmath.pi - t) * mpmath.cos(t)) / (2 * mpmath.pi)


def g_mp(t) -> mpmath.mpf:
    """g at the exact value of ``t`` (no cancellation: a plain product)."""
    t = mpmath.mpf(t)
    with mpmath.workdps(DPS + _guard(_pi_minus(t))):
        return (mpmath.pi - t) * mpmath.sin(t) / (2 * mpmath.pi)


def cross_dot(u, v) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Exact |u x v| and u.v of the binary values of u, v (no rounding at all)."""
    u0, u1, v0, v1 = (mpmath.mpf(float(z)) for z in (u[0], u[1], v[0], v[1]))
    c = mpmath.fsub(mpmath.fmul(u0, v1, exact=True), mpmath.fmul(u1, v0, exact=True), exact=True)
    if c < 0:
        c = mpmath.fneg(c, exact=True)
    d = mpmath.fadd(mpmath.fmul(u0, v0, exact=True), mpmath.fmul(u1, v1, exact=True), exact=True)
    return c, d


def K_mp(u, v) -> mpmath.mpf:
    """E[relu(u.X) relu(v.X)] for X uniform on the disk of radius 2, exact inputs."""
    c, d = cross_dot(u, v)
    if c == 0 and d <= 0:
        return mpmath.mpf(0)
    # for d < 0 the sum c + (pi - t) d cancels down to c (c/|d|)^2 / 3
    guard = _guard(c / d) if d < 0 else 10
    with mpmath.workdps(DPS + guard):
        t = mpmath.atan2(c, d)
        return (c + (mpmath.pi - t) * d) / (2 * mpmath.pi)


def risk_mp(theta, task: str) -> mpmath.mpf:
    """R = E[(f - y)^2]/2 from the Gram expansion, with E relu(x1)^2 = 1/2, E|X|^2 = 2,
    E[relu(w.X)|X|] = (2/pi)|w| (uniform direction, E R^2 = 2)."""
    a1, a2, w1x, w1y, w2x, w2y = (mpmath.mpf(float(z)) for z in theta)
    w1, w2 = (w1x, w1y), (w2x, w2y)
    k11, k22, k12 = K_mp(w1, w1), K_mp(w2, w2), K_mp(w1, w2)
    with mpmath.workdps(DPS + 20):
        quad = a1 * a1 * k11 + a2 * a2 * k22 + 2 * a1 * a2 * k12
        if task == "target":
            q = 2 / mpmath.pi
            lin = q * (a1 * mpmath.hypot(w1x, w1y) + a2 * mpmath.hypot(w2x, w2y))
            const = mpmath.mpf(2)
        else:
            e1 = (1.0, 0.0)
            lin = a1 * K_mp(w1, e1) + a2 * K_mp(w2, e1)
            const = mpmath.mpf(1) / 2
        return (quad - 2 * lin + const) / 2


def risk_scale_mp(theta, task: str) -> mpmath.mpf:
    """Sum of the magnitudes of the terms of the risk (the scale of its rounding error)."""
    a1, a2, w1x, w1y, w2x, w2y = (abs(mpmath.mpf(float(z))) for z in theta)
    n1, n2 = mpmath.hypot(w1x, w1y), mpmath.hypot(w2x, w2y)
    quad = (a1 * n1 + a2 * n2) ** 2 / 2
    lin = (a1 * n1 + a2 * n2) * (2 / mpmath.pi if task == "target" else mpmath.mpf(1) / 2)
    const = 2 if task == "target" else mpmath.mpf(1) / 2
    return (quad + 2 * lin + const) / 2
