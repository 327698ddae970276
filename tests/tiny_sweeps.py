"""Test-only sweep experiments ``tiny.draws`` and ``tiny.uniform``: cheap cells for the sweep CLI's tests.

The tests of ``python -m numerics.sweep`` (a killed run resumes, Ctrl-C on a local cluster,
the dashboard, the audit reading stored cells) check the sweep layer, not a paper's numbers;
with the papers' experiments each subprocess and each Dask worker imported and compiled the
numba kernels, which took most of the library tests' time. These experiments have the
same structure as the papers' (cells of consecutive stream ranges, random numbers keyed by stream
id, a join that must equal the one-call function bit for bit) and cost no compilation.

:func:`register` adds them to the registry of this process (:data:`numerics.sweep.registry.PROVIDERS`);
:data:`LAUNCH` is a ``python -c`` program that does the same and then runs the sweep CLI, so a
subprocess (and the Dask workers it starts, which import :func:`compute` by name) sees them when
``PYTHONPATH`` holds the repository root (:func:`subprocess_env`).

``TINY_SWEEP_DELAY_S`` (environment) makes each cell sleep that long before returning, so a
test can interrupt a run part-way; ``FIRST,REST`` gives the first cell (``first_stream`` 0) its
own delay, so that it lands at once while the rest cannot finish before the interrupt however
loaded the machine. The value does not change the cells' numbers or keys.

>>> direct(5, seed=3)["draws"].shape
(5, 4)
>>> [p["kwargs"]["first_stream"] for p in EXPERIMENTS["tiny.draws"].cells(sizes("quick", {"tiny_streams": "7"}))]
[0, 3, 6]
>>> len(EXPERIMENTS["tiny.draws"].cells(sizes("quick", {})))
3
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from numerics.sweep.experiment import Experiment, chunks, concat_records, profile_sizes, replace_sizes

ROOT = Path(__file__).resolve().parents[1]
CODE_MODULES = ("tests.tiny_sweeps",)
DRAWS = 4  # numbers per stream


@dataclass(frozen=True)
class Sizes:
    tiny_streams: int = 9  # 3 cells of 3 streams
    tiny_per_cell: int = 3


def sizes(profile: str, overrides: dict) -> Sizes:
    """The sizes of ``profile`` ('quick' or 'full') changed by ``overrides`` (as ``--set`` gives them)."""
    return replace_sizes(profile_sizes({"quick": Sizes(), "full": Sizes(tiny_streams=18)}, profile), overrides)


def direct(streams: int, seed: int = 1, first_stream: int = 0, kind: str = "normal") -> dict:
    """The one-call experiment: ``DRAWS`` normal (or uniform) numbers per stream, keyed by (seed, stream id)."""
    if isinstance(streams, bool) or not isinstance(streams, int) or streams < 0:
        raise ValueError(f"streams must be an integer >= 0; got {streams!r}")
    if kind not in ("normal", "uniform"):
        raise ValueError(f"kind must be 'normal' or 'uniform'; got {kind!r}")
    rngs = [np.random.default_rng([seed, first_stream + i]) for i in range(streams)]
    rows = [r.standard_normal(DRAWS) if kind == "normal" else r.random(DRAWS) for r in rngs]
    return {"seed": seed, "draws": np.array(rows).reshape(streams, DRAWS)}


def compute(params: dict) -> Any:
    """One cell (imported by name on the workers); sleeps ``TINY_SWEEP_DELAY_S`` first when it is set."""
    spec = (os.environ.get("TINY_SWEEP_DELAY_S", "0") or "0").split(",")
    delay = float(spec[0] if params["kwargs"].get("first_stream", 0) == 0 else spec[-1])
    if delay > 0:
        time.sleep(delay)
    return direct(**params["kwargs"])


def _cells(kind: str):
    def cells(z: Sizes) -> list[dict]:
        extra = {} if kind == "normal" else {"kind": kind}
        return [
            {"call": "direct", "kwargs": {"streams": n, "seed": 1, "first_stream": first, **extra}, "setting": "tiny"}
            for first, n in chunks(z.tiny_streams, z.tiny_per_cell)
        ]

    return cells


def _assemble(z: Sizes, params: list[dict], values: list) -> dict:
    return concat_records(values, ("draws",))


EXPERIMENTS = {
    f"tiny.{name}": Experiment(
        name=f"tiny.{name}",
        summary=f"test-only: {kind} draws keyed by stream id",
        sizes=sizes,
        cells=_cells(kind),
        compute=compute,
        assemble=_assemble,
        code_modules=CODE_MODULES,
    )
    for name, kind in (("draws", "normal"), ("uniform", "uniform"))
}


def register() -> None:
    """Make the ``tiny`` experiments known to the sweep registry of this process (idempotent)."""
    from numerics.sweep import registry

    if __name__ not in registry.PROVIDERS:
        registry.PROVIDERS = (*registry.PROVIDERS, __name__)


def subprocess_env(**extra: str) -> dict:
    """This process's environment with the repository root on ``PYTHONPATH`` (so ``tests.tiny_sweeps`` imports)."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


LAUNCH = (
    "import sys; from tests import tiny_sweeps; tiny_sweeps.register(); "
    "from numerics.sweep.cli import main; sys.exit(main(sys.argv[1:]))"
)
