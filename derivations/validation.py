"""The integer parameter check shared by the derivations and the numerics.

It lives here because ``derivations/`` imports nothing from ``numerics/``, while
:mod:`numerics.validation` re-exports it beside its real-valued checks. Bad input gives a
ValueError that names the parameter, the allowed range and the value given; a bool is not an
integer, and neither is a float with an integral value.

>>> integer(3, "depth", 2)
3
>>> integer(2.0, "depth", 2)
Traceback (most recent call last):
...
ValueError: depth must be an integer >= 2; got 2.0
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["integer"]


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
