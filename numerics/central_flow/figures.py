"""Figures 1-4 of the central-flow paper (arXiv 2611.06718), redrawn from our runs.

Each function takes plain per-draw records (dicts of arrays, built by the checks in
``verify/central_flow/test_simulations.py`` from the runs of :mod:`numerics.central_flow.flows`
on the draws of :mod:`numerics.central_flow.experiments`) and returns a matplotlib ``Figure``;
nothing is shown or saved here. Only the panels that carry a
quantitative claim are drawn; the paper's reference lines (identity, 2/eta, 0.95 (2/eta),
ratio 1, 10 steps) are dotted black.

>>> import matplotlib
>>> rec = {"t": np.array([0.0, 1.0]), "lam": np.array([0.9, 1.0]), "k": np.array([0, 1])}
>>> fig = sharpness_panel([rec]); type(fig).__name__
'Figure'
>>> matplotlib.pyplot.close(fig)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from numerics.plotting import PAPER, plt

if TYPE_CHECKING:
    from matplotlib.figure import SubFigure

FLOWS = {
    "gf": ("C0", "-", "gradient flow"),
    "gd": ("0.6", "-", "GD"),
    "mid": ("C2", "--", "GD midpoint"),
    "cf": ("C1", "-", "hybrid central flow"),
}


def _identity(ax, xs, ys):
    lo = min(np.min(xs), np.min(ys))
    hi = max(np.max(xs), np.max(ys))
    pad = 0.05 * (hi - lo + 1e-300)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], ":", color=PAPER, lw=1, label="identity")


def _floor(x):
    return np.maximum(np.abs(x), 1e-18)  # log axes: exact zeros drawn at 1e-18


def sharpness_panel(records: Iterable[Mapping[str, Any]], ax: plt.Axes | None = None) -> plt.Figure | SubFigure:
    """lambda_max(H) eta / 2 along each hybrid central flow; dotted: the edge 2/eta."""
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(4, 3))
    for s, rec in enumerate(records):
        ax.plot(rec["t"], rec["lam"], color=f"C{s}", lw=1, label=f"draw {rec.get('draw', s)}")
    ax.axhline(1.0, ls=":", color=PAPER, lw=1)
    ax.set_xscale("symlog", linthresh=1.0)  # the GF phase before contact lasts a few steps
    ax.set_xlim(left=0.0)
    ax.set(xlabel="t (GD steps, symlog)", ylabel="lambda_max eta / 2")
    return fig if fig is not None else ax.figure


def figure1(runs: Sequence[Mapping[str, Any]], predicted: npt.ArrayLike) -> plt.Figure:
    """Figure 1 (scalar model): level set, drift at first contact, pinned sharpness, |h(200)| vs the bound.

    ``predicted``: Eq. (18)'s h' at each run's contact state (the checks evaluate the derivation).
    """
    fig, ax = plt.subplots(1, 4, figsize=(17, 3.6))
    for s, r in enumerate(runs):
        for key in ("gf", "gd", "mid", "cf"):
            col, ls, lab = FLOWS[key]
            ax[0].semilogy(r[f"{key}_t"], _floor(r[f"{key}_dh"]), ls, color=col, lw=1, label=lab if s == 0 else None)
    ax[0].set(xlabel="t (GD steps)", ylabel="|h(t) - h0| / |h0|", title="level set of h")
    ax[0].legend(fontsize=7)
    meas = np.array([r["hdot_meas"] for r in runs])
    pred = np.asarray(predicted, dtype=float)
    ax[1].scatter(pred, meas, c=[f"C{s}" for s in range(len(runs))], zorder=3)
    _identity(ax[1], pred, meas)
    ax[1].set(xlabel="Eq. (18) prediction", ylabel="measured <grad h, theta'_CF>", title="drift at first EOS contact")
    sharpness_panel(
        [{"t": r["cf_t"], "lam": r["cf_lam"], "k": r["cf_k"], "draw": r.get("draw", s)} for s, r in enumerate(runs)],
        ax[2],
    )
    ax[2].set(title="sharpness along the hybrid CF")
    bound = np.array([r["bound"] for r in runs])
    hT = np.array([r["abs_hT"] for r in runs])
    h0 = np.array([abs(r["h0"]) for r in runs])
    ax[3].scatter(bound, hT, c=[f"C{s}" for s in range(len(runs))], zorder=3, label="|h(T)|")
    ax[3].scatter(bound, h0, facecolors="none", edgecolors=[f"C{s}" for s in range(len(runs))], label="|h(0)|")
    top = 1.1 * max(h0.max(), hT.max())
    ax[3].plot([0, top], [0, top], ":", color=PAPER, lw=1)
    worst = np.max(np.abs(hT - bound) / bound)
    ax[3].set(
        xlim=(0, top),
        ylim=(0, top),
        xlabel="2 sqrt(eta^-2 - y^2)",
        ylabel="|h|",
        title=f"T = {runs[0]['T']:g}: max rel. distance {worst:.1e}",
    )
    ax[3].legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure2(runs: Sequence[Mapping[str, Any]]) -> plt.Figure:
    """Figure 2 (matrix factorisation): |Psi - Psi0|/|Psi0|, pointwise drift check, singular values, lambda_2."""
    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    for s, r in enumerate(runs):
        for key in ("gf", "gd", "mid", "cf"):
            col, ls, lab = FLOWS[key]
            ax[0, 0].semilogy(
                r[f"{key}_t"], _floor(r[f"{key}_dpsi"]), ls, color=col, lw=1, label=lab if s == 0 else None
            )
        lab = f"draw {r.get('draw', s)}"
        ax[0, 1].semilogy(r["act_t"], _floor(r["match"]), ".", ms=3, color=f"C{s}", label=lab)
        sv = r["svals"] / r["svals"][0]
        ax[1, 0].semilogy(np.arange(1, sv.size + 1) + 0.1 * s, sv, "o", color=f"C{s}", label=lab)
        ax[1, 1].plot(r["act_t"], r["lam2"], color=f"C{s}", lw=1, label=lab)
    ax[0, 0].set(xlabel="t (GD steps)", ylabel="|Psi(t) - Psi0|_F / |Psi0|_F", title="Psi")
    ax[0, 0].legend(fontsize=7)
    ax[0, 1].axhline(1e-9, ls=":", color=PAPER, lw=1, label="paper: 1e-10 - 1e-9")
    ax[0, 1].axhline(1e-10, ls=":", color=PAPER, lw=1)
    ax[0, 1].set(xlabel="t (active EOS)", ylabel="|Psi' + eta B|_F / |eta B|_F", title="Psi' = -eta sym(B~)")
    ax[0, 1].legend(fontsize=7)
    ax[1, 0].set(
        xlabel="index", ylabel="sigma_i / sigma_1", title="B(t) stacked in Sym(2) coordinates", xticks=[1, 2, 3]
    )
    ax[1, 1].axhline(0.95, ls=":", color=PAPER, lw=1, label="0.95 (2/eta)")
    ax[1, 1].axhline(1.0, ls="-", color=PAPER, lw=0.5)
    ax[1, 1].set(xlabel="t (active EOS)", ylabel="lambda_2 eta / 2", title="second eigenvalue")
    ax[1, 1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure3(runs: Sequence[Mapping[str, Any]], pool_ratios: Collection[float] = ()) -> plt.Figure:
    """Figure 3 (ReLU, fixed gates): h_j' vs -eta B~_jj, the fixed-gate ratio, the surviving drifts."""
    fig, ax = plt.subplots(1, 3, figsize=(14, 3.8))
    for s, r in enumerate(runs):
        ax[0].scatter(r["pred"], r["meas"], color=f"C{s}", label=f"draw {r.get('draw', s)}", zorder=3)
    allp = np.concatenate([r["pred"] for r in runs])
    allm = np.concatenate([r["meas"] for r in runs])
    _identity(ax[0], allp, allm)
    ax[0].set(xlabel="-eta (B~_ReLU)_jj", ylabel="<grad h_j, theta'_CF>", title="per-neuron drift at first contact")
    ax[0].legend(fontsize=7)
    ratios = [r["ratio"] for r in runs]
    ax[1].semilogy(np.arange(len(runs)), _floor(np.array(ratios)), "o", color="C3", label="our first draws")
    if len(pool_ratios):
        ax[1].semilogy(
            np.full(len(pool_ratios), len(runs) + 0.5),
            _floor(np.array(pool_ratios)),
            "_",
            color="0.5",
            ms=12,
            label="pool of EOS draws",
        )
    ax[1].axhline(1.0, ls=":", color=PAPER, lw=1, label="paper: all > 1")
    ticks = list(range(len(runs))) + ([len(runs) + 0.5] if len(pool_ratios) else [])
    names = [str(r.get("draw", s)) for s, r in enumerate(runs)] + (["pool"] if len(pool_ratios) else [])
    ax[1].set(xlabel="draw", ylabel="min |z_ij| / |delta z_ij|", title="fixed-gate ratio at first contact")
    ax[1].set_xticks(ticks, names)  # integer draws, and the pool's column named
    ax[1].legend(fontsize=7)
    ax[2].semilogy(np.arange(len(runs)), _floor(np.array([r["surv"] for r in runs])), "o", color="C4")
    ax[2].axhline(1e-11, ls=":", color=PAPER, lw=1, label="paper: O(1e-11)")
    ax[2].set(xlabel="draw", ylabel="max |surviving drift|", title="combinations in b-perp")
    ax[2].set_xticks(range(len(runs)), [str(r.get("draw", s)) for s, r in enumerate(runs)])
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure4(runs: Sequence[Mapping[str, Any]]) -> plt.Figure:
    """Figure 4 (ReLU beyond fixed gates): h_j(t) for GF, GD midpoint, hybrid CF; dotted: our first gate failure;
    shaded grey: the paper's 'fewer than 10 optimisation steps' after the first edge contact; shaded orange: where
    the hybrid CF slides along an activation boundary (our Filippov continuation; ``cf_slides``, if given); dash-dot:
    the averaged central flow continuing a hybrid CF past its stop (``acf``, if given)."""
    r_ = runs[0]["h_gf"].shape[1]
    fig, ax = plt.subplots(len(runs), r_, figsize=(4 * r_, 2.6 * len(runs)), squeeze=False)
    for s, r in enumerate(runs):
        for j in range(r_):
            a = ax[s, j]
            a.plot(r["gf_t"], r["h_gf"][:, j], color=FLOWS["gf"][0], lw=1.2, label="GF")
            a.plot(r["mid_t"], r["h_mid"][:, j], "--", color=FLOWS["mid"][0], lw=1, label="GD midpoint")
            a.plot(r["cf_t"], r["h_cf"][:, j], color=FLOWS["cf"][0], lw=1.2, label="hybrid CF")
            acf = r.get("acf")
            if acf is not None:
                a.plot(acf["t"], acf["h"][:, j], "-.", color=FLOWS["cf"][0], lw=1.2, label="averaged CF (ours)")
            if r.get("contact") is not None:  # the paper: the fixed-gate condition fails < 10 steps after contact
                a.axvspan(r["contact"], r["contact"] + 10, color=PAPER, alpha=0.08, lw=0, label="paper: gate fails")
            for k, (t0, t1, *_pair) in enumerate(r.get("cf_slides", ())):
                lab = "hybrid flow slides (Filippov, ours)" if k == 0 else None
                a.axvspan(t0, max(t1, t0 + 0.05), color=FLOWS["cf"][0], alpha=0.15, lw=0, label=lab)
            if r["fail_t"] is not None:
                a.axvline(r["fail_t"], ls=":", color=PAPER, lw=1, label="our first gate failure")
            a.set(title=f"draw {r.get('draw', s)}, h_{j + 1}", xlabel="t (GD steps)", ylabel=f"h_{j + 1}(t)")
            if s == 0 and j == 0:
                a.legend(fontsize=7)
    fig.tight_layout()
    return fig
