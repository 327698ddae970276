"""Double-double (about 106-bit significand) online SGD for the rare-gates runs (Appendix 19).

The extended-precision replay of :func:`numerics.rare_gates.simulate.simulate_extended`.
A double-double (dd) number is an unevaluated sum ``hi + lo`` of two float64 with
``|lo| <= ulp(hi) / 2``; its unit roundoff is about ``2**-106 = 1.2e-32``. The error-free
transformations are Knuth's ``two_sum`` and Dekker's ``two_prod`` with Veltkamp splitting
(``2**27 + 1``), FMA-free: Python 3.11 has no ``math.fma`` and numba offers none, and
without ``fastmath`` LLVM contracts nothing into FMA, so the bits are the same on every
x86-64 machine.

What is dd. The parameters ``theta = (a1, a2, w1x, w1y, w2x, w2y)`` (state, hi and lo), every
operation of the update (``z_i = w_i.x``, the residual ``r = f(x) - y``, the batch sums of
``(r h1, r h2, a1 q1 x, a2 q2 x)``, the division by ``b``, weight decay and the step), the
gates ``w_i.x > 0`` (the sign of the dd value), the analytic target risk of the recovery
test (``K`` from a dd ``atan2``: a float64 ``atan2`` corrected by one Newton step with dd
sine and cosine; dd square roots) and the angle between w1 and w2 (``atan2(|w1 x w2|, w1.w2)``
with the cross product in dd, so an angle of 1e-25 keeps about 7 digits).

What is float64. The inputs: each one is *exactly* the float64 input of the float64
kernels (:func:`numerics.rare_gates.sim_rng._xoshiro` and
:func:`~numerics.rare_gates.sim_rng._disk_point`, the same two draws per input in the same
order), taken as exact real numbers, and so is the label ``|x|`` (the float64 ``rho``).
``eta``, ``lam`` and the threshold are the float64 values. A run is therefore comparable
with the float64 run of the same stream input by input; the two differ by arithmetic only.

Accuracy (tested against mpmath at 40 digits in ``tests/test_dd_kernel.py``): the state
after up to 400 updates agrees to a relative ``1e-30`` of its largest coordinate
(measured: 2e-32 to 9e-32 at ``b`` = 1, 3, 16, 64), the dd risk to ``1e-30`` absolute and
the dd angle to ``1e-30`` absolute.

Risk test. A check first evaluates the float64 risk ``model._risk`` of the hi parts; when it
is farther than ``1e-9`` times the size of the risk's terms from the threshold (its error
is about ``1e-15`` of that), the outcome is the dd outcome and the dd risk is skipped;
otherwise (and whenever a trace is recorded, or ``exact_checks``) the dd risk decides.

Speed: scalar, one stream at a time per thread (blocks of streams on the float64 kernels' threads), about 9e6
inputs/s on one thread, 5-20% of the vectorised float64 kernel; see
``python -m numerics.bench`` (the row ``sgd_target_extended``).

The angle floor. In float64 the angle of an unrecovered run stops decaying near 1e-15 (the
coordinates' resolution); a dd run resolves angles to about 1e-31, so through t = 1000 its
angle keeps decaying at rate about lambda (to about 1e-27 from delta0 = 1e-5). The 80-bit
level 1e-19 is therefore passed, not reached, here. :func:`replay_rounded` measures it: the
same replay with the state rounded to 64 significant bits after every update (the storage
of an 80-bit run) stops near 1e-19, and rounded to 53 bits near the float64 floor.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numba import njit

from numerics.rare_gates.model import _risk
from numerics.rare_gates.sim_kernels import (
    NOISE_NONE,
    SGDParams,
    _check_out,
    _input,
    _row_blocks,
    run_blocks,
    sgd_params,
)
from numerics.rare_gates.sim_rng import _disk_point, _xoshiro
from numerics.validation import integer, positive, real

_SPLIT = 134217729.0  # 2**27 + 1 (Veltkamp)
PI_HI, PI_LO = 3.141592653589793, 1.2246467991473532e-16  # pi as dd
INV_2PI_HI, INV_2PI_LO = 0.15915494309189535, -9.839338337591243e-18  # 1/(2 pi) as dd
Q_HI, Q_LO = 0.6366197723675814, -3.935735335036497e-17  # 2/pi (model.Q) as dd
_RISK_SLACK = 1e-9  # float64 pre-check margin, relative to the size of the risk's terms
_NTERMS = 11  # Taylor terms of sin and cos on |x| <= pi/16 (next term below 1e-33)


def _inv_factorials(n: int) -> tuple[np.ndarray, np.ndarray]:
    """1/k! for k < n as dd (hi, lo), exactly rounded (from fractions)."""
    hi, lo = np.empty(n), np.empty(n)
    f = Fraction(1)
    for k in range(n):
        if k:
            f /= k
        hi[k] = float(f)
        lo[k] = float(f - Fraction(hi[k]))
    return hi, lo


_IF_HI, _IF_LO = _inv_factorials(2 * _NTERMS + 2)


class DDOutputs(NamedTuple):
    """The dd kernels' per-stream outputs, one argument (as ``sim_kernels.Outputs``, with the state as hi + lo)."""

    hi: np.ndarray  # (S, 6) final state, hi parts
    lo: np.ndarray  # (S, 6) final state, lo parts
    state: np.ndarray  # (S, 4) uint64 final input generator states
    rec: np.ndarray  # (S,) int64 update count at recovery, -1 never
    first: np.ndarray  # (S,) int64 1-based update of the first disagreement, -1 never
    disagreements: np.ndarray  # (S,) int64 disagreements sampled
    updates: np.ndarray  # (S,) int64 updates performed
    trace: np.ndarray  # (S, checks, 2) (risk, angle) hi parts per check; checks = 0 for none


def dd_outputs(streams: int, checks: int = 0) -> DDOutputs:
    """Fresh :class:`DDOutputs` for ``streams`` streams, tracing the first ``checks`` checks (NaN / -2 / 0 filled,
    values no kernel writes, as :func:`numerics.rare_gates.sim_kernels.outputs`)."""
    rec, first, count, updates = np.full((4, streams), -2, dtype=np.int64)
    hi, lo = np.full((2, streams, 6), np.nan)
    trace = np.full((streams, checks, 2), np.nan)
    return DDOutputs(hi, lo, np.zeros((streams, 4), dtype=np.uint64), rec, first, count, updates, trace)


# --- error-free transformations and dd arithmetic ---------------------------------------------------


@njit(cache=True)
def _two_sum(a, b):
    """a + b = s + e exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(cache=True)
def _fast_two_sum(a, b):
    """a + b = s + e exactly when |a| >= |b| (or a = 0) (Dekker)."""
    s = a + b
    return s, b - (s - a)


@njit(cache=True)
def _split(a):
    """Veltkamp: a = h + l with h, l of at most 26 significant bits."""
    t = _SPLIT * a
    h = t - (t - a)
    return h, a - h


@njit(cache=True)
def _two_prod_s(a, ah, al, b, bh, bl):
    """a b = p + e exactly, from the splits (ah, al) of a and (bh, bl) of b (Dekker)."""
    p = a * b
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit(cache=True)
def _two_prod(a, b):
    ah, al = _split(a)
    bh, bl = _split(b)
    return _two_prod_s(a, ah, al, b, bh, bl)


@njit(cache=True)
def _add(ah, al, bh, bl):
    """dd + dd, accurate (relative error about 2 u^2 of the result)."""
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    e += t
    s, e = _fast_two_sum(s, e)
    e += f
    return _fast_two_sum(s, e)


@njit(cache=True)
def _acc(ah, al, bh, bl):
    """dd + dd for sums: absolute error about 2 u^2 (|a| + |b|), as float64 summation in u."""
    s, e = _two_sum(ah, bh)
    e += al + bl
    return _fast_two_sum(s, e)


@njit(cache=True)
def _mul(ah, al, bh, bl):
    """dd * dd."""
    p, e = _two_prod(ah, bh)
    e += ah * bl + al * bh
    return _fast_two_sum(p, e)


@njit(cache=True)
def _mul_d(ah, al, b):
    """dd * double."""
    p, e = _two_prod(ah, b)
    e += al * b
    return _fast_two_sum(p, e)


@njit(cache=True)
def _sqrt(ah, al):
    """sqrt of a dd >= 0 (one Newton step from the float64 root)."""
    if not ah > 0.0:
        return 0.0, 0.0
    s = math.sqrt(ah)
    p, e = _two_prod(s, s)
    rh, rl = _add(ah, al, -p, -e)
    return _fast_two_sum(s, (rh + rl) / (2.0 * s))


@njit(cache=True)
def _le(ah, al, t):
    """dd a <= double t."""
    return ah < t or (ah == t and al <= 0.0)


@njit(cache=True)
def _sincos(t):
    """(sin t, cos t) as dd for a double |t| <= 4: Taylor series at t/16, four double angles."""
    x = t * 0.0625
    x2h, x2l = _two_prod(x, x)
    k = _NTERMS - 1
    sg = 1.0 if k % 2 == 0 else -1.0
    sh, sl = sg * _IF_HI[2 * k + 1], sg * _IF_LO[2 * k + 1]
    ch, cl = sg * _IF_HI[2 * k], sg * _IF_LO[2 * k]
    for k in range(_NTERMS - 2, -1, -1):
        sg = 1.0 if k % 2 == 0 else -1.0
        sh, sl = _mul(sh, sl, x2h, x2l)
        sh, sl = _add(sh, sl, sg * _IF_HI[2 * k + 1], sg * _IF_LO[2 * k + 1])
        ch, cl = _mul(ch, cl, x2h, x2l)
        ch, cl = _add(ch, cl, sg * _IF_HI[2 * k], sg * _IF_LO[2 * k])
    sh, sl = _mul_d(sh, sl, x)
    for _ in range(4):
        dh, dl = _add(ch, cl, -sh, -sl)
        eh, el = _add(ch, cl, sh, sl)
        ph, pl = _mul(sh, sl, ch, cl)
        sh, sl = 2.0 * ph, 2.0 * pl
        ch, cl = _mul(dh, dl, eh, el)
    return sh, sl, ch, cl


@njit(cache=True)
def _atan2(yh, yl, xh, xl):
    """atan2(y, x) as dd for dd y >= 0 (so in [0, pi]): float64 atan2 plus one Newton correction.

    With t0 = atan2(yh, xh) and (s, c) = (sin t0, cos t0) in dd, ``t - t0`` is
    ``atan((y c - x s) / (x c + y s))``; the ratio is below 1e-15 relative to t, so its
    float64 quotient and the first term of the series suffice.
    """
    t0 = math.atan2(yh, xh)
    sh, sl, ch, cl = _sincos(t0)
    ah, al = _mul(yh, yl, ch, cl)
    bh, bl = _mul(xh, xl, sh, sl)
    nh, nl = _add(ah, al, -bh, -bl)
    den = xh * ch + yh * sh
    if den == 0.0:  # y = x = 0
        return t0, 0.0
    return _two_sum(t0, (nh + nl) / den)


@njit(cache=True)
def _cross_dot(th, tl):
    """(|w1 x w2|, w1.w2) as dd from the dd parameters."""
    ah, al = _mul(th[2], tl[2], th[5], tl[5])
    bh, bl = _mul(th[3], tl[3], th[4], tl[4])
    ch, cl = _add(ah, al, -bh, -bl)
    if ch < 0.0:
        ch, cl = -ch, -cl
    ah, al = _mul(th[2], tl[2], th[4], tl[4])
    bh, bl = _mul(th[3], tl[3], th[5], tl[5])
    dh, dl = _add(ah, al, bh, bl)
    return ch, cl, dh, dl


@njit(cache=True)
def _angle_dd(th, tl):
    """Angle in [0, pi] between w1 and w2 as dd (hi, lo)."""
    ch, cl, dh, dl = _cross_dot(th, tl)
    return _atan2(ch, cl, dh, dl)


@njit(cache=True)
def _risk_dd(th, tl):
    """Target risk ``E[(f - |x|)^2] / 2`` of dd parameters as dd (the formulas of ``model._risk``).

    ``K = (|c| + (pi - t) d) / (2 pi)`` with ``pi - t = atan2(|c|, -d)`` in dd; the absolute
    error of K is about u^2 |w1| |w2| at every angle (near-opposite units lose relative
    accuracy of K, not absolute accuracy of the risk).
    """
    a1h, a1l, a2h, a2l = th[0], tl[0], th[1], tl[1]
    ph, pl = _mul(th[2], tl[2], th[2], tl[2])
    qh, ql = _mul(th[3], tl[3], th[3], tl[3])
    n1h, n1l = _add(ph, pl, qh, ql)
    ph, pl = _mul(th[4], tl[4], th[4], tl[4])
    qh, ql = _mul(th[5], tl[5], th[5], tl[5])
    n2h, n2l = _add(ph, pl, qh, ql)
    ch, cl, dh, dl = _cross_dot(th, tl)
    mh, ml = _atan2(ch, cl, -dh, -dl)  # pi - t
    kh, kl = _mul(mh, ml, dh, dl)
    kh, kl = _add(ch, cl, kh, kl)
    kh, kl = _mul(kh, kl, INV_2PI_HI, INV_2PI_LO)
    # quad = a1^2 n1 / 2 + a2^2 n2 / 2 + 2 a1 a2 K
    s1h, s1l = _mul(a1h, a1l, a1h, a1l)
    s1h, s1l = _mul(s1h, s1l, 0.5 * n1h, 0.5 * n1l)
    s2h, s2l = _mul(a2h, a2l, a2h, a2l)
    s2h, s2l = _mul(s2h, s2l, 0.5 * n2h, 0.5 * n2l)
    xh, xl = _mul(a1h, a1l, a2h, a2l)
    xh, xl = _mul(xh, xl, 2.0 * kh, 2.0 * kl)
    quh, qul = _add(s1h, s1l, s2h, s2l)
    quh, qul = _add(quh, qul, xh, xl)
    # lin = Q (a1 |w1| + a2 |w2|)
    r1h, r1l = _sqrt(n1h, n1l)
    r2h, r2l = _sqrt(n2h, n2l)
    u1h, u1l = _mul(a1h, a1l, r1h, r1l)
    u2h, u2l = _mul(a2h, a2l, r2h, r2l)
    lh, ll = _add(u1h, u1l, u2h, u2l)
    lh, ll = _mul(lh, ll, Q_HI, Q_LO)
    rh, rl = _add(quh, qul, -2.0 * lh, -2.0 * ll)
    rh, rl = _add(rh, rl, 2.0, 0.0)
    return 0.5 * rh, 0.5 * rl


@njit(cache=True)
def _risk_scale(th):
    """Size of the risk's terms at the (hi) parameters, for the float64 pre-check margin."""
    n1 = math.hypot(th[2], th[3])
    n2 = math.hypot(th[4], th[5])
    u1, u2 = abs(th[0]) * n1, abs(th[1]) * n2
    return 2.0 + u1 * u1 + u2 * u2 + 2.0 * u1 * u2 + u1 + u2


@njit(cache=True)
def _dd_check(th, tl, m, s, threshold, trace, exact):
    """Risk check m of stream s: record (risk, angle) when due; True if the dd risk <= threshold."""
    due = m < trace.shape[1]
    if not (due or exact):
        r64 = _risk(th, np.bool_(True))  # np.bool_: one compilation with the Python callers' signature
        if abs(r64 - threshold) > _RISK_SLACK * _risk_scale(th):  # False for NaN: then the dd risk decides
            return r64 <= threshold
    rh, rl = _risk_dd(th, tl)
    if due:
        trace[s, m, 0] = rh
        trace[s, m, 1] = _angle_dd(th, tl)[0]
    return _le(rh, rl, threshold)


@njit(cache=True)
def _round_bits(h, l, bits):
    """``h + l`` (a normalised dd) rounded to ``bits`` significant bits (53 <= bits <= 106), to nearest, ties to even.

    The result is a dd again. ``h`` has 53 bits, so only ``l`` is rounded: to a multiple of
    ``q = 2^(floor(log2 |h + l|) - bits + 1)`` (half of that just below a power of two); a tie goes
    to the multiple that makes the ``bits``-bit significand even (``h/q`` is even unless bits = 53).
    """
    if h == 0.0:
        return h, l
    m, e = math.frexp(h)
    q = math.ldexp(1.0, e - bits)
    if abs(m) == 0.5 and (l < 0.0) != (h < 0.0) and l != 0.0:
        q *= 0.5  # h + l lies in the binade below h
    y = l / q  # exact: a power-of-two scaling (np.floor below: numba's math.floor returns an int64, which overflows)
    f = np.floor(y)
    d = y - f
    if d == 0.5:  # a tie: make the significand (h/q + f, exact integers; parities taken apart) even
        hq = h / q
        if (hq * 0.5 != np.floor(hq * 0.5)) != (f * 0.5 != np.floor(f * 0.5)):
            f += 1.0
    elif d > 0.5:
        f += 1.0
    r = f * q
    s = h + r
    return s, r - (s - h)


@njit(cache=True)
def _dd_one(s, theta_hi, theta_lo, states, par, exact_checks, out, bits):
    """Stream s of :func:`_dd_streams` (the recursion of ``sim_kernels._sgd_simple``, in dd).

    ``par`` and ``exact_checks`` as in :func:`_dd_streams`, ``out`` the :class:`DDOutputs` it fills.
    ``bits`` > 0: the state is rounded to that many significant bits after every update
    (:func:`_round_bits`; 64 emulates the storage of an 80-bit run, 53 that of a float64 run).
    """
    target, b, eta, lam = par.target, par.b, par.eta, par.lam
    n_updates, check_every, threshold, stop = par.n_updates, par.check_every, par.threshold, par.stop
    th = theta_hi[s].copy()
    tl = theta_lo[s].copy()
    u0, u1, u2, u3 = states[s, 0], states[s, 1], states[s, 2], states[s, 3]
    # 1/b as dd: 1 - b ib_h is exact (Sterbenz)
    ibh = 1.0 / b
    p, e = _two_prod(ibh, float(b))
    ibl = ((1.0 - p) - e) / b
    rec = -1
    first = -1
    count = 0
    n = 0
    while True:
        if check_every > 0 and n % check_every == 0:
            if _dd_check(th, tl, n // check_every, s, threshold, out.trace, exact_checks):
                if rec < 0:
                    rec = n
                if stop:
                    break
        if n >= n_updates:
            break
        a1h, a1l, a2h, a2l = th[0], tl[0], th[1], tl[1]
        v1xh, v1xl, v1yh, v1yl = th[2], tl[2], th[3], tl[3]
        v2xh, v2xl, v2yh, v2yl = th[4], tl[4], th[5], tl[5]
        a1s, a1t = _split(a1h)
        a2s, a2t = _split(a2h)
        v1xs, v1xt = _split(v1xh)
        v1ys, v1yt = _split(v1yh)
        v2xs, v2xt = _split(v2xh)
        v2ys, v2yt = _split(v2yh)
        g0h = g0l = g1h = g1l = g2h = g2l = g3h = g3l = g4h = g4l = g5h = g5l = 0.0
        dis = 0
        for _ in range(b):
            r1, u0, u1, u2, u3 = _xoshiro(u0, u1, u2, u3)
            r2, u0, u1, u2, u3 = _xoshiro(u0, u1, u2, u3)
            x0, x1, rho = _disk_point(r1, r2)
            x0s, x0t = _split(x0)
            x1s, x1t = _split(x1)
            # z_i = w_i . x
            p1, e1 = _two_prod_s(v1xh, v1xs, v1xt, x0, x0s, x0t)
            p2, e2 = _two_prod_s(v1yh, v1ys, v1yt, x1, x1s, x1t)
            sm, f = _two_sum(p1, p2)
            f += (e1 + v1xl * x0) + (e2 + v1yl * x1)
            z1h, z1l = _fast_two_sum(sm, f)
            p1, e1 = _two_prod_s(v2xh, v2xs, v2xt, x0, x0s, x0t)
            p2, e2 = _two_prod_s(v2yh, v2ys, v2yt, x1, x1s, x1t)
            sm, f = _two_sum(p1, p2)
            f += (e1 + v2xl * x0) + (e2 + v2yl * x1)
            z2h, z2l = _fast_two_sum(sm, f)
            on1 = z1h > 0.0  # the sign of a normalised dd is the sign of its hi part
            on2 = z2h > 0.0
            h1h = z1h if on1 else 0.0
            h1l = z1l if on1 else 0.0
            h2h = z2h if on2 else 0.0
            h2l = z2l if on2 else 0.0
            y = rho if target else (x0 if x0 > 0.0 else 0.0)
            # r = a1 h1 + a2 h2 - y
            h1s, h1t = _split(h1h)
            h2s, h2t = _split(h2h)
            p1, e1 = _two_prod_s(a1h, a1s, a1t, h1h, h1s, h1t)
            p2, e2 = _two_prod_s(a2h, a2s, a2t, h2h, h2s, h2t)
            sm, f = _two_sum(p1, p2)
            sm, f2 = _two_sum(sm, -y)
            f += f2 + (e1 + (a1h * h1l + a1l * h1h)) + (e2 + (a2h * h2l + a2l * h2h))
            rh, rl = _fast_two_sum(sm, f)
            rs, rt = _split(rh)
            # batch sums of r h1, r h2, q1 x, q2 x (q_i = r on the active side)
            p1, e1 = _two_prod_s(rh, rs, rt, h1h, h1s, h1t)
            g0h, g0l = _acc(g0h, g0l, p1, e1 + (rh * h1l + rl * h1h))
            p1, e1 = _two_prod_s(rh, rs, rt, h2h, h2s, h2t)
            g1h, g1l = _acc(g1h, g1l, p1, e1 + (rh * h2l + rl * h2h))
            q1h = rh if on1 else 0.0
            q1l = rl if on1 else 0.0
            q1s = rs if on1 else 0.0
            q1t = rt if on1 else 0.0
            q2h = rh if on2 else 0.0
            q2l = rl if on2 else 0.0
            q2s = rs if on2 else 0.0
            q2t = rt if on2 else 0.0
            p1, e1 = _two_prod_s(q1h, q1s, q1t, x0, x0s, x0t)
            g2h, g2l = _acc(g2h, g2l, p1, e1 + q1l * x0)
            p1, e1 = _two_prod_s(q1h, q1s, q1t, x1, x1s, x1t)
            g3h, g3l = _acc(g3h, g3l, p1, e1 + q1l * x1)
            p1, e1 = _two_prod_s(q2h, q2s, q2t, x0, x0s, x0t)
            g4h, g4l = _acc(g4h, g4l, p1, e1 + q2l * x0)
            p1, e1 = _two_prod_s(q2h, q2s, q2t, x1, x1s, x1t)
            g5h, g5l = _acc(g5h, g5l, p1, e1 + q2l * x1)
            dis += 1 if on1 != on2 else 0
        # theta <- theta - eta (a g / b + lam theta), a = 1 for a1, a2 and the pre-update a_i for w_i
        th[0], tl[0] = _dd_step(th[0], tl[0], g0h, g0l, 1.0, 0.0, ibh, ibl, eta, lam)
        th[1], tl[1] = _dd_step(th[1], tl[1], g1h, g1l, 1.0, 0.0, ibh, ibl, eta, lam)
        th[2], tl[2] = _dd_step(th[2], tl[2], g2h, g2l, a1h, a1l, ibh, ibl, eta, lam)
        th[3], tl[3] = _dd_step(th[3], tl[3], g3h, g3l, a1h, a1l, ibh, ibl, eta, lam)
        th[4], tl[4] = _dd_step(th[4], tl[4], g4h, g4l, a2h, a2l, ibh, ibl, eta, lam)
        th[5], tl[5] = _dd_step(th[5], tl[5], g5h, g5l, a2h, a2l, ibh, ibl, eta, lam)
        if bits > 0:
            for i in range(6):
                th[i], tl[i] = _round_bits(th[i], tl[i], bits)
        n += 1
        if dis > 0:
            count += dis
            if first < 0:
                first = n
    for i in range(6):
        out.hi[s, i] = th[i]
        out.lo[s, i] = tl[i]
    out.state[s, 0], out.state[s, 1], out.state[s, 2], out.state[s, 3] = u0, u1, u2, u3
    out.rec[s] = rec
    out.first[s] = first
    out.disagreements[s] = count
    out.updates[s] = n


@njit(cache=True)
def _dd_step(ph, pl, gh, gl, ah, al, ibh, ibl, eta, lam):
    """One coordinate's step p - eta (a g / b + lam p) in dd: the new (hi, lo) of p = ph + pl.

    Values in, values out (no coordinate index, which numba would compile once per literal index).
    """
    vh, vl = _mul(gh, gl, ibh, ibl)
    vh, vl = _mul(vh, vl, ah, al)
    wh, wl = _mul_d(ph, pl, lam)
    vh, vl = _add(vh, vl, wh, wl)
    vh, vl = _mul_d(vh, vl, eta)
    return _add(ph, pl, -vh, -vl)


@njit(cache=True, nogil=True)
def _dd_block(lo, hi, theta_hi, theta_lo, states, par, exact_checks, out, bits):
    """Streams ``lo..hi-1`` of :func:`_dd_streams` (:func:`_dd_one` each); releases the GIL."""
    for s in range(lo, hi):
        _dd_one(s, theta_hi, theta_lo, states, par, exact_checks, out, bits)


def _dd_streams(theta_hi, theta_lo, states, par, exact_checks, out, bits: int = 0) -> None:
    """Online SGD in double-double for every stream (rows of ``theta_hi + theta_lo``).

    ``par``: the float64 kernels' :class:`~numerics.rare_gates.sim_kernels.SGDParams` (``target``,
    ``b``, ``eta``, ``lam``, ``n_updates``, ``check_every`` (<= 0: no checks), ``threshold``,
    ``stop``; its noise fields are ignored: the dd replay has no noise), plus ``exact_checks``
    (always decide by the dd risk, never by the float64 pre-check). ``out``: a :class:`DDOutputs`
    (:func:`dd_outputs`), filled per stream: final dd state ``hi + lo``, input generator states,
    recovery update, first-disagreement update (1-based), disagreements, updates, and
    ``trace[s, m] = (risk, angle)`` (hi parts) at check m < ``trace.shape[1]``. ``bits`` > 0:
    the state rounded to that many bits after every update (:func:`replay_rounded`).
    Streams are independent: blocks of them run on the float64 kernels' thread pool
    (:func:`~numerics.rare_gates.sim_kernels.run_blocks`, ``numba.get_num_threads()`` threads),
    and the results do not depend on the thread count.
    """
    hi = _input(theta_hi, "theta_hi", None, 6, np.float64)
    S = hi.shape[0]
    lo = _input(theta_lo, "theta_lo", S, 6, np.float64)
    st = _input(states, "states", S, 4, np.uint64)
    out = DDOutputs(*out)
    _check_out({f"out.{k}": v for k, v in out._asdict().items()}, S)
    bits = integer(bits, "bits", 0, 106)
    if 0 < bits < 53:
        raise ValueError(f"bits must be 0 (no rounding) or an integer in [53, 106]; got {bits}")
    run_blocks(_dd_block, _row_blocks(S), (hi, lo, st, sgd_params(par), bool(exact_checks), out, np.int64(bits)))


@njit(cache=True)
def _dd_rows(hi, lo, out, what):
    """Per row of dd parameters: the angle (what = 0) or the target risk (what = 1), as dd."""
    for s in range(hi.shape[0]):
        if what == 0:
            out[s, 0], out[s, 1] = _angle_dd(hi[s], lo[s])
        else:
            out[s, 0], out[s, 1] = _risk_dd(hi[s], lo[s])


def _rows(hi, lo) -> tuple[np.ndarray, np.ndarray]:
    h = np.ascontiguousarray(np.atleast_2d(np.asarray(hi, dtype=float)))
    l_ = np.ascontiguousarray(np.atleast_2d(np.asarray(lo, dtype=float)))
    if h.shape != l_.shape or h.ndim != 2 or h.shape[1] != 6:
        raise ValueError(f"hi and lo must have the same shape (6,) or (n, 6); got {h.shape} and {l_.shape}")
    return h, l_


def angles_dd(hi, lo) -> np.ndarray:
    """Angles between w1 and w2 of dd parameter rows ``hi + lo``: array (n, 2) of (hi, lo)."""
    h, l_ = _rows(hi, lo)
    out = np.empty((h.shape[0], 2))
    _dd_rows(h, l_, out, 0)
    return out


def target_risk_dd(hi, lo) -> np.ndarray:
    """Target risks of dd parameter rows ``hi + lo``: array (n, 2) of (hi, lo)."""
    h, l_ = _rows(hi, lo)
    out = np.empty((h.shape[0], 2))
    _dd_rows(h, l_, out, 1)
    return out


def round_to_bits(hi, lo, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise ``hi + lo`` (normalised dd arrays) rounded to ``bits`` significant bits, as dd (hi, lo).

    >>> h, l = round_to_bits(np.array([1.0]), np.array([2.0**-60 + 2.0**-70]), 64)
    >>> float(l[0]) == 2.0**-60  # the 2^-70 part is below the 64th bit of 1
    True
    >>> round_to_bits(np.array([1.0]), np.array([0.0]), 52)
    Traceback (most recent call last):
    ...
    ValueError: bits must be an integer in [53, 106]; got 52
    """
    bits = integer(bits, "bits", 53, 106)
    h = np.asarray(hi, dtype=float)
    l_ = np.asarray(lo, dtype=float)
    out_h, out_l = np.empty(h.shape), np.empty(h.shape)
    for k in np.ndindex(h.shape):
        out_h[k], out_l[k] = _round_bits(float(h[k]), float(l_[k]), bits)
    return out_h, out_l


def replay_rounded(
    theta0,
    states,
    *,
    b: int,
    eta: float,
    lam: float,
    n_updates: int,
    bits: int,
    threshold: float,
    check_every: int = 10,
) -> dict:
    """The dd replay of target SGD streams with the state rounded to ``bits`` significant bits after every update.

    ``theta0`` (streams, 6) float64 starts and ``states`` (streams, 4) uint64 their input
    generator states (:func:`numerics.rare_gates.sim_rng.seed_states`), as in
    :func:`numerics.rare_gates.simulate.simulate_extended`; the update is computed in dd from
    the same float64 inputs, then each coordinate is rounded (:func:`_round_bits`). ``bits = 64``
    emulates the storage of an 80-bit (x87 extended, 64-bit significand) run, ``bits = 53``
    that of a float64 run; the arithmetic inside one update stays dd, more accurate than either.
    ``bits = 0``: no rounding (the plain dd replay).
    Streams stop at recovery (target risk below ``threshold``, checked every ``check_every``
    updates). Returns ``hi``, ``lo``, ``angle`` (final angle between w1 and w2), ``recovery``
    and ``first`` (updates; -1: none) and ``disagreements``.
    """
    if bits != 0:
        bits = integer(bits, "bits", 53, 106)
    b = integer(b, "b", 1)
    n_updates = integer(n_updates, "n_updates", 0)
    check_every = integer(check_every, "check_every", 0)
    eta = positive(eta, "eta")
    lam = real(lam, "lam", 0.0)
    th = np.ascontiguousarray(np.atleast_2d(np.asarray(theta0, dtype=float)))
    st = np.ascontiguousarray(np.atleast_2d(np.asarray(states, dtype=np.uint64)))
    if th.ndim != 2 or th.shape[1] != 6 or not np.all(np.isfinite(th)):
        raise ValueError(f"theta0 must be finite rows of 6 parameters; got shape {th.shape}")
    if st.shape != (th.shape[0], 4):
        raise ValueError(f"states must have shape ({th.shape[0]}, 4); got {st.shape}")
    threshold = positive(threshold, "threshold")
    out = dd_outputs(th.shape[0])
    par = SGDParams(True, b, eta, lam, n_updates, check_every, threshold, True, 0.0, NOISE_NONE)
    _dd_streams(th, np.zeros_like(th), st, par, False, out, bits)  # the same compiled kernel as the plain replay's
    return {
        "hi": out.hi,
        "lo": out.lo,
        "angle": angles_dd(out.hi, out.lo)[:, 0],
        "recovery": out.rec,
        "first": out.first,
        "disagreements": out.disagreements,
    }
