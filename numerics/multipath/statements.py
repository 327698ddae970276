"""The worst-case return threshold of a mode shared by several pathways (Section 6, opening paragraph).

Section 6 derives eta_WCR from one pathway carrying the whole mode (the deep linear chain (19)) and
says the sign-flip failure "is worst when the signal concentrates in a single pathway". This
module extends Definition 6.1 from the chain to H pathways sharing the mode in fixed proportions.

Definition. One mode, H pathways of depth L, the exact GD recursion (54)
a_h <- a_h - eta r a_h^{L-1}, r = sum_h a_h^L - sigma_*, step eta = gamma / S_1 with
S_1 = L sigma_*^{2-2/L}. A pre-overshoot state with shares s (s_h >= 0, sum_h s_h = 1) and total
tau in (0, sigma_*) has a_h = (s_h tau)^{1/L}. The step is *return-safe for s* if every such state
whose first step overshoots (r > 0 after it) keeps every carrying pathway positive after the second
step (a_h > 0, no sign flip; the criterion of :func:`numerics.multipath.wcr.knife_edge_gamma`).
``return_threshold(L, s)`` is the knife edge in gamma. For s = (1, 0, ..., 0) the state is the
chain and the threshold is gamma_WCR(L); for equal shares the recursion is the chain with step
eta H^{2/L-1} in b = H^{1/L} a, so the threshold is gamma_WCR(L) H^{1-2/L}.

Algorithm. :func:`two_step_margin` evaluates min_h a_h(t+2)/sigma_*^{1/L} over a grid of totals tau
(``n_grid`` points, vectorised), then zooms ``zooms`` times into the bracket around the grid
minimum (each zoom divides the spacing by about ``n_grid``/2); :func:`return_threshold` bisects the
sign of that margin in gamma (doubling the upper end until the margin is negative).

>>> round(return_threshold(5, [1.0]), 6)   # gamma_WCR(5)
4.224495
>>> round(return_threshold(5, [0.5, 0.5]) / 2 ** 0.6, 6)   # equal shares: gamma_WCR(5) H^{1-2/L}
4.224495

Reference: arXiv 2606.05219, Section 6 (Definition 6.1, Eqs. (19)-(20)); Appendix E.2 (Eq. (54)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..validation import integer, positive
from .wcr import return_safe_edge


def _shares(shares: Sequence[float] | np.ndarray) -> np.ndarray:
    s = np.asarray(shares, dtype=float)
    if s.ndim != 1 or s.size < 1 or not np.all(np.isfinite(s)) or np.any(s < 0) or s.sum() <= 0:
        raise ValueError(f"shares must be a nonempty 1-d sequence of finite numbers >= 0, not all 0; got {shares!r}")
    return s / s.sum()


def two_step_margin(
    gamma: float, L: int, shares: Sequence[float] | np.ndarray, sigma: float = 1.0, n_grid: int = 2001, zooms: int = 4
) -> float:
    """min over overshooting pre-overshoot states of min_h a_h(t+2) / sigma^{1/L} (+inf if no state overshoots).

    ``gamma`` = eta S_1 > 0, ``L`` >= 2, ``shares`` the fixed pathway proportions (normalised here),
    ``sigma`` > 0, ``n_grid`` >= 5 grid points per level, ``zooms`` >= 0 refinements. Negative: some
    overshoot flips a pathway at the next step.
    """
    gamma, sigma = positive(gamma, "gamma"), positive(sigma, "sigma")
    L = integer(L, "L", 2)
    n_grid, zooms = integer(n_grid, "n_grid", 5), integer(zooms, "zooms", 0)
    s = _shares(shares)
    carry = s > 0
    eta = gamma / (L * sigma ** (2 - 2 / L))
    scale = sigma ** (1 / L)

    def margin(tau: np.ndarray) -> np.ndarray:
        a = (s[carry, None] * tau[None, :]) ** (1 / L)
        r = (a**L).sum(axis=0) - sigma
        a1 = a - eta * r * a ** (L - 1)
        r1 = (a1**L).sum(axis=0) - sigma
        a2 = a1 - eta * r1 * a1 ** (L - 1)
        return np.where(r1 > 0, a2.min(axis=0) / scale, np.inf)

    lo, hi = 0.0, sigma
    best = math.inf
    for _ in range(zooms + 1):
        tau = np.linspace(lo, hi, n_grid)
        tau = tau[(tau > 0) & (tau < sigma)]
        m = margin(tau)
        k = int(np.argmin(m))
        best = min(best, float(m[k]))
        if not math.isfinite(m[k]):
            return math.inf
        lo, hi = float(tau[max(k - 1, 0)]), float(tau[min(k + 1, tau.size - 1)])
    return best


def return_threshold(
    L: int,
    shares: Sequence[float] | np.ndarray,
    sigma: float = 1.0,
    rtol: float = 1e-12,
    n_grid: int = 2001,
    zooms: int = 4,
) -> float:
    """The knife-edge gamma = eta S_1 of return safety for pathway shares ``shares`` (see the module docstring).

    Bisection on gamma between 2 (checked safe: below gamma_WCR(L) > 2 for the chain, and larger for
    shared modes) and an upper end doubled from 4 until a flip occurs (at most 2^20), to relative
    width ``rtol`` (> 0).
    """
    L = integer(L, "L", 2)
    rtol = positive(rtol, "rtol")
    s = _shares(shares)

    def safe(g: float) -> bool:
        return two_step_margin(g, L, s, sigma, n_grid, zooms) > 0

    return float(return_safe_edge(safe, 2.0, 4.0, rtol, 2.0**20, f"for L = {L}, shares {s.tolist()}"))
