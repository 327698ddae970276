"""Numba kernels of the rare-gates simulations: online SGD in lock-step lanes, and GD.

Definitions (Sections 3 and 8, Appendices 19-20 of arXiv 2610.11475). Parameters
``theta = (a1, a2, w1x, w1y, w2x, w2y)``; ``f(x) = a1 relu(w1.x) + a2 relu(w2.x)``; inputs
uniform on the disk of radius 2; label ``|x|`` (target) or ``relu(x1)`` (source). One SGD
update with a fresh batch ``X_1..X_b`` is

    theta <- theta - eta * ( (1/b) sum_j (f(X_j) - y_j) grad_theta f(X_j) + lam theta ),

with ``relu'(0) = 0``, i.e. the gradient of ``(1/(2b)) sum_j (f - y)^2 + (lam/2)|theta|^2``.
A *gate disagreement* is a sampled input with ``(w1.x > 0) != (w2.x > 0)`` at the current
(pre-update) parameters. After every update the Appendix 20 noise control (``noise_mode``
1: independent per unit, 2: shared) adds ``s sqrt(eta) xi_i`` to unit i's ``(a_i, w_i)``,
``xi_i ~ N(0, I_3)`` from the stream's own noise generator. Recovery is the first check
(update 0, k, 2k, ...; ``check_every = k``) at which the analytic target risk
``model._risk(theta, True)`` is ``<= threshold``; with ``stop`` the stream ends there.

Layout. :func:`_sgd_chunk` runs the streams ``[lo, hi)`` in a pool of :data:`LANES` lanes
in lock-step: every update draws ``b`` inputs for all lanes, and the innermost loop runs
over lanes with branch-free gates, so LLVM vectorises it across streams. A lane whose
stream ends (recovery with ``stop``, or the horizon) is refilled at once with the next
pending stream. Each stream owns its parameters, counters and xoshiro256++ state
(:mod:`numerics.rare_gates.sim_rng`), and a lane's arithmetic never mixes lanes, so a
stream's results do not depend on its lane, its chunk, the chunk size or the thread
count: they are bit-identical under any split. No ``fastmath``: with IEEE operations
only (no contraction into FMA), vector and scalar code give the same bits, and so do the C
references ``numerics/bench_ref.c`` (plain) and ``numerics/bench_simd.c`` (SIMD lanes).
:func:`_sgd_streams` runs independent chunks of streams on :func:`run_blocks`'s threads:
``numba.get_num_threads()`` Python threads, each calling the compiled chunk kernel with the
GIL released (``nogil``), so no kernel is compiled for numba's parallel backend (``prange``
doubled the compilation: its parallel pass and a second specialisation of every callee).
:func:`_sgd_simple` is the straightforward one-stream-at-a-time version of the same
recursion; the tests require the two to agree bit for bit.

Speed (see ``python -m numerics.bench``): the lane buffers are 1-d arrays with constant
row offsets and :data:`LANES` >= 16, which is what LLVM needs to vectorise the lane loop;
the input angle's quadrant is taken from the random integer (no ``floor``, no branches);
no integer-double conversions in the lane loops (AVX2 has no vector int64 <-> double; the
exact bit constructions of :mod:`~numerics.rare_gates.sim_rng` instead, and the disagreement
count read from the bits of ``count + 2**52``), so every lane loop vectorises whole on AVX2
as on AVX-512; a risk check first evaluates a certified lower bound (:func:`_risk_lower`, no
``atan2``/``hypot``) and calls ``model._risk`` only when the bound does not already exceed
the threshold, which leaves every outcome unchanged; and the Appendix 20 noise is drawn for
all lanes at once (:func:`_lanes_noise`: the generator steps, uniforms and angles vectorised,
only the Box-Muller logarithm scalar), the same operations on the same draws as the
one-stream :func:`_add_noise`.

Arguments. The SGD kernels take their scalar parameters as one :class:`SGDParams` and
their outputs as one :class:`Outputs` (:func:`outputs` allocates them): named tuples,
which numba passes by value, so every kernel states them once; :func:`_sgd_chunk` unpacks
them once per chunk and the lane loops get plain scalars, as before. The Python drivers
(:func:`_sgd_streams`, :func:`_warm_sgd`, :func:`_gd_streams`) check the arrays and pass the
scalars in plain types (:func:`sgd_params`), so each kernel is compiled for one signature.
Numba's on-disk cache is keyed to the kernels' source by ``numerics/__init__.py`` (nothing to
clear by hand).

Outputs per stream ``s`` (``-1`` means "never"), the fields of :class:`Outputs`:
``theta[s]`` final parameters, ``state[s]`` / ``nstate[s]`` final input / noise generator
states (so a run can be continued exactly), ``rec[s]`` update count at recovery,
``first[s]`` the 1-based update whose batch held the first disagreement (time
``first * eta``), ``disagreements[s]`` sampled, ``updates[s]`` updates performed,
and ``trace[s, m] = (risk, angle)`` at check m for ``m < trace.shape[1]`` (NaN after a stop).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numba
import numpy as np
from numba import njit

from numerics.rare_gates.model import _risk, _risk_grad
from numerics.rare_gates.sim_rng import (
    _EXP52,
    _TWO52,
    _disk_point,
    _f64_bits,
    _next,
    _normal_pair,
    _sincos_2pi,
    _u01,
    _xoshiro,
)
from numerics.validation import integer

LANES = 32  # streams per lock-step pool: >= 16 for LLVM's vectoriser (tiny-trip-count rule); 32 hides latency at b = 1
NOISE_NONE = 0
NOISE_INDEPENDENT = 1
NOISE_SHARED = 2
# Rows of the float lane buffer F: row k of lane l at F[k * LANES + l]. One 1-d buffer with
# constant row offsets lets LLVM prove the rows disjoint and vectorise across lanes.
_A1, _A2, _P1X, _P1Y, _P2X, _P2Y = 0, 1, 2, 3, 4, 5  # parameters theta
_GA1, _GA2, _G1X, _G1Y, _G2X, _G2Y, _DIS = 6, 7, 8, 9, 10, 11, 12  # batch sums, disagreements
_RLO = 13  # certified lower bound of the target risk (risk pre-check)
_FROWS = 14
# Rows of the int64 lane buffer I.
_SID, _N, _CD, _REC, _FIRST, _COUNT = 0, 1, 2, 3, 4, 5  # stream id (-1 idle), updates, countdown to check, ...
_IROWS = 6
_NEVER = 1 << 62  # countdown meaning "no risk checks"
# Rows of the noise scratch buffer W (pair p's row k at W[(3 p + k) * LANES + l]): the pair's 1 - u, cos, sin
_WROWS = 9
_INV_2PI = 1.0 / (2.0 * math.pi)
_Q = 2.0 / math.pi  # model.Q
# Slack of the risk pre-check: the bound below and model._risk differ by rounding only
# (about 1e-16 times the sum of the absolute terms); 1e-12 relative is 10^4 times that.
_RLO_SLACK = 1e-12


class SGDParams(NamedTuple):
    """The scalar parameters of the SGD kernels, one argument (numba passes the tuple by value)."""

    target: bool  # label |x| (True) or relu(x1) (False)
    b: int  # batch size
    eta: float  # step
    lam: float  # weight decay
    n_updates: int  # horizon in updates
    check_every: int  # risk check every k updates from update 0; <= 0: none
    threshold: float  # recovery: target risk <= threshold
    stop: bool  # a stream ends at its recovery
    noise_s: float  # Appendix 20 control s (0.0 with NOISE_NONE)
    noise_mode: int  # NOISE_NONE, NOISE_INDEPENDENT or NOISE_SHARED


class Outputs(NamedTuple):
    """The SGD kernels' per-stream outputs (see the module doc), one argument."""

    theta: np.ndarray  # (S, 6) final parameters
    state: np.ndarray  # (S, 4) uint64 final input generator states
    nstate: np.ndarray  # (S, 4) uint64 final noise generator states
    rec: np.ndarray  # (S,) int64 update count at recovery, -1 never
    first: np.ndarray  # (S,) int64 1-based update of the first disagreement, -1 never
    disagreements: np.ndarray  # (S,) int64 disagreements sampled
    updates: np.ndarray  # (S,) int64 updates performed
    trace: np.ndarray  # (S, checks, 2) (risk, angle) per check, NaN after a stop; checks = 0 for none


def outputs(streams: int, checks: int = 0) -> Outputs:
    """Fresh :class:`Outputs` for ``streams`` streams, tracing the first ``checks`` checks.

    Filled with values no kernel writes (NaN parameters, all-zero generator states, counters
    -2), so an output a kernel failed to write shows in a comparison.
    """
    rec, first, disagreements, updates = np.full((4, streams), -2, dtype=np.int64)
    states = np.zeros((2, streams, 4), dtype=np.uint64)
    theta, trace = np.full((streams, 6), np.nan), np.full((streams, checks, 2), np.nan)
    return Outputs(theta, states[0], states[1], rec, first, disagreements, updates, trace)


@njit(cache=True, inline="always")
def _sample_terms(a1, a2, p1x, p1y, p2x, p2y, x0, x1, rho, target):
    """One input's contributions: (r h1, r h2, q1 x0, q1 x1, q2 x0, q2 x1, disagreement).

    ``r = f(x) - y``, ``h_i = relu(w_i.x)``, ``q_i = r 1[w_i.x > 0]`` (relu'(0) = 0); the
    gradient of ``(f - y)^2 / 2`` is ``(r h1, r h2, a1 q1 x, a2 q2 x)``. Branch-free.
    """
    z1 = p1x * x0 + p1y * x1
    z2 = p2x * x0 + p2y * x1
    on1 = z1 > 0.0
    on2 = z2 > 0.0
    h1 = z1 if on1 else 0.0
    h2 = z2 if on2 else 0.0
    y = rho if target else (x0 if x0 > 0.0 else 0.0)
    r = (a1 * h1 + a2 * h2) - y
    q1 = r if on1 else 0.0
    q2 = r if on2 else 0.0
    return r * h1, r * h2, q1 * x0, q1 * x1, q2 * x0, q2 * x1, (1.0 if on1 != on2 else 0.0)


@njit(cache=True, inline="always")
def _step(p, g, a, inv_b, eta, lam):
    """One coordinate of the SGD step: p - eta (a g / b + lam p)."""
    return p - eta * (a * g * inv_b + lam * p)


@njit(cache=True)
def _angle(theta):
    """Angle in [0, pi] between w1 and w2 (atan2 form, accurate near 0 and pi)."""
    c = theta[2] * theta[5] - theta[3] * theta[4]
    d = theta[2] * theta[4] + theta[3] * theta[5]
    return math.atan2(abs(c), d)


@njit(cache=True, inline="always")
def _risk_lower(a1, a2, p1x, p1y, p2x, p2y):
    """A lower bound of the target risk (``-inf`` when none is cheap), for skipping checks.

    For ``d = w1.w2 > 0`` the angle t = atan(x), x = |w1 x w2| / d, obeys
    ``x - x^3/3 <= t <= x``, and ``K = (c + (pi - t) d) / (2 pi)`` decreases in t; the
    bound takes the end that minimises ``a1 a2 K``, with norms by ``sqrt`` and a relative
    slack :data:`_RLO_SLACK` for rounding. Whenever it exceeds the threshold, so does
    ``model._risk``; the check then needs no ``atan2``/``hypot`` and its outcome is unchanged.
    """
    c = abs(p1x * p2y - p1y * p2x)
    d = p1x * p2x + p1y * p2y
    if not d > 0.0:
        return -math.inf
    x = c / d
    t = x if a1 * a2 >= 0.0 else max(0.0, x - x * x * x / 3.0)
    k12 = (c + (math.pi - t) * d) * _INV_2PI
    n1 = p1x * p1x + p1y * p1y
    n2 = p2x * p2x + p2y * p2y
    quad = a1 * a1 * (0.5 * n1) + a2 * a2 * (0.5 * n2) + 2.0 * a1 * a2 * k12
    lin = _Q * (a1 * math.sqrt(n1) + a2 * math.sqrt(n2))
    scale = abs(a1 * a1 * n1) + abs(a2 * a2 * n2) + abs(a1 * a2 * k12) + abs(lin) + 2.0
    return 0.5 * (quad - 2.0 * lin + 2.0) - _RLO_SLACK * scale


@njit(cache=True)
def _lanes_batch(F, U, b, target):
    """Draw ``b`` inputs per lane and accumulate the batch sums (the hot loop).

    ``F``: parameters (read) and batch sums (written), rows as above; ``U``: the lanes'
    xoshiro256++ states, word i of lane l at ``U[i * LANES + l]``. Lanes never mix.
    """
    L = LANES
    for k in range(_GA1, _DIS + 1):
        for l in range(L):
            F[k * L + l] = 0.0
    for _ in range(b):
        for l in range(L):
            r1, t0, t1, t2, t3 = _xoshiro(U[l], U[L + l], U[2 * L + l], U[3 * L + l])
            r2, t0, t1, t2, t3 = _xoshiro(t0, t1, t2, t3)
            U[l] = t0
            U[L + l] = t1
            U[2 * L + l] = t2
            U[3 * L + l] = t3
            x0, x1, rho = _disk_point(r1, r2)
            e0, e1, e2, e3, e4, e5, e6 = _sample_terms(
                F[l], F[L + l], F[2 * L + l], F[3 * L + l], F[4 * L + l], F[5 * L + l], x0, x1, rho, target
            )
            F[_GA1 * L + l] += e0
            F[_GA2 * L + l] += e1
            F[_G1X * L + l] += e2
            F[_G1Y * L + l] += e3
            F[_G2X * L + l] += e4
            F[_G2Y * L + l] += e5
            F[_DIS * L + l] += e6


@njit(cache=True)
def _lanes_update(F, I, inv_b, eta, lam, n_updates):
    """SGD step and tallies of every lane; returns how many lanes need a check or are done."""
    L = LANES
    attention = 0
    for l in range(L):
        b1 = F[_A1 * L + l]
        b2 = F[_A2 * L + l]
        F[_A1 * L + l] = _step(b1, F[_GA1 * L + l], 1.0, inv_b, eta, lam)
        F[_A2 * L + l] = _step(b2, F[_GA2 * L + l], 1.0, inv_b, eta, lam)
        F[_P1X * L + l] = _step(F[_P1X * L + l], F[_G1X * L + l], b1, inv_b, eta, lam)
        F[_P1Y * L + l] = _step(F[_P1Y * L + l], F[_G1Y * L + l], b1, inv_b, eta, lam)
        F[_P2X * L + l] = _step(F[_P2X * L + l], F[_G2X * L + l], b2, inv_b, eta, lam)
        F[_P2Y * L + l] = _step(F[_P2Y * L + l], F[_G2Y * L + l], b2, inv_b, eta, lam)
        n = I[_N * L + l] + 1
        I[_N * L + l] = n
        cd = I[_CD * L + l] - 1
        I[_CD * L + l] = cd
        d = np.int64(_f64_bits(F[_DIS * L + l] + _TWO52) - np.uint64(_EXP52))  # the count (< 2**52), no cvttsd2si
        I[_COUNT * L + l] += d
        f = I[_FIRST * L + l]
        I[_FIRST * L + l] = n if (d > 0 and f < 0) else f
        attention += 1 if (cd <= 0 or n >= n_updates) else 0
    return attention


@njit(cache=True)
def _lanes_triage(F, I, check_every, threshold, n_updates, use_bound):
    """Settle due checks that need no exact risk (vectorised); count what is left.

    A lane with a due check (countdown <= 0) whose :func:`_risk_lower` exceeds the
    threshold has not recovered; a lane whose stream has already recovered (a run that does
    not stop there) keeps its first recovery whatever the risk is now. Either way the check
    changes nothing and its countdown restarts here. Returns the number of lanes still
    needing the scalar path (an exact check, or the horizon reached). ``use_bound`` is False
    when a trace is recorded (every check then needs the exact risk).
    """
    L = LANES
    attention = 0
    for l in range(L):
        lower = _risk_lower(F[l], F[L + l], F[2 * L + l], F[3 * L + l], F[4 * L + l], F[5 * L + l])
        F[_RLO * L + l] = lower
        cd = I[_CD * L + l]
        due = cd <= 0
        cleared = due and use_bound and (lower > threshold or I[_REC * L + l] >= 0)
        I[_CD * L + l] = check_every if cleared else cd
        attention += 1 if ((due and not cleared) or I[_N * L + l] >= n_updates) else 0
    return attention


@njit(cache=True, inline="always")
def _noise_pairs(noise_mode):
    """Box-Muller pairs drawn per update: 2 when the units share xi (unit 2 reuses unit 1's three values), else 3."""
    if noise_mode == NOISE_SHARED:
        return 2
    return 3


@njit(cache=True)
def _add_noise(th, NS, k, sd, noise_mode):
    """Appendix 20 control on ``th`` (a 6-vector): unit i's (a_i, w_i) += sd xi_i, xi shared or not.

    The one-stream definition (:func:`_sgd_simple`); :func:`_lanes_noise` is its lane-parallel twin.
    """
    e0, e1 = _normal_pair(NS, k)
    e2, e3 = _normal_pair(NS, k)
    if _noise_pairs(noise_mode) == 2:
        e3, e4, e5 = e0, e1, e2
    else:
        e4, e5 = _normal_pair(NS, k)
    th[0] += sd * e0
    th[2] += sd * e1
    th[3] += sd * e2
    th[1] += sd * e3
    th[4] += sd * e4
    th[5] += sd * e5


@njit(cache=True)
def _lanes_noise(F, NS, I, W, sd, pairs):
    """:func:`_add_noise` on every live lane (stream id >= 0) at once; idle lanes are left as they are.

    ``NS``: the lanes' noise generator states, word i of lane l at ``NS[i * LANES + l]``; ``W``:
    scratch (:data:`_WROWS` rows); ``pairs``: :func:`_noise_pairs`. Per lane the same draws in the
    same order (pair by pair: the uniform's output, then the angle's) and the same operations as
    :func:`~numerics.rare_gates.sim_rng._normal_pair` and :func:`_add_noise`, so the same bits; the
    generator steps, uniforms, angles and updates vectorise across lanes, only ``log`` (libm) is
    scalar. Unused rows of ``W`` (pair 3 in the shared mode) are read but never selected.
    """
    L = LANES
    for p in range(pairs):
        o = 3 * p * L
        for l in range(L):
            live = I[_SID * L + l] >= 0
            s0, s1, s2, s3 = NS[l], NS[L + l], NS[2 * L + l], NS[3 * L + l]
            r1, t0, t1, t2, t3 = _xoshiro(s0, s1, s2, s3)
            r2, t0, t1, t2, t3 = _xoshiro(t0, t1, t2, t3)
            NS[l] = t0 if live else s0
            NS[L + l] = t1 if live else s1
            NS[2 * L + l] = t2 if live else s2
            NS[3 * L + l] = t3 if live else s3
            W[o + l] = 1.0 - _u01(r1)  # in (0, 1]
            c, sn = _sincos_2pi(r2)
            W[o + L + l] = c
            W[o + 2 * L + l] = sn
    for p in range(pairs):
        o = 3 * p * L
        for l in range(L):
            W[o + l] = math.sqrt(-2.0 * math.log(W[o + l]))
    shared = pairs == 2
    for l in range(L):
        live = I[_SID * L + l] >= 0
        e0 = W[l] * W[L + l]
        e1 = W[l] * W[2 * L + l]
        e2 = W[3 * L + l] * W[4 * L + l]
        e3 = e0 if shared else W[3 * L + l] * W[5 * L + l]
        e4 = e1 if shared else W[6 * L + l] * W[7 * L + l]
        e5 = e2 if shared else W[6 * L + l] * W[8 * L + l]
        a1 = F[_A1 * L + l]
        p1x = F[_P1X * L + l]
        p1y = F[_P1Y * L + l]
        a2 = F[_A2 * L + l]
        p2x = F[_P2X * L + l]
        p2y = F[_P2Y * L + l]
        F[_A1 * L + l] = a1 + sd * e0 if live else a1
        F[_P1X * L + l] = p1x + sd * e1 if live else p1x
        F[_P1Y * L + l] = p1y + sd * e2 if live else p1y
        F[_A2 * L + l] = a2 + sd * e3 if live else a2
        F[_P2X * L + l] = p2x + sd * e4 if live else p2x
        F[_P2Y * L + l] = p2y + sd * e5 if live else p2y


@njit(cache=True)
def _check(th, m, s, threshold, trace, lower):
    """Risk check m of stream s at parameters ``th``: record the trace; True if risk <= threshold.

    ``lower`` is a certified lower bound of the risk (``-inf`` if none); when it is above
    the threshold and no trace is due, the exact risk is not needed.
    """
    due = m < trace.shape[1]
    if lower > threshold and not due:
        return False
    risk = _risk(th, np.bool_(True))  # np.bool_: the signature of the Python callers' (one compilation, not two)
    if due:
        trace[s, m, 0] = risk
        trace[s, m, 1] = _angle(th)
    return risk <= threshold


@njit(cache=True)
def _lane_get(F, l, th):
    for i in range(6):
        th[i] = F[i * LANES + l]


@njit(cache=True)
def _lane_finish(F, U, NS, I, l, out):
    """Write lane l's stream results to the outputs."""
    L = LANES
    s = I[_SID * L + l]
    for i in range(6):
        out.theta[s, i] = F[i * L + l]
    for i in range(4):
        out.state[s, i] = U[i * L + l]
        out.nstate[s, i] = NS[i * L + l]
    out.rec[s] = I[_REC * L + l]
    out.first[s] = I[_FIRST * L + l]
    out.disagreements[s] = I[_COUNT * L + l]
    out.updates[s] = I[_N * L + l]


@njit(cache=True)
def _lane_refill(F, U, NS, I, l, nxt, hi, theta0, states, nstates, par, th, out):
    """Load the next pending stream into lane l (finishing at once those done at update 0); return ``nxt``."""
    L = LANES
    I[_SID * L + l] = -1
    while nxt < hi:
        s = nxt
        nxt += 1
        for i in range(6):
            F[i * L + l] = theta0[s, i]
        for i in range(4):
            U[i * L + l] = states[s, i]
            NS[i * L + l] = nstates[s, i]
        I[_SID * L + l] = s
        I[_N * L + l] = 0
        I[_CD * L + l] = par.check_every if par.check_every > 0 else _NEVER
        I[_REC * L + l] = -1
        I[_FIRST * L + l] = -1
        I[_COUNT * L + l] = 0
        done = par.n_updates <= 0
        if par.check_every > 0:
            _lane_get(F, l, th)
            if _check(th, np.int64(0), s, par.threshold, out.trace, -math.inf):  # np.int64: no Literal[int] twin
                I[_REC * L + l] = 0
                done = done or par.stop
        if not done:
            return nxt
        _lane_finish(F, U, NS, I, l, out)
        I[_SID * L + l] = -1
    I[_N * L + l] = -_NEVER  # an idle lane never asks for attention
    I[_CD * L + l] = _NEVER
    return nxt


@njit(cache=True, nogil=True)
def _sgd_chunk(lo, hi, theta0, states, nstates, par, out):
    """Run streams ``lo..hi-1`` in :data:`LANES` lock-step lanes with refill (see module doc); releases the GIL."""
    target, b, eta, lam, n_updates, check_every, threshold, stop, noise_s, noise_mode = par
    trace = out.trace
    L = LANES
    F = np.zeros(_FROWS * L)
    for l in range(L):
        F[_P2Y * L + l] = 1.0  # idle lanes compute on harmless finite values
    U = np.ones(4 * L, dtype=np.uint64)
    NS = np.ones(4 * L, dtype=np.uint64)
    W = np.ones(_WROWS * L)
    I = np.zeros(_IROWS * L, dtype=np.int64)
    th = np.empty(6)
    sd = noise_s * math.sqrt(eta)
    inv_b = 1.0 / b
    use_bound = trace.shape[1] == 0
    pairs = _noise_pairs(noise_mode)
    nxt = lo
    active = 0
    for l in range(L):
        nxt = _lane_refill(F, U, NS, I, l, nxt, hi, theta0, states, nstates, par, th, out)
        if I[_SID * L + l] >= 0:
            active += 1
    while active > 0:
        _lanes_batch(F, U, b, target)
        attention = _lanes_update(F, I, inv_b, eta, lam, n_updates)
        if noise_mode != NOISE_NONE:
            _lanes_noise(F, NS, I, W, sd, pairs)
        if attention == 0:
            continue
        if _lanes_triage(F, I, check_every, threshold, n_updates, use_bound) == 0:
            continue
        for l in range(L):
            n = I[_N * L + l]
            cd = I[_CD * L + l]
            if I[_SID * L + l] < 0 or (cd > 0 and n < n_updates):
                continue
            done = n >= n_updates
            if cd <= 0:
                I[_CD * L + l] = check_every
                _lane_get(F, l, th)
                if _check(th, n // check_every, I[_SID * L + l], threshold, trace, F[_RLO * L + l]):
                    if I[_REC * L + l] < 0:
                        I[_REC * L + l] = n
                    done = done or stop
            if done:
                _lane_finish(F, U, NS, I, l, out)
                nxt = _lane_refill(F, U, NS, I, l, nxt, hi, theta0, states, nstates, par, th, out)
                if I[_SID * L + l] < 0:
                    active -= 1


@njit(cache=True)
def _sgd_simple(theta0, states, nstates, par, out):
    """Straightforward reference of :func:`_sgd_streams`: one stream at a time, scalar, exact checks.

    Same arguments (no ``chunk``) and the same outputs, bit for bit; tests compare the two.
    """
    target, b, eta, lam, n_updates, check_every, threshold, stop, noise_s, noise_mode = par
    th = np.empty(6)
    st = np.empty((1, 4), dtype=np.uint64)
    ns = np.empty((1, 4), dtype=np.uint64)
    sd = noise_s * math.sqrt(eta)
    inv_b = 1.0 / b
    for s in range(theta0.shape[0]):
        th[:] = theta0[s]
        st[0, :] = states[s]
        ns[0, :] = nstates[s]
        rec = first = -1
        count = n = 0
        while True:
            due = check_every > 0 and n % check_every == 0
            if due and _check(th, n // check_every, s, threshold, out.trace, -math.inf):
                rec = n if rec < 0 else rec
                if stop:
                    break
            if n >= n_updates:
                break
            g0 = g1 = g2 = g3 = g4 = g5 = dis = 0.0
            for _ in range(b):
                x0, x1, rho = _disk_point(_next(st, 0), _next(st, 0))
                e0, e1, e2, e3, e4, e5, e6 = _sample_terms(
                    th[0], th[1], th[2], th[3], th[4], th[5], x0, x1, rho, target
                )
                g0 += e0
                g1 += e1
                g2 += e2
                g3 += e3
                g4 += e4
                g5 += e5
                dis += e6
            b1, b2 = th[0], th[1]
            th[0] = _step(b1, g0, 1.0, inv_b, eta, lam)
            th[1] = _step(b2, g1, 1.0, inv_b, eta, lam)
            th[2] = _step(th[2], g2, b1, inv_b, eta, lam)
            th[3] = _step(th[3], g3, b1, inv_b, eta, lam)
            th[4] = _step(th[4], g4, b2, inv_b, eta, lam)
            th[5] = _step(th[5], g5, b2, inv_b, eta, lam)
            n += 1
            if dis > 0.0:
                count += np.int64(dis)  # type: ignore[assignment]  # an int64 counter in numba
                if first < 0:
                    first = n
            if noise_mode != NOISE_NONE:
                _add_noise(th, ns, 0, sd, noise_mode)
        out.theta[s, :] = th
        out.state[s, :] = st[0]
        out.nstate[s, :] = ns[0]
        out.rec[s], out.first[s], out.disagreements[s], out.updates[s] = rec, first, count, n


# --- Python drivers: checks, plain scalar types, the thread pool ---------------------------------------


def run_blocks(kernel: Callable[..., Any], blocks: Sequence[tuple[int, int]], args: tuple) -> None:
    """``kernel(lo, hi, *args)`` for every block ``[lo, hi)``, on ``numba.get_num_threads()`` threads at most.

    The kernels are ``nogil``: each thread holds the GIL only to call one. Blocks are taken in
    order by whichever thread is free; they must be independent (disjoint rows of the outputs),
    so the results do not depend on the thread count or the order. One thread (or one block):
    a plain loop in the calling thread. The first error of a block is raised here once every
    thread has stopped (the others finish their current block and take no other).

    >>> seen = []
    >>> run_blocks(lambda lo, hi, tag: seen.append((tag, lo, hi)), [(0, 2), (2, 3)], ("x",))
    >>> sorted(seen)
    [('x', 0, 2), ('x', 2, 3)]
    """
    threads = min(numba.get_num_threads(), len(blocks))
    if threads <= 1:
        for lo, hi in blocks:
            kernel(lo, hi, *args)
        return
    lock = threading.Lock()
    todo = iter(blocks)
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                block = None if errors else next(todo, None)
            if block is None:
                return
            try:
                kernel(block[0], block[1], *args)
            except BaseException as exc:  # handed to the calling thread, which raises it
                with lock:
                    errors.append(exc)
                return

    helpers = [threading.Thread(target=work, name=f"rare-gates-kernel-{k}", daemon=True) for k in range(threads - 1)]
    for t in helpers:
        t.start()
    try:
        work()
    finally:
        for t in helpers:
            t.join()
    if errors:
        raise errors[0]


def _blocks(n: int, size: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` blocks of ``size`` rows covering ``0 .. n - 1``."""
    return [(lo, min(n, lo + size)) for lo in range(0, n, size)]


def _row_blocks(n: int) -> list[tuple[int, int]]:
    """Blocks for kernels of independent rows: all rows at once on one thread, else about four blocks per thread."""
    threads = numba.get_num_threads()
    return _blocks(n, n if threads <= 1 else max(1, -(-n // (4 * threads))))


def sgd_params(par: Any) -> SGDParams:
    """``par`` (an :class:`SGDParams` or a tuple of its fields) with plain Python scalars, checked.

    One type per field, whatever the caller passed (NumPy scalars, ints for floats), so the
    kernels are compiled once; a ValueError names a bad batch size or noise mode.
    """
    p = SGDParams(*par)
    return SGDParams(
        bool(p.target),
        integer(p.b, "b (batch size)", 1),
        float(p.eta),
        float(p.lam),
        int(p.n_updates),
        int(p.check_every),
        float(p.threshold),
        bool(p.stop),
        float(p.noise_s),
        integer(p.noise_mode, "noise_mode", NOISE_NONE, NOISE_SHARED),
    )


def _input(a: Any, name: str, rows: int | None, cols: int, dtype: type) -> np.ndarray:
    """Input ``a`` as a C-contiguous (rows, cols) array of ``dtype`` (``rows`` None: any; copied only if needed).

    A ValueError naming ``name`` otherwise (the kernels index without bounds checks).
    """
    arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[1] != cols or (rows is not None and arr.shape[0] != rows) or arr.dtype != dtype:
        text = "streams" if rows is None else str(rows)
        raise ValueError(
            f"{name} must be a {np.dtype(dtype).name} array of shape ({text}, {cols}); "
            f"got {arr.dtype} of shape {arr.shape}"
        )
    return np.ascontiguousarray(arr)


def _check_out(out: dict[str, Any], rows: int) -> None:
    """Outputs fill in place: each must be a C-contiguous array of its dtype and shape (``rows`` rows).

    ``out``: {argument name: array}, the name ending in the field of :data:`_OUT` (``out.rec``, ``out_rec``).
    """
    for name, arr in out.items():
        shape, dtype = _OUT[name.split(".")[-1].removeprefix("out_")]
        ok = isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.flags.c_contiguous and arr.ndim == len(shape)
        if not ok or any(n != want for n, want in zip(arr.shape, (rows, *shape[1:])) if want is not None):
            want = str(tuple("checks" if n is None else n for n in (rows, *shape[1:]))).replace("'", "")
            raise ValueError(
                f"{name} must be a C-contiguous {np.dtype(dtype).name} array of shape {want}; "
                f"got {getattr(arr, 'dtype', type(arr).__name__)} of shape {getattr(arr, 'shape', None)}"
            )


# per output field (of Outputs, GD, and dd_kernel.DDOutputs): (shape: the first entry stands for the rows,
# None for any length), dtype
_OUT: dict[str, tuple[tuple, type]] = {
    "theta": ((0, 6), np.float64),
    "hi": ((0, 6), np.float64),
    "lo": ((0, 6), np.float64),
    "state": ((0, 4), np.uint64),
    "nstate": ((0, 4), np.uint64),
    "rec": ((0,), np.int64),
    "first": ((0,), np.int64),
    "disagreements": ((0,), np.int64),
    "updates": ((0,), np.int64),
    "trace": ((0, None, 2), np.float64),
}


def _sgd_streams(theta0, states, nstates, par, chunk, out) -> None:
    """Online SGD for every stream (rows of ``theta0``); chunks of ``chunk`` streams run in parallel.

    ``par``: the :class:`SGDParams` (``target``: label |x| (True) or relu(x1) (False);
    ``check_every <= 0``: no risk checks); ``out``: the :class:`Outputs`, filled per stream.
    ``chunk`` changes only the schedule, never the results: the chunks are independent calls
    of :func:`_sgd_chunk` on :func:`run_blocks`'s threads (``numba.get_num_threads()``).
    """
    theta0 = _input(theta0, "theta0", None, 6, np.float64)
    S = theta0.shape[0]
    states = _input(states, "states", S, 4, np.uint64)
    nstates = _input(nstates, "nstates", S, 4, np.uint64)
    out = Outputs(*out)
    _check_out({f"out.{k}": v for k, v in out._asdict().items()}, S)
    chunk = integer(chunk, "chunk", 1)
    run_blocks(_sgd_chunk, _blocks(S, chunk), (theta0, states, nstates, sgd_params(par), out))


def _warm_sgd(theta0, src_states, tgt_states, nstates, n_source, par, chunk, ckpt, out) -> None:
    """Warm run: ``n_source`` source SGD updates (no checks, no noise), then target SGD with ``par``.

    The checkpoint lands in ``ckpt``; the target phase starts from it with the target
    states ``tgt_states`` and fills ``out`` as :func:`_sgd_streams`. The source phase takes
    ``b``, ``eta``, ``lam`` and ``threshold`` from ``par``.
    """
    par = sgd_params(par)
    source = SGDParams(False, par.b, par.eta, par.lam, int(n_source), 0, par.threshold, False, 0.0, NOISE_NONE)
    S = _input(theta0, "theta0", None, 6, np.float64).shape[0]
    counters = np.empty((4, S), dtype=np.int64)
    src_out = Outputs(
        ckpt,
        np.empty((S, 4), dtype=np.uint64),
        np.empty((S, 4), dtype=np.uint64),
        counters[0],
        counters[1],
        counters[2],
        counters[3],
        np.empty((S, 0, 2)),
    )
    _sgd_streams(theta0, src_states, nstates, source, chunk, src_out)
    _sgd_streams(ckpt, tgt_states, nstates, par, chunk, out)


@njit(cache=True, nogil=True)
def _gd_rows(
    lo, hi, theta0, target, eta, lam, n_updates, check_every, threshold, stop, out_theta, out_rec, out_updates, trace
):
    """GD with the exact population gradient (``model._risk_grad``) for rows ``lo..hi-1``; releases the GIL."""
    grad = np.empty(6)
    for s in range(lo, hi):
        th = theta0[s].copy()
        rec = -1
        n = 0
        while True:
            if check_every > 0 and n % check_every == 0:
                m = n // check_every
                risk = _risk(th, np.bool_(True))
                if m < trace.shape[1]:
                    trace[s, m, 0] = risk
                    trace[s, m, 1] = _angle(th)
                if risk <= threshold and rec < 0:
                    rec = n
                    if stop:
                        break
            if n >= n_updates:
                break
            _risk_grad(th, target, lam, grad)
            for i in range(6):
                th[i] = th[i] - eta * grad[i]
            n += 1
        for i in range(6):
            out_theta[s, i] = th[i]
        out_rec[s] = rec
        out_updates[s] = n


def _gd_streams(
    theta0, target, eta, lam, n_updates, check_every, threshold, stop, out_theta, out_rec, out_updates, trace
) -> None:
    """Population GD ``theta <- theta - eta grad(R + lam/2 |theta|^2)`` for every row of ``theta0``.

    Rows are independent: blocks of them run on :func:`run_blocks`'s threads. ``check_every <= 0``:
    no risk checks; ``out_theta`` (S, 6), ``out_rec`` and ``out_updates`` (S,) and ``trace``
    (S, checks, 2) are filled per row.
    """
    theta0 = _input(theta0, "theta0", None, 6, np.float64)
    S = theta0.shape[0]
    _check_out({"out_theta": out_theta, "out_rec": out_rec, "out_updates": out_updates, "trace": trace}, S)
    scalars = (bool(target), float(eta), float(lam), int(n_updates), int(check_every), float(threshold), bool(stop))
    run_blocks(_gd_rows, _row_blocks(S), (theta0, *scalars, out_theta, out_rec, out_updates, trace))
