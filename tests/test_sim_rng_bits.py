"""The exact bit constructions of ``sim_rng`` give the same doubles as the plain conversions they replace.

The SGD kernels avoid integer <-> double conversions (AVX2 has none for 64-bit lanes): ``_u01``
builds ``(r >> 11) 2**-53`` from the bits of 0.5, ``_small_to_f64`` builds ``float(g)`` for
``g < 2**52`` from the bits of 2**52, ``_sincos_2pi`` applies its quadrant's signs by XOR, and the
disagreement count is read from the bits of ``count + 2**52``. Each must equal, bit for bit, the
straightforward formula (``float(int64(...))``, negation by ``-``), on the edge values and on
random ones; otherwise the streams' inputs would change.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from numerics.rare_gates import sim_rng as R

EDGES = np.array(
    [0, 1, (1 << 11) - 1, 1 << 11, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, (1 << 62) - 1, 1 << 62, 3 << 62]
    + [(1 << 63) | (1 << 11), (1 << 63) - (1 << 11), 0x7FFFFFFFFFFFF << 11, 0x4000000000000 << 11]
    + [(q << 62) | (m << 11) for q in range(4) for m in (0x4000000000000, 0x4000000000001, 0x3FFFFFFFFFFFF, 1)],
    dtype=np.uint64,
)


def _raw(n: int, seed: int) -> np.ndarray:
    st = R.seed_states(seed, np.array([0]))
    out = np.empty(n, dtype=np.uint64)
    R._fill_raw(st, 0, n, out)
    return out


@njit(cache=True)
def _u01_both(r, out):
    for i in range(r.shape[0]):
        out[i, 0] = R._u01(r[i])
        out[i, 1] = np.float64(np.int64(r[i] >> np.uint64(11))) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _small_both(g, out):
    for i in range(g.shape[0]):
        out[i, 0] = R._small_to_f64(g[i])
        out[i, 1] = np.float64(np.int64(g[i]))


@njit(cache=True)
def _sincos_plain(r):
    """The former formulation: float(int64(g)), four selects and negations by ``-``."""
    q = r >> np.uint64(62)
    m = (r >> np.uint64(11)) & np.uint64(0x7FFFFFFFFFFFF)
    hi = m > np.uint64(0x4000000000000)
    g = (np.uint64(0x8000000000000) - m) if hi else m
    x = np.float64(np.int64(g)) * R._QSCALE
    z = x * x
    z2 = z * z
    z4 = z2 * z2
    ps = (R._S1 + z * R._S2) + z2 * (R._S3 + z * R._S4) + z4 * (R._S5 + z * R._S6)
    pc = (R._C1 + z * R._C2) + z2 * (R._C3 + z * R._C4) + z4 * (R._C5 + z * R._C6)
    s = x + (x * z) * ps
    c = (1.0 - 0.5 * z) + z2 * pc
    ca = s if hi else c
    sa = c if hi else s
    odd = (q & np.uint64(1)) != np.uint64(0)
    p0 = sa if odd else ca
    p1 = ca if odd else sa
    cneg = ((q ^ (q >> np.uint64(1))) & np.uint64(1)) != np.uint64(0)
    sneg = (q >> np.uint64(1)) != np.uint64(0)
    return (-p0 if cneg else p0), (-p1 if sneg else p1)


@njit(cache=True)
def _sincos_both(r, out):
    for i in range(r.shape[0]):
        out[i, 0], out[i, 1] = R._sincos_2pi(r[i])
        out[i, 2], out[i, 3] = _sincos_plain(r[i])


@njit(cache=True)
def _count_both(d, out):
    for i in range(d.shape[0]):
        out[i, 0] = np.int64(R._f64_bits(d[i] + R._TWO52) - np.uint64(R._EXP52))
        out[i, 1] = np.int64(d[i])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a.view(np.uint64), b.view(np.uint64)))


def test_u01_is_the_53_bit_uniform():
    r = np.concatenate([EDGES, _raw(200_000, 1)])
    out = np.empty((r.size, 2))
    _u01_both(r, out)
    assert _same_bits(out[:, 0], out[:, 1])
    assert out[0, 0] == 0.0 and out[6, 0] == 1.0 - 2.0**-53  # r = 0 and r = 2**64 - 1


def test_small_to_f64_is_exact_below_2_52():
    g = np.concatenate([np.array([0, 1, 2**50, 2**51 - 1, 2**52 - 1], dtype=np.uint64), _raw(100_000, 2) >> 12])
    out = np.empty((g.size, 2))
    _small_both(g, out)
    assert _same_bits(out[:, 0], out[:, 1])


def test_sincos_is_unchanged_bit_for_bit():
    r = np.concatenate([EDGES, _raw(200_000, 3)])
    out = np.empty((r.size, 4))
    _sincos_both(r, out)
    assert _same_bits(out[:, 0], out[:, 2]) and _same_bits(out[:, 1], out[:, 3])
    assert math.copysign(1.0, out[8, 0]) == -1.0 and out[8, 1] == 1.0  # r = 2**62, u = 1/4: (-0.0, 1), sign kept


def test_count_from_bits():
    d = np.arange(0.0, 4097.0)
    out = np.empty((d.size, 2), dtype=np.int64)
    _count_both(d, out)
    assert np.array_equal(out[:, 0], out[:, 1])
