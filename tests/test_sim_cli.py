"""The simulation CLIs: ``python -m numerics.rare_gates.recovery`` and ``python -m numerics.bench``.

Output fields, their consistency with the run, one-line errors naming the argument with
exit status 2, and the benchmark's JSON shape (its speed is never asserted).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from numerics import bench
from numerics.rare_gates import recovery
from numerics.rare_gates.initialization import wilson_interval

ARGS = ["--b", "16", "--delta0", "1e-3", "--eta", "0.01", "--streams", "40", "--horizon", "30", "--seed", "0"]
FIELDS = {
    "streams",
    "recovered",
    "fraction",
    "wilson95",
    "gamma",
    "poisson_reference",
    "disagreement_first_fraction",
    "median_recovery_time",
    "config",
}


def _json_run(capsys, argv):
    assert recovery.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""  # no progress output when stderr is not a terminal
    lines = captured.out.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_recovery_json_fields(capsys):
    out = _json_run(capsys, ARGS + ["--json"])
    assert set(out) == FIELDS
    assert out["streams"] == 40 and 0 <= out["recovered"] <= 40
    assert out["fraction"] == out["recovered"] / 40
    assert out["wilson95"] == list(wilson_interval(out["recovered"], 40, 1.959963984540054))
    assert math.isclose(out["gamma"], 16 * 1e-3 / 0.01)
    assert math.isclose(out["poisson_reference"], 1 - math.exp(-out["gamma"] / (math.pi * 0.05)))
    assert out["recovered"] > 0  # Gamma = 1.6: most streams recover by t = 30
    assert 0.0 <= out["disagreement_first_fraction"] <= 1.0
    assert 0.0 < out["median_recovery_time"] <= 30.0
    cfg = out["config"]
    assert cfg["seed"] == 0 and cfg["b"] == 16 and cfg["delta0"] == 1e-3 and cfg["lam"] == 0.05
    assert cfg["check_every"] == 10 and cfg["target_updates"] == 3000


def test_recovery_json_nulls_when_nothing_recovers(capsys):
    out = _json_run(
        capsys,
        [
            "--b",
            "1",
            "--delta0",
            "1e-6",
            "--eta",
            "0.01",
            "--streams",
            "8",
            "--horizon",
            "2",
            "--lam",
            "0",
            "--format",
            "json",
        ],
    )
    assert out["recovered"] == 0
    assert out["median_recovery_time"] is None and out["disagreement_first_fraction"] is None
    assert out["poisson_reference"] is None  # undefined at lam = 0


def test_recovery_text_and_markdown(capsys):
    assert recovery.main(ARGS) == 0
    text = capsys.readouterr().out
    for label in (
        "streams",
        "recovered fraction",
        "95% Wilson",
        "Gamma = b delta0 / eta",
        "Poisson reference",
        "disagreement first",
        "median recovery time",
    ):
        assert label in text
    assert recovery.main(ARGS + ["--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("| quantity | value |")


def test_recovery_same_seed_same_output(capsys):
    a = _json_run(capsys, ARGS + ["--json", "--threads", "1"])
    b = _json_run(capsys, ARGS + ["--json"])
    for out in (a, b):
        out["config"].pop("elapsed_s")
    assert a == b


@pytest.mark.parametrize(
    "bad, flag",
    [
        (["--b", "0"], "--b"),
        (["--b", "1.5"], "--b"),
        (["--delta0", "4"], "--delta0"),
        (["--delta0", "0"], "--delta0"),
        (["--eta", "-1"], "--eta"),
        (["--eta", "abc"], "--eta"),
        (["--streams", "0"], "--streams"),
        (["--horizon", "0"], "--horizon"),
        (["--seed", "-3"], "--seed"),
        (["--lam", "-0.1"], "--lam"),
        (["--check-every", "0"], "--check-every"),
        (["--noise-s", "-1"], "--noise-s"),
        (["--noise", "both"], "--noise"),
        (["--threads", "0"], "--threads"),
    ],
)
def test_recovery_bad_input(capsys, bad, flag):
    assert recovery.main(ARGS + bad) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recovery: error:") and flag in err[0]


def test_recovery_missing_argument(capsys):
    assert recovery.main(["--b", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--delta0" in err[0]


def test_recovery_help_is_module_docstring(capsys):
    assert recovery.main(["--help"]) == 0
    assert "Gamma = b delta0 / eta" in capsys.readouterr().out


def test_recovery_module_exit_status():
    proc = subprocess.run(
        [sys.executable, "-m", "numerics.rare_gates.recovery", *ARGS[:-2], "--seed", "-1"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--seed" in proc.stderr


def test_bench_json_shape(capsys):
    """A tiny benchmark run: the JSON object is the last line; numbers are not judged."""
    assert bench.main(["--json", "--repeat", "1", "--scale", "0.01"]) == 0
    res = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    names = {(k["name"], k["b"], k["threads"]) for k in res["kernels"]}
    assert {("sgd_target", b, 1) for b in bench.BATCHES} <= names
    assert ("gd", None, 1) in names
    for k in res["kernels"]:
        assert (k.get("inputs_per_s") or k.get("updates_per_s")) > 0
    if res["c_reference"] is None:
        assert res["ratio_numba_over_c"] is None and "skipped" in res["c_message"]
    else:
        assert res["c_reference"]["identical_to_numba"] is True  # same loop, same bits
        assert res["ratio_numba_over_c"] > 0
