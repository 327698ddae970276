"""Library tests of the sweep engine (:mod:`numerics.sweep.engine`): reuse, recomputation, failures, Dask.

The experiments here are small cells of the real rare-gates functions (``sweeps.compute``)
joined by the real assemble rules, so splitting, storing and scheduling are tested on the
numbers the audit uses. The tests on a local Dask cluster share one (the session fixture
``dask_local``, started by :class:`~numerics.sweep.DaskExecutor` itself): each start costs
seconds, and each new worker process imports the kernels again.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from numerics.rare_gates import experiments as E
from numerics.rare_gates import sweeps as RS
from numerics.sweep import DaskExecutor, Experiment, ResultStore, SerialExecutor, SweepFailed, make_executor, run_sweep
from numerics.sweep.codec import equal
from numerics.sweep.progress import Progress, terminal_wanted
from tests.conftest import dask_ready

SETTING = {"settings": [[8, 1e-2]], "horizon": 15.0, "seed": 4}


def _cells(bad: bool = False):
    """Three cells of one Table 2-like setting: streams 0-1, 2-4, 5; with ``bad``, the middle one has b = 0."""
    out = []
    for first, count in ((0, 2), (2, 3), (5, 1)):
        kw = dict(SETTING)
        if bad and first == 2:
            kw["settings"] = [[0, 1e-2]]
        out.append({"call": "long_horizons", "kwargs": dict(kw, streams=count, first_stream=first), "setting": "s"})
    return out


def _single_streams(n: int) -> list[dict]:
    """``n`` cells of the same setting, one stream each (streams 0 .. n-1)."""
    return [
        {"call": "long_horizons", "kwargs": dict(SETTING, streams=1, first_stream=i), "setting": "s"} for i in range(n)
    ]


def _experiment(
    name="test.tiny",
    bad=False,
    modules=RS.CODE_MODULES,
    *,
    cells=None,
    compute=RS.compute,
) -> Experiment:
    """A test experiment over ``cells`` (default: the three of :func:`_cells`) assembled by setting."""
    return Experiment(
        name=name,
        summary="three cells" if cells is None else "",
        sizes=lambda profile, overrides: None,
        cells=lambda _z: _cells(bad) if cells is None else cells,
        compute=compute,
        assemble=RS._by_setting,
        code_modules=modules,
    )


@pytest.fixture(scope="module")
def direct():
    return E.long_horizons(6, settings=((8, 1e-2),), horizon=15.0, seed=4)


def test_serial_run_equals_the_one_call_experiment(direct):
    run = run_sweep(_experiment(), progress=False)
    assert run.count("computed") == 3 and equal(run.result(), direct)


def test_rerun_reuses_stored_cells_and_computes_only_missing_ones(tmp_path, direct):
    store = ResultStore(tmp_path)
    first = run_sweep(_experiment(), store=store, progress=False)
    assert first.count("computed") == 3 and all(o.reason == "missing" for o in first.outcomes)
    again = run_sweep(_experiment(), store=store, progress=False)
    assert again.count("reused") == 3 and again.count("computed") == 0 and equal(again.result(), direct)
    store.path("test.tiny", _cells()[1]).unlink()
    third = run_sweep(_experiment(), store=store, progress=False)
    assert [o.status for o in third.outcomes] == ["reused", "computed", "reused"]
    assert equal(third.result(), direct)


def test_cells_of_another_code_version_are_recomputed(tmp_path, direct):
    store = ResultStore(tmp_path)
    run_sweep(_experiment(), store=store, progress=False)
    other = _experiment(modules=RS.CODE_MODULES + ("numerics.central_flow.models",))  # outside rare gates' closure
    assert other.code_version != _experiment().code_version
    run = run_sweep(other, store=store, progress=False)
    assert run.count("computed") == 3 and all(o.reason.startswith("code-mismatch") for o in run.outcomes)
    assert equal(run.result(), direct)
    assert run_sweep(other, store=store, progress=False).count("reused") == 3  # now stored under the new version


def test_truncated_cell_is_recomputed_not_read(tmp_path, direct):
    store = ResultStore(tmp_path)
    run_sweep(_experiment(), store=store, progress=False)
    path = store.path("test.tiny", _cells()[2])
    path.write_bytes(path.read_bytes()[:-10])
    run = run_sweep(_experiment(), store=store, progress=False)
    assert run.outcomes[2].status == "computed" and run.outcomes[2].reason.startswith("corrupt: truncated payload")
    assert equal(run.result(), direct)


def test_a_failing_cell_is_reported_and_the_others_are_stored(tmp_path):
    store = ResultStore(tmp_path)
    run = run_sweep(_experiment(bad=True), store=store, progress=False)
    assert [o.status for o in run.outcomes] == ["computed", "failed", "computed"]
    assert "ValueError: b (batch size) must be an integer >= 1; got 0" in run.failures[0].error
    assert len(store.files("test.tiny")) == 2
    with pytest.raises(SweepFailed, match=r"1 of 3 cells failed\n  cell s, first_stream=2, streams=3: ValueError"):
        run.result()


def test_provenance_is_stored_with_each_cell(tmp_path):
    from numerics.sweep.store import read_cell

    store = ResultStore(tmp_path)
    run_sweep(_experiment(), store=store, progress=False)
    _, meta = read_cell(store.path("test.tiny", _cells()[0]))
    assert meta["seed"] == 4 and meta["params"] == _cells()[0] and meta["experiment"] == "test.tiny"
    assert meta["code_version"] == _experiment().code_version and meta["package_version"]
    assert "git_revision" in meta and meta["worker"]["elapsed_s"] > 0 and meta["created"].endswith("+00:00")


def test_code_version_follows_the_project_modules_the_code_modules_import():
    from numerics.sweep.experiment import code_closure

    closure = code_closure(RS.CODE_MODULES)
    # simulate imports wilson_interval from initialization (a number in every cell), which is not listed
    init = "numerics.rare_gates.initialization"
    assert init not in RS.CODE_MODULES and init in closure
    assert set(RS.CODE_MODULES) <= set(closure) and "numerics.central_flow.models" not in closure
    # relative imports resolve: matrix imports .laws
    assert "derivations.central_flow.laws" in code_closure(("derivations.central_flow.matrix",))
    assert _experiment(modules=tuple(closure)).code_version == _experiment().code_version


def test_code_version_tracks_sources_and_rejects_unknown_modules():
    assert len(_experiment().code_version) == 16
    with pytest.raises(ValueError, match="code_modules: cannot find module 'numerics.nothing_here'"):
        _experiment(modules=("numerics.nothing_here",))


def test_local_cluster_with_two_workers_is_bit_identical_to_serial(tmp_path, direct, dask_local):
    ex = dask_ready(dask_local)
    run = run_sweep(_experiment(), store=ResultStore(tmp_path), executor=ex, progress=False)
    workers = len(ex.client.scheduler_info()["workers"])
    failing = run_sweep(_experiment(name="test.bad", bad=True), executor=ex, progress=False)
    assert workers == 2 and run.count("computed") == 3
    assert equal(run.result(), direct)
    assert equal(run.result(), run_sweep(_experiment(), executor=SerialExecutor(), progress=False).result())
    assert ex.description == "dask LocalCluster (2 workers)"
    assert any("dashboard http" in line for line in ex.start_log)
    assert [o.status for o in failing.outcomes] == ["computed", "failed", "computed"]
    assert "b (batch size) must be an integer >= 1" in failing.failures[0].error


def test_cells_are_spread_over_the_local_workers(tmp_path, dask_local):
    from numerics.sweep.store import read_cell

    exp = _experiment("test.spread", cells=_single_streams(8))
    store = ResultStore(tmp_path)
    run_sweep(exp, store=store, executor=dask_ready(dask_local), progress=False)
    pids = {read_cell(p)[1]["worker"]["pid"] for p in store.files("test.spread")}
    assert len(pids) == 2 and os.getpid() not in pids


def test_source_edited_after_definition_does_not_relabel_cells(tmp_path, monkeypatch):
    """Cells computed by the code in memory keep that code's version even if the file changes meanwhile."""
    from numerics.sweep.experiment import code_version

    src = tmp_path / "edited_mod.py"
    src.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    defined = _experiment(name="test.edit", modules=RS.CODE_MODULES + ("edited_mod",))
    src.write_text("X = 2\n")  # a pull during the run
    store = ResultStore(tmp_path / "store")
    run_sweep(defined, store=store, progress=False)
    code_version.cache_clear()  # a later process, with the edited file
    later = _experiment(name="test.edit", modules=RS.CODE_MODULES + ("edited_mod",))
    assert later.code_version != defined.code_version
    rerun = run_sweep(later, store=store, progress=False)
    assert rerun.count("computed") == 3 and all(o.reason.startswith("code-mismatch") for o in rerun.outcomes)


def test_worker_with_other_code_is_a_failure(monkeypatch):
    import numerics.sweep.engine as engine

    real = engine.execute_cell

    def other_code(*args):
        value, info = real(*args)
        return value, dict(info, code_version="0" * 16)

    monkeypatch.setattr(engine, "execute_cell", other_code)
    run = run_sweep(_experiment(), progress=False)
    assert run.count("failed") == 3 and "runs code version 0000000000000000" in run.failures[0].error


@pytest.mark.parametrize(
    "scheduler, workers, message",
    [
        ("serial", 2, "workers: only with a Dask scheduler"),
        ("somewhere", None, "scheduler must be 'serial', 'local' or a Dask scheduler address"),
        ("tcp://127.0.0.1:1", 3, "workers: the number of workers of an existing scheduler"),
        ("local", 0, "workers must be an integer >= 1; got 0"),
    ],
)
def test_executor_options_are_validated(scheduler, workers, message):
    with pytest.raises(ValueError, match=message):
        make_executor(scheduler, workers)


def test_unreachable_scheduler_is_a_clear_error_and_not_retried():
    with DaskExecutor("tcp://127.0.0.1:9", timeout=1) as ex:
        with pytest.raises(ValueError, match="cannot reach a Dask scheduler"):
            list(ex.run([]))
        t0 = time.monotonic()
        with pytest.raises(ValueError, match="cannot reach a Dask scheduler"):
            list(ex.run([]))
        assert time.monotonic() - t0 < 0.5  # the failed connection is remembered


def test_progress_is_quiet_off_a_terminal_and_in_ci(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    assert terminal_wanted(Tty()) and not terminal_wanted(open(os.devnull, "w"))
    monkeypatch.setenv("CI", "true")
    assert not terminal_wanted(Tty())
    p = Progress("x", 2, stream=Tty(), enabled=None)
    assert not p.enabled


def test_progress_counts_and_eta():
    import io

    buf = io.StringIO()
    p = Progress("demo", total=3, stream=buf, enabled=True, clock=iter([0.0, 4.0, 6.0]).__next__)
    p.start(reused=0)
    p.advance(ok=True)
    p.advance(ok=False)
    p.close()
    assert p.line() == "demo: 2/3 cells (0 reused, 1 failed) elapsed 0:00:06 ETA 0:00:03"
    assert buf.getvalue().endswith("\n") and "\r" in buf.getvalue()


def test_cells_are_independent_of_the_chunking(direct):
    """The same streams in other ranges give the same numbers (the premise of every sweep)."""
    exp = _experiment("test.ones", cells=_single_streams(6))
    assert equal(run_sweep(exp, progress=False).result(), direct)
    assert np.isfinite(direct[0]["recovery"]).any() and np.isfinite(direct[0]["first"]).any()  # events, not only NaNs


def test_existing_scheduler_by_address_gives_the_same_numbers(tmp_path, direct, dask_local):
    address = dask_ready(dask_local).cluster.scheduler_address  # a running cluster, reached by its address
    with make_executor(address) as ex:
        ex.log = lambda msg: None
        run = run_sweep(_experiment(), store=ResultStore(tmp_path), executor=ex, progress=False)
        assert ex.description == f"dask scheduler {address}" and ex.cluster is None  # connected, not started
    assert run.count("computed") == 3 and equal(run.result(), direct)
    assert dask_local.client.status == "running"  # closing the executor left the cluster alone


def compute_or_die(params):
    """A cell computation whose worker process dies on the cell marked 'die' (a lost machine).

    It dies 1 s into the cell, so that a cell the same worker finished just before has been
    reported to the scheduler (a worker reports in batches a few milliseconds apart)."""
    if params.get("die"):
        time.sleep(1.0)
        os._exit(1)
    return RS.compute(params)


def test_a_lost_worker_fails_only_its_cell(tmp_path, dask_local, monkeypatch):
    cells = _cells()
    # the last cell dies: a worker runs its cells in submission order, so the cell that shares
    # the dying worker (3 cells, 2 workers) has finished first; a cell queued behind the fatal
    # one would be lost with the worker
    cells[2] = dict(cells[2], die=True)
    exp = _experiment("test.lost", cells=cells, compute=compute_or_die)
    ex = dask_ready(dask_local)
    # distributed.scheduler.allowed-failures = 0 for this test: the first lost worker fails the cell
    monkeypatch.setattr(ex.cluster.scheduler, "allowed_failures", 0)
    run = run_sweep(exp, store=ResultStore(tmp_path), executor=ex, progress=False)
    assert [o.status for o in run.outcomes] == ["computed", "computed", "failed"]
    assert "KilledWorker" in run.failures[0].error
    assert len(ResultStore(tmp_path).files("test.lost")) == 2


# --- size overrides are routed to the experiments of the paper that defines them ------------------------


def test_overrides_reach_only_the_experiments_that_define_them():
    from dataclasses import dataclass, replace

    from numerics.sweep.experiment import Experiment, check_overrides

    @dataclass(frozen=True)
    class SizesA:
        streams_a: int = 4
        perturb: float = 0.0

    @dataclass(frozen=True)
    class SizesB:
        steps_b: int = 10
        perturb: float = 0.0

    def sizes_of(cls):
        def sizes(_profile, overrides):
            unknown = set(overrides) - {f for f in cls.__dataclass_fields__}
            if unknown:
                raise ValueError(f"unknown size {sorted(unknown)[0]!r}")
            return replace(cls(), **{k: type(getattr(cls(), k))(v) for k, v in overrides.items()})

        return sizes

    def exp(name, cls):
        return Experiment(
            name=name,
            summary="",
            sizes=sizes_of(cls),
            cells=lambda z: [],
            compute=lambda p: None,
            assemble=lambda z, p, v: None,
        )

    a, b = exp("pa.x", SizesA), exp("pb.y", SizesB)
    overrides = {"streams_a": "8", "steps_b": "20", "perturb": "1e-12"}
    check_overrides([a, b], "quick", overrides)
    assert a.own_sizes("quick", overrides) == SizesA(streams_a=8, perturb=1e-12)
    assert b.own_sizes("quick", overrides) == SizesB(steps_b=20, perturb=1e-12)
    assert a.size_names() == ("streams_a", "perturb")
    with pytest.raises(ValueError, match="unknown size 'streams'; sizes are: streams_a, perturb, steps_b"):
        check_overrides([a, b], "quick", {"streams": "1"})
