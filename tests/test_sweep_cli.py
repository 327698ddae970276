"""``python -m numerics.sweep``: LIST, RUN, STATUS, interruption and resumption, failures, and the audit's use
of the store.

The tests of interruption, failures, the local cluster and the audit's reading of the store run the
test-only experiment ``tiny.draws`` (:mod:`tests.tiny_sweeps`: cells keyed by stream id like the
papers', no numba), so a subprocess or a Dask worker costs its start-up and not a compilation of the
papers' kernels. Subprocesses remain where they are the point: a SIGKILL of a run, and Ctrl-C reaching
a whole process group.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from numerics.sweep import ResultStore, resolve, run_sweep
from numerics.sweep.cli import main
from numerics.sweep.codec import equal
from numerics.sweep.registry import experiments
from tests import cli_calls as CLI
from tests import tiny_sweeps as T

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--set", "tiny_streams=14", "--set", "tiny_per_cell=2"]  # tiny.draws in 7 cells (the quick profile: 3 of 3)


@pytest.fixture
def tiny(monkeypatch):
    """The test-only experiment ``tiny.draws`` in the sweep registry, for this test only."""
    from numerics.sweep import registry

    monkeypatch.setattr(registry, "PROVIDERS", (*registry.PROVIDERS, T.__name__))
    return T


@pytest.fixture(scope="module")
def providers_imported():
    """Every paper's sweep module imported before a ``pytester`` test takes its snapshot of ``sys.modules``
    (modules first imported during such a test are dropped when it ends)."""
    return experiments()


def _launch(store: Path, *options: str, delay: float | str, **popen) -> subprocess.Popen:
    """The sweep CLI in a subprocess, running ``tiny.draws`` (7 cells) with ``delay`` seconds per cell
    (``"FIRST,REST"``: the first cell's delay, then the others')."""
    cmd = [sys.executable, "-c", T.LAUNCH, "RUN", "tiny.draws", *options, "--quiet", "--store", str(store), *TINY]
    return subprocess.Popen(cmd, env=T.subprocess_env(TINY_SWEEP_DELAY_S=str(delay)), **popen)


def _main(capsys, *argv):
    return CLI.call(main, capsys, *argv)


def test_list_shows_every_experiment_with_cell_counts(capsys):
    rc, out, _ = _main(capsys, "LIST", "--profile", "full", "--format", "json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rc == 0 and set(rows) == {e.name for e in resolve(["all"])}
    assert rows["rare_gates.extended"]["cells"] == 40 and rows["rare_gates.joint"]["cells"] > 0
    rc, out, _ = _main(capsys, "list")
    assert rc == 0 and "rare_gates.joint" in out and " 0 cells" in out  # the quick profile has no joint sweep


@pytest.mark.parametrize(
    "argv, message",
    [
        (["RUN"], "RUN needs at least one experiment"),
        (["RUN", "table9"], "unknown experiment 'table9'; known: all, central_flow, "),
        (["STATUS", "--set", "streams=4"], "unknown size 'streams'"),
        (["STATUS", "--set", "table1_inits"], "--set: expected NAME=VALUE"),
        (["LIST", "--set", "appendix20_horizon=-1"], "size appendix20_horizon must be a number > 0"),
        (["RUN", "rare_gates.cor5", "--scheduler", "nowhere"], "scheduler must be 'serial', 'local' or a Dask"),
        (["FETCH"], "invalid choice: 'FETCH'"),
        (["LIST", "rare_gates"], "LIST takes no experiment names"),
        (["RUN", "rare_gates.cor5", "--scheduler", "host:notaport"], "scheduler must be 'serial', 'local' or a Dask"),
        (["STATUS", "--store", __file__], "exists and is not a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    rc, out, err = _main(capsys, *argv)
    assert rc == 2 and out == "" and err.startswith("sweep: error: ") and message in err and err.count("\n") == 1


def _cells_on_disk(store: Path) -> dict:
    return {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in store.rglob("*.cell")}


def test_killed_run_resumes_without_recomputing_finished_cells(tmp_path, capsys, tiny):
    store = tmp_path / "store"
    # 0.5 s per cell: the kill lands after the first of 7 cells (SIGKILL: no cleanup in the process)
    proc = _launch(
        store, "--scheduler", "serial", delay=0.5, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while not _cells_on_disk(store) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    before = _cells_on_disk(store)
    assert 1 <= len(before) < 7, "the run must be interrupted part-way"

    rc, out, _ = _main(
        capsys, "RUN", "tiny.draws", "--scheduler", "serial", "--store", str(store), "--format", "json", *TINY
    )
    row = json.loads(out)["experiments"][0]
    assert rc == 0 and row["reused"] == len(before) and row["computed"] == 7 - len(before) and row["failed"] == 0
    after = _cells_on_disk(store)
    assert all(after[p] == stamp for p, stamp in before.items())  # finished cells were not rewritten
    assert len(after) == 7 and not ResultStore(store).leftover_temporaries()

    (exp,) = resolve(["tiny.draws"])
    resumed = run_sweep(
        exp, "quick", {"tiny_streams": "14", "tiny_per_cell": "2"}, store=ResultStore(store), progress=False
    )
    assert resumed.count("reused") == 7
    assert equal(resumed.result(), T.direct(14))  # = an uninterrupted run

    rc, out, _ = _main(capsys, "STATUS", "tiny.draws", "--store", str(store), "--format", "json", *TINY)
    status = json.loads(out)
    assert rc == 0 and status["experiments"][0]["stored"] == 7 and status["experiments"][0]["missing"] == 0
    rc, out, _ = _main(capsys, "STATUS", "tiny.draws", "--store", str(store))  # other sizes: all missing
    assert rc == 0 and "other cell files in the store: 7" in out


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_on_a_local_cluster_is_clean(tmp_path):
    """Ctrl-C on a terminal reaches the whole process group: exit 130, no tracebacks, no worker left."""
    import signal

    import psutil

    store = tmp_path / "store"
    proc = _launch(
        store,
        "--workers",
        "2",
        # the first cell lands at once; the other 6 take 5 s each on 2 workers, so the run cannot end before the
        # interrupt even when this process is slow to see the first cell (a loaded CI machine once let 7 cells of
        # 0.5 s finish first)
        delay="0.2,5",
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # a terminal's Ctrl-C: SIGINT at its default in the child, whatever this process inherited (a job started
        # with & by a non-interactive shell, as .ci/run starts the library tests, ignores SIGINT, and Python keeps
        # an inherited SIG_IGN instead of raising KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 300
    while not _cells_on_disk(store) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = psutil.Process(proc.pid).children(recursive=True)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err and "run the same command again" in err
    assert len(workers) >= 2
    gone, alive = psutil.wait_procs(workers, timeout=30)
    assert not alive
    assert 1 <= len(_cells_on_disk(store)) < 7


def test_interrupt_keeps_finished_cells(tmp_path, capsys, monkeypatch, tiny):
    import numerics.sweep.engine as engine

    real, calls = engine.execute_cell, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(engine, "execute_cell", interrupted)
    rc, out, err = _main(capsys, "RUN", "tiny.draws", "--scheduler", "serial", "--store", str(tmp_path), *TINY)
    assert rc == 130 and "run the same command again to continue" in err
    assert len(ResultStore(tmp_path).files()) == 2


def test_failed_cell_is_named_others_stored_exit_1(tmp_path, capsys, monkeypatch, tiny):
    import numerics.sweep.engine as engine

    real = engine.execute_cell

    def flaky(compute, params, threads, modules):
        if params["kwargs"]["first_stream"] == 4:
            raise RuntimeError("worker lost")
        return real(compute, params, threads, modules)

    monkeypatch.setattr(engine, "execute_cell", flaky)
    rc, out, _ = _main(capsys, "RUN", "tiny.draws", "--scheduler", "serial", "--store", str(tmp_path), *TINY)
    assert rc == 1
    assert "7 cells, 0 reused, 6 computed (missing 7), 1 failed" in out
    assert "FAILED cell tiny, first_stream=4, streams=2: RuntimeError: worker lost" in out
    assert len(ResultStore(tmp_path).files()) == 6


def test_unwritable_store_is_refused_before_computing(tmp_path, capsys, monkeypatch):
    import numerics.sweep.engine as engine

    monkeypatch.setattr(engine, "execute_cell", lambda *a: pytest.fail("a cell was computed"))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    rc, out, err = _main(capsys, "RUN", "rare_gates.cor5", "--scheduler", "serial", "--store", str(blocker / "store"))
    assert rc == 2 and out == "" and err.startswith("sweep: error: store: cannot write to") and err.count("\n") == 1


def test_run_on_a_local_cluster_prints_the_dashboard(tmp_path, capsys, tiny):
    # In this process: the CLI starts its own LocalCluster of 2 worker processes, as from a shell
    rc, out, err = _main(capsys, "RUN", "tiny.draws", "--workers", "2", "--store", str(tmp_path))
    assert rc == 0, err
    assert "dashboard http" in err and "LocalCluster (2 workers)" in out
    assert "3 cells, 0 reused, 3 computed" in out
    assert equal(
        run_sweep(resolve(["tiny.draws"])[0], store=ResultStore(tmp_path), progress=False).result(), T.direct(9)
    )


_AUDIT_CHECK = """
from verify.audit import claim

@claim("RG-sim.gd.halving")
def test_uses_the_store(audit, sweeps):
    d = sweeps.result("tiny.draws")
    audit.ours(float(d["draws"].max()))
    assert d["draws"].shape == (4, 4)
"""


def test_audit_reads_cells_that_the_cli_stored(providers_imported, tiny, pytester, tmp_path, capsys):
    # In this process, under pytester: nothing here compiles numba code (tiny.draws), so the modules that
    # pytester drops from sys.modules when it ends are none that a later compilation needs.
    store = tmp_path / "store"
    rc, _, err = _main(
        capsys, "RUN", "tiny.draws", "--scheduler", "serial", "--store", str(store), "--set", "tiny_streams=4"
    )
    assert rc == 0, err
    pytester.makeini("[pytest]\nmarkers =\n    claim(id, reading=None, discrepancy=None): claim\n")
    pytester.makepyfile(test_inner=textwrap.dedent(_AUDIT_CHECK))
    args = [
        "-p",
        "verify.plugin",
        "-p",
        "no:cacheprovider",
        "--report-dir",
        "rep",
        "--sweep-store",
        str(store),
        "--set",
        "tiny_streams=4",
    ]
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["simulation cells: 2 reused from the store, 0 computed, 0 failed", "  computed on: local (not needed*"]
    )
    report = json.loads((pytester.path / "rep" / "report.json").read_text())
    assert report["sweeps"]["experiments"][0]["reused"] == 2
    assert report["profile"] == "quick (sizes changed: tiny_streams=4)"
    for option, value, message in (
        ("--set", "nonsense=1", "unknown size 'nonsense'"),
        ("--scheduler", "nowhere", "scheduler must be 'serial', 'local' or a Dask"),
        ("--workers", "0", "workers must be an integer >= 1"),
    ):
        shutil.rmtree(pytester.path / "rep", ignore_errors=True)
        bad = pytester.runpytest_inprocess(*args[:-2], option, value)
        assert bad.ret == pytest.ExitCode.USAGE_ERROR, option
        bad.stderr.fnmatch_lines([f"ERROR: *{message}*"])
        assert "test_inner.py" not in bad.stdout.str()  # nothing was collected or run
        assert not (pytester.path / "rep").exists()  # and no report was written


def test_module_entry_point_help():
    done = subprocess.run(
        [sys.executable, "-m", "numerics.sweep", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
        timeout=120,
    )
    assert done.returncode == 0 and "python -m numerics.sweep RUN" in done.stdout


def test_audit_session_submits_experiments_together_and_once(tmp_path, monkeypatch, tiny):
    import numerics.sweep.engine as engine
    from verify.sweeps import SweepSession

    batches = []
    real = engine.SerialExecutor.run

    def counting(self, tasks):
        batches.append(len(tasks))
        return real(self, tasks)

    monkeypatch.setattr(engine.SerialExecutor, "run", counting)
    overrides = {"tiny_streams": "9"}
    session = SweepSession("quick", overrides, tmp_path, "serial", None)
    session.prefetch(["tiny.draws", "tiny.uniform"])
    assert batches == [6]  # 3 + 3 cells in one submission
    h = session.result("tiny.draws")
    session.prefetch(["tiny.uniform"])
    assert batches == [6] and h["draws"].shape == (9, 4)
    assert [r["computed"] for r in session.describe()["experiments"]] == [3, 3]
    assert session.describe()["scheduler"] == "serial (this process)"
    session.close()
    again = SweepSession("quick", overrides, tmp_path, "serial", None)
    again.result("tiny.uniform")
    assert batches == [6] and again.describe()["experiments"][0]["reused"] == 3
    assert again.describe()["scheduler"].startswith("serial (not needed")
