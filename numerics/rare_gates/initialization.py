"""Constants of the Gaussian initialisation of the rare-gates paper, with certified enclosures.

Usage::

    python -m numerics.rare_gates.initialization [--digits N] [--m M_INNER] [--M M_OUTER]
                                                 [--grid] [--format text|markdown|csv|json]

(``--dps N``: a deprecated alias of ``--digits N``.) Prints, to ``--digits`` significant digits
(default 50), each constant with an enclosure ``[lo, hi]`` computed in ``mpmath.iv`` interval arithmetic:

* ``P(D0)`` for Gaussian ``a_i ~ N(0, 1)``, ``w_i ~ N(0, I_2)``:
  ``(1/16)(1 - (7/4) e^{-3/4})`` (either labelling of the units), and the labelled set's half of it;
* the bound on ``P(D0 \\ K)`` of Appendix 18 at margins ``m`` (default ``1e-4``) and ``M``
  (default ``5``), term by term;
* the lower bound ``P(D0) - bound <= P(K)`` and ``0.99`` times it;
* the infimum ``1 + 9/128 - 3/(2 pi)`` of the initial target risk on D0.

``--grid`` adds the bound over round ``m`` in {1, 2, 5} x 10^-6..10^-3 and ``M`` in 3..10
with two flags: the bound is below the quoted ``1.93e-4``, and ``1.93e-4`` is its
three-significant-digit upward rounding (the tight reading).

The closed forms are derived in :mod:`derivations.rare_gates.initialization`; here they are
evaluated at a precision parameter with guard digits (``mpmath.workdps``; the global
``mp.dps`` is never changed) and enclosed with ``mpmath.iv`` at a temporarily raised
``iv.prec`` that is restored afterwards. Printed values are rounded to nearest at
``--digits`` significant digits (from values with 10 guard digits): values, not bounds.
Printed enclosures are rounded outward exactly (lower end down, upper end up, at
``--digits`` significant digits, by :func:`numerics.intervals.format_enclosure`), so each
still contains its constant.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
from mpmath import iv

from numerics.cli_support import Parser, flag_error, int_arg, run_main, shown
from numerics.intervals import format_enclosure as format_enclosure_pair
from numerics.intervals import interval_str

GUARD_DIGITS = 10  # extra decimal digits carried internally; results are rounded to dps
GUARD_BITS = 40  # extra bits for the interval context, so enclosures stay tight at dps digits
DEFAULT_M_INNER = "1e-4"  # the reading of the lost m: see RG-18.Kbound
DEFAULT_M_OUTER = "5"  # the reading of the lost M
QUOTED_BOUND = "1.93e-4"  # Appendix 18's quoted bound on P(D0 \ K)
OMEGA_CAP = Fraction(3, 4)  # omega_1 + omega_2 < 3/4 in D0
GRID_M_INNER = tuple(f"{c}e-{k}" for k in (6, 5, 4, 3) for c in (1, 2, 5))
GRID_M_OUTER = tuple(str(v) for v in range(3, 11))
MC_CHUNK = 1 << 18  # draws per Philox stream; fixed, so counts do not depend on batching

Number = str | int | float | Fraction


def _check_dps(dps: int) -> int:
    if isinstance(dps, bool) or not isinstance(dps, int) or not 1 <= dps <= 10_000:
        raise ValueError(f"dps must be an integer in [1, 10000], got {dps!r}")
    return dps


def _as_fraction(value: Number, name: str) -> Fraction:
    """Parse ``value`` exactly (decimal strings and floats convert without rounding)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            return Fraction(value)
        if isinstance(value, (int, Fraction)):
            return Fraction(value)
        if isinstance(value, str):
            return Fraction(value.strip())
    except (ValueError, ZeroDivisionError):
        pass
    raise ValueError(f"{name} must be a finite number (str, int, float or Fraction), got {value!r}")


def _check_margins(m: Number, M: Number) -> tuple[Fraction, Fraction]:
    fm = _as_fraction(m, "m")
    fM = _as_fraction(M, "M")
    if not 0 < fm < OMEGA_CAP:
        raise ValueError(f"m must lie in (0, 3/4) so that K is non-empty, got {m!r}")
    if not fM > fm:
        raise ValueError(f"M must exceed m, got M={M!r} and m={m!r}")
    return fm, fM


def _mpf(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def _iv(value: Fraction):
    return iv.mpf(value.numerator) / value.denominator


@contextmanager
def _iv_precision(dps: int) -> Iterator[None]:
    """Raise ``iv.prec`` for the block and restore it afterwards (no lasting global change)."""
    saved = iv.prec
    iv.prec = int(dps * 3.33) + GUARD_BITS
    try:
        yield
    finally:
        iv.prec = saved


def endpoints(enclosure: Any) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The exact endpoints of an ``mpmath.iv`` interval as ``mpf`` (no detour through float).

    (``mpmath.mpf(enclosure.a)`` converts through a double and loses the extra precision.)

    >>> lo, hi = endpoints(initial_risk_infimum_enclosure())
    >>> mpmath.nstr(lo, 40) == mpmath.nstr(hi, 40) == mpmath.nstr(initial_risk_infimum(), 40)
    True
    """
    if not isinstance(enclosure, mpmath.ctx_iv.ivmpf):
        raise ValueError(f"enclosure must be an mpmath.iv interval, got {type(enclosure).__name__}")
    lo, hi = enclosure._mpi_
    return mpmath.mp.make_mpf(lo), mpmath.mp.make_mpf(hi)


def _exact(value: mpmath.mpf) -> Fraction:
    """An mpf as an exact Fraction (its binary value, no rounding)."""
    man, exp = value.man_exp
    return Fraction(man) * Fraction(2) ** exp


def certified_below(enclosure: Any, quoted: Number) -> bool:
    """True when the whole interval lies strictly below ``quoted`` (compared exactly, decimal taken exactly).

    >>> certified_below(k_bound_enclosure(), "1.93e-4"), certified_below(k_bound_enclosure(), "1.92e-4")
    (True, False)
    """
    _, hi = endpoints(enclosure)
    return _exact(hi) < _as_fraction(quoted, "quoted")


def certified_above(enclosure: Any, quoted: Number) -> bool:
    """True when the whole interval lies strictly above ``quoted`` (compared exactly).

    >>> certified_above(p_k_lower_enclosure(), "0.0106")
    True
    """
    lo, _ = endpoints(enclosure)
    return _exact(lo) > _as_fraction(quoted, "quoted")


def format_enclosure(enclosure: Any, digits: int = 50) -> str:
    """``[lo, hi]`` with at most ``digits`` significant digits, lo rounded down and hi up, exactly.

    The printed interval contains the enclosure, hence the constant (see
    :func:`numerics.intervals.interval_str`).

    >>> format_enclosure(iv.mpf(1) / 3, 5)
    '[0.33333, 0.33334]'
    >>> format_enclosure(iv.mpf(1) / 3, 0)
    Traceback (most recent call last):
    ...
    ValueError: digits must be an integer >= 1; got 0
    """
    endpoints(enclosure)  # the ValueError for a non-interval names ``enclosure``
    return interval_str(enclosure, digits)


def _rounded(value, dps: int) -> mpmath.mpf:
    with mpmath.workdps(dps):
        return +value


# --- P(D0) -------------------------------------------------------------------------------


def _p_d0_expr(ctx, labelled: bool):
    cap = ctx.mpf(3) / 4
    heads_and_sum = (1 - (1 + cap) * ctx.exp(-cap)) / 4  # P(a_i > 0, omega_1 + omega_2 < 3/4)
    angles = ctx.mpf(1) / 8 if labelled else ctx.mpf(1) / 4  # angular part of D0
    return heads_and_sum * angles


def p_d0(dps: int = 50, labelled: bool = False) -> mpmath.mpf:
    """P(D0) = (1/16)(1 - (7/4) e^{-3/4}) to ``dps`` digits; ``labelled=True`` gives the labelled set.

    >>> mpmath.nstr(p_d0(dps=15), 12)
    '0.010834908294'
    >>> mpmath.nstr(p_d0(dps=15, labelled=True), 6)
    '0.00541745'
    """
    _check_dps(dps)
    with mpmath.workdps(dps + GUARD_DIGITS):
        value = _p_d0_expr(mpmath.mp, labelled)
    return _rounded(value, dps)


def p_d0_enclosure(labelled: bool = False, dps: int = 50) -> Any:
    """Certified interval containing P(D0).

    >>> lo, hi = endpoints(p_d0_enclosure())
    >>> bool(lo <= p_d0(dps=80) <= hi), bool(hi - lo < mpmath.mpf("1e-60"))
    (True, True)
    """
    _check_dps(dps)
    with _iv_precision(dps):
        return _p_d0_expr(iv, labelled)


# --- the bound on P(D0 \ K) ------------------------------------------------------------------


def _k_terms(ctx, m, M) -> dict:
    root_two_pi = ctx.sqrt(2 * ctx.pi)
    tail = ctx.exp(-(M**2) / 2)
    return {
        "a_small": 2 * m / root_two_pi,  # P(0 < a_i < m) <= m phi(0), two units
        "w_small": m**2,  # P(|w_i| < m) = 1 - e^{-m^2/2} <= m^2/2, two units
        "a_large": 2 * tail / (M * root_two_pi),  # Mills ratio, two units
        "w_large": 2 * tail,  # P(|w_i| > M) = e^{-M^2/2}, two units
        "angles": 3 * m / ctx.pi,  # three strips of m/(2 pi) in each of two labellings
        "omega_sum": m / (4 * ctx.e),  # strip of width m times sup of x e^{-x}/4
    }


def k_bound_terms(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> dict[str, mpmath.mpf]:
    """The six terms of the Appendix 18 bound on P(D0 \\ K) to ``dps`` digits.

    >>> {k: mpmath.nstr(v, 4) for k, v in k_bound_terms(dps=10).items()}["angles"]
    '9.549e-5'
    """
    _check_dps(dps)
    fm, fM = _check_margins(m, M)
    with mpmath.workdps(dps + GUARD_DIGITS):
        terms = _k_terms(mpmath.mp, _mpf(fm), _mpf(fM))
    return {k: _rounded(v, dps) for k, v in terms.items()}


def k_bound(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> mpmath.mpf:
    """The bound on P(D0 \\ K) (sum of :func:`k_bound_terms`).

    >>> mpmath.nstr(k_bound(dps=20), 8)
    '0.0001925364'
    >>> k_bound(m="0.8")
    Traceback (most recent call last):
    ...
    ValueError: m must lie in (0, 3/4) so that K is non-empty, got '0.8'
    >>> k_bound(M=1e-5)
    Traceback (most recent call last):
    ...
    ValueError: M must exceed m, got M=1e-05 and m='1e-4'
    >>> k_bound(dps=0)
    Traceback (most recent call last):
    ...
    ValueError: dps must be an integer in [1, 10000], got 0
    """
    _check_dps(dps)
    fm, fM = _check_margins(m, M)
    with mpmath.workdps(dps + GUARD_DIGITS):
        value = mpmath.fsum(_k_terms(mpmath.mp, _mpf(fm), _mpf(fM)).values())
    return _rounded(value, dps)


def k_bound_enclosure(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> Any:
    """Certified interval containing the bound on P(D0 \\ K); ``m``, ``M`` are taken exactly.

    >>> bool(k_bound_enclosure().b < mpmath.mpf("1.93e-4"))
    True
    """
    _check_dps(dps)
    fm, fM = _check_margins(m, M)
    with _iv_precision(dps):
        terms = _k_terms(iv, _iv(fm), _iv(fM))
        total = iv.mpf(0)
        for v in terms.values():
            total = total + v
        return total


def p_k_lower(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> mpmath.mpf:
    """P(D0) - bound, a lower bound on P(K) since K is a subset of D0.

    >>> mpmath.nstr(p_k_lower(dps=20), 6)
    '0.0106424'
    """
    _check_dps(dps)
    _check_margins(m, M)
    with mpmath.workdps(dps + GUARD_DIGITS):
        value = p_d0(dps + GUARD_DIGITS) - k_bound(m, M, dps + GUARD_DIGITS)
    return _rounded(value, dps)


def p_k_lower_enclosure(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> Any:
    """Certified interval containing P(D0) - bound (its left end is a certified lower bound on P(K)).

    >>> bool(0.99 * p_k_lower_enclosure().a > 0.01)
    True
    """
    _check_dps(dps)
    _check_margins(m, M)
    bound = k_bound_enclosure(m, M, dps)
    with _iv_precision(dps):
        return _p_d0_expr(iv, labelled=False) - bound


def p_k99_lower_enclosure(m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER, dps: int = 50) -> Any:
    """Certified interval containing 0.99 (P(D0) - bound); its left end bounds 0.99 P(K) from below.

    >>> certified_above(p_k99_lower_enclosure(), "0.01")
    True
    """
    low = p_k_lower_enclosure(m, M, dps)
    with _iv_precision(dps):
        return iv.mpf(99) / 100 * low


# --- initial target risk ---------------------------------------------------------------------


def _risk_infimum_expr(ctx):
    cap = ctx.mpf(3) / 4
    q = 2 / ctx.pi
    return 1 + cap**2 / 8 - q * cap  # 1 + S^2/8 - qS at S = 3/4


def initial_risk_infimum(dps: int = 50) -> mpmath.mpf:
    """inf over D0 of the target risk, 1 + 9/128 - 3/(2 pi).

    >>> mpmath.nstr(initial_risk_infimum(dps=20), 10)
    '0.5928476707'
    """
    _check_dps(dps)
    with mpmath.workdps(dps + GUARD_DIGITS):
        value = _risk_infimum_expr(mpmath.mp)
    return _rounded(value, dps)


def initial_risk_infimum_enclosure(dps: int = 50) -> Any:
    """Certified interval containing 1 + 9/128 - 3/(2 pi).

    >>> bool(initial_risk_infimum_enclosure().a > 0.4)
    True
    """
    _check_dps(dps)
    with _iv_precision(dps):
        return _risk_infimum_expr(iv)


# --- quadrature oracle for the omega tail ---------------------------------------------------------


def omega_tail_quadrature(x: Number, dps: int = 50) -> tuple[mpmath.mpf, mpmath.mpf]:
    """int_0^oo e^{-a^2/2}/sqrt(2 pi) e^{-x^2/(2 a^2)} da by tanh-sinh quadrature, with its error estimate.

    The integrand peaks near ``a = sqrt(x)``, so the range is split there. Independent of the
    closed form ``e^{-x}/2`` (Appendix 18), against which the checks compare it.

    >>> value, err = omega_tail_quadrature(1, dps=30)
    >>> with mpmath.workdps(30):
    ...     bool(abs(value - mpmath.exp(-1) / 2) < mpmath.mpf("1e-25"))
    True
    """
    _check_dps(dps)
    fx = _as_fraction(x, "x")
    if fx <= 0:
        raise ValueError(f"x must be positive, got {x!r}")
    with mpmath.workdps(dps + GUARD_DIGITS):
        xx = _mpf(fx)

        def integrand(a):
            if a == 0:
                return mpmath.mpf(0)
            return mpmath.exp(-(a**2) / 2 - xx**2 / (2 * a**2)) / mpmath.sqrt(2 * mpmath.pi)

        value, err = mpmath.quad(integrand, [0, mpmath.sqrt(xx), mpmath.inf], error=True)
    return _rounded(value, dps), _rounded(err, dps)


# --- the (m, M) grid ---------------------------------------------------------------------------


def bound_grid(
    ms: tuple[Number, ...] = GRID_M_INNER,
    Ms: tuple[Number, ...] = GRID_M_OUTER,
    quoted: str = QUOTED_BOUND,
    dps: int = 30,
) -> list[dict]:
    """The bound at each (m, M) with certified flags ``below`` (bound < quoted) and ``tight``.

    ``tight``: the quoted value is the bound rounded up to the quoted number of significant
    digits, i.e. ``quoted - unit <= bound < quoted`` with ``unit`` one in the quote's last digit.

    >>> [(r["m"], r["M"]) for r in bound_grid() if r["tight"]]
    [('1e-4', '5')]
    """
    _check_dps(dps)
    q = _as_fraction(quoted, "quoted")
    if q <= 0:
        raise ValueError(f"quoted must be positive, got {quoted!r}")
    mant, _, exp = quoted.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    unit = Fraction(10) ** (int(exp or 0) - decimals)
    rows = []
    for m in ms:
        for M in Ms:
            enc = k_bound_enclosure(m, M, dps)
            below = certified_below(enc, q)
            tight = below and _exact(endpoints(enc)[0]) >= q - unit
            rows.append({"m": str(m), "M": str(M), "bound": k_bound(m, M, dps), "below": below, "tight": tight})
    return rows


# --- Monte Carlo cross-check of P(D0) ------------------------------------------------------------


def _d0_chunk(rng: np.random.Generator, n: int) -> tuple[int, int]:
    """Counts of (either labelling, labelled) D0 membership among ``n`` Gaussian draws."""
    a = rng.standard_normal((n, 2))
    w = rng.standard_normal((n, 2, 2))
    omega = a * np.hypot(w[..., 0], w[..., 1])
    th = np.arctan2(w[..., 1], w[..., 0])
    base = (a[:, 0] > 0) & (a[:, 1] > 0) & (omega.sum(axis=1) < 0.75)
    lab = (th[:, 0] > 0) & (th[:, 1] < 0) & (th[:, 0] - th[:, 1] < np.pi)
    swapped = (th[:, 1] > 0) & (th[:, 0] < 0) & (th[:, 1] - th[:, 0] < np.pi)
    return int(np.count_nonzero(base & (lab | swapped))), int(np.count_nonzero(base & lab))


def monte_carlo_d0(n: int, seed: int) -> tuple[int, int]:
    """Counts of D0 (either labelling) and labelled-D0 membership in ``n`` Gaussian initialisations.

    Draws come in fixed chunks of ``MC_CHUNK``, chunk ``k`` from ``Philox(key=(seed, k))``, so
    the counts depend only on ``(n, seed)``.

    >>> monte_carlo_d0(1000, seed=1) == monte_carlo_d0(1000, seed=1)
    True
    >>> monte_carlo_d0(0, seed=1)
    Traceback (most recent call last):
    ...
    ValueError: n must be a positive integer, got 0
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    either = labelled = 0
    for k, start in enumerate(range(0, n, MC_CHUNK)):
        rng = np.random.Generator(np.random.Philox(key=np.array([seed, k], dtype=np.uint64)))
        e, lab = _d0_chunk(rng, min(MC_CHUNK, n - start))
        either += e
        labelled += lab
    return either, labelled


# --- membership in K -----------------------------------------------------------------------------


def k_slack(theta: Any, m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER) -> np.ndarray:
    """Smallest slack of the constraints of K for rows ``(a1, a2, w1, w2)``, the better labelling taken.

    K (Appendix 18; the constraints of :func:`derivations.rare_gates.initialization.k_constraints`):
    ``m <= a_i <= M``, ``m <= |w_i| <= M``, ``omega_1 + omega_2 <= 3/4 - m``, ``vartheta_1 >= m``,
    ``vartheta_2 <= -m``, ``vartheta_1 - vartheta_2 <= pi - m`` with ``vartheta_i`` the polar
    angle of ``w_i`` in ``(-pi, pi]``, in either labelling of the units (the symmetrised K of
    RG-18.PK). The slack of ``lhs <= rhs`` is ``rhs - lhs``; a row is in K when its slack is
    ``>= 0``. Float64: a point within rounding of the boundary may be classified either way.

    >>> k_slack(np.array([0.5, 0.5, 0.5, 0.5, 0.5, -0.5]))[0] > 0
    np.True_
    """
    fm, fM = _check_margins(m, M)
    mm, MM, cap = float(fm), float(fM), float(OMEGA_CAP - fm)
    th = np.atleast_2d(np.asarray(theta, dtype=float))
    if th.ndim != 2 or th.shape[1] != 6 or not np.all(np.isfinite(th)):
        raise ValueError(f"theta must be finite rows of length 6 (a1, a2, w1x, w1y, w2x, w2y); got shape {th.shape}")
    a1, a2, u0, u1, v0, v1 = th.T
    r1, r2 = np.hypot(u0, u1), np.hypot(v0, v1)
    t1, t2 = np.arctan2(u1, u0), np.arctan2(v1, v0)
    common = np.minimum.reduce(
        [a1 - mm, MM - a1, a2 - mm, MM - a2, r1 - mm, MM - r1, r2 - mm, MM - r2, cap - (a1 * r1 + a2 * r2)]
    )

    def angles(up, down):  # up >= m, down <= -m, up - down <= pi - m
        return np.minimum.reduce([up - mm, -mm - down, math.pi - mm - (up - down)])

    return np.minimum(common, np.maximum(angles(t1, t2), angles(t2, t1)))


def in_k(theta: Any, m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER) -> np.ndarray:
    """Membership of rows ``(a1, a2, w1, w2)`` in the symmetrised K at margins ``m``, ``M`` (:func:`k_slack` >= 0).

    >>> in_k(np.array([[0.5, 0.5, 0.5, 0.5, 0.5, -0.5], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]])).tolist()
    [True, False]
    """
    return k_slack(theta, m, M) >= 0.0


def wilson_interval(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k/n`` at normal quantile ``z``.

    >>> lo, hi = wilson_interval(5, 64, 1.959963984540054)
    >>> round(lo, 4), round(hi, 4)
    (0.0338, 0.1702)
    >>> wilson_interval(64, 64, 1.96)[1], wilson_interval(0, 64, 1.96)[0]
    (1.0, 0.0)

    Computed by :func:`numerics.stats.wilson_interval` (statsmodels), which validates the inputs.
    """
    from numerics.stats import wilson_interval as _wilson  # statsmodels loads only when an interval is asked for

    return _wilson(k, n, z)


# --- CLI -------------------------------------------------------------------------------------------


def constants(dps: int = 50, m: Number = DEFAULT_M_INNER, M: Number = DEFAULT_M_OUTER) -> list[dict]:
    """Rows ``{name, value, lo, hi}`` of the printed constants.

    ``value``: rounded to nearest at ``dps`` significant digits; ``lo``, ``hi``: the
    certified enclosure rounded outward exactly at ``dps`` significant digits (empty for
    the bound terms, printed as values only).

    >>> [r["name"] for r in constants(dps=15)][:2]
    ['P(D0)', 'P(D0) labelled']
    """
    _check_dps(dps)
    _check_margins(m, M)
    g = dps + GUARD_DIGITS  # values carry guard digits and are rounded once, to nearest, when printed
    rows = [
        ("P(D0)", p_d0(g), p_d0_enclosure(False, dps)),
        ("P(D0) labelled", p_d0(g, labelled=True), p_d0_enclosure(True, dps)),
    ]
    for name, value in k_bound_terms(m, M, g).items():
        rows.append((f"bound term {name}", value, None))
    rows += [
        (f"bound on P(D0 \\ K) (m={m}, M={M})", k_bound(m, M, g), k_bound_enclosure(m, M, dps)),
        ("P(K) >= P(D0) - bound", p_k_lower(m, M, g), p_k_lower_enclosure(m, M, dps)),
    ]
    scaled = p_k99_lower_enclosure(m, M, dps)
    with mpmath.workdps(g):
        rows.append(("0.99 (P(D0) - bound)", mpmath.mpf(99) / 100 * p_k_lower(m, M, g), scaled))
    rows.append(
        ("initial-risk infimum 1 + 9/128 - 3/(2 pi)", initial_risk_infimum(g), initial_risk_infimum_enclosure(dps))
    )
    out = []
    for name, value, enc in rows:
        lo, hi = format_enclosure_pair(*endpoints(enc), dps) if enc is not None else ("", "")
        out.append({"name": name, "value": mpmath.nstr(value, dps), "lo": lo, "hi": hi})
    return out


def _render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=2)
    keys = list(rows[0])
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue().rstrip("\n")
    if fmt == "markdown":
        lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
        lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
        return "\n".join(lines)
    lines = []
    for r in rows:
        encl = f"  in [{r['lo']}, {r['hi']}]" if r.get("lo") else ""
        rest = "  ".join(f"{k}={r[k]}" for k in keys if k not in ("name", "value", "lo", "hi"))
        lines.append(f"{r['name']}: {r['value']}{encl}{('  ' + rest) if rest else ''}")
    return "\n".join(lines)


# The command's limits (the library's functions check their own): --digits up to 10000 - 2 x
# GUARD_DIGITS (the constants carry guard digits twice over); 9980 digits take about 2 s.
# --M above 1000 changes nothing printable (its tail terms are below e^{-M^2/2} ~ 10^-217000)
# and 1e100000 hangs in the exact evaluation; --m below 1e-1000 makes the exact decimal parse
# slow (1e-1000000: about a minute).
CLI_MAX_DIGITS = 10_000 - 2 * GUARD_DIGITS
CLI_M_INNER_MIN = Fraction(1, 10**1000)
CLI_M_OUTER_MAX = 1000


def _exact_arg(name: str, lo: Fraction, hi: Fraction, *, hi_open: bool, where: str) -> Any:
    """An argparse ``type=`` for ``--m`` / ``--M``: an exact number in [lo, hi] (or [lo, hi)), kept as text."""

    def parse(text: str) -> str:
        exponent = re.search(r"[eE]\s*([-+]?\d+)", text)
        try:
            if len(text) > 2000 or (exponent and abs(int(exponent.group(1))) > 1000):
                raise ValueError(text)
            value = _as_fraction(text, name)
        except ValueError:
            value = None
        if value is None or value < lo or value > hi or (hi_open and value == hi):
            raise argparse.ArgumentTypeError(f"must be a number in {where}; got {shown(text)!r}")
        return text

    parse.__name__ = "number"
    return parse


def main(argv: list[str] | None = None) -> int:
    """Print the constants (and optionally the grid); returns the exit status (2 bad input, 141 closed stdout)."""

    def body() -> int:
        parser = Parser(prog="python -m numerics.rare_gates.initialization", description=__doc__)
        parser.add_argument(
            "--digits",
            "--dps",
            dest="digits",
            type=int_arg(1, CLI_MAX_DIGITS),
            default=50,
            help=f"significant digits, 1 to {CLI_MAX_DIGITS} (default 50); --dps is a deprecated alias of --digits",
        )
        parser.add_argument(
            "--m",
            type=_exact_arg("m", CLI_M_INNER_MIN, OMEGA_CAP, hi_open=True, where="[1e-1000, 3/4)"),
            default=DEFAULT_M_INNER,
            help="inner margin m of K, in [1e-1000, 3/4) (default 1e-4)",
        )
        parser.add_argument(
            "--M",
            dest="M_outer",
            type=_exact_arg(
                "M", CLI_M_INNER_MIN, Fraction(CLI_M_OUTER_MAX), hi_open=False, where=f"(m, {CLI_M_OUTER_MAX}]"
            ),
            default=DEFAULT_M_OUTER,
            help=f"outer radius M of K, in (m, {CLI_M_OUTER_MAX}] (default 5)",
        )
        parser.add_argument("--grid", action="store_true", help="also print the bound over the (m, M) grid")
        parser.add_argument("--format", choices=("text", "markdown", "csv", "json"), default="text")
        args = parser.parse_args(argv)
        try:
            rows = constants(args.digits, args.m, args.M_outer)
            grid = bound_grid(dps=min(args.digits, 30)) if args.grid else None
        except ValueError as exc:  # M <= m: name the option
            raise flag_error(exc, {"m": "--m", "M": "--M", "dps": "--digits"}) from None
        print(_render(rows, args.format))
        if grid is not None:
            table = [{**r, "bound": mpmath.nstr(r["bound"], 6)} for r in grid]
            print()
            print(
                _render(
                    [
                        {
                            "name": f"m={r['m']} M={r['M']}",
                            "value": r["bound"],
                            "below": r["below"],
                            "tight": r["tight"],
                        }
                        for r in table
                    ],
                    args.format,
                )
            )
        return 0

    return run_main("python -m numerics.rare_gates.initialization", body)


if __name__ == "__main__":
    sys.exit(main())
