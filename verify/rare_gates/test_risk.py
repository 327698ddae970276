"""Checks of the population risks and risk levels (rare-gates Sections 1, 3, 13, 16, 17)."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from derivations.rare_gates import kernels, risk
from derivations.rare_gates.symbols import delta, lam, omega
from numerics.intervals import bounds, certainly_above, certainly_below, enclose
from numerics.rare_gates import model
from numerics.rare_gates.constants import delta_star
from verify.audit import claim, rounds_to

PI = sp.pi
LAM_PAPER = sp.Rational(1, 20)  # the paper's weight decay (Section 8)


@claim("RG-16.Rt")
def test_proportional_target_risk(audit):
    ours = risk.proportional_target_risk()
    q = kernels.q_constant()
    paper = 1 + omega**2 / 4 - q * omega
    audit.ours(ours)
    audit.evidence(
        "Target risk expanded into kernel integrals (E f^2, E f|X|, E|X|^2 from the disk), angle set to 0; "
        "simplify(ours - paper) == 0."
    )
    assert sp.simplify(ours - paper) == 0
    # float64 model at a proportional point agrees (20 eps: a handful of rounded operations)
    w = np.array([0.8, 0.3])
    theta = np.array([0.7, 1.3, *w, *(0.5 * w)])
    om = 0.7 * np.linalg.norm(w) + 1.3 * 0.5 * np.linalg.norm(w)
    assert model.target_risk(theta) == pytest.approx(float(paper.subs(omega, om)), rel=20 * np.finfo(float).eps)


@claim("RG-16.Rcol")
def test_collapsed_risk_level(audit):
    ours = risk.collapsed_risk_level()
    audit.ours(ours)
    enc = enclose(ours, 60)
    audit.evidence(
        "Minimum over omega of the derived proportional risk (SymPy solve), value 1 - 4/pi^2 printed to 50 digits; "
        "interval enclosure at 60 digits certifies > 0.4 and the truncated quote."
    )
    assert rounds_to(ours, "0.5947152...")
    assert certainly_above(enc, "0.4")


@claim("RG-1.059")
def test_proportional_at_least_059(audit):
    ours = risk.collapsed_risk_level()
    audit.ours(ours, 10)
    audit.evidence("R_col derived as the proportional-family minimum; certified enclosure above 0.59.")
    assert certainly_above(enclose(ours, 30), "0.59")


@claim("RG-16.Rgood")
def test_good_risk_level(audit):
    ours, stationarity = risk.good_risk_level()
    q = kernels.q_constant()
    paper = 1 - 2 * q**2 + 2 * lam**2
    audit.ours(ours)
    audit.ours({k: v for k, v in stationarity.items()}, label="stationarity at (omega_i = 2A, delta = pi)")
    audit.evidence(
        "Target objective (derived risk + balanced weight decay lam*omega) is stationary at omega_i = 2A, delta = pi "
        "(all partials vanish exactly, SymPy); its risk there simplifies to the paper's expression."
    )
    assert all(sp.simplify(v) == 0 for v in stationarity.values())
    assert sp.simplify(ours - paper) == 0


@claim("RG-1.027")
def test_good_risk_below_027(audit):
    r_good, _ = risk.good_risk_level()
    val = r_good.subs(lam, LAM_PAPER)
    audit.ours(val)
    audit.evidence("R_good at lambda = 1/20 from the derived expression; certified interval enclosure below 0.27.")
    assert certainly_below(enclose(val, 30), "0.27")


@claim("RG-3.gap")
def test_risk_gap(audit):
    r_good, _ = risk.good_risk_level()
    r_col = risk.collapsed_risk_level()
    lo_good = enclose(r_good.subs(lam, LAM_PAPER), 30)
    # over (0, 1/5]: R_good increases in lambda, so its sup is the value at 1/5
    increasing = sp.simplify(sp.diff(r_good, lam)) == 4 * lam
    sup_good = enclose(r_good.subs(lam, sp.Rational(1, 5)), 30)
    audit.ours(
        f"R_good(1/20) = {mpmath.nstr(bounds(lo_good)[1], 20)}, sup over (0,1/5] R_good = "
        f"{mpmath.nstr(bounds(sup_good)[1], 20)}, R_col = {mpmath.nstr(bounds(enclose(r_col, 30))[0], 20)}"
    )
    audit.evidence(
        "Certified enclosures of the derived R_good (at 1/20 and its sup at 1/5; dR_good/dlambda = 4 lambda > 0) "
        "and R_col."
    )
    assert increasing
    assert (
        certainly_below(lo_good, "0.4")
        and certainly_below(sup_good, "0.4")
        and certainly_above(enclose(r_col, 30), "0.4")
    )


@claim("RG-13.lamrange")
def test_weight_decay_range(audit):
    r_good, _ = risk.good_risk_level()
    q = kernels.q_constant()
    B_s = risk.clone_amplitude("source")
    B_t = risk.clone_amplitude("target")
    A = risk.target_rate_A()
    lam_03 = risk.good_risk_threshold_lambda()
    lam_027 = risk.good_risk_threshold_lambda(sp.Rational(27, 100))
    enc_03 = enclose(lam_03, 50)
    enc_027 = enclose(lam_027, 50)
    # B_s > 0 iff lambda < 1/2; A > 0 iff lambda < q (> 1/2); B_t + lambda/2 - 2q = -3 lambda/2 < 0 for all lambda > 0
    (bs_root,) = sp.solve(B_s, lam)
    (a_root,) = sp.solve(A, lam)
    slack = sp.simplify(B_t + lam / 2 - 2 * q)
    audit.ours(
        f"R_good = 0.27 at lambda = {mpmath.nstr(bounds(enc_027)[0], 20)}; R_good = 0.3 at lambda = "
        f"{mpmath.nstr(bounds(enc_03)[0], 20)}; B_s = 0 at {bs_root}; A = 0 at {a_root}; B_t + lambda/2 - 2q = {slack}"
    )
    both = certainly_above(enc_027, sp.Rational(1, 5)) and certainly_above(enc_03, sp.Rational(1, 5))
    audit.evidence(
        "Roots of the derived R_good(lambda) = level solved exactly (SymPy) and enclosed at 50 digits: "
        f"{'both exceed' if both else 'not both above'} 1/5, so R_good <= 0.27 < 0.3 on (0, 1/5]; the 0.3 root "
        f"({mpmath.nstr(bounds(enc_03)[0], 4)}) is the smallest of the conditions' cut-offs (B_s = 0 at {bs_root}, "
        f"A = 0 at {float(sp.N(a_root, 15)):.4g})."
    )
    assert certainly_above(enc_027, sp.Rational(1, 5))  # R_good <= 0.27 on (0, 1/5]
    assert certainly_above(enc_03, sp.Rational(1, 5))
    assert bs_root == sp.Rational(1, 2) and certainly_above(enclose(a_root, 30), sp.Rational(1, 2))
    assert certainly_below(enc_03, sp.Rational(1, 2))  # binding: R_good < 0.3 fails first
    assert slack == -sp.Rational(3, 2) * lam


@claim(
    "RG-17.Rmin",
    reading="Eq. (38) is lost; R_min(delta) is read as the minimum of R_t over omega1, omega2 >= 0 "
    "at fixed separation delta, "
    "R_min = 1 - q^2/(1/2 + J(delta)).",
)
def test_min_risk_at_angle(audit):
    rmin = risk.min_risk_at_angle()
    J = risk.J_of(delta)
    q = kernels.q_constant()
    d_rmin = sp.simplify(sp.diff(rmin, delta))
    # dR_min/ddelta = -q^2 g(delta)/(1/2 + J)^2 <= 0: decreasing in delta, i.e. increasing as J decreases
    expected_d = -(q**2) * kernels.g_kernel().subs(kernels.t, delta) / (sp.Rational(1, 2) + J) ** 2
    enc = delta_star(dps=50)
    lo, hi = bounds(enc)
    audit.ours(rmin, label="R_min(delta)")
    audit.ours(lo, 50, label="delta_* lower end (R_min = 0.4)")
    audit.evidence(
        "Stationary point of the derived two-unit target risk in (omega1, omega2) (positive-definite quadratic form); "
        "at delta = 0 it equals R_col; the crossing R_min = 0.4 is enclosed by certified bisection (width < 1e-50)."
    )
    assert sp.simplify(d_rmin - expected_d) == 0
    assert sp.simplify(rmin.subs(delta, 0) - risk.collapsed_risk_level()) == 0
    assert 0 < lo <= hi < mpmath.pi


@claim("RG-13.lamfree")
def test_levels_independent_of_lambda(audit):
    exprs = {"R_col": risk.collapsed_risk_level(), "R_min": risk.min_risk_at_angle()}
    audit.ours({k: f"free symbols {sorted(map(str, e.free_symbols))}" for k, e in exprs.items()})
    audit.evidence("The derived expressions contain no lambda symbol.")
    assert all(lam not in e.free_symbols for e in exprs.values())
