"""Checks of the two-layer ReLU breaking matrix inside a fixed activation region (Appendix D; Figures 3-4).

Symbolic results come from :mod:`derivations.central_flow.relu` (loss (1/2) sum_i |U D_i V^T x_i
- y_i|^2 with the gates D_i of the region held fixed). The ReLU breaking matrix itself is
lost in the text; it is rebuilt from the surviving P_U, R_U, Pi, N_e, N'_e (reading stated).
"Ours" is always the directional derivative of <H, Sigma> from the Hessian of the loss.
The float64 property uses the exact Hessians of :mod:`numerics.central_flow.models`.
CF-D.avg.across compares, along the hybrid central flow continued through activation changes
(crossings and the Filippov sliding continuation of :mod:`numerics.central_flow.flows`), its
velocity with the paper's averaged-gradient velocity (``flows.averaged_velocity``).
"""

from typing import Any

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.central_flow import laws
from derivations.central_flow import relu as R
from numerics.central_flow import models
from verify.audit import claim, uses
from verify.central_flow import regime_draws

B_READING = (
    "pi_i := D_i V^T x_i, Pi := sum_i pi_i pi_i^T, alpha_i := D_i delta_V^T x_i, "
    "R_alpha := sum_i E[alpha_i alpha_i^T], "
    "B~_ReLU := P_U R_alpha + R_alpha P_U - Pi R_U - R_U Pi + 2(N_e - N'_e) (lost; "
    "the MF matrix with (P_V, R_V, N, N') -> "
    "(Pi, R_alpha, N_e, N'_e)); loss (1/2) sum_i |g(theta, x_i) - y_i|^2"
)
CASES = [  # (n outputs, d inputs, r hidden, N samples, gate pattern N x r)
    (1, 2, 2, 2, ((1, 1), (1, 0))),
    (2, 2, 3, 2, ((1, 0, 1), (1, 1, 0))),
    (1, 3, 3, 3, ((1, 1, 1), (0, 1, 1), (1, 0, 1))),
]
EPS = np.finfo(float).eps


def _zero(M_) -> bool:
    return all(sp.expand(e) == 0 for e in M_)


@claim("CF-D.flow")
def test_diagonal_flow_keeps_network_and_region(audit):
    outs = {c[:4]: R.output_rate(*c) for c in CASES}
    eps = sp.Symbol("epsilon", real=True)
    lam = sp.symbols("lambda0:3", real=True)
    V, X = laws.matrix_symbols("V", 2, 3), laws.matrix_symbols("X", 2, 2)
    Z_flow = X * V * sp.diag(*[sp.exp(-eps * l) for l in lam])  # V(eps) = V e^{-eps A}
    scaled = all(
        sp.simplify(Z_flow[i, j] - (X * V)[i, j] * sp.exp(-eps * lam[j])) == 0 for i in range(2) for j in range(3)
    )
    audit.ours({str(k): "D_Delta_A outputs = 0" if _zero(v) else str(v) for k, v in outs.items()})
    audit.evidence(
        "SymPy: the outputs U D_i V^T x_i have zero derivative along (UA, -VA), A = diag(lambda) symbolic, for every "
        "gate pattern (A commutes with D_i); along the flow V e^{-eps A} each pre-activation z_ij is multiplied by "
        "e^{-eps lambda_j} > 0, so the activation region is kept."
    )
    assert all(_zero(v) for v in outs.values()) and scaled


@claim("CF-D.gram", reading="Pi := sum_i pi_i pi_i^T with pi_i = D_i V^T x_i (the definition of Pi is lost)")
def test_gram_rates(audit):
    res = {c[:4]: R.gram_rates(*c) for c in CASES[:2]}
    audit.ours(
        {str(k): "both differences zero" if all(_zero(x) for x in v.values()) else str(v) for k, v in res.items()}
    )
    audit.evidence(
        "Directional derivatives of U^T U and Pi along (UA, -VA), A diagonal symbolic, minus the stated rates."
    )
    assert all(_zero(x) for v in res.values() for x in v.values())


@claim("CF-D.Btilde", reading=B_READING)
def test_breaking_matrix_symbolic(audit):
    res = {}
    for c, K in zip(CASES[:2], (2, 1)):
        ours, paper = R.drift_identity(*c, K=K)
        res[c[:4]] = (sp.expand(ours - paper), ours != 0)
    audit.ours({f"(n,d,r,N)={k}": f"D<H,Sigma> - tr(A B~_ReLU) = {d}; nonzero: {nz}" for k, (d, nz) in res.items()})
    audit.evidence(
        "ours: derivative along (UA, -VA), A = diag(lambda) symbolic, of sum_k delta_k^T H delta_k with H the SymPy "
        "Hessian of the fixed-region loss (symbolic data X, Y; given gates); paper: tr(A B~_ReLU) from the rebuilt "
        "matrix. Equal after expansion; linear in Sigma, so it holds for every Sigma."
    )
    assert all(d == 0 and nz for d, nz in res.values())


def _B_relu_numeric(U, V, X, dUs, dVs):
    """B~_ReLU (as read) in float64 and the sum of |terms| for rounding."""
    S = (X @ V > 0).astype(float)
    Pi_rows = S * (X @ V)  # rows pi_i
    PU, Pi = U.T @ U, Pi_rows.T @ Pi_rows
    RU = sum(dU.T @ dU for dU in dUs)
    Ralpha = sum((S * (X @ dV)).T @ (S * (X @ dV)) for dV in dVs)
    Ne = sum((S * (X @ dV)).T @ Pi_rows @ dU.T @ U for dU, dV in zip(dUs, dVs))
    Nep = sum(dU.T @ U @ (S * (X @ dV)).T @ Pi_rows for dU, dV in zip(dUs, dVs))
    B = PU @ Ralpha + Ralpha @ PU - Pi @ RU - RU @ Pi + 2 * (Ne - Nep)
    a = np.abs
    Ra = sum(a(S * (X @ dV)).T @ a(S * (X @ dV)) for dV in dVs)
    RUa = sum(a(dU.T) @ a(dU) for dU in dUs)
    Pia = a(Pi_rows).T @ a(Pi_rows)
    Na = sum(a(S * (X @ dV)).T @ a(Pi_rows) @ a(dU.T) @ a(U) * 2 for dU, dV in zip(dUs, dVs))
    mag = a(U.T) @ a(U) @ Ra * 2 + Pia @ RUa * 2 + 2 * Na
    return B, mag


@claim("CF-D.hj", reading=B_READING)
def test_per_neuron_drift_symbolic(audit):
    res = {}
    for c, K in zip(CASES[:2], (2, 1)):
        ours, paper = R.law_rates(*c, K=K)
        res[c[:4]] = [sp.expand(o - p) == 0 and o != 0 for o, p in zip(ours, paper)]
    audit.ours({str(k): f"h_j' + eta B~_jj = 0 and h_j' != 0 for j = 1..r: {v}" for k, v in res.items()})
    audit.evidence(
        "h_j' = -(eta/2) D_{grad h_j} tr(H Sigma) from the SymPy Hessian of the fixed-region loss vs -eta (B~_ReLU)_jj."
    )
    assert all(all(v) for v in res.values())


@claim("CF-D.hj", reading=B_READING)
def test_per_neuron_drift_float64_property(audit):
    worst = [0.0]

    @given(
        n=st.integers(1, 3),
        d=st.integers(1, 4),
        r=st.integers(1, 4),
        N=st.integers(1, 6),
        K=st.integers(1, 3),
        seed=st.integers(0, 2**32 - 1),
    )
    def prop(n, d, r, N, K, seed):
        rng = np.random.default_rng(seed)
        U, V = rng.normal(size=(n, r)), rng.normal(size=(d, r))
        X, Y = rng.normal(size=(N, d)), rng.normal(size=(N, n))
        dUs = [rng.normal(size=(n, r)) for _ in range(K)]
        dVs = [rng.normal(size=(d, r)) for _ in range(K)]
        ds = [np.concatenate([a.ravel(), b.ravel()]) for a, b in zip(dUs, dVs)]
        Sigma = sum(np.outer(x, x) for x in ds)
        theta = models.mf_pack(U, V)
        B, mag = _B_relu_numeric(U, V, X, dUs, dVs)
        D = (n + d) * r
        for j in range(r):
            Uj, Vj = np.zeros_like(U), np.zeros_like(V)
            Uj[:, j], Vj[:, j] = U[:, j], -V[:, j]
            direction = 0.5 * models.mf_pack(Uj, Vj)  # = grad h_j / 4: v_j -> v_j (1 -+ 1/2) keeps every gate
            Hp = models.relu_hessian(theta + direction, X, Y, r)
            Hm = models.relu_hessian(theta - direction, X, Y, r)
            # tr(H Sigma) is quadratic along the step inside the region: the symmetric difference is exact
            ours = -0.5 * 4 * (np.sum(Hp * Sigma) - np.sum(Hm * Sigma)) / 2  # -(eta/2) D_{grad h_j}, eta = 1
            scale = 2 * (np.sum(np.abs(Hp * Sigma)) + np.sum(np.abs(Hm * Sigma))) + mag[j, j]
            # sums of at most ~4 (D + N r)^2 float64 products: rounding <= 8 (D + N r)^2 eps sum|terms|
            bound = 8 * (D + N * r) ** 2 * EPS * scale
            if bound > 0:
                worst[0] = max(worst[0], abs(ours + B[j, j]) / bound)
            assert abs(ours - (-B[j, j])) <= bound  # bound = 0 (all terms vanish) demands exact agreement

    prop()
    audit.ours(worst[0], 3, label="max |h_j' + B~_jj| / tolerance (eta = 1) over the hypothesis examples")
    audit.evidence(
        "Hypothesis over n 1..3, d 1..4, r 1..4, N 1..6 samples, K 1..3 rank-one Sigma terms: h_j' from the float64 "
        "fixed-region Hessian (exact symmetric difference, the step keeps every gate) vs -(B~_ReLU)_jj in float64; "
        "tolerance 8 (D + N r)^2 eps times the sum of |terms|."
    )


@claim("CF-D.proj", reading=B_READING + "; Eq. (23) read as Psi_A' = -eta <A, B_ReLU>")
def test_projection(audit):
    n, d, r, N, gates = CASES[0]
    U, V, X, Y = R.relu_symbols(n, d, r, N)
    deltas = R.samples(n, d, r, 1)
    theta = list(laws.vec(U, V))
    lam = sp.symbols(f"lambda0:{r}", real=True)
    A = sp.diag(*lam)
    Sigma = sum((laws.vec(a, b) * laws.vec(a, b).T for a, b in deltas), sp.zeros(len(theta), len(theta)))
    vel = laws.central_flow_velocity(R.region_loss(U, V, X, Y, gates), theta, Sigma)
    psiA = laws.psi_A(U, V, A)
    direct = sp.expand((laws.gradient(psiA, theta).T * vel)[0])
    Bt = R.breaking_matrix(U, V, X, gates, deltas)
    BR = R.project_diag(Bt)
    paper = sp.expand(-laws.eta * sum(a * b for a, b in zip(A, BR)))
    offdiag = any(Bt[i, j] != 0 for i in range(r) for j in range(r) if i != j)
    audit.ours(
        f"Psi_A' (central flow) + eta <A, P_Diag B~> = {sp.expand(direct - paper)}; "
        f"off-diagonal of B~ nonzero: {offdiag}"
    )
    audit.evidence(
        "theta' = -eta grad L - (eta/2) grad tr(H Sigma) for the fixed-region loss (n=1, d=2, r=2, N=2, one sample); "
        "<grad Psi_A, theta'> for A = diag(lambda) equals -eta <A, diag part of B~_ReLU>; B~_ReLU has nonzero "
        "off-diagonal entries, which the diagonal test space does not see."
    )
    assert sp.expand(direct - paper) == 0 and offdiag


@claim("CF-D.surv", reading=B_READING)
def test_surviving_combinations(audit):
    n, d, r, N = 1, 3, 3, 3
    gates = CASES[2][4]
    U, V, X, Y = R.relu_symbols(n, d, r, N)
    theta = list(laws.vec(U, V))
    rng = np.random.default_rng(11)

    def rat(rows, cols):
        return sp.Matrix(rows, cols, [sp.Rational(int(k), 5) for k in rng.integers(-9, 10, size=rows * cols)])

    data = {**dict(zip(X, rat(N, d))), **dict(zip(Y, rat(N, n)))}
    deltas = [(rat(n, r), rat(d, r)) for _ in range(2)]
    point = dict(zip(theta, rat(len(theta), 1)))
    pair = laws.pairing(laws.hessian(R.region_loss(U, V, X, Y, gates).subs(data), theta), deltas)
    grads = [laws.gradient((U[:, j].T * U[:, j])[0] - (V[:, j].T * V[:, j])[0], theta) for j in range(r)]
    # b_j from the Hessian: h_j' = -(eta/2) D_{grad h_j} <H, Sigma> = -eta b_j
    b = sp.Matrix([[sp.Rational(1, 2) * laws.directional(pair, theta, g).subs(point) for g in grads]])
    perp = b.nullspace()
    drifts = []
    for c in perp:
        g = sum((ci * gi for ci, gi in zip(c, grads)), sp.zeros(len(theta), 1))
        drifts.append(laws.directional(pair, theta, g).subs(point))
    along = laws.directional(pair, theta, sum((bi * gi for bi, gi in zip(b, grads)), sp.zeros(len(theta), 1))).subs(
        point
    )
    audit.ours(
        f"b = {list(b)}; dim b-perp = {len(perp)}; D_(grad sum c_j h_j) <H, Sigma> for c in b-perp: {drifts}; the "
        f"same for c = b: {along} (= 2 |b|^2; its drift -(eta/2) x that = -eta |b|^2)"
    )
    audit.evidence(
        "Exact rational data, weights and two oscillation samples (n=1, d=3, r=3, N=3): b_j = (1/2) D_(grad h_j) "
        "<H, Sigma> from the Hessian, so h_j' = -(eta/2) D_(grad h_j) <H, Sigma> = -eta b_j; b != 0, its orthogonal "
        "complement has dimension r - 1 = 2, and for c in it the directional derivative D_(grad sum c_j h_j) "
        "<H, Sigma> = 2 c . b is zero exactly (the combinations survive: zero drift), while for c = b it is 2 |b|^2, "
        "so the combination sum b_j h_j drifts at -(eta/2) 2 |b|^2 = -eta |b|^2 != 0."
    )
    assert any(x != 0 for x in b) and len(perp) == r - 1
    assert all(x == 0 for x in drifts) and along == 2 * sum(x**2 for x in b)


@claim("CF-D.gate")
def test_fixed_gate_condition(audit):
    rng = np.random.default_rng(5)
    agree, seen = 0, {True: 0, False: 0}
    trials = 300
    for _ in range(trials):
        d, r, N = 2, 3, 4
        V = sp.Matrix(d, r, [sp.Rational(int(k), 3) for k in rng.integers(-6, 7, size=d * r)])
        X = sp.Matrix(N, d, [sp.Rational(int(k), 2) for k in rng.integers(-5, 6, size=N * d)])
        qV = sp.Matrix(d, r, [sp.Rational(int(k), 4) for k in rng.integers(-6, 7, size=d * r)])
        s = sp.Rational(int(rng.integers(1, 7)), 4)  # sqrt(sigma^2), rational
        Z = X * V
        if any(z == 0 for z in Z):
            continue
        ratio = R.fixed_gate_ratio(V, X, qV, s**2)
        g0 = R.gates_at(V, X)
        same = R.gates_at(V + s * qV, X) == g0 and R.gates_at(V - s * qV, X) == g0
        agree += (ratio > 1) == same
        seen[bool(ratio > 1)] += 1
    total = seen[True] + seen[False]
    audit.ours(f"{agree} of {total} exact random configurations agree (ratio > 1: {seen[True]}, <= 1: {seen[False]})")
    audit.evidence(
        "Exact rational V, X, q_V and sqrt(sigma^2): the fixed-gate ratio min |z_ij| / |sqrt(sigma^2) q_vj^T x_i| "
        "exceeds 1 exactly when the gate patterns at theta + delta and theta - delta both equal the one at theta "
        "(both outcomes occur)."
    )
    assert agree == total and seen[True] > 0 and seen[False] > 0


@claim(
    "CF-D.avg",
    reading="'reduces to the central flow inside one activation region' read as: inside a region, with a symmetric "
    "oscillation law, E[grad L(w + delta)] = grad L + (1/2) grad <H, Sigma> exactly (the losses are polynomials of "
    "degree <= 4); a zero-mean asymmetric law adds the third-moment term E[grad (D_delta^3 L)]/6; the across-boundary "
    "part of the paper's statement is CF-D.avg.across, not this check",
)
def test_averaged_gradient(audit):
    n, d, r, N, gates = CASES[0]
    U, V, X, Y = R.relu_symbols(n, d, r, N)
    theta = list(laws.vec(U, V))
    L = R.region_loss(U, V, X, Y, gates)
    dvec = sp.Matrix(sp.symbols(f"q0:{len(theta)}", real=True))
    sym_gap = R.averaged_gradient_gap(L, theta, [dvec, -dvec])
    pts = [sp.Matrix([1, 0, 2, -1, 0, 1]), sp.Matrix([-2, 1, 0, 1, 1, -1]), sp.Matrix([1, -1, -2, 0, -1, 0])]
    asym_gap = R.averaged_gradient_gap(L, theta, pts)
    third = sp.zeros(len(theta), 1)
    for p in pts:
        D3 = L
        for _ in range(3):
            D3 = laws.directional(D3, theta, p)
        third += laws.gradient(D3, theta) / 6 / len(pts)
    audit.ours(
        f"symmetric law: gap = {'0' if _zero(sym_gap) else sym_gap.T}; asymmetric 3-point law: "
        "gap - third-moment term = "
        f"{'0' if _zero(asym_gap - third) else 'NONZERO'} (gap itself nonzero: {not _zero(asym_gap)})"
    )
    audit.evidence(
        "Fixed-region ReLU loss (n=1, d=2, r=2, N=2): SymPy average of grad L over {+q, -q} with symbolic q equals "
        "grad L + (1/2) grad tr(H q q^T); for a zero-mean three-point law the difference is the third-moment term. "
        "This is the inside of one activation region only (an exact identity there); whether the averaged flow "
        "continues the central flow across activation boundaries is CF-D.avg.across (and, against GD, "
        "CF-1.track-relu-across)."
    )
    assert _zero(sym_gap) and _zero(asym_gap - third) and not _zero(asym_gap)


# --- CF-D.avg, across activation boundaries: the averaged flow along the continued central flow ---------------

ACROSS_DRAWS = 6  # the first ReLU draws (Philox order) whose continued central flow meets a boundary after contact
ACROSS_T = 8.0  # horizon of those runs (contacts come by t = 4 in our reading; sampled every 0.05)
ACROSS_WINDOW = (0.1, 1.5)  # the window around each draw's first boundary event: from 0.1 before to 1.5 after
ACROSS_FLOOR = 0.05  # departure the check must see across boundaries: 5% of |theta'_CF| (rounding is ~1e-15)
ACROSS_READING = (
    "'continues the central flow across activation boundaries' read as: the averaged velocity "
    "-eta E[grad L(theta + delta)], delta with the central flow's covariance Sigma, is defined at every state "
    "of the continued central flow (through crossings and on sliding sets) and equals the central-flow velocity "
    "wherever delta's support stays in theta's activation region; where it straddles a boundary the two differ "
    "by exactly the gate-mismatch term -eta E[grad L(theta + delta) - grad L_G(theta + delta)] (G: theta's region). "
    "delta's law: the two-point law +-sqrt(s) q of GD's period-two oscillation (independent signs per "
    "direction on a sliding set, Sigma = sum_b P_b q_b q_b^T there); not read as: equal to a local-Hessian "
    "continuation (Figure 4's piecewise one, or our Filippov sliding one) across a boundary"
)


def _across_runs():
    from numerics.central_flow import experiments as E
    from numerics.central_flow import flows as F
    from numerics.central_flow import spectra as SPEC

    runs = []
    for i in range(40):
        model, th, eta = E.relu_setting(E.SEED, i)
        if SPEC.sharpness(model, th)[0] >= 2 / eta:
            continue  # no central flow from above the edge
        traj = F.hybrid_flow(model, th, eta, ACROSS_T, np.linspace(0, ACROSS_T, int(ACROSS_T / 0.05) + 1))
        if traj.contact is None:
            continue
        first = next((e for e in traj.events if e["kind"] in ("cross", "slide") and e["t"] > traj.contact), None)
        if first is not None:
            runs.append((i, model, eta, traj, first))
        if len(runs) == ACROSS_DRAWS:
            return runs
    raise AssertionError(f"fewer than {ACROSS_DRAWS} ReLU draws meet a boundary after contact among the first 40")


def _cf_state(model, eta, x, gates, mask):
    """(theta'_CF, factor of Sigma (D x m), sliding pairs) of the continued central flow at a sample."""
    from numerics.central_flow import flows as F
    from numerics.central_flow import spectra as SPEC

    if mask.any():
        pairs = [tuple(int(a) for a in p) for p in np.argwhere(mask)]
        st = F.sliding_velocity(model, x, eta, gates, pairs)
        w, Q = np.linalg.eigh(st["Sigma"])
        keep = w > 1e-12 * w[-1]
        return st["velocity"], Q[:, keep] * np.sqrt(w[keep]), pairs
    out = SPEC.central_flow_velocity(model, x, eta)
    return out["velocity"], out["deltas"], []


@claim(
    "CF-D.avg.across",
    reading=ACROSS_READING,
    by_construction="the whole check: (1) the identity part: the mismatch is defined as -eta mean(grad L - grad L_G) "
    "over delta's points and theta'_CF = -eta mean grad L_G is CF-D.avg's identity, so theta'_avg - theta'_CF - "
    "mismatch = 0 by definition (the check measures only rounding there); (2) 'finite': a mean of finitely many "
    "gradients of a polynomial loss is finite wherever it is evaluated; (3) the departure across boundaries is "
    "between two continuations of ours (the averaged flow and our Filippov continuation), a fact about our "
    "construction, not a paper statement. The across-boundary claim itself (GD against the averaged flow after an "
    "activation change at the edge) is tested by CF-1.track-relu-across",
)
def test_averaged_flow_across_boundaries(audit):
    import itertools

    from numerics.central_flow import flows as F

    runs = _across_runs()
    worst_identity, n_inside, n_region, rows = 0.0, 0, 0, []
    for i, model, eta, traj, first in runs:
        n, d, r = model.shape
        X = model.data["X"]
        across, slide_rate, t_win, dh_cf, dh_avg = [], [], [], [], []
        lo, hi = first["t"] - ACROSS_WINDOW[0], first["t"] + ACROSS_WINDOW[1]
        for t, x, k, gates, mask in zip(traj.t, traj.theta, traj.k, traj.gates, traj.sliding):
            if k != 1 or (not mask.any() and not np.array_equal(model.gates(x), gates)):
                continue  # gradient-flow samples; a sample within rounding of a crossing
            v, D, pairs = _cf_state(model, eta, x, gates, mask)
            points = [x + D @ np.array(e) for e in itertools.product((1.0, -1.0), repeat=D.shape[1])]
            v_avg = F.averaged_velocity(model, x, eta, D)  # the two-point law: the mean over these points
            assert np.all(np.isfinite(v_avg))
            if not pairs:
                # the region loss is quartic and the law symmetric: -eta mean grad L_G(points) is theta'_CF exactly,
                # so theta'_avg - theta'_CF is the gate-mismatch term (zero when every point stays in the region)
                mism = -eta * np.mean([model.grad(p) - model.grad(p, gates) for p in points], axis=0)
                terms = eta * np.mean([np.abs(model.grad(p)) + np.abs(model.grad(p, gates)) for p in points], axis=0)
                # sums of O(N r D) products: 256 eps per |term| bounds the rounding of both sides
                gap, pos = np.abs(v_avg - v - mism), terms > 0
                assert np.all(gap[~pos] == 0)  # components with no terms (a dead neuron's) must agree exactly
                worst_identity = max(worst_identity, float(np.max(gap[pos] / (256 * EPS * terms[pos]))))
                n_region += 1
                inside = all(np.array_equal(model.gates(p), gates) for p in points)
                n_inside += inside
                if not inside:
                    across.append(np.linalg.norm(v_avg - v) / np.linalg.norm(v))
            else:
                across.append(np.linalg.norm(v_avg - v) / np.linalg.norm(v))
                rate = max(abs(X[p[0]] @ v_avg[n * r :].reshape(d, r)[:, p[1]]) for p in pairs)
                slide_rate.append(rate / np.linalg.norm(v_avg))
            if lo <= t <= hi:
                t_win.append(t)
                dh_cf.append(_h_rate(x, v, model))
                dh_avg.append(_h_rate(x, v_avg, model))
        int_cf = np.trapezoid(np.array(dh_cf), np.array(t_win), axis=0)
        int_avg = np.trapezoid(np.array(dh_avg), np.array(t_win), axis=0)
        rows.append(
            {
                "draw": i,
                "event": f"{first['kind']} {first['pair']} at t = {first['t']:.2f}",
                "across": float(np.median(across)),
                "slide_rate": float(np.median(slide_rate)) if slide_rate else None,
                "dh_gap": float(np.max(np.abs(int_avg - int_cf)) / np.max(np.abs(int_cf))),
                "n_across": len(across),
            }
        )
    audit.ours(
        worst_identity, 3, label="max |theta'_avg - theta'_CF - mismatch| / (256 eps sum|terms|), region samples"
    )
    audit.ours([r["across"] for r in rows], 3, label="median |theta'_avg - theta'_CF| / |theta'_CF| across, per draw")
    audit.ours([r["slide_rate"] for r in rows], 3, label="median |z_ij' of theta'_avg| / |theta'_avg| on sliding sets")
    audit.ours([r["dh_gap"] for r in rows], 3, label="first-order Delta h_j gap over the window / max |Delta h_j^CF|")
    audit.tolerance(256 * EPS, "rounding of sums of O(N r D) float64 products, per |term| (the identity is exact)")
    audit.evidence(
        f"Draws {[r['draw'] for r in rows]} (the first {ACROSS_DRAWS} whose continued hybrid CF meets a boundary after "
        f"contact; first events: {'; '.join(r['event'] for r in rows)}), every k = 1 sample to t = {ACROSS_T:g} "
        f"(0.05 apart). At {n_region} samples off a sliding set the averaged velocity (two-point law, Sigma the CF's) "
        "minus the CF velocity equals the gate-mismatch term to rounding, which vanishes identically at the "
        f"{n_inside} samples whose support stays in the region: the averaged flow continues the CF, exactly, up to "
        "the boundary. Across boundaries it departs from our continuation by a median "
        f"{min(r['across'] for r in rows):.2f}-{max(r['across'] for r in rows):.2f} of |theta'_CF| per draw "
        f"({sum(r['n_across'] for r in rows)} samples) and moves the sliding pre-activations that the Filippov "
        "continuation holds at 0; over the window (0.1 before to 1.5 after the first event) the first-order change "
        "of the laws, int <grad h_j, theta'> dt along the CF path, differs by "
        f"{min(r['dh_gap'] for r in rows):.2f}-{max(r['dh_gap'] for r in rows):.2f} of the CF's. The paper's "
        "averaged flow is a different continuation from Figure 4's piecewise (and our Filippov) one; the paper "
        "calls that one heuristic and claims no equality, so the departure is our construction's, not a finding "
        "against the paper. Nothing here tests a paper statement (by construction: identity by definition, "
        "'finite' trivially, the departure between two constructions of ours); the paper's 'across boundaries' "
        "statement is tested by CF-1.track-relu-across (GD's midpoints against the averaged flow across an "
        "activation-boundary event at the edge; inconclusive: no power against the frozen-region flow). So this "
        "claim's verdict is inconclusive (power 0 below): it could not have told."
    )
    audit.power(
        0.0,
        alternative="the paper's statement fails: the averaged-gradient flow does not describe GD's time-averaged "
        "trajectory after an activation boundary is crossed (GD follows another continuation, e.g. the central "
        "flow frozen in the old region)",
        method="by construction: the check compares two constructions of ours (the identity holds by definition, "
        "'finite' trivially) and never looks at GD, so it passes whatever GD does; the statement's own test, "
        "CF-1.track-relu-across, has power 0 too (the boundary event GD meets at the edge is too weak to part the "
        "averaged flow from the frozen one or from gradient flow)",
    )
    assert worst_identity <= 1.0 and n_inside > 0 and n_region > 0
    assert all(r["across"] >= ACROSS_FLOOR for r in rows)  # excludes: the two continuations agree across boundaries
    assert all(r["slide_rate"] is None or r["slide_rate"] >= 0.01 for r in rows)


def _h_rate(theta, vel, model):
    """<grad h_j, theta'> for the per-neuron laws h_j = |u_j|^2 - |v_j|^2."""
    n, d, r = model.shape
    U, V = theta[: n * r].reshape(n, r), theta[n * r :].reshape(d, r)
    dU, dV = vel[: n * r].reshape(n, r), vel[n * r :].reshape(d, r)
    return 2 * np.sum(U * dU, axis=0) - 2 * np.sum(V * dV, axis=0)


# --- CF-D.jump: the Hessian across an activation boundary ------------------------------------------------

JUMP_DRAWS = (0, 1, 2)  # ReLU draws of experiments.relu_setting (Philox (SEED, i)); deterministic, no flow needed
JUMP_EPS = (1e-3, 1e-5, 1e-7)  # distances of the two evaluation points from the boundary z_ij = 0
FD_STEP = 1e-8  # central-difference step of the gradient route (well inside eps = 1e-5 of the boundary)


def _fd_hessian(model, theta, h=FD_STEP):
    """Hessian by central differences of the model's gradient (an independent route to relu_hessian)."""
    D = theta.size
    cols = [(model.grad(theta + h * e) - model.grad(theta - h * e)) / (2 * h) for e in np.eye(D)]
    H = np.array(cols).T
    return (H + H.T) / 2


@claim(
    "CF-D.jump",
    reading="'changes discontinuously' read as: the one-sided limits of the Hessian at a boundary point z_ij = 0 "
    "differ (a jump that does not shrink with the distance to the boundary), at a boundary point of an audit ReLU "
    "draw's data and weights (v_j projected onto x_i^perp, the pair nearest its boundary at the draw's start)",
)
def test_hessian_jump_across_boundary(audit):
    from numerics.central_flow import experiments as E

    rows: list[dict[str, Any]] = []
    for i in JUMP_DRAWS:
        model, th, _ = E.relu_setting(E.SEED, i)
        n, d, r = model.shape
        X = model.data["X"]
        assert model.preacts is not None
        Z = model.preacts(th)
        a, j = np.unravel_index(np.argmin(np.abs(Z)), Z.shape)
        V = th[n * r :].reshape(d, r).copy()
        V[:, j] -= (X[a] @ V[:, j]) / (X[a] @ X[a]) * X[a]  # z_aj = 0 (to rounding)
        star = np.concatenate([th[: n * r], V.ravel()])
        direc = np.zeros(d * r)
        direc.reshape(d, r)[:, j] = X[a] / np.linalg.norm(X[a])  # moves z_aj at unit speed
        direc = np.concatenate([np.zeros(n * r), direc])
        jumps, smooth, fd_gap, lam = [], [], [], None
        for eps in JUMP_EPS:
            plus, minus = star + eps * direc, star - eps * direc
            Gp, Gm = model.gates(plus), model.gates(minus)
            changed = np.argwhere(Gp != Gm)
            assert changed.tolist() == [[a, j]]  # exactly one gate flips between the two points
            Hp, Hm = model.hessian(plus), model.hessian(minus)
            jumps.append(float(np.linalg.norm(Hp - Hm)))
            smooth.append(float(np.linalg.norm(model.hessian(plus, Gp) - model.hessian(minus, Gp))))
            if eps == JUMP_EPS[1]:
                fd = _fd_hessian(model, plus) - _fd_hessian(model, minus)
                fd_gap.append(float(np.linalg.norm(fd - (Hp - Hm)) / np.linalg.norm(Hp - Hm)))
                lam = (float(np.linalg.eigvalsh(Hm)[-1]), float(np.linalg.eigvalsh(Hp)[-1]))
        uj2 = float(np.sum(th[: n * r].reshape(n, r)[:, j] ** 2))
        rows.append(
            {
                "draw": i,
                "pair": (int(a), int(j)),
                "jump": jumps,
                "smooth": smooth,
                "fd": fd_gap[0],
                "lam": lam,
                "uj2": uj2,
            }
        )
    audit.ours([r["jump"] for r in rows], 4, label=f"|H(z = +eps) - H(z = -eps)|_F at eps = {list(JUMP_EPS)}, per draw")
    audit.ours([r["smooth"] for r in rows], 3, label="same-region change |H_G(+eps) - H_G(-eps)|_F (continuous part)")
    audit.ours([r["fd"] for r in rows], 3, label="finite-difference route vs exact Hessians, relative, eps = 1e-5")
    audit.ours([r["lam"] for r in rows], 6, label="lambda_max on the two sides (eps = 1e-5)")
    audit.evidence(
        f"Draws {list(JUMP_DRAWS)}, boundary pairs (i, j) = {[r['pair'] for r in rows]}: exactly one gate flips "
        "between the points at distance +-eps; the Hessian difference stays "
        f"{min(min(r['jump']) for r in rows):.3f}-{max(max(r['jump']) for r in rows):.3f} in Frobenius norm as eps "
        "falls from 1e-3 to 1e-7 (relative change between eps = 1e-5 and 1e-7 at most "
        f"{max(abs(r['jump'][1] - r['jump'][2]) / r['jump'][2] for r in rows):.1e}: it converges to a nonzero "
        "limit), while the same region's Hessian changes by "
        f"{max(r['smooth'][-1] for r in rows):.1e} at eps = 1e-7 (O(eps)): the one-sided limits differ. Independently, "
        "Hessians by central differences of the gradient (step 1e-8) give the same jump to "
        f"{max(r['fd'] for r in rows):.1e} relative (tolerance 1e-5: O(h^2) truncation plus eps/h rounding). The "
        "sharpness itself jumps (lambda_max on the two sides in the values): the constraint lambda_max = 2/eta of "
        "the central flow is discontinuous there."
    )
    for row in rows:
        assert min(row["jump"]) > 0.1 * row["uj2"]  # the (v_j, v_j) block alone jumps by |u_j|^2 x_i x_i^T
        # the jump converges as eps -> 0 (its O(eps) part: ~1e-2 at 1e-3), it does not shrink
        assert abs(row["jump"][1] - row["jump"][2]) < 1e-3 * row["jump"][2]
        assert row["smooth"][-1] < 1e-5 * row["jump"][-1]  # the continuous part does (O(eps))
        assert row["fd"] < 1e-5


# --- CF-D.fig3-rank1: Figure 3's evaluation point is an active rank-one EOS point -----------------------------------

RANK1_EDGE = 1e-9  # |lambda_1 eta/2 - 1| at the contact: the event is located to rounding (solve_ivp's root finder)
RANK1_GAP = 1e-6  # lambda_2 eta/2 < 1 - RANK1_GAP: one critical direction, far above eigh's rounding (~1e-15)
RANK1_SAME = 1e-9  # the recomputed contact's fixed-gate ratio against the stored record's, relative
RANK1_ALT = 0.25  # the alternative: the evaluated point is not rank-one (or not active) in a quarter of the draws


def _relu_setting_contacts(results) -> list[dict]:
    """The contact states of central_flow.relu's draws (the points of CF-D.fig3-match), recomputed."""
    from numerics.central_flow import experiments as E

    perturb = results.session.sizes("central_flow").perturb
    out = []
    for rec in results["central_flow.relu"]:
        got = E.relu_contact(rec["draw"], E.SETTINGS["relu"]["T"], perturb)  # as relu_run computes it
        assert got is not None, f"draw {rec['draw']} of central_flow.relu has no contact when recomputed"
        model, _, eta, cf = got
        _, thc = E._contact_state(cf)
        out.append({"draw": rec["draw"], "model": model, "eta": eta, "theta": thc, "stored": rec["ratio"]})
    return out


def _eos_setting_contacts(audit, results) -> list[dict]:
    """The contact states of central_flow.eos_track's ReLU draws (the points of CF-D.fig3-gate), recomputed.

    As experiments.eos_track's approach pair: GD from theta_0 to its first reaching of 2/eta, the hybrid central
    flow from the last midpoint below the edge before it; its first EOS contact is the point.
    """
    from numerics.central_flow import eos as EOS
    from numerics.central_flow import experiments as E
    from numerics.central_flow import flows as F
    from numerics.central_flow import spectra as SPEC
    from numerics.perturb import perturb_relative

    z = results.session.sizes("central_flow")
    runs = [r for r in results["central_flow.eos_track"] if r["model"] == "relu"]
    out = []
    for rec in regime_draws(audit, runs, track=False):
        if rec.get("gate_ratio") is None:
            continue  # the hybrid flow never reached the edge in the compared steps: no point to evaluate
        model, th, eta = E.eos_problem("relu", rec["eta"], rec["c"], rec["scale"], E.SEED, rec["draw"])
        th = perturb_relative(th, z.perturb, "relu_eos_setting", E.SEED, rec["draw"])
        probe = F.gradient_descent(model, th, eta, 3 * E.EOS_WINDOW)
        first = int(np.nonzero(EOS.sharpness_series(model, probe) * eta / 2 >= 1)[0][0])
        mids = F.midpoints(probe)
        below = [j for j in range(first) if SPEC.sharpness(model, mids[j])[0] < 2 / eta]
        start, t0 = (th, 0.0) if not below else (mids[below[-1]], below[-1] + 0.5)
        kc = min(first + E.EOS_WINDOW + 2, first + z.eos_track_steps)
        cf = F.hybrid_flow(model, start, eta, float(kc - 0.5 - t0), np.arange(first, kc) + 0.5 - t0)
        _, thc = E._contact_state(cf)
        out.append({"draw": rec["draw"], "model": model, "eta": eta, "theta": thc, "stored": rec["gate_ratio"]})
    return out


@claim(
    "CF-D.fig3-rank1",
    reading="'an active rank-one EOS point' read as: lambda_1 = 2/eta (to 1e-9 relative), the stability constraint "
    "active (sigma^2 > 0: the central flow holds lambda_1 at the edge against gradient flow raising it) and one "
    f"critical direction only, lambda_2 eta/2 < 1 - {RANK1_GAP:g}; the evaluated point read as the hybrid central "
    "flow's first EOS contact, in both settings of Figure 3's checks: the old reconstructed one (central_flow.relu, "
    "the points of CF-D.fig3-match) and the EoS one (central_flow.eos_track, the points of CF-D.fig3-gate)",
)
@uses("central_flow.relu", "central_flow.eos_track")
def test_fig3_rank_one(audit, results):
    from numerics.central_flow import experiments as E
    from numerics.central_flow import spectra as SPEC

    settings = {"old": _relu_setting_contacts(results), "EoS": _eos_setting_contacts(audit, results)}
    rows: dict[str, list[dict]] = {}
    for name, points in settings.items():
        rows[name] = []
        for p in points:
            lam = np.linalg.eigvalsh(p["model"].hessian(p["theta"]))[::-1] * p["eta"] / 2
            cf = SPEC.central_flow_velocity(p["model"], p["theta"], p["eta"])
            ratio = E._relu_point(p["model"], p["theta"], p["eta"])["ratio"]
            rows[name].append(
                {
                    "draw": p["draw"],
                    "lam": lam[:3],
                    "s": float(cf["sigma2"][0]),
                    "same": abs(ratio - p["stored"]) / max(1.0, abs(p["stored"])),
                }
            )
    for name, rs in rows.items():
        audit.ours([r["draw"] for r in rs], label=f"{name} setting: draws (contact state recomputed)")
        audit.ours([float(r["lam"][0] - 1) for r in rs], 3, label=f"{name} setting: lambda_1 eta/2 - 1 at the point")
        audit.ours([float(r["lam"][1]) for r in rs], 4, label=f"{name} setting: lambda_2 eta/2 at the point")
        audit.ours([r["s"] for r in rs], 4, label=f"{name} setting: sigma^2 (k = 1) at the point")
        audit.ours(sum(r["lam"][1] < 0.95 for r in rs), label=f"{name} setting: draws with lambda_2 eta/2 < 0.95")
        n = len(rs)
        audit.power(
            1 - (1 - RANK1_ALT) ** n,
            alternative="the evaluated point is not an active rank-one EOS point in a quarter of the draws (a "
            "statement about the figure's three points should hold for almost every start of the setting)",
            method=f"exact: P(at least one of {n} independent draws fails) = 1 - 0.75^{n}",
            label=f"{name} setting",
        )
    audit.tolerance(RANK1_EDGE, "lambda_1 at the contact: the event is located by solve_ivp's root finder to a few "
                    "eps in t, and eigh rounds at ~1e-15 relative", label="lambda_1")  # fmt: skip
    audit.tolerance(RANK1_GAP, "lambda_2's margin below the edge: 1e9 x eigh's rounding, so 'below' is not a "
                    "rounding artefact", label="lambda_2")  # fmt: skip
    audit.tolerance(RANK1_SAME, "the recomputed contact against the stored record's fixed-gate ratio: the same "
                    "computation (DOP853 at rtol 1e-12 over ~1e3 steps), so another machine's roundings",
                    label="same point")  # fmt: skip
    every = [r for rs in rows.values() for r in rs]
    audit.evidence(
        "The contact state of each draw is recomputed as its experiment computes it (the record keeps only the "
        "fixed-gate ratio there, which the recomputation reproduces to "
        f"{max(r['same'] for r in every):.1e} relative), and the exact Hessian's spectrum taken there. Old "
        f"setting: lambda_2 eta/2 = {min(r['lam'][1] for r in rows['old']):.3f}-"
        f"{max(r['lam'][1] for r in rows['old']):.3f} (below Figure 2's 0.95 margin in "
        f"{sum(r['lam'][1] < 0.95 for r in rows['old'])} of {len(rows['old'])}); EoS setting: "
        f"{min(r['lam'][1] for r in rows['EoS']):.3f}-{max(r['lam'][1] for r in rows['EoS']):.3f}. Every point has "
        f"lambda_1 eta/2 = 1 to {max(abs(r['lam'][0] - 1) for r in every):.1e} and sigma^2 = "
        f"{min(r['s'] for r in every):.4f}-{max(r['s'] for r in every):.4f} > 0: one critical direction, the "
        "constraint active. The figure's own 'rank-one central-flow approximation' margin is stated for Figure 2 "
        "only; here 'rank-one' is read strictly (lambda_2 below the edge), and the 0.95 margin is reported."
    )
    assert all(rows.values()), "a setting has no contact point to evaluate"
    assert all(r["same"] <= RANK1_SAME for r in every)  # the recomputed point is the stored one
    assert all(abs(r["lam"][0] - 1) <= RANK1_EDGE for r in every)
    assert all(r["lam"][1] < 1 - RANK1_GAP for r in every)
    assert all(r["s"] > 0 for r in every)
