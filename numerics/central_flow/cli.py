"""GD, gradient flow and the central flow of the central-flow paper (arXiv 2611.06718) from the command line.

Usage::

    python -m numerics.central_flow --model {scalar,mf,relu} [--setting {eos,reconstructed}] [--draw N]
        [--steps N] [--format text|json] [--plot FILE]

It runs one draw of the audit's setting of one model under ``experiments.SEED`` (``experiments.draw``):

- ``--setting eos`` (the default): the edge-of-stability settings of the audit's EoS checks
  (``experiments.EOS_SETTINGS``, ``experiments.eos_problem``: ``scalar_eos_setting``, ``mf_eos_setting``,
  ``relu_eos_setting``; eta = 0.9, a target whose flattest minimum has lambda* = c (2/eta) with c just above 1,
  start scale 0.3), where GD sharpens to 2/eta, catapults, and then stays at the edge on a small period-two
  orbit. Draw N is the draw N of the audit's ``eos_track`` ensembles (draws 0 to 5 in the quick profile, 0 to 11
  in the full one); the default is draw 0 and 1200 steps (3 ``experiments.EOS_WINDOW``, the GD run of
  ``eos_track``, so the catapult's end below is the audit's);
- ``--setting reconstructed``: the settings read for the lost Figures 1-4 (``experiments.SETTINGS``:
  ``scalar_setting``, ``mf_setting``, ``relu_setting``), where GD catapults in its first steps and then
  converges below the edge. The default draw is the audit's first used draw: ``experiments.used_draws(setting,
  1)[0]`` for the scalar and matrix models (the first start below the edge, lambda_max(theta0) < 2/eta), and for
  ReLU the first draw whose hybrid flow reaches the edge by t = ``experiments.RELU_CONTACT_T``
  (``experiments.relu_used(1, ...)[0]``); the default steps are the setting's T (200 scalar, 100 mf, 60 relu).

A draw whose start lies on or above the edge (it has no central flow) is refused, and so is, in the
reconstructed setting, a draw the audit does not use. Each run has

- GD, theta_{k+1} = theta_k - eta grad L, for ``--steps`` steps (``flows.gradient_descent``), and its
  adjacent-iterate midpoints;
- gradient flow (GF), theta' = -eta grad L (``flows.gradient_flow``);
- the central flow (CF), here the hybrid flow: GF until lambda_max reaches 2/eta, then the central flow
  (``flows.hybrid_flow``), continued across ReLU activation boundaries; should it stop early, its samples end at
  the last grid time before the stop, and the stop reason is printed.

All start at theta0. Time runs in GD steps, and every flow is sampled on GD's step grid t = 0, 1, ..., steps.

Output: eta and 2/eta; GD's final sharpness lambda (the top Hessian eigenvalue, ``spectra.sharpness``) and
lambda eta/2; the fraction of GD iterates from the first one with lambda >= 2/eta on whose lambda lies within 10%
of 2/eta; the change of the model's conserved law (h = u^2 - v^2, Psi = U^T U - V^T V, h_j = |u_j|^2 - |v_j|^2,
``laws.law``) along GD, GD's midpoints, GF and CF, final and largest, relative to |h_0| (scalar), |Psi_0|_F (mf)
or |theta_0|^2 = sum_j |u_j|^2 + |v_j|^2 (relu); CF's contact time (lambda_max first at 2/eta) and its stop
reason. In the EoS setting also where the catapult ends (``eos.catapult_end``, as in ``experiments.eos_track``:
the first step t_c from which GD's lambda stays within 10% of 2/eta with its centre moving at most 1/TRACK_C of
its period-two oscillation, to the end of the detection window of ``experiments.EOS_WINDOW`` steps from the first
step at the edge, shortened to the run), the fraction of the iterates from t_c to the end whose lambda lies within
10% of 2/eta, and the law's change measured from the catapult's end: |law(t) - law(t_c)| along each run from t_c
on (the midpoints from t_c + 1/2), relative to the same scale at that run's own point at t_c.

``--format json`` prints one JSON document with the series as well: ``setting``, ``eta``, and for ``gd``,
``gf`` and ``cf`` the times ``t``, ``sharpness``, ``loss``, ``law`` and ``law_change`` at every sample (``mid``:
``t``, ``law``, ``law_change``; ``cf``: also ``k``, the number of critical directions); in the EoS setting also
``catapult`` (``first``, ``window_end``, ``step``, ``why`` when there is none, ``iterates_after``,
``edge_fraction_after``) and, for each run, ``law_change_catapult`` (null before t_c), its final and largest
value and ``law_scale_catapult``. Numbers are numbers, null where a value is not finite (the sharpness on an
activation boundary, where the Hessian does not exist). ``--plot FILE`` draws lambda eta/2, the loss and the
law's change against t, with the catapult's end marked.

Bad input is a one-line error naming the option, its value and the allowed range, exit status 2; ``--steps`` is
bounded per setting and model so that a run takes about a minute of CPU at most (see ``step_bound``): in the EoS
setting 60000 steps (scalar), 6000 (mf), 12000 (relu); in the reconstructed one 30000, 6000 and 500 (ReLU, where
its gradient flow stays within the solver's switch limit). A run that fails for valid input (GD diverging, the
flow solver giving up) is a one-line error, exit status 1. A closed output pipe (``| head``) ends quietly with exit
status 141 (128 + SIGPIPE, as ``numerics.multipath``); an interrupt exits with status 130.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.models import Model
from numerics.cli_support import (
    Parser,
    RunError,
    UsageError,
    add_output_options,
    bad,
    check_plot,
    fmt_g,
    integer_text,
    run_simulation,
    save_plot,
)
from numerics.cli_support import to_json as support_to_json
from numerics.validation import integer

PROG = "python -m numerics.central_flow"
MODELS = ("scalar", "mf", "relu")
SETTINGS = {  # --setting -> model -> the experiments' setting (seed, draw) -> (model, theta0, eta)
    "eos": {"scalar": E.scalar_eos_setting, "mf": E.mf_eos_setting, "relu": E.relu_eos_setting},
    "reconstructed": {"scalar": E.scalar_setting, "mf": E.mf_setting, "relu": E.relu_setting},
}
SETTING_NAMES = tuple(SETTINGS)
LAWS = {
    "scalar": ("h = u^2 - v^2", "|h_0|", "|h(t_c)|"),
    "mf": ("Psi = U^T U - V^T V", "|Psi_0|_F", "|Psi(t_c)|_F"),
    "relu": ("h_j = |u_j|^2 - |v_j|^2", "|theta_0|^2", "|theta(t_c)|^2"),
}
MAX_DRAW = 2**64 - 1  # the Philox key of a draw is (seed, draw) in uint64
RELU_TRIES = 400  # draws scanned for the first used ReLU draw (as experiments.used_draws)
EDGE_BAND = 0.1  # "at the edge": |lambda - 2/eta| <= EDGE_BAND 2/eta (eos.catapult_end's default band)
EOS_STEPS = 3 * E.EOS_WINDOW  # the default steps of the EoS setting: eos_track's GD run (its catapult window whole)
EOS_DRAWS = {p: E.PROFILES[p].eos_draws for p in ("quick", "full")}  # draws 0 .. n - 1 of the eos_track ensembles

# The step bound. CPU time of a whole run (``run``: GD, GF and the hybrid flow, with the sharpness, loss and law at
# every sample), measured on the 2-core development machine (Python 3.11, the NumPy and SciPy of constraints.txt).
# The EoS settings (draw 0 up: the eos_track draws):
# - scalar, draws 0-2: 0.47-0.57 ms a step at 1200 steps, 0.43-0.54 ms at 5000 and 20000, 26 s at 60000;
# - mf, draws 0-2: 5.6-7.5 ms a step at 1200 steps (9.0 s), 4.5-4.8 ms at 4000 (19 s); the hybrid flow is most of it;
# - relu, draws 0-5: 2.8-3.6 ms a step at 1200 steps, 2.2-2.7 ms at 4000 (draws 0, 3, 5, 9), 31 s at 12000 (draw
#   3). Its flows stay in or near the all-active region: to t = 12000, draws 0-5 and 9 switched at most twice
#   (one gate crossing, one or two mode changes), far from flows.MAX_SEGMENTS = 200, so no switch bound is needed.
# The reconstructed settings:
# - scalar, draws 0-2: 0.64-1.05 ms a step at 2000 and 5000 steps (2.1 ms at 200: the fixed cost), 24 s at 30000;
# - mf, draws 1 and 3: 5.2-6.3 ms a step at 1000-7500 steps (12 ms at 200), 39 s at 7500; the hybrid flow is most
#   of it;
# - relu, six used draws (3, 31, 36, 52, 54, 56): at most 12.3 ms a step at 500 steps (6.1 s), 7.2 ms at 1000.
# With other work on the same two cores the wall time was up to 3 times the CPU time (27 s for the default EoS mf
# run, 54 s for the reconstructed scalar model at 30000 steps). STEP_MS is the worst cost rounded up, and a run may
# take BUDGET_S = 60 s of CPU by it. The reconstructed ReLU setting is bounded more tightly by the solver: its
# gradient flow slides along activation boundaries, each slide a switch, and MAX_SEGMENTS switches end a run; among
# the first 25 used draws the 200th switch came at t = 635 at the earliest (draws 7, 39 and 51 at t = 635, 693,
# 742), so MAX_STEPS keeps it at 500 steps.
BUDGET_S = 60.0
STEP_MS = {
    "eos": {"scalar": 1.0, "mf": 10.0, "relu": 5.0},
    "reconstructed": {"scalar": 2.0, "mf": 10.0, "relu": 15.0},
}
MAX_STEPS = {("reconstructed", "relu"): 500}


def _draw(text: str) -> int:
    try:
        return integer(integer_text(text), "--draw", 0, MAX_DRAW)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"must be an integer in [0, {MAX_DRAW}]; got {text!r}") from None


def step_bound(model: str, setting: str = "eos") -> int:
    """The most ``--steps`` of a model in a setting: BUDGET_S over the measured cost of a step, and at most MAX_STEPS.

    >>> [step_bound(m) for m in MODELS], [step_bound(m, "reconstructed") for m in MODELS]
    ([60000, 6000, 12000], [30000, 6000, 500])
    """
    by_cost = int(BUDGET_S * 1e3 / STEP_MS[setting][model])
    return min(by_cost, MAX_STEPS.get((setting, model), by_cost))


def _why_bound(model: str, setting: str) -> str:
    if step_bound(model, setting) < int(BUDGET_S * 1e3 / STEP_MS[setting][model]):
        return "beyond it the gradient flow may exceed the solver's 200 switches at activation boundaries"
    return f"about {STEP_MS[setting][model]:g} ms a step, {BUDGET_S:.0f} s at most"


def default_steps(model: str, setting: str = "eos") -> int:
    """The default ``--steps``: EOS_STEPS (eos_track's GD run) in the EoS setting, the setting's T otherwise.

    >>> [default_steps(m) for m in MODELS], [default_steps(m, "reconstructed") for m in MODELS]
    ([1200, 1200, 1200], [200, 100, 60])
    """
    return EOS_STEPS if setting == "eos" else int(E.SETTINGS[model]["T"])


def _bounds_text(setting: str) -> str:
    return ", ".join(f"{step_bound(m, setting)} ({m})" for m in MODELS)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__)
    p.add_argument("--model", required=True, choices=MODELS, help="the model: scalar, mf (matrix factorisation), relu")
    p.add_argument(
        "--setting",
        choices=SETTING_NAMES,
        default="eos",
        help="eos (default): the audit's edge-of-stability settings (experiments.EOS_SETTINGS, the draws of its "
        "eos_track ensembles); reconstructed: the settings read for Figures 1-4 (experiments.SETTINGS), where GD "
        "ends below the edge",
    )
    p.add_argument(
        "--draw",
        type=_draw,
        metavar="N",
        help=f"draw N of the setting under experiments.SEED, an integer in [0, {MAX_DRAW}] whose start lies below "
        "the edge (reconstructed: one the audit uses); default: eos 0, reconstructed the first used draw",
    )
    p.add_argument(
        "--steps",
        metavar="N",
        help=f"GD steps and the flows' horizon t = N (default: eos {EOS_STEPS}, reconstructed the setting's T: 200 "
        f"scalar, 100 mf, 60 relu); at most eos {_bounds_text('eos')}, reconstructed {_bounds_text('reconstructed')} "
        "(about a minute; reconstructed relu: the solver's switch limit)",
    )
    add_output_options(p, "draw lambda eta/2, the loss and the law's change against t into FILE")
    return p


# ---------------------------------------------------------------- the setting
@dataclass(frozen=True)
class Setting:
    """A validated run: the setting ('eos' or 'reconstructed'), the model's name, the draw, the GD steps, the plot."""

    setting: str
    model: str
    draw: int
    steps: int
    plot: Path | None


def default_draw(model: str, setting: str = "eos") -> int:
    """The default draw: 0 in the EoS setting (the eos_track ensembles' first); the audit's first used draw of the
    reconstructed setting (scalar, mf: start below the edge; relu: also an EOS contact)."""
    if setting == "eos":
        return 0
    if model == "relu":
        return E.relu_used(1, RELU_TRIES)[0]
    return E.used_draws(SETTINGS[setting][model], 1)[0]


def unused_reason(model: str, draw: int, setting: str = "eos") -> str | None:
    """Why draw ``draw`` of ``model`` cannot be run (start on or above the edge; reconstructed: not used by the
    audit), or None when it can."""
    try:
        net, theta0, eta = E.draw(SETTINGS[setting][model], draw)
        lam0 = float(SPEC.sharpness(net, theta0)[0])
        if not lam0 < 2.0 / eta:
            return f"its start lies on or above the edge (lambda_max(theta0) = {lam0:.6g} >= 2/eta = {2.0 / eta:.6g})"
        if setting == "reconstructed" and model == "relu" and E.relu_contact(draw, E.RELU_CONTACT_T) is None:
            return f"its hybrid flow does not reach the edge by t = {E.RELU_CONTACT_T:g}"
    except (ValueError, RuntimeError) as exc:  # a start on an activation boundary; a flow the solver gave up on
        return str(exc)
    return None


def setting(args: argparse.Namespace) -> Setting:
    """The parsed options checked together (the draw's use, the step bound); UsageError naming the option."""
    model, family = args.model, args.setting
    bound = step_bound(model, family)
    if args.steps is None:
        steps = default_steps(model, family)
    else:
        try:
            steps = integer(integer_text(args.steps), "--steps", 1, bound)
        except (ValueError, OverflowError):
            raise bad(
                "--steps",
                f"must be an integer in [1, {bound}] for the {model} model in the {family} setting "
                f"({_why_bound(model, family)}); got {args.steps!r}",
            ) from None
    plot = check_plot(args.plot) if args.plot is not None else None
    if args.draw is None:
        draw = default_draw(model, family)
    else:
        draw = args.draw
        why = unused_reason(model, draw, family)
        if why is not None:
            if family == "reconstructed":
                need = f"that the audit uses (the first: {default_draw(model, family)})"
            else:
                need = "whose start lies below the edge"
            raise bad(
                "--draw",
                f"draw {draw} of the {model} {family} setting cannot be run: {why}; it must be an integer in "
                f"[0, {MAX_DRAW}] {need}; got {draw}",
            )
    return Setting(family, model, draw, steps, plot)


# ---------------------------------------------------------------- the run
def law_scale(model: str, net: Model, theta0: np.ndarray) -> float:
    """The law's reference size: |h_0| (scalar), |Psi_0|_F (mf), |theta_0|^2 = sum_j |u_j|^2 + |v_j|^2 (relu)."""
    if model == "relu":
        return float(theta0 @ theta0)
    return float(np.linalg.norm(CL.law(theta0, net)))


def law_change(values: Any, law0: Any, scale: float) -> np.ndarray:
    """|law(t) - law_0| / scale at each sample (the Frobenius norm of a matrix law, the 2-norm of a vector law)."""
    diff = np.asarray(values, dtype=np.float64) - np.asarray(law0, dtype=np.float64)
    return np.linalg.norm(diff.reshape(diff.shape[0], -1), axis=1) / scale


def sharpness_or_nan(net: Model, theta: np.ndarray) -> float:
    """lambda_max of the Hessian at ``theta``; NaN on an activation boundary, where it does not exist."""
    try:
        return float(SPEC.sharpness(net, theta)[0])
    except ValueError:
        return math.nan


def _series(net: Model, t: np.ndarray, theta: np.ndarray, law0: Any, scale: float) -> dict[str, Any]:
    law = CL.law(theta, net)
    change = law_change(law, law0, scale)
    return {
        "t": np.asarray(t, dtype=np.float64),
        "sharpness": np.array([sharpness_or_nan(net, x) for x in theta]),
        "loss": np.array([float(net.loss(x)) for x in theta]),
        "law": np.asarray(law, dtype=np.float64),
        "law_change": change,
        "law_change_final": float(change[-1]),
        "law_change_max": float(change.max()),
    }


def edge_fraction(sharpness: np.ndarray, eta: float) -> tuple[int | None, float]:
    """(k0, fraction): the first iterate with lambda >= 2/eta and the fraction of iterates k >= k0 whose
    lambda lies within EDGE_BAND 2/eta of 2/eta ((None, NaN) if lambda never reaches 2/eta).

    >>> edge_fraction(np.array([1.0, 2.3, 2.2, 1.5]), 0.9)
    (1, 0.6666666666666666)
    """
    edge = 2.0 / eta
    reached = np.nonzero(sharpness >= edge)[0]
    if not reached.size:
        return None, math.nan
    k0 = int(reached[0])
    return k0, float(np.mean(np.abs(sharpness[k0:] - edge) <= EDGE_BAND * edge))


def catapult(iterates: np.ndarray, sharpness: np.ndarray, eta: float) -> dict[str, Any]:
    """Where GD's catapult ends and how much of the run after it lies at the edge, as ``experiments.eos_track``.

    ``first``: the first iterate with lambda eta/2 >= 1; ``step`` (t_c): :func:`numerics.central_flow.eos.catapult_end`
    over the detection window ``first .. window_end``, of EOS_WINDOW steps (eos_track's) shortened to the run (the
    centre's speed at step j needs iterate j + 2); None with ``why`` when GD never reaches the edge, the run is
    too short to tell or GD has not settled by the window's end. ``iterates_after``, ``edge_fraction_after``: the
    iterates t_c .. K and the fraction of them with |lambda - 2/eta| <= EDGE_BAND 2/eta (None without t_c).

    >>> it = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 0.0], [1.2, 0.0], [1.0, 0.0], [1.2, 0.0], [1.0, 0.0]])
    >>> c = catapult(it, np.array([0.5, 1.3, 0.8, 1.05, 0.96, 1.04, 0.97]), 2.0)
    >>> c["first"], c["window_end"], c["step"], c["iterates_after"], c["edge_fraction_after"]
    (1, 4, 3, 4, 1.0)
    """
    r = np.asarray(sharpness, dtype=np.float64) * eta / 2
    none: dict[str, Any] = {"step": None, "iterates_after": None, "edge_fraction_after": None}
    hit = np.nonzero(r >= 1)[0]
    if not hit.size:
        return {"first": None, "window_end": None, **none, "why": "GD's sharpness never reaches 2/eta"}
    first = int(hit[0])
    window = min(E.EOS_WINDOW, r.size - 2 - first)  # catapult_end needs iterates up to first + window + 1
    if window < 1:
        why = f"the run is too short to tell (the detection needs at least {first + 3} iterates, steps 0-{first + 2})"
        return {"first": first, "window_end": None, **none, "why": why}
    out = {"first": first, "window_end": first + window - 1}
    step = EOS.catapult_end(iterates, sharpness, eta, first, window, EDGE_BAND)
    if step is None:
        why = (
            f"GD has not settled at the edge by step {first + window - 1}: there lambda lies outside "
            f"{EDGE_BAND:g} 2/eta of 2/eta or the centre moves faster than the oscillation"
        )
        return {**out, **none, "why": why}
    after = np.abs(r[step:] - 1) <= EDGE_BAND
    return {**out, "step": step, "iterates_after": int(after.size), "edge_fraction_after": float(after.mean())}


def law_change_from(law: Any, index: int, scale: float) -> np.ndarray:
    """|law(t) - law(t_index)| / scale from sample ``index`` on, NaN before it (law_change against that sample).

    >>> law_change_from(np.array([1.0, 2.0, 4.0]), 1, 2.0).tolist()
    [nan, 0.0, 1.0]
    """
    values = np.asarray(law, dtype=np.float64)
    out = np.full(values.shape[0], np.nan)
    out[index:] = law_change(values[index:], values[index], scale)
    return out


def _from_catapult(model: str, net: Model, series: dict[str, Any], theta: np.ndarray, index: int | None) -> None:
    """Add the law's change from sample ``index`` (the catapult's end) to a run's series, scaled at its own point."""
    if index is None or index >= theta.shape[0]:  # no catapult end, or a flow that stopped before it
        series |= {"law_change_catapult": None, "law_change_catapult_final": None,
                   "law_change_catapult_max": None, "law_scale_catapult": None}  # fmt: skip
        return
    scale = law_scale(model, net, theta[index])
    change = law_change_from(series["law"], index, scale)
    series |= {
        "law_change_catapult": change,
        "law_change_catapult_final": float(change[-1]),
        "law_change_catapult_max": float(np.nanmax(change)),
        "law_scale_catapult": scale,
    }


def run(s: Setting) -> dict[str, Any]:
    """GD, its midpoints, GF and the hybrid CF of a validated setting, sampled on the step grid (the JSON summary)."""
    net, theta0, eta = E.draw(SETTINGS[s.setting][s.model], s.draw)
    grid = np.arange(s.steps + 1, dtype=np.float64)
    T = float(s.steps)
    try:
        gd = F.gradient_descent(net, theta0, eta, s.steps)
        gf = F.gradient_flow(net, theta0, eta, T, grid)
        cf = F.hybrid_flow(net, theta0, eta, T, grid)
    except (FloatingPointError, RuntimeError) as exc:
        raise RunError(str(exc)) from None
    mid = F.midpoints(gd)
    law0 = CL.law(theta0, net)
    scale = law_scale(s.model, net, theta0)
    out_gd = _series(net, grid, gd, law0, scale)
    lam = out_gd["sharpness"]
    k0, frac = edge_fraction(lam, eta)
    out_gd |= {
        "final_sharpness": float(lam[-1]),
        "final_lambda_eta_over_2": float(lam[-1]) * eta / 2,
        "first_edge_step": k0,
        "edge_fraction": frac,
    }
    mid_law = CL.law(mid, net)
    mid_change = law_change(mid_law, law0, scale)
    out_mid = {
        "t": np.arange(mid.shape[0]) + 0.5,
        "law": np.asarray(mid_law, dtype=np.float64),
        "law_change": mid_change,
        "law_change_final": float(mid_change[-1]),
        "law_change_max": float(mid_change.max()),
    }
    out_gf = _series(net, gf.t, gf.theta, law0, scale)
    out_cf = _series(net, cf.t, cf.theta, law0, scale) | {
        "k": cf.k.astype(int),
        "contact": cf.contact,
        "stop": cf.stop,
        "t_end": float(cf.t[-1]),
    }
    out: dict[str, Any] = {
        "setting": s.setting,
        "model": s.model,
        "draw": s.draw,
        "seed": E.SEED,
        "eta": eta,
        "edge": 2.0 / eta,
        "steps": s.steps,
        "theta0": theta0,
        "law_name": LAWS[s.model][0],
        "law_scale": scale,
        "law_scale_name": LAWS[s.model][1],
        "edge_band": EDGE_BAND,
    }
    if s.setting == "eos":
        cat = catapult(gd, lam, eta)
        out |= {"eos": dict(E.EOS_SETTINGS[s.model]), "eos_draws": EOS_DRAWS, "catapult": cat,
                "law_scale_catapult_name": LAWS[s.model][2]}  # fmt: skip
        for series, theta in ((out_gd, gd), (out_mid, mid), (out_gf, gf.theta), (out_cf, cf.theta)):
            _from_catapult(s.model, net, series, theta, cat["step"])
    return out | {"gd": out_gd, "mid": out_mid, "gf": out_gf, "cf": out_cf}


# ---------------------------------------------------------------- output


def to_json(summary: dict) -> str:
    """The summary as one JSON document."""
    return support_to_json(summary)


def _law_lines(s: dict, suffix: str = "") -> list[str]:
    lines = []
    for key, label in (("gd", "GD"), ("mid", "GD midpoint"), ("gf", "GF"), ("cf", "CF")):
        run = s[key]
        final, most = run[f"law_change{suffix}_final"], run[f"law_change{suffix}_max"]
        if final is None:
            lines.append(f"  {label:<12}- (the flow stopped before t_c)")
        else:
            lines.append(f"  {label:<12}final {fmt_g(final)}, max {fmt_g(most)}")
    return lines


def _catapult_lines(s: dict) -> list[str]:
    cat, n = s["catapult"], s["steps"]
    if cat["step"] is None:
        return [f"catapult     no end found: {cat['why']}"]
    c = cat["step"]
    return [
        f"catapult     ends at step t_c = {c} (eos.catapult_end over steps {cat['first']}-{cat['window_end']}: from "
        f"t_c on lambda stays within {s['edge_band']:g} 2/eta of 2/eta, the centre's step at most "
        f"1/{EOS.TRACK_C:g} of the oscillation)",
        f"after it     {fmt_g(cat['edge_fraction_after'])} of the {cat['iterates_after']} iterates from step {c} to "
        f"{n} have |lambda - 2/eta| <= {s['edge_band']:g} 2/eta",
    ]


def render_text(summary: dict) -> str:
    """A few labelled lines: the setting, GD's sharpness, the catapult (EoS), the law's change along each run, CF's
    contact and stop."""
    s = summary
    gd, cf, scale = s["gd"], s["cf"], s["law_scale_name"]
    if gd["first_edge_step"] is None:
        edge = "GD's sharpness never reaches 2/eta"
    else:
        k0 = gd["first_edge_step"]
        edge = (
            f"{fmt_g(gd['edge_fraction'])} of the {s['steps'] + 1 - k0} iterates from step {k0} (the first with "
            f"lambda >= 2/eta) have |lambda - 2/eta| <= {s['edge_band']:g} 2/eta"
        )
    n = s["steps"]
    lines = [f"{s['model']} model, {s['setting']} setting: draw {s['draw']} under seed {s['seed']}, {n} GD steps, "
             f"flows to t = {n}"]  # fmt: skip
    if s["setting"] == "eos":
        c, q, f = s["eos"], s["eos_draws"]["quick"], s["eos_draws"]["full"]
        lines.append(
            f"setting      c = eta lambda*/2 = {fmt_g(c['c'])}, start scale {fmt_g(c['scale'])} "
            f"(experiments.EOS_SETTINGS); the audit's eos_track ensembles: draws 0-{q - 1} quick, 0-{f - 1} full"
        )
    lines += [
        f"eta          {fmt_g(s['eta'])}  (2/eta = {fmt_g(s['edge'])})",
        f"GD sharpness final lambda = {fmt_g(gd['final_sharpness'])}, "
        f"lambda eta/2 = {fmt_g(gd['final_lambda_eta_over_2'])}",
        f"at the edge  {edge}",
    ]
    if s["setting"] == "eos":
        lines += _catapult_lines(s)
    lines.append(f"law          {s['law_name']}: |change| / {scale} ({scale} = {fmt_g(s['law_scale'])})")
    lines += _law_lines(s)
    if s["setting"] == "eos" and s["catapult"]["step"] is not None:
        ref = s["law_scale_catapult_name"]
        lines.append(
            f"law from t_c |law(t) - law(t_c)| / {ref} of each run at its own point at t_c = {s['catapult']['step']} "
            "(the midpoints from t_c + 1/2)"
        )
        lines += _law_lines(s, "_catapult")
    contact = "never reaches 2/eta" if cf["contact"] is None else f"t = {fmt_g(cf['contact'])}"
    if cf["stop"]:
        stop = f"{cf['stop']} (its samples end at t = {fmt_g(cf['t_end'])})"
    else:
        stop = f"none (reached t = {fmt_g(cf['t_end'])})"
    lines += [f"CF contact   {contact}", f"CF stop      {stop}"]
    return "\n".join(lines)


def _floor(x: np.ndarray) -> np.ndarray:
    return np.maximum(np.abs(x), 1e-18)  # log axes: exact zeros drawn at 1e-18


def plot(summary: dict, path: Path) -> None:
    """lambda eta/2, the loss and the law's change against t (GD, its midpoints, GF, CF), into ``path``; in the EoS
    setting the catapult's end is marked and the law's change from it is drawn dotted."""
    from numerics.central_flow.figures import FLOWS
    from numerics.plotting import PAPER, plt

    s = summary
    eta = s["eta"]
    tc = s["catapult"]["step"] if "catapult" in s else None  # the catapult's end (EoS setting), if found
    fig, (top, middle, bottom) = plt.subplots(3, 1, sharex=True, figsize=(7, 8))
    for key in ("gd", "gf", "cf"):
        col, ls, lab = FLOWS[key]
        run = s[key]
        top.plot(run["t"], run["sharpness"] * eta / 2, ls, color=col, lw=1, label=lab)
        middle.semilogy(run["t"], _floor(run["loss"]), ls, color=col, lw=1, label=lab)
    for key in ("gd", "mid", "gf", "cf"):
        col, ls, lab = FLOWS[key]
        bottom.semilogy(s[key]["t"], _floor(s[key]["law_change"]), ls, color=col, lw=1, label=lab)
        if tc is not None and s[key]["law_change_catapult"] is not None:
            bottom.semilogy(s[key]["t"][tc:], _floor(s[key]["law_change_catapult"][tc:]), ":", color=col, lw=1)
    top.axhline(1.0, ls=":", color=PAPER, lw=1, zorder=0)
    for ax in (top, middle, bottom):
        if s["cf"]["contact"] is not None:
            ax.axvline(s["cf"]["contact"], ls=":", color="0.5", lw=0.8)
        if tc is not None:
            ax.axvline(tc, ls="--", color="0.3", lw=0.8)
    top.set_ylabel("lambda_max eta / 2")
    middle.set_ylabel("loss")
    ylabel = f"|change| / {s['law_scale_name']}"
    if tc is not None:
        ylabel += f"\n(dotted: from t_c, / {s['law_scale_catapult_name']})"
    bottom.set_ylabel(ylabel)
    bottom.set_xlabel("t (GD steps)" + ("; dashed: the catapult's end t_c" if tc is not None else ""))
    title = (
        f"{s['model']}, {s['setting']} setting: draw {s['draw']}, eta = {eta:g}, {s['steps']} steps; "
        f"law {s['law_name']}"
    )
    save_plot(fig, path, top, title, legend_axes=(top, bottom))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 1 the run failed; 2 bad input; 130 interrupted; 141 pipe closed)."""
    return run_simulation(
        PROG, argv, build_parser, setting, run, lambda summary, _s, path: plot(summary, path), to_json, render_text
    )


__all__ = [
    "RunError",
    "Setting",
    "UsageError",
    "build_parser",
    "catapult",
    "default_draw",
    "default_steps",
    "edge_fraction",
    "law_change",
    "law_change_from",
    "law_scale",
    "main",
    "plot",
    "render_text",
    "run",
    "setting",
    "sharpness_or_nan",
    "step_bound",
    "to_json",
    "unused_reason",
]
