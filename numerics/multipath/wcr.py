"""The worst-case-return constant gamma_WCR(L) to any precision, with certified enclosures.

Definition (Section 6, Appendix F). For the deep-chain map g_alpha(u) = u + alpha u^{L-1}(1 - u^L)
with maximiser c of g_alpha on [0, 1], the return point g_alpha(g_alpha(c)) is positive
exactly for alpha < alpha_WCR(L), and gamma_WCR(L) = L alpha_WCR(L) = eta_WCR S_1.

Algorithm. In t = 2y - 1 = 2c^L - 1 (Appendix F.6) the boundary (83) reads log psi(t) = 0 with

    log psi = (L-2) log r + log(y r^L - 1) - log B,   B = L t + (1-t)/2,   log r = log1p((1-t)/(2B)),

a form without catastrophic cancellation or overflow at any L (y r^L is formed as
exp(log y + L log r)). :mod:`derivations.multipath.wcr` proves log psi strictly
decreasing on (-1/(2L-1), 1) with log psi(0) > 0, so the root is unique and t in (0, 1).
The root is bracketed in float64 (or mpmath for L >= 10^15), polished by Newton in
mpmath with ``digits`` + guard digits (guard = 10 + 2 x the number of digits of L: L log r
multiplies rounding errors by L), and gamma = L y^{2/L-1}/B (81).

Certification (:func:`certify`). A bracket [t - d, t + d] is verified in interval
arithmetic (``mpmath.iv``, outward rounding): log psi > 0 at the left end, < 0 at the right
end, and the enclosure of d(log psi)/dt over the whole bracket is < 0 (uniqueness inside
the bracket, independently of the symbolic proof); gamma (81) is then enclosed by
evaluating it in interval arithmetic over the bracket, with width below 10^-(digits+1).

Independent check (:func:`knife_edge_gamma`). Without the root equation: for a step eta,
find the maximiser c of the raw map f_eta(w) = w - eta w^{L-1}(w^L - sigma) on (0, w_*)
by golden-section search (derivative-free), take the worst overshoot w1 = f(c) and one
more step w2 = f(w1), and bisect on eta for the knife edge w2 = 0.

>>> mpmath.nstr(gamma_wcr(2, 20), 20)   # 3 sqrt(3) - 2
'3.1961524227066318806'
>>> c = certify(5, 12); c.gamma_lo < gamma_wcr(5, 30) < c.gamma_hi, c.width < mpmath.mpf(10)**-12
(True, True)

Reference: arXiv 2606.05219, Section 6 (Eqs. (19)-(23), Theorem 6.2) and Appendix F
(Eqs. (76)-(83), table (82)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, SupportsIndex

import mpmath
import numpy as np
import numpy.typing as npt
from mpmath import iv

from ..intervals import bounds, iv_workdps
from ..validation import integer

_FLOAT_LIMIT = 10**15  # above this depth the float64 bracket of t loses too much; use mpmath


def check_depth(L: SupportsIndex) -> int:
    """``L`` as a Python int, or ValueError naming ``L`` unless it is an integer >= 2."""
    return integer(L, "L (depth)", 2)


def check_digits(digits: int | np.integer) -> int:
    """``digits`` as a Python int, or ValueError naming ``digits`` unless it is an integer >= 1."""
    return integer(digits, "digits", 1)


def _guard(L: int) -> int:
    """Guard digits: 10, plus 2 per decimal digit of L (L log r amplifies rounding by L)."""
    return 10 + 2 * len(str(L))


# ---------------------------------------------------------------- the root function, mpmath
def _log_psi(t, L: int):
    """log psi(t) of (83) at the current mpmath precision (strictly decreasing in t)."""
    B = L * t + (1 - t) / 2
    logr = mpmath.log1p((1 - t) / (2 * B))
    logV = mpmath.log((1 + t) / 2) + L * logr  # log(y r^L)
    return (L - 2) * logr + mpmath.log(mpmath.expm1(logV)) - mpmath.log(B)


def _dlog_psi(t, L: int):
    """d(log psi)/dt from the identities of derivations.multipath.wcr.psi_monotonicity."""
    A = L * t + 1 - t
    B = L * t + (1 - t) / 2
    s = 1 - t
    dlogr = -mpmath.mpf(L) / (2 * A * B)
    dlogV = -s * (L - 1) * (3 * L - s * (2 * L - 1)) / (2 * A * B * (1 + t))
    logV = mpmath.log((1 + t) / 2) + L * mpmath.log1p(s / (2 * B))
    return (L - 2) * dlogr + dlogV / (-mpmath.expm1(-logV)) - (L - mpmath.mpf(1) / 2) / B


def _gamma_of_t(t, L: int):
    """gamma = L y^{2/L-1}/B(y) at y = (1+t)/2 (Eq. (81))."""
    B = L * t + (1 - t) / 2
    return L * mpmath.exp((mpmath.mpf(2) / L - 1) * mpmath.log((1 + t) / 2)) / B


# ---------------------------------------------------------------- the same in interval arithmetic
def _log_psi_iv(T, L: int):
    one, Li = iv.mpf(1), iv.mpf(L)
    B = Li * T + (one - T) / 2
    logr = iv.log(one + (one - T) / (2 * B))
    logV = iv.log((one + T) / 2) + Li * logr
    return (Li - 2) * logr + iv.log(iv.exp(logV) - one) - iv.log(B)


def _dlog_psi_iv(T, L: int):
    one, Li = iv.mpf(1), iv.mpf(L)
    A = Li * T + one - T
    B = Li * T + (one - T) / 2
    s = one - T
    dlogr = -Li / (2 * A * B)
    dlogV = -(s * (Li - 1) * (3 * Li - s * (2 * Li - 1))) / (2 * A * B * (one + T))
    logV = iv.log((one + T) / 2) + Li * iv.log(one + s / (2 * B))
    return (Li - 2) * dlogr + dlogV / (one - iv.exp(-logV)) - (Li - iv.mpf("0.5")) / B


def _gamma_of_t_iv(T, L: int):
    one, Li = iv.mpf(1), iv.mpf(L)
    B = Li * T + (one - T) / 2
    return Li * iv.exp((2 / Li - one) * iv.log((one + T) / 2)) / B


# ---------------------------------------------------------------- root finding
def _float_bracket_t(L: int) -> float:
    """Float64 bisection of log psi on (0, 1): a start for Newton (about 15 correct digits)."""
    a, b = 0.0, 1.0
    Lf = float(L)
    for _ in range(64):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        B = Lf * m + 0.5 * (1.0 - m)
        logr = math.log1p((1.0 - m) / (2.0 * B))
        em1 = math.expm1(math.log(0.5 * (1.0 + m)) + Lf * logr)
        f = (Lf - 2.0) * logr + (math.log(em1) if em1 > 0 else -math.inf) - math.log(B)
        a, b = (m, b) if f > 0 else (a, m)
    return 0.5 * (a + b)


def _mp_bracket_t(L: int):
    with mpmath.workdps(25 + _guard(L)):
        a, b = mpmath.mpf(0), mpmath.mpf(1)
        for _ in range(80):
            m = (a + b) / 2
            a, b = (m, b) if _log_psi(m, L) > 0 else (a, m)
        return (a + b) / 2


def _solve_t(L: int, dps: int):
    """The root t of log psi at ``dps`` working digits (Newton from a bisection start)."""
    start = _float_bracket_t(L) if L < _FLOAT_LIMIT else _mp_bracket_t(L)
    with mpmath.workdps(dps):
        t = mpmath.mpf(start)
        tol = mpmath.mpf(10) ** (-(dps - 3))
        for _ in range(100):
            step = _log_psi(t, L) / _dlog_psi(t, L)
            t -= step
            if abs(step) <= tol * t:
                break
        else:  # pragma: no cover - Newton from a 15-digit start converges in a few steps
            raise RuntimeError(f"Newton did not converge for L={L}")
        return +t


def root_t(L: int, digits: int = 15) -> mpmath.mpf:
    """t = 2y - 1 at the root of (80)/(83), to ``digits`` significant digits (t in (0, 1)).

    >>> mpmath.nstr(root_t(2, 15), 15)   # 2 (9 + 2 sqrt 3)/23 - 1
    '0.0838349230554569'
    """
    L, digits = check_depth(L), check_digits(digits)
    t = _solve_t(L, digits + _guard(L))
    with mpmath.workdps(digits):
        return +t


def y_and_gamma(L: int, digits: int = 15) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(y, gamma_WCR(L)) from one root solve, each to ``digits`` significant digits."""
    L, digits = check_depth(L), check_digits(digits)
    dps = digits + _guard(L)
    t = _solve_t(L, dps)
    with mpmath.workdps(dps):
        y, g = (1 + t) / 2, _gamma_of_t(t, L)
    with mpmath.workdps(digits):
        return +y, +g


def root_y(L: int, digits: int = 15) -> mpmath.mpf:
    """y = c^L at the root of (80) in ((L-1)/(2L-1), 1), to ``digits`` significant digits.

    >>> y = root_y(2, 30)
    >>> with mpmath.workdps(30): abs(y - (9 + 2*mpmath.sqrt(3))/23) < mpmath.mpf(10)**-29
    True
    """
    return y_and_gamma(L, digits)[0]


def gamma_wcr(L: int, digits: int = 15) -> mpmath.mpf:
    """gamma_WCR(L) = eta_WCR S_1 = L alpha_WCR(L) (Eq. (81)), to ``digits`` significant digits.

    >>> [mpmath.nstr(gamma_wcr(L, 4), 4) for L in (2, 3, 4, 5, 6, 8, 10, 20)]
    ['3.196', '3.661', '3.979', '4.224', '4.427', '4.751', '5.008', '5.844']
    """
    return y_and_gamma(L, digits)[1]


def alpha_wcr(L: int, digits: int = 15) -> mpmath.mpf:
    """alpha_WCR(L) = gamma_WCR(L)/L (Definition F.3, Eq. (78))."""
    L, digits = check_depth(L), check_digits(digits)
    g = gamma_wcr(L, digits + 5)
    with mpmath.workdps(digits):
        return g / L


def eta_wcr(L: int, sigma: float | str | mpmath.mpf, digits: int = 15) -> mpmath.mpf:
    """eta_WCR(L, sigma) = gamma_WCR(L)/S_1 with S_1 = L sigma^{2-2/L} (Eq. (20))."""
    L, digits = check_depth(L), check_digits(digits)
    sig = _check_sigma(sigma)
    g = gamma_wcr(L, digits + 5)
    with mpmath.workdps(digits + 5):
        S1 = L * mpmath.mpf(sig) ** (2 - mpmath.mpf(2) / L)
        out = g / S1
    with mpmath.workdps(digits):
        return +out


def _check_sigma(sigma):
    try:
        s = mpmath.mpf(sigma)
    except (TypeError, ValueError):
        raise ValueError(f"sigma must be a positive number; got {sigma!r}") from None
    if not (s > 0 and mpmath.isfinite(s)):
        raise ValueError(f"sigma must be a positive number; got {sigma!r}")
    return s


# ---------------------------------------------------------------- certification
@dataclass(frozen=True)
class Certificate:
    """A certified enclosure of the WCR root and constant at depth ``L``.

    ``t_lo < t < t_hi`` (log psi certified > 0 at t_lo and < 0 at t_hi), ``y_lo < y < y_hi``
    for y = (1+t)/2, ``gamma_lo <= gamma_WCR(L) <= gamma_hi``; ``dlog_psi_max`` is a
    certified upper bound of d(log psi)/dt on [t_lo, t_hi] (negative: the root is unique
    there); ``gamma`` and ``y`` are midpoint values to ``digits`` + 5 significant digits.
    """

    L: int
    digits: int
    t_lo: mpmath.mpf
    t_hi: mpmath.mpf
    y_lo: mpmath.mpf
    y_hi: mpmath.mpf
    gamma_lo: mpmath.mpf
    gamma_hi: mpmath.mpf
    dlog_psi_max: mpmath.mpf
    gamma: mpmath.mpf
    y: mpmath.mpf

    @property
    def width(self):
        """gamma_hi - gamma_lo (exact: computed at ample precision)."""
        with mpmath.workdps(self.digits + 40):
            return self.gamma_hi - self.gamma_lo


def certify(L: int, digits: int = 15) -> Certificate:
    """Certified enclosure of gamma_WCR(L) of width below 10^-(digits+1), with uniqueness.

    Raises RuntimeError if the interval tests cannot be passed (they pass for every L
    tried, 2 to 10^30, at 1 to 200 digits).

    >>> c = certify(2, 20)
    >>> with mpmath.workdps(40): bool(c.gamma_lo <= 3*mpmath.sqrt(3) - 2 <= c.gamma_hi)
    True
    >>> c.dlog_psi_max < 0
    True
    """
    L, digits = check_depth(L), check_digits(digits)
    guard = _guard(L)
    for extra in (0, 10, 30):
        dps = digits + guard + extra + 10
        t_mid = _solve_t(L, dps)
        with mpmath.workdps(dps), iv_workdps(dps):
            d = t_mid * mpmath.mpf(10) ** (-(digits + 6))
            a, b = t_mid - d, t_mid + d
            fa_lo, _ = bounds(_log_psi_iv(iv.mpf(a), L))
            _, fb_hi = bounds(_log_psi_iv(iv.mpf(b), L))
            T = iv.mpf([a, b])
            _, dmax = bounds(_dlog_psi_iv(T, L))
            g_lo, g_hi = bounds(_gamma_of_t_iv(T, L))
            y_lo, y_hi = bounds((1 + T) / 2)
            ok = fa_lo > 0 and fb_hi < 0 and dmax < 0 and g_hi - g_lo < mpmath.mpf(10) ** (-(digits + 1))
            if ok:
                g_mid, y_mid = _gamma_of_t(t_mid, L), (1 + t_mid) / 2
                with mpmath.workdps(digits + 5):  # 5 guard digits: a later rounding to ``digits`` is single
                    g_mid, y_mid = +g_mid, +y_mid
                return Certificate(L, digits, a, b, y_lo, y_hi, g_lo, g_hi, dmax, g_mid, y_mid)
    raise RuntimeError(f"could not certify gamma_WCR({L}) at {digits} digits")


# ---------------------------------------------------------------- float64, vectorised
def gamma_wcr_float(Ls: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(t, gamma_WCR) in float64 for an array of depths (vectorised bisection, 64 steps).

    About 1e-13 relative accuracy for 2 <= L <= 10^9 (checked against :func:`gamma_wcr`);
    meant for sweeps over every integer L up to 10^6.

    >>> t, g = gamma_wcr_float([2, 10, 100]); np.round(g, 3).tolist()
    [3.196, 5.008, 8.019]
    """
    arr = np.asarray(Ls)
    if arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 2 or arr.max() >= _FLOAT_LIMIT:
        raise ValueError(f"Ls must be integers with 2 <= L < 1e15; got {Ls!r}")
    Lf = arr.astype(float)
    a = np.zeros_like(Lf)
    b = np.ones_like(Lf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(64):
            m = 0.5 * (a + b)
            B = Lf * m + 0.5 * (1.0 - m)
            logr = np.log1p((1.0 - m) / (2.0 * B))
            f = (Lf - 2.0) * logr + np.log(np.expm1(np.log(0.5 * (1.0 + m)) + Lf * logr)) - np.log(B)
            pos = f > 0
            a = np.where(pos, m, a)
            b = np.where(pos, b, m)
    t = 0.5 * (a + b)
    B = Lf * t + 0.5 * (1.0 - t)
    g = Lf * np.exp((2.0 / Lf - 1.0) * np.log(0.5 * (1.0 + t))) / B
    return t, g


# ---------------------------------------------------------------- asymptotics (Appendix F.6)
def log_law_remainder(L: int, g: float | mpmath.mpf) -> mpmath.mpf:
    """The O(1) term of (87): gamma - 2 log L + 2 log log L."""
    return g - 2 * mpmath.log(L) + 2 * mpmath.log(mpmath.log(L))


def lambert_kappa(L: int, g: float | mpmath.mpf) -> mpmath.mpf:
    """kappa(L) with gamma = 2 W(kappa L), i.e. kappa = (gamma/2) e^{gamma/2} / L (the Theta(1) of (87))."""
    return (g / 2) * mpmath.exp(g / 2) / L


def refined_lambert_form(L: int) -> mpmath.mpf:
    """2 W(2 e L) - 2: our leading-order solution of (83) (W the principal Lambert W).

    From B = L t + (1-t)/2, L log r = 1/(2t) - 1/2 + o(1) and (83): e^{1/t - 1}/2 ~ L t,
    and gamma = 2/t - 2 + O(t); so s = gamma/2 + 1 solves s e^s ~ 2 e L.
    """
    return 2 * mpmath.lambertw(2 * mpmath.e * L).real - 2


# ---------------------------------------------------------------- the map itself (independent check)
def chain_map(w: mpmath.mpf, eta: float | mpmath.mpf, L: int, sigma: float | mpmath.mpf) -> mpmath.mpf:
    """f_eta(w) = w - eta w^{L-1}(w^L - sigma) (Eq. (19)), at the current mpmath precision."""
    return w - eta * w ** (L - 1) * (w**L - sigma)


def worst_overshoot(
    eta: float | mpmath.mpf, L: int, sigma: float | mpmath.mpf, tol: float | mpmath.mpf
) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(c, f_eta(c)): maximiser and maximum of f_eta on [0, w_*] by golden-section search.

    Derivative-free; relies only on f_eta being unimodal on [0, w_*] (it rises then falls:
    Appendix F.4). ``tol`` is the final bracket width in w. The golden ratio is taken at
    the working precision (a reused interior point drifts by phi^n times its error), and
    the interior points are re-placed should rounding ever swap them.
    """
    ws = mpmath.mpf(sigma) ** (mpmath.mpf(1) / L)
    a, b = mpmath.mpf(0), ws
    k = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = b - k * (b - a), a + k * (b - a)
    f1, f2 = chain_map(x1, eta, L, sigma), chain_map(x2, eta, L, sigma)
    while b - a > tol:
        if not a < x1 < x2 < b:
            x1, x2 = b - k * (b - a), a + k * (b - a)
            f1, f2 = chain_map(x1, eta, L, sigma), chain_map(x2, eta, L, sigma)
        if f1 < f2:
            a, x1, f1 = x1, x2, f2
            x2 = a + k * (b - a)
            f2 = chain_map(x2, eta, L, sigma)
        else:
            b, x2, f2 = x2, x1, f1
            x1 = b - k * (b - a)
            f1 = chain_map(x1, eta, L, sigma)
    c = (a + b) / 2
    return c, chain_map(c, eta, L, sigma)


def two_step(
    eta: float | str | mpmath.mpf, L: int, sigma: float | str | mpmath.mpf = 1, digits: int = 15
) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """(c, w1, w2): the maximiser c of f_eta on (0, w_*), the worst overshoot w1 = f(c), w2 = f(w1).

    >>> c, w1, w2 = two_step(mpmath.mpf(4) / 5, 5, 1)   # gamma = 4 < gamma_WCR(5)
    >>> bool(w1 > 1 and 0 < w2 < 1)
    True
    """
    L, digits = check_depth(L), check_digits(digits)
    sig = _check_sigma(sigma)
    dps = 2 * digits + 20 + _guard(L)
    with mpmath.workdps(dps):
        tol = mpmath.mpf(10) ** (-(digits // 2 + 4 + len(str(L)))) * sig ** (mpmath.mpf(1) / L)
        c, w1 = worst_overshoot(mpmath.mpf(eta), L, sig, tol)
        w2 = chain_map(w1, mpmath.mpf(eta), L, sig)
        return c, w1, w2


def return_safe_edge(safe: Callable[[Any], bool], lo: Any, hi: Any, rel: Any, cap: float, where: str) -> Any:
    """The step gamma where ``safe`` (return safety, true below the edge) turns false: bracket and bisect.

    ``safe(lo)`` must hold; ``hi`` doubles until ``safe(hi)`` fails (a RuntimeError past ``cap``),
    then bisection halves [lo, hi] until ``hi - lo <= rel hi`` and returns the midpoint. In floats
    or mpf (halving is exact in both); ``where`` ends the error messages.
    """
    if not safe(lo):
        raise RuntimeError(f"gamma = {lo} is not return-safe {where}")
    while safe(hi):
        lo, hi = hi, 2 * hi
        if hi > cap:
            raise RuntimeError(f"no unsafe gamma found up to {cap:.6g} {where}")
    while hi - lo > rel * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if safe(mid) else (lo, mid)
    return (lo + hi) / 2


def knife_edge_gamma(L: int, sigma: float | str | mpmath.mpf = 1, digits: int = 15) -> mpmath.mpf:
    """gamma at the knife edge of the map itself: eta* S_1 where the worst overshoot returns to 0.

    Bisection on eta between a safe step (gamma = 1.5: w2 > 0) and an unsafe one (gamma
    doubled from 2.5 until w2 < 0); S_1 = L sigma^{2-2/L} only sets the scale of eta.
    Accurate to about ``digits`` - 3 significant digits.

    >>> mpmath.nstr(knife_edge_gamma(2, 1, 12), 9)
    '3.19615242'
    """
    L, digits = check_depth(L), check_digits(digits)
    sig = _check_sigma(sigma)
    dps = 2 * digits + 20 + _guard(L)
    with mpmath.workdps(dps):
        S1 = L * sig ** (2 - mpmath.mpf(2) / L)
        ws = sig ** (mpmath.mpf(1) / L)
        tol_w = mpmath.mpf(10) ** (-(digits // 2 + 4 + len(str(L)))) * ws

        def safe(g):
            eta = g / S1
            _, w1 = worst_overshoot(eta, L, sig, tol_w)
            if not w1 > ws:
                raise RuntimeError(f"no overshoot at gamma={g}: the bracket is below the onset")
            return chain_map(w1, eta, L, sig) > 0

        rel = mpmath.mpf(10) ** (-(digits + 2))
        g = return_safe_edge(safe, mpmath.mpf("1.5"), mpmath.mpf("2.5"), rel, 10**6, f"at L = {L}")
    with mpmath.workdps(digits):
        return +g
