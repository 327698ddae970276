"""Checks of the edge-of-stability regime and of GD against the central flow (Section 1; Appendices B-D).

Runs: :mod:`numerics.central_flow.experiments` through the sweep layer (``@uses``):
``central_flow.eos_scan`` (GD over a grid of the EoS family: eta, c = eta lambda*/2 with lambda* the
flattest global minimum's sharpness, start scale; sizes ``eos_scan_full``) and
``central_flow.eos_track`` (one cell per model and draw of the EoS settings
``EOS_SETTINGS``: eta = 0.9, c = 1.002 for every model (scalar: eta y = 1.0005), start scale 0.3;
sizes ``eos_draws``, ``eos_track_steps``). Metrics: :mod:`numerics.central_flow.eos`.

EoS sustained (a draw): from the first GD iterate with lambda_max eta/2 >= 1, over EOS_WINDOW = 400
steps, at least 80% of the steps have |lambda_max eta/2 - 1| <= 0.1 *and* a period-two amplitude
>= 1e-3 |theta| (a run that merely converges to a minimum just below the edge is not EoS).
Tracking (a draw): the midpoints (theta_k + theta_{k+1})/2 at t = k + 1/2 against the hybrid central
flow started at the first midpoint below the edge after the catapult (``eos.catapult_end``), on
parameters, GF law(s), sharpness and the time-averaged loss, each within C (rho + a^2), C = 10
(``eos.tracking_tolerance``, rho and a over the compared steps), over ``eos_track_steps`` steps (to the
flow's stop, if any).
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy import stats

from derivations.central_flow import scalar as S
from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.stats import clopper_pearson_interval, power_of_region, wilson_interval
from verify.audit import claim, uses
from verify.central_flow import EOS_FITTED, by_construction_power, regime_draws

ALT_FAIL = 0.25  # the alternative: the property fails in a quarter of the draws
#: the chosen setting, and how a neighbourhood rerun moves it (``tox -e neighbourhood``; the report's profile names it)
READ_SETTING = (
    f"EoS settings of experiments.EOS_SETTINGS ({E.eos_setting_text()}; the paper's settings are lost; a "
    "neighbourhood rerun multiplies c - 1 and the start scale by the sizes eos_c_excess and eos_scale, as the "
    "report's profile states)"
)
READ = (
    f"{READ_SETTING}; 'EOS regime' read as: for 400 steps after first reaching 2/eta, >= 80% "
    "of steps within 10% of 2/eta while oscillating (period-two amplitude >= 1e-3 |theta|); 'commonly' read as: at "
    "the chosen setting at least half of the draws sustain it, over the neighbourhood (central_flow.eos_neighbourhood) "
    "every cell at the chosen c sustains it in at least half of its draws, and no cell with c < 1 does. This reads "
    "'commonly' inside a setting fitted to sustain EoS, not across settings: in c the band that sustains it is "
    "narrow (no draw at the neighbouring c on either side; the evidence gives its width), so the check shows that "
    "such settings exist and hold over start scales, not that GD commonly enters EoS"
)
#: the neighbourhood reading is fitted too: its strict alternative fails in the quick grid
HOOD_FITTED = {
    **EOS_FITTED,
    "every draw of every chosen-c neighbourhood cell sustains EoS": "ReLU at start scale 0.45 (quick grid, c = 1.002): "
    "1 of 2 draws; the scalar and mf cells 2 of 2 (values under 'neighbourhood' in CF-1.eos-*)",
}
HOOD_SHARE = 0.5  # 'commonly' at the chosen c: the least share of a neighbourhood cell's draws that sustain EoS
#: why CF-1.eos-* hold by construction for the paper's statement (its power is recorded as 0, the verdict inconclusive)
EOS_BY_CONSTRUCTION = (
    "the settings were chosen because they sustain EoS (c = eta lambda*/2 just above 1, picked from the scan: no "
    "stable minimum, so GD is forced to oscillate at the edge; EoS is sustained at one grid value of c, in no draw "
    "at the neighbouring values), so the check shows that such settings exist and sustain EoS in most of their "
    "draws, which every other EoS check rests on and which is asserted; the paper's 'GD on neural networks ... "
    "commonly enters the EOS regime' is a general statement cited from Cohen et al., and 'commonly' across "
    "neural-network training is not testable with three toy models at chosen settings: the statement's power is "
    "recorded as 0"
)
READ_TRACK = (
    "EoS settings as in CF-1.eos-*; 'in this oscillatory regime' read as after the catapult (eos.catapult_end: from "
    "the first step after which the sharpness stays within 10% of 2/eta and the iterates' centre moves by at most "
    "1/C of their oscillation per step, C = 10 the tracking tolerance's constant); 'time-averaged trajectory' read "
    "as the adjacent-iterate midpoints at t = k + 1/2 (the 2-step average for the loss) against the hybrid central "
    "flow from the first midpoint below the edge from there; "
    "'describes' read as: parameters, laws, sharpness and loss within C (rho + a^2), C = 10, rho and a over the "
    "compared steps"
)


def _power(audit, n: int, what: str) -> None:
    audit.power(
        1 - (1 - ALT_FAIL) ** n,
        alternative=f"{what} fails in a quarter of the draws",
        method=f"exact: P(at least one of {n} independent draws fails) = 1 - 0.75^{n}",
    )


def _setting_run(results) -> dict:
    """The sizes' move of the EoS settings this run made (experiments.eos_moves; empty: the chosen setting)."""
    return E.eos_moves(results.session.sizes("central_flow"))


def _eos(audit, results, model: str) -> None:
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == model]
    run = E.eos_setting(model, **_setting_run(results))
    audit.ours(E.eos_setting_text(**_setting_run(results)), label="EoS setting run (central_flow.eos_track)")
    # the runs are at the setting the reading and the sizes name (each record states its c and start scale)
    assert all((r["eta"], r["c"], r["scale"]) == (run["eta"], run["c"], run["scale"]) for r in runs)
    scan = [r for r in results["central_flow.eos_scan"] if r["model"] == model]
    n, k = len(runs), sum(bool(r["sustained"]) for r in runs)
    lo, hi = clopper_pearson_interval(k, n)
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws sustaining EoS")
    audit.ours(
        [round(r["frac_eos"], 3) for r in runs], 3, label="fraction of the 400 steps at the edge and oscillating"
    )
    audit.ours([r["first"] for r in runs], label="first step with lambda_max eta/2 >= 1")
    audit.ours([(r["eta"], r["c"], r["scale"], r["frac_eos"]) for r in scan], 3, label="scan (eta, c, scale, EoS frac)")
    below = [r for r in scan if r["c"] < 1]
    audit.evidence(
        f"{n} draws, GD {E.EOS_WINDOW} steps past the first reaching of 2/eta; lambda_max eta/2 in the windows "
        f"{min(r['lam_min'] for r in runs):.3f}-{max(r['lam_max'] for r in runs):.3f}. In the scan, settings with a "
        f"stable minimum (c < 1) reach the edge and then converge below it (EoS fractions "
        f"{', '.join(format(r['frac_eos'], '.2f') for r in below)}): EoS is not sustained there; c well above 1 "
        "gives a period-two orbit whose iterate sharpness swings beyond 10%. The setting is fitted: c just above 1 "
        "was picked from this scan because it sustains EoS (no stable minimum, so GD is forced to oscillate); each "
        f"scan cell is one draw, and the scalar's eta y = {E.EOS_SETTINGS['scalar']['c']:g} is not a quick-grid "
        "point (the quick grid uses 1.002 for every model)."
    )
    cells = _hood(audit, results, model)
    # 'commonly', fixed with the neighbourhood cells' rule (HOOD_SHARE) before the full profile's 12 draws were run:
    # there one of 12 mf and one of 12 ReLU draws leave the band; every draw sustaining it is reported, not required
    need = int(np.ceil(HOOD_SHARE * n))
    alt = 0.25  # the rule's own alternative: EoS sustained in only a quarter of the draws at the chosen setting
    audit.ours(
        float(stats.binom.cdf(need - 1, n, alt)),
        4,
        label=f"power of the rule 'at least {need} of {n} draws sustain EoS' against EoS sustained in only {alt:g} of "
        f"the draws at the chosen setting (exact: P(Bin({n}, {alt:g}) < {need})); reported: that alternative is about "
        "the chosen setting, not the alternative to the paper's 'commonly', whose power is 0 (by construction)",
    )
    audit.ours(k == n, label="every draw at the chosen setting sustains EoS (reported; the reading asks for half)")
    audit.evidence(
        "What the check shows: settings chosen to sustain EoS exist (at one grid value of c per model, in no draw at "
        "the neighbouring grid values) and sustain it in most draws there; that is asserted, since every other EoS "
        "check rests on it. What it cannot show: the paper's 'GD on neural networks ... commonly enters the EOS "
        "regime' is a general statement cited from Cohen et al. about neural-network training; three toy models at "
        "settings picked because they sustain EoS (the scalar's outside the paper's own regime eta y < 1, the ReLU "
        "setting built with every unit active) pass this check whatever GD commonly does, so the paper statement's "
        "power is recorded as 0 (by construction) and the verdict is inconclusive. The rule's power against EoS "
        "sustained in a quarter of the draws at the chosen setting is reported under ours."
    )
    by_construction_power(
        audit,
        "GD enters and sustains the EOS regime only in some settings (not 'commonly')",
        "the settings were chosen because they sustain EoS (c just above 1, picked from the scan; the check asserts "
        "only that they do); 'commonly' across neural-network training is not testable with three toy models at chosen "
        "settings",
        where="gradient descent on neural networks at large (the statement cited from Cohen et al.)",
    )
    assert k >= need
    assert all(not r["sustained"] for r in below)
    # each cell's c as run (eos_scan records it): the scan must reach below 1 and above the chosen c, or the
    # 'no EoS below 1' statement below would hold over an empty set
    assert any(c < 1 for c, *_ in cells) and any(c > E.EOS_SETTINGS[model]["c"] for c, *_ in cells)
    assert all(k_ == 0 for c, _, k_, _ in cells if c < 1)
    # every cell at the chosen c, as registered in READ: EoS sustained in at least HOOD_SHARE of its draws
    chosen = E.EOS_SETTINGS[model]["c"]
    assert any(c == chosen for c, *_ in cells), "no neighbourhood cell at the chosen c"
    assert all(k_ >= HOOD_SHARE * n_ for c, _, k_, n_ in cells if c == chosen)


def _hood(audit, results, model: str) -> list[tuple[float, float, int, int]]:
    """The neighbourhood of the chosen setting (central_flow.eos_neighbourhood): (c, scale, k, n) per cell, reported."""
    chosen = E.EOS_SETTINGS[model]["c"]
    cells = [
        (cell[0]["c"], cell[0]["scale"], sum(bool(r["sustained"]) for r in cell), len(cell))
        for cell in results["central_flow.eos_neighbourhood"]
        if cell[0]["model"] == model
    ]
    rows = []
    for c, sc, k, n in cells:
        lo, hi = wilson_interval(k, n)
        rows.append(f"c = {c:g}, scale {sc:g}: {k}/{n} [{lo:.2f}, {hi:.2f}]")
    audit.ours(rows, label="neighbourhood: draws sustaining EoS per cell (Wilson 95%)")
    at = [(k, n) for c, _, k, n in cells if c == chosen]
    ka, na = sum(k for k, _ in at), sum(n for _, n in at)
    lo, hi = wilson_interval(ka, na)
    off = [(c, k, n) for c, _, k, n in cells if c != chosen]
    # the band in c where EoS is sustained: the c values (pooled over scales) with a sustaining draw, contiguous
    # around the chosen c, and the nearest c on either side with none (the band lies strictly inside those)
    pooled = {c: sum(k for c_, _, k, _ in cells if c_ == c) for c in sorted({c for c, *_ in cells})}
    cs = list(pooled)
    i0 = cs.index(chosen)
    lo_i, hi_i = i0, i0
    while lo_i > 0 and pooled[cs[lo_i - 1]] > 0:
        lo_i -= 1
    while hi_i < len(cs) - 1 and pooled[cs[hi_i + 1]] > 0:
        hi_i += 1
    c_lo = cs[lo_i - 1] if lo_i > 0 and pooled[chosen] > 0 else None
    c_hi = cs[hi_i + 1] if hi_i < len(cs) - 1 and pooled[chosen] > 0 else None
    band = (
        f"EoS is sustained for c in [{cs[lo_i]:g}, {cs[hi_i]:g}] of the grid and in no draw at c = "
        f"{'-' if c_lo is None else format(c_lo, 'g')} below or c = {'-' if c_hi is None else format(c_hi, 'g')} "
        f"above: the band in c is narrower than "
        + ("(unbounded: no failing cell on one side)" if c_lo is None or c_hi is None else f"{c_hi - c_lo:.3g}")
        + f" (between those cells, off-chosen c at start scale(s) "
        f"{', '.join(sorted({format(sc, 'g') for c, sc, _, _ in cells if c != chosen}))}, "
        f"{min((n for c, _, _, n in cells), default=0)} draws per cell)"
    )
    audit.ours(band, label="band in c sustaining EoS")
    if c_lo is not None and c_hi is not None:
        plain = (
            f"Plainly: EoS is sustained only in a narrow band of c, at c = {cs[lo_i]:g}"
            + (f"-{cs[hi_i]:g}" if hi_i > lo_i else "")
            + f" of the grid and in no draw at c = {c_lo:g} or {c_hi:g} (a band narrower than {c_hi - c_lo:.3g} in c): "
            "below it GD converges under the edge, above it the orbit swings beyond 10% of 2/eta. 'Commonly' holds "
            "here at a setting picked from that band, not for GD across settings."
        )
    else:
        plain = "The band in c is open on one side of the grid (no failing cell there): its width is not measured."
    audit.evidence(
        f"Neighbourhood (central_flow.eos_neighbourhood, start scales "
        f"{', '.join(format(sc, 'g') for c, sc, _, _ in cells if c == chosen)} at the chosen c = {chosen:g}): "
        f"{ka} of {na} draws sustain EoS (Wilson 95%: [{lo:.2f}, {hi:.2f}]); at c = "
        + ", ".join(f"{c:g}: {k}/{n}" for c, k, n in off)
        + f". {band}. Below 1 GD converges; above the band the orbit's sharpness swings beyond 10% of 2/eta. At the "
        f"chosen c the registered expectation ('commonly': each cell sustains EoS in at least {HOOD_SHARE:g} of its "
        f"draws) is asserted; its strict form (every draw) is a fitted alternative (see fitted). {plain}"
    )
    return cells


@claim(
    "CF-1.eos-scalar",
    reading=READ + f"; scalar: eta y = {E.EOS_SETTINGS['scalar']['c']:g} > 1 (moved: still > 1), outside the "
    "paper's eta y < 1 (see evidence)",
    fitted=HOOD_FITTED,
    by_construction=EOS_BY_CONSTRUCTION + "; the scalar setting lies outside the paper's own regime eta y < 1 (where "
    "Figure 1's bound exists), where GD cannot sustain EoS (the exact law h_(k+1) = h_k (1 - eta^2 e_k^2) bounds the "
    "oscillation; CF-B.eos-regime: none of its draws there sustains it): it sustains EoS because eta y > 1 leaves "
    "no stable minimum",
)
@uses("central_flow.eos_track", "central_flow.eos_scan", "central_flow.eos_neighbourhood")
def test_eos_scalar(audit, results):
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == "scalar"]
    run = E.eos_setting("scalar", **_setting_run(results))
    model, _, eta = E.eos_problem("scalar", run["eta"], run["c"], run["scale"], E.SEED, 0)
    y = model.data["y"]
    mod_p, th_p, _ = E.eos_problem("scalar", 0.9, 0.95, 0.3, 0, 0)
    bud = E.scalar_h_budget(F.gradient_descent(mod_p, th_p, 0.9, 600), 0.9, mod_p.data["y"])
    audit.ours(bud["recursion"], 3, label="max relative violation of h_{k+1} = h_k (1 - eta^2 e_k^2), eta y = 0.95")
    audit.evidence(
        f"In the paper's regime eta y < 1 (bound 2 sqrt(eta^-2 - y^2) real) the exact recursion h_(k+1) = h_k "
        f"(1 - eta^2 e_k^2) (measured violation {bud['recursion']:.1e}; tolerance 1e-12: a few roundings "
        f"per step) bounds the total oscillation energy sum -log(1 - eta^2 e_k^2) = log(h_0/h_K) "
        f"({bud['energy']:.3f} here): oscillation "
        "cannot be sustained, GD settles on a stable minimum. The settings used have eta y = "
        f"{eta * y:.6g} (no stable minimum), {len(runs)} draws."
    )
    assert bud["recursion"] <= 1e-12
    _eos(audit, results, "scalar")


@claim("CF-1.eos-mf", reading=READ, fitted=HOOD_FITTED, by_construction=EOS_BY_CONSTRUCTION)
@uses("central_flow.eos_track", "central_flow.eos_scan", "central_flow.eos_neighbourhood")
def test_eos_mf(audit, results):
    _eos(audit, results, "mf")


@claim(
    "CF-1.eos-relu",
    reading=READ + "; ReLU: one-unit teacher, inputs and start in the all-active region",
    fitted=HOOD_FITTED,
    by_construction=EOS_BY_CONSTRUCTION + "; the ReLU setting is built with every unit active (one-unit teacher, "
    "inputs with x_i^T w_hat > 0.3, start in the all-active region), so on the data the network is a linear "
    "two-layer model and no activation pattern changes while GD sustains EoS",
)
@uses("central_flow.eos_track", "central_flow.eos_scan", "central_flow.eos_neighbourhood")
def test_eos_relu(audit, results):
    _eos(audit, results, "relu")


def _gap_bounds(r: dict) -> tuple[float, float]:
    """(lower, upper) bound on the two flows' separation / tolerance of an eos_track draw (theta and law, max over t).

    The separation is measured as in experiments._flow_gap: |theta_CF - theta_GF| / |theta_CF| and the laws'
    difference over |theta_CF|^2. The recorded errors are GD's midpoints m against each flow, over that flow's own
    |theta| (eos.tracking_errors), so by the triangle inequality, with |theta_GF| / |theta_CF| between
    r = (1 - e_CF) / (1 + e_GF) and R = (1 + e_CF) / (1 - e_GF) (e on theta, largest over t), the separation lies
    between e_GF r^p - e_CF and e_CF + e_GF R^p (p = 1 for theta, 2 for the law). A draw without both flows gives
    (0, inf) (nothing certain).
    """
    if r["tracked"] is None or r["gf"] is None:
        return 0.0, float("inf")
    ec, eg, tol = r["tracked"]["errors"], r["gf"]["errors"], r["tracked"]["tol"]
    big = (1 + ec["theta"]) / max(1 - eg["theta"], 1e-300)
    small = max(1 - ec["theta"], 0.0) / (1 + eg["theta"])
    lo = max(eg["theta"] * small - ec["theta"], eg["law"] * small**2 - ec["law"])
    hi = max(ec["theta"] + eg["theta"] * big, ec["law"] + eg["law"] * big**2)
    return max(lo, 0.0) / tol, hi / tol


def _track(audit, results, model: str) -> None:
    runs = regime_draws(audit, [r for r in results["central_flow.eos_track"] if r["model"] == model])
    ok = [r["tracked"] is not None and max(r["tracked"]["errors"].values()) <= r["tracked"]["tol"] for r in runs]
    n, k = len(runs), sum(ok)
    lo, hi = clopper_pearson_interval(k, n)
    worst = [max(r["tracked"]["errors"].values()) / r["tracked"]["tol"] for r in runs]
    gf = [max(r["gf"]["errors"].values()) / r["tracked"]["tol"] for r in runs]
    law = [r["tracked"]["errors"]["law"] / max(r["gf"]["errors"]["law"], 1e-300) for r in runs]
    amp = [r["tracked"]["a"] for r in runs]
    sharp = [r["tracked"]["tol"] / r["tracked"]["a"] for r in runs]
    stops = [(r["draw"], r["track_stop"]) for r in runs if r["track_stop"]]
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws tracking the central flow")
    audit.ours([r["catapult"] for r in runs], label="step where the catapult ends (eos.catapult_end)")
    audit.ours([r["t_start"] for r in runs], label="flows' start t = j + 1/2 (first sub-edge midpoint after it)")
    audit.ours(
        [r["tracked"]["errors"] for r in runs], 3, label="max relative errors per draw (theta, law, sharpness, loss)"
    )
    audit.ours([r["tracked"]["tol"] for r in runs], 3, label="tolerance C (rho + a^2) per draw")
    audit.ours(sharp, 3, label="tolerance / a (below 1: the raw iterates, a off the midpoints, would fail)")
    audit.ours(worst, 3, label="largest error / tolerance, central flow")
    audit.ours(gf, 3, label="largest error / tolerance, gradient flow (alternative without curvature term)")
    audit.ours(law, 3, label="law error CF / law error GF")
    audit.ours(stops, label="central flows stopped (draw, reason)")
    audit.tolerance(
        EOS.TRACK_C,
        "C in C (rho + a^2): rho = GD's largest relative slow step (O(eta) discretisation), a = its largest relative "
        "period-two amplitude (the central flow's neglected terms are O(a^2) for these quartic losses), both over "
        "the compared steps only, after the catapult",
        label="C",
    )
    audit.evidence(
        f"{n} draws. The catapult (GD's first passage over the edge, sharpness swinging beyond 10% of 2/eta while "
        "the iterates' centre moves faster than they oscillate) ends at step "
        f"{min(r['catapult'] for r in runs)}-{max(r['catapult'] for r in runs)} (eos.catapult_end, on GD alone); "
        f"both flows start at the first sub-edge midpoint from there and are compared over the next "
        f"{runs[0]['tracked']['t1'] - runs[0]['tracked']['t0'] + 1:.0f} steps, so the catapult enters neither the "
        f"comparison nor the tolerance: rho <= {max(r['tracked']['rho'] for r in runs):.1e}, a = "
        f"{min(amp):.3f}-{max(amp):.3f}, tolerance {min(r['tracked']['tol'] for r in runs):.4f}-"
        f"{max(r['tracked']['tol'] for r in runs):.4f}, below a in every draw (ratio <= {max(sharp):.2f}: the check "
        f"can fail; the raw iterates would). Central flow: largest error / tolerance {max(worst):.2f}. Gradient flow "
        f"from the same start: {min(gf):.2f}-{max(gf):.2f} of the tolerance, failing the check in "
        f"{sum(g > 1 for g in gf)} of {n} draws: near c = 1 the oscillation, hence sigma^2, is small, so this check "
        "confirms consistency but tells the curvature term apart from GF only through the laws "
        f"(CF's law error is {min(law):.2f}-{max(law):.2f} x GF's; the long runs of CF-1.separate-* part them)."
    )
    _power(audit, n, "tracking")
    # against "GD follows gradient flow", by the rule fixed for CF-1.separate-* (_against_gf): rejected when the same
    # check applied to gradient flow fails in >= k_star of the n draws. The effect is the share q of draws whose two
    # flows lie more than 2 tolerances apart (theta and law, experiments._flow_gap, recorded by eos_track; GD within
    # the tolerance of the central flow is then more than one from gradient flow). The triangle inequality bounds
    # that separation from GD's recorded errors against each flow (_gap_bounds): a consistency check of the record
    sep = [max(r["flow_gap"].values()) / r["tracked"]["tol"] for r in runs]
    bounds = [_gap_bounds(r) for r in runs]
    q = sum(x > 2 for x in sep) / n
    k_star = _k_star(n)
    rejected = sum(g > 1 for g in gf)
    audit.ours(sep, 3, label="flows' separation / tolerance per draw (max of theta and law; > 2 forces GF to fail)")
    audit.ours([(round(a_, 3), round(b_, 3)) for a_, b_ in bounds], label="the same, (lower, upper) bound from "
               "GD's recorded errors by the triangle inequality (consistency of the record)")  # fmt: skip
    _against_gf(
        audit,
        n,
        rejected,
        q,
        f"the share q = {q:.3f} of draws whose two flows lie more than 2 tolerances apart over the compared steps "
        "(experiments._flow_gap)",
    )
    audit.evidence(
        f"Decision against gradient flow by the rule fixed for CF-1.separate-*: rejected when it fails in >= "
        f"{k_star} of {n} draws (false-alarm rate <= 0.05 at a per-draw rate {GF_FALSE}); observed {rejected}, so "
        f"{'rejected' if rejected >= k_star else 'not rejected'}. The flows' own separation over the compared steps "
        f"is {min(sep):.2f}-{max(sep):.2f} tolerances: more than 2 in {round(q * n)} of {n} draws."
    )
    # numerical: the recorded errors and the separation come from the same float64 trajectories (rtol 1e-10 or finer),
    # so the triangle inequality must hold up to that integration error, 1e-6 of a tolerance being far above it. Only
    # where the central flow ran the whole window: after a stop (track_stop) gradient flow's errors cover samples the
    # separation does not, so the lower bound need not hold there
    whole = [r["track_stop"] is None for r in runs]
    assert all(lo_ - 1e-6 <= x <= hi_ + 1e-6 for x, (lo_, hi_), w in zip(sep, bounds, whole, strict=True) if w)
    assert any(whole)  # the consistency check is not empty
    assert k == n
    assert max(sharp) < 1  # the tolerance is not inflated past the oscillation it averages out


@claim("CF-1.track-scalar", reading=READ_TRACK, fitted=EOS_FITTED)
@uses("central_flow.eos_track")
def test_track_scalar(audit, results):
    _track(audit, results, "scalar")


@claim("CF-1.track-mf", reading=READ_TRACK, fitted=EOS_FITTED)
@uses("central_flow.eos_track")
def test_track_mf(audit, results):
    _track(audit, results, "mf")


@claim(
    "CF-1.track-relu",
    reading=READ_TRACK + "; measured up to the central flow's stop at a sliding boundary, if any",
    fitted=EOS_FITTED,
)
@uses("central_flow.eos_track")
def test_track_relu(audit, results):
    _track(audit, results, "relu")
    assert np.all([r["first"] is not None for r in results["central_flow.eos_track"]])


READ_SEP = (
    "EoS family of experiments.eos_problem at experiments.EOS_SEPARATE ("
    + "; ".join(
        f"{m}: eta = {g['eta']:g}, {'eta y' if m == 'scalar' else 'c'} = {g['c']:g}, start scale {g['scale']:g}, "
        f"{g['steps']} steps"
        for m, g in E.EOS_SEPARATE.items()
    )
    + "): an imbalance left after the catapult for the curvature term to move and horizons of the order of its drift's "
    "time scale, the setting fixed on draws 100-119 of the family (not the audit's) by the two flows' separation "
    "alone (see evidence); both flows start at the first GD midpoint below the edge from "
    + " / ".join(sorted({f"{g['lag']}" for g in E.EOS_SEPARATE.values()}))
    + " steps after GD first reaches it (the EoS window of CF-1.eos-*: past the catapult and its decaying transient "
    "oscillation); 'describes' read as in CF-1.track-* (every quantity within C (rho + a^2), C = 10, rho and a over "
    "the compared steps), and 'not gradient flow' as: the same check applied to gradient flow fails"
)
#: the design scan behind EOS_SEPARATE: draws 100-119 of the family (disjoint from the audit's), flows only (the
#: separation max_t |theta_CF - theta_GF| (and the law) over the tolerance, flow_gap), lag 400 unless said
SEP_DESIGN = (
    "scalar, eta y = 1.0005, start scale 0.5, 3000 steps: EoS sustained in 20 of 20 draws; separation 1.51-3.92 "
    "tolerances, > 2 in 6 of 8 (lag 50, the earlier setting: 0.56-1.36 in the audit's draws; the tolerance is set by "
    "the catapult's transient oscillation, a = 0.033 at lag 50 against 0.015 at lag 400)",
    "mf, c = 1.002, start scale 0.5 (the earlier setting): EoS sustained in 7 of 20 draws",
    "mf, c = 1.002, start scale 0.3 (CF-1.eos-mf's setting), 2000 steps: sustained in 17 of 20; separation 0.40-2.34 "
    "in the 4 sustaining of draws 100-105, > 2 in at most 2 (the steady oscillation at c - 1 = 0.002, a = 0.019, "
    "floors the tolerance)",
    "mf, c = 1.0005, start scale 0.3, 1500 steps: sustained in 20 of 20; separation 1.17-3.95, > 2 in 7 of 10 "
    "(a = 0.012-0.019)",
)


GF_FALSE = 0.05  # the alternative's false-alarm rate per draw: gradient flow failing only by a tolerance-sized chance
DECIDE_MARGIN = 1e-6  # a draw's gradient-flow ratio must lie this far from the threshold 1 (relative): a 1e-12
#                       relative start perturbation moves these ratios by < 1e-10 (measured with --perturb 1e-12:
#                       largest relative shift 5e-11 over 3000 steps), so a draw closer than this would be counted by
#                       rounding; the check fails instead of counting it


def _k_star(n: int) -> int:
    """The pre-registered rejection count against gradient flow: the least k with P(Bin(n, GF_FALSE) >= k) <= 0.05.

    n + 1 (never reject) when no count of n draws keeps the false-alarm rate at or below 0.05.
    """
    return next(j for j in range(n + 2) if j > n or stats.binom.sf(j - 1, n, GF_FALSE) <= 0.05)


def _against_gf(audit, n: int, failed: int, q: float, effect: str) -> int:
    """Record the power of the fixed rule against "time-averaged GD follows gradient flow"; return k_star.

    Under that alternative the same check applied to gradient flow fails in a draw only by a tolerance-sized false
    alarm, at a rate <= GF_FALSE; it is rejected when gradient flow fails in >= k_star of the n draws (false-alarm
    rate <= 0.05). The power is P(Bin(n, q) >= k_star) at the effect q, the share of draws where gradient flow must
    fail, from the flows alone (``effect`` says how q was found); never from the observed count ``failed``.
    """
    k_star = _k_star(n)
    # the rule as fixed: its false-alarm rate is at most 0.05, and k_star is the least count with that property
    assert k_star > n or stats.binom.sf(k_star - 1, n, GF_FALSE) <= 0.05, "the rule's false-alarm rate exceeds 0.05"
    assert k_star == 0 or stats.binom.sf(k_star - 2, n, GF_FALSE) > 0.05, "k_star is not the least such count"
    audit.power(
        power_of_region(n, q, [j >= k_star for j in range(n + 1)]) if q > 0 and k_star <= n else 0.0,
        alternative=f"time-averaged GD follows gradient flow (the central flow's curvature term absent; gradient flow "
        f"fails the check only by false alarm, rate <= {GF_FALSE}), rejected when it fails in >= {k_star} of {n} "
        f"draws (observed {failed}); effect: {effect}",
        method=f"exact: P(Bin({n}, q) >= {k_star}) (numerics.stats.power_of_region); the rule's false-alarm rate "
        f"P(Bin({n}, {GF_FALSE}) >= {k_star}) = {stats.binom.sf(k_star - 1, n, GF_FALSE):.3f}",
        label="against gradient flow",
    )
    return k_star


def _separate(audit, results, model: str) -> None:
    every = [r for r in results["central_flow.eos_separate"] if r["model"] == model]
    # the claim is about the oscillatory regime: only draws that sustain EoS (the CF-1.eos-* criterion, from GD's
    # sharpness and amplitude alone, before any flow is compared) and have a flow pair (a sub-edge midpoint after the
    # catapult, and a central flow that ran) are counted; the others are reported as dropped, never as failures
    runs = [r for r in every if r["sustained"] and r["cf"] is not None]
    dropped = [r["draw"] for r in every if not r["sustained"]]
    no_pair = [r["draw"] for r in every if r["sustained"] and r["cf"] is None]
    if no_pair:
        audit.evidence(
            f"Draws {no_pair} sustain EoS but have no flow pair (no sub-edge midpoint within 100 steps after the "
            "catapult, or a central flow with no sample): dropped, not counted as failures."
        )
    n = len(runs)
    assert n >= 1, f"none of the {len(every)} draws sustains EoS with a flow pair: nothing to compare"
    ok = [r["cf"] is not None and max(r["cf"]["errors"].values()) <= r["cf"]["tol"] for r in runs]
    cf = [max(r["cf"]["errors"].values()) / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    gf = [max(r["gf"]["errors"].values()) / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    gf_law = [r["gf"]["errors"]["law"] / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    k, kg = sum(ok), sum(g > 1 for g in gf)
    margin = min(abs(g - 1) for g in gf)
    lo, hi = clopper_pearson_interval(k, n)
    glo, ghi = clopper_pearson_interval(kg, n)
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws tracking the central flow")
    audit.ours(
        f"{kg} of {n} (Clopper-Pearson 95%: [{glo:.3f}, {ghi:.3f}])", label="draws where gradient flow fails the check"
    )
    audit.ours(
        f"{n} of {len(every)} (dropped: draws {dropped})",
        label="draws sustaining EoS over the 400 steps past the edge (CF-1.eos-* criterion), the only ones counted",
    )
    audit.ours(cf, 3, label="largest error / tolerance, central flow")
    audit.ours(gf, 3, label="largest error / tolerance, gradient flow")
    audit.ours(gf_law, 3, label="gradient flow's law error / tolerance")
    audit.ours([r["cf"]["tol"] if r["cf"] else None for r in runs], 3, label="tolerance C (rho + a^2) per draw")
    audit.ours(margin, 3, label="distance of the nearest gradient-flow ratio from the threshold 1")
    audit.ours(list(SEP_DESIGN), label="design scan behind the setting (draws 100-119, not the audit's; flows only)")
    audit.tolerance(EOS.TRACK_C, "C in C (rho + a^2), as in CF-1.track-* (fixed before these runs)", label="C")
    audit.tolerance(
        DECIDE_MARGIN,
        "least distance of a gradient-flow ratio from 1 for the draw to be counted: a 1e-12 relative start "
        "perturbation moves the ratios by < 1e-10 (measured), so no count below rests on rounding",
        label="decision margin",
    )
    audit.evidence(
        f"{n} draws counted: of {len(every)}, {len(dropped)} (draws {dropped}) do not sustain EoS (CF-1.eos-* "
        "criterion, from GD alone) and are dropped before any comparison, since the claim is about the oscillatory "
        "regime: counted, draws outside it would decide for or against gradient flow on dynamics the claim is not "
        "about (asserting that every draw sustains EoS instead would fail this check on a property of our setting, "
        "reported by CF-1.eos-*; the power below is at the reduced count). "
        f"{E.EOS_SEPARATE[model]['steps']} steps compared from t = "
        f"{min(r.get('t_start', 0) for r in runs):.1f}-{max(r.get('t_start', 0) for r in runs):.1f}. The central flow "
        f"stays within C (rho + a^2) (largest ratio {max(cf):.2f}); gradient flow fails it in {kg} of {n} draws "
        f"(ratios {min(gf):.2f}-{max(gf):.2f}), through the law: GD's midpoints and the central flow move "
        "the conserved quantity along the valley while gradient flow keeps it. The other quantities do not part: "
        "gradient flow's sharpness excess over 2/eta and its loss gap are O(a^2) with constants below C = 10 in "
        "every setting inside the 10% band (measured in the settings of CF-1.track-* and here), so only a drift "
        "accumulated over a long horizon can exceed the tolerance. The count is robust: the nearest ratio lies "
        f"{margin:.3f} from the threshold, against shifts below 1e-10 from a 1e-12 start perturbation."
    )
    _power(audit, n, "tracking")
    # the effect comes from the flows alone, before any comparison with GD: in a draw whose two flows lie more than
    # 2 tolerances apart, GD within the tolerance of the central flow is more than one from gradient flow (triangle
    # inequality), so gradient flow must fail there; q is the fraction of such draws
    gap = [max(r["flow_gap"].values()) / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    q = sum(g > 2 for g in gap) / n
    audit.ours(gap, 3, label="flows' separation / tolerance (from the flows alone; > 2 forces gradient flow to fail)")
    audit.ours([r["catapult"] for r in runs], label="step where the catapult ends (eos.catapult_end)")
    k_star = _against_gf(
        audit,
        n,
        kg,
        q,
        f"the fraction q = {q:.3f} of draws whose two flows lie more than 2 tolerances apart "
        "(predicted from the flows, not from GD)",
    )
    audit.evidence(
        f"Pre-registered decision against gradient flow: rejected when it fails in >= {k_star} of {n} draws "
        f"(observed {kg}); the flows separate by more than 2 tolerances in {sum(g > 2 for g in gap)} of {n} draws "
        f"(separation / tolerance {min(gap):.2f}-{max(gap):.2f}), which sets the power. The catapult ends at step "
        f"{min(r['catapult'] for r in runs)}-{max(r['catapult'] for r in runs)}; the flows start after it. The "
        "setting was fixed on other draws of the family (100-119) from the flows alone, as the one nearest the earlier "
        "setting whose flows part by more than 2 tolerances in most draws sustaining EoS (design scan above): the "
        "tolerance takes a over the compared steps, so starting after the EoS window, once the catapult's transient "
        "oscillation has decayed, lowers it more than it lowers the imbalance the curvature term has left to move."
    )
    assert k == n
    assert all(r["cf_stop"] is None for r in runs)
    assert margin > DECIDE_MARGIN
    assert kg >= k_star, f"gradient flow fails in {kg} of {n} draws, below the rule's {k_star}: not rejected"


@claim("CF-1.separate-scalar", reading=READ_SEP + "; scalar: eta y > 1 as in CF-1.eos-scalar", fitted=EOS_FITTED)
@uses("central_flow.eos_separate")
def test_separate_scalar(audit, results):
    _separate(audit, results, "scalar")


@claim("CF-1.separate-mf", reading=READ_SEP, fitted=EOS_FITTED)
@uses("central_flow.eos_separate")
def test_separate_mf(audit, results):
    _separate(audit, results, "mf")


READ_REGIME = (
    "not a statement of the paper: a finding of ours (the paper states no regime for Figure 1's runs) that limits the "
    "GD half of Appendix B ('both gradient descent (GD) and the central flow (CF) leave that level set once EOS "
    "effects become active'): the verdict confirms our finding, no paper statement. "
    "The paper's scalar regime read as eta y < 1 (the stability bound 2 sqrt(eta^-2 - y^2) of Figure 1 right is real "
    "only there): GD of the EoS family (experiments.eos_problem) at eta = 0.9, c = eta y in 0.9, 0.95, 0.99 (full: "
    "also 0.8), start scales 0.3, 0.5 (full: 0.15-0.8), 2 draws per cell (full 6), 3000 steps; 'EOS dynamics "
    "sustained' read as in CF-1.eos-* (400 steps past the first reaching of 2/eta, >= 80% within 10% of 2/eta "
    "while oscillating) and as 'still at the edge and oscillating at the end'"
)
END_AMP = EOS.AMP_FLOOR  # "oscillating" at the end: the same floor as the EoS criterion
TERM_RTOL = 1e-9  # GD's final sharpness against sqrt(h_K^2 + 4 y^2): |e_K| <= 1e-12 moves lambda by O(e_K), rounding


def _terminal(r: dict) -> float:
    """Appendix B's stable terminal sharpness (SymPy, derivations.central_flow.scalar) at GD's h_K, times eta/2."""
    lam = S.terminal_lambda_max().subs({S.h_sym: sp.Float(r["hK"], 30), S.y: sp.Float(r["y"], 30)})
    return float(lam) * r["eta"] / 2


def _regime_rows(results) -> list[dict]:
    return [
        {**r, "term": _terminal(r), "bound": 2 * float(np.sqrt(r["eta"] ** -2 - r["y"] ** 2))}
        for r in results["central_flow.scalar_regime"]
    ]


@claim("CF-B.eos-regime", reading=READ_REGIME)
@uses("central_flow.scalar_regime")
def test_eos_regime_ours(audit, results):
    rows = _regime_rows(results)
    n, k = len(rows), sum(bool(r["sustained"]) for r in rows)
    end_edge = sum(r["lamK"] >= 1 or r["amp_end"] >= END_AMP for r in rows)
    term = max(abs(r["lamK"] - r["term"]) / r["term"] for r in rows)
    below = max(abs(r["hK"]) / r["bound"] for r in rows)
    lo, hi = clopper_pearson_interval(k, n)
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws sustaining EoS (400 steps)")
    audit.ours(f"{end_edge} of {n}", label="draws at the edge or oscillating after 3000 steps")
    audit.ours([(r["c"], r["scale"], round(r["frac_eos"], 3)) for r in rows], label="(eta y, scale, EoS fraction)")
    audit.ours([round(r["lamK"], 4) for r in rows], label="lambda_max eta/2 at step 3000")
    audit.ours(term, 3, label="max |lambda_K - sqrt(h_K^2 + 4 y^2)| / sqrt(h_K^2 + 4 y^2)")
    audit.ours(below, 3, label="max |h_K| / (2 sqrt(eta^-2 - y^2))")
    audit.ours(max(abs(r["eK"]) / r["y"] for r in rows), 3, label="max |u_K v_K - y| / y")
    audit.tolerance(TERM_RTOL, "the terminal sharpness formula at a converged state (|e_K| ~ 1e-14): rounding")
    edge = [r for r in rows if r["energy_edge"] is not None]
    audit.evidence(
        f"{n} draws over {len({(r['c'], r['scale']) for r in rows})} cells of the paper's regime eta y < 1. None "
        "sustains EoS: the EoS fractions are "
        f"{min(r['frac_eos'] for r in rows):.3f}-{max(r['frac_eos'] for r in rows):.3f}, and after 3000 steps every "
        f"draw sits at a zero-loss point (|e_K|/y <= {max(abs(r['eK']) / r['y'] for r in rows):.0e}) below the edge "
        f"(lambda eta/2 = {min(r['lamK'] for r in rows):.4f}-{max(r['lamK'] for r in rows):.4f}) whose sharpness is "
        f"Appendix B's stable terminal value sqrt(h_K^2 + 4 y^2) (SymPy; to {term:.0e}), with |h_K| below the bound "
        f"(at most {below:.3f} of it). The reason, derived: GD obeys h_(k+1) = h_k (1 - eta^2 e_k^2) exactly "
        "(CF-B.leave-gd), so every oscillation step shrinks |h| and sum_k eta^2 e_k^2 <= log(h_first/h_K); the "
        "minimum at h has sharpness sqrt(h^2 + 4 y^2), below 2/eta once |h| < 2 sqrt(eta^-2 - y^2), which for "
        "eta y < 1 is positive: the oscillation spends a finite budget log(h_first/bound) (spent here from the first "
        f"reaching of the edge: {min(r['energy_edge'] for r in edge):.3f}-{max(r['energy_edge'] for r in edge):.3f}) "
        "and GD lands on a stable minimum. For eta y >= 1 no minimum is stable (sqrt(h^2 + 4 y^2) >= 2y >= 2/eta) "
        "and GD must keep oscillating: that is why the EoS settings (CF-1.eos-*) take eta y = 1.0005. What this "
        "finding limits: wherever Figure 1's bound exists GD sustains the EOS dynamics in none of the draws ("
        f"{k} of {n}) and ends at |h_K| <= {below:.3f} x the bound, off Figure 1 right's identity line (which the "
        "paper states for the central flow's |h|, CF-B.fig1-saturate); so Appendix B's 'GD ... once EOS effects "
        "become active' describes a transient contact of GD with the edge there, not sustained EOS dynamics. This is "
        "our finding, not a paper statement confirmed."
    )
    _power(audit, n, "not sustaining EoS")
    assert k == 0 and end_edge == 0
    assert term <= TERM_RTOL and below < 1


READ_ACROSS = (
    "boundary.boundary_problem: the ReLU EoS setting of CF-1.eos-relu (eta = 0.9, c = 1.002, start scale 0.3) plus one "
    "teacher-inactive sample 0.05 below the teacher's boundary, so that a unit's pre-activation on it drifts through 0 "
    "while GD is at the edge; 'a boundary event at the edge' read as: the first change of the midpoints' gate pattern "
    "after the catapult's end (eos.catapult_end), with lambda_max eta/2 within 10% of 1 at every compared step; the "
    "central flow across it read as our averaged central flow (averaged.averaged_central_flow: the paper's "
    "w' = -eta E[grad L(w + delta)] with a self-consistent Gaussian rank-one delta); 'describes' read as in "
    "CF-1.track-*: the midpoints at t = k + 1/2 against the flow started at the first sub-edge midpoint at most 30 "
    "steps before the event, parameters, laws, sharpness and loss within C (rho + a^2), C = 10, rho and a over the "
    "compared steps, before the event and after it"
)
ACROSS_FITTED = {
    "margin 0.1 below the teacher's boundary": "2 of 6 draws with an event at the edge (the search of boundary.SEARCH)",
    "margin 0.2 below": "0 of 8 draws with an event at the edge: nothing to compare",
    "margin 0.05 / 0.1 / 0.2 above (teacher-active extra sample)": "2/6, 1/6, 1/8 draws with an event; one draw "
    "chatters (4 events in 10 steps), and at 0.2 six of eight draws leave the 10% band",
}


@claim("CF-1.track-relu-across", reading=READ_ACROSS, fitted=ACROSS_FITTED)
@uses("central_flow.boundary_track")
def test_track_relu_across_boundary(audit, results):
    from numerics.central_flow import averaged as AV

    runs = results["central_flow.boundary_track"]
    used = [r for r in runs if r["used"]]
    n = len(used)
    assert n >= 1, f"no draw of {len(runs)} tried has a boundary event at the edge"
    tol = [r["tol"] for r in used]
    ratio = {
        (f, w): [max(r["errors"][f][w].values()) / r["tol"] if r["errors"][f][w] else float("nan") for r in used]
        for f in ("acf", "frozen", "gf")
        for w in ("pre", "post")
    }
    ok = [a <= 1 and b <= 1 for a, b in zip(ratio["acf", "pre"], ratio["acf", "post"])]
    k = sum(ok)
    lo, hi = clopper_pearson_interval(k, n)
    audit.ours(f"{n} of {len(runs)}", label="draws tried with a boundary event at the edge (used)")
    audit.ours([(r["draw"], r["why"]) for r in runs if not r["used"]], label="draws not used (why)")
    audit.ours(
        [(r["draw"], r["settle"], r["event"], r["pairs"], "off" if r["dir"] == 0 else "on") for r in used],
        label="(draw, catapult end, event midpoint k_b, (sample, unit) pairs, gate turned)",
    )
    audit.ours([r["qjump"] for r in used], 3, label="Hessian jump along q at the event, q^T (H_new - H_old) q eta/2")
    audit.ours([r["straddle"] for r in used], label="steps whose two iterates straddle the event's boundary")
    audit.ours(
        [(r["t_start"], r["acf_cross"], r["t_end"]) for r in used],
        3,
        label="(flows' start, averaged flow's crossing, end)",
    )
    audit.ours(
        f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws tracking the averaged flow across"
    )
    for (f, w), v in ratio.items():
        audit.ours(v, 3, label=f"largest error / tolerance, {f}, {w} the event")
    audit.ours(tol, 3, label="tolerance C (rho + a^2) per draw")
    audit.ours([r["sep_frozen"] / r["tol"] if r["sep_frozen"] is not None else None for r in used], 3,
               label="frozen flow's separation from the averaged flow after the event / tolerance")  # fmt: skip
    audit.ours(
        [r["sep_gf"] / r["tol"] for r in used], 3, label="gradient flow's separation after the event / tolerance"
    )
    audit.tolerance(EOS.TRACK_C, "C in C (rho + a^2), as in CF-1.track-* (fixed before these runs)", label="C")
    _power(audit, n, "tracking across the event")
    # against each alternative, as in CF-1.separate-*: if GD is within the tolerance of the averaged flow, an
    # alternative more than 2 tolerances from it must fail the check (triangle inequality); q = the share of draws
    # where it is, from the flows alone; the rule rejects the alternative when it fails in >= k_star draws
    k_star = next(j for j in range(n + 2) if j > n or stats.binom.sf(j - 1, n, GF_FALSE) <= 0.05)
    for name, key, what in (
        ("frozen", "sep_frozen", "time-averaged GD follows the central flow frozen in the pre-event region (the event "
         "ignored)"),
        ("gf", "sep_gf", "time-averaged GD follows gradient flow (no curvature term)"),
    ):  # fmt: skip
        q = sum(r[key] is not None and r[key] > 2 * r["tol"] for r in used) / n
        fails = sum(v > 1 for v in ratio[name, "post"])
        audit.power(
            power_of_region(n, q, [j >= k_star for j in range(n + 1)]) if q > 0 else 0.0,
            alternative=f"{what}; rejected when it fails the check after the event in >= {k_star} of {n} draws "
            f"(observed {fails}); effect: the share q = {q:.3f} of draws whose flows separate by more than 2 "
            "tolerances after the event (from the flows, not from GD)",
            method=f"exact: P(Bin({n}, q) >= {k_star}) (numerics.stats.power_of_region)",
            label=f"against the {name} flow",
        )
    jump = max(abs(r["qjump"]) for r in used)
    crossed = [r for r in used if r["acf_cross"] is not None]
    audit.evidence(
        f"{n} of {len(runs)} draws have a boundary event at the edge: a unit's pre-activation on the extra sample "
        f"drifts through 0 after the catapult (midpoint k_b = {min(r['event'] for r in used)}-"
        f"{max(r['event'] for r in used)}) while the iterates straddle that boundary for "
        f"{min(r['straddle'] for r in used)}-{max(r['straddle'] for r in used)} steps. The averaged flow "
        f"crosses in {len(crossed)} of {n} draws inside the window, "
        f"{', '.join(format(r['acf_cross'] - r['event'], '.1f') for r in crossed)} steps after GD's midpoints (a slow "
        "drift of a small pre-activation; its timing is not a tracked quantity). GD's midpoints stay within "
        f"C (rho + a^2) of the averaged flow before and after the event in {k} of {n} draws (largest ratio after "
        f"{max(ratio['acf', 'post']):.2f}), but so does the frozen flow (after: {max(ratio['frozen', 'post']):.2f}); "
        f"gradient flow fails it in {sum(v > 1 for v in ratio['gf', 'post'])} of {n} (largest "
        f"{max(ratio['gf', 'post']):.2f}). The event is weak where GD meets it at the edge: the "
        f"Hessian's jump along the critical direction is at most {jump:.1e} of 2/eta (the crossing sample is nearly "
        "orthogonal to q's first-layer part), and the flows part by at most "
        f"{max((r['sep_frozen'] or 0) / r['tol'] for r in used):.2f} (frozen) and "
        f"{max(r['sep_gf'] / r['tol'] for r in used):.2f} (gradient flow) tolerances after it, so the check cannot "
        "tell the averaged flow from a flow that ignores the event: no power against either alternative. "
        "Inside one region the averaged flow is the central flow (tests/test_central_flow_continuation.py)."
    )
    assert all(r["acf_residual"] <= AV.FIXED_TOL for r in used)
    assert all(r["tol"] < r["a"] for r in used)  # the tolerance is not inflated past the oscillation it averages out
    assert k == n
