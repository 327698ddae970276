"""The multi-pathway paper's GD experiments: the settings read for the lost ones, the sizes and the runs.

Settings the text gives: L = 20, H = 2, sigma_*1 = 1 (Figures 1, 2); unequal scales alpha_1 >
alpha_2 (Section 5.1); eta < 2/S_1, eta > 2/S_1, eta = 2/lambda_1^min (panel labels); depth
pairs and eta* = 2/lambda^min with a common scale (Section 5.3); eta = 0.99 eta_WCR (Figure 9);
H = 3 and eta = 2/lambda_1^min (Figure 10). Settings lost, and our reading (chosen once): the
initial scales, the number of steps, the eta values inside each regime, the depth of Figures
9-10 and the warm-up schedule (the constants below). GD is deterministic; the only random draws
are the frames and pushes of the rank-p ensembles (:mod:`numerics.multipath.ensembles`).

Each function below is one cell of an experiment of :mod:`numerics.multipath.sweeps`; the checks
in ``verify/multipath/test_simulations.py`` read the joined results (``@uses``). Under
``perturb`` (``pytest verify --perturb``) every start moves by that much relative
(:func:`svs`, :func:`full`). The sizes of an audit profile are :class:`Sizes`
(``--set mp_fig1_steps=...``).

>>> round(S1, 12), round(LMIN, 6)
(20.0, 10.717735)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from numerics.multipath import ensembles as ens
from numerics.multipath import gd
from numerics.multipath import sharpness as ns
from numerics.multipath import wcr as nw
from numerics.perturb import perturb_relative
from numerics.sweep.experiment import profile_sizes, replace_sizes
from numerics.validation import integer, real

L20, H2, SIG = 20, 2, 1.0
S1 = L20 * SIG ** (2 - 2 / L20)  # single-path sharpness (13) at sigma_* = 1: S_1 = L
LMIN = float(ns.lambda_min(H2, L20, SIG, 30))  # Eq. (15): 20 * 2^(-0.9)
ETA_BAL = 2 / LMIN
ASYM = 0.9  # alpha_2 = 0.9 alpha_1: "a slightly different scale" (Section 5.1), a 10% asymmetry
GAMMA_SMALL = (1.0, 1.8)  # eta S_1 below the classical bound 2
GAMMA_EOS = (2.2, 2.5, 2.8, 3.2, 3.5)  # inside (2, 2 H^{1-2/L}) = (2, 3.732)
FIG1_SCALES = (1e-4, 1e-6, 1e-8)  # alpha_1 of Figures 1-2; a profile takes the first mp_fig1_scales
TOL_R = 1e-12  # "converged": every mode residual below 1e-12 (10^4 ulps of sigma_* = 1)
COARSE = (1e-3, 1.8, 3_000_000)  # the sensitivity run of Figure 1: (alpha_1, eta S_1, steps)
THREE_PATHWAY_DEPTHS = (3, 5, 10, 20)  # Figure 10 (H = 3) at these depths
THREE_PATHWAY_GRID = tuple(np.logspace(-2, -8, 7))  # alpha_0, one per decade
THREE_PATHWAY_STEPS = 2_000_000
THREE_PATHWAY_PANELS = (1.0, 2.5)  # Figure 10's other panels, eta S_1 < 2 and 2 < eta S_1 < 2 H^{1-2/L} (L = 3, 5)
THREE_PATHWAY_PANEL_DEPTHS = (3, 5)
HETERO_DEPTHS = tuple(range(3, 8))  # Section 5.3: every pair (L1, L2) of these
HETERO_SCALES = (1e-3, 1e-6)
SCALE_GRID = tuple(np.logspace(-2, -8, 13))  # two initial scales per decade, fixed once (Figures 6, 9; warm-up)
WCR_DEPTH, WCR_FACTORS, WCR_STEPS = 5, (0.9, 0.97, 0.99, 1.03), 300_000  # Figure 9: eta / eta_WCR
CHAIN_GAMMAS, CHAIN_DEPTHS, CHAIN_STEPS = (3.5, 4.5, 5.5), (3, 5, 10, 20, 50), 3000  # Figure 6
CHAIN_STARTS = tuple(np.linspace(0.02, 0.98, 40))  # per-layer starts u_0 of the chain
WARMUP_H, WARMUP_L = 4, 5  # Section 6's warm-up: L odd (a flip makes sigma_h1 < 0), 2 H^{1-2/L} > gamma_WCR(5)
WARMUP_AFTER = 2_000_000  # steps after the warm-up
WARMUP_SHORT = 10_000  # the too-short warm-up


# --- sizes of an audit profile --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """Sizes of one audit profile (see :data:`PROFILES`); ``--set NAME=VALUE`` changes them."""

    mp_fig1_steps: int  # step budget of the Figure 1-2 runs (they stop at |r| < 1e-12; eta = 2/lambda_min runs all)
    mp_fig1_scales: int  # how many of FIG1_SCALES (1e-4, 1e-6, 1e-8) the Figure 1-2 runs start from
    mp_hetero_steps: int  # steps of the Section 5.3 heterogeneous-depth runs
    mp_warmup_ramp: int  # length of the warm-up ramp (Section 6)
    mp_ensemble: int  # starts per rank-p ensemble (Eq. (24))
    mp_bound_examples: int  # Hypothesis examples of the converged-sharpness bound (MP-sim.bound)
    mp_manifold_examples: int  # Hypothesis examples of full GD staying on the SVS set (MP-sim.manifold)
    perturb: float = 0.0  # every start moved by this much relative (robustness reruns; ``pytest verify --perturb``)
    mp_window_steps: int = 500_000  # step budget of the fixed-fraction window runs (H = 4; they stop at |r| < 1e-12)
    mp_window_draws: int = 8  # random pathway asymmetries per initial scale of the window runs
    mp_super_draws: int = 4  # random asymmetries per initial scale of the eta > 2/lambda_min runs (H = 2)
    mp_fig1_draws: int = 9  # random asymmetries per initial scale of the Figure 1-2 ensembles (members: scales x draws)
    mp_hetero_draws: int = 3  # random asymmetries per initial scale of the Section 5.3 ensembles
    mp_hetero_ens_steps: int = 400_000  # steps of a Section 5.3 ensemble member (each is within 0.01 by ~2e5)
    mp_three_draws: int = 3  # random asymmetries per initial scale of the Figure 10 ensembles (H = 3)
    mp_warmup_draws: int = 6  # random asymmetries per initial scale of the warm-up ensembles (H = 4)


PROFILES = {
    # quick: alpha_1 = 1e-8 needs ~1e7 steps to reach the transient and, at eta S_1 = 2.2, ~3e7 more to re-balance,
    # so the quick profile starts from 1e-4 and 1e-6 only
    "quick": Sizes(mp_fig1_steps=3_000_000, mp_fig1_scales=2, mp_hetero_steps=1_000_000, mp_warmup_ramp=100_000,
                   mp_ensemble=32, mp_bound_examples=40, mp_manifold_examples=25),
    "full": Sizes(mp_fig1_steps=100_000_000, mp_fig1_scales=3, mp_hetero_steps=10_000_000, mp_warmup_ramp=1_000_000,
                  mp_ensemble=256, mp_bound_examples=300, mp_manifold_examples=200,
                  mp_window_steps=2_000_000, mp_window_draws=32, mp_super_draws=16, mp_fig1_draws=24,
                  mp_hetero_draws=8, mp_hetero_ens_steps=4_000_000, mp_three_draws=12, mp_warmup_draws=16),
}  # fmt: skip


def sizes(profile: str) -> Sizes:
    """The :class:`Sizes` of ``profile`` ('quick' or 'full').

    >>> sizes("quick").mp_ensemble
    32
    """
    return profile_sizes(PROFILES, profile)


def sizes_with(profile: str, overrides: dict | None = None) -> Sizes:
    """The sizes of ``profile`` with fields replaced by ``overrides`` (values as numbers or as text).

    >>> sizes_with("quick", {"mp_fig1_scales": "4"})
    Traceback (most recent call last):
    ...
    ValueError: size mp_fig1_scales must be an integer from 1 to 3; got '4'
    """
    z = replace_sizes(sizes(profile), overrides, minimum={"mp_ensemble": 10})
    if not 1 <= z.mp_fig1_scales <= len(FIG1_SCALES):
        raw = (overrides or {}).get("mp_fig1_scales", z.mp_fig1_scales)
        raise ValueError(f"size mp_fig1_scales must be an integer from 1 to {len(FIG1_SCALES)}; got {raw!r}")
    return z


# --- perturbed GD runs ----------------------------------------------------------------------------------


def svs(depths, sigma_star, eta, alphas, n_steps, perturb: float = 0.0, **kw) -> gd.SVSRun:
    """:func:`numerics.multipath.gd.simulate_svs` from a start moved by ``perturb`` relative (0: unchanged).

    The perturbation multiplies the initial scales (or the initial layers ``a0``) by 1 + perturb g,
    g standard normal keyed by (depths, sigma_star, n_steps).
    """
    key = repr((depths, sigma_star, n_steps))
    if kw.get("a0") is not None:
        kw["a0"] = perturb_relative(np.asarray(kw["a0"], dtype=float), perturb, "svs-a0", key)
    elif alphas is not None:
        alphas = perturb_relative(np.asarray(alphas, dtype=float), perturb, "svs", key)
    return gd.simulate_svs(depths, sigma_star, eta, alphas, n_steps, **kw)


def full(Ws, M_star, eta, n_steps, perturb: float = 0.0, **kw) -> gd.FullRun:
    """:func:`numerics.multipath.gd.simulate_full` from layers moved by ``perturb`` relative (keyed by h, l, steps)."""
    Ws = [[perturb_relative(W, perturb, "full", h, l, n_steps) for l, W in enumerate(p)] for h, p in enumerate(Ws)]
    return gd.simulate_full(Ws, M_star, eta, n_steps, **kw)


# --- the cells ------------------------------------------------------------------------------------------


def fig1_run(scale: float, gamma: float | str, steps: int, perturb: float = 0.0) -> gd.SVSRun:
    """Figures 1-2: L = 20, H = 2, alpha = (scale, 0.9 scale), eta S_1 = ``gamma`` ('bal': eta = 2/lambda_1^min).

    Runs with a numeric gamma stop at |r| < 1e-12 and record every max(21, steps / 3e5) steps, made odd (21
    resolves the transient; an odd stride samples both phases of a period-two orbit, so recorded peaks are
    not one phase's); the balanced run uses its whole budget, recorded every steps / 2e5.
    ``gamma = 'coarse'`` is the sensitivity run :data:`COARSE` (``scale`` and ``steps`` ignored).
    """
    alphas = lambda a: [a, ASYM * a]  # noqa: E731
    if gamma == "coarse":
        a, g, n = COARSE
        return svs([L20, L20], [SIG], g / S1, alphas(a), n, perturb, record_every=10**6, tol=TOL_R)
    if gamma == "bal":
        return svs([L20, L20], [SIG], ETA_BAL, alphas(scale), steps, perturb, record_every=max(1, steps // 200_000))
    return svs(
        [L20, L20], [SIG], float(gamma) / S1, alphas(scale), steps, perturb, record_every=_odd_stride(steps), tol=TOL_R
    )


def three_pathway_runs(L: int, gamma: float | str = "bal", perturb: float = 0.0) -> list[gd.SVSRun]:
    """Figure 10: H = 3 at eta = 2/lambda_1^min(H = 3, L) (``gamma = 'bal'``) or at eta S_1 = ``gamma``,
    alpha_h = alpha_0 0.9^h for each alpha_0 of the grid."""
    eta = 2 / float(ns.lambda_min(3, L, SIG, 30)) if gamma == "bal" else float(gamma) / (L * SIG ** (2 - 2 / L))
    n = THREE_PATHWAY_STEPS
    grid = THREE_PATHWAY_GRID
    return [svs([L] * 3, [SIG], eta, a0 * ASYM ** np.arange(3), n, perturb, record_every=n) for a0 in grid]


def hetero_pair(L1: int, L2: int, steps: int, perturb: float = 0.0) -> dict[str, Any]:
    """Section 5.3: the optimal allocation of depths (L1, L2) (mpmath, 30 digits) and GD at its eta* from each scale.

    ``opt`` = (sigma_1, sigma_2, lambda, eta*) of the allocation; ``runs`` in :data:`HETERO_SCALES` order.
    """
    al = ns.optimal_allocation([L1, L2], SIG, 30)
    eta = float(al.eta_star)
    every = max(1, steps // 20000)
    runs = [svs([L1, L2], [SIG], eta, [sc, sc], steps, perturb, record_every=every) for sc in HETERO_SCALES]
    return {"opt": (float(al.sigmas[0]), float(al.sigmas[1]), float(al.lam), eta), "runs": runs}


def wcr_runs(factor: float, perturb: float = 0.0) -> list[gd.SVSRun]:
    """Figure 9: L = 5, H = 2, eta = factor x eta_WCR, alpha = (a, 0.9 a) for each a of :data:`SCALE_GRID`."""
    L, n = WCR_DEPTH, WCR_STEPS
    eta = factor * float(nw.eta_wcr(L, SIG, 20))
    return [svs([L, L], [SIG], eta, [a, ASYM * a], n, perturb, record_every=n) for a in SCALE_GRID]


def chain_flips(L: int, perturb: float = 0.0) -> list[int]:
    """Figure 6: for each eta/eta_1 of :data:`CHAIN_GAMMAS`, how many chain starts (H = 1, depth L) flip sign."""
    n = CHAIN_STEPS
    return [
        sum(svs([L], [SIG], g / L, None, n, perturb, record_every=n, a0=[[u]]).flipped for u in CHAIN_STARTS)
        for g in CHAIN_GAMMAS
    ]


def warmup_eta() -> float:
    """The warm-up's final step: eta S_1 midway between gamma_WCR(5) and 2 H^{1-2/L} (H = 4)."""
    gw, gb = float(nw.gamma_wcr(WARMUP_L, 15)), 2 * WARMUP_H ** (1 - 2 / WARMUP_L)
    return 0.5 * (gw + gb) / WARMUP_L


def warmup_runs(scale: float, ramp: int, perturb: float = 0.0) -> dict[str, gd.SVSRun]:
    """Section 6's warm-up from alpha_h = scale 0.9^h (H = 4, L = 5), ``ramp + 2e6`` steps, stopped at |r| < 1e-12.

    ``const``: constant eta; ``warm``: eta rising linearly from 0.5/S_1 over ``ramp`` steps;
    ``plain``: the same warm-up in plain float64; ``short``: a warm-up over 1e4 steps only.
    """
    H, L, eta = WARMUP_H, WARMUP_L, warmup_eta()
    n = ramp + WARMUP_AFTER
    al = scale * ASYM ** np.arange(H)
    sched = gd.warmup_schedule(eta, n, 0, ramp, 0.5 / L)
    short = gd.warmup_schedule(eta, n, 0, WARMUP_SHORT, 0.5 / L)
    run = lambda e, **kw: svs([L] * H, [SIG], e, al, n, perturb, record_every=n, tol=TOL_R, **kw)  # noqa: E731
    return {"const": run(eta), "warm": run(sched), "plain": run(sched, compensated=False), "short": run(short)}


def rank_p(kind: str, first: int, count: int, perturb: float = 0.0) -> dict[str, np.ndarray]:
    """Members ``first .. first + count - 1`` of a rank-p ensemble (``kind`` 'manifold' or 'full'), Eq. (24).

    Under ``perturb`` (a robustness rerun) the ensembles are drawn under seed ``ens.SEED + 1``:
    another ensemble of perturbed starts (each member is already pushed by 1e-12 relative).
    """
    seed = ens.SEED + (1 if perturb else 0)
    if kind == "manifold":
        return ens.rank_p_on_manifold(count, seed=seed, first=first)
    if kind == "full":
        return ens.rank_p_full(count, seed=seed, first=first)
    raise ValueError(f"kind must be 'manifold' or 'full'; got {kind!r}")


def rank_p_identity(perturb: float = 0.0) -> gd.FullRun:
    """The rank-p setting in full matrices in the identity frame, from the exact SVS start (no push)."""
    eye = gd.svs_initialisation(list(ens.ALPHAS), [ens.DEPTH] * 2, np.eye(3), np.eye(3))
    return full(eye, np.diag(ens.SIGMA), ens.setting()["eta"], ens.STEPS, perturb)


# --- the re-balancing window across depth (Section 6) and beyond 2/lambda_min (Appendix E.6) ---------------
WINDOW_H = 4  # H = 4: 2 H^{1-2/L} > gamma_WCR(L) at L = 5, 10, 20, so eta_WCR is the binding ceiling of (24)
WINDOW_DEPTHS = (5, 10, 20)
WINDOW_FRACTIONS = (0.6, 0.75, 0.9)  # eta S_1 = f gamma_WCR(L); each inside (2, 2 H^{1-2/L}) at every depth
WINDOW_GRID = (1e-3, 1e-4, 1e-5, 1e-6)  # alpha_0: every member reaches sigma_* within 1.2e5 steps at these depths
WINDOW_SEED = 20240612  # the asymmetry draws (chosen once): u_1 = 1, u_h ~ U(0.5, 1) for h >= 2
SUPER_H, SUPER_DEPTHS, SUPER_EXCESSES = 2, (3, 5, 10), (0.01, 0.03, 0.1, 0.3)  # eta = 2(1 + excess)/lambda_min
SUPER_GRID = (1e-3, 1e-5)
SUPER_STEPS = 200_000  # the slowest member settles on its cycle (|G| < 1e-12) within ~3e4 steps
SUPER_TAIL = 64  # steps recorded one by one after the run, to read the cycle's period


def asymmetries(draws: int, H: int) -> np.ndarray:
    """(draws, H) pathway factors u_h: u_1 = 1, u_h ~ U(0.5, 1) for h >= 2, draw k keyed by (WINDOW_SEED, k).

    >>> asymmetries(2, 3)[:, 0].tolist()
    [1.0, 1.0]
    """
    draws, H = integer(draws, "draws", 1), integer(H, "H", 1)
    out = np.ones((draws, H))
    for k in range(draws):
        out[k, 1:] = np.random.default_rng([WINDOW_SEED, k]).uniform(0.5, 1.0, H - 1)
    return out


def window_runs(L: int, fraction: float, steps: int, draws: int, perturb: float = 0.0) -> list[gd.SVSRun]:
    """H = 4 pathways of depth L at eta S_1 = ``fraction`` gamma_WCR(L), alpha_h = alpha_0 u_h, stopped at |r| < 1e-12.

    Members: every alpha_0 of :data:`WINDOW_GRID` (outer) x the first ``draws`` asymmetries (inner).
    """
    L = integer(L, "L", 3)
    f = real(fraction, "fraction", 0.0, 1.0, lo_open=True, hi_open=True)
    eta = f * float(nw.gamma_wcr(L, 15)) / (L * SIG ** (2 - 2 / L))
    U = asymmetries(draws, WINDOW_H)
    return [
        svs([L] * WINDOW_H, [SIG], eta, a0 * u, steps, perturb, record_every=steps, tol=TOL_R)
        for a0 in WINDOW_GRID
        for u in U
    ]


def super_runs(L: int, excess: float, draws: int, perturb: float = 0.0) -> dict[str, np.ndarray]:
    """H = 2, depth L, eta = 2(1 + ``excess``)/lambda_min: where each member ends, and the cycle it ends on.

    Members: :data:`SUPER_GRID` (outer) x the first ``draws`` asymmetries (inner), alpha_h = alpha_0 u_h,
    :data:`SUPER_STEPS` steps, then :data:`SUPER_TAIL` steps recorded one by one. Arrays per member:
    ``sigma`` (H,) at the end, ``gap`` max_h sigma_h - min_h sigma_h over the tail, ``dev`` max |sigma_h -
    sigma_*/H| over the tail, ``period`` the least p in 1, 2, 4, 8, 16, 32 with r(t + p) = r(t) over the tail
    to 1e-9 relative (0: none), ``rms`` the tail's root-mean-square residual, ``status``, ``flipped``.
    """
    L = integer(L, "L", 3)
    e = real(excess, "excess", 0.0, 1.0, lo_open=True, hi_open=True)
    eta = 2 * (1 + e) / float(ns.lambda_min(SUPER_H, L, SIG, 30))
    rows: dict[str, list] = {k: [] for k in ("sigma", "gap", "dev", "period", "rms", "status", "flipped")}
    for a0 in SUPER_GRID:
        for u in asymmetries(draws, SUPER_H):
            run = svs([L] * SUPER_H, [SIG], eta, a0 * u, SUPER_STEPS, perturb, record_every=SUPER_STEPS)
            tail = svs([L] * SUPER_H, [SIG], eta, None, SUPER_TAIL, 0.0, record_every=1, a0=run.a_final)
            r, s = tail.residual[:, 0], tail.sigma[:, :, 0]
            scale = float(np.abs(r).max()) if np.all(np.isfinite(r)) else np.inf
            period = next((p for p in (1, 2, 4, 8, 16, 32) if np.all(np.abs(r[p:] - r[:-p]) <= 1e-9 * scale)), 0)
            rows["sigma"].append(run.final_sigma[:, 0])
            rows["gap"].append(float(np.max(s.max(axis=1) - s.min(axis=1))))
            rows["dev"].append(float(np.max(np.abs(s - SIG / SUPER_H))))
            rows["period"].append(period if np.isfinite(scale) else 0)
            rows["rms"].append(float(np.sqrt(np.mean(r**2))))
            rows["status"].append(max(run.status, tail.status))
            rows["flipped"].append(bool(run.flipped or tail.flipped))
    return {k: np.array(v) for k, v in rows.items()}


PEAK_FRACTION, PEAK_STRIDE = 0.75, 7  # the peak runs: eta S_1 = 0.75 gamma_WCR(L); an odd stride samples both phases


def peak_runs(L: int, steps: int, draws: int, perturb: float = 0.0) -> dict[str, np.ndarray]:
    """The window members at eta S_1 = 0.75 gamma_WCR(L), recorded every 7 steps: when the sharpness peaks.

    Arrays per member: ``peak`` (largest recorded top Hessian eigenvalue), ``r_peak`` (residual there),
    ``t_peak``, ``t_arrive`` (first step with r > 0), ``t_minor`` (first record at which the second-largest
    sigma_h1 reaches half its final value, -1: never), ``max_rising`` (largest recorded sharpness with r <= 0),
    ``converged``; ``S1`` the single-path sharpness L sigma_*^{2-2/L}.
    """
    L = integer(L, "L", 3)
    eta = PEAK_FRACTION * float(nw.gamma_wcr(L, 15)) / (L * SIG ** (2 - 2 / L))
    rows: dict[str, list] = {k: [] for k in ("peak", "r_peak", "t_peak", "t_arrive", "t_minor", "max_rising")}
    rows["converged"] = []
    for a0 in WINDOW_GRID:
        for u in asymmetries(draws, WINDOW_H):
            run = svs([L] * WINDOW_H, [SIG], eta, a0 * u, steps, perturb, record_every=PEAK_STRIDE, tol=TOL_R)
            lam, r = run.sharpness[:, 0], run.residual[:, 0]
            second = np.sort(run.sigma[:, :, 0], axis=1)[:, -2]
            k = int(np.nanargmax(lam))
            minor = np.flatnonzero(second >= 0.5 * second[-1])
            rows["peak"].append(float(lam[k]))
            rows["r_peak"].append(float(r[k]))
            rows["t_peak"].append(int(run.t[k]))
            rows["t_arrive"].append(int(run.first_overshoot[0]))
            rows["t_minor"].append(int(run.t[minor[0]]) if minor.size else -1)
            rows["max_rising"].append(float(np.max(lam[r <= 0], initial=0.0)))
            rows["converged"].append(bool(run.converged))
    return {**{k: np.array(v) for k, v in rows.items()}, "S1": L * SIG ** (2 - 2 / L)}


# --- the simulation claims of Sections 5-6 and Figures 1-2, 4, 8, 10 as ensembles -------------------------------
# Members: initial scales (outer) x the first ``draws`` seeded asymmetries of :func:`asymmetries` (inner),
# alpha_h = alpha_0 u_h (u_1 = 1, u_h ~ U(0.5, 1)), as the window runs. Each cell returns the members' summaries
# (:func:`numerics.multipath.ensembles.member_summary`), not their trajectories.
PHASE_STRIDE = 21  # the Figure 1-2 members record every 21 steps: odd, so both phases of a two-cycle are sampled
WARMUP_ENS_GRID = (1e-4, 1e-6, 1e-8)  # alpha_0 of the warm-up ensembles: constant-step flips set in below ~3e-5


def _odd_stride(steps: int) -> int:
    """The Figure 1-2 record stride: max(PHASE_STRIDE, steps / 3e5), made odd."""
    return max(PHASE_STRIDE, steps // 300_000) | 1


def _member(run: gd.SVSRun, a0: float, u: np.ndarray) -> dict:
    return ens.member_summary(run, SIG) | {"alpha0": float(a0), "u": u.copy()}


def fig1_members(gamma: float | str, steps: int, scales: int, draws: int, perturb: float = 0.0) -> dict:
    """Figures 1-2 as an ensemble: L = 20, H = 2 at eta S_1 = ``gamma`` ('bal': eta = 2/lambda_1^min).

    Members: the first ``scales`` of :data:`FIG1_SCALES` x ``draws`` asymmetries, alpha = (alpha_0, alpha_0 u_2).
    A numeric gamma stops at |r| < 1e-12 and records every :func:`_odd_stride` steps; 'bal' runs all ``steps``,
    recorded every steps/2000 (odd).
    """
    scales = integer(scales, "scales", 1)
    if scales > len(FIG1_SCALES):
        raise ValueError(f"scales must be an integer from 1 to {len(FIG1_SCALES)}; got {scales!r}")
    rows = []
    for a0 in FIG1_SCALES[:scales]:
        for u in asymmetries(draws, H2):
            if gamma == "bal":
                run = svs([L20, L20], [SIG], ETA_BAL, a0 * u, steps, perturb, record_every=max(1, steps // 2000) | 1)
            else:
                eta = float(gamma) / S1
                run = svs([L20, L20], [SIG], eta, a0 * u, steps, perturb, record_every=_odd_stride(steps), tol=TOL_R)
            rows.append(_member(run, a0, u))
    return ens.stack(rows)


def hetero_members(L1: int, L2: int, steps: int, draws: int, perturb: float = 0.0) -> dict:
    """Section 5.3 as an ensemble: depths (L1, L2) at eta* of the optimal allocation (18), ``steps`` steps.

    Members: :data:`HETERO_SCALES` x ``draws`` asymmetries, alpha = (alpha_0, alpha_0 u_2): pathway 1 (depth L1)
    starts larger, so over the ordered pairs (L1, L2) and (L2, L1) either the shallow or the deep pathway is
    favoured. Records every steps/20000 (odd). ``opt`` = (sigma_1, sigma_2, lambda, eta*) as in :func:`hetero_pair`.
    """
    al = ns.optimal_allocation([L1, L2], SIG, 30)
    eta = float(al.eta_star)
    every = max(1, steps // 20000) | 1
    rows = [
        _member(svs([L1, L2], [SIG], eta, a0 * u, steps, perturb, record_every=every), a0, u)
        for a0 in HETERO_SCALES
        for u in asymmetries(draws, 2)
    ]
    return {**ens.stack(rows), "opt": (float(al.sigmas[0]), float(al.sigmas[1]), float(al.lam), eta)}


def three_pathway_members(L: int, gamma: float | str, draws: int, perturb: float = 0.0) -> dict:
    """Figure 10 as an ensemble: H = 3, depth L, eta = 2/lambda_1^min ('bal', all 2e6 steps) or eta S_1 = ``gamma``
    (stopped at |r| < 1e-12). Members: :data:`THREE_PATHWAY_GRID` x ``draws`` asymmetries (u_1 = 1); ``eta``."""
    L = integer(L, "L", 3)
    eta = 2 / float(ns.lambda_min(3, L, SIG, 30)) if gamma == "bal" else float(gamma) / (L * SIG ** (2 - 2 / L))
    n, tol = THREE_PATHWAY_STEPS, (0.0 if gamma == "bal" else TOL_R)
    rows = [
        _member(svs([L] * 3, [SIG], eta, a0 * u, n, perturb, record_every=n, tol=tol), a0, u)
        for a0 in THREE_PATHWAY_GRID
        for u in asymmetries(draws, 3)
    ]
    return {**ens.stack(rows), "eta": eta}


def warmup_members(scale: float, ramp: int, draws: int, perturb: float = 0.0) -> dict[str, dict]:
    """Section 6's warm-up as an ensemble at alpha_0 = ``scale``: H = 4, L = 5, alpha_h = scale u_h, ``draws``
    asymmetries; schedules ``const``, ``warm`` and ``short`` of :func:`warmup_runs` (compensated arithmetic)."""
    H, L, eta = WARMUP_H, WARMUP_L, warmup_eta()
    n = ramp + WARMUP_AFTER
    sched = {
        "const": eta,
        "warm": gd.warmup_schedule(eta, n, 0, ramp, 0.5 / L),
        "short": gd.warmup_schedule(eta, n, 0, WARMUP_SHORT, 0.5 / L),
    }
    out: dict[str, list] = {k: [] for k in sched}
    for u in asymmetries(draws, H):
        for k, e in sched.items():
            run = svs([L] * H, [SIG], e, scale * u, n, perturb, record_every=n, tol=TOL_R)
            out[k].append(_member(run, scale, u))
    return {k: ens.stack(v) for k, v in out.items()}
