"""Edge-of-stability GD runs of the multi-pathway paper as ensembles, never one trajectory.

At the edge of stability GD's transient is chaotic: a rounding-level change of the start (or of
the BLAS kernel that multiplies the layers) moves the end point. A verdict therefore rests on the
fraction of an ensemble that behaves as claimed, with its interval, and each member's start is
perturbed on purpose at ``perturb`` relative (1e-12 by default, far above the 1e-16 of rounding)
so that the ensemble's spread does not hang on the machine's rounding.

Two ensembles of the rank-p window (Section 6, Eq. (24)): d = 3 modes, H = 2 pathways of depth
L = 5, target singular values (1, 0.9, 0.6), eta S_1 = 2.8 (p = 2 modes above 2/eta), end-to-end
scales (1e-6, 0.9e-6):

- :func:`rank_p_on_manifold`: the mode recursion (54), i.e. GD on the SVS depth-balanced set,
  which the paper's analysis assumes; member k perturbs every initial layer value a_hi by a
  relative Gaussian of size ``perturb`` keyed by (seed, k);
- :func:`rank_p_full`: GD (4) on full 3 x 3 layers in a Haar-random frame V_k (keyed by
  (seed, k)), started on the SVS set in that frame and pushed off it by ``perturb`` relative
  (W_hl -> W_hl + perturb |W_hl|_F / d G, G Gaussian keyed by (seed, k)).

Each member is classified by the mode values u_i^T Omega_h v_i at the end:

- ``diverged``: the run left the finite range (status 2) or did not reach a global minimum
  (loss >= 1e-20 after ``steps`` steps);
- ``top_rebalanced``: every mode i < p is shared (both pathways >= 0.1 sigma_*i) at sharpness
  lambda_i in [0.97, 1 + 1e-6] x 2/eta (the stopping boundary);
- ``tail_single``: every mode i >= p stays single-path (the loser <= 0.01 sigma_*i) with
  lambda_i >= 0.99 S_i (gradient-flow-like);
- ``as_predicted``: converged, top re-balanced and tail single-path (the prediction of (24));
- full matrices also record ``max_gap`` (largest depth-balance gap along the run) and
  ``leave_step`` (first recorded step with gap > 1e-3, -1 if never).

Runnable: ``python -m numerics.multipath.ensembles [--frames N] [--seed S] [--perturb X]
[--format text|json]`` prints both ensembles' fractions with 95% Clopper-Pearson intervals.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .. import stats as nstats
from ..cli_support import Parser, UsageError, check_cost, int_arg, real_arg, run_main
from ..stats import stats  # scipy.stats, imported on first use
from ..validation import integer
from . import gd
from . import sharpness as ns

SEED = 20240611  # the ensembles' seed (chosen once, never tuned)
SIGMA = (1.0, 0.9, 0.6)
DEPTH = 5
ALPHAS = (1e-6, 0.9e-6)
ETA_S1 = 2.8
STEPS = 200_000
PERTURB = 1e-12
LEAVE_GAP = 1e-3  # "left the manifold": a depth-balance gap of 1e-3, nine orders above the perturbation


def _count(n, name: str, low: int = 0) -> int:
    return integer(n, name, low)


def _perturbation(perturb) -> float:
    if isinstance(perturb, bool) or not isinstance(perturb, (int, float)) or not (0 <= perturb <= 1e-3):
        raise ValueError(f"perturb must be a relative size in [0, 1e-3]; got {perturb!r}")
    return float(perturb)


def setting(eta_s1: float = ETA_S1, sigma: npt.ArrayLike = SIGMA, depth: int = DEPTH) -> dict:
    """The rank-p setting: eta, the single-path sharpnesses S_i = L sigma_i^{2-2/L} and p."""
    sig = np.asarray(sigma, dtype=float)
    S = depth * sig ** (2 - 2 / depth)
    eta = eta_s1 / S[0]
    return {"eta": eta, "S": S, "p": int(np.sum(eta * S > 2)), "sigma": sig, "depth": depth}


def haar_frame(seed: int, k: int, d: int = 3) -> np.ndarray:
    """Member k's Haar-random orthogonal frame, keyed by (seed, k): the same on any split of the ensemble."""
    return ns.random_orthogonal(np.random.default_rng([_count(seed, "seed"), _count(k, "k"), 0]), d)


def _noise(seed: int, k: int, shape) -> np.ndarray:
    return np.random.default_rng([seed, k, 1]).standard_normal(shape)


def classify(modes: np.ndarray, loss_end: float, status: int, st: dict) -> dict:
    """The outcome of one run from its end modes (H, d) (see the module docstring)."""
    sig, S, eta, p, L = st["sigma"], st["S"], st["eta"], st["p"], st["depth"]
    diverged = bool(status == 2 or not np.all(np.isfinite(modes)) or not (loss_end < 1e-20))
    top = tail = False
    if not diverged:
        lam = [gd.mode_sharpness(np.abs(modes[:, i]), [L] * modes.shape[0]) for i in range(sig.size)]
        top = all(np.abs(modes[:, i]).min() >= 0.1 * sig[i] and 0.97 <= lam[i] * eta / 2 <= 1 + 1e-6 for i in range(p))
        tail = all(np.abs(modes[:, i]).min() <= 0.01 * sig[i] and lam[i] >= 0.99 * S[i] for i in range(p, sig.size))
    return {
        "diverged": diverged,
        "top_rebalanced": top,
        "tail_single": tail,
        "as_predicted": (not diverged) and top and tail,
    }


def _stack(rows: list[dict]) -> dict:
    return {k: np.array([r[k] for r in rows]) for k in rows[0]} if rows else {}


def rank_p_on_manifold(
    n: int, *, seed: int = SEED, first: int = 0, perturb: float = PERTURB, steps: int = STEPS
) -> dict:
    """Members first..first+n-1 of the mode-recursion ensemble: arrays of the classification."""
    n, first, steps = _count(n, "n", 1), _count(first, "first"), _count(steps, "steps", 1)
    perturb = _perturbation(perturb)
    st = setting()
    L, H, d = st["depth"], len(ALPHAS), st["sigma"].size
    a_base = np.repeat(np.asarray(ALPHAS)[:, None] ** (1 / L), d, axis=1)
    rows = []
    for k in range(first, first + n):
        a0 = a_base * (1 + perturb * _noise(seed, k, (H, d)))
        run = gd.simulate_svs([L] * H, st["sigma"], st["eta"], list(ALPHAS), steps, record_every=steps, a0=a0)
        loss = 0.5 * float(np.sum(run.residual[-1] ** 2))
        rows.append(classify(run.sigma[-1], loss, run.status, st) | {"member": k})
    return _stack(rows)


def rank_p_full(
    n: int,
    *,
    seed: int = SEED,
    first: int = 0,
    perturb: float = PERTURB,
    steps: int = STEPS,
    identity_frame: bool = False,
) -> dict:
    """Members first..first+n-1 of the full-matrix ensemble (Haar frames; ``identity_frame``: V = I)."""
    n, first, steps = _count(n, "n", 1), _count(first, "first"), _count(steps, "steps", 1)
    perturb = _perturbation(perturb)
    st = setting()
    L, H, d = st["depth"], len(ALPHAS), st["sigma"].size
    rows = []
    for k in range(first, first + n):
        V = np.eye(d) if identity_frame else haar_frame(seed, k, d)
        W0 = gd.svs_initialisation(list(ALPHAS), [L] * H, V, V)
        noise = _noise(seed, k, (H, L, d, d))
        W0 = [
            [W + perturb * np.linalg.norm(W) / d * noise[h, l] for l, W in enumerate(path)] for h, path in enumerate(W0)
        ]
        run = gd.simulate_full(W0, V @ np.diag(st["sigma"]) @ V.T, st["eta"], steps)
        modes = run.mode_values(V, V)[-1]
        above = np.nonzero(~(run.gap <= LEAVE_GAP))[0]  # NaN and inf count as left
        rows.append(
            classify(modes, float(run.loss[-1]), run.status, st)
            | {
                "member": k,
                "max_gap": float(np.nan_to_num(run.gap.max(), nan=np.inf)),
                "leave_step": int(run.t[above[0]]) if above.size else -1,
            }
        )
    return _stack(rows)


def fraction(flags: npt.ArrayLike) -> dict:
    """k of n with its 95% Clopper-Pearson interval (exact, scipy)."""
    flags = np.asarray(flags, dtype=bool)
    k, n = int(flags.sum()), int(flags.size)
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return {"k": k, "n": n, "fraction": k / n, "ci": (float(ci.low), float(ci.high))}


def lower_bound_power(n: int, threshold: float, p_alt: float) -> float:
    """Power of the check "95% Clopper-Pearson lower bound of k/n >= threshold" against a true fraction p_alt.

    The check rejects (fails) when the lower bound falls below ``threshold``; its power is
    P(reject) for k ~ Binomial(n, p_alt), summed exactly over k.

    >>> round(lower_bound_power(32, 0.8, 0.75), 4)
    0.9988
    """
    n = _count(n, "n", 1)
    if not (0 < threshold < 1) or not (0 <= p_alt <= 1):
        raise ValueError(f"threshold must lie in (0, 1) and p_alt in [0, 1]; got {threshold!r}, {p_alt!r}")
    passes = [k for k in range(n + 1) if stats.binomtest(k, n).proportion_ci(0.95, method="exact").low >= threshold]
    return float(1.0 - sum(stats.binom.pmf(k, n, p_alt) for k in passes))


def summary(ens: dict) -> dict:
    """Fractions of an ensemble: as predicted, top re-balanced, tail single-path, tail split, diverged."""
    conv = ~ens["diverged"]
    out = {
        "as_predicted": fraction(ens["as_predicted"]),
        "top_rebalanced": fraction(ens["top_rebalanced"]),
        "tail_split": fraction(conv & ~ens["tail_single"]),
        "diverged": fraction(ens["diverged"]),
    }
    if "max_gap" in ens:
        out["left_manifold"] = fraction(ens["leave_step"] >= 0)
    return out


def _fmt(f: dict) -> str:
    return f"{f['k']}/{f['n']} = {f['fraction']:.3f} [{f['ci'][0]:.3f}, {f['ci'][1]:.3f}]"


# --- ensembles of mode-recursion runs (initial scales x seeded pathway asymmetries) ---------------------------
# Shared by verify/multipath/test_window.py and test_simulations.py: the end-state classifier of one run, the
# per-member summary that the ensemble cells of numerics.multipath.experiments return, and the verdict rule.

STATES = ("re-balanced", "converged inside", "thrown back", "sign flip", "not arrived", "diverged", "other")
BOUNDARY = (0.97, 1 + 1e-9)  # 'on the stopping boundary': lambda eta/2 in this range (MP-sim.fig1.eos, its 3%)
COLLAPSED = 1e-3  # 'thrown back': every sigma_h1 below this at the end, after an overshoot (MP-sim.fig10.deep)
MAJORITY = 0.5  # an outcome is established for a setting when its 95% CP lower bound exceeds 1/2
THRESHOLD = 0.8  # a claimed behaviour holds on an ensemble when its 95% CP lower bound is >= 0.8
ALTERNATIVE = 0.75  # ... against the alternative that it fails in a quarter of the starts


def end_state(run: gd.SVSRun, H: int, sigma_star: float = 1.0) -> str:
    """One member's end state (one of :data:`STATES`) from its last record, mode 0, ``H`` pathways.

    ``re-balanced``: converged (every |r| below the run's tol) at the balanced point (every sigma_h within 1% of
    sigma_*/H) or on the stopping boundary (lambda eta/2 in :data:`BOUNDARY`); ``converged inside``: converged
    below it; ``thrown back``: not converged, overshot (r > 0 once) and every sigma_h below :data:`COLLAPSED`
    sigma_*; ``not arrived``: never overshot; ``sign flip``, ``diverged``; ``other`` otherwise.
    """
    s = run.final_sigma[:, 0]
    eta = run.config["eta"] if run.config["eta"] != "schedule" else run.config["eta_first_last"][1]
    ratio = run.final_sharpness * eta / 2
    if run.status == gd.STATUS_DIVERGED:
        return "diverged"
    if run.flipped:
        return "sign flip"
    if run.converged:
        balanced = np.abs(s - sigma_star / H).max() <= 0.01 * sigma_star
        if balanced or BOUNDARY[0] <= ratio <= BOUNDARY[1]:
            return "re-balanced"
        return "converged inside" if ratio < BOUNDARY[0] else "other"
    if run.first_overshoot[0] < 0:
        return "not arrived"
    return "thrown back" if s.max() < COLLAPSED * sigma_star else "other"


def member_summary(run: gd.SVSRun, sigma_star: float = 1.0) -> dict:
    """The features of one run (mode 0) that the ensemble checks read, so that a cell stores no trajectory.

    ``sigma_end`` (H,), ``ratio_end`` (lambda eta/2 at the end, eta the last step), ``lam_r0`` (lambda (13) at the
    end values with r = 0), ``r_end`` (|r| at the end), ``sigma90`` (H,: the values at the first record with
    sum_h sigma_h >= 0.9 sigma_*, NaN if none), ``peak`` (largest recorded sharpness), ``gap_end`` and ``gap_late``
    (max_h sigma_h - min_h sigma_h at the end, and its largest value over the records from t_end/10 on),
    ``first_overshoot``, ``amin`` (largest over h of the smallest a_h after it), ``steps``, ``status``,
    ``converged``, ``flipped``, ``state`` (:func:`end_state`). Recorded quantities are as good as the run's
    record stride: an odd stride samples both phases of a period-two (and every phase of a period-2^k) orbit.
    """
    s = run.sigma[:, :, 0]
    total = s.sum(axis=1)
    k90 = np.flatnonzero(total >= 0.9 * sigma_star)
    eta = run.config["eta"] if run.config["eta"] != "schedule" else run.config["eta_first_last"][1]
    gaps = s.max(axis=1) - s.min(axis=1)
    late = int(np.searchsorted(run.t, run.t[-1] // 10))
    depths = run.config["depths"]
    return {
        "sigma_end": s[-1].copy(),
        "ratio_end": run.final_sharpness * eta / 2,
        "lam_r0": gd.mode_sharpness(np.abs(s[-1]), depths) if np.all(np.isfinite(s[-1])) else np.nan,
        "r_end": float(abs(run.residual[-1, 0])),
        "sigma90": s[k90[0]].copy() if k90.size else np.full(s.shape[1], np.nan),
        "peak": float(np.nanmax(run.sharpness[:, 0])),
        "gap_end": float(gaps[-1]),
        "gap_late": float(np.max(gaps[late:])),
        "first_overshoot": int(run.first_overshoot[0]),
        "amin": float(run.amin_after_overshoot[:, 0].max()),
        "steps": int(run.steps),
        "status": int(run.status),
        "converged": bool(run.converged),
        "flipped": bool(run.flipped),
        "state": end_state(run, s.shape[1], sigma_star),
    }


def stack(rows: list[dict]) -> dict[str, np.ndarray]:
    """Member summaries (:func:`member_summary`, plus any keys added) as arrays, members along axis 0."""
    return _stack(rows)


def established(k: int, n: int) -> bool:
    """The outcome is established: the 95% Clopper-Pearson lower bound of k/n exceeds :data:`MAJORITY`."""
    return nstats.clopper_pearson_interval(k, n)[0] > MAJORITY


def cp_text(k: int, n: int) -> str:
    """``k/n [lo, hi]`` with the 95% Clopper-Pearson interval."""
    lo, hi = nstats.clopper_pearson_interval(k, n)
    return f"{k}/{n} [{lo:.3f}, {hi:.3f}]"


def verdict(flags: npt.ArrayLike, threshold: float = THRESHOLD, p_alt: float = ALTERNATIVE) -> dict:
    """A claimed behaviour on an ensemble: :func:`fraction` of ``flags``, ``holds`` (95% CP lower bound >=
    ``threshold``), ``power`` (:func:`lower_bound_power` against a true fraction ``p_alt``) and ``text``.

    >>> v = verdict([True] * 20)
    >>> v["holds"], round(v["power"], 3), v["text"]
    (True, 0.997, '20/20 [0.832, 1.000]')
    """
    f = fraction(flags)
    return {
        **f,
        "holds": f["ci"][0] >= threshold,
        "power": lower_bound_power(f["n"], threshold, p_alt),
        "threshold": threshold,
        "p_alt": p_alt,
        "text": cp_text(f["k"], f["n"]),
    }


# The command refuses an ensemble estimated to run longer than RUN_LIMIT_S: measured on a shared
# 2-core x86 machine, both ensembles take about 0.32 s a frame (--frames 32: 12.6 s, 128: 43 s,
# with 2.5 s of start-up); the estimate takes 0.5 s a frame plus 3 s.
RUN_LIMIT_S = 900.0


def main(argv: Sequence[str] | None = None) -> int:
    """The command; 0, 2 on bad input (one line naming the option), 141 when stdout is closed early."""

    def body() -> int:
        parser = Parser(prog="python -m numerics.multipath.ensembles", description=__doc__.split("\n\n")[0])
        parser.add_argument("--frames", type=int_arg(1), default=32, help="ensemble size, >= 1 (default 32)")
        parser.add_argument(
            "--seed", type=int_arg(0, 2**64 - 1, hi_text="2^64 - 1"), default=SEED, help="seed in [0, 2^64 - 1]"
        )
        parser.add_argument(
            "--perturb",
            type=real_arg(0, 1e-3),
            default=PERTURB,
            help="relative start perturbation, in [0, 1e-3] (default 1e-12)",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        args = parser.parse_args(argv)
        check_cost(
            f"--frames {args.frames}",
            seconds=3.0 + 0.5 * args.frames,
            limit_s=RUN_LIMIT_S,
            option="--frames",
            hint="ask for fewer frames",
        )
        try:
            manifold = summary(rank_p_on_manifold(args.frames, seed=args.seed, perturb=args.perturb))
            full = summary(rank_p_full(args.frames, seed=args.seed, perturb=args.perturb))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.format == "json":
            print(json.dumps({"on_manifold": manifold, "full_matrices": full}, indent=2))
            return 0
        for name, s in (("mode recursion (on the SVS set)", manifold), ("full matrices, Haar frames", full)):
            print(name)
            for key, f in s.items():
                print(f"  {key:<15} {_fmt(f)}")
        return 0

    return run_main("python -m numerics.multipath.ensembles", body)


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "SEED",
    "STATES",
    "classify",
    "cp_text",
    "end_state",
    "established",
    "member_summary",
    "stack",
    "verdict",
    "fraction",
    "lower_bound_power",
    "haar_frame",
    "rank_p_full",
    "rank_p_on_manifold",
    "setting",
    "summary",
]
