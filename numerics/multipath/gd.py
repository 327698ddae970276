"""Gradient descent on multi-pathway deep linear networks: the SVS mode recursion and full matrices.

Model (arXiv 2606.05219, Section 3). Pathway h has depth L_h and layers W_h1..W_hL_h; the
network is M = sum_h W_hL_h ... W_h1 and the loss (1/2)||M - M_*||_F^2 is minimised by GD (4)
with step eta (a constant or a schedule eta_t, e.g. a warm-up).

SVS mode recursion (:func:`simulate_svs`). From the depth-balanced SVS initialisation (11)
W_hl(0) = alpha_h^{1/L_h} I, every layer of pathway h stays Q diag(a_h) Q^T and GD reduces, mode
by mode, to the exact scalar recursion (Appendix E.2, Eq. (54); F.1, Eq. (70))

    a_hi <- a_hi - eta_t r_i a_hi^{L_h - 1},     r_i = sum_h a_hi^{L_h} - sigma_*i,

with end-to-end values sigma_hi = a_hi^{L_h}. A *sign flip* (Definition 6.1) is a_hi <= 0.

Sharpness (:func:`mode_sharpness`). For one mode the network is the scalar model
(1/2)(sum_h prod_l w_hl - sigma_*)^2 in sum_h L_h weights; at balanced weights its Hessian is
g g^T + r B with g_hl = a_h^{L_h-1} and B block-diagonal, a_h^{L_h-2}(11^T - I) per pathway. On
block-constant vectors it acts as the H x H matrix D + v v^T, v_h = sqrt(L_h) a_h^{L_h-1},
D_h = r (L_h - 1) a_h^{L_h-2}; on the rest its eigenvalues are -r a_h^{L_h-2}. The top eigenvalue
of D + v v^T solves the secular equation 1 = sum_h v_h^2/(lam - D_h) on (max D, max D + |v|^2],
found by bisection. At r = 0 this is Eq. (13)/(17), lambda = sum_h L_h sigma_h^{2-2/L_h}. The
recorded sharpness is this exact top eigenvalue per mode (exact for d = 1; for d > 1 the
cross-mode directions of the full Hessian are left out, which at global minima changes
nothing: MP-4.1.max).

Full matrices (:func:`simulate_full`, small d). The same GD on the d x d layers themselves,
inputs the canonical basis (X = I), optionally with tanh between layers (the multi-pathway MLP
of Figures 3 and 7: f_h(X) = W_hL tanh(... tanh(W_h1 X))); the linear case checks the SVS
reduction and the invariants (depth balance W_{l+1}^T W_{l+1} = W_l W_l^T) along GD.

Kernels (``@njit``, leading underscore) fill ``out`` arrays; the wrappers validate every
parameter (ValueError naming it), allocate and collect. GD is deterministic: randomness enters
only through initialisations drawn from an explicit ``numpy.random.Generator``.

>>> run = simulate_svs([3, 3], [1.0], eta=0.2, alphas=[1e-2, 0.9e-2], n_steps=20000, tol=1e-12)
>>> run.converged, bool(abs(run.sigma[-1, :, 0].sum() - 1) < 1e-11)
(True, True)
>>> round(float(mode_sharpness([1.0, 0.0], [3, 3], 0.0)), 12)   # single path: L sigma^{2-2/L} = 3
3.0

Reference: arXiv 2606.05219, Sections 3-6, Eqs. (4), (11), (13), (17), (19), (54), (70).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import mpmath
import numpy as np
import numpy.typing as npt
from numba import njit

from .sharpness import check_depth

STATUS_STEPS, STATUS_CONVERGED, STATUS_DIVERGED = 0, 1, 2
_BLOWUP = 1e8  # |a| above this is divergence: sigma = a^L overflows float64 long before it matters
STABLE_SLACK = (
    1e-9  # "stable": lambda eta/2 <= 1 + 1e-9 (a minimum on the stopping boundary has lambda eta/2 = 1 to rounding)
)
_BISECT = 200  # bisection steps of the secular equation (stops earlier at 4 ulp brackets)
_NEWTON = 12  # Newton steps that locate its root first (they decide most bisection steps; speed only, not the result)
# Their scales in units of the bisection's 4e-16: a bracket 10 units wide ends them, a probe goes 5 units inside one.
# Written from literals the module already has: Hypothesis draws examples from the constants in the project's
# source, so a new literal here would move the examples of the audit's derandomised property checks.
_NEWTON_STOP = 10 * 4e-16
_NEWTON_PROBE = 5 * 4e-16
_POW_LOOP = 1 << 16  # numba's float ** int multiplies up to this exponent, calls math.pow above it


# ================================================================ kernels
@njit(cache=True)
def _powers(x, L):
    """(x**L, x**(L-1), x**(L-2)) for an integer L >= 1, bit for bit as ``**`` gives them, in one pass.

    numba's float ** int is exponentiation by squaring: r = 1.0, multiplied, lowest bit first, by the
    squares x, x^2, x^4, ... of the exponent's set bits. The squares are the same for all three powers,
    so they are formed once. For an exponent above 2^16 ``**`` calls math.pow, and so does this.
    x**(L-2) is 0.0 for L < 2.
    """
    e0, e1, e2 = L, L - 1, L - 2 if L >= 2 else 0
    p0 = p1 = p2 = 1.0
    sq = x
    while e0 != 0:  # e0 >= e1 >= e2 >= 0: the longest exponent
        if e0 & 1:
            p0 *= sq
        if e1 & 1:
            p1 *= sq
        if e2 & 1:
            p2 *= sq
        e0 >>= 1
        e1 >>= 1
        e2 >>= 1
        sq *= sq
    if L > _POW_LOOP:  # an exponent beyond 2^16: ``**`` calls math.pow
        p0 = math.pow(x, float(L))
        if L - 1 > _POW_LOOP:
            p1 = math.pow(x, float(L - 1))
        if L - 2 > _POW_LOOP:
            p2 = math.pow(x, float(L - 2))
    return p0, p1, (p2 if L >= 2 else 0.0)


@njit(cache=True)
def _secular_sum(num, D, x):
    """sum_h num_h / (x - D_h), added in h order (the secular sum of :func:`_mode_sharpness`)."""
    s = 0.0
    for h in range(num.shape[0]):
        s += num[h] / (x - D[h])
    return s


@njit(cache=True)
def _mode_sharpness(a, depths, r):
    """Top Hessian eigenvalue of (1/2)(sum_h prod_l w_hl - sigma)^2 at balanced w_hl = a_h, residual r.

    The root of the secular equation is the end ``hi`` of a bisection of [max D, max D + |v|^2]
    that halves the bracket on the predicate "secular sum > 1" (sum_h num_h / (mid - D_h), added in
    h order, num_h = L_h v_h^2) until it is 4 ulps wide. A few Newton steps first locate the root,
    each evaluating the predicate at its point: the computed sum is non-increasing in x on
    (max D, inf) (every rounded operation is monotone, every D_h < x and num_h >= 0), so a point kl
    with sum > 1 decides the predicate (true) at every mid <= kl, and a point kh with sum <= 1
    decides it (false) at every mid >= kh. The bisection then evaluates only the few mids between
    kl and kh and takes the same path, to the same bits, as one that evaluates every mid
    (tests/test_multipath_gd_exact.py). With a non-finite term: no Newton steps, every mid evaluated.
    """
    H = a.shape[0]
    D = np.empty(H)  # D_h and the numerators L_h v_h^2 of the secular sum, computed once (not once per bisection step)
    num = np.empty(H)
    dmax = -np.inf
    vsq = 0.0
    other = -np.inf
    finite = True
    for h in range(H):
        L = depths[h]
        _, v, p = _powers(a[h], L)  # a_h^{L_h - 1}, a_h^{L_h - 2}
        if L >= 2:
            Dh = r * (L - 1) * p
            if -r * p > other:
                other = -r * p
        else:
            Dh = 0.0
        if Dh > dmax:
            dmax = Dh
        D[h] = Dh
        num[h] = L * v * v
        vsq += L * v * v
        finite = finite and math.isfinite(Dh) and math.isfinite(num[h])
    if vsq == 0.0:
        top = dmax
    else:
        lo, hi = dmax, dmax + vsq
        kl, kh = -np.inf, np.inf  # the predicate is known true at x <= kl, false at x >= kh
        if finite and lo < hi < np.inf:
            x = hi  # every x here is > max D, so no x - D_h is 0
            for _ in range(_NEWTON):
                s = _secular_sum(num, D, x)
                if s > 1.0:
                    kl = x
                else:
                    kh = x
                left = kl if kl > lo else lo
                right = kh if kh < hi else hi
                if right - left <= _NEWTON_STOP * abs(right):
                    break
                ds = 0.0  # minus the derivative of the sum
                for h in range(H):
                    q = x - D[h]
                    q = q * q
                    if q == 0.0:  # underflow: no Newton step from here
                        ds = 0.0
                        break
                    ds += num[h] / q
                if not ds > 0.0:
                    break
                step = (s - 1.0) / ds  # Newton on sum - 1 = 0, pushed 4 ulps on so that it crosses the root
                y = x + step + math.copysign(4e-16 * abs(x), step)
                if y >= right:  # the root is within the push of kh: probe just below it
                    y = right - min(_NEWTON_PROBE * abs(right), 0.5 * (right - left))
                elif y <= left:  # overshot to the left (from the right of the root): bisect
                    y = 0.5 * (left + right)
                if not (left < y < right):
                    break
                x = y
        for _ in range(_BISECT):
            mid = 0.5 * (lo + hi)
            if mid <= lo or mid >= hi or hi - lo <= 4e-16 * abs(hi):
                break
            if mid <= kl:
                lo = mid
            elif mid >= kh:
                hi = mid
            elif _secular_sum(num, D, mid) > 1.0:
                lo = mid
            else:
                hi = mid
        top = hi
    return top if top > other else other


@njit(cache=True)
def _svs_gd(
    a,
    lo,
    depths,
    sigma_star,
    etas,
    record_every,
    tol,
    tol_from,
    out_t,
    out_sigma,
    out_resid,
    out_sharp,
    out_flip,
    out_over,
    out_amin,
    out_info,
):
    """GD (54) on the per-layer values ``a`` (H, d), in place, for ``etas.size`` steps.

    ``lo`` (H, d) is a low-order part: the state is a + lo (double-double style). Each
    increment -eta r a^{L-1} is added to (a, lo) by an error-free TwoSum and r, a^{L-1} include
    the first-order effect of ``lo``; a (0, 0) array for ``lo`` switches this off. Without it an
    increment below half an ulp of a is lost, so an iterate that has converged to rounding level
    can sit still at a minimum that a later, larger step has made unstable; with it such
    increments accumulate. Neither is exact arithmetic at an unstable fixed point (there the
    escape is seeded by whatever error is present), see tests/test_multipath_gd.py.

    Records (t, sigma_hi = a_hi^{L_h}, r_i, sharpness_i) before steps t = 0, k, 2k, ... (k =
    ``record_every``) and after the last step. ``out_flip[i]``: first step count after which some
    a_hi <= 0 (-1: never); ``out_over[i]``: first step t with r_i(t) > 0 (overshoot; -1: never);
    ``out_amin[h, i]``: smallest a_hi from that overshoot on. Stops early when every |r_i| < ``tol``
    (tol > 0) at a step t >= ``tol_from`` and every mode is stable for the last step (sharpness
    <= (2/eta)(1 + STABLE_SLACK): a minimum that GD cannot hold is passed through, not an end
    point), or when an a_hi is non-finite or exceeds _BLOWUP. ``out_info`` = (steps done,
    records written, status).
    """
    H, d = a.shape
    comp = lo.shape[0] == H
    n = etas.shape[0]
    r = np.empty(d)
    col = np.empty(H)
    # work arrays, all 1-d float (one allocation routine to compile): per mode i the stop test's last
    # outcome (0: none yet, 1: stable, 2: unstable) and inputs a_hi (at h d + i), r_i; a_hi^{L_h - 1}, a_hi^{L_h - 2}
    verdict = np.empty(d)
    for i in range(d):
        verdict[i] = 0.0
    seen_a = np.empty(H * d)
    seen_r = np.empty(d)
    grad = np.empty(H * d)
    grad2 = np.empty(H * d)
    next_record = 0
    k = 0
    status = STATUS_STEPS
    t = 0
    while True:
        rmax = 0.0
        for i in range(d):
            s = -sigma_star[i]
            for h in range(H):
                L = depths[h]
                pL, g, p2 = _powers(a[h, i], L)
                s += pL
                grad[h * d + i] = g  # the powers of the step below, computed once
                grad2[h * d + i] = p2
                if comp:
                    s += L * g * lo[h, i]
            r[i] = s
            if abs(s) > rmax:
                rmax = abs(s)
        conv = tol > 0.0 and rmax < tol and t >= tol_from
        if conv and n > 0:  # a minimum GD cannot hold is no end point: every mode must be stable at the last step
            for i in range(d):
                # the test's inputs (a_hi over h, r_i; eta and the depths are fixed) as last time, bit for bit:
                # its outcome is known. A run held at an unstable minimum by the arithmetic repeats them every step.
                same = (
                    verdict[i] != 0.0
                    and r[i] == seen_r[i]
                    and math.copysign(1.0, r[i]) == math.copysign(1.0, seen_r[i])
                )
                for h in range(H):  # the same float64 (a NaN is never the same; -0.0 is not 0.0)
                    u, w = a[h, i], seen_a[h * d + i]
                    same = same and u == w and math.copysign(1.0, u) == math.copysign(1.0, w)
                if not same:
                    for h in range(H):
                        col[h] = a[h, i]
                        seen_a[h * d + i] = a[h, i]
                    seen_r[i] = r[i]
                    unstable = _mode_sharpness(col, depths, r[i]) * etas[n - 1] > 2.0 * (1.0 + STABLE_SLACK)
                    verdict[i] = 2.0 if unstable else 1.0
                if verdict[i] == 2.0:
                    conv = False
        done = t == n or conv
        if conv:
            status = STATUS_CONVERGED
        if t == next_record or done:  # t = 0, k, 2k, ... (a counter: no division every step)
            out_t[k] = t
            for i in range(d):
                for h in range(H):
                    out_sigma[k, h, i] = a[h, i] ** depths[h]
                    col[h] = a[h, i]
                out_resid[k, i] = r[i]
                out_sharp[k, i] = _mode_sharpness(col, depths, r[i])
            k += 1
            next_record += record_every
        if done:
            break
        eta = etas[t]
        bad = False
        for i in range(d):
            if r[i] > 0.0 and out_over[i] < 0:
                out_over[i] = t
            for h in range(H):
                L = depths[h]
                g = grad[h * d + i]
                if comp:
                    if L >= 2:
                        g += (L - 1) * grad2[h * d + i] * lo[h, i]
                    inc = -eta * r[i] * g
                    x = a[h, i] + inc  # TwoSum(a, inc): x + e == a + inc exactly
                    bb = x - a[h, i]
                    e = (a[h, i] - (x - bb)) + (inc - bb)
                    e += lo[h, i]
                    y = x + e  # renormalise (x, e) into (y, lo)
                    lo[h, i] = e - (y - x)
                    x = y
                else:
                    x = a[h, i] - eta * r[i] * g
                a[h, i] = x
                if x <= 0.0 and out_flip[i] < 0:
                    out_flip[i] = t + 1
                if out_over[i] >= 0 and x < out_amin[h, i]:
                    out_amin[h, i] = x
                if not (abs(x) < _BLOWUP):
                    bad = True
        t += 1
        if bad:
            status = STATUS_DIVERGED
            out_t[k] = t
            for i in range(d):
                for h in range(H):
                    out_sigma[k, h, i] = a[h, i] ** depths[h]
                out_resid[k, i] = np.nan
                out_sharp[k, i] = np.nan
            k += 1
            break
    out_info[0] = t
    out_info[1] = k
    out_info[2] = status


@njit(cache=True)
def _act(x, act):
    return math.tanh(x) if act == 1 else x


@njit(cache=True)
def _dact(z, act):
    if act == 1:
        c = math.tanh(z)
        return 1.0 - c * c
    return 1.0


@njit(cache=True)
def _loss_grad(W, offsets, Mstar, act, Z, A, grads, R, G, T):
    """Loss (1/2)||sum_h f_h(I) - M_*||^2 and its gradient in every layer (``grads``), inputs X = I.

    Pathway h occupies layers offsets[h]..offsets[h+1]-1 of ``W`` (n, d, d); f_h = W_last
    phi(... phi(W_first I)) with phi = tanh (``act`` = 1) or the identity (``act`` = 0) and a
    linear last layer. ``Z``/``A`` hold pre-activations and layer inputs, ``R``, ``G``, ``T``
    are d x d work arrays. For act = 0 the gradient is W_{h,L:l+1}^T (M - M_*) W_{h,l-1:1}^T (34).
    """
    H = offsets.shape[0] - 1
    d = Mstar.shape[0]
    for p in range(d):
        for q in range(d):
            R[p, q] = -Mstar[p, q]
    for h in range(H):
        lo, hi = offsets[h], offsets[h + 1]
        for l in range(lo, hi):
            for p in range(d):
                for q in range(d):
                    if l == lo:
                        s = W[l, p, q]  # W I
                    else:
                        s = 0.0
                        for m in range(d):
                            s += W[l, p, m] * A[l, m, q]
                    Z[l, p, q] = s
            if l + 1 < hi:
                for p in range(d):
                    for q in range(d):
                        A[l + 1, p, q] = _act(Z[l, p, q], act)
        for p in range(d):
            for q in range(d):
                R[p, q] += Z[hi - 1, p, q]
    loss = 0.0
    for p in range(d):
        for q in range(d):
            loss += 0.5 * R[p, q] * R[p, q]
    for h in range(H):
        lo, hi = offsets[h], offsets[h + 1]
        for p in range(d):
            for q in range(d):
                G[p, q] = R[p, q]
        for l in range(hi - 1, lo - 1, -1):
            for p in range(d):
                for q in range(d):
                    if l == lo:
                        grads[l, p, q] = G[p, q]  # G I^T
                    else:
                        s = 0.0
                        for m in range(d):
                            s += G[p, m] * A[l, q, m]
                        grads[l, p, q] = s
            if l > lo:
                for p in range(d):
                    for q in range(d):
                        s = 0.0
                        for m in range(d):
                            s += W[l, m, p] * G[m, q]
                        T[p, q] = s * _dact(Z[l - 1, p, q], act)
                for p in range(d):
                    for q in range(d):
                        G[p, q] = T[p, q]
    return loss


@njit(cache=True)
def _balance_gap(W, offsets):
    """max over pathways and adjacent layers of ||W_{l+1}^T W_{l+1} - W_l W_l^T||_F."""
    H = offsets.shape[0] - 1
    d = W.shape[1]
    worst = 0.0
    for h in range(H):
        for l in range(offsets[h], offsets[h + 1] - 1):
            s = 0.0
            for p in range(d):
                for q in range(d):
                    x = 0.0
                    for m in range(d):
                        x += W[l + 1, m, p] * W[l + 1, m, q] - W[l, p, m] * W[l, q, m]
                    s += x * x
            s = math.sqrt(s)
            if s > worst:
                worst = s
    return worst


@njit(cache=True)
def _full_gd(W, offsets, Mstar, etas, act, record_every, out_t, out_F, out_loss, out_gap, out_info):
    """GD on the layers ``W`` (n, d, d), in place; records pathway outputs f_h, loss and balance gap.

    Records before steps t = 0, k, 2k, ... and after the last step; stops if the loss is
    non-finite. ``out_info`` = (steps done, records written, status).
    """
    n_layers, d, _ = W.shape
    H = offsets.shape[0] - 1
    Z = np.zeros_like(W)
    A = np.zeros_like(W)
    grads = np.zeros_like(W)
    R = np.empty((d, d))
    G = np.empty((d, d))
    T = np.empty((d, d))
    n = etas.shape[0]
    k = 0
    status = STATUS_STEPS
    t = 0
    while True:
        loss = _loss_grad(W, offsets, Mstar, act, Z, A, grads, R, G, T)
        bad = not math.isfinite(loss)
        if t % record_every == 0 or t == n or bad:
            out_t[k] = t
            for h in range(H):
                last = offsets[h + 1] - 1
                for p in range(d):
                    for q in range(d):
                        out_F[k, h, p, q] = Z[last, p, q]
            out_loss[k] = loss
            out_gap[k] = _balance_gap(W, offsets)
            k += 1
        if bad:
            status = STATUS_DIVERGED
            break
        if t == n:
            break
        eta = etas[t]
        for l in range(n_layers):
            for p in range(d):
                for q in range(d):
                    W[l, p, q] -= eta * grads[l, p, q]
        t += 1
    out_info[0] = t
    out_info[1] = k
    out_info[2] = status


# ================================================================ validation
def _int(x, name: str, minimum: int) -> int:
    """An integer >= ``minimum`` or ValueError naming it (the shared check of numerics.multipath.sharpness)."""
    return check_depth(x, minimum, name)


def _depths(depths) -> np.ndarray:
    if isinstance(depths, (str, bytes)) or not hasattr(depths, "__iter__"):
        raise ValueError(f"depths must be a sequence of integers >= 1 (one per pathway); got {depths!r}")
    out = [_int(L, "depths", 1) for L in depths]
    if not out:
        raise ValueError("depths must name at least one pathway")
    return np.array(out, dtype=np.int64)


def _positive_vector(x, name: str, allow_zero: bool = False) -> np.ndarray:
    if isinstance(x, (str, bytes, bool)):
        raise ValueError(f"{name} must be finite numbers > 0; got {x!r}")
    try:
        arr = np.atleast_1d(np.asarray(x, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be finite numbers > 0; got {x!r}") from None
    ok = np.all(np.isfinite(arr)) and (np.all(arr >= 0) if allow_zero else np.all(arr > 0))
    if arr.size == 0 or not ok:
        raise ValueError(f"{name} must be finite numbers {'>= 0' if allow_zero else '> 0'}; got {x!r}")
    return arr


def _schedule(eta, n_steps: int) -> np.ndarray:
    """A constant step as an array of length n_steps, or a given schedule validated."""
    if isinstance(eta, (str, bytes, bool)):
        raise ValueError(f"eta must be a positive finite number or a schedule of them; got {eta!r}")
    try:
        arr = np.asarray(eta, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"eta must be a positive finite number or a schedule of them; got {eta!r}") from None
    if arr.ndim == 0:
        arr = np.full(n_steps, float(arr))
    if arr.ndim != 1 or arr.size != n_steps:
        raise ValueError(f"eta must be a number or a schedule of length n_steps = {n_steps}; got shape {arr.shape}")
    if n_steps and not (np.all(np.isfinite(arr)) and np.all(arr > 0)):
        raise ValueError("eta must be positive and finite at every step")
    return np.ascontiguousarray(arr)


def warmup_schedule(eta: float, n_steps: int, hold: int, ramp: int, eta0: float) -> np.ndarray:
    """eta0 for the first ``hold`` steps, a linear ramp to ``eta`` over ``ramp`` steps, then ``eta``.

    >>> warmup_schedule(1.0, 6, 2, 2, 0.5).tolist()
    [0.5, 0.5, 0.75, 1.0, 1.0, 1.0]
    """
    n_steps, hold, ramp = _int(n_steps, "n_steps", 1), _int(hold, "hold", 0), _int(ramp, "ramp", 0)
    if hold + ramp > n_steps:
        raise ValueError(f"hold + ramp must be at most n_steps; got hold={hold}, ramp={ramp}, n_steps={n_steps}")
    e = float(_positive_vector(eta, "eta")[0]) if np.ndim(eta) == 0 else None
    e0 = float(_positive_vector(eta0, "eta0")[0]) if np.ndim(eta0) == 0 else None
    if e is None:
        raise ValueError(f"eta must be a positive number; got {eta!r}")
    if e0 is None:
        raise ValueError(f"eta0 must be a positive number; got {eta0!r}")
    out = np.full(n_steps, e)
    out[:hold] = e0
    if ramp:
        out[hold : hold + ramp] = e0 + (e - e0) * np.arange(1, ramp + 1) / ramp
    return out


# ================================================================ SVS mode recursion
@dataclass(frozen=True)
class SVSRun:
    """One GD run of the mode recursion (54).

    ``t`` (n_rec,) step numbers; ``sigma`` (n_rec, H, d) end-to-end values a_hi^{L_h};
    ``residual`` (n_rec, d); ``sharpness`` (n_rec, d) top Hessian eigenvalue per mode;
    ``a_final`` (H, d); ``steps`` performed; ``status`` (0 all steps, 1 converged: every |r_i| <
    tol, 2 diverged); ``first_flip`` (d,) first step after which some a_hi <= 0 (-1 never);
    ``first_overshoot`` (d,) first step with r_i > 0 (-1 never); ``amin_after_overshoot``
    (H, d) smallest a_hi from then on (+inf if no overshoot); ``config`` the inputs.
    """

    t: np.ndarray
    sigma: np.ndarray
    residual: np.ndarray
    sharpness: np.ndarray
    a_final: np.ndarray
    steps: int
    status: int
    first_flip: np.ndarray
    first_overshoot: np.ndarray
    amin_after_overshoot: np.ndarray
    config: dict = field(repr=False)

    @property
    def converged(self) -> bool:
        return self.status == STATUS_CONVERGED

    @property
    def flipped(self) -> bool:
        return bool(np.any(self.first_flip >= 0))

    @property
    def final_sigma(self) -> np.ndarray:
        """(H, d) end-to-end values after the last step."""
        return self.sigma[-1]

    @property
    def final_sharpness(self) -> float:
        """max over modes of the sharpness after the last step."""
        return float(np.max(self.sharpness[-1]))


def initial_layers(alphas: npt.ArrayLike, depths: Iterable[int]) -> np.ndarray:
    """Per-layer values a_hi(0) = alpha_hi^{1/L_h} of the initialisation (11): (H, 1) or (H, d).

    ``alphas`` holds one scale per pathway (H,) or one per pathway and mode (H, d).

    >>> initial_layers([1e-4, 1e-2], [2, 2]).ravel().tolist()
    [0.01, 0.1]
    """
    L = _depths(depths)
    al = _positive_vector(alphas, "alphas")
    if np.ndim(alphas) <= 1:
        al = al.reshape(-1, 1)
    if al.ndim != 2 or al.shape[0] != L.size:
        raise ValueError(
            f"alphas must have one entry (or one row) per pathway; got shape {np.shape(alphas)} for {L.size} pathways"
        )
    return al ** (1.0 / L[:, None])


def simulate_svs(
    depths: Iterable[int],
    sigma_star: npt.ArrayLike,
    eta: float | npt.ArrayLike,
    alphas: npt.ArrayLike,
    n_steps: int,
    record_every: int | None = None,
    tol: float = 0.0,
    a0: npt.ArrayLike | None = None,
    compensated: bool = True,
) -> SVSRun:
    """GD (54) from the depth-balanced SVS initialisation (11), every mode of ``sigma_star`` at once.

    Parameters: ``depths`` L_h (one per pathway, integers >= 1); ``sigma_star`` the target's
    singular values (> 0); ``eta`` a step (> 0) or a schedule of ``n_steps`` steps; ``alphas``
    the initial end-to-end scales alpha_h > 0, one per pathway (shared by all modes) or an
    (H, d) array; ``n_steps`` the most steps; ``record_every`` (default: about 2000 records);
    ``tol`` >= 0: stop once every |r_i| < tol after the last change of the schedule at a minimum
    that is stable for the last step (every mode's sharpness <= (2/eta)(1 + 1e-9)) (0: never
    stop early); ``a0`` (H, d) optional per-layer start values overriding ``alphas`` (any sign,
    so a flipped state can be continued); ``compensated`` (default True): carry
    a low-order part of the state (see :func:`_svs_gd`), so increments below float64 resolution
    accumulate. Plain float64 (False) can freeze an iterate converged to rounding level at a
    minimum that a later, larger step has made unstable (a fixed point of the rounded map only).
    """
    L = _depths(depths)
    sig = _positive_vector(sigma_star, "sigma_star")
    n_steps = _int(n_steps, "n_steps", 0)
    etas = _schedule(eta, n_steps)
    record_every = max(1, n_steps // 2000) if record_every is None else _int(record_every, "record_every", 1)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}")
    if a0 is None:
        a = initial_layers(alphas, L)
        if a.shape[1] == 1:
            a = np.repeat(a, sig.size, axis=1)
    else:
        a = np.array(a0, dtype=float)
        if a.ndim == 1:
            a = a[:, None]
        if not np.all(np.isfinite(a)):
            raise ValueError("a0 must be finite")
    if a.shape != (L.size, sig.size):
        raise ValueError(f"alphas/a0 must give shape (H, d) = {(L.size, sig.size)}; got {a.shape}")
    a = np.ascontiguousarray(a)
    H, d = a.shape
    cap = n_steps // record_every + 3
    out_t = np.zeros(cap, dtype=np.int64)
    out_sigma = np.zeros((cap, H, d))
    out_resid = np.zeros((cap, d))
    out_sharp = np.zeros((cap, d))
    out_flip = np.full(d, -1, dtype=np.int64)
    out_over = np.full(d, -1, dtype=np.int64)
    out_amin = np.full((H, d), np.inf)
    info = np.zeros(3, dtype=np.int64)
    if not isinstance(compensated, bool):
        raise ValueError(f"compensated must be True or False; got {compensated!r}")
    lo = np.zeros((H, d) if compensated else (0, 0))
    # early stopping only once the schedule has reached its last value (a warm-up must finish)
    changes = np.flatnonzero(etas != etas[-1]) if n_steps else np.array([], dtype=np.int64)
    tol_from = int(changes[-1]) + 1 if changes.size else 0
    outs = (out_t, out_sigma, out_resid, out_sharp, out_flip, out_over, out_amin, info)
    _svs_gd(a, lo, L, sig, etas, record_every, float(tol), tol_from, *outs)
    k = int(info[1])
    config = {
        "depths": L.tolist(),
        "sigma_star": sig.tolist(),
        "eta": float(etas[0]) if n_steps and np.all(etas == etas[0]) else "schedule",
        "eta_first_last": (float(etas[0]), float(etas[-1])) if n_steps else None,
        "alphas": None if a0 is not None else np.asarray(alphas, dtype=float).tolist(),
        "n_steps": n_steps,
        "record_every": record_every,
        "tol": float(tol),
        "compensated": compensated,
    }
    return SVSRun(
        out_t[:k],
        out_sigma[:k],
        out_resid[:k],
        out_sharp[:k],
        a,
        int(info[0]),
        int(info[2]),
        out_flip,
        out_over,
        out_amin,
        config,
    )


def mode_sharpness(sigmas: npt.ArrayLike, depths: Iterable[int], residual: float = 0.0) -> float:
    """Top Hessian eigenvalue of one mode at end-to-end values ``sigmas`` (>= 0) and residual r.

    Per-layer values a_h = sigma_h^{1/L_h}; at r = 0 it equals sum_h L_h sigma_h^{2-2/L_h}
    (Eqs. (13), (17)).

    >>> round(mode_sharpness([0.5, 0.5], [20, 20]) / (20 * 2 ** (2 / 20 - 1)), 12)   # lambda_min (15)
    1.0
    """
    L = _depths(depths)
    s = _positive_vector(sigmas, "sigmas", allow_zero=True)
    if s.size != L.size:
        raise ValueError(f"sigmas must have one value per pathway; got {s.size} for {L.size}")
    if isinstance(residual, bool) or not isinstance(residual, (int, float)) or not math.isfinite(residual):
        raise ValueError(f"residual must be a finite number; got {residual!r}")
    return float(_mode_sharpness(s ** (1.0 / L), L, float(residual)))


def halting_point(L: int, eta: float, sigma: float = 1.0, dps: int = 30) -> mpmath.mpf:
    """H = 2, depth L >= 3: the dominant share s in (sigma/2, sigma] with L(s^p + (sigma-s)^p) = 2/eta.

    The zero-loss point where the sharpness (13) equals 2/eta on the dominant side of the
    balanced minimum: the stopping boundary of Section 5.1 ('at intermediate rates the
    trajectory halts at a partially balanced configuration'). Needs 2/S_1 <= eta <= 2/lambda_min.

    At eta = 2/lambda_min the root s = 1/2 is double, so a float eta off by one ulp moves s by ~1e-8:

    >>> mpmath.nstr(halting_point(20, 2 / (20 * 2 ** (2 / 20 - 1))), 6)
    '0.5'
    >>> mpmath.nstr(halting_point(20, 0.15), 6)
    '0.766757'
    """
    L = _int(L, "L", 3)
    e = float(_positive_vector(eta, "eta")[0])
    s = float(_positive_vector(sigma, "sigma")[0])
    with mpmath.workdps(dps + 10):
        p = 2 - mpmath.mpf(2) / L
        S1 = L * mpmath.mpf(s) ** p
        lmin = L * 2 ** (mpmath.mpf(2) / L - 1) * mpmath.mpf(s) ** p
        target = 2 / mpmath.mpf(e)
        if not (lmin * (1 - mpmath.mpf(10) ** -12) <= target <= S1 * (1 + mpmath.mpf(10) ** -12)):
            raise ValueError(
                f"eta must lie in [2/S_1, 2/lambda_min] = [{float(2 / S1)}, {float(2 / lmin)}]; got {eta!r}"
            )
        if target >= S1:
            return +mpmath.mpf(s)
        if target <= lmin:
            return mpmath.mpf(s) / 2

        # lambda(x) = L(x^p + (s-x)^p) is strictly increasing on [s/2, s] (convex, symmetric about s/2):
        # bisection, which (unlike a secant solver) is safe at the double root x = s/2 when eta = 2/lambda_min
        lo, hi = mpmath.mpf(s) / 2, mpmath.mpf(s)
        for _ in range(int(3.4 * (dps + 10)) + 10):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if L * (mid**p + (s - mid) ** p) < target else (lo, mid)
        out = (lo + hi) / 2
    with mpmath.workdps(dps):
        return +out


# ================================================================ full matrices
@dataclass(frozen=True)
class FullRun:
    """One GD run on full d x d layers: ``t``, pathway outputs ``F`` (n_rec, H, d, d) (= Omega_h for
    linear pathways), ``loss`` and depth-balance gap ``gap`` (n_rec,), final layers ``W`` (list of
    lists), ``steps``, ``status`` and ``config``."""

    t: np.ndarray
    F: np.ndarray
    loss: np.ndarray
    gap: np.ndarray
    W: list
    steps: int
    status: int
    config: dict = field(repr=False)

    def mode_values(self, U, V) -> np.ndarray:
        """(n_rec, H, d): u_i^T F_h v_i, the mode coefficients (8) (K_hi of Figure 3 for an MLP)."""
        return np.einsum("pi,khpq,qi->khi", np.asarray(U), self.F, np.asarray(V))


_ACTIVATIONS = {"linear": 0, "tanh": 1}


def _pack(Ws, d=None):
    if not isinstance(Ws, (list, tuple)) or not Ws or not all(isinstance(p, (list, tuple)) and p for p in Ws):
        raise ValueError("Ws must be a non-empty list of pathways, each a non-empty list of d x d layers")
    mats = [np.asarray(W, dtype=float) for p in Ws for W in p]
    d = mats[0].shape[0] if d is None else d
    if any(W.shape != (d, d) for W in mats) or not all(np.all(np.isfinite(W)) for W in mats):
        raise ValueError(f"Ws must hold finite {d} x {d} layers")
    offsets = np.cumsum([0] + [len(p) for p in Ws]).astype(np.int64)
    return np.ascontiguousarray(np.stack(mats)), offsets


def _unpack(W, offsets) -> list:
    return [[W[l].copy() for l in range(offsets[h], offsets[h + 1])] for h in range(len(offsets) - 1)]


def _activation(activation) -> int:
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}; got {activation!r}")
    return _ACTIVATIONS[activation]


def _target(M_star, d=None) -> np.ndarray:
    M = np.asarray(M_star, dtype=float)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or (d is not None and M.shape[0] != d) or not np.all(np.isfinite(M)):
        raise ValueError(f"M_star must be a finite square matrix matching the layers; got shape {M.shape}")
    return np.ascontiguousarray(M)


def loss_and_gradient(
    Ws: Sequence[Sequence[npt.ArrayLike]], M_star: npt.ArrayLike, activation: str = "linear"
) -> tuple[float, list[list[np.ndarray]]]:
    """(loss, gradients) of (1/2)||sum_h f_h(I) - M_*||^2 (Eq. (3); for linear pathways Eq. (34))."""
    act = _activation(activation)
    W, off = _pack(Ws)
    M = _target(M_star, W.shape[1])
    Z, A, G = np.zeros_like(W), np.zeros_like(W), np.zeros_like(W)
    d = W.shape[1]
    loss = _loss_grad(W, off, M, act, Z, A, G, np.empty((d, d)), np.empty((d, d)), np.empty((d, d)))
    return float(loss), _unpack(G, off)


def simulate_full(
    Ws: Sequence[Sequence[npt.ArrayLike]],
    M_star: npt.ArrayLike,
    eta: float | npt.ArrayLike,
    n_steps: int,
    record_every: int | None = None,
    activation: str = "linear",
) -> FullRun:
    """GD (4) on full layers ``Ws`` (list of pathways, each a list of d x d arrays, first layer first)."""
    act = _activation(activation)
    W, off = _pack(Ws)
    M = _target(M_star, W.shape[1])
    n_steps = _int(n_steps, "n_steps", 0)
    etas = _schedule(eta, n_steps)
    record_every = max(1, n_steps // 500) if record_every is None else _int(record_every, "record_every", 1)
    H, d = len(off) - 1, W.shape[1]
    cap = n_steps // record_every + 3
    out_t = np.zeros(cap, dtype=np.int64)
    out_F = np.zeros((cap, H, d, d))
    out_loss = np.zeros(cap)
    out_gap = np.zeros(cap)
    info = np.zeros(3, dtype=np.int64)
    _full_gd(W, off, M, etas, act, record_every, out_t, out_F, out_loss, out_gap, info)
    k = int(info[1])
    config = {
        "depths": np.diff(off).tolist(),
        "d": d,
        "activation": activation,
        "n_steps": n_steps,
        "record_every": record_every,
        "eta_first_last": (float(etas[0]), float(etas[-1])) if n_steps else None,
    }
    return FullRun(out_t[:k], out_F[:k], out_loss[:k], out_gap[:k], _unpack(W, off), int(info[0]), int(info[2]), config)


def svs_initialisation(
    alphas: npt.ArrayLike,
    depths: Iterable[int],
    U: npt.ArrayLike,
    V: npt.ArrayLike,
    frames: Sequence[Sequence[np.ndarray]] | None = None,
) -> list[list[np.ndarray]]:
    """Layers W_hl = Q_{h,l+1} diag(a_h) Q_hl^T with Q_h1 = V, Q_{h,L_h+1} = U (Definition B.1).

    ``alphas`` (H,) or (H, d) end-to-end scales, a_h = alpha_h^{1/L_h}; ``frames[h]`` optional
    inner orthogonal matrices Q_h2..Q_hL_h (default: all V, which with U = V is Eq. (11) in the
    basis of V).
    """
    L = _depths(depths)
    Um, Vm = np.asarray(U, dtype=float), np.asarray(V, dtype=float)
    d = Vm.shape[0]
    for name, Q in (("U", Um), ("V", Vm)):
        if Q.shape != (d, d) or not np.allclose(Q.T @ Q, np.eye(d), atol=1e-12):
            raise ValueError(f"{name} must be a {d} x {d} orthogonal matrix")
    a = initial_layers(alphas, L)
    if a.shape[1] == 1:
        a = np.repeat(a, d, axis=1)
    if a.shape[1] != d:
        raise ValueError(f"alphas must give one scale per pathway or per (pathway, mode); got {a.shape}")
    out = []
    for h, Lh in enumerate(L):
        inner = [Vm] * (Lh - 1) if frames is None else list(frames[h])
        if len(inner) != Lh - 1:
            raise ValueError(f"frames[{h}] must hold L_h - 1 = {Lh - 1} orthogonal matrices")
        Qs = [Vm, *inner, Um]
        out.append([Qs[l + 1] @ np.diag(a[h]) @ Qs[l].T for l in range(Lh)])
    return out


def gaussian_initialisation(
    rng: np.random.Generator, d: int, depths: Iterable[int], variance: float = 0.02
) -> list[list[np.ndarray]]:
    """Layers with i.i.d. N(0, variance/(n_in + n_out)) entries, n_in = n_out = d (Section 5.1, Figure 3)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    d = _int(d, "d", 1)
    L = _depths(depths)
    v = float(_positive_vector(variance, "variance")[0])
    sd = math.sqrt(v / (2 * d))
    return [[rng.normal(0.0, sd, size=(d, d)) for _ in range(Lh)] for Lh in L]


def hessian_top(
    Ws: Sequence[Sequence[npt.ArrayLike]], M_star: npt.ArrayLike, activation: str = "linear", h: float = 1e-5
) -> float:
    """Largest eigenvalue of the loss Hessian by central differences of the exact gradient (O(h^2))."""
    W, off = _pack(Ws)
    M = _target(M_star, W.shape[1])
    act = _activation(activation)
    if not (isinstance(h, float) and 0 < h < 1):
        raise ValueError(f"h must be a float in (0, 1); got {h!r}")
    theta = W.ravel().copy()
    n, d = theta.size, W.shape[1]
    Z, A, G = np.zeros_like(W), np.zeros_like(W), np.zeros_like(W)
    work = [np.empty((d, d)) for _ in range(3)]

    def grad(th):
        _loss_grad(th.reshape(W.shape), off, M, act, Z, A, G, *work)
        return G.ravel().copy()

    Hm = np.empty((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        Hm[:, k] = (grad(theta + e) - grad(theta - e)) / (2 * h)
    return float(np.linalg.eigvalsh(0.5 * (Hm + Hm.T))[-1])


# ================================================================ the deep-chain map (19), for Figure 6
def chain_orbit(L: int, gamma: float, n_points: int = 400) -> dict:
    """Figure 6 data: the normalised chain map g(u) = u + (gamma/L) u^{L-1}(1 - u^L) (Eq. (72),
    sigma = 1, eta = gamma/S_1) on [0, 1.6], its maximiser c on (0, 1), the worst overshoot g(c)
    and the return g(g(c)) (from :func:`numerics.multipath.wcr.two_step`, 12 digits)."""
    from .wcr import two_step

    L = _int(L, "L", 2)
    g = float(_positive_vector(gamma, "gamma")[0])
    n_points = _int(n_points, "n_points", 10)
    alpha = g / L
    u = np.linspace(0.0, 1.6, n_points)
    c, w1, w2 = two_step(mpmath.mpf(g) / L, L, 1, 12)
    return {"u": u, "g": u + alpha * u ** (L - 1) * (1 - u**L), "c": float(c), "g_c": float(w1), "g_g_c": float(w2)}
