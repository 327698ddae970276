"""report.json schema version 2 (verify/report.schema.json): reports written validate, versions 0 and 1 migrate.

Validation uses jsonschema (the lint extra); without it those tests skip with the reason.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest
import sympy

from tests.synthetic_report import synthetic_report, version0_report
from verify.audit import Audit, format_value
from verify.registry import KINDS
from verify.report import PACKAGES, SCHEMA_VERSION, VERDICTS, _cpu, environment, migrate, parse_values

ROOT = Path(__file__).resolve().parents[1]
REAL_REPORT = ROOT / "verify-report" / "report.json"


def _schema() -> dict:
    return json.loads((resources.files("verify") / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def validator():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install -e '.[lint]')")
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _errors(validator, report) -> list[str]:
    return [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(report)]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report")
    synthetic_report(directory)
    return json.loads((directory / "report.json").read_text())


def test_schema_is_shipped_with_the_package():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "report.schema.json" in pyproject["tool"]["setuptools"]["package-data"]["verify"]
    assert _schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_enums_follow_the_code():
    schema = _schema()
    claim = schema["$defs"]["claim"]["properties"]
    assert claim["verdict"]["enum"] == list(VERDICTS) and claim["kind"]["enum"] == list(KINDS)
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert set(schema["$defs"]["environment"]["required"]) == {"python", *PACKAGES, "blas", "cpu", "os"}


def test_written_report_validates(validator, written):
    assert written["schema_version"] == SCHEMA_VERSION == 2
    assert _errors(validator, written) == []


def test_values_are_data_and_tolerance_has_its_reason(written):
    by_id = {c["id"]: c for c in written["claims"]}
    ok = by_id["T-1.ok"]
    assert [v["label"] for v in ok["values"]] == ["R_col", "enclosure"]
    assert isinstance(ok["values"][0]["value"], float) and ok["values"][0]["text"].startswith("0.59471526")
    assert ok["values"][1]["value"] == [0.5, 0.75]
    assert ok["tolerance"] == [{"value": 1e-12, "reason": "4500 x float64 eps over 20 steps", "label": None}]
    assert "tolerance 1e-12: 4500 x float64 eps over 20 steps." in ok["evidence"]
    assert by_id["T-1.read"]["values"] == [{"label": None, "value": 1 / 3, "text": format_value(sympy.Rational(1, 3))}]
    assert by_id["T-1.disc"]["values"][0]["value"] == {"(1, 2)": [0.25, 0.5], "n": 3}
    assert by_id["T-3.cf"]["values"][0]["value"] == "nan"  # JSON has no NaN: a string
    assert by_id["T-1.mc"]["power"] == 0.42 and by_id["T-1.mc"]["alternative"].startswith("a relative 25%")
    assert by_id["T-1.ok"]["ours"] == "R_col = " + ok["values"][0]["text"] + "; enclosure = " + ok["values"][1]["text"]


def test_environment_records_versions_blas_cpu_os(written):
    env = written["environment"]
    assert set(env) >= {"python", *PACKAGES, "blas", "cpu", "os"}
    assert env["numpy"] != "unknown" and env["os"]
    assert env["blas"] == "unknown" or {"name", "version", "source"} <= set(env["blas"])
    assert isinstance(written["git_dirty"], (bool, type(None)))
    assert written["git_revision"] == "unknown" or len(written["git_revision"]) == 40


def test_cpu_from_proc_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU @ 3GHz\nflags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\n")
    assert _cpu(info) == {"model": "Test CPU @ 3GHz", "flags": ["fpu", "avx2", "avx512f"]}
    assert _cpu(tmp_path / "absent")["flags"] == []
    assert set(environment()["cpu"]) == {"model", "flags"}


def test_audit_tolerance_needs_a_reason_and_a_number():
    a = Audit("T-1")
    with pytest.raises(ValueError, match="reason"):
        a.tolerance(1e-12, " ")
    with pytest.raises(ValueError, match="number"):
        a.tolerance("small", "why")
    a.tolerance([1e-9, 1e-6], "absolute and relative", label="allclose")
    assert a.notes[0].tolerance == {"value": [1e-09, 1e-06], "reason": "absolute and relative", "label": "allclose"}


def _v0_report() -> dict:
    return version0_report("x = 0.25; 1/3 = 0.33; [1, 2]")


def test_version_0_migrates_and_validates(validator):
    v0 = _v0_report()
    m = migrate(v0)
    assert "schema_version" not in v0  # a copy
    assert m["schema_version"] == 2 and m["environment"] is None and m["git_dirty"] is None
    assert m["claims"][0]["values"] == parse_values("x = 0.25; 1/3 = 0.33; [1, 2]")
    assert m["claims"][0]["check_outcomes"] == [
        {"nodeid": "verify/m/test_a.py::test_b", "outcome": "passed", "message": ""}
    ]
    assert _errors(validator, m) == []
    assert migrate(m) == m


def test_version_1_migrates_with_an_empty_vacuous_field(validator, written):
    claims = [{k: v for k, v in c.items() if k != "vacuous"} for c in written["claims"]]
    v1 = {**written, "schema_version": 1, "claims": claims}
    assert _errors(validator, v1)  # version 1 is not the current schema
    m = migrate(v1)
    assert m["schema_version"] == 2 and all(c["vacuous"] == "" for c in m["claims"])
    assert _errors(validator, m) == []


def test_merged_report_fields_validate(validator, written):
    merged = {
        **written,
        "run": {"selection": ["--claim T-1.ok"], "partial": True},
        "claims": [{**c, "last_run": "2026-12-01T18:00:00+00:00"} for c in written["claims"][:-1]]
        + [{**written["claims"][-1], "last_run": None}],
    }
    assert _errors(validator, merged) == []
    assert _errors(validator, {**merged, "run": {"selection": None, "partial": False}}) == []
    bad = {**merged, "run": {"selection": "all", "partial": "no"}}
    assert len(_errors(validator, bad)) == 2


def test_schema_rejects_what_is_not_a_report(validator, written):
    assert _errors(validator, {**written, "schema_version": 3})
    claim = written["claims"][0]
    assert _errors(validator, {**written, "claims": [{**claim, "verdict": "maybe"}]})
    assert _errors(validator, {**written, "claims": [{**claim, "tolerance": [{"value": 1e-9, "reason": ""}]}]})
    assert _errors(validator, {**written, "claims": [{**claim, "last_run": "yesterday"}]})
    with pytest.raises(ValueError, match="schema_version 7"):
        migrate({**written, "schema_version": 7})
    with pytest.raises(ValueError, match="no claims list"):
        migrate({"verdicts": {}})


def test_real_report_validates_after_migration(validator):
    if not REAL_REPORT.exists():
        pytest.skip(f"no audit report at {REAL_REPORT} (run pytest verify first)")
    report = migrate(json.loads(REAL_REPORT.read_text()))
    assert _errors(validator, report) == []


def test_recorded_values_survive_copy_and_pickle():
    import copy
    import pickle

    from verify.report import CheckResult, _tolerances, _values

    a = Audit("T-1")
    a.ours(sympy.Rational(1, 4), label="q")
    a.tolerance(1e-9, "why")
    r = CheckResult("t.py::test_a", "T-1", "passed", values=list(a.values), notes=list(a.notes))
    for clone in (copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert clone.values == ["q = 1/4 = 0.25"] and _values(clone) == [
            {"label": "q", "value": 0.25, "text": "1/4 = 0.25"}
        ]
        assert _tolerances(clone) == [{"value": 1e-9, "reason": "why", "label": None}]
