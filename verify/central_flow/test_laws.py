"""Checks of the invariances, gradient-flow laws, their number and the central-flow drift (Sections 1-3).

Symbolic results come from :mod:`derivations.central_flow.laws`. An arbitrary loss F of the
product enters through its jet at phi(theta) (symbols for grad F, grad^2 F, grad^3 F), so
an identity that holds for the jet holds for every smooth F. Exact rational arithmetic
throughout; no tolerances.
"""

import sympy as sp

from derivations.central_flow import laws
from derivations.central_flow.matrix import breaking_matrix_from_sigma, generic_loss_drift, residual_part_rate
from verify.audit import claim

MF_SHAPES = [(1, 1, 1), (2, 1, 1), (2, 2, 1), (1, 1, 2), (2, 1, 2), (2, 2, 2), (1, 1, 3), (2, 1, 3), (2, 2, 3)]
RELU_SHAPES = [(1, 2, 1), (1, 2, 2), (1, 3, 3)]  # (outputs n, inputs d, hidden r)
SEEDS = (1, 2)  # two generic rational points per shape; the count must agree at both


def _all_zero(M) -> bool:
    return all(sp.expand(e) == 0 for e in M)


@claim("CF-2.grad")
def test_gradient_in_W_phi(audit):
    results = {}
    for model in (laws.scalar_model(), laws.mf_model(2, 2, 2), laws.relu_model(1, 2, 2)):
        jet = laws.generic_loss(model.phi, order=1)
        theta = list(model.theta)
        grad_L = laws.gradient(jet.loss, theta).subs(jet.base)
        J = sp.Matrix([list(laws.gradient(p, theta)) for p in model.phi])
        results[model.name] = _all_zero(grad_L - J.T * jet.grad)
    audit.ours({k: "grad L - dphi^T grad F = 0" if v else "NONZERO" for k, v in results.items()})
    audit.evidence(
        "L = F(phi(theta)) with F an arbitrary loss (first-order jet, grad F(phi) symbolic); the SymPy gradient "
        "equals dphi^T grad F exactly, so it is a combination of the fields grad phi_a spanning W_phi."
    )
    assert all(results.values())


@claim("CF-2.TA")
def test_transformation_and_generator(audit):
    kernel = laws.phi_along_generator(2, 3, 2)
    series = laws.transformation_series(1, 1, 2, 5)
    eps = sp.Symbol("epsilon")
    U, V, A = laws.matrix_symbols("U", 2, 2), laws.matrix_symbols("V", 2, 2), laws.matrix_symbols("A", 2, 2)
    TA = laws.vec(U * (sp.eye(2) + eps * A + eps**2 * A**2 / 2), V * (sp.eye(2) - eps * A.T + eps**2 * (A.T) ** 2 / 2))
    d_eps = TA.diff(eps).subs(eps, 0)
    audit.ours(
        "dphi Delta_A = 0 for general A (n=2, m=3, r=2); U e^{eps A} e^{-eps A} V^T - U V^T = O(eps^6) (n=m=1, r=2)"
    )
    audit.evidence(
        "SymPy: the directional derivative of every entry of U V^T along (UA, -VA^T) vanishes identically for a "
        "general (non-symmetric) symbolic A; the product along the truncated exponentials has zero Taylor "
        "coefficients through eps^5; d/deps T_A at 0 equals (UA, -VA^T)."
    )
    assert _all_zero(kernel) and _all_zero(series)
    assert _all_zero(d_eps - laws.generator(U, V, A))


@claim("CF-2.gradfield")
def test_gradient_field_iff_symmetric(audit):
    found = {}
    for n, m, r in [(2, 2, 2), (1, 2, 3), (2, 1, 3)]:
        basis = laws.gradient_field_algebra(n, m, r)
        found[(n, m, r)] = basis
        assert len(basis) == r * (r + 1) // 2  # dim Sym(r)
        assert all(B.is_symmetric() for B in basis)
    audit.ours({str(k): f"{len(v)} = dim Sym({k[2]}), all symmetric" for k, v in found.items()})
    audit.evidence(
        "Delta_A is linear, Delta_A(theta) = J_A theta; a linear field is a gradient iff J_A is symmetric. "
        "Solving the linear equations J_A = J_A^T for the entries of a general A gives exactly Sym(r) (basis of "
        "r(r+1)/2 symmetric matrices) for each shape."
    )


@claim("CF-2.gradPsi")
def test_grad_psi_A(audit):
    U, V = laws.matrix_symbols("U", 2, 2), laws.matrix_symbols("V", 3, 2)
    A = laws.symmetric_symbols("A", 2)
    theta = list(laws.vec(U, V))
    g = laws.gradient(laws.psi_A(U, V, A), theta)
    paper = laws.vec(2 * U * A, -2 * V * A)
    audit.ours("grad tr(A (U^T U - V^T V)) - (2UA, -2VA) = 0; = 2 Delta_A (n=2, m=3, r=2, A symmetric)")
    audit.evidence(
        "SymPy gradient of Psi_A with a symbolic symmetric A compared entrywise with (2UA, -2VA) and 2 Delta_A."
    )
    assert _all_zero(g - paper)
    assert _all_zero(g - 2 * laws.generator(U, V, A))


@claim("CF-2.cons-scalar")
def test_scalar_law_conserved(audit):
    rate = laws.gradient_flow_rate(laws.scalar_model(), "h")
    audit.ours(rate, label="dh/dt along gradient flow")
    audit.evidence("theta' = -grad F(u v) for an arbitrary F (jet); <grad h, theta'> expands to 0.")
    assert rate == 0


@claim("CF-2.cons-mf")
def test_mf_laws_conserved(audit):
    rates = {}
    for shape in [(2, 2, 2), (2, 3, 2), (1, 1, 3)]:
        model = laws.mf_model(*shape)
        rates[shape] = {name: laws.gradient_flow_rate(model, name) for name in model.laws}
    audit.ours({str(k): "all dPsi_ij/dt = 0" if all(x == 0 for x in v.values()) else str(v) for k, v in rates.items()})
    audit.evidence(
        "Every entry of Psi = U^T U - V^T V differentiated along theta' = -grad F(U V^T), F arbitrary (jet): 0."
    )
    assert all(x == 0 for v in rates.values() for x in v.values())


@claim("CF-2.cons-relu")
def test_relu_laws_conserved(audit):
    model = laws.relu_model(2, 2, 3)
    rates = {name: laws.gradient_flow_rate(model, name) for name in model.laws}
    audit.ours(rates)
    audit.evidence(
        "Two-layer ReLU, n=2 outputs, d=2 inputs, r=3: F an arbitrary loss of (u_j v_j^T)_j (any data, any fixed "
        "gates); each dh_j/dt along gradient flow expands to 0."
    )
    assert all(x == 0 for x in rates.values())


def _mf_rank(model, point) -> int:
    U, V = model.blocks["U"].subs(point), model.blocks["V"].subs(point)
    return sp.Matrix.vstack(U, V).rank()


@claim("CF-1.NGF")
def test_number_of_laws_is_attained(audit):
    rows = {}
    models = [
        laws.scalar_model(),
        *(laws.mf_model(*s) for s in MF_SHAPES[:6]),
        *(laws.relu_model(*s) for s in RELU_SHAPES),
    ]
    for model in models:
        point = laws.generic_point(model, SEEDS[0])
        n_lie = laws.number_of_laws(model, point)
        n_known = laws.laws_rank_at(model, point)
        orth = laws.laws_orthogonal_to_algebra(model, point)
        rows[model.name] = (n_lie, n_known, orth)
    audit.ours({k: f"D - dim Lie = {a}, rank of known laws = {b}, orthogonal = {c}" for k, (a, b, c) in rows.items()})
    audit.evidence(
        "Lie(W_phi) closed exactly over Q (right-nested brackets of the fields grad phi_a until no new independent "
        "polynomial field); its rank at a generic rational point gives D - dim Lie; the known laws' gradients are "
        "orthogonal to every field of the algebra there and their rank equals D - dim Lie, so they are complete."
    )
    assert all(a == b and c for a, b, c in rows.values())


@claim("CF-2.NGF-mf")
def test_mf_count_formula(audit):
    rows = {}
    for shape in MF_SHAPES:
        model = laws.mf_model(*shape)
        for seed in SEEDS:
            point = laws.generic_point(model, seed)
            rk = _mf_rank(model, point)
            rows[(shape, seed)] = (laws.number_of_laws(model, point), laws.n_gf_formula(shape[2], rk), rk)
    audit.ours({f"(n,m,r)={s} seed {sd}": f"ours {a}, paper {b} (rk={c})" for (s, sd), (a, b, c) in rows.items()})
    audit.evidence(
        "N_GF = D - dim Lie(W_phi)(theta) from the exact Lie-algebra closure, at two generic rational points per "
        "shape, including rk < r (n + m < r); compared with rk(2r + 1 - rk)/2, rk = rank (U; V) computed exactly."
    )
    assert all(a == b for a, b, _ in rows.values())


@claim("CF-C.NGF3")
def test_mf_rank_two_has_three_laws(audit):
    counts = {}
    for shape in [(2, 2, 2), (3, 2, 2)]:
        model = laws.mf_model(*shape)
        counts[shape] = laws.number_of_laws(model, laws.generic_point(model, SEEDS[0]))
    audit.ours({str(k): v for k, v in counts.items()})
    audit.evidence("D - dim Lie(W_phi) at a generic rational point for r = 2 (n = m = 2 and n = 3, m = 2).")
    assert all(v == 3 for v in counts.values())


@claim(
    "CF-2.relu-diag", reading="'admissible' read as: Delta_A leaves phi_ReLU = (u_j v_j^T)_j invariant at every theta"
)
def test_relu_admissible_generators(audit):
    shapes = [(1, 2, 2), (2, 2, 3), (1, 3, 3)]
    results = {s: laws.relu_admissible_generators(*s) for s in shapes}
    pointwise = {s: len(laws.relu_kernel_generators_at(*s)) for s in shapes}
    audit.ours(
        {
            str(s): (
                f"{len(B)} generators, all diagonal: {all(b.is_diagonal() for b in B)}; "
                f"pointwise kernel dim {pointwise[s]}"
            )
            for s, B in results.items()
        }
    )
    audit.evidence(
        "Linear equations on A from every theta-coefficient of dphi_ReLU Delta_A = 0: the solution space is Diag(r). "
        "Pointwise (one generic theta) the kernel is Diag(r) when max(n, d) >= r but larger when n, d < r (n = d = 2, "
        f"r = 3 gives {pointwise[(2, 2, 3)]} dims): those extra directions are not invariances."
    )
    for s, basis in results.items():
        assert len(basis) == s[2] and all(b.is_diagonal() for b in basis)
    assert pointwise[(1, 2, 2)] == 2 and pointwise[(1, 3, 3)] == 3


@claim("CF-2.relu-laws")
def test_relu_psi_A_decomposes(audit):
    model = laws.relu_model(2, 3, 3)
    U, V = model.blocks["U"], model.blocks["V"]
    lam = sp.symbols("lambda0:3", real=True)
    lhs = laws.psi_A(U, V, sp.diag(*lam))
    rhs = sum(l * model.laws[f"h_{j}"] for j, l in enumerate(lam))
    audit.ours(sp.expand(lhs - rhs), label="Psi_diag(lambda) - sum_j lambda_j h_j")
    audit.evidence("SymPy expansion with symbolic lambda_j, n=2, d=3, r=3.")
    assert sp.expand(lhs - rhs) == 0


@claim("CF-2.relu-NGF")
def test_relu_count(audit):
    rows = {}
    for shape in RELU_SHAPES:
        model = laws.relu_model(*shape)
        for seed in SEEDS:
            point = laws.generic_point(model, seed)
            rows[(shape, seed)] = (laws.number_of_laws(model, point), laws.laws_rank_at(model, point))
    audit.ours({f"(n,d,r)={s} seed {sd}": f"N_GF {a}, independent h_j {b}" for (s, sd), (a, b) in rows.items()})
    audit.evidence(
        "D - dim Lie(W_phi) with phi_j = u_j v_j^T at generic rational points, vs r and the rank of the h_j."
    )
    assert all(a == s[2] and b == s[2] for (s, _), (a, b) in rows.items())


@claim("CF-2.testspaces")
def test_admissible_test_spaces(audit):
    scalar = laws.gradient_field_algebra(1, 1, 1)
    mf = laws.gradient_field_algebra(2, 2, 3)
    relu_gen = laws.relu_admissible_generators(1, 3, 3)
    # ReLU test space: gradient generators (Sym) that are also admissible (Diag): Diag(3)
    relu_test = [B for B in relu_gen if B.is_symmetric()]
    audit.ours(
        f"scalar: dim {len(scalar)} (R); MF r=3: dim {len(mf)} symmetric; ReLU r=3: dim {len(relu_test)} diagonal"
    )
    audit.evidence(
        "Gradient generators Delta_A solved exactly (J_A symmetric) give Sym(r) (R for r = 1); the ReLU admissible "
        "generators (invariance of (u_j v_j^T)_j at every theta) are Diag(r) (a subspace of Sym(r))."
    )
    assert len(scalar) == 1 and len(mf) == 6 and all(B.is_symmetric() for B in mf)
    assert len(relu_test) == 3 and all(B.is_diagonal() for B in relu_test)


@claim("CF-3.hdot")
def test_law_drift_along_central_flow(audit):
    cases = [(laws.scalar_model(), "h"), (laws.relu_model(1, 1, 2), "h_0"), (laws.mf_model(2, 1, 1), "Psi_0_0")]
    diffs = {}
    for model, name in cases:
        direct, paper = laws.central_flow_law_rate(model, name)
        diffs[f"{model.name} {name}"] = (sp.expand(direct - paper), paper != 0)
    audit.ours(
        {
            k: f"<grad h, theta'> - (-(eta/2) D_grad h <H,Sigma>) = {d}; drift nonzero: {nz}"
            for k, (d, nz) in diffs.items()
        }
    )
    audit.evidence(
        "Central-flow velocity built from the SymPy Hessian of an arbitrary loss F of the product (third-order jet) "
        "and a general symmetric Sigma; <grad h, theta'> minus the paper's expression expands to 0."
    )
    assert all(d == 0 and nz for d, nz in diffs.values())


@claim("CF-3.psidot")
def test_psi_A_drift_along_central_flow(audit):
    diffs = {}
    for shape in [(2, 1, 1), (1, 1, 2)]:
        direct, paper = laws.central_flow_psi_rate(*shape)
        diffs[shape] = (sp.expand(direct - paper), paper != 0)
    audit.ours({str(k): f"difference {d}; drift nonzero: {nz}" for k, (d, nz) in diffs.items()})
    audit.evidence(
        "MF with an arbitrary loss F (third-order jet), symbolic A in Sym(r), general symmetric Sigma: "
        "<grad Psi_A, theta'> equals -eta D_{Delta_A} <H, Sigma> exactly."
    )
    assert all(d == 0 and nz for d, nz in diffs.values())


@claim("CF-3.split")
def test_hessian_split(audit):
    ok = {}
    for model in (laws.scalar_model(), laws.mf_model(2, 2, 2), laws.relu_model(1, 2, 2)):
        H, Hp, Hc = laws.hessian_split(model)
        ok[model.name] = _all_zero(H - Hp - Hc) and not _all_zero(Hc)
    audit.ours({k: "H - H_p - H_c = 0, H_c != 0" if v else "FAILED" for k, v in ok.items()})
    audit.evidence(
        "Hessian of an arbitrary loss of the product (second-order jet) vs dphi^T K dphi + sum_a g_a grad^2 phi_a."
    )
    assert all(ok.values())


@claim(
    "CF-3.collapse",
    reading="the lost 'Collapse to the factor dimension' read as: the residual part H_c does not move the laws and the "
    "drift depends on F only through grad^2 F, contracted into r x r matrices",
)
def test_collapse_to_factor_dimension(audit):
    resid = {s: residual_part_rate(*s) for s in [(2, 2, 1), (2, 1, 2)]}
    rate, rate_identity = generic_loss_drift(2, 2, 1)
    kinds = sorted({s.name.split("_")[1] for s in rate.free_symbols if s.name.startswith("F_")})
    A = laws.symmetric_symbols("A", 1)
    squared = sp.expand(rate_identity - (A * breaking_matrix_from_sigma(2, 2, 1)).trace())
    audit.ours({**{f"D<H_c,Sigma> {s}": v for s, v in resid.items()}, "F-symbols in D<H,Sigma>": kinds})
    audit.evidence(
        "Arbitrary F (third-order jet), general symmetric Sigma, general A: D_{Delta_A} <H_c, Sigma> = 0, and "
        "D_{Delta_A} <H, Sigma> contains only the grad^2 F symbols (no grad F, no grad^3 F); with grad^2 F = I it "
        "is tr(A B~) with the r x r boxed B~ (expectations read off the general Sigma), for n = m = 2, r = 1."
    )
    assert all(v == 0 for v in resid.values())
    assert kinds == ["K"] and squared == 0


@claim("CF-2.lemma")
def test_invariance_lemma(audit):
    shapes = [(2, 1), (3, 2)]
    res = {s: laws.invariance_lemma(*s) for s in shapes}
    links = ("generator", "perp", "loss", "law")
    audit.ours(
        {f"D={s[0]}, P={s[1]}": {k: ("0" if v[k] == 0 else "NONZERO") for k in links} for s, v in res.items()},
        label="residuals of the four links",
    )
    audit.ours(
        {f"D={s[0]}, P={s[1]}": v["law_rate"] != 0 for s, v in res.items()},
        label="dh/dt along GF nonzero for a generic h (the premise dphi grad h = 0 is what kills it)",
    )
    audit.evidence(
        "SymPy with undefined smooth functions phi_a(theta), F, h, Delta_i(theta) and W_i(eps, theta), "
        "T = theta + eps Delta + eps^2 W (every C^2 family with T(0) = theta): d/deps phi(T) at 0 = dphi Delta "
        "(chain rule), so phi(T(eps)) = phi forces dphi Delta = 0; <Delta, dphi^T w> = <dphi Delta, w> for every w "
        "(Delta in W_phi^perp); D_Delta F(phi) = <grad F, dphi Delta> = 0 (the loss is invariant); along theta' = "
        "-grad L, dh/dt = -<grad F(phi), dphi grad h>, which vanishes when Delta = grad h: h is conserved. "
        f"Each residual expands to 0 for (D, P) = {', '.join(str(s) for s in shapes)}; the general case is the same "
        "algebra (finite sums). The remark that not every kernel element arises from the symmetry family is no "
        "claim."
    )
    assert all(v[k] == 0 for v in res.values() for k in links)
    assert all(v["law_rate"] != 0 for v in res.values())
