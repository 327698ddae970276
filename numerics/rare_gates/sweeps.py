"""The rare-gates simulation experiments as sweeps of independent cells (see :mod:`numerics.sweep`).

Every cell is one call of a function of :mod:`numerics.rare_gates.experiments` on a range
of streams (or initialisations) of one setting: ``{"call": name, "kwargs": {...}}``, with
the seed always explicit. Streams and initialisations are keyed by their ids, so the
joined cells equal the one-call experiment bit for bit; ``tests/test_rare_gates_sweeps.py`` checks it.

Cells of 64 streams fill two 32-lane SIMD pools (two threads in a serial run); the
double-double replay runs one stream per thread and takes 16 streams per cell.

==============================  ====================================  ===========================
experiment                      cells                                 paper
==============================  ====================================  ===========================
``rare_gates.table1``           32 initialisations                    Table 1, Figures 1-2
``rare_gates.halving``          one GD step size                      Appendix 19 (step halving)
``rare_gates.table2``           (setting, 64 streams)                 Table 2, Figure 3(b)
``rare_gates.saturation``       (setting, 64 further streams)         Table 2 (late recoveries)
``rare_gates.paths``            (setting, 64 streams), traced         Appendix 19 (angle floor)
``rare_gates.extended``         (setting, 16 streams) or a setting    Appendix 19 (extended rerun)
``rare_gates.floor80``          one cell: quiet streams, one setting  Appendix 19 (below the floor)
``rare_gates.grid``             (delta0, b, eta) cell                 Figure 3(a)
``rare_gates.weight_decay``     (lambda, 64 streams)                  Appendix 20, Figure 5
``rare_gates.noise``            (mode, s, 64 streams)                 Appendix 20, Figure 5
``rare_gates.weight_decay_b8``  (lambda, 64 streams), b = 8           Appendix 20 (the batch 0.04 implies)
``rare_gates.noise_b8``         (mode, s, 64 streams), b = 8          Appendix 20 (the batch 0.04 implies)
``rare_gates.repeat``           (setting, run, 64 streams)            Appendix 19 (repeated cells)
``rare_gates.larger``           (side, 64 further streams)            Appendix 19-20 (ours vs ours)
``rare_gates.theorem1``         (init, T, eta), (eta, inits)          Theorem 1, Corollary 3
``rare_gates.cor5``             (arm, 64 streams)                     Corollary 5 (our design)
``rare_gates.joint``            (eta, 32 initialisations)             Appendix 19, Figure 4
==============================  ====================================  ===========================

>>> [p["kwargs"]["first_init"] for p in EXPERIMENTS["rare_gates.table1"].cells(E.sizes("quick"))]
[0, 32, 64]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerics.rare_gates import experiments as E
from numerics.sweep.experiment import call_cell, call_experiments, chunks, concat_records, run_call

CODE_MODULES = (
    "numerics.rare_gates.model",
    "numerics.rare_gates.sim_rng",
    "numerics.rare_gates.sim_kernels",
    "numerics.rare_gates.simulate",
    "numerics.rare_gates.dd_kernel",
    "numerics.rare_gates.experiments",
    "numerics.rare_gates.sweeps",
)


def compute(params: dict) -> Any:
    """One cell: ``experiments.<call>(**kwargs)``."""
    return run_call(E, _CALLS, params)


_CALLS = {
    "identical_checkpoints",
    "gd_step_halving",
    "long_horizons",
    "angle_paths",
    "extended_rerun",
    "gamma_grid",
    "weight_decay_controls",
    "parameter_noise",
    "sample_size_design",
    "joint_sweep",
    "repeated_settings",
    "warm_decay",
    "fresh_success",
    "extended_floor",
}


_cell = call_cell


# --- experiments over settings x stream ranges: each cell returns a list holding one record --------------


def _joined(params: list[dict], values: list) -> dict[str, dict]:
    """The records of (setting, stream range) cells, the ranges of each setting joined: {setting label: record}.

    Settings in order of their first cell; each joins along its call's per-stream keys (``E.PER_STREAM``).
    """
    groups: dict[str, list] = {}
    calls: dict[str, str] = {}
    for p, v in zip(params, values):
        (record,) = v
        groups.setdefault(p["setting"], []).append(record)
        calls[p["setting"]] = p["call"]
    return {label: concat_records(recs, E.PER_STREAM[calls[label]]) for label, recs in groups.items()}


def _by_setting(_sizes, params: list[dict], values: list) -> list[dict]:
    """Assemble (setting, stream range) cells: one record per setting (:func:`_joined`), in order."""
    return list(_joined(params, values).values())


def _setting_cells(call: str, settings: list[tuple[str, dict]], streams: int, size: int, **common) -> list[dict]:
    return [
        dict(_cell(call, streams=count, first_stream=first, **kw, **common), setting=label)
        for label, kw in settings
        for first, count in chunks(streams, size)
    ]


def _table2_settings():
    return [(f"b={b},delta0={d!r}", {"settings": [[b, d]]}) for b, d in E.TABLE2_SETTINGS]


def _table2_cells(z: E.Sizes) -> list[dict]:
    return _setting_cells("long_horizons", _table2_settings(), z.table2_streams, 64, seed=E.SEEDS["table2"])


def _saturation_cells(z: E.Sizes) -> list[dict]:
    """Table 2's long-horizon runs on further streams of each setting (ids from ``table2_streams`` on)."""
    return [
        dict(
            _cell("long_horizons", streams=count, first_stream=z.table2_streams + first, seed=E.SEEDS["table2"], **kw),
            setting=label,
        )
        for label, kw in _table2_settings()
        for first, count in chunks(z.saturation_streams, 64)
    ]


def _paths_cells(z: E.Sizes) -> list[dict]:
    settings = [(f"b={b},delta0={d!r}", {"settings": [[b, d]]}) for b, d in ((16, 1e-5), (16, 1e-4), (1, 1e-3))]
    return _setting_cells(
        "angle_paths", settings, z.table2_streams, 64, horizon=z.floor_horizon, seed=E.SEEDS["table2"]
    )


def _extended_cells(z: E.Sizes) -> list[dict]:
    common = dict(per_setting=z.extended_per_setting, horizon=z.extended_horizon, seed=E.SEEDS["table2"])
    if z.extended_per_setting is None:  # every stream: (setting, 16 streams)
        return _setting_cells("extended_rerun", _table2_settings(), z.table2_streams, 16, **common)
    # a selection of streams by their float64 outcome: one cell per setting over all its streams
    return [
        dict(_cell("extended_rerun", streams=z.table2_streams, **kw, **common), setting=label)
        for label, kw in _table2_settings()
    ]


def _grid_cells(z: E.Sizes) -> list[dict]:
    settings = [
        (f"delta0={d!r},b={b},eta={eta!r}", {"delta0s": [d], "bs": [b], "etas": [eta]})
        for d in E.FIG3A_DELTA0
        for b in E.FIG3A_B
        for eta in E.FIG3A_ETA
    ]
    return _setting_cells("gamma_grid", settings, z.fig3a_streams, 64, seed=E.SEEDS["fig3a"])


def _repeat_cells(z: E.Sizes) -> list[dict]:
    """Each experiment's own streams with the other's cadence, and a large sample of the discordant setting."""
    b, d = E.REPEAT_DISCORDANT
    runs = [
        ("fig3a", 10, z.fig3a_streams, _table2_settings()),
        ("table2", 1, z.table2_streams, _table2_settings()),
        *(
            (of, 10, z.repeat_streams, [(f"b={b},delta0={d!r},large", {"settings": [[b, d]]})])
            for of in ("fig3a", "table2")
        ),
    ]
    seeds = dict(seed=E.SEEDS["fig3a"], table2_seed_base=E.SEEDS["table2"])
    cells = []
    for streams_of, every, streams, settings in runs:
        labelled = [(f"{label},{streams_of},every{every}", kw) for label, kw in settings]
        cells += _setting_cells(
            "repeated_settings", labelled, streams, 64, streams_of=streams_of, check_every=every, **seeds
        )
    return cells


def _warm_ids(n: int) -> list[int]:
    """Every D0 draw up to the n-th not-near-opposite one: the near-opposite draws among them are in K too.

    >>> _warm_ids(6)
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    return list(range(max(E.warm_init_ids(n)) + 1))


def _theorem1_cells(z: E.Sizes) -> list[dict]:
    seeds = dict(seed=E.SEEDS["theorem1"], init_seed=E.SEEDS["d0"])
    warm = [
        dict(_cell("warm_decay", init_id=i, streams=count, first_stream=first, **seeds), setting=f"warm,init={i}")
        for i in _warm_ids(z.warm_inits)
        for first, count in chunks(z.warm_streams, 256)
    ]
    # Corollary 3 at b = 1 (the source batch), then at the b > 1 settings; b is a cell parameter only where set
    cor3_settings: list[tuple[int | None, float, float, int]]
    cor3_settings = [(None, t, eta, seed) for t, eta, seed in E.cor3_settings(z.cor3_times)]
    cor3_settings += list(E.cor3_batch_settings(z.cor3_batches))
    cor3 = [
        dict(
            _cell(
                "warm_decay",
                init_id=i,
                streams=count,
                first_stream=first,
                times=[t],
                **({} if b is None else {"b": b}),
                eta=eta,
                seed=seed,
                init_seed=E.SEEDS["d0"],
            ),
            setting=f"cor3,{'' if b is None else f'b={b},'}init={i},T={t!r},eta={eta!r}",
        )
        for b, t, eta, seed in cor3_settings
        for i in E.warm_init_ids(z.warm_inits)
        for first, count in chunks(z.cor3_streams, 256)
    ]
    fresh = [
        dict(_cell("fresh_success", n_inits=count, eta=eta, first_init=first, **seeds), setting=f"fresh,eta={eta!r}")
        for eta in E.FRESH_ETAS
        for first, count in chunks(z.fresh_inits, 256)
    ]
    return warm + cor3 + fresh


def _theorem1_assemble(_sizes, params: list[dict], values: list[dict]) -> dict:
    groups: dict[str, list] = {}
    for p, v in zip(params, values):
        groups.setdefault(p["setting"], []).append(v)
    out: dict[str, list] = {"warm": [], "cor3": [], "fresh": []}
    for label, vs in groups.items():
        kind = label.split(",")[0]
        if kind == "fresh":
            out[kind].append(concat_records(vs, E.PER_STREAM["fresh_success"]))
        else:
            out[kind].append(dict(vs[0], recovery=np.concatenate([v["recovery"] for v in vs], axis=1)))
    return out


def _weight_decay_controls(z: E.Sizes, streams: int, b: int | None = None) -> list[dict]:
    """Appendix 20's weight-decay controls at the reading's batch (``b`` None) or at batch ``b``."""
    label, extra = ("", {}) if b is None else (f",b={b}", {"b": b})
    settings = [(f"lam={lam!r}{label}", {"lams": [lam], **extra}) for lam in (0.0, 0.01, 0.05)]
    return _setting_cells(
        "weight_decay_controls",
        settings,
        streams,
        64,
        horizon=z.appendix20_horizon,
        seed=E.SEEDS["appendix20"],
    )


def _weight_decay_cells(z: E.Sizes) -> list[dict]:
    return _weight_decay_controls(z, z.appendix20_streams)


def _larger_cells(z: E.Sizes) -> list[dict]:
    """Further streams (ids after each experiment's own) of the cells whose ours-vs-ours comparisons need more.

    'agree,fig3a' / 'agree,table2': the repeated cell (b = 64, delta0 = 1e-4) of Figure 3(a) and Table 2 (ids after
    the row's and the saturation runs' streams); 'same,fig3a' / 'same,a20': Figure 3(a)'s (16, 1e-5) cell and
    Appendix 20's no-noise runs. Each side holds ``agree_streams`` or ``same_streams`` with the experiment's own.
    """
    fig3a = dict(seed=E.SEEDS["fig3a"], etas=[0.01])
    parts = [
        ("agree,fig3a", "gamma_grid", z.fig3a_streams, z.agree_streams, dict(delta0s=[1e-4], bs=[64], **fig3a)),
        (
            "agree,table2",
            "long_horizons",
            z.table2_streams + z.saturation_streams,
            z.agree_streams + z.saturation_streams,
            dict(settings=[[64, 1e-4]], seed=E.SEEDS["table2"]),
        ),
        ("same,fig3a", "gamma_grid", z.fig3a_streams, z.same_streams, dict(delta0s=[1e-5], bs=[16], **fig3a)),
        (
            "same,a20",
            "parameter_noise",
            z.appendix20_noise_streams,
            z.same_streams,
            dict(modes=["independent"], scales=[0.0], horizon=z.appendix20_horizon, seed=E.SEEDS["appendix20"]),
        ),
    ]
    return [
        dict(_cell(call, streams=count, first_stream=first_id + first, **kw), setting=label)
        for label, call, first_id, last_id, kw in parts
        for first, count in chunks(max(last_id - first_id, 0), 64)
    ]


def _larger_assemble(_sizes, params: list[dict], values: list) -> dict:
    """{setting label: the further streams' record} (:func:`_joined`); a label with no cells is absent."""
    return _joined(params, values)


def _noise_settings(**extra) -> list[tuple[str, dict]]:
    settings = [("none", {"modes": ["independent"], "scales": [0.0], **extra})]
    settings += [
        (f"{mode},s={s!r}", {"modes": [mode], "scales": [s], **extra})
        for mode in ("independent", "shared")
        for s in (1e-7, 1e-6, 1e-5)
    ]
    return settings


def _noise_cells(z: E.Sizes) -> list[dict]:
    return _setting_cells(
        "parameter_noise",
        _noise_settings(),
        z.appendix20_noise_streams,
        64,
        horizon=z.appendix20_horizon,
        seed=E.SEEDS["appendix20"],
    )


def _weight_decay_alt_cells(z: E.Sizes) -> list[dict]:
    """The weight-decay controls at the alternative batch E.A20_ALT_B (same checkpoint, seed and streams)."""
    return _weight_decay_controls(z, z.appendix20_alt_streams, E.A20_ALT_B)


def _noise_alt_cells(z: E.Sizes) -> list[dict]:
    """The noise controls at the alternative batch E.A20_ALT_B (same checkpoint, seed and streams)."""
    return _setting_cells(
        "parameter_noise",
        _noise_settings(b=E.A20_ALT_B),
        z.appendix20_alt_streams,
        64,
        horizon=z.appendix20_horizon,
        seed=E.SEEDS["appendix20"],
    )


# --- Table 1 and the joint sweep: ranges of initialisations ------------------------------------------------


def _table1_cells(z: E.Sizes) -> list[dict]:
    return [
        _cell(
            "identical_checkpoints",
            n_inits=count,
            first_init=first,
            times=[0.0, 100.0, 200.0, 300.0, 400.0],
            seed=E.SEEDS["table1"],
            init_seed=E.SEEDS["d0"],
        )
        for first, count in chunks(z.table1_inits, 32)
    ]


def _table1_assemble(_sizes, params: list[dict], values: list[dict]) -> dict:
    out = {
        "init": np.concatenate([v["init"] for v in values]),
        "times": values[0]["times"],
        "config": dict(values[0]["config"], n_inits=sum(v["config"]["n_inits"] for v in values)),
    }
    for src in ("sgd", "gd"):
        out[src] = {k: np.concatenate([v[src][k] for v in values], axis=1) for k in values[0][src]}
    return out


def _halving_cells(z: E.Sizes) -> list[dict]:
    return [
        _cell("gd_step_halving", n_inits=z.halving_inits, etas=[eta], init_seed=E.SEEDS["d0"])
        for eta in (1e-3, 5e-4, 2.5e-4)
    ]


def _halving_assemble(_sizes, params: list[dict], values: list[dict]) -> dict:
    first = values[0]
    return {
        "etas": [e for v in values for e in v["etas"]],
        "T": first["T"],
        "hit": np.concatenate([v["hit"] for v in values]),
        "angle": np.concatenate([v["angle"] for v in values]),
        "check_every": first["check_every"],
    }


def _joint_cells(z: E.Sizes) -> list[dict]:
    return [
        _cell(
            "joint_sweep", n_inits=count, first_init=first, etas=[eta], seed=E.SEEDS["joint"], init_seed=E.SEEDS["d0"]
        )
        for eta in E.JOINT_ETAS
        for first, count in chunks(z.joint_inits, 32)
    ]


def _joint_assemble(_sizes, params: list[dict], values: list[dict]) -> dict:
    by_eta: dict[float, list] = {}
    for p, v in zip(params, values):
        by_eta.setdefault(p["kwargs"]["etas"][0], []).append(v)
    first = next(iter(by_eta.values()))
    return {
        "etas": list(by_eta),
        "times": values[0]["times"],
        "b": values[0]["b"],
        "init": np.concatenate([v["init"] for v in first]),
        "recovered": np.concatenate([np.concatenate([v["recovered"] for v in vs], axis=2) for vs in by_eta.values()]),
        "angle": np.concatenate([np.concatenate([v["angle"] for v in vs], axis=2) for vs in by_eta.values()]),
    }


def _cor5_cells(z: E.Sizes) -> list[dict]:
    return [
        dict(
            _cell("sample_size_design", streams=count, first_stream=first, arms=[i], seed=E.SEEDS["cor5"]),
            setting=f"arm {i}",
        )
        for i in range(len(E.COR5_ARMS))
        for first, count in chunks(z.cor5_streams, 64)
    ]


def _cor5_assemble(_sizes, params: list[dict], values: list[dict]) -> dict:
    arms: dict[int, list] = {}
    for p, v in zip(params, values):
        group = E.COR5_ARMS[p["kwargs"]["arms"][0]][0]
        record = v[group][0] if isinstance(v[group], list) else v[group]
        arms.setdefault(p["kwargs"]["arms"][0], []).append(record)
    out: dict = {"delta0": values[0]["delta0"]}
    for i, records in arms.items():
        arm = concat_records(records, E.PER_STREAM["sample_size_design"])
        group = E.COR5_ARMS[i][0]
        if group in ("budget", "samples"):
            out.setdefault(group, []).append(arm)
        else:
            out[group] = arm
    return out


EXPERIMENTS = call_experiments(
    "rare_gates",
    E.sizes_with,
    compute,
    CODE_MODULES,
    [
        (
            "table1",
            "Table 1, Figures 1-2: source SGD/GD checkpoints at T = 0..400 from D0 draws, both "
            "target optimizers (sizes: table1_inits)",
            _table1_cells,
            _table1_assemble,
        ),
        (
            "halving",
            "Appendix 19: GD in both phases at eta = 1e-3, 5e-4, 2.5e-4 (sizes: halving_inits)",
            _halving_cells,
            _halving_assemble,
        ),
        (
            "table2",
            "Table 2, Figure 3(b): five settings through H = 450 (sizes: table2_streams)",
            _table2_cells,
            _by_setting,
        ),
        (
            "saturation",
            "Table 2: further streams of the five settings through H = 450, for the count of late recoveries "
            "(sizes: saturation_streams; 0 in the quick profile)",
            _saturation_cells,
            _by_setting,
        ),
        (
            "paths",
            "Appendix 19: traced angles of Table 2 streams, the float64 floor (sizes: table2_streams, floor_horizon)",
            _paths_cells,
            _by_setting,
        ),
        (
            "extended",
            "Appendix 19: double-double replay of Table 2 streams (the paper: 80-bit) (sizes: extended_per_setting, "
            "extended_horizon)",
            _extended_cells,
            _by_setting,
        ),
        (
            "floor80",
            "Appendix 19: quiet (16, 1e-5) Table 2 streams replayed in double-double to t = 700, below the float64 "
            "floor (sizes: floor80_streams)",
            lambda z: [_cell("extended_floor", streams=z.floor80_streams, seed=E.SEEDS["table2"])],
            lambda _z, _params, values: values[0],
        ),
        (
            "grid",
            "Figure 3(a): 24 (delta0, b, eta) cells, H = 200 (sizes: fig3a_streams)",
            _grid_cells,
            _by_setting,
        ),
        (
            "weight_decay",
            "Appendix 20, Figure 5: weight-decay controls (sizes: appendix20_streams, appendix20_horizon)",
            _weight_decay_cells,
            _by_setting,
        ),
        (
            "noise",
            "Appendix 20, Figure 5: independent and shared parameter noise (sizes: appendix20_noise_streams, "
            "appendix20_horizon)",
            _noise_cells,
            _by_setting,
        ),
        (
            "weight_decay_b8",
            "Appendix 20: the weight-decay controls at b = 8, the batch its own Lambda(t) implies from its no-noise "
            "0.04 (sizes: appendix20_alt_streams, appendix20_horizon)",
            _weight_decay_alt_cells,
            _by_setting,
        ),
        (
            "noise_b8",
            "Appendix 20: the noise controls at b = 8, the batch its own Lambda(t) implies from its no-noise 0.04 "
            "(sizes: appendix20_alt_streams, appendix20_horizon)",
            _noise_alt_cells,
            _by_setting,
        ),
        (
            "larger",
            "Appendix 19, 20: further streams of the repeated cell (64, 1e-4) in Figure 3(a) and Table 2, and of "
            "Figure 3(a)'s (16, 1e-5) cell and Appendix 20's no-noise runs, for the ours-vs-ours comparisons "
            "(sizes: agree_streams, same_streams)",
            _larger_cells,
            _larger_assemble,
        ),
        (
            "repeat",
            "Appendix 19: the Table 2 settings repeated in Figure 3(a), each experiment's streams with the "
            "other's check cadence, and a large sample of the discordant setting (sizes: fig3a_streams, "
            "table2_streams, repeat_streams)",
            _repeat_cells,
            _by_setting,
        ),
        (
            "theorem1",
            "Theorem 1 and Corollary 3: warm runs from D0 draws at four source times (b = 1, eta = 0.01; the "
            "near-opposite draws among them included) and, for Corollary 3, at several source times (b = 1) and "
            "(b > 1, T) settings for four step sizes each; fresh runs at three moderate step sizes (sizes: "
            "warm_inits, warm_streams, cor3_times, cor3_streams, cor3_batches, fresh_inits)",
            _theorem1_cells,
            _theorem1_assemble,
        ),
        ("cor5", "Corollary 5: our sample-size design, eight arms (sizes: cor5_streams)", _cor5_cells, _cor5_assemble),
        (
            "joint",
            "Appendix 19, Figure 4: SGD in both phases, 5 step sizes x 17 source times (sizes: "
            "joint_inits; 0 in the quick profile)",
            _joint_cells,
            _joint_assemble,
        ),
    ],
)
