"""Uniqueness of the averaged central flow's fixed point (s, q) (:mod:`numerics.central_flow.averaged`).

The problem at a state theta (eta, gamma = averaged.RELAX fixed). Write H^(s, q) = sum_b p_b(sqrt(s) q) H_b
(the expected Hessian), T(s, q) its top unit eigenvector (sign taken along q) and
r(s, q) = c^(s, q) . v(s, q) + gamma (lambda^(s, q) - 2/eta) the rate. The fixed point is

    q = T(s, q),  |q| = 1                                    (the eigen sub-problem)
    s >= 0,  w := -r(s, q) >= 0,  s w = 0                     (a complementarity problem in s)

a mixed nonlinear complementarity problem in x = (s, q): q free on the sphere, s complementary.

Reduction. Where the eigen sub-problem has one solution q(s) for each s, the problem is the scalar NCP
of g(s) := -r(s, q(s)): s >= 0, g(s) >= 0, s g(s) = 0. A scalar NCP whose g is strictly increasing on
[0, S] has at most one solution in [0, S] (two solutions s1 < s2 would need g(s2) = 0 <= g(s1) or
g(s2) = 0 < g(s2)): the one-dimensional P-function condition.

Inside one activation region (derivations.central_flow.averaged_lcp, SymPy): the region loss is a
quartic polynomial, so E[grad L(theta + xi sqrt(s) q)] = grad L + (s/2) grad(q^T H q) exactly, p_b, c^ and
lambda^ do not depend on (s, q), T(s, q) = q is the top eigenvector of H for every s (unique iff the gap
lambda_1 - lambda_2 > 0), and g(s) = M s + b, M = eta |c|^2 / 2, b = eta c . grad L - gamma (lambda - 2/eta):
the linear complementarity problem LCP(M, b), which has one solution for every b iff M is a P-matrix,
here iff c != 0. Across boundaries g is nonlinear and no such closed form exists; this module
certifies it numerically at given states, three ways:

1. The linearisation at the solution x* (Robinson's strong regularity). With y the tangent coordinates
   of q (basis B of q*'s orthogonal complement), the linearised problem is a mixed LCP with free block
   A = I - B^T DT_q B and the s-row; it has one solution for every right-hand side iff A is nonsingular
   and the Schur complement M = dg/ds(s*) = -(r_s + r_y A^{-1} B^T T_s) is a P-matrix (1 x 1: M > 0).
   ``margin`` = M / (eta |c^|^2 / 2), 1 exactly inside one region. Local: it proves the solution isolated.
2. A scan of g over s in (0, SCAN_FACTOR s*] (spaced in s^(1/2), and log-spaced down to SCAN_LOW of the
   top: on a boundary g(0+) differs from g(0) and a second root can lie just above 0), q(s) solved at each
   grid point from two starts (the previous point's q and a random one) that must agree: no sign change at
   the log-spaced points (they lie below s*; g < 0 there where s* > 0) and strictly increasing on the
   s^(1/2)-spaced grid (worst slope
   over eta |c^|^2 / 2: ``scan_margin``) and g(0) < 0 (s = 0 is not a second solution; where s* = 0,
   g > 0 on the whole grid instead, over (0, SCAN_FACTOR s_ref], s_ref = |g(0)| / (eta |c^|^2 / 2)).
   Global in s on that interval, but only at the grid points (g between them, and s above the
   interval, are not covered).
3. Multi-start: the solver of :mod:`averaged` from random (q, s) (q uniform on the sphere, s uniform on
   [0, SCAN_FACTOR s*]); a start that converges elsewhere is a second fixed point (uniqueness refuted).
   A weaker, supporting check: starts that do not converge count as neither.

>>> round(p_matrix_margin(np.array([[2.0, 1.0], [0.0, 1.0]])), 12)
1.0
>>> round(p_matrix_margin(np.array([[1.0, 2.0], [2.0, 1.0]])), 12)  # det = -3: not a P-matrix
-3.0
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from numerics.central_flow import averaged as AV
from numerics.central_flow.models import Model, _positive, _theta
from numerics.validation import integer, real

__all__ = ["p_matrix_margin", "eigen_fixed_point", "linearised_lcp", "uniqueness_certificate", "SCAN_FACTOR"]

SCAN_FACTOR = 10.0  # the scan and the random starts cover s in [0, 10 s*]: ten times the oscillation found
SCAN_POINTS = 24  # grid points of the scan in (0, SCAN_FACTOR s*], spaced in s^(1/2) (denser near 0)
SCAN_LOW = 1e-6  # below them, SCAN_LOW_POINTS log-spaced points from SCAN_LOW x the top of the scan: on a boundary
SCAN_LOW_POINTS = 6  # g jumps at s = 0 and a second root can sit just above 0 (seen at s = 3e-3 of the top)
STARTS = 8  # random starts of the multi-start check
EIGEN_SWEEPS = 30  # plain sweeps before Newton steps (where DT_q has an eigenvalue <= -1 they oscillate)
EIGEN_NEWTON = 20  # Newton steps on B^T (T(s, q) - q) = 0 (forward-difference Jacobian) after the sweeps
FD_REL = 1e-5  # finite-difference step (relative): truncation O(h^2) ~ 1e-10, rounding eps / h ~ 2e-11
SAME_Q = 1e-6  # two solutions q agree: 100 x FIXED_TOL (the sweeps stop at FIXED_TOL; contraction factor <= 0.99)
SAME_S = 1e-6  # two solutions s agree (relative): the rate is solved to FIXED_TOL x its scale, slope ~ 1e-2 x scale


def p_matrix_margin(M: ArrayLike) -> float:
    """The smallest principal minor of the square matrix M: M is a P-matrix iff it is > 0.

    Then LCP(M, b) (w = M z + b >= 0, z >= 0, z^T w = 0) has exactly one solution for every b
    (Cottle, Pang and Stone, Theorem 3.3.7). All 2^n - 1 minors: for the small n used here.
    """
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.size == 0 or not np.all(np.isfinite(M)):
        raise ValueError(f"M must be a finite square matrix; got shape {M.shape}")
    n = M.shape[0]
    if n > 12:
        raise ValueError(f"M must have at most 12 rows (2^n principal minors); got {n}")
    return min(float(np.linalg.det(M[np.ix_(k, k)])) for m in range(1, n + 1) for k in combinations(range(n), m))


def _T(model: Model, theta: np.ndarray, eta: float, s: float, q: np.ndarray, memo: dict) -> dict[str, Any]:
    return AV._state(model, theta, eta, s, q / np.linalg.norm(q), memo)


def eigen_fixed_point(
    model: Model, theta: ArrayLike, eta: float, s: float, q0: ArrayLike, memo: dict | None = None
) -> dict[str, Any]:
    """The eigen sub-problem at fixed s: q = T(s, q) to |T(s, q) - q| <= FIXED_TOL, from q0.

    EIGEN_SWEEPS plain sweeps q <- T(s, q), then (where they stall: a period-two orbit when DT_q has an
    eigenvalue below -1) Newton steps on the tangent residual B^T (T(s, q) - q).

    Returns ``q``, ``residual``, ``converged``, ``sweeps`` and ``g`` = -r(s, q) (the reduced function).
    """
    theta, eta, s, q = _validated(model, theta, eta, s, q0, "q0")
    memo = {} if memo is None else memo
    for sweep in range(1, EIGEN_SWEEPS + 1):
        st = _T(model, theta, eta, s, q, memo)
        res = float(np.linalg.norm(st["q_new"] - q))
        if res <= AV.FIXED_TOL or sweep == EIGEN_SWEEPS:
            break
        q = st["q_new"]
    newton = 0
    while res > AV.FIXED_TOL and newton < EIGEN_NEWTON:  # plain sweeps stalled (DT_q has an eigenvalue <= -1)
        newton += 1
        B = _basis(q)
        f = B.T @ st["q_new"]
        J = np.column_stack([B.T @ _T(model, theta, eta, s, q + FD_REL * b, memo)["q_new"] for b in B.T])
        J = (J - f[:, None]) / FD_REL - np.eye(B.shape[1])  # d(B^T (T(q) - q)) / dy (forward differences)
        q = q - B @ np.linalg.lstsq(J, f, rcond=None)[0]
        q /= np.linalg.norm(q)
        st = _T(model, theta, eta, s, q, memo)
        res = float(np.linalg.norm(st["q_new"] - q))
    return {"q": q, "residual": res, "converged": res <= AV.FIXED_TOL, "sweeps": sweep + newton, "g": -st["rate"]}


def _validated(
    model: Model, theta: ArrayLike, eta: float, s: float, q: ArrayLike, q_name: str
) -> tuple[np.ndarray, float, float, np.ndarray]:
    """(theta, eta, s, q / |q|) checked for a ReLU ``model``: errors name the parameter (``q_name`` for q)."""
    AV._check_relu(model)
    theta_ = _theta(theta, model.dim, "theta")
    eta_ = _positive(eta, "eta")
    s_ = real(s, "s", 0.0)
    q_ = _theta(q, model.dim, q_name)
    if not np.linalg.norm(q_) > 0:
        raise ValueError(f"{q_name} must be a nonzero vector")
    return theta_, eta_, s_, q_ / np.linalg.norm(q_)


def _basis(q: np.ndarray) -> np.ndarray:
    """An orthonormal basis (D x (D - 1)) of the complement of the unit vector q."""
    Q, _ = np.linalg.qr(np.column_stack([q, np.eye(q.size)]))
    return Q[:, 1 : q.size]


def _s_ref(s: float, st: dict[str, Any], eta: float) -> float:
    """The scale of s: s itself, or at s = 0 the s at which the inside-region w(s) = M s + b would move by |b|."""
    return s if s > 0 else max(abs(float(st["rate"])) / (eta * float(st["c"] @ st["c"]) / 2), 1e-12)


def linearised_lcp(model: Model, theta: ArrayLike, eta: float, s: float, q_star: ArrayLike) -> dict[str, Any]:
    """The linearised mixed LCP at a fixed point (s, q) (point 1 of the module docstring), by central differences.

    Returns ``M`` (the Schur complement dg/ds), ``M_region`` (eta |c^|^2 / 2, its value inside one region),
    ``margin`` (M / M_region), ``free_sv`` (the smallest singular value of the free block A = I - B^T DT B)
    and ``contraction`` (|B^T DT B|_2: the eigen sweeps' local rate). At s = 0 the s-difference is one-sided
    between two points s > 0 (a right derivative: on a boundary g jumps at s = 0).
    """
    theta, eta, s, q = _validated(model, theta, eta, s, q_star, "q")
    memo: dict[bytes, np.ndarray] = {}
    st = _T(model, theta, eta, s, q, memo)
    B = _basis(q)
    h = FD_REL

    def at(ss: float, qq: np.ndarray) -> tuple[np.ndarray, float]:
        o = _T(model, theta, eta, ss, qq, memo)
        t = o["q_new"] * (1.0 if o["q_new"] @ q >= 0 else -1.0)
        return B.T @ t, float(o["rate"])

    cols, r_y = [], []
    for b in B.T:
        (tp, rp), (tm, rm) = at(s, q + h * b), at(s, q - h * b)
        cols.append((tp - tm) / (2 * h))
        r_y.append((rp - rm) / (2 * h))
    DT = np.array(cols).T  # (D - 1) x (D - 1): d(B^T T) / dy
    hs = h * _s_ref(s, st, eta)
    if s > hs:
        (tp, rp), (tm, rm) = at(s + hs, q), at(s - hs, q)
    else:  # one-sided, inside s > 0: on a boundary g jumps at s = 0 (the law collapses onto theta's own side)
        (tp, rp), (tm, rm) = at(2 * hs, q), at(hs, q)
        hs /= 2
    T_s, r_s = (tp - tm) / (2 * hs), (rp - rm) / (2 * hs)
    A = np.eye(DT.shape[0]) - DT
    sv = np.linalg.svd(A, compute_uv=False)
    M = -(r_s + np.array(r_y) @ np.linalg.solve(A, T_s))
    M_region = eta * float(st["c"] @ st["c"]) / 2
    return {
        "M": float(M),
        "M_region": M_region,
        "margin": float(M) / M_region,
        "free_sv": float(sv[-1]),
        "contraction": float(np.linalg.norm(DT, 2)),
    }


def uniqueness_certificate(
    model: Model,
    theta: ArrayLike,
    eta: float,
    scan_points: int = SCAN_POINTS,
    starts: int = STARTS,
    seed: int = 0,
) -> dict[str, Any]:
    """The three checks of the module docstring at theta; ``unique`` when all three pass.

    Returns the fixed point (``s``, ``q``) of :func:`averaged.averaged_cf_velocity`, the linearisation's
    ``margin``, ``free_sv`` and ``contraction`` (:func:`linearised_lcp`), the scan's ``scan_s``, ``scan_g``,
    ``scan_margin`` (the smallest slope of g between grid points over eta |c^|^2 / 2), ``g0`` (g(0) over
    the same scale; < 0: s = 0 is not a solution), ``sign_changes`` and ``q_spread`` (the largest gap between
    the two starts' q(s)), and the multi-start counts ``same``, ``other`` and ``none`` (with ``other_s``).
    """
    AV._check_relu(model)
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    scan_points = integer(scan_points, "scan_points", 2)
    starts = integer(starts, "starts", 0)
    seed = integer(seed, "seed", 0)
    fp = AV.averaged_cf_velocity(model, theta, eta)
    s, q = float(fp["s"]), fp["q"]
    lin = linearised_lcp(model, theta, eta, s, q)
    scale = lin["M_region"]
    s_hi = SCAN_FACTOR * _s_ref(s, AV._state(model, theta, eta, s, q, {}), eta)
    memo: dict[bytes, np.ndarray] = {}
    rng = np.random.default_rng(seed)
    low = s_hi * np.logspace(np.log10(SCAN_LOW), np.log10(min(0.5 / scan_points**2, 0.05)), SCAN_LOW_POINTS)
    grid = np.concatenate([low, s_hi * (np.arange(1, scan_points + 1) / scan_points) ** 2])
    g, spread, ok, qw = [], 0.0, True, q
    for sk in grid:
        a = eigen_fixed_point(model, theta, eta, float(sk), qw, memo)
        b = eigen_fixed_point(model, theta, eta, float(sk), rng.normal(size=model.dim), memo)  # a random start
        ok = ok and a["converged"] and b["converged"]
        spread = max(spread, float(min(np.linalg.norm(a["q"] - b["q"]), np.linalg.norm(a["q"] + b["q"]))))
        g.append(a["g"])
        qw = a["q"]
    g0 = eigen_fixed_point(model, theta, eta, 0.0, AV._region_cf(model, theta)[0], memo)
    ok = ok and g0["converged"]
    garr = np.array(g)
    slopes = np.diff(garr[SCAN_LOW_POINTS:]) / np.diff(grid[SCAN_LOW_POINTS:]) / scale  # the s^(1/2)-spaced points
    sign = np.sign(np.concatenate([[g0["g"]], garr]))
    same = other = none = 0
    other_s: list[float] = []
    for _ in range(starts):
        qs = rng.normal(size=model.dim)
        got = AV._fixed_point(model, theta, eta, qs / np.linalg.norm(qs), float(rng.uniform(0, s_hi)))
        if got is None:
            none += 1
        elif (
            abs(got["s"] - s) <= SAME_S * s_hi / SCAN_FACTOR
            and min(np.linalg.norm(got["q"] - q), np.linalg.norm(got["q"] + q)) <= SAME_Q
        ):
            same += 1
        else:
            other += 1
            other_s.append(float(got["s"]))
    scan_margin = float(slopes.min())
    g0_rel = float(g0["g"]) / scale
    unique = (
        lin["margin"] > 0
        and lin["free_sv"] > 0
        and ok
        and spread <= SAME_Q
        and scan_margin > 0
        and (g0_rel < 0 if s > 0 else bool(np.all(garr > 0)))  # no second solution at s = 0, or at s > 0
        and (bool(np.all(garr[:SCAN_LOW_POINTS] < 0)) if s > 0 else True)  # none just above 0 (all below s*)
        and other == 0
    )
    return {
        "s": s,
        "q": q,
        **lin,
        "scan_s": grid,
        "scan_g": garr / scale,
        "scan_margin": scan_margin,
        "g0": g0_rel,
        "sign_changes": int(np.sum(sign[1:] != sign[:-1])),
        "scan_converged": bool(ok),
        "q_spread": spread,
        "same": same,
        "other": other,
        "none": none,
        "other_s": other_s,
        "unique": bool(unique),
    }
