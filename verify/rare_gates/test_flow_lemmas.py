"""Checks of the asymptotic gradient-flow statements (Section 5; Appendices 13, 15, 16, 17).

Every trajectory is integrated by :func:`numerics.rare_gates.population_flow.flow` (adaptive
Dormand-Prince 8(5,3), rtol 1e-12 with a relative error scale on every component, on the
float64 population field of :mod:`numerics.rare_gates.model`). The statements are asymptotic
and hold for every initial point of a set; they are checked on deterministic samples of the set
(fixed seeds), reported with the worst case. Constants the paper does not give (C, C_0, C_s,
B_min) are measured, and the check is of the rate or shape.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from derivations.rare_gates import dynamics as DY
from derivations.rare_gates import kernels as KE
from derivations.rare_gates import symbols as SY
from numerics.rare_gates import model
from numerics.rare_gates import population_flow as pf
from numerics.rare_gates.experiments import in_d0
from numerics.rare_gates.initialization import DEFAULT_M_INNER, DEFAULT_M_OUTER, k_slack
from verify.audit import claim
from verify.rare_gates import source_flows as SF
from verify.rare_gates.source_flows import B_S, D0_SEED, D_FLOOR, GAMMA_MIN, LAM, N_D0, OPPOSITE, RTOL, T_CORNER, T_SRC

Q = 2.0 / math.pi  # q = E[relu(e1.X)|X|] (derivations.rare_gates.kernels.q_constant)
A = Q - LAM  # target clone rate
R_GOOD = 1.0 - 2.0 * Q**2 + 2.0 * LAM**2  # target risk at delta = pi, omega_i = 2A (RG-16.Rgood)

D_READING = (
    "D (Section 3, the display kept): a_i > 0, 0 < omega_i < 1, vartheta_1 > 0 > vartheta_2, "
    "vartheta_1 - vartheta_2 < pi; D0 as in numerics.rare_gates.experiments.in_d0 (omega_1 + omega_2 < 3/4, "
    "either labelling); delta_s(T) is the angle between w_1 and w_2 after source GF for time T."
)


def _q(values, p):
    return float(np.quantile(np.asarray(values), p))


def _e_bound(theta) -> float:
    """Our bound |e| <= sqrt2 a_1 a_2 |(1, u_1)| d / |z_1 + z_2| (z_i = (a_i, w_i), u_i = w_i/a_i)."""
    a1, a2 = theta[0], theta[1]
    u1 = theta[2:4] / a1
    z = np.array([a1 + a2, theta[2] + theta[4], theta[3] + theta[5]])
    o = pf.observables(theta)
    return math.sqrt(2.0) * a1 * a2 * math.sqrt(1.0 + float(u1 @ u1)) * o["u_diff"] / float(np.linalg.norm(z))


K_READING = (
    f"K is Appendix 18's set symmetrised over the unit swap (RG-18.PK), with the margins m = {DEFAULT_M_INNER}, "
    f"M = {DEFAULT_M_OUTER} fitted in RG-18.Kbound (lost in conversion); membership by "
    "numerics.rare_gates.initialization.in_k"
)


@claim(
    "RG-17.Cs",
    reading=D_READING + "; " + K_READING + ". What can fail is the limit (log delta_s + lambda T settling to "
    "log C_s on every sampled draw) and the location of the largest C_s in K; the lemma's bounds 0 < C_- <= C_s "
    "<= C_+ < oo over compact K hold for any finite sample, so the sampled range of C_s over the draws in K is "
    "reported as a lower bound on C_+ (and an upper bound on C_-), not tested against the paper, which gives "
    "neither constant",
)
def test_source_angle_constant(audit):
    rows = SF.d0_source()["rows"]
    ent = SF.k_entry()
    ink, opp = ent["in_k"], ent["opp"]
    i3000 = int(np.searchsorted(T_SRC, 3000.0))
    i400 = int(np.searchsorted(T_SRC, 400.0))
    logC = np.array([r["logC"][-1] for r in rows])
    drift = np.array([abs(r["logC"][-1] - r["logC"][i3000]) for r in rows])
    t_reg = ent["reg1"]
    log_omega_min = np.array([math.log(min(r["omega1"][-1], r["omega2"][-1])) for r in rows])
    qs = (0.0, 0.1, 0.5, 0.9, 1.0)
    C = np.exp(logC)
    CK = C[ink]
    n_k = int(ink.sum())
    audit.ours(n_k, label=f"D0 draws in K (of n = {N_D0})")
    audit.ours(_q(CK, 0.0), 6, label="min C_s over the draws in K (an upper bound on C_-)")
    audit.ours(_q(CK, 0.5), 6, label="median C_s over the draws in K")
    audit.ours(_q(CK, 1.0), 6, label="max C_s over the draws in K (a lower bound on C_+)")
    audit.ours(float(drift.max()), 3, label="max |log C(4000) - log C(3000)|")
    vac = {g: max(SF.vacuity_time(r, g) for r, k in zip(rows, ink) if k) for g in (GAMMA_MIN, LAM)}
    audit.ours(
        f"T < {vac[LAM]:.0f} (gamma -> lambda); T < {vac[GAMMA_MIN]:.0f} (gamma = lambda/2)",
        label="where Theorem 1's term (C b/eta) e^{-gamma T} is >= 1 on our K draws (at c b/eta = 1)",
    )

    def qtxt(v):
        return ", ".join(f"{_q(v, p):.3g}" for p in qs)

    slow = t_reg > 400.0
    oppk, restk = ink & opp, ink & ~opp
    ratio400 = [
        f"{rows[j]['delta'][i400]:.2g} vs {math.exp(logC[j] - 400 * LAM):.2g}" for j in np.nonzero(slow & ink)[0]
    ]
    audit.evidence(
        f"Source GF (DOP853, rtol {RTOL:g}, relative error scale on every component) from n = {N_D0} D0 draws "
        f"(seed {D0_SEED}), lambda = {LAM}, T in [0, 4000]. log C_s := log delta_s(4000) + 4000 lambda; the "
        f"1 + o(1) factor has converged: log delta_s + lambda T changes by at most {drift.max():.2g} from T = 3000 "
        "to 4000 (tolerance 1e-6: the O(delta_s) remainder of RG-17.dlog integrates to < 1e-20 there, the "
        f"integrator's relative error is ~1e-12 per unit time). K membership: {n_k} of the {N_D0} draws lie in K "
        f"(smallest slack of K's constraints {float(np.min(k_slack(SF.d0_source()['X'])[ink])):.2g}), so the lemma "
        f"applies to them. C_s over the draws in K, quantiles (0, 10, 50, 90, 100%): {qtxt(CK)}. Near-opposite "
        f"draws in K (initial angle > {OPPOSITE}; {int(oppk.sum())}/{n_k} = {oppk.sum() / max(n_k, 1):.0%}): "
        f"{qtxt(C[oppk])}; the rest ({int(restk.sum())}): {qtxt(C[restk])}. Lemma 13's constant on K is therefore "
        f"C_+ >= {CK.max():.2g} (and C_- <= {CK.min():.2g}), from a sample of {n_k} K draws: a one-sided bound, "
        "the sample cannot bound C_+ from above. Points of K's angular face (RG-17.entry) still have delta_s ~ pi at "
        "T = 6000, where log delta_s + lambda T ~ 300: they suggest a far larger C_+ (not measured: their limit lies "
        "beyond the integrable horizon)."
    )
    audit.evidence(
        f"Why C_s is so large: {int(slow.sum())} draws (all near-opposite: {bool(np.all(opp[slow]))}; in K: "
        f"{bool(np.all(ink[slow]))}) enter the e^{{-lambda T}} regime (first T after which |d log delta/dT + lambda| "
        f"<= 0.01 lambda) only after T = 400, the latest at T = {t_reg.max():.0f} (near-opposite {qtxt(t_reg[opp])}; "
        f"rest {qtxt(t_reg[~opp])}): one unit starts nearly opposite to e1, stays nearly dead (omega_i decays like "
        "e^{-2 lambda T}) while its angle creeps in, so delta_s stays O(1) while e^{lambda T} grows, and the limit "
        f"keeps the unit tiny (smallest limiting omega_i: e^{log_omega_min.min():.0f}). For Theorem 1 on K: its "
        "second term (C b/eta) e^{-gamma T} must dominate, up to an unstated factor c (Proposition 6, Appendix 13), "
        "(b/eta) E[d_T 1_{E_T}], whose eta -> 0 limit on the good event is the GF value d_s(T) ~ (d/delta) C_s "
        "e^{-lambda T} past the regime time; so C >= c d_s(T0) e^{gamma T0} for every T0 past it, and on our K draws "
        f"the term is >= 1 (vacuous) for all T < {vac[LAM]:.0f} as gamma -> lambda and T < {vac[GAMMA_MIN]:.0f} at "
        "gamma = lambda/2, whenever c b/eta >= 1 (b >= 1 >= eta; c is not given). For the simulations at T <= 400: "
        "the slow draws are pre-asymptotic there (delta_s(400) against the asymptotic C_s e^{-400 lambda}: "
        f"{'; '.join(ratio400)}), so the T <= 400 checkpoints of near-opposite draws probe the regime before "
        "Lemma 13's asymptotics, where their angle is still O(1) (see RG-T1.decay and RG-sim.T1.sgd, which report "
        "near-opposite draws apart)."
    )
    assert np.all(np.isfinite(logC)) and np.all(C > 0)
    assert drift.max() <= 1e-6
    assert np.all(np.isfinite(t_reg)) and t_reg.max() <= 3000.0
    assert n_k >= 1 and bool(ink[int(np.argmax(logC))])  # the reported lower bound on C_+ comes from a draw in K
    assert np.all(in_d0(SF.d0_source()["X"])[ink])  # K is inside D0 (the lemma's K subset D)


ENTRY_READING = (
    D_READING + "; " + K_READING + ". An entry time is measured from below: the last grid time at which the flow is "
    "seen outside the tube. Two probes: the 128 D0 draws (all tested for K), and two points of K on its angular "
    "face (vartheta_1 = 2m, vartheta_2 = -(pi - 4m): a unit 4m from -e1), integrated to T = 6000 (past that the dead "
    "unit's omega_i ~ e^{-2 lambda T} nears the float64 range). A sample bounds the uniform entry time only from "
    "below; the paper gives no value"
)


def _entry_text(ent: dict, key: str) -> tuple[float, float, str]:
    """(max over the K draws, the corners' bound, the corner summary) of the entry bound ``key``."""
    ink = ent["in_k"]
    sampled = float(np.max(np.maximum(ent[key][ink], 0.0)))
    corners = ent["corners"]
    lb = min(c["entry"][key] for c in corners)
    text = "; ".join(
        f"{c['name']}: K slack {c['slack']:.2g}, delta_s({T_CORNER[-1]:.0f}) = {c['ob']['delta'][-1]:.7f} "
        f"(log-polar flow agrees to {c['lp_gap']:.1g}), d log delta/dT = {c['ob']['dlogdelta'][-1]:.2g} at the end, "
        f"smallest omega_i e^{c['log_omega_end']:.0f}, the unit near -e1 moved by {c['moved']:.2g} in angle"
        for c in corners
    )
    return sampled, lb, text


def _assert_sampled(ent: dict, key: str, last: float) -> None:
    ink = ent["in_k"]
    assert np.all(ent[key][ink] < last)  # every sampled K draw is seen to enter (and stay) within T = 4000


def _assert_corners(ent: dict, key: str) -> None:
    for c in ent["corners"]:
        assert c["slack"] > 0  # the probe is a point of K
        assert c["lp_gap"] <= 1e-9  # Cartesian and log-polar flows agree on the angle (both at rtol ~1e-12)
    # the corners have not entered by T = 6000: the uniform entry time exceeds it
    assert min(c["entry"][key] for c in ent["corners"]) >= T_CORNER[-2]


def _sampled_entry(audit, key: str) -> tuple[dict, float, int]:
    """The entry bound ``key`` over the sampled D0 draws in K: records its latest entry; (entry data, latest, draws)."""
    ent = SF.k_entry()
    sampled, _, _ = _entry_text(ent, key)
    n_k = int(ent["in_k"].sum())
    audit.ours(sampled, 4, label=f"latest entry over the {n_k} sampled D0 draws in K")
    return ent, sampled, n_k


def _uniform_bounds(audit, key: str, bound: str, what: str, face: str = "") -> tuple[dict, float, float, str, int]:
    """Lower bounds on ``what``, a time uniform over K, from the entry bound ``key``: the sampled K draws' latest entry
    and the angular face's, recorded as ``bound >= ...``, with power 0 (a finite sample and a finite horizon bound a
    uniform time over K only from below). Returns (entry data, sampled bound, face bound, face summary, draws in K)."""
    ent = SF.k_entry()
    sampled, corner, text = _entry_text(ent, key)
    n_k = int(ent["in_k"].sum())
    audit.ours(sampled, 4, label=f"{bound} >= (max over the {n_k} sampled D0 draws in K)")
    audit.ours(corner, 4, label=f"{bound} >= (two points of K on its angular face{face})")
    audit.power(
        0.0,
        alternative=f"K with no finite {what} (the entry time unbounded on K): the check cannot fail against it",
        method="by construction: finitely many starts integrated to a finite horizon give a lower bound on the "
        "uniform time and cannot tell a large finite bound from none; the check passes whatever the supremum over K is",
    )
    return ent, sampled, corner, text, n_k


UNIFORM_BY_CONSTRUCTION = (
    "the existence of one finite time for all of K (compactness and a finite cover) cannot fail on finitely many "
    "starts integrated to a finite horizon; what can fail is our own side: the probes lie in K, the Cartesian and "
    "log-polar flows agree, and the face points are still outside at T = 6000 (the reported lower bound)"
)
BURNIN_TUBE = (
    ". The inner source tube is read as a set where the population flow contracts the projective separation d = "
    "|w_1/a_1 - w_2/a_2| at rate >= gamma >= lambda/2 (the eta -> 0 limit of RG-6.dstep) and which the flow keeps "
    "after entry; then L >= the last time any start's flow has d'/d > -lambda/2 (the most lenient admissible "
    "gamma; a smaller delta_burn only lengthens L)"
)


def _burnin_evidence(ent: dict, sampled: float) -> str:
    n_k = int(ent["in_k"].sum())
    slow = ent["in_k"] & (ent["burnin"] > 400.0)
    return (
        f"Per draw, the left end of the last grid step (step 20) over which the mean rate of log d exceeds "
        f"-lambda/2 = {-GAMMA_MIN} (d >= {D_FLOOR:g} at both ends; below, d is at its float64 floor): the flow is "
        "outside the inner source tube somewhere in that step. Over the "
        f"{n_k} draws in K (of {N_D0}): median {np.median(np.maximum(ent['burnin'][ent['in_k']], 0)):.0f}, max "
        f"{sampled:.0f}; {int(slow.sum())} draws past T = 400 (near-opposite: {bool(np.all(ent['opp'][slow]))})."
    )


@claim(
    "RG-11.3.burnin.each",
    reading=ENTRY_READING + BURNIN_TUBE + ". Checked: each sampled start in K enters at its own finite time (the "
    "pointwise part; the single L over K is RG-11.3.burnin)",
)
def test_burnin_each_start(audit):
    ent, sampled, _ = _sampled_entry(audit, "burnin")
    audit.evidence(
        _burnin_evidence(ent, sampled) + f" Every sampled K draw is seen to enter (no flagged step after T = "
        f"{sampled:.0f} up to T = 4000). This covers the sampled starts only; the single L for all of K is "
        "RG-11.3.burnin."
    )
    _assert_sampled(ent, "burnin", T_SRC[-2])


@claim(
    "RG-11.3.burnin",
    reading=ENTRY_READING + BURNIN_TUBE,
    by_construction=UNIFORM_BY_CONSTRUCTION,
)
def test_uniform_burnin(audit):
    ent, sampled, corner, text, _ = _uniform_bounds(
        audit, "burnin", "L", "burn-in duration L", "; not entered by T = 6000"
    )
    audit.evidence(
        _burnin_evidence(ent, sampled) + " Points of K's angular face have not entered by T = 6000: "
        f"{text}. So the uniform L over K exceeds {corner:.0f} (and {sampled:.0f} on the random sample); the "
        "statement that such a finite L exists rests on compactness (Proposition 11 plus a finite cover) and cannot "
        "be confirmed by sampling, hence power 0 and no confirmation: what is measured is the size of L that the "
        "probes force (the face points' dead unit barely moves, so their entry lies far beyond T = 6000). Each "
        "sampled start's own entry is RG-11.3.burnin.each."
    )
    _assert_corners(ent, "burnin")


LEMMA13_TUBE = (
    ". The smaller attracting tube is read as one where Lemma 13's remainder is at most lambda/2, |d log "
    "delta_s/dT + lambda| <= lambda/2 (a smaller tube only delays entry)"
)


@claim(
    "RG-17.entry.each",
    reading=ENTRY_READING + LEMMA13_TUBE + ". Checked: each sampled start in K enters at its own finite time, and "
    "its limiting clone has positive amplitudes (the pointwise part; the common bound over K is RG-17.entry)",
)
def test_entry_each_start(audit):
    ent, sampled, n_k = _sampled_entry(audit, "lemma13")
    ink = ent["in_k"]
    reg1 = float(ent["reg1"][ink].max())
    lom = np.array([math.log(min(r["omega1"][-1], r["omega2"][-1])) for r in SF.d0_source()["rows"]])[ink]
    audit.ours(reg1, 4, label="max entry into |d log delta/dT + lambda| <= 0.01 lambda (sampled K draws)")
    audit.evidence(
        "Per draw, the last grid time (step 20) at which the field's |d log delta/dT + lambda| exceeds lambda/2. "
        f"Over the {n_k} draws in K (of {N_D0}): median {np.median(np.maximum(ent['lemma13'][ink], 0)):.0f}, max "
        f"{sampled:.0f} (into the tighter tube where the remainder is <= 0.01 lambda: max {reg1:.0f}); all are seen "
        f"to enter by T = 4000. Limiting clones of the sampled K draws have omega_i >= e^{lom.min():.0f}, positive "
        "(inside S). This covers the sampled starts only; the common bound over K is RG-17.entry."
    )
    _assert_sampled(ent, "lemma13", T_SRC[-1])
    assert np.all(np.isfinite(lom))


@claim(
    "RG-17.entry",
    reading=ENTRY_READING + LEMMA13_TUBE,
    by_construction=UNIFORM_BY_CONSTRUCTION,
)
def test_uniform_entry_time(audit):
    ent, sampled, corner, text, n_k = _uniform_bounds(
        audit, "lemma13", "common entry-time bound", "common entry-time bound"
    )
    audit.evidence(
        f"The {n_k} sampled draws in K (of {N_D0}) enter by T = {sampled:.0f} (RG-17.entry.each). The two points "
        f"of K's angular face: {text}: still outside at T = 6000, so the common entry-time bound over K exceeds "
        f"{corner:.0f}; at T = 6000 they have one omega_i below e^{{-600}}, which makes their limiting clones, and "
        "so the 'interior compact segment containing all limiting clones', reach close to the end of the clone "
        "family (not measured past T = 6000). The existence of a finite bound (finite cover of compact K) is not "
        "testable by sampling: power 0, no confirmation."
    )
    _assert_corners(ent, "lemma13")


@claim(
    "RG-3.eventually",
    reading="Corollary 2 takes T >= C_0 log(1/eta) >= L + 1 with L the uniform burn-in of Appendix 11.3 "
    "(RG-11.3.burnin, whose probes bound L from below); C_0 is not given, but Corollary 2's second term needs "
    "gamma C_0 > 1 (RG-3.cor2exp), so C_0 > 1/gamma > 1/lambda = 20",
    by_construction="'eventually' holds for every finite L, since C_0 log(1/eta) -> oo as eta -> 0; what the check "
    "adds is the size of eta and T it forces, from the measured lower bound on L, which can fail only through the "
    "probes of RG-11.3.burnin",
)
def test_eventual_burnin_condition(audit):
    ent = SF.k_entry()
    sampled, corner, _ = _entry_text(ent, "burnin")
    L_lb = max(sampled, corner)
    c0s = (1.0 / LAM, 2.0 / LAM)  # the infimum of admissible C_0 (gamma -> lambda), and gamma = lambda/2
    log_eta = {c0: -(L_lb + 1.0) / c0 for c0 in c0s}
    log_eta_s = {c0: -(sampled + 1.0) / c0 for c0 in c0s}
    audit.ours(L_lb + 1.0, 4, label="T >= C_0 log(1/eta) >= L + 1 > (this): the smallest T Corollary 2 covers")
    audit.ours(
        "; ".join(f"C_0 = {c0:g}: eta <= e^{log_eta[c0]:.0f}" for c0 in c0s),
        label="eta at which C_0 log(1/eta) >= L + 1 can first hold (K corners' bound on L)",
    )
    audit.evidence(
        f"L > {L_lb:.0f} (RG-11.3.burnin: points of K's angular face have not entered by T = 6000; the "
        f"{int(ent['in_k'].sum())} random K draws alone give L > {sampled:.0f}). Hence C_0 log(1/eta) >= L + 1 needs "
        f"log(1/eta) > {L_lb + 1:.0f}/C_0: at the smallest C_0 the corollary admits (C_0 -> 1/lambda = 20, gamma -> "
        f"lambda) eta <= e^{log_eta[c0s[0]]:.0f}, at C_0 = 40 (gamma = lambda/2) eta <= e^{log_eta[c0s[1]]:.0f} "
        f"(from the random draws alone: e^{log_eta_s[c0s[0]]:.0f} and e^{log_eta_s[c0s[1]]:.0f}); a larger C_0 "
        "relaxes eta but not T: whatever C_0, Corollary 2 applies only at T >= L + 1, beyond every source duration "
        "the simulations use (T <= 400 in Section 8 and Appendix 19). The constant part (C_0, hence the eta "
        "threshold) is unverifiable: C_0 is not given; 'eventually' itself holds for any finite L."
    )
    assert math.isfinite(L_lb) and L_lb >= T_CORNER[-2]
    for c0 in c0s:  # C_0 log(1/eta) at the threshold equals L + 1 (the threshold solves the stated inequality)
        assert abs(c0 * -log_eta[c0] - (L_lb + 1.0)) <= 1e-9 * (L_lb + 1.0)


FIXED_WINDOW = 1000.0  # a window in T fixed in advance (not selected by the rate under test)


@claim(
    "RG-17.dlog",
    reading=D_READING + " The O(.) is read as: the ratio of the remainder to the bracket stays bounded once the "
    "asymptotic regime holds (T >= regime time + 200), where the bracket is >= 1e-10 (below it the float64 "
    "remainder, ~1e-17 absolute, is noise). The bound 1 on the O(.) constant was set after seeing the ratios, so "
    "the reading is marked fitted.",
    fitted={
        "another bound C on the O(.) constant (the paper gives none)": "any C >= the measured sup ratio in the regime "
        "(0.064) passes, any smaller C fails; C = 1 was chosen after seeing the ratios, so the pass says that some "
        "constant fits, which any bounded ratio does",
        "a window not selected by the rate under test (T >= 50, or the fixed window T >= 1000)": "sup ratio 0.064 "
        "over T >= 50 (the same as in the selected regime) and 0.022 over T >= 1000, 0 of 128 draws above 1: the "
        "regime selection does not change the outcome",
        "a remainder of lower order, of order sqrt(bracket)": "ends at a ratio of 1.43 (median per draw) and breaks "
        "the bound 1 at 72% of the draws: what the fitted bound can still tell apart",
    },
    by_construction="partly circular: the regime time is the first T after which |d log delta/dT + lambda| <= 0.01 "
    "lambda, i.e. it is selected by the quantity under test, and the bound 1 on the O(.) constant was set after "
    "seeing the ratios (the paper gives no constant). What is not selected: the ratio is taken against the bracket, "
    "which falls by many decades across the regime, so the selection caps the numerator at 0.01 lambda but not the "
    "ratio; the evidence also gives the ratio on a fixed window T >= 1000 chosen without the rate",
)
def test_log_delta_rate(audit):
    rows = SF.d0_source()["rows"]
    sup_tail, sup_all, alt_sqrt, decades, sup_fixed = [], [], [], [], []
    for r in rows:
        ok = (T_SRC >= 50.0) & (r["bound"] >= 1e-10)
        ratio = np.abs(r["rate"] + LAM) / r["bound"]
        sup_all.append(float(np.max(ratio[ok])))
        fixed = ok & (T_SRC >= FIXED_WINDOW)  # a window not chosen by the rate itself
        sup_fixed.append(float(np.max(ratio[fixed])) if np.any(fixed) else 0.0)
        tail = ok & (T_SRC >= r["t_reg"] + 200.0)
        sup_tail.append(float(np.max(ratio[tail])) if np.any(tail) else 0.0)
        if np.count_nonzero(tail) >= 2:
            # the alternative the bound 1 must catch: a remainder of lower order, sqrt(bracket), with the coefficient
            # that matches the observed ratio where the regime starts; its ratio grows like bracket^{-1/2}
            br = r["bound"][tail]
            decades.append(float(np.log10(br.max() / br.min())))
            alt_sqrt.append(float(ratio[tail][0] * math.sqrt(br[0] / br.min())))
    sup_all_a, sup_tail_a = np.array(sup_all), np.array(sup_tail)
    alt_a = np.array(alt_sqrt)
    audit.ours(float(sup_tail_a.max()), 4, label="sup ratio in the asymptotic regime")
    audit.ours(float(sup_all_a.max()), 4, label="sup ratio over T >= 50")
    audit.ours(max(sup_fixed), 4, label=f"sup ratio over T >= {FIXED_WINDOW:g} (window not selected by the rate)")
    audit.evidence(
        "d/dT log delta from the field ((c' dd - c dd')/((c^2 + dd^2) delta), c = |w_1 x w_2| compensated, "
        f"dd = w_1.w_2) on the grid of the {N_D0} D0 source flows, against the bracket delta + |B - B_s| + "
        f"|h_1 - 1| + |h_2 - 1|. In the asymptotic regime the ratio is at most {sup_tail_a.max():.3g} (median per "
        f"draw {np.median(sup_tail_a):.3g}); over all T >= 50 at most {sup_all_a.max():.3g}. The constant is not "
        "given in the paper; the check is of the shape: bounded by 1 in the regime. Why 1: the bracket falls by "
        f"{np.median(decades):.1f} decades (median per draw) across the regime, so a remainder of lower order, of "
        "order sqrt(bracket), with the coefficient that matches the ratio where the regime starts would end at a "
        f"ratio of {np.median(alt_a):.3g} (median per draw; {np.mean(alt_a > 1.0):.0%} of the draws above 1): a bound "
        "the remainder's own order passes with room, and that a lower-order remainder breaks. Partly circular: the "
        "regime is selected by |rate + lambda| <= 0.01 lambda (the quantity under test) and the bound 1 was set "
        f"after seeing the ratios; on the fixed window T >= {FIXED_WINDOW:g}, chosen without the rate, the ratio is "
        f"at most {max(sup_fixed):.3g} ({sum(v > 1.0 for v in sup_fixed)} of {len(sup_fixed)} draws above 1)."
    )
    assert np.all(np.isfinite(sup_all_a)) and sup_tail_a.max() <= 1.0
    assert alt_a.size > 0 and np.median(alt_a) > 1.0  # the bound 1 can fail against a sqrt(bracket) remainder
    # the fitted alternatives in the decorator quote these numbers as text: they must still describe this computation
    quoted = (round(float(sup_all_a.max()), 3), round(max(sup_fixed), 3), round(float(np.median(alt_a)), 2))
    assert quoted == (0.064, 0.022, 1.43) and round(float(np.mean(alt_a > 1.0)), 2) == 0.72, quoted


@cache
def _checkpoint_targets() -> list[dict]:
    """Target GF from source checkpoints (first 16 D0 draws, T = 60 and 120) past the risk crossing."""
    data = SF.d0_source()
    out = []
    for row in data["rows"][:16]:
        for T in (60.0, 120.0):
            theta_T = row["states"][int(np.searchsorted(T_SRC, T))]
            t_end = LAM / A * T + 150.0
            ts = np.linspace(0.0, t_end, 301)
            res = pf.flow(theta_T, "target", LAM, ts, rtol=RTOL)
            ob = pf.trajectory_observables(res.states, "target", LAM)
            obs = [{k: float(v[j]) for k, v in ob.items()} for j in range(len(ts))]
            k0 = np.array(
                [row["x"][0] ** 2 - row["x"][2:4] @ row["x"][2:4], row["x"][1] ** 2 - row["x"][4:6] @ row["x"][4:6]]
            )
            out.append({"T": T, "x": row["x"], "k0": k0, "ts": ts, "states": res.states, "obs": obs, "ob": ob})
    return out


def _ineq_terms(theta) -> tuple[float, float, float]:
    """(B', 2 sum omega_i (q_i - lambda), B(2A - B)) on the target field."""
    o = pf.observables(theta)
    qg = pf.radial_gains(theta, "target")
    mid = 2.0 * (o["omega1"] * (qg[0] - LAM) + o["omega2"] * (qg[1] - LAM))
    return pf.amplitude_rate(theta, "target", LAM), mid, o["B"] * (2 * A - o["B"])


@claim(
    "RG-17.Bbound",
    reading="B = omega_1 + omega_2 and k_i = a_i^2 - |w_i|^2 along target GF from the source-GF checkpoint at "
    "time T, t the target time; B_min and C_0 are measured (not given).",
)
def test_target_amplitude_bounds(audit):
    runs = _checkpoint_targets()
    Bmin = min(min(o["B"] for o in r["obs"]) for r in runs)
    Bmax = max(max(o["B"] for o in r["obs"]) for r in runs)
    worst_k = 0.0
    for r in runs:
        for t, o in zip(r["ts"], r["obs"]):
            for i, key in enumerate(("k1", "k2")):
                c0 = abs(r["k0"][i])
                if (
                    c0 * math.exp(-2 * LAM * (r["T"] + t)) >= 1e-5
                ):  # well above the integration error of a_i^2 - |w_i|^2
                    # k_i(t) = k_i(theta_0) e^{-2 lambda (T + t)} exactly (RG-14.laws): relative deviation
                    dev = abs(abs(o[key]) * math.exp(2 * LAM * (r["T"] + t)) / c0 - 1.0)
                    worst_k = max(worst_k, dev)
    audit.ours(Bmin, 6, label="min B(t)")
    audit.ours(Bmax, 6, label="max B(t)")
    audit.ours(4 * Q, 6, label="4q")
    audit.ours(worst_k, 3, label="max | |k_i(t)| e^{2 lambda (T + t)} / |k_i(theta_0)| - 1 |")
    audit.evidence(
        f"Target GF (rtol {RTOL:g}) from the source-GF checkpoints at T = 60 and 120 of the first 16 D0 draws, "
        "to target time (lambda/A) T + 150 (past the risk crossing and the separation). B stays in "
        f"[{Bmin:.4f}, {Bmax:.4f}] inside (0, 4q = {4 * Q:.4f}]; |k_i| equals C_0 e^{{-2 lambda (T + t)}} with "
        f"C_0 = |k_i(theta_0)| to relative {worst_k:.2g} wherever |k_i| >= 1e-5 (tolerance 1e-5: the law is "
        "exact; a_i^2 - |w_i|^2 carries the integrator's relative error ~1e-12 per unit time of terms ~1, "
        "i.e. ~1e-9/|k_i| after hundreds of time units)."
    )
    assert 0 < Bmin and Bmax <= 4 * Q
    assert worst_k <= 1e-5


@claim(
    "RG-17.Bode",
    reading="E := B' - B(2A - B) along target GF from the source-GF checkpoints (A = q - lambda); C is not given "
    "and is measured as the sup of |E|/(delta^2 + k_1^2 + k_2^2).",
)
def test_target_amplitude_equation(audit):
    runs = _checkpoint_targets()
    sup_ratio = 0.0
    sup_ratio_small = 0.0
    worst_identity = 0.0
    for r in runs:
        ob = r["ob"]
        E = ob["Bdot"] - ob["B"] * (2 * A - ob["B"])
        ratio = np.abs(E) / (ob["delta"] ** 2 + ob["k1"] ** 2 + ob["k2"] ** 2)
        sup_ratio = max(sup_ratio, float(ratio.max()))
        small = ob["delta"] < 0.1
        if np.any(small):
            sup_ratio_small = max(sup_ratio_small, float(ratio[small].max()))
        # exact form: E = 2 omega_1 omega_2 (1 - 2 J(delta)) + sum_i (a_i - r_i)^2 q_i
        st = r["states"]
        r1, r2 = np.hypot(st[:, 2], st[:, 3]), np.hypot(st[:, 4], st[:, 5])
        exact = 2 * ob["omega1"] * ob["omega2"] * (1 - 2 * np.asarray(model.J(ob["delta"])))
        exact = exact + (st[:, 0] - r1) ** 2 * ob["q1"] + (st[:, 1] - r2) ** 2 * ob["q2"]
        worst_identity = max(worst_identity, float(np.max(np.abs(E - exact))))
    audit.ours(sup_ratio, 4, label="sup |E| / (delta^2 + k_1^2 + k_2^2)")
    audit.ours(sup_ratio_small, 4, label="same sup while delta < 0.1")
    audit.evidence(
        f"Along the {len(runs)} target flows of RG-17.Bbound: E = B' - B(2A - B) with B' from the field. "
        f"|E| <= {sup_ratio:.3g} (delta^2 + k_1^2 + k_2^2) over the whole path ({sup_ratio_small:.3g} while "
        "delta < 0.1, the regime where the lemma uses it; the small-angle constant is about omega_1 omega_2 since "
        "1 - 2J(delta) = delta^2/2 + O(delta^3)). The second-order form is "
        "confirmed by the exact decomposition E = 2 omega_1 omega_2 (1 - 2 J(delta)) + sum_i (a_i - r_i)^2 q_i, "
        f"matched to {worst_identity:.2g} (tolerance 1e-12, rounding of O(1) sums)."
    )
    assert math.isfinite(sup_ratio) and sup_ratio <= 10.0
    assert worst_identity <= 1e-12


def _prop12_points(n: int = 40, seed: int = 16_2612) -> np.ndarray:
    """Points of Proposition 12's set: a_i, r_i > 0, omega_i <= 2q, 0 < delta < pi, edges included."""
    rng = np.random.default_rng(seed)
    pts = []
    for j in range(n):
        om = rng.uniform(1e-3, 2 * Q, size=2)
        if j % 5 == 0:
            om[0] = 2 * Q  # edge omega_i = 2q
        if j % 7 == 0:
            om[1] = 1e-3  # nearly dead unit
        h = np.exp(rng.uniform(math.log(0.2), math.log(5.0), size=2))
        delta = math.exp(rng.uniform(math.log(1e-6), math.log(math.pi - 1e-3)))
        if j % 6 == 0:
            delta = math.pi - 1e-3
        phase = rng.uniform(-math.pi, math.pi)
        r = np.sqrt(om / h)
        a = np.sqrt(om * h)
        pts.append(pf.from_polar(a[0], a[1], r[0], r[1], phase + delta, phase))
    return np.array(pts)


@cache
def _prop12_runs() -> list[dict]:
    ts = np.concatenate([[0.0], np.geomspace(1e-2, 3000.0, 120)])
    out = []
    for x in _prop12_points():
        res = pf.flow(x, "target", LAM, ts, rtol=RTOL)
        out.append({"x": x, "ts": ts, "states": res.states})
    return out


@claim(
    "RG-16.conv",
    reading="Convergence is checked at t = 3000 on 40 points of the stated set (omega_i up to the edge 2q, "
    "omega_i down to 1e-3, h_i = a_i/r_i in [0.2, 5], delta from 1e-6 to pi - 1e-3); delta -> pi is algebraic, "
    "pi - delta ~ pi/(2A t).",
)
def test_target_convergence(audit):
    runs = _prop12_runs()
    worst_om = 0.0
    worst_R = 0.0
    worst_gap = 0.0
    min_a = math.inf
    rates = []
    for r in runs:
        for s in r["states"]:
            min_a = min(min_a, s[0], s[1], math.hypot(*s[2:4]), math.hypot(*s[4:6]))
        o = pf.observables(r["states"][-1])
        worst_om = max(worst_om, abs(o["omega1"] - 2 * A), abs(o["omega2"] - 2 * A))
        worst_R = max(worst_R, abs(model.target_risk(r["states"][-1]) - R_GOOD))
        gap = math.pi - o["delta"]
        worst_gap = max(worst_gap, gap)
        # pi - delta = eps obeys eps' = -(2A/pi) eps^2 near the limit: 1/eps grows by (2A/pi) dt
        j = int(np.searchsorted(r["ts"], 1500.0))
        gap_mid = math.pi - pf.observables(r["states"][j])["delta"]
        rates.append((1 / gap - 1 / gap_mid) / (r["ts"][-1] - r["ts"][j]))
    rates = np.array(rates)
    audit.ours(worst_gap, 3, label="max (pi - delta) at t = 3000")
    audit.ours(worst_om, 3, label="max |omega_i - 2A| at t = 3000")
    audit.ours(worst_R, 3, label="max |R_t - R_good| at t = 3000")
    audit.ours(float(np.median(rates)), 4, label="median growth rate of 1/(pi - delta) on t in [1500, 3000]")
    audit.evidence(
        f"Target GF (rtol {RTOL:g}) from 40 points of Proposition 12's set (seed 16_2612). Both units stay "
        f"positive (min over paths of a_i, |w_i|: {min_a:.3g}). At t = 3000 the worst point has pi - delta = "
        f"{worst_gap:.3g}, |omega_i - 2A| <= {worst_om:.2g}, |R_t - R_good| <= {worst_R:.2g} (R_good = "
        f"{R_GOOD:.6f}). The angle converges only algebraically: near pi, delta' ~ 2 omega g(delta) with g ~ "
        f"(pi - delta)^2/(2 pi), so 1/(pi - delta) grows at 2A/pi = {2 * A / math.pi:.5f} (pi - delta ~ "
        f"pi/(2A t) = {math.pi / (2 * A * 3000):.3g} at t = 3000 from a far start); measured growth rate of "
        f"1/(pi - delta) on [1500, 3000]: {rates.min():.5f} .. {rates.max():.5f} (tolerance 2%: the O(pi - delta) "
        "corrections of g and omega_i). "
        "Tolerances: pi - delta <= 2e-3 (the 1/t law at t = 3000 plus 50%), |omega_i - 2A| and |R_t - R_good| "
        "<= 1e-6 (their (pi - delta)^3 corrections)."
    )
    assert min_a > 0
    assert worst_gap <= 2e-3
    assert worst_om <= 1e-6 and worst_R <= 1e-6
    assert np.all(np.abs(rates / (2 * A / math.pi) - 1) <= 0.02)


def _ineq_margins(states) -> tuple[float, float, float]:
    """min over the path of B' - 2 sum omega_i (q_i - lambda), of 2 sum omega_i (q_i - lambda) - B(2A - B), of q_i."""
    ob = pf.trajectory_observables(states, "target", LAM)
    mid = 2.0 * (ob["omega1"] * (ob["q1"] - LAM) + ob["omega2"] * (ob["q2"] - LAM))
    logistic = ob["B"] * (2 * A - ob["B"])
    qmin = float(min(ob["q1"].min(), ob["q2"].min()))
    return float(np.min(ob["Bdot"] - mid)), float(np.min(mid - logistic)), qmin


READING_BINEQ = (
    "The display is read as holding where B = omega_1 + omega_2 <= 2q: the proof's prose around it is lost (Appendix "
    "16 keeps only the proposition and two displays, lines 357-361 of the conversion), and the lower bound B' >= "
    "B(2A - B) is needed only where B <= 2A < 2q (to keep B away from 0 and bring it up to 2A). Our identities "
    "(SymPy, from the model's target risk and flow in derivations.rare_gates.dynamics): B' - 2 sum omega_i (q_i - "
    "lambda) = sum_i (a_i - r_i)^2 q_i, 2 sum omega_i (q_i - lambda) - B(2A - B) = 2 omega_1 omega_2 (1 - "
    "2J(delta)), and q_i = q - B/2 + omega_j (1/2 - J(delta)) >= q - B/2 since J <= J(0) = 1/2; so the chain holds "
    "wherever B <= 2q. Checked also along target GF from source-GF checkpoints (Appendix 17) and from D0 draws"
)
FITTED_BINEQ = {
    "Proposition 12's stated set (a_i, r_i > 0, omega_i <= 2q, 0 < delta < pi; B up to 4q), the display read on "
    "all of it": "fails: on 5000 random points of its part B > 2q (seed 16_2613, stream 1) the first inequality "
    "fails at 93.9% and the chain's conclusion B' >= B(2A - B) at 92.4% (e.g. omega_i = 0.99 * 2q, delta = 0.1, "
    "a_i = 3 r_i: B' = -5.469 < B(2A - B) = -3.398); reported by test_amplitude_inequality_below_2q",
    "the domain B <= 2q (the reading)": "holds: 0 violations in 20000 random points, and the SymPy identities "
    "prove it there; chosen because the display holds there (the proof's prose that would fix the domain is lost)",
}
BINEQ_FITTED_NOTE = (
    ". The domain B <= 2q is chosen because the display holds there and fails on the rest of Proposition 12's set; "
    "that the proof needs the bound only where B <= 2A is our reconstruction of lost prose, not the paper's text"
)


@claim("RG-16.Bineq", reading=READING_BINEQ + BINEQ_FITTED_NOTE, fitted=FITTED_BINEQ)
def test_amplitude_inequality_on_paths(audit):
    runs = _checkpoint_targets()
    m1 = m2 = qmin = math.inf
    ts = np.linspace(0.0, 60.0, 121)
    paths = [r["states"] for r in runs] + [
        pf.flow(x, "target", LAM, ts, rtol=RTOL).states for x in SF.d0_source()["X"][:16]
    ]
    worst_id = 0.0
    for st in paths:
        a, b, c = _ineq_margins(st)
        m1, m2, qmin = min(m1, a), min(m2, b), min(qmin, c)
        ob = pf.trajectory_observables(st, "target", LAM)
        mid = 2.0 * (ob["omega1"] * (ob["q1"] - LAM) + ob["omega2"] * (ob["q2"] - LAM))
        r1, r2 = np.hypot(st[:, 2], st[:, 3]), np.hypot(st[:, 4], st[:, 5])
        ident = (st[:, 0] - r1) ** 2 * ob["q1"] + (st[:, 1] - r2) ** 2 * ob["q2"]
        worst_id = max(worst_id, float(np.max(np.abs(ob["Bdot"] - mid - ident))))
    audit.ours(m1, 4, label="min [B' - 2 sum omega_i (q_i - lambda)]")
    audit.ours(m2, 4, label="min [2 sum omega_i (q_i - lambda) - B(2A - B)]")
    audit.ours(qmin, 4, label="min q_i on these paths")
    audit.evidence(
        f"Target GF (rtol {RTOL:g}) from the {len(runs)} checkpoints of RG-17.Bbound and from 16 D0 draws "
        f"(t <= 60): min margins {m1:.3g} and {m2:.3g} (tolerance -1e-12, rounding). The identity B' - 2 sum "
        f"omega_i (q_i - lambda) = sum_i (a_i - r_i)^2 q_i holds to {worst_id:.2g}; q_i >= {qmin:.3g} on these paths, "
        "slightly negative only where the balance a_i - r_i is already negligible, so the first inequality holds "
        "there."
    )
    assert m1 >= -1e-12 and m2 >= -1e-12 and worst_id <= 1e-12


@cache
def _bineq_symbolic() -> dict:
    """SymPy residuals of the three identities behind the chain, on the model's target risk and flow (~2 s)."""
    a1, a2, r1, r2, omega1, omega2, lam, t = SY.a1, SY.a2, SY.r1, SY.r2, SY.omega1, SY.omega2, SY.lam, SY.t
    v, R = DY.polar_flow("target"), DY.polar_risk("target")
    Rw = sp.expand(R.subs({a1: omega1 / r1, a2: omega2 / r2}))  # the risk depends on a_i, r_i through omega_i only
    back = {omega1: a1 * r1, omega2: a2 * r2}
    q1, q2 = (-sp.diff(Rw, w).subs(back) for w in (omega1, omega2))  # q_i = -dR/domega_i (the radial gain)
    w1, w2 = a1 * r1, a2 * r2
    Bs, q = w1 + w2, KE.q_constant()
    J = KE.J_kernel().subs(t, DY.alpha + DY.beta)
    bdot = v[a1] * r1 + a1 * v[r1] + v[a2] * r2 + a2 * v[r2]
    mid = 2 * (w1 * (q1 - lam) + w2 * (q2 - lam))
    half = sp.Rational(1, 2)
    I = sp.Interval(0, sp.pi)
    return {
        "omega only": Rw.free_symbols.isdisjoint({r1, r2}),
        "B' - mid - sum (a_i - r_i)^2 q_i": sp.simplify(bdot - mid - ((a1 - r1) ** 2 * q1 + (a2 - r2) ** 2 * q2)),
        "mid - B(2A - B) - 2 w1 w2 (1 - 2J)": sp.simplify(mid - Bs * (2 * (q - lam) - Bs) - 2 * w1 * w2 * (1 - 2 * J)),
        "q_1 - (q - B/2) - w2 (1/2 - J)": sp.simplify(q1 - (q - Bs / 2) - w2 * (half - J)),
        "q_2 - (q - B/2) - w1 (1/2 - J)": sp.simplify(q2 - (q - Bs / 2) - w1 * (half - J)),
        # J <= 1/2 on [0, pi]: J(0) = 1/2 and J' = -g with g = (pi - t) sin t/(2 pi), both factors >= 0 there
        "J(0)": KE.J_kernel().subs(t, 0),
        "g - (pi - t) sin t/(2 pi)": sp.simplify(KE.g_kernel() - (sp.pi - t) * sp.sin(t) / (2 * sp.pi)),
        "factors negative on [0, pi]": sp.Union(sp.solveset(sp.pi - t < 0, t, I), sp.solveset(sp.sin(t) < 0, t, I)),
    }


N_BINEQ = 20_000  # random points of Proposition 12's set (float64 field: ~2 s)
BINEQ_SEED = 16_2613


def _bineq_sample(region: str, n: int = N_BINEQ, seed: int = BINEQ_SEED) -> np.ndarray:
    """Random points of {a_i, r_i > 0, omega_i <= 2q, 0 < delta < pi} with B <= 2q ('in') or B > 2q ('out').

    'in': B uniform on (0, 2q] (every tenth point on the edge B = 2q), omega_1 = pB with p uniform; 'out': omega_i
    uniform on (0, 2q] conditioned on B > 2q. Both: h_i = a_i/r_i log-uniform on [1e-2, 1e2], delta log-uniform on
    [1e-6, pi - 1e-6] (every seventh point at delta = 1e-6, where J is nearest 1/2), a uniform overall phase.
    """
    rng = np.random.default_rng([seed, 0 if region == "in" else 1])
    pts = np.empty((n, 6))
    for j in range(n):
        if region == "in":
            B = 2 * Q if j % 10 == 0 else rng.uniform(0.0, 2 * Q)
            p = rng.uniform(0.0, 1.0)
            om = np.array([p * B, (1 - p) * B])
        else:
            om = rng.uniform(0.0, 2 * Q, size=2)
            while om.sum() <= 2 * Q:
                om = rng.uniform(0.0, 2 * Q, size=2)
        om = np.maximum(om, 1e-9)  # keep both units alive (a_i, r_i > 0)
        h = np.exp(rng.uniform(math.log(1e-2), math.log(1e2), size=2))
        delta = 1e-6 if j % 7 == 0 else math.exp(rng.uniform(math.log(1e-6), math.log(math.pi - 1e-6)))
        phase = rng.uniform(-math.pi, math.pi)
        r, a = np.sqrt(om / h), np.sqrt(om * h)
        pts[j] = pf.from_polar(a[0], a[1], r[0], r[1], phase + delta, phase)
    return pts


def _bineq_margins(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(B' - mid, mid - B(2A - B), min_i q_i, the rounding scale 1 + sum a_i^2 + |w_i|^2) at each point.

    The float64 operations of :func:`_ineq_terms`, bit for bit, without its per-point pf.observables (of which
    only omega_i = a_i |w_i| and B = omega_1 + omega_2 enter, computed here as it computes them) and with q_i
    computed once per point.
    """
    out = np.empty((len(pts), 4))
    for j, x in enumerate(pts):
        qg = pf.radial_gains(x, "target")
        o1, o2 = x[0] * math.hypot(x[2], x[3]), x[1] * math.hypot(x[4], x[5])
        B = o1 + o2
        mid = 2.0 * (o1 * (qg[0] - LAM) + o2 * (qg[1] - LAM))
        bdot = pf.amplitude_rate(x, "target", LAM)
        out[j] = bdot - mid, mid - B * (2 * A - B), float(qg.min()), 1.0 + float(x @ x)
    return out[:, 0], out[:, 1], out[:, 2], out[:, 3]


@claim("RG-16.Bineq", reading=READING_BINEQ + BINEQ_FITTED_NOTE, fitted=FITTED_BINEQ)
def test_amplitude_inequality_below_2q(audit):
    sym = _bineq_symbolic()
    d1, d2, qmin, scale = _bineq_margins(_bineq_sample("in"))
    # tolerance: 1e-13 x (1 + |theta|^2), a few hundred float64 ulps of the terms B', mid (size a_i^2 + |w_i|^2)
    tol = 1e-13 * scale
    viol1, viol2 = int(np.sum(d1 < -tol)), int(np.sum(d2 < -tol))
    audit.ours({k: str(v) for k, v in sym.items()}, label="SymPy residuals and facts")
    audit.ours(f"{viol1} and {viol2} of {N_BINEQ}", label="points with B <= 2q violating the first / second inequality")
    audit.ours(float(np.min(d1 / scale)), 4, label="min [B' - 2 sum omega_i (q_i - lambda)] / (1 + |theta|^2), B <= 2q")
    audit.ours(float(qmin.min()), 4, label="min q_i over the points with B <= 2q")
    audit.tolerance(1e-13, "relative to 1 + |theta|^2: a few hundred float64 ulps of the terms B' and mid")
    # the set beyond B <= 2q: the first inequality fails where some q_i < 0 and a_i != r_i (a finding, not a verdict)
    o1, o2, oq, oscale = _bineq_margins(_bineq_sample("out", n=N_BINEQ // 4))
    frac_out = float(np.mean(o1 < -1e-13 * oscale))
    frac_chain = float(np.mean(o1 + o2 < -1e-13 * oscale))  # B' - B(2A - B) = (B' - mid) + (mid - B(2A - B))
    om = 0.99 * 2 * Q
    r = math.sqrt(om / 3.0)
    x = pf.from_polar(3 * r, 3 * r, r, r, 0.05, -0.05)
    bdot, mid, logistic = _ineq_terms(x)
    qg = pf.radial_gains(x, "target")
    end = pf.flow(x, "target", LAM, np.linspace(0.0, 3000.0, 301), rtol=RTOL)  # ~0.2 CPU-s
    o_end = pf.observables(end.states[-1])
    gap = math.pi - o_end["delta"]
    om_err = max(abs(o_end["omega1"] - 2 * A), abs(o_end["omega2"] - 2 * A))
    audit.ours(frac_out, 3, label=f"fraction of {N_BINEQ // 4} points with B > 2q violating the first inequality")
    audit.ours(frac_chain, 3, label=f"fraction of {N_BINEQ // 4} points with B > 2q where B' < B(2A - B)")
    audit.ours(f"B' = {bdot:.4f}, mid = {mid:.4f}, B(2A - B) = {logistic:.4f}", label="at the off-region point")
    audit.evidence(
        "SymPy, on the model's target risk and polar flow: the risk depends on a_i, r_i through omega_i only, and "
        "B' - 2 sum omega_i (q_i - lambda) = sum_i (a_i - r_i)^2 q_i, 2 sum omega_i (q_i - lambda) - B(2A - B) = "
        "2 omega_1 omega_2 (1 - 2J(delta)), q_i = q - B/2 + omega_j (1/2 - J(delta)) (residuals 0); J(0) = "
        f"{sym['J(0)']} and g = -J' = (pi - t) sin t/(2 pi) with neither factor negative on [0, pi] (solveset: "
        f"{sym['factors negative on [0, pi]']}), so J(delta) <= 1/2. Hence where B <= 2q every q_i >= 0 and both "
        f"inequalities hold; the second holds on the whole set. Float64 field at {N_BINEQ} random points of "
        f"Proposition 12's set with B <= 2q (seed {BINEQ_SEED}; B on the edge 2q at every tenth point, delta = 1e-6 "
        f"at every seventh, h_i = a_i/r_i in [1e-2, 1e2]): {viol1} and {viol2} violations (tolerance 1e-13 (1 + "
        f"|theta|^2)), min q_i = {qmin.min():.2e} (rounding at the edge B = 2q, delta -> 0). Finding beyond the "
        "reading, and the reason the reading is marked fitted: on the part B > 2q of the set (omega_i <= 2q) the "
        "first inequality fails where sum_i (a_i - r_i)^2 q_i < 0 (some q_i < 0, a_i != r_i), at "
        f"{100 * frac_out:.1f}% of {N_BINEQ // 4} random points there, and the chain's conclusion B' >= B(2A - B) at "
        f"{100 * frac_chain:.1f}%; "
        "e.g. omega_1 = omega_2 = 0.99 * 2q, delta = 0.1, a_i = 3 r_i: "
        f"q_i = {qg[0]:.4f}, B' = {bdot:.4f} < 2 sum omega_i (q_i - lambda) = {mid:.4f}, and B' < B(2A - B) = "
        f"{logistic:.4f}. There B > 2q > 2A, where (our reconstruction of the lost prose) the proof would need no "
        "lower bound on B, and target GF from that "
        f"point still converges (t = 3000: pi - delta = {gap:.3g}, |omega_i - 2A| <= {om_err:.2g}; RG-16.conv's "
        "tolerances); Proposition 12's conclusion is RG-16.conv."
    )
    assert sym["omega only"] and sym["J(0)"] == sp.Rational(1, 2)
    assert all(sym[k] == 0 for k in sym if k.startswith(("B'", "mid", "q_", "g ")))
    assert sym["factors negative on [0, pi]"] == sp.S.EmptySet
    assert viol1 == 0 and viol2 == 0 and float(qmin.min()) >= -1e-12
    # the finding: the identity makes the off-region point fail, and the conclusion survives there
    assert bdot < mid and frac_out > 0.0 and bdot < logistic
    # the fitted mark's alternative quotes these fractions (fixed seed): keep the quote true
    assert abs(frac_out - 0.939) <= 1e-3 and abs(frac_chain - 0.924) <= 1e-3
    assert gap <= 2e-3 and om_err <= 1e-6


@claim(
    "RG-15.qhalf",
    reading="A step of a proof by contradiction: q_i = -dR_s/domega_i -> 1/2 as omega_i -> 0 and alpha, beta -> 0; "
    "checked as a limit of the model's q_i and by flows started next to the origin, which leave it at rate "
    "(log s_i)' = q_i - lambda ~ 1/2 - lambda. Along actual source GF q_i -> lambda (stationarity on S).",
)
def test_origin_repels(audit):
    worst = 0.0
    for scale in (1e-4, 1e-6, 1e-8):
        x = pf.from_polar(scale, 2 * scale, scale, scale, scale, -scale)
        worst = max(worst, float(np.max(np.abs(pf.radial_gains(x, "source") - 0.5))))
    ts = np.linspace(0.0, 200.0, 201)
    escape_rates = []
    final_q = []
    for scale, th1, th2 in ((1e-4, 1e-3, -2e-3), (1e-5, 0.3, -0.2), (1e-6, 1.0, -0.5)):
        res = pf.flow(pf.from_polar(scale, scale, scale, scale, th1, th2), "source", LAM, ts, rtol=RTOL)
        s = [math.log(st[0] + math.hypot(*st[2:4])) for st in res.states[:11]]  # log s_1, t in [0, 10]
        escape_rates.append((s[10] - s[5]) / 5.0)
        final_q.append(float(np.max(np.abs(pf.radial_gains(res.states[-1], "source") - LAM))))
        assert abs(pf.observables(res.states[-1])["B"] - B_S) <= 1e-9
    audit.ours(worst, 3, label="max |q_i - 1/2| at omega ~ 1e-4..1e-8, angles ~ omega")
    audit.ours(min(escape_rates), 5, label="min (log s_1)' on t in [5, 10] from near the origin")
    audit.evidence(
        f"q_i from the float64 model (q_i = -(dR_s/da_i)/|w_i|): |q_i - 1/2| <= {worst:.2g} at omega ~ 1e-4..1e-8 "
        f"(O(omega + angle^2), tolerance 1e-3). Flows from 1e-4..1e-6 scales grow with (log s_1)' = "
        f"{', '.join(f'{v:.4f}' for v in escape_rates)} (1/2 - lambda = {0.5 - LAM}) and reach S (|B - B_s| <= "
        f"1e-9 by t = 200), where |q_i - lambda| <= {max(final_q):.2g}."
    )
    assert worst <= 1e-3 and 1.0 > 0.5 > LAM
    assert all(abs(v - (0.5 - LAM)) <= 0.01 for v in escape_rates)
    assert max(final_q) <= 1e-9


def _d_points(seed: int = 15_2611) -> np.ndarray:
    """32 random points of D plus 16 edge points (omega_i -> 0 or 1, angles -> 0 or delta -> pi, h_i in [0.1, 10])."""
    rng = np.random.default_rng(seed)
    pts = []
    eps = 1e-4
    for _ in range(32):
        om = rng.uniform(0.0, 1.0, size=2)
        h = np.exp(rng.uniform(math.log(0.1), math.log(10.0), size=2))
        th1 = rng.uniform(0.0, math.pi)
        th2 = -rng.uniform(0.0, math.pi - th1)
        pts.append((om, h, th1, th2))
    for j in range(16):
        om = np.array([(eps, 1 - eps, 0.5, 1 - eps)[j % 4], (1 - eps, eps, eps, 0.5)[j % 4]])
        h = np.array([(0.1, 10.0, 1.0, 0.1)[j // 4], (10.0, 0.1, 1.0, 10.0)[j // 4]])
        th1, th2 = (
            (eps, -eps),
            (math.pi - 2 * eps, -eps),
            (eps, -(math.pi - 2 * eps)),
            (math.pi / 2, -(math.pi / 2 - eps)),
        )[(j + j // 4) % 4]
        pts.append((om, h, th1, th2))
    out = [pf.from_polar(*np.sqrt(om * h), *np.sqrt(om / h), th1, th2) for om, h, th1, th2 in pts]
    return np.array(out)


T_D = np.linspace(0.0, 6000.0, 301)
OPPOSITE_EDGE = math.pi - 1e-3  # a unit within 1e-3 of -e1 at the start


@cache
def _d_runs() -> list[dict]:
    """Source GF in log-polar coordinates (units whose omega_i leaves the float64 range stay exact)."""
    out = []
    for x in _d_points():
        x = pf.labelled(x)
        res = pf.flow(pf.to_logpolar(x), "source", LAM, T_D, rtol=1e-11, coords="logpolar")
        ob = pf.logpolar_observables(res.states)
        resid = np.maximum.reduce([np.abs(ob["B"] - B_S), np.abs(ob["k1"]), np.abs(ob["k2"]), ob["delta"]])
        t0 = pf.observables(x)
        out.append(
            {
                "x": x,
                "states": res.states,
                "ob": ob,
                "resid": resid,
                "edge": max(t0["theta1"], -t0["theta2"]) > OPPOSITE_EDGE,
            }
        )
    return out


EDGE_READING = (
    "Points with a unit within 1e-3 of -e1 at the start (the edge of D next to delta = pi; an a-priori criterion "
    "on the start) are the claim RG-15.conv.edge"
)


@claim(
    "RG-15.conv",
    reading=D_READING + " 'Converges to a point of S' is checked as the normal residual max(|B - B_s|, |k_i|, "
    "delta) -> 0 (delta bounds |vartheta_i|) with omega_1, omega_2 > 0 settled, at every sampled point of D "
    "without a unit within 1e-3 of -e1. " + EDGE_READING,
)
def test_source_convergence_from_D(audit):
    runs = _d_runs()
    normal = [r for r in runs if not r["edge"]]
    res_end = np.array([r["resid"][-1] for r in normal])
    t_in = np.array([T_D[int(np.argmax(r["resid"] < 1e-6))] if np.any(r["resid"] < 1e-6) else math.inf for r in normal])
    lom_end = np.array([min(r["ob"]["log_omega1"][-1], r["ob"]["log_omega2"][-1]) for r in normal])
    worst = int(np.argmax(t_in))
    wo = pf.observables(normal[worst]["x"])
    audit.ours(
        f"{int(np.sum(res_end <= 1e-6))} of {len(normal)} settled ({len(runs) - len(normal)} edge points are "
        "RG-15.conv.edge)",
        label="points of D without a unit within 1e-3 of -e1",
    )
    audit.ours(float(res_end.max()), 3, label=f"worst normal residual at T = 6000 ({len(normal)} points of D)")
    audit.ours(float(t_in.max()), 4, label="latest entry time into residual < 1e-6")
    audit.evidence(
        f"Source GF in log-polar coordinates (rtol 1e-11; cross-checked against the Cartesian flow in "
        f"tests/test_population_flow.py) from {len(runs)} points of D (seed 15_2611): 32 random (omega_i uniform "
        "in (0, 1), h_i = a_i/r_i log-uniform in [0.1, 10], vartheta_1 uniform, vartheta_2 uniform given the "
        "constraint) and 16 edge points (omega_i = 1e-4 or 1 - 1e-4, vartheta_i within 1e-4 of 0 or of -e1, "
        f"h_i = 0.1 or 10). The {len(normal)} points without a unit within 1e-3 of -e1: residual at T = 6000 at "
        f"most {res_end.max():.2g}, entry into residual < 1e-6 by T = {t_in.max():.0f} at the latest (start omega = "
        f"({wo['omega1']:.3g}, {wo['omega2']:.3g}), vartheta = ({wo['theta1']:.4g}, {wo['theta2']:.4g})); smallest "
        f"limiting omega_i = e^{lom_end.min():.0f} (positive: the limit is in S, tolerance 1e-6 on the residual). "
        f"The other {len(runs) - len(normal)} points, with a unit within 1e-3 of -e1, are RG-15.conv.edge."
    )
    assert res_end.max() <= 1e-6 and np.all(np.isfinite(lom_end))


@claim(
    "RG-15.conv.edge",
    reading=D_READING + " 'Converges to a point of S' as in RG-15.conv, at the sampled points of D with a unit "
    "within 1e-3 of -e1. Where that unit dies, its angle creeps toward e1 at a rate below 1e-8 per unit time, so "
    "convergence lies beyond any integrable horizon: what is checked is the mechanism (monotone creep, the live unit "
    "carrying B_s, the dead unit's log omega_i finite)",
)
def test_source_convergence_edge(audit):
    runs = _d_runs()
    edge_all = [r for r in runs if r["edge"]]
    settled = [r for r in edge_all if r["resid"][-1] <= 1e-6]
    edge = [r for r in edge_all if r["resid"][-1] > 1e-6]
    # the opposite edge: the dead unit's angle creeps toward e1 at a rate ~ h_i g(angle), h_i frozen
    creep = []
    for r in edge:
        ob = r["ob"]
        i = 0 if ob["alpha"][0] > ob["beta"][0] else 1
        ang = ob["alpha"] if i == 0 else ob["beta"]
        speed = (ang[-2] - ang[-1]) / (T_D[-1] - T_D[-2])
        assert np.all(np.diff(ang[1:]) <= 1e-15)  # monotone creep toward e1 (after the first step)
        creep.append((float(np.pi - ang[-1]), float(speed), float(ob["log_h1" if i == 0 else "log_h2"][-1])))
        other = ob["log_omega2" if i == 0 else "log_omega1"][-1]
        assert abs(math.exp(other) - B_S) <= 1e-9  # the live unit carries the whole source amplitude
        assert ob["log_omega1" if i == 0 else "log_omega2"][-1] < -500  # the dead unit, exact in log form
    moving = [c for c in creep if c[1] > 0]
    frozen = len(creep) - len(moving)  # creep below the float64 resolution of the angle over 30 time units
    eta = min(c[0] / c[1] for c in moving) if moving else math.inf
    starts = [pf.observables(r["x"]) for r in edge]
    audit.ours(
        f"{len(settled)} of {len(edge_all)} settled; {len(edge)} unsettled: the unit near -e1 dies and creeps toward "
        f"e1 (entry into the clone regime only after >= {eta:.1g} time units)",
        label="points of D with a unit within 1e-3 of -e1",
    )
    audit.power(
        0.0,
        alternative="a start next to the edge whose flow never reaches S (the dead unit's angle stalling short of "
        f"the clone regime): within any integrable horizon it looks the same as convergence after >= {eta:.1g} time "
        "units",
        method="by construction: the unsettled starts are followed to T = 6000 only, far short of their entry time; "
        "the check passes whether or not they converge",
    )
    creep_txt = (
        f"h_i frozen at e^{min(c[2] for c in creep):.0f}..e^{max(c[2] for c in creep):.0f}) and its angle creeps "
        f"toward e1 at most {max(c[1] for c in creep):.2g} per unit time ({frozen} of them below the float64 "
        "resolution of the angle)"
        if creep
        else "none)"
    )
    audit.evidence(
        f"The {len(edge_all)} of the 48 points of D of RG-15.conv with a unit within 1e-3 of -e1 (source GF in "
        f"log-polar coordinates to T = 6000): {len(settled)} converge (that unit has h_i = 10, a_i >> r_i, and "
        f"rotates in fast); in the other {len(edge)} that unit dies (omega_i ~ e^{{-2 lambda T}}, {creep_txt}, i.e. "
        f"entry into the clone regime only after >= {eta:.1g} time units: convergence is not observable by "
        "integration (consistent: the angle decreases monotonically, the dead unit's log omega_i stays finite and "
        "the live unit carries B_s). The convergence of Proposition 11 is not uniform on D (it is on compact K). "
        f"The {len(edge)} unsettled starts (omega_1, omega_2; vartheta_1, vartheta_2): "
        + "; ".join(f"({o['omega1']:.4g}, {o['omega2']:.4g}; {o['theta1']:.5g}, {o['theta2']:.5g})" for o in starts)
        + ". They are not counterexamples (each moves monotonically toward S), but the theorem's convergence is not "
        "observed for them within any integrable horizon: power 0, no confirmation."
    )
    assert len(edge_all) >= 1


def _slope(ts, y) -> float:
    return float(np.polyfit(ts, y, 1)[0])


def _fit_window(row) -> np.ndarray:
    """T in [regime time + 100, regime time + 400]: asymptotic, and d >= 1e-12 above its float64 floor (~1e-16)."""
    return (T_SRC >= row["t_reg"] + 100.0) & (T_SRC <= row["t_reg"] + 400.0)


@claim(
    "RG-5.proj",
    reading="d = ||w_1/a_1 - w_2/a_2|| along source GF from D0; C is not given: the rate is fitted (log d on "
    "T in [T_reg + 100, T_reg + 400], T_reg the draw's regime time of RG-17.Cs) and compared with -lambda.",
)
def test_projective_rate(audit):
    rows = SF.d0_source()["rows"]
    slopes = np.array([_slope(T_SRC[_fit_window(r)], np.log(r["d"][_fit_window(r)])) for r in rows])
    dmin = min(float(r["d"][_fit_window(r)].min()) for r in rows)
    ratio = np.array([r["d"][_fit_window(r)][-1] / r["delta"][_fit_window(r)][-1] for r in rows])
    Cd = np.array([np.max(r["d"] * np.exp(LAM * T_SRC)) for r in rows])
    audit.ours(float(np.median(slopes)), 8, label="median fitted rate of log d")
    audit.ours(float(np.max(np.abs(slopes + LAM))), 3, label="max |rate + lambda|")
    audit.evidence(
        f"Least-squares slope of log d on each draw's window [T_reg + 100, T_reg + 400] (16 grid points, d >= "
        f"{dmin:.2g}) for the {N_D0} D0 source flows: {np.min(slopes):.7f} .. {np.max(slopes):.7f} against "
        f"-lambda = {-LAM}; tolerance 1e-4 (0.2% of lambda: the remainder of RG-17.dlog is at most 0.01 lambda at "
        "T_reg and decays like delta_s, the integrator error is ~1e-12). d/delta at the window's end is "
        f"{ratio.min():.6f} .. {ratio.max():.6f} (d ~ delta under balance, as Section 6 states); the measured "
        f"C = sup_T d e^{{lambda T}} ranges {Cd.min():.3g} .. {Cd.max():.3g} over the sample (near-opposite "
        "draws give the large values, see RG-17.Cs)."
    )
    assert np.all(np.abs(slopes + LAM) <= 1e-4)


@claim(
    "RG-13.etarget",
    reading="e_target = e of Section 7 (z_i = (a_i, w_i), h = (z_1 + z_2)/sqrt2, d_z = (z_1 - z_2)/sqrt2, "
    "e = d_z - (h.d_z/|h|^2) h). Our bound: |e| = sqrt2 |z_1 ^ z_2| / |z_1 + z_2| <= sqrt2 a_1 a_2 |(1, u_1)| d "
    "/ |z_1 + z_2| (u_i = w_i/a_i, z_1 ^ z_2 = a_1 a_2 (1, u_1) ^ (0, u_2 - u_1)), bounded on compact sets with "
    "positive heads; C is measured.",
)
def test_target_projective_coordinate(audit):
    rows = SF.d0_source()["rows"]
    sup_ratio = 0.0
    viol = 0.0
    for r in rows:
        ok = r["d"] >= 1e-12
        sup_ratio = max(sup_ratio, float(np.max(r["e"][ok] / r["d"][ok])))
        viol = max(viol, max(r["e"][j] / _e_bound(r["states"][j]) for j in np.nonzero(ok)[0][::10]))
    slopes = np.array([_slope(T_SRC[_fit_window(r)], np.log(r["e"][_fit_window(r)])) for r in rows])
    # random points near proportional units (positive heads): the bound and the ratio
    rng = np.random.default_rng(13_2626)
    worst_rand = 0.0
    sup_rand = 0.0
    for _ in range(400):
        a = rng.uniform(0.2, 2.0, size=2)
        u = rng.normal(size=2)
        u *= rng.uniform(0.2, 2.0) / np.linalg.norm(u)
        du = rng.normal(size=2) * 10.0 ** rng.uniform(-10, -1)
        x = np.array([a[0], a[1], *(a[0] * u), *(a[1] * (u + du))])
        o = pf.observables(x)
        worst_rand = max(worst_rand, o["e"] / _e_bound(x))
        sup_rand = max(sup_rand, o["e"] / o["d"])
    audit.ours(sup_ratio, 4, label="sup_T |e|/d along the D0 source flows")
    audit.ours(float(np.median(slopes)), 8, label="median fitted rate of log |e|")
    audit.evidence(
        f"|e| from the Section 7 coordinates (compensated wedge) along the {N_D0} D0 source flows: |e|/d <= "
        f"{sup_ratio:.4g} over T in [0, 4000] (where d >= 1e-12) and {sup_rand:.4g} at 400 random near-proportional "
        "points (a_i, |u| in [0.2, 2], |u_1 - u_2| in 1e-10..1e-1); our explicit bound holds with max ratio "
        f"{max(viol, worst_rand):.12f} (tolerance 1 + 1e-9: rounding of the wedge at d ~ 1e-12). log |e| has "
        f"fitted rate {slopes.min():.7f} .. {slopes.max():.7f} on the RG-5.proj windows (tolerance 1e-4 from "
        "-lambda, as there)."
    )
    assert max(viol, worst_rand) <= 1 + 1e-9
    assert np.all(np.abs(slopes + LAM) <= 1e-4)


GRAD_FINAL = (
    1e-8  # ||grad F_s|| over T >= 3000: the angle decays like e^{-lambda T} (e^-200 there); 1e-8 leaves room for
)
# the slowest D0 draws (their regime time t_reg, computed in source_flows and asserted below 3000) and for
# rounding of O(1) terms (~1e-16)


@claim(
    "RG-14.gradint",
    reading=D_READING + " The integral is F_s(theta(0)) - lim F_s(theta(t)) by the gradient-flow energy identity "
    "dF_s/dt = -||grad F_s||^2; '-> 0' read as ||grad F_s|| below 1e-8 over the whole last quarter of the run "
    "(T >= 3000), and below 1e-6 of its initial value, on each of the D0 source flows (below ~1e-15 it is float64 "
    "rounding of O(1) terms and no longer decays).",
    by_construction="the integral's finiteness: along any gradient flow dF_s/dt = -||grad F_s||^2 and F_s >= 0 (a "
    "risk plus lambda/2 |theta|^2), so the integral is at most F_s(theta(0)); the check confirms the identity on our "
    "flows, and measures the decay of ||grad F_s||, which can fail",
)
def test_source_gradient_integral(audit):
    rows = SF.d0_source()["rows"]
    worst_identity, worst_point, finals, ratios, drops = 0.0, 0.0, [], [], []
    tail = T_SRC >= 0.75 * T_SRC[-1]
    late = T_SRC >= 200.0  # past the fast transients, where the grid step 20 resolves ||grad F_s||^2 (rate <= 2A)
    for r in rows:
        st = r["states"]
        F = np.array([model.objective(x, "source", LAM) for x in st])
        g = np.array([float(np.linalg.norm(model.objective_grad(x, "source", LAM))) for x in st])
        drops.append(float(F[0] - F[-1]))
        # energy identity on the resolved part: trapezoid of ||grad||^2 over [200, 4000] against F(200) - F(4000)
        integral = float(np.trapezoid(g[late] ** 2, T_SRC[late]))
        worst_identity = max(worst_identity, abs(integral - (F[late][0] - F[-1])) / max(F[0] - F[-1], 1e-300))
        # the identity dF_s/dt = -||grad F_s||^2 pointwise, where the flow still moves (the first grid states):
        # central difference of F_s along the field, step 1e-5 (error ~1e-10 of O(1) values)
        for x in st[:10]:
            v = pf.field(x, "source", LAM)
            dF = (model.objective(x + 1e-5 * v, "source", LAM) - model.objective(x - 1e-5 * v, "source", LAM)) / 2e-5
            if float(v @ v) >= 1e-4:  # where rounding of F (~1e-16 / 1e-5 step) stays below 1e-7 of ||grad||^2
                worst_point = max(worst_point, abs(dF + float(v @ v)) / float(v @ v))
        finals.append(float(np.max(g[tail])))
        ratios.append(float(np.max(g[tail]) / g[0]))
        assert np.all(np.diff(F) <= 1e-13 * max(1.0, abs(F[0])))  # F_s non-increasing (rounding of O(1) values)
    finals_a = np.array(finals)
    t_reg = np.array([r["t_reg"] for r in rows])  # source_flows.regime_time: |dlog delta/dT + lambda| <= lambda/100
    audit.ours(float(t_reg.max()), label="latest regime time t_reg over the draws (source_flows.regime_time)")
    audit.ours(f"{max(drops):.4g}", label="max over draws of F_s(0) - F_s(4000) (the integral to T = 4000)")
    audit.ours(f"{finals_a.max():.3g} (median {np.median(finals_a):.3g})", label="max ||grad F_s|| over T >= 3000")
    audit.ours(f"{worst_identity:.2e}", label="energy identity on [200, 4000], relative to F_s(0) - F_s(4000)")
    audit.ours(
        f"{worst_point:.2e}",
        label="pointwise dF_s/dt + ||grad F_s||^2, relative (first 10 grid states, ||grad||^2 >= 1e-4)",
    )
    audit.evidence(
        f"Source GF (rtol {RTOL:g}) from the {len(rows)} D0 draws on the grid T = 0, 20, ..., 4000: F_s falls "
        f"monotonically by at most {max(drops):.4g}, which bounds the integral; the trapezoid of ||grad F_s||^2 over "
        f"[200, 4000] matches F_s(200) - F_s(4000) to {worst_identity:.1e} of the total drop, and pointwise on the "
        f"first 10 grid states dF_s/dt = -||grad F_s||^2 holds to {worst_point:.1e} relative (grid error: the "
        f"integrand decays at up to 2 lambda per unit time); ||grad F_s|| over T >= 3000 is at most "
        f"{finals_a.max():.2g} (tolerance {GRAD_FINAL:g}: the slowest draw enters Lemma 13's regime, |d log delta/dT + "
        f"lambda| <= lambda/100 for the rest of the grid, at T = {t_reg.max():g}, before the window starts), at most "
        f"{max(ratios):.2g} of its initial value (there it sits at float64 rounding). Deterministic flows, no power "
        "statement."
    )
    assert 0.0 < worst_point <= 1e-5  # central difference at step 1e-5: truncation ~1e-10, rounding <= 1e-7 relative
    assert worst_identity <= 1e-6  # trapezoid error past the transients (step 20, smooth decaying integrand): ~1e-9
    assert finals_a.max() <= GRAD_FINAL and max(ratios) <= 1e-6
    assert t_reg.max() < T_SRC[tail][0]  # every draw is in the regime over the whole window T >= 3000
