"""Entry points that never trip: bad input, costly runs, closed pipes and help texts of every command.

Each bad input is one line on stderr naming the option and its allowed range, exit status 2,
before any computation; a costly run is refused with its estimate; a reader that closes the
pipe (``| head``) ends the command quietly with 141; help texts carry no reST markup. The
shared helpers are :mod:`numerics.cli_support` and :mod:`numerics.validation`.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from numerics import bench, cli_support, table_wcr, validation
from numerics.multipath import ensembles
from numerics.rare_gates import constants, initialization, recovery
from numerics.sweep import cli as sweep_cli
from numerics.sweep import progress

ROOT = Path(__file__).resolve().parents[1]
BASE = ["--b", "16", "--delta0", "1e-4", "--eta", "0.01", "--streams", "8", "--horizon", "2"]


def _one_line_error(capsys, main, argv, prefix: str, words=()) -> str:
    """Run ``main(argv)``; assert exit 2, nothing on stdout, one stderr line starting with ``prefix`` and holding
    each of ``words``."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(prefix) and "Traceback" not in err, err
    assert all(word in err for word in words), (words, err)
    return err


def _no_simulation(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the run should have been refused before simulating")

    monkeypatch.setattr(recovery, "simulate_sgd", refuse)


# ------------------------------------------------------------------ recovery
@pytest.mark.parametrize(
    "change, words",
    [
        (["--eta", "1e-300"], ["argument --eta:", "[1e-08, 1]", "'1e-300'"]),
        (["--eta", "1e6"], ["argument --eta:", "[1e-08, 1]", "'1e6'"]),
        (["--threshold", "-1"], ["argument --threshold:", "(0.18943, 0.59472)", "1 - 2q^2", "R_col"]),
        (["--threshold", "0.6"], ["argument --threshold:", "(0.18943, 0.59472)"]),
        (["--horizon", "1e-6"], ["argument --horizon:", "at least check-every x eta", "0.1", "1e-06"]),
        (["--delta0", "-1e-4"], ["argument --delta0:", "(0, pi)", "'-1e-4'"]),
        (["--delta0", "-inf"], ["argument --delta0:", "(0, pi)"]),
        (["--lam", "0.7"], ["argument --lam:", "[0, 2/pi)"]),
        (["--seed", "1e30"], ["argument --seed:", "[0, 2^64 - 1]"]),
        (["--streams", "1000000000"], ["argument --streams:", "GiB of memory (limit 2.0 GiB)"]),
        (["--b", "1000000000"], ["would take about", "(limit 60 min)", "--b"]),
        (["--horizon", "1e300"], ["would take about", "years", "--horizon"]),
    ],
)
def test_recovery_bad_input_is_refused_before_running(change, words, capsys, monkeypatch):
    _no_simulation(monkeypatch)
    _one_line_error(capsys, recovery.main, BASE + change, "recovery: error:", words)


def test_recovery_threshold_range_is_the_model_s():
    q = 2 / math.pi
    assert recovery.THRESHOLD_MIN == pytest.approx(1 - 2 * q * q) and recovery.THRESHOLD_MAX == pytest.approx(1 - q * q)
    assert recovery.THRESHOLD_MIN < 0.4 < recovery.THRESHOLD_MAX  # the paper's level is inside
    assert constants.constants_table("1/20", 8)[1]["value"].startswith("0.594715")  # R_col of the derivation


def test_recovery_accepts_the_range_edges(capsys):
    argv = BASE + ["--eta", "1", "--horizon", "10", "--threshold", "0.59", "--lam", "0", "--json"]
    assert recovery.main(argv) == 0
    assert capsys.readouterr().out.startswith("{")


def test_recovery_estimate_grows_with_the_work():
    est = recovery.estimated_seconds
    assert est(16, 128, 2e4, 10, False, 2) < est(64, 128, 2e4, 10, False, 2) < est(64, 128, 2e4, 10, True, 2)
    assert est(16, 128, 2e4, 10, False, 2) < 10  # the paper's Table 2 setting runs in seconds
    assert est(16, 128, 2e4, 1, False, 2) > est(16, 128, 2e4, 10, False, 2)


def test_recovery_divergence_exits_1_in_one_line(capsys):
    assert recovery.main(BASE + ["--noise-s", "1e6"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "left the finite range" in err and "--noise-s" in err


# ------------------------------------------------------------------ constants and initialization
@pytest.mark.parametrize(
    "cli, argv, words",
    [
        (constants, ["--digits", "100000"], ["argument --digits:", "[1, 1000]"]),
        (constants, ["--lam", "1e-10000000"], ["argument --lam:", "at most 1000 digits"]),
        (constants, ["--lam", "-1e-3"], ["argument --lam:", "(0, 1/2)"]),
        (initialization, ["--digits", "100000"], ["argument --digits/--dps:", "[1, 9980]"]),
        (initialization, ["--dps", "10000"], ["argument --digits/--dps:", "[1, 9980]"]),
        (initialization, ["--M", "1e100000"], ["argument --M:", "(m, 1000]"]),
        (initialization, ["--m", "1e-1000000"], ["argument --m:", "[1e-1000, 3/4)"]),
        (initialization, ["--m", "0.8"], ["argument --m:", "[1e-1000, 3/4)"]),
        (initialization, ["--m", "-1e-4"], ["argument --m:", "[1e-1000, 3/4)"]),
        (initialization, ["--M", "1e-5"], ["argument --M:", "M must exceed m"]),
    ],
)
def test_constants_and_initialization_bad_input(cli, argv, words, capsys):
    _one_line_error(capsys, cli.main, argv, f"python -m {cli.__name__}: error:", words)


def test_initialization_digits_and_deprecated_dps_alias(capsys):
    assert initialization.main(["--digits", "12", "--format", "json"]) == 0
    with_digits = capsys.readouterr().out
    assert initialization.main(["--dps", "12", "--format", "json"]) == 0
    assert capsys.readouterr().out == with_digits
    assert initialization.main(["--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--digits DIGITS, --dps DIGITS" in help_text and "--dps is a deprecated alias of --digits" in help_text


# ------------------------------------------------------------------ table_wcr (bounded earlier; one line now)
@pytest.mark.parametrize("argv", [["--digits", "100000"], ["--L-max", "100000"]])
def test_table_wcr_sizes_are_bounded_in_one_line(argv, capsys):
    err = _one_line_error(capsys, table_wcr.main, argv, "python -m numerics.table_wcr: error: argument")
    assert "must be an integer in [" in err


# ------------------------------------------------------------------ sweep
def test_sweep_oversized_set_is_refused_before_listing(capsys, monkeypatch):
    def no_listing(*args, **kwargs):
        raise AssertionError("cells were listed")

    monkeypatch.setattr(sweep_cli, "list_experiments", no_listing)
    err = _one_line_error(capsys, sweep_cli.main, ["LIST", "--set", "table1_inits=1000000000000"], "sweep: error:")
    assert "argument --set: size table1_inits must be at most 32768 (16 x its larger profile value 2048)" in err
    err = _one_line_error(capsys, sweep_cli.main, ["LIST", "--set", "appendix20_horizon=1e300"], "sweep: error:")
    assert "argument --set: size appendix20_horizon must be at most 16000" in err
    err = _one_line_error(capsys, sweep_cli.main, ["LIST", "--set", "table1_inits=abc"], "sweep: error:")
    assert "argument --set: size table1_inits must be an integer >= 1; got 'abc'" in err


def test_sweep_size_limits_cover_the_profiles():
    limits = sweep_cli.size_limits()
    assert limits["table1_inits"] == 16 * 2048 and "perturb" not in limits
    assert "extended_per_setting" not in limits  # None ('all') in the full profile


def test_sweep_usage_names_only_the_required_command(capsys):
    err = _one_line_error(capsys, sweep_cli.main, [], "sweep: error:")
    assert "required: command" in err and "experiments" not in err
    err = _one_line_error(capsys, sweep_cli.main, ["RUN", "rare_gates.cor5", "--workers", "1000000"], "sweep: error:")
    assert f"argument --workers: must be an integer in [1, {os.cpu_count()}]" in err


def test_sweep_labels_say_reused_and_done_at():
    p = progress.Progress("demo", total=3, stream=io.StringIO(), enabled=True, clock=iter([0.0, 1.0]).__next__)
    p.start(reused=2)
    p.advance(ok=True)
    assert "(2 reused, 0 failed)" in p.line()
    data = {
        "store": "s",
        "profile": "quick",
        "overrides": {},
        "scheduler": "serial",
        "experiments": [
            {
                "name": "x",
                "cells": 2,
                "reused": 1,
                "computed": 1,
                "failed": 0,
                "wall_s": 3.0,
                "compute_s": 1.0,
                "cpu_s": 0.5,
                "recomputed_because": {},
                "failures": [],
            }
        ],
    }
    line = sweep_cli._render("RUN", data).splitlines()[-1]
    assert "done at 3.0 s from the start" in line and "wall" not in line
    assert "compute 1.0 s (0.5 CPU-s)" in line


# ------------------------------------------------------------------ bench and ensembles
@pytest.mark.parametrize(
    "argv, words",
    [
        (["--repeat", "0"], ["argument --repeat:", "[1, 100]", "'0'"]),
        (["--scale", "-1"], ["argument --scale:", "(0, 64]", "'-1'"]),
        (["--scale", "nan"], ["argument --scale:", "'nan'"]),
        (["--repeat", "50", "--scale", "10"], ["--repeat 50 --scale 10 would take about", "(limit 15 min)"]),
    ],
)
def test_bench_errors_name_the_option_and_value(argv, words, capsys, monkeypatch):
    monkeypatch.setattr(bench, "benchmark", None)  # refused before measuring
    _one_line_error(capsys, bench.main, argv, "bench: error:", words)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--frames", "0"], ["argument --frames:", ">= 1"]),
        (["--frames", "100000"], ["argument --frames:", "would take about", "(limit 15 min)"]),
        (["--perturb", "-1e-5"], ["argument --perturb:", "[0, 0.001]"]),
        (["--seed", "-1"], ["argument --seed:", "[0, 2^64 - 1]"]),
    ],
)
def test_ensembles_bad_input(argv, words, capsys, monkeypatch):
    monkeypatch.setattr(ensembles, "rank_p_on_manifold", None)  # refused before running
    _one_line_error(capsys, ensembles.main, argv, "python -m numerics.multipath.ensembles: error:", words)


# ------------------------------------------------------------------ closed pipes
class _ClosedPipe(io.StringIO):
    """A stdout whose reader has left: every write raises BrokenPipeError."""

    def write(self, s):
        raise BrokenPipeError(32, "Broken pipe")


def _fake_bench(*args):
    return {"kernels": [], "c_reference": None, "c_message": "no C", "workload": {}, "ratio_numba_over_c": None}


@pytest.mark.parametrize(
    "name",
    [
        "constants",
        "initialization",
        "recovery",
        "sweep",
        "bench",
        "table_wcr",
        "verify list",
        "verify coverage",
        "verify.coverage",
        "verify.mutation list",
        "verify.compare",
    ],
)
def test_closed_pipe_in_process_returns_141(name, monkeypatch, capsys, tmp_path):
    from verify import __main__ as verify_main
    from verify import compare, coverage
    from verify.mutation import cli as mutation_cli

    report = tmp_path / "report.json"
    report.write_text('{"claims": [{"id": "A", "verdict": "confirmed"}]}')

    if name == "bench":
        monkeypatch.setattr(bench, "benchmark", _fake_bench)
    calls = {
        "constants": lambda: constants.main(["--digits", "5"]),
        "initialization": lambda: initialization.main(["--digits", "5"]),
        "recovery": lambda: recovery.main(BASE),
        "sweep": lambda: sweep_cli.main(["LIST"]),
        "bench": lambda: bench.main(["--repeat", "1"]),
        "table_wcr": lambda: table_wcr.main(["--L", "2"]),
        "verify list": lambda: verify_main.main(["list"]),
        "verify coverage": lambda: verify_main.main(["coverage"]),
        "verify.coverage": lambda: coverage.main([]),
        "verify.mutation list": lambda: mutation_cli.main(["list"]),
        "verify.compare": lambda: compare.main([str(report), str(report)]),
    }
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert calls[name]() == 141
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["numerics.rare_gates.initialization", "--digits", "5"],
        ["numerics.sweep", "LIST"],
        ["numerics.rare_gates.constants", "--digits", "5"],
        ["verify", "coverage"],
    ],
)
def test_closed_pipe_as_a_module_ends_quietly_with_141(argv):
    proc = subprocess.Popen(
        [sys.executable, "-m", *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader has gone before the first line is written
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141 and err == ""


# ------------------------------------------------------------------ help texts
MARKUP = ("``", ":func:", ":mod:", ":class:", ">>>")


@pytest.mark.parametrize(
    "main",
    [recovery.main, constants.main, initialization.main, sweep_cli.main, bench.main, table_wcr.main, ensembles.main],
)
def test_help_is_plain_text(main, capsys):
    _assert_plain_help(main, capsys)


@pytest.mark.parametrize("argv", [["--help"], ["coverage", "--help"], ["list", "--help"], ["diff", "--help"]])
def test_verify_help_is_plain_text(argv, capsys):
    from verify import __main__ as verify_main

    with pytest.raises(SystemExit) as exc:
        verify_main.build_parser().parse_args(argv)
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out and not any(m in out for m in MARKUP), [m for m in MARKUP if m in out]


def _assert_plain_help(main, capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:") and not [m for m in MARKUP if m in out]
    assert not [line for line in out.splitlines() if line.rstrip().endswith("::")]


# ------------------------------------------------------------------ the shared helpers
def test_strip_markup():
    text = "Usage::\n\n    x\n\nSee :func:`~a.b.c`, :mod:`a.b` and ``--x\ny``.\n\n>>> 1 + 1\n2\n\nEnd."
    assert cli_support.strip_markup(text) == "Usage:\n\n    x\n\nSee c, a.b and --x\ny.\n\nEnd."
    assert cli_support.strip_markup(":ref:`the words <target>`; `code`") == "the words; code"


@pytest.mark.parametrize("text", ["-1e-4", "-1E+3", "-.5", "-3", "-2.", "-inf", "-nan"])
def test_negative_numbers_are_values(text):
    p = cli_support.Parser(prog="p")
    p.add_argument("--x", type=float)
    assert str(p.parse_args(["--x", text]).x) == str(float(text))


def test_range_parsers():
    assert cli_support.int_arg(1, 10)("1e1") == 10
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be an integer in \[1, 10\]; got '9{20}\.\.\."):
        cli_support.int_arg(1, 10)("9" * 5000)
    parse = cli_support.real_arg(0, 1, lo_open=True, why=" (because)")
    assert parse("1") == 1.0
    for bad in ("0", "1.5", "inf", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"must be a real number in \(0, 1\] \(because\); got"):
            parse(bad)


def test_check_cost_and_units():
    cli_support.check_cost("x", seconds=10, limit_s=60, nbytes=1, limit_bytes=2)
    with pytest.raises(cli_support.UsageError, match=r"^argument --n: x would need about 3.0 GiB of memory \(limit"):
        cli_support.check_cost("x", nbytes=3 * 2**30, limit_bytes=2**30, option="--n")
    with pytest.raises(cli_support.UsageError, match=r"^x would take about inf years \(limit 60 s\); ask less$"):
        cli_support.check_cost("x", seconds=math.inf, limit_s=60, hint="ask less")
    assert [cli_support.duration_text(s) for s in (5, 90, 5400, 86400 * 3)] == ["5.0 s", "90 s", "90 min", "3 days"]


def test_run_main_statuses(capsys):
    def raises(exc):
        def body():
            raise exc

        return body

    assert cli_support.run_main("p", raises(cli_support.UsageError("argument --x: bad"))) == 2
    assert capsys.readouterr().err == "p: error: argument --x: bad\n"
    assert cli_support.run_main("p", raises(cli_support.RunError("diverged"))) == 1
    assert cli_support.run_main("p", raises(KeyboardInterrupt())) == 130
    assert cli_support.run_main("p", raises(SystemExit(0))) == 0
    assert cli_support.run_main("p", lambda: None) == 0


def test_validation_real():
    assert validation.real(0.5, "t", 0, 1, lo_open=True) == 0.5
    for bad in (0, 2, math.nan, True, "0.5"):
        with pytest.raises(ValueError, match=r"^t must be a finite real number in \(0, 1\]; got"):
            validation.real(bad, "t", 0, 1, lo_open=True)
    assert validation.range_text(0, None, lo_open=True, hi_text="x") == "in (0, x]"
