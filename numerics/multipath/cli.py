"""GD runs of the multi-pathway paper (arXiv 2606.05219) from the command line.

Usage::

    python -m numerics.multipath {svs,full} [--depths L [L ...] | --depth L [--pathways H]]
        [--sigma S [S ...]] [--eta-s1 GAMMA | --eta ETA] [--alphas A [A ...]] [--steps N]
        [--tol TOL] [--seed S] [--format text|json] [--plot FILE]

Modes:

- ``svs``: the mode recursion (54) a_hi <- a_hi - eta r_i a_hi^{L_h-1} from the depth-balanced
  SVS initialisation (11) (:func:`numerics.multipath.gd.simulate_svs`); it stops early once every
  |r_i| < TOL at a minimum that is stable for the step (lambda eta/2 <= 1 + 1e-9).
- ``full``: GD (4) on the full d x d layers (:func:`numerics.multipath.gd.simulate_full`), started
  on the SVS set (:func:`numerics.multipath.gd.svs_initialisation`) in a frame V, target
  M_* = V diag(sigma_*) V^T: V = I by default, with ``--seed S`` the Haar-random frame
  :func:`numerics.multipath.ensembles.haar_frame` (S, 0) (member 0's frame of an ensemble of seed
  S). It runs every step; the mode values are u_i^T Omega_h v_i.

The default setting is that of the rank-p ensembles (Section 6): two pathways of depth 5,
sigma_* = (1, 0.9, 0.6), eta S_1 = 2.8, alphas (1e-6, 0.9e-6) (H pathways: 1e-6 0.9^h), 200000
steps. The step is ``--eta`` or ``--eta-s1 GAMMA``: eta = GAMMA / S_1, S_1 = L sigma_*1^{2-2/L}
the single-path sharpness of the top mode (sigma_*1 the largest of ``--sigma``); for unequal
depths S_1 = max_h L_h sigma_*1^{2-2/L_h}, the largest single-path sharpness.

Output: the final sharpness lambda, the largest mode sharpness (the top Hessian eigenvalue of
each mode's scalar model, ``gd.mode_sharpness``; Eqs. (13)/(17) at a minimum), and lambda eta/2;
the shares sigma_hi / sigma_*i of every pathway in every mode; the outcome (converged, diverged
or not converged) and whether a layer value a_hi changed sign (flipped); the steps done. The full
mode adds the depth-balance gap and, up to 300 parameters, the top eigenvalue of the full Hessian
(central differences of the exact gradient). It sees a flip as a pathway's mode value
u_i^T Omega_h v_i <= 0 at a recorded step (about 500 records; a flip of an even number of layers
keeps it positive and is not seen), and its mode sharpness takes |u_i^T Omega_h v_i| as the
end-to-end values (exact at r_i = 0 on the SVS set). ``--format json`` prints one JSON document
(numbers as numbers, null where a value is not finite or not computed); ``--plot FILE`` draws
sigma_hi (every mode up to 10) and lambda_i eta/2 against the step.

Bad input is a one-line error naming the option, its value and the allowed range, exit status 2;
a run estimated to take more than a minute is bad input too (see ``step_bound``). A closed
output pipe (``| head``) ends quietly with exit status 141 (128 + SIGPIPE, as ``numerics.table_wcr``); an
interrupt exits with status 130.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from numerics.cli_support import (
    Parser,
    UsageError,
    add_output_options,
    bad,
    check_plot,
    fmt_g,
    int_arg,
    run_simulation,
    save_plot,
)
from numerics.cli_support import to_json as support_to_json

from . import gd

PROG = "python -m numerics.multipath"
MODES = ("svs", "full")
# the defaults are the setting of numerics.multipath.ensembles (DEPTH, len(ALPHAS), SIGMA, ETA_S1, STEPS; a test
# keeps them equal); that module is imported only for a Haar frame (it loads scipy.stats, a second)
DEFAULT_DEPTH, DEFAULT_PATHWAYS = 5, 2
DEFAULT_SIGMA = (1.0, 0.9, 0.6)
DEFAULT_ETA_S1 = 2.8
DEFAULT_STEPS = 200_000
DEFAULT_TOL = 1e-12
MAX_DEPTH, MAX_PATHWAYS, MAX_MODES = 1000, 64, 64  # records of sigma: about 2000 x H x d floats, 66 MB at most
HESSIAN_MAX_PARAMS = 300  # finite-difference Hessian: 2n gradients, measured 0.04 s at n = 90, 7 s at n = 1000

# The step bound. Cost of one GD step measured on the 2-core development machine (simulate_svs with
# tol = 0 over 10^6 steps; simulate_full over about 2e7 d^3-flops of steps, after compilation):
# - mode recursion (54), compensated: 58-88 ns per pathway-mode for H d from 1 to 1600 (H = 1..16,
#   d = 1..100, L = 2..20), so SVS_NS = 100 ns x H x d;
# - full layers: per layer and step 116-280 ns at d <= 4, 420 ns at d = 5, 970 (d = 6), 1420 (8),
#   2140 (10), 3450 (12), 22900 (20), 54000 (30), all below FULL_NS + FULL_NS_D3 d^3 = 200 + 4 d^3 ns.
# A run may take BUDGET_S = 60 s by this estimate (the records, at most ~2000 of d mode sharpnesses,
# add under 3 s at H = d = 64), and independently at most MAX_STEPS = 10^7 steps: gd holds the step
# schedule as an array, 8 bytes a step (80 MB).
BUDGET_S = 60.0
MAX_STEPS = 10**7
SVS_NS = 100.0
FULL_NS, FULL_NS_D3 = 200.0, 4.0
FULL_RECORD_FLOATS = 4_000_000  # full mode: records x H x d^2 floats of pathway outputs, 32 MB at most
PLOT_MODES = 10


def _float(allow_zero: bool):
    span = "a finite number >= 0" if allow_zero else "a finite number > 0"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {span}; got {text!r}") from None
        if not (math.isfinite(value) and (value >= 0 if allow_zero else value > 0)):
            raise argparse.ArgumentTypeError(f"must be {span}; got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__)
    p.add_argument("mode", choices=MODES, help="svs: the mode recursion (54); full: full d x d layers")
    depth = p.add_mutually_exclusive_group()
    depth.add_argument(
        "--depths",
        nargs="+",
        type=int_arg(2, MAX_DEPTH),
        metavar="L",
        help=f"one depth per pathway, integers in [2, {MAX_DEPTH}], at most {MAX_PATHWAYS} pathways",
    )
    depth.add_argument(
        "--depth",
        type=int_arg(2, MAX_DEPTH),
        metavar="L",
        help=f"the depth of every pathway (default {DEFAULT_DEPTH}), with --pathways",
    )
    p.add_argument(
        "--pathways",
        type=int_arg(1, MAX_PATHWAYS),
        metavar="H",
        help=f"number of pathways of depth --depth (default {DEFAULT_PATHWAYS}; not with --depths)",
    )
    p.add_argument(
        "--sigma",
        nargs="+",
        type=_float(False),
        default=list(DEFAULT_SIGMA),
        metavar="S",
        help=f"target singular values sigma_*i > 0, one per mode, at most {MAX_MODES} (default 1 0.9 0.6)",
    )
    step = p.add_mutually_exclusive_group()
    step.add_argument(
        "--eta-s1",
        type=_float(False),
        metavar="GAMMA",
        help=f"step eta = GAMMA / S_1, S_1 = max_h L_h sigma_*1^(2-2/L_h) the largest single-path sharpness "
        f"of the top mode (L sigma_*1^(2-2/L) for equal depths; default {DEFAULT_ETA_S1})",
    )
    step.add_argument("--eta", type=_float(False), metavar="ETA", help="the step itself, > 0")
    p.add_argument(
        "--alphas",
        nargs="+",
        type=_float(False),
        metavar="A",
        help="initial end-to-end scales alpha_h > 0: one for every pathway or one per pathway "
        "(default 1e-6 0.9^h, h = 0..H-1)",
    )
    p.add_argument(
        "--steps",
        type=int_arg(1, None),
        default=DEFAULT_STEPS,
        metavar="N",
        help=f"most GD steps (default {DEFAULT_STEPS}); bounded so that a run takes about a minute at most",
    )
    p.add_argument(
        "--tol",
        type=_float(True),
        default=DEFAULT_TOL,
        help=f"converged: every mode residual below TOL (full: ||M - M_*||_F < TOL) at a stable minimum "
        f"(default {DEFAULT_TOL:g}; 0: never stop early)",
    )
    p.add_argument(
        "--seed",
        type=int_arg(0, None),
        help="full mode: a Haar-random frame V from this seed (default: V = I)",
    )
    add_output_options(p, "draw sigma_hi and lambda_i eta/2 against the step into FILE")
    return p


# ---------------------------------------------------------------- the settings
@dataclass(frozen=True)
class Setting:
    """A validated run: mode, depths (H,), sigma_* (d,), eta, S_1, alphas (H,), steps, tol, seed, plot."""

    mode: str
    depths: tuple[int, ...]
    sigma: tuple[float, ...]
    eta: float
    s1: float
    alphas: tuple[float, ...]
    steps: int
    tol: float
    seed: int | None
    plot: Path | None


def single_path_s1(depths: Sequence[int], sigma: Sequence[float]) -> float:
    """S_1 = max_h L_h sigma_*1^{2-2/L_h}, sigma_*1 = max(sigma) (the paper's L sigma_*1^{2-2/L} at equal depths).

    >>> single_path_s1([5, 5], [1.0, 0.9, 0.6])
    5.0
    """
    top = max(sigma)
    return max(L * top ** (2 - 2 / L) for L in depths)


def step_cost_ns(mode: str, depths: Sequence[int], d: int) -> float:
    """Estimated nanoseconds of one GD step (the measured bounds above)."""
    if mode == "svs":
        return SVS_NS * len(depths) * d
    return sum(depths) * (FULL_NS + FULL_NS_D3 * d**3)


def step_bound(mode: str, depths: Sequence[int], d: int) -> int:
    """The most steps allowed: min(MAX_STEPS, BUDGET_S / estimated step cost).

    >>> step_bound("svs", [5, 5], 3), step_bound("svs", [5] * 64, 64), step_bound("full", [5, 5], 10)
    (10000000, 146484, 1428571)
    """
    return min(MAX_STEPS, int(BUDGET_S * 1e9 / step_cost_ns(mode, depths, d)))


def _duration(ns: float) -> str:
    """``ns`` nanoseconds in the unit that reads best.

    >>> _duration(600.0), _duration(42000.0), _duration(3.4e8)
    ('600 ns', '42 us', '0.34 s')
    """
    return f"{ns:.3g} ns" if ns < 1e3 else f"{ns / 1e3:.3g} us" if ns < 1e6 else f"{ns / 1e9:.3g} s"


def setting(args: argparse.Namespace) -> Setting:
    """The parsed options checked together (lengths, the step bound); UsageError naming the option."""
    if args.depths is not None:
        if args.pathways is not None:
            raise bad(
                "--pathways", f"not allowed with argument --depths (which gives one per pathway); got {args.pathways}"
            )
        if len(args.depths) > MAX_PATHWAYS:
            raise bad("--depths", f"at most {MAX_PATHWAYS} pathways; got {len(args.depths)} depths")
        depths = tuple(args.depths)
    else:
        L = DEFAULT_DEPTH if args.depth is None else args.depth
        depths = (L,) * (DEFAULT_PATHWAYS if args.pathways is None else args.pathways)
    H = len(depths)
    sigma = tuple(args.sigma)
    if len(sigma) > MAX_MODES:
        raise bad("--sigma", f"at most {MAX_MODES} values (one per mode); got {len(sigma)}")
    s1 = single_path_s1(depths, sigma)
    eta = args.eta if args.eta is not None else (DEFAULT_ETA_S1 if args.eta_s1 is None else args.eta_s1) / s1
    if not (math.isfinite(eta) and eta > 0):  # GAMMA / S_1 under- or overflowing
        raise bad("--eta-s1", f"gives eta = {eta!r}, which must be a finite number > 0; got {args.eta_s1!r}")
    if args.alphas is None:
        alphas = tuple(1e-6 * 0.9**h for h in range(H))
    elif len(args.alphas) in (1, H):
        alphas = tuple(args.alphas) * (H if len(args.alphas) == 1 else 1)
    else:
        got = " ".join(f"{a:g}" for a in args.alphas)
        raise bad("--alphas", f"needs 1 value or one per pathway (H = {H}); got {len(args.alphas)}: {got}")
    bound = step_bound(args.mode, depths, len(sigma))
    if bound < 1:
        size = f"{sum(depths)} layers of {len(sigma)} x {len(sigma)}"
        raise bad(
            "--depths" if args.depths is not None else "--depth",
            f"one full-mode step with {size} takes about {_duration(step_cost_ns(args.mode, depths, len(sigma)))}, "
            f"over the {BUDGET_S:.0f} s budget; use fewer or shallower pathways or fewer modes",
        )
    if args.steps > bound:
        cost = step_cost_ns(args.mode, depths, len(sigma))
        raise bad(
            "--steps",
            f"must be an integer in [1, {bound}] for the {args.mode} mode with H = {H}, d = {len(sigma)} "
            f"(about {_duration(cost)} a step, {BUDGET_S:.0f} s at most, at most {MAX_STEPS} steps); got {args.steps}",
        )
    if args.seed is not None and args.mode != "full":
        raise bad("--seed", f"only the full mode draws a frame (the mode recursion has none); got {args.seed}")
    plot = check_plot(args.plot) if args.plot is not None else None
    return Setting(args.mode, depths, sigma, float(eta), s1, alphas, args.steps, args.tol, args.seed, plot)


# ---------------------------------------------------------------- the runs
@dataclass(frozen=True)
class Outcome:
    """A finished run: the JSON-ready ``summary`` and the traces for the plot (t, sigma (n, H, d), lambda (n, d))."""

    summary: dict
    t: np.ndarray
    sigma: np.ndarray
    lam: np.ndarray


def frame(seed: int | None, d: int) -> np.ndarray:
    """V = I (no seed) or the Haar-random frame of ``ensembles.haar_frame(seed, 0, d)``."""
    if seed is None:
        return np.eye(d)
    from . import ensembles

    return ensembles.haar_frame(seed, 0, d)


def _mode_lambda(values: np.ndarray, depths: Sequence[int], sigma: np.ndarray) -> np.ndarray:
    """(d,) mode sharpness from mode values (H, d): |values| as the end-to-end values, r_i their residual."""
    out = np.full(sigma.size, np.nan)
    if np.all(np.isfinite(values)):
        for i in range(sigma.size):
            r = float(values[:, i].sum() - sigma[i])
            out[i] = gd.mode_sharpness(np.abs(values[:, i]), depths, r)
    return out


def _summary(s: Setting, *, final: np.ndarray, residual: np.ndarray, lam: np.ndarray, loss: float) -> dict:
    sig = np.asarray(s.sigma)
    top = float(np.max(lam)) if np.all(np.isfinite(lam)) else math.nan
    return {
        "mode": s.mode,
        "depths": list(s.depths),
        "pathways": len(s.depths),
        "modes": sig.size,
        "sigma_star": list(s.sigma),
        "alphas": list(s.alphas),
        "eta": s.eta,
        "S1": s.s1,
        "eta_S1": s.eta * s.s1,
        "steps": s.steps,
        "tol": s.tol,
        "sharpness": top,
        "lambda_eta_over_2": top * s.eta / 2,
        "mode_sharpness": lam.tolist(),
        "mode_lambda_eta_over_2": (lam * s.eta / 2).tolist(),
        "shares": (final / sig).tolist(),
        "final_sigma": final.tolist(),
        "residual": residual.tolist(),
        "loss": loss,
    }


def run_svs(s: Setting) -> Outcome:
    """The mode recursion (54): ``gd.simulate_svs`` with the setting's depths, sigma_*, eta, alphas, steps, tol."""
    run = gd.simulate_svs(list(s.depths), list(s.sigma), s.eta, list(s.alphas), s.steps, tol=s.tol)
    residual = run.residual[-1]
    out = _summary(
        s, final=run.final_sigma, residual=residual, lam=run.sharpness[-1], loss=0.5 * float(np.sum(residual**2))
    )
    flips = [int(f) if f >= 0 else None for f in run.first_flip]
    out |= {
        "steps_done": run.steps,
        "record_every": run.config["record_every"],
        "converged": run.converged,
        "diverged": run.status == gd.STATUS_DIVERGED,
        "flipped": run.flipped,
        "first_flip": flips,
    }
    return Outcome(out, run.t, run.sigma, run.sharpness)


def run_full(s: Setting, with_trace: bool = False) -> Outcome:
    """GD on full layers: ``gd.simulate_full`` from ``gd.svs_initialisation(alphas, depths, V, V)``, M_* = V diag V^T.

    ``with_trace``: the mode sharpness at every record (for the plot), else only at the end.
    """
    d, H = len(s.sigma), len(s.depths)
    sig = np.asarray(s.sigma)
    V = frame(s.seed, d)
    W0 = gd.svs_initialisation(list(s.alphas), list(s.depths), V, V)
    records = max(1, min(500, FULL_RECORD_FLOATS // (H * d * d)))
    record_every = max(1, -(-s.steps // records))
    run = gd.simulate_full(W0, V @ np.diag(sig) @ V.T, s.eta, s.steps, record_every=record_every)
    K = run.mode_values(V, V)  # (n_rec, H, d)
    diverged = run.status == gd.STATUS_DIVERGED
    # as in the mode recursion, a diverged run has no sharpness (its last record is already far out)
    lam_end = np.full(d, np.nan) if diverged else _mode_lambda(K[-1], s.depths, sig)
    loss = float(run.loss[-1])
    out = _summary(s, final=K[-1], residual=K[-1].sum(axis=0) - sig, lam=lam_end, loss=loss)
    # a flip: a pathway's mode value u_i^T Omega_h v_i <= 0 at a record (the layers' own values v_i^T W_hl v_i
    # are no test: the inner frames of the SVS set are free, and a run that leaves the set rotates them)
    flips: list[int | None] = []
    for i in range(d):
        seen = np.nonzero(np.any(K[:, :, i] <= 0, axis=1))[0]
        flips.append(int(run.t[seen[0]]) if seen.size else None)
    top = out["sharpness"]
    converged = (
        not diverged and math.sqrt(2 * loss) < s.tol and top * s.eta / 2 <= 1 + gd.STABLE_SLACK  # nan compares False
    )
    n_params = sum(s.depths) * d * d
    hess = None
    if not diverged and math.isfinite(loss) and n_params <= HESSIAN_MAX_PARAMS:
        hess = gd.hessian_top(run.W, V @ np.diag(sig) @ V.T)
    gap = np.nan_to_num(run.gap, nan=np.inf)
    out |= {
        "steps_done": run.steps,
        "record_every": record_every,
        "converged": converged,
        "diverged": diverged,
        "flipped": any(f is not None for f in flips),
        "first_flip": flips,
        "frame": "identity" if s.seed is None else "haar",
        "seed": s.seed,
        "balance_gap": float(gap[-1]),
        "max_balance_gap": float(gap.max()),
        "hessian_top": hess,
        "parameters": n_params,
    }
    if with_trace:
        lam = np.array([_mode_lambda(K[k], s.depths, sig) for k in range(K.shape[0])])
    else:
        lam = np.full((K.shape[0], d), np.nan)
    lam[-1] = lam_end
    return Outcome(out, run.t, K, lam)


def run(s: Setting) -> Outcome:
    """The run of a validated setting."""
    return run_svs(s) if s.mode == "svs" else run_full(s, with_trace=s.plot is not None)


# ---------------------------------------------------------------- output


def outcome_word(summary: dict) -> str:
    """converged, diverged or not converged."""
    return "diverged" if summary["diverged"] else "converged" if summary["converged"] else "not converged"


def to_json(summary: dict) -> str:
    """The summary as one JSON document."""
    return support_to_json(summary, indent=1)


def render_text(summary: dict) -> str:
    """A few labelled lines and a table of the modes."""
    s = summary
    H = s["pathways"]
    head = "mode recursion (54)" if s["mode"] == "svs" else "full layers"
    lines = [
        f"{head}: H = {H} pathways of depths {' '.join(map(str, s['depths']))}, d = {s['modes']} modes",
        f"eta          {fmt_g(s['eta'])}  (eta S_1 = {fmt_g(s['eta_S1'])}, S_1 = {fmt_g(s['S1'])})",
        f"alphas       {' '.join(fmt_g(a) for a in s['alphas'])}",
        f"steps        {s['steps_done']} of {s['steps']}"
        + (" (stopped early: converged)" if s["converged"] and s["steps_done"] < s["steps"] else ""),
        f"outcome      {outcome_word(s)} (tol {fmt_g(s['tol'])}); " + ("flipped" if s["flipped"] else "no sign flip"),
        f"sharpness    lambda = {fmt_g(s['sharpness'])}, lambda eta/2 = {fmt_g(s['lambda_eta_over_2'])}",
        f"loss         {fmt_g(s['loss'])}",
    ]
    if s["mode"] == "full":
        lines += [
            f"frame        {'identity' if s['seed'] is None else 'Haar, seed ' + str(s['seed'])}",
            f"balance gap  final {fmt_g(s['balance_gap'])}, max {fmt_g(s['max_balance_gap'])} (at records every "
            f"{s['record_every']} steps)",
            f"Hessian top  {fmt_g(s['hessian_top'])}"
            + (
                "  (central differences of the exact gradient)"
                if s["hessian_top"] is not None
                else f"  (not computed: {s['parameters']} parameters, limit {HESSIAN_MAX_PARAMS}, or diverged)"
            ),
        ]
    cols = ["mode", "sigma_*i", "lambda_i eta/2", "first flip"] + [f"share h={h + 1}" for h in range(H)]
    rows = [
        [
            str(i + 1),
            fmt_g(s["sigma_star"][i]),
            fmt_g(s["mode_lambda_eta_over_2"][i]),
            fmt_g(s["first_flip"][i]),
            *(fmt_g(s["shares"][h][i]) for h in range(H)),
        ]
        for i in range(s["modes"])
    ]
    widths = [max(len(c), *(len(r[j]) for r in rows)) for j, c in enumerate(cols)]
    lines.append("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def plot(outcome: Outcome, s: Setting, path: Path) -> None:
    """sigma_hi (modes up to PLOT_MODES) and lambda_i eta/2 against the step, into ``path``."""
    from numerics.plotting import plt

    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 6))
    styles = ["-", "--", ":", "-."]
    d = min(outcome.sigma.shape[2], PLOT_MODES)
    for i in range(d):
        for h in range(outcome.sigma.shape[1]):
            label = f"mode {i + 1}, path {h + 1}" if outcome.sigma.shape[1] * d <= 12 else None
            top.plot(outcome.t, outcome.sigma[:, h, i], color=f"C{i}", ls=styles[h % 4], lw=1, label=label)
        bottom.plot(outcome.t, outcome.lam[:, i] * s.eta / 2, color=f"C{i}", lw=1, label=f"mode {i + 1}")
    bottom.axhline(1.0, color="gray", ls="--", lw=0.8)
    top.set_ylabel("sigma_hi" if s.mode == "svs" else "u_i^T Omega_h v_i")
    bottom.set_ylabel("lambda_i eta / 2")
    bottom.set_xlabel("step")
    title = f"{s.mode}: depths {' '.join(map(str, s.depths))}, eta S_1 = {s.eta * s.s1:.4g}, "
    title += f"{outcome.summary['steps_done']} steps"
    legends = (top, bottom) if top.get_legend_handles_labels()[0] else (bottom,)  # top: labelled when few curves
    save_plot(fig, path, top, title, legend_axes=legends)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 2 bad input; 130 interrupted; 141 stdout closed early)."""
    return run_simulation(
        PROG, argv, build_parser, setting, run, plot, to_json, render_text, lambda outcome: outcome.summary
    )


__all__ = [
    "Outcome",
    "Setting",
    "UsageError",
    "build_parser",
    "frame",
    "main",
    "outcome_word",
    "plot",
    "render_text",
    "run",
    "run_full",
    "run_svs",
    "setting",
    "single_path_s1",
    "step_bound",
    "step_cost_ns",
    "to_json",
]
