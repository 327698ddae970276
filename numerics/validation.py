"""Parameter checks shared by the numerics: each returns the value in a plain type (:func:`reals`: a
float array) or raises a ValueError that names the parameter, the allowed range and the value given.

Bad input must never reach numba or mpmath (their errors name neither the parameter nor the
range) and must never be silently coerced: a bool is not an integer here, and a float with an
integral value is not an integer either.

>>> integer(3, "L", 2)
3
>>> integer(True, "L", 2)
Traceback (most recent call last):
...
ValueError: L must be an integer >= 2; got True
>>> integer(7, "dps", 1, 5)
Traceback (most recent call last):
...
ValueError: dps must be an integer in [1, 5]; got 7
>>> positive(float("inf"), "eta")
Traceback (most recent call last):
...
ValueError: eta must be a finite real number > 0; got inf
>>> real(0.7, "threshold", 0.18, 0.59, lo_open=True, hi_open=True)
Traceback (most recent call last):
...
ValueError: threshold must be a finite real number in (0.18, 0.59); got 0.7
>>> range_text(1e-8, 1), range_text(0, None, lo_open=True), range_text(None, 5)
('in [1e-08, 1]', '> 0', '<= 5')
>>> choice("both", "alternative", ("two-sided", "greater"))
Traceback (most recent call last):
...
ValueError: alternative must be one of 'two-sided', 'greater'; got 'both'
>>> reals([0.5, 4.0], "t", None, 0, math.pi, hi_text="pi")
Traceback (most recent call last):
...
ValueError: t must hold finite real numbers in [0, pi]; got [0.5, 4.0]
>>> reals([1.0, 2.0], "w", shape=(3,))
Traceback (most recent call last):
...
ValueError: w must be an array of shape (3,); got shape (2,)
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from derivations.validation import integer


def positive(value: Any, name: str) -> float:
    """``value`` as a float if it is a finite real number > 0; else a ValueError naming ``name``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"
    if not ok or not math.isfinite(float(value)) or value <= 0:
        raise ValueError(f"{name} must be a finite real number > 0; got {value!r}")
    return float(value)


def _num_text(x: float) -> str:
    return f"{x:.10g}" if isinstance(x, float) else str(x)


def range_text(
    lo: float | None,
    hi: float | None,
    *,
    lo_open: bool = False,
    lo_text: str | None = None,
    hi_open: bool = False,
    hi_text: str | None = None,
) -> str:
    """The allowed range as words: ``in [lo, hi]`` (brackets open or closed), ``> lo``, ``<= hi``...

    ``lo_text``/``hi_text`` replace a printed end (``"pi"``, ``"10^100"``); None ends are unbounded.
    """
    a = lo_text if lo_text is not None else (None if lo is None else _num_text(lo))
    b = hi_text if hi_text is not None else (None if hi is None else _num_text(hi))
    if a is None and b is None:
        return "any value"
    if b is None:
        return f"{'>' if lo_open else '>='} {a}"
    if a is None:
        return f"{'<' if hi_open else '<='} {b}"
    return f"in {'(' if lo_open else '['}{a}, {b}{')' if hi_open else ']'}"


def in_range(
    x: float, lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False
) -> bool:
    """Whether ``x`` is finite and lies in the range of :func:`range_text` (None ends unbounded).

    >>> in_range(1.0, 0, 1), in_range(1.0, 0, 1, hi_open=True), in_range(float("inf"))
    (True, False, False)
    """
    if not math.isfinite(x):
        return False
    if lo is not None and (x < lo or (lo_open and x == lo)):
        return False
    return hi is None or not (x > hi or (hi_open and x == hi))


def real(
    value: Any,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    lo_text: str | None = None,
    hi_text: str | None = None,
) -> float:
    """``value`` as a float if it is a finite real number in the range (see :func:`range_text`);
    else a ValueError naming ``name`` and the range. Bools are refused."""
    want = "a finite real number"
    where = range_text(lo, hi, lo_open=lo_open, hi_open=hi_open, lo_text=lo_text, hi_text=hi_text)
    if where != "any value":
        want += " " + where
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"
    x = float(value) if ok else math.nan
    if not (ok and in_range(x, lo, hi, lo_open=lo_open, hi_open=hi_open)):
        raise ValueError(f"{name} must be {want}; got {value!r}")
    return x


def probability(value: Any, name: str) -> float:
    """``value`` as a float if it is a finite real number in [0, 1]; else a ValueError naming ``name``."""
    return real(value, name, 0.0, 1.0)


def level(value: Any, name: str = "alpha") -> float:
    """``value`` as a float if it is a finite real number in (0, 1) (a test's level, a target power)."""
    return real(value, name, 0.0, 1.0, lo_open=True, hi_open=True)


def successes(k: Any, n: Any, k_name: str = "k", n_name: str = "n") -> tuple[int, int]:
    """``(k, n)`` as ints if ``n >= 1`` and ``0 <= k <= n`` are integers (successes of trials); else a ValueError."""
    n_int = integer(n, n_name, 1)
    return integer(k, k_name, 0, n_int), n_int


def choice(value: Any, name: str, allowed: tuple[Any, ...]) -> Any:
    """``value`` if it equals one of ``allowed`` (and has its type: ``1`` is not ``True``); else a ValueError
    naming ``name`` and the allowed values."""
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise ValueError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}")
    return value


def reals(
    value: Any,
    name: str,
    shape: tuple[int, ...] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    *,
    what: str = "",
    hi_text: str | None = None,
) -> np.ndarray:
    """``value`` as a C-contiguous float array (0-d for a number) if it has ``shape`` (any shape when None;
    ``what`` names the entries after it) and its entries are finite real numbers in [lo, hi] (None ends unbounded,
    ``hi_text`` printed for hi); else a ValueError naming ``name`` and the shape or the range. Bools, strings and
    objects are refused."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # a ragged sequence
        raw = np.asarray(None)
    if shape is not None and raw.shape != shape:
        raise ValueError(f"{name} must be an array of shape {shape}{what}; got shape {raw.shape}")
    where = range_text(lo, hi, hi_text=hi_text)
    want = "finite real numbers" + ("" if where == "any value" else " " + where)
    arr = np.asarray(raw, dtype=float, order="C") if raw.dtype.kind in "iuf" else np.full(1, math.nan)
    ok = bool(np.all(np.isfinite(arr)))
    ok = ok and (lo is None or bool(np.all(arr >= lo))) and (hi is None or bool(np.all(arr <= hi)))
    if not ok:
        raise ValueError(f"{name} must hold {want}; got {value!r}")
    return arr
