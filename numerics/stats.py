"""Statistics of the audit's Monte Carlo checks: intervals, tests, and the power of those tests.

The intervals and tests are statsmodels' and SciPy's; this module fixes the conventions
the audit uses (an interval at a normal quantile ``z`` or at a level ``alpha``, exact
ends 0 and 1), validates every input, and adds what the libraries lack: the exact power
of the audit's comparisons by enumeration over the binomial distributions, power by
simulation with its Monte Carlo error, and the sample size at which a check reaches a
given power.

=======================================  ============================================================
function                                 statistic (source)
=======================================  ============================================================
:func:`wilson_interval`                  Wilson score interval of k/n (statsmodels ``proportion_confint``)
:func:`wilson_intervals`                 the same for an array of counts at once
:func:`clopper_pearson_interval`         Clopper-Pearson interval of k/n (statsmodels, ``method='beta'``)
:func:`newcombe_difference`              Newcombe's hybrid score interval (method 10) for k1/n1 - k2/n2
                                         (statsmodels ``confint_proportions_2indep``, ``method='newcomb'``)
:func:`fisher_exact_p`                   Fisher's exact test of k1/n1 = k2/n2 (SciPy ``fisher_exact``)
:func:`z_bonferroni`                     two-sided normal quantile at family-wise level alpha over m (SciPy)
:func:`power_two_sample`                 exact power of the Newcombe or Fisher comparison under (p1, p2)
:func:`power_one_sample`                 exact power of "p0 outside the Wilson / Clopper-Pearson interval"
:func:`power_of_region`                  exact power of any test of one binomial count (its rejection set)
:func:`power_normal`                     power of |estimate - reference| > threshold, estimate normal
:func:`power_by_simulation`              power of any test by simulation, with replicate count and MC error
:func:`smallest_n`                       the sample size at which a power function first reaches a target
=======================================  ============================================================

>>> tuple(round(v, 4) for v in wilson_interval(81, 263))  # Newcombe (1998a), Table I
(0.2553, 0.3662)
>>> round(fisher_exact_p(3, 4, 1, 4), 4)  # Fisher's tea-tasting experiment
0.4857
>>> round(power_two_sample(0.5, 64, 0.5, 64, test="fisher"), 4)  # the exact test's size at p1 = p2 = 1/2
0.0298

References: Newcombe RG (1998a), Two-sided confidence intervals for the single proportion,
Stat. Med. 17:857-872; Newcombe RG (1998b), Interval estimation for the difference between
independent proportions: comparison of eleven methods, Stat. Med. 17:873-890; Brown LD,
Cai TT, DasGupta A (2001), Interval estimation for a binomial proportion, Stat. Sci. 16:101-133.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from numerics import validation as V


class _Deferred:
    """A module imported on first attribute access: ``scipy.stats`` costs about 1.5 CPU-s to import, which
    every Dask worker and CLI subprocess that imports this module for its validators would pay without using it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


stats: Any = _Deferred("scipy.stats")

Z95 = 1.959963984540054  # two-sided 95% quantile Phi^-1(0.975) = 1.95996398454005424 to 1 ulp (the audit's constant)
Z_MAX = 30.0  # largest z accepted: alpha = 2 Phi(-z) stays a normal float (Phi(-30) ~ 5e-198), so z round-trips
TIE = (
    1e-7  # relative tolerance for equal hypergeometric probabilities in the two-sided Fisher test (as R's fisher.test)
)
TESTS = ("newcombe", "fisher")
ALTERNATIVES = ("two-sided", "greater", "less")
INTERVALS = ("wilson", "clopper-pearson")


# --- validation (numerics.validation; bad input raises a ValueError naming the parameter and its range) ----


def _z(z) -> float:
    """A normal quantile ``z`` in (0, Z_MAX]."""
    return V.real(z, "z", 0.0, Z_MAX, lo_open=True)


def _alpha(alpha, name: str = "alpha") -> float:
    """A level (or a target power) in (0, 1)."""
    return V.level(alpha, name)


@lru_cache(maxsize=256)
def _alpha_of_z(z: float) -> float:
    """The two-sided level whose normal quantile is ``z`` (statsmodels takes levels, the audit quantiles)."""
    return float(2.0 * stats.norm.sf(z))


# --- intervals ------------------------------------------------------------------------------------------


def _wilson_arrays(k: np.ndarray, n: int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson intervals of ``k/n`` for an integer array ``k`` (statsmodels), with exact ends 0 and 1."""
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=_alpha_of_z(z), method="wilson")
    lo, hi = np.array(lo, dtype=float, ndmin=1), np.array(hi, dtype=float, ndmin=1)
    # The ends are exactly 0 at k = 0 and exactly 1 at k = n; rounding would give ~1e-17 and 1 - 2^-53.
    lo[k == 0] = 0.0
    hi[k == n] = 1.0
    return lo, hi


def wilson_intervals(k: npt.ArrayLike, n: int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson intervals of ``k/n`` for an array of counts ``k`` at once (lower ends, upper ends).

    The same values as :func:`wilson_interval` count by count, without its per-call cost.

    >>> lo, hi = wilson_intervals([0, 15], 148)
    >>> [round(float(v), 4) for v in (lo[0], lo[1], hi[1])]
    [0.0, 0.0624, 0.1605]
    """
    n = V.integer(n, "n", 1)
    arr = np.asarray(k)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() > n:
        raise ValueError(f"k must be a non-empty 1-d array of integers in [0, {n}]; got {k!r}")
    return _wilson_arrays(arr.astype(np.int64), n, _z(z))


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k/n`` at normal quantile ``z``.

    Definition: the ``p`` with ``|k/n - p| <= z sqrt(p(1 - p)/n)``; ends exactly 0 at
    ``k = 0`` and 1 at ``k = n``. Computed by statsmodels' ``proportion_confint(method=
    'wilson')`` at ``alpha = 2 Phi(-z)``.

    >>> tuple(round(v, 4) for v in wilson_interval(15, 148))  # Newcombe (1998a), Table I
    (0.0624, 0.1605)
    >>> wilson_interval(0, 20)[0], round(wilson_interval(0, 20)[1], 4), wilson_interval(20, 20)[1]
    (0.0, 0.1611, 1.0)
    >>> wilson_interval(3, 2)
    Traceback (most recent call last):
    ...
    ValueError: k must be an integer in [0, 2]; got 3
    """
    k, n = V.successes(k, n)
    lo, hi = _wilson_arrays(np.array([k]), n, _z(z))
    return float(lo[0]), float(hi[0])


def clopper_pearson_interval(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Clopper-Pearson ('exact') interval for ``k/n`` at two-sided level ``alpha``.

    Definition: beta quantiles ``B(alpha/2; k, n - k + 1)`` and ``B(1 - alpha/2; k + 1, n - k)``,
    0 at ``k = 0`` and 1 at ``k = n`` (statsmodels ``proportion_confint(method='beta')``).

    >>> tuple(round(v, 4) for v in clopper_pearson_interval(81, 263))  # Newcombe (1998a), Table I
    (0.2527, 0.3676)
    >>> clopper_pearson_interval(1, 10, alpha=1.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a finite real number in (0, 1); got 1.0
    """
    from statsmodels.stats.proportion import proportion_confint

    k, n = V.successes(k, n)
    lo, hi = proportion_confint(k, n, alpha=_alpha(alpha), method="beta")
    return float(lo), float(hi)


def newcombe_difference(k1: int, n1: int, k2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) for ``k1/n1 - k2/n2`` at normal quantile ``z``.

    Two independent binomial samples; with each proportion's Wilson interval ``[l_i, u_i]``
    at the same ``z``, the interval is ``d - sqrt((p1 - l1)^2 + (u2 - p2)^2)`` to
    ``d + sqrt((u1 - p1)^2 + (p2 - l2)^2)``, ``d = p1 - p2`` (statsmodels
    ``confint_proportions_2indep(method='newcomb')`` at ``alpha = 2 Phi(-z)``).

    >>> tuple(round(v, 4) for v in newcombe_difference(56, 70, 48, 80))  # Newcombe (1998b), example (a)
    (0.0524, 0.3339)
    >>> newcombe_difference(0, 7, 7, 7)[0] >= -1.0  # clipped: rounding passed -1 by an ulp here
    True
    """
    from statsmodels.stats.proportion import confint_proportions_2indep

    k1, n1 = V.successes(k1, n1, "k1", "n1")
    k2, n2 = V.successes(k2, n2, "k2", "n2")
    lo, hi = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=_alpha_of_z(_z(z)))
    # a difference of proportions lies in [-1, 1]; at the extreme tables (0/n against n/n) statsmodels' sum of the
    # Wilson terms passes -1 or 1 by an ulp (-1.0000000000000002 at 0/7 against 7/7), so the bounds are clipped
    return max(-1.0, float(lo)), min(1.0, float(hi))


def fisher_exact_p(k1: int, n1: int, k2: int, n2: int, alternative: str = "two-sided") -> float:
    """Fisher's exact p-value for equal proportions ``k1/n1`` and ``k2/n2`` (SciPy ``fisher_exact``).

    ``alternative``: 'two-sided' (tables no more probable than the observed one, under the
    hypergeometric law given the margins), 'greater' (``k1/n1`` larger) or 'less'.

    >>> round(fisher_exact_p(3, 4, 1, 4), 4)  # tea tasting: 3 of 4 milk-first cups named right
    0.4857
    >>> fisher_exact_p(1, 4, 1, 4, alternative="bigger")
    Traceback (most recent call last):
    ...
    ValueError: alternative must be one of 'two-sided', 'greater', 'less'; got 'bigger'
    """
    k1, n1 = V.successes(k1, n1, "k1", "n1")
    k2, n2 = V.successes(k2, n2, "k2", "n2")
    alt = V.choice(alternative, "alternative", ALTERNATIVES)
    return float(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative=alt)[1])


def homogeneity_exact_p(ks: npt.ArrayLike, ns: npt.ArrayLike) -> float:
    """Exact p-value (Freeman-Halton) for equal proportions ``k_i/n_i`` in ``c >= 2`` samples.

    Given the total count, the counts follow the multivariate hypergeometric law under equal
    proportions; the p-value sums the probabilities of the tables no more probable than the
    observed one (relative slack 1e-7 for ties), enumerated exactly in log space. Two samples
    give Fisher's exact two-sided test.

    >>> round(homogeneity_exact_p([3, 1], [4, 4]), 4) == round(fisher_exact_p(3, 4, 1, 4), 4)
    True
    >>> round(homogeneity_exact_p([9, 10, 5], [64, 128, 128]), 4)
    0.047
    >>> homogeneity_exact_p([1], [4])
    Traceback (most recent call last):
    ...
    ValueError: ks and ns must have the same length >= 2; got 1 and 1
    """
    ks_l, ns_l = list(np.atleast_1d(ks)), list(np.atleast_1d(ns))
    if len(ks_l) != len(ns_l) or len(ks_l) < 2:
        raise ValueError(f"ks and ns must have the same length >= 2; got {len(ks_l)} and {len(ns_l)}")
    pairs = [V.successes(k, n, f"ks[{i}]", f"ns[{i}]") for i, (k, n) in enumerate(zip(ks_l, ns_l))]
    total = sum(k for k, _ in pairs)
    # log binomial coefficients of each sample's counts; a table's log-probability is their sum minus log_norm
    logc = [
        special.gammaln(n + 1) - special.gammaln(np.arange(n + 1) + 1) - special.gammaln(n - np.arange(n + 1) + 1)
        for _, n in pairs
    ]
    log_obs = sum(float(c[k]) for c, (k, _) in zip(logc, pairs))
    # every table with the observed total: all counts of the first c - 1 samples (the last one follows), so the
    # cost is the product of their sizes; the audit's tables have at most three samples of a few hundred
    n_all = sum(n for _, n in pairs)
    log_norm = special.gammaln(n_all + 1) - special.gammaln(total + 1) - special.gammaln(n_all - total + 1)
    p = 0.0
    ranges = [range(0, min(n, total) + 1) for _, n in pairs[:-1]]
    last_n = pairs[-1][1]
    for head in np.ndindex(*[len(r) for r in ranges]):
        rest = total - sum(head)
        if rest < 0 or rest > last_n:
            continue
        lp = sum(float(c[k]) for c, k in zip(logc, head)) + float(logc[-1][rest])
        if lp <= log_obs + 1e-7:
            p += math.exp(lp - log_norm)
    return min(p, 1.0)


@dataclass(frozen=True)
class BinomialFit:
    """Maximum-likelihood fit of a binomial regression: coefficients, their covariance, iterations."""

    coef: np.ndarray
    cov: np.ndarray
    iterations: int

    def se(self) -> np.ndarray:
        """Standard errors (square roots of the covariance's diagonal, from the expected information)."""
        return np.sqrt(np.diag(self.cov))


def cloglog_fit(
    k: npt.ArrayLike, n: npt.ArrayLike, X: npt.ArrayLike, *, tol: float = 1e-10, max_iter: int = 200
) -> BinomialFit:
    """Binomial regression with the complementary log-log link: ``-log(1 - p) = exp(X @ beta)``.

    The link of a Poisson count of triggering events: ``p = 1 - exp(-Lambda)`` with
    ``log Lambda`` linear in the covariates, so a coefficient is a rate in the log of the
    intensity. Fitted by Fisher scoring with step halving on the log-likelihood (so cells
    at ``k = 0`` or ``k = n`` cannot make it oscillate), to a relative change ``tol``; the
    covariance is the inverse expected information at the estimate. Rows with ``n = 0``
    are dropped; a coefficient the data cannot identify raises.

    >>> x = np.array([0.0, 1.0, 2.0, 3.0])
    >>> p = 1 - np.exp(-np.exp(0.5 - 1.0 * x))
    >>> fit = cloglog_fit(np.round(p * 1e6), np.full(4, 1e6), np.column_stack([np.ones(4), x]))
    >>> [round(float(c), 3) for c in fit.coef]
    [0.5, -1.0]
    >>> cloglog_fit([1], [2, 3], [[1.0]])
    Traceback (most recent call last):
    ...
    ValueError: k, n and the rows of X must have the same length; got 1, 2 and 1
    """
    k_a, n_a, X_a = np.asarray(k, dtype=float), np.asarray(n, dtype=float), np.atleast_2d(np.asarray(X, dtype=float))
    if not (k_a.ndim == n_a.ndim == 1 and k_a.size == n_a.size == X_a.shape[0]):
        raise ValueError(
            f"k, n and the rows of X must have the same length; got {k_a.size}, {n_a.size} and {X_a.shape[0]}"
        )
    if np.any(n_a < 0) or np.any(k_a < 0) or np.any(k_a > n_a) or not np.all(np.isfinite(X_a)):
        raise ValueError("k must satisfy 0 <= k <= n and X must be finite")
    keep = n_a > 0
    k_a, n_a, X_a = k_a[keep], n_a[keep], X_a[keep]
    if np.linalg.matrix_rank(X_a) < X_a.shape[1]:
        raise ValueError(
            f"X has rank {np.linalg.matrix_rank(X_a)} < {X_a.shape[1]} columns: a coefficient is not identified"
        )

    def parts(beta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        mu = np.exp(np.minimum(X_a @ beta, 700.0))  # Lambda; exp overflows past 709
        em1 = np.expm1(mu)  # e^Lambda - 1 = p / (1 - p)
        log_p = np.log(-np.expm1(-mu))
        ll = float(np.sum(np.where(k_a > 0, k_a * log_p, 0.0) - (n_a - k_a) * mu))
        score = X_a.T @ (mu * (k_a / em1 - (n_a - k_a)))
        w = n_a * mu**2 / em1  # expected information per cell in the linear predictor
        return ll, score, X_a.T @ (w[:, None] * X_a)

    # start from the empirical intensities, clipped away from p = 0 and 1
    p0 = np.clip((k_a + 0.5) / (n_a + 1.0), 1e-6, 1 - 1e-6)
    beta = np.linalg.lstsq(X_a, np.log(-np.log1p(-p0)), rcond=None)[0]
    ll, score, info = parts(beta)
    iterations, done = 0, False
    while iterations < max_iter and not done:
        iterations += 1
        step = np.linalg.solve(info, score)
        t = 1.0
        while True:
            trial = beta + t * step
            ll_new, score_new, info_new = parts(trial)
            if ll_new >= ll - 1e-12 * abs(ll) or t < 1e-8:
                break
            t /= 2
        done = bool(np.max(np.abs(trial - beta)) <= tol * (1.0 + np.max(np.abs(beta))))
        beta, ll, score, info = trial, ll_new, score_new, info_new
    if not done:
        raise ValueError(f"cloglog_fit did not converge in {max_iter} iterations")
    return BinomialFit(beta, np.linalg.inv(info), iterations)


def z_bonferroni(m: int, alpha: float = 0.05) -> float:
    """Two-sided normal quantile ``Phi^{-1}(1 - alpha/(2m))`` for family-wise level ``alpha`` over ``m`` comparisons.

    >>> round(z_bonferroni(1), 6), round(z_bonferroni(10), 4)
    (1.959964, 2.807)
    >>> z_bonferroni(0)
    Traceback (most recent call last):
    ...
    ValueError: m must be an integer >= 1; got 0
    """
    m = V.integer(m, "m", 1)
    return float(stats.norm.isf(_alpha(alpha) / (2 * m)))


# --- exact power by enumeration -------------------------------------------------------------------------


def _log_binomial_coefficients(n: int) -> np.ndarray:
    k = np.arange(n + 1)
    return special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)


def _likely(n: int, p: float) -> tuple[int, int]:
    """Counts ``[lo, hi]`` of ``Bin(n, p)`` within 12 SD (+ 2) of ``n p``: outside, probability below 1e-30."""
    spread = 12.0 * math.sqrt(n * p * (1 - p)) + 2.0
    return max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread))


def _newcombe_rejects(
    n1: int,
    n2: int,
    z: float,
    r1: tuple[int, int] | None = None,
    r2: tuple[int, int] | None = None,
    alternative: str = "two-sided",
) -> np.ndarray:
    """Tables ``(k1, k2)`` (``k1`` in ``r1``, ``k2`` in ``r2``, inclusive; default all) whose Newcombe
    interval excludes 0 (``alternative``: 'greater', its lower end above 0; 'less', its upper end below 0)."""
    k1 = np.arange(r1[0], r1[1] + 1) if r1 else np.arange(n1 + 1)
    k2 = np.arange(r2[0], r2[1] + 1) if r2 else np.arange(n2 + 1)
    l1, u1 = _wilson_arrays(k1, n1, z)
    l2, u2 = _wilson_arrays(k2, n2, z)
    p1, p2 = (k1 / n1)[:, None], (k2 / n2)[None, :]
    d = p1 - p2
    lo = d - np.sqrt((p1 - l1[:, None]) ** 2 + (u2[None, :] - p2) ** 2)
    hi = d + np.sqrt((u1[:, None] - p1) ** 2 + (p2 - l2[None, :]) ** 2)
    if alternative == "greater":
        return lo > 0
    if alternative == "less":
        return hi < 0
    return (lo > 0) | (hi < 0)


def fisher_p_grid(n1: int, n2: int, alternative: str = "two-sided") -> np.ndarray:
    """Fisher's exact p-value of every table ``(k1, k2)``, shape (n1 + 1, n2 + 1), computed at once.

    Given the column total ``K = k1 + k2``, ``k1`` is hypergeometric; along each
    anti-diagonal the two-sided p-value is the total probability of the tables no more
    probable than the observed one (relative tolerance :data:`TIE` for ties), the one-sided
    ones are its tail sums. Agrees with :func:`fisher_exact_p` on every table (tests).

    >>> bool(np.isclose(fisher_p_grid(4, 4)[3, 1], 0.4857142857142857))
    True
    """
    n1, n2 = V.integer(n1, "n1", 1), V.integer(n2, "n2", 1)
    alt = V.choice(alternative, "alternative", ALTERNATIVES)
    return _fisher_p_block(n1, n2, alt, (0, n1), (0, n2))


@lru_cache(maxsize=32)
def _fisher_p_block(n1: int, n2: int, alt: str, r1: tuple[int, int], r2: tuple[int, int]) -> np.ndarray:
    """Fisher p-values of the tables with ``k1`` in ``r1`` and ``k2`` in ``r2`` (inclusive ranges).

    Vectorised over blocks of column totals K (rows) x tables of each total (columns); every
    total meeting the block is computed over its full hypergeometric support, which the
    two-sided p-value needs. Cached (32 blocks); the audit's blocks stay below ~2^22 cells.
    """
    log_c1, log_c2, log_cn = (_log_binomial_coefficients(m) for m in (n1, n2, n1 + n2))
    out = np.ones((r1[1] - r1[0] + 1, r2[1] - r2[0] + 1))
    width = min(n1, n2) + 1  # the most tables sharing one total K
    j = np.arange(width)
    block = max(1, (1 << 20) // width)  # rows per block: about 2^20 cells of work arrays
    k_first, k_last = r1[0] + r2[0], r1[1] + r2[1]
    for K0 in range(k_first, k_last + 1, block):
        K = np.arange(K0, min(K0 + block, k_last + 1))[:, None]
        x = np.maximum(0, K - n2) + j[None, :]  # k1 of the tables with total K, padded past the last
        valid = x <= np.minimum(n1, K)
        xs = np.where(valid, x, 0)
        # hypergeometric probabilities from log binomial coefficients (relative error ~ eps x log C(n1 + n2, K),
        # <~ 2e-11 at n1 + n2 = 8500, far below TIE); padding gets probability 0
        logf = log_c1[xs] + log_c2[np.clip(K - xs, 0, n2)] - log_cn[K]
        f = np.where(valid, np.exp(np.where(valid, logf, 0.0)), 0.0)
        if alt == "greater":  # k1/n1 larger: P(X >= x)
            p = np.cumsum(f[:, ::-1], axis=1)[:, ::-1]
        elif alt == "less":
            p = np.cumsum(f, axis=1)
        else:  # total probability of the tables no more probable than this one
            key = np.where(valid, f, np.inf)
            order = np.argsort(key, axis=1, kind="stable")
            srt = np.take_along_axis(key, order, axis=1)
            cum = np.cumsum(np.where(np.isfinite(srt), srt, 0.0), axis=1)
            last = np.broadcast_to(j, srt.shape).copy()
            # extend each position over the following values equal to it within TIE (the pmf takes a value at
            # most twice; three look-aheads also cover near-ties)
            for step in (1, 2, 3):
                if step >= width:
                    break
                ahead = np.full(srt.shape, np.inf)
                ahead[:, :-step] = srt[:, step:]
                last = np.where(ahead <= srt * (1 + TIE), np.minimum(j + step, width - 1), last)
            cum_sorted = np.take_along_axis(cum, last, axis=1)
            p = np.empty_like(cum_sorted)
            np.put_along_axis(p, order, cum_sorted, axis=1)
        y = K - xs
        keep = valid & (xs >= r1[0]) & (xs <= r1[1]) & (y >= r2[0]) & (y <= r2[1])
        out[xs[keep] - r1[0], y[keep] - r2[0]] = np.minimum(p[keep], 1.0)
    out.flags.writeable = False
    return out


def power_two_sample(
    p1: float,
    n1: int,
    p2: float,
    n2: int,
    *,
    test: str = "newcombe",
    z: float = Z95,
    level: float = 0.05,
    alternative: str = "two-sided",
) -> float:
    """Exact power of the audit's two-sample comparison of ``k1 ~ Bin(n1, p1)`` with ``k2 ~ Bin(n2, p2)``.

    ``test='newcombe'``: reject when Newcombe's interval at ``z`` excludes 0 (``z`` is the
    check's quantile, Bonferroni-corrected where the check corrects; with ``alternative``
    'greater' or 'less', only when it lies above or below 0: the one-sided check at level
    ``1 - Phi(z)``); ``test='fisher'``:
    reject when Fisher's ``alternative`` p-value is below ``level``. The power is
    ``sum_{k1, k2} Bin(k1; n1, p1) Bin(k2; n2, p2) [reject(k1, k2)]``, by enumeration of the
    tables (vectorised) over the counts within 12 standard deviations of each mean (the
    rest has probability below 1e-30). At ``p1 = p2`` it is the test's size.

    >>> round(power_two_sample(0.3, 100, 0.3, 100), 3), round(power_two_sample(0.3, 100, 0.3, 100, test="fisher"), 3)
    (0.051, 0.035)
    >>> round(power_two_sample(0.6, 100, 0.3, 100), 3)
    0.992
    """
    p1, p2 = V.probability(p1, "p1"), V.probability(p2, "p2")
    n1, n2 = V.integer(n1, "n1", 1), V.integer(n2, "n2", 1)
    test = V.choice(test, "test", TESTS)
    r1, r2 = _likely(n1, p1), _likely(n2, p2)
    if test == "newcombe":
        alternative = V.choice(alternative, "alternative", ALTERNATIVES)
        reject = _newcombe_rejects(n1, n2, _z(z), r1, r2, alternative)
    else:
        level = _alpha(level, "level")
        reject = _fisher_p_block(n1, n2, V.choice(alternative, "alternative", ALTERNATIVES), r1, r2) < level
    pmf1 = stats.binom.pmf(np.arange(r1[0], r1[1] + 1), n1, p1)
    pmf2 = stats.binom.pmf(np.arange(r2[0], r2[1] + 1), n2, p2)
    return float(np.clip(pmf1 @ reject.astype(float) @ pmf2, 0.0, 1.0))


def power_of_region(n: int, p: float, reject: npt.ArrayLike) -> float:
    """Exact power ``P(k in reject)`` of a test of one count ``k ~ Bin(n, p)``; ``reject``: booleans over k = 0..n.

    >>> power_of_region(2, 0.5, [True, False, True])
    0.5
    """
    n, p = V.integer(n, "n", 1), V.probability(p, "p")
    r = np.asarray(reject, dtype=bool)
    if r.shape != (n + 1,):
        raise ValueError(f"reject must hold n + 1 = {n + 1} booleans (k = 0..n); got shape {r.shape}")
    return float(np.clip(stats.binom.pmf(np.arange(n + 1), n, p)[r].sum(), 0.0, 1.0))


def power_one_sample(
    p0: float, p: float, n: int, *, interval: str = "wilson", z: float = Z95, alpha: float | None = None
) -> float:
    """Exact power of the one-sample check "the paper's ``p0`` lies outside our interval of k/n", ``k ~ Bin(n, p)``.

    ``interval='wilson'`` at quantile ``z``, or ``'clopper-pearson'`` at level ``alpha``
    (default ``2 Phi(-z)``). At ``p = p0`` it is the check's false-alarm rate.

    >>> round(power_one_sample(0.5, 0.6, 100), 3)
    0.543
    """
    p0, p = V.probability(p0, "p0"), V.probability(p, "p")
    n = V.integer(n, "n", 1)
    kind = V.choice(interval, "interval", INTERVALS)
    # only counts within 12 standard deviations (+ 2) of n p carry probability: the rest is below 1e-30
    spread = 12.0 * math.sqrt(n * p * (1 - p)) + 2.0
    k = np.arange(max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread)) + 1)
    if kind == "wilson":
        lo, hi = _wilson_arrays(k, n, _z(z))
    else:
        from statsmodels.stats.proportion import proportion_confint

        a = _alpha_of_z(_z(z)) if alpha is None else _alpha(alpha)
        lo, hi = (np.asarray(v, dtype=float) for v in proportion_confint(k, n, alpha=a, method="beta"))
    outside = (p0 < lo) | (p0 > hi)
    return float(np.clip(stats.binom.pmf(k[outside], n, p).sum(), 0.0, 1.0))


def power_normal(shift: float, se: float, threshold: float) -> float:
    """``P(|X| > threshold)`` for ``X ~ N(shift, se^2)``: power of a check ``|estimate - reference| <= threshold``.

    For an estimate that is approximately normal with standard error ``se`` (a median, a
    bootstrap-calibrated difference) when the truth is ``shift`` away from the reference.

    >>> round(power_normal(0.0, 1.0, 1.959963984540054), 6)
    0.05
    """
    shift = V.real(shift, "shift")
    se = V.real(se, "se", 0.0, lo_open=True)
    threshold = V.real(threshold, "threshold", 0.0)
    return float(stats.norm.sf((threshold - shift) / se) + stats.norm.cdf((-threshold - shift) / se))


# --- power by simulation; sample sizes --------------------------------------------------------------------


@dataclass(frozen=True)
class SimulatedPower:
    """Power estimated from ``reps`` simulated replicates; ``mc_error`` is its binomial standard error."""

    power: float
    reps: int
    mc_error: float
    seed: int

    def __str__(self) -> str:
        return f"{self.power:.3f} +- {self.mc_error:.3f} ({self.reps} replicates, seed {self.seed})"


def power_by_simulation(trial: Callable[[np.random.Generator], bool], reps: int, seed: int) -> SimulatedPower:
    """Power of a test without closed form: the fraction of ``reps`` simulated data sets it rejects.

    ``trial(rng)`` draws one data set under the alternative with ``rng`` and returns
    whether the check would reject it. Replicate ``i`` uses ``Philox(key=(seed, i))``
    alone, so the estimate does not depend on how replicates are split. The Monte Carlo
    error is ``sqrt(p(1 - p)/reps)``.

    >>> sim = power_by_simulation(lambda rng: bool(rng.random() < 0.3), reps=2000, seed=1)
    >>> abs(sim.power - 0.3) < 4 * sim.mc_error
    True
    """
    if not callable(trial):
        raise ValueError(f"trial must be a callable rng -> bool; got {trial!r}")
    reps = V.integer(reps, "reps", 1)
    seed = V.integer(seed, "seed", 0, 2**64 - 1)
    hits = 0
    for i in range(reps):
        rng = np.random.Generator(np.random.Philox(key=np.array([seed, i], dtype=np.uint64)))
        hits += bool(trial(rng))
    p = hits / reps
    return SimulatedPower(power=p, reps=reps, mc_error=math.sqrt(p * (1 - p) / reps), seed=seed)


def smallest_n(
    power_of_n: Callable[[int], float],
    target: float = 0.8,
    *,
    n_min: int = 1,
    n_max: int = 100_000,
    rel_tol: float = 0.0,
) -> int | None:
    """The sample size ``n`` in ``[n_min, n_max]`` at which ``power_of_n`` first reaches ``target``, or None.

    Doubling from ``n_min`` until the power reaches the target, then bisection between the
    last size below and the first at or above it, until they differ by at most
    ``max(1, rel_tol x n)`` (``rel_tol`` > 0 trades exactness for fewer evaluations; the
    result is then an upper bound within that tolerance). Discrete tests have saw-tooth
    power in ``n``: the result has ``power(n) >= target`` and a smaller ``n`` (within the
    tolerance) below it, but a smaller isolated ``n`` may reach the target too. None: not
    reached by ``n_max`` (e.g. the other sample's size bounds the power).

    >>> smallest_n(lambda n: 1 - 0.9 ** n)
    16
    >>> smallest_n(lambda n: 1 - 0.999 ** n, rel_tol=0.05) in range(1609, 1690)
    True
    """
    if not callable(power_of_n):
        raise ValueError(f"power_of_n must be a callable n -> power; got {power_of_n!r}")
    target = _alpha(target, "target")
    n_min = V.integer(n_min, "n_min", 1)
    n_max = V.integer(n_max, "n_max", n_min)
    rel_tol = V.real(rel_tol, "rel_tol", 0.0, 1.0, hi_open=True)
    lo, hi = None, n_min
    while power_of_n(hi) < target:
        if hi >= n_max:
            return None
        lo, hi = hi, min(2 * hi, n_max)
    if lo is None:
        return hi
    while hi - lo > max(1, rel_tol * hi):
        mid = (lo + hi) // 2
        if power_of_n(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi
