"""pytest plugin: options, the ``audit`` fixture, verdict collection and the report.

Loaded from the repository's root ``conftest.py``. It is inert for runs that collect
no claim-marked check (``pytest tests``), so the report is written only by the audit.
"""

from __future__ import annotations

import os
from contextlib import nullcontext
from pathlib import Path

import pytest

from .audit import Audit
from .registry import load_registry
from .report import VERDICTS, CheckResult, build_report, write_report

_STATE_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("audit", "paper audit")
    group.addoption(
        "--report-dir", default="verify-report", help="where report.md and report.json go (default: verify-report)"
    )
    group.addoption(
        "--full",
        action="store_true",
        default=False,
        help="paper-scale simulations (also AUDIT_PROFILE=full); default is the quick profile",
    )
    group.addoption(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        dest="audit_sizes",
        help="change one simulation size of the profile (repeatable; see python -m numerics.sweep LIST)",
    )
    group.addoption(
        "--scheduler",
        default=None,
        help="where simulation cells run: local (default: a Dask LocalCluster, one worker per "
        "core), serial (this process) or a Dask scheduler address",
    )
    group.addoption("--workers", type=int, default=None, help="worker processes of the local Dask cluster")
    group.addoption(
        "--perturb",
        type=float,
        default=0.0,
        metavar="REL",
        help="rerun every simulation from a start perturbed by REL relative (e.g. 1e-12, at most 1e-6): "
        "a rounding-sized change that must not change any verdict",
    )
    group.addoption(
        "--sweep-store",
        default=None,
        help="result store of the simulation cells (default REPORT_DIR/sweep-store; 'none': no store)",
    )


def audit_profile(config) -> str:
    """``full`` when ``--full`` or ``AUDIT_PROFILE=full``, else ``quick``."""
    env = os.environ.get("AUDIT_PROFILE", "quick").strip().lower()
    if env not in ("quick", "full"):
        raise pytest.UsageError(f"AUDIT_PROFILE must be 'quick' or 'full', got {env!r}")
    return "full" if config.getoption("--full") or env == "full" else "quick"


def report_dir(config) -> Path:
    """The report directory (``--report-dir``, relative to where pytest was started)."""
    out_dir = Path(config.getoption("--report-dir"))
    return out_dir if out_dir.is_absolute() else Path(config.invocation_params.dir) / out_dir


def size_overrides(config) -> dict:
    """The ``--set NAME=VALUE`` size overrides as a dict (validated against the papers' size tables)."""
    from numerics.sweep.cli import parse_sets
    from numerics.sweep.experiment import check_overrides
    from numerics.sweep.registry import experiments

    try:
        overrides = parse_sets(config.getoption("audit_sizes"))
        if overrides:
            check_overrides(experiments().values(), audit_profile(config), overrides)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return overrides


def sweep_store(config) -> Path | None:
    """The result store directory (``--sweep-store``; default ``<report dir>/sweep-store``), None for 'none'."""
    value = config.getoption("--sweep-store")
    if value is None:
        return report_dir(config) / "sweep-store"
    if value.strip().lower() == "none":
        return None
    path = Path(value)
    return path if path.is_absolute() else Path(config.invocation_params.dir) / path


def pytest_configure(config):
    config.stash[_STATE_KEY] = {
        "results": {},
        "audits": {},
        "claims_seen": False,
        "sweeps": None,
        "instruments": {},
        "prefetched": False,
    }
    _check_sweep_options(config)


def _check_sweep_options(config) -> None:
    """Bad --set, --scheduler, --workers or --sweep-store: a usage error before any test runs."""
    if config.getoption("audit_sizes"):
        size_overrides(config)
    scheduler, workers = config.getoption("--scheduler"), config.getoption("--workers")
    try:
        if scheduler is not None or workers is not None:
            from numerics.sweep.engine import make_executor

            make_executor(scheduler or "local", workers)
        from numerics.perturb import check_perturbation

        check_perturbation(config.getoption("--perturb"))
        store = sweep_store(config)
        if store is not None and store.exists() and not store.is_dir():
            raise ValueError(f"--sweep-store: {store} exists and is not a directory")
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _claim_mark(item):
    return item.get_closest_marker("claim")


def pytest_collection_modifyitems(session, config, items):
    registry = load_registry()
    unknown = []
    for item in items:
        mark = _claim_mark(item)
        if mark is None:
            continue
        config.stash[_STATE_KEY]["claims_seen"] = True
        if not mark.args or mark.args[0] not in registry:
            unknown.append(f"{item.nodeid} names {mark.args[0] if mark.args else '(nothing)'}")
    if unknown:
        raise pytest.UsageError("checks name unregistered claims:\n  " + "\n  ".join(unknown))


@pytest.fixture
def audit(request) -> Audit:
    """Recorder for our value and the evidence of the claim this check names."""
    mark = request.node.get_closest_marker("claim")
    rec = Audit(mark.args[0] if mark else None, figures_dir=report_dir(request.config) / "figures")
    request.config.stash[_STATE_KEY]["audits"][request.node.nodeid] = rec
    return rec


@pytest.fixture(scope="session")
def profile(request) -> str:
    """The audit profile: ``quick`` (default, CI) or ``full`` (paper scale)."""
    return audit_profile(request.config)


@pytest.fixture(scope="session")
def perturbation(request) -> float:
    """Relative size of the start perturbation of every simulation (``--perturb``; 0 by default)."""
    return float(request.config.getoption("--perturb"))


@pytest.fixture(scope="session")
def size_changes(request) -> dict:
    """Size overrides of the profile from ``--set NAME=VALUE`` (empty by default)."""
    return size_overrides(request.config)


@pytest.fixture(scope="session")
def sweeps(request, profile, size_changes, perturbation):
    """Results of long experiments through the sweep layer (``sweeps.result('rare_gates.table2')``).

    With ``--perturb REL`` every experiment's starts move by REL (its ``perturb`` size).
    """
    from .sweeps import SweepSession

    if perturbation:
        size_changes = {**size_changes, "perturb": perturbation}

    scheduler = request.config.getoption("--scheduler") or "local"
    capman = request.config.pluginmanager.getplugin("capturemanager")
    session = SweepSession(
        profile,
        size_changes,
        sweep_store(request.config),
        scheduler,
        request.config.getoption("--workers"),
        uncaptured=capman.global_and_fixture_disabled if capman else nullcontext,
    )
    request.config.stash[_STATE_KEY]["sweeps"] = session
    yield session
    session.close()


@pytest.fixture
def results(request, sweeps):
    """The sweep results the check declared with ``@uses(...)`` (see :class:`verify.sweeps.Results`).

    On first use, the experiments of every selected check are submitted together, so a
    cluster works through all their cells without a pause between experiments or modules.
    """
    from .sweeps import Results

    mark = request.node.get_closest_marker("uses")
    if mark is None:
        raise pytest.UsageError(f"{request.node.nodeid} asks for results but names no experiment: add @uses(...)")
    state = request.config.stash[_STATE_KEY]
    if not state["prefetched"]:
        state["prefetched"] = True
        sweeps.prefetch({n for item in request.session.items for m in item.iter_markers("uses") for n in m.args})
    return Results(sweeps, tuple(mark.args), request.node.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Record each claim check's outcome.

    A failure in any phase counts: an error in a fixture's setup or teardown is a failed
    check (``check-failed``), never ``not-run``. A discrepancy check's xfail expects
    ``PaperClaimFails`` only (``raises=``), so pytest itself reports any other exception,
    setup errors included, as a failure.
    """
    report = yield
    inst = item.get_closest_marker("instrument")
    if inst is not None:
        _record_instrument(item, inst, report, call)
    mark = _claim_mark(item)
    if mark is None:
        return report
    state = item.config.stash[_STATE_KEY]
    if report.when == "teardown":
        prior = state["results"].get(item.nodeid)
        if report.failed and prior is not None and prior.outcome != "failed":
            prior.outcome = "failed"
            prior.message = "error in teardown: " + _message(call)
        return report
    if report.when == "setup" and report.passed:
        return report
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif report.failed and call.excinfo is None and mark.kwargs.get("discrepancy"):
        outcome = "xpassed"  # strict XPASS: pytest fails the test without an exception
    elif report.skipped:
        outcome = "skipped"
    else:
        outcome = report.outcome
    rec = state["audits"].get(item.nodeid) or Audit(mark.args[0])
    message = ""
    if report.failed and call.excinfo is not None:
        message = ("error in setup: " if report.when == "setup" else "") + _message(call)
    if outcome == "skipped" and isinstance(report.longrepr, tuple):
        message = str(report.longrepr[2]).removeprefix("Skipped: ")
    if outcome == "xpassed":
        message = "the paper's claim now holds: revisit this discrepancy"
    state["results"][item.nodeid] = CheckResult(
        nodeid=item.nodeid,
        claim_id=mark.args[0],
        outcome=outcome,
        reading=mark.kwargs.get("reading"),
        discrepancy=mark.kwargs.get("discrepancy"),
        values=list(rec.values),
        notes=list(rec.notes),
        figures=list(rec.figures),
        message=message,
        powers=list(rec.powers),
        fitted=mark.kwargs.get("fitted"),
        by_construction=mark.kwargs.get("by_construction"),
    )
    return report


def _record_instrument(item, mark, report, call) -> None:
    """An instrument calibration's outcome (``verify/test_instruments.py``), for the report."""
    rows = item.config.stash[_STATE_KEY]["instruments"]
    if report.when == "setup" and report.passed:
        return
    prior = rows.get(item.nodeid)
    if prior is not None and (prior["outcome"] == "failed" or report.passed):
        return  # a teardown after the call adds nothing unless it failed
    rows[item.nodeid] = {
        "name": mark.args[0],
        "reference": mark.args[1] if len(mark.args) > 1 else "",
        "outcome": report.outcome,
        "message": _message(call) if report.failed else "",
    }


def _message(call) -> str:
    return call.excinfo.exconly().splitlines()[0][:300] if call.excinfo is not None else ""


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = config.stash[_STATE_KEY]
    if not state["claims_seen"]:
        return
    root = Path(config.rootpath)
    profile = audit_profile(config)
    overrides = size_overrides(config)
    if overrides:
        profile += " (sizes changed: " + ", ".join(f"{k}={v}" for k, v in overrides.items()) + ")"
    if config.getoption("--perturb"):
        profile += f" (simulation starts perturbed by {config.getoption('--perturb'):g} relative)"
    sweeps = state["sweeps"].describe() if state["sweeps"] is not None else None
    report = build_report(
        load_registry(),
        list(state["results"].values()),
        profile,
        root,
        sweeps=sweeps,
        instruments=list(state["instruments"].values()),
    )
    json_path, md_path = write_report(report, report_dir(config))
    tr = terminalreporter
    tr.section("paper audit")
    width = max(len(p) for p in report["summary"])
    tr.write_line(f"{'paper':<{width}}  " + "  ".join(f"{v:>17}" for v in VERDICTS))
    for paper, counts in report["summary"].items():
        if counts:
            tr.write_line(f"{paper:<{width}}  " + "  ".join(f"{counts.get(v, 0):>17}" for v in VERDICTS))
    flagged = [c for c in report["claims"] if c["verdict"] in ("discrepancy", "check-failed", "inconclusive")]
    if flagged:
        tr.write_line("")
        tr.write_line("discrepancies, failed checks and inconclusive claims:")
        for c in flagged:
            tr.write_line(f"  {c['id']} [{c['verdict']}] paper: {c['paper_value']} | ours: {c['ours'][:120]}")
    if report["instruments"]:
        bad = [i for i in report["instruments"] if i["outcome"] != "passed"]
        tr.write_line("")
        tr.write_line(
            f"instruments calibrated: {len(report['instruments']) - len(bad)} of {len(report['instruments'])}"
            + "".join(f"\n  MISCALIBRATED {i['name']}: {i['message']}" for i in bad)
        )
    if sweeps and sweeps["experiments"]:
        exps = sweeps["experiments"]
        tr.write_line("")
        tr.write_line(
            f"simulation cells: {sum(e['reused'] for e in exps)} reused from the store, "
            f"{sum(e['computed'] for e in exps)} computed, {sum(e['failed'] for e in exps)} failed "
            f"({sweeps['scheduler']}; store {sweeps['store']})"
        )
    tr.write_line("")
    tr.write_line(f"report: {md_path}  {json_path}")
