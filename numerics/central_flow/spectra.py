"""Sharpness, the critical directions and the oscillation covariance Sigma of the central flow.

The central flow (:mod:`numerics.central_flow.flows`) moves by theta' = -eta grad L - (eta/2)
grad_theta <H(theta), Sigma>, with Sigma = sum_i s_i q_i q_i^T over the unit eigenvectors q_i of
the k critical Hessian eigenvalues (those at the stability edge 2/eta) and s_i = sigma_i^2 >= 0.
This module finds the q_i (:func:`critical_directions`), solves for Sigma
(:func:`oscillation_variances`, :func:`oscillation_covariance`) and returns the velocity it
gives (:func:`central_flow_velocity`).

The oscillation covariance solves the complementarity problem of the stability constraint.
With Sigma frozen, grad_theta <H, q_i q_i^T> = grad lambda_i =: c_i (Hellmann-Feynman, simple
eigenvalues), so for Sigma = sum_i s_i q_i q_i^T, lambda_i' = -eta (<c_i, grad L> + (1/2) sum_j s_j <c_i, c_j>) and

    s >= 0,   lambda_i' <= 0,   s_i lambda_i' = 0   (i = 1..k)

is the KKT system of the nonnegative least-squares problem min_{s >= 0} |grad L + (1/2) C^T s|^2
(C has rows c_i), solved by ``scipy.optimize.nnls`` (:func:`oscillation_variances`). For one
critical direction it is the closed form s = max(0, -2 <c, grad L> / |c|^2), the reading of
:func:`derivations.central_flow.scalar.sigma2_on_constraint`. Critical eigenvalues pinned
together at 2/eta are degenerate and their eigenbasis is arbitrary; there Sigma = Q X Q^T with
X in Sym(k) solving M' = 0 for the whole block M = Q^T H Q (basis-free) is used when X is
positive definite (:func:`oscillation_covariance`). The remaining case, a degenerate cluster
with a rank-deficient optimal X (a semidefinite complementarity problem, Cohen et al. 2025),
is approximated by the diagonal problem.

The c_i need third derivatives of the loss; they come from each model's curvature gradient
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
    "central_flow_velocity",
]


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
    max(0, -2 <c, g> / |c|^2); several: ``scipy.optimize.nnls``.

    >>> oscillation_variances(np.array([1.0, 0.0]), np.array([[-1.0, 0.0]])).tolist()
    [2.0]
    """
    C = np.atleast_2d(C)
    if C.shape[0] == 1:
        cc = float(C[0] @ C[0])
        return np.array([max(0.0, -2.0 * float(C[0] @ g) / cc)]) if cc > 0 else np.zeros(1)
    s, _ = nnls(0.5 * C.T, -g)
    return s


def oscillation_covariance(g: np.ndarray, Cab: dict[tuple[int, int], np.ndarray], k: int) -> np.ndarray:
    """X in Sym(k), X >= 0, of Sigma = Q X Q^T for a cluster of k critical directions Q.

    ``Cab[(a, b)]`` (a <= b) is grad_theta (q_a^T H q_b). The stability constraint on the cluster is
    M' <= 0 for M = Q^T H Q, with complementarity <X, M'> = 0: the KKT system of
    min_{X >= 0} |g + (1/2) sum_ab X_ab c_ab|^2. When every critical eigenvalue stays pinned the
    minimiser is the unconstrained one (M' = 0) and is positive definite: that solve is tried
    first (it is basis-free, so it is right for a degenerate cluster too). Otherwise the
    cluster is splitting and the diagonal problem in the eigenbasis (:func:`oscillation_variances`)
    is used; it is exact for distinct eigenvalues.
    """
    if k == 1:
        return oscillation_variances(g, Cab[(0, 0)][None, :]).reshape(1, 1)
    pairs = [(a, b) for a in range(k) for b in range(a, k)]
    A = np.stack([0.5 * Cab[p] * (1.0 if p[0] == p[1] else 2.0) for p in pairs], axis=1)
    x, *_ = np.linalg.lstsq(A, -g, rcond=None)
    X = np.zeros((k, k))
    for (a, b), xv in zip(pairs, x):
        X[a, b] = X[b, a] = xv
    if np.linalg.eigvalsh(X)[0] > 0:
        return X
    return np.diag(oscillation_variances(g, np.stack([Cab[(a, a)] for a in range(k)])))


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


def _cf_velocity(
    model: Model, theta: np.ndarray, eta: float, k: int, gates: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    lam, Q = critical_directions(model, theta, k, gates)
    g = model.grad(theta, gates)
    Cab: dict[tuple[int, int], np.ndarray] = {}
    for a in range(k):
        Cab[(a, a)] = model.curvature_grad(theta, Q[:, a], gates)
        # polarisation: q_b^T H q_a = ((q_a + q_b)^T H (q_a + q_b) - (q_a - q_b)^T H (q_a - q_b)) / 4
        for b in range(a):
            Cab[(b, a)] = 0.25 * (
                model.curvature_grad(theta, Q[:, a] + Q[:, b], gates)
                - model.curvature_grad(theta, Q[:, a] - Q[:, b], gates)
            )
    X = oscillation_covariance(g, Cab, k)
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
