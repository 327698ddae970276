"""Lossless encoding of an experiment's plain data (dicts, lists, arrays, numbers) for the result store.

A value is split into a JSON *skeleton* and a dict of NumPy arrays: containers and Python
scalars stay in the skeleton (a float as the hex of its 8 bytes), every array (and NumPy
scalar, as a 0-d array, so its dtype survives) becomes a named entry. A dataclass of the
project's own numerics (a run record such as ``numerics.multipath.gd.SVSRun``) is stored as
its class name and fields; :func:`decode` imports that class again (from ``numerics.`` only).
:func:`decode` rebuilds an equal value, bit for bit.

>>> import numpy as np
>>> value = {"b": 16, "gamma": 0.16, "rec": np.array([1.5, np.nan]), "cells": [(1, "x"), None]}
>>> skeleton, arrays = encode(value)
>>> back = decode(skeleton, arrays)
>>> back["b"], back["gamma"], back["cells"], np.array_equal(back["rec"], value["rec"], equal_nan=True)
(16, 0.16, [(1, 'x'), None], True)
>>> encode({"f": len})
Traceback (most recent call last):
...
TypeError: cannot store a value of type builtin_function_or_method at /f
"""

from __future__ import annotations

import dataclasses
import importlib
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np


def encode(value: object) -> tuple[object, dict[str, np.ndarray]]:
    """``(skeleton, arrays)`` of ``value``; raises ``TypeError`` naming the path of an unsupported value."""
    arrays: dict[str, np.ndarray] = {}

    def walk(v, path: str):
        if isinstance(v, (np.ndarray, np.generic)):  # first: np.float64 is also a Python float
            a = np.asarray(v)
            if a.dtype.hasobject:
                raise TypeError(f"cannot store an object array at {path or '/'}")
            name = f"a{len(arrays)}"
            arrays[name] = a
            return {"array": name, "scalar": isinstance(v, np.generic)}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return {"int": str(v)}  # any size, exact
        if isinstance(v, float):  # the 8 bytes, so NaN payloads and -0.0 survive
            return {"float": struct.pack(">d", v).hex()}
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise TypeError(f"cannot store a dict with non-string keys at {path or '/'}")
            return {"dict": [[k, walk(x, f"{path}/{k}")] for k, x in v.items()]}
        if isinstance(v, (list, tuple)):
            items = [walk(x, f"{path}[{i}]") for i, x in enumerate(v)]
            return {"tuple": items} if isinstance(v, tuple) else {"list": items}
        if dataclasses.is_dataclass(v) and not isinstance(v, type) and type(v).__module__.startswith("numerics."):
            cls = type(v)
            body = [[f.name, walk(getattr(v, f.name), f"{path}.{f.name}")] for f in dataclasses.fields(v)]
            return {"dataclass": f"{cls.__module__}:{cls.__qualname__}", "fields": body}
        raise TypeError(f"cannot store a value of type {type(v).__name__} at {path or '/'}")

    return walk(value, ""), arrays


def decode(skeleton: Any, arrays: Mapping[str, np.ndarray]) -> object:
    """The value encoded as ``(skeleton, arrays)`` (the inverse of :func:`encode`)."""
    if skeleton is None or isinstance(skeleton, (bool, str)):
        return skeleton
    ((kind, body),) = ((k, v) for k, v in skeleton.items() if k not in ("scalar", "fields"))
    if kind == "int":
        return int(body)
    if kind == "float":
        return struct.unpack(">d", bytes.fromhex(body))[0]
    if kind == "array":
        a = np.asarray(arrays[body])
        return a[()] if skeleton.get("scalar") else a
    if kind == "dict":
        return {k: decode(x, arrays) for k, x in body}
    if kind == "list":
        return [decode(x, arrays) for x in body]
    if kind == "tuple":
        return tuple(decode(x, arrays) for x in body)
    if kind == "dataclass":
        return _dataclass(body)(**{k: decode(x, arrays) for k, x in skeleton["fields"]})
    raise ValueError(f"unknown skeleton node {kind!r}")


def _dataclass(name: str) -> type:
    """The dataclass ``module:qualname`` of the project's numerics (a stored skeleton names nothing else)."""
    module, _, qualname = name.partition(":")
    if not module.startswith("numerics.") or "." in qualname:
        raise ValueError(f"stored dataclass {name!r} is not a numerics record")
    cls = getattr(importlib.import_module(module), qualname, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise ValueError(f"stored dataclass {name!r} does not exist in this code version")
    return cls


def equal(a: Any, b: Any) -> bool:
    """Bit-level equality of two plain-data values (NaN equal to NaN; dtypes and shapes must match).

    >>> equal({"x": np.array([np.nan, 1.0])}, {"x": np.array([np.nan, 1.0])})
    True
    >>> equal([0.0], [-0.0]), equal(np.array([1], dtype=np.int32), np.array([1]))
    (False, False)
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(equal(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b
