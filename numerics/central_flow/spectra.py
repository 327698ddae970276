"""Sharpness, the critical directions and the oscillation covariance Sigma of the central flow.

The central flow (:mod:`numerics.central_flow.flows`) moves by theta' = -eta grad L - (eta/2)
grad_theta <H(theta), Sigma>, with Sigma = sum_i s_i q_i q_i^T over the unit eigenvectors q_i of
the k critical Hessian eigenvalues (those at the stability edge 2/eta) and s_i = sigma_i^2 >= 0.
This module finds the q_i (:func:`critical_directions`), solves for Sigma
(:func:`oscillation_variances`, :func:`oscillation_covariance`) and returns the velocity it
gives (:func:`central_flow_velocity`).

The oscillation covariance solves the complementarity problem of the stability constraint
(Cohen et al. 2025). Let Q (D x k) hold the critical eigenvectors, M = Q^T H(theta) Q with Q
frozen, Sigma = Q X Q^T with X in Sym(k), g = grad L and c_ab = grad_theta (q_a^T H q_b) (the
third derivatives; c_ab = c_ba). Then theta' = -eta (g + (1/2) sum_ab X_ab c_ab) and
M'_ab = <c_ab, theta'> = -eta G(X)_ab with

    G(X)_ab = <c_ab, g> + (1/2) sum_cd X_cd <c_ab, c_cd>,

and X solves the semidefinite complementarity problem (SDCP)

    X >= 0 (PSD),   -M' >= 0 (stability: no critical eigenvalue rises past 2/eta),   <X, M'> = 0,

the KKT system of the convex problem min_{X >= 0} |g + (1/2) sum_ab X_ab c_ab|^2 (its gradient in
X is G/2). The critical eigenvalues are pinned together at 2/eta, so their eigenbasis is
arbitrary; the SDCP is posed on the whole block M and its solution Sigma does not depend on that
basis. For one critical direction (k = 1) it is the closed form s = max(0, -2 <c, g> / |c|^2),
the reading of :func:`derivations.central_flow.scalar.sigma2_on_constraint`
(:func:`oscillation_variances`); for k >= 2 :func:`solve_sdcp` solves it over the PSD cone. Every
solution is checked by a certificate (:func:`sdcp_certificate`: X PSD, stability,
complementarity and the natural residual, to tolerances derived from float64 rounding) and a
failed check raises :class:`SigmaCertificateError` naming the state and the residuals. The
diagonal problem s >= 0, G_ii >= 0, s_i G_ii = 0 (``scipy.optimize.nnls`` in
:func:`oscillation_variances`) coincides with the SDCP when the off-diagonal c_ab vanish
(separable directions); in general it leaves the off-diagonal G_ab free, so it can break
stability and depends on the basis, and it is not used for k >= 2. The top k directions are
treated as one cluster (the flows use k >= 2 only with all k pinned at 2/eta).

The c_ab need third derivatives of the loss; they come from each model's curvature gradient
(closed forms in :mod:`numerics.central_flow.models`). Sharpness comes from the dense exact
Hessian (``numpy.linalg.eigh``), with ``scipy.sparse.linalg.eigsh`` as a cross-check
(:func:`sharpness`).

Complementarity at one critical direction: s > 0 holds lambda_1' = <c_1, theta'> at 0, s = 0 lets it fall.

>>> from numerics.central_flow.models import scalar_model
>>> out = central_flow_velocity(scalar_model(1.0), [1.3, 0.4], 0.9)
>>> s, lam_rate = float(out["sigma2"][0]), float(out["C"][0] @ out["velocity"])
>>> (s > 0 and abs(lam_rate) < 1e-12) or (s == 0 and lam_rate <= 0)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import nnls
from scipy.sparse.linalg import eigsh

from numerics.central_flow.models import Model, _count, _positive, _theta

__all__ = [
    "sharpness",
    "critical_directions",
    "oscillation_variances",
    "oscillation_covariance",
    "solve_sdcp",
    "sdcp_certificate",
    "SigmaCertificateError",
    "central_flow_velocity",
    "curvature_pairs",
    "CERT_SAFETY",
    "SDCP_MAX_ITER",
]

CERT_SAFETY = 8.0  # certificate tolerances: this many times the float64 bound on an exact solution's residuals
SDCP_MAX_ITER = 20_000  # accelerated projected-gradient steps before the solve gives up (and raises)
SDCP_CHECK_EVERY = 200  # certificate check (and Newton tries) at least every this many steps ...
SDCP_CHECK_DROP = 0.1  # ... and whenever the gradient mapping has fallen by this factor since the last check
SDCP_NEWTON_STEPS = 6  # semismooth Newton steps tried at each check
SELECT_STEPS = 500  # dual Newton steps of the least-norm selection among non-unique solutions
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)


class SigmaCertificateError(ArithmeticError):
    """An oscillation covariance that failed its certificate; ``residuals``: the measured residuals and tolerances."""

    def __init__(self, message: str, residuals: dict[str, Any]):
        super().__init__(message)
        self.residuals = residuals


def sharpness(model: Model, theta: ArrayLike, k: int = 1, method: str = "dense") -> np.ndarray:
    """The k largest Hessian eigenvalues, descending: dense ``eigh`` or ``eigsh`` (Lanczos) cross-check.

    At a zero-loss point of the scalar model lambda_max = u^2 + v^2 (Appendix B):

    >>> from numerics.central_flow.models import scalar_model
    >>> sharpness(scalar_model(1.0), [2.0, 0.5]).round(12).tolist()
    [4.25]
    """
    theta = _theta(theta, model.dim, "theta")
    k = _count(k, "k")
    if k > model.dim:
        raise ValueError(f"k must be <= the number of parameters {model.dim}; got {k}")
    H = model.hessian(theta)
    if method == "dense":
        return np.linalg.eigvalsh(H)[::-1][:k]
    if method == "eigsh":
        if k >= model.dim:
            raise ValueError(f"k must be < the number of parameters {model.dim} for eigsh; got {k}")
        vals = eigsh(H, k=k, which="LA", tol=0.0, return_eigenvectors=False, v0=np.ones(model.dim) / np.sqrt(model.dim))
        return np.sort(vals)[::-1]
    raise ValueError(f"method must be 'dense' or 'eigsh'; got {method!r}")


def critical_directions(
    model: Model, theta: ArrayLike, k: int, gates: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(lambda, Q): the k largest eigenvalues (descending) and their unit eigenvectors (columns)."""
    H = model.hessian(theta, gates)
    w, Q = np.linalg.eigh(H)
    return w[::-1][:k], Q[:, ::-1][:, :k]


def oscillation_variances(g: np.ndarray, C: np.ndarray) -> np.ndarray:
    """s >= 0 solving the diagonal complementarity problem: argmin_{s >= 0} |g + (1/2) C^T s|^2.

    ``g`` is grad L, the rows of ``C`` the eigenvalue gradients c_i. One row: the closed form
    max(0, -2 <c, g> / |c|^2), the k = 1 SDCP of :func:`oscillation_covariance`; several:
    ``scipy.optimize.nnls``, the SDCP restricted to diagonal X (not used for k >= 2: see the
    module docstring).

    >>> oscillation_variances(np.array([1.0, 0.0]), np.array([[-1.0, 0.0]])).tolist()
    [2.0]
    """
    C = np.atleast_2d(C)
    if C.shape[0] == 1:
        cc = float(C[0] @ C[0])
        return np.array([max(0.0, -2.0 * float(C[0] @ g) / cc)]) if cc > 0 else np.zeros(1)
    s, _ = nnls(0.5 * C.T, -g)
    return s


def _ctensor(Cab: dict[tuple[int, int], np.ndarray], k: int) -> np.ndarray:
    """The c_ab of ``Cab`` (keys a <= b) as a (D, k, k) array, symmetric in its last two axes."""
    c00 = np.asarray(Cab[(0, 0)], dtype=np.float64)
    T = np.empty((c00.shape[0], k, k))
    for a in range(k):
        for b in range(a, k):
            T[:, a, b] = T[:, b, a] = Cab[(a, b)]
    return T


def _svec_maps(k: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Upper-triangle indices of Sym(k) and the weights (1 on the diagonal, sqrt 2 off it) of the isometric svec."""
    iu = np.triu_indices(k)
    return iu, np.where(iu[0] == iu[1], 1.0, np.sqrt(2.0))


def _smat(x: np.ndarray, k: int, iu: tuple[np.ndarray, np.ndarray], w: np.ndarray) -> np.ndarray:
    X = np.empty((k, k))
    X[iu] = X[iu[1], iu[0]] = x / w
    return X


def _psd_part(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Pi(Z), eigenvalues, eigenvectors): the projection onto the PSD cone by eigenvalue clipping."""
    e, V = np.linalg.eigh(Z)
    return (V * np.clip(e, 0.0, None)) @ V.T, e, V


def _beta_norm(Ct: np.ndarray) -> float:
    """|beta|: the norm of X -> (1/2) (<c_ab, sum_cd X_cd c_cd>)_ab on Sym(k) (Frobenius), the natural map's scale."""
    k = Ct.shape[1]
    iu, w = _svec_maps(k)
    B = Ct[:, iu[0], iu[1]] * w
    return 0.5 * float(np.linalg.norm(B, 2)) ** 2 if B.size else 0.0


def _certify(g: np.ndarray, Ct: np.ndarray, X: np.ndarray, beta: float) -> dict[str, Any]:
    """The SDCP certificate of X (see :func:`sdcp_certificate`) for c_ab = ``Ct[:, a, b]`` and |beta| = ``beta``."""
    D, k = Ct.shape[0], X.shape[0]
    C2, aC2 = Ct.reshape(D, k * k), np.abs(Ct).reshape(D, k * k)
    r = g + 0.5 * (C2 @ X.ravel())  # g + (1/2) sum_ab X_ab c_ab = -theta'/eta
    G = (r @ C2).reshape(k, k)  # G_ab = <c_ab, r> = -M'_ab / eta
    G = 0.5 * (G + G.T)
    S = ((np.abs(g) + 0.5 * (aC2 @ np.abs(X).ravel())) @ aC2).reshape(k, k)
    n = D + k * k + 1  # terms along one evaluation path of G_ab: k^2 + 1 in r_d, D in <c_ab, r>
    scale_G = float(np.sqrt(np.sum(S * S)))
    tol_G = CERT_SAFETY * n * (_EPS * scale_G + _TINY)
    eX, eG = np.linalg.eigvalsh(X), np.linalg.eigvalsh(G)
    tol_X = CERT_SAFETY * k * (_EPS * float(np.max(np.abs(eX))) + _TINY)
    XG = X * G
    comp = float(np.sum(XG))
    tol_c = (
        float(np.sum(np.abs(eX))) * tol_G
        + float(np.sum(np.abs(eG))) * tol_X
        + CERT_SAFETY * k * k * _EPS * float(np.sum(np.abs(XG)))
    )
    Gs = G / beta if beta > 0 else np.zeros_like(G)
    nat = float(np.linalg.norm(X - _psd_part(X - Gs)[0]))
    tol_n = (
        (tol_G / beta if beta > 0 else 0.0)
        + 2.0 * np.sqrt(k) * tol_X
        + CERT_SAFETY * k * _EPS * float(np.linalg.norm(X) + np.linalg.norm(Gs))
    )
    return _verdict(float(eX[0]), tol_X, float(eG[0]), tol_G, comp, tol_c, nat, tol_n, scale_G)


def _verdict(
    min_eig_X: float,
    tol_X: float,
    min_eig_G: float,
    tol_G: float,
    comp: float,
    tol_c: float,
    nat: float,
    tol_n: float,
    scale_G: float,
) -> dict[str, Any]:
    ok = bool(min_eig_X >= -tol_X and min_eig_G >= -tol_G and abs(comp) <= tol_c and nat <= tol_n)
    return {
        "ok": ok,
        "min_eig_X": min_eig_X,
        "tol_X": tol_X,
        "min_eig_G": min_eig_G,
        "tol_G": tol_G,
        "complementarity": comp,
        "tol_c": tol_c,
        "natural_residual": nat,
        "tol_n": tol_n,
        "scale_G": scale_G,
    }


def _certify1(g: np.ndarray, c: np.ndarray, s: float) -> dict[str, Any]:
    """:func:`_certify` for k = 1 (X = [[s]], c = c_00, |beta| = |c|^2 / 2) in scalars: the same formulas."""
    G = float(c @ (g + 0.5 * s * c))
    ac = np.abs(c)
    scale_G = abs(float(ac @ (np.abs(g) + 0.5 * abs(s) * ac)))
    tol_G = CERT_SAFETY * (c.size + 2) * (_EPS * scale_G + _TINY)
    tol_X = CERT_SAFETY * (_EPS * abs(s) + _TINY)
    comp = s * G
    tol_c = abs(s) * tol_G + abs(G) * tol_X + CERT_SAFETY * _EPS * abs(comp)
    beta = 0.5 * float(c @ c)
    Gs = G / beta if beta > 0 else 0.0
    nat = abs(s - max(s - Gs, 0.0))
    tol_n = (tol_G / beta if beta > 0 else 0.0) + 2.0 * tol_X + CERT_SAFETY * _EPS * (abs(s) + abs(Gs))
    return _verdict(s, tol_X, G, tol_G, comp, tol_c, nat, tol_n, scale_G)


def sdcp_certificate(g: np.ndarray, Cab: dict[tuple[int, int], np.ndarray], X: np.ndarray) -> dict[str, Any]:
    """The certificate of a k x k X for the SDCP of :func:`oscillation_covariance`: residuals and tolerances.

    With G = -M'/eta (G_ab = <c_ab, g + (1/2) sum_cd X_cd c_cd>, evaluated in float64) and
    |beta| = sigma_max(B)^2 / 2 the norm of the linear part X -> G(X) - G(0) (B: the D x k(k+1)/2
    matrix of the c_ab in isometric svec coordinates) it reports

    - ``min_eig_X`` >= -``tol_X``: X PSD;
    - ``min_eig_G`` >= -``tol_G``: stability, -M' PSD (no critical eigenvalue rises);
    - ``|complementarity|`` = |<X, G>| <= ``tol_c``;
    - ``natural_residual`` = |X - Pi(X - G/|beta|)|_F <= ``tol_n`` (Pi: projection onto the PSD
      cone): zero exactly at a solution and, unlike the three above, first order in the distance
      to it (a tilted face of X leaves the others second order);

    ``ok`` is all four. The tolerances are :data:`CERT_SAFETY` times float64 bounds on the
    residuals of an exact solution evaluated in float64:

    - tol_G = n (eps |S|_F + tiny), n = D + k^2 + 1, S_ab = |c_ab| . (|g| + (1/2) sum_cd |X_cd| |c_cd|)
      (componentwise absolute values): the rounding bound gamma_n |a|^T |b| of the dot products that
      give G, with tiny (the smallest normal float64) per term for gradual underflow; it bounds
      |fl(G) - G|_F;
    - tol_X = k (eps max|eig X| + tiny): an eigen-decomposition's backward error;
    - tol_c = |X|_* tol_G + |G|_* tol_X + k^2 eps sum|X_ab G_ab|: if X and G lie within tol_X and
      tol_G of a complementary pair, |<X, G>| is below the first two terms; the third bounds the
      rounding of the k^2-term sum (|.|_*: nuclear norm);
    - tol_n = tol_G / |beta| + 2 sqrt(k) tol_X + k eps (|X|_F + |G|_F / |beta|): Pi is nonexpansive,
      so errors tol_X in X and tol_G in G move the natural map by at most the first two terms; the
      third is the rounding of the projection.

    >>> cert = sdcp_certificate(np.array([1.0, 0.0]), {(0, 0): np.array([-1.0, 0.0])}, np.array([[2.0]]))
    >>> cert["ok"], cert["min_eig_G"], cert["complementarity"], cert["natural_residual"]
    (True, 0.0, 0.0, 0.0)
    """
    X = np.asarray(X, dtype=np.float64)
    Ct = _ctensor(Cab, X.shape[0])
    return _certify(np.asarray(g, dtype=np.float64), Ct, X, _beta_norm(Ct))


def _dproj(e: np.ndarray, V: np.ndarray, iu: tuple[np.ndarray, np.ndarray], w: np.ndarray) -> np.ndarray:
    """The generalised derivative of Pi at Z = V diag(e) V^T as an m x m matrix in svec coordinates.

    Pi'(Z)[H] = V (Omega o (V^T H V)) V^T, Omega_ij = (e_i^+ - e_j^+) / (e_i - e_j) (1 or 0 on a tie,
    as e_i > 0 or not); the same operator for every eigenbasis of Z.
    """
    k, m = e.size, iu[0].size
    ep = np.clip(e, 0.0, None)
    de = e[:, None] - e[None, :]
    tie = de == 0
    Om = np.where(tie, (e[:, None] > 0) * 1.0, (ep[:, None] - ep[None, :]) / np.where(tie, 1.0, de))
    Eb = np.stack([_smat(col, k, iu, w) for col in np.eye(m)])  # orthonormal basis of Sym(k)
    Jp = V @ (Om * (V.T @ Eb @ V)) @ V.T  # Pi'(Z)[E_p], p = 1..m
    return (Jp[:, iu[0], iu[1]] * w).T


def _newton_step(
    x: np.ndarray, P: np.ndarray, q: np.ndarray, L: float, k: int, iu: tuple[np.ndarray, np.ndarray], w: np.ndarray
) -> tuple[np.ndarray, float]:
    """One semismooth Newton step on the natural map F(x) = x - Pi(x - (P x + q) / L); returns (x_new, |F(x)|).

    The step solves (I - Pi'(Z) (I - P/L)) dx = -F(x), Z = x - (P x + q) / L (least squares: the
    matrix is singular at non-strict complementarity).
    """
    m = x.size
    Zp, e, V = _psd_part(_smat(x - (P @ x + q) / L, k, iu, w))
    F = x - Zp[iu] * w
    J = np.eye(m) - _dproj(e, V, iu, w) @ (np.eye(m) - P / L)
    return x + np.linalg.lstsq(J, -F, rcond=None)[0], float(np.linalg.norm(F))


def _least_norm_point(E: np.ndarray, e: np.ndarray, r: int, y0: np.ndarray) -> np.ndarray | None:
    """argmin |y| over smat(y) >= 0 (r x r), E y = e, or None if not found.

    Dual semismooth Newton (the nearest-correlation-matrix method of Qi and Sun 2006): y = Pi(E^T nu)
    with nu minimising theta(nu) = |Pi(E^T nu)|^2 / 2 - <e, nu> (E: orthonormal rows; regularised
    Newton directions (H + 1e-2 min(1, |grad theta|) I) d = -grad theta, backtracking until theta or
    |grad theta| decreases), started at nu = E y0; converged when |E y - e| <= 64 m eps (|e| + |y|)
    within :data:`SELECT_STEPS` steps.
    """
    ju, wr = _svec_maps(r)

    def primal(nu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        Zp, ev, V = _psd_part(_smat(E.T @ nu, r, ju, wr))
        return Zp[ju] * wr, ev, V

    nu = E @ y0
    y, ev, V = primal(nu)
    for _ in range(SELECT_STEPS):
        grad = E @ y - e
        gn = float(np.linalg.norm(grad))
        if gn <= 64 * ju[0].size * _EPS * (np.linalg.norm(e) + np.linalg.norm(y)):
            return y
        H = E @ _dproj(ev, V, ju, wr) @ E.T
        # regularised Newton direction (Zhao, Sun and Toh 2010), H is singular where Pi(E^T nu) is rank-deficient
        d = np.linalg.solve(H + 1e-2 * min(1.0, gn) * np.eye(H.shape[0]), -grad)
        th0, slope, step = 0.5 * (y @ y) - e @ nu, float(grad @ d), 1.0
        while step > 1e-10:
            yt, evt, Vt = primal(nu + step * d)
            # Armijo on theta, or (where theta's decrease is below its rounding) a decrease of |grad theta|
            if 0.5 * (yt @ yt) - e @ (nu + step * d) <= th0 + 1e-4 * step * slope:
                break
            if np.linalg.norm(E @ yt - e) <= (1.0 - 1e-4 * step) * gn:
                break
            step *= 0.5
        else:
            break
        nu, y, ev, V = nu + step * d, yt, evt, Vt
    return None


def _select(
    g: np.ndarray, Ct: np.ndarray, B: np.ndarray, X: np.ndarray, cert: dict[str, Any], beta: float
) -> tuple[np.ndarray, dict[str, Any], str]:
    """The least-Frobenius-norm solution when the SDCP solution X is not unique: (X, certificate, selection).

    Every solution has the same B x (f is strictly convex in it) and so the same G, and lies in the
    face of the PSD cone on null(G). With V an orthonormal basis of null(G) (eigenvalues of G
    below sqrt(tol_G scale_G), between the rounding floor and the scale of G's terms) and B_V the
    c_ab of that face, the solution is unique when B_V is injective (singular values above
    sqrt(eps) of the largest): X is returned as it is ('unique'). Otherwise the solutions are the
    Y >= 0 with B_V svec(Y) = B svec(X), and the one of least norm (:func:`_least_norm_point`) is
    returned if it passes the certificate ('least norm'); it does not depend on the basis. If the
    search fails (the dual minimum is not attained when that set has no positive definite point),
    X stays ('not unique, not selected'): a certified solution, but one that may depend on the basis.
    """
    k = X.shape[0]
    iu, w = _svec_maps(k)
    x = X[iu] * w
    b = B @ x
    eG, VG = np.linalg.eigh(_smat(B.T @ (g + 0.5 * b), k, iu, w))
    V = VG[:, eG <= np.sqrt(cert["tol_G"] * cert["scale_G"])]
    r = V.shape[1]
    if r == 0:
        return X, cert, "unique"
    ju, wr = _svec_maps(r)
    U, s, Wt = np.linalg.svd((V.T @ Ct @ V)[:, ju[0], ju[1]] * wr, full_matrices=False)
    rank = int(np.sum(s > np.sqrt(_EPS) * s[0])) if s.size and s[0] > 0 else 0
    if rank == ju[0].size:
        return X, cert, "unique"
    y = _least_norm_point(Wt[:rank], (U[:, :rank].T @ b) / s[:rank], r, (V.T @ X @ V)[ju] * wr)
    if y is not None:
        Xs = V @ _smat(y, r, ju, wr) @ V.T
        Xs = 0.5 * (Xs + Xs.T)
        cs = _certify(g, Ct, Xs, beta)
        if cs["ok"]:
            return Xs, cs, "least norm"
    return X, cert, "not unique, not selected"


def solve_sdcp(
    g: np.ndarray, Cab: dict[tuple[int, int], np.ndarray], k: int, max_iter: int = SDCP_MAX_ITER
) -> tuple[np.ndarray, dict[str, Any]]:
    """(X, info): the SDCP solution of :func:`oscillation_covariance` and its certificate.

    Stages, each accepted only when :func:`sdcp_certificate` holds: k = 1, the closed form
    ('closed form'); the interior solution M' = 0 when it is positive definite ('interior',
    least squares of least Frobenius norm); otherwise accelerated projected gradient (FISTA with
    gradient restart, step 1/L, L = |P|) on f(x) = |g + (1/2) B x|^2 / 2 over the PSD cone in
    isometric svec coordinates x = svec(X) (B: the c_ab as columns, sqrt 2 on the off-diagonal
    ones), started at the projection of the interior solution ('projection' if that start
    passes). The stopping rule is the certificate itself, evaluated whenever the gradient
    mapping L |y - x_new| has fallen by :data:`SDCP_CHECK_DROP` since the last evaluation (and
    at least every :data:`SDCP_CHECK_EVERY` steps); at each evaluation that fails, up to
    :data:`SDCP_NEWTON_STEPS` semismooth Newton steps on the natural map are tried from the
    iterate ('newton'; quadratic near a strictly complementary solution) before the gradient
    steps go on ('gradient' if they reach the certificate themselves).

    Basis: every stage is equivariant under a rotation R of the basis of the critical eigenspace
    (c_ab -> R^T c R, X -> R^T X R: eigenvalue clipping, isometric svec, least-norm solves), and
    when the solution is unique the certificate pins it (distance <= 2 L |natural residual| /
    lambda_min(P) when P is nonsingular), so Sigma = Q X Q^T does not depend on the basis. When
    it is not unique (dependent c_ab on the face of the solution) the solution of least
    Frobenius norm is selected (:func:`_select`), which is basis-free too.

    ``info`` is the certificate of X plus ``iterations`` (gradient steps taken), ``stage`` and
    ``selection`` ('unique', 'least norm' or 'not unique, not selected'). Raises
    :class:`SigmaCertificateError` (with the residuals) when no certified X is found within
    ``max_iter`` steps.
    """
    g = np.asarray(g, dtype=np.float64)
    if k == 1:
        X = oscillation_variances(g, Cab[(0, 0)][None, :]).reshape(1, 1)
        c = np.asarray(Cab[(0, 0)], dtype=np.float64)
        cert = _certify1(g, c, float(X[0, 0]))
        return _certified(X, cert, 0, "closed form", "unique" if float(c @ c) > 0 else "least norm", k, g.size)
    Ct = _ctensor(Cab, k)
    iu, w = _svec_maps(k)
    B = Ct[:, iu[0], iu[1]] * w  # A(X) = sum_ab X_ab c_ab = B svec(X), svec isometric
    P, q = 0.25 * (B.T @ B), 0.5 * (B.T @ g)  # grad f = P x + q = svec(G) / 2
    evP = np.linalg.eigvalsh(P)
    L = float(evP[-1])
    beta = 2.0 * L
    # the interior solution: M' = 0 (least Frobenius norm), the answer when it is positive definite
    X = _smat(np.linalg.lstsq(0.5 * B, -g, rcond=None)[0], k, iu, w)
    Xp, e, _ = _psd_part(X)
    if e[0] > 0:
        cert = _certify(g, Ct, X, beta)
        if cert["ok"]:
            unique = bool(evP[0] > np.sqrt(_EPS) * L)
            return _certified(X, cert, 0, "interior", "unique" if unique else "least norm", k, g.size)
    if not L > 0:  # every c_ab = 0: G = 0 for every X, and X = 0 is the least-norm solution
        X = np.zeros((k, k))
        return _certified(X, _certify(g, Ct, X, beta), 0, "projection", "least norm", k, g.size)
    X, cert, it, stage = _search(g, Ct, B, P, q, L, Xp[iu] * w, max_iter)
    X, cert, selection = _select(g, Ct, B, X, cert, beta)
    return _certified(X, cert, it, stage, selection, k, g.size)


def _search(
    g: np.ndarray,
    Ct: np.ndarray,
    B: np.ndarray,
    P: np.ndarray,
    q: np.ndarray,
    L: float,
    x: np.ndarray,
    max_iter: int,
) -> tuple[np.ndarray, dict[str, Any], int, str]:
    """FISTA from x with certificate checks and Newton tries (see :func:`solve_sdcp`): (X, cert, steps, stage)."""
    k, beta = Ct.shape[1], 2.0 * L
    iu, w = _svec_maps(k)
    y, t = x.copy(), 1.0
    rho_check = np.inf  # evaluate the certificate when the gradient mapping has fallen below this
    cert: dict[str, Any] = {}
    for it in range(max_iter + 1):
        if it:
            xn = _psd_part(_smat(y - (P @ y + q) / L, k, iu, w))[0][iu] * w
            rho = L * float(np.linalg.norm(y - xn))  # gradient mapping at y: 0 exactly at a solution
            if it == 1:
                rho_check = SDCP_CHECK_DROP * rho
            if (y - xn) @ (xn - x) > 0:  # gradient restart (O'Donoghue and Candes 2015)
                y, t = xn, 1.0
            else:
                tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
                y, t = xn + ((t - 1.0) / tn) * (xn - x), tn
            x = xn
            if rho > rho_check and it % SDCP_CHECK_EVERY:
                continue
            rho_check = min(rho_check, rho) * SDCP_CHECK_DROP
        X = _smat(x, k, iu, w)
        cert = _certify(g, Ct, X, beta)
        if cert["ok"]:
            return X, cert, it, "gradient" if it else "projection"
        xk, fk = x, np.inf
        for _ in range(SDCP_NEWTON_STEPS):
            xk, f_old = _newton_step(xk, P, q, L, k, iu, w)
            if not f_old < fk:  # no longer converging: back to the gradient steps
                break
            fk = f_old
            Xk = _psd_part(_smat(xk, k, iu, w))[0]
            ck = _certify(g, Ct, Xk, beta)
            if ck["ok"]:
                return Xk, ck, it, "newton"
    raise _failure(cert, max_iter, "gradient", k, g.size)


def _failure(cert: dict[str, Any], iterations: int, stage: str, k: int, D: int) -> SigmaCertificateError:
    return SigmaCertificateError(
        f"the oscillation covariance failed its certificate (k = {k}, D = {D}, {stage}, {iterations} iterations): "
        f"min eig X = {cert['min_eig_X']:.3e} (tol {cert['tol_X']:.3e}), "
        f"min eig(-M'/eta) = {cert['min_eig_G']:.3e} (tol {cert['tol_G']:.3e}), "
        f"<X, -M'/eta> = {cert['complementarity']:.3e} (tol {cert['tol_c']:.3e}), "
        f"natural residual {cert['natural_residual']:.3e} (tol {cert['tol_n']:.3e})",
        cert,
    )


def _certified(
    X: np.ndarray, cert: dict[str, Any], iterations: int, stage: str, selection: str, k: int, D: int
) -> tuple[np.ndarray, dict[str, Any]]:
    """(X, info) if the certificate holds; else :class:`SigmaCertificateError`."""
    if not cert["ok"]:
        raise _failure(cert, iterations, stage, k, D)
    info = dict(cert)
    info["iterations"], info["stage"], info["selection"] = iterations, stage, selection
    return X, info


def oscillation_covariance(g: np.ndarray, Cab: dict[tuple[int, int], np.ndarray], k: int) -> np.ndarray:
    """X in Sym(k), X >= 0, of Sigma = Q X Q^T for a cluster of k critical directions Q, certified.

    ``g`` is grad L, ``Cab[(a, b)]`` (a <= b) is c_ab = grad_theta (q_a^T H q_b) at fixed q. For
    M = Q^T H Q (Q frozen) the central flow gives M'_ab = <c_ab, theta'> = -eta G_ab with
    G(X)_ab = <c_ab, g + (1/2) sum_cd X_cd c_cd>, and X solves the semidefinite complementarity
    problem X >= 0, -M' >= 0, <X, M'> = 0: the KKT system of the convex problem
    min_{X >= 0} |g + (1/2) sum_ab X_ab c_ab|^2 (its gradient in X is G/2). See
    :func:`solve_sdcp` for the solver and :func:`sdcp_certificate` for the check made on every
    call; a failed check raises :class:`SigmaCertificateError`. k = 1 is the closed form of
    :func:`oscillation_variances`.

    >>> c = {(0, 0): np.array([-1.0, 0.0]), (0, 1): np.zeros(2), (1, 1): np.array([0.0, -1.0])}
    >>> oscillation_covariance(np.array([1.0, -1.0]), c, 2).round(12).tolist()
    [[2.0, 0.0], [0.0, 0.0]]
    """
    return solve_sdcp(g, Cab, k)[0]


def central_flow_velocity(model: Model, theta: ArrayLike, eta: float, k: int = 1) -> dict[str, np.ndarray]:
    """theta' of the central flow with the top k eigen-directions critical, and what it used.

    Returns a dict: ``velocity``, ``X`` (k x k, Sigma = Q X Q^T), ``sigma2`` (the eigenvalues of X,
    descending; for k = 1 the variance s), ``deltas`` (D x k, Sigma = deltas deltas^T), ``Q``
    (D x k unit eigenvectors), ``lam`` (the k eigenvalues), ``grad`` (grad L), ``C`` (k x D,
    grad lambda_i = grad_theta (q_i^T H q_i)).

    >>> from numerics.central_flow.models import scalar_model
    >>> out = central_flow_velocity(scalar_model(1.0), [1.3, 0.4], 0.9)
    >>> sorted(out)
    ['C', 'Q', 'X', 'deltas', 'grad', 'lam', 'sigma2', 'velocity']
    """
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    k = _count(k, "k")
    if k > model.dim:
        raise ValueError(f"k must be <= the number of parameters {model.dim}; got {k}")
    return _cf_velocity(model, theta, eta, k)


def curvature_pairs(
    model: Model, theta: np.ndarray, Q: np.ndarray, gates: np.ndarray | None = None
) -> dict[tuple[int, int], np.ndarray]:
    """c_ab = grad_theta (q_a^T H q_b) for the columns q_a of ``Q``, keys (a, b) with a <= b.

    The diagonal from the model's curvature gradients, the off-diagonal by polarisation:
    q_a^T H q_b = ((q_a + q_b)^T H (q_a + q_b) - (q_a - q_b)^T H (q_a - q_b)) / 4.

    >>> from numerics.central_flow.models import scalar_model
    >>> C = curvature_pairs(scalar_model(1.0), np.array([1.0, 2.0]), np.eye(2))
    >>> sorted(C)
    [(0, 0), (0, 1), (1, 1)]
    """
    Cab: dict[tuple[int, int], np.ndarray] = {}
    for a in range(Q.shape[1]):
        Cab[(a, a)] = model.curvature_grad(theta, Q[:, a], gates)
        for b in range(a):
            Cab[(b, a)] = 0.25 * (
                model.curvature_grad(theta, Q[:, a] + Q[:, b], gates)
                - model.curvature_grad(theta, Q[:, a] - Q[:, b], gates)
            )
    return Cab


def _cf_velocity(
    model: Model, theta: np.ndarray, eta: float, k: int, gates: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    lam, Q = critical_directions(model, theta, k, gates)
    g = model.grad(theta, gates)
    Cab = curvature_pairs(model, theta, Q, gates)
    try:
        X = oscillation_covariance(g, Cab, k)
    except SigmaCertificateError as err:
        raise SigmaCertificateError(
            f"{err} at theta = {theta.tolist()!r}, eta = {eta!r}, critical eigenvalues {lam.tolist()!r}", err.residuals
        ) from err
    corr = sum(X[a, b] * Cab[(min(a, b), max(a, b))] for a in range(k) for b in range(k))
    vel = -eta * (g + 0.5 * corr)
    e, W = np.linalg.eigh(X)
    e = np.clip(e, 0.0, None)[::-1]
    W = W[:, ::-1]
    return {
        "velocity": vel,
        "X": X,
        "sigma2": e,
        "deltas": Q @ (W * np.sqrt(e)),
        "Q": Q,
        "lam": lam,
        "grad": g,
        "C": np.stack([Cab[(a, a)] for a in range(k)]),
    }
