"""``python -m numerics.multipath``: its output against gd called directly, the plot, bad input, help, pipes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from numerics.multipath import cli, ensembles, gd
from numerics.multipath.cli import main
from tests import cli_calls as CLI

SMALL = ["--depths", "3", "3", "--sigma", "1", "0.5", "--alphas", "1e-2", "0.9e-2", "--steps", "3000"]
S1 = 3.0  # 3 * 1^(4/3)


def _main(capsys, *argv):
    return CLI.call(main, capsys, *argv)


def _json(capsys, *argv) -> dict:
    return CLI.call_json(main, capsys, *argv)


def _row(out: str, mode: int) -> list[str]:
    """The cells of the table row of ``mode`` (1-based) in the text output."""
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == [str(mode)]]
    assert len(rows) == 1
    return rows[0]


def _line(out: str, label: str) -> str:
    (line,) = [x for x in out.splitlines() if x.startswith(label)]
    return line


def _g(x) -> str:
    return f"{x:.10g}"


# ------------------------------------------------------------------ the mode recursion
@pytest.mark.parametrize(
    "gamma, outcome, flipped",
    [(1.5, "converged", False), (3.0, "not converged", False), (5.0, "not converged", True), (8.0, "diverged", True)],
)
def test_svs_json_agrees_with_simulate_svs(capsys, gamma, outcome, flipped):
    got = _json(capsys, "svs", *SMALL, "--eta-s1", str(gamma))
    sig = np.array([1.0, 0.5])
    run = gd.simulate_svs([3, 3], sig, gamma / S1, [1e-2, 0.9e-2], 3000, tol=1e-12)
    assert got["eta"] == gamma / S1 and got["S1"] == S1 and got["steps"] == 3000
    assert got["steps_done"] == run.steps and cli.outcome_word(got) == outcome and got["flipped"] is flipped
    assert got["first_flip"] == [int(f) if f >= 0 else None for f in run.first_flip]
    if outcome == "diverged":
        assert got["sharpness"] is None and got["lambda_eta_over_2"] is None and got["mode_sharpness"][0] is None
        return
    assert got["shares"] == (run.final_sigma / sig).tolist()
    assert got["sharpness"] == run.final_sharpness and got["mode_sharpness"] == run.sharpness[-1].tolist()
    assert got["lambda_eta_over_2"] == run.final_sharpness * (gamma / S1) / 2
    assert got["residual"] == run.residual[-1].tolist()


def test_svs_text_agrees_with_simulate_svs(capsys):
    rc, out, err = _main(capsys, "svs", *SMALL, "--eta-s1", "1.5")
    run = gd.simulate_svs([3, 3], [1.0, 0.5], 0.5, [1e-2, 0.9e-2], 3000, tol=1e-12)
    assert rc == 0 and err == "" and run.converged
    assert _line(out, "steps").split()[1:4] == [str(run.steps), "of", "3000"]
    assert _line(out, "outcome").split()[1] == "converged" and "no sign flip" in out
    assert f"lambda = {_g(run.final_sharpness)}, lambda eta/2 = {_g(run.final_sharpness * 0.25)}" in out
    for i, s in enumerate((1.0, 0.5)):
        cells = _row(out, i + 1)
        assert cells[1:4] == [_g(s), _g(run.sharpness[-1, i] * 0.25), "-"]
        assert cells[4:] == [_g(run.final_sigma[h, i] / s) for h in range(2)]


def test_depth_and_pathways_and_one_alpha(capsys):
    got = _json(capsys, "svs", "--depth", "4", "--pathways", "3", "--alphas", "1e-3", "--steps", "50", "--eta", "0.1")
    run = gd.simulate_svs([4, 4, 4], ensembles.SIGMA, 0.1, [1e-3] * 3, 50, tol=1e-12)
    assert got["depths"] == [4, 4, 4] and got["alphas"] == [1e-3] * 3 and got["eta"] == 0.1
    assert got["shares"] == (run.final_sigma / np.array(ensembles.SIGMA)).tolist()


def test_unequal_depths_use_the_largest_single_path_sharpness(capsys):
    got = _json(capsys, "svs", "--depths", "2", "6", "--sigma", "2", "1", "--eta-s1", "1", "--steps", "10")
    S = max(2 * 2 ** (2 - 2 / 2), 6 * 2 ** (2 - 2 / 6))
    assert got["S1"] == S and got["eta"] == 1 / S and got["eta_S1"] == pytest.approx(1.0, abs=1e-15)
    assert "largest single-path sharpness" in cli.build_parser().format_help()


def test_defaults_are_the_ensembles_setting(capsys):
    assert (cli.DEFAULT_DEPTH, cli.DEFAULT_PATHWAYS) == (ensembles.DEPTH, len(ensembles.ALPHAS))
    assert cli.DEFAULT_SIGMA == ensembles.SIGMA and cli.DEFAULT_ETA_S1 == ensembles.ETA_S1
    assert cli.DEFAULT_STEPS == ensembles.STEPS
    got = _json(capsys, "svs", "--steps", "10")
    assert got["alphas"] == pytest.approx(list(ensembles.ALPHAS), rel=1e-15)
    assert got["eta"] == ensembles.setting()["eta"]


# ------------------------------------------------------------------ full layers
@pytest.mark.parametrize("seed", [None, 7])
def test_full_json_agrees_with_simulate_full(capsys, seed):
    argv = ["full", *SMALL, "--eta-s1", "1.5"] + ([] if seed is None else ["--seed", str(seed)])
    got = _json(capsys, *argv)
    sig = np.array([1.0, 0.5])
    V = np.eye(2) if seed is None else ensembles.haar_frame(seed, 0, 2)
    M = V @ np.diag(sig) @ V.T
    run = gd.simulate_full(gd.svs_initialisation([1e-2, 0.9e-2], [3, 3], V, V), M, 0.5, 3000)
    K = run.mode_values(V, V)[-1]
    lam = [gd.mode_sharpness(np.abs(K[:, i]), [3, 3], float(K[:, i].sum() - sig[i])) for i in range(2)]
    assert got["frame"] == ("identity" if seed is None else "haar") and got["seed"] == seed
    assert got["steps_done"] == run.steps == 3000 and got["loss"] == float(run.loss[-1])
    assert got["shares"] == (K / sig).tolist() and got["mode_sharpness"] == lam and got["sharpness"] == max(lam)
    assert got["hessian_top"] == gd.hessian_top(run.W, M) and got["parameters"] == 24
    assert got["converged"] and not got["diverged"] and not got["flipped"]
    assert got["max_balance_gap"] < 1e-12
    # on the SVS set the full layers follow the mode recursion (rounding apart)
    svs = _json(capsys, "svs", *SMALL, "--eta-s1", "1.5", "--tol", "0")
    assert np.allclose(got["shares"], svs["shares"], atol=1e-10)
    assert got["hessian_top"] == pytest.approx(svs["sharpness"], rel=1e-6)


def test_full_text_agrees_with_simulate_full(capsys):
    rc, out, err = _main(capsys, "full", *SMALL, "--eta-s1", "1.5", "--seed", "7")
    V = ensembles.haar_frame(7, 0, 2)
    W0 = gd.svs_initialisation([1e-2, 0.9e-2], [3, 3], V, V)
    run = gd.simulate_full(W0, V @ np.diag([1.0, 0.5]) @ V.T, 0.5, 3000)
    K = run.mode_values(V, V)[-1]
    assert rc == 0 and err == ""
    assert _line(out, "frame").split()[1:] == ["Haar,", "seed", "7"]
    assert _line(out, "steps").split()[1:4] == ["3000", "of", "3000"]
    assert _line(out, "loss").split()[1] == _g(run.loss[-1])
    for i, s in enumerate((1.0, 0.5)):
        assert _row(out, i + 1)[4:] == [_g(K[h, i] / s) for h in range(2)]


def test_full_diverged_is_valid_json(capsys):
    got = _json(capsys, "full", *SMALL, "--eta-s1", "40")
    assert got["diverged"] and got["sharpness"] is None and got["hessian_top"] is None and not got["converged"]


# ------------------------------------------------------------------ the plot
@pytest.mark.parametrize("mode", ["svs", "full"])
def test_plot_writes_a_png(capsys, tmp_path, mode):
    path = tmp_path / f"{mode}.png"
    rc, out, err = _main(capsys, mode, *SMALL, "--eta-s1", "3", "--plot", str(path))
    assert rc == 0 and err == "" and out.startswith("mode recursion" if mode == "svs" else "full layers")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["svs", "--eta", "0"], "--eta", "'0'"),
        (["svs", "--eta", "-0.5"], "--eta", "'-0.5'"),
        (["svs", "--eta", "nan"], "--eta", "'nan'"),
        (["full", "--eta-s1", "-1"], "--eta-s1", "'-1'"),
        (["svs", "--eta", "x"], "--eta", "'x'"),
        (["svs", "--eta", "1", "--eta-s1", "2"], "--eta-s1", "--eta"),
        (["sgd"], "mode", "'sgd'"),
        ([], "mode", "required"),
        (["svs", "--depths", "5", "1"], "--depths", "'1'"),
        (["full", "--depth", "1"], "--depth", "'1'"),
        (["svs", "--depths", "2.5"], "--depths", "'2.5'"),
        (["svs", "--depths", "5", "5", "--pathways", "3"], "--pathways", "3"),
        (["svs", "--alphas", "1e-6", "1e-6", "1e-6"], "--alphas", "got 3"),
        (["svs", "--depth", "3", "--pathways", "4", "--alphas", "1", "2"], "--alphas", "got 2"),
        (["svs", "--sigma", *["1"] * 65], "--sigma", "got 65"),
        (["svs", "--pathways", "65"], "--pathways", "'65'"),
        (["svs", "--sigma", "0"], "--sigma", "'0'"),
        (["svs", "--steps", "20000000"], "--steps", "got 20000000"),
        (["full", "--sigma", *["1"] * 20, "--steps", "1000000"], "--steps", "got 1000000"),
        (["svs", "--steps", "0"], "--steps", "'0'"),
        (["svs", "--steps", "1.5"], "--steps", "'1.5'"),
        (["svs", "--seed", "3"], "--seed", "3"),
        (["full", "--seed", "-1"], "--seed", "'-1'"),
        (["svs", "--tol", "-1"], "--tol", "'-1'"),
        (["svs", "--format", "xml"], "--format", "'xml'"),
        (["svs", "--plot", "/nonexistent-dir/x.png"], "--plot", "'/nonexistent-dir/x.png'"),
        (["svs", "--plot", "x.notaformat"], "--plot", "'x.notaformat'"),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_exit_2(capsys, argv, option, value):
    rc, out, err = _main(capsys, *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("python -m numerics.multipath: error: ")
    assert (f"argument {option}" in err or option == "mode" and "mode" in err) and value in err


def test_the_step_bound_message_gives_the_range(capsys):
    rc, _, err = _main(capsys, "full", "--sigma", *["1"] * 20, "--steps", "1000000")
    bound = cli.step_bound("full", [5, 5], 20)
    assert rc == 2 and f"must be an integer in [1, {bound}]" in err and "a step" in err
    assert bound == int(60e9 / (10 * (200 + 4 * 20**3)))
    rc, _, err = _main(capsys, "full", "--depth", "1000", "--pathways", "64", "--sigma", *["1"] * 64)
    assert rc == 2 and err.startswith("python -m numerics.multipath: error: argument --depth: one full-mode step")


# ------------------------------------------------------------------ help, running as a module, pipes
def test_help(capsys):
    rc, out, err = _main(capsys, "--help")
    assert rc == 0 and err == "" and out.startswith("usage: python -m numerics.multipath")
    for word in ("{svs,full}", "--depths", "--eta-s1", "--alphas", "--plot", "S_1", "Haar"):
        assert word in out


def test_runs_as_module_and_a_closed_pipe_ends_quietly():
    # the three processes start together (their start-up, mostly imports, overlaps on the cores)
    ok = CLI.module("numerics.multipath", "svs", *SMALL, "--eta-s1", "1.5", "--format", "json")
    piped = CLI.module("numerics.multipath", "svs", *SMALL, "--eta", "1e-9")
    bad = CLI.module("numerics.multipath", "svs", "--eta", "-1")
    assert piped.stdout is not None and piped.stderr is not None
    piped.stdout.close()  # the reader has gone before the first line is written
    out, err = ok.communicate(timeout=120)
    assert ok.returncode == 0 and err == "" and json.loads(out)["converged"]
    err = piped.stderr.read()
    assert piped.wait(timeout=120) == 141 and err == ""  # 128 + SIGPIPE, as numerics.table_wcr
    out, err = bad.communicate(timeout=120)
    assert bad.returncode == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_json_numbers_are_numbers(capsys):
    got = _json(capsys, "svs", *SMALL, "--eta-s1", "1.5")
    assert all(isinstance(x, float) and math.isfinite(x) for x in (got["eta"], got["sharpness"], got["loss"]))
    assert isinstance(got["steps_done"], int) and isinstance(got["converged"], bool)
    assert all(isinstance(x, float) for row in got["shares"] for x in row)
