"""The mode-recursion kernels give the bits of their plain forms (numerics.multipath.gd, issue 15).

The speed-ups of ``_svs_gd`` and ``_mode_sharpness`` (powers sharing their squares, the secular
terms formed once, a Newton search that decides most bisection steps, the stop test's sharpness
kept while its inputs repeat, a record counter instead of a division) must change no result bit:
the stored simulation cells are compared with the previous revision's. Here the kernels are run
against the plain forms they replace, written out below as they stood before (every bisection
step re-evaluates the secular sum from a and r, every power is ``**``, the stop test evaluates the
sharpness every step), on seeded random inputs and on the edge cases, and every output is compared
bit for bit (NaN positions and signed zeros included). Reference: arXiv 2606.05219, Eqs. (54), (13).
"""

import numpy as np
import pytest

from numerics.multipath import gd  # before numba: importing numerics keys numba's cache to the kernels' source
from numerics.multipath import wcr as nw

# isort: off
from numba import njit  # after numerics (above)

# isort: on


# ------------------------------------------------------------------ the plain forms (previous revision)
@njit
def _plain_pow(x, L):
    return x**L


@njit
def _plain_mode_sharpness(a, depths, r):
    H = a.shape[0]
    dmax = -np.inf
    vsq = 0.0
    other = -np.inf
    for h in range(H):
        L = depths[h]
        if L >= 2:
            p = a[h] ** (L - 2)
            Dh = r * (L - 1) * p
            if -r * p > other:
                other = -r * p
        else:
            Dh = 0.0
        if Dh > dmax:
            dmax = Dh
        v = a[h] ** (L - 1)
        vsq += L * v * v
    if vsq == 0.0:
        top = dmax
    else:
        lo, hi = dmax, dmax + vsq
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi or hi - lo <= 4e-16 * abs(hi):
                break
            s = 0.0
            for h in range(H):
                L = depths[h]
                Dh = r * (L - 1) * a[h] ** (L - 2) if L >= 2 else 0.0
                v = a[h] ** (L - 1)
                s += L * v * v / (mid - Dh)
            if s > 1.0:
                lo = mid
            else:
                hi = mid
        top = hi
    return top if top > other else other


@njit
def _plain_svs_gd(
    a, lo, depths, sigma_star, etas, record_every, tol, tol_from, o_t, o_s, o_r, o_l, o_f, o_o, o_m, info
):
    H, d = a.shape
    comp = lo.shape[0] == H
    n = etas.shape[0]
    r = np.empty(d)
    col = np.empty(H)
    k = 0
    status = 0
    t = 0
    while True:
        rmax = 0.0
        for i in range(d):
            s = -sigma_star[i]
            for h in range(H):
                L = depths[h]
                s += a[h, i] ** L
                if comp:
                    s += L * a[h, i] ** (L - 1) * lo[h, i]
            r[i] = s
            if abs(s) > rmax:
                rmax = abs(s)
        conv = tol > 0.0 and rmax < tol and t >= tol_from
        if conv and n > 0:
            for i in range(d):
                for h in range(H):
                    col[h] = a[h, i]
                if _plain_mode_sharpness(col, depths, r[i]) * etas[n - 1] > 2.0 * (1.0 + gd.STABLE_SLACK):
                    conv = False
        done = t == n or conv
        if conv:
            status = 1
        if t % record_every == 0 or done:
            o_t[k] = t
            for i in range(d):
                for h in range(H):
                    o_s[k, h, i] = a[h, i] ** depths[h]
                    col[h] = a[h, i]
                o_r[k, i] = r[i]
                o_l[k, i] = _plain_mode_sharpness(col, depths, r[i])
            k += 1
        if done:
            break
        eta = etas[t]
        bad = False
        for i in range(d):
            if r[i] > 0.0 and o_o[i] < 0:
                o_o[i] = t
            for h in range(H):
                L = depths[h]
                g = a[h, i] ** (L - 1)
                if comp:
                    if L >= 2:
                        g += (L - 1) * a[h, i] ** (L - 2) * lo[h, i]
                    inc = -eta * r[i] * g
                    x = a[h, i] + inc
                    bb = x - a[h, i]
                    e = (a[h, i] - (x - bb)) + (inc - bb)
                    e += lo[h, i]
                    y = x + e
                    lo[h, i] = e - (y - x)
                    x = y
                else:
                    x = a[h, i] - eta * r[i] * g
                a[h, i] = x
                if x <= 0.0 and o_f[i] < 0:
                    o_f[i] = t + 1
                if o_o[i] >= 0 and x < o_m[h, i]:
                    o_m[h, i] = x
                if not (abs(x) < 1e8):
                    bad = True
        t += 1
        if bad:
            status = 2
            o_t[k] = t
            for i in range(d):
                for h in range(H):
                    o_s[k, h, i] = a[h, i] ** depths[h]
                o_r[k, i] = np.nan
                o_l[k, i] = np.nan
            k += 1
            break
    info[0] = t
    info[1] = k
    info[2] = status


def _same(x, y) -> bool:
    """Same dtype, shape and bytes (so NaN positions and the sign of every zero agree)."""
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


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


def test_mode_sharpness_is_the_plain_bisection_bit_for_bit():
    n = 0
    for a, depths, r in _sharpness_cases(30_000, 15):
        got, want = gd._mode_sharpness(a, depths, r), _plain_mode_sharpness(a, depths, r)
        assert _same(got, want), (a.tolist(), depths.tolist(), r, got, want)
        n += 1
    edge = [
        ([0.0, 0.0], [3, 3], 0.0),  # vsq = 0
        ([0.0], [1], -1.0),
        ([1e-30, 2.0], [5, 1], 1e30),  # max D + vsq rounds to max D
        ([1e8, 0.5], [40, 3], 1.0),  # v^2 overflows: the plain bisection throughout
        ([np.nan, 0.5], [3, 3], 0.0),
        ([0.5, 0.5], [20, 20], 0.0),  # the balanced minimum: the root is the bracket's end
    ]
    for a, depths, r in edge:
        a, depths = np.array(a), np.array(depths, dtype=np.int64)
        assert _same(gd._mode_sharpness(a, depths, r), _plain_mode_sharpness(a, depths, r)), (a, depths, r)
    assert n == 30_000


# ------------------------------------------------------------------ the mode recursion
def _run_both(depths, sigma, etas, a0, record_every, tol, compensated):
    L = np.array(depths, dtype=np.int64)
    sig = np.array(sigma, dtype=float)
    H, d = len(depths), len(sigma)
    n = etas.size
    changes = np.flatnonzero(etas != etas[-1]) if n else np.array([], dtype=np.int64)
    tol_from = int(changes[-1]) + 1 if changes.size else 0
    results = []
    for kernel in (gd._svs_gd, _plain_svs_gd):
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
        results.append((a, lo, *outs))
    return results


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


@pytest.mark.parametrize("seed", [1, 2])
def test_mode_recursion_is_the_plain_kernel_bit_for_bit(seed):
    statuses = set()
    for setting in _random_settings(60, seed):
        new, plain = _run_both(*setting)
        for x, y in zip(new, plain):
            assert _same(x, y), setting
        statuses.add(int(new[-1][2]))
    assert statuses == {0, 1, 2}  # runs that stop at tol, that run out and that diverge are all among them


def test_held_at_an_unstable_minimum_is_the_plain_kernel_bit_for_bit():
    """The warm-up in plain float64 (MP-sim.6.warmup): frozen at an unstable minimum with |r| < tol, where
    the stop test's sharpness is kept instead of recomputed; the compensated run re-balances and stops."""
    H, L = 4, 5
    eta = 0.5 * (float(nw.gamma_wcr(L, 15)) + 2 * H ** (1 - 2 / L)) / L
    n = 200_000
    sched = gd.warmup_schedule(eta, n, 0, 100_000, 0.5 / L)
    a0 = ((1e-2 * 0.9 ** np.arange(H)) ** (1 / L))[:, None]
    for compensated, status in ((False, gd.STATUS_STEPS), (True, gd.STATUS_CONVERGED)):
        new, plain = _run_both([L] * H, [1.0], sched, a0, 1000, 1e-12, compensated)
        assert all(_same(x, y) for x, y in zip(new, plain))
        assert new[-1][2] == status


@pytest.mark.parametrize("compensated", [True, False])
def test_stop_test_is_redone_when_a_run_leaves_an_unstable_minimum(compensated):
    """L = 5, H = 2, eta S_1 = 2.5 from a zero-loss point with sigma = (0.999, 0.001): |r| < tol at t = 0, where
    lambda eta/2 = 1.25 (unstable). GD leaves it and re-balances, stopping at ~2345 steps on the stability
    boundary; a stop test that kept its first outcome would never stop. From sigma = (0.99, 0.01) both arithmetics
    are held at such a point (the kept outcome is reused every step)."""
    L, eta = 5, 2.5 / 5
    for s2, n, status in ((1e-3, 20_000, gd.STATUS_CONVERGED), (1e-2, 20_000, gd.STATUS_STEPS)):
        a0 = [[(1 - s2) ** (1 / L)], [s2 ** (1 / L)]]
        new, plain = _run_both([L, L], [1.0], np.full(n, eta), a0, 1, 1e-12, compensated)
        assert all(_same(x, y) for x, y in zip(new, plain))
        steps, k = int(new[-1][0]), int(new[-1][1])
        r, lam = new[4][:k, 0], new[5][:k, 0]
        assert abs(r[0]) < 1e-12 and lam[0] * eta / 2 > 1.2  # the stop test is met at an unstable point at t = 0
        assert new[-1][2] == status and (steps < n) == (status == gd.STATUS_CONVERGED)
        if status == gd.STATUS_CONVERGED:
            assert 0.97 <= lam[-1] * eta / 2 <= 1 + gd.STABLE_SLACK  # stopped on the stability boundary
