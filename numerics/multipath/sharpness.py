"""Sharpness, balancing and step-size ceilings of multi-pathway deep linear networks, as numbers.

Closed forms (mpmath, ``dps`` significant digits, guard digits inside; never a global
``mp.dps``), from :mod:`derivations.multipath.sharpness` and :mod:`.heterogeneous`:

- mode sharpness lambda = L sum_h sigma_h^{2-2/L} (Eq. (13)) and its heterogeneous form
  sum_h L_h sigma_h^{2-2/L_h} (Eq. (17)); lambda_min = L H^{2/L-1} sigma_*^{2-2/L} (Eq. (15));
- the rank-p window (Eq. (24)): eta_max = min(2/lambda_1^min, eta_WCR), in normalised units
  gamma = eta S_1 the ceilings 2 H^{1-2/L} and gamma_WCR(L) (from :mod:`.wcr`);
- the optimal heterogeneous allocation (Eq. (18)): sigma_h(mu) = (mu/(2(L_h-1)))^{L_h/(L_h-2)} with
  sum_h sigma_h(mu) = sigma_*; the sum is strictly increasing in mu (every L_h >= 3), so mu is the
  unique root, found by a bracketing solver at ``dps`` + 10 digits and certified by interval
  bisection (:func:`certify_allocation`).

Dynamics (Appendix E): the reduced GD recursion (54) a_h <- a_h - eta r a_h^{L-1} in float64
(:func:`eos_two_cycle`, measuring the two-step contraction at the edge of stability), the
gradient-flow limit (:func:`gradient_flow`), and the zero-loss point of a GF leaf (:func:`leaf_sharpness`).

Full matrices (float64, for the SVS and Hessian checks): random orthogonal frames, the
layer gradient (34), one GD step, the Jacobian of vec M and a finite-difference Hessian.

Parameters are validated: depths L (and L_h) integers >= 1, >= 2 or >= 3 as the formula
needs, H an integer >= 1, sigma > 0 finite; a bad one raises ValueError naming it.

>>> mpmath.nstr(lambda_min(2, 3, 1, 20), 15)   # 3 * 2^(-1/3)
'2.3811015779523'
>>> c = ceilings(8, 20, 6); c["binding"], mpmath.nstr(c["gamma_balanced"], 6), mpmath.nstr(c["gamma_wcr"], 6)
('wcr', '12.996', '5.8436')

Reference: arXiv 2606.05219, Sections 4-6 (Eqs. (13)-(18), (24)); Appendices B-E.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import SupportsIndex

import mpmath
import numpy as np
import numpy.typing as npt
from mpmath import iv

from ..intervals import certified_decreasing_root, iv_workdps
from ..validation import integer
from .wcr import gamma_wcr

_GUARD = 10  # guard digits for closed forms: a handful of roundings of O(1) quantities


# ---------------------------------------------------------------- validation
def check_depth(L: SupportsIndex, minimum: int = 1, name: str = "L") -> int:
    """``L`` as an int, or ValueError naming it (``name``) unless it is an integer >= ``minimum``."""
    return integer(L, name, minimum)


def check_pathways(H: SupportsIndex) -> int:
    """``H`` as an int, or ValueError naming ``H`` unless it is an integer >= 1."""
    return check_depth(H, 1, "H")


def _finite_mpf(value: object) -> mpmath.mpf | None:
    """``value`` as a finite mpf (exact for str/int/float input), None if it is not one (a bool is not)."""
    if isinstance(value, bool):
        return None
    try:
        with mpmath.workdps(60):
            x = mpmath.mpf(value)
    except (TypeError, ValueError):
        return None
    return x if mpmath.isfinite(x) else None


def check_sigma(sigma: float | str | mpmath.mpf, name: str = "sigma") -> mpmath.mpf:
    """``sigma`` as an mpf (exact for str/int/float input), or ValueError unless positive and finite."""
    s = _finite_mpf(sigma)
    if s is None or not s > 0:
        raise ValueError(f"{name} must be a positive finite number; got {sigma!r}")
    return s


def check_dps(dps: int | np.integer) -> int:
    """``dps`` as an int, or ValueError naming ``dps`` unless it is an integer >= 1."""
    return integer(dps, "dps", 1)


def _check_depths(depths, minimum: int) -> list[int]:
    if isinstance(depths, (str, bytes)) or not hasattr(depths, "__iter__"):
        raise ValueError(f"depths must be a sequence of integers >= {minimum}; got {depths!r}")
    out = [check_depth(d, minimum, "depths") for d in depths]
    if not out:
        raise ValueError("depths must not be empty")
    return out


def _check_sigmas(sigmas) -> list:
    if isinstance(sigmas, (str, bytes)) or not hasattr(sigmas, "__iter__"):
        raise ValueError(f"sigmas must be a sequence of numbers >= 0; got {sigmas!r}")
    out = [_finite_mpf(v) for v in sigmas]
    if any(x is None or not x >= 0 for x in out):
        raise ValueError(f"sigmas must be finite numbers >= 0; got {sigmas!r}")
    if not out:
        raise ValueError("sigmas must not be empty")
    return out


def _round(x, dps):
    with mpmath.workdps(dps):
        return +x


# ---------------------------------------------------------------- closed forms
def mode_sharpness(sigmas: Iterable[float | str | mpmath.mpf], L: int, dps: int = 50) -> mpmath.mpf:
    """lambda_i = L sum_h sigma_hi^{2-2/L} (Eq. (13)) for pathway values ``sigmas`` >= 0, depth L >= 2.

    >>> mpmath.nstr(mode_sharpness([1, 0], 4, 10), 10)
    '4.0'
    """
    L, dps = check_depth(L, 2), check_dps(dps)
    sv = _check_sigmas(sigmas)
    with mpmath.workdps(dps + _GUARD):
        p = 2 - mpmath.mpf(2) / L
        out = L * mpmath.fsum(v**p for v in sv)
    return _round(out, dps)


def hetero_sharpness(sigmas: Iterable[float | str | mpmath.mpf], depths: Iterable[int], dps: int = 50) -> mpmath.mpf:
    """lambda_i = sum_h L_h sigma_hi^{2-2/L_h} (Eq. (17)); every depth >= 2, one value per pathway.

    >>> mpmath.nstr(hetero_sharpness([1, 0], [3, 7], 10), 10)
    '3.0'
    """
    dps = check_dps(dps)
    sv, ds = _check_sigmas(sigmas), _check_depths(depths, 2)
    if len(sv) != len(ds):
        raise ValueError(f"sigmas and depths must have the same length; got {len(sv)} and {len(ds)}")
    with mpmath.workdps(dps + _GUARD):
        out = mpmath.fsum(d * v ** (2 - mpmath.mpf(2) / d) for v, d in zip(sv, ds))
    return _round(out, dps)


def single_path_sharpness(L: int, sigma: float | str | mpmath.mpf, dps: int = 50) -> mpmath.mpf:
    """S = L sigma_*^{2-2/L}: the whole mode in one pathway of depth L >= 2 (Sections 5.1, 6)."""
    L, dps, s = check_depth(L, 2), check_dps(dps), check_sigma(sigma)
    with mpmath.workdps(dps + _GUARD):
        out = L * s ** (2 - mpmath.mpf(2) / L)
    return _round(out, dps)


def lambda_min(H: int, L: int, sigma: float | str | mpmath.mpf, dps: int = 50) -> mpmath.mpf:
    """lambda_i^min = L H^{2/L-1} sigma_*^{2-2/L} (Eq. (15)), H >= 1, L >= 2 (the minimum for L > 2)."""
    H, L, dps, s = check_pathways(H), check_depth(L, 2), check_dps(dps), check_sigma(sigma)
    with mpmath.workdps(dps + _GUARD):
        out = L * mpmath.mpf(H) ** (mpmath.mpf(2) / L - 1) * s ** (2 - mpmath.mpf(2) / L)
    return _round(out, dps)


def reduction_factor(H: int, L: int, dps: int = 50) -> mpmath.mpf:
    """H^{2/L-1} = lambda_min / lambda_one-path (Eq. (16)), H >= 1, L >= 1.

    >>> mpmath.nstr(reduction_factor(4, 4, 10), 10)
    '0.5'
    """
    H, L, dps = check_pathways(H), check_depth(L, 1), check_dps(dps)
    with mpmath.workdps(dps + _GUARD):
        out = mpmath.mpf(H) ** (mpmath.mpf(2) / L - 1)
    return _round(out, dps)


# ---------------------------------------------------------------- the rank-p window (24)
def balanced_ceiling(H: int, L: int, dps: int = 50) -> mpmath.mpf:
    """gamma = (2/lambda_1^min) S_1 = 2 H^{1-2/L}: the balanced-attractor ceiling in units of 1/S_1."""
    H, L, dps = check_pathways(H), check_depth(L, 2), check_dps(dps)
    with mpmath.workdps(dps + _GUARD):
        out = 2 * mpmath.mpf(H) ** (1 - mpmath.mpf(2) / L)
    return _round(out, dps)


def ceilings(H: int, L: int, digits: int = 15) -> dict:
    """Both normalised ceilings of Eq. (24) and which one binds (the smaller).

    Returns ``gamma_balanced`` = 2 H^{1-2/L}, ``gamma_wcr`` = gamma_WCR(L), ``gamma_max`` (their
    minimum) and ``binding``: ``"balanced"`` (2/lambda_1^min binds), ``"wcr"`` or ``"tie"``
    (equal to ``digits`` digits).
    """
    H, L, digits = check_pathways(H), check_depth(L, 2), check_dps(digits)
    gb = balanced_ceiling(H, L, digits + 5)
    gw = gamma_wcr(L, digits + 5)
    with mpmath.workdps(digits + 5):
        if abs(gb - gw) <= mpmath.mpf(10) ** (-digits) * gw:
            binding = "tie"
        else:
            binding = "balanced" if gb < gw else "wcr"
        return {"H": H, "L": L, "gamma_balanced": gb, "gamma_wcr": gw, "gamma_max": min(gb, gw), "binding": binding}


def eta_max(H: int, L: int, sigma: float | str | mpmath.mpf, digits: int = 15) -> mpmath.mpf:
    """eta_max = min(2/lambda_1^min, eta_WCR) = gamma_max / S_1 (Eq. (24)), S_1 = L sigma_*1^{2-2/L}."""
    c = ceilings(H, L, digits)
    S1 = single_path_sharpness(L, sigma, digits + 5)
    with mpmath.workdps(digits + 5):
        out = c["gamma_max"] / S1
    return _round(out, digits)


def ceiling_table(Hs: Iterable[int] = range(2, 9), Ls: Sequence[int] = range(2, 21), digits: int = 12) -> list[dict]:
    """:func:`ceilings` for every (H, L) in ``Hs`` x ``Ls`` (the grid of the audit: {2..8} x {2..20})."""
    return [ceilings(H, L, digits) for H in Hs for L in Ls]


def rebalanced_rank(sigmas_star: Iterable[float | str | mpmath.mpf], H: int, L: int, digits: int = 15) -> int:
    """The achievable rank of Eq. (24): the number of modes p with 2/S_p < eta_max (S_p = L sigma_*p^{2-2/L})."""
    sv = _check_sigmas(sigmas_star)
    if not all(v > 0 for v in sv):
        raise ValueError(f"sigmas_star must be positive; got {sigmas_star!r}")
    c = ceilings(H, L, digits)
    with mpmath.workdps(digits + 5):
        top = max(sv)
        # 2/S_p < gamma_max/S_1  <=>  gamma_max (sigma_p/sigma_1)^{2-2/L} > 2
        p = 2 - mpmath.mpf(2) / L
        return sum(1 for v in sv if c["gamma_max"] * (v / top) ** p > 2)


# ---------------------------------------------------------------- heterogeneous depths (18)
@dataclass(frozen=True)
class Allocation:
    """The sharpness-minimising split of sigma_* over pathways of depths ``depths`` (Eq. (18)).

    ``mu`` is the Lagrange multiplier, ``sigmas`` the optimal pathway values (summing to
    ``sigma``), ``lam`` the minimal sharpness sum_h L_h sigma_h^{2-2/L_h}, all to ``dps`` digits.
    """

    depths: tuple
    sigma: mpmath.mpf
    dps: int
    mu: mpmath.mpf
    sigmas: tuple
    lam: mpmath.mpf

    @property
    def eta_star(self) -> mpmath.mpf:
        """2/lambda^min: the step of Figure 4 (eta* = 2/lambda_1^min from the numerical solution)."""
        with mpmath.workdps(self.dps):
            return 2 / self.lam


def _alloc_at(mu, depths):
    return [(mu / (2 * (d - 1))) ** (mpmath.mpf(d) / (d - 2)) for d in depths]


def optimal_allocation(depths: Iterable[int], sigma: float | str | mpmath.mpf = 1, dps: int = 50) -> Allocation:
    """Solve (18) for depths >= 3: mu with sum_h (mu/(2(L_h-1)))^{L_h/(L_h-2)} = sigma_*.

    Bracket [mu_lo, mu_hi] by doubling from mu = 1 (the sum is strictly increasing in mu), then
    mpmath's ``anderson`` bracketing solver at dps + 10 digits on log(sum) - log(sigma_*).

    >>> a = optimal_allocation([3, 3], 1, 20); [mpmath.nstr(v, 10) for v in a.sigmas]   # equal depths: equal split
    ['0.5', '0.5']
    """
    ds = _check_depths(depths, 3)
    s, dps = check_sigma(sigma), check_dps(dps)
    work = dps + _GUARD
    with mpmath.workdps(work):

        def f(mu):
            return mpmath.log(mpmath.fsum(_alloc_at(mu, ds))) - mpmath.log(s)

        lo, hi = mpmath.mpf(1), mpmath.mpf(1)
        while f(lo) > 0:
            lo /= 2
        while f(hi) < 0:
            hi *= 2
        mu = mpmath.findroot(f, (lo, hi), solver="anderson", tol=mpmath.mpf(10) ** (-2 * work))
        sv = _alloc_at(mu, ds)
        lam = mpmath.fsum(d * v ** (2 - mpmath.mpf(2) / d) for v, d in zip(sv, ds))
    with mpmath.workdps(dps):
        return Allocation(tuple(ds), +s, dps, +mu, tuple(+v for v in sv), +lam)


def certify_allocation(depths: Iterable[int], sigma: float | str | mpmath.mpf = 1, dps: int = 30) -> dict:
    """Certified enclosures of mu, the optimal sigma_h and lambda^min (interval arithmetic).

    mu is enclosed by :func:`numerics.intervals.certified_decreasing_root` on
    f(mu) = sigma_* - sum_h (mu/(2(L_h-1)))^{L_h/(L_h-2)} (strictly decreasing: certified sign change at
    the ends of a bracket around the mpmath root, then interval bisection to width 10^-dps);
    sigma_h and lambda are then evaluated in interval arithmetic over that enclosure.
    Returns a dict of mpmath ``iv`` intervals: ``mu``, ``sigmas`` (tuple), ``lam``, ``sum``.
    """
    ds = _check_depths(depths, 3)
    s, dps = check_sigma(sigma), check_dps(dps)
    approx = optimal_allocation(ds, s, dps + 5)
    with iv_workdps(dps + 20):
        S_iv = iv.mpf(s)

        def f_iv(M):
            return S_iv - sum(iv.exp(iv.mpf(d) / (d - 2) * iv.log(M / (2 * (d - 1)))) for d in ds)

        with mpmath.workdps(dps + 20):
            w = approx.mu * mpmath.mpf(10) ** (-(dps // 2))
            lo, hi = approx.mu - w, approx.mu + w
        mu_iv = certified_decreasing_root(f_iv, 0, lo, hi, dps)
        with iv_workdps(dps + 20):
            sig_iv = tuple(iv.exp(iv.mpf(d) / (d - 2) * iv.log(mu_iv / (2 * (d - 1)))) for d in ds)
            lam_iv = sum(d * iv.exp((2 - iv.mpf(2) / d) * iv.log(v)) for v, d in zip(sig_iv, ds))
            total = sum(sig_iv)
    return {"mu": mu_iv, "sigmas": sig_iv, "lam": lam_iv, "sum": total}


def _depth_pair(L1: int, L2: int, minimum: int, dps: int) -> tuple[int, int, int]:
    """Depths ``minimum <= L1 < L2`` and ``dps`` as ints, or a ValueError naming the one that is not."""
    L1, L2, dps = check_depth(L1, minimum, "L1"), check_depth(L2, minimum, "L2"), check_dps(dps)
    if not L1 < L2:
        raise ValueError(f"L1 must be smaller than L2; got L1={L1}, L2={L2}")
    return L1, L2, dps


def share_crossover(L1: int, L2: int, dps: int = 50) -> mpmath.mpf:
    """Two pathways, depths 3 <= L1 < L2: the sigma_* at which the optimal shares are equal.

    sigma_* = 2 s_c, s_c = ((L2-1)/(L1-1))^{L1 L2/(2(L1-L2))}; above it the shallow pathway carries
    more, below it the deeper one (:func:`derivations.multipath.heterogeneous.share_crossover`).

    >>> mpmath.nstr(share_crossover(3, 7, 10), 10)
    '0.1118373073'
    """
    L1, L2, dps = _depth_pair(L1, L2, 3, dps)
    with mpmath.workdps(dps + _GUARD):
        out = 2 * (mpmath.mpf(L2 - 1) / (L1 - 1)) ** (mpmath.mpf(L1 * L2) / (2 * (L1 - L2)))
    return _round(out, dps)


def single_path_crossover(L1: int, L2: int, dps: int = 50) -> mpmath.mpf:
    """Depths 2 <= L1 < L2: the sigma_* below which L1 sigma^{2-2/L1} > L2 sigma^{2-2/L2} (shallow sharper).

    >>> mpmath.nstr(single_path_crossover(3, 7, 10), 10)
    '0.1081585705'
    """
    L1, L2, dps = _depth_pair(L1, L2, 2, dps)
    with mpmath.workdps(dps + _GUARD):
        out = (mpmath.mpf(L2) / L1) ** (mpmath.mpf(L1 * L2) / (2 * (L1 - L2)))
    return _round(out, dps)


# ---------------------------------------------------------------- Appendix E: leaves and the EoS
def leaf_sharpness(
    z: Iterable[float | str | mpmath.mpf], L: int, sigma: float | str | mpmath.mpf = 1, dps: int = 50
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(m, Lambda): the zero-loss point q_h = m + z_h of the GF leaf ``z`` (sum z = 0) and its sharpness.

    sum_h (m + z_h)^{-L/(L-2)} = sigma_* is strictly decreasing in m on m > -min z, from +inf to 0,
    so m is unique; it is found by a bracketing solver. Lambda = L sum_h (m + z_h)^{-(2L-2)/(L-2)}
    (Proposition E.4). L >= 3.
    """
    L, dps, s = check_depth(L, 3), check_dps(dps), check_sigma(sigma)
    work = dps + _GUARD
    with mpmath.workdps(work):
        zz = [mpmath.mpf(v) for v in z]
        if len(zz) < 1 or abs(mpmath.fsum(zz)) > mpmath.mpf(10) ** (-dps) * (1 + max(abs(v) for v in zz)):
            raise ValueError(f"z must be a nonempty vector summing to 0; got {z!r}")
        kL = -mpmath.mpf(L) / (L - 2)

        def g(mm):
            return mpmath.log(mpmath.fsum((mm + v) ** kL for v in zz)) - mpmath.log(s)

        floor = -min(zz)
        lo = floor + (abs(floor) + 1) * mpmath.mpf(10) ** (-5)
        while g(lo) < 0:
            lo = floor + (lo - floor) / 1024
        hi = abs(floor) + 1
        while g(hi) > 0:
            hi *= 2
        mm = mpmath.findroot(g, (lo, hi), solver="anderson", tol=mpmath.mpf(10) ** (-2 * work))
        lam = L * mpmath.fsum((mm + v) ** (-mpmath.mpf(2 * L - 2) / (L - 2)) for v in zz)
    return _round(mm, dps), _round(lam, dps)


def eos_two_cycle(
    L: int,
    H: int = 2,
    excess: float = 1e-3,
    delta0: float = 1e-3,
    steps: int = 20000,
    window: int = 400,
    sigma: float | str | mpmath.mpf = 1.0,
) -> dict:
    """GD (54) near the balanced minimum just above the stability edge, measured over its two-cycle (float64).

    eta = 2(1 + ``excess``)/lambda_min, start a_h = a_*(1 + delta0 w_h) with a zero-mean pattern w.
    After ``steps`` steps the residual oscillates on a stable two-cycle; over the last ``window``
    steps the function records, per step t: r(t), beta(t) = 2 - eta lambda(t), G(t), V(t)
    (arrays), and the summaries

    - ``beta_over_r``: mean of beta(t)/r(t) (paper's Hypothesis E.10: -> 0; two-cycle: -2A);
    - ``sum_over_r2``: mean of (r(t) + r(t+1))/r(t)^2 (paper's (65): +A; two-cycle: -A);
    - ``c_measured``: mean over t of -log(G(t+2)/G(t))/r(t)^2 (even and odd t alike);
    - ``kappa``, ``A``: kappa_* = eta (L-1) a_*^{L-2} and A_* = (eta^2/2) L (L-1) H a_*^{3L-4};
    - ``alternates``: whether r changed sign at every step of the window;
    - ``V_pairs_decrease``: whether V(t+2) < V(t) for every t of the window.

    Float64 suffices: G ~ 1e-10 is formed from differences a_h - mean(a) of O(1e-5), ~11 correct
    digits, while log(G(t+2)/G(t)) ~ 1e-3.
    """
    L, H = check_depth(L, 3), check_pathways(H)
    if H < 2:
        raise ValueError(f"H must be >= 2 for a balancing gap; got {H}")
    for name, val in (("excess", excess), ("delta0", delta0)):
        if not (isinstance(val, (int, float)) and math.isfinite(val) and 0 < val < 0.5):
            raise ValueError(f"{name} must be a number in (0, 0.5); got {val!r}")
    for name, val in (("steps", steps), ("window", window)):
        if isinstance(val, bool) or not isinstance(val, int) or val < 4:
            raise ValueError(f"{name} must be an integer >= 4; got {val!r}")
    if window + 2 > steps:
        raise ValueError(f"window must be at most steps - 2; got window={window}, steps={steps}")
    s = float(check_sigma(sigma))
    a_star = (s / H) ** (1.0 / L)
    lam_min = L * H * a_star ** (2 * L - 2)
    eta = 2.0 * (1.0 + excess) / lam_min
    w = np.array([(-1.0) ** h * (h + 1) for h in range(H)])
    w -= w.mean()
    a = a_star * (1.0 + delta0 * w / np.abs(w).max())
    n_keep = window + 2
    rec = np.empty((n_keep, 4))
    for t in range(steps):
        aL = a**L
        r = aL.sum() - s
        if t >= steps - n_keep:
            k = t - (steps - n_keep)
            dev = a - a.mean()
            q = a ** (2.0 - L)
            rec[k] = (r, 2.0 - eta * L * (a ** (2 * L - 2)).sum(), (dev**2).sum(), ((q - q.mean()) ** 2).sum())
        a = a - eta * r * a ** (L - 1)
    r_, beta, G, V = rec.T
    kappa = eta * (L - 1) * a_star ** (L - 2)
    A = eta**2 / 2 * L * (L - 1) * H * a_star ** (3 * L - 4)
    c = -np.log(G[2:] / G[:-2]) / r_[:-2] ** 2
    return {
        "L": L,
        "H": H,
        "eta": eta,
        "lam_min": lam_min,
        "r": r_,
        "beta": beta,
        "G": G,
        "V": V,
        "beta_over_r": float(np.mean(beta / r_)),
        "sum_over_r2": float(np.mean((r_[:-1] + r_[1:]) / r_[:-1] ** 2)),
        "c_measured": float(np.mean(c)),
        "amplitude": float(np.sqrt(np.mean(r_**2))),
        "kappa": kappa,
        "A": A,
        "alternates": bool(np.all(np.sign(r_[1:]) == -np.sign(r_[:-1]))),
        "V_pairs_decrease": bool(np.all(V[2:] < V[:-2])),
    }


def gradient_flow(
    a0: npt.ArrayLike,
    L: int | Iterable[int],
    sigma: float | str | mpmath.mpf = 1.0,
    T: float = 1.0,
    rtol: float = 1e-12,
) -> np.ndarray:
    """The GF limit of (54), da_h/dt = -r a_h^{L_h-1}, integrated to time ``T`` (scipy DOP853).

    ``L`` is one depth for every pathway or a sequence of depths L_h (Section 5.3), each >= 1;
    r = sum_h a_h^{L_h} - sigma_*. Returns the per-layer values at t = T (float64). ``rtol`` is
    passed to the integrator (``atol`` = rtol x 1e-3).
    """
    from scipy.integrate import solve_ivp

    a0 = np.asarray(a0, dtype=float)
    if a0.ndim != 1 or a0.size < 1 or not np.all(np.isfinite(a0)) or np.any(a0 <= 0):
        raise ValueError(f"a0 must be a 1-d array of positive numbers; got {a0!r}")
    depths = [check_depth(L, 1)] * a0.size if not hasattr(L, "__iter__") else _check_depths(L, 1)
    if len(depths) != a0.size:
        raise ValueError(f"L must be one depth or one per pathway; got {L!r} for {a0.size} pathways")
    s = float(check_sigma(sigma))
    if not (isinstance(T, (int, float)) and math.isfinite(T) and T > 0):
        raise ValueError(f"T must be a positive number; got {T!r}")
    Ls = np.array(depths, dtype=float)

    def rhs(_t, a):
        r = np.sum(a**Ls) - s
        return -r * a ** (Ls - 1)

    sol = solve_ivp(rhs, (0.0, float(T)), a0, method="DOP853", rtol=rtol, atol=rtol * 1e-3)
    if not sol.success:  # pragma: no cover - smooth polynomial field on a short interval
        raise RuntimeError(sol.message)
    return sol.y[:, -1]


# ---------------------------------------------------------------- full matrices (float64)
def random_orthogonal(rng: np.random.Generator, d: int) -> np.ndarray:
    """A Haar-random d x d orthogonal matrix (QR of a Gaussian matrix with the signs fixed)."""
    d = check_depth(d, 1, "d")
    Z = rng.standard_normal((d, d))
    Q, R = np.linalg.qr(Z)
    return Q * np.sign(np.diag(R))


def svs_layers(
    frames: Sequence[Sequence[np.ndarray]], values: Sequence[Sequence[npt.ArrayLike]]
) -> list[list[np.ndarray]]:
    """Layers W_hl = Q_{h,l+1} diag(values[h][l]) Q_hl^T (Definition B.1).

    ``frames[h]`` is the list Q_h1 = V_*, ..., Q_{h,L_h+1} = U_* of orthogonal matrices and
    ``values[h][l]`` the diagonal of Sigma_hl.
    """
    return [
        [frames[h][l + 1] @ np.diag(values[h][l]) @ frames[h][l].T for l in range(len(values[h]))]
        for h in range(len(values))
    ]


def _chain(layers, lo, hi, d):
    P = np.eye(d)
    for l in range(lo, hi + 1):
        P = layers[l] @ P
    return P


def network(Ws: Sequence[Sequence[np.ndarray]]) -> np.ndarray:
    """M = sum_h W_{hL_h} ... W_{h1} (Eqs. (1)-(2))."""
    d = Ws[0][0].shape[0]
    return sum(_chain(layers, 0, len(layers) - 1, d) for layers in Ws)


def loss(Ws: Sequence[Sequence[np.ndarray]], M_star: npt.ArrayLike) -> float:
    """(1/2)||M - M_*||_F^2 (Eq. (3))."""
    R = network(Ws) - M_star
    return 0.5 * float(np.sum(R * R))


def full_gradient(Ws: Sequence[Sequence[np.ndarray]], M_star: npt.ArrayLike) -> list[list[np.ndarray]]:
    """grad_{W_hl} = W_{h,L:l+1}^T (M - M_*) W_{h,l-1:1}^T (Eq. (34); derived in derivations.multipath.svs)."""
    d = Ws[0][0].shape[0]
    R = network(Ws) - M_star
    return [[_chain(ly, l + 1, len(ly) - 1, d).T @ R @ _chain(ly, 0, l - 1, d).T for l in range(len(ly))] for ly in Ws]


def gd_step(Ws: Sequence[Sequence[np.ndarray]], M_star: npt.ArrayLike, eta: float) -> list[list[np.ndarray]]:
    """One GD step (Eq. (4)) on every layer."""
    G = full_gradient(Ws, M_star)
    return [[W - eta * g for W, g in zip(ly, gl)] for ly, gl in zip(Ws, G)]


def flatten(Ws: Iterable[Iterable[np.ndarray]]) -> np.ndarray:
    """All layer entries as one vector, pathway by pathway, layer by layer, row-major."""
    return np.concatenate([W.ravel() for ly in Ws for W in ly])


def unflatten(theta: np.ndarray, shapes_like: Iterable[Iterable[np.ndarray]]) -> list[list[np.ndarray]]:
    """Inverse of :func:`flatten` with the layer structure of ``shapes_like``."""
    out, k = [], 0
    for ly in shapes_like:
        row = []
        for W in ly:
            row.append(theta[k : k + W.size].reshape(W.shape))
            k += W.size
        out.append(row)
    return out


def full_jacobian(Ws: Sequence[Sequence[np.ndarray]]) -> np.ndarray:
    """d vec(M)/d theta (row-major vec, theta as in :func:`flatten`): the block of W_hl is B^T (x) A.

    With A = W_{h,L:l+1} and B = W_{h,l-1:1}, M depends on W_hl through A W_hl B, and in
    row-major vectorisation vec(A X B) = (A (x) B^T) vec(X).
    """
    d = Ws[0][0].shape[0]
    blocks = []
    for ly in Ws:
        for l in range(len(ly)):
            A = _chain(ly, l + 1, len(ly) - 1, d)
            B = _chain(ly, 0, l - 1, d)
            blocks.append(np.kron(A, B.T))
    return np.hstack(blocks)


def fd_hessian(Ws: Sequence[Sequence[np.ndarray]], M_star: npt.ArrayLike, h: float = 1e-5) -> np.ndarray:
    """Central finite differences of the analytic gradient (34): an O(h^2)-accurate Hessian."""
    theta = flatten(Ws)
    n = theta.size
    Hm = np.empty((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        gp = flatten(full_gradient(unflatten(theta + e, Ws), M_star))
        gm = flatten(full_gradient(unflatten(theta - e, Ws), M_star))
        Hm[:, k] = (gp - gm) / (2 * h)
    return 0.5 * (Hm + Hm.T)
