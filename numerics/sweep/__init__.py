"""Distributed, resumable simulation sweeps with a result store (``python -m numerics.sweep``).

An experiment (:class:`~numerics.sweep.experiment.Experiment`) is a list of independent
cells, each a range of streams or initialisations of one setting; cells run serially or on
a Dask cluster (:mod:`numerics.sweep.engine`), and each finished cell is written at once,
atomically, to the result store (:mod:`numerics.sweep.store`) with its configuration, seed,
package version, git revision and code version. A rerun reuses the stored cells and
computes the rest; ``pytest verify`` reads the same store (``--sweep-store``).

Random numbers are keyed by stream and initialisation ids, so the joined result is
bit-identical however the cells are scheduled: serially, on any number of local workers
or on a remote cluster.
"""

from numerics.sweep.engine import (
    DaskExecutor,
    SerialExecutor,
    SweepFailed,
    SweepRun,
    make_executor,
    run_sweep,
    run_sweeps,
)
from numerics.sweep.experiment import Experiment
from numerics.sweep.registry import experiments, resolve
from numerics.sweep.store import ResultStore

__all__ = [
    "DaskExecutor",
    "Experiment",
    "ResultStore",
    "SerialExecutor",
    "SweepFailed",
    "SweepRun",
    "experiments",
    "make_executor",
    "resolve",
    "run_sweep",
    "run_sweeps",
]
