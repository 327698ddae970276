"""Run an experiment's cells serially or on Dask, reusing and filling the result store.

:func:`run_sweeps` (:func:`run_sweep` for one experiment) looks every cell up in the store
(reused only if intact, of the same configuration and of the same code version), computes
the others of all the experiments together on an executor, writes
each finished cell at once (so an interrupted run loses only the cells in flight), and
returns a :class:`SweepRun` whose :meth:`SweepRun.result` joins the cells into the
experiment's result. A failing cell is recorded with its error; the other cells still
run and are stored.

Executors: :class:`SerialExecutor` (this process, numba's threads) and
:class:`DaskExecutor` (a ``dask.distributed`` ``LocalCluster`` with one single-threaded
worker process per core, started on first use, or an existing scheduler at an address).
Every cell is computed by :func:`execute_cell`, which reports the worker's code version;
a cell from a worker with other code is a failure, not a result.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import platform
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import numba
import numpy as np

from numerics.provenance import git_revision, package_version
from numerics.sweep.experiment import Experiment, code_version
from numerics.sweep.progress import Progress
from numerics.sweep.store import ResultStore

if TYPE_CHECKING:
    from distributed import Client, LocalCluster


class SweepFailed(RuntimeError):
    """Some cells of a sweep failed; the message names each cell and its error."""


@dataclass
class CellOutcome:
    """What happened to one cell: ``status`` 'reused', 'computed' or 'failed'.

    ``reason`` says why a cell was computed (missing, corrupt, config-mismatch,
    code-mismatch, or no store); ``error`` is a failed cell's error; ``elapsed_s`` its
    compute time on the worker (wall) and ``cpu_s`` the worker's CPU time for it (numba
    compilation included; 0 for cells stored before it was recorded).
    """

    params: dict
    status: str
    reason: str = ""
    error: str = ""
    elapsed_s: float = 0.0
    host: str = ""
    cpu_s: float = 0.0


@dataclass
class SweepRun:
    """The cells of one experiment after a run (values in cell order; None where a cell failed).

    ``wall_s``: seconds from the start of the run to the last of this experiment's cells.
    """

    experiment: Experiment
    sizes: object
    params: list[dict]
    values: list
    outcomes: list[CellOutcome]
    wall_s: float = 0.0

    def count(self, status: str) -> int:
        return sum(o.status == status for o in self.outcomes)

    @property
    def failures(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def result(self) -> Any:
        """The joined experiment result; raises :class:`SweepFailed` if any cell failed."""
        if self.failures:
            raise SweepFailed(failure_message(self))
        return self.experiment.assemble(self.sizes, self.params, self.values)


def failure_message(run: SweepRun) -> str:
    lines = [f"{run.experiment.name}: {len(run.failures)} of {len(run.params)} cells failed"]
    lines += [f"  cell {describe(o.params)}: {o.error}" for o in run.failures]
    return "\n".join(lines)


def describe(params: dict) -> str:
    """A short text of a cell's parameters (its setting label and ranges, else all parameters)."""
    kw = params.get("kwargs", params)
    parts = [params["setting"]] if "setting" in params else []
    for key in ("first_stream", "streams", "first_init", "n_inits", "etas"):
        if key in kw:
            parts.append(f"{key}={kw[key]}")
    return ", ".join(parts) or repr(params)


# --- execution ------------------------------------------------------------------------------------------


def execute_cell(
    compute: Callable[[dict], Any], params: dict, threads: int | None, modules: tuple[str, ...]
) -> tuple[Any, dict]:
    """Compute one cell on this process; returns ``(value, info)`` with the worker's code version."""
    t0, c0 = time.perf_counter(), time.process_time()
    old = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(min(int(threads), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    try:
        value = compute(params)
    finally:
        numba.set_num_threads(old)
    info = {
        "code_version": code_version(modules),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "elapsed_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,  # this process's CPU time (all its threads), numba compilation included
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "machine": platform.machine(),
    }
    return value, info


class SerialExecutor:
    """Cells one after the other in this process (numba uses all its threads). For debugging and small runs."""

    description = "serial (this process)"

    def start(self) -> None:
        """Nothing to start (executors start before the progress line is drawn)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, tasks: list[tuple]) -> Iterator[tuple[int, bool, object]]:
        for i, (compute, params, modules) in enumerate(tasks):
            try:
                yield i, True, execute_cell(compute, params, None, modules)
            except Exception as exc:  # a cell's failure is reported, the other cells go on
                yield i, False, _error_text(exc, traceback.format_exc())


def _error_text(exc: BaseException, tb: str = "") -> str:
    last = [ln.strip() for ln in tb.strip().splitlines() if ln.strip().startswith("File ")]
    where = f" ({last[-1]})" if last else ""
    return f"{type(exc).__name__}: {exc}{where}"


class DaskExecutor:
    """Cells on a Dask cluster: a new ``LocalCluster`` (``address=None``) or the scheduler at ``address``.

    The local cluster has ``workers`` single-threaded worker processes (default: one per
    core) with ``NUMBA_NUM_THREADS=1``; it starts on the first :meth:`run` and prints the
    dashboard address to ``log``. Each cell runs with one numba thread. ``timeout``: seconds
    to wait for a remote scheduler.

    ``warm`` (default on): before the first cells, the kernels those cells' code modules
    hold are compiled once, one family of kernels per worker at a time
    (:func:`numerics.warmup.warm_tasks`), and every worker then loads them from the on-disk
    cache; without it each worker compiles the same kernels for its first cells (on a cold
    cache, about 40 CPU-s per worker). It changes no result: it calls the kernels on tiny
    inputs and discards what they return.
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        log=None,
        timeout: float = 30.0,
        warm: bool = True,
    ):
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be an integer >= 1; got {workers!r}")
        self.address, self.workers, self.timeout = address, workers, timeout
        self.warm, self._warmed = warm, False
        self.warm_cpu_s: float | None = None  # the workers' CPU seconds for the warm-up, once it ran
        self.log = log if log is not None else (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.client: Client | None = None
        self.cluster: LocalCluster | None = None
        self._error: Exception | None = None  # a failed connection, not retried

    @property
    def description(self) -> str:
        return (
            f"dask scheduler {self.address}"
            if self.address
            else f"dask LocalCluster ({self.workers or os.cpu_count()} workers)"
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def start(self) -> None:
        """Connect (or start the local cluster) now, printing the dashboard address."""
        self._connect()

    def _connect(self):
        if self.client is not None:
            return self.client
        if self._error is not None:
            raise self._error
        from distributed import Client

        if self.address:
            try:
                self.client = Client(self.address, timeout=f"{self.timeout}s")
            except (OSError, ValueError, TypeError) as exc:
                self._error = ValueError(f"scheduler: cannot reach a Dask scheduler at {self.address!r} ({exc})")
                raise self._error from None
        else:
            self.cluster = self._local_cluster()
            self.client = self.cluster.get_client()
        self.log(f"dask: {self.description}; dashboard {self.client.dashboard_link}")
        return self.client

    def _local_cluster(self) -> LocalCluster:
        """A LocalCluster whose worker processes ignore SIGINT: Ctrl-C on a terminal reaches the whole
        process group, and only this process should handle it (and close the cluster)."""
        from distributed import LocalCluster

        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            return LocalCluster(
                n_workers=self.workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
                env={"NUMBA_NUM_THREADS": "1"},
            )
        finally:
            if main:
                signal.signal(signal.SIGINT, old)

    def run(self, tasks: list[tuple]) -> Iterator[tuple[int, bool, object]]:
        from distributed import as_completed

        client = self._connect()
        if self.warm and not self._warmed and tasks:
            self._warmed = True
            self._warm_up(client, {m for _, _, modules in tasks for m in modules})
        futures = {}
        for i, (compute, params, modules) in enumerate(tasks):
            fut = client.submit(execute_cell, compute, params, 1, modules, pure=False)
            futures[fut.key] = (i, fut)
        try:
            for fut in as_completed([f for _, f in futures.values()]):
                i = futures[fut.key][0]
                if fut.status == "error":
                    exc = fut.exception()
                    tb = "".join(traceback.format_tb(fut.traceback())) if fut.traceback() else ""
                    yield i, False, _error_text(exc, tb)
                else:
                    yield i, True, fut.result()
                fut.release()
        finally:
            for _, fut in futures.values():
                fut.cancel()

    def _warm_up(self, client, modules: set[str]) -> None:
        """Compile the kernels of ``modules`` once on the workers, before any cell; a failure is logged, not raised
        (a cell that needs a kernel that failed to compile reports that error itself)."""
        from distributed import wait

        from numerics.warmup import warm_tasks

        calls = warm_tasks(modules)
        if not calls:
            return
        futures = [client.submit(call, pure=False) for _, call in calls]
        wait(futures)
        failed = [(name, f) for (name, _), f in zip(calls, futures, strict=True) if f.status == "error"]
        self.warm_cpu_s = sum(f.result() for f in futures if f.status != "error")
        self.log(
            f"dask: kernels compiled (or loaded) once before the cells ({', '.join(name for name, _ in calls)}): "
            f"{self.warm_cpu_s:.1f} CPU-s on the workers"
            + "".join(f"; warm-up of {name} failed: {_error_text(f.exception())}" for name, f in failed)
        )
        for f in futures:
            f.release()

    def close(self) -> None:
        log = logging.getLogger("distributed")
        level = log.level  # this process's level comes back once our cluster is closed
        try:
            if self.client is not None:
                if self.cluster is not None:
                    _quiet_shutdown(self.client)
                self.client.close()
            if self.cluster is not None:
                self.cluster.close()
        finally:
            log.setLevel(level)
            self.client = self.cluster = None


def _quiet_distributed_logs() -> None:
    """Raise the ``distributed`` loggers of this process to CRITICAL (on every worker and nanny at shutdown)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def _quiet_shutdown(client) -> None:
    """Before our own LocalCluster closes: its workers' heartbeats race the scheduler's close and log a
    CommClosedError traceback at ERROR level, which is not an error of the run (cells report theirs through
    their futures). Quiet the ``distributed`` loggers of the workers, their nannies and this process (whose
    level :meth:`DaskExecutor.close` restores); a worker that cannot be reached any more is closed all the same."""
    _quiet_distributed_logs()
    for nanny in (False, True):
        try:
            client.run(_quiet_distributed_logs, nanny=nanny, on_error="ignore")
        except Exception:  # a worker already gone: nothing left to quiet there
            pass


def make_executor(
    scheduler: str | None, workers: int | None = None, log: Callable[[str], None] | None = None
) -> SerialExecutor | DaskExecutor:
    """``'serial'`` -> :class:`SerialExecutor`; ``'local'`` (or None) -> a LocalCluster; else a scheduler address."""
    if scheduler == "serial":
        if workers is not None:
            raise ValueError("workers: only with a Dask scheduler ('local' or an address), not 'serial'")
        return SerialExecutor()
    if scheduler in (None, "local"):
        return DaskExecutor(None, workers, log)
    port = scheduler.rsplit(":", 1)[-1] if ":" in scheduler.split("://", 1)[-1] else ""
    if not port.isdigit():
        raise ValueError(
            f"scheduler must be 'serial', 'local' or a Dask scheduler address such as "
            f"tcp://host:8786; got {scheduler!r}"
        )
    if workers is not None:
        raise ValueError("workers: the number of workers of an existing scheduler is set where it runs")
    return DaskExecutor(scheduler, None, log)


# --- the sweep ------------------------------------------------------------------------------------------


def _lookup(experiment: Experiment, profile: str, overrides: dict | None, store: ResultStore | None):
    """A :class:`SweepRun` with the stored cells filled in, and the indices of the cells to compute."""
    sizes = experiment.own_sizes(profile, overrides)
    params = experiment.cells(sizes)
    version = experiment.code_version
    values: list = [None] * len(params)
    outcomes: list = [None] * len(params)
    pending = []
    for i, p in enumerate(params):
        if store is None:
            outcomes[i] = CellOutcome(p, "computed", reason="no store")
            pending.append(i)
            continue
        found = store.load(experiment.name, p, code_version=version)
        if found.status == "ok":
            assert found.meta is not None  # an 'ok' lookup carries the file's meta
            worker = found.meta.get("worker", {})
            values[i] = found.value
            outcomes[i] = CellOutcome(
                p,
                "reused",
                elapsed_s=worker.get("elapsed_s", 0.0),
                host=worker.get("host", ""),
                cpu_s=worker.get("cpu_s", 0.0),
            )
        else:
            outcomes[i] = CellOutcome(
                p, "computed", reason=found.status + (f": {found.reason}" if found.reason else "")
            )
            pending.append(i)
    return SweepRun(experiment, sizes, params, values, outcomes), pending


def run_sweeps(
    experiments: list[Experiment],
    profile: str = "quick",
    overrides: dict | None = None,
    *,
    store: ResultStore | None = None,
    executor: SerialExecutor | DaskExecutor | None = None,
    progress: bool | None = None,
    progress_stream: TextIO | None = None,
) -> list[SweepRun]:
    """Run (or reuse from ``store``) every cell of ``experiments`` at the sizes of ``profile`` + ``overrides``.

    The missing cells of all the experiments go to the executor together (no barrier
    between experiments), each stored as soon as it is back. ``executor`` defaults to
    :class:`SerialExecutor`. ``progress`` None draws a progress line on a terminal outside
    CI; True/False force it. Returns one :class:`SweepRun` per experiment, in order.
    """
    runs, todo = [], []  # todo: (run, cell index)
    for exp in experiments:
        run, pending = _lookup(exp, profile, overrides, store)
        runs.append(run)
        todo += [(run, i) for i in pending]
    t0 = time.perf_counter()
    if todo:
        if store is not None:
            store.check_writable()
            store.remove_dead_temporaries()
        executor = executor or SerialExecutor()
        executor.start()  # a cluster prints its dashboard address before the progress line appears
        total = sum(len(r.params) for r in runs)
        label = runs[0].experiment.name if len(runs) == 1 else f"{len(runs)} experiments"
        bar = Progress(label, total, stream=progress_stream, enabled=progress)
        bar.start(reused=total - len(todo))
        provenance = {
            "package_version": package_version(),
            "git_revision": git_revision(),
            "client_host": socket.gethostname(),
        }
        tasks = [(run.experiment.compute, run.params[i], run.experiment.code_modules) for run, i in todo]
        try:
            for j, ok, payload in executor.run(tasks):
                run, i = todo[j]
                ok = _record(run, i, ok, payload, store, provenance)
                run.wall_s = time.perf_counter() - t0
                bar.advance(ok)
        finally:
            bar.close()
    return runs


def _record(run: SweepRun, i: int, ok: bool, payload, store: ResultStore | None, provenance: dict) -> bool:
    """Keep (and store) a finished cell, or record its failure; returns whether it succeeded."""
    exp, outcome = run.experiment, run.outcomes[i]
    if ok:
        value, info = payload
        if info["code_version"] != exp.code_version:
            ok, payload = (
                False,
                (
                    f"worker {info['host']} runs code version {info['code_version']}, this is "
                    f"{exp.code_version}: install the same revision on the workers"
                ),
            )
    if not ok:
        outcome.status, outcome.error = "failed", payload
        return False
    run.values[i] = value
    outcome.elapsed_s, outcome.host, outcome.cpu_s = info["elapsed_s"], info["host"], info.get("cpu_s", 0.0)
    if store is not None:
        params = run.params[i]
        meta = {
            "experiment": exp.name,
            "params": params,
            "seed": params.get("kwargs", params).get("seed"),
            "code_version": exp.code_version,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "worker": info,
            **provenance,
        }
        store.save(exp.name, params, value, meta)
    return True


def run_sweep(
    experiment: Experiment, profile: str = "quick", overrides: dict | None = None, **options: Any
) -> SweepRun:
    """:func:`run_sweeps` of one experiment (same options); returns its :class:`SweepRun`."""
    return run_sweeps([experiment], profile, overrides, **options)[0]
