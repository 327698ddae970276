"""Checks of heterogeneous depths and gradient-flow growth rates (multi-pathway paper, Sections 5.1, 5.3; Appendix C.6).

Symbolic results from :mod:`derivations.multipath.heterogeneous`; the optimal allocation of
(18) from :mod:`numerics.multipath.sharpness` (mpmath at 50 digits, certified interval
enclosures); the gradient flow of the reduced recursion (54) by scipy's DOP853.

The paper quotes no numerical equilibrium for the depth pairs of Figures 4 and 9 (the
caption gives only eta* = 2/lambda_1^min "from our numerical solution"); the checks below
tabulate ours for (L1, L2) in {3..7}^2 at sigma_* = 1, the value Figure 1 states.
"""

import itertools

import mpmath
import numpy as np
import sympy as sp

from derivations.multipath import heterogeneous as dh
from numerics.intervals import bounds
from numerics.multipath import sharpness as ns
from verify.audit import claim, discrepancy, paper_claim

EPS = np.finfo(float).eps
PAIRS = [(a, b) for a, b in itertools.combinations(range(3, 8), 2)]  # L1 < L2 in {3..7}

NOEQUAL_READING = (
    "'no longer minimizes' read as 'not for generic sigma_*': with two depths L1 != L2 there is exactly one target "
    "value, sigma_* = 2 ((L2-1)/(L1-1))^{L1 L2/(2(L1-L2))}, at which the equal split is the optimum."
)
NUMERIC_READING = (
    "'any {L_h}' read as every L_h >= 3: for L_h = 2 the left side of (18) is the constant 2 (no equation for sigma_h; "
    "the optimum can sit on a face), and 'lack a closed form' as 'in general': some pairs reduce to polynomials of "
    "degree <= 4 in a power of mu, e.g. (3, 4) to mu^3/64 + mu^2/36 = sigma_*, (3, 6) to a quadratic in mu^(3/2), "
    "(4, 6) to a quartic in mu^(1/2), which have radical solutions."
)
GROWTH_READING = (
    "'relative growth rate sigma_dot_hi/sigma_dot_ki' read with sigma_hi the end-to-end mode coefficient of Eq. (8) "
    "(the paper's notation throughout, Eqs. (8), (28)) and the dot its time derivative under GF; the per-layer "
    "reading (a_hi = sigma_hi^{1/L}, da_hi/dt) gives the printed exponent L - 1 and makes the sentence true "
    "(checked here too: residual 0); the same two readings as MP-5.3.rate's"
)
RATE_READING = (
    "'per-pathway growth rate' read as sigma_dot_hi = d sigma_hi/dt, the time derivative of the end-to-end mode "
    "coefficient sigma_hi of Eq. (8): the meaning Section 5.1 gives the words ('the relative growth rate "
    "sigma_dot_hi/sigma_dot_ki', checked in MP-5.1.gf with the same meaning). Under depth-balanced GF it is "
    "-L_h r sigma_hi^{2-2/L_h}; the paper's exponent (L_h-1)/L_h is that of the per-layer rate da_h/dt = -r "
    "sigma_hi^{(L_h-1)/L_h} (the per-layer gradient), just as MP-5.1.gf's exponent L-1 is that of per-layer values."
)


# ------------------------------------------------------------------ Proposition 5.1 and (18)
@claim(
    "MP-5.1",
    reading="at a global minimum (zero loss), where Section 4.1's sharpness is defined and Appendix C.6 derives it; "
    "Proposition 5.1 as printed omits 'at a global minimum', and away from it the residual term of the Hessian "
    "(MP-C.1) adds to the eigenvalue",
)
def test_hetero_eigenvalue(audit):
    d1 = {tuple(ds): dh.hetero_d1_hessian(ds)["eigenvalues"] for ds in ([2, 3], [3, 5], [1, 4])}
    rng = np.random.default_rng(11)
    d, depths = 3, [2, 3, 5]
    U, V = ns.random_orthogonal(rng, d), ns.random_orthogonal(rng, d)
    frames = [[V] + [ns.random_orthogonal(rng, d) for _ in range(L - 1)] + [U] for L in depths]
    a = rng.uniform(0.4, 1.2, size=(3, d))
    J = ns.full_jacobian(ns.svs_layers(frames, [[a[h]] * L for h, L in enumerate(depths)]))
    Tm = np.stack([np.outer(U[:, i], V[:, i]).ravel() for i in range(d)], axis=1)
    got = np.einsum("ki,kl,li->i", Tm, J @ J.T, Tm)
    want = sum(L * a[h] ** (2 * L - 2) for h, L in enumerate(depths))
    rel = float(np.abs(got - want).max() / want.max())
    formula = [float(ns.hetero_sharpness([a[h, i] ** L for h, L in enumerate(depths)], depths, 20)) for i in range(d)]
    audit.ours({k: {sp.expand(e): m for e, m in v.items()} for k, v in d1.items()}, label="d = 1 eigenvalues, depths")
    audit.ours(rel, label="float64: mode entries of J J^T vs (17), depths (2, 3, 5), d = 3")
    audit.evidence(
        "d = 1, symbolic per-layer values: the Hessian at zero loss has one nonzero eigenvalue sum_h L_h "
        "a_h^{2L_h-2} = (17) at sigma_h = a_h^{L_h} for depths (2, 3), (3, 5), (1, 4). Full 3 x 3 parametrisation "
        f"with depths (2, 3, 5): the mode entries of J J^T match (17) to {rel / EPS:.1f} eps relative (tolerance 64 "
        "eps)."
    )
    a1, a2 = sp.symbols("a_1:3", positive=True)
    assert {sp.expand(e) for e in d1[(2, 3)] if e != 0} == {2 * a1**2 + 3 * a2**4}
    assert {sp.expand(e) for e in d1[(3, 5)] if e != 0} == {3 * a1**4 + 5 * a2**8}
    assert {sp.expand(e) for e in d1[(1, 4)] if e != 0} == {1 + 4 * a2**6}
    assert rel < 64 * EPS  # sums of a few dozen O(1) products
    assert max(abs(f - w) / w for f, w in zip(formula, want)) < 16 * EPS  # same quantity, two routes


@claim("MP-5.18")
def test_lagrange_conditions(audit):
    lg = dh.lagrange()
    table, worst = {}, mpmath.mpf(0)
    for L1, L2 in PAIRS:
        al = ns.optimal_allocation([L1, L2], 1, 50)
        with mpmath.workdps(60):
            marg = [2 * (L - 1) * s ** (1 - mpmath.mpf(2) / L) for s, L in zip(al.sigmas, al.depths)]
            worst = max(worst, max(abs(m_ - al.mu) / al.mu for m_ in marg), abs(mpmath.fsum(al.sigmas) - 1))
            # a feasible perturbation raises lambda (strict convexity): +-1e-6 along sigma_1 - sigma_2
            lam = lambda s1, L1=L1, L2=L2: ns.hetero_sharpness([s1, 1 - s1], [L1, L2], 50)  # noqa: E731
            assert lam(al.sigmas[0] + mpmath.mpf("1e-6")) > al.lam < lam(al.sigmas[0] - mpmath.mpf("1e-6"))
        table[(L1, L2)] = [
            mpmath.nstr(al.sigmas[0], 10),
            mpmath.nstr(al.sigmas[1], 10),
            mpmath.nstr(al.lam, 10),
            mpmath.nstr(al.eta_star, 10),
        ]
    audit.ours(table, label="(L1, L2): sigma_1^opt, sigma_2^opt, lambda^min, eta* = 2/lambda^min at sigma_* = 1")
    audit.ours(worst, 5, label="max relative deviation of the marginals from mu, and of the sum from sigma_*")
    audit.evidence(
        "SymPy (symbolic L_h): d/d sigma_h of L_h sigma_h^{2-2/L_h} = 2(L_h-1) sigma_h^{1-2/L_h}; its solution "
        "sigma_h = (mu/(2(L_h-1)))^{L_h/(L_h-2)} (log-residual 0); curvature 2(L_h-1)(L_h-2)/L_h sigma_h^{-2/L_h} "
        "> 0 for L_h > 2 (strictly convex: the stationary point is the unique minimum); marginal -> 0 at sigma_h -> 0 "
        "(no corner). Numerically (50 digits) for all pairs in {3..7}^2 at sigma_* = 1: the marginals equal mu, and "
        f"the shares sum to sigma_*, to {mpmath.nstr(worst, 2)} relative (tolerance 1e-45), and a +-1e-6 move along "
        "the constraint raises lambda."
    )
    assert lg["residual_18"] == 0 and lg["solves_18"] == 0
    assert sp.simplify(lg["curvature"] * dh.sh ** (2 / dh.Lh) - 2 * (dh.Lh - 1) * (dh.Lh - 2) / dh.Lh) == 0
    assert set(lg["marginal_at_0"].values()) == {0}
    assert worst < mpmath.mpf(10) ** -45  # 50-digit solve with 10 guard digits


@claim("MP-5.1.noequal", reading=NOEQUAL_READING)
def test_equal_split_not_optimal(audit):
    sc = dh.share_crossover()
    gaps, at_cross, margins, splits = {}, {}, [], []
    for L1, L2 in PAIRS:
        cert = ns.certify_allocation([L1, L2], 1, 30)
        eq = ns.hetero_sharpness(["0.5", "0.5"], [L1, L2], 40)
        _, lam_hi = bounds(cert["lam"])
        gaps[(L1, L2)] = mpmath.nstr(eq - lam_hi, 6)
        margins.append(eq - lam_hi)
        assert eq > lam_hi  # certified: the equal split is strictly sharper than the optimum
        sc_val = ns.share_crossover(L1, L2, 40)
        al = ns.optimal_allocation([L1, L2], sc_val, 40)
        at_cross[(L1, L2)] = mpmath.nstr(abs(al.sigmas[0] - al.sigmas[1]) / sc_val, 3)
        splits.append(abs(al.sigmas[0] - al.sigmas[1]) / sc_val)
        assert abs(al.sigmas[0] - al.sigmas[1]) < mpmath.mpf(10) ** -35 * sc_val  # 40-digit solve
    audit.ours(gaps, label="lambda(equal split) - (certified upper bound of lambda^min), sigma_* = 1")
    audit.ours(at_cross, label="|sigma_1 - sigma_2|/sigma_* at sigma_* = 2 s_c")
    audit.evidence(
        "For every pair L1 < L2 in {3..7} at sigma_* = 1, lambda at the equal split exceeds a certified (interval) "
        f"upper bound of lambda^min (smallest margin {mpmath.nstr(min(margins), 3)}). Exception: two equal shares need "
        "equal marginals, which happens at exactly one target, sigma_* = 2 s_c (SymPy: marginal residual 0); there "
        f"the 40-digit optimum is the equal split (largest |sigma_1 - sigma_2|/sigma_* {mpmath.nstr(max(splits), 2)}, "
        "tolerance 1e-35)."
    )
    assert sc["residual"] == 0


@claim(
    "MP-5.1.share",
    reading=(
        "Read at the paper's running target scale sigma_* = 1 (the setting of Figures 4, 8 and 9). Read literally for "
        "every mode sigma_*i it fails below a crossover 2 s_c(L1, L2) = 2((L2-1)/(L1-1))^{L1 L2/(2(L1-L2))} (the "
        "values per pair are in the evidence), where the deeper pathway carries the larger share."
    ),
)
def test_shallow_carries_most(audit):
    at1 = {p: ns.optimal_allocation(list(p), 1, 30) for p in PAIRS}
    small = ns.optimal_allocation([3, 7], "0.05", 30)
    cross = {p: ns.share_crossover(*p, 20) for p in PAIRS}
    audit.ours(
        {p: mpmath.nstr(a.sigmas[0] / (a.sigmas[0] + a.sigmas[1]), 6) for p, a in at1.items()},
        label="shallow share at sigma_* = 1",
    )
    audit.ours(
        {p: mpmath.nstr(v, 6) for p, v in cross.items()},
        label="sigma_* below which the deeper pathway carries more (2 s_c)",
    )
    audit.ours(
        [mpmath.nstr(v, 8) for v in small.sigmas],
        label="other reading: (3, 7), sigma_* = 0.05: (sigma_shallow, sigma_deep)",
    )
    audit.evidence(
        "50-digit solutions of (18). The shallow allocation (mu/(2(L1-1)))^{L1/(L1-2)} has the larger exponent, so "
        "it overtakes the deep one exactly at sigma_* = 2 s_c (SymPy); both pathways always get a positive share, "
        "i.e. more mass in the deep pathway than winner-takes-all. Asserted: the statement at sigma_* = 1 for every "
        "pair in {3..7}^2 with L1 < L2, every crossover below 1, and the reversal below the crossover (the other "
        f"reading). Crossovers 2 s_c: {mpmath.nstr(cross[(3, 7)], 3)} for (3, 7), {mpmath.nstr(cross[(3, 4)], 3)} for "
        f"(3, 4), largest {mpmath.nstr(max(cross.values()), 3)}; at sigma_* = 0.05 below the (3, 7) crossover the "
        f"(shallow, deep) split is ({mpmath.nstr(small.sigmas[0], 4)}, {mpmath.nstr(small.sigmas[1], 4)})."
    )
    assert all(a.sigmas[0] > a.sigmas[1] for a in at1.values())
    assert all(v < 1 for v in cross.values())  # sigma_* = 1 lies above every crossover
    assert small.sigmas[0] < small.sigmas[1]  # below the (3, 7) crossover 0.112 the deep pathway carries more


@claim("MP-5.1.numeric", reading=NUMERIC_READING)
def test_numeric_solution(audit):
    widths = {}
    for ds in [*map(list, PAIRS), [3, 5, 7], [3, 3, 4, 6]]:
        cert = ns.certify_allocation(ds, 1, 30)
        lo, hi = bounds(cert["lam"])
        al = ns.optimal_allocation(ds, 1, 40)
        assert lo <= al.lam <= hi
        with mpmath.workdps(40):
            widths[tuple(ds)] = mpmath.nstr(hi - lo, 3)
            assert hi - lo < mpmath.mpf(10) ** -28  # mu enclosed to 1e-30, lambda is Lipschitz with O(10) constant
    mu = sp.Symbol("mu", positive=True)
    roots = [r for r in sp.Poly(mu**3 / 64 + mu**2 / 36 - 1, mu).real_roots() if r > 0]
    exact = sp.N(roots[0], 50)
    num = ns.optimal_allocation([3, 4], 1, 50).mu
    with mpmath.workdps(60):
        cubic_gap = abs(mpmath.mpf(str(exact)) - num)
    audit.ours(widths, label="width of the certified enclosure of lambda^min")
    audit.ours(exact, label="(3, 4): mu from the cubic mu^3/64 + mu^2/36 = 1 (closed form in radicals)")
    audit.evidence(
        "Certified interval bisection (numerics.intervals.certified_decreasing_root) encloses mu, then sigma_h and "
        "lambda^min, for all pairs in {3..7}^2, the triple (3, 5, 7) and (3, 3, 4, 6) at sigma_* = 1; the 40-digit "
        f"solver's value lies inside every enclosure (widest enclosure {max(widths.values(), key=float)}). For (3, 4) "
        f"the exact cubic root agrees with the solver to {mpmath.nstr(cubic_gap, 2)} (tolerance 1e-45)."
    )
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(str(exact)) - num) < mpmath.mpf(10) ** -45  # 50-digit solve
    assert len(roots) == 1


def _single_path_pairs():
    return {p: (ns.single_path_sharpness(p[0], 1, 20), ns.single_path_sharpness(p[1], 1, 20)) for p in PAIRS}


@claim("MP-5.3.sharper")
def test_shallow_single_path_is_sharper_ours(audit):
    vals = _single_path_pairs()
    cross = {p: ns.single_path_crossover(*p, 20) for p in PAIRS}
    spc = dh.single_path_crossover()
    shown = {p: (mpmath.nstr(a, 6), mpmath.nstr(b, 6)) for p, (a, b) in vals.items()}
    audit.ours(shown, label="(shallow, deep) single-path sharpness at sigma_* = 1")
    audit.ours(
        {p: mpmath.nstr(c, 6) for p, c in cross.items()}, label="sigma_* below which the shallow single path is sharper"
    )
    audit.evidence(
        "Eq. (17) with the whole mode in one pathway. SymPy: log(shallow/deep) = log(L1/L2) + (2/L2 - 2/L1) log "
        "sigma_*, zero at sigma_c and decreasing in sigma_*; at sigma_* = 1 the ratio is L1/L2 < 1. Our side (this "
        "check): at sigma_* = 1 each single-path sharpness is L_h (20 digits; (3, 7): "
        f"{mpmath.nstr(vals[(3, 7)][0], 6)} versus {mpmath.nstr(vals[(3, 7)][1], 6)}) and every crossover lies below 1 "
        f"(sigma_c = {mpmath.nstr(cross[(3, 7)], 3)} for (3, 7), largest {mpmath.nstr(max(cross.values()), 3)}). The "
        "paper's side asserts its ordering at sigma_* = 1 for every pair L1 < L2 in {3..7}."
    )
    assert spc["log_ratio_at_c"] == 0
    with mpmath.workdps(30):
        assert all(
            abs(a - p[0]) < mpmath.mpf(10) ** -18 and abs(b - p[1]) < mpmath.mpf(10) ** -18
            for p, (a, b) in vals.items()
        )  # sigma_*^{2-2/L} = 1 at sigma_* = 1: L_h at 20 digits
        assert all(0 < c < 1 for c in cross.values())


@discrepancy(
    "MP-5.3.sharper",
    reason=(
        "Single-path sharpness is L_h sigma_*^{2-2/L_h}; the shallow one is sharper only for sigma_* < sigma_c = "
        "(L2/L1)^{L1 L2/(2(L1-L2))}. At sigma_* = 1 (the setting of the figures) it is L_h itself, so the deep "
        "single-path minimum is the sharper one; the exponent argument ignores the factor L_h (measured values in the "
        "evidence)."
    ),
)
def test_shallow_single_path_is_sharper_paper():
    vals = _single_path_pairs()
    wrong = [p for p, (a, b) in vals.items() if not a > b]
    paper_claim(not wrong, f"the deep single path is the sharper one at sigma_* = 1 for {wrong}")


# ------------------------------------------------------------------ gradient-flow growth rates
def _growth_rows():
    rows = {}
    for L in (2, 3, 5, 20):
        a = np.array([0.3, 0.2]) ** (1 / L)  # sigma = (0.3, 0.2)
        sig = a**L
        r = sig.sum() - 1.0
        adot = -r * a ** (L - 1)  # the GF vector field of (54)
        sdot = L * a ** (L - 1) * adot
        ratio = sig[0] / sig[1]
        rows[L] = {
            "measured": sdot[0] / sdot[1],
            "paper (s_h/s_k)^(L-1)": ratio ** (L - 1),
            "ours (s_h/s_k)^(2-2/L)": ratio ** (2 - 2 / L),
        }
    return rows


@claim("MP-5.1.gf", reading=GROWTH_READING)
def test_relative_growth_rate_ours(audit):
    g = dh.growth_rates()
    rows = _growth_rows()
    audit.ours(rows, label="GF rate ratio at sigma = (0.3, 0.2)")
    audit.evidence(
        "SymPy: from da_h/dt = -r a_h^{L-1}, d sigma_h/dt = -L r sigma_h^{2-2/L} and the end-to-end ratio is "
        "(sigma_h/sigma_k)^{2-2/L} (residual 0); the per-layer ratio is (a_h/a_k)^{L-1} (residual 0). Evaluated on the "
        "vector field at sigma = (0.3, 0.2) for L = 2, 3, 5, 20: the measured ratio is ours (this check); the paper's "
        "side asserts its exponent for L = 3, 5, 20."
    )
    assert g["ratio_end_to_end_residual"] == 0 and g["ratio_per_layer_residual"] == 0
    assert all(
        abs(rows[L]["measured"] - rows[L]["ours (s_h/s_k)^(2-2/L)"]) < 1e-12 for L in rows
    )  # float64, O(1) ratios


@discrepancy(
    "MP-5.1.gf",
    reason=(
        "reading-dependent: in the paper's notation sigma_hi is the end-to-end value (Eqs. (8), (28)); under GF on the "
        "depth-balanced manifold "
        "d sigma_h/dt = -L r sigma_h^{2-2/L}, so the ratio is (sigma_hi/sigma_ki)^{2-2/L}. The exponent "
        "L - 1 holds for "
        "the per-layer values a_hi = sigma_hi^{1/L}: da_h/dt / da_k/dt = (a_h/a_k)^{L-1}, so under the per-layer "
        "reading the sentence is true."
    ),
    reading=GROWTH_READING,
)
def test_relative_growth_rate_paper():
    rows = _growth_rows()
    off = {L: rows[L]["measured"] / rows[L]["paper (s_h/s_k)^(L-1)"] for L in (3, 5, 20)}
    paper_claim(
        all(abs(rows[L]["measured"] - rows[L]["paper (s_h/s_k)^(L-1)"]) < 1e-12 for L in off),
        "measured / paper's (s_h/s_k)^(L-1): " + ", ".join(f"L = {L}: {v:.4f}" for L, v in off.items()),
    )


def _rate_slopes():
    """Log-log slope of the GF growth rates in sigma_h at fixed r, measured on the vector field of (54)."""
    out = {}
    for L in (3, 7):
        s0, s1 = 1e-3, 1.1e-3  # sigma_h << 1; a power law has the same slope everywhere
        a0, a1 = s0 ** (1 / L), s1 ** (1 / L)
        adot = [a ** (L - 1) for a in (a0, a1)]  # -r = 1
        sdot = [L * a ** (L - 1) * ad for a, ad in zip((a0, a1), adot)]
        k = np.log(s1 / s0)
        out[L] = {
            "end-to-end": float(np.log(sdot[1] / sdot[0]) / k),
            "per-layer": float(np.log(adot[1] / adot[0]) / k),
            "paper (L-1)/L": (L - 1) / L,
        }
    return out


@claim("MP-5.3.rate", reading=RATE_READING)
def test_growth_rate_heterogeneous(audit):
    g = dh.growth_rates()
    alpha, depths = 1e-3, [3, 7]
    a0 = np.array([alpha ** (1 / L) for L in depths])
    minus_r = 1 - 2 * alpha  # -r at the start: sigma_* = 1, two pathways at alpha each
    rate0 = {
        "per-layer": [minus_r * alpha ** ((L - 1) / L) for L in depths],
        "end-to-end": [L * minus_r * alpha ** (2 - 2 / L) for L in depths],
    }
    traj = {}
    for T in (2.0, 6.0, 9.0, 9.5):
        a = ns.gradient_flow(a0, depths, 1.0, T)
        traj[T] = (a[0] ** 3, a[1] ** 7)
    slopes = _rate_slopes()
    audit.ours(slopes, label="d log(rate)/d log sigma_h on the GF field, L_h = 3, 7")
    audit.ours(rate0, label="initial rates (L1, L2) = (3, 7), sigma_h(0) = 1e-3")
    audit.ours(
        {T: tuple(float(f"{v:.4g}") for v in s) for T, s in traj.items()}, label="GF (sigma_1, sigma_2) at time T"
    )
    pl, ee = rate0["per-layer"], rate0["end-to-end"]
    sT = traj[max(traj)]
    audit.evidence(
        "SymPy: d sigma_h/dt = -L_h r sigma_h^{2-2/L_h} and da_h/dt = -r sigma_h^{(L_h-1)/L_h} (residuals 0). Measured "
        "log-log slopes of sigma_dot_h on the vector field: "
        + ", ".join(f"L = {L}: {v['end-to-end']:.6f}" for L, v in slopes.items())
        + " (= 2 - 2/L_h; per-layer rate "
        + ", ".join(f"{v['per-layer']:.6f}" for v in slopes.values())
        + " = (L_h-1)/L_h). The conclusion holds under both: "
        f"with equal start sigma_h(0) = {alpha:g} (Section 5.3) the shallow pathway's rates are larger (end-to-end "
        f"{ee[0]:.1e} vs {ee[1]:.1e}, per-layer {pl[0]:.1e} vs {pl[1]:.1e}); integrating the GF (DOP853, rtol 1e-12) "
        f"the ratio sigma_1/sigma_2 grows monotonically over T = {', '.join(f'{T:g}' for T in traj)} to "
        f"{sT[0] / sT[1]:.0f}, and the shallow pathway carries sigma_1 = {sT[0]:.3f} of sigma_* = 1 at T = "
        f"{max(traj):g} (the deep one {sT[1]:.1e}). Slope tolerance 1e-9: a ratio of two float64 power laws."
    )
    assert g["per_layer_residual"] == 0 and g["end_to_end_residual"] == 0
    assert all(abs(v["end-to-end"] - (2 - 2 / L)) < 1e-9 for L, v in slopes.items())  # float64 logs of O(1) ratios
    assert rate0["per-layer"][0] > rate0["per-layer"][1] and rate0["end-to-end"][0] > rate0["end-to-end"][1]
    ratios = [s[0] / s[1] for s in traj.values()]
    assert all(b > a for a, b in zip(ratios, ratios[1:])) and ratios[-1] > 10


@discrepancy(
    "MP-5.3.rate",
    reason=(
        "reading-dependent: with sigma_hi the end-to-end value (Eq. (8)) and the growth rate its derivative "
        "sigma_dot_hi (Section 5.1's "
        "usage), the GF rate is -L_h r sigma_hi^{2-2/L_h}: it scales as sigma_hi^{2-2/L_h}, twice the printed exponent "
        "(L_h-1)/L_h, which belongs to the per-layer rate da_h/dt. The conclusion (larger for smaller L_h when "
        "sigma_hi << 1, so the shorter pathway grows faster) holds for either rate, and under the per-layer reading "
        "the exponent is the printed one."
    ),
    reading=RATE_READING,
)
def test_growth_rate_heterogeneous_paper():
    slopes = _rate_slopes()
    paper_claim(
        all(abs(v["end-to-end"] - v["paper (L-1)/L"]) < 1e-9 for v in slopes.values()),
        "exponent of sigma_dot_h in sigma_h: "
        + ", ".join(f"L = {L}: {v['end-to-end']:.4f} (paper {v['paper (L-1)/L']:.4f})" for L, v in slopes.items()),
    )


# ------------------------------------------------------------------ 'grows exponentially faster' (Sections 5.1, 5.3)
EXP_READING = (
    "'grows exponentially faster' read in its everyday sense: for L > 2 the leading pathway pulls ahead at least "
    "exponentially, i.e. d/dt log(sigma_1/sigma_2) is positive and does not decrease through the early "
    "(symmetry-breaking) phase (here it rises: faster than exponential, a finite-time blow-up). The early phase is "
    "taken as sum_h sigma_h <= 0.05 sigma_* (r within 5% of -sigma_*), under depth-balanced GF (the small-step limit "
    "of (54)), sigma_* = 1. At L = 2 the depth exponent vanishes and the ratio stays alpha_1/alpha_2"
)
EXP_ALTERNATIVE = {
    "exponential in the mathematical sense, sigma_1/sigma_2 ~ exp(c t) with a constant c": "fails: a^{2-L} falls "
    "linearly in t, so the ratio is algebraic in t with a rising log-rate (values in ours)"
}
EARLY = 0.05  # early phase: sum_h sigma_h <= 5% of sigma_*, where r = -sigma_* to 5%
FRACS = (*(k / 20 for k in range(20)), 0.97, 0.98, 0.99, 0.995)  # sample times as fractions of the first blow-up


def _early_phase(depths, alphas):
    """Full GF sampled in the early phase, with the closed-form brackets of :func:`dh.early_growth`.

    Returns rows (t, sigma, d/dt log(sigma_1/sigma_2) from the GF field, bracket ok) and the closed-form blow-up times.
    Bracket: on [0, t] the sigmas increase, so -r lies in [1 - eps, 1] with eps = sum_h sigma_h(t); by comparison
    a_h(t) lies between the closed forms with sigma_* replaced by 1 - eps and by 1.
    """
    g = dh.early_growth()
    Ls_, t_, a0_ = sp.symbols("L t a_0", positive=True)
    sol = sp.lambdify((Ls_, t_, a0_, dh.sigma), g["solution"])
    sol2 = sp.lambdify((t_, a0_, dh.sigma), g["L2"]["solution"])
    blow = sp.lambdify((Ls_, a0_, dh.sigma), g["blowup"])
    a0 = np.array([al ** (1 / L) for al, L in zip(alphas, depths)])
    Ls = np.array(depths, dtype=float)
    T = [blow(L, a, 1.0) if L > 2 else np.inf for L, a in zip(depths, a0)]
    horizon = min(T) if np.isfinite(min(T)) else 0.5 * np.log(EARLY / (2 * max(alphas)))  # L = 2: sigma = alpha e^{2t}

    def closed(L, t, a, rate):
        return sol2(t, a, rate) if L == 2 else sol(L, t, a, rate)

    rows = []
    for f in FRACS:
        t = f * horizon
        a = ns.gradient_flow(a0, depths, 1.0, t) if t > 0 else a0.copy()
        sig = a**Ls
        eps = float(sig.sum())
        if eps > EARLY:
            break
        r = eps - 1.0
        lo = np.array([closed(L, t, x, 1.0 - eps) for L, x in zip(depths, a0)])
        hi = np.array([closed(L, t, x, 1.0) for L, x in zip(depths, a0)])
        ok = bool(np.all(lo * (1 - 1e-9) <= a) and np.all(a <= hi * (1 + 1e-9)))  # 1e-9: DOP853 at rtol 1e-12
        rate = -Ls * r * sig ** (1 - 2 / Ls)  # d log sigma_h/dt on the GF field
        rows.append({"t": t, "sigma": sig, "dlogratio": float(rate[0] - rate[1]), "bracket": ok})
    return rows, T


def _exp_summary(rows):
    d = [r["dlogratio"] for r in rows]
    return {
        "t_end": rows[-1]["t"],
        "ratio_end": float(rows[-1]["sigma"][0] / rows[-1]["sigma"][1]),
        "rate_start": d[0],
        "rate_end": d[-1],
        "samples": len(rows),
    }


HOMOGENEOUS = {20: (1e-4, 0.9e-4), 3: (1e-4, 0.9e-4), 2: (1e-4, 0.9e-4)}  # alpha_2 = 0.9 alpha_1, alpha_1 = 1e-4


def _homogeneous_rows():
    return {L: _early_phase([L, L], list(al)) for L, al in HOMOGENEOUS.items()}


def _symbolic_growth_checks(g):
    L, u = sp.symbols("L u", positive=True)
    assert g["ode_residual"] == 0 and g["initial_residual"] == 0 and g["log_rate_residual"] == 0
    assert g["ratio_residual"] == 0 and sp.simplify(g["du_dt"] + (L - 2) * dh.sigma) == 0
    assert sp.simplify(g["log_rate_slope"] - L * (L - 2) * dh.sigma**2 / u**2) == 0
    assert sp.simplify(g["L2"]["log_rate"] - 2 * dh.sigma) == 0


@claim("MP-5.1.exp", reading=EXP_READING, fitted=EXP_ALTERNATIVE)
def test_exponentially_faster_homogeneous_ours(audit):
    g = dh.early_growth()
    data = _homogeneous_rows()
    summ = {L: _exp_summary(rows) for L, (rows, _) in data.items()}
    final = {}
    for L, al in HOMOGENEOUS.items():
        T = data[L][1][0]
        a = ns.gradient_flow(np.array(al) ** (1 / L), L, 1.0, 1.2 * T if np.isfinite(T) else 20.0)
        final[L] = float((a[0] / a[1]) ** L)
    audit.ours(
        {L: {k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in s.items()} for L, s in summ.items()},
        label="early phase (sum sigma <= 0.05): time, sigma_1/sigma_2, d/dt log(sigma_1/sigma_2) at start and end",
    )
    audit.ours({L: data[L][1] for L in (20, 3)}, 6, label="closed-form blow-up times T_1, T_2 of the linearised GF")
    audit.ours(final, 6, label="sigma_1/sigma_2 after the full GF (t = 1.2 T_1; L = 2: t = 20)")
    s20, s3 = summ[20], summ[3]
    audit.evidence(
        "SymPy, early phase r = -sigma_*: da/dt = sigma_* a^{L-1} integrates to a^{2-L} = a_0^{2-L} - (L-2) sigma_* t "
        "(residuals 0): a power law with blow-up at T = a_0^{2-L}/((L-2) sigma_*); d log sigma/dt = L sigma_* "
        "sigma^{1-2/L} is not constant (its t-derivative is L(L-2) sigma_*^2/u^2 > 0), and sigma_1/sigma_2 = "
        "(u_2/u_1)^{L/(L-2)}, a power of a ratio of two linear functions of t: algebraic, not exp(c t). At L = 2 "
        "both pathways grow as alpha_h e^{2 sigma_* t}: exponential at the same rate, the ratio stays alpha_1/alpha_2. "
        "Full GF (DOP853) with alpha = (1e-4, 0.9e-4): inside the closed-form brackets at every sample (tolerance "
        f"1e-9, the integrator's rtol 1e-12 with margin); d/dt log(sigma_1/sigma_2) rises from {s20['rate_start']:.2e} "
        f"to {s20['rate_end']:.2e} (L = 20) and from {s3['rate_start']:.2e} to {s3['rate_end']:.2e} (L = 3) within the "
        f"early phase, and is {summ[2]['rate_start']:.0e} throughout at L = 2. The amplification itself is real for "
        f"L > 2: after the full GF sigma_1/sigma_2 = {final[20]:.0f} (L = 20), {final[3]:.2f} (L = 3), {final[2]:.4f} "
        "(L = 2)."
    )
    _symbolic_growth_checks(g)
    assert all(r["bracket"] for rows, _ in data.values() for r in rows)
    for L in (20, 3):
        d = [r["dlogratio"] for r in data[L][0]]
        assert d[0] > 0  # the leader pulls ahead from the start
        assert all(b > a for a, b in zip(d, d[1:])) and d[-1] > 10 * d[0]  # increasing: not a constant rate
    assert all(abs(r["dlogratio"]) < 1e-12 for r in data[2][0])  # L = 2: -2r for both pathways, exactly
    assert final[20] > 100 and abs(final[2] / (1 / 0.9) - 1) < 1e-6  # ratio conserved at L = 2 (rtol 1e-12)


HETERO = ([3, 7], [1e-3, 1e-3])  # equal scales (Section 5.3), the depths the text names


@claim("MP-5.3.exp", reading=EXP_READING, fitted=EXP_ALTERNATIVE)
def test_exponentially_faster_heterogeneous_ours(audit):
    g = dh.early_growth()
    rows, T = _early_phase(*HETERO)
    s = _exp_summary(rows)
    a = ns.gradient_flow(np.array([x ** (1 / L) for x, L in zip(HETERO[1], HETERO[0])]), HETERO[0], 1.0, 1.2 * T[0])
    final = float(a[0] ** 3 / a[1] ** 7)
    Lsym, a0sym, al = sp.Symbol("L", positive=True), sp.Symbol("a_0", positive=True), sp.Symbol("alpha", positive=True)
    Tof = {L: g["blowup"].subs(Lsym, L).subs({a0sym: al ** sp.Rational(1, L), dh.sigma: 1}) for L in HETERO[0]}
    cross = sp.solve(sp.Eq(*Tof.values()), al)  # the scale at which both blow up together
    audit.ours({k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in s.items()}, label="early phase")
    audit.ours(cross, 6, label="alpha below which the L = 3 pathway blows up first (T_1 < T_2)")
    audit.ours(T, 6, label="closed-form blow-up times (L = 3, L = 7), alpha = 1e-3")
    audit.ours(final, 6, label="sigma_1/sigma_2 after the full GF (t = 1.2 T_1)")
    audit.evidence(
        "Closed forms of MP-5.1.exp per pathway: sigma_h = ((L_h-2) sigma_* (T_h - t))^{-L_h/(L_h-2)} with T_h = "
        f"alpha^{{-(L_h-2)/L_h}}/((L_h-2) sigma_*) = {T[0]:.4g} (L = 3) and {T[1]:.4g} (L = 7) at alpha = 1e-3: the "
        f"shallow pathway blows up first (it does for alpha below {cross[0]} = {float(cross[0]):.4f}, where T_1 < "
        "T_2), so its lead "
        "is real, but sigma_1/sigma_2 is algebraic in t, and along the full GF (inside the closed-form brackets at "
        f"every sample, tolerance 1e-9) d/dt log(sigma_1/sigma_2) rises from {s['rate_start']:.3f} to "
        f"{s['rate_end']:.3f} within the early phase (sum sigma <= 0.05); after the full GF sigma_1/sigma_2 = "
        f"{final:.0f}."
    )
    _symbolic_growth_checks(g)
    assert all(r["bracket"] for r in rows) and T[0] < T[1]
    assert len(cross) == 1 and HETERO[1][0] < cross[0]  # alpha = 1e-3 lies on the shallow-wins side
    d = [r["dlogratio"] for r in rows]
    assert d[0] > 0  # the shallow pathway pulls ahead from the start
    assert all(b > a for a, b in zip(d, d[1:])) and d[-1] > 2 * d[0]  # increasing: not a constant rate
    assert final > 100
