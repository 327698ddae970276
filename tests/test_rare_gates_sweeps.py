"""The rare-gates experiments as sweeps (:mod:`numerics.rare_gates.sweeps`): the joined cells equal the
one-call functions.

Each experiment is run through the sweep layer at reduced sizes chosen so that a setting
spans more than one cell (e.g. 70 streams = 64 + 6), and compared bit for bit with the
function of :mod:`numerics.rare_gates.experiments` that the audit used to call directly.

The comparisons run on fewer settings than the audit (:func:`few_settings`): the cells
builders and the one-call functions read the setting lists from the experiments module, and
every setting goes through the same kernel call, cell split and assembly; only the costliest
settings (b = 64, which is 128 of the 161 samples per update of Table 2's five rows, and the
1000-unit Corollary 5 horizon arm) are left out. What each experiment's comparison covers:

* ``table2``, ``saturation``, ``repeat``: the float64 lock-step SGD kernel from the constructed
  checkpoint, split by stream range within a setting (``saturation``: ranges offset after
  Table 2's streams; ``repeat``: both experiments' seeds and check cadences);
* ``grid``: the same kernel at check_every = 1 over the (delta0, b, eta) nesting of Figure 3(a);
* ``paths``: the traced kernel; ``weight_decay`` and ``noise``: the Appendix 20 variants;
* ``cor5``: per-arm seeds and the two ways an arm group is assembled (a list, a single arm);
* ``halving``: the GD kernel, split by step size; ``extended``: the double-double replay;
* ``theorem1``: the source chain, warm and fresh target runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from numerics.rare_gates import experiments as E
from numerics.rare_gates import sweeps as RS
from numerics.sweep import Experiment, resolve, run_sweep
from numerics.sweep.codec import equal
from tests.sweep_calls import assert_sizes_refused, run_quick


@pytest.fixture
def few_settings(monkeypatch):
    """The experiments' setting lists cut to cheap settings that keep every code path (see the module docstring).

    Table 2's rows without b = 64 (a quiet row, (16, 1e-5), and two that recover); Figure 3(a)'s
    grid on 2 x 2 x 2 of its values (the delta0 that recover soonest, b = 1 and 16, both step
    sizes); Corollary 5's arms without the horizon arm (the batch arm keeps the single-arm group),
    one of the three budget arms and one of the three samples arms.
    """
    monkeypatch.setattr(E, "TABLE2_SETTINGS", tuple(s for s in E.TABLE2_SETTINGS if s[0] != 64))
    monkeypatch.setattr(E, "FIG3A_DELTA0", E.FIG3A_DELTA0[2:])
    monkeypatch.setattr(E, "FIG3A_B", E.FIG3A_B[:2])
    arms = [a for a in E.COR5_ARMS if a[0] != "horizon" and a[4] not in (("budget", 4), ("samples", 16, 400))]
    monkeypatch.setattr(E, "COR5_ARMS", tuple(arms))
    assert len(E.TABLE2_SETTINGS) == 3 and [a[0] for a in arms].count("budget") == 2
    assert {a[0] for a in arms} == {"budget", "batch", "samples"} and len(arms) == 5


CASES = {
    "rare_gates.table2": (
        {"table2_streams": 70},
        lambda z: E.long_horizons(z.table2_streams, E.TABLE2_SETTINGS),
    ),
    "rare_gates.saturation": (
        {"table2_streams": 3, "saturation_streams": 66},
        lambda z: E.long_horizons(z.saturation_streams, E.TABLE2_SETTINGS, first_stream=z.table2_streams),
    ),
    "rare_gates.paths": (
        {"table2_streams": 70, "floor_horizon": 40},
        lambda z: E.angle_paths(z.table2_streams, horizon=z.floor_horizon),
    ),
    "rare_gates.grid": (
        {"fig3a_streams": 66},
        lambda z: E.gamma_grid(z.fig3a_streams, delta0s=E.FIG3A_DELTA0, bs=E.FIG3A_B, etas=E.FIG3A_ETA),
    ),
    "rare_gates.weight_decay": (
        {"appendix20_streams": 66, "appendix20_horizon": 20},
        lambda z: E.weight_decay_controls(z.appendix20_streams, horizon=z.appendix20_horizon),
    ),
    "rare_gates.noise": (
        {"appendix20_noise_streams": 66, "appendix20_horizon": 20},
        lambda z: E.parameter_noise(z.appendix20_noise_streams, horizon=z.appendix20_horizon),
    ),
    "rare_gates.weight_decay_b8": (
        {"appendix20_alt_streams": 66, "appendix20_horizon": 20},
        lambda z: E.weight_decay_controls(z.appendix20_alt_streams, b=E.A20_ALT_B, horizon=z.appendix20_horizon),
    ),
    "rare_gates.noise_b8": (
        {"appendix20_alt_streams": 66, "appendix20_horizon": 20},
        lambda z: E.parameter_noise(z.appendix20_alt_streams, b=E.A20_ALT_B, horizon=z.appendix20_horizon),
    ),
    # the further streams of four cells, after each experiment's own (2 here) and the saturation runs (none)
    "rare_gates.larger": (
        {
            "fig3a_streams": 2,
            "table2_streams": 2,
            "appendix20_noise_streams": 2,
            "agree_streams": 68,
            "same_streams": 68,
            "appendix20_horizon": 20,
        },
        lambda z: {
            "agree,fig3a": E.gamma_grid(66, delta0s=[1e-4], bs=[64], etas=[0.01], first_stream=2)[0],
            "agree,table2": E.long_horizons(66, [(64, 1e-4)], first_stream=2)[0],
            "same,fig3a": E.gamma_grid(66, delta0s=[1e-5], bs=[16], etas=[0.01], first_stream=2)[0],
            "same,a20": E.parameter_noise(66, scales=[0.0], modes=["independent"], horizon=20.0, first_stream=2)[0],
        },
    ),
    "rare_gates.cor5": ({"cor5_streams": 66}, lambda z: E.sample_size_design(z.cor5_streams)),
    "rare_gates.halving": ({"halving_inits": 1}, lambda z: E.gd_step_halving(z.halving_inits)),
    "rare_gates.extended": (
        {"extended_per_setting": "none", "table2_streams": 18, "extended_horizon": 1.0},
        lambda z: E.extended_rerun(
            None, horizon=z.extended_horizon, settings=E.TABLE2_SETTINGS, streams=z.table2_streams
        ),
    ),
    "rare_gates.repeat": (
        {"fig3a_streams": 66, "table2_streams": 3, "repeat_streams": 2},
        lambda z: [
            *E.repeated_settings(z.fig3a_streams, E.TABLE2_SETTINGS, streams_of="fig3a", check_every=10),
            *E.repeated_settings(z.table2_streams, E.TABLE2_SETTINGS, streams_of="table2", check_every=1),
            *(
                r
                for of in ("fig3a", "table2")
                for r in E.repeated_settings(z.repeat_streams, [E.REPEAT_DISCORDANT], streams_of=of, check_every=10)
            ),
        ],
    ),
    "rare_gates.theorem1": (
        {"warm_inits": 1, "warm_streams": 258, "fresh_inits": 2, "cor3_times": 1, "cor3_streams": 258},
        lambda z: {
            "warm": [E.warm_decay(i, z.warm_streams) for i in E.warm_init_ids(z.warm_inits)],
            "cor3": [
                *(
                    E.warm_decay(i, z.cor3_streams, times=[t], eta=eta, seed=seed)
                    for t, eta, seed in E.cor3_settings(z.cor3_times)
                    for i in E.warm_init_ids(z.warm_inits)
                ),
                *(
                    E.warm_decay(i, z.cor3_streams, times=[t], b=b, eta=eta, seed=seed)
                    for b, t, eta, seed in E.cor3_batch_settings(z.cor3_batches)
                    for i in E.warm_init_ids(z.warm_inits)
                ),
            ],
            "fresh": [E.fresh_success(z.fresh_inits, eta) for eta in E.FRESH_ETAS],
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sweep_equals_the_one_call_experiment(name, few_settings):
    overrides, direct = CASES[name]
    run = run_quick(name, overrides)
    assert len(run.params) > len({p.get("setting") for p in run.params})  # some setting spans several cells
    assert equal(run.result(), direct(E.sizes_with("quick", overrides)))


def test_extended_selection_is_one_cell_per_setting():
    overrides = {"extended_per_setting": 2, "table2_streams": 8, "extended_horizon": 1.0}
    run = run_quick("rare_gates.extended", overrides)
    assert len(run.params) == len(E.TABLE2_SETTINGS) == 5
    assert equal(run.result(), E.extended_rerun(2, horizon=1.0, streams=8))


def _small(name: str, cells: list[dict], assemble) -> Experiment:
    return Experiment(
        name=name,
        summary="",
        sizes=lambda p, o: None,
        cells=lambda _z: cells,
        compute=RS.compute,
        assemble=assemble,
        code_modules=RS.CODE_MODULES,
    )


def test_table1_cells_join_to_the_one_call_experiment():
    kw = dict(times=[0.0, 0.5, 1.0], eta=0.01, horizon=0.5, seed=5, init_seed=9)
    cells = [RS._cell("identical_checkpoints", n_inits=n, first_init=f, **kw) for f, n in ((0, 2), (2, 1))]
    run = run_sweep(_small("test.table1", cells, RS._table1_assemble), progress=False)
    assert equal(run.result(), E.identical_checkpoints(3, **kw))


def test_joint_cells_join_to_the_one_call_experiment():
    kw = dict(times=[0.0, 0.5], horizon=0.2, seed=3, init_seed=9)
    cells = [
        RS._cell("joint_sweep", n_inits=n, first_init=f, etas=[eta], **kw)
        for eta in (0.01, 0.005)
        for f, n in ((0, 1), (1, 2))
    ]
    run = run_sweep(_small("test.joint", cells, RS._joint_assemble), progress=False)
    assert equal(run.result(), E.joint_sweep(3, etas=(0.01, 0.005), **kw))


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_cells_cover_every_stream_once_in_order(profile):
    for exp in resolve(["rare_gates"]):
        z = exp.sizes(profile, {})
        ranges: dict = {}
        for p in exp.cells(z):
            kw = p["kwargs"]
            first, count = (
                (kw["first_init"], kw["n_inits"])
                if "first_init" in kw
                else (kw.get("first_stream", 0), kw.get("streams"))
            )
            key = (p.get("setting"), tuple(kw.get("etas", ())))
            ranges.setdefault(key, []).append((first, count))
        # the saturation runs continue each Table 2 setting's streams after Table 2's own; the larger runs each
        # side's after its experiment's own (and Table 2's after the saturation runs)
        larger = {
            "agree,fig3a": z.fig3a_streams,
            "agree,table2": z.table2_streams + z.saturation_streams,
            "same,fig3a": z.fig3a_streams,
            "same,a20": z.appendix20_noise_streams,
        }
        for key, rs in ranges.items():
            start = z.table2_streams if exp.name == "rare_gates.saturation" else 0
            start = larger[key[0]] if exp.name == "rare_gates.larger" else start
            starts = [f for f, _ in rs]
            assert starts == sorted(starts) and starts[0] == start, (exp.name, key)
            assert all(f + n == g for (f, n), (g, _) in zip(rs, rs[1:])), (exp.name, key)


def test_unknown_call_is_rejected():
    with pytest.raises(ValueError, match="call must be one of"):
        RS.compute({"call": "os.system", "kwargs": {}})


def test_every_seed_is_explicit_in_the_cells():
    for exp in resolve(["rare_gates"]):
        for p in exp.cells(exp.sizes("full", {})):
            kw = p["kwargs"]
            assert "seed" in kw or "init_seed" in kw, exp.name


# --- perturbed starts (``pytest verify --perturb``) ------------------------------------------------------

PERTURBED = {
    "rare_gates.table2": (
        {"table2_streams": 70, "perturb": 1e-12},
        lambda z: E.long_horizons(z.table2_streams, E.TABLE2_SETTINGS, perturb=z.perturb),
    ),
    "rare_gates.halving": (  # one initialisation: the cells split by step size, and the move is keyed by its id
        {"halving_inits": 1, "perturb": 1e-12},
        lambda z: E.gd_step_halving(z.halving_inits, perturb=z.perturb),
    ),
    "rare_gates.extended": (
        {"extended_per_setting": 2, "table2_streams": 8, "extended_horizon": 1.0, "perturb": 1e-12},
        lambda z: E.extended_rerun(
            2, horizon=z.extended_horizon, settings=E.TABLE2_SETTINGS, streams=z.table2_streams, perturb=z.perturb
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(PERTURBED))
def test_perturbed_sweep_equals_the_one_call_experiment(name, few_settings):
    overrides, direct = PERTURBED[name]
    run = run_quick(name, overrides)
    assert all(p["kwargs"]["perturb"] == 1e-12 for p in run.params)
    assert equal(run.result(), direct(E.sizes_with("quick", overrides)))


def test_unperturbed_cells_keep_their_keys():
    """perturb = 0 adds nothing to a cell, so results stored before the option existed are reused."""
    for exp in resolve(["rare_gates"]):
        assert all("perturb" not in p["kwargs"] for p in exp.cells(exp.sizes("quick", {})))


def test_perturbed_start_moves_every_stream_by_a_rounding_sized_amount():
    base = E.start(1e-4, 0.0, 5, 0, 4)
    moved = E.start(1e-4, 1e-12, 5, 0, 4)["theta0"]
    ref = np.tile(E.balanced_checkpoint(1e-4), (4, 1))
    assert base == {"delta0": 1e-4}
    rel = np.abs(moved - ref) / np.abs(ref)
    assert np.all(rel < 1e-11) and np.all(rel.max(axis=1) > 1e-14)
    assert len({row.tobytes() for row in moved}) == 4  # each stream its own draw
    # the same stream, whichever cell runs it
    assert np.array_equal(E.start(1e-4, 1e-12, 5, 2, 2)["theta0"], moved[2:])


def test_table1_perturbs_the_initialisations_by_id():
    kw = dict(times=[0.0, 0.5], eta=0.01, horizon=0.2, seed=5, init_seed=9, perturb=1e-12)
    whole = E.identical_checkpoints(3, **kw)
    part = E.identical_checkpoints(1, first_init=2, **kw)
    assert np.array_equal(whole["init"][2:], part["init"])
    assert not np.array_equal(whole["init"], E.identical_checkpoints(3, **{**kw, "perturb": 0.0})["init"])


@pytest.mark.parametrize("bad", ["-1e-12", "1e-3", "x"])
def test_perturb_size_is_validated(bad):
    assert_sizes_refused(E, {"perturb": bad}, r"size perturb must be a relative size in \[0, 1e-6\]")


@pytest.mark.parametrize(
    ("call", "kwargs", "name"),
    [
        (E.extended_floor, {"streams": 0}, "streams"),
        (E.warm_decay, {"init_id": 0, "streams": 0}, "streams"),
        (E.warm_decay, {"init_id": -1, "streams": 4}, "init_id"),
        (E.fresh_success, {"n_inits": 0, "eta": 0.01}, "n_inits"),
        (E.warm_init_ids, {"n": 0}, "n"),
        (E.repeated_settings, {"streams": 4, "streams_of": "grid"}, "streams_of"),
    ],
)
def test_new_experiments_name_the_bad_parameter(call, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call(**kwargs)
