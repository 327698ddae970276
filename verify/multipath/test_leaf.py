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

UNIFORM_READING = (
    "Hypothesis E.10's C_beta read as one constant for the regime, uniform as the residual r -> 0 (over the "
    "two-cycles of every step eta -> 2/lambda_min, i.e. every amplitude): what the O(r^2) and O(r^3) of (65)-(66) "
    "need. Taken literally (constants chosen per neighbourhood, for t >= t0), E.10 holds on any one settled "
    "two-cycle, with C_beta ~ 2A/r0 set by its amplitude r0, and fails only as the amplitude shrinks"
)
VACUOUS_65 = (
    "the check substitutes the premise beta = b r^2 (Hypothesis E.10) into (64) and reads off the coefficients, so "
    "the implication holds by algebra; it is vacuous on actual GD two-cycles near the balanced minimum, where the "
    "premise fails (MP-E.10: |beta| ~ 2A|r|, not O(r^2)) and r + r' = -A r^2 instead of +A r^2."
)
E11_READING = (
    "Theorem E.11 is conditional on Hypothesis E.10, which no GD two-cycle satisfies (MP-E.10). Checked is its "
    "conclusion without the premise, on actual orbits: on the settled two-cycle of (54) (H = 2, sigma_* = 1, eta = "
    "2(1 + 1e-3)/lambda_min, L = 3, 4, 6) the mean over the last 400 steps of -log(G(t+2)/G(t))/r(t)^2 is positive "
    "(G(t+2) = (1 - c r(t)^2 + ...) G(t) with some c > 0, the form of (66)) and equals our coefficient "
    "2(kappa^2 (2L-3)/(L-1) - kappa A) to 2%. Not checked: the implication E.10 => (66), the constant C and the error "
    "terms of (66), or the paper's explicit c0 (that is MP-E.11.c0, a discrepancy)."
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


def _expansion_errors(L: int, H: int, scales: tuple[str, ...], error) -> dict:
    """eps -> ``error(a_star, eps)`` at 50 digits for each eps of ``scales`` (decimal strings, tenfold apart): the
    relative error of an expansion about the depth-balanced zero-loss point, every layer at a_* = (1/H)^(1/L)
    (sigma_* = 1)."""
    with mpmath.workdps(50):
        a_star = (mpmath.mpf(1) / H) ** (mpmath.mpf(1) / L)
        return {e: error(a_star, mpmath.mpf(e)) for e in scales}


def _falls_fivefold(errs) -> bool:
    """Each error at least 5 times below the one at the tenfold larger eps (O(eps) or faster), the last below 1e-3."""
    return all(b < a / 5 for a, b in zip(errs, errs[1:])) and errs[-1] < 1e-3


@claim("MP-E.57")
def test_variance_equivalence(audit):
    sym = {Hn: dl.variance_equivalence(Hn) for Hn in (2, 3)}
    L, H = 5, 3

    def error(a_star, eps):  # at a_h = a_*(1 + eps w_h)
        a = [a_star * (1 + eps * wi) for wi in (mpmath.mpf(1), mpmath.mpf("-0.3"), mpmath.mpf("-0.7"))]
        q = [x ** (2 - L) for x in a]
        V = mpmath.fsum((x - mpmath.fsum(q) / H) ** 2 for x in q)
        G = mpmath.fsum((x - mpmath.fsum(a) / H) ** 2 for x in a)
        return abs(V / ((L - 2) ** 2 * a_star ** (2 - 2 * L) * G) - 1)

    errs = _expansion_errors(L, H, ("1e-3", "1e-4", "1e-5"), error)
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
    assert _falls_fivefold(list(errs.values()))


@claim(
    "MP-E.4",
    reading="local: the expansion at ||z|| -> 0, as Proposition E.4 states it; Section 5.1's 'the sharpness at any "
    "zero-loss point grows quadratically in ||z||' is read as this local statement (globally, along the zero-loss "
    "set, Lambda stays below S_1 as ||z|| grows)",
)
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
            assert _falls_fivefold(errs)
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
    L, H = 4, 3

    def error(a_star, eps):  # at a_h = abar + eps d_h on the zero-loss set
        C = L * (L - 1) * (L - 2) * a_star ** (2 * L - 4)
        lam_min = L * H * a_star ** (2 * L - 2)
        dd = [eps * v for v in (mpmath.mpf("0.6"), mpmath.mpf("0.1"), mpmath.mpf("-0.7"))]
        abar = mpmath.findroot(lambda x: mpmath.fsum((x + v) ** L for v in dd) - 1, a_star)
        lam = L * mpmath.fsum((abar + v) ** (2 * L - 2) for v in dd)
        return abs((lam - lam_min) / (C * mpmath.fsum(v**2 for v in dd)) - 1)

    errs = _expansion_errors(L, H, ("1e-2", "1e-3", "1e-4"), error)
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
    assert _falls_fivefold(list(errs.values()))


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


@claim("MP-E.65", reading=CONDITIONAL_READING + " " + UNIFORM_READING + ".", vacuous=VACUOUS_65)
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
        + f" at L = {', '.join(map(str, measured))}, near -1. What is confirmed is the implication only, and it is "
        "vacuous on actual GD two-cycles: there its premise, Hypothesis E.10, fails (MP-E.10), and so does its "
        f"conclusion r + r' = +A r^2 (the ratio is {min(measured.values()):.4f} to {max(measured.values()):.4f}, "
        "not +1)."
    )
    assert tb["lead"] == -1 and tb["sum_r2"] == dl.A and tb["prod_r2"] == -1
    # the vacuity itself: on the GD two-cycles the conclusion's sign is wrong (ratio near -1, not +1); the ratio's
    # next-order term is O(r) relative (r ~ 1e-3 here), so 0.05 is a wide margin around -1
    assert all(abs(v + 1) < 0.05 for v in measured.values())


@pytest.fixture(scope="module")
def bracketing(cycles):
    """The smallest constant C with |beta| <= C r^2 on two EoS two-cycles of different amplitude (L = 3)."""
    big = ns.eos_two_cycle(3, 2, 4e-3)
    small = cycles[3]
    # smallest constant the bracketing |beta| <= C r^2 needs on each orbit: C = |beta/r| / |r|
    return {
        "shift": dl.sharpness_shift(2),
        "consecutive": dl.bracketing_consecutive(2),
        "two_cycle": dl.two_cycle(),
        "amp": small["amplitude"] / big["amplitude"],
        "c_big": abs(big["beta_over_r"]) / big["amplitude"],
        "c_small": abs(small["beta_over_r"]) / small["amplitude"],
    }


@claim("MP-E.10", reading=UNIFORM_READING)
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
    bc = b["consecutive"]
    audit.ours(
        {
            "b' = beta(t+1)/r(t+1)^2": f"{bc['b_next_lead']}/r + {bc['b_next_const']} + O(r)",
            "C_beta |r| ->": bc["c_times_r"],
        },
        label="E.10 (ii) at t and t + 1 with beta(t) = b r^2 (SymPy, symbolic L, D = 6(2L-3)B/(L-2))",
    )
    audit.evidence(
        "Derivation (derivations.multipath.leaf.bracketing_consecutive, symbolic L, pathway variables): beta(t+1) - "
        "beta(t) = 4A r - 6(2L-3)/(L-2) B r^2 + O(r^3) (residuals 0). If |beta| <= C r^2 held at t and t + 1, then "
        f"with beta(t) = b r^2 the next ratio is b' = {bc['b_next_lead']}/r + O(1), so C >= |b' - b|/2 = 2A/|r| + "
        "O(1): "
        "the bracketing at two consecutive steps needs |r| >= 2A/C_beta to leading order, and no fixed C_beta serves "
        "a residual that shrinks."
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
    assert bc["shift1_residual"] == 0 and bc["shift2_residual"] == 0 and bc["b_next_lead"] == 4 * dl.A
    assert bc["c_times_r"] == 2 * dl.A  # the constant consecutive steps need grows like 2A/|r|
    assert 0.4 < b["amp"] < 0.6  # the amplitude scales like excess^(1/2)
    for c in cycles.values():  # beta/r on the orbit is -2A to 1% (O(r) corrections, r ~ 0.02)
        assert abs(c["beta_over_r"] + 2 * c["A"]) <= 0.01 * abs(2 * c["A"])


@discrepancy(
    "MP-E.10",
    reason=(
        "reading-dependent (C_beta uniform as r -> 0; literally, per settled two-cycle, it holds with C_beta ~ "
        "2A/r0): the bracketing cannot hold at consecutive steps: from (54), beta(t+1) - beta(t) = 4 A(t) r(t) + "
        "O(r^2) "
        "exactly (SymPy, derivations.multipath.leaf.bracketing_consecutive), so |beta| <= C r^2 at t and t + 1 needs "
        "C >= 2A/|r| + O(1), unbounded as the residual shrinks; |beta| <= C r^2 at t forces |beta(t+1)| ~ 4A|r|. "
        "On the stable GD two-cycle near the balanced "
        "minimum beta(t) = -2 A r(t) + O(r^2) (measured values in the evidence): |beta| is O(r), not O(r^2), so the "
        "constant C the bracketing needs grows like 2A/|r| as the orbit shrinks, and r(t) + r(t+1) = -A r(t)^2, the "
        "opposite sign of (65)."
    ),
    reading=UNIFORM_READING,
)
def test_sharpness_bracketing_paper(bracketing):
    b = bracketing
    lead = b["consecutive"]["c_times_r"]  # lim C_min |r| as r -> 0 for the bracketing at t and t + 1 (SymPy)
    paper_claim(
        lead == 0 and b["c_small"] <= 1.25 * b["c_big"],  # a fixed C (the paper's Hypothesis E.10)
        f"derivation: the C that |beta| <= C r^2 needs at two consecutive steps is {lead}/|r| + O(1) (A > 0), "
        f"unbounded as r -> 0; measured: it grows {b['c_small'] / b['c_big']:.3f}x when the two-cycle's amplitude "
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


@claim("MP-E.11", reading=E11_READING)
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
        "reading-dependent: the paper derives c0 from a frozen linearisation under Hypothesis E.10; read as the "
        "coefficient GD realises, measured on GD two-cycles (L = 3, 4, 6) the contraction coefficient is "
        "2 kappa^2 (L-2)/(L-1) (our "
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


# ------------------------------------------------------------------ the self-stabilised variance (E.6, Eq. (67))
EXCESSES_67 = (4e-3, 2e-3, 1e-3, 5e-4)  # chi = eta lambda_min - 2 = 2 x excess: 8e-3 down to 1e-3

CHI_READING = (
    "chi in (67) read as the sharpness excess of the slow state, eta lambda - 2 at the zero-loss point of the current "
    "leaf (as (68) uses it, with lambda(G) of (60)); on the nearly balanced two-cycles (G < 1e-11) this is eta "
    "lambda_min - 2 = 2 x excess for eta = 2(1 + excess)/lambda_min (the leaf's own shift eta C_lambda G is stated in "
    "the evidence), and <r^2> is the mean of r(t)^2 over the settled two-cycle (last 400 steps). The cycle mean of "
    "the per-iterate excess eta lambda(Theta_t) - 2 is also proportional to chi (ratio in the evidence), so linear "
    "scaling does not depend on that choice; the per-iterate positive part (eta lambda(Theta_t) - 2)_+ does not "
    "scale with chi (it alternates with r(t), MP-E.10), and under it (67) would fail."
)


@pytest.fixture(scope="module")
def balanced_cycle():
    return dl.balanced_two_cycle()


@pytest.fixture(scope="module")
def variance_scaling():
    """GD (54), H = 2, sigma_* = 1, settled on its two-cycle at eta = 2(1 + excess)/lambda_min, L = 3, 4, 6."""
    # from r(0) ~ 1e-6 the residual grows to the cycle in ~ 10/chi steps and settles (to ~1e-12) in ~ 15/chi more
    return {(L, e): ns.eos_two_cycle(L, 2, e, steps=int(60 / (2 * e))) for L in EOS_DEPTHS for e in EXCESSES_67}


@claim("MP-E.67", reading=CHI_READING)
def test_self_stabilized_variance(audit, balanced_cycle, variance_scaling):
    bt = balanced_cycle
    (chi_s,) = bt["g1"].free_symbols
    K = {L: float(bt["K"].subs(dl.L, L)) for L in EOS_DEPTHS}
    K_frozen = {L: float(bt["K_frozen"].subs(dl.L, L)) for L in EOS_DEPTHS}
    chis = np.array([2 * e for e in EXCESSES_67])
    ratio, fit, settle, leaf_shift, per_iter, per_iter_pos = {}, {}, {}, {}, {}, {}
    for L in EOS_DEPTHS:
        cs = [variance_scaling[(L, e)] for e in EXCESSES_67]
        q = np.array([c["amplitude"] ** 2 for c in cs]) / chis  # <r^2>/chi (sigma_* = 1)
        (slope, k0), cov = np.polyfit(chis, q, 1, cov=True)
        expo = float(np.polyfit(np.log(chis), np.log(q * chis), 1)[0])
        ratio[L], fit[L] = q, (float(k0), float(np.sqrt(cov[1, 1])), float(slope), expo)
        settle[L] = max(float(np.abs(c["r"][2:] - c["r"][:-2]).max() / np.abs(c["r"]).max()) for c in cs)
        C_lam = L * (L - 1) * (L - 2) * 0.5 ** ((2 * L - 4) / L)  # C_lambda of (60) (MP-E.60), a_* = 2^{-1/L}
        leaf_shift[L] = max(c["eta"] * C_lam * c["G"][-1] / x for c, x in zip(cs, chis))
        per_iter[L] = [float(np.mean(-c["beta"]) / x) for c, x in zip(cs, chis)]
        per_iter_pos[L] = [float(c["amplitude"] ** 2 / np.mean(np.maximum(-c["beta"], 0))) for c in cs]
    dev = {L: abs(fit[L][0] / K[L] - 1) for L in EOS_DEPTHS}
    audit.ours(bt["K"], label="K = lim <r^2>/(sigma_*^2 chi) from the balanced map (symbolic L)")
    audit.ours(
        {L: (round(fit[L][0], 7), float(f"{fit[L][1]:.1e}"), round(K[L], 7)) for L in EOS_DEPTHS},
        label="(fitted intercept of <r^2>/chi, its standard error, our K), L = 3, 4, 6",
    )
    audit.ours(
        {L: [round(v, 6) for v in ratio[L]] for L in EOS_DEPTHS}, label="<r^2>/chi at chi = 8e-3, 4e-3, 2e-3, 1e-3"
    )
    audit.evidence(
        "SymPy (symbolic L): on the balanced line (54) is one map of rho = r/sigma_*, rho' = (1 + rho)(1 - (2 + chi) "
        "rho (1 + rho)^{1-2/L}/L)^L - 1 = -(1 + chi) rho + g2 rho^2 + g3 rho^3 + ...; its second iterate gives "
        f"period-two points with rho^2 = K chi + O(chi^(3/2)), K = {bt['K']} = 1/(g2^2 + g3) > 0, so the orbit "
        "exists only for chi > 0 (the chi_+), and below the threshold |rho'/rho| = 1 + chi < 1: no oscillation. GD "
        f"(54), H = 2, sigma_* = 1, settled two-cycles (|r(t+2) - r(t)|/max|r| <= {max(settle.values()):.0e}) at chi = "
        f"{', '.join(f'{x:g}' for x in chis)}: a least-squares line through <r^2>/chi against chi has intercept "
        + "; ".join(
            f"L = {L}: {fit[L][0]:.7f} +- {fit[L][1]:.1e} vs K = {K[L]:.7f} (relative {dev[L]:.1e}), slope "
            f"{fit[L][2]:.3f}"
            for L in EOS_DEPTHS
        )
        + f". The log-log exponent of <r^2> in chi is {min(f[3] for f in fit.values()):.4f}-"
        f"{max(f[3] for f in fit.values()):.4f} (tolerance |exponent - 1| < 5e-3: the O(chi) term moves it by "
        f"~{max(abs(f[2]) / K[L] for L, f in fit.items()) * chis.max():.1e}); the remainder <r^2> - K chi = slope x "
        "chi^2 is O(chi^2) as (67) states. Tolerances: intercept within 1e-4 of K (a linear fit leaves the O(chi^2) "
        "curvature of <r^2>/chi, ~(8e-3)^2), each ratio within 1% of K (its O(chi) term is <= "
        f"{max(abs(q / K[L] - 1).max() for L, q in ratio.items()):.1%}). The leaf's own excess shift eta C_lambda "
        f"G/chi is <= {max(leaf_shift.values()):.0e}. K is not the frozen normal form's: (64) with beta held fixed "
        "gives 1/(A^2 - B) = "
        + ", ".join(f"{K_frozen[L]:.4f}" for L in EOS_DEPTHS)
        + f" ({min(K_frozen[L] / K[L] for L in EOS_DEPTHS):.2f}-{max(K_frozen[L] / K[L] for L in EOS_DEPTHS):.2f}x "
        "ours): the exact map's quadratic coefficient is -A, not +A, since beta moves with r (MP-E.10). Other "
        "readings of chi: the cycle mean of eta lambda(Theta_t) - 2 is "
        + ", ".join(f"{min(v):.3f}-{max(v):.3f} chi" for v in per_iter.values())
        + " (L = 3, 4, 6; linear too), while <r^2>/<(eta lambda(Theta_t) - 2)_+> falls from "
        + ", ".join(f"{v[0]:.4f} to {v[-1]:.4f}" for v in per_iter_pos.values())
        + " as chi falls 8-fold (~chi^{1/2}, not constant)."
    )
    assert bt["step_residual"] == 0 and bt["P_rho1"] == 0 and bt["K_residual"] == 0 and bt["g2_plus_A"] == 0
    assert sp.expand(bt["g1"] + 1 + chi_s) == 0
    assert all(k > 0 for k in K.values())
    assert max(settle.values()) < 1e-9  # the orbit has settled on its two-cycle
    assert max(dev.values()) < 1e-4  # linear fit: O(chi^2) curvature of <r^2>/chi left over
    assert all(fit[L][1] < 1e-5 * K[L] for L in EOS_DEPTHS)  # the fit's standard error
    assert all(abs(q / K[L] - 1).max() < 0.01 for L, q in ratio.items())  # O(chi) term, chi <= 8e-3
    assert all(abs(f[3] - 1) < 5e-3 for f in fit.values())
    assert max(leaf_shift.values()) < 1e-6  # chi of the leaf = 2 x excess to this accuracy


# ------------------------------------------------------------------ scope of the strong-safety condition (E.4)
SCOPE_EXCESSES = (1e-2, 0.1, 0.2)  # beyond the fixture's 1e-3; every one a settled period-two orbit (checked)
LARGE_EXCESS = 0.49  # oscillations of the order of the target (period-doubled)

SCOPE_READING = (
    "'(star) is strictly more restrictive than the linear stability bound eta lambda_min < 2' read as an "
    "implication: an iterate near the balanced minimum that satisfies (star) has eta lambda_min < 2 (and not "
    "conversely). 'Large-amplitude EoS oscillations generally violate (star)' read as: (star) fails at some step of "
    "a GD orbit whose residual is of the order of the target. (star) is evaluated at every step of GD orbits of (54) "
    "(H = 2, sigma_* = 1); it holds where (L-1) eta r (sigma_* + r)^{(L-2)/L} <= 1 for r > 0 (an upper bound: each "
    "a_h^L <= sigma_* + r), and fails where (L-1) eta r ((sigma_* + r)/2)^{(L-2)/L} > 1 (a lower bound, exact when "
    "the a_h are equal)."
)


@pytest.fixture(scope="module")
def safety(cycles):
    """(star) margins at every step of EoS orbits: (L-1) eta r max_h a_h^{L-2} bounded above and below (r > 0)."""
    orbits = {(L, 1e-3): cycles[L] for L in EOS_DEPTHS}
    # chi >= 2e-2 here: growth and settling take a few hundred steps, so 5000 (10000 for the large orbits) suffice
    with np.errstate(invalid="ignore", divide="ignore"):  # G reaches 0 here: c_measured (unused) is 0/0
        orbits.update({(L, e): ns.eos_two_cycle(L, 2, e, steps=5000) for L in EOS_DEPTHS for e in SCOPE_EXCESSES})
        large = {L: ns.eos_two_cycle(L, 2, LARGE_EXCESS, steps=10000, window=2000) for L in EOS_DEPTHS}

    def margin(c, upper):
        L, r = c["L"], c["r"]
        top = 1 + r if upper else (1 + r) / 2  # bounds on max_h a_h^L (sigma_* = 1, H = 2)
        return float(np.where(r > 0, (L - 1) * c["eta"] * r * np.abs(top) ** ((L - 2) / L), 0.0).max())

    return {
        "small": {
            k: {
                "phi_up": margin(c, True),
                "eta_lam": c["eta"] * c["lam_min"],
                "period2": float(np.abs(c["r"][2:] - c["r"][:-2]).max() / np.abs(c["r"]).max()),
                "rms": c["amplitude"],
            }
            for k, c in orbits.items()
        },
        "V_steps": {L: bool(np.all(cycles[L]["V"][1:] < cycles[L]["V"][:-1])) for L in EOS_DEPTHS},
        "V_step_ratio": {L: float((cycles[L]["V"][1:] / cycles[L]["V"][:-1]).max()) for L in EOS_DEPTHS},
        "large": {L: (margin(c, False), c["amplitude"], float(c["G"].max())) for L, c in large.items()},
    }


@claim("MP-E.4.scope", reading=SCOPE_READING)
def test_strong_safety_on_eos_orbits(audit, safety):
    sm, lg = safety["small"], safety["large"]
    audit.ours(
        {f"L = {L}, excess {e:g}": round(v["phi_up"], 4) for (L, e), v in sm.items()},
        label="upper bound on (L-1) eta r max a^{L-2} over every step (star holds where <= 1)",
    )
    audit.ours(
        {L: (round(m, 4), round(rms, 3)) for L, (m, rms, _) in lg.items()},
        label=f"excess {LARGE_EXCESS}: (largest (L-1) eta r max a^{{L-2}}, rms r)",
    )
    audit.evidence(
        "GD (54), H = 2, sigma_* = 1, eta = 2(1 + excess)/lambda_min: on the settled period-two orbits (|r(t+2) - "
        f"r(t)|/max|r| <= {max(v['period2'] for v in sm.values()):.0e}) at excess 1e-3, "
        f"{', '.join(f'{e:g}' for e in SCOPE_EXCESSES)} (eta lambda_min = "
        f"{min(v['eta_lam'] for v in sm.values()):.3f}-{max(v['eta_lam'] for v in sm.values()):.3f} > 2, rms r = "
        f"{min(v['rms'] for v in sm.values()):.3f}-{max(v['rms'] for v in sm.values()):.3f}) the strong-safety "
        "condition (star) holds at every step: the upper bound on (L-1) eta r max_h a_h^{L-2} is at most "
        f"{max(v['phi_up'] for v in sm.values()):.3f} (<= 1 needed), "
        + "; ".join(
            f"L = {L}: " + ", ".join(f"{sm[(L, e)]['phi_up']:.3f}" for e in (1e-3, *SCOPE_EXCESSES)) for L in EOS_DEPTHS
        )
        + ". So Theorem E.8 applies at every step there, and indeed V(t+1) < V(t) at every step of the excess-1e-3 "
        f"cycles (largest V(t+1)/V(t) {max(safety['V_step_ratio'].values()):.6f}), not only over pairs. At excess "
        f"{LARGE_EXCESS} (period-doubled orbits, balanced to G = {max(g for *_, g in lg.values()):g} in float64, so "
        "the lower bound is exact) the largest (L-1) eta r max a^{L-2} is "
        + ", ".join(f"{m:.3f} (L = {L}, rms r = {rms:.2f})" for L, (m, rms, _) in lg.items())
        + ": (star) fails at some steps for L = 4, 6 once the residual is ~half the target (the text's "
        "'large-amplitude' violation), still holds for L = 3."
    )
    assert all(v["eta_lam"] > 2 for v in sm.values())  # all beyond the linear stability bound
    assert all(v["period2"] < 1e-9 for v in sm.values())  # settled period-two orbits
    assert all(v["phi_up"] < 1 for v in sm.values())  # (star) at every step (upper bound on the margin)
    assert all(safety["V_steps"].values())  # Theorem E.8's conclusion at every step
    assert lg[4][0] > 1 and lg[6][0] > 1 and all(g == 0 for *_, g in lg.values())  # large oscillations violate it


@discrepancy(
    "MP-E.4.scope",
    reason=(
        "(star) only bounds a positive residual, eta r max a^{L-2} <= 1/(L-1), i.e. r <~ L sigma_*/(2(L-1)) at eta "
        "~ 2/lambda_min; it holds at every step of every period-two GD orbit beyond the edge that we ran (eta "
        "lambda_min = 2.002-2.4, L = 3, 4, 6, rms r up to ~0.3 sigma_*), so it is not contained in eta lambda_min < "
        "2, and the small-amplitude EoS two-cycles (r -> 0 as chi -> 0) lie inside the inner neighbourhood where "
        "Theorem E.8 already gives V(t+1) < V(t) at every step. (star) fails only for oscillations of the order of "
        "the target (measured values in MP-E.4.scope's evidence)."
    ),
    reading=SCOPE_READING,
)
def test_strong_safety_scope_paper(safety):
    beyond_safe = [k for k, v in safety["small"].items() if v["eta_lam"] > 2 and v["phi_up"] < 1]
    paper_claim(
        not beyond_safe,  # (star) => eta lambda_min < 2: no iterate beyond the edge satisfies (star)
        f"(star) holds at every step of {len(beyond_safe)} GD orbits with eta lambda_min > 2 (L, excess) = "
        + ", ".join(f"({L}, {e:g})" for L, e in beyond_safe),
    )


# ------------------------------------------------------------------ the three regimes and the window (E.6)
REGIMES_READING = (
    "H = 2, sigma_* = 1, where the zero-loss point is fixed by its gap G (up to relabelling): lambda(G) read as the "
    "exact sharpness L sum_h a_h^{2L-2} of that point, not its truncation (60), since G^{1-path} = sigma_*^{2/L}/2 "
    "is not small; 'nontrivial stopping boundary G_dagger in [0, G^{1-path})' as a root of eta lambda(G) = 2 in "
    "that half-open range; 'GD-unstable' as eta S_1 > 2. 'Precisely the set' read up to the endpoint eta = "
    "2/lambda_min: there G_dagger = 0 lies in [0, G^{1-path}) and the single path is unstable, so the set is "
    "(2/S_1, 2/lambda_min], the window plus the critical rate of regime 2, which the next sentence treats."
)


def _two_path_point(L, y):
    """Zero-loss point (x, y), x^L + y^L = 1, x >= y: its gap G and sharpness lambda (mpmath)."""
    x = (1 - y**L) ** (mpmath.mpf(1) / L)
    return (x - y) ** 2 / 2, L * (x ** (2 * L - 2) + y ** (2 * L - 2))


@claim(
    "MP-E.6.regimes",
    reading=REGIMES_READING,
    fitted={
        "lambda(G) truncated at (60), lambda_min + C_lambda G, as Theorem E.12 writes it": (
            "G_dagger reaches G^{1-path} at eta = 2/(lambda_min + C_lambda G^{1-path}), not at 2/S_1 (0.468 vs 0.667 "
            "at L = 3, H = 2): the window would not be recovered"
        )
    },
)
def test_three_regimes(audit):
    tp = dl.two_path_zero_loss()
    rows, lin = {}, {}
    with mpmath.workdps(50):
        tiny = mpmath.mpf(10) ** -40
        for L in EOS_DEPTHS:
            lam_min, S1 = ns.lambda_min(2, L, 1, 50), ns.single_path_sharpness(L, 1, 50)
            a_star = mpmath.mpf(2) ** (-mpmath.mpf(1) / L)
            curve = [_two_path_point(L, a_star * k / 400) for k in range(401)]  # from one path (y = 0) to balance
            G1p = curve[0][0]
            assert abs(curve[-1][0]) < tiny and abs(curve[-1][1] - lam_min) < tiny and abs(curve[0][1] - S1) < tiny
            assert all(g2 < g1 and l2 < l1 for (g1, l1), (g2, l2) in zip(curve, curve[1:]))  # lambda increases in G
            etas = {
                "below": 2 / S1 * (1 - mpmath.mpf("1e-6")),
                "window low": 2 / S1 * (1 + mpmath.mpf("1e-6")),
                "window": (2 / S1 + 2 / lam_min) / 2,
                "window high": 2 / lam_min * (1 - mpmath.mpf("1e-6")),
                "critical": 2 / lam_min,
                "super": 2 / lam_min * (1 + mpmath.mpf("1e-6")),
            }
            out = {}
            for name, eta in etas.items():
                chi0, chi1 = eta * lam_min - 2, eta * S1 - 2  # chi at G = 0 and at G = G^{1-path}
                Gd = None
                if abs(chi0) < tiny:
                    Gd = mpmath.mpf(0)
                elif chi0 < 0 < chi1:
                    lo, hi = mpmath.mpf(0), a_star  # lambda falls as y rises: bisect (200 halvings: 1e-60)
                    for _ in range(200):
                        mid = (lo + hi) / 2
                        lo, hi = (mid, hi) if eta * _two_path_point(L, mid)[1] > 2 else (lo, mid)
                    y = (lo + hi) / 2
                    Gd = _two_path_point(L, y)[0]
                active_ok = Gd is None or all((eta * lam > 2) == (g > Gd) for g, lam in curve if abs(g - Gd) > tiny)
                out[name] = {
                    "chi0": chi0,
                    "G_dagger": Gd,
                    "in_range": Gd is not None and 0 <= Gd < G1p,
                    "single_unstable": eta * S1 > 2,
                    "active_iff_above": active_ok,
                    "chi_min": min(eta * lam - 2 for _, lam in curve),
                }
            rows[L] = out
            C_lam = L * (L - 1) * (L - 2) * a_star ** (2 * L - 4)
            lin[L] = (2 / (lam_min + C_lam * G1p), 2 / S1)
    audit.ours(tp["dlam_dx_residual"], label="SymPy: d lambda/dx - 2L(L-1) x^{L-1}(x^{L-2} - y^{L-2}) on x^L + y^L = 1")
    audit.ours(
        {
            L: {k: (mpmath.nstr(v["G_dagger"], 6) if v["G_dagger"] is not None else "none") for k, v in o.items()}
            for L, o in rows.items()
        },
        label="G_dagger by regime (eta below/at the window ends, mid-window, critical, super-critical)",
    )
    audit.evidence(
        "SymPy (symbolic L, H = 2): on the zero-loss curve x^L + y^L = sigma_* (x >= y) d lambda/dx = 2L(L-1) "
        "x^{L-1}(x^{L-2} - y^{L-2}) > 0 and dG/dx = (x - y)(1 + (x/y)^{L-1}) > 0 (residuals 0), so lambda rises "
        "strictly with G from lambda_min (G = 0) to S_1 (G^{1-path} = sigma_*^{2/L}/2): chi(G) = eta lambda(G) - 2 > 0 "
        "iff G > G_dagger, and a root in [0, G^{1-path}) exists iff lambda_min <= 2/eta < S_1. 50 digits, L = 3, 4, "
        "6, sigma_* = 1, the curve on 401 points (strictly monotone): mid-window G_dagger = "
        + ", ".join(mpmath.nstr(o["window"]["G_dagger"], 4) for o in rows.values())
        + " (in (0, 1/2), drift active exactly above it); at eta = 2/lambda_min G_dagger = 0; 1e-6 above it chi > 0 on "
        "the whole curve (min chi "
        + ", ".join(mpmath.nstr(o["super"]["chi_min"], 3) for o in rows.values())
        + ", and the balanced point's multiplier -(1 + chi(0)) has modulus > 1: unstable); 1e-6 below 2/S_1 no root "
        "and eta S_1 < 2 (the single path is stable), 1e-6 above it a root near G^{1-path}. So (a) and (b) hold "
        "exactly on (2/S_1, 2/lambda_min], the window with its critical end. With the truncation (60) instead, the "
        "boundary would sit at eta = 2/(lambda_min + C_lambda G^{1-path}) = "
        + ", ".join(f"{mpmath.nstr(a, 4)} (2/S_1 = {mpmath.nstr(b, 4)})" for a, b in lin.values())
        + "."
    )
    assert all(tp[k] == 0 for k in ("dlam_dx_residual", "dG_dx_residual", "balanced_residual", "one_path_residual"))
    for o in rows.values():
        assert not o["below"]["in_range"] and not o["below"]["single_unstable"]
        for k in ("window low", "window", "window high"):
            assert o[k]["chi0"] < 0 and o[k]["in_range"] and o[k]["G_dagger"] > 0 and o[k]["single_unstable"]
            assert o[k]["active_iff_above"]
        assert o["critical"]["G_dagger"] == 0 and o["critical"]["in_range"] and o["critical"]["single_unstable"]
        assert o["super"]["G_dagger"] is None and o["super"]["chi_min"] > 0 and o["super"]["chi0"] > 0


# ------------------------------------------------------------------ the cross-reference "window (17)" (E.6)
@pytest.fixture(scope="module")
def window_reference():
    from derivations.multipath import heterogeneous as dh
    from derivations.multipath import sharpness as dsh

    s1, s2 = sp.symbols("sigma_1 sigma_2", positive=True)
    L1, L2 = sp.symbols("L_1 L_2", positive=True)
    eq17 = dh.hetero_eigenvalue([s1, s2], [L1, L2])
    homog = dh.hetero_eigenvalue([s1, s2], [dsh.L, dsh.L]) - dsh.mode_eigenvalue([s1, s2], dsh.L)
    S1 = dsh.mode_eigenvalue([dsh.sigma], dsh.L)  # the whole mode in one pathway
    lam_min = dsh.equal_split()["lambda_min"]
    window = sp.And(2 / S1 < dl.eta, dl.eta < 2 / lam_min)
    return {
        "eq17": eq17,
        "homog_residual": sp.simplify(sp.powsimp(sp.expand_power_base(homog, force=True), force=True)),
        "window": window,
        "S1": S1,
        "lam_min": lam_min,
    }


@claim("MP-E.6.ref17")
def test_window_reference_ours(audit, window_reference):
    w = window_reference
    audit.ours(w["eq17"], label="Eq. (17) (derived, MP-5.1), two pathways of depths L_1, L_2")
    audit.ours(w["window"], label="the window E.6 uses, from S_1 = (13) at one path and lambda_min = (15)")
    audit.evidence(
        "The paragraph needs the main-text window 2/S_1 < eta < 2/lambda^min, an interval of step sizes with ends "
        f"2/S_1 (S_1 = {w['S1']}) and 2/lambda_min (lambda_min = {w['lam_min']}); it is printed unnumbered in "
        "Section 5.1 ('enter the stability window'). Eq. (17) is the heterogeneous-depth sharpness lambda_i = sum_h "
        f"L_h sigma_hi^{{2-2/L_h}}: our derivation gives {w['eq17']}, free symbols "
        f"{sorted(map(str, w['eq17'].free_symbols))}, no step size; at equal depths it reduces to (13) (residual "
        f"{w['homog_residual']}). It is a sharpness formula, not the window."
    )
    assert w["homog_residual"] == 0
    assert dl.eta in w["window"].free_symbols and dl.eta not in w["eq17"].free_symbols


@discrepancy(
    "MP-E.6.ref17",
    reason=(
        "Wrong cross-reference: the heading 'Recovery of the stability window (17)' cites Eq. (17), which is the "
        "heterogeneous-depth sharpness lambda_i = sum_h L_h sigma_hi^{2-2/L_h} of Section 5.3 (no step size in it); "
        "the window 2/S_1 < eta < 2/lambda_1^min it discusses is the unnumbered display of Section 5.1."
    ),
)
def test_window_reference_paper(window_reference):
    w = window_reference
    paper_claim(
        bool(dl.eta in w["eq17"].free_symbols),  # Eq. (17) would be a condition on eta
        f"Eq. (17) = {w['eq17']} has free symbols {sorted(map(str, w['eq17'].free_symbols))}: no eta",
    )
