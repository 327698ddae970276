"""Choosing what the audit runs: --claim, --paper, -k by claim id, partial runs merged into the report.

The plugin runs in-process under ``pytester`` against a temporary registry of a few claims
(two papers), so each inner run takes a fraction of a second; the merge itself is tested as
the pure function :func:`verify.merge.merge_reports`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import verify
from verify.merge import merge_reports, summarize
from verify.registry import PAPERS, load_registry

pytest_plugins = ["pytester"]

# ------------------------------------------------------------------------------ merge (pure)


def _entry(cid: str, verdict: str, paper: str = "multipath", **extra) -> dict:
    return {"id": cid, "paper": paper, "verdict": verdict, **extra}


def _report(generated: str, *claims: dict, **extra) -> dict:
    return {"generated": generated, "profile": "quick", "claims": list(claims), "instruments": [], **extra}


def test_merge_updates_the_claims_run_and_keeps_the_others():
    old = _report(
        "t0",
        _entry("A", "confirmed", last_run="t-1"),
        _entry("B", "discrepancy"),  # a report from before last_run
        _entry("GONE", "confirmed"),  # dropped from the registry since
    )
    new = _report("t1", _entry("A", "not-run"), _entry("B", "check-failed"), _entry("C", "not-run", "rare_gates"))
    merged = merge_reports(old, new, {"B"}, ["--claim B"])
    assert [(c["id"], c["verdict"], c["last_run"]) for c in merged["claims"]] == [
        ("A", "confirmed", "t-1"),
        ("B", "check-failed", "t1"),
        ("C", "not-run", None),
    ]
    assert merged["run"] == {"selection": ["--claim B"], "partial": True}
    assert merged["summary"]["multipath"] == {"confirmed": 1, "check-failed": 1}
    assert merged["summary"]["rare_gates"] == {"not-run": 1} and merged["generated"] == "t1"
    assert old["claims"][0] == _entry("A", "confirmed", last_run="t-1")  # inputs untouched


def test_merge_of_a_full_run_is_the_new_report_stamped():
    new = _report("t1", _entry("A", "confirmed"), _entry("B", "discrepancy"))
    old = _report("t0", _entry("A", "check-failed", last_run="t0"))
    merged = merge_reports(old, new, {"A", "B"}, ["-k anything"])
    assert [(c["verdict"], c["last_run"]) for c in merged["claims"]] == [("confirmed", "t1"), ("discrepancy", "t1")]
    assert merged["run"] == {"selection": None, "partial": False}
    assert merge_reports(None, new, {"A", "B"})["claims"] == merged["claims"]


def test_merge_keeps_instruments_not_calibrated_now():
    old = _report("t0", instruments=[{"name": "a", "outcome": "passed"}, {"name": "b", "outcome": "passed"}])
    new = _report("t1", instruments=[{"name": "b", "outcome": "failed"}])
    assert merge_reports(old, new, set())["instruments"] == [
        {"name": "a", "outcome": "passed"},
        {"name": "b", "outcome": "failed"},
    ]


def test_summarize_matches_build_report(tmp_path, monkeypatch):
    from verify.report import build_report

    monkeypatch.setattr("verify.report._git_revision", lambda root: "test-rev")
    report = build_report(load_registry(), [], "quick", tmp_path)
    assert summarize(report["claims"]) == report["summary"]
    assert list(summarize([])) == list(PAPERS)


# ------------------------------------------------------------------------------ the plugin (pytester)

_INI = """
[pytest]
markers =
    claim(id, reading=None, discrepancy=None): ties a check to a registered paper claim
    instrument(name, reference): calibrates an instrument
"""

_CHECKS = """
import os
import pytest
from verify.audit import claim, discrepancy, paper_claim

@claim("T-1.a")
def test_a(audit):
    audit.ours(0.5)
    assert os.environ.get("FLIP_A") != "1", "T-1.a broke " + "x" * 200

@claim("T-1.b")
def test_b_ours(audit):
    audit.ours(0.59)

@discrepancy("T-1.b", reason="paper 0.6, ours 0.59")
def test_b_paper():
    paper_claim(False, "ours 0.59, paper 0.6")

@claim("T-1.ab")
def test_ab():
    pass

@claim("T-2.c")
def test_c():
    if os.environ.get("SKIP_C") == "1":
        pytest.skip("the shared papers are absent")

@pytest.mark.instrument("ruler", "a known length")
def test_ruler():
    pass

def test_meta():
    pass
"""

CLAIMS = {"T-1.a": "rare_gates", "T-1.b": "rare_gates", "T-1.ab": "rare_gates", "T-2.c": "multipath"}


def _toml(cid: str, paper: str, **extra: str) -> str:
    fields = {"id": cid, "paper": paper, "where": "Section 1", "statement": "s", "paper_value": "0.5"}
    fields.update({"kind": "constant", **extra})
    return "[[claim]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()) + "\n"


@pytest.fixture
def audit_dir(pytester, tmp_path, monkeypatch):
    """A pytester directory with the checks above, a registry of their claims (plus an unverifiable one)."""
    claims = tmp_path / "claims"
    (claims / "rare_gates").mkdir(parents=True)
    (claims / "multipath").mkdir()
    (claims / "rare_gates" / "t.toml").write_text(
        "".join(_toml(c, p) for c, p in CLAIMS.items() if p == "rare_gates")
        + _toml("T-1.unv", "rare_gates", unverifiable="private data")
    )
    (claims / "multipath" / "t.toml").write_text(_toml("T-2.c", "multipath"))
    monkeypatch.setattr("verify.plugin.load_registry", lambda directory=None: load_registry(claims))
    monkeypatch.setattr("verify.report._git_revision", lambda root: "test-rev")
    monkeypatch.delenv("AUDIT_PROFILE", raising=False)
    monkeypatch.delenv("FLIP_A", raising=False)
    monkeypatch.delenv("SKIP_C", raising=False)
    pytester.makeini(_INI)
    pytester.makepyfile(test_checks=_CHECKS)
    return pytester


def _run(pytester, *args: str):
    return pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "rep", "-p", "no:cacheprovider", *args)


def _stored(pytester) -> dict:
    return json.loads((pytester.path / "rep" / "report.json").read_text())


def _verdicts(report: dict) -> dict[str, tuple[str, str | None]]:
    return {c["id"]: (c["verdict"], c["last_run"]) for c in report["claims"]}


def test_full_run_stamps_every_claim(audit_dir):
    result = _run(audit_dir)
    result.assert_outcomes(passed=6, xfailed=1)
    report = _stored(audit_dir)
    assert report["run"] == {"selection": None, "partial": False}
    stamp = report["generated"]
    assert _verdicts(report) == {
        "T-1.a": ("confirmed", stamp),
        "T-1.ab": ("confirmed", stamp),
        "T-1.b": ("discrepancy", stamp),
        "T-1.unv": ("unverifiable", stamp),
        "T-2.c": ("confirmed", stamp),
    }
    assert stamp.endswith("+00:00")  # ISO 8601, UTC


def test_claim_option_keeps_its_checks_and_the_instruments(audit_dir):
    result = _run(audit_dir, "--claim", "T-1.b", "-v")
    result.assert_outcomes(passed=2, xfailed=1, deselected=4)
    result.stdout.fnmatch_lines(["*test_b_ours PASSED*", "*test_b_paper XFAIL*", "*test_ruler PASSED*"])
    report = _stored(audit_dir)
    assert report["run"] == {"selection": ["--claim T-1.b"], "partial": True}
    assert {c: v for c, (v, t) in _verdicts(report).items() if t} == {"T-1.b": "discrepancy"}


def test_claim_option_repeats_and_selects_an_unverifiable_claim(audit_dir):
    result = _run(audit_dir, "--claim", "T-2.c", "--claim", "T-1.unv")
    result.assert_outcomes(passed=2, deselected=5)
    ran = {c for c, (_, t) in _verdicts(_stored(audit_dir)).items() if t}
    assert ran == {"T-2.c", "T-1.unv"}


def test_paper_option(audit_dir):
    result = _run(audit_dir, "--paper", "multipath")
    result.assert_outcomes(passed=2, deselected=5)
    report = _stored(audit_dir)
    assert report["run"]["selection"] == ["--paper multipath"]
    assert {c for c, (_, t) in _verdicts(report).items() if t} == {"T-2.c"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--claim", "T-1.x"], "*--claim 'T-1.x' is not a registered claim id; allowed: the 5 ids*(T-*); closest: *"),
        (["--paper", "bogus"], "*--paper must be one of rare_gates, central_flow, multipath; got 'bogus'*"),
        (["--profile", "bogus"], "*--profile must be one of quick, full; got 'bogus'*"),
        (["--profile", "quick", "--full"], "*--profile quick contradicts --full*"),
        (["--set", "table1_inits=1000000000000"], "*argument --set: size table1_inits must be at most *"),
    ],
)
def test_bad_selection_or_profile_is_a_usage_error_before_any_test(audit_dir, args, message):
    result = _run(audit_dir, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert len([line for line in result.stderr.lines if line.strip()]) == 1
    assert not (audit_dir.path / "rep").exists()


def test_bad_audit_profile_variable(audit_dir, monkeypatch):
    monkeypatch.setenv("AUDIT_PROFILE", "bogus")
    result = _run(audit_dir)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: AUDIT_PROFILE must be one of quick, full; got 'bogus'"])
    assert not (audit_dir.path / "rep").exists()


def test_unwritable_report_dir_stops_before_any_test(audit_dir):
    (audit_dir.path / "blocker").write_text("a file, not a folder")
    audit_dir.makepyfile(test_marker="def test_marker():\n    open('RAN', 'w').close()\n")
    result = _run(audit_dir, "--report-dir", "blocker/rep")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --report-dir */blocker/rep: cannot write the report there*writable folder"])
    assert not (audit_dir.path / "RAN").exists()


@pytest.mark.parametrize(
    "expr, selected",
    [
        ("T-1.a", {"test_a", "test_ab"}),  # the claim id: a substring, so T-1.ab matches too
        ("claim[T-1.a]", {"test_a"}),  # that claim only
        ("claim[t-1.A]", {"test_a"}),  # case-insensitive
        ("T-1.b", {"test_b_ours", "test_b_paper"}),  # both sides of a discrepancy
        ("T-1", {"test_a", "test_b_ours", "test_b_paper", "test_ab"}),  # a substring: every T-1.* claim
        ("claim[T-1.a] or T-2.c", {"test_a", "test_c"}),
        ("T-1 and not T-1.b", {"test_a", "test_ab"}),
    ],
)
def test_k_selects_by_claim_id(audit_dir, expr, selected):
    result = audit_dir.runpytest_inprocess("-p", "verify.plugin", "--collect-only", "-q", "-k", expr)
    names = {line.split("::")[-1] for line in result.stdout.lines if "::" in line}
    assert names == selected


def test_k_run_merges_and_counts_a_half_selected_claim_as_not_run(audit_dir, monkeypatch):
    _run(audit_dir)
    first = _verdicts(_stored(audit_dir))
    monkeypatch.setenv("FLIP_A", "1")
    result = _run(audit_dir, "-k", "claim[T-1.a] or test_b_ours")
    result.assert_outcomes(failed=1, passed=1, deselected=5)
    report = _stored(audit_dir)
    now = _verdicts(report)
    assert now["T-1.a"] == ("check-failed", report["generated"])
    # only our side of T-1.b ran: its entry (a discrepancy) is kept, not turned into "confirmed"
    assert now["T-1.b"] == first["T-1.b"] and now["T-1.ab"] == first["T-1.ab"] and now["T-2.c"] == first["T-2.c"]
    assert report["run"] == {"selection": ["-k claim[T-1.a] or test_b_ours"], "partial": True}
    assert report["summary"]["rare_gates"] == {"check-failed": 1, "discrepancy": 1, "confirmed": 1, "unverifiable": 1}
    assert [i["name"] for i in report["instruments"]] == ["ruler"]  # calibrated by the first run, kept


def test_node_id_run_of_half_a_claim_keeps_it(audit_dir):
    result = _run(audit_dir, "test_checks.py::test_b_ours")
    result.assert_outcomes(passed=1)
    now = _verdicts(_stored(audit_dir))
    assert now["T-1.b"] == ("not-run", None)  # no earlier report, and only one of its two checks ran
    assert _stored(audit_dir)["run"] == {"selection": ["test_checks.py::test_b_ours"], "partial": True}


def test_stopping_early_keeps_the_claims_not_reached(audit_dir, monkeypatch):
    _run(audit_dir)
    first = _verdicts(_stored(audit_dir))
    monkeypatch.setenv("FLIP_A", "1")
    result = _run(audit_dir, "-x")
    result.assert_outcomes(failed=1)
    report = _stored(audit_dir)
    now = _verdicts(report)
    assert now["T-1.a"][0] == "check-failed"
    assert {c: now[c] for c in now if c != "T-1.a"} == {c: first[c] for c in first if c != "T-1.a"}
    assert report["run"]["partial"] and report["run"]["selection"][-1].startswith("stopped early")


def test_a_skipped_claim_keeps_its_verdict_in_a_partial_run(audit_dir, monkeypatch):
    _run(audit_dir)
    first = _verdicts(_stored(audit_dir))
    monkeypatch.setenv("SKIP_C", "1")
    _run(audit_dir, "--claim", "T-2.c").assert_outcomes(skipped=1, passed=1, deselected=5)
    assert _verdicts(_stored(audit_dir))["T-2.c"] == first["T-2.c"]
    _run(audit_dir).assert_outcomes(skipped=1, passed=5, xfailed=1)  # a full run says what happened
    assert _verdicts(_stored(audit_dir))["T-2.c"][0] == "not-run"


def test_collect_only_writes_no_report(audit_dir):
    _run(audit_dir)
    before = (audit_dir.path / "rep" / "report.json").read_text()
    result = _run(audit_dir, "--collect-only")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*--collect-only: no report written*"])
    assert (audit_dir.path / "rep" / "report.json").read_text() == before
    audit_dir.runpytest_inprocess("-p", "verify.plugin", "--collect-only", "--report-dir", "fresh")
    assert not (audit_dir.path / "fresh").exists()


def test_usage_error_at_collection_writes_no_report(audit_dir):
    audit_dir.makepyfile(test_bad="from verify.audit import claim\n\n@claim('T-9.nope')\ndef test_x():\n    pass\n")
    result = _run(audit_dir)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert not (audit_dir.path / "rep").exists()


def test_partial_run_refuses_a_report_of_another_profile(audit_dir):
    _run(audit_dir)
    before = (audit_dir.path / "rep" / "report.json").read_text()
    result = _run(audit_dir, "--full", "--claim", "T-2.c", "-v")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*holds a report of profile 'quick'; this partial run is 'full'*--report-dir*"])
    assert "PASSED" not in result.stdout.str()
    assert (audit_dir.path / "rep" / "report.json").read_text() == before


def test_full_run_of_another_profile_replaces_the_report(audit_dir):
    _run(audit_dir, "--claim", "T-2.c")
    result = _run(audit_dir, "--profile", "full")
    result.assert_outcomes(passed=6, xfailed=1)
    report = _stored(audit_dir)
    assert report["profile"] == "full" and report["run"]["partial"] is False


def test_merges_into_a_report_without_last_run(audit_dir):
    """A report written before runs were stamped (schema version 0) keeps its claims, with last_run null."""
    _run(audit_dir)
    old = _stored(audit_dir)
    for key in ("schema_version", "run", "environment", "git_dirty"):
        old.pop(key, None)
    for c in old["claims"]:
        for key in ("last_run", "values", "tolerance", "check_outcomes"):
            c.pop(key, None)
    (audit_dir.path / "rep" / "report.json").write_text(json.dumps(old))
    _run(audit_dir, "--claim", "T-2.c")
    report = _stored(audit_dir)
    assert _verdicts(report)["T-1.b"] == ("discrepancy", None)
    assert _verdicts(report)["T-2.c"] == ("confirmed", report["generated"])
    assert all("check_outcomes" in c for c in report["claims"])  # kept claims lifted to the current schema
    assert "T-1.b" in (audit_dir.path / "rep" / "report.md").read_text()


def test_terminal_summary_fits_80_columns_and_names_the_error(audit_dir, monkeypatch):
    monkeypatch.setenv("FLIP_A", "1")
    result = _run(audit_dir, "--claim", "T-1.a")
    out = result.stdout.lines
    start = next(i for i, line in enumerate(out) if "paper audit" in line)
    section = out[start + 1 : next(i for i, line in enumerate(out) if line.startswith("report: "))]
    assert section and all(len(line) <= 80 for line in section), [line for line in section if len(line) > 80]
    error = next(line for line in section if line.startswith("    error: AssertionError"))
    assert "AssertionError: T-1.a broke xxx" in error and error.endswith("...")
    assert any(line.startswith("  T-1.a [check-failed]") for line in section)
    assert any(line.split()[:2] == ["rare_gates", "0"] for line in section)


def test_xdist_is_refused_for_the_audit(audit_dir):
    pytest.importorskip("xdist")
    verify_dir = str(Path(verify.__file__).parent)
    result = audit_dir.runpytest_inprocess("-p", "verify.plugin", "-n", "2", verify_dir)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: -n 2: the audit does not run under pytest-xdist*drop -n*"])


def test_xdist_outside_verify_writes_no_report_and_says_so(pytester):
    """Claim checks outside verify/ under -n: the workers tell the controller, which writes nothing."""
    pytest.importorskip("xdist")
    pytester.makeini(_INI)
    pytester.makepyfile(test_x='from verify.audit import claim\n\n@claim("MP-6.map")\ndef test_a():\n    pass\n')
    result = pytester.runpytest_subprocess("-p", "verify.plugin", "-p", "no:cacheprovider", "-n", "1")
    result.stdout.fnmatch_lines(["no report written: claim checks ran under pytest-xdist (-n); run without -n"])
    # the report folder may exist (the writability check before the run creates it), the report may not
    assert not (pytester.path / "verify-report" / "report.json").exists()


def test_real_claim_ids_select_with_k():
    """The form the README documents, on the real suite: ``-k MP-6.map`` selects that claim's check."""
    assert "MP-6.map" in load_registry()
    root = Path(verify.__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "verify/multipath/test_wcr.py", "--collect-only", "-q", "-k", "MP-6.map"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ,
    )
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert len(ids) >= 1 and all("test_wcr.py::" in i for i in ids), out.stdout + out.stderr
