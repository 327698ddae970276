"""Fixtures shared by the library tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def dask_local():
    """One local Dask cluster for the session, started by the sweep engine itself.

    :class:`numerics.sweep.DaskExecutor` with 2 single-threaded worker processes, exactly as
    ``python -m numerics.sweep RUN --workers 2`` starts it (``NUMBA_NUM_THREADS=1`` on the
    workers), shared by the tests that need a real multi-process cluster: starting one costs
    seconds of process start-up and, on each worker, of importing (or compiling) the kernels.
    ``dask_local.start_log`` holds what the executor printed when it started (the dashboard
    address). A test that loses a worker leaves the nanny to restart it; use :func:`dask_ready`
    before relying on both workers.
    """
    from numerics.sweep import DaskExecutor

    log: list[str] = []
    ex = DaskExecutor(workers=2, log=log.append)
    ex.start()
    ex.start_log = log  # type: ignore[attr-defined]
    yield ex
    ex.close()


def dask_ready(ex, workers: int = 2):
    """``ex`` once its cluster has ``workers`` workers again (after a lost worker's restart); returns ``ex``."""
    ex.client.wait_for_workers(workers, timeout=300)
    return ex
