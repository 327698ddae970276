"""Figures of the multi-pathway GD simulations (Figures 1, 2, 4, 6 of arXiv 2606.05219) from run data.

Each function takes the plain results of :mod:`numerics.multipath.gd` and returns a matplotlib
``Figure`` (nothing is shown or saved here). The paper's values are overlaid where the text gives
them: the thresholds S_1, 2/eta and lambda_1^min, the zero-loss line sigma_11 + sigma_21 = sigma_*1,
the balanced point, the optimal heterogeneous allocation of Eq. (18) and gamma_WCR(L) (black).

>>> import matplotlib
>>> from numerics.multipath import gd
>>> run = gd.simulate_svs([3, 3], [1.0], 0.2, [1e-2, 0.9e-2], 2000, record_every=10)
>>> fig = figure2({"eta = 0.2": run}, sigma=1.0)
>>> type(fig).__name__
'Figure'
>>> matplotlib.pyplot.close(fig)
"""

from __future__ import annotations

import numpy as np

from numerics.plotting import PAPER, plt

BLUE, LIGHT, GREY, PURPLE = "#1f4e9c", "#7fb3e6", "0.45", "#8e44ad"


def figure1(runs: dict, S1: float, lam_min: float) -> plt.Figure:
    """Figure 1: sigma_11 (blue), sigma_21 (light blue), sigma_1 (grey) and the sharpness (purple dots)
    against the step for each run; ``runs`` maps a panel title to (eta, SVSRun)."""
    n = len(runs)
    fig, ax = plt.subplots(2, n, figsize=(4.2 * n, 6.0), sharex="col", squeeze=False)
    for k, (title, (eta, run)) in enumerate(runs.items()):
        s = run.sigma[:, :, 0]
        t = run.t + 1  # log axis: step t is drawn at t + 1
        ax[0, k].plot(t, s[:, 0], color=BLUE, label="sigma_11 (h = 1)")
        ax[0, k].plot(t, s[:, 1], color=LIGHT, label="sigma_21 (h = 2)")
        ax[0, k].plot(t, s.sum(axis=1), color=GREY, lw=1, label="sigma_1")
        ax[0, k].set(title=title, ylabel="singular value", ylim=(-0.05, 1.6))
        ax[1, k].plot(t, run.sharpness[:, 0], ".", ms=2, color=PURPLE, label="lambda_max (ours)")
        ax[1, k].axhline(S1, color=PAPER, ls="--", lw=0.8, label="S_1")
        ax[1, k].axhline(2 / eta, color=PAPER, ls=":", lw=1.0, label="2/eta")
        ax[1, k].axhline(lam_min, color=PAPER, ls="-.", lw=0.8, label="lambda_1^min")
        ax[1, k].set(xlabel="step + 1", ylabel="sharpness", ylim=(0, 2.5 * S1))
        ax[1, k].set_xscale("log")
    ax[0, 0].legend(fontsize=7)
    ax[1, 0].legend(fontsize=7)
    fig.suptitle("Figure 1 (L = 20, H = 2, sigma_*1 = 1): black lines are the paper's thresholds")
    fig.tight_layout()
    return fig


def figure2(runs: dict, sigma: float = 1.0, halts: dict | None = None) -> plt.Figure:
    """Figure 2: (sigma_11, sigma_21) trajectories, the zero-loss line, the balanced point and (in
    ``halts``, same keys) the predicted stopping points where lambda = 2/eta; ``runs`` maps a panel
    title to an SVSRun."""
    n = len(runs)
    fig, ax = plt.subplots(1, n, figsize=(4.0 * n, 4.0), squeeze=False)
    for k, (title, run) in enumerate(runs.items()):
        a = ax[0, k]
        s = run.sigma[:, :, 0]
        a.plot(s[:, 0], s[:, 1], "-", color=BLUE, lw=0.6)
        a.plot(s[-1, 0], s[-1, 1], "o", color=BLUE, ms=5, label="end of our run")
        xs = np.linspace(0, sigma, 50)
        a.plot(xs, sigma - xs, color=PAPER, lw=0.8, label="sigma_11 + sigma_21 = sigma_*1")
        a.plot(sigma / 2, sigma / 2, "x", color=PAPER, ms=8, label="balanced minimum")
        if halts and title in halts:
            s1 = halts[title]
            a.plot(s1, sigma - s1, "+", color="C3", ms=12, mew=2, label="lambda = 2/eta (predicted)")
        a.set(title=title, xlabel="sigma_11", ylabel="sigma_21", xlim=(-0.05, 1.6 * sigma), ylim=(-0.05, 1.05 * sigma))
    ax[0, 0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure4(runs: dict, optimum: dict, sigma: float = 1.0) -> plt.Figure:
    """Figure 4/8: (sigma_11, sigma_21) for each depth pair (L1, L2) at eta* = 2/lambda^min, with the
    optimal allocation of Eq. (18) (black cross); ``runs`` and ``optimum`` are keyed by (L1, L2)."""
    pairs = sorted(runs)
    L1s = sorted({p[0] for p in pairs})
    L2s = sorted({p[1] for p in pairs})
    fig, ax = plt.subplots(len(L1s), len(L2s), figsize=(2.8 * len(L2s), 2.8 * len(L1s)), squeeze=False)
    for L1, L2 in pairs:
        a = ax[L1s.index(L1), L2s.index(L2)]
        run = runs[(L1, L2)]
        s = run.sigma[:, :, 0]
        a.plot(s[:, 0], s[:, 1], "-", color=BLUE, lw=0.5)
        a.plot(s[-1, 0], s[-1, 1], "o", color=BLUE, ms=4)
        xs = np.linspace(0, sigma, 20)
        a.plot(xs, sigma - xs, color=GREY, lw=0.6)
        o = optimum[(L1, L2)]
        a.plot(o[0], o[1], "x", color=PAPER, ms=8, mew=1.5)
        a.set_title(f"(L1, L2) = ({L1}, {L2})", fontsize=8)
        a.set(xlim=(-0.05, 1.5 * sigma), ylim=(-0.05, 1.05 * sigma))
        a.tick_params(labelsize=6)
    fig.suptitle("Heterogeneous depths at eta* = 2/lambda^min: our runs (blue), optimum of (18) (black x)", fontsize=9)
    fig.supxlabel("sigma_11 (pathway of depth L1)", fontsize=8)
    fig.supylabel("sigma_21 (pathway of depth L2)", fontsize=8)
    fig.tight_layout()
    return fig


def figure6(orbits: dict, gamma_wcr: dict) -> plt.Figure:
    """Figure 6: the normalised chain map for each (L, gamma = eta/eta_1), with the worst overshoot
    (c, g(c)) and the return (g(c), g(g(c))); panel titles give gamma_WCR(L) (black)."""
    Ls = sorted({k[0] for k in orbits})
    gs = sorted({k[1] for k in orbits})
    fig, ax = plt.subplots(len(Ls), len(gs), figsize=(2.8 * len(gs), 2.6 * len(Ls)), squeeze=False)
    for (L, g), o in orbits.items():
        a = ax[Ls.index(L), gs.index(g)]
        a.plot(o["u"], o["g"], color=BLUE, lw=1)
        a.plot(o["u"], o["u"], color=GREY, lw=0.5)
        a.axhline(0, color=GREY, lw=0.5)
        ok = o["g_g_c"] > 0
        col = "C0" if ok else "C3"
        a.plot([o["c"], o["c"], o["g_c"], o["g_c"]], [0, o["g_c"], o["g_c"], o["g_g_c"]], "-", color=col, lw=1)
        a.plot([o["c"], o["g_c"]], [o["g_c"], o["g_g_c"]], "o", color=col, ms=3)
        a.set_title(
            f"L = {L}, eta/eta_1 = {g}: {'return' if ok else 'sign flip'}\n(gamma_WCR = {gamma_wcr[L]:.3f})", fontsize=7
        )
        a.set(xlim=(0, 1.6), ylim=(max(min(-0.8, 1.1 * o["g_g_c"]), -6.0), 1.8))
        a.tick_params(labelsize=6)
    fig.supxlabel("u = w / w_* (per-layer value, normalised)", fontsize=8)
    fig.supylabel("g(u): the next iterate of the chain map", fontsize=8)
    fig.tight_layout()
    return fig


def figure5(paths: dict, L: int, sigma: float = 1.0) -> plt.Figure:
    """Figure 5: the deep-chain loss (w^L - sigma)^2 / 2 with the worst overshoot and the next step.

    ``paths`` maps a label (e.g. '0.97 eta_WCR') to (c, w1, w2): the maximiser of the map,
    its image (the largest overshoot) and the next iterate (return into (0, w*) or sign flip).
    """
    w = np.linspace(-0.45, 1.3 * sigma ** (1.0 / L), 600)
    loss = 0.5 * (w**L - sigma) ** 2
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(w, loss, color="0.3", lw=1.2, label=f"loss, L = {L}")
    ax.axvline(0.0, color="0.6", lw=0.8, ls=":")
    ax.axvline(sigma ** (1.0 / L), color="0.6", lw=0.8, ls="--", label="w* (minimiser)")
    for (label, pts), color in zip(paths.items(), ("tab:blue", "tab:red")):
        xs = [float(p) for p in pts]
        ys = [0.5 * (x**L - sigma) ** 2 for x in xs]
        ax.plot(xs, ys, "o-", color=color, label=f"{label}: c -> w1 -> w2 = {xs[2]:+.3f}")
    ax.set_ylim(0, 0.75 * sigma**2)
    ax.set_xlim(-0.45, 1.3 * sigma ** (1.0 / L))
    ax.set_xlabel("per-layer scale w")
    ax.set_ylabel("loss")
    ax.set_title("Figure 5: return below eta_WCR, sign flip above")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
