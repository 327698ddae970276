"""``python -m numerics.central_flow``: its output against the library called directly, the plot, bad input, help."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from numerics.central_flow import cli
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.cli import main

ROOT = Path(__file__).resolve().parents[1]
STEPS = 8
FIRST = {"scalar": 0, "mf": 1, "relu": 3}  # the audit's first used draws (experiments.used_draws, relu_used)


def _main(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _json(capsys, *argv) -> dict:
    rc, out, err = _main(capsys, *argv, "--format", "json")
    assert rc == 0 and err == ""

    def no_constant(name):
        raise AssertionError(f"{name} in the JSON output")

    return json.loads(out, parse_constant=no_constant)


def _line(out: str, label: str) -> str:
    (line,) = [x for x in out.splitlines() if x.lstrip().startswith(label)]
    return line


def _g(x) -> str:
    return f"{x:.10g}"


def _direct(model: str, draw: int, steps: int) -> dict:
    """The runs made here with the library: GD, its midpoints, GF and the hybrid flow on the step grid."""
    net, th, eta = E.draw(cli.SETTINGS[model], draw)
    grid = np.arange(steps + 1, dtype=float)
    gd = F.gradient_descent(net, th, eta, steps)
    gf = F.gradient_flow(net, th, eta, float(steps), grid)
    cf = F.hybrid_flow(net, th, eta, float(steps), grid)
    law0 = np.asarray(CL.law(th, net))
    scale = float(th @ th) if model == "relu" else float(np.linalg.norm(law0))  # |theta_0|^2, |h_0|, |Psi_0|_F
    out: dict = {"eta": eta, "cf_traj": cf}
    runs = {"gd": (grid, gd), "mid": (grid[:-1] + 0.5, F.midpoints(gd)), "gf": (gf.t, gf.theta), "cf": (cf.t, cf.theta)}
    for key, (t, theta) in runs.items():
        law = np.asarray(CL.law(theta, net))
        out[key] = {"t": t, "law": law, "law_change": np.linalg.norm((law - law0).reshape(len(t), -1), axis=1) / scale}
        if key != "mid":
            out[key]["sharpness"] = np.array([SPEC.sharpness(net, x)[0] for x in theta])
            out[key]["loss"] = np.array([net.loss(x) for x in theta])
    return out


def _law_rows(out: str) -> dict[str, list[str]]:
    """The indented rows of the law's change in the text output, by label."""
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    return {line[:14].strip(): line[14:].split() for line in rows}


# ------------------------------------------------------------------ output against the library
@pytest.mark.parametrize("model", cli.MODELS)
def test_json_agrees_with_the_library(capsys, model):
    got = _json(capsys, "--model", model, "--steps", str(STEPS))
    want = _direct(model, FIRST[model], STEPS)
    eta = want["eta"]
    assert got["model"] == model and got["draw"] == FIRST[model] and got["seed"] == E.SEED == 0
    assert got["eta"] == eta == 0.9 and got["edge"] == 2 / eta and got["steps"] == STEPS
    for key in ("gd", "mid", "gf", "cf"):
        assert got[key]["t"] == want[key]["t"].tolist()
        assert got[key]["law"] == want[key]["law"].tolist()
        assert got[key]["law_change"] == want[key]["law_change"].tolist()
        assert got[key]["law_change_final"] == want[key]["law_change"][-1]
        assert got[key]["law_change_max"] == want[key]["law_change"].max()
    for key in ("gd", "gf", "cf"):
        assert got[key]["sharpness"] == want[key]["sharpness"].tolist()
        assert got[key]["loss"] == want[key]["loss"].tolist()
    gd = want["gd"]["sharpness"]
    assert got["gd"]["final_sharpness"] == gd[-1] and got["gd"]["final_lambda_eta_over_2"] == gd[-1] * eta / 2
    k0 = int(np.argmax(gd >= 2 / eta))
    assert gd[k0] >= 2 / eta and got["gd"]["first_edge_step"] == k0
    assert got["gd"]["edge_fraction"] == np.mean(np.abs(gd[k0:] - 2 / eta) <= 0.1 * 2 / eta)
    cf = want["cf_traj"]
    assert got["cf"]["k"] == cf.k.tolist() and got["cf"]["contact"] == cf.contact and got["cf"]["stop"] == cf.stop
    assert cf.contact is not None and 0 < cf.contact < STEPS
    assert len(got["gd"]["t"]) == len(got["gf"]["t"]) == STEPS + 1 and len(got["mid"]["t"]) == STEPS
    # every model's central flow runs to the end; this ReLU draw's slides along activation boundaries (the
    # Filippov continuation of numerics.central_flow.flows) from t = 3.4 on, where it used to stop
    assert cf.stop is None and got["cf"]["t"] == want["gd"]["t"].tolist()
    assert (len(cf.slides) > 0) == (model == "relu")


@pytest.mark.parametrize("model", cli.MODELS)
def test_text_agrees_with_the_library(capsys, model):
    rc, out, err = _main(capsys, "--model", model, "--steps", str(STEPS))
    want = _direct(model, FIRST[model], STEPS)
    eta = want["eta"]
    assert rc == 0 and err == ""
    assert out.startswith(f"{model} model: draw {FIRST[model]} under seed 0, {STEPS} GD steps")
    assert _line(out, "eta").split()[1] == "0.9" and f"2/eta = {_g(2 / eta)}" in out
    gd = want["gd"]["sharpness"]
    assert f"final lambda = {_g(gd[-1])}, lambda eta/2 = {_g(gd[-1] * eta / 2)}" in _line(out, "GD sharpness")
    k0 = int(np.argmax(gd >= 2 / eta))
    frac = np.mean(np.abs(gd[k0:] - 2 / eta) <= 0.1 * 2 / eta)
    assert _line(out, "at the edge").split()[3:8] == [_g(frac), "of", "the", str(STEPS + 1 - k0), "iterates"]
    rows = _law_rows(out)
    assert list(rows) == ["GD", "GD midpoint", "GF", "CF"]
    for key, label in (("gd", "GD"), ("mid", "GD midpoint"), ("gf", "GF"), ("cf", "CF")):
        change = want[key]["law_change"]
        assert rows[label] == ["final", _g(change[-1]) + ",", "max", _g(change.max())]
    cf = want["cf_traj"]
    assert _line(out, "CF contact").split()[-1] == _g(cf.contact)
    stop = f"{cf.stop} (its samples end at t = 3)" if cf.stop else f"none (reached t = {STEPS})"
    assert _line(out, "CF stop") == f"CF stop      {stop}"


def test_defaults_are_the_audit_setting(capsys):
    assert {m: cli.default_draw(m) for m in cli.MODELS} == FIRST
    assert FIRST["scalar"] == E.used_draws(E.scalar_setting, 1)[0] and FIRST["mf"] == E.used_draws(E.mf_setting, 1)[0]
    assert FIRST["relu"] == E.relu_used(1, 400)[0]
    got = _json(capsys, "--model", "scalar")
    assert got["steps"] == E.SETTINGS["scalar"]["T"] == 200 and got["draw"] == 0 and len(got["gf"]["sharpness"]) == 201


def test_a_later_draw_and_the_used_rule(capsys):
    used = E.used_draws(E.mf_setting, 4)
    assert [i for i in range(used[-1] + 1) if cli.unused_reason("mf", i) is None] == used
    got = _json(capsys, "--model", "mf", "--draw", str(used[2]), "--steps", "3")
    net, th, _ = E.draw(E.mf_setting, used[2])
    assert got["draw"] == used[2] and got["gd"]["sharpness"][0] == SPEC.sharpness(net, th)[0]


def test_json_numbers_are_numbers(capsys):
    got = _json(capsys, "--model", "scalar", "--steps", "3")
    assert all(isinstance(x, float) and math.isfinite(x) for x in got["gd"]["sharpness"] + got["cf"]["loss"])
    assert isinstance(got["gd"]["first_edge_step"], int) and all(isinstance(k, int) for k in got["cf"]["k"])
    assert cli.to_json({"a": np.array([1.0, np.nan, np.inf]), "b": math.nan}) == '{"a": [1.0, null, null], "b": null}'


# ------------------------------------------------------------------ the plot
def test_plot_writes_a_png(capsys, tmp_path):
    path = tmp_path / "cf.png"
    rc, out, err = _main(capsys, "--model", "scalar", "--steps", "5", "--plot", str(path))
    assert rc == 0 and err == "" and out.startswith("scalar model")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["--model", "sgd"], "--model", "'sgd'"),
        ([], "--model", "required"),
        (["--model", "scalar", "--steps", "-5"], "--steps", "'-5'"),
        (["--model", "scalar", "--steps", "0"], "--steps", "'0'"),
        (["--model", "scalar", "--steps", "1.5"], "--steps", "'1.5'"),
        (["--model", "scalar", "--steps", "x"], "--steps", "'x'"),
        (["--model", "scalar", "--steps", "1e30"], "--steps", "'1e30'"),
        (["--model", "mf", "--steps", str(cli.step_bound("mf") + 1)], "--steps", f"'{cli.step_bound('mf') + 1}'"),
        (["--model", "scalar", "--draw", "-1"], "--draw", "'-1'"),
        (["--model", "scalar", "--draw", "2.5"], "--draw", "'2.5'"),
        (["--model", "scalar", "--draw", str(2**64)], "--draw", f"'{2**64}'"),
        (["--model", "mf", "--draw", "0"], "--draw", "got 0"),  # start above the edge
        (["--model", "scalar", "--format", "xml"], "--format", "'xml'"),
        (["--model", "scalar", "--plot", "/nonexistent-dir/x.png"], "--plot", "'/nonexistent-dir/x.png'"),
        (["--model", "scalar", "--plot", "x.notaformat"], "--plot", "'x.notaformat'"),
        (["--model", "scalar", "--steps", "2", "--plot", "/proc/cf.png"], "--plot", "'/proc/cf.png'"),
    ],
)
def test_bad_input_is_one_line_naming_the_option_and_exit_2(capsys, argv, option, value):
    rc, out, err = _main(capsys, *argv)
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("python -m numerics.central_flow: error: ")
    assert option in err and value in err


def test_the_messages_give_the_range(capsys):
    bound = cli.step_bound("relu")
    rc, _, err = _main(capsys, "--model", "relu", "--steps", str(10**9))
    assert rc == 2 and f"argument --steps: must be an integer in [1, {bound}] for the relu model" in err
    assert bound >= E.SETTINGS["relu"]["T"] and all(cli.step_bound(m) >= E.SETTINGS[m]["T"] for m in cli.MODELS)
    rc, _, err = _main(capsys, "--model", "mf", "--draw", "0")
    assert rc == 2 and "above the edge" in err and f"[0, {2**64 - 1}]" in err and "(the first: 1)" in err
    rc, _, err = _main(capsys, "--model", "relu", "--draw", "0")
    assert rc == 2 and ("does not reach the edge" in err or "above the edge" in err) and "(the first: 3)" in err
    assert E.relu_contact(0, E.RELU_CONTACT_T) is None


# ------------------------------------------------------------------ help, running as a module, pipes
def test_help(capsys):
    rc, out, err = _main(capsys, "--help")
    assert rc == 0 and err == "" and out.startswith("usage: python -m numerics.central_flow")
    for word in ("{scalar,mf,relu}", "--draw", "--steps", "--format", "--plot", "hybrid", "2/eta"):
        assert word in out


def _module(*argv):
    return subprocess.Popen(
        [sys.executable, "-m", "numerics.central_flow", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_runs_as_module_and_a_closed_pipe_ends_quietly():
    proc = _module("--model", "scalar", "--steps", "3", "--format", "json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == "" and len(json.loads(out)["gd"]["sharpness"]) == 4
    proc = _module("--model", "scalar", "--steps", "3")  # the reader has gone before the first line is written
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141 and err == ""  # 128 + SIGPIPE, as numerics.multipath


def test_a_failed_run_is_one_line_and_exit_1(capsys, monkeypatch):
    def gives_up(*args, **kwargs):
        raise RuntimeError("more than 200 switches (modes, gates) before T = 8.0")

    monkeypatch.setattr(F, "gradient_flow", gives_up)
    rc, out, err = _main(capsys, "--model", "scalar", "--steps", "8")
    assert (
        rc == 1
        and out == ""
        and err == f"{cli.PROG}: error: the run failed: more than 200 switches (modes, gates) before T = 8.0\n"
    )
