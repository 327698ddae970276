"""Running one registered experiment through the sweep layer from a test, as the sweep tests of every paper do."""

from __future__ import annotations

from types import ModuleType

import pytest

from numerics.sweep import resolve, run_sweep
from numerics.sweep.engine import SweepRun
from numerics.sweep.experiment import Experiment


def experiment(name: str) -> Experiment:
    """The one experiment of full name ``name`` (e.g. ``central_flow.scalar``)."""
    (exp,) = resolve([name])
    return exp


def run_quick(exp: str | Experiment, overrides: dict) -> SweepRun:
    """Every cell of ``exp`` (an experiment or its full name) at the quick profile's sizes changed by ``overrides``.

    No store and no progress line: the cells are computed in this run.
    """
    return run_sweep(experiment(exp) if isinstance(exp, str) else exp, "quick", overrides, progress=False)


def assert_sizes_refused(experiments: ModuleType, overrides: dict, message: str) -> None:
    """``experiments.sizes_with('quick', overrides)`` raises a ValueError matching ``message`` (a regex)."""
    with pytest.raises(ValueError, match=message):
        experiments.sizes_with("quick", overrides)
