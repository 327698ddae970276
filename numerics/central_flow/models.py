"""Float64 losses, gradients and exact dense Hessians of the central-flow paper's three small models.

Parameters are flat float64 vectors, stacked row-major: theta = (u, v) for the scalar model,
theta = (vec U, vec V) otherwise (U[0, 0], U[0, 1], ..., then V). The losses (readings
stated in :mod:`derivations.central_flow`):

- scalar: L = (u v - y)^2 / 2;
- matrix factorisation: L = ||U V^T - Y||_F^2 / 2, U in R^{n x r}, V in R^{m x r}, Y in R^{n x m};
- two-layer ReLU: L = (1/2) sum_i |U relu(V^T x_i) - y_i|^2, U in R^{n x r}, V in R^{d x r},
  X in R^{N x d} (rows x_i), Y in R^{N x n}. Its Hessian is the one of the quadratic-in-blocks
  loss of the activation region containing theta (gates 1[x_i^T v_j > 0]); on a boundary
  (some x_i^T v_j = 0) it does not exist and ``relu_hessian`` raises ``ValueError``.

All Hessians are exact (closed-form blocks, no differencing). Every public function
validates its inputs and raises ``ValueError`` naming the bad parameter.

The flows use each model as a :class:`Model` (built by :func:`scalar_model`, :func:`mf_model`,
:func:`relu_model`): its loss, gradient and Hessian, optionally in a fixed ReLU gate pattern,
and the curvature gradient grad_theta (q^T H(theta) q) at a fixed q, which carries the third
derivatives the central flow needs (:func:`curvature_gradient`). Closed forms:

- matrix factorisation, L = |U V^T - Y|_F^2 / 2, q = (dU, dV), J = dU V^T + U dV^T, K = dU dV^T:
  q^T H q = |J|^2 + 2 <U V^T - Y, K>, gradient (2 J dV + 2 K V, 2 J^T dU + 2 K^T U);
- the scalar model is the case n = m = r = 1;
- two-layer ReLU in the activation region of theta (gates S fixed), rows a_i = S_i * (V^T x_i),
  alpha_i = S_i * (dV^T x_i), e_i = U a_i - y_i, j_i = dU a_i + U alpha_i, k_i = dU alpha_i:
  q^T H q = sum_i |j_i|^2 + 2 e_i . k_i, gradient (2 sum_i j_i alpha_i^T + k_i a_i^T,
  sum_i x_i (S_i * 2 (dU^T j_i + U^T k_i))^T).

>>> scalar_loss(np.array([2.0, 1.5]), 1.0)
2.0
>>> scalar_hessian(np.array([2.0, 1.5]), 1.0).tolist()
[[2.25, 5.0], [5.0, 4.0]]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from numerics.validation import integer, positive

__all__ = [
    "scalar_loss",
    "scalar_grad",
    "scalar_hessian",
    "mf_unpack",
    "mf_pack",
    "mf_loss",
    "mf_grad",
    "mf_hessian",
    "relu_gates",
    "relu_loss",
    "relu_grad",
    "relu_hessian",
    "Model",
    "scalar_model",
    "mf_model",
    "relu_model",
    "curvature_gradient",
]


def _finite_real(x, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    return x


def _array(a, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(a)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a {ndim}-D array of finite real numbers") from exc
    if arr.dtype == object or arr.dtype.kind not in "biuf" or arr.dtype.kind == "b":
        raise ValueError(f"{name} must be a {ndim}-D array of finite real numbers; got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers")
    return arr


def _rank(r) -> int:
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Integral) or r < 1:
        raise ValueError(f"r (the inner dimension) must be an integer >= 1; got {r!r}")
    return int(r)


def _positive(x, name: str) -> float:
    return positive(x, name)


def _count(k, name: str, low: int = 1) -> int:
    return integer(k, name, low)


def _theta(theta, dim: int, name: str = "theta0") -> np.ndarray:
    try:
        arr = np.asarray(theta)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a 1-D array of {dim} finite real numbers") from exc
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a 1-D array of finite real numbers; got dtype {arr.dtype}")
    if arr.shape != (dim,):
        raise ValueError(f"{name} must have shape ({dim},); got {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite numbers")
    return arr


# --- scalar model ---------------------------------------------------------------------------------


def _scalar_args(theta, y):
    theta = _array(theta, "theta", 1)
    if theta.shape != (2,):
        raise ValueError(f"theta must have shape (2,) = (u, v); got {theta.shape}")
    return theta[0], theta[1], _finite_real(y, "y")


def scalar_loss(theta: ArrayLike, y: float) -> float:
    """L = (u v - y)^2 / 2 for theta = (u, v)."""
    u, v, y = _scalar_args(theta, y)
    return float(0.5 * (u * v - y) ** 2)


def scalar_grad(theta: ArrayLike, y: float) -> np.ndarray:
    """grad L = (u v - y) (v, u)."""
    u, v, y = _scalar_args(theta, y)
    e = u * v - y
    return np.array([e * v, e * u])


def scalar_hessian(theta: ArrayLike, y: float) -> np.ndarray:
    """H = [[v^2, 2 u v - y], [2 u v - y, u^2]]."""
    u, v, y = _scalar_args(theta, y)
    b = 2.0 * u * v - y
    return np.array([[v * v, b], [b, u * u]])


# --- matrix factorisation -------------------------------------------------------------------------


def mf_unpack(theta: ArrayLike, n: int, m: int, r: int) -> tuple[np.ndarray, np.ndarray]:
    """(U, V) from the flat row-major theta of length (n + m) r."""
    for name, k in (("n", n), ("m", m)):
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {k!r}")
    r = _rank(r)
    theta = _array(theta, "theta", 1)
    if theta.shape != ((n + m) * r,):
        raise ValueError(f"theta must have length (n + m) r = {(n + m) * r}; got {theta.shape[0]}")
    return theta[: n * r].reshape(n, r), theta[n * r :].reshape(m, r)


def mf_pack(U: ArrayLike, V: ArrayLike) -> np.ndarray:
    """The flat theta of (U, V); U and V must have the same number of columns r."""
    U, V = _array(U, "U", 2), _array(V, "V", 2)
    if U.shape[1] != V.shape[1]:
        raise ValueError(f"U and V must have the same number of columns; got {U.shape} and {V.shape}")
    return np.concatenate([U.ravel(), V.ravel()])


def _mf_args(theta, Y, r) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Y = _array(Y, "Y", 2)
    U, V = mf_unpack(theta, Y.shape[0], Y.shape[1], r)
    return U, V, Y


def mf_loss(theta: ArrayLike, Y: ArrayLike, r: int) -> float:
    """L = ||U V^T - Y||_F^2 / 2."""
    U, V, Y = _mf_args(theta, Y, r)
    E = U @ V.T - Y
    return 0.5 * float(np.sum(E * E))


def mf_grad(theta: ArrayLike, Y: ArrayLike, r: int) -> np.ndarray:
    """grad L = (E V, E^T U), E = U V^T - Y."""
    U, V, Y = _mf_args(theta, Y, r)
    E = U @ V.T - Y
    return np.concatenate([(E @ V).ravel(), (E.T @ U).ravel()])


def mf_hessian(theta: ArrayLike, Y: ArrayLike, r: int) -> np.ndarray:
    """The exact (n + m) r square Hessian.

    d2L/dU_ia dU_jb = delta_ij (V^T V)_ab;  d2L/dV_ka dV_lb = delta_kl (U^T U)_ab;
    d2L/dU_ia dV_lb = U_ib V_la + delta_ab E_il.
    """
    U, V, Y = _mf_args(theta, Y, r)
    n, m = Y.shape
    E = U @ V.T - Y
    Huu = np.kron(np.eye(n), V.T @ V)
    Hvv = np.kron(np.eye(m), U.T @ U)
    Huv = np.einsum("ib,la->ialb", U, V) + np.einsum("ab,il->ialb", np.eye(r), E)
    Huv = Huv.reshape(n * r, m * r)
    return np.block([[Huu, Huv], [Huv.T, Hvv]])


# --- two-layer ReLU -------------------------------------------------------------------------------


def _relu_args(theta, X, Y, r) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    X, Y = _array(X, "X", 2), _array(Y, "Y", 2)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X and Y must have the same number of rows (samples); got {X.shape[0]} and {Y.shape[0]}")
    if X.shape[0] < 1:
        raise ValueError("X must hold at least one sample")
    U, V = mf_unpack(theta, Y.shape[1], X.shape[1], r)
    return U, V, X, Y


def relu_gates(theta: ArrayLike, X: ArrayLike, Y: ArrayLike, r: int) -> np.ndarray:
    """The N x r gate pattern 1[x_i^T v_j > 0] (float 0/1)."""
    _, V, X, _ = _relu_args(theta, X, Y, r)
    return (X @ V > 0).astype(np.float64)


def relu_loss(theta: ArrayLike, X: ArrayLike, Y: ArrayLike, r: int) -> float:
    """L = (1/2) sum_i |U relu(V^T x_i) - y_i|^2."""
    U, V, X, Y = _relu_args(theta, X, Y, r)
    E = np.maximum(X @ V, 0.0) @ U.T - Y
    return 0.5 * float(np.sum(E * E))


def relu_grad(theta: ArrayLike, X: ArrayLike, Y: ArrayLike, r: int) -> np.ndarray:
    """grad L, with relu'(0) := 0 on a boundary: (sum_i e_i a_i^T, sum_i x_i (s_i * U^T e_i)^T)."""
    U, V, X, Y = _relu_args(theta, X, Y, r)
    Z = X @ V
    S = (Z > 0).astype(np.float64)
    Acts = S * Z  # rows a_i = D_i V^T x_i
    E = Acts @ U.T - Y  # rows e_i
    gU = E.T @ Acts
    gV = X.T @ (S * (E @ U))
    return np.concatenate([gU.ravel(), gV.ravel()])


def relu_hessian(theta: ArrayLike, X: ArrayLike, Y: ArrayLike, r: int) -> np.ndarray:
    """The exact Hessian in the activation region of theta; ValueError on a boundary.

    d2L/dU_pa dU_qb = delta_pq Pi_ab, Pi = sum_i a_i a_i^T;
    d2L/dV_ka dV_lb = sum_i s_ia s_ib x_ik x_il (U^T U)_ab;
    d2L/dU_pa dV_lb = sum_i (U_pb s_ib x_il a_ia + e_ip delta_ab s_ia x_il).
    """
    U, V, X, Y = _relu_args(theta, X, Y, r)
    n, d = U.shape[0], V.shape[0]
    Z = X @ V
    if np.any(Z == 0.0):
        raise ValueError("theta lies on an activation boundary (some x_i^T v_j == 0): the Hessian does not exist there")
    S = (Z > 0).astype(np.float64)
    Acts = S * Z
    E = Acts @ U.T - Y
    Huu = np.kron(np.eye(n), Acts.T @ Acts)
    Hvv = np.einsum("ia,ib,ik,il->kalb", S, S, X, X) * (U.T @ U)[None, :, None, :]
    Hvv = Hvv.reshape(d * r, d * r)
    Huv = np.einsum("pb,ib,il,ia->palb", U, S, X, Acts) + np.einsum("ip,ab,ia,il->palb", E, np.eye(r), S, X)
    Huv = Huv.reshape(n * r, d * r)
    return np.block([[Huu, Huv], [Huv.T, Hvv]])


# --- the models as the flows use them -------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A loss with exact float64 derivatives, as the flows use it.

    ``grad(theta, gates=None, weights=None)``, ``hessian(theta, gates=None)`` and
    ``curvature_grad(theta, q, gates=None)`` (grad_theta (q^T H(theta) q) at fixed q) take the
    ReLU gate pattern to use (N x r, 0/1; default: the pattern at theta) and ignore it for the
    polynomial models; ``weights`` replaces the gates in the backward pass of the first layer
    (the sliding weights of a Filippov solution, see :func:`numerics.central_flow.flows.gradient_flow`).
    ``shape`` is (n, m, r): U is n x r, V is m x r (m = d, the input dimension, for ReLU).
    ``preacts`` (ReLU only) maps theta to the N x r pre-activations z_ij = x_i^T v_j.
    """

    name: str
    dim: int
    shape: tuple[int, int, int]
    loss: Callable[..., float]
    grad: Callable[..., np.ndarray]
    hessian: Callable[..., np.ndarray]
    curvature_grad: Callable[..., np.ndarray]
    preacts: Callable[..., np.ndarray] | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def gates(self, theta: ArrayLike) -> np.ndarray | None:
        """The gate pattern 1[z_ij > 0] (float), or None for the polynomial models."""
        return None if self.preacts is None else (self.preacts(theta) > 0).astype(np.float64)


def _mf_curv(U: np.ndarray, V: np.ndarray, dU: np.ndarray, dV: np.ndarray) -> np.ndarray:
    J = dU @ V.T + U @ dV.T
    K = dU @ dV.T
    return np.concatenate([(2 * J @ dV + 2 * K @ V).ravel(), (2 * J.T @ dU + 2 * K.T @ U).ravel()])


def scalar_model(y: float) -> Model:
    """L(u, v) = (u v - y)^2 / 2 (Appendix B), theta = (u, v).

    >>> m = scalar_model(1.0); m.dim, m.shape
    (2, (1, 1, 1))
    """
    y = _finite_real(y, "y")

    def curv(theta, q, gates=None):
        u, v = theta
        a, b = q
        return np.array([4 * v * a * b + 2 * u * b * b, 2 * v * a * a + 4 * u * a * b])

    return Model(
        "scalar",
        2,
        (1, 1, 1),
        lambda th: scalar_loss(th, y),
        lambda th, gates=None, weights=None: scalar_grad(th, y),
        lambda th, gates=None: scalar_hessian(th, y),
        curv,
        data={"y": y},
    )


def mf_model(Y: ArrayLike, r: int) -> Model:
    """L(U, V) = |U V^T - Y|_F^2 / 2 (Appendix C), U in R^{n x r}, V in R^{m x r}, theta = (vec U, vec V).

    >>> mf_model(np.eye(3), 2).dim
    12
    """
    Y = _array(Y, "Y", 2)
    r = _rank(r)
    n, m = Y.shape

    def curv(theta, q, gates=None):
        U, V = theta[: n * r].reshape(n, r), theta[n * r :].reshape(m, r)
        dU, dV = q[: n * r].reshape(n, r), q[n * r :].reshape(m, r)
        return _mf_curv(U, V, dU, dV)

    return Model(
        f"mf({n},{m},{r})",
        (n + m) * r,
        (n, m, r),
        lambda th: mf_loss(th, Y, r),
        lambda th, gates=None, weights=None: mf_grad(th, Y, r),
        lambda th, gates=None: mf_hessian(th, Y, r),
        curv,
        data={"Y": Y},
    )


def relu_model(X: ArrayLike, Y: ArrayLike, r: int) -> Model:
    """L = (1/2) sum_i |U relu(V^T x_i) - y_i|^2 (Appendix D), U in R^{n x r}, V in R^{d x r}.

    With ``gates=None`` the derivatives are those of :func:`relu_grad` and :func:`relu_hessian` (the
    activation region of theta); with ``gates`` they are those of that region's polynomial
    loss (1/2) sum_i |U D_i V^T x_i - y_i|^2, defined on both sides of a boundary.

    >>> relu_model(np.eye(2), np.ones((2, 1)), 3).shape
    (1, 2, 3)
    """
    X, Y = _array(X, "X", 2), _array(Y, "Y", 2)
    r = _rank(r)
    if X.shape[0] != Y.shape[0] or X.shape[0] < 1:
        raise ValueError(f"X and Y must have the same number (>= 1) of rows; got {X.shape[0]} and {Y.shape[0]}")
    n, d = Y.shape[1], X.shape[1]

    def parts(theta, gates):
        U, V = theta[: n * r].reshape(n, r), theta[n * r :].reshape(d, r)
        Z = X @ V
        S = (Z > 0).astype(np.float64) if gates is None else gates
        return U, V, Z, S

    def grad(theta, gates=None, weights=None):
        if gates is None and weights is None:
            return relu_grad(theta, X, Y, r)
        U, V, Z, S = parts(theta, gates)
        A = S * Z
        E = A @ U.T - Y
        W = S if weights is None else weights
        return np.concatenate([(E.T @ A).ravel(), (X.T @ (W * (E @ U))).ravel()])

    def hessian(theta, gates=None):
        if gates is None:
            return relu_hessian(theta, X, Y, r)
        U, V, Z, S = parts(theta, gates)
        A = S * Z
        E = A @ U.T - Y
        Huu = np.kron(np.eye(n), A.T @ A)
        Hvv = (np.einsum("ia,ib,ik,il->kalb", S, S, X, X) * (U.T @ U)[None, :, None, :]).reshape(d * r, d * r)
        Huv = np.einsum("pb,ib,il,ia->palb", U, S, X, A) + np.einsum("ip,ab,ia,il->palb", E, np.eye(r), S, X)
        Huv = Huv.reshape(n * r, d * r)
        return np.block([[Huu, Huv], [Huv.T, Hvv]])

    def curv(theta, q, gates=None):
        U, V, Z, S = parts(theta, gates)
        dU, dV = q[: n * r].reshape(n, r), q[n * r :].reshape(d, r)
        A, Al = S * Z, S * (X @ dV)
        J = A @ dU.T + Al @ U.T
        Kr = Al @ dU.T
        gU = 2 * (J.T @ Al + Kr.T @ A)
        gV = X.T @ (S * (2 * (J @ dU + Kr @ U)))
        return np.concatenate([gU.ravel(), gV.ravel()])

    def preacts(theta):
        return X @ np.asarray(theta, dtype=np.float64)[..., n * r :].reshape(d, r)

    return Model(
        f"relu({n},{d},{r},N={X.shape[0]})",
        (n + d) * r,
        (n, d, r),
        lambda th: relu_loss(th, X, Y, r),
        grad,
        hessian,
        curv,
        preacts,
        data={"X": X, "Y": Y},
    )


def curvature_gradient(model: Model, theta: ArrayLike, q: ArrayLike) -> np.ndarray:
    """grad_theta (q^T H(theta) q) at fixed q (closed forms in the module docstring).

    >>> m = scalar_model(1.0)
    >>> curvature_gradient(m, [1.0, 2.0], [1.0, 0.0]).tolist()
    [0.0, 4.0]
    """
    theta = _theta(theta, model.dim, "theta")
    q = _theta(q, model.dim, "q")
    return model.curvature_grad(theta, q)
