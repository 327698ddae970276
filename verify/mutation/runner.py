"""Run mutants: each applied alone to a scratch copy of the repository, judged against a baseline.

Workspace. The run first takes one snapshot of the tree, ``<work>/snapshot/``: the tracked
and untracked-not-ignored files (``git ls-files -co --exclude-standard``), copied with
``shutil.copy2`` so modification times are kept; baselines and mutants all see it, however
the working tree changes during the run. Every job slot owns one fixed directory
``<work>/slot-<k>/`` holding ``repo/`` (a copy of the snapshot), ``numba-cache/`` and
``numba-dirty/`` (``NUMBA_CACHE_DIR``), a report directory and a private sweep store. Between
mutants the copy is synchronised file by file (only files whose size or mtime differ are
copied again), so its paths and mtimes stay those of the source tree and numba's on-disk
cache, keyed by file path and mtime, is reused from one mutant to the next.

Numba. Numba's cache is invalidated by an edit of a function's own file only, not of a callee
in another module. A mutant that reaches a numba module (its own file, or a module importing
it directly or not) therefore runs with the slot's second cache directory, ``numba-dirty/``,
refilled for each such mutant from the clean cache less the entries of the mutated module
and of every module importing it (those also get a fresh mtime): they compile against the
mutant, every other kernel is loaded as before, and the clean cache only ever holds code
compiled from the unmutated snapshot.

Sweep store. Checks read simulation cells from a store shared by all slots
(``<work>/sweep-store``): its code-version key hashes the simulation modules' source, so a
cell is reused only under the same code. A mutant in a module the simulations import (the
sweep providers of :mod:`numerics.sweep.registry`, their imports, the sweep layer itself)
runs with an emptied private store instead: it recomputes its cells and never overwrites a
shared one.

Verdicts. A mutant is *killed by the audit* when its check run times out, exits with another
status than the baseline run of the same checks on the unmutated tree, fails a test the
baseline passes, or gives any claim a verdict other than the baseline's. The checks run are the
catalogue's plus every other check of the claims those decide (:meth:`Runner.audit_set`), so that
each such claim gets a verdict to compare. Baselines are computed
once per distinct set of checks and cached on disk under a hash of the tree's contents. It is
*killed by the tests* when its library tests (``tests``) time out or fail where the baseline
passes.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from verify.__main__ import check_nodeids

from .catalogue import Mutant, problems

DEFAULT_TIMEOUT = 600  # seconds per pytest run of one mutant (a hung mutant is killed and counted as caught)
_SINGLE_THREAD = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_work_dir() -> Path:
    """``<system temp>/paper-audit-mutation``: the fixed home of the slots, the shared store and the baselines."""
    return Path(tempfile.gettempdir()) / "paper-audit-mutation"


def repo_files(root: Path) -> list[str]:
    """Tracked and untracked-not-ignored files of the git work tree at ``root`` that exist."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True, check=True
    )
    names = sorted({n for n in out.stdout.decode().split("\0") if n})
    return [n for n in names if (root / n).is_file() and not (root / n).is_symlink()]


def tree_digest(root: Path, files: list[str]) -> str:
    """SHA-256 over the names and contents of ``files``: the identity of a tree for cached baselines."""
    h = hashlib.sha256()
    for name in files:
        h.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return h.hexdigest()


class RunError(RuntimeError):
    """The run cannot be judged: a mutant does not apply to the snapshot, or a baseline did not run."""


# --- the import graph (which modules a mutated file reaches) ------------------------------------------


def _module_name(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts else None


def _imports(root: Path, path: str, known: set[str]) -> set[str]:
    """Repository modules that the module file ``path`` imports (absolute and relative imports)."""
    try:
        tree = ast.parse((root / path).read_text())
    except (SyntaxError, UnicodeDecodeError, OSError):
        return set()
    pkg = _module_name(path) or ""
    if not path.endswith("__init__.py"):
        pkg = pkg.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = pkg.split(".") if pkg else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, base] if base else anchor)
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            while name:
                if name in known:
                    found.add(name)
                    break
                name = name.rpartition(".")[0]
    return found


@dataclass
class ImportGraph:
    """Module -> file and module -> imported repository modules, for the Python files of a tree."""

    files: dict[str, str]
    imports: dict[str, set[str]]

    @classmethod
    def of(cls, root: Path, files: list[str]) -> ImportGraph:
        mods = {m: f for f in files if (m := _module_name(f))}
        known = set(mods)
        return cls(mods, {m: _imports(root, f, known) for m, f in mods.items()})

    def closure(self, starts) -> set[str]:
        """The modules ``starts`` import, directly or not, themselves included."""
        seen, todo = set(), [s for s in starts if s in self.files]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo += [n for n in self.imports.get(m, ()) if n not in seen]
        return seen

    def dependents(self, module: str) -> set[str]:
        """The modules that import ``module``, directly or not (``module`` excluded)."""
        return {m for m in self.files if m != module and module in self.closure([m])}


def simulation_modules(root: Path, graph: ImportGraph) -> set[str]:
    """Modules whose code can reach stored simulation cells: the sweep providers, their imports, the sweep layer."""
    starts = {"numerics.sweep.registry", "verify.sweeps"}
    reg = graph.files.get("numerics.sweep.registry")
    if reg:
        try:
            tree = ast.parse((root / reg).read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PROVIDERS" for t in node.targets):
                    starts |= set(ast.literal_eval(node.value))
        except (SyntaxError, ValueError, OSError):
            starts |= {m for m in graph.files if m.startswith("numerics.")}  # unreadable: be conservative
    starts |= {m for m in graph.files if m.startswith("numerics.sweep")}
    return graph.closure(starts)


# --- one pytest run --------------------------------------------------------------------------------------


@dataclass
class PytestRun:
    """What one pytest run gave: exit status, verdicts per claim, failing node ids, duration."""

    rc: int | None  # None: timed out
    seconds: float
    verdicts: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    tail: str = ""

    @property
    def timed_out(self) -> bool:
        return self.rc is None


def _failures(junit: Path) -> list[str]:
    if not junit.is_file():
        return []
    try:
        tree = ET.parse(junit)
    except ET.ParseError:
        return []
    out = []
    for case in tree.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            out.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return sorted(out)


def run_pytest(
    cwd: Path, args: list[str], env: dict, timeout: float, report_dir: Path | None, junit: Path
) -> PytestRun:
    """``python -m pytest ARGS`` in ``cwd`` in its own process group; killed (group) after ``timeout`` s."""
    if report_dir is not None:
        shutil.rmtree(report_dir, ignore_errors=True)
    junit.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q", f"--junitxml={junit}"]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = None
    seconds = time.monotonic() - t0
    verdicts = {}
    if report_dir is not None and (report_dir / "report.json").is_file():
        try:
            report = json.loads((report_dir / "report.json").read_text())
            verdicts = {c["id"]: c["verdict"] for c in report.get("claims", [])}
        except (ValueError, KeyError, TypeError):
            verdicts = {}
    text = out.decode(errors="replace") if out else ""
    return PytestRun(rc, round(seconds, 1), verdicts, _failures(junit), text[-3000:])


def sync_tree(src: Path, dst: Path, files: list[str], *, compare_bytes: bool = False) -> None:
    """Make ``dst`` hold exactly ``files`` of ``src``, copied with their mtimes (``shutil.copy2``).

    A file is copied again only when its size or mtime differ (or, with ``compare_bytes``,
    its bytes); files under ``dst`` that are not in ``files`` are removed (``__pycache__``
    directories are left: Python checks them against the source's mtime and size).
    """
    wanted = set(files)
    dst.mkdir(parents=True, exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(dst, topdown=True):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for fn in filenames:
            full = os.path.join(dirpath, fn)
            if os.path.relpath(full, dst) not in wanted:
                os.unlink(full)
    for name in files:
        s_path, d_path = src / name, dst / name
        s = s_path.stat()
        try:
            d = d_path.stat()
            same = d.st_size == s.st_size and d.st_mtime_ns == s.st_mtime_ns
            if same and compare_bytes:
                same = s_path.read_bytes() == d_path.read_bytes()
        except FileNotFoundError:
            same = False
        if not same:
            d_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s_path, d_path)


# --- slots -----------------------------------------------------------------------------------------------


class Slot:
    """One job slot's fixed workspace (see the module docstring)."""

    def __init__(
        self, work: Path, index: int, source: Path, files: list[str], shared_store: Path, papers: Path | None = None
    ):
        self.dir = work / f"slot-{index}"
        self.repo = self.dir / "repo"
        self.source, self.files, self.shared_store = source, files, shared_store
        for sub in ("repo", "numba-cache", "numba-dirty", "store"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        # the checks that read the papers' texts find them at ../shared next to the repository, as in a checkout
        link = self.dir / "shared"
        if papers is not None and papers.is_dir() and not link.exists():
            link.symlink_to(papers, target_is_directory=True)

    def refresh(self) -> None:
        """Make ``repo/`` an exact copy of the snapshot (same bytes, same mtimes); drop any other file."""
        sync_tree(self.source, self.repo, self.files)

    def seed_dirty_cache(self, stale_files: list[str]) -> None:
        """Fill ``numba-dirty/`` afresh with the clean cache's entries, less those of ``stale_files``.

        :mod:`numerics` keys the cache directory to the kernels' source (``<dir>/code-<key>``),
        so the clean entries sit under the snapshot's key and the mutant looks under its own:
        they are copied across. Inside, numba holds a file's entries as
        ``<dir>_<sha1 of dir>/<stem>.*`` (``_CacheLocator.get_suitable_cache_subpath``); the
        entries of a mutated module and of every module importing it are left out, so they
        compile afresh, while every other kernel is loaded from the clean cache.
        """
        from numerics import numba_code_key

        clean = self.dir / "numba-cache" / f"code-{numba_code_key(self.source / 'numerics')}"
        dirty_base = self.dir / "numba-dirty"
        dirty = dirty_base / f"code-{numba_code_key(self.repo / 'numerics')}"
        shutil.rmtree(dirty_base, ignore_errors=True)
        skip = set()
        for name in stale_files:
            folder = os.path.dirname(os.path.abspath(self.repo / name))
            sub = os.path.basename(folder) + "_" + hashlib.sha1(folder.encode()).hexdigest()
            skip.add((sub, Path(name).stem + "."))
        for path in clean.rglob("*") if clean.is_dir() else ():
            if not path.is_file():
                continue
            rel = path.relative_to(clean)
            if any(rel.parts[0] == sub and rel.name.startswith(stem) for sub, stem in skip):
                continue
            (dirty / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dirty / rel)
        dirty.mkdir(parents=True, exist_ok=True)

    def env(self, dirty: bool) -> dict:
        env = dict(os.environ)
        env.update({name: "1" for name in _SINGLE_THREAD})
        env.update(
            PYTHONPATH=str(self.repo),
            PYTHONDONTWRITEBYTECODE="1",
            MPLBACKEND="Agg",
            HYPOTHESIS_PROFILE="ci",
            NUMBA_CACHE_DIR=str(self.dir / ("numba-dirty" if dirty else "numba-cache")),
        )
        env.pop("AUDIT_PROFILE", None)
        env.pop("CI", None)
        return env

    def audit(self, checks, *, store: Path | None, dirty: bool, timeout: float, maxfail: bool) -> PytestRun:
        report = self.dir / "report"
        args = [*checks, "--report-dir", str(report), "--scheduler", "serial", "--sweep-store", str(store)]
        if maxfail:
            args.append("--maxfail=1")
        return run_pytest(self.repo, args, self.env(dirty), timeout, report, self.dir / "audit-junit.xml")

    def tests(self, tests, *, dirty: bool, timeout: float, maxfail: bool) -> PytestRun:
        args = list(tests) + (["--maxfail=1"] if maxfail else [])
        return run_pytest(self.repo, args, self.env(dirty), timeout, None, self.dir / "tests-junit.xml")


# --- judging ---------------------------------------------------------------------------------------------


def judge(base: PytestRun, run: PytestRun) -> tuple[bool, str, dict]:
    """(killed, reason, changed verdicts {claim: [baseline, mutant]}) of a mutant run against its baseline."""
    if run.timed_out:
        return True, "timeout", {}
    changed = {
        c: [v, run.verdicts.get(c, "(missing)")]
        for c, v in base.verdicts.items()
        if run.verdicts.get(c, "(missing)") != v
    }
    new_failures = sorted(set(run.failed) - set(base.failed))
    reasons = []
    if (run.rc != 0) != (base.rc != 0) or (run.rc != base.rc and run.rc not in (0, 1)):
        reasons.append(f"exit status {run.rc} (baseline {base.rc})")
    if new_failures:
        reasons.append("failed: " + ", ".join(new_failures[:5]) + (" ..." if len(new_failures) > 5 else ""))
    if changed:
        reasons.append("verdicts changed: " + ", ".join(f"{c} {a}->{b}" for c, (a, b) in list(changed.items())[:8]))
    if base.verdicts and not run.verdicts and not run.timed_out:
        reasons.append("no report written")
    return bool(reasons), "; ".join(reasons), changed


@dataclass
class Outcome:
    """The result of one mutant (JSON-ready through :meth:`as_dict`)."""

    id: str
    area: str
    description: str
    killed_by_audit: bool
    audit_reason: str
    audit_seconds: float
    changed_verdicts: dict
    timeout: bool = False
    killed_by_tests: bool | None = None  # None: the mutant names no tests
    tests_reason: str = ""
    tests_seconds: float = 0.0
    store: str = "shared"
    audit_tail: str = ""

    def as_dict(self) -> dict:
        d = asdict(self)
        if self.killed_by_audit:
            d.pop("audit_tail")
        return d


def claim_siblings(by_claim: dict[str, list[str]]) -> dict[str, set[str]]:
    """{check node id: the node ids of every check of the same claim} from {claim id: node ids}.

    >>> claim_siblings({"A": ["t.py::f", "t.py::g"], "B": ["t.py::g", "u.py::h"]})["t.py::g"] == {
    ...     "t.py::f", "t.py::g", "u.py::h"}
    True
    """
    out: dict[str, set[str]] = {}
    for nodes in by_claim.values():
        for n in nodes:
            out.setdefault(n, set()).update(nodes)
    return out


# --- the runner ------------------------------------------------------------------------------------------


class Runner:
    """Runs mutants in ``jobs`` parallel slots against baselines of the unmutated tree at ``source``.

    ``timeout`` bounds each pytest run of a mutant (past it the mutant counts as hung, hence
    caught); ``baseline_timeout`` (default: ``timeout``) bounds each run of the unmutated tree,
    whose overrun abandons the whole run (:class:`RunError`). Both must be positive.
    """

    def __init__(
        self,
        source: Path,
        *,
        jobs: int = 1,
        work: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        baseline_timeout: float | None = None,
        log: Callable[[str], None] | None = None,
    ):
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1; got {jobs}")
        for name, t in (("timeout", timeout), ("baseline_timeout", baseline_timeout)):
            if t is not None and not t > 0:
                raise ValueError(f"{name} must be a positive number of seconds; got {t!r}")
        self.source = Path(source).resolve()
        self.jobs, self.timeout = jobs, timeout
        # the unmutated runs may get longer than a mutant's (a short mutant timeout catches a hang sooner)
        self.baseline_timeout = timeout if baseline_timeout is None else baseline_timeout
        self.work = Path(work) if work is not None else default_work_dir()
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.files = repo_files(self.source)
        self.papers = self.source.resolve().parent / "shared"  # the paper texts, linked into every slot
        # One snapshot of the tree for the whole run: baselines and mutants see the same files
        # however the working tree changes meanwhile.
        self.snapshot = self.work / "snapshot"
        sync_tree(self.source, self.snapshot, self.files, compare_bytes=True)
        self.digest = tree_digest(self.snapshot, self.files)
        self.graph = ImportGraph.of(self.snapshot, self.files)
        self.sim_modules = simulation_modules(self.snapshot, self.graph)
        self.numba_modules = {m for m, f in self.graph.files.items() if "njit" in (self.snapshot / f).read_text()}
        self.shared_store = self.work / "sweep-store"
        self.shared_store.mkdir(parents=True, exist_ok=True)
        (self.work / "baselines").mkdir(parents=True, exist_ok=True)
        self._slots: queue.Queue[Slot] = queue.Queue()
        for k in range(jobs):
            self._slots.put(Slot(self.work, k, self.snapshot, self.files, self.shared_store, self.papers))
        self._baselines: dict[tuple, PytestRun] = {}
        self._lock = threading.Lock()
        # {check node id: every check of its claim}, read statically from the snapshot's decorators
        self.claim_checks = claim_siblings(check_nodeids(self.snapshot / "verify"))

    # baselines
    def _baseline_path(self, kind: str, nodes: tuple[str, ...]) -> Path:
        key = hashlib.sha256(json.dumps([self.digest, kind, list(nodes), sys.version]).encode()).hexdigest()[:32]
        return self.work / "baselines" / f"{kind}-{key}.json"

    def baseline(self, kind: str, nodes: tuple[str, ...]) -> PytestRun:
        """The unmutated run of ``nodes`` (``kind`` 'audit' or 'tests'), from the disk cache when there."""
        key = (kind, nodes)
        with self._lock:
            if key in self._baselines:
                return self._baselines[key]
        path = self._baseline_path(kind, nodes)
        if path.is_file():
            try:
                run = PytestRun(**json.loads(path.read_text()))
                with self._lock:
                    self._baselines[key] = run
                return run
            except (ValueError, TypeError):
                pass
        slot = self._slots.get()
        try:
            slot.refresh()
            if kind == "audit":
                run = slot.audit(
                    nodes, store=self.shared_store, dirty=False, timeout=self.baseline_timeout, maxfail=False
                )
            else:
                run = slot.tests(nodes, dirty=False, timeout=self.baseline_timeout, maxfail=False)
        finally:
            self._slots.put(slot)
        if run.timed_out:
            raise RunError(f"baseline of {kind} {' '.join(nodes)} timed out after {self.baseline_timeout} s")
        if run.rc not in (0, 1) or (kind == "audit" and not run.verdicts):
            raise RunError(f"baseline of {kind} {' '.join(nodes)} did not run (exit {run.rc}):\n{run.tail}")
        if run.rc != 0:
            self.log(f"warning: the unmutated tree fails {kind} {' '.join(nodes)}: {', '.join(run.failed)}")
        path.write_text(json.dumps(asdict(run)))
        with self._lock:
            self._baselines[key] = run
        return run

    def baselines(self, mutants: list[Mutant]) -> None:
        """Compute every baseline the mutants need (in parallel slots), before any mutant runs."""
        needed = sorted(
            {("audit", self.audit_set(m)) for m in mutants}
            | {("tests", tuple(sorted(set(m.tests)))) for m in mutants if m.tests}
        )
        t0 = time.monotonic()
        with ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(lambda kn: self.baseline(*kn), needed))
        self.log(f"baselines: {len(needed)} check sets in {time.monotonic() - t0:.0f} s")

    def audit_set(self, m: Mutant) -> tuple[str, ...]:
        """The audit checks a mutant runs: its own, plus every other check of each claim one of them decides, then
        its size overrides as ``--set=name=value`` arguments (so a baseline is per check set and sizes).

        A claim's verdict is written only when all of its checks ran; a catalogue entry naming one
        check of a claim with several would otherwise leave that claim ``not-run`` in the baseline
        and in the mutant alike, and a mutant that turned it inconclusive or a discrepancy (without
        failing the named test) would go unseen.
        """
        out = set(m.check_set())
        for c in m.check_set():
            out |= self.claim_checks.get(c.split("[", 1)[0], set())
        return tuple(sorted(out)) + tuple(f"--set={x}" for x in m.sizes)

    # mutants
    def _prepare(self, slot: Slot, m: Mutant) -> tuple[bool, bool]:
        """Apply ``m`` in the slot's fresh copy; returns (touches the simulations, needs the dirty numba cache)."""
        slot.refresh()
        target = slot.repo / m.file
        target.write_text(m.apply_to(target.read_text()))
        module = _module_name(m.file)
        if module not in self.graph.files:
            return False, False
        deps = self.graph.dependents(module)
        now = time.time()
        for dep in deps:
            os.utime(slot.repo / self.graph.files[dep], (now, now))
        dirty = bool(({module} | deps) & self.numba_modules)
        if dirty:
            slot.seed_dirty_cache([self.graph.files[x] for x in {module} | deps])
        return module in self.sim_modules, dirty

    def run_one(self, m: Mutant) -> Outcome:
        checks = self.audit_set(m)
        base = self.baseline("audit", checks)
        tbase = self.baseline("tests", tuple(sorted(set(m.tests)))) if m.tests else None
        slot = self._slots.get()
        try:
            sim, dirty = self._prepare(slot, m)
            store = slot.dir / "store" if sim else self.shared_store
            if sim:
                shutil.rmtree(store, ignore_errors=True)
                store.mkdir(parents=True)
            run = slot.audit(checks, store=store, dirty=dirty, timeout=self.timeout, maxfail=base.rc == 0)
            killed, reason, changed = judge(base, run)
            out = Outcome(
                m.id,
                m.area,
                m.description,
                killed,
                reason,
                run.seconds,
                changed,
                timeout=run.timed_out,
                store="private" if sim else "shared",
                audit_tail="" if killed else run.tail[-800:],
            )
            if tbase is not None:
                trun = slot.tests(sorted(set(m.tests)), dirty=dirty, timeout=self.timeout, maxfail=tbase.rc == 0)
                tk, treason, _ = judge(tbase, trun)
                out.killed_by_tests, out.tests_reason, out.tests_seconds = tk, treason, trun.seconds
                out.timeout = out.timeout or trun.timed_out
        finally:
            slot.refresh()  # leave the slot clean (the mutated file restored)
            self._slots.put(slot)
        return out

    def run(self, mutants: list[Mutant], on_result: Callable[[Outcome], None] | None = None) -> list[Outcome]:
        """Baselines first, then every mutant alone; results in catalogue order.

        Raises :class:`RunError` when a mutant does not apply to the snapshot or a baseline
        cannot run (nothing could be judged against it).
        """
        stale = problems(mutants, self.snapshot)
        if stale:
            raise RunError("stale mutants in the snapshot of the tree:\n  " + "\n  ".join(stale))
        self.baselines(mutants)
        results: dict[str, Outcome] = {}
        lock = threading.Lock()

        def one(m):
            t0 = time.monotonic()
            o = self.run_one(m)
            tag = "TIMEOUT" if o.timeout else ("killed" if o.killed_by_audit else "SURVIVED")
            tests = "" if o.killed_by_tests is None else f", tests: {'killed' if o.killed_by_tests else 'survived'}"
            with lock:
                results[m.id] = o
                self.log(
                    f"[{len(results)}/{len(mutants)}] {m.id}: {tag} by the audit{tests} ({time.monotonic() - t0:.0f} s)"
                )
                if on_result:
                    on_result(o)
            return o

        with ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(one, mutants))
        return [results[m.id] for m in mutants]


def summary(outcomes: list[Outcome]) -> dict:
    """The final JSON line: counts and the ids the audit did not kill."""
    return {
        "mutants": len(outcomes),
        "killed_by_audit": sum(o.killed_by_audit for o in outcomes),
        "killed_by_tests": sum(bool(o.killed_by_tests) for o in outcomes),
        "survivors": [o.id for o in outcomes if not o.killed_by_audit],
    }
