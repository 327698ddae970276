"""Gradient descent, gradient flow, the central flow and the hybrid flow for the central-flow paper's models.

Time runs in GD steps: one unit of time is one step of size eta, so every flow carries the
factor eta (Section 3 of arXiv 2611.06718):

- gradient descent (GD): theta_{k+1} = theta_k - eta grad L(theta_k);
- gradient flow (GF): theta' = -eta grad L;
- central flow (CF; Cohen et al. 2025, the paper's Section 3):
  theta' = -eta grad L - (eta/2) grad_theta <H(theta), Sigma>, with
  Sigma = sum_i s_i q_i q_i^T over the unit eigenvectors q_i of the k critical Hessian
  eigenvalues (those at the stability edge 2/eta) and s_i = sigma_i^2 >= 0;
- hybrid flow: GF until lambda_max(H) reaches 2/eta, then CF (the paper's "hybrid central
  flow", Figures 1, 2 and 4), back to GF if the sharpness leaves the edge.

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

c_i needs third derivatives of the loss. They enter only through grad_theta (q^T H(theta) q) at
a fixed q, which each model gives in closed form (:func:`curvature_gradient`):

- matrix factorisation, L = |U V^T - Y|_F^2 / 2, q = (dU, dV), J = dU V^T + U dV^T, K = dU dV^T:
  q^T H q = |J|^2 + 2 <U V^T - Y, K>, gradient (2 J dV + 2 K V, 2 J^T dU + 2 K^T U);
- the scalar model is the case n = m = r = 1;
- two-layer ReLU in the activation region of theta (gates S fixed), rows a_i = S_i * (V^T x_i),
  alpha_i = S_i * (dV^T x_i), e_i = U a_i - y_i, j_i = dU a_i + U alpha_i, k_i = dU alpha_i:
  q^T H q = sum_i |j_i|^2 + 2 e_i . k_i, gradient (2 sum_i j_i alpha_i^T + k_i a_i^T,
  sum_i x_i (S_i * 2 (dU^T j_i + U^T k_i))^T).

Sharpness comes from the dense exact Hessian of :mod:`numerics.central_flow.models`
(``numpy.linalg.eigh``), with ``scipy.sparse.linalg.eigsh`` as a cross-check (:func:`sharpness`).

>>> model = scalar_model(1.0)
>>> traj = gradient_flow(model, np.array([1.2, 0.2]), eta=0.9, T=5.0, t_eval=[5.0])
>>> bool(abs(law(traj.theta[-1], model) - law(np.array([1.2, 0.2]), model)) < 1e-10)
True
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import nnls
from scipy.sparse.linalg import eigsh

from numerics.central_flow import models

__all__ = [
    "Model",
    "scalar_model",
    "mf_model",
    "relu_model",
    "curvature_gradient",
    "sharpness",
    "critical_directions",
    "oscillation_variances",
    "oscillation_covariance",
    "central_flow_velocity",
    "gradient_descent",
    "midpoints",
    "gradient_flow",
    "central_flow",
    "hybrid_flow",
    "Trajectory",
    "balancedness",
    "balancedness_rate",
    "law",
    "mf_breaking_matrix",
    "relu_breaking_matrix",
    "fixed_gate_ratio",
    "philox",
    "SETTINGS",
    "scalar_setting",
    "mf_setting",
    "relu_setting",
    "RTOL",
    "ATOL",
]

RTOL = 1e-12  # default relative tolerance of the adaptive ODE solver (DOP853)
ATOL = 1e-14  # default absolute tolerance of the adaptive ODE solver
EDGE_LEAVE = 1e-9  # CF -> GF when the lowest critical eigenvalue falls below (1 - EDGE_LEAVE) 2/eta
MAX_SEGMENTS = 200  # switches (modes, ReLU gates) of one run before it gives up (chattering guard)


# --- validation -----------------------------------------------------------------------------------------


def _positive(x, name: str) -> float:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real) or not np.isfinite(float(x)) or x <= 0:
        raise ValueError(f"{name} must be a finite real number > 0; got {x!r}")
    return float(x)


def _count(k, name: str, low: int = 1) -> int:
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {k!r}")
    return int(k)


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


def _t_eval(t_eval, T: float) -> np.ndarray:
    if t_eval is None:
        return np.array([T])
    arr = np.asarray(t_eval, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)):
        raise ValueError("t_eval must be a non-empty 1-D array of finite times")
    if np.any(np.diff(arr) <= 0) or arr[0] < 0 or arr[-1] > T:
        raise ValueError(f"t_eval must be strictly increasing inside [0, T] = [0, {T}]")
    return arr


# --- models ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Model:
    """A loss with exact float64 derivatives, as the flows use it.

    ``grad(theta, gates=None, weights=None)``, ``hessian(theta, gates=None)`` and
    ``curvature_grad(theta, q, gates=None)`` (grad_theta (q^T H(theta) q) at fixed q) take the
    ReLU gate pattern to use (N x r, 0/1; default: the pattern at theta) and ignore it for the
    polynomial models; ``weights`` replaces the gates in the backward pass of the first layer
    (the sliding weights of a Filippov solution, see :func:`gradient_flow`). ``shape`` is
    (n, m, r): U is n x r, V is m x r (m = d, the input dimension, for ReLU). ``preacts`` (ReLU
    only) maps theta to the N x r pre-activations z_ij = x_i^T v_j.
    """

    name: str
    dim: int
    shape: tuple
    loss: Callable
    grad: Callable
    hessian: Callable
    curvature_grad: Callable
    preacts: Callable | None = None
    data: dict = field(default_factory=dict)

    def gates(self, theta):
        """The gate pattern 1[z_ij > 0] (float), or None for the polynomial models."""
        return None if self.preacts is None else (self.preacts(theta) > 0).astype(np.float64)


def _mf_curv(U, V, dU, dV):
    J = dU @ V.T + U @ dV.T
    K = dU @ dV.T
    return np.concatenate([(2 * J @ dV + 2 * K @ V).ravel(), (2 * J.T @ dU + 2 * K.T @ U).ravel()])


def scalar_model(y) -> Model:
    """L(u, v) = (u v - y)^2 / 2 (Appendix B), theta = (u, v).

    >>> m = scalar_model(1.0); m.dim, m.shape
    (2, (1, 1, 1))
    """
    y = models._finite_real(y, "y")

    def curv(theta, q, gates=None):
        u, v = theta
        a, b = q
        return np.array([4 * v * a * b + 2 * u * b * b, 2 * v * a * a + 4 * u * a * b])

    return Model(
        "scalar",
        2,
        (1, 1, 1),
        lambda th: models.scalar_loss(th, y),
        lambda th, gates=None, weights=None: models.scalar_grad(th, y),
        lambda th, gates=None: models.scalar_hessian(th, y),
        curv,
        data={"y": y},
    )


def mf_model(Y, r) -> Model:
    """L(U, V) = |U V^T - Y|_F^2 / 2 (Appendix C), U in R^{n x r}, V in R^{m x r}, theta = (vec U, vec V).

    >>> mf_model(np.eye(3), 2).dim
    12
    """
    Y = models._array(Y, "Y", 2)
    r = models._rank(r)
    n, m = Y.shape

    def curv(theta, q, gates=None):
        U, V = theta[: n * r].reshape(n, r), theta[n * r :].reshape(m, r)
        dU, dV = q[: n * r].reshape(n, r), q[n * r :].reshape(m, r)
        return _mf_curv(U, V, dU, dV)

    return Model(
        f"mf({n},{m},{r})",
        (n + m) * r,
        (n, m, r),
        lambda th: models.mf_loss(th, Y, r),
        lambda th, gates=None, weights=None: models.mf_grad(th, Y, r),
        lambda th, gates=None: models.mf_hessian(th, Y, r),
        curv,
        data={"Y": Y},
    )


def relu_model(X, Y, r) -> Model:
    """L = (1/2) sum_i |U relu(V^T x_i) - y_i|^2 (Appendix D), U in R^{n x r}, V in R^{d x r}.

    With ``gates=None`` the derivatives are those of :mod:`numerics.central_flow.models` (the
    activation region of theta); with ``gates`` they are those of that region's polynomial
    loss (1/2) sum_i |U D_i V^T x_i - y_i|^2, defined on both sides of a boundary.

    >>> relu_model(np.eye(2), np.ones((2, 1)), 3).shape
    (1, 2, 3)
    """
    X, Y = models._array(X, "X", 2), models._array(Y, "Y", 2)
    r = models._rank(r)
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
            return models.relu_grad(theta, X, Y, r)
        U, V, Z, S = parts(theta, gates)
        A = S * Z
        E = A @ U.T - Y
        W = S if weights is None else weights
        return np.concatenate([(E.T @ A).ravel(), (X.T @ (W * (E @ U))).ravel()])

    def hessian(theta, gates=None):
        if gates is None:
            return models.relu_hessian(theta, X, Y, r)
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
        lambda th: models.relu_loss(th, X, Y, r),
        grad,
        hessian,
        curv,
        preacts,
        data={"X": X, "Y": Y},
    )


def curvature_gradient(model: Model, theta, q) -> np.ndarray:
    """grad_theta (q^T H(theta) q) at fixed q (closed forms in the module docstring).

    >>> m = scalar_model(1.0)
    >>> curvature_gradient(m, [1.0, 2.0], [1.0, 0.0]).tolist()
    [0.0, 4.0]
    """
    theta = _theta(theta, model.dim, "theta")
    q = _theta(q, model.dim, "q")
    return model.curvature_grad(theta, q)


# --- sharpness and the oscillation covariance -------------------------------------------------------------


def sharpness(model: Model, theta, k: int = 1, method: str = "dense") -> np.ndarray:
    """The k largest Hessian eigenvalues, descending: dense ``eigh`` or ``eigsh`` (Lanczos) cross-check.

    At a zero-loss point of the scalar model lambda_max = u^2 + v^2 (Appendix B):

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


def critical_directions(model: Model, theta, k: int, gates=None) -> tuple[np.ndarray, np.ndarray]:
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


def oscillation_covariance(g: np.ndarray, Cab: dict, k: int) -> np.ndarray:
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


def central_flow_velocity(model: Model, theta, eta, k: int = 1) -> dict:
    """theta' of the central flow with the top k eigen-directions critical, and what it used.

    Returns a dict: ``velocity``, ``X`` (k x k, Sigma = Q X Q^T), ``sigma2`` (the eigenvalues of X,
    descending; for k = 1 the variance s), ``deltas`` (D x k, Sigma = deltas deltas^T), ``Q``
    (D x k unit eigenvectors), ``lam`` (the k eigenvalues), ``grad`` (grad L), ``C`` (k x D,
    grad lambda_i = grad_theta (q_i^T H q_i)).

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


def _cf_velocity(model: Model, theta: np.ndarray, eta: float, k: int, gates=None) -> dict:
    lam, Q = critical_directions(model, theta, k, gates)
    g = model.grad(theta, gates)
    Cab = {}
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


# --- flows ------------------------------------------------------------------------------------------------


def gradient_descent(model: Model, theta0, eta, steps: int) -> np.ndarray:
    """The GD iterates theta_0..theta_steps (array of shape (steps + 1, D)).

    >>> it = gradient_descent(scalar_model(1.0), [1.0, 0.5], 0.1, 3); it.shape
    (4, 2)
    """
    theta = _theta(theta0, model.dim)
    eta = _positive(eta, "eta")
    steps = _count(steps, "steps")
    out = np.empty((steps + 1, model.dim))
    out[0] = theta
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(steps):
            theta = theta - eta * model.grad(theta)
            if not np.all(np.isfinite(theta)):
                raise FloatingPointError(f"GD diverged at step {k + 1} (eta = {eta})")
            out[k + 1] = theta
    return out


def midpoints(iterates) -> np.ndarray:
    """(theta_k + theta_{k+1}) / 2: the adjacent-iterate midpoint that removes the period-two oscillation.

    >>> midpoints(np.array([[0.0], [2.0], [0.0]])).ravel().tolist()
    [1.0, 1.0]
    """
    it = np.asarray(iterates, dtype=np.float64)
    if it.ndim != 2 or it.shape[0] < 2:
        raise ValueError(f"iterates must be a 2-D array with at least 2 rows; got shape {it.shape}")
    return 0.5 * (it[1:] + it[:-1])


@dataclass
class Trajectory:
    """A flow sampled at times ``t``: ``theta[i]`` at ``t[i]``; ``k[i]`` critical directions there (0: GF).

    ``events`` lists a dict per switch (``t``, ``kind``: 'mode' with ``k`` = (before, after) and
    the state ``theta`` there, or 'cross' / 'slide' / 'unslide' of a ReLU gate ``pair``);
    ``contact`` is the first time the sharpness reached 2/eta (None if never); ``nfev`` counts
    right-hand-side calls; ``stop`` says why the run ended before T (None if it reached T).
    """

    t: np.ndarray
    theta: np.ndarray
    k: np.ndarray
    events: list
    contact: float | None
    nfev: int
    stop: str | None = None


def _tolerances(rtol, atol):
    return _positive(rtol, "rtol"), _positive(atol, "atol")


def _event(fn, direction):
    fn.terminal, fn.direction = True, float(direction)
    return fn


def _sliding_weights(model: Model, y, G, sliding) -> np.ndarray:
    """Backward-pass weights W (N x r): the gates, with the Filippov weight alpha_ij on each sliding pair.

    On a sliding pair z_ij = 0; alpha solves x_i^T v_j' = 0 for every sliding (i, j) of neuron j
    (the equivalent control: the velocity is the convex combination of the two sides'
    velocities that stays on the boundary).
    """
    W = G.copy()
    if not sliding:
        return W
    n, d, r = model.shape
    X, Y = model.data["X"], model.data["Y"]
    U, V = y[: n * r].reshape(n, r), y[n * r :].reshape(d, r)
    A = G * (X @ V)
    c = (A @ U.T - Y) @ U  # c_ij = (U^T e_i)_j
    XX = X @ X.T
    for j in sorted({jj for _, jj in sliding}):
        rows = sorted(i for i, jj in sliding if jj == j)
        free = [i for i in range(X.shape[0]) if i not in rows]
        M = XX[np.ix_(rows, rows)] * c[rows, j][None, :]
        rhs = -(XX[np.ix_(rows, free)] @ (G[free, j] * c[free, j]))
        W[rows, j] = np.linalg.lstsq(M, rhs, rcond=None)[0]
    return W


def _settle_sliding(model: Model, y, G, sliding, events, t) -> None:
    """Release sliding pairs whose joint Filippov weight left [0, 1] (a new pair can push an old one off).

    alpha < 0: the flow leaves the boundary on the inactive side (gate 0); alpha > 1: on the
    active side (gate 1). One pair is released at a time (the farthest outside) and the rest re-solved.
    """
    while sliding:
        Gs = G.copy()
        for i, j in sliding:
            Gs[i, j] = 0.0
        W = _sliding_weights(model, y, Gs, sliding)
        out = {p: max(-W[p], W[p] - 1.0) for p in sliding}
        worst = max(out, key=out.get)
        if out[worst] <= 0:
            return
        sliding.discard(worst)
        G[worst] = 0.0 if W[worst] < 0 else 1.0
        events.append({"t": t, "kind": "unslide", "pair": worst, "gate": int(G[worst])})


def _velocity(model: Model, y, eta, k, G, sliding):
    if k == 0:
        if G is None:
            return -eta * model.grad(y)
        Gact = G.copy()
        for i, j in sliding:
            Gact[i, j] = 0.0  # z_ij = 0 there, so the activation is 0 on either side
        return -eta * model.grad(y, Gact, _sliding_weights(model, y, Gact, sliding))
    return _cf_velocity(model, y, eta, k, G)["velocity"]


def _zdot(model: Model, y, vel, i, j) -> float:
    n, d, r = model.shape
    return float(model.data["X"][i] @ vel[n * r :].reshape(d, r)[:, j])


def _piecewise(model, theta0, eta, T, grid, policy, k_fixed, k_max, rtol, atol) -> Trajectory:
    """Integrate GF (policy 'gf'), the CF with k_fixed directions ('cf') or the hybrid flow ('hybrid').

    Segments are smooth: fixed mode k, fixed ReLU gates G and a fixed set of sliding pairs;
    every switch is an event located by the solver (see :func:`hybrid_flow`, :func:`gradient_flow`).
    """
    edge = 2.0 / eta
    G = model.gates(theta0)
    if G is not None and np.any(model.preacts(theta0) == 0):
        raise ValueError("theta0 lies on an activation boundary (some x_i^T v_j == 0)")
    sliding: set = set()

    def eigs(y):
        return np.linalg.eigvalsh(model.hessian(y, G))[::-1]

    if policy == "gf":
        k = 0
    elif policy == "cf":
        k = k_fixed
    else:
        lam0 = eigs(theta0)
        if lam0[0] > edge * (1 + EDGE_LEAVE):
            raise ValueError(f"theta0 lies above the stability edge: lambda_max = {lam0[0]!r} > 2/eta = {edge!r}")
        k = int(np.sum(lam0[:k_max] >= edge * (1 - EDGE_LEAVE)))
    t0, y0 = 0.0, theta0
    ts, ys, ks, events = [], [], [], []
    contact = 0.0 if k > 0 else None
    nfev, stop = 0, None
    for _ in range(MAX_SEGMENTS):
        evs, tags = [], []
        if policy == "hybrid":
            evs.append(_event(lambda t, y, k=k: eigs(y)[k] - edge, 1))
            tags.append(("rise",))
            if k > 0:
                evs.append(_event(lambda t, y, k=k: eigs(y)[k - 1] - edge * (1 - EDGE_LEAVE), -1))
                tags.append(("fall",))
        if G is not None:
            Gslide = G.copy()
            for i, j in sliding:
                Gslide[i, j] = 0.0
            for i in range(G.shape[0]):
                for j in range(G.shape[1]):
                    if (i, j) in sliding:
                        for side in (0, 1):
                            evs.append(
                                _event(
                                    lambda t, y, i=i, j=j, side=side, Gs=Gslide: (
                                        _sliding_weights(model, y, Gs, sliding)[i, j] - side
                                    ),
                                    1 if side else -1,
                                )
                            )
                            tags.append(("unslide", i, j, side))
                    else:
                        evs.append(_event(lambda t, y, i=i, j=j: model.preacts(y)[i, j], 1 if G[i, j] == 0 else -1))
                        tags.append(("gate", i, j))
        sub = grid[(grid > t0) | ((grid == t0) & (t0 == 0.0))]
        sol = solve_ivp(
            lambda t, y, k=k: _velocity(model, y, eta, k, G, sliding),
            (t0, T),
            y0,
            method="DOP853",
            t_eval=sub if sub.size else None,
            events=evs or None,
            rtol=rtol,
            atol=atol,
        )
        if sol.status == -1:
            raise RuntimeError(f"ODE integration failed after t = {t0}: {sol.message}")
        nfev += sol.nfev
        hit = None
        if sol.status == 1:
            first = min((float(te[0]), idx) for idx, te in enumerate(sol.t_events) if te.size)
            hit = (first[0], tags[first[1]], sol.y_events[first[1]][0])
        st = np.asarray(sol.t, dtype=np.float64)
        keep = np.isin(st, sub) & (st <= (hit[0] if hit else T))
        ts.append(st[keep])
        ys.append(np.asarray(sol.y).T.reshape(st.size, model.dim)[keep])
        ks.append(np.full(int(keep.sum()), k))
        if hit is None:
            break
        t0, tag, y0 = hit
        y0 = np.array(y0, dtype=np.float64)
        if tag[0] == "rise":
            if k == k_max:
                stop = f"lambda_{k + 1} reached 2/eta at t = {t0!r} with k_max = {k_max} critical directions allowed"
                break
            if sliding:
                stop = f"the sharpness reached 2/eta at t = {t0!r} on a sliding activation boundary (no Hessian there)"
                break
            events.append({"t": t0, "kind": "mode", "k": (k, k + 1), "theta": y0.copy()})
            k += 1
            contact = t0 if contact is None else contact
        elif tag[0] == "fall":
            events.append({"t": t0, "kind": "mode", "k": (k, k - 1), "theta": y0.copy()})
            k -= 1
        elif tag[0] == "unslide":
            _, i, j, side = tag
            sliding.discard((i, j))
            G[i, j] = float(side)
            events.append({"t": t0, "kind": "unslide", "pair": (i, j), "gate": side})
            _settle_sliding(model, y0, G, sliding, events, t0)
        else:
            _, i, j = tag
            zd = {}
            for side in (0.0, 1.0):
                Gs = G.copy()
                Gs[i, j] = side
                zd[side] = _zdot(model, y0, _velocity(model, y0, eta, k, Gs, sliding), i, j)
            old = G[i, j]
            crossed = (old == 1.0 and zd[0.0] <= 0) or (old == 0.0 and zd[1.0] >= 0)
            if crossed:
                G[i, j] = 1.0 - old
                events.append({"t": t0, "kind": "cross", "pair": (i, j), "gate": int(G[i, j])})
            elif k == 0:
                sliding.add((i, j))
                events.append({"t": t0, "kind": "slide", "pair": (i, j)})
            else:
                stop = f"the central flow reached a sliding activation boundary at t = {t0!r}, pair {(i, j)}"
                break
            if k == 0:
                _settle_sliding(model, y0, G, sliding, events, t0)
            if policy == "hybrid" and crossed:
                lam = eigs(y0)
                new_k = int(np.sum(lam[: k_max + 1] >= edge * (1 - EDGE_LEAVE)))
                if new_k > k_max:
                    stop = f"after the gate change at t = {t0!r} more than k_max = {k_max} eigenvalues are at the edge"
                    break
                if new_k != k:
                    events.append({"t": t0, "kind": "mode", "k": (k, new_k), "theta": y0.copy()})
                    contact = t0 if (contact is None and new_k > 0) else contact
                    k = new_k
        if t0 >= T:
            break
    else:
        raise RuntimeError(f"more than {MAX_SEGMENTS} switches (modes, gates) before T = {T}")
    t = np.concatenate(ts) if ts else np.empty(0)
    th = np.concatenate(ys) if ys else np.empty((0, model.dim))
    return Trajectory(t, th, np.concatenate(ks) if ks else np.empty(0, int), events, contact, nfev, stop)


def gradient_flow(model: Model, theta0, eta, T, t_eval=None, rtol=RTOL, atol=ATOL) -> Trajectory:
    """theta' = -eta grad L on [0, T] (DOP853 at ``rtol``, ``atol``), sampled at ``t_eval`` (default [T]).

    For the ReLU model the flow is integrated region by region (events at z_ij = 0). Where both
    sides push the trajectory onto a boundary z_ij = 0 it slides along it (Filippov): the
    first-layer backward weight of (i, j) becomes the alpha in [0, 1] that keeps z_ij = 0, until
    alpha reaches 0 or 1. Every h_j stays conserved (v_j^T x_i = 0 kills the sliding term).
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    rtol, atol = _tolerances(rtol, atol)
    return _piecewise(model, theta0, eta, T, _t_eval(t_eval, T), "gf", 0, 0, rtol, atol)


def central_flow(model: Model, theta0, eta, T, k: int = 1, t_eval=None, rtol=RTOL, atol=ATOL) -> Trajectory:
    """The central flow with the top k eigen-directions critical throughout, on [0, T].

    Meant for starts on the stability edge; off the edge use :func:`hybrid_flow`. ReLU gate
    crossings switch to the new region's Hessian; a sliding boundary stops the run.
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    k = _count(k, "k")
    if k > model.dim:
        raise ValueError(f"k must be <= the number of parameters {model.dim}; got {k}")
    rtol, atol = _tolerances(rtol, atol)
    return _piecewise(model, theta0, eta, T, _t_eval(t_eval, T), "cf", k, k, rtol, atol)


def hybrid_flow(model: Model, theta0, eta, T, t_eval=None, k_max: int = 1, rtol=RTOL, atol=ATOL) -> Trajectory:
    """GF until lambda_max = 2/eta, then the central flow with every eigenvalue at the edge critical.

    Mode k (k critical directions, 0 = GF) switches on events located by the solver:
    k -> k + 1 when lambda_{k+1} rises through 2/eta (k < ``k_max``); k -> k - 1 when lambda_k
    falls below (1 - EDGE_LEAVE) 2/eta (the variance s_k has reached 0 and GF lowers the
    sharpness). When lambda_{k_max + 1} reaches 2/eta the run stops there (``stop`` says so):
    more critical directions than allowed. A start above the edge is refused. For the ReLU
    model a gate crossing switches to the new region's Hessian (the paper's piecewise
    continuation, Figure 4) and re-counts the eigenvalues at the edge; GF slides along a
    boundary as in :func:`gradient_flow`, the central flow stops at one.
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    k_max = _count(k_max, "k_max")
    if k_max >= model.dim:
        raise ValueError(f"k_max must be < the number of parameters {model.dim}; got {k_max}")
    rtol, atol = _tolerances(rtol, atol)
    return _piecewise(model, theta0, eta, T, _t_eval(t_eval, T), "hybrid", 0, k_max, rtol, atol)


# --- conservation laws and breaking matrices --------------------------------------------------------------


def _blocks(theta, shape):
    n, m, r = shape
    theta = np.asarray(theta, dtype=np.float64)
    return theta[..., : n * r].reshape(*theta.shape[:-1], n, r), theta[..., n * r :].reshape(*theta.shape[:-1], m, r)


def balancedness(theta, model: Model) -> np.ndarray:
    """Psi = U^T U - V^T V (r x r, stacked over leading axes of ``theta``).

    h_j = Psi_jj for ReLU; h = Psi for the scalar model.

    >>> balancedness(np.array([2.0, 1.0]), scalar_model(0.0)).tolist()
    [[3.0]]
    """
    U, V = _blocks(theta, model.shape)
    return np.swapaxes(U, -1, -2) @ U - np.swapaxes(V, -1, -2) @ V


def law(theta, model: Model):
    """The model's gradient-flow law(s): h (scalar), Psi (MF, r x r), (h_1..h_r) (ReLU)."""
    P = balancedness(theta, model)
    if model.name == "scalar":
        return P[..., 0, 0]
    if model.preacts is not None:
        return np.diagonal(P, axis1=-2, axis2=-1).copy()
    return P


def balancedness_rate(theta, velocity, model: Model) -> np.ndarray:
    """Psi' = U'^T U + U^T U' - V'^T V - V^T V' along theta' = ``velocity`` (direct differentiation)."""
    U, V = _blocks(theta, model.shape)
    dU, dV = _blocks(velocity, model.shape)
    return dU.T @ U + U.T @ dU - dV.T @ V - V.T @ dV


def _deltas(deltas, shape):
    d = np.asarray(deltas, dtype=np.float64)
    d = d.reshape(d.shape[0], -1)
    return [_blocks(d[:, i], shape) for i in range(d.shape[1])]


def mf_breaking_matrix(theta, model: Model, deltas) -> np.ndarray:
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


def relu_breaking_matrix(theta, model: Model, deltas) -> np.ndarray:
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


def fixed_gate_ratio(theta, model: Model, q, sigma2) -> float:
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


# --- the paper's experiments: settings as read (the text lost them) -------------------------------------


def philox(seed: int, stream: int) -> np.random.Generator:
    """The generator of draw ``stream`` under ``seed``: Philox keyed by (seed, stream), so draws do not depend on order.

    >>> float(philox(0, 3).random()) == float(philox(0, 3).random())
    True
    """
    seed, stream = _count(seed, "seed", 0), _count(stream, "stream", 0)
    return np.random.Generator(np.random.Philox(key=np.array([seed, stream], dtype=np.uint64)))


def _unit_spectral(G: np.ndarray) -> np.ndarray:
    return G / np.linalg.norm(G, 2)


#: Settings read for the lost ones (Appendices B-D; Figures 1-4). One step size eta = 0.9 with
#: targets of unit scale (eta |y| = 0.9 < 1, so stable zero-loss points exist); unbalanced,
#: sub-critical initialisations whose gradient flow sharpens past 2/eta.
SETTINGS = {
    "scalar": {"y": 1.0, "eta": 0.9, "T": 200.0, "u0": (1.2, 1.35), "v0": (0.1, 0.3)},
    "mf": {"n": 3, "m": 3, "r": 2, "eta": 0.9, "T": 100.0, "svals": (1.0, 0.5), "scale_U": 1.2, "scale_V": 0.3},
    "relu": {"n": 1, "d": 3, "N": 6, "r": 3, "eta": 0.9, "T": 60.0, "scale_U": 0.7, "scale_V": 0.7},
}


def scalar_setting(seed: int, draw: int) -> tuple[Model, np.ndarray, float]:
    """(model, theta0, eta) of draw ``draw``: y = 1, eta = 0.9, u0 ~ U(1.2, 1.35), v0 ~ U(0.1, 0.3).

    h0 = u0^2 - v0^2 lies in (1.35, 1.82), above the stability bound 2 sqrt(eta^-2 - y^2) = 0.969,
    while lambda_max(theta0) < 2/eta: gradient flow sharpens past the edge.
    """
    c = SETTINGS["scalar"]
    rng = philox(seed, draw)
    theta0 = np.array([rng.uniform(*c["u0"]), rng.uniform(*c["v0"])])
    return scalar_model(c["y"]), theta0, c["eta"]


def mf_setting(seed: int, draw: int) -> tuple[Model, np.ndarray, float]:
    """(model, theta0, eta) of draw ``draw``: n = m = 3, r = 2, eta = 0.9, Y = A diag(1, 1/2) B^T,

    A, B with orthonormal columns (QR of Gaussians), U0 = 1.2 G_U / |G_U|_2, V0 = 0.3 G_V / |G_V|_2
    (Gaussian G, spectral norm |.|_2): rank-2 target of unit spectral norm, unbalanced start.
    """
    c = SETTINGS["mf"]
    n, m, r = c["n"], c["m"], c["r"]
    rng = philox(seed, draw)
    A, _ = np.linalg.qr(rng.normal(size=(n, 2)))
    B, _ = np.linalg.qr(rng.normal(size=(m, 2)))
    Y = A @ np.diag(c["svals"]) @ B.T
    U = c["scale_U"] * _unit_spectral(rng.normal(size=(n, r)))
    V = c["scale_V"] * _unit_spectral(rng.normal(size=(m, r)))
    return mf_model(Y, r), models.mf_pack(U, V), c["eta"]


def relu_setting(seed: int, draw: int) -> tuple[Model, np.ndarray, float]:
    """(model, theta0, eta) of draw ``draw``: n = 1, d = 3, N = 6, r = 3, eta = 0.9,

    x_i uniform on the unit sphere, realisable targets y_i = relu(w_1^T x_i) + relu(w_2^T x_i)
    of a two-unit ReLU teacher (Gaussian w_k) scaled to |y| = 1, U0 = 0.7 G_U / |G_U|_2,
    V0 = 0.7 G_V / |G_V|_2.
    """
    c = SETTINGS["relu"]
    n, d, N, r = c["n"], c["d"], c["N"], c["r"]
    rng = philox(seed, draw)
    X = rng.normal(size=(N, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Y = np.maximum(X @ rng.normal(size=(d, 2)), 0.0).sum(axis=1, keepdims=True)
    norm = np.linalg.norm(Y)
    Y = Y / norm if norm > 0 else Y
    U = c["scale_U"] * _unit_spectral(rng.normal(size=(n, r)))
    V = c["scale_V"] * _unit_spectral(rng.normal(size=(d, r)))
    return relu_model(X, Y, r), models.mf_pack(U, V), c["eta"]
