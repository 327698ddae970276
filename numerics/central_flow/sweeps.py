"""The central-flow simulation experiments as sweeps of independent cells (see :mod:`numerics.sweep`).

Every cell is one call of a function of :mod:`numerics.central_flow.experiments`:
``{"call": name, "kwargs": {...}}``. A draw's start is keyed by (model, draw), so a cell
computes the same numbers wherever and in whatever order it runs, and the joined cells equal
the runs made one after another; ``tests/test_central_flow_sweeps.py`` checks it.

==============================  ====================================  ===========================
experiment                      cells                                 paper
==============================  ====================================  ===========================
``central_flow.scalar``         one used draw                         Figure 1, Appendix B
``central_flow.mf``             one used draw                         Figure 2, Appendix C
``central_flow.relu``           the first used draws (one cell)       Figures 3-4, Appendix D
``central_flow.relu_pool``      10 draws tried                        Figures 3-4 (pooled gates)
``central_flow.eos_scan``       one (model, eta, c, scale) of the grid  Section 1 (EoS), App. B-D
``central_flow.eos_track``      one (model, draw)                     Section 1 (GD vs central flow)
``central_flow.eos_separate``   one (model, draw), long horizon       Section 1 (central flow vs GF)
``central_flow.scalar_regime``  one (c = eta y < 1, scale), draws     Appendix B (the paper's regime)
``central_flow.eos_neighbourhood``  one (model, c, scale), draws      Section 1 (EoS near the setting)
==============================  ====================================  ===========================

The used draws of the scalar and matrix models are known from their starts (cheap), so each
is a cell; a ReLU draw is used only when its hybrid flow reaches the edge, which takes a flow
to find out, so the ReLU runs search their draws in one cell.

>>> [p["kwargs"]["i"] for p in EXPERIMENTS["central_flow.scalar"].cells(E.sizes("quick"))]
[0, 1, 2, 3, 4, 5]
"""

from __future__ import annotations

import functools
from typing import Any

from numerics.central_flow import experiments as E
from numerics.sweep.experiment import call_cell, call_experiments, chunks, run_call

CODE_MODULES = (
    "numerics.central_flow.models",
    "numerics.central_flow.spectra",
    "numerics.central_flow.flows",
    "numerics.central_flow.laws",
    "numerics.central_flow.averaged",  # the relu cells' continuation past a stop (its solver shapes their records)
    "numerics.central_flow.eos",  # the EoS cells' catapult end and regime tests (imported by experiments)
    "numerics.central_flow.boundary",  # the boundary-track cells (imported by experiments on call)
    "numerics.central_flow.experiments",
    "numerics.central_flow.sweeps",
)

_CALLS = frozenset(
    {"scalar_run", "mf_run", "relu_runs", "relu_pool", "eos_scan", "eos_track", "eos_separate", "scalar_regime",
     "eos_neighbourhood"}
)  # fmt: skip
POOL_CELL = 10  # ReLU draws tried per pool cell (about 0.15 s each)


def compute(params: dict) -> Any:
    """One cell: ``experiments.<call>(**kwargs)``."""
    return run_call(E, _CALLS, params)


def _draw_cells(call: str, setting: E.Setting, z: E.Sizes) -> list[dict]:
    return [call_cell(call, i=i) for i in E.used_draws(setting, z.cf_draws, rel=z.perturb)]


def _relu_cells(z: E.Sizes) -> list[dict]:
    return [call_cell("relu_runs", count=z.cf_draws, tries=z.cf_relu_pool, acf_horizon=z.acf_horizon)]


def _pool_cells(z: E.Sizes) -> list[dict]:
    return [call_cell("relu_pool", first=first, count=count) for first, count in chunks(z.cf_relu_pool, POOL_CELL)]


def _eos_scan_cells(z: E.Sizes) -> list[dict]:
    grid = E.EOS_SCAN_GRID["full" if z.eos_scan_full else "quick"]
    return [call_cell("eos_scan", model=m, eta=eta, c=c, scale=s) for m in E.EOS_MODELS for eta, c, s in grid]


def _eos_track_cells(z: E.Sizes) -> list[dict]:
    # a neighbour of the chosen setting (sizes eos_c_excess, eos_scale) adds its factors to the keys (E.eos_moves)
    return [
        call_cell("eos_track", model=m, i=i, steps=z.eos_track_steps, **E.eos_moves(z))
        for m in E.EOS_MODELS
        for i in range(z.eos_draws)
    ]


def _eos_separate_cells(z: E.Sizes) -> list[dict]:
    moves = E.eos_moves(z)
    return [call_cell("eos_separate", model=m, i=i, **moves) for m in E.EOS_SEPARATE for i in range(z.eos_sep_draws)]


def _regime_cells(z: E.Sizes) -> list[dict]:
    grid = E.SCALAR_REGIME_GRID["full" if z.eos_scan_full else "quick"]
    return [call_cell("scalar_regime", c=c, scale=s, draws=z.regime_draws) for c, s in grid]


def _hood_cells(z: E.Sizes) -> list[dict]:
    grid = E.EOS_HOOD_GRID["full" if z.eos_scan_full else "quick"]
    return [call_cell("eos_neighbourhood", model=m, c=c, scale=s, draws=z.hood_draws) for m, c, s in grid]


def _listed(_sizes, _params: list[dict], values: list) -> list:
    """One run per cell, in cell order."""
    return list(values)


def _joined(_sizes, _params: list[dict], values: list[list]) -> list:
    """Each cell's list, concatenated in cell order."""
    return [x for v in values for x in v]


EXPERIMENTS = call_experiments(
    "central_flow",
    E.sizes_with,
    compute,
    CODE_MODULES,
    [
        (
            "scalar",
            "Figure 1, Appendix B: GF, hybrid CF and GD of the scalar model to T = 200 (sizes: cf_draws)",
            functools.partial(_draw_cells, "scalar_run", E.scalar_setting),
            _listed,
        ),
        (
            "mf",
            "Figure 2, Appendix C: GF, hybrid CF and GD of matrix factorisation to T = 100 (sizes: cf_draws)",
            functools.partial(_draw_cells, "mf_run", E.mf_setting),
            _listed,
        ),
        (
            "relu",
            "Figures 3-4, Appendix D: hybrid CF, GF and GD of the two-layer ReLU net to T = 60, the averaged central "
            "flow past a stop (sizes: cf_draws, cf_relu_pool, acf_horizon)",
            _relu_cells,
            _joined,
        ),
        (
            "relu_pool",
            "Figures 3-4: fixed-gate ratio and first failure of every used ReLU draw tried (sizes: cf_relu_pool)",
            _pool_cells,
            _joined,
        ),
        (
            "eos_scan",
            "Section 1: does GD sustain the edge of stability? GD over the grid (model, eta, c = eta lambda*/2, start "
            "scale) (sizes: eos_scan_full)",
            _eos_scan_cells,
            _listed,
        ),
        (
            "eos_track",
            "Section 1: time-averaged GD against the hybrid central flow in the EoS settings, a cell per (model, draw) "
            "(sizes: eos_draws, eos_track_steps; eos_c_excess, eos_scale move the setting)",
            _eos_track_cells,
            _listed,
        ),
        (
            "eos_separate",
            "Section 1: GD midpoints against the central flow and gradient flow over long horizons (scalar: 3000 "
            "steps, mf: 1500), a cell per (model, draw) (sizes: eos_sep_draws; eos_c_excess, eos_scale move the "
            "setting)",
            _eos_separate_cells,
            _listed,
        ),
        (
            "scalar_regime",
            "Appendix B: GD in the scalar model inside the paper's regime eta y < 1, a cell per (c = eta y, start "
            "scale) with regime_draws draws (sizes: regime_draws, eos_scan_full)",
            _regime_cells,
            _joined,
        ),
        (
            "eos_neighbourhood",
            "Section 1: does GD sustain the edge near the chosen EoS settings? A cell per (model, c, start scale) with "
            "hood_draws draws (sizes: hood_draws, eos_scan_full)",
            _hood_cells,
            _listed,
        ),
    ],
)


# --- GD against the averaged central flow across an activation-boundary event at the edge --------------------------


def _compute_boundary(params: dict) -> Any:
    """One cell: ``experiments.boundary_track(**kwargs)``."""
    return run_call(E, frozenset({"boundary_track"}), params)


def _boundary_cells(z: E.Sizes) -> list[dict]:
    from numerics.central_flow.boundary import BOUNDARY_SIZES

    got = BOUNDARY_SIZES["full" if z.eos_scan_full else "quick"]
    return [call_cell("boundary_track", i=i, post=got["post"], pre=got["pre"]) for i in range(got["tries"])]


EXPERIMENTS.update(
    call_experiments(
        "central_flow",
        E.sizes_with,
        _compute_boundary,
        CODE_MODULES,
        [
            (
                "boundary_track",
                "Appendix D / Section 1: GD at the edge against the averaged central flow, gradient flow and the flow "
                "frozen in the old region across a boundary event, a cell per draw of boundary.boundary_problem "
                "(sizes: eos_scan_full picks boundary.BOUNDARY_SIZES)",
                _boundary_cells,
                _listed,
            )
        ],
    )
)
