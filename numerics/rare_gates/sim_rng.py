"""Keyed random streams for the rare-gates simulators: xoshiro256++ per stream, and disk inputs.

Every random number of a simulation belongs to one *stream*, keyed by the tuple
``(seed, stream, phase, offset)``:

* ``seed``: the run's non-negative integer seed (< 2**64);
* ``stream``: the stream id (one SGD run; >= 0);
* ``phase``: what the numbers feed: :data:`PHASE_TARGET` (target inputs),
  :data:`PHASE_SOURCE` (source inputs) or :data:`PHASE_NOISE` (the Appendix 20
  parameter noise), so the input stream of a run is the same whatever noise is added;
* ``offset``: the number of source updates before the target phase (0 for fresh and
  constructed runs), so a target stream depends only on the stream and the source
  duration T, as in Appendix 19 ("the target SGD stream depends only on the
  initialization and T").

Algorithm. The key is hashed by a chain of bijective 64-bit mixers
(``h <- fmix64(h ^ (k + c))``, the MurmurHash3 finaliser; distinct streams under the same
(seed, phase, offset) therefore get distinct hashes), the hash seeds SplitMix64 and four
SplitMix64 outputs give the 256-bit state of xoshiro256++ (Blackman and Vigna, "Scrambled
linear pseudorandom number generators", ACM TOMS 2021, the seeding their reference code
recommends). Each stream owns its state, so results are bit-identical however streams are
split across threads, chunks, processes or machines. The generator needs only 64-bit
adds, xors and shifts, so LLVM vectorises it across the streams of a lock-step group.

A uniform is ``(r >> 11) * 2**-53`` (53 random bits, values in [0, 1)). An input uniform
on the disk of radius 2 uses two outputs, in this order: the radius ``2 sqrt(u_r)`` (the
law of R has density r/2 on [0, 2]) and the angle ``2 pi u_phi``; ``cos``/``sin`` of the
angle come from :func:`_sincos_2pi`, an integer quadrant reduction to [0, pi/4] and the
fdlibm minimax kernels (error about 1 ulp, below 4e-16 absolute), identical in scalar and
vector code and in the C references ``numerics/bench_ref.c`` and ``numerics/bench_simd.c``.
Integers become doubles by exact bit constructions (:func:`_u01`, :func:`_small_to_f64`) and
the quadrant's signs are XORs into the sign bit: AVX2 has no vector int64 -> double
conversion, so ``float(int64)`` made LLVM convert lane by lane; the values are the same
doubles, bit for bit. Gaussians (parameter noise)
are Box-Muller pairs from two outputs, ``u1`` mapped to (0, 1] so the logarithm is finite.

>>> st = seed_states(0, np.arange(3), PHASE_TARGET, 0)
>>> st.shape, st.dtype
((3, 4), dtype('uint64'))
>>> bool(np.all(seed_states(0, np.array([2]), PHASE_TARGET, 0)[0] == st[2]))
True
>>> c, s = _sincos_2pi(np.uint64(1 << 61))  # u = 1/8
>>> abs(c - math.sqrt(0.5)) < 2.3e-16 and abs(s - math.sqrt(0.5)) < 2.3e-16  # 1 ulp
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

PHASE_TARGET = 0
PHASE_SOURCE = 1
PHASE_NOISE = 2

_TWO52 = 4503599627370496.0  # 2**52
_EXP52 = 0x4330000000000000  # bits of 2**52: OR an integer g < 2**52 into them and the double is 2**52 + g
_EXP_HALF = 0x3FE0000000000000  # bits of 0.5: OR in l < 2**52 and the double is 0.5 + l 2**-53
_LOW52 = 0xFFFFFFFFFFFFF
_SIGN = 0x8000000000000000  # the sign bit: a negation is an XOR with it
_QSCALE = 0.5 * math.pi / 2251799813685248.0  # (pi/2) 2**-51: quadrant fraction to radians
# fdlibm __kernel_sin / __kernel_cos minimax coefficients on [-pi/4, pi/4] (|error| < 1 ulp)
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


@njit(cache=True)
def _fmix64(x):
    """MurmurHash3 64-bit finaliser (a bijection of uint64)."""
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


@njit(cache=True)
def _splitmix64(x):
    """One SplitMix64 step: returns (new state, output)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(cache=True)
def _key_hash(seed, stream, phase, offset):
    """Hash of the stream key (seed, stream, phase, offset); bijective in each argument."""
    h = _fmix64(seed ^ np.uint64(0x6A09E667F3BCC909))
    h = _fmix64(h ^ (stream + np.uint64(0xBB67AE8584CAA73B)))
    h = _fmix64(h ^ (phase + np.uint64(0x3C6EF372FE94F82B)))
    h = _fmix64(h ^ (offset + np.uint64(0xA54FF53A5F1D36F1)))
    return h


@njit(cache=True)
def _seed_states(seed, streams, phase, offset, out):
    """Fill ``out[k, :]`` with the xoshiro256++ state of stream ``streams[k]``."""
    for k in range(streams.shape[0]):
        x = _key_hash(np.uint64(seed), np.uint64(streams[k]), np.uint64(phase), np.uint64(offset))
        nonzero = np.uint64(0)
        for i in range(4):
            x, z = _splitmix64(x)
            out[k, i] = z
            nonzero |= z
        if nonzero == np.uint64(0):  # the all-zero state is the one fixed point; never in practice
            out[k, 0] = np.uint64(1)


@njit(cache=True, inline="always")
def _xoshiro(s0, s1, s2, s3):
    """One xoshiro256++ step on the four state words: (output, s0, s1, s2, s3) (the one definition of the step)."""
    x = s0 + s3
    r = ((x << np.uint64(23)) | (x >> np.uint64(41))) + s0
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return r, s0, s1, s2, s3


@njit(cache=True)
def _next(st, k):
    """Advance the xoshiro256++ state row ``st[k]`` and return the next uint64 output."""
    r, st[k, 0], st[k, 1], st[k, 2], st[k, 3] = _xoshiro(st[k, 0], st[k, 1], st[k, 2], st[k, 3])
    return r


def _as_f64_typer(typingctx, x):
    """The float64 whose bits are the uint64 ``x`` (a no-op in machine code)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


def _f64_bits_typer(typingctx, x):
    """The bits of the float64 ``x`` as a uint64 (a no-op in machine code)."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(types.float64), codegen


_as_f64: Any = intrinsic(_as_f64_typer)  # Any: numba's typing of intrinsics confuses mypy about the arguments
_f64_bits: Any = intrinsic(_f64_bits_typer)


@njit(cache=True, inline="always")
def _u01(r):
    """53-bit uniform ``(r >> 11) 2**-53`` in [0, 1) from a uint64 output.

    Computed without an integer-to-double conversion, which AVX2 lacks for 64-bit lanes (LLVM
    then converts lane by lane): with ``l`` the low 52 bits of ``r >> 11``, the double with the
    bits of 0.5 and mantissa ``l`` is ``0.5 + l 2**-53``; subtracting 0.5 unless bit 52 of
    ``r >> 11`` (the top bit of ``r``) is set gives ``(r >> 11) 2**-53`` exactly (Sterbenz),
    the same double as ``float(r >> 11) * 2**-53``.
    """
    half_l = _as_f64(((r >> np.uint64(11)) & np.uint64(_LOW52)) | np.uint64(_EXP_HALF))
    off = _as_f64(((r >> np.uint64(63)) - np.uint64(1)) & np.uint64(_EXP_HALF))  # 0.5, or 0.0 if the top bit is set
    return half_l - off


@njit(cache=True, inline="always")
def _small_to_f64(g):
    """``float(g)`` for a uint64 ``g < 2**52``, exactly, by the bits of 2**52 (vectorises on AVX2)."""
    return _as_f64(g | np.uint64(_EXP52)) - _TWO52


@njit(cache=True, inline="always")
def _sincos_2pi(r):
    """(cos 2 pi u, sin 2 pi u) for the uniform u = (r >> 11) 2**-53 of a uint64 ``r``.

    Branch-free and exact up to the kernels: the quadrant is ``q = r >> 62`` and the
    position in it the 51-bit integer ``m`` (so 4u = q + m 2**-51 exactly); ``m`` is
    reflected to ``g = min(m, 2**51 - m)`` and ``x = g (pi/2) 2**-51`` lies in [0, pi/4],
    where the fdlibm minimax kernels (evaluated by Estrin's scheme, short dependency
    chains) are accurate to about 1 ulp; swaps and signs restore the quadrant.
    """
    q = r >> np.uint64(62)
    m = (r >> np.uint64(11)) & np.uint64(0x7FFFFFFFFFFFF)
    hi = m > np.uint64(0x4000000000000)
    g = (np.uint64(0x8000000000000) - m) if hi else m
    x = _small_to_f64(g) * _QSCALE
    z = x * x
    z2 = z * z
    z4 = z2 * z2
    ps = (_S1 + z * _S2) + z2 * (_S3 + z * _S4) + z4 * (_S5 + z * _S6)
    pc = (_C1 + z * _C2) + z2 * (_C3 + z * _C4) + z4 * (_C5 + z * _C6)
    s = x + (x * z) * ps
    c = (1.0 - 0.5 * z) + z2 * pc
    swap = hi != ((q & np.uint64(1)) != np.uint64(0))  # reflected or odd quadrant, not both: cos <-> sin
    p0 = s if swap else c
    p1 = c if swap else s
    cneg = ((r << np.uint64(1)) ^ r) & np.uint64(_SIGN)  # q in {1, 2}: cos < 0 (sign bit set)
    sneg = r & np.uint64(_SIGN)  # q in {2, 3}: sin < 0
    return _as_f64(_f64_bits(p0) ^ cneg), _as_f64(_f64_bits(p1) ^ sneg)


@njit(cache=True, inline="always")
def _disk_point(r_rad, r_ang):
    """Input uniform on the disk of radius 2 from two uint64 outputs: (x0, x1, |x|)."""
    rho = 2.0 * math.sqrt(_u01(r_rad))
    c, s = _sincos_2pi(r_ang)
    return rho * c, rho * s, rho


@njit(cache=True)
def _normal_pair(st, k):
    """Two independent N(0, 1) by Box-Muller from two outputs of stream row ``st[k]``."""
    u1 = 1.0 - _u01(_next(st, k))  # in (0, 1]
    rad = math.sqrt(-2.0 * math.log(u1))
    c, s = _sincos_2pi(_next(st, k))
    return rad * c, rad * s


@njit(cache=True)
def _fill_disk(st, k, n, out):
    """Draw ``n`` disk inputs of stream row ``st[k]`` into ``out[:n] = (x0, x1, |x|)``.

    The same draws, in the same order, as the SGD kernels consume them (one input: two
    outputs, radius first); used by the extended-precision path and by tests.
    """
    for j in range(n):
        r1 = _next(st, k)
        r2 = _next(st, k)
        out[j, 0], out[j, 1], out[j, 2] = _disk_point(r1, r2)


@njit(cache=True)
def _fill_raw(st, k, n, out):
    """The next ``n`` raw uint64 outputs of stream row ``st[k]`` into ``out[:n]``."""
    for j in range(n):
        out[j] = _next(st, k)


def _check_key(seed, phase, offset):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64); got {seed!r}")
    if phase not in (PHASE_TARGET, PHASE_SOURCE, PHASE_NOISE):
        raise ValueError(f"phase must be PHASE_TARGET, PHASE_SOURCE or PHASE_NOISE; got {phase!r}")
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or not 0 <= int(offset) < 2**63:
        raise ValueError(f"offset must be a non-negative integer; got {offset!r}")


def seed_states(seed: int, streams: npt.ArrayLike, phase: int = PHASE_TARGET, offset: int = 0) -> np.ndarray:
    """xoshiro256++ states, shape (len(streams), 4) uint64, of the keyed streams.

    ``streams`` are non-negative integer ids; row k depends only on
    ``(seed, streams[k], phase, offset)``.
    """
    _check_key(seed, phase, offset)
    ids = np.asarray(streams)
    if ids.ndim != 1 or (ids.size and (not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0)):
        raise ValueError(f"streams must be a 1-d array of non-negative integers; got {streams!r}")
    out = np.empty((ids.size, 4), dtype=np.uint64)
    _seed_states(np.uint64(int(seed)), ids.astype(np.uint64), np.uint64(phase), np.uint64(int(offset)), out)
    return out


def disk_inputs(seed: int, stream: int, n: int, phase: int = PHASE_TARGET, offset: int = 0) -> np.ndarray:
    """The first ``n`` inputs (x0, x1, |x|) of one keyed stream, as the SGD kernels draw them."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer; got {n!r}")
    st = seed_states(seed, np.array([stream]), phase, offset)
    out = np.empty((int(n), 3))
    _fill_disk(st, 0, int(n), out)
    return out
