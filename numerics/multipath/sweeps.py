"""The multi-pathway GD experiments as sweeps of independent cells (see :mod:`numerics.sweep`).

Every cell is one call of a function of :mod:`numerics.multipath.experiments`:
``{"call": name, "kwargs": {...}}``. GD is deterministic and the ensembles' members are keyed
by their ids, so the joined cells equal the runs made one after another;
``tests/test_multipath_sweeps.py`` checks it.

==============================  ====================================  ===========================
experiment                      cells                                 paper
==============================  ====================================  ===========================
``multipath.fig1``              (alpha_1, eta S_1) run                Figures 1-2, Section 5.1
``multipath.three_pathways``    (L, eta) (7 initial scales)           Figure 10
``multipath.hetero``            depth pair (L1, L2), both scales      Figures 4, 8, Section 5.3
``multipath.fig9``              eta/eta_WCR (13 initial scales)       Figure 9
``multipath.chain``             depth L (3 steps x 40 starts)         Figure 6
``multipath.warmup``            initial scale (4 schedules)           Section 6 (warm-up)
``multipath.rank_p``            (ensemble, 16 members), identity run  Section 6, Eq. (24)
``multipath.fig1_members``      eta S_1 (scales x asymmetries)        Figures 1-2, Section 5.1
``multipath.hetero_members``    (L1, L2) (scales x asymmetries)       Figures 4, 8, Section 5.3
``multipath.three_members``     (L, eta) (scales x asymmetries)       Figure 10
``multipath.warmup_members``    alpha_0 (asymmetries, 3 schedules)    Section 6 (warm-up)
==============================  ====================================  ===========================

>>> len(EXPERIMENTS["multipath.fig1"].cells(E.sizes("quick")))  # 2 scales x 8 steps, and the coarse run
17
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerics.multipath import experiments as E
from numerics.sweep.experiment import call_cell, call_experiments, chunks, run_call

CODE_MODULES = (
    "numerics.multipath.gd",
    "numerics.multipath.sharpness",
    "numerics.multipath.wcr",
    "numerics.multipath.ensembles",
    "numerics.multipath.experiments",
    "numerics.multipath.sweeps",
)

_CALLS = frozenset(
    {
        "fig1_run",
        "three_pathway_runs",
        "hetero_pair",
        "wcr_runs",
        "chain_flips",
        "warmup_runs",
        "rank_p",
        "rank_p_identity",
    }
)
ENSEMBLE_CELL = 16  # ensemble members per cell
GAMMA_FIG2_SMALL = 1.8  # Figure 2's left panel (eta S_1 < 2), the small-step members of the Figure 1-2 ensembles


def compute(params: dict) -> Any:
    """One cell: ``experiments.<call>(**kwargs)``."""
    return run_call(E, _CALLS, params)


def _fig1_cells(z: E.Sizes) -> list[dict]:
    cells = [
        call_cell("fig1_run", scale=sc, gamma=g, steps=z.mp_fig1_steps)
        for sc in E.FIG1_SCALES[: z.mp_fig1_scales]
        for g in (*E.GAMMA_SMALL, *E.GAMMA_EOS, "bal")
    ]
    return [*cells, call_cell("fig1_run", scale=E.COARSE[0], gamma="coarse", steps=E.COARSE[2])]


def _fig1_assemble(_z, params: list[dict], values: list) -> dict:
    """(scale, gamma) -> run (gamma = eta S_1, or 'bal'), and 'coarse' -> the sensitivity run."""
    out: dict[Any, Any] = {}
    for p, run in zip(params, values):
        kw = p["kwargs"]
        out["coarse" if kw["gamma"] == "coarse" else (kw["scale"], kw["gamma"])] = run
    return out


def _keyed(key: str):
    """Assemble cells into a dict from the cell argument ``key`` to its value."""

    def assemble(_z, params: list[dict], values: list) -> dict:
        return {p["kwargs"][key]: v for p, v in zip(params, values)}

    return assemble


def _three_pathway_cells(_z: E.Sizes) -> list[dict]:
    """The balanced-step runs at L = 3 and 5 (the other panels and the deep depths: ``multipath.three_members``)."""
    return [call_cell("three_pathway_runs", L=L) for L in E.THREE_PATHWAY_PANEL_DEPTHS]


def _three_pathway_assemble(_z, params: list[dict], values: list) -> dict:
    """(L, eta S_1 or 'bal') -> the runs over the initial-scale grid."""
    return {(p["kwargs"]["L"], p["kwargs"].get("gamma", "bal")): v for p, v in zip(params, values)}


def _hetero_cells(z: E.Sizes) -> list[dict]:
    return [
        call_cell("hetero_pair", L1=a, L2=b, steps=z.mp_hetero_steps) for a in E.HETERO_DEPTHS for b in E.HETERO_DEPTHS
    ]


def _hetero_assemble(_z, params: list[dict], values: list) -> dict:
    """``runs`` (L1, L2, scale) -> run, ``opt`` (L1, L2) -> (sigma_1, sigma_2, lambda, eta*), ``scales``."""
    runs, opt = {}, {}
    for p, v in zip(params, values):
        pair = (p["kwargs"]["L1"], p["kwargs"]["L2"])
        opt[pair] = v["opt"]
        for sc, run in zip(E.HETERO_SCALES, v["runs"]):
            runs[(*pair, sc)] = run
    return {"runs": runs, "opt": opt, "scales": E.HETERO_SCALES}


def _warmup_assemble(_z, params: list[dict], values: list) -> dict:
    """Each schedule's runs in :data:`~numerics.multipath.experiments.SCALE_GRID` order, and the final eta."""
    out: dict[str, Any] = {k: [v[k] for v in values] for k in values[0]}
    return {**out, "eta": E.warmup_eta()}


def _rank_p_cells(z: E.Sizes) -> list[dict]:
    cells = [
        call_cell("rank_p", kind=kind, first=first, count=count)
        for kind in ("manifold", "full")
        for first, count in chunks(z.mp_ensemble, ENSEMBLE_CELL)
    ]
    return [*cells, call_cell("rank_p_identity")]


def _rank_p_assemble(_z, params: list[dict], values: list) -> dict:
    """``manifold`` and ``full``: the ensembles' classification arrays, members in order; ``identity``: the run."""
    out: dict[str, Any] = {}
    parts: dict[str, list] = {}
    for p, v in zip(params, values):
        if p["call"] == "rank_p_identity":
            out["identity"] = v
        else:
            parts.setdefault(p["kwargs"]["kind"], []).append(v)
    for kind, chunks_ in parts.items():
        out[kind] = {k: np.concatenate([c[k] for c in chunks_]) for k in chunks_[0]}
    return out


def _fixed(call: str, key: str, values) -> Any:
    return lambda _z: [call_cell(call, **{key: v}) for v in values]


def _experiments(specs: list[tuple]) -> dict:
    """The experiments ``(name, description, cells, assemble)`` of ``specs``, registered with the sweep layer."""
    return call_experiments("multipath", E.sizes_with, compute, CODE_MODULES, specs)


EXPERIMENTS = _experiments(
    [
        (
            "fig1",
            "Figures 1-2, Section 5.1: L = 20, H = 2 from 2 or 3 scales at 7 step sizes and at eta = 2/lambda_min "
            "(sizes: mp_fig1_steps, mp_fig1_scales)",
            _fig1_cells,
            _fig1_assemble,
        ),
        (
            "three_pathways",
            "Figure 10: H = 3 at eta = 2/lambda_1^min (L = 3, 5), 7 scales, 2e6 steps",
            _three_pathway_cells,
            _three_pathway_assemble,
        ),
        (
            "hetero",
            "Figures 4, 8, Section 5.3: 25 depth pairs at their eta* from two scales (sizes: mp_hetero_steps)",
            _hetero_cells,
            _hetero_assemble,
        ),
        (
            "fig9",
            "Figure 9: L = 5 at 0.9, 0.97, 0.99, 1.03 eta_WCR, 13 scales, 3e5 steps",
            _fixed("wcr_runs", "factor", E.WCR_FACTORS),
            _keyed("factor"),
        ),
        (
            "chain",
            "Figure 6: sign flips of the deep chain at eta/eta_1 = 3.5, 4.5, 5.5, L = 3..50, 40 starts",
            _fixed("chain_flips", "L", E.CHAIN_DEPTHS),
            _keyed("L"),
        ),
        (
            "warmup",
            "Section 6: constant step, warm-up, plain-float64 warm-up and a short warm-up, 13 scales (sizes: "
            "mp_warmup_ramp)",
            lambda z: [call_cell("warmup_runs", scale=float(a), ramp=z.mp_warmup_ramp) for a in E.SCALE_GRID],
            _warmup_assemble,
        ),
        (
            "rank_p",
            "Section 6, Eq. (24): the rank-p window as ensembles on the SVS set and in full matrices (sizes: "
            "mp_ensemble)",
            _rank_p_cells,
            _rank_p_assemble,
        ),
    ],
)


# --- appended: the re-balancing window across depth (Section 6) and beyond 2/lambda_min (Appendix E.6) -------
_CALLS = _CALLS | {"window_runs", "super_runs", "peak_runs"}


def _window_cells(z: E.Sizes) -> list[dict]:
    return [
        call_cell("window_runs", L=L, fraction=f, steps=z.mp_window_steps, draws=z.mp_window_draws)
        for L in E.WINDOW_DEPTHS
        for f in E.WINDOW_FRACTIONS
    ]


def _super_cells(z: E.Sizes) -> list[dict]:
    return [
        call_cell("super_runs", L=L, excess=e, draws=z.mp_super_draws) for L in E.SUPER_DEPTHS for e in E.SUPER_EXCESSES
    ]


def _pair_assemble(first: str, second: str):
    """Assemble cells into a dict from the cell arguments (``first``, ``second``) to the value."""

    def assemble(_z, params: list[dict], values: list) -> dict:
        return {(p["kwargs"][first], p["kwargs"][second]): v for p, v in zip(params, values)}

    return assemble


EXPERIMENTS |= _experiments(
    [
        (
            "window",
            "Section 6: H = 4, L = 5, 10, 20 at eta S_1 = 0.6, 0.75, 0.9 gamma_WCR(L), 4 initial scales x random "
            "asymmetries (sizes: mp_window_steps, mp_window_draws)",
            _window_cells,
            _pair_assemble("L", "fraction"),
        ),
        (
            "peak",
            "Section 6 (warm-up): the window members at eta S_1 = 0.75 gamma_WCR(L), L = 5, 10, 20, recorded every "
            "7 steps (sizes: mp_window_steps, mp_window_draws)",
            lambda z: [
                call_cell("peak_runs", L=L, steps=z.mp_window_steps, draws=z.mp_window_draws) for L in E.WINDOW_DEPTHS
            ],
            _keyed("L"),
        ),
        (
            "supercritical",
            "Appendix E.6, regime 3: H = 2, L = 3, 5, 10 at eta = 2(1 + excess)/lambda_min, excess 0.01-0.3, "
            "2 initial scales x random asymmetries, 2e5 steps (sizes: mp_super_draws)",
            _super_cells,
            _pair_assemble("L", "excess"),
        ),
    ],
)


# --- appended: the simulation claims of Sections 5-6 and Figures 1-2, 4, 8, 10 as ensembles ----------------------
_CALLS = _CALLS | {"fig1_members", "hetero_members", "three_pathway_members", "warmup_members"}


def _three_member_cells(z: E.Sizes) -> list[dict]:
    panels = [(L, g) for L in E.THREE_PATHWAY_PANEL_DEPTHS for g in E.THREE_PATHWAY_PANELS]
    balanced_step = [(L, "bal") for L in E.THREE_PATHWAY_DEPTHS]  # the middle panel at every depth, deep ones included
    return [call_cell("three_pathway_members", L=L, gamma=g, draws=z.mp_three_draws) for L, g in panels + balanced_step]


EXPERIMENTS |= _experiments(
    [
        (
            "fig1_members",
            "Figures 1-2, Section 5.1 as ensembles: L = 20, H = 2 at eta S_1 = 1.8, 2.2-3.5 and eta = "
            "2/lambda_min, initial scales x random asymmetries (sizes: mp_fig1_steps, mp_fig1_scales, "
            "mp_fig1_draws)",
            lambda z: [
                call_cell(
                    "fig1_members", gamma=g, steps=z.mp_fig1_steps, scales=z.mp_fig1_scales, draws=z.mp_fig1_draws
                )
                for g in (GAMMA_FIG2_SMALL, *E.GAMMA_EOS, "bal")
            ],
            _keyed("gamma"),
        ),
        (
            "hetero_members",
            "Figures 4, 8, Section 5.3 as ensembles: 25 depth pairs at their eta*, 2 initial scales x random "
            "asymmetries (sizes: mp_hetero_ens_steps, mp_hetero_draws)",
            lambda z: [
                call_cell("hetero_members", L1=a, L2=b, steps=z.mp_hetero_ens_steps, draws=z.mp_hetero_draws)
                for a in E.HETERO_DEPTHS
                for b in E.HETERO_DEPTHS
            ],
            _pair_assemble("L1", "L2"),
        ),
        (
            "three_members",
            "Figure 10 as ensembles: H = 3 at eta S_1 = 1, 2.5 (L = 3, 5) and eta = 2/lambda_1^min "
            "(L = 3, 5, 10, 20), 7 initial scales x random asymmetries, 2e6 steps (sizes: mp_three_draws)",
            _three_member_cells,
            _pair_assemble("L", "gamma"),
        ),
        (
            "warmup_members",
            "Section 6 (warm-up) as ensembles: H = 4, L = 5, constant step, warm-up and short warm-up from 3 "
            "initial scales x random asymmetries (sizes: mp_warmup_ramp, mp_warmup_draws)",
            lambda z: [
                call_cell("warmup_members", scale=a, ramp=z.mp_warmup_ramp, draws=z.mp_warmup_draws)
                for a in E.WARMUP_ENS_GRID
            ],
            _keyed("scale"),
        ),
    ],
)
