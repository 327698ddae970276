"""The averaged central flow: the paper's averaged-gradient flow with a self-consistent oscillation (ReLU model).

Appendix D ('Across activation boundaries') continues the central flow by the averaged-gradient
flow w' = -eta E[grad L(w + delta)], E[delta] = 0, but leaves the law of delta open along the run.
Here delta = xi sqrt(s) q, xi ~ N(0, 1) (GD's rank-one oscillation with a Gaussian amplitude), and
(s, q) are fixed by the central-flow condition in expectation form:

- the *expected Hessian* H^(w) = sum_b p_b H_b(w): each activation region b's Hessian at the centre
  w, weighted by the probability p_b that the oscillation point w + delta lies in b (Gaussian
  masses between the gate changes on the line, as in :func:`flows._gauss_line_mean`); it is
  continuous in w across boundaries, where the local Hessian jumps (CF-D.jump);
- q is its top unit eigenvector (a fixed point: the weights depend on q), lambda^ = q^T H^ q its
  sharpness;
- s >= 0 solves the complementarity problem of the stability constraint in rate form,
  r(s) = c^ . v(s) + RELAX (lambda^ - 2/eta) <= 0, s r(s) = 0, with v(s) = -eta E[grad L(w + delta)]
  the averaged velocity (exact piecewise Gaussian quadrature) and c^ = grad_w lambda^ with the law
  (s, q) frozen: sum_b p_b grad(q^T H_b q) + sum_b (q^T H_b q) grad p_b (the second sum moves weight
  between the regions as the centre moves: it carries the Hessian's jump). c^ . v is d/dt lambda^ at
  a frozen law; the relaxation term (Baumgarte stabilisation, rate RELAX per GD step) pulls lambda^
  back to 2/eta where the continuation starts off it: on a boundary lambda^ averages the two sides'
  Hessians and differs from the one-sided sharpness the hybrid flow held. On the edge it vanishes.

Inside one activation region (the law's mass in the other regions below float64 rounding) p_b = 1
for w's region, H^ = H, c^ = grad lambda and v(s) = -eta (grad L + (s/2) c) (a quartic loss and a
symmetric law): on the edge (s, q) are the central flow's and so is the velocity (CF-D.avg).
Across a boundary it averages the regions; no sliding is needed, and the velocity is continuous in
w. Used by :func:`numerics.central_flow.experiments.relu_run` from the point where the hybrid
flow's piecewise continuation stops (:attr:`flows.Trajectory.stop_at`).

The fixed point as a problem: with T(s, q) the top unit eigenvector of H^(s, q) and r(s, q) the rate
above, find q = T(s, q), |q| = 1 and s >= 0, w = -r(s, q) >= 0, s w = 0: a mixed nonlinear
complementarity problem (q free, s complementary). Inside one region it is the 1 x 1 linear
complementarity problem LCP(eta |c|^2 / 2, eta c . grad L - RELAX (lambda - 2/eta)), unique for every
right-hand side iff c != 0 (SymPy: derivations.central_flow.averaged_lcp). Across boundaries it reduces
to the scalar NCP of g(s) = -r(s, q(s)), unique where q(s) is and g is strictly increasing; no closed
form shows that, and :mod:`numerics.central_flow.acf_unique` certifies it at given states (the
linearisation's 1 x 1 P-matrix test, a scan of g, random starts).

What cannot be derived: that the fixed point (s, q) exists and is globally unique along a run (it is
solved on every call, by Anderson-accelerated sweeps with a semismooth Newton fallback on the full
system, a cold restart and a damped last resort, and checked to FIXED_TOL, else ArithmeticError;
uniqueness is certified at sampled states only), the relaxation rate (a choice: any rate > 0 gives
the same flow on the edge), and that GD's time average follows this flow past a boundary. This is a
construction of ours (a reading of the paper's averaged flow), labelled so in the audit
(CF-D.fig4-piecewise).

>>> from numerics.central_flow.models import relu_model
>>> m = relu_model(np.array([[1.0, 0.2], [0.3, 1.0], [1.0, -1.0]]), np.array([[1.0], [0.4], [0.2]]), 1)
>>> th = np.array([1.4, 0.6, 0.6])  # z_3 = 0: on the boundary of sample 3
>>> eta = 2.0 / float(np.linalg.eigvalsh(m.hessian(th, m.gates(th)))[-1])
>>> out = averaged_cf_velocity(m, th, eta)
>>> bool(out["residual"] <= FIXED_TOL and out["s"] >= 0 and np.all(np.isfinite(out["velocity"])))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special
from scipy.integrate import solve_ivp

from numerics.central_flow import flows as F
from numerics.central_flow.models import Model, _positive, _theta
from numerics.validation import real

__all__ = ["line_weights", "expected_hessian", "averaged_cf_velocity", "averaged_central_flow", "FIXED_TOL"]

RTOL = 1e-7  # the integrator's tolerances: 1e-4 below the tolerances the audit compares with (>= 1e-3)
ATOL = 1e-9
FIXED_TOL = 1e-8  # fixed point (s, q): |q - q^(q)| and the relative rate |r(s)| / scale accepted below this
RELAX = 1.0  # gamma: the expected sharpness relaxes to 2/eta as exp(-gamma t) where it is off the edge
FIXED_ITER = 40  # accelerated fixed-point sweeps before the Newton fallback
NEWTON_ITER = 30  # semismooth Newton steps of the fallback (quadratic near the solution)
NEWTON_FD = 1e-7  # its forward-difference Jacobian's step (q: absolute, |q| = 1; s: relative): error ~ h + eps / h
NEWTON_HALVE = 12  # step halvings of its backtracking before it gives up (no decrease of the residual)
NEWTON_STALL = 3  # steps in a row that do not halve the residual before it gives up (no root nearby)
DAMPED_ITER = 400  # damped sweeps of the last fallback (a linear rate: 0.8 per sweep seen)
ANDERSON = 3  # depth of the Anderson acceleration of the fixed-point sweeps
PRUNE = 1e-18  # pieces with mass and mass gradient below this are left out of the sums (below float64 rounding)


def _check_relu(model: Model) -> None:
    if model.preacts is None:
        raise ValueError(f"model must be a ReLU model (with pre-activations); got {model.name!r}")


def line_weights(model: Model, theta: np.ndarray, d: np.ndarray) -> dict[str, np.ndarray]:
    """The activation regions met by theta + xi d, xi ~ N(0, 1), in order along the line.

    Pieces of the line between the gate changes xi_ij = -z_ij / a_ij (a_ij = x_i^T d_{v_j}); a piece
    (lo, hi) has mass Phi(hi) - Phi(lo) and, with d frozen, mass gradient phi(hi) grad hi - phi(lo)
    grad lo, grad xi_ij = -grad z_ij / a_ij. Gate changes beyond |xi| = flows.GAUSS_CUT are ignored
    (mass 1.5e-23). Returns arrays over the pieces: ``gates`` (m x N x r), ``mass``, ``grad``
    (m x D), ``lo`` and ``hi``.
    """
    assert model.preacts is not None
    n, dd, r = model.shape
    X = model.data["X"]
    Z, A = model.preacts(theta), model.preacts(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        xs = np.where(A != 0, -Z / A, np.inf)
    ii, jj = np.nonzero(np.abs(xs) < F.GAUSS_CUT)
    order = np.argsort(xs[ii, jj], kind="stable")
    ii, jj = ii[order], jj[order]
    cut = xs[ii, jj]
    gcut = np.zeros((cut.size, model.dim))  # grad xi = -grad z / a, grad z_ij = x_i in the v_j coordinates
    cols = n * r + np.arange(dd)[None, :] * r + jj[:, None]
    gcut[np.arange(cut.size)[:, None], cols] = -X[ii] / A[ii, jj][:, None]
    lo = np.concatenate([[-np.inf], cut])
    hi = np.concatenate([cut, [np.inf]])
    glo = np.vstack([np.zeros((1, model.dim)), gcut])
    ghi = np.vstack([gcut, np.zeros((1, model.dim))])
    fl, fh = np.isfinite(lo), np.isfinite(hi)
    mid = np.where(fl & fh, 0.5 * (np.where(fl, lo, 0) + np.where(fh, hi, 0)), 0.0)
    mid = np.where(fh & ~fl, hi - 1.0, mid)
    mid = np.where(fl & ~fh, lo + 1.0, mid)
    gates = (Z[None] + mid[:, None, None] * A[None] > 0).astype(np.float64)
    mass = np.where(hi <= 0, special.ndtr(hi) - special.ndtr(lo), special.ndtr(-lo) - special.ndtr(-hi))
    phl = np.where(fl, np.exp(-0.5 * np.where(fl, lo, 0) ** 2) / np.sqrt(2 * np.pi), 0.0)
    phh = np.where(fh, np.exp(-0.5 * np.where(fh, hi, 0) ** 2) / np.sqrt(2 * np.pi), 0.0)
    grad = phh[:, None] * ghi - phl[:, None] * glo
    return {"gates": gates, "mass": mass, "grad": grad, "lo": lo, "hi": hi}


def expected_hessian(model: Model, theta: ArrayLike, d: ArrayLike) -> np.ndarray:
    """H^ = sum_b p_b H_b(theta): the regions' Hessians at theta weighted by the law of theta + xi d.

    >>> from numerics.central_flow.models import relu_model
    >>> m = relu_model(np.eye(2), np.ones((2, 1)), 1)
    >>> th = np.array([1.0, 1.0, 0.0])  # z_2 = 0: on a boundary
    >>> H = expected_hessian(m, th, np.array([0.0, 0.0, 1.0]))
    >>> bool(np.allclose(H, 0.5 * (m.hessian(th, np.array([[1.0], [1.0]])) + m.hessian(th, np.array([[1.0], [0.0]])))))
    True
    """
    _check_relu(model)
    theta = _theta(theta, model.dim, "theta")
    d = _theta(d, model.dim, "d")
    lw = line_weights(model, theta, d)
    return sum((p * model.hessian(theta, S) for S, p in zip(lw["gates"], lw["mass"])), np.zeros((model.dim,) * 2))


def _unpack(model: Model, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, d, r = model.shape
    return P[:, : n * r].reshape(-1, n, r), P[:, n * r :].reshape(-1, d, r)


def _grads(model: Model, P: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Region gradients grad L_S(P_k) for a batch of points P (k x D) and gate patterns S (k x N x r).

    The batched form of the model's ``grad(theta, gates)``: (E^T A, X^T (S * (E U))), A = S * (X V), E = A U^T - Y.
    """
    X, Y = model.data["X"], model.data["Y"]
    U, V = _unpack(model, P)
    A = S * (X @ V)
    E = A @ U.transpose(0, 2, 1) - Y
    gU = E.transpose(0, 2, 1) @ A
    gV = X.T @ (S * (E @ U))
    return np.concatenate([gU.reshape(len(P), -1), gV.reshape(len(P), -1)], axis=1)


def _curvs(model: Model, theta: np.ndarray, q: np.ndarray, S: np.ndarray) -> np.ndarray:
    """grad_theta (q^T H_S(theta) q) for a batch of gate patterns S (m x N x r): the model's ``curvature_grad``."""
    X = model.data["X"]
    U, V = _unpack(model, theta[None, :])
    dU, dV = _unpack(model, q[None, :])
    A, Al = S * (X @ V), S * (X @ dV)
    J = A @ dU.transpose(0, 2, 1) + Al @ U.transpose(0, 2, 1)
    Kr = Al @ dU.transpose(0, 2, 1)
    gU = 2 * (J.transpose(0, 2, 1) @ Al + Kr.transpose(0, 2, 1) @ A)
    gV = X.T @ (S * (2 * (J @ dU + Kr @ U)))
    return np.concatenate([gU.reshape(len(S), -1), gV.reshape(len(S), -1)], axis=1)


def _moments(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """int_lo^hi xi^k phi(xi) d xi, k = 0..3, per piece (the recursion of :func:`flows._gauss_line_mean`)."""
    fl, fh = np.isfinite(lo), np.isfinite(hi)
    lo0, hi0 = np.where(fl, lo, 0.0), np.where(fh, hi, 0.0)
    pl = np.where(fl, np.exp(-0.5 * lo0 * lo0) / np.sqrt(2 * np.pi), 0.0)
    ph = np.where(fh, np.exp(-0.5 * hi0 * hi0) / np.sqrt(2 * np.pi), 0.0)
    M0 = np.where(hi <= 0, special.ndtr(hi) - special.ndtr(lo), special.ndtr(-lo) - special.ndtr(-hi))
    M1 = pl - ph
    return np.stack([M0, M1, M0 + lo0 * pl - hi0 * ph, 2.0 * M1 + lo0**2 * pl - hi0**2 * ph], axis=1)


def _state(model: Model, theta: np.ndarray, eta: float, s: float, q: np.ndarray, memo: dict) -> dict[str, Any]:
    """Everything at (theta, s, q): H^, its top pair, c^, the averaged velocity and the rate r = c^ . v.

    Pieces whose mass and mass gradient are both below PRUNE are left out (their share of every
    sum is below float64 rounding). ``memo`` caches the regions' Hessians at theta.
    """
    d = np.sqrt(s) * q
    if s > 0:
        lw = line_weights(model, theta, d)
        keep = (lw["mass"] > PRUNE) | np.any(np.abs(lw["grad"]) > PRUNE, axis=1)
        S, p, gp, lo, hi = (lw[k][keep] for k in ("gates", "mass", "grad", "lo", "hi"))
    else:
        G = model.gates(theta)
        assert G is not None
        S, p, gp = G[None], np.ones(1), np.zeros((1, model.dim))
    Hs = []
    for Sb in S:
        key = Sb.tobytes()
        if key not in memo:
            memo[key] = model.hessian(theta, Sb)
        Hs.append(memo[key])
    Hb = np.array(Hs)
    H = np.tensordot(p, Hb, axes=1)
    qHq = np.einsum("a,mab,b->m", q, Hb, q)
    c = p @ _curvs(model, theta, q, S) + qHq @ gp
    if s > 0:
        nodes = F._AVG_NODES
        pts = np.tile(theta[None, :] + nodes[:, None] * d[None, :], (len(S), 1))  # (piece, node) rows
        g = _grads(model, pts, np.repeat(S, nodes.size, axis=0)).reshape(len(S), nodes.size, -1)
        coef = np.einsum("kn,mnD->mkD", F._AVG_VINV, g)
        M = _moments(lo, hi)
        vel = -eta * np.einsum("mkD,mk->D", coef, M)
    else:
        vel = -eta * model.grad(theta)
    w, Q = np.linalg.eigh(H)
    qn = Q[:, -1] * (1.0 if Q[:, -1] @ q >= 0 else -1.0)
    r = float(c @ vel) + RELAX * (float(w[-1]) - 2.0 / eta)
    scale = float(np.linalg.norm(c) * np.linalg.norm(vel)) + RELAX * 2.0 / eta
    return {
        "H": H,
        "lam": float(w[-1]),
        "gap": float(w[-1] - w[-2]),
        "q_new": qn,
        "c": c,
        "velocity": vel,
        "rate": r,
        "scale": scale,
    }


def averaged_cf_velocity(
    model: Model, theta: ArrayLike, eta: float, q0: ArrayLike | None = None, s0: float | None = None
) -> dict[str, Any]:
    """The averaged central flow's velocity at theta and its self-consistent oscillation (s, q).

    The fixed point of q <- q^ (the top eigenvector of H^(theta; s, q)) and s <- the Newton step on
    r(s) = 0, clipped at s >= 0 (complementarity: s = 0 when r(0) <= 0), by the sweeps of
    :func:`_fixed_point`: from (q0, s0) (a warm start) with Anderson mixing, then from the central
    flow of theta's own region (a cold start) with Anderson mixing, each start followed by
    semismooth Newton steps on the full system (:func:`_newton`) where its sweeps stall, then damped
    sweeps from the cold start. Converged when
    |q - q^| <= FIXED_TOL and |r(s)| <= FIXED_TOL x its scale (s > 0) or r(0) <= 0 (s = 0); raises
    ArithmeticError if no start converges. Here r(s) = c^ . v(s) + RELAX (lambda^ - 2/eta): the rate
    condition with a relaxation term (Baumgarte) that pulls lambda^ back to 2/eta where the continuation
    begins off it (lambda^ is not the local sharpness on a boundary); it vanishes on the edge.

    Returns ``velocity``, ``s``, ``q``, ``lam`` (lambda^), ``gap`` (lambda^ - the next eigenvalue of
    H^), ``c`` (c^), ``rate`` (r(s)), ``residual`` (|q - q^|), ``sweeps`` (sweeps or Newton steps),
    ``deltas`` (sqrt(s) q), ``start`` ('warm': from (q0, s0); 'cold': from theta's own region's central
    flow) and ``solver`` ('anderson', 'newton' or 'damped': the one that converged).
    """
    _check_relu(model)
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    if (q0 is None) != (s0 is None):
        raise ValueError("q0 and s0 must be given together (a warm start) or both left out")
    if q0 is not None:
        q0 = _theta(q0, model.dim, "q0")
        if not np.linalg.norm(q0) > 0:
            raise ValueError("q0 must be a nonzero vector")
        if not (isinstance(s0, (int, float)) and np.isfinite(s0) and s0 >= 0):
            raise ValueError(f"s0 must be a finite number >= 0; got {s0!r}")
        got = _solve(model, theta, eta, q0 / np.linalg.norm(q0), float(s0))
        if got is not None:
            got["start"] = "warm"
            return got
    got = _solve(model, theta, eta, *_region_cf(model, theta))  # a warm start that failed: start cold
    if got is None:
        got = _fixed_point(model, theta, eta, *_region_cf(model, theta), accelerate=False)
    if got is None:
        raise ArithmeticError(
            f"the averaged central flow's fixed point (s, q) did not converge in {FIXED_ITER} sweeps at theta = "
            f"{theta.tolist()!r}"
        )
    got["start"] = "cold"
    return got


def _region_cf(model: Model, theta: np.ndarray) -> tuple[np.ndarray, float]:
    """(q, s) of the central flow of theta's own region: the cold start of the fixed point."""
    G = model.gates(theta)
    _, Q = np.linalg.eigh(model.hessian(theta, G))
    q = Q[:, -1]
    c = model.curvature_grad(theta, q, G)
    return q, max(0.0, -2.0 * float(c @ model.grad(theta, G)) / float(c @ c))


def _result(st: dict[str, Any], s: float, q: np.ndarray, res: float, sweeps: int, solver: str) -> dict[str, Any]:
    keys = ("velocity", "lam", "gap", "rate", "c")
    out = {**{k: st[k] for k in keys}, "s": s, "q": q, "residual": res, "sweeps": sweeps, "deltas": np.sqrt(s) * q}
    return {**out, "solver": solver}


def _accepted(st: dict[str, Any], s: float, q: np.ndarray) -> tuple[bool, float]:
    """The test of every solver: |q^ - q| <= FIXED_TOL and |r| <= FIXED_TOL x scale (s > 0) or r <= 0 (s = 0)."""
    res = float(np.linalg.norm(st["q_new"] - q))
    ok_s = abs(st["rate"]) <= FIXED_TOL * st["scale"] if s > 0 else st["rate"] <= 0
    return bool(res <= FIXED_TOL and ok_s), res


def _solve(model: Model, theta: np.ndarray, eta: float, q: np.ndarray, s: float) -> dict[str, Any] | None:
    """From one start (q, s): Anderson-accelerated sweeps, then (where they stall) Newton from the same start."""
    got = _fixed_point(model, theta, eta, q, s)
    return got if got is not None else _newton(model, theta, eta, q, s)


def _fb(a: float, b: float) -> float:
    """The Fischer-Burmeister function a + b - sqrt(a^2 + b^2): zero iff a >= 0, b >= 0 and a b = 0."""
    return a + b - float(np.hypot(a, b))


def _newton(model: Model, theta: np.ndarray, eta: float, q: np.ndarray, s: float) -> dict[str, Any] | None:
    """Semismooth Newton steps on the full (s, q) system from (q, s): the result, or None where they stall.

    Unknowns: the tangent coordinates y of q (q = (q_k + B y) / |q_k + B y|, B an orthonormal basis of
    q_k's complement, re-based at each step) and s. Residual (D equations, D unknowns):
    R = (B^T (q^(s, q) - q), fb(sigma s, -r(s, q) / rho)), fb the Fischer-Burmeister function (zero iff
    s >= 0, -r >= 0 and s r = 0: the complementarity of s as an equation), rho the rate's scale and
    sigma = |dr/ds| / rho at the start (both arguments rates on one scale). The Jacobian by forward
    differences (NEWTON_FD; D evaluations a step), s clipped at 0, the step halved (at most
    NEWTON_HALVE times) until |R| decreases. Unlike the sweeps it needs no |DT_q| < 1 (an eigenvalue of
    DT_q below -1 makes plain sweeps oscillate with period two). It gives up after NEWTON_ITER steps, or
    after NEWTON_STALL steps in a row that do not halve |R| (no root nearby: seen where the warm start's
    branch of fixed points has ended in a fold and the residual has a positive local minimum there).
    Accepted by the sweeps' test (:func:`_accepted`).
    """
    memo: dict[bytes, np.ndarray] = {}
    q, s = q / np.linalg.norm(q), max(0.0, float(s))
    st = _state(model, theta, eta, s, q, memo)
    rho = float(st["scale"])
    hs = max(NEWTON_FD * s, 1e-10)
    sigma = abs(_state(model, theta, eta, s + hs, q, memo)["rate"] - st["rate"]) / hs / rho
    if not (np.isfinite(sigma) and sigma > 0):
        return None

    def resid(st: dict[str, Any], s: float, q: np.ndarray, B: np.ndarray) -> np.ndarray:
        return np.append(B.T @ (st["q_new"] - q), _fb(sigma * s, -st["rate"] / rho))

    stalls = 0
    for step in range(NEWTON_ITER + 1):
        ok, res = _accepted(st, s, q)
        if ok:
            return _result(st, s, q, res, step, "newton")
        if step == NEWTON_ITER or stalls >= NEWTON_STALL:
            return None
        B = np.linalg.qr(np.column_stack([q, np.eye(q.size)]))[0][:, 1 : q.size]
        R = resid(st, s, q, B)
        hs = max(NEWTON_FD * s, 1e-10)
        cols = []
        for b in B.T:
            qb = (q + NEWTON_FD * b) / np.linalg.norm(q + NEWTON_FD * b)
            cols.append((resid(_state(model, theta, eta, s, qb, memo), s, qb, B) - R) / NEWTON_FD)
        cols.append((resid(_state(model, theta, eta, s + hs, q, memo), s + hs, q, B) - R) / hs)
        dz = np.linalg.lstsq(np.column_stack(cols), -R, rcond=None)[0]
        merit, t = float(R @ R), 1.0
        for _ in range(NEWTON_HALVE + 1):
            qt = q + B @ (t * dz[:-1])
            qt /= np.linalg.norm(qt)
            st_t = _state(model, theta, eta, max(0.0, s + t * dz[-1]), qt, memo)
            R_t = resid(st_t, max(0.0, s + t * dz[-1]), qt, B)
            if float(R_t @ R_t) < merit:
                break
            t /= 2
        else:
            return None  # no decrease along the Newton direction
        stalls = stalls + 1 if float(R_t @ R_t) > merit / 4 else 0  # |R| not halved
        q, s, st = qt, max(0.0, s + t * dz[-1]), st_t
    return None


def _fixed_point(
    model: Model, theta: np.ndarray, eta: float, q: np.ndarray, s: float, accelerate: bool = True
) -> dict[str, Any] | None:
    """Sweeps of :func:`averaged_cf_velocity` from (q, s): the result, or None after FIXED_ITER sweeps.

    x = (x_q, s) with q = x_q / |x_q|; the map is T(x) = (q^(q, s), s - r(s) / r'(s)) (r' by a forward
    difference, refreshed every 10 sweeps). ``accelerate``: Anderson mixing of depth ANDERSON on T
    (fast where it converges); else damped sweeps x <- (x + T(x)) / 2 (slow, a linear rate, but
    sure where the plain map overshoots).
    """
    memo: dict[bytes, np.ndarray] = {}
    slope = None
    x = np.append(q, s)
    xs: list[np.ndarray] = []  # Anderson history: iterates and residuals f = T(x) - x
    fs: list[np.ndarray] = []
    for sweep in range(1, (FIXED_ITER if accelerate else DAMPED_ITER) + 1):
        q, s = x[:-1] / np.linalg.norm(x[:-1]), max(0.0, float(x[-1]))
        st = _state(model, theta, eta, s, q, memo)
        ok, res = _accepted(st, s, q)
        if ok:
            return _result(st, s, q, res, sweep, "anderson" if accelerate else "damped")
        if slope is None or not slope < 0 or sweep % 10 == 0:
            h = max(1e-7 * s, 1e-10)
            slope = (_state(model, theta, eta, s + h, q, memo)["rate"] - st["rate"]) / h
        s_new = s - st["rate"] / slope if slope < 0 else (0.0 if st["rate"] < 0 else 2.0 * s + 1e-6)
        f = np.append(st["q_new"], max(0.0, s_new)) - np.append(q, s)
        if not accelerate:
            x = np.append(q, s) + 0.5 * f
            continue
        xs.append(x.copy())
        fs.append(f)
        del xs[: -(ANDERSON + 1)], fs[: -(ANDERSON + 1)]
        if len(xs) > 1:
            dF, dX = np.diff(np.array(fs), axis=0).T, np.diff(np.array(xs), axis=0).T
            x = x + f - (dX + dF) @ np.linalg.lstsq(dF, f, rcond=None)[0]  # Anderson mixing (type II)
        else:
            x = x + f
    return None


def averaged_central_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    t0: float,
    T: float,
    t_eval: ArrayLike | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> dict[str, Any]:
    """The averaged central flow w' = averaged_cf_velocity(w) from theta0 at time t0 to T (DOP853).

    Each right-hand-side call warm-starts the fixed point (s, q) from the previous call's. Returns
    ``t`` and ``theta`` at ``t_eval`` (default [T]; every time in (t0, T]), and at those samples the
    oscillation ``s``, the expected sharpness ``lam`` (lambda^) and the fixed-point ``residual``;
    ``nfev``, ``max_residual`` (the largest |q - q^| accepted over every call), ``restarts`` (calls whose
    warm start failed, so that they started cold), ``newton`` and ``damped`` (calls solved by those fallbacks).
    """
    _check_relu(model)
    theta0 = _theta(theta0, model.dim)
    eta = _positive(eta, "eta")
    t0 = real(t0, "t0")
    T = real(T, "T")
    if not T > t0:
        raise ValueError(f"T must exceed t0 = {t0!r}; got {T!r}")
    rtol, atol = F._tolerances(rtol, atol)
    grid = F._t_eval(t_eval, T, t0, open_start=True)
    warm: dict[str, Any] = {"q": None, "s": None, "res": 0.0, "cold": 0, "newton": 0, "damped": 0}

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        out = averaged_cf_velocity(model, y, eta, warm["q"], warm["s"])
        warm["cold"] += out["start"] == "cold" and warm["q"] is not None  # a warm start failed (not the first call)
        warm["newton"] += out["solver"] == "newton"
        warm["damped"] += out["solver"] == "damped"
        warm["q"], warm["s"] = out["q"], out["s"]
        warm["res"] = max(warm["res"], out["residual"])
        return out["velocity"]

    sol = solve_ivp(rhs, (t0, T), theta0, method="DOP853", t_eval=grid, rtol=rtol, atol=atol)
    if sol.status != 0:
        raise RuntimeError(f"ODE integration of the averaged central flow failed: {sol.message}")
    theta = np.asarray(sol.y).T
    samples = []
    for y in theta:
        out = averaged_cf_velocity(model, y, eta, warm["q"], warm["s"])
        warm["q"], warm["s"] = out["q"], out["s"]
        samples.append(out)
    return {
        "t": np.asarray(sol.t),
        "theta": theta,
        "s": np.array([o["s"] for o in samples]),
        "lam": np.array([o["lam"] for o in samples]),
        "residual": np.array([o["residual"] for o in samples]),
        "nfev": int(sol.nfev),
        "max_residual": float(warm["res"]),
        "restarts": int(warm["cold"]),
        "newton": int(warm["newton"]),
        "damped": int(warm["damped"]),
    }
