"""Evaluate SymPy expressions in mpmath, as numbers and as certified interval enclosures.

``value(expr, dps)`` gives an mpf with ``dps`` digits (SymPy's evalf adds guard digits);
``enclose(expr, dps)`` evaluates the same expression in mpmath's interval context, so
the exact value is certainly inside the returned interval (outward rounding at every
operation; rationals enter as intervals, not floats).

>>> import sympy as sp
>>> e = enclose(sp.sqrt(2), 30)
>>> lo, hi = bounds(e)
>>> with mpmath.workdps(60): bool(lo <= mpmath.sqrt(2) <= hi and hi - lo < mpmath.mpf("1e-29"))
True
"""

from __future__ import annotations

from contextlib import contextmanager

import mpmath
import sympy as sp
from mpmath import iv

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
def iv_workdps(dps: int):
    """Temporarily set the interval context's precision (mpmath's ``iv`` has no workdps)."""
    saved = iv.prec
    iv.dps = dps
    try:
        yield
    finally:
        iv.prec = saved


def bounds(e) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The end points of an interval as exact mpf values (no rounding on conversion)."""
    if not isinstance(e, mpmath.ctx_iv.ivmpf):
        raise ValueError(f"e must be an mpmath iv interval; got {type(e).__name__}")
    lo_raw, hi_raw = e._mpi_
    bits = max(lo_raw[3], hi_raw[3], 53) + 8
    with mpmath.workprec(bits):
        return +mpmath.mpf(lo_raw), +mpmath.mpf(hi_raw)


def certainly_below(e, x) -> bool:
    """True when every point of interval ``e`` is strictly below the exact number ``x``.

    ``x`` may be a string, int or SymPy number; it is itself enclosed, never rounded.
    """
    return bounds(e)[1] < bounds(enclose(x, 40))[0]


def certainly_above(e, x) -> bool:
    """True when every point of interval ``e`` is strictly above the exact number ``x``."""
    return bounds(e)[0] > bounds(enclose(x, 40))[1]


def _exact(expr) -> sp.Expr:
    """Decimal strings become exact rationals ('0.4' -> 2/5); other input is sympified."""
    if isinstance(expr, str):
        try:
            return sp.Rational(expr)
        except (TypeError, ValueError):
            return sp.sympify(expr)
    return sp.sympify(expr)


def _check_dps(dps):
    if not isinstance(dps, int) or isinstance(dps, bool) or dps < 1:
        raise ValueError(f"dps (decimal digits) must be an integer >= 1; got {dps!r}")


def value(expr, dps: int = 50, subs: dict | None = None) -> mpmath.mpf:
    """``expr`` (closed, after ``subs``) as an mpf correct to ``dps`` significant digits."""
    _check_dps(dps)
    e = sp.sympify(expr).subs(subs or {})
    if e.free_symbols:
        raise ValueError(f"expr has free symbols {sorted(map(str, e.free_symbols))}; pass them in subs")
    with mpmath.workdps(dps + 10):
        return mpmath.mpf(sp.N(e, dps + 10))


def enclose(expr, dps: int = 50, subs: dict | None = None):
    """A certified interval (mpmath ``iv`` mpi) containing the exact value of ``expr``.

    ``subs`` values that are exact (SymPy Rational/Integer) stay exact: they are
    substituted before evaluation and enter as intervals.
    """
    _check_dps(dps)
    e = _exact(expr).subs(subs or {})
    if e.free_symbols:
        raise ValueError(f"expr has free symbols {sorted(map(str, e.free_symbols))}; pass them in subs")
    e = e.xreplace({f: sp.Rational(str(f)) for f in e.atoms(sp.Float)})
    f = sp.lambdify((), e, modules=[_IV_FUNCS, "mpmath"])
    with iv_workdps(dps + 10):
        out = f()
        return iv.mpf(out)  # evaluates lazy constants (iv.pi) at this precision


def certified_decreasing_root(f_iv, level, lo, hi, dps: int = 50):
    """Enclose the unique root of f(x) = level on [lo, hi] for f strictly decreasing there.

    ``f_iv`` maps an interval to an enclosure of f over it. Bisection keeps a bracket
    [a, b] with f(a) > level and f(b) < level certified by interval evaluation; returns
    the final bracket as an interval of width below 10**-dps. Raises ValueError when the
    end points do not certify a sign change.
    """
    _check_dps(dps)
    with iv_workdps(dps + 15), mpmath.workdps(dps + 15):
        lev = iv.mpf(level)

        def sign(x):  # +1 / -1 when f(x) - level is certainly positive / negative, else 0
            lo_, hi_ = bounds(f_iv(iv.mpf(x)) - lev)
            return 1 if lo_ > 0 else (-1 if hi_ < 0 else 0)

        a_pt, b_pt = mpmath.mpf(lo), mpmath.mpf(hi)
        if sign(a_pt) != 1 or sign(b_pt) != -1:
            raise ValueError(f"no certified sign change of f - level on [{lo}, {hi}]")
        tol = mpmath.mpf(10) ** (-dps)
        while b_pt - a_pt > tol:
            mid = (a_pt + b_pt) / 2
            s = sign(mid)
            if s == 1:
                a_pt = mid
            elif s == -1:
                b_pt = mid
            else:
                raise ValueError(f"interval precision too low to separate the root at dps={dps}; raise dps")
        return iv.mpf([a_pt, b_pt])
