"""The mode-recursion kernels give the bits of their plain forms (numerics.multipath.gd, issue 15).

The speed-ups of ``_svs_gd`` and ``_mode_sharpness`` (powers sharing their squares, the secular
terms formed once, a Newton search that decides most bisection steps, the stop test's sharpness
kept while its inputs repeat, a record counter instead of a division) must change no result bit:
the stored simulation cells are compared with the previous revision's. Here the kernels are run on
seeded random inputs and on the edge cases and every output is compared bit for bit (NaN positions
and signed zeros included) with the outputs of the plain forms they replace (every bisection step
re-evaluates the secular sum from a and r, every power is ``**``, the stop test evaluates the
sharpness every step). Those outputs are recorded in data/multipath_gd_exact.json (SHA-256 digests
of the output bytes, exact bits for the edge cases; how they were made: its ``about``), so a
change of any output bit fails here. The drawn inputs are recorded by digest too: if numpy's
Generator ever draws other numbers, the test says so instead of reporting a kernel change.
Reference: arXiv 2606.05219, Eqs. (54), (13).
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from numerics.multipath import gd  # before numba: importing numerics keys numba's cache to the kernels' source
from numerics.multipath import wcr as nw

# isort: off
from numba import njit  # after numerics (above)

# isort: on

RECORDED = json.loads((Path(__file__).parent / "data" / "multipath_gd_exact.json").read_text())
REGENERATE = "the drawn inputs changed (numpy's Generator?): regenerate the record as data/multipath_gd_exact.json says"


@njit
def _plain_pow(x, L):
    return x**L


def _same(x, y) -> bool:
    """Same dtype, shape and bytes (so NaN positions and the sign of every zero agree)."""
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _digest(*arrays) -> str:
    """SHA-256 of the arrays' dtypes, shapes and bytes: equal digests are :func:`_same` arrays."""
    h = hashlib.sha256()
    for x in arrays:
        x = np.asarray(x)
        h.update(f"{x.dtype.str}{x.shape};".encode())
        h.update(x.tobytes())
    return h.hexdigest()


def _bits(x: float) -> str:
    """The float64's 64 bits as 16 hex digits (exact, NaN payload and the sign of zero included)."""
    return f"{int(np.float64(x).view(np.uint64)):016x}"


# ------------------------------------------------------------------ powers
SPECIAL = [0.0, -0.0, 1.0, -1.0, 5e-324, -2.5e-310, 1e-170, 1e154, -1e154, 1e8, np.inf, -np.inf, np.nan]


def test_powers_are_the_bits_of_numba_pow():
    rng = np.random.default_rng(20240615)
    xs = np.r_[SPECIAL, rng.uniform(-2, 2, 300), 10 ** rng.uniform(-12, 8, 300) * rng.choice([-1, 1], 300)]
    Ls = [*range(1, 70), 0x10000 - 1, 0x10000, 0x10001, 0x10002, 0x10003]
    for L in Ls:
        for x in xs:
            p0, p1, p2 = gd._powers(float(x), L)
            assert _same(p0, _plain_pow(float(x), L)) and _same(p1, _plain_pow(float(x), L - 1)), (x, L)
            assert _same(p2, _plain_pow(float(x), L - 2) if L >= 2 else 0.0), (x, L)


# ------------------------------------------------------------------ the mode sharpness
def _layer_values(rng, kind: int, H: int) -> np.ndarray:
    if kind == 0:
        return rng.uniform(0, 1.2, H)
    if kind == 1:
        return rng.uniform(-1.2, 1.2, H)
    if kind == 2:
        return 10 ** rng.uniform(-8, 1, H)
    if kind == 3:
        return np.where(rng.random(H) < 0.5, 0.0, rng.uniform(0, 2, H))
    if kind == 4:
        return 10 ** rng.uniform(-2, 8, H) * rng.choice([-1, 1], H)  # up to the divergence bound: overflows
    if kind == 5:
        return 10 ** rng.uniform(-40, 0, H)  # underflow: vsq negligible next to max D
    return np.full(H, rng.uniform(0, 1.5))  # balanced: the root at the bracket's end


def _sharpness_cases(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(n):
        H = int(rng.integers(1, 6))
        depths = rng.integers(1, 26, H).astype(np.int64)
        a = _layer_values(rng, k % 7, H)
        r = [0.0, -0.0, rng.normal() * 1e-12, rng.normal(), rng.normal() * 10 ** rng.uniform(-16, 100)][k % 5]
        yield np.ascontiguousarray(a, dtype=float), depths, float(r)


SHARPNESS_EDGE = [
    ([0.0, 0.0], [3, 3], 0.0),  # vsq = 0
    ([0.0], [1], -1.0),
    ([1e-30, 2.0], [5, 1], 1e30),  # max D + vsq rounds to max D
    ([1e8, 0.5], [40, 3], 1.0),  # v^2 overflows: the plain bisection throughout
    ([np.nan, 0.5], [3, 3], 0.0),
    ([0.5, 0.5], [20, 20], 0.0),  # the balanced minimum: the root is the bracket's end
]
SHARPNESS_BLOCK = 1000  # cases per recorded digest (a mismatch names its block)


def _sharpness_record(kernel) -> dict:
    """What data/multipath_gd_exact.json records of a mode-sharpness kernel: digests of the 30,000 drawn
    inputs and of the outputs per block of SHARPNESS_BLOCK cases, and the edge cases' exact bits."""
    cases = list(_sharpness_cases(30_000, 15))
    outs = np.array([kernel(a, depths, r) for a, depths, r in cases])
    edge = [kernel(np.array(a), np.array(depths, dtype=np.int64), r) for a, depths, r in SHARPNESS_EDGE]
    return {
        "inputs": _digest(*(x for a, depths, r in cases for x in (a, depths, np.float64(r)))),
        "blocks": [_digest(outs[j : j + SHARPNESS_BLOCK]) for j in range(0, outs.size, SHARPNESS_BLOCK)],
        "edge": [{"value": repr(float(x)), "bits": _bits(x)} for x in edge],
    }


def test_mode_sharpness_is_the_plain_bisection_bit_for_bit():
    got, want = _sharpness_record(gd._mode_sharpness), RECORDED["sharpness"]
    assert got["inputs"] == want["inputs"], REGENERATE
    assert len(got["blocks"]) == len(want["blocks"]) == 30
    for j, (g, w) in enumerate(zip(got["blocks"], want["blocks"])):
        assert g == w, f"cases {j * SHARPNESS_BLOCK}..{(j + 1) * SHARPNESS_BLOCK - 1} of _sharpness_cases(30_000, 15)"
    for case, g, w in zip(SHARPNESS_EDGE, got["edge"], want["edge"]):
        assert g["bits"] == w["bits"], (case, g, w)


# ------------------------------------------------------------------ the mode recursion
def _run(kernel, depths, sigma, etas, a0, record_every, tol, compensated):
    """The kernel's outputs (a, lo, t, sigma, resid, sharp, flip, over, amin, info) on one setting."""
    L = np.array(depths, dtype=np.int64)
    sig = np.array(sigma, dtype=float)
    H, d = len(depths), len(sigma)
    n = etas.size
    changes = np.flatnonzero(etas != etas[-1]) if n else np.array([], dtype=np.int64)
    tol_from = int(changes[-1]) + 1 if changes.size else 0
    cap = n // record_every + 3
    outs = (
        np.zeros(cap, dtype=np.int64),
        np.zeros((cap, H, d)),
        np.zeros((cap, d)),
        np.zeros((cap, d)),
        np.full(d, -1, dtype=np.int64),
        np.full(d, -1, dtype=np.int64),
        np.full((H, d), np.inf),
        np.zeros(3, dtype=np.int64),
    )
    a = np.array(a0, dtype=float).reshape(H, d)
    lo = np.zeros((H, d) if compensated else (0, 0))
    kernel(a, lo, L, sig, etas, record_every, tol, tol_from, *outs)
    return (a, lo, *outs)


def _setting_arrays(depths, sigma, etas, a0, record_every, tol, compensated) -> tuple:
    """A setting of :func:`_random_settings` as arrays (for the digest of the drawn inputs)."""
    return (
        np.array(depths, dtype=np.int64),
        np.array(sigma, dtype=float),
        etas,
        np.asarray(a0, dtype=float),
        np.int64(record_every),
        np.float64(tol),
        np.bool_(compensated),
    )


def _random_settings(n: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(n):
        H, d = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        depths = rng.integers(1, 21, H).tolist()
        sigma = rng.uniform(0.3, 1.5, d).tolist()
        S = max(depths) * max(sigma) ** (2 - 2 / max(depths))
        steps = int(rng.integers(0, 3000))
        gamma = rng.uniform(0.2, 8.0)  # across the classical bound 2, the EoS window and divergence
        etas = np.full(steps, gamma / S)
        if k % 3 == 1 and steps:
            etas = gd.warmup_schedule(gamma / S, steps, 0, int(rng.integers(1, steps + 1)), 0.3 / S)
        a0 = 10 ** rng.uniform(-4, 0, (H, d)) * np.where(rng.random((H, d)) < 0.1, -1, 1)
        if k % 4 == 3:  # started near or past the target: overshoots, flips, divergence
            a0 = rng.uniform(0.5, 1.5, (H, d))
        yield depths, sigma, etas, a0, int(rng.choice([1, 7, 21, max(1, steps)])), [0.0, 1e-12, 1e-6][k % 3], k % 2 == 0


def _recursion_record(kernel, seed: int) -> tuple[dict, list]:
    """(what data/multipath_gd_exact.json records of a mode-recursion kernel on _random_settings(60, seed):
    the digest of every setting and of each run's outputs, the outputs)."""
    settings = list(_random_settings(60, seed))
    runs = [_run(kernel, *s) for s in settings]
    inputs = _digest(*(x for s in settings for x in _setting_arrays(*s)))
    return {"inputs": inputs, "runs": [_digest(*r) for r in runs]}, runs


@pytest.mark.parametrize("seed", [1, 2])
def test_mode_recursion_is_the_plain_kernel_bit_for_bit(seed):
    got, runs = _recursion_record(gd._svs_gd, seed)
    want = RECORDED["recursion"][str(seed)]
    assert got["inputs"] == want["inputs"], REGENERATE
    assert len(got["runs"]) == len(want["runs"]) == 60
    for k, (g, w) in enumerate(zip(got["runs"], want["runs"])):
        assert g == w, f"setting {k} of _random_settings(60, {seed})"
    assert {int(r[-1][2]) for r in runs} == {0, 1, 2}  # runs that stop at tol, that run out and that diverge


def _held_record(kernel) -> tuple[dict, dict]:
    """The warm-up in plain float64 and compensated (MP-sim.6.warmup): (digests of both runs' outputs, the runs)."""
    H, L = 4, 5
    eta = 0.5 * (float(nw.gamma_wcr(L, 15)) + 2 * H ** (1 - 2 / L)) / L
    sched = gd.warmup_schedule(eta, 200_000, 0, 100_000, 0.5 / L)
    a0 = ((1e-2 * 0.9 ** np.arange(H)) ** (1 / L))[:, None]
    runs = {c: _run(kernel, [L] * H, [1.0], sched, a0, 1000, 1e-12, c) for c in (False, True)}
    return {"plain": _digest(*runs[False]), "compensated": _digest(*runs[True])}, runs


def test_held_at_an_unstable_minimum_is_the_plain_kernel_bit_for_bit():
    """The warm-up in plain float64 (MP-sim.6.warmup): frozen at an unstable minimum with |r| < tol, where
    the stop test's sharpness is kept instead of recomputed; the compensated run re-balances and stops."""
    got, runs = _held_record(gd._svs_gd)
    assert got == RECORDED["held"]
    assert runs[False][-1][2] == gd.STATUS_STEPS and runs[True][-1][2] == gd.STATUS_CONVERGED


STOP_TEST_STARTS = ((1e-3, gd.STATUS_CONVERGED), (1e-2, gd.STATUS_STEPS))  # (sigma_2, status)


def _stop_test_run(kernel, s2: float, compensated: bool):
    L, eta, n = 5, 2.5 / 5, 20_000
    a0 = [[(1 - s2) ** (1 / L)], [s2 ** (1 / L)]]
    return _run(kernel, [L, L], [1.0], np.full(n, eta), a0, 1, 1e-12, compensated)


def _stop_test_record(kernel) -> dict:
    return {
        f"{s2!r}/{'compensated' if c else 'plain'}": _digest(*_stop_test_run(kernel, s2, c))
        for s2, _ in STOP_TEST_STARTS
        for c in (True, False)
    }


@pytest.mark.parametrize("compensated", [True, False])
def test_stop_test_is_redone_when_a_run_leaves_an_unstable_minimum(compensated):
    """L = 5, H = 2, eta S_1 = 2.5 from a zero-loss point with sigma = (0.999, 0.001): |r| < tol at t = 0, where
    lambda eta/2 = 1.25 (unstable). GD leaves it and re-balances, stopping at ~2345 steps on the stability
    boundary; a stop test that kept its first outcome would never stop. From sigma = (0.99, 0.01) both arithmetics
    are held at such a point (the kept outcome is reused every step)."""
    eta, n = 2.5 / 5, 20_000
    for s2, status in STOP_TEST_STARTS:
        new = _stop_test_run(gd._svs_gd, s2, compensated)
        assert _digest(*new) == RECORDED["stop_test"][f"{s2!r}/{'compensated' if compensated else 'plain'}"]
        steps, k = int(new[-1][0]), int(new[-1][1])
        r, lam = new[4][:k, 0], new[5][:k, 0]
        assert abs(r[0]) < 1e-12 and lam[0] * eta / 2 > 1.2  # the stop test is met at an unstable point at t = 0
        assert new[-1][2] == status and (steps < n) == (status == gd.STATUS_CONVERGED)
        if status == gd.STATUS_CONVERGED:
            assert 0.97 <= lam[-1] * eta / 2 <= 1 + gd.STABLE_SLACK  # stopped on the stability boundary
