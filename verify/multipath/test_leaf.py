"""Checks of Appendix E (multi-pathway paper): leaf coordinates, GF conservation, the EoS balancing gap.

Symbolic results from :mod:`derivations.multipath.leaf` (symbolic depth L); numbers from
:mod:`numerics.multipath.sharpness`: 50-digit mpmath for the expansions (leaf sharpness,
zero-loss manifold, normal form), scipy DOP853 for the gradient flow, and float64 runs of the
exact reduced GD recursion (54) near the balanced minimum just beyond the stability edge
(eta = 2(1 + excess)/lambda_min), where the residual settles on a stable two-cycle.

Nothing in Appendix E needed reconstruction. "EoS" below means that two-cycle regime; the
paper's Hypothesis E.10 is tested against it.
"""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.multipath import leaf as dl
from numerics.multipath import sharpness as ns
from verify.audit import claim, discrepancy, paper_claim

PROP = settings(max_examples=40, deadline=None, derandomize=True)
EOS_DEPTHS = (3, 4, 6)

CONDITIONAL_READING = (
    "(65) is read as the conditional statement it is in the text: a consequence of Lemma E.9 "
    "*given* Hypothesis E.10 at "
    "iterate t (|beta(t)| <= C r(t)^2). On actual GD two-cycles the hypothesis fails (MP-E.10) and r(t) + r(t+1) = "
    "-A r(t)^2 + O(r^3) instead."
)


@pytest.fixture(scope="module")
def cycles():
    """GD (54) with H = 2, sigma_* = 1, eta = 2(1 + 1e-3)/lambda_min, measured over its two-cycle, for L = 3, 4, 6."""
    return {L: ns.eos_two_cycle(L, 2, 1e-3) for L in EOS_DEPTHS}


def _ours_c(L, kappa, A):
    """Our two-step coefficient from the derivations: -2 x (r^2 coefficient of the multiplier) with
    S = -A (two-cycle)."""
    tm = dl.two_step_multiplier()["moving_S"]
    S = dl.two_cycle()["sum_coefficient"]
    expr = -2 * tm.subs(dl.S, S)
    return float(expr.subs({dl.L: L, dl.kappa: kappa, dl.A: A}))


def _paper_c0(kappa, A):
    return 2 * (kappa**2 + kappa * A)


# ------------------------------------------------------------------ leaves and gradient flow (E.3)
@claim("MP-E.3")
def test_gf_conserves_leaf(audit):
    g = dl.gf_leaf()
    drift, moved, gd_change = {}, {}, {}
    for L, a0 in [(3, [0.3, 0.5, 0.7]), (5, [0.6, 0.8, 0.9, 1.1]), (8, [0.6, 0.9])]:
        a0 = np.array(a0)
        aT = ns.gradient_flow(a0, L, 1.0, 3.0)
        q0, qT = a0 ** (2.0 - L), aT ** (2.0 - L)
        z0, zT = q0 - q0.mean(), qT - qT.mean()
        drift[L] = float(np.abs(zT - z0).max() / np.abs(z0).max())
        moved[L] = float(np.abs(aT - a0).max())
        gd = a0 - 0.5 * (np.sum(a0**L) - 1.0) * a0 ** (L - 1)  # one GD step (eta = 0.5) does move z
        qg = gd ** (2.0 - L)
        gd_change[L] = float(np.abs((qg - qg.mean()) - z0).max() / np.abs(z0).max())
    audit.ours(g["dq_dt"], label="dq_h/dt under da_h/dt = -r a_h^{L-1}")
    audit.ours(drift, label="GF: max |z(3) - z(0)| / max |z(0)|, by L")
    audit.ours(moved, label="GF: max |a(3) - a(0)| (the flow does move)")
    audit.ours(gd_change, label="one GD step, eta = 0.5: relative change of z")
    audit.evidence(
        "SymPy (symbolic L): d(a^{2-L})/dt = (L-2) r, the same for every pathway, so z = q - mean(q) is constant; "
        "the curve a_h = (m + z_h)^{-1/(L-2)} inverts q = a^{2-L} (residual 0). DOP853 (rtol 1e-12) from three "
        f"starts, L = 3, 5, 8, sigma_* = 1, to t = 3: z drifts by at most {max(drift.values()):.1e} relative "
        f"(tolerance 1e-9) while a moves by {min(moved.values()):.2f}-{max(moved.values()):.2f}; one GD step (eta = "
        f"0.5) changes z by {min(gd_change.values()):.1e} relative or more."
    )
    assert g["dq_dt"] == (dl.L - 2) * dl.r and g["leaf_inverse_residual"] == 0
    assert max(drift.values()) < 1e-9  # integrator tolerance 1e-12 accumulated over O(1e2) steps
    assert min(moved.values()) > 1e-2
    assert min(gd_change.values()) > 1e-6  # a finite step does not conserve z


@claim("MP-E.57")
def test_variance_equivalence(audit):
    sym = {Hn: dl.variance_equivalence(Hn) for Hn in (2, 3)}
    errs = {}
    with mpmath.workdps(50):
        L, H = 5, 3
        a_star = (mpmath.mpf(1) / H) ** (mpmath.mpf(1) / L)
        w = [mpmath.mpf(1), mpmath.mpf("-0.3"), mpmath.mpf("-0.7")]
        for e in ("1e-3", "1e-4", "1e-5"):
            a = [a_star * (1 + mpmath.mpf(e) * wi) for wi in w]
            q = [x ** (2 - L) for x in a]
            V = mpmath.fsum((x - mpmath.fsum(q) / H) ** 2 for x in q)
            G = mpmath.fsum((x - mpmath.fsum(a) / H) ** 2 for x in a)
            errs[e] = abs(V / ((L - 2) ** 2 * a_star ** (2 - 2 * L) * G) - 1)
    audit.ours(
        {Hn: (v["eps1"], v["coefficient_residual"]) for Hn, v in sym.items()}, label="(eps^1 term, eps^2 residual), H"
    )
    audit.ours({k: mpmath.nstr(v, 4) for k, v in errs.items()}, label="|V / ((L-2)^2 a_*^{2-2L} G) - 1|, L = 5, H = 3")
    audit.evidence(
        "SymPy (symbolic L, H = 2 and 3): with a_h = a_* + eps delta_h, V = (L-2)^2 a_*^{2-2L} eps^2 sum delta^2 + "
        "O(eps^3). 50 digits, L = 5, H = 3: the relative error is "
        f"{', '.join(mpmath.nstr(v, 3) for v in errs.values())} at eps = {', '.join(errs)}, falling "
        f"{mpmath.nstr(errs['1e-3'] / errs['1e-4'], 3)}- and {mpmath.nstr(errs['1e-4'] / errs['1e-5'], 3)}-fold per "
        "tenfold eps (O(G^{1/2}) relative, as stated)."
    )
    assert all(v["eps1"] == 0 and v["coefficient_residual"] == 0 for v in sym.values())
    assert errs["1e-4"] < errs["1e-3"] / 5 and errs["1e-5"] < errs["1e-4"] / 5 and errs["1e-5"] < 1e-3


@claim("MP-E.4")
def test_leaf_sharpness_expansion(audit):
    sym = {Hn: dl.leaf_sharpness_expansion(Hn) for Hn in (2, 3)}
    rows, folds = {}, {}
    for L, zeta in [(3, ["1", "-0.25", "-0.75"]), (6, ["0.5", "-0.5"])]:
        H = len(zeta)
        with mpmath.workdps(50):
            a_star = (mpmath.mpf(1) / H) ** (mpmath.mpf(1) / L)
            coef = L * (L - 1) / mpmath.mpf(L - 2) * a_star ** (4 * L - 6)
            lam_min = L * H * a_star ** (2 * L - 2)
            errs = []
            for s in ("1e-2", "1e-3", "1e-4"):
                z = [mpmath.mpf(s) * mpmath.mpf(v) for v in zeta]
                _, lam = ns.leaf_sharpness(z, L, 1, 50)
                errs.append(abs((lam - lam_min) / mpmath.fsum(v**2 for v in z) / coef - 1))
            rows[(L, H)] = [mpmath.nstr(e, 3) for e in errs]
            folds[(L, H)] = [mpmath.nstr(errs[0] / errs[1], 3), mpmath.nstr(errs[1] / errs[2], 3)]
            assert errs[2] < errs[1] / 5 and errs[1] < errs[0] / 5 and errs[2] < mpmath.mpf("1e-3")
    audit.ours(
        {Hn: [v[k] for k in ("mu1", "lambda0_residual", "eps1", "coefficient_residual")] for Hn, v in sym.items()},
        label="SymPy residuals, H",
    )
    audit.ours(rows, label="|(Lambda - lambda_min)/||z||^2 / coefficient - 1| at ||z|| ~ 1e-2, 1e-3, 1e-4")
    audit.evidence(
        "SymPy (symbolic L, H = 2 and 3, units q ~ a_*^{2-L}): the zero-loss point of the leaf eps zeta has leaf "
        "shift mu = O(eps^2), no eps^1 term, and eps^2 coefficient L(L-1)/(L-2) a_*^{4L-6} ||zeta||^2, positive for "
        "L > 2 (so H_leaf = 2 L(L-1)/(L-2) a_*^{4L-6} P > 0 and z = 0 is the unique local minimiser). 50 digits: "
        "the exact zero-loss point on the leaf (solved) reproduces the coefficient with an error that falls, per "
        "tenfold ||z||, "
        + "; ".join(f"{a}- and {b}-fold at (L, H) = {k}" for k, (a, b) in folds.items())
        + " (O(||z||) or faster; asserted: at least 5-fold)."
    )
    assert all(
        [v[k] for k in ("mu1", "lambda0_residual", "eps1", "coefficient_residual")] == [0, 0, 0, 0]
        for v in sym.values()
    )
    assert all(v["scale_residuals"] == [0, 0, 0] for v in sym.values())


@claim("MP-E.60")
def test_zero_loss_expansion(audit):
    sym = {Hn: dl.zero_loss_expansion(Hn) for Hn in (2, 3)}
    errs = {}
    with mpmath.workdps(50):
        L, H = 4, 3
        a_star = (mpmath.mpf(1) / H) ** (mpmath.mpf(1) / L)
        C = L * (L - 1) * (L - 2) * a_star ** (2 * L - 4)
        lam_min = L * H * a_star ** (2 * L - 2)
        d = [mpmath.mpf("0.6"), mpmath.mpf("0.1"), mpmath.mpf("-0.7")]
        for e in ("1e-2", "1e-3", "1e-4"):
            dd = [mpmath.mpf(e) * v for v in d]
            abar = mpmath.findroot(lambda x, dd=dd: mpmath.fsum((x + v) ** L for v in dd) - 1, a_star)
            lam = L * mpmath.fsum((abar + v) ** (2 * L - 2) for v in dd)
            errs[e] = abs((lam - lam_min) / (C * mpmath.fsum(v**2 for v in dd)) - 1)
    audit.ours({Hn: (v["eps1"], v["C_residual"]) for Hn, v in sym.items()}, label="(eps^1 term, C_lambda residual), H")
    audit.ours(
        {k: mpmath.nstr(v, 4) for k, v in errs.items()}, label="|(lambda - lambda_min)/(C_lambda G) - 1|, L = 4, H = 3"
    )
    audit.evidence(
        "SymPy (symbolic L, H = 2, 3): on sum_h a_h^L = H a_*^L with a_h = abar + eps delta_h, abar = a_* + O(eps^2) "
        "and lambda = lambda_min + L(L-1)(L-2) a_*^{2L-4} G + O(eps^3). 50 digits at L = 4, H = 3 with the exact "
        f"zero-loss mean: relative error {', '.join(mpmath.nstr(v, 3) for v in errs.values())} at eps = "
        f"{', '.join(errs)}, i.e. O(G^{{1/2}}) (falling {mpmath.nstr(errs['1e-2'] / errs['1e-3'], 3)}- and "
        f"{mpmath.nstr(errs['1e-3'] / errs['1e-4'], 3)}-fold per tenfold eps)."
    )
    assert all(v["eps1"] == 0 and v["C_residual"] == 0 for v in sym.values())
    assert errs["1e-4"] < errs["1e-3"] / 5 < errs["1e-2"] / 25 and errs["1e-4"] < 1e-3


# ------------------------------------------------------------------ one-step maps (E.4)
@claim("MP-E.5")
def test_one_dimensional_map(audit):
    om = dl.one_dimensional_map()
    worst = mpmath.mpf(0)
    with mpmath.workdps(50):
        for L, a, c in [(3, "0.8", "0.3"), (5, "1.3", "-0.7"), (9, "0.95", "0.05")]:
            a, c = mpmath.mpf(a), mpmath.mpf(c)
            u = a ** (2 - L)
            eta_r = c  # c = eta r
            direct = (a - eta_r * a ** (L - 1)) ** (2 - L)
            F = u ** (L - 1) / (u - c) ** (L - 2)
            worst = max(worst, abs(direct / F - 1))
    audit.ours(om["residual_61"], label="log residual of (61), symbolic L")
    audit.ours(worst, 5, label="50-digit |direct / F_c - 1| at three (L, a, c)")
    audit.evidence(
        "SymPy, symbolic L, compared as logarithms of positive quantities (a - eta r a^{L-1} > 0); "
        f"50-digit spot checks at three (L, a, c): largest |direct / F_c - 1| = {mpmath.nstr(worst, 2)} "
        "(tolerance 1e-45)."
    )
    assert om["residual_61"] == 0
    assert worst < mpmath.mpf(10) ** -45  # 50-digit arithmetic, a few roundings


@claim("MP-E.6")
def test_F_derivative_bounds(audit):
    om = dl.one_dimensional_map()
    seen = []

    @PROP
    @given(
        L=st.integers(3, 8),
        a=st.lists(st.floats(0.3, 2.0), min_size=2, max_size=4),
        positive=st.booleans(),
        phi=st.floats(1e-3, 1.0),
        t=st.floats(0.0, 1.0),
    )
    def prop(L, a, positive, phi, t):
        with mpmath.workdps(30):
            u_vals = [mpmath.mpf(x) ** (2 - L) for x in a]
            amax = max(mpmath.mpf(x) for x in a)
            c = phi / ((L - 1) * amax ** (L - 2)) if positive else -5 * phi
            u = min(u_vals) + mpmath.mpf(t) * (max(u_vals) - min(u_vals))  # a point of the hull I
            Fp = u ** (L - 2) * (u - (L - 1) * c) / (u - c) ** (L - 1)
            seen.append(float(Fp))
            assert 0 <= Fp < 1  # c != 0 here; 30 digits resolve 1 - F' >= ~1e-9 for |c| >= 1e-3 scales

    prop()
    audit.ours({k: om[k] for k in ("residual_Fprime", "one_minus_Fprime_residual", "g_at_0", "g_prime_residual")})
    audit.ours((min(seen), max(seen)), label="range of F_c' over the hypothesis cases")
    audit.evidence(
        "SymPy (symbolic L, u - c = v > 0): F_c' = u^{L-2}(u - (L-1)c)/(u-c)^{L-1}, 1 - F_c' = g(c)/(u-c)^{L-1} "
        "with g(0) = 0 and g'(c) = (L-1)(u^{L-2} - (u-c)^{L-2}), positive for c > 0 and negative for c < 0 (L > "
        f"2): g > 0 for c != 0. Hypothesis ({PROP.max_examples} derandomised cases, L = 3..8, c <= 0 or c in (0, "
        "1/((L-1) max a^{L-2})], points of the hull of the a~_h, 30 digits): 0 <= F_c' < 1 in each of the "
        f"{len(seen)} cases (range [{min(seen):.3g}, {max(seen):.10f}])."
    )
    assert all(om[k] == 0 for k in ("residual_Fprime", "one_minus_Fprime_residual", "g_at_0", "g_prime_residual"))


@claim("MP-E.8")
def test_strong_safety_contraction(audit):
    ratios = []

    @PROP
    @given(
        L=st.integers(3, 7),
        a=st.lists(st.floats(0.3, 2.0), min_size=2, max_size=4, unique=True),
        sig=st.floats(0.2, 5.0),
        phi=st.floats(0.01, 1.0),
    )
    def prop(L, a, sig, phi):
        with mpmath.workdps(40):
            a = [mpmath.mpf(x) for x in a]
            r = mpmath.fsum(x**L for x in a) - mpmath.mpf(sig)
            if abs(r) < mpmath.mpf("1e-8"):
                return
            # strong safety: r <= 0 (any eta), or eta r max a^{L-2} <= 1/(L-1)
            eta = phi / ((L - 1) * max(a) ** (L - 2) * r) if r > 0 else 2 * phi
            new = [x - eta * r * x ** (L - 1) for x in a]

            def V(v):
                q = [x ** (2 - L) for x in v]
                m = mpmath.fsum(q) / len(q)
                return mpmath.fsum((x - m) ** 2 for x in q)

            ratios.append(float(V(new) / V(a)))
            assert V(new) < V(a)  # r != 0 and the a_h distinct: strict (40 digits)

    prop()
    audit.ours(max(ratios), label="largest V(t+1)/V(t) over the hypothesis cases")
    audit.evidence(
        f"Hypothesis ({PROP.max_examples} derandomised cases): 2-4 distinct a_h in [0.3, 2], L = 3..7, sigma_* in "
        "[0.2, 5]; eta chosen so that the strong-safety condition holds (r < 0, or eta r max a^{L-2} = phi/(L-1) "
        f"with phi in (0.01, 1]); one step of (54) at 40 digits: V strictly decreases in each of the {len(ratios)} "
        f"cases with |r| >= 1e-8 (largest V(t+1)/V(t) = {max(ratios):.10f})."
    )
    assert max(ratios) < 1


# ------------------------------------------------------------------ the EoS normal form and two-cycles (E.5)
@claim("MP-E.9")
def test_normal_form(audit):
    sym = {Hn: dl.normal_form(Hn) for Hn in (2, 3)}
    rows = {}
    with mpmath.workdps(50):
        L, eta = 4, mpmath.mpf("0.3")
        a = [mpmath.mpf(x) for x in ("0.7", "0.9", "1.1")]
        lam = L * mpmath.fsum(x ** (2 * L - 2) for x in a)
        A = eta**2 / 2 * L * (L - 1) * mpmath.fsum(x ** (3 * L - 4) for x in a)
        B = eta**3 / 6 * L * (L - 1) * (L - 2) * mpmath.fsum(x ** (4 * L - 6) for x in a)
        C4 = eta**4 * mpmath.binomial(L, 4) * mpmath.fsum(x ** (5 * L - 8) for x in a)  # next term of (1-x)^L
        for r in ("1e-2", "1e-3", "1e-4"):
            r = mpmath.mpf(r)
            exact = mpmath.fsum(x**L * (1 - eta * r * x ** (L - 2)) ** L for x in a) - (
                mpmath.fsum(x**L for x in a) - r
            )
            nf = -r + (2 - eta * lam) * r + A * r**2 - B * r**3
            rows[mpmath.nstr(r, 1)] = (exact - nf) / r**4 / C4
    audit.ours(
        {Hn: [v[k] for k in ("r0", "r1_residual", "r2_residual", "r3_residual")] for Hn, v in sym.items()},
        label="SymPy residuals, H",
    )
    audit.ours({k: mpmath.nstr(v, 8) for k, v in rows.items()}, label="(exact - normal form)/(C4 r^4), L = 4, H = 3")
    nf_dev = max(abs(v - 1) for v in rows.values())
    audit.evidence(
        "SymPy (symbolic L, H = 2, 3): the r^0..r^3 coefficients of r' = sum_h a_h^L (1 - eta r a_h^{L-2})^L - "
        "sigma_* are 0, 1 - eta lambda = -1 + beta, (eta^2/2) Lambda_3 = A, -(eta^3/6) Lambda_4 = -B. 50 digits (L = "
        f"4, H = 3): the remainder divided by its leading r^4 term differs from 1 by at most {mpmath.nstr(nf_dev, 2)} "
        f"at r = {', '.join(rows)} (at L = 4 the remainder is the r^4 term itself: (1 - x)^4 ends there; the check "
        "allows an O(r) error, 1e-2 at r = 1e-4)."
    )
    assert all(
        [v[k] for k in ("r0", "r1_residual", "r2_residual", "r3_residual")] == [0, 0, 0, 0] for v in sym.values()
    )
    assert abs(rows["0.0001"] - 1) < mpmath.mpf("1e-2")  # next-order term O(r) relative


@claim("MP-E.65", reading=CONDITIONAL_READING)
def test_two_step_expansion_under_bracketing(audit, cycles):
    tb = dl.two_step_under_bracketing()
    measured = {L: (c["sum_over_r2"] / c["A"]) for L, c in cycles.items()}
    audit.ours(
        {k: tb[k] for k in ("lead", "sum_r2", "prod_r2")},
        label="r^1 coefficient of r', r^2 coefficients of r + r' and r r'",
    )
    audit.ours(measured, 4, label="for contrast, GD two-cycle: (r + r')/(A r^2), L = 3, 4, 6")
    audit.evidence(
        "SymPy: with beta = b r^2, r' = -r + (A) r^2 + O(r^3), so r + r' = A r^2 + O(r^3) and r r' = -r^2 + O(r^3): "
        "(65) follows from (64) and the bracketing. On GD two-cycles the bracketing does not hold and (r + r')/(A "
        "r^2) is "
        + ", ".join(f"{v:.4f}" for v in measured.values())
        + f" at L = {', '.join(map(str, measured))}, near -1."
    )
    assert tb["lead"] == -1 and tb["sum_r2"] == dl.A and tb["prod_r2"] == -1


@pytest.fixture(scope="module")
def bracketing(cycles):
    """The smallest constant C with |beta| <= C r^2 on two EoS two-cycles of different amplitude (L = 3)."""
    big = ns.eos_two_cycle(3, 2, 4e-3)
    small = cycles[3]
    # smallest constant the bracketing |beta| <= C r^2 needs on each orbit: C = |beta/r| / |r|
    return {
        "shift": dl.sharpness_shift(2),
        "two_cycle": dl.two_cycle(),
        "amp": small["amplitude"] / big["amplitude"],
        "c_big": abs(big["beta_over_r"]) / big["amplitude"],
        "c_small": abs(small["beta_over_r"]) / small["amplitude"],
    }


@claim("MP-E.10")
def test_sharpness_bracketing_ours(audit, cycles, bracketing):
    b = bracketing
    dev2A = max(abs(c["beta_over_r"] + 2 * c["A"]) / abs(2 * c["A"]) for c in cycles.values())
    audit.ours(
        {L: (round(c["beta_over_r"], 4), round(-2 * c["A"], 4)) for L, c in cycles.items()},
        label="(mean beta/r, -2A) on the two-cycle, L = 3, 4, 6",
    )
    audit.ours(
        {"amplitude ratio": b["amp"], "C needed (excess 4e-3)": b["c_big"], "C needed (excess 1e-3)": b["c_small"]},
        label="L = 3",
    )
    audit.evidence(
        "SymPy: r^1 coefficient of beta(t+1) - beta(t) is 4A (residual 0); a period-two orbit of the normal form "
        "forces beta = -2A r + O(r^2) and r + r' = -A r^2. GD (54), H = 2, sigma_* = 1, eta = 2(1 + "
        f"excess)/lambda_min: on the settled two-cycle beta/r matches -2A to {dev2A:.2%} (L = 3: "
        f"{cycles[3]['beta_over_r']:.4f} vs -2A = {-2 * cycles[3]['A']:.4f}; tolerance 1%), so the smallest C with "
        "|beta| <= C r^2 is ~2A/|r| and diverges as the amplitude shrinks: halving the amplitude (ratio "
        f"{b['amp']:.3f}) multiplies the needed C by {b['c_small'] / b['c_big']:.3f}. Our side (this check): the "
        "derivation's residuals and the amplitude scaling; the paper's side asserts a fixed C: the needed C may grow "
        "by at most 25% (an O(r) correction allowance)."
    )
    assert b["shift"]["residual"] == 0 and b["two_cycle"]["b1"] == -2 * dl.A
    assert 0.4 < b["amp"] < 0.6  # the amplitude scales like excess^(1/2)
    for c in cycles.values():  # beta/r on the orbit is -2A to 1% (O(r) corrections, r ~ 0.02)
        assert abs(c["beta_over_r"] + 2 * c["A"]) <= 0.01 * abs(2 * c["A"])


@discrepancy(
    "MP-E.10",
    reason=(
        "The bracketing cannot hold at consecutive steps: from (54), beta(t+1) - beta(t) = 4 A(t) r(t) + O(r^2) "
        "exactly, so |beta| <= C r^2 at t forces |beta(t+1)| ~ 4A|r|. On the stable GD two-cycle near the balanced "
        "minimum beta(t) = -2 A r(t) + O(r^2) (measured values in the evidence): |beta| is O(r), not O(r^2), so the "
        "constant C the bracketing needs grows like 2A/|r| as the orbit shrinks, and r(t) + r(t+1) = -A r(t)^2, the "
        "opposite sign of (65)."
    ),
)
def test_sharpness_bracketing_paper(bracketing):
    b = bracketing
    paper_claim(
        b["c_small"] <= 1.25 * b["c_big"],  # a fixed C (the paper's Hypothesis E.10)
        f"the C that |beta| <= C r^2 needs grows {b['c_small'] / b['c_big']:.3f}x when the amplitude "
        f"falls {b['amp']:.3f}x (a fixed C allows 1.25x)",
    )


@claim("MP-5.1.alt")
def test_alternation_and_pairwise_decay(audit, cycles):
    rows = {L: (c["alternates"], c["V_pairs_decrease"], float(c["V"][-1] / c["V"][0])) for L, c in cycles.items()}
    audit.ours(rows, label="(r alternates, V(t+2) < V(t) always, V_end/V_start over 400 steps)")
    audit.evidence(
        "GD (54) on the two-cycle just beyond the stability edge (H = 2, sigma_* = 1, excess 1e-3, last 400 of 20000 "
        "steps): the residual changes sign at every step and the leaf variance V = ||z||^2 decreases over every "
        "pair of "
        "steps (while, under GF, z is conserved: MP-E.3)."
    )
    assert all(c["alternates"] and c["V_pairs_decrease"] for c in cycles.values())


@claim("MP-E.11")
def test_two_step_contraction_exists(audit, cycles):
    rows = {L: (c["c_measured"], _ours_c(L, c["kappa"], c["A"])) for L, c in cycles.items()}
    audit.ours(
        {L: (round(a, 5), round(b, 5)) for L, (a, b) in rows.items()}, label="(measured c, our formula), L = 3, 4, 6"
    )
    audit.evidence(
        "-log(G(t+2)/G(t))/r(t)^2 averaged over the last 400 steps of GD (54) on the EoS two-cycle is positive for L "
        "= 3, 4, 6: the gap contracts over pairs of steps at a rate c r^2, c > 0. Our leading coefficient, from the "
        "two-step multiplier with kappa following the mean and the two-cycle relation r + r' = -A r^2: c = 2(kappa^2 "
        "(2L-3)/(L-1) - kappa A) (= 2 kappa^2 (L-2)/(L-1) at eta lambda_min = 2); measured and ours agree to "
        f"{max(abs(m - o) / o for m, o in rows.values()):.2%} (tolerance 2%: residual O(r) terms, rms r = "
        f"{min(c['amplitude'] for c in cycles.values()):.3f}-{max(c['amplitude'] for c in cycles.values()):.3f}; the "
        "even/odd average cancels the linear one)."
    )
    assert all(m > 0 for m, _ in rows.values())
    assert all(abs(m - o) < 0.02 * o for m, o in rows.values())  # O(r) corrections, r ~ 0.02, partly cancelled


@claim("MP-E.11.c0")
def test_explicit_c0_ours(audit, cycles):
    rows = {
        L: (c["c_measured"], _paper_c0(c["kappa"], c["A"]), _ours_c(L, c["kappa"], c["A"])) for L, c in cycles.items()
    }
    frozen = dl.two_step_multiplier()["frozen"]
    audit.ours(
        {L: tuple(round(v, 4) for v in row) for L, row in rows.items()}, label="(measured, paper c0, ours), L = 3, 4, 6"
    )
    ratio = {L: round(p / m, 2) for L, (m, p, _) in rows.items()}
    ours_dev = max(abs(m - o) / o for m, _, o in rows.values())
    audit.evidence(
        "The paper's algebra is reproduced under its own assumptions (SymPy: the frozen multiplier (1 - kappa r)(1 - "
        "kappa r') with r' = -r + A r^2 has r^2 coefficient -(kappa^2 + kappa A)). Against GD (54) on the EoS "
        f"two-cycle (H = 2, sigma_* = 1, eta lambda_min = {cycles[3]['eta'] * cycles[3]['lam_min']:.3f}) the paper's "
        f"c0 / measured is {ratio} for L = 3, 4, 6, and ours matches the measured coefficient to {ours_dev:.2%} "
        "(tolerance 2%; MP-E.11). Measured c, our formula (MP-E.11) and the paper's c0 = 2(kappa^2 + kappa A), L = 3, "
        "4, 6: "
        + "; ".join(f"{m:.2f}, {o:.2f}, {p:.2f}" for m, p, o in rows.values())
        + ". The paper's side asserts its c0 within 10%."
    )
    assert sp.expand(frozen + dl.kappa**2 + dl.kappa * dl.A) == 0
    assert all(abs(m - o) < 0.02 * o for m, _, o in rows.values())  # ours: O(r) corrections, r ~ 0.02


@discrepancy(
    "MP-E.11.c0",
    reason=(
        "Measured on GD two-cycles (L = 3, 4, 6) the contraction coefficient is 2 kappa^2 (L-2)/(L-1) (our "
        "derivation), not 2(kappa^2 + kappa A) (measured values in the evidence): freezing kappa drops kappa(t+1) - "
        "kappa(t) = -kappa^2 (L-2)/(L-1) r(t), which is O(r) and contributes at order r^2, and on the actual orbit "
        "beta = -2A r makes r + r' = -A r^2, so the quadratic term enters with a negative sign, not as the positive "
        "correction kappa A."
    ),
)
def test_explicit_c0_paper(cycles):
    rows = {L: (c["c_measured"], _paper_c0(c["kappa"], c["A"])) for L, c in cycles.items()}
    paper_claim(
        all(abs(m - p) < 0.1 * p for m, p in rows.values()),
        "measured / paper c0: " + ", ".join(f"L = {L}: {m / p:.3f}" for L, (m, p) in rows.items()),
    )


@claim("MP-E.69")
def test_stopping_gap(audit):
    sg = dl.stopping_gap()
    rows = {}
    with mpmath.workdps(50):
        L, H = 4, 2
        a_star = (mpmath.mpf(1) / H) ** (mpmath.mpf(1) / L)
        lam_min = L * H * a_star ** (2 * L - 2)
        C = L * (L - 1) * (L - 2) * a_star ** (2 * L - 4)

        def lam_of(delta):  # zero-loss point a = (abar + delta, abar - delta)
            abar = mpmath.findroot(lambda x: (x + delta) ** L + (x - delta) ** L - 1, a_star)
            return L * ((abar + delta) ** (2 * L - 2) + (abar - delta) ** (2 * L - 2))

        for chi in ("1e-2", "1e-3", "1e-4"):
            chi = mpmath.mpf(chi)
            eta = (2 - chi) / lam_min
            dlt = mpmath.findroot(lambda x, eta=eta: lam_of(x) - 2 / eta, mpmath.sqrt(chi / (eta * C) / 2))
            G = 2 * dlt**2
            Gd = (2 - eta * lam_min) / (eta * C)
            rows[mpmath.nstr(chi, 1)] = abs(G - Gd) / chi ** mpmath.mpf("1.5")
    audit.ours(sg["G_dagger"], label="G_dagger from lambda_min + C_lambda G = 2/eta")
    audit.ours(
        {k: mpmath.nstr(v, 4) for k, v in rows.items()},
        label="|G_exact - G_dagger| / chi^{3/2}, chi = 2 - eta lambda_min (L = 4, H = 2)",
    )
    audit.evidence(
        "SymPy: solving (60) truncated at G for lambda = 2/eta gives (69) (residual 0). 50 digits, L = 4, H = 2, "
        "sigma_* = 1: the exact zero-loss point with lambda = 2/eta has balancing gap G within O(chi^{3/2}) of "
        f"(69): the scaled error |G - G_dagger|/chi^(3/2) is {', '.join(mpmath.nstr(v, 3) for v in rows.values())} at "
        f"chi = {', '.join(rows)} (bounded, falling as chi -> 0)."
    )
    assert sg["residual"] == 0
    vals = list(rows.values())
    assert all(b <= a for a, b in zip(vals, vals[1:])) and vals[0] < 1  # bounded by the first: the O(chi^{3/2}) claim
