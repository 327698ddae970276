"""The audit's access to long experiments: results through the sweep layer and its result store.

A :class:`SweepSession` (the session fixture ``sweeps``) runs an experiment's missing cells
on the configured executor, reuses what ``python -m numerics.sweep RUN`` (or an earlier
audit) stored, and keeps one record per experiment for the report. The executor starts on
first need, so an audit whose cells are all stored starts no cluster.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path


class SweepSession:
    """Experiment results for one pytest session (profile, size overrides, store, scheduler)."""

    def __init__(
        self,
        profile: str,
        overrides: dict,
        store: Path | None,
        scheduler: str,
        workers: int | None,
        uncaptured=nullcontext,
    ):
        self.profile, self.overrides, self.scheduler, self.workers = profile, overrides, scheduler, workers
        self.uncaptured = uncaptured  # context in which stderr is the terminal (progress, dashboard address)
        self.store_path = store
        self._executor = None
        self._used = None  # description of the executor once one ran cells
        self._runs: dict[str, object] = {}
        self._results: dict[str, object] = {}
        self.records: list[dict] = []

    def _store(self):
        from numerics.sweep import ResultStore

        return ResultStore(self.store_path) if self.store_path is not None else None

    def _executor_for_run(self):
        from numerics.sweep import make_executor

        if self._executor is None:
            self._executor = make_executor(self.scheduler, self.workers)
            self._used = self._executor.description
        return self._executor

    def has_cells(self, name: str) -> bool:
        """Whether experiment ``name`` has any cell at this session's sizes (the quick profile skips some)."""
        from numerics.sweep import resolve

        (exp,) = resolve([name])
        return bool(exp.cells(exp.own_sizes(self.profile, self.overrides)))

    def sizes(self, paper: str):
        """The sizes of ``paper`` at this session's profile and overrides (for checks that run GD themselves)."""
        from numerics.sweep import resolve

        return resolve([paper])[0].own_sizes(self.profile, self.overrides)

    def prefetch(self, names) -> None:
        """Run the cells of the experiments ``names`` not run yet, all together (no barrier between them)."""
        from numerics.sweep import resolve, run_sweeps

        todo = [e for e in resolve(sorted(set(names))) if e.name not in self._runs and self.has_cells(e.name)]
        if not todo:
            return
        with self.uncaptured():
            runs = run_sweeps(todo, self.profile, self.overrides, store=self._store(), executor=_Lazy(self))
        for exp, run in zip(todo, runs):
            self._runs[exp.name] = run
            self.records.append(
                {
                    "name": exp.name,
                    "cells": len(run.params),
                    "reused": run.count("reused"),
                    "computed": run.count("computed"),
                    "failed": run.count("failed"),
                    "wall_s": round(run.wall_s, 1),
                    "cpu_s": round(sum(o.cpu_s for o in run.outcomes if o.status == "computed"), 1),
                }
            )

    def result(self, name: str):
        """The joined result of experiment ``name`` (e.g. 'rare_gates.table2'); raises SweepFailed on failed cells."""
        if name not in self._results:
            self.prefetch([name])
            self._results[name] = self._runs[name].result()
        return self._results[name]

    def describe(self) -> dict:
        return {
            "store": str(self.store_path) if self.store_path else None,
            "scheduler": self._used or f"{self.scheduler} (not needed: every cell was stored)",
            "experiments": self.records,
        }

    def close(self) -> None:
        if self._executor is not None:
            self._executor.__exit__(None, None, None)
            self._executor = None


class Results:
    """The results a check declared with ``@uses(...)``: ``results["rare_gates.table2"]``.

    Reading an experiment the check did not declare is an error (the declarations are what
    the plugin submits together, so they must be complete); an experiment with no cells at
    this run's sizes skips the check, naming the experiment.
    """

    def __init__(self, session: SweepSession, declared: tuple[str, ...], nodeid: str):
        self.session, self.declared, self.nodeid = session, declared, nodeid

    def __getitem__(self, name: str):
        import pytest

        if name not in self.declared:
            raise KeyError(f"{self.nodeid} reads experiment {name!r} without declaring it: add it to @uses(...)")
        if not self.session.has_cells(name):
            from numerics.sweep import resolve

            pytest.skip(f"{name} has no cells at these sizes: {resolve([name])[0].summary}")
        return self.session.result(name)


class _Lazy:
    """An executor that creates the session's executor only when a cell must be computed."""

    def __init__(self, session: SweepSession):
        self.session = session

    def start(self) -> None:
        self.session._executor_for_run().start()

    def run(self, tasks):
        return self.session._executor_for_run().run(tasks)
