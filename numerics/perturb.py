"""Rounding-sized perturbations of a simulation's start, for checking that a verdict does not hang on one trajectory.

A verdict drawn from a simulation must not change when the start moves by a rounding error (a
different CPU, BLAS kernel or compiler moves every later iterate by about that much). The audit's
``--perturb REL`` option reruns each simulation from ``x (1 + REL g)`` with ``g`` standard normal,
keyed by the run's own description, so a perturbed run is reproducible and independent of the
order in which runs are made.

>>> x = np.array([1.0, -2.0, 0.0])
>>> y = perturb_relative(x, 1e-12, "example", 3)
>>> bool(np.all(np.abs(y - x) <= 1e-11 * np.abs(x))), bool(y[2] == 0.0)
(True, True)
>>> bool(np.array_equal(y, perturb_relative(x, 1e-12, "example", 3)))
True
>>> perturb_relative(x, 0.0, "example") is x
True
"""

from __future__ import annotations

import zlib

import numpy as np

MAX_PERTURB = 1e-6  # a "rounding-sized" change: anything larger is a different start, not a robustness check


def check_perturbation(rel: float) -> float:
    """``rel`` as a float in [0, 1e-6], else a ValueError naming the parameter."""
    if isinstance(rel, bool) or not isinstance(rel, (int, float, np.floating)) or not (0 <= rel <= MAX_PERTURB):
        raise ValueError(f"perturb must be a relative size in [0, {MAX_PERTURB:g}]; got {rel!r}")
    return float(rel)


def perturb_relative(x: np.ndarray, rel: float, *key: str | int) -> np.ndarray:
    """``x (1 + rel g)``, g standard normal from a generator keyed by ``key`` (strings and integers).

    Returns ``x`` itself when ``rel`` is 0 (no copy, no change). Zero entries stay zero, as
    under rounding.
    """
    rel = check_perturbation(rel)
    if rel == 0.0:
        return x
    arr = np.asarray(x, dtype=float)
    words = [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) & 0xFFFFFFFF for k in key]
    g = np.random.default_rng([0x5EED, *words]).standard_normal(arr.shape)
    return arr * (1.0 + rel * g)
