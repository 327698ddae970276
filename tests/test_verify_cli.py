"""``python -m verify diff`` and ``python -m verify list``: output, exit statuses, both report versions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.synthetic_report import synthetic_report
from verify import __main__ as verify_main
from verify.diff import diff_reports, load_report
from verify.registry import load_registry
from verify.report import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]


def run_cli(argv, capsys):
    code = verify_main.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The synthetic report (version 1), a rerun of it with changes, and a version-0 copy of the first."""
    directory = tmp_path_factory.mktemp("reports")
    base = synthetic_report(directory / "base")
    other = json.loads(json.dumps(base))
    by_id = {c["id"]: c for c in other["claims"]}
    by_id["T-1.mc"]["verdict"] = "confirmed"  # a verdict changed
    by_id["T-1.ok"]["ours"] = by_id["T-1.ok"]["ours"].replace("0.59471526", "0.59471527")  # a value changed
    by_id["T-1.ok"]["values"][0]["value"] += 1e-8
    by_id["T-2.none"]["verdict"] = "confirmed"  # not run before
    paths = {"base": directory / "base" / "report.json", "other": directory / "other.json"}
    paths["other"].write_text(json.dumps(other))
    v0 = {k: v for k, v in base.items() if k not in ("schema_version", "environment", "git_dirty")}
    v0["claims"] = [
        {k: v for k, v in c.items() if k not in ("values", "tolerance", "check_outcomes")} for c in base["claims"]
    ]
    paths["v0"] = directory / "v0.json"
    paths["v0"].write_text(json.dumps(v0))
    (directory / "bad.json").write_text("{not json")
    paths["bad"] = directory / "bad.json"
    (directory / "v7.json").write_text(json.dumps({**base, "schema_version": 7}))
    paths["v7"] = directory / "v7.json"
    return paths


# ------------------------------------------------------------------------------ diff


def test_diff_of_identical_reports_exits_0(reports, capsys):
    code, out, err = run_cli(["diff", str(reports["base"]), str(reports["base"])], capsys)
    assert code == 0 and err == ""
    assert out.strip().splitlines()[-1] == "8 claims compared, 0 verdicts changed, 0 values changed"


def test_diff_lists_verdict_and_value_changes_and_exits_1(reports, capsys):
    code, out, err = run_cli(["diff", str(reports["base"]), str(reports["other"])], capsys)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert "verdicts changed (1):" in lines and "  T-1.mc: inconclusive -> confirmed" in lines
    assert "run in one report only (1):" in lines and "  T-2.none: not-run -> confirmed" in lines
    assert "values changed (1):" in lines
    assert any(line.startswith("  T-1.ok: R_col = 0.59471526") and "-> R_col = 0.59471527" in line for line in lines)
    assert any(line.startswith("    relative change: R_col: 1.7e-08") for line in lines)


def test_diff_json(reports, capsys):
    code, out, _ = run_cli(["diff", str(reports["base"]), str(reports["other"]), "--format", "json"], capsys)
    d = json.loads(out)
    assert code == 1 and d["verdicts"] == [{"id": "T-1.mc", "base": "inconclusive", "other": "confirmed"}]
    assert [v["id"] for v in d["values"]] == ["T-1.ok"] and d["added"] == d["removed"] == []


def test_diff_reads_version_0_against_version_1(reports, capsys):
    code, out, err = run_cli(["diff", str(reports["v0"]), str(reports["base"])], capsys)
    assert (code, err) == (0, "") and "0 verdicts changed, 0 values changed" in out
    code, out, _ = run_cli(["diff", str(reports["v0"]), str(reports["other"])], capsys)
    assert code == 1 and "T-1.mc: inconclusive -> confirmed" in out


def test_diff_lists_added_and_removed_claims():
    a = {"claims": [{"id": "A", "verdict": "confirmed"}, {"id": "B", "verdict": "confirmed"}]}
    b = {"claims": [{"id": "A", "verdict": "confirmed"}, {"id": "C", "verdict": "confirmed"}]}
    d = diff_reports(a, b)
    assert (d["added"], d["removed"], d["verdicts"]) == (["C"], ["B"], [])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["diff"], "python -m verify diff: error: the following arguments are required: old, new"),
        (["diff", "a.json"], "python -m verify diff: error: the following arguments are required: new"),
        (["diff", "{base}", "{base}", "--format", "xml"], "python -m verify diff: error: argument --format: invalid"),
        (["diff", "{base}", "/nonexistent/report.json"], "report /nonexistent/report.json does not exist"),
        (["diff", "{bad}", "{base}"], "is not an audit report.json"),
        (["diff", "{base}", "{v7}"], "unknown report schema_version 7"),
        (["diff", "{base}", "{dir}"], "is a directory"),
    ],
)
def test_diff_usage_errors_exit_2_with_one_line(reports, capsys, argv, message):
    paths = {k: str(v) for k, v in reports.items()} | {"dir": str(reports["base"].parent)}
    code, out, err = run_cli([a.format(**paths) for a in argv], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_compare_still_reads_both_versions(reports):
    cmd = [sys.executable, "-m", "verify.compare"]
    same = subprocess.run([*cmd, str(reports["v0"]), str(reports["base"])], capture_output=True, text=True, cwd=ROOT)
    assert same.returncode == 0, same.stderr
    changed = subprocess.run([*cmd, str(reports["base"]), str(reports["other"])], capture_output=True, text=True)
    assert changed.returncode == 1 and "T-1.mc: inconclusive -> confirmed" in changed.stdout


def test_load_report_migrates(reports):
    assert load_report(reports["v0"])["schema_version"] == SCHEMA_VERSION


# ------------------------------------------------------------------------------ list


@pytest.fixture(scope="module")
def registry():
    return load_registry()


def _report_for_registry(tmp_path, registry) -> Path:
    """A version-0 report naming real claim ids with made-up verdicts and checks."""
    ids = list(registry)[:3]
    claims = [
        {"id": ids[0], "verdict": "discrepancy", "checks": ["verify/x/test_a.py::test_ours [passed]"]},
        {"id": ids[1], "verdict": "confirmed", "checks": [], "last_run": "2026-12-01T10:00:00+00:00"},
        {"id": ids[2], "verdict": "confirmed", "checks": []},
    ]
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"claims": claims}))
    return path


def test_list_reads_verdicts_and_node_ids(tmp_path, capsys, registry):
    path = _report_for_registry(tmp_path, registry)
    code, out, err = run_cli(["list", "--report", str(path), "--format", "json"], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    rows = {r["id"]: r for r in data["claims"]}
    assert len(rows) == len(registry) and data["report"] == str(path)
    first, second = list(registry)[:2]
    assert rows[first]["verdict"] == "discrepancy" and rows[first]["checks"] == ["verify/x/test_a.py::test_ours"]
    assert rows[second]["last_run"] == "2026-12-01T10:00:00+00:00"
    assert all(set(r) == {"id", "paper", "where", "kind", "verdict", "last_run", "checks"} for r in rows.values())


def test_list_filters_by_verdict_and_paper(tmp_path, capsys, registry):
    path = _report_for_registry(tmp_path, registry)
    code, out, _ = run_cli(["list", "--report", str(path), "--verdict", "confirmed"], capsys)
    assert code == 0
    second, third = list(registry)[1:3]
    assert out.splitlines()[-1] == "2 claims"
    assert {line.split()[0] for line in out.splitlines()[:-1] if not line.startswith(" ")} == {second, third}
    paper = registry[second].paper
    code, out, _ = run_cli(["list", "--report", str(path), "--paper", paper, "--format", "json"], capsys)
    assert {r["paper"] for r in json.loads(out)["claims"]} == {paper}


def test_list_finds_node_ids_in_the_check_modules(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no verify-report here: verdicts unknown
    code, out, _ = run_cli(["list", "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["report"] is None
    found = {r["id"]: r["checks"] for r in data["claims"] if r["checks"]}
    assert found, "no check found by parsing verify/**/test_*.py"
    for cid, nodeids in found.items():
        for nodeid in nodeids:
            path, _, name = nodeid.partition("::")
            source = (ROOT / path).read_text()
            assert f'"{cid}"' in source and f"def {name.split('::')[-1]}(" in source
    code, out, _ = run_cli(["list"], capsys)
    assert out.startswith("(no report at verify-report/report.json: verdicts unknown)")


def test_list_node_ids_from_source(tmp_path):
    pkg = tmp_path / "verify"
    (pkg / "p").mkdir(parents=True)
    (pkg / "p" / "test_x.py").write_text(
        "from verify.audit import claim, discrepancy\n"
        "import verify.audit as A\n\n"
        '@claim("T-1.a", reading="r")\ndef test_a(audit):\n    pass\n\n'
        '@discrepancy("T-1.a", reason="r")\ndef test_a_paper(audit):\n    pass\n\n'
        'class TestB:\n    @A.claim("T-1.b")\n    def test_b(self):\n        pass\n\n'
        "def helper():\n    pass\n"
    )
    (pkg / "p" / "test_broken.py").write_text("def (:\n")
    assert verify_main.check_nodeids(pkg) == {
        "T-1.a": ["verify/p/test_x.py::test_a", "verify/p/test_x.py::test_a_paper"],
        "T-1.b": ["verify/p/test_x.py::TestB::test_b"],
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["list", "--verdict", "maybe"], "argument --verdict: unknown verdict 'maybe'"),
        (["list", "--paper", "nope"], "argument --paper: unknown paper 'nope'"),
        (["list", "--report", "/nonexistent/r.json"], "report /nonexistent/r.json does not exist"),
        (["nothing"], "argument COMMAND: invalid choice: 'nothing'"),
        ([], "a command is required (coverage, list, diff)"),
    ],
)
def test_list_usage_errors_exit_2(capsys, argv, message):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err


def test_module_runs_as_a_command():
    proc = subprocess.run([sys.executable, "-m", "verify", "diff"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and proc.stdout == ""
