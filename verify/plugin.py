"""pytest plugin: options, the ``audit`` fixture, verdict collection and the report.

Loaded from the repository's root ``conftest.py``. It is inert for runs that collect
no claim-marked check (``pytest tests``), so the report is written only by the audit.

Choosing what runs: ``--claim ID`` (repeatable) and ``--paper NAME`` keep only the checks
of those claims (and the instrument calibrations) at collection; every check also carries
its claim id as keywords: ``-k MP-6.map`` selects it by a case-insensitive substring match
(so also ``MP-6.map.x`` were there one; ``-k MP-6`` selects every ``MP-6*`` claim), and
``-k "claim[MP-6.map]"`` that claim only. A partial run (any selection, a path,
``-x`` stopping early) merges into the stored report (:mod:`verify.merge`): the claims it
ran are updated, every other claim is kept with the time of its last run. A partial run
refuses a report directory holding another profile's report (pass another
``--report-dir``); a full run replaces it. ``--collect-only`` writes no report. pytest-xdist
(``-n``) is refused for the audit: run it in one process (simulations spread over cores
through ``--scheduler``/``--workers``).
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from contextlib import nullcontext
from pathlib import Path

import pytest

from .audit import Audit
from .merge import merge_reports
from .registry import PAPERS, load_registry
from .report import FLAGGED, VERDICTS, CheckResult, build_report, migrate, write_report

PROFILES = ("quick", "full")
WIDTH = 80  # the terminal summary fits 80 columns

_STATE_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("audit", "paper audit")
    group.addoption(
        "--report-dir", default="verify-report", help="where report.md and report.json go (default: verify-report)"
    )
    group.addoption(
        "--claim",
        action="append",
        default=[],
        metavar="ID",
        dest="audit_claims",
        help="run only the checks of this claim (repeatable; e.g. --claim MP-6.map); the report keeps the others",
    )
    group.addoption(
        "--paper",
        action="append",
        default=[],
        metavar="NAME",
        dest="audit_papers",
        help="run only the checks of this paper's claims (repeatable): " + ", ".join(PAPERS),
    )
    group.addoption(
        "--profile",
        default=None,
        metavar="NAME",
        dest="audit_profile",
        help="audit profile: quick (default) or full (also --full, AUDIT_PROFILE); the option wins over the variable",
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
    """``--profile``, else ``full`` for ``--full``, else ``AUDIT_PROFILE``, else ``quick``.

    A bad value, or ``--profile quick`` with ``--full``, is a usage error naming the parameter.
    """
    env = os.environ.get("AUDIT_PROFILE", "quick").strip().lower()
    if env not in PROFILES:
        raise pytest.UsageError(f"AUDIT_PROFILE must be one of {', '.join(PROFILES)}; got {env!r}")
    option = config.getoption("audit_profile")
    if option is not None:
        option = option.strip().lower()
        if option not in PROFILES:
            raise pytest.UsageError(f"--profile must be one of {', '.join(PROFILES)}; got {option!r}")
        if option == "quick" and config.getoption("--full"):
            raise pytest.UsageError("--profile quick contradicts --full: give one of them")
        return option
    return "full" if config.getoption("--full") else env


def report_dir(config) -> Path:
    """The report directory (``--report-dir``, relative to where pytest was started)."""
    out_dir = Path(config.getoption("--report-dir"))
    return out_dir if out_dir.is_absolute() else Path(config.invocation_params.dir) / out_dir


def size_overrides(config) -> dict:
    """The ``--set NAME=VALUE`` size overrides as a dict (validated against the papers' size tables)."""
    from numerics.cli_support import UsageError
    from numerics.sweep.cli import check_size_limits, parse_sets
    from numerics.sweep.experiment import check_overrides
    from numerics.sweep.registry import experiments

    try:
        overrides = parse_sets(config.getoption("audit_sizes"))
        if overrides:
            check_overrides(experiments().values(), audit_profile(config), overrides)
            check_size_limits(overrides)  # the same caps as python -m numerics.sweep: no run that cannot finish
    except (ValueError, UsageError) as exc:
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
        "universe": {},  # node id -> claim id of every claim check collected, selected or not
        "session": None,
    }
    audit_profile(config)
    _check_selection_options(config)
    _refuse_xdist(config)
    _check_sweep_options(config)


def _check_selection_options(config) -> None:
    """Unknown --claim ids or --paper names: a one-line usage error naming the allowed values."""
    bad_papers = [p for p in config.getoption("audit_papers") if p not in PAPERS]
    if bad_papers:
        raise pytest.UsageError(f"--paper must be one of {', '.join(PAPERS)}; got {', '.join(map(repr, bad_papers))}")
    claims = config.getoption("audit_claims")
    if not claims:
        return
    registry = load_registry()
    for cid in claims:
        if cid not in registry:
            near = difflib.get_close_matches(cid, list(registry), n=3, cutoff=0.6)
            prefixes = sorted({k.split("-")[0] + "-*" for k in registry})
            raise pytest.UsageError(
                f"--claim {cid!r} is not a registered claim id; allowed: the {len(registry)} ids of "
                f"verify/claims ({', '.join(prefixes)})" + (f"; closest: {', '.join(near)}" if near else "")
            )


def _covers_audit(config) -> bool:
    """Whether the run's paths include the audit (``verify/``, a part of it, or a folder above it)."""
    here = Path(__file__).resolve().parent
    for arg in config.args:
        path = Path(config.invocation_params.dir, str(arg).split("::")[0]).resolve()
        if path == here or here in path.parents or path in here.parents:
            return True
    return False


def pytest_sessionfinish(session):
    """On a pytest-xdist worker: tell the controller that claim checks ran here (see pytest_testnodedown)."""
    state = session.config.stash.get(_STATE_KEY, None)
    if hasattr(session.config, "workeroutput") and state is not None and state["claims_seen"]:
        session.config.workeroutput["audit_checks"] = True


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the pytest-xdist controller: a worker ran claim checks, which no report of this run holds."""
    if getattr(node, "workeroutput", {}).get("audit_checks"):
        node.config.stash[_STATE_KEY]["xdist_checks"] = True


def _refuse_xdist(config) -> None:
    """The audit runs in one pytest process: ``-n`` (pytest-xdist) would split its report over workers."""
    if hasattr(config, "workerinput"):
        return  # a worker: refused on the controller (or, for a run outside verify/, at collection)
    n = config.getoption("numprocesses", default=None)
    if n not in (None, 0, "0") and _covers_audit(config):
        raise pytest.UsageError(
            f"-n {n}: the audit does not run under pytest-xdist (one report per run); drop -n "
            "(simulations use every core through --scheduler/--workers)"
        )


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


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(session, config, items):
    """Unregistered claims are a usage error; claim ids become keywords; --claim/--paper select.

    A wrapper: this runs before ``-k``/``-m`` deselect, and notes when every implementation
    went through (pytest calls ``pytest_collection_finish`` after a collection error too).
    """
    _select(config, items)
    result = yield
    config.stash[_STATE_KEY]["collected"] = True
    return result


def _select(config, items) -> None:
    """Check the claim marks, add each claim id as keywords, keep only what --claim/--paper select."""
    registry = load_registry()
    state = config.stash[_STATE_KEY]
    unknown = []
    for item in items:
        mark = _claim_mark(item)
        if mark is None:
            continue
        state["claims_seen"] = True
        if not mark.args or mark.args[0] not in registry:
            unknown.append(f"{item.nodeid} names {mark.args[0] if mark.args else '(nothing)'}")
            continue
        state["universe"][item.nodeid] = mark.args[0]
        # -k MP-6.map (a substring: also MP-6.map.x) and -k "claim[MP-6.map]" (that id only)
        item.extra_keyword_matches.update({mark.args[0], f"claim[{mark.args[0]}]"})
    if unknown:
        raise pytest.UsageError("checks name unregistered claims:\n  " + "\n  ".join(unknown))
    if any("::" in str(arg) for arg in config.args):
        _note_unselected_checks(items, state["universe"], registry)
    wanted = _selected_claims(config, registry)
    if wanted is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        mark = _claim_mark(item)
        chosen = item.get_closest_marker("instrument") is not None or (mark is not None and mark.args[0] in wanted)
        (keep if chosen else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _note_unselected_checks(items, universe: dict[str, str], registry) -> None:
    """Add to ``universe`` the claim checks of the modules a node id on the command line narrowed.

    pytest collects only the named node; collecting its module again finds the claim's other
    checks, so that half a claim is not reported as if it were all of it.
    """
    modules = {id(m): m for m in (item.getparent(pytest.Module) for item in items) if m is not None}
    stack: list = list(modules.values())
    while stack:
        for child in stack.pop().collect():
            if isinstance(child, pytest.Item):
                mark = _claim_mark(child)
                if mark is not None and mark.args and mark.args[0] in registry:
                    universe.setdefault(child.nodeid, mark.args[0])
            elif isinstance(child, pytest.Collector):
                stack.append(child)


def _selected_claims(config, registry) -> set[str] | None:
    """The claim ids --claim and --paper select (None: no such selection)."""
    claims, papers = config.getoption("audit_claims"), config.getoption("audit_papers")
    if not claims and not papers:
        return None
    return set(claims) | {cid for cid, c in registry.items() if c.paper in papers}


def pytest_collection_finish(session):
    """Before any check runs: the report directory must be writable and, for a partial run, of this profile."""
    config = session.config
    state = config.stash[_STATE_KEY]
    state["session"] = session
    if not state["claims_seen"] or not state.get("collected") or config.option.collectonly:
        return
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker writes no report
    directory = report_dir(config)
    problem = _unwritable(directory)
    if problem:
        raise pytest.UsageError(
            f"--report-dir {directory}: cannot write the report there ({problem}); give a writable folder"
        )
    stored = _stored_report(directory)
    selected = {i.nodeid for i in session.items}
    planned, _ = _ran_claims(config, {n: c for n, c in state["universe"].items() if n in selected}, set())
    partial = planned != set(load_registry())
    profile = _profile_label(config)
    if partial and stored is not None and stored.get("profile") != profile:
        raise pytest.UsageError(
            f"--report-dir {directory} holds a report of profile {stored.get('profile')!r}; this partial run is "
            f"{profile!r} and would mix them: pass another --report-dir or run the whole audit"
        )


def _unwritable(directory: Path) -> str:
    """Why report.json cannot be written under ``directory`` ('' when it can: the folder is then created)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
        for name in ("report.json", "report.md"):
            if (directory / name).exists() and not os.access(directory / name, os.W_OK):
                return f"{directory / name} is not writable"
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""


def _stored_report(directory: Path) -> dict | None:
    """The report.json stored in ``directory``, lifted to this schema version (None: absent or no report)."""
    try:
        return migrate(json.loads((directory / "report.json").read_text()))
    except (OSError, ValueError):
        return None


def _ran_claims(
    config, universe: dict[str, str], failed: set[str], skipped: frozenset[str] = frozenset()
) -> tuple[set[str], bool]:
    """The claims this run ran in full, and whether the run was narrowed.

    ``universe``: node id -> claim id of the checks that ran (or, before the run, will run);
    a claim ran when every check of it that this session collected is there, or when one
    of its checks failed (``failed``: a failure decides the verdict). Claims without
    checks (unverifiable) ran when --claim or --paper selects them, or when nothing
    narrowed the run. In a narrowed run a claim whose checks all skipped (``skipped``) did
    not run: the stored report keeps its verdict rather than ``not-run``.
    """
    registry = load_registry()
    state = config.stash[_STATE_KEY]
    every: dict[str, set[str]] = {}
    for node, cid in state["universe"].items():
        every.setdefault(cid, set()).add(node)
    done: dict[str, set[str]] = {}
    for node, cid in universe.items():
        done.setdefault(cid, set()).add(node)
    ran = {cid for cid, nodes in every.items() if nodes <= done.get(cid, set())} | failed
    checkable = {cid for cid, c in registry.items() if not c.unverifiable}
    narrowed = _selected_claims(config, registry) is not None or ran != set(every) or not checkable <= set(every)
    if not narrowed:
        return set(registry), False
    wanted = _selected_claims(config, registry) or set()
    return (ran - skipped) | {cid for cid in wanted if cid not in every}, True


def _selection_words(config, narrowed: bool, exitstatus: int = 0) -> list[str]:
    """How this run chose its claims, as command-line words (for the report's ``run``)."""
    words = [f"--claim {c}" for c in config.getoption("audit_claims")]
    words += [f"--paper {p}" for p in config.getoption("audit_papers")]
    if config.option.keyword:
        words.append(f"-k {config.option.keyword}")
    if config.option.markexpr:
        words.append(f"-m {config.option.markexpr}")
    words += [f"--deselect {d}" for d in config.getoption("deselect", default=None) or []]
    for flag, dest in (("--lf", "lf"), ("--sw", "stepwise")):
        if config.getoption(dest, default=False):
            words.append(flag)
    here = Path(__file__).resolve().parent
    for arg in config.args:
        path = Path(config.invocation_params.dir, str(arg).split("::")[0]).resolve()
        whole = path == here or path in here.parents or path == Path(config.rootpath).resolve()
        if "::" in str(arg) or not whole:
            words.append(str(arg))
    session = config.stash[_STATE_KEY]["session"]
    if session is not None and (session.shouldfail or session.shouldstop):
        words.append(f"stopped early ({session.shouldfail or session.shouldstop})")
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        words.append("interrupted")
    if narrowed and not words:
        words.append("not every check ran")
    return words


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
        vacuous=mark.kwargs.get("vacuous"),
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


def _profile_label(config) -> str:
    """The profile as the report records it, with size changes and perturbation spelled out."""
    profile = audit_profile(config)
    overrides = size_overrides(config)
    if overrides:
        profile += " (sizes changed: " + ", ".join(f"{k}={v}" for k, v in overrides.items()) + ")"
    if config.getoption("--perturb"):
        profile += f" (simulation starts perturbed by {config.getoption('--perturb'):g} relative)"
    return profile


def _fit(text: str, width: int = WIDTH) -> str:
    """``text`` on one line of at most ``width`` columns ('...' where cut)."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


_SHORT = {
    "confirmed": "confirm.",
    "confirmed-reading": "reading",
    "inconclusive": "inconcl.",
    "vacuous": "vacuous",
    "discrepancy": "discrep.",
    "unverifiable": "unverif.",
    "check-failed": "FAILED",
    "not-run": "not-run",
}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = config.stash[_STATE_KEY]
    if state.get("xdist_checks"):
        terminalreporter.section("paper audit")
        terminalreporter.write_line("no report written: claim checks ran under pytest-xdist (-n); run without -n")
        return
    if not state["claims_seen"] or exitstatus == pytest.ExitCode.USAGE_ERROR:
        return
    tr = terminalreporter
    if config.option.collectonly:
        tr.section("paper audit")
        tr.write_line("--collect-only: no report written")
        return
    directory = report_dir(config)
    profile = _profile_label(config)
    results = state["results"]
    failed = {r.claim_id for r in results.values() if r.outcome in ("failed", "xpassed")}
    ran_any = {r.claim_id for r in results.values() if r.outcome != "skipped"}
    skipped = frozenset(r.claim_id for r in results.values() if r.claim_id not in ran_any)
    ran, narrowed = _ran_claims(config, {n: r.claim_id for n, r in results.items()}, failed, skipped)
    selection = _selection_words(config, narrowed, exitstatus)
    sweeps = state["sweeps"].describe() if state["sweeps"] is not None else None
    new = build_report(
        load_registry(),
        [r for r in results.values() if r.claim_id in ran],
        profile,
        Path(config.rootpath),
        sweeps=sweeps,
        instruments=list(state["instruments"].values()),
    )
    stored = _stored_report(directory)
    partial = ran != {c["id"] for c in new["claims"]}
    tr.section("paper audit")
    if stored is not None and stored.get("profile") != profile:
        if partial:
            tr.write_line(
                _fit(f"report NOT written: {directory} holds profile {stored.get('profile')!r}, not {profile!r}")
            )
            tr.write_line(_fit("(a partial run does not mix profiles: pass another --report-dir)"))
            return
        stored = None  # a full run of another profile replaces the stored report
    report = merge_reports(stored, new, ran, selection)
    json_path, md_path = write_report(report, directory)
    _write_summary(tr, report, ran, stored is not None)
    tr.write_line("")
    tr.write_line(f"report: {_shown(md_path, config)}  {_shown(json_path, config)}")


def _shown(path: Path, config) -> str:
    """``path`` relative to where pytest was started, when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path(config.invocation_params.dir).resolve()))
    except ValueError:
        return str(path)


def _write_summary(tr, report: dict, ran: set[str], merged: bool) -> None:
    """The verdict table, the flagged claims (failed checks with their error), instruments, sweeps."""
    run = report["run"]
    if run["partial"]:
        kept = len(report["claims"]) - len(ran)
        tr.write_line(_fit("partial run: " + "; ".join(run["selection"] or [])))
        tr.write_line(
            _fit(
                f"{len(ran)} claim{'s' if len(ran) != 1 else ''} run now, {kept} "
                + ("kept from earlier runs (see last_run)" if merged else "not run (no earlier report)")
            )
        )
        tr.write_line("")
    width = max(len(p) for p in report["summary"])
    tr.write_line(f"{'paper':<{width}} " + " ".join(f"{_SHORT[v]:>{len(_SHORT[v])}}" for v in VERDICTS))
    for paper, counts in report["summary"].items():
        if counts:
            tr.write_line(f"{paper:<{width}} " + " ".join(f"{counts.get(v, 0):>{len(_SHORT[v])}}" for v in VERDICTS))
    tr.write_line("(confirm.: confirmed; reading: confirmed-reading; FAILED: check-failed)")
    flagged = [c for c in report["claims"] if c["verdict"] in FLAGGED and (c["id"] in ran or not run["partial"])]
    if flagged:
        tr.write_line("")
        tr.write_line(
            "discrepancies, failed checks, inconclusive and vacuous claims" + (" run now:" if run["partial"] else ":")
        )
        for c in flagged:
            tr.write_line(_fit(f"  {c['id']} [{c['verdict']}] paper: {c['paper_value']} | ours: {c['ours']}"))
            if c["verdict"] == "check-failed":
                error = c["evidence"].partition("CHECK FAILED: ")[2] or c["evidence"]
                tr.write_line(_fit(f"    error: {error.splitlines()[0] if error else '(no message)'}"))
    if run["partial"]:
        others = sum(
            1
            for c in report["claims"]
            if c["id"] not in ran and c["verdict"] in ("discrepancy", "check-failed", "inconclusive")
        )
        if others:
            tr.write_line(_fit(f"({others} more flagged claims kept from earlier runs: see the report)"))
    if report["instruments"]:
        bad = [i for i in report["instruments"] if i["outcome"] != "passed"]
        tr.write_line("")
        tr.write_line(
            f"instruments calibrated: {len(report['instruments']) - len(bad)} of {len(report['instruments'])}"
        )
        for i in bad:
            tr.write_line(_fit(f"  MISCALIBRATED {i['name']}: {i['message']}"))
    sweeps = report.get("sweeps")
    if sweeps and sweeps["experiments"]:
        exps = sweeps["experiments"]
        tr.write_line("")
        tr.write_line(
            _fit(
                f"simulation cells: {sum(e['reused'] for e in exps)} reused from the store, "
                f"{sum(e['computed'] for e in exps)} computed, {sum(e['failed'] for e in exps)} failed"
            )
        )
        tr.write_line(_fit(f"  computed on: {sweeps['scheduler']}"))
        tr.write_line(_fit(f"  store: {sweeps['store']}"))
