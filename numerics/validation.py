"""Parameter checks shared by the numerics: each returns the value in a plain type or raises a
ValueError that names the parameter, the allowed range and the value given.

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
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any


def integer(value: Any, name: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as a Python int if it is an integer (int, NumPy integer, anything with ``__index__``)
    in [minimum, maximum] (no upper end when ``maximum`` is None); else a ValueError naming ``name``."""
    want = f"an integer >= {minimum}" if maximum is None else f"an integer in [{minimum}, {maximum}]"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ValueError(f"{name} must be {want}; got {value!r}")
    try:
        out = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be {want}; got {value!r}") from None
    if out < minimum or (maximum is not None and out > maximum):
        raise ValueError(f"{name} must be {want}; got {value!r}")
    return out


def positive(value: Any, name: str) -> float:
    """``value`` as a float if it is a finite real number > 0; else a ValueError naming ``name``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"
    if not ok or not math.isfinite(float(value)) or value <= 0:
        raise ValueError(f"{name} must be a finite real number > 0; got {value!r}")
    return float(value)
