"""``python -m numerics.central_flow``: its output against the library called directly, the plot, bad input, help."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from numerics.central_flow import cli
from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.cli import main
from tests import cli_calls as CLI

STEPS = 8
SETTINGS = ("eos", "reconstructed")
FIRST = {  # the default draws: eos_track's first draw; the reconstructed audit's first used draws
    "eos": {"scalar": 0, "mf": 0, "relu": 0},
    "reconstructed": {"scalar": 0, "mf": 1, "relu": 3},  # experiments.used_draws, relu_used
}
CATAPULT_STEPS = 150  # the scalar EoS draw 0's catapult ends at step 57, well inside a 150-step run's window


def _main(capsys, *argv):
    return CLI.call(main, capsys, *argv)


def _json(capsys, *argv) -> dict:
    return CLI.call_json(main, capsys, *argv)


def _line(out: str, label: str) -> str:
    (line,) = [x for x in out.splitlines() if x.lstrip().startswith(label)]
    return line


def _g(x) -> str:
    return f"{x:.10g}"


def _null(x: np.ndarray) -> list:
    return [None if math.isnan(v) else v for v in x.tolist()]


def _direct(model: str, draw: int, steps: int, setting: str = "eos") -> dict:
    """The runs made here with the library: GD, its midpoints, GF and the hybrid flow on the step grid."""
    net, th, eta = E.draw(cli.SETTINGS[setting][model], draw)
    grid = np.arange(steps + 1, dtype=float)
    gd = F.gradient_descent(net, th, eta, steps)
    gf = F.gradient_flow(net, th, eta, float(steps), grid)
    cf = F.hybrid_flow(net, th, eta, float(steps), grid)
    law0 = np.asarray(CL.law(th, net))
    scale = float(th @ th) if model == "relu" else float(np.linalg.norm(law0))  # |theta_0|^2, |h_0|, |Psi_0|_F
    out: dict = {"eta": eta, "cf_traj": cf, "net": net, "theta0": th}
    runs = {"gd": (grid, gd), "mid": (grid[:-1] + 0.5, F.midpoints(gd)), "gf": (gf.t, gf.theta), "cf": (cf.t, cf.theta)}
    for key, (t, theta) in runs.items():
        law = np.asarray(CL.law(theta, net))
        out[key] = {"t": t, "theta": theta, "law": law}
        out[key]["law_change"] = np.linalg.norm((law - law0).reshape(len(t), -1), axis=1) / scale
        if key != "mid":
            out[key]["sharpness"] = np.array([SPEC.sharpness(net, x)[0] for x in theta])
            out[key]["loss"] = np.array([net.loss(x) for x in theta])
    return out


def _law_rows(out: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The indented rows of the law's change in the text output, by label: from theta_0, and from t_c (EoS)."""
    sections: list[dict[str, list[str]]] = [{}, {}]
    part = 0
    for line in out.splitlines():
        if line.startswith("law from t_c"):
            part = 1
        elif line.startswith("  "):
            sections[part][line[:14].strip()] = line[14:].split()
    return sections[0], sections[1]


# ------------------------------------------------------------------ output against the library
@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("model", cli.MODELS)
def test_json_agrees_with_the_library(capsys, setting, model):
    got = _json(capsys, "--model", model, "--setting", setting, "--steps", str(STEPS))
    want = _direct(model, FIRST[setting][model], STEPS, setting)
    eta = want["eta"]
    assert got["setting"] == setting and got["model"] == model and got["draw"] == FIRST[setting][model]
    assert got["seed"] == E.SEED == 0 and got["theta0"] == want["theta0"].tolist()
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
    # every model's central flow runs to the end; the reconstructed ReLU draw's slides along activation boundaries
    # (the Filippov continuation of numerics.central_flow.flows) from t = 3.4 on, where it used to stop
    assert cf.stop is None and got["cf"]["t"] == want["gd"]["t"].tolist()
    assert (len(cf.slides) > 0) == (model == "relu" and setting == "reconstructed")
    # the catapult belongs to the EoS setting; 8 steps are too few for it to end inside the detection window
    assert ("catapult" in got) == (setting == "eos")
    if setting == "eos":
        assert got["catapult"]["first"] == k0 and got["catapult"]["step"] is None and got["catapult"]["why"]
        assert got["gd"]["law_change_catapult"] is None


def test_the_eos_setting_is_the_audits():
    """The EoS setting's draws are eos_track's: experiments.draw of the *_eos_setting functions (eos_problem at
    EOS_SETTINGS under SEED); at the default steps the catapult's end is eos_track's (catapult_end over EOS_WINDOW
    steps of its 3 EOS_WINDOW-step GD run), and GD stays at the edge after it (the issue's EoS criterion)."""
    assert cli.SETTINGS["eos"] == {"scalar": E.scalar_eos_setting, "mf": E.mf_eos_setting, "relu": E.relu_eos_setting}
    assert cli.EOS_STEPS == 3 * E.EOS_WINDOW and cli.EOS_DRAWS == {"quick": 6, "full": 12}
    for model in cli.MODELS:
        c = E.EOS_SETTINGS[model]
        net, th, eta = E.draw(cli.SETTINGS["eos"][model], 0)
        assert np.array_equal(th, E.eos_problem(model, c["eta"], c["c"], c["scale"], E.SEED, 0)[1])
        probe = F.gradient_descent(net, th, eta, 3 * E.EOS_WINDOW)  # as eos_track
        lam = EOS.sharpness_series(net, probe)
        first = int(np.nonzero(lam * eta / 2 >= 1)[0][0])
        audit = EOS.catapult_end(probe, lam, eta, first, E.EOS_WINDOW)
        got = cli.catapult(probe, lam, eta)
        assert got["first"] == first and got["window_end"] == first + E.EOS_WINDOW - 1
        assert audit is not None and got["step"] == audit > first
        after = np.abs(lam[audit:] * eta / 2 - 1) <= 0.1
        assert got["iterates_after"] == after.size == 3 * E.EOS_WINDOW + 1 - audit
        assert got["edge_fraction_after"] == after.mean() >= 0.8


def test_json_catapult_and_the_law_from_it(capsys):
    got = _json(capsys, "--model", "scalar", "--steps", str(CATAPULT_STEPS))
    want = _direct("scalar", 0, CATAPULT_STEPS)
    eta, lam = want["eta"], want["gd"]["sharpness"]
    first = int(np.nonzero(lam * eta / 2 >= 1)[0][0])
    window = min(E.EOS_WINDOW, CATAPULT_STEPS - 1 - first)  # the window shortened to the run
    tc = EOS.catapult_end(want["gd"]["theta"], lam, eta, first, window)
    assert tc is not None and first < tc < first + window - 1
    after = np.abs(lam[tc:] - 2 / eta) <= 0.1 * 2 / eta
    assert got["catapult"] == {
        "first": first,
        "window_end": first + window - 1,
        "step": tc,
        "iterates_after": CATAPULT_STEPS + 1 - tc,
        "edge_fraction_after": after.mean(),
    }
    assert got["eos"] == E.EOS_SETTINGS["scalar"] and got["law_scale_catapult_name"] == "|h(t_c)|"
    for key in ("gd", "mid", "gf", "cf"):
        ref = want[key]["theta"][tc]  # each run's own point at t_c (the midpoints: m_tc, at t_c + 1/2)
        h = want[key]["law"]
        change = np.full(h.size, np.nan)
        change[tc:] = np.abs(h[tc:] - h[tc]) / abs(ref[0] ** 2 - ref[1] ** 2)
        assert got[key]["law_scale_catapult"] == abs(ref[0] ** 2 - ref[1] ** 2)
        assert got[key]["law_change_catapult"] == _null(change)
        assert got[key]["law_change_catapult_final"] == change[-1]
        assert got[key]["law_change_catapult_max"] == np.nanmax(change)
    # GF conserves h; GD (after its catapult) and the central flow move it
    assert got["gf"]["law_change_catapult_max"] < 1e-10 < got["gd"]["law_change_catapult_final"]


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("model", cli.MODELS)
def test_text_agrees_with_the_library(capsys, setting, model):
    rc, out, err = _main(capsys, "--model", model, "--setting", setting, "--steps", str(STEPS))
    draw = FIRST[setting][model]
    want = _direct(model, draw, STEPS, setting)
    eta = want["eta"]
    assert rc == 0 and err == ""
    assert out.startswith(f"{model} model, {setting} setting: draw {draw} under seed 0, {STEPS} GD steps")
    assert _line(out, "eta").split()[1] == "0.9" and f"2/eta = {_g(2 / eta)}" in out
    gd = want["gd"]["sharpness"]
    assert f"final lambda = {_g(gd[-1])}, lambda eta/2 = {_g(gd[-1] * eta / 2)}" in _line(out, "GD sharpness")
    k0 = int(np.argmax(gd >= 2 / eta))
    frac = np.mean(np.abs(gd[k0:] - 2 / eta) <= 0.1 * 2 / eta)
    assert _line(out, "at the edge").split()[3:8] == [_g(frac), "of", "the", str(STEPS + 1 - k0), "iterates"]
    rows, rows_tc = _law_rows(out)
    assert list(rows) == ["GD", "GD midpoint", "GF", "CF"] and rows_tc == {}
    for key, label in (("gd", "GD"), ("mid", "GD midpoint"), ("gf", "GF"), ("cf", "CF")):
        change = want[key]["law_change"]
        assert rows[label] == ["final", _g(change[-1]) + ",", "max", _g(change.max())]
    cf = want["cf_traj"]
    assert _line(out, "CF contact").split()[-1] == _g(cf.contact)
    stop = f"{cf.stop} (its samples end at t = 3)" if cf.stop else f"none (reached t = {STEPS})"
    assert _line(out, "CF stop") == f"CF stop      {stop}"
    if setting == "eos":
        c = E.EOS_SETTINGS[model]
        assert _line(out, "setting").startswith(f"setting      c = eta lambda*/2 = {_g(c['c'])}, start scale 0.3")
        assert "eos_track ensembles: draws 0-5 quick, 0-11 full" in out
        assert _line(out, "catapult").startswith("catapult     no end found: GD has not settled at the edge by step")
    else:
        assert "catapult" not in out and not out.splitlines()[1].startswith("setting")


def test_text_catapult_lines(capsys):
    rc, out, err = _main(capsys, "--model", "scalar", "--steps", str(CATAPULT_STEPS))
    got = _json(capsys, "--model", "scalar", "--steps", str(CATAPULT_STEPS))
    cat = got["catapult"]
    assert rc == 0 and err == ""
    assert _line(out, "catapult").startswith(
        f"catapult     ends at step t_c = {cat['step']} (eos.catapult_end over steps {cat['first']}-{cat['window_end']}"
    )
    assert _line(out, "after it") == (
        f"after it     {_g(cat['edge_fraction_after'])} of the {cat['iterates_after']} iterates from step "
        f"{cat['step']} to {CATAPULT_STEPS} have |lambda - 2/eta| <= 0.1 2/eta"
    )
    assert _line(out, "law from t_c").startswith("law from t_c |law(t) - law(t_c)| / |h(t_c)| of each run at its own")
    rows, rows_tc = _law_rows(out)
    assert list(rows) == list(rows_tc) == ["GD", "GD midpoint", "GF", "CF"]
    for key, label in (("gd", "GD"), ("mid", "GD midpoint"), ("gf", "GF"), ("cf", "CF")):
        run = got[key]
        assert rows_tc[label] == [
            "final",
            _g(run["law_change_catapult_final"]) + ",",
            "max",
            _g(run["law_change_catapult_max"]),
        ]


def test_the_catapult_without_an_end():
    never = cli.catapult(np.ones((5, 2)), np.ones(5), 0.9)  # lambda eta/2 = 0.45 throughout
    assert never["first"] is None and never["step"] is None and "never reaches" in never["why"]
    short = cli.catapult(np.ones((3, 2)), np.array([1.0, 2.3, 2.2]), 0.9)  # needs iterates 0 .. first + 2 at least
    assert short["first"] == 1 and short["window_end"] is None and "too short" in short["why"]


def test_defaults_are_the_audit_setting(capsys):
    assert {s: {m: cli.default_draw(m, s) for m in cli.MODELS} for s in SETTINGS} == FIRST
    first = FIRST["reconstructed"]
    assert first["scalar"] == E.used_draws(E.scalar_setting, 1)[0] and first["mf"] == E.used_draws(E.mf_setting, 1)[0]
    assert first["relu"] == E.relu_used(1, 400)[0]
    assert [cli.default_steps(m) for m in cli.MODELS] == [cli.EOS_STEPS] * 3
    got = _json(capsys, "--model", "scalar")  # the EoS setting, draw 0, eos_track's 1200 steps
    assert got["setting"] == "eos" and got["draw"] == 0 and got["steps"] == cli.EOS_STEPS == 1200
    assert len(got["gf"]["sharpness"]) == 1201 and got["catapult"]["step"] is not None
    got = _json(capsys, "--model", "scalar", "--setting", "reconstructed")
    assert got["steps"] == E.SETTINGS["scalar"]["T"] == 200 and got["draw"] == 0 and len(got["gf"]["sharpness"]) == 201


def test_a_later_draw_and_the_used_rule(capsys):
    used = E.used_draws(E.mf_setting, 4)
    assert [i for i in range(used[-1] + 1) if cli.unused_reason("mf", i, "reconstructed") is None] == used
    got = _json(capsys, "--model", "mf", "--setting", "reconstructed", "--draw", str(used[2]), "--steps", "3")
    net, th, _ = E.draw(E.mf_setting, used[2])
    assert got["draw"] == used[2] and got["gd"]["sharpness"][0] == SPEC.sharpness(net, th)[0]
    # EoS: every draw of the ensembles starts below the edge; a later one runs as well
    assert all(cli.unused_reason(m, i) is None for m in cli.MODELS for i in range(cli.EOS_DRAWS["full"]))
    got = _json(capsys, "--model", "relu", "--draw", "11", "--steps", "3")
    net, th, _ = E.draw(E.relu_eos_setting, 11)
    assert got["draw"] == 11 and got["theta0"] == th.tolist()
    assert got["gd"]["sharpness"][0] == SPEC.sharpness(net, th)[0]


def test_json_numbers_are_numbers(capsys):
    got = _json(capsys, "--model", "scalar", "--steps", "3")
    assert all(isinstance(x, float) and math.isfinite(x) for x in got["gd"]["sharpness"] + got["cf"]["loss"])
    assert isinstance(got["gd"]["first_edge_step"], int) and all(isinstance(k, int) for k in got["cf"]["k"])
    assert got["catapult"]["step"] is None and "too short" in got["catapult"]["why"]
    assert cli.to_json({"a": np.array([1.0, np.nan, np.inf]), "b": math.nan}) == '{"a": [1.0, null, null], "b": null}'


# ------------------------------------------------------------------ the plot
@pytest.mark.parametrize("argv", [["--steps", "80"], ["--setting", "reconstructed", "--steps", "5"]])
def test_plot_writes_a_png(capsys, tmp_path, argv):
    path = tmp_path / "cf.png"
    rc, out, err = _main(capsys, "--model", "scalar", *argv, "--plot", str(path))
    assert rc == 0 and err == "" and out.startswith("scalar model")
    assert ("catapult     ends at step t_c = " in out) == ("reconstructed" not in argv)  # marked on the plot
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["--model", "sgd"], "--model", "'sgd'"),
        ([], "--model", "required"),
        (["--model", "scalar", "--setting", "paper"], "--setting", "'paper'"),
        (["--model", "scalar", "--steps", "-5"], "--steps", "'-5'"),
        (["--model", "scalar", "--steps", "0"], "--steps", "'0'"),
        (["--model", "scalar", "--steps", "1.5"], "--steps", "'1.5'"),
        (["--model", "scalar", "--steps", "x"], "--steps", "'x'"),
        (["--model", "scalar", "--steps", "1e30"], "--steps", "'1e30'"),
        (["--model", "mf", "--steps", str(cli.step_bound("mf") + 1)], "--steps", f"'{cli.step_bound('mf') + 1}'"),
        (
            [
                "--model",
                "relu",
                "--setting",
                "reconstructed",
                "--steps",
                str(cli.step_bound("relu", "reconstructed") + 1),
            ],
            "--steps",
            f"'{cli.step_bound('relu', 'reconstructed') + 1}'",
        ),
        (["--model", "scalar", "--draw", "-1"], "--draw", "'-1'"),
        (["--model", "scalar", "--draw", "2.5"], "--draw", "'2.5'"),
        (["--model", "scalar", "--draw", str(2**64)], "--draw", f"'{2**64}'"),
        (["--model", "mf", "--setting", "reconstructed", "--draw", "0"], "--draw", "got 0"),  # start above the edge
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


def test_the_messages_give_the_range(capsys, monkeypatch):
    for setting in SETTINGS:
        assert all(cli.step_bound(m, setting) >= cli.default_steps(m, setting) for m in cli.MODELS)
        for model in cli.MODELS:
            bound = cli.step_bound(model, setting)
            rc, _, err = _main(capsys, "--model", model, "--setting", setting, "--steps", str(10**9))
            want = f"argument --steps: must be an integer in [1, {bound}] for the {model} model in the {setting}"
            assert rc == 2 and f"{want} setting" in err
    rc, _, err = _main(capsys, "--model", "mf", "--setting", "reconstructed", "--draw", "0")
    assert rc == 2 and "above the edge" in err and f"[0, {2**64 - 1}]" in err and "(the first: 1)" in err
    rc, _, err = _main(capsys, "--model", "relu", "--setting", "reconstructed", "--draw", "0")
    assert rc == 2 and ("does not reach the edge" in err or "above the edge" in err) and "(the first: 3)" in err
    assert E.relu_contact(0, E.RELU_CONTACT_T) is None
    # an EoS draw starting above the edge (none of the audit's does: a start scale of 3 makes one) is refused too
    monkeypatch.setitem(E.EOS_SETTINGS, "scalar", {**E.EOS_SETTINGS["scalar"], "scale": 3.0})
    rc, out, err = _main(capsys, "--model", "scalar", "--draw", "4")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "argument --draw: draw 4 of the scalar eos setting cannot be run: its start lies on or above the edge" in err
    assert f"[0, {2**64 - 1}] whose start lies below the edge; got 4" in err


# ------------------------------------------------------------------ help, running as a module, pipes
def test_help(capsys):
    rc, out, err = _main(capsys, "--help")
    assert rc == 0 and err == "" and out.startswith("usage: python -m numerics.central_flow")
    for word in ("{scalar,mf,relu}", "{eos,reconstructed}", "--draw", "--steps", "--format", "--plot", "hybrid"):
        assert word in out
    for word in ("2/eta", "catapult", "EOS_SETTINGS", "eos_track"):
        assert word in out


def test_runs_as_module_and_a_closed_pipe_ends_quietly():
    proc = CLI.module("numerics.central_flow", "--model", "scalar", "--steps", "3", "--format", "json")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == "" and len(json.loads(out)["gd"]["sharpness"]) == 4
    # the reader has gone before the first line is written
    proc = CLI.module("numerics.central_flow", "--model", "scalar", "--steps", "3")
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
