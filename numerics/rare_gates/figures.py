"""Figures of the rare-gates simulations (Figures 1-5 of arXiv 2610.11475) from experiment data.

Each function takes the plain data returned by :mod:`numerics.rare_gates.experiments` and
returns a matplotlib ``Figure`` (nothing is shown or saved here); the paper's numbers are
overlaid where the text gives them (black crosses or dotted lines). Fractions are drawn
with 95% Wilson intervals where the records are independent streams.

>>> import matplotlib
>>> fig = recovery_curve_figure([{"b": 16, "delta0": 1e-4, "gamma": 0.16,
...                               "recovery": np.array([10.0, np.nan])}], horizon=20.0)
>>> type(fig).__name__
'Figure'
>>> matplotlib.pyplot.close(fig)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from numerics.plotting import PAPER, plt
from numerics.rare_gates import experiments as E


def _cumulative(times: np.ndarray, grid: np.ndarray) -> np.ndarray:
    x = np.asarray(times, dtype=float)
    x = np.sort(x[np.isfinite(x)])
    return np.searchsorted(x, grid + 1e-9, side="right") / np.asarray(times).size


def figure1(traj: dict) -> plt.Figure:
    """Figure 1(b-d): log-angle along the source phase and after the switch (GD and SGD streams)."""
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].semilogy(traj["source_t"], traj["source_angle"], "o-", color="C0")
    ax[0].set(xlabel="source time T", ylabel="angle between w1 and w2", title="source SGD (slope -lambda)")
    ax[1].semilogy(traj["t"], traj["gd_angle"], color="C3", label=f"target GD (hit t = {traj['gd_hit']:.2f})")
    for k, a in enumerate(traj["sgd_angle"]):
        ax[1].semilogy(traj["t"], a, color="C2", lw=1, label="target SGD streams" if k == 0 else None)
    ax[1].axhline(traj["checkpoint_angle"], color="grey", lw=0.5)
    ax[1].set(xlabel="target time t", title="after the switch: 2/pi - lambda vs -lambda")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure2(table1: dict, offset: float, paper_offset: float = 3.9) -> plt.Figure:
    """Figure 2: target-GD hitting time against A^{-1} log(1/delta_T), T > 0, both sources."""
    fig, ax = plt.subplots(figsize=(6, 4.2))
    xs = []
    for src, mk in (("sgd", "o"), ("gd", "s")):
        x = np.log(1.0 / table1[src]["angle"][1:]) / E.A_RATE
        y = table1[src]["gd_recovery"][1:]
        for k, T in enumerate(table1["times"][1:]):
            ax.scatter(
                x[k], y[k], s=10, marker=mk, color=f"C{k}", alpha=0.6, label=f"T = {T:g}" if src == "sgd" else None
            )
        xs.append(x)
    grid = np.linspace(0.0, np.nanmax(np.concatenate([v.ravel() for v in xs])), 50)
    ax.plot(grid, grid + offset, "k--", lw=1, label=f"A^-1 log(1/delta_T) + {offset:.2f} (our median)")
    ax.plot(grid, grid + paper_offset, ":", color=PAPER, lw=1, label=f"paper: c = {paper_offset}")
    ax.set(
        xlabel="A^-1 log(1/delta_T)",
        ylabel="target GD hitting time",
        title="Figure 2: GD hitting times (circles: source SGD, squares: source GD)",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure3a(
    cells: list[dict], table1: dict | None = None, paper_points: Sequence[tuple[float, float, str]] = ()
) -> plt.Figure:
    """Figure 3(a): recovered fraction against Gamma, 24 cells with Wilson intervals, Poisson reference.

    ``table1`` adds the identical-checkpoint records (T > 0, both sources, target SGD) as
    hollow diamonds: fractions in bins of width 0.5 in log10 Gamma_T with >= 5 records.
    ``paper_points``: (Gamma, fraction, label) quoted by the paper.
    """
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    colors = {b: f"C{i}" for i, b in enumerate(E.FIG3A_B)}
    marks = {eta: m for eta, m in zip(E.FIG3A_ETA, ("o", "^"))}
    for c in cells:
        n = c["recovery"].size
        k = int(np.isfinite(c["recovery"]).sum())
        lo, hi = E.wilson(k, n)
        ax.errorbar(
            c["gamma"],
            k / n,
            yerr=[[k / n - lo], [hi - k / n]],
            fmt=marks[c["eta"]],
            ms=4,
            color=colors[c["b"]],
            capsize=2,
            lw=0.8,
        )
    g = np.logspace(-3.5, 3, 200)
    ax.plot(g, E.poisson_reference(g), "k-", lw=1, label="1 - exp(-Gamma/(pi lambda))")
    if table1 is not None:
        eta, b = table1["config"]["eta"], table1["config"]["b"]
        G = np.concatenate([np.ravel(E.gamma_of(table1[s]["angle"][1:], b, eta)) for s in ("sgd", "gd")])
        R = np.concatenate([np.isfinite(table1[s]["sgd_recovery"][1:]).ravel() for s in ("sgd", "gd")])
        edges = np.arange(np.floor(2 * np.log10(G.min())) / 2, np.log10(G.max()) + 0.5, 0.5)
        idx = np.digitize(np.log10(G), edges)
        for j in np.unique(idx):
            sel = idx == j
            if sel.sum() >= 5:
                ax.plot(10 ** (edges[j - 1] + 0.25), R[sel].mean(), "D", mfc="none", color="grey", ms=6)
        ax.plot([], [], "D", mfc="none", color="grey", label="identical checkpoints (binned, T > 0)")
    for gam, frac, _label in paper_points:
        ax.plot(gam, frac, "x", color=PAPER, ms=7)
    if paper_points:
        ax.plot([], [], "x", color=PAPER, label="paper (quoted cells)")
    for b, col in colors.items():
        ax.plot([], [], "s", color=col, label=f"b = {b}")
    for eta, m in marks.items():
        ax.plot([], [], m, color="grey", label=f"eta = {eta}")
    ax.set(
        xscale="log",
        xlabel="Gamma = b delta0 / eta",
        ylabel="recovered by H = 200",
        ylim=(-0.03, 1.03),
        title="Figure 3(a): recovery against the disagreement budget",
    )
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def recovery_curve_figure(
    settings: list[dict],
    *,
    horizon: float,
    paper: dict | None = None,
    title: str = "Figure 3(b): recovery over long horizons",
) -> plt.Figure:
    """Figure 3(b): recovered fraction against t with the Poisson and frozen-angle references.

    ``paper`` maps ``(b, delta0)`` to the quoted fractions at t = 60, 200, 450.
    """
    fig, ax = plt.subplots(figsize=(8.6, 4.2))
    t = np.linspace(0.0, horizon, 901)
    for i, s in enumerate(settings):
        col = f"C{i}"
        ax.plot(t, _cumulative(s["recovery"], t), color=col, label=f"b = {s['b']}, delta0 = {s['delta0']:g}")
        ax.axhline(float(E.poisson_reference(s["gamma"])), color=col, ls="--", lw=0.8)
        ax.plot(t, -np.expm1(-s["gamma"] * t / math.pi), color=col, ls=":", lw=0.8)
        if paper and (s["b"], s["delta0"]) in paper:
            ax.plot([60, 200, 450], paper[(s["b"], s["delta0"])], "x", color=PAPER, ms=7)
    ax.plot([], [], "k--", lw=0.8, label="Poisson reference")
    ax.plot([], [], "k:", lw=0.8, label="frozen angle 1 - exp(-Gamma t/pi)")
    if paper:
        ax.plot([], [], "x", color=PAPER, label="paper (Table 2)")
    ax.set(xlabel="target time t", ylabel="recovered fraction", ylim=(0, 1.02), title=title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: the curves fill them
    fig.tight_layout()
    return fig


def figure4(joint: dict, paper_half: Sequence[float] = ()) -> plt.Figure:
    """Figure 4: recovered fraction against T for each eta, and against Gamma_T (binned)."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    b = joint["b"]
    for i, eta in enumerate(joint["etas"]):
        frac = joint["recovered"][i].mean(axis=1)
        ax[0].plot(joint["times"], frac, "o-", ms=3, color=f"C{i}", label=f"eta = {eta:g}")
        if i < len(paper_half):
            ax[0].axvline(paper_half[i], color=f"C{i}", ls=":", lw=0.8)
        G = np.ravel(E.gamma_of(joint["angle"][i], b, eta))
        R = joint["recovered"][i].ravel()
        edges = np.arange(-4.0, 6.01, 0.5)
        idx = np.digitize(np.log10(G), edges)
        xs, ys = [], []
        for j in np.unique(idx):
            sel = idx == j
            if sel.sum() >= 5 and 0 < j < edges.size:
                xs.append(10 ** (edges[j - 1] + 0.25))
                ys.append(R[sel].mean())
        ax[1].plot(xs, ys, "o-", ms=3, color=f"C{i}")
    ax[0].axhline(0.5, color="grey", lw=0.5)
    ax[0].set(xlabel="source time T", ylabel="recovered by H = 200", title="dotted: paper's T_1/2")
    ax[0].legend(fontsize=7)
    g = np.logspace(-4, 6, 200)
    ax[1].plot(g, E.poisson_reference(g), "k-", lw=1, label="Poisson reference")
    ax[1].set(xscale="log", xlabel="Gamma_T = b delta_T / eta", title="collapse in Gamma_T (bins of 0.5 decade)")
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure5(weight_decay: list[dict], noise: list[dict], *, paper_noise: dict | None = None) -> plt.Figure:
    """Figure 5: weight-decay controls (recovery and first disagreements) and parameter noise."""
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for i, w in enumerate(weight_decay):
        t = np.linspace(0.0, w["horizon"], 1001)
        col = f"C{i}"
        ax[0].plot(t, _cumulative(w["recovery"], t), color=col, label=f"lambda = {w['lam']:g}: recovered")
        ax[0].plot(t, _cumulative(w["first"], t), color=col, ls=":", lw=0.8)
        if w["lam"] > 0:
            ax[0].axhline(float(E.poisson_reference(w["gamma"], w["lam"])), color=col, ls="--", lw=0.8)
    ax[0].axvline(240.0, color=PAPER, lw=0.5)
    ax[0].plot([], [], "k:", lw=0.8, label="first disagreement sampled")
    ax[0].plot([], [], "k--", lw=0.8, label="Poisson reference")
    ax[0].set(
        xlabel="target time t", ylabel="fraction of runs", ylim=(0, 1.02), title="weight decay (line: paper's t ~ 240)"
    )
    ax[0].legend(fontsize=7)
    styles = {"none": "-", "independent": "-", "shared": "--"}
    for z in noise:
        t = np.linspace(0.0, z["horizon"], 1001)
        col = "grey" if z["mode"] == "none" else f"C{int(round(-math.log10(z['s']))) - 4}"
        ax[1].plot(
            t, _cumulative(z["recovery"], t), color=col, ls=styles[z["mode"]], label=f"{z['mode']}, s = {z['s']:g}"
        )
        if paper_noise and (z["mode"], z["s"]) in paper_noise:
            ax[1].plot(z["horizon"], paper_noise[(z["mode"], z["s"])], "x", color=PAPER, ms=7)
    ax[1].set(
        xlabel="target time t",
        ylabel="recovered fraction",
        ylim=(0, 1.02),
        title="parameter noise (x: paper at H = 1000)",
    )
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    return fig
