"""The mutation catalogue and runner (verify/mutation): validation, currency, and a run on a toy repository.

``test_every_mutant_applies_to_the_current_tree`` is what keeps the catalogue current: a
mutant whose snippet no longer occurs in its file fails CI here, in seconds, without
running any mutant.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from verify.mutation import AREAS, CatalogueError, Mutant, StaleMutant, load_catalogue, parse_catalogue, problems
from verify.mutation.cli import main, repo_root
from verify.mutation.runner import Outcome, summary

ROOT = Path(__file__).resolve().parents[1]


RAW = dict(
    id="toy-a",
    area="machinery",
    description="a plausible bug",
    file="toy/calc.py",
    old="2 * x",
    new="3 * x",
    checks=["verify/test_toy.py"],
)


def _raw(**over) -> dict:
    """A catalogue entry: ``RAW`` with ``over`` on top; a field given as None is left out."""
    return {k: v for k, v in {**RAW, **over}.items() if v is not None}


def _catalogue_text(*entries: dict) -> str:
    """``entries`` as catalogue TOML, one ``[[mutant]]`` table each (JSON strings and lists are TOML too)."""
    return "".join("\n[[mutant]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in e.items()) for e in entries)


# --- the real catalogue ------------------------------------------------------------------------


def test_catalogue_loads_with_every_area():
    mutants = load_catalogue()
    assert len(mutants) >= 45
    assert len({m.id for m in mutants}) == len(mutants)
    assert {m.area for m in mutants} == set(AREAS)
    assert all(m.checks and all(c.startswith("verify/") for c in m.checks) for m in mutants)


def test_every_mutant_applies_to_the_current_tree():
    stale = problems(load_catalogue(), repo_root())
    assert not stale, "stale mutants (update their `old` snippets):\n" + "\n".join(stale)


def test_check_command_passes(capsys):
    assert main(["check"]) == 0
    assert "every mutant applies" in capsys.readouterr().out


def test_list_command_json(capsys):
    assert main(["list", "--format", "json", "--only", "rg-sgd-batch-sum"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["file"] == "numerics/rare_gates/sim_kernels.py"


# --- validation errors ----------------------------------------------------------------------------


def test_unknown_field_is_named():
    with pytest.raises(CatalogueError, match=r"unknown fields \['severity'\]"):
        parse_catalogue({"mutant": [_raw(severity="high")]})


@pytest.mark.parametrize("field", ["id", "area", "description", "file", "old", "new", "checks"])
def test_missing_field_is_named(field):
    with pytest.raises(CatalogueError, match=f"lacks {field}"):
        parse_catalogue({"mutant": [_raw(**{field: None})]})


def test_duplicate_id():
    with pytest.raises(CatalogueError, match="duplicate mutant id 'toy-a'"):
        parse_catalogue({"mutant": [_raw(), _raw(new="4 * x")]})


@pytest.mark.parametrize(
    "over, message",
    [
        ({"area": "optics"}, "area 'optics'"),
        ({"new": "2 * x"}, "changes nothing"),
        ({"checks": []}, "at least one check"),
        ({"checks": ["tests/test_x.py"]}, "under verify/"),
        ({"tests": ["verify/test_toy.py"]}, "under tests/"),
        ({"file": "../outside.py"}, "inside the repository"),
        ({"occurrence": 0}, "occurrence"),
        ({"id": "Toy A"}, "lower case"),
        ({"sizes": "joint_inits=64"}, "size overrides"),
        ({"sizes": ["joint_inits"]}, "size overrides"),
    ],
)
def test_bad_values(over, message):
    with pytest.raises(CatalogueError, match=message):
        parse_catalogue({"mutant": [_raw(**over)]})


def test_missing_catalogue_file(tmp_path):
    with pytest.raises(CatalogueError, match="does not exist"):
        load_catalogue(tmp_path / "nope.toml")


def test_invalid_toml(tmp_path):
    path = tmp_path / "cat.toml"
    path.write_text("[[mutant]\nid = 1\n")
    with pytest.raises(CatalogueError, match="not valid TOML"):
        load_catalogue(path)


def test_file_not_found_and_stale_snippets(tmp_path):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "calc.py").write_text("def f(x):\n    return 2 * x + 2 * x\n")
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "test_toy.py").write_text("def test_f():\n    pass\n")
    mutants = parse_catalogue(
        {
            "mutant": [
                _raw(id="gone", file="toy/missing.py"),
                _raw(id="twice"),
                _raw(id="second", occurrence=2),
                _raw(id="absent", old="5 * x", new="6 * x"),
                _raw(id="bad-node", old="return", new="yield", checks=["verify/test_toy.py::test_g"]),
            ]
        }
    )
    found = problems(mutants, tmp_path)
    assert "gone: file toy/missing.py not found" in found
    assert any(s.startswith("twice: `old` occurs 2 times") and "occurrence" in s for s in found)
    assert any(s.startswith("absent: `old` occurs 0 times") for s in found)
    assert "bad-node: verify/test_toy.py defines no 'test_g'" in found
    assert not any(s.startswith("second") for s in found)
    second = next(m for m in mutants if m.id == "second")
    assert second.apply_to("2 * x + 2 * x") == "2 * x + 3 * x"


def test_stale_mutant_error():
    m = Mutant("x", "machinery", "d", "f.py", "a", "b", ("verify/t.py",))
    with pytest.raises(StaleMutant, match="occurs 0 times"):
        m.apply_to("zzz")


# --- the JSON line --------------------------------------------------------------------------------


def test_summary_line_format():
    outs = [
        Outcome("a", "machinery", "d", True, "exit status 1", 1.0, {}, killed_by_tests=True),
        Outcome("b", "machinery", "d", False, "", 1.0, {}, killed_by_tests=False),
        Outcome("c", "machinery", "d", True, "timeout", 9.0, {}, timeout=True),
    ]
    line = json.dumps(summary(outs))
    assert json.loads(line) == {"mutants": 3, "killed_by_audit": 2, "killed_by_tests": 1, "survivors": ["b"]}
    assert list(json.loads(line)) == ["mutants", "killed_by_audit", "killed_by_tests", "survivors"]


# --- the runner on a toy repository ---------------------------------------------------------------

TOY_CONFTEST = """
import json
import pathlib

import pytest


def pytest_addoption(parser):
    for name in ("--report-dir", "--scheduler", "--sweep-store"):
        parser.addoption(name, default=None)


def pytest_configure(config):
    config.addinivalue_line("markers", "claim(id): the claim a check checks")
    config.toy_verdicts = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    mark = item.get_closest_marker("claim")
    if mark is not None and report.when == "call":
        item.config.toy_verdicts[mark.args[0]] = "confirmed" if report.passed else "check-failed"
    return report


def pytest_sessionfinish(session):
    out = session.config.getoption("--report-dir")
    if out:
        path = pathlib.Path(out)
        path.mkdir(parents=True, exist_ok=True)
        claims = [{"id": k, "verdict": v} for k, v in session.config.toy_verdicts.items()]
        (path / "report.json").write_text(json.dumps({"claims": claims}))
"""

TOY_CALC = """
def double(x):
    return 2 * x


def half(x):
    return x / 2


def settle():
    return 0
"""

TOY_CHECK = """
import pytest

from toy.calc import double, half, settle


@pytest.mark.claim("TOY-1")
def test_double_and_half():
    assert double(3) == 6 and half(3) == 1.5


@pytest.mark.claim("TOY-2")
def test_settles():
    assert settle() == 0
"""

TOY_TEST = """
from toy.calc import double


def test_double():
    assert double(-2) == -4
"""

TOY_KILLABLE = {"checks": ["verify/test_toy.py::test_double_and_half"], "tests": ["tests/test_calc.py"]}
TOY_CATALOGUE = _catalogue_text(
    _raw(id="toy-kill", description="double triples", old="return 2 * x", new="return 3 * x", **TOY_KILLABLE),
    _raw(
        id="toy-equivalent",
        description="halving by multiplication: the same IEEE result",
        old="return x / 2",
        new="return x * 0.5",
        **TOY_KILLABLE,
    ),
    _raw(id="toy-hang", description="settle never returns", old="    return 0", new="    while True:\n        pass"),
)


TOY_FILES = {
    "conftest.py": TOY_CONFTEST,
    "toy/__init__.py": "",
    "toy/calc.py": TOY_CALC,
    "verify/test_toy.py": TOY_CHECK,
    "tests/test_calc.py": TOY_TEST,
    "notes.txt": "ignored\n",
    ".gitignore": "notes.txt\n",
}


def _write_toy(root: Path) -> None:
    """The toy repository's files (``TOY_FILES``) under ``root``."""
    for name, text in TOY_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the toy repository's files")
    root = tmp_path_factory.mktemp("toyrepo")
    _write_toy(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    catalogue = root.parent / "toy-catalogue.toml"
    catalogue.write_text(TOY_CATALOGUE)
    work = root.parent / "work"
    return root, catalogue, work


# A toy pytest run takes about a second, more on a loaded machine: the mutants that finish get a
# timeout far above that (an overrun would be misread as a hang), the hung one a short one, so that
# the hang costs ~2 s of a spinning process instead of the whole allowance.
FINISHING, HANG = "120", "2"


def _run_toy(toy_run, *options: str, timeout: str = FINISHING) -> int:
    """``run`` on the toy repository with ``options``; ``timeout`` s at most a mutant's run, 120 s a baseline's.

    The toy's pytest runs load no third-party plugin (the toy needs none; loading hypothesis and the
    others would cost about 1.3 CPU-s in each of its ten runs).
    """
    root, catalogue, work = toy_run
    paths = ["--catalogue", str(catalogue), "--root", str(root), "--work-dir", str(work)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return main(["run", *options, "--timeout", timeout, "--baseline-timeout", FINISHING, *paths])


def _json_lines(capsys) -> tuple[dict, dict]:
    """The per-mutant records by id and the final summary of a ``--format json`` run."""
    lines = capsys.readouterr().out.strip().splitlines()
    return {d["mutant"]["id"]: d["mutant"] for d in map(json.loads, lines[:-1])}, json.loads(lines[-1])


def test_runner_kills_a_bug_and_reports_an_equivalent_mutant(toy_run, capsys):
    root, _catalogue, work = toy_run
    rc = _run_toy(toy_run, "--format", "json", "--jobs", "2", "--only", "toy-kill", "toy-equivalent")
    details, final = _json_lines(capsys)
    assert rc == 0
    assert final == {"mutants": 2, "killed_by_audit": 1, "killed_by_tests": 1, "survivors": ["toy-equivalent"]}
    assert set(details) == {"toy-kill", "toy-equivalent"}
    kill = details["toy-kill"]
    assert kill["killed_by_audit"] and kill["killed_by_tests"] and not kill["timeout"]
    assert kill["changed_verdicts"] == {"TOY-1": ["confirmed", "check-failed"]}
    assert details["toy-equivalent"]["killed_by_tests"] is False
    # the scratch copies are clean copies of the tree afterwards: mutants restored, ignored files not copied
    for copy in (work / "slot-0" / "repo", work / "slot-1" / "repo"):
        assert (copy / "toy" / "calc.py").read_text() == (root / "toy" / "calc.py").read_text()
        assert not (copy / "notes.txt").exists()
    # baselines were cached on disk under the tree's digest: the audit's check set and the tests
    assert {p.name.split("-")[0] for p in (work / "baselines").glob("*.json")} == {"audit", "tests"}


def test_runner_counts_a_hung_mutant_as_caught(toy_run, capsys):
    """A mutant's run past ``--timeout`` is killed and counted as caught; the baseline has its own allowance."""
    root, _catalogue, work = toy_run
    rc = _run_toy(toy_run, "--format", "json", "--only", "toy-hang", timeout=HANG)
    details, final = _json_lines(capsys)
    assert rc == 0
    assert final == {"mutants": 1, "killed_by_audit": 1, "killed_by_tests": 0, "survivors": []}
    hang = details["toy-hang"]
    assert hang["timeout"] and hang["audit_reason"] == "timeout" and hang["killed_by_tests"] is None
    # killed at the mutant's 2 s, not at the baseline's 120 s
    assert float(HANG) <= hang["audit_seconds"] < float(FINISHING)
    assert (work / "slot-0" / "repo" / "toy" / "calc.py").read_text() == (root / "toy" / "calc.py").read_text()


@pytest.mark.parametrize("flag", ["--timeout", "--baseline-timeout"])
def test_run_refuses_a_non_positive_timeout(toy_run, capsys, flag):
    root, catalogue, work = toy_run
    assert main(["run", flag, "0", "--catalogue", str(catalogue), "--root", str(root), "--work-dir", str(work)]) == 2
    assert f"error: {flag} must be a positive number of seconds; got 0.0" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["timeout", "baseline_timeout"])
def test_runner_names_a_non_positive_timeout(tmp_path, name):
    from verify.mutation.runner import Runner

    with pytest.raises(ValueError, match=rf"^{name} must be a positive number of seconds; got -1$"):
        Runner(tmp_path, work=tmp_path / "work", **{name: -1})


def test_runner_strict_exit_status(toy_run, capsys):
    rc = _run_toy(toy_run, "--strict", "--only", "toy-equivalent")
    out = capsys.readouterr().out
    assert rc == 1
    assert "survivors: toy-equivalent" in out


def test_run_refuses_stale_mutants(tmp_path, capsys):
    path = tmp_path / "cat.toml"
    path.write_text(TOY_CATALOGUE.replace('old = "return 2 * x"', 'old = "return 7 * x"'))
    _write_toy(tmp_path)
    assert main(["check", "--catalogue", str(path), "--root", str(tmp_path)]) == 1
    assert "stale: toy-kill: `old` occurs 0 times in toy/calc.py" in capsys.readouterr().out
    assert main(["run", "--catalogue", str(path), "--root", str(tmp_path)]) == 1
    assert "fix the stale mutants first" in capsys.readouterr().err


def test_slots_see_the_paper_texts_next_to_their_repository(tmp_path):
    """A slot links ../shared to the checkout's, so checks that read the papers run there as in a checkout."""
    from verify.mutation.runner import Slot

    papers = tmp_path / "shared"
    (papers / "papers").mkdir(parents=True)
    slot = Slot(tmp_path / "work", 0, tmp_path / "snapshot", [], tmp_path / "store", papers)
    assert (slot.repo.parent / "shared" / "papers").is_dir()
    assert (
        Slot(tmp_path / "work2", 0, tmp_path / "snapshot", [], tmp_path / "store", None).dir.joinpath("shared").exists()
        is False
    )


SIBLING_CHECKS = """
from verify.audit import claim


@claim("A-1")
def test_first_part():
    pass


@claim("A-1")
def test_second_part():
    pass


@claim("B-1")
def test_other_claim():
    pass
"""


def test_a_mutant_runs_every_check_of_the_claims_it_names(tmp_path):
    """A catalogue entry naming one check of a two-check claim runs both (else the claim is not-run in both runs)."""
    from verify.mutation.runner import Runner

    if shutil.which("git") is None:
        pytest.skip("git is needed to list the repository's files")
    root = tmp_path / "repo"
    (root / "verify").mkdir(parents=True)
    (root / "verify" / "test_parts.py").write_text(textwrap.dedent(SIBLING_CHECKS))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    runner = Runner(root, work=tmp_path / "work")
    one = "verify/test_parts.py::test_first_part"
    m = Mutant("m", "machinery", "d", "verify/test_parts.py", "pass", "pass", (one,))
    assert runner.audit_set(m) == (one, "verify/test_parts.py::test_second_part")
    whole_file = Mutant("w", "machinery", "d", "verify/test_parts.py", "pass", "pass", ("verify/test_parts.py",))
    assert runner.audit_set(whole_file) == ("verify/test_parts.py",)
    # size overrides ride along as --set arguments, so the baseline is per check set and sizes
    sized = Mutant("s", "machinery", "d", "verify/test_parts.py", "pass", "pass", (one,), sizes=("joint_inits=64",))
    assert runner.audit_set(sized) == (one, "verify/test_parts.py::test_second_part", "--set=joint_inits=64")


def test_sizes_are_parsed():
    (m,) = parse_catalogue({"mutant": [_raw(sizes=["joint_inits=64", "cor3_times=1"])]})
    assert m.sizes == ("joint_inits=64", "cor3_times=1")
