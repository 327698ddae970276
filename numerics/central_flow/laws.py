"""Conservation laws of gradient flow and their breaking by the central flow, in float64.

Gradient flow keeps the balancedness Psi = U^T U - V^T V of each model (:func:`balancedness`):
the scalar h = u^2 - v^2, the matrix-factorisation Psi (r x r) and, for the two-layer ReLU
network, the diagonal h_j = |u_j|^2 - |v_j|^2 (:func:`law`). Along the central flow with
Sigma = deltas deltas^T the laws drift by the paper's raw breaking matrices
(:func:`mf_breaking_matrix`, Appendix C; :func:`relu_breaking_matrix`, Appendix D), which the
audit compares with the direct rate :func:`balancedness_rate`. :func:`fixed_gate_ratio` measures
how far the oscillation is from flipping a ReLU gate (Figures 3-4). The symbolic derivations
of the same laws are in :mod:`derivations.central_flow`.

>>> from numerics.central_flow.models import mf_model
>>> model = mf_model(np.eye(2), 1)
>>> law(np.array([1.0, 2.0, 0.5, 0.5]), model).tolist()
[[4.5]]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from numerics.central_flow.models import Model

__all__ = [
    "balancedness",
    "balancedness_rate",
    "law",
    "mf_breaking_matrix",
    "relu_breaking_matrix",
    "fixed_gate_ratio",
]


def _blocks(theta: ArrayLike, shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    n, m, r = shape
    theta = np.asarray(theta, dtype=np.float64)
    return theta[..., : n * r].reshape(*theta.shape[:-1], n, r), theta[..., n * r :].reshape(*theta.shape[:-1], m, r)


def balancedness(theta: ArrayLike, model: Model) -> np.ndarray:
    """Psi = U^T U - V^T V (r x r, stacked over leading axes of ``theta``).

    h_j = Psi_jj for ReLU; h = Psi for the scalar model.

    >>> from numerics.central_flow.models import scalar_model
    >>> balancedness(np.array([2.0, 1.0]), scalar_model(0.0)).tolist()
    [[3.0]]
    """
    U, V = _blocks(theta, model.shape)
    return np.swapaxes(U, -1, -2) @ U - np.swapaxes(V, -1, -2) @ V


def law(theta: ArrayLike, model: Model) -> np.ndarray | float:
    """The model's gradient-flow law(s): h (scalar), Psi (MF, r x r), (h_1..h_r) (ReLU)."""
    P = balancedness(theta, model)
    if model.name == "scalar":
        return P[..., 0, 0]
    if model.preacts is not None:
        return np.diagonal(P, axis1=-2, axis2=-1).copy()
    return P


def balancedness_rate(theta: ArrayLike, velocity: ArrayLike, model: Model) -> np.ndarray:
    """Psi' = U'^T U + U^T U' - V'^T V - V^T V' along theta' = ``velocity`` (direct differentiation)."""
    U, V = _blocks(theta, model.shape)
    dU, dV = _blocks(velocity, model.shape)
    return dU.T @ U + U.T @ dU - dV.T @ V - V.T @ dV


def _deltas(deltas: ArrayLike, shape: tuple[int, int, int]) -> list[tuple[np.ndarray, np.ndarray]]:
    d = np.asarray(deltas, dtype=np.float64)
    d = d.reshape(d.shape[0], -1)
    return [_blocks(d[:, i], shape) for i in range(d.shape[1])]


def mf_breaking_matrix(theta: ArrayLike, model: Model, deltas: ArrayLike) -> np.ndarray:
    """The paper's raw breaking matrix B~ (Appendix C, boxed) for Sigma = deltas deltas^T (columns delta_i).

    B~ = P_U R_V + R_V P_U - P_V R_U - R_U P_V + 2 (N - N'), N = E[dV^T V dU^T U],
    N' = E[dU^T U dV^T V] (reading of :mod:`derivations.central_flow.matrix`); Psi' = -eta sym(B~).
    """
    U, V = _blocks(theta, model.shape)
    r = model.shape[2]
    PU, PV = U.T @ U, V.T @ V
    RU, RV, N, Np = (np.zeros((r, r)) for _ in range(4))
    for dU, dV in _deltas(deltas, model.shape):
        RU += dU.T @ dU
        RV += dV.T @ dV
        N += dV.T @ V @ dU.T @ U
        Np += dU.T @ U @ dV.T @ V
    return PU @ RV + RV @ PU - PV @ RU - RU @ PV + 2 * (N - Np)


def relu_breaking_matrix(theta: ArrayLike, model: Model, deltas: ArrayLike) -> np.ndarray:
    """B~_ReLU (Appendix D, as read in :mod:`derivations.central_flow.relu`) for Sigma = deltas deltas^T.

    B~_ReLU = P_U R_alpha + R_alpha P_U - Pi R_U - R_U Pi + 2 (N_e - N'_e); h_j' = -eta (B~_ReLU)_jj.
    """
    X = model.data["X"]
    U, V = _blocks(theta, model.shape)
    S = (X @ V > 0).astype(np.float64)
    P = S * (X @ V)  # rows pi_i
    PU, Pi = U.T @ U, P.T @ P
    r = model.shape[2]
    RU, Ra, Ne, Nep = (np.zeros((r, r)) for _ in range(4))
    for dU, dV in _deltas(deltas, model.shape):
        Al = S * (X @ dV)  # rows alpha_i
        RU += dU.T @ dU
        Ra += Al.T @ Al
        Ne += Al.T @ P @ dU.T @ U
        Nep += dU.T @ U @ Al.T @ P
    return PU @ Ra + Ra @ PU - Pi @ RU - RU @ Pi + 2 * (Ne - Nep)


def fixed_gate_ratio(theta: ArrayLike, model: Model, q: ArrayLike, sigma2: float) -> float:
    """min_{i,j} |z_ij| / |dz_ij|, z = X V, dz = sqrt(sigma^2) X q_V (Figures 3-4); > 1: both sides keep the gates.

    Pairs with dz_ij = 0 never cross and are skipped (inf if all are).
    """
    if model.preacts is None:
        raise ValueError("model must be a ReLU model (relu_model)")
    Z = model.preacts(np.asarray(theta, dtype=np.float64))
    _, qV = _blocks(q, model.shape)
    dZ = np.sqrt(max(float(sigma2), 0.0)) * (model.data["X"] @ qV)
    mask = dZ != 0
    return float(np.min(np.abs(Z[mask]) / np.abs(dZ[mask]))) if mask.any() else float("inf")
