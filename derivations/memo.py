"""Memoised derivations: a derivation is computed once per process, callers get their own containers.

The derivations are pure functions of hashable arguments (integers, strings, SymPy expressions) and
several checks repeat the same one. :func:`memo` caches the result like :func:`functools.cache` and
hands each caller fresh copies of the containers in it (dicts, lists, sets, mutable SymPy matrices),
so a caller that edits what it received cannot change what the next caller gets; the SymPy
expressions inside are immutable and shared.

>>> calls = []
>>> @memo
... def table(n):
...     calls.append(n)
...     return {"rows": [sp.Integer(k) for k in range(n)], "M": sp.eye(2)}
>>> a = table(2); a["rows"].append(sp.Integer(9)); a["M"][0, 0] = 5
>>> table(2), calls
({'rows': [0, 1], 'M': Matrix([
[1, 0],
[0, 1]])}, [2])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, TypeVar

import sympy as sp

F = TypeVar("F", bound=Callable[..., Any])


def fresh(value: Any) -> Any:
    """``value`` with its containers copied (recursively); SymPy expressions and other immutables shared."""
    if isinstance(value, sp.Basic):  # expressions, immutable matrices
        return value
    if isinstance(value, sp.MatrixBase):  # a mutable matrix
        return value.copy()
    if isinstance(value, MappingProxyType):
        return MappingProxyType({k: fresh(v) for k, v in value.items()})
    if type(value) is dict:
        return {k: fresh(v) for k, v in value.items()}
    if type(value) is list:
        return [fresh(v) for v in value]
    if isinstance(value, tuple):
        items = [fresh(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if type(value) is set:
        return set(value)
    return value


def memo(fn: F) -> F:
    """:func:`functools.cache` for a derivation; each call returns :func:`fresh` copies of the cached result."""
    cached = functools.cache(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fresh(cached(*args, **kwargs))

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
