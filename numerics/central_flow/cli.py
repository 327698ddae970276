"""GD, gradient flow and the central flow of the central-flow paper (arXiv 2611.06718) from the command line.

Usage::

    python -m numerics.central_flow --model {scalar,mf,relu} [--draw N] [--steps N]
        [--format text|json] [--plot FILE]

It runs the audit's setting of one model (:mod:`numerics.central_flow.experiments`): draw N of
``scalar_setting``, ``mf_setting`` or ``relu_setting`` under ``experiments.SEED``
(``experiments.draw``), with

- GD, theta_{k+1} = theta_k - eta grad L, for ``--steps`` steps (default the setting's T: 200
  scalar, 100 mf, 60 relu) (``flows.gradient_descent``), and its adjacent-iterate midpoints;
- gradient flow (GF), theta' = -eta grad L (``flows.gradient_flow``);
- the central flow (CF), here the hybrid flow: GF until lambda_max reaches 2/eta, then the
  central flow (``flows.hybrid_flow``, one critical direction). A ReLU hybrid flow may stop
  before the end (at a sliding activation boundary); its samples then end at the last grid
  time before the stop, and the stop reason is printed.

Time runs in GD steps, and every flow is sampled on GD's step grid t = 0, 1, ..., steps.

The default draw is the audit's first used draw: ``experiments.used_draws(setting, 1)[0]`` for
the scalar and matrix models (the first start below the edge, lambda_max(theta0) < 2/eta), and
for ReLU the first draw whose hybrid flow reaches the edge by t = ``experiments.RELU_CONTACT_T``
(``experiments.relu_used(1, ...)[0]``). A draw that is not used in this sense is refused.

Output: eta and 2/eta; GD's final sharpness lambda (the top Hessian eigenvalue,
``spectra.sharpness``) and lambda eta/2; the fraction of GD iterates from the first one with
lambda >= 2/eta on whose lambda lies within 10% of 2/eta; the change of the model's conserved
law (h = u^2 - v^2, Psi = U^T U - V^T V, h_j = |u_j|^2 - |v_j|^2, ``laws.law``) along GD, GD's
midpoints, GF and CF, final and largest, relative to |h_0| (scalar), |Psi_0|_F (mf) or
|theta_0|^2 = sum_j |u_j|^2 + |v_j|^2 (relu); CF's contact time (lambda_max first at 2/eta) and
its stop reason. ``--format json`` prints one JSON document with the series as well: for
``gd``, ``gf`` and ``cf`` the times ``t``, ``sharpness``, ``loss``, ``law`` and ``law_change``
at every sample (``mid``: ``t``, ``law``, ``law_change``; ``cf``: also ``k``, the number of
critical directions), numbers as numbers and null where a value is not finite (the sharpness on
an activation boundary, where the Hessian does not exist). ``--plot FILE`` draws lambda eta/2,
the loss and the law's change against t.

Bad input is a one-line error naming the option, its value and the allowed range, exit status 2;
``--steps`` is bounded per model so that a run takes about a minute at most: 30000 steps (scalar),
6000 (mf); ReLU at 500, where its gradient flow stays within the solver's switch limit (see ``step_bound``).
A run that fails for valid input (GD diverging, the flow solver giving up) is a one-line error,
exit status 1. A closed output pipe (``| head``) ends quietly with exit status 141 (128 + SIGPIPE,
as ``numerics.multipath``); an interrupt exits with status 130.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.models import Model
from numerics.cli_support import (
    Parser,
    RunError,
    UsageError,
    bad,
    check_plot,
    fmt_g,
    integer_text,
    run_command,
    save_figure,
)
from numerics.cli_support import to_json as support_to_json
from numerics.validation import integer

PROG = "python -m numerics.central_flow"
SETTINGS = {"scalar": E.scalar_setting, "mf": E.mf_setting, "relu": E.relu_setting}
MODELS = tuple(SETTINGS)
LAWS = {
    "scalar": ("h = u^2 - v^2", "|h_0|"),
    "mf": ("Psi = U^T U - V^T V", "|Psi_0|_F"),
    "relu": ("h_j = |u_j|^2 - |v_j|^2", "|theta_0|^2"),
}
MAX_DRAW = 2**64 - 1  # the Philox key of a draw is (seed, draw) in uint64
RELU_TRIES = 400  # draws scanned for the first used ReLU draw (as experiments.used_draws)
EDGE_BAND = 0.1  # "at the edge": |lambda - 2/eta| <= EDGE_BAND 2/eta

# The step bound. CPU time of a whole run (``run``: GD, GF and the hybrid flow, with the sharpness, loss and law at
# every sample), measured on the 2-core development machine (Python 3.11, the NumPy and SciPy of constraints.txt):
# - scalar, draws 0-2: 0.64-1.05 ms a step at 2000 and 5000 steps (2.1 ms at 200: the fixed cost), 24 s at 30000;
# - mf, draws 1 and 3: 5.2-6.3 ms a step at 1000-7500 steps (12 ms at 200), 39 s at 7500; the hybrid flow is most
#   of it;
# - relu, six used draws (3, 31, 36, 52, 54, 56): at most 12.3 ms a step at 500 steps (6.1 s), 7.2 ms at 1000.
# With another audit on the same two cores the wall time was up to 2.5 times the CPU time (54 s for the scalar
# model at 30000 steps). STEP_MS is the worst cost rounded up, and a run may take BUDGET_S = 60 s by it. ReLU is
# bounded more tightly by the solver: its gradient flow slides along activation boundaries, each slide a switch,
# and flows.MAX_SEGMENTS = 200 switches end a run; among the first 25 used draws the 200th switch came at t = 635
# at the earliest (draws 7, 39 and 51 at t = 635, 693, 742), so MAX_STEPS keeps ReLU at 500 steps.
BUDGET_S = 60.0
STEP_MS = {"scalar": 2.0, "mf": 10.0, "relu": 15.0}
MAX_STEPS = {"relu": 500}


def _draw(text: str) -> int:
    try:
        return integer(integer_text(text), "--draw", 0, MAX_DRAW)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"must be an integer in [0, {MAX_DRAW}]; got {text!r}") from None


def step_bound(model: str) -> int:
    """The most ``--steps`` of a model: BUDGET_S over the measured cost of a step, and at most MAX_STEPS.

    >>> step_bound("scalar"), step_bound("mf"), step_bound("relu")
    (30000, 6000, 500)
    """
    by_cost = int(BUDGET_S * 1e3 / STEP_MS[model])
    return min(by_cost, MAX_STEPS.get(model, by_cost))


def _why_bound(model: str) -> str:
    if step_bound(model) < int(BUDGET_S * 1e3 / STEP_MS[model]):
        return "beyond it the gradient flow may exceed the solver's 200 switches at activation boundaries"
    return f"about {STEP_MS[model]:g} ms a step, {BUDGET_S:.0f} s at most"


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__)
    p.add_argument("--model", required=True, choices=MODELS, help="the model: scalar, mf (matrix factorisation), relu")
    p.add_argument(
        "--draw",
        type=_draw,
        metavar="N",
        help=f"draw N of the model's setting under experiments.SEED, an integer in [0, {MAX_DRAW}] that the audit "
        "uses (default: the first used draw)",
    )
    p.add_argument(
        "--steps",
        metavar="N",
        help="GD steps and the flows' horizon t = N (default the setting's T: 200 scalar, 100 mf, 60 relu); at most "
        + ", ".join(f"{step_bound(m)} ({m})" for m in MODELS)
        + " (about a minute; relu: the solver's switch limit)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--plot", metavar="FILE", help="draw lambda eta/2, the loss and the law's change against t")
    return p


# ---------------------------------------------------------------- the setting
@dataclass(frozen=True)
class Setting:
    """A validated run: the model's name, the draw, the GD steps and the plot file."""

    model: str
    draw: int
    steps: int
    plot: Path | None


def default_draw(model: str) -> int:
    """The audit's first used draw of ``model`` (scalar, mf: start below the edge; relu: also an EOS contact)."""
    if model == "relu":
        return E.relu_used(1, RELU_TRIES)[0]
    return E.used_draws(SETTINGS[model], 1)[0]


def unused_reason(model: str, draw: int) -> str | None:
    """Why draw ``draw`` of ``model`` is not used by the audit, or None when it is."""
    try:
        net, theta0, eta = E.draw(SETTINGS[model], draw)
        lam0 = float(SPEC.sharpness(net, theta0)[0])
        if not lam0 < 2.0 / eta:
            return f"its start lies on or above the edge (lambda_max(theta0) = {lam0:.6g} >= 2/eta = {2.0 / eta:.6g})"
        if model == "relu" and E.relu_contact(draw, E.RELU_CONTACT_T) is None:
            return f"its hybrid flow does not reach the edge by t = {E.RELU_CONTACT_T:g}"
    except (ValueError, RuntimeError) as exc:  # a start on an activation boundary; a flow the solver gave up on
        return str(exc)
    return None


def setting(args: argparse.Namespace) -> Setting:
    """The parsed options checked together (the draw's use, the step bound); UsageError naming the option."""
    model = args.model
    bound = step_bound(model)
    if args.steps is None:
        steps = int(E.SETTINGS[model]["T"])
    else:
        try:
            steps = integer(integer_text(args.steps), "--steps", 1, bound)
        except (ValueError, OverflowError):
            raise bad(
                "--steps",
                f"must be an integer in [1, {bound}] for the {model} model ({_why_bound(model)}); got {args.steps!r}",
            ) from None
    plot = check_plot(args.plot) if args.plot is not None else None
    if args.draw is None:
        draw = default_draw(model)
    else:
        draw = args.draw
        why = unused_reason(model, draw)
        if why is not None:
            raise bad(
                "--draw",
                f"draw {draw} of the {model} setting is not used: {why}; it must be an integer in [0, {MAX_DRAW}] "
                f"that the audit uses (the first: {default_draw(model)}); got {draw}",
            )
    return Setting(model, draw, steps, plot)


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


def run(s: Setting) -> dict[str, Any]:
    """GD, its midpoints, GF and the hybrid CF of a validated setting, sampled on the step grid (the JSON summary)."""
    net, theta0, eta = E.draw(SETTINGS[s.model], s.draw)
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
    out_cf = _series(net, cf.t, cf.theta, law0, scale) | {
        "k": cf.k.astype(int),
        "contact": cf.contact,
        "stop": cf.stop,
        "t_end": float(cf.t[-1]),
    }
    return {
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
        "gd": out_gd,
        "mid": out_mid,
        "gf": _series(net, gf.t, gf.theta, law0, scale),
        "cf": out_cf,
    }


# ---------------------------------------------------------------- output


def to_json(summary: dict) -> str:
    """The summary as one JSON document."""
    return support_to_json(summary)


def render_text(summary: dict) -> str:
    """A few labelled lines: the setting, GD's sharpness, the law's change along each run, CF's contact and stop."""
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
    lines = [
        f"{s['model']} model: draw {s['draw']} under seed {s['seed']}, {n} GD steps, flows to t = {n}",
        f"eta          {fmt_g(s['eta'])}  (2/eta = {fmt_g(s['edge'])})",
        f"GD sharpness final lambda = {fmt_g(gd['final_sharpness'])}, "
        f"lambda eta/2 = {fmt_g(gd['final_lambda_eta_over_2'])}",
        f"at the edge  {edge}",
        f"law          {s['law_name']}: |change| / {scale} ({scale} = {fmt_g(s['law_scale'])})",
    ]
    for key, label in (("gd", "GD"), ("mid", "GD midpoint"), ("gf", "GF"), ("cf", "CF")):
        run = s[key]
        lines.append(f"  {label:<12}final {fmt_g(run['law_change_final'])}, max {fmt_g(run['law_change_max'])}")
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
    """lambda eta/2, the loss and the law's change against t (GD, its midpoints, GF, CF), into ``path``."""
    from numerics.central_flow.figures import FLOWS
    from numerics.plotting import PAPER, plt

    s = summary
    eta = s["eta"]
    fig, (top, middle, bottom) = plt.subplots(3, 1, sharex=True, figsize=(7, 8))
    for key in ("gd", "gf", "cf"):
        col, ls, lab = FLOWS[key]
        run = s[key]
        top.plot(run["t"], run["sharpness"] * eta / 2, ls, color=col, lw=1, label=lab)
        middle.semilogy(run["t"], _floor(run["loss"]), ls, color=col, lw=1, label=lab)
    for key in ("gd", "mid", "gf", "cf"):
        col, ls, lab = FLOWS[key]
        bottom.semilogy(s[key]["t"], _floor(s[key]["law_change"]), ls, color=col, lw=1, label=lab)
    top.axhline(1.0, ls=":", color=PAPER, lw=1, zorder=0)
    if s["cf"]["contact"] is not None:
        for ax in (top, middle, bottom):
            ax.axvline(s["cf"]["contact"], ls=":", color="0.5", lw=0.8)
    top.set_ylabel("lambda_max eta / 2")
    middle.set_ylabel("loss")
    bottom.set_ylabel(f"|change| / {s['law_scale_name']}")
    bottom.set_xlabel("t (GD steps)")
    top.legend(fontsize=7)
    bottom.legend(fontsize=7)
    top.set_title(
        f"{s['model']}: draw {s['draw']}, eta = {eta:g}, {s['steps']} steps; law {s['law_name']}",
        fontsize=9,
    )
    fig.tight_layout()
    save_figure(fig, path)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 1 the run failed; 2 bad input; 130 interrupted; 141 pipe closed)."""

    def body() -> str:
        args = build_parser().parse_args(argv)
        s = setting(args)
        summary = run(s)
        if s.plot is not None:
            try:
                plot(summary, s.plot)
            except OSError as exc:
                raise bad("--plot", f"cannot write {str(s.plot)!r}: {exc.strerror or exc}") from None
        return to_json(summary) if args.format == "json" else render_text(summary)

    return run_command(PROG, body)


__all__ = [
    "RunError",
    "Setting",
    "UsageError",
    "build_parser",
    "default_draw",
    "edge_fraction",
    "law_change",
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
