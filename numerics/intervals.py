"""Evaluate SymPy expressions in mpmath, as numbers and as certified interval enclosures.

``value(expr, dps)`` gives an mpf with ``dps`` digits (SymPy's evalf adds guard digits);
``enclose(expr, dps)`` evaluates the same expression in mpmath's interval context, so
the exact value is certainly inside the returned interval (outward rounding at every
operation; rationals enter as intervals, not floats).

Printing an enclosure must not undo the certificate: :func:`directed_str` and
:func:`directed_fixed_str` write a binary number as a decimal rounded *exactly* in a
chosen direction (integer and ``decimal`` arithmetic on the mpf's (man, exp), never
``nstr``, which rounds to nearest), and :func:`format_enclosure` /
:func:`format_enclosure_fixed` / :func:`interval_str` round the lower end down and the
upper end up, so the printed interval still contains the exact value.

>>> import sympy as sp
>>> e = enclose(sp.sqrt(2), 30)
>>> lo, hi = bounds(e)
>>> with mpmath.workdps(60): bool(lo <= mpmath.sqrt(2) <= hi and hi - lo < mpmath.mpf("1e-29"))
True
>>> format_enclosure(lo, hi, 12)
('1.41421356237', '1.41421356238')
"""

from __future__ import annotations

import decimal
import numbers
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeAlias

import mpmath
from mpmath import iv

from numerics.validation import integer

if TYPE_CHECKING:
    import sympy as sp
# SymPy (about 1.5 s to import) is imported by the functions that evaluate expressions (``value``,
# ``enclose``, exact levels), not by the printers, which Dask workers and CLI subprocesses import.

# A real number held exactly (a float as its binary value); an exact level (a str is a decimal taken exactly).
_Real: TypeAlias = "mpmath.mpf | sp.Rational | Fraction | decimal.Decimal | float"
_Exact: TypeAlias = "str | int | Fraction | mpmath.mpf | sp.Expr"

_IV_FUNCS = {
    "mpf": iv.mpf,
    "sqrt": iv.sqrt,
    "sin": iv.sin,
    "cos": iv.cos,
    "tan": iv.tan,
    "exp": iv.exp,
    "log": iv.log,
    "pi": iv.pi,
    "e": iv.e,
    "E": iv.e,
}


@contextmanager
def iv_workdps(dps: int) -> Iterator[None]:
    """Temporarily set the interval context's precision (mpmath's ``iv`` has no workdps)."""
    saved = iv.prec
    iv.dps = dps
    try:
        yield
    finally:
        iv.prec = saved


def bounds(e: Any) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The end points of an interval as exact mpf values (no rounding on conversion).

    >>> bounds(iv.mpf([1, 2]))
    (mpf('1.0'), mpf('2.0'))
    >>> bounds(0.5)
    Traceback (most recent call last):
    ...
    ValueError: e must be an mpmath iv interval (mpmath.iv.mpf); got float
    """
    if not isinstance(e, mpmath.ctx_iv.ivmpf):
        raise ValueError(f"e must be an mpmath iv interval (mpmath.iv.mpf); got {type(e).__name__}")
    lo_raw, hi_raw = e._mpi_
    bits = max(lo_raw[3], hi_raw[3], 53) + 8
    with mpmath.workprec(bits):
        return +mpmath.mpf(lo_raw), +mpmath.mpf(hi_raw)


def _is_sympy_rational(x) -> bool:
    """``x`` is a SymPy Rational (Integer included); never one while SymPy is not imported, so none is."""
    sp = sys.modules.get("sympy")
    return sp is not None and isinstance(x, sp.Rational)


# ---------------------------------------------------------------- exact directed decimal output
def _check_count(n, name: str, minimum: int) -> int:
    return integer(n, name, minimum)


def _check_up(up) -> bool:
    if not isinstance(up, bool):
        raise ValueError(f"up must be True (round towards +inf) or False (towards -inf); got {up!r}")
    return up


def _binary_ratio(x, name: str = "x") -> tuple[int, int] | str:
    """``x`` exactly as (numerator, denominator > 0), or "inf" / "-inf".

    Accepted: mpf, int, float, Fraction, Decimal, SymPy Rational (all exact; a float is
    its binary value). NaN and other types raise ValueError naming ``name``.
    """
    if isinstance(x, bool):
        raise ValueError(f"{name} must be a real number (mpf, int, float, Fraction, Decimal); got {x!r}")
    if _is_sympy_rational(x):
        return int(x.p), int(x.q)
    if isinstance(x, numbers.Integral):
        return int(x), 1
    if isinstance(x, Fraction):
        return x.numerator, x.denominator
    if isinstance(x, decimal.Decimal):
        if x.is_nan():
            raise ValueError(f"{name} must not be NaN")
        if x.is_infinite():
            return "-inf" if x < 0 else "inf"
        f = Fraction(x)
        return f.numerator, f.denominator
    if isinstance(x, float):
        x = mpmath.mpf(x)  # exact: an mpf holds any double
    if not isinstance(x, mpmath.mpf):
        raise ValueError(f"{name} must be a real number (mpf, int, float, Fraction, Decimal); got {type(x).__name__}")
    if mpmath.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    if mpmath.isinf(x):
        return "-inf" if x < 0 else "inf"
    # _mpf_ = (sign, man, exp, bc) with man >= 0; ``man_exp`` drops the sign, and for inf
    # and nan it reports a meaningless (0, exp), hence the checks above
    sign, man, exp, _ = x._mpf_
    man = -int(man) if sign else int(man)
    return (man << exp, 1) if exp >= 0 else (man, 1 << -exp)


def _directed(x, count, name: str, minimum: int, up) -> tuple[int, bool, tuple[int, int] | str]:
    """A directed printer's checked arguments: ``count`` (digits or places), ``up``, and ``x`` as
    :func:`_binary_ratio` gives it."""
    return _check_count(count, name, minimum), _check_up(up), _binary_ratio(x)


def directed_str(x: _Real, digits: int, up: bool) -> str:
    """``x`` as a decimal of at most ``digits`` significant digits, rounded exactly towards +inf (``up``) or -inf.

    The rounding is exact (``decimal`` division of the mpf's integer mantissa by its power
    of two, directed rounding), so ``directed_str(x, d, False) <= x <= directed_str(x, d, True)``
    always holds as exact decimals. Exact values keep their short form (``0.5``); otherwise
    all ``digits`` digits are written, trailing zeros included. Infinite ``x`` prints as
    ``inf`` / ``-inf``.

    >>> directed_str(mpmath.mpf(2) / 3, 5, up=False), directed_str(mpmath.mpf(2) / 3, 5, up=True)
    ('0.66666', '0.66667')
    >>> directed_str(-mpmath.mpf(2) / 3, 5, up=False), directed_str(0.5, 3, up=True)
    ('-0.66667', '0.5')
    >>> directed_str(mpmath.mpf("9.9999"), 2, up=True), directed_str(mpmath.mpf(1) / 3 * 1e-9, 3, up=False)
    ('10', '3.33e-10')
    >>> directed_str(1, 0, up=True)
    Traceback (most recent call last):
    ...
    ValueError: digits must be an integer >= 1; got 0
    """
    digits, up, r = _directed(x, digits, "digits", 1, up)
    if isinstance(r, str):
        return r
    num, den = r
    ctx = decimal.Context(
        prec=digits,
        rounding=decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR,
        Emax=decimal.MAX_EMAX,
        Emin=decimal.MIN_EMIN,
    )
    return str(ctx.divide(decimal.Decimal(num), decimal.Decimal(den))).replace("E", "e")


def directed_fixed_str(x: _Real, places: int, up: bool) -> str:
    """``x`` with exactly ``places`` decimals, rounded exactly towards +inf (``up``) or -inf.

    >>> directed_fixed_str(mpmath.mpf(2) / 3, 3, up=False), directed_fixed_str(mpmath.mpf(2) / 3, 3, up=True)
    ('0.666', '0.667')
    >>> directed_fixed_str(-mpmath.mpf(1) / 1000, 2, up=False), directed_fixed_str(2.5, 0, up=True)
    ('-0.01', '3')
    """
    places, up, r = _directed(x, places, "places", 0, up)
    if isinstance(r, str):
        return r
    num, den = r
    scaled = num * 10**places
    n = -((-scaled) // den) if up else scaled // den  # exact ceiling / floor
    sign = "-" if n < 0 else ""
    body = str(abs(n)).rjust(places + 1, "0")
    return f"{sign}{body[:-places]}.{body[-places:]}" if places else f"{sign}{body}"


def _ordered(lo, hi) -> None:
    a, b = _binary_ratio(lo, "lo"), _binary_ratio(hi, "hi")
    if a == "inf" or b == "-inf":
        ok = a == b
    elif isinstance(a, str) or isinstance(b, str):
        ok = True  # lo = -inf or hi = +inf
    else:
        ok = a[0] * b[1] <= b[0] * a[1]
    if not ok:
        raise ValueError(f"lo must not exceed hi; got lo={lo!r}, hi={hi!r}")


def format_enclosure(lo: _Real, hi: _Real, digits: int) -> tuple[str, str]:
    """(lo rounded down, hi rounded up), each with at most ``digits`` significant digits.

    Exact (see :func:`directed_str`): every number in [lo, hi] lies in the printed interval,
    which is at most one unit in the last printed place wider than [lo, hi] at each end.

    >>> lo, hi = bounds(iv.mpf(1) / 3)
    >>> format_enclosure(lo, hi, 5)
    ('0.33333', '0.33334')
    >>> format_enclosure(2, 1, 5)
    Traceback (most recent call last):
    ...
    ValueError: lo must not exceed hi; got lo=2, hi=1
    """
    _ordered(lo, hi)
    return directed_str(lo, digits, up=False), directed_str(hi, digits, up=True)


def format_enclosure_fixed(lo: _Real, hi: _Real, places: int) -> tuple[str, str]:
    """(lo rounded down, hi rounded up), each with exactly ``places`` decimals (exact rounding).

    >>> format_enclosure_fixed(mpmath.mpf(1) / 3, mpmath.mpf(2) / 3, 4)
    ('0.3333', '0.6667')
    """
    _ordered(lo, hi)
    return directed_fixed_str(lo, places, up=False), directed_fixed_str(hi, places, up=True)


def interval_str(e: Any, digits: int) -> str:
    """An mpmath ``iv`` interval as ``"[lo, hi]"``, rounded outward to ``digits`` significant digits.

    >>> interval_str(iv.mpf(2) / 3, 5)
    '[0.66666, 0.66667]'
    """
    return "[{}, {}]".format(*format_enclosure(*bounds(e), digits))


# ---------------------------------------------------------------- certification predicates
def _level_bounds(x, bits: int, name: str = "x") -> tuple[mpmath.mpf, mpmath.mpf]:
    """A certified [lo, hi] around the exact number ``x`` (a point when ``x`` is an mpf); errors name ``name``."""
    if isinstance(x, bool) or isinstance(x, float):
        raise ValueError(
            f"{name} must be an exact number (str such as '0.4', int, Fraction, mpf or SymPy number); got {x!r}: "
            "a float's intended decimal is ambiguous"
        )
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ValueError(f"{name} must be a finite real number; got {x!r}")
        return x, x
    import sympy as sp

    if isinstance(x, Fraction):
        x = sp.Rational(x.numerator, x.denominator)
    try:
        ex = _exact(x)
    except (sp.SympifyError, TypeError, ValueError):
        raise ValueError(f"{name} must be an exact real number; got {x!r}") from None
    if ex.free_symbols or ex.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or ex.is_real is False:
        raise ValueError(f"{name} must be a finite real number without free symbols; got {x!r}")
    lo, hi = bounds(enclose(ex, max(40, int(bits * 0.30103) + 10)))
    if not (mpmath.isfinite(lo) and mpmath.isfinite(hi)):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    return lo, hi


def _bits(e) -> int:
    """Mantissa bits of ``e``'s end points (the level is enclosed at least this finely)."""
    lo_raw, hi_raw = e._mpi_
    return max(lo_raw[3], hi_raw[3], 0)


def certainly_below(e: Any, x: _Exact) -> bool:
    """True when every point of interval ``e`` is strictly below the exact number ``x``.

    ``x`` may be a string (a decimal such as '0.4' is taken exactly), int, Fraction, mpf
    (its exact binary value) or SymPy number; it is itself enclosed, never rounded, at a
    precision above that of ``e``'s end points. Floats are refused (ValueError). False
    means "not certified": ``e`` straddles or touches ``x``, or lies within the enclosure
    width of an irrational ``x``.

    >>> certainly_below(iv.mpf([0.25, 0.375]), "0.4"), certainly_below(iv.mpf([0.25, 0.5]), "1/2")
    (True, False)
    """
    hi = bounds(e)[1]
    return hi < _level_bounds(x, _bits(e))[0]


def certainly_above(e: Any, x: _Exact) -> bool:
    """True when every point of interval ``e`` is strictly above the exact number ``x`` (see :func:`certainly_below`).

    >>> certainly_above(iv.mpf([0.5, 1]), "0.4"), certainly_above(iv.mpf([0.5, 1]), "1/2")
    (True, False)
    """
    lo = bounds(e)[0]
    return lo > _level_bounds(x, _bits(e))[1]


def _exact(expr) -> sp.Expr:
    """Decimal strings become exact rationals ('0.4' -> 2/5); other input is sympified."""
    import sympy as sp

    if isinstance(expr, str):
        try:
            return sp.Rational(expr)
        except (TypeError, ValueError, ZeroDivisionError):
            return sp.sympify(expr)
    return sp.sympify(expr)


def _check_dps(dps):
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 1:
        raise ValueError(f"dps (decimal digits) must be an integer >= 1; got {dps!r}")


def value(expr: sp.Expr | str | float, dps: int = 50, subs: dict | None = None) -> mpmath.mpf:
    """``expr`` (closed, after ``subs``) as an mpf correct to ``dps`` significant digits."""
    import sympy as sp

    _check_dps(dps)
    e = sp.sympify(expr).subs(subs or {})
    if e.free_symbols:
        raise ValueError(f"expr has free symbols {sorted(map(str, e.free_symbols))}; pass them in subs")
    with mpmath.workdps(dps + 10):
        return mpmath.mpf(sp.N(e, dps + 10))


def enclose(expr: sp.Expr | str | float, dps: int = 50, subs: dict | None = None) -> Any:
    """A certified interval (mpmath ``iv`` mpi) containing the exact value of ``expr``.

    ``subs`` values that are exact (SymPy Rational/Integer) stay exact: they are
    substituted before evaluation and enter as intervals.
    """
    import sympy as sp

    _check_dps(dps)
    e = _exact(expr).subs(subs or {})
    if e.free_symbols:
        raise ValueError(f"expr has free symbols {sorted(map(str, e.free_symbols))}; pass them in subs")
    e = e.xreplace({f: sp.Rational(str(f)) for f in e.atoms(sp.Float)})
    f = sp.lambdify((), e, modules=[_IV_FUNCS, "mpmath"])
    with iv_workdps(dps + 10):
        out = f()
        return iv.mpf(out)  # evaluates lazy constants (iv.pi) at this precision


def _bracket_point(x, name: str, prec: int) -> mpmath.mpf:
    """``x`` as a finite mpf at ``prec`` bits (integers of any size exactly)."""
    if isinstance(x, bool):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    with mpmath.workprec(max(prec, x.bit_length() + 1 if isinstance(x, int) else 0)):
        try:
            if isinstance(x, Fraction):
                out = mpmath.mpf(x.numerator) / x.denominator
            elif _is_sympy_rational(x):
                out = mpmath.mpf(int(x.p)) / int(x.q)
            else:
                out = +mpmath.mpf(x)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a finite real number; got {x!r}") from None
    if not mpmath.isfinite(out):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    return out


def certified_decreasing_root(f_iv: Callable[[Any], Any], level: Any, lo: _Real, hi: _Real, dps: int = 50) -> Any:
    """Enclose the unique root of f(x) = level on [lo, hi] for f strictly decreasing there.

    ``f_iv`` maps an interval to an enclosure of f over it; ``level`` is an ``iv``
    interval, an mpf (exact) or an exact number as in :func:`certainly_below`. Bisection
    keeps a bracket [a, b] with f(a) > level and f(b) < level certified by interval
    evaluation; returns the final bracket as an interval of width below 10**-dps (a
    point when f(mid) = level is certified exactly). Monotonicity is the caller's
    precondition: the result always contains *a* root; it is *the* root when f is
    strictly decreasing.

    Raises ValueError when ``lo >= hi``, when the end points do not certify
    f(lo) > level > f(hi) (no sign change, or f not decreasing across the bracket), or
    when the interval precision cannot decide the sign at a bisection point.
    """
    _check_dps(dps)
    # digits before the point count too: an absolute width 10**-dps needs them
    rough = max(abs(_bracket_point(lo, "lo", 53)), abs(_bracket_point(hi, "hi", 53)), 1)
    work = dps + 15 + int(mpmath.floor(mpmath.log10(rough))) + 1
    a_pt, b_pt = _bracket_point(lo, "lo", int(work * 3.33) + 8), _bracket_point(hi, "hi", int(work * 3.33) + 8)
    if not a_pt < b_pt:
        raise ValueError(f"lo must be below hi; got lo={lo!r}, hi={hi!r}")
    with iv_workdps(work), mpmath.workdps(work):
        if isinstance(level, mpmath.ctx_iv.ivmpf):
            lev = level
        else:
            lev_lo, lev_hi = _level_bounds(level, int(work * 3.33), "level")
            lev = iv.mpf([lev_lo, lev_hi])

        def sign(x):  # +1 / -1 when f(x) - level is certainly positive / negative, 0 if exactly 0, else None
            fx = f_iv(iv.mpf(x))
            if not isinstance(fx, mpmath.ctx_iv.ivmpf):
                raise ValueError(f"f_iv must return an mpmath iv interval; got {type(fx).__name__}")
            lo_, hi_ = bounds(fx - lev)
            if lo_ > 0:
                return 1
            if hi_ < 0:
                return -1
            return 0 if lo_ == hi_ == 0 else None

        s_a, s_b = sign(a_pt), sign(b_pt)
        if s_a != 1 or s_b != -1:
            raise ValueError(
                f"no certified sign change of f - level on [{lo}, {hi}] (need f(lo) > level > f(hi), f decreasing); "
                f"signs at the ends: {s_a}, {s_b} (None: undecided)"
            )
        tol = mpmath.mpf(10) ** (-dps)
        while b_pt - a_pt > tol:
            mid = (a_pt + b_pt) / 2
            if not a_pt < mid < b_pt:  # pragma: no cover - the working precision covers the magnitude
                raise ValueError(f"bisection stalled at {mid}; raise dps")
            s = sign(mid)
            if s == 1:
                a_pt = mid
            elif s == -1:
                b_pt = mid
            elif s == 0:
                return iv.mpf([mid, mid])
            else:
                raise ValueError(f"interval precision too low to separate the root at dps={dps}; raise dps")
        return iv.mpf([a_pt, b_pt])
