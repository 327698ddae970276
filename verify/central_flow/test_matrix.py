"""Checks of the matrix-factorisation breaking matrix (Appendix C; Figure 2).

Symbolic results come from :mod:`derivations.central_flow.matrix` (loss ||U V^T - Y||_F^2 / 2,
Sigma = sum of symbolic rank-one terms, which by linearity covers every Sigma). "Ours" is
always the directional derivative of <H, Sigma> computed from the Hessian of the loss; the
paper's boxed B~ (with the reconstructed N, N') is the thing under test. The float64
property uses the exact Hessians of :mod:`numerics.central_flow.models`.
"""

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.central_flow import laws
from derivations.central_flow import matrix as M
from numerics.central_flow import models
from verify.audit import claim

N_READING = (
    "N := E[delta_V^T V delta_U^T U], N' := E[delta_U^T U delta_V^T V] (lost definitions; the reading under which the "
    "paper's N - N' = E[[delta_V^T V, delta_U^T U]] holds); squared Frobenius loss ||U V^T - Y||^2/2 (grad^2 F = I)"
)
EPS = np.finfo(float).eps


def _zero(M_) -> bool:
    return all(sp.expand(e) == 0 for e in M_)


def _paper_B_numeric(U, V, dUs, dVs):
    """The boxed B~ in float64 (the paper's formula, N and N' as read), and the sum of |terms| for rounding."""
    PU, PV = U.T @ U, V.T @ V
    RU = sum(dU.T @ dU for dU in dUs)
    RV = sum(dV.T @ dV for dV in dVs)
    N = sum(dV.T @ V @ dU.T @ U for dU, dV in zip(dUs, dVs))
    Np = sum(dU.T @ U @ dV.T @ V for dU, dV in zip(dUs, dVs))
    B = PU @ RV + RV @ PU - PV @ RU - RU @ PV + 2 * (N - Np)
    a = np.abs
    RUa = sum(a(dU.T) @ a(dU) for dU in dUs)
    RVa = sum(a(dV.T) @ a(dV) for dV in dVs)
    Na = sum(a(dV.T) @ a(V) @ a(dU.T) @ a(U) + a(dU.T) @ a(U) @ a(dV.T) @ a(V) for dU, dV in zip(dUs, dVs))
    PUa, PVa = a(U.T) @ a(U), a(V.T) @ a(V)
    mag = PUa @ RVa + RVa @ PUa + PVa @ RUa + RUa @ PVa + 2 * Na
    return B, mag


def _ours_drift_numeric(theta, Y, r, Sigma, direction):
    """D_direction <H, Sigma> from the float64 Hessian, and the sum of |terms| for rounding.

    <H(theta + e direction), Sigma> is a quadratic polynomial in e (H is quadratic in theta),
    so its symmetric difference at e = +-1 is the exact derivative up to rounding.
    """
    Hp = models.mf_hessian(theta + direction, Y, r)
    Hm = models.mf_hessian(theta - direction, Y, r)
    val = (np.sum(Hp * Sigma) - np.sum(Hm * Sigma)) / 2
    return val, (np.sum(np.abs(Hp * Sigma)) + np.sum(np.abs(Hm * Sigma))) / 2


@claim("CF-C.dphi")
def test_dphi(audit):
    U, V, _ = M.mf_symbols(2, 3, 2)
    ((dU, dV),) = M.samples(2, 3, 2, 1)
    theta = list(laws.vec(U, V))
    J = (U * V.T).reshape(6, 1).jacobian(theta)
    ours = (J * laws.vec(dU, dV)).reshape(2, 3)
    audit.ours("Jacobian of vec(U V^T) times vec(delta) - (delta_U V^T + U delta_V^T) = 0 (n=2, m=3, r=2)")
    audit.evidence("SymPy Jacobian of the product applied to a symbolic delta.")
    assert _zero(ours - M.dphi(U, V, dU, dV))


@claim("CF-C.gram")
def test_gram_rates(audit):
    res = {s: M.gram_rates(*s) for s in [(2, 3, 2), (1, 2, 3)]}
    audit.ours(
        {str(s): "both differences zero" if all(_zero(x) for x in d.values()) else str(d) for s, d in res.items()}
    )
    audit.evidence(
        "Directional derivatives of U^T U and V^T V along (UA, -VA), A symbolic symmetric, minus the stated rates."
    )
    assert all(_zero(x) for d in res.values() for x in d.values())


@claim("CF-C.Btilde", reading=N_READING)
def test_breaking_matrix_symbolic(audit):
    shapes = [(2, 2, 1), (2, 2, 2), (2, 1, 2), (1, 2, 3)]
    res = {}
    for s in shapes:
        ours, paper = M.drift_identity(*s, K=2)
        res[s] = (sp.expand(ours - paper), ours != 0)
    audit.ours({f"(n,m,r)={s}": f"D<H,Sigma> - tr(A B~) = {d}; nonzero drift: {nz}" for s, (d, nz) in res.items()})
    audit.evidence(
        "ours: directional derivative along Delta_A (A symbolic symmetric) of sum_k delta_k^T H delta_k, H the SymPy "
        "Hessian of the squared loss, K = 2 symbolic samples; paper: tr(A B~) from the boxed formula. Equal after "
        "expansion for every shape; linear in Sigma, so it holds for every Sigma."
    )
    assert all(d == 0 and nz for d, nz in res.values())


@claim("CF-C.Btilde", reading=N_READING)
def test_breaking_matrix_float64_property(audit):
    worst = [0.0]

    @given(
        n=st.integers(1, 4),
        m=st.integers(1, 4),
        r=st.integers(1, 3),
        K=st.integers(1, 4),
        seed=st.integers(0, 2**32 - 1),
        log_scale=st.floats(-1.0, 1.0),
    )
    def prop(n, m, r, K, seed, log_scale):
        rng = np.random.default_rng(seed)
        s = 10.0**log_scale
        U, V, Y = s * rng.normal(size=(n, r)), s * rng.normal(size=(m, r)), s**2 * rng.normal(size=(n, m))
        A = rng.normal(size=(r, r))
        A = A + A.T
        dUs = [rng.normal(size=(n, r)) for _ in range(K)]
        dVs = [rng.normal(size=(m, r)) for _ in range(K)]
        ds = [np.concatenate([dU.ravel(), dV.ravel()]) for dU, dV in zip(dUs, dVs)]
        Sigma = sum(np.outer(d, d) for d in ds)
        theta = models.mf_pack(U, V)
        direction = models.mf_pack(U @ A, -V @ A.T)
        ours, mag_ours = _ours_drift_numeric(theta, Y, r, Sigma, direction)
        B, mag_B = _paper_B_numeric(U, V, dUs, dVs)
        paper = float(np.trace(A @ B))
        scale = mag_ours + float(np.sum(np.abs(A) * mag_B))
        D = (n + m) * r
        # each side is a sum of at most ~4 D^2 float64 products: |error| <= 8 D^2 eps sum|terms| (gamma_k bound, x2)
        err = abs(ours - paper) / scale
        worst[0] = max(worst[0], err / (8 * D * D * EPS))
        assert err <= 8 * D * D * EPS

    prop()
    audit.ours(worst[0], 3, label="max |ours - paper| / (8 D^2 eps sum|terms|) over the hypothesis examples")
    audit.evidence(
        "Hypothesis over n, m in 1..4, r in 1..3, K in 1..4 rank-one samples (Sigma = sum delta delta^T), scales "
        "10^-1..10: ours = exact symmetric difference of tr(H(theta +- Delta_A) Sigma) from the float64 Hessian "
        "(quadratic in the step, so no truncation error); paper = tr(A B~) from the boxed formula; tolerance "
        "8 D^2 eps times the sum of |terms| (rounding of sums of at most ~4 D^2 products)."
    )


@claim("CF-C.NN", reading=N_READING)
def test_cross_term(audit):
    res = {s: M.cross_term_rate(*s, K=2) for s in [(2, 2, 2), (2, 1, 3)]}
    audit.ours({str(s): f"difference {sp.expand(o - p)}, nonzero: {o != 0}" for s, (o, p) in res.items()})
    audit.evidence(
        "The cross term of E|delta_U V^T + U delta_V^T|^2 is 2 tr C with C := E[delta_U^T U delta_V^T V] (r x r; "
        "C = M V for the r x m matrix M = E[delta_U^T U delta_V^T] of CF-C.Mdot, so 2 tr C = 2 tr(M V)); its "
        "derivative along Delta_A (SymPy) equals 2 tr(A E[[delta_V^T V, delta_U^T U]]) for symbolic symmetric A."
    )
    assert all(sp.expand(o - p) == 0 and o != 0 for o, p in res.values())


@claim("CF-C.trsym")
def test_trace_sym(audit):
    A = laws.symmetric_symbols("A", 3)
    B = laws.matrix_symbols("B", 3, 3)
    diff = sp.expand((A * B).trace() - sum(a * b for a, b in zip(A.T, M.sym(B))))
    audit.ours(diff, label="tr(A B) - <A, sym B>")
    audit.evidence("SymPy with a general 3 x 3 B and a symmetric A (Frobenius inner product <X, Y> = sum X_ij Y_ij).")
    assert diff == 0


@claim("CF-C.psidot", reading=N_READING)
def test_psi_matrix_rate(audit):
    n, m, r = 2, 1, 2
    U, V, Y = M.mf_symbols(n, m, r)
    deltas = M.samples(n, m, r, 1)
    theta = list(laws.vec(U, V))
    Sigma = sum((laws.vec(dU, dV) * laws.vec(dU, dV).T for dU, dV in deltas), sp.zeros(len(theta), len(theta)))
    vel = laws.central_flow_velocity(M.loss(U, V, Y), theta, Sigma)
    P = laws.psi(U, V)
    rate = P.applyfunc(lambda e: sp.expand((laws.gradient(e, theta).T * vel)[0]))
    target = (-laws.eta * M.sym(M.breaking_matrix(U, V, deltas))).applyfunc(sp.expand)
    audit.ours("Psi' (differentiated along the central flow) + eta sym(B~) = 0 (n=2, m=1, r=2, one symbolic sample)")
    audit.evidence(
        "theta' = -eta grad L - (eta/2) grad tr(H Sigma) from the SymPy Hessian of the squared loss; every entry of "
        "Psi' = d/dt (U^T U - V^T V) compared with -eta sym(B~)."
    )
    assert _zero(rate - target)
    assert not _zero(target)


def _rational_setup(n, m, r, K, seed):
    rng = np.random.default_rng(seed)

    def rat(shape):
        return sp.Matrix(*shape, [sp.Rational(int(x), 7) for x in rng.integers(-20, 21, size=shape[0] * shape[1])])

    return rat((n, r)), rat((m, r)), rat((n, m)), [(rat((n, r)), rat((m, r))) for _ in range(K)]


def _drift_functional(U, V, Y, deltas, r):
    """A -> D_{Delta_A} <H, Sigma> on the basis E_ij + E_ji (i <= j) of Sym(r), from the exact Hessian."""
    Us, Vs, Ys = M.mf_symbols(U.shape[0], V.shape[0], r)
    theta = list(laws.vec(Us, Vs))
    H = laws.hessian(M.loss(Us, Vs, Ys), theta)
    pair = laws.pairing(H, deltas)
    point = {**dict(zip(Us, U)), **dict(zip(Vs, V)), **dict(zip(Ys, Y))}
    vals = {}
    for i in range(r):
        for j in range(i, r):
            E = sp.zeros(r, r)
            E[i, j] = E[j, i] = 1
            vals[(i, j)] = laws.directional(pair, theta, laws.generator(Us, Vs, E)).subs(point)
    return vals


@claim("CF-C.survive", reading=N_READING)
def test_survival_criterion(audit):
    n, m, r = 2, 2, 2
    U, V, Y, deltas = _rational_setup(n, m, r, 2, 7)
    vals = _drift_functional(U, V, Y, deltas, r)
    B = M.sym(M.breaking_matrix(U, V, deltas))
    # Psi_A' = -eta * functional(A), the functional known on the basis E_ij + E_ji (i < j), E_ii
    keys = sorted(vals)
    basis = []
    for i, j in keys:
        E = sp.zeros(r, r)
        E[i, j] = E[j, i] = 1
        basis.append(E)
    fvec = sp.Matrix([[vals[k] for k in keys]])
    kernel = fvec.nullspace()
    orth = [sum((c * E for c, E in zip(k, basis)), sp.zeros(r, r)) for k in kernel]
    inner = [sum(a * b for a, b in zip(A_, B)) for A_ in orth]
    audit.ours(f"B = sym(B~) = {B.tolist()}; surviving A: {len(orth)} = dim Sym(2) - 1; <A, B> on them: {inner}")
    audit.evidence(
        "Exact rational point and two rational samples: the linear functional A -> D_{Delta_A}<H, Sigma> from the "
        "Hessian has a kernel of dimension 2 (B != 0), every kernel element is orthogonal to sym(B~), and A = B "
        "itself breaks (<B, B> > 0)."
    )
    assert B != sp.zeros(r, r) and len(orth) == 2
    assert all(x == 0 for x in inner)
    # A = B = sum_{i<=j} B_ij (E_ij + E_ji)/(1 + [i == j]) is not orthogonal: D_{Delta_B}<H, Sigma> = |B|_F^2 > 0
    drift_B = sum(B[i, j] * vals[(i, j)] for i, j in keys)
    assert drift_B == sum(x**2 for x in B) and drift_B > 0


@claim("CF-C.nobreak", reading=N_READING)
def test_no_breaking_when_balanced(audit):
    n, r = 2, 2
    Us, Vs, Ys = M.mf_symbols(n, n, r)
    theta = list(laws.vec(Us, Vs))
    A = laws.symmetric_symbols("A", r)
    deltas = M.samples(n, n, r, 1)
    balanced = [(dU, dU) for dU, _ in deltas]  # with V = U: P_U = P_V, R_U = R_V, N = N'
    H = laws.hessian(M.loss(Us, Vs, Ys), theta)
    on_balance = dict(zip(Vs, Us))
    # differentiate along Delta_A first, then evaluate at V = U
    rate = sp.expand(laws.directional(laws.pairing(H, balanced), theta, laws.generator(Us, Vs, A)).subs(on_balance))
    unbalanced = sp.expand(laws.directional(laws.pairing(H, deltas), theta, laws.generator(Us, Vs, A)).subs(on_balance))
    c = M.contractions(Us, Us, balanced)
    conds = [_zero(c["P_U"] - c["P_V"]), _zero(c["R_U"] - c["R_V"]), _zero(c["N"] - c["N'"])]
    audit.ours(f"conditions hold: {conds}; D_Delta_A <H, Sigma> at the balanced configuration = {rate}")
    audit.evidence(
        "Symbolic n = m = 2, r = 2 at V = U with delta_V = delta_U (so P_U = P_V, R_U = R_V, N = N'): the drift from "
        "the Hessian vanishes for every symmetric A and Y; with an unrelated delta_V (R_U != R_V) it does not."
    )
    assert all(conds) and rate == 0 and unbalanced != 0


M_READING = (
    "M (definition lost) read as M := E[delta_U^T U delta_V^T], an r x m matrix (the reading under which the printed "
    "r x m right-hand side E[delta_U^T U A delta_V^T] is well-typed), differentiated along Delta_A = (UA, -VA), "
    "A in Sym(r), with the oscillation samples delta held fixed; M enters <H, Sigma> through the cross term "
    "2 tr(M V) of E|delta_U V^T + U delta_V^T|^2 (squared loss, grad^2 F = I)"
)


def _diff_zero(ours, paper) -> bool:
    d = ours - paper
    return _zero(d) if isinstance(d, sp.MatrixBase) else sp.expand(d) == 0


M_FITTED = {
    "M read as the r x r cross term C := E[delta_U^T U delta_V^T V] = M V (the matrix whose trace enters <H, Sigma>, "
    "CF-C.NN)": "its rate along (UA, -VA) is E[delta_U^T U A delta_V^T V] - E[delta_U^T U delta_V^T V A], r x r: the "
    "printed r x m right-hand side E[delta_U^T U A delta_V^T] cannot be it (it is not even the same shape)",
}
M_BY_CONSTRUCTION = (
    "link (1) holds by the reading's definition: M := E[delta_U^T U delta_V^T] was chosen so that the printed "
    "right-hand side is well-typed, and M is linear in U and free of V, so its rate along (UA, -VA) is "
    "E[delta_U^T U A delta_V^T], the printed formula, by the product rule; links (2) and (3) repeat CF-C.NN (the cross "
    "term 2 tr(M V) = 2 tr C and its rate tr(A (N - N'))) in the r x m notation, so they add no independent test"
)


@claim("CF-C.Mdot", reading=M_READING + "; " + N_READING, fitted=M_FITTED, by_construction=M_BY_CONSTRUCTION)
def test_Mdot(audit):
    shapes = [(2, 3, 2), (1, 2, 3)]
    res = {s: M.cross_factor_links(*s, K=2) for s in shapes}
    table = {
        f"(n,m,r)={s}": {k: ("equal" if _diff_zero(o, p) else "DIFFERENT") for k, (o, p) in links.items()}
        for s, links in res.items()
    }
    nonzero = all(
        not _zero(links["Mdot"][0]) and links["rate"][0] != 0 and links["cross"][0] != 0 for links in res.values()
    )
    audit.ours(table, label="SymPy: derived minus stated, per link")
    audit.ours(f"{nonzero}", label="every derived side nonzero (no link holds as 0 = 0)")
    audit.evidence(
        "SymPy, symbolic U, V, symmetric A and K = 2 symbolic samples, shapes (n, m, r) = "
        f"{', '.join(str(s) for s in shapes)}: (1) the derivative of every entry of M = sum_k delta_U^T U delta_V^T "
        "along (UA, -VA) equals the printed E[delta_U^T U A delta_V^T] (only U' = UA enters, V is absent from M); "
        "(2) the cross term of E|delta_U V^T + U delta_V^T|_F^2 beyond tr(R_U P_V) + tr(P_U R_V) is 2 tr(M V); (3) "
        "D_{Delta_A} tr(M V) = tr(M' V) + tr(M V') with V' = -V A equals tr(A (N - N')). M (r x m) is not the r x r "
        "cross term C = E[delta_U^T U delta_V^T V] = M V of CF-C.NN: read as C, the printed right-hand side (r x m) "
        "could not be its rate (see fitted); link (1) holds by the reading's definition and links (2)-(3) are "
        "CF-C.NN again (see by construction)."
    )
    assert all(_diff_zero(o, p) for links in res.values() for o, p in links.values())
    assert nonzero
