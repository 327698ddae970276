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
flow started at the last midpoint below the edge, on parameters, GF law(s), sharpness and the
time-averaged loss, each within C (rho + a^2), C = 10 (``eos.tracking_tolerance``), over
``eos_track_steps`` steps from the first reaching of the edge (to the flow's stop, if any).
"""

from __future__ import annotations

import numpy as np

from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.stats import clopper_pearson_interval
from verify.audit import claim, uses
from verify.central_flow import EOS_FITTED

ALT_FAIL = 0.25  # the alternative: the property fails in a quarter of the draws
READ = (
    "EoS settings of experiments.EOS_SETTINGS (eta = 0.9, c = eta lambda*/2 = 1.002 (scalar: eta y = 1.0005), start "
    "scale 0.3; the paper's settings are lost); 'EOS regime' read as: for 400 steps after first reaching 2/eta, >= 80% "
    "of steps within 10% of 2/eta while oscillating (period-two amplitude >= 1e-3 |theta|)"
)
READ_TRACK = (
    "EoS settings as in CF-1.eos-*; 'time-averaged trajectory' read as the adjacent-iterate midpoints at t = k + 1/2 "
    "(the 2-step average for the loss) against the hybrid central flow from the last midpoint below the edge; "
    "'describes' read as: parameters, laws, sharpness and loss within C (rho + a^2), C = 10"
)


def _power(audit, n: int, what: str) -> None:
    audit.power(
        1 - (1 - ALT_FAIL) ** n,
        alternative=f"{what} fails in a quarter of the draws",
        method=f"exact: P(at least one of {n} independent draws fails) = 1 - 0.75^{n}",
    )


def _eos(audit, results, model: str) -> None:
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == model]
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
        "scan cell is one draw, and the scalar's eta y = 1.0005 is not a quick-grid point (the quick grid uses "
        "1.002 for every model)."
    )
    _power(audit, n, "sustained EoS")
    assert k == n
    assert all(not r["sustained"] for r in below)


@claim(
    "CF-1.eos-scalar",
    reading=READ + "; scalar: eta y = 1.0005 > 1, outside the paper's eta y < 1 (see evidence)",
    fitted=EOS_FITTED,
)
@uses("central_flow.eos_track", "central_flow.eos_scan")
def test_eos_scalar(audit, results):
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == "scalar"]
    model, _, eta = E.scalar_eos_setting(E.SEED, 0)
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
        f"{eta * y:.4f} (no stable minimum), {len(runs)} draws."
    )
    assert bud["recursion"] <= 1e-12
    _eos(audit, results, "scalar")


@claim("CF-1.eos-mf", reading=READ, fitted=EOS_FITTED)
@uses("central_flow.eos_track", "central_flow.eos_scan")
def test_eos_mf(audit, results):
    _eos(audit, results, "mf")


@claim(
    "CF-1.eos-relu",
    reading=READ + "; ReLU: one-unit teacher, inputs and start in the all-active region",
    fitted=EOS_FITTED,
)
@uses("central_flow.eos_track", "central_flow.eos_scan")
def test_eos_relu(audit, results):
    _eos(audit, results, "relu")


def _track(audit, results, model: str) -> None:
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == model]
    ok = [r["tracked"] is not None and max(r["tracked"]["errors"].values()) <= r["tracked"]["tol"] for r in runs]
    n, k = len(runs), sum(ok)
    lo, hi = clopper_pearson_interval(k, n)
    worst = [max(r["tracked"]["errors"].values()) / r["tracked"]["tol"] for r in runs]
    gf = [max(r["gf"]["errors"].values()) / r["tracked"]["tol"] for r in runs]
    law = [r["tracked"]["errors"]["law"] / max(r["gf"]["errors"]["law"], 1e-300) for r in runs]
    stops = [(r["draw"], r["cf_stop"]) for r in runs if r["cf_stop"]]
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws tracking the central flow")
    audit.ours(
        [r["tracked"]["errors"] for r in runs], 3, label="max relative errors per draw (theta, law, sharpness, loss)"
    )
    audit.ours([r["tracked"]["tol"] for r in runs], 3, label="tolerance C (rho + a^2) per draw")
    audit.ours(worst, 3, label="largest error / tolerance, central flow")
    audit.ours(gf, 3, label="largest error / tolerance, gradient flow (alternative without curvature term)")
    audit.ours(law, 3, label="law error CF / law error GF")
    audit.ours(stops, label="central flows stopped (draw, reason)")
    audit.tolerance(
        EOS.TRACK_C,
        "C in C (rho + a^2): rho = GD's largest relative slow step (O(eta) discretisation), a = its largest relative "
        "period-two amplitude (the central flow's neglected terms are O(a^2) for these quartic losses)",
        label="C",
    )
    audit.evidence(
        f"{n} draws, compared over {runs[0]['t_end'] - runs[0]['first']:.0f} steps from the first reaching of the edge"
        f"{' (to the flow stop where one occurred)' if stops else ''}. Gradient flow from the same start is within the "
        f"same tolerance too (largest ratio {max(gf):.2f}): near c = 1 the oscillation, hence sigma^2, is small, so "
        "this check confirms consistency but cannot tell the curvature term apart from GF except through the laws "
        f"(CF's law error is {min(law):.2f}-{max(law):.2f} x GF's)."
    )
    _power(audit, n, "tracking")
    # the alternative the claim is about: time-averaged GD follows gradient flow, without the central flow's
    # curvature term. The same check with GF in place of the central flow fails in `rejected` of the n draws; the
    # check as a whole tells the two apart only if it fails GF in at least one draw (deterministic runs)
    rejected = sum(g > 1 for g in gf)
    audit.power(
        1.0 if rejected else 0.0,
        alternative="time-averaged GD follows gradient flow (the central flow's curvature term absent)",
        method=f"deterministic: the same tolerance check applied to gradient flow fails in {rejected} of {n} draws",
        label="against gradient flow",
    )
    assert k == n


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
    "EoS family of experiments.eos_problem at experiments.EOS_SEPARATE (scalar: eta = 0.9, eta y = 1.0005, start "
    "scale 0.5, 3000 steps; mf: eta = 0.9, c = 1.002, start scale 0.5, 1000 steps): a larger start than CF-1.track-* "
    "(more imbalance survives the catapult) and horizons of the order of the curvature drift's time scale; both "
    "flows start at the first GD midpoint below the edge from 50 steps after GD first reaches it (past the catapult); "
    "'describes' read as in CF-1.track-* (every quantity within C (rho + a^2), C = 10), and 'not gradient flow' as: "
    "the same check applied to gradient flow fails"
)


DECIDE_MARGIN = 1e-6  # a draw's gradient-flow ratio must lie this far from the threshold 1 (relative): a 1e-12
#                       relative start perturbation moves these ratios by < 1e-10 (measured with --perturb 1e-12:
#                       largest relative shift 5e-11 over 3000 steps), so a draw closer than this would be counted by
#                       rounding; the check fails instead of counting it


def _separate(audit, results, model: str) -> None:
    runs = [r for r in results["central_flow.eos_separate"] if r["model"] == model]
    n = len(runs)
    ok = [r["cf"] is not None and max(r["cf"]["errors"].values()) <= r["cf"]["tol"] for r in runs]
    cf = [max(r["cf"]["errors"].values()) / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    gf = [max(r["gf"]["errors"].values()) / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    gf_law = [r["gf"]["errors"]["law"] / r["cf"]["tol"] if r["cf"] else float("nan") for r in runs]
    sustained = [bool(r["sustained"]) for r in runs]
    k, kg, ks = sum(ok), sum(g > 1 for g in gf), sum(sustained)
    margin = min(abs(g - 1) for g in gf)
    lo, hi = clopper_pearson_interval(k, n)
    glo, ghi = clopper_pearson_interval(kg, n)
    audit.ours(f"{k} of {n} (Clopper-Pearson 95%: [{lo:.3f}, {hi:.3f}])", label="draws tracking the central flow")
    audit.ours(
        f"{kg} of {n} (Clopper-Pearson 95%: [{glo:.3f}, {ghi:.3f}])", label="draws where gradient flow fails the check"
    )
    audit.ours(f"{ks} of {n}", label="draws sustaining EoS over the 400 steps past the edge (CF-1.eos-* criterion)")
    audit.ours(cf, 3, label="largest error / tolerance, central flow")
    audit.ours(gf, 3, label="largest error / tolerance, gradient flow")
    audit.ours(gf_law, 3, label="gradient flow's law error / tolerance")
    audit.ours([r["cf"]["tol"] if r["cf"] else None for r in runs], 3, label="tolerance C (rho + a^2) per draw")
    audit.ours(margin, 3, label="distance of the nearest gradient-flow ratio from the threshold 1")
    audit.tolerance(EOS.TRACK_C, "C in C (rho + a^2), as in CF-1.track-* (fixed before these runs)", label="C")
    audit.tolerance(
        DECIDE_MARGIN,
        "least distance of a gradient-flow ratio from 1 for the draw to be counted: a 1e-12 relative start "
        "perturbation moves the ratios by < 1e-10 (measured), so no count below rests on rounding",
        label="decision margin",
    )
    audit.evidence(
        f"{n} draws, {E.EOS_SEPARATE[model]['steps']} steps compared from t = "
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
    # against "GD follows gradient flow": the ensemble check rejects it when gradient flow fails in at least one draw;
    # a fresh ensemble of n draws does so with probability 1 - (1 - p)^n, p the per-draw rejection rate, taken at
    # its 95% Clopper-Pearson lower bound (conservative)
    audit.power(
        1 - (1 - glo) ** n,
        alternative="time-averaged GD follows gradient flow (the central flow's curvature term absent)",
        method=f"1 - (1 - p)^{n} at p = {glo:.3f}, the Clopper-Pearson 95% lower bound of {kg} of {n} draws in which "
        "the same check applied to gradient flow fails",
        label="against gradient flow",
    )
    assert k == n
    assert all(r["cf_stop"] is None for r in runs)
    assert margin > DECIDE_MARGIN


@claim("CF-1.separate-scalar", reading=READ_SEP + "; scalar: eta y > 1 as in CF-1.eos-scalar", fitted=EOS_FITTED)
@uses("central_flow.eos_separate")
def test_separate_scalar(audit, results):
    _separate(audit, results, "scalar")


@claim("CF-1.separate-mf", reading=READ_SEP, fitted=EOS_FITTED)
@uses("central_flow.eos_separate")
def test_separate_mf(audit, results):
    _separate(audit, results, "mf")
