"""Checks of the SVS reduction (multi-pathway paper, Section 3, Appendix B, Appendix E.1-E.2).

Exact results come from :mod:`derivations.multipath.svs`: rational orthogonal frames
(Cayley transforms), symbolic layer values, and gradients obtained by differentiating the
loss in every entry of generic layers. Property checks run full d x d matrices in float64
(:mod:`numerics.multipath.sharpness`) on random frames drawn by hypothesis (derandomised,
bounded strategies).

No displayed equation of Appendix B needed reconstruction; the text's Eq. (4) in
"Implication for our initialization" refers to (11) (registered as MP-B.2.xref). The
cross-reference checks read the paper text itself (verify.coverage.paper_files) and parse
its headings, statement headings and equation tags (derivations.multipath.svs), never line
numbers; they skip when the shared paper texts are absent.
"""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.multipath import svs as dsvs
from numerics.multipath import sharpness as ns
from verify import paper_text as ptext
from verify.audit import claim, discrepancy, paper_claim
from verify.multipath.support import paper_text

EPS = np.finfo(float).eps
PROP = settings(max_examples=40, deadline=None, derandomize=True)

SYMMETRIC_READING = (
    "Read for a symmetric positive semi-definite target M_* = V Sigma_* V^T (U_* = V_*), as the next sentence of "
    "Section 3.3 and Lemma E.1 assume: for U_* != V_* the identity initialisation is not of the SVS form (it would "
    "need U_*^T V_* diagonal with positive entries)."
)


def _instance(seed, d, depths, balanced):
    """Random SVS point: frames Q_h1 = V, Q_{h,L+1} = U (U != V), positive layer values, target U diag V^T."""
    rng = np.random.default_rng(seed)
    U, V = ns.random_orthogonal(rng, d), ns.random_orthogonal(rng, d)
    frames = [[V] + [ns.random_orthogonal(rng, d) for _ in range(L - 1)] + [U] for L in depths]
    if balanced:
        per = [rng.uniform(0.3, 1.3, size=d) for _ in depths]
        values = [[per[h].copy() for _ in range(L)] for h, L in enumerate(depths)]
    else:
        values = [[rng.uniform(0.3, 1.3, size=d) for _ in range(L)] for L in depths]
    sig = rng.uniform(0.2, 2.0, size=d)
    return frames, values, U @ np.diag(sig) @ V.T, sig


def _scale(Ws):
    return max(1.0, max(float(np.abs(W).max()) for ly in Ws for W in ly))


@claim("MP-3.10")
def test_mode_decoupling(audit):
    exact = {(d, H, L): dsvs.lemma_B2_residual(d, H, L) for d, H, L in [(2, 2, 2), (2, 2, 3), (2, 3, 2)]}
    errs = []
    for seed in range(5):
        frames, values, Mstar, sig = _instance(seed, 4, [3, 3, 3], balanced=False)
        Ws = ns.svs_layers(frames, values)
        sigma_hi = np.array([np.prod(values[h], axis=0) for h in range(3)])  # (28)
        modes = 0.5 * float(np.sum((sigma_hi.sum(axis=0) - sig) ** 2))
        errs.append(abs(ns.loss(Ws, Mstar) - modes) / max(1.0, modes))
    audit.ours(exact, label="(1/2)||M - M_*||^2 - sum_i L_i (exact, (d, H, L))")
    audit.ours(max(errs), label="float64 relative difference, d = 4, H = L = 3")
    audit.evidence(
        "Exact: rational orthogonal frames with U_* != V_* and distinct intermediate Q's, symbolic layer values; the "
        "difference of the two sides expands to 0 for (d, H, L) = (2,2,2), (2,2,3), (2,3,2). Float64: five random "
        f"instances with d = 4, H = L = 3; relative difference {max(errs) / EPS:.1f} eps (tolerance 64 eps: a few "
        "dozen roundings of O(1) terms)."
    )
    assert set(exact.values()) == {0}
    assert max(errs) < 64 * EPS  # sums of ~100 products of O(1) numbers: a few dozen roundings


@claim("MP-B.34")
def test_layer_gradient_formula(audit):
    sizes = [(2, 2, 2), (2, 2, 3), (3, 2, 2)]
    res = {s: dsvs.gradient_identities(*s)["residual_34"] for s in sizes}
    frames, values, Mstar, _ = _instance(7, 3, [2, 3], balanced=False)
    Ws = ns.svs_layers(frames, values)
    rng = np.random.default_rng(8)
    Ws = [[W + 0.3 * rng.standard_normal(W.shape) for W in ly] for ly in Ws]  # leave the SVS set: a generic point
    G = ns.flatten(ns.full_gradient(Ws, Mstar))
    theta, h = ns.flatten(Ws), 1e-6
    fd = np.array(
        [
            (ns.loss(ns.unflatten(theta + h * e, Ws), Mstar) - ns.loss(ns.unflatten(theta - h * e, Ws), Mstar))
            / (2 * h)
            for e in np.eye(theta.size)
        ]
    )
    rel = float(np.abs(fd - G).max() / np.abs(G).max())
    audit.ours({s: all(m.is_zero_matrix for m in r) for s, r in res.items()}, label="(34) residual is zero, (d, H, L)")
    audit.ours(rel, label="float64 central differences vs (34), generic point")
    audit.evidence(
        "The gradient is obtained by differentiating (1/2)||M - M_*||^2 in every entry of generic symbolic layers "
        "(polynomial ring over QQ) and compared with (34): identical for (d, H, L) = (2,2,2), (2,2,3), (3,2,2). "
        f"Float64 at a generic non-SVS point (d = 3, depths 2 and 3): central differences with h = {h:g} agree to "
        f"{rel:.1e} relative (tolerance 1e-7; truncation O(h^2) ~ 1e-12, rounding eps/h ~ 1e-10)."
    )
    assert all(all(m.is_zero_matrix for m in r) for r in res.values())
    assert rel < 1e-7  # central differences: O(h^2) truncation ~1e-12 plus eps/h rounding ~1e-10


@claim("MP-B.33")
def test_layer_update(audit):
    sizes = [(2, 2, 2), (2, 2, 3), (3, 2, 2)]
    res = {s: dsvs.gradient_identities(*s)["residual_33"] for s in sizes}
    worst = 0.0
    for seed in range(5):
        frames, values, Mstar, sig = _instance(seed, 3, [2, 4], balanced=False)
        Ws = ns.svs_layers(frames, values)
        eta = 0.05
        new = ns.gd_step(Ws, Mstar, eta)
        r = sum(np.prod(values[h], axis=0) for h in range(2)) - sig
        for h in range(2):
            for l in range(len(values[h])):
                core = frames[h][l + 1].T @ new[h][l] @ frames[h][l]
                other = np.prod([values[h][j] for j in range(len(values[h])) if j != l], axis=0)
                worst = max(worst, float(np.abs(core - np.diag(values[h][l] - eta * r * other)).max()) / _scale(new))
    audit.ours(
        {s: all(m.is_zero_matrix for m in r) for s, r in res.items()},
        label="Q^T grad Q - diag(r_i prod_{j!=l} s) is zero",
    )
    audit.ours(worst, label="float64: max |Q^T W(t+1) Q - diag(33)| / scale")
    audit.evidence(
        "The differentiated gradient evaluated at a symbolic SVS point (rational frames, U != V) satisfies "
        "Q_{h,l+1}^T grad Q_hl = diag(r_i prod_{j != l} s_{h,j,i}) exactly for (d, H, L) = (2,2,2), (2,2,3), "
        "(3,2,2). Float64, five random instances (d = 3, depths 2 and 4, eta = 0.05): the full GD step reproduces "
        f"(33) to {worst / EPS:.1f} eps relative (tolerance 256 eps)."
    )
    assert all(all(m.is_zero_matrix for m in r) for r in res.values())
    assert worst < 256 * EPS  # chains of <= 4 products of 3x3 O(1) matrices, then one subtraction


@claim("MP-E.1")
def test_svs_set_invariant(audit):
    exact = all(m.is_zero_matrix for m in dsvs.gradient_identities(2, 2, 3)["residual_33"])
    worst = []

    @PROP
    @given(
        seed=st.integers(0, 2**32 - 1),
        d=st.integers(1, 4),
        depths=st.lists(st.integers(1, 4), min_size=1, max_size=3),
        eta=st.floats(0.005, 0.2),
        steps=st.integers(1, 3),
    )
    def prop(seed, d, depths, eta, steps):
        frames, values, Mstar, _ = _instance(seed, d, depths, balanced=False)
        Ws = ns.svs_layers(frames, values)
        for _ in range(steps):
            Ws = ns.gd_step(Ws, Mstar, eta)
        off = 0.0
        for h, L in enumerate(depths):
            for l in range(L):
                core = frames[h][l + 1].T @ Ws[h][l] @ frames[h][l]
                off = max(off, float(np.abs(core - np.diag(np.diag(core))).max()))
        worst.append(off / _scale(Ws))
        # three steps of <= 4 chained 4x4 products of O(10) entries: rounding ~ 1e3 eps relative to the scale
        assert off <= 4096 * EPS * _scale(Ws)

    prop()
    audit.ours(exact, label="exact: gradient in span{Q_{h,l+1} e_i e_i^T Q_hl^T}")
    audit.ours(max(worst), label="float64: largest off-diagonal of Q^T W(t) Q after 1-3 GD steps / scale")
    audit.evidence(
        "Exact (d, H, L) = (2, 2, 3): the gradient at an SVS point has Q_{h,l+1}^T grad Q_hl diagonal, so a GD step "
        "keeps the form with the same Q's. Hypothesis (40 derandomised cases): random Haar frames with U != V, d <= "
        "4, 1-3 pathways of depth 1-4, eta in [0.005, 0.2], 1-3 full-matrix GD steps; off-diagonals of Q^T W Q stay "
        f"at {max(worst) / EPS:.1f} eps x scale or below (tolerance 4096 eps: rounding of a few chained products)."
    )
    assert exact


@claim("MP-B.4")
def test_depth_balance_invariant(audit):
    sym = {s: set(dsvs.balanced_step(*s)["spread"]) for s in [(2, 2, 3), (2, 3, 4)]}
    worst = []

    @PROP
    @given(
        seed=st.integers(0, 2**32 - 1),
        d=st.integers(1, 4),
        depths=st.lists(st.integers(1, 5), min_size=1, max_size=3),
        eta=st.floats(0.005, 0.2),
    )
    def prop(seed, d, depths, eta):
        frames, values, Mstar, _ = _instance(seed, d, depths, balanced=True)
        Ws = ns.gd_step(ns.svs_layers(frames, values), Mstar, eta)
        for h, L in enumerate(depths):
            diags = [np.diag(frames[h][l + 1].T @ Ws[h][l] @ frames[h][l]) for l in range(L)]
            spread = float(np.max(np.ptp(np.array(diags), axis=0)))
            worst.append(spread / _scale(Ws))
            assert spread <= 1024 * EPS * _scale(Ws)  # one step; chained products of <= 5 4x4 matrices

    prop()
    audit.ours(sym, label="exact: max_l - min_l of the updated entries")
    audit.ours(max(worst), label="float64: spread of layer values within a pathway after one step / scale")
    audit.evidence(
        "Exact: at s_{h,l,i} = a_hi for all l the updated entries of (33) coincide across l ((d, H, L) = (2,2,3), "
        "(2,3,4)). Hypothesis (40 derandomised cases): balanced random SVS points, d <= 4, 1-3 pathways of depth 1-5 "
        "(heterogeneous allowed), one full-matrix GD step; the layer values within each pathway and mode agree to "
        f"{max(worst) / EPS:.1f} eps x scale (tolerance 1024 eps)."
    )
    assert all(v == {0} for v in sym.values())


@claim("MP-E.54")
def test_scalar_recursion(audit):
    rec = {s: set(dsvs.balanced_step(*s)["recursion"]) for s in [(1, 2, 3), (2, 2, 4)]}
    worst = 0.0
    for seed in range(5):
        frames, values, Mstar, sig = _instance(seed, 3, [3, 3], balanced=True)
        eta = 0.1
        Ws = ns.gd_step(ns.svs_layers(frames, values), Mstar, eta)
        a = np.array([values[h][0] for h in range(2)])
        r = (a**3).sum(axis=0) - sig
        for h in range(2):
            new = np.diag(frames[h][1].T @ Ws[h][0] @ frames[h][0])
            worst = max(worst, float(np.abs(new - (a[h] - eta * r * a[h] ** 2)).max()))
    audit.ours(rec, label="exact: new entry - (a - eta r a^{L-1})")
    audit.ours(worst, label="float64: |full step - (54)|")
    audit.evidence(
        "Exact from (33) at depth balance (d = 1, 2; H = 2; L = 3, 4). Float64, five random balanced instances (d = "
        f"3, H = 2, L = 3): the full-matrix step reproduces (54) to {worst / EPS:.1f} eps (tolerance 256 eps)."
    )
    assert all(v == {0} for v in rec.values())
    assert worst < 256 * EPS  # O(1) entries after two chained 3x3 products


@claim("MP-3.11", reading=SYMMETRIC_READING)
def test_identity_initialisation(audit):
    out = dsvs.identity_init_offdiagonal()
    # identity in the SVS form needs Q_{l+1} = Q_l for every l (alpha I = Q_{l+1} (alpha I) Q_l^T), i.e. U = V
    Qn = dsvs.cayley(sp.Matrix([[0, sp.Rational(1, 2)], [-sp.Rational(1, 2), 0]]))
    needs = Qn.T * sp.eye(2)
    audit.ours(out["symmetric"], label="U^T M(t) V off-diagonals, symmetric target, t = 1, 2")
    audit.ours([sp.nsimplify(v) for v in out["nonsymmetric"]], label="same, non-symmetric target")
    audit.evidence(
        "d = 2, H = 1, L = 2, c = 1/2, eta = 1/5, exact rationals: with U_* = V_* the iterates stay diagonal in the "
        "target basis (off-diagonals 0 after one and two steps); with U_* = rotation(3/5, 4/5), V_* = I the "
        "off-diagonal entries of U^T M(1) V are nonzero: the identity start is outside the SVS set, since U_*^T V_* "
        "is not diagonal. Combined with MP-B.4 and MP-E.1 the claim holds for symmetric PSD targets."
    )
    assert out["symmetric"] == [0, 0, 0, 0]
    assert all(v != 0 for v in out["nonsymmetric"][:2])
    assert needs != sp.diag(*[needs[i, i] for i in range(2)])  # U^T V not diagonal for the non-symmetric case


GENERAL_READING = (
    "the first sentence after (11) read for the general target (5), M_* = U_* Sigma_* V_*^T with U_* != V_* allowed, "
    "the setting of Sections 3.1-3.2 and of Definition B.1 (as MP-C.2.frames reads Appendix C.2)"
)


@discrepancy(
    "MP-3.11",
    reason="reading-dependent: for a general target (5) with U_* != V_* the identity start (11) is not in the SVS set "
    "(Definition B.1 would need Q_{l+1} = Q_l for every layer, i.e. U_* = V_*), and GD leaves the target basis at "
    "once (off-diagonals nonzero after one step, our side's exact values); the claim holds for symmetric targets, "
    "which the next sentence of Section 3.3 names for the manifold but this sentence does not",
    reading=GENERAL_READING,
)
def test_identity_initialisation_general_target():
    out = dsvs.identity_init_offdiagonal()
    off = [sp.nsimplify(v) for v in out["nonsymmetric"][:2]]
    paper_claim(
        all(v == 0 for v in off),
        f"non-symmetric target (U_* = rotation(3/5, 4/5), V_* = I): U_*^T M(t) V_* off-diagonals after one step {off}",
    )


# ------------------------------------------------------------------ Eqs. (7), (27), (29) and Appendix C.2's frames
@claim("MP-B.27")
def test_pathway_map_telescopes(audit):
    chained = {L: dsvs.uniform_frame_product(2, L)["chained_residual"] for L in (2, 3)}
    sums = {}
    for d, H, L in [(2, 2, 2), (2, 2, 3), (3, 2, 2)]:
        P = dsvs.svs_point(d, H, L)
        total = [sum(v[i] for v in dsvs.mode_values(P)) for i in range(d)]
        sums[(d, H, L)] = (P["M"] - P["U"] * sp.diag(*total) * P["V"].T).applyfunc(sp.expand).is_zero_matrix
    audit.ours({L: m.is_zero_matrix for L, m in chained.items()}, label="(27): Omega - U (prod Sigma_l) V^T is zero, L")
    audit.ours(sums, label="(29): M - U (sum_h Sigma_h) V^T is zero, (d, H, L)")
    audit.evidence(
        "Exact: rational orthogonal frames (Cayley transforms) with U_* != V_* and distinct intermediate Q_hl, "
        "symbolic positive diagonals. The chained layers Q_{h,l+1} Sigma_hl Q_hl^T multiply to U_* (prod Sigma_hl) "
        "V_*^T (L = 2, 3; d = 2) and the pathways sum to U_* (sum_h Sigma_h) V_*^T ((d, H, L) = (2,2,2), (2,2,3), "
        "(3,2,2)): every residual expands to 0."
    )
    assert all(m.is_zero_matrix for m in chained.values()) and all(sums.values())


def _c2():
    return {L: dsvs.uniform_frame_product(2, L) for L in (2, 3)}


def _c2_instance(out):
    """C.2's layers at Sigma_1 = diag(2, 1), Sigma_2 = diag(1, 3) with M_* = U diag(2, 3) V^T = U Sigma_2 Sigma_1 V^T:
    (37) would give loss 0 there."""
    s = out["s"]
    at = {s[0][0]: 2, s[0][1]: 1, s[1][0]: 1, s[1][1]: 3, sp.Symbol("sigma_star1", positive=True): 2}
    at[sp.Symbol("sigma_star2", positive=True)] = 3
    res = out["residual_c2"].subs(at)
    return max(abs(e) for e in res), out["loss_gap"].subs(at)


@claim(
    "MP-C.2.frames",
    reading=(
        "U, V are the target's singular vectors (M_* = U Sigma_* V^T) and the same pair is used for every layer, as "
        "C.2 writes it; the general case U != V (a non-symmetric target, as C.2's 'target SVD' allows)."
    ),
)
def test_c2_frames_ours(audit):
    out = _c2()
    worst, gap = _c2_instance(out[2])
    nonzero = {L: sum(e != 0 for e in o["residual_c2"]) for L, o in out.items()}
    audit.ours(nonzero, label="nonzero entries of W_L...W_1 - U (prod Sigma_l) V^T, d = 2, L = 2, 3")
    audit.ours(out[2]["P_minus_I"], label="V^T U - I (the factor between consecutive layers, minus I)")
    audit.ours(worst, label="max |entry| of that residual at Sigma_1 = diag(2,1), Sigma_2 = diag(1,3)")
    audit.ours(gap, label="actual loss there with M_* = U diag(2, 3) V^T, where (37) gives 0")
    audit.evidence(
        "Exact, rational orthogonal U != V (Cayley transforms), symbolic positive diagonals. With W_l = U Sigma_l V^T "
        "for every layer the product is U Sigma_L (V^T U) Sigma_{L-1} ... (V^T U) Sigma_1 V^T (residual 0 for L = "
        "2, 3), not U (prod Sigma_l) V^T: for L = 2 the rotated difference is s_{2,i} (V^T U - I)_{ij} s_{1,j} "
        "(residual 0), a zero polynomial only if V^T U = I, i.e. U = V; with U = V (symmetric target) C.2 holds "
        "(residual 0). Under C.2's layers the loss does not decouple either: at prod Sigma_l = Sigma_* the loss is "
        f"{gap} = {float(gap):.4f}, not 0. With Definition B.1's chained frames W_l = Q_{{l+1}} Sigma_l Q_l^T "
        "(Q_1 = V, Q_{L+1} = U) the product telescopes to U (prod Sigma_l) V^T (residual 0 for L = 2, 3): Eq. (27), "
        "and (37) holds there (MP-3.10)."
    )
    for o in out.values():
        assert o["core_residual"].is_zero_matrix and o["chained_residual"].is_zero_matrix
        assert o["symmetric_residual"].is_zero_matrix
        assert o["loss_gap"] != 0
    assert out[2]["rotated_residual_L2"].is_zero_matrix
    assert not out[2]["P_minus_I"].is_zero_matrix
    assert all(n > 0 for n in nonzero.values()) and worst > 0 and gap > 0


@discrepancy(
    "MP-C.2.frames",
    reason=(
        "With one frame pair for every layer, W_L...W_1 = U Sigma_L (V^T U) Sigma_{L-1} ... (V^T U) Sigma_1 V^T, which "
        "equals U (prod Sigma_l) V^T for generic diagonals only when V^T U = I (U = V, a symmetric target). For a "
        "general target the layers must chain their frames, W_hl = Q_{h,l+1} Sigma_hl Q_hl^T with Q_h1 = V, "
        "Q_{h,L+1} = U (Definition B.1, Eq. (27)); then the product telescopes and C.2's conclusion (37) holds."
    ),
)
def test_c2_frames_paper():
    out = _c2()
    worst, _ = _c2_instance(out[2])
    paper_claim(
        all(o["residual_c2"].is_zero_matrix is True for o in out.values()),
        f"W_L...W_1 - U (prod Sigma_l) V^T has entries up to {float(worst):.4f} at Sigma_1 = diag(2,1), "
        "Sigma_2 = diag(1,3), U != V",
    )


# ------------------------------------------------------------------ Section 3.2: mode coefficients vs singular values
SV_READING = (
    "'the i-th singular value' read in its standard sense, the i-th largest (the text orders the target's singular "
    "values non-increasingly, Appendix C.5), on the SVS set as Section 3.2 defines it (Eq. (6): diagonal Sigma_hl of "
    "any sign). What holds (our side): with non-negative layer entries (Definition B.1's condition) sigma_hi is the "
    "singular value of Omega_h belonging to the singular pair (u_*i, v_*i), and the sigma_hi over i are the singular "
    "values in some order; with a negative entry |sigma_hi| is, for the pair (u_*i, -v_*i)."
)


@claim("MP-3.2.sv", reading=SV_READING)
def test_mode_coefficient_singular_value_ours(audit):
    out = dsvs.mode_singular_values()
    ex = {k: out[k] for k in ("sorted", "global_min_unsorted", "negative")}
    audit.ours({k: v["mode"] for k, v in ex.items()}, label="sigma_hi over i (Eq. (28))")
    audit.ours({k: v["singular"] for k, v in ex.items()}, label="singular values of Omega_h, non-increasing")
    audit.ours(out["global_min_loss"], label="loss at the two-pathway example (a global minimum)")
    g, n = ex["global_min_unsorted"], ex["negative"]
    tup = lambda v: "(" + ", ".join(str(x) for x in v) + ")"  # noqa: E731
    audit.evidence(
        "Exact, d = 2, rational chained frames (U != V). In every example u_*i^T Omega_h v_*i (Eq. (8)) equals prod_l "
        "of the layer entries (Eq. (28)) and Omega_h v_*i = sigma_hi u_*i, Omega_h^T u_*i = sigma_hi v_*i (residuals "
        f"0): (u_*i, v_*i) is a singular pair. Sorted example {tup(ex['sorted']['mode'])}: the i-th largest. At the "
        f"global minimum with pathways {tup(g['mode'])} and {tup(out['global_min_pathway2'])} for sigma_* = (5/4, 2/5) "
        f"(loss {out['global_min_loss']}, depth-balanced, positive entries) pathway 1's singular values are "
        f"{tup(g['singular'])}, its sigma_h1 = {g['mode'][0]}: a pathway's mode order need not follow the target's. "
        f"With a layer entry -1/2 (allowed by Eq. (6)) sigma_h = {tup(n['mode'])} against singular values "
        f"{tup(n['singular'])}: a negative sigma_hi is no singular value, its modulus is."
    )
    for v in ex.values():
        assert all(m.is_zero_matrix for m in v["pair_residual"])
        assert [sp.simplify(a - b) for a, b in zip(v["eq8"], v["mode"])] == [0, 0]
    for k in ("sorted", "global_min_unsorted"):
        assert sorted(ex[k]["mode"], key=lambda x: -x) == ex[k]["singular"]  # non-negative: the same multiset
    assert sorted((abs(x) for x in ex["negative"]["mode"]), key=lambda x: -x) == ex["negative"]["singular"]
    assert ex["sorted"]["ith"] and out["global_min_loss"] == 0


@discrepancy(
    "MP-3.2.sv",
    reason=(
        "reading-dependent (wording: read as 'the i-th largest singular value'): "
        "sigma_hi is a singular value of Omega_h only when it is non-negative (Definition B.1 adds non-negative "
        "entries; Section 3.2's Eq. (6) does not), and it is the singular value of the pair (u_*i, v_*i), not the "
        "i-th largest: a pathway's mode coefficients need not be ordered like the target's, even at a global minimum."
    ),
    reading=SV_READING,
)
def test_mode_coefficient_singular_value_paper():
    out = dsvs.mode_singular_values()
    bad = {k: (out[k]["mode"], out[k]["singular"]) for k in ("sorted", "global_min_unsorted", "negative")}
    paper_claim(
        all(out[k]["ith"] for k in bad),
        "sigma_hi vs the non-increasing singular values: "
        + "; ".join(f"{k}: {m} vs {sv}" for k, (m, sv) in bad.items() if not out[k]["ith"]),
    )


# ------------------------------------------------------------------ cross-references, read from the paper text
def _prop_b4(text):
    cites = ptext.cited_locations(text, "Proposition", "B.4")
    return {
        "stated_in": ptext.statement_section(text, "Proposition", "B.4"),
        "cited_as": [c["location"] for c in cites],
        "link_appendix": [ptext.anchor_appendix(c["anchor"]) for c in cites],
        "lemmas_E1": [ptext.statement_section(text, "Lemma", n) for n in ("E.1", "E.2")],
    }


@claim("MP-3.3.xref")
def test_prop_b4_location_ours(audit):
    found = _prop_b4(paper_text())
    audit.ours(found["stated_in"], label="section whose heading precedes the statement heading of Proposition B.4")
    audit.ours(found["cited_as"], label="location the prose gives ('Proposition B.4 in Appendix X')")
    audit.ours(found["link_appendix"], label="appendix the citation's own HTML link points to")
    audit.evidence(
        "Parsed from the paper text (numbered headings and statement headings, not line numbers): Proposition B.4 is "
        f"stated in Appendix {found['stated_in']}, and the link on 'Proposition B.4' points to Appendix "
        f"{found['link_appendix'][0]} (anchor A2). Appendix E.1 holds Lemmas E.1 and E.2 (found in "
        f"{', '.join(found['lemmas_E1'])}), which state the same invariances (SVS set, depth-wise balance)."
    )
    assert found["stated_in"] == "B.2"
    assert len(found["cited_as"]) == 1 and found["link_appendix"] == ["B"]
    assert found["lemmas_E1"] == ["E.1", "E.1"]


@discrepancy(
    "MP-3.3.xref",
    reason=(
        "Proposition B.4 is stated in Appendix B.2 (its own link points there); Appendix E.1, which the text names, "
        "holds Lemmas E.1-E.2 with the same content. The citation should read 'Proposition B.4 in Appendix B.2' or "
        "'Lemmas E.1-E.2 in Appendix E.1'."
    ),
)
def test_prop_b4_location_paper():
    found = _prop_b4(paper_text())
    paper_claim(
        found["cited_as"] == [found["stated_in"]],
        f"cited in Appendix {found['cited_as']}, stated in Appendix {found['stated_in']}",
    )


INIT_PHRASE = r"depth-balanced diagonal initiali[sz]ation"


def _init_ref(text):
    return {
        "cited": ptext.cited_equations(text, INIT_PHRASE),
        "init_tag": ptext.first_tag_after(text, r"We initiali[sz]e each pathway with"),
        "eq4": ptext.equation_display(text, 4),
        "eq11": ptext.equation_display(text, 11),
    }


@claim("MP-B.2.xref")
def test_init_equation_reference_ours(audit):
    found = _init_ref(paper_text())
    disp = ptext.equation_display(paper_text(), found["init_tag"])
    audit.ours(found["init_tag"], label="tag of the display after 'We initialize each pathway with' (Section 3.3)")
    audit.ours(found["cited"], label="equation cited after 'depth-balanced diagonal initialization' (Appendix B.2)")
    audit.evidence(
        "Parsed from the paper text (equation tags glued to their displays, accepted in increasing order; phrases, "
        f"not line numbers): the initialisation W_hl(0) = alpha_h^(1/L_h) I_d is tagged ({found['init_tag']}); the "
        "display tagged (4) is the gradient-descent update W_hl(t+1) = W_hl(t) - eta grad L (it holds nabla and "
        "(t+1), no alpha). Appendix B.2 cites the initialisation as "
        f"Eq. ({found['cited'][0] if found['cited'] else '?'})."
    )
    assert found["init_tag"] == 11 and disp == found["eq11"]
    assert "\\alpha" in found["eq11"] and "I_{d}" in found["eq11"] and "(0)" in found["eq11"]
    assert "\\nabla" in found["eq4"] and "(t+1)" in found["eq4"] and "\\alpha" not in found["eq4"]
    assert len(found["cited"]) == 1


@discrepancy(
    "MP-B.2.xref",
    reason="The depth-balanced diagonal initialisation is Eq. (11); Eq. (4) is the gradient-descent update.",
)
def test_init_equation_reference_paper():
    found = _init_ref(paper_text())
    paper_claim(
        found["cited"] == [found["init_tag"]],
        f"cited Eq. {found['cited']}, the initialisation is Eq. ({found['init_tag']})",
    )
