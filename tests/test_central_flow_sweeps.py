"""The central-flow experiments as sweeps (:mod:`numerics.central_flow.sweeps`): cells equal the runs made directly.

Each experiment runs through the sweep layer (serially, at the smallest sizes) and is compared
bit for bit with the functions of :mod:`numerics.central_flow.experiments` called one after
another; the result must also survive the store's codec unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from numerics.central_flow import experiments as E
from numerics.sweep import resolve
from numerics.sweep.codec import decode, encode, equal
from tests.sweep_calls import assert_sizes_refused, experiment, run_quick

# 11 ReLU draws tried: two pool cells (10 + 1), and four used draws among them (3, 7, 8 and 10, the last in the
# one-draw cell), so the ReLU runs' three draws are found within the pool
SMALL = {"cf_draws": 3, "cf_relu_pool": 11}


def test_listing_names_every_central_flow_experiment():
    names = {e.name for e in resolve(["central_flow"])}
    assert names == {
        "central_flow.scalar",
        "central_flow.mf",
        "central_flow.relu",
        "central_flow.relu_pool",
        "central_flow.eos_scan",
        "central_flow.eos_track",
        "central_flow.eos_separate",
        "central_flow.scalar_regime",
        "central_flow.eos_neighbourhood",
        "central_flow.boundary_track",
    }


@pytest.mark.parametrize(
    ("name", "call", "setting", "ran"),
    [("central_flow.scalar", E.scalar_run, E.scalar_setting, 3), ("central_flow.mf", E.mf_run, E.mf_setting, 1)],
    ids=["scalar", "mf"],
)
def test_draw_cells_equal_the_direct_runs(name, call, setting, ran):
    """Every used draw is a cell, in order; the first ``ran`` cells run through the sweep layer equal the direct runs.

    The matrix model runs its first cell only: its cells are built and joined by the same code
    as the scalar model's, whose three cells all run, and one of its runs costs three scalar ones.
    """
    exp = experiment(name)
    draws = E.used_draws(setting, 3)
    cells = exp.cells(E.sizes_with("quick", SMALL))
    assert [(p["call"], p["kwargs"]) for p in cells] == [(call.__name__, {"i": i}) for i in draws]
    run = run_quick(dataclasses.replace(exp, cells=lambda z: exp.cells(z)[:ran]), SMALL)
    assert len(run.params) == ran
    result = run.result()
    assert equal(result, [call(i) for i in draws[:ran]])
    assert equal(decode(*encode(result)), result)  # what the store keeps is what was computed


@pytest.fixture(scope="module")
def pool11():
    """The one-call scan of the first 11 ReLU draws (computed once: each scan runs 11 hybrid flows)."""
    return E.relu_pool(0, 11)


def test_relu_pool_cells_equal_one_scan(pool11):
    run = run_quick("central_flow.relu_pool", SMALL)
    assert len(run.params) == 2  # 11 draws tried, 10 per cell
    assert len(pool11) >= 4 and pool11[-1][0] == 10  # the one-draw cell holds a used draw
    assert equal(run.result(), pool11)


def test_relu_runs_are_the_first_pool_draws(pool11):
    pool = pool11
    runs = run_quick("central_flow.relu", SMALL).result()
    assert [r["draw"] for r in runs] == [p[0] for p in pool[:3]]
    assert all(r["ratio"] == p[1] for r, p in zip(runs, pool))  # the same contact state both ways


def test_perturbed_draws_move_by_rounding_and_by_draw():
    model, th, _ = E.draw(E.scalar_setting, 2)
    _, moved, _ = E.draw(E.scalar_setting, 2, 1e-12)
    rel = np.abs(moved - th) / np.abs(th)
    assert np.all(rel < 1e-11) and rel.max() > 1e-14
    _, other, _ = E.draw(E.scalar_setting, 3, 1e-12)
    assert not np.array_equal((moved - th) / th, (other - E.draw(E.scalar_setting, 3)[1]) / other)


def test_perturb_reaches_the_cells_only_when_set():
    exp = experiment("central_flow.scalar")
    plain = exp.cells(E.sizes_with("quick", SMALL))
    moved = exp.cells(E.sizes_with("quick", {**SMALL, "perturb": "1e-12"}))
    assert all("perturb" not in p["kwargs"] for p in plain)  # unperturbed cells keep their store keys
    assert all(p["kwargs"]["perturb"] == 1e-12 for p in moved)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cf_draws": "2"}, r"size cf_draws must be an integer >= 3; got '2'"),
        ({"cf_relu_pool": "x"}, r"size cf_relu_pool must be an integer >= 10; got 'x'"),
        ({"perturb": "1e-3"}, r"size perturb must be a relative size in \[0, 1e-6\]"),
        ({"draws": 4}, r"unknown size 'draws'; sizes are: cf_draws, cf_relu_pool, perturb"),
    ],
)
def test_bad_sizes_are_refused_naming_the_size(overrides, message):
    assert_sizes_refused(E, overrides, message)


def test_relu_run_refuses_an_unused_draw():
    unused = next(i for i in range(40) if E.relu_contact(i, E.SETTINGS["relu"]["T"]) is None)
    with pytest.raises(ValueError, match=rf"relu_run: draw {unused} is not used"):
        E.relu_run(unused)


@pytest.mark.parametrize("paper", ["central_flow", "multipath"])
def test_every_cell_takes_the_perturbation(paper):
    """`pytest verify --perturb REL` gives every cell `perturb`: each cell's function must accept it."""
    import importlib
    import inspect

    module = importlib.import_module(f"numerics.{paper}.experiments")
    for exp in resolve([paper]):
        for cell in exp.cells(exp.sizes("quick", {"perturb": "1e-12"})):
            fn = getattr(module, cell["call"])
            assert cell["kwargs"].get("perturb") == 1e-12, exp.name
            assert "perturb" in inspect.signature(fn).parameters, f"{exp.name}: {cell['call']} has no perturb"


def test_eos_scan_perturbation_moves_the_start_only_when_asked():
    base = E.eos_scan("scalar", 0.9, 1.002, 0.3, steps=410)
    assert E.eos_scan("scalar", 0.9, 1.002, 0.3, steps=410, perturb=0.0) == base
    moved = E.eos_scan("scalar", 0.9, 1.002, 0.3, steps=410, perturb=1e-12)
    assert moved["lam0"] != base["lam0"] and abs(moved["lam0"] - base["lam0"]) < 1e-9


# --- the neighbourhood of the EoS settings: the sizes eos_c_excess and eos_scale ---------------------------------

_MOVED = ("central_flow.eos_track", "central_flow.eos_separate")


def test_eos_moves_reach_the_cells_only_when_set():
    """At the chosen setting the cells keep their store keys; a neighbour's factors join every key of both."""
    from numerics.sweep.store import cell_key

    for name in _MOVED:
        exp = experiment(name)
        plain = exp.cells(E.sizes_with("quick", {}))
        assert all(set(p["kwargs"]) <= {"model", "i", "steps"} for p in plain), name  # the keys before the sizes
        keys = {tuple(cell_key(name, p) for p in plain)}
        for moves in ({"eos_c_excess": "0.5"}, {"eos_scale": "0.8"}, {"eos_c_excess": "1.25", "eos_scale": "0.8"}):
            cells = exp.cells(E.sizes_with("quick", moves))
            want = {"c_excess": float(moves.get("eos_c_excess", 1)), "scale": float(moves.get("eos_scale", 1))}
            want = {k: v for k, v in want.items() if v != 1}
            assert all({k: p["kwargs"][k] for k in want} == want for p in cells), (name, moves)
            assert all(set(p["kwargs"]) - set(want) <= {"model", "i", "steps"} for p in cells), (name, moves)
            keys.add(tuple(cell_key(name, p) for p in cells))
        assert len(keys) == 4, name  # each setting its own cells: the store never mixes settings
        assert E.sizes_with("quick", {"eos_c_excess": "1", "eos_scale": "1.0"}) == E.sizes("quick")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"eos_scale": "3"}, r"size eos_scale must be a factor in \[0.2, 2\] \(it multiplies the EoS settings' start"),
        ({"eos_scale": "0.1"}, r"size eos_scale must be a factor in \[0.2, 2\] \(it multiplies the EoS settings' start "
         r"scale\); got '0.1'"),
        ({"eos_c_excess": "20"}, r"size eos_c_excess must be a factor in \[0.1, 10\] \(it multiplies the EoS "
         r"settings' c - 1\); got '20'"),
        ({"eos_c_excess": "0"}, r"size eos_c_excess must be a number > 0; got '0'"),
        ({"eos_c_excess": "-0.5"}, r"size eos_c_excess must be a number > 0"),
        ({"eos_scale": "nan"}, r"size eos_scale must be a number > 0"),
        ({"eos_scale": "wide"}, r"size eos_scale must be a number > 0; got 'wide'"),
    ],
)  # fmt: skip
def test_bad_eos_moves_are_refused_naming_the_size(overrides, message):
    assert_sizes_refused(E, overrides, message)


def test_eos_setting_moves_c_minus_one_and_the_start_scale():
    for m in E.EOS_MODELS:
        assert E.eos_setting(m) == E.EOS_SETTINGS[m]  # the chosen setting, exactly
        got = E.eos_setting(m, 2.0, 0.5)
        base = E.EOS_SETTINGS[m]
        assert got == {**base, "c": 1 + 2.0 * (base["c"] - 1), "scale": 0.5 * base["scale"]} and got["c"] > 1
    sep = E.eos_setting("mf", 0.5, 2.0, E.EOS_SEPARATE["mf"])
    assert sep == {**E.EOS_SEPARATE["mf"], "c": pytest.approx(1.00025, abs=1e-15), "scale": 0.6}  # lag, steps kept
    with pytest.raises(ValueError, match="c_excess"):
        E.eos_setting("mf", -1.0)


class _Built(Exception):
    """Raised by the spy below once the run's start is built: the rest of the run is not needed."""


@pytest.mark.parametrize("call", ["eos_track", "eos_separate"])
def test_the_moved_setting_reaches_the_problem_and_the_default_is_the_drawn_one(monkeypatch, call):
    """The runs' start and model at (c_excess, scale), and at (1, 1) those of the setting functions' draw."""
    seen = []

    def spy(model, theta, eta, steps):
        seen.append((model, theta.copy(), eta))
        raise _Built

    monkeypatch.setattr(E.F, "gradient_descent", spy)
    for kw in ({}, {"c_excess": 0.5, "scale": 0.8}):
        with pytest.raises(_Built):
            getattr(E, call)("mf", 2, perturb=1e-12, **kw)
    (m0, th0, eta0), (m1, th1, _) = seen
    base = E.EOS_SETTINGS["mf"] if call == "eos_track" else E.EOS_SEPARATE["mf"]
    if call == "eos_track":  # the default run is draw 2 of mf_eos_setting, perturbed as experiments.draw keys it
        dm, dth, deta = E.draw(E.mf_eos_setting, 2, 1e-12)
        assert np.array_equal(th0, dth) and np.array_equal(m0.data["Y"], dm.data["Y"]) and eta0 == deta
    moved = E.eos_setting("mf", 0.5, 0.8, base)
    want, wth, _ = E.eos_problem("mf", moved["eta"], moved["c"], moved["scale"], E.SEED, 2)
    assert np.array_equal(m1.data["Y"], want.data["Y"])  # Y = A diag(s, s/2) B^T with s = c / eta
    s0, s1 = (np.linalg.svd(m.data["Y"], compute_uv=False)[0] for m in (m0, m1))
    assert s1 / s0 == pytest.approx(moved["c"] / base["c"], rel=1e-12)
    assert np.allclose(th1, wth, rtol=1e-10) and not np.allclose(th1, wth, rtol=1e-14, atol=0)  # perturbed start
