"""Gradient descent, gradient flow, the central flow and the hybrid flow for the central-flow paper's models.

Time runs in GD steps: one unit of time is one step of size eta, so every flow carries the
factor eta (Section 3 of arXiv 2611.06718):

- gradient descent (GD): theta_{k+1} = theta_k - eta grad L(theta_k) (:func:`gradient_descent`,
  and the adjacent-iterate :func:`midpoints`);
- gradient flow (GF): theta' = -eta grad L (:func:`gradient_flow`);
- central flow (CF; Cohen et al. 2025, the paper's Section 3):
  theta' = -eta grad L - (eta/2) grad_theta <H(theta), Sigma>, with
  Sigma = sum_i s_i q_i q_i^T over the unit eigenvectors q_i of the k critical Hessian
  eigenvalues (those at the stability edge 2/eta) and s_i = sigma_i^2 >= 0 (:func:`central_flow`);
- hybrid flow: GF until lambda_max(H) reaches 2/eta, then CF (the paper's "hybrid central
  flow", Figures 1, 2 and 4), back to GF if the sharpness leaves the edge (:func:`hybrid_flow`).

ReLU activation boundaries (z_ij = x_i^T v_j = 0). A crossing switches to the new region's
Hessian (the paper's piecewise continuation, Figure 4). Where both sides push the flow onto a
boundary it slides along it. Gradient flow slides as a Filippov solution (the first-layer
backward weight of the pair becomes the alpha in [0, 1] that keeps z_ij = 0). The central flow
(k = 1) slides by the *Filippov sliding continuation of the central flow* of
:func:`sliding_velocity`: as the central flow is the gradient flow projected onto the tangent
cone of the stable set {lambda_max <= 2/eta}, the sliding central flow is gradient flow's
Filippov sliding projected onto the tangent cone of the stable sets of the regions that meet
there (a complementarity problem: each region's sharpness gradient from its own Hessian, a
variance P_b >= 0 per region at the edge), so the pre-activation stays 0 and the sharpness of
the region the flow arrived from (the *held* region) stays where it is, 2/eta when it arrives
on the edge. This is a construction of ours on the nonsmooth flow, *not* the paper's
averaged-gradient flow w' = -eta E[grad L(w + delta)] (Appendix D, 'Across activation
boundaries'), which is defined across boundaries without sliding; the two are compared in
``verify/central_flow/test_relu.py`` (CF-D.avg.across). The :class:`Trajectory` records the
sliding intervals and the held gates.

The models are the :class:`numerics.central_flow.models.Model` bundles; the oscillation
covariance Sigma and the CF velocity come from :mod:`numerics.central_flow.spectra`. The flows
are integrated by ``scipy.integrate.solve_ivp`` (DOP853, tolerances :data:`RTOL`, :data:`ATOL`),
segment by segment between switches (modes, ReLU gates) located as solver events.

>>> from numerics.central_flow.laws import law
>>> from numerics.central_flow.models import scalar_model
>>> model = scalar_model(1.0)
>>> traj = gradient_flow(model, np.array([1.2, 0.2]), eta=0.9, T=5.0, t_eval=[5.0])
>>> bool(abs(law(traj.theta[-1], model) - law(np.array([1.2, 0.2]), model)) < 1e-10)
True
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special
from scipy.integrate import solve_ivp

from numerics.central_flow import spectra
from numerics.central_flow.models import Model, _count, _positive, _theta

__all__ = [
    "gradient_descent",
    "midpoints",
    "gradient_flow",
    "central_flow",
    "hybrid_flow",
    "sliding_velocity",
    "averaged_velocity",
    "averaged_flow",
    "Trajectory",
    "RTOL",
    "ATOL",
]

RTOL = 1e-12  # default relative tolerance of the adaptive ODE solver (DOP853)
ATOL = 1e-14  # default absolute tolerance of the adaptive ODE solver
EDGE_LEAVE = 1e-9  # CF -> GF when the lowest critical eigenvalue falls below (1 - EDGE_LEAVE) 2/eta
MAX_SEGMENTS = 200  # switches (modes, ReLU gates) of one run before it gives up (chattering guard)
MAX_SAME_TIME = 16  # switches at one instant before a run stops (no consistent continuation there)


def _t_eval(t_eval: ArrayLike | None, T: float, t0: float = 0.0, open_start: bool = False) -> np.ndarray:
    """The sample times of a run from t0 to T: ``t_eval``, strictly increasing inside [t0, T] ((t0, T] with
    ``open_start``), or [T] when None; a ValueError naming the interval otherwise."""
    if t_eval is None:
        return np.array([T])
    arr = np.asarray(t_eval, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)):
        raise ValueError("t_eval must be a non-empty 1-D array of finite times")
    if np.any(np.diff(arr) <= 0) or arr[0] < t0 or (open_start and arr[0] == t0) or arr[-1] > T:
        raise ValueError(f"t_eval must be strictly increasing inside {'(' if open_start else '['}{t0!r}, {T!r}]")
    return arr


def gradient_descent(model: Model, theta0: ArrayLike, eta: float, steps: int) -> np.ndarray:
    """The GD iterates theta_0..theta_steps (array of shape (steps + 1, D)).

    >>> from numerics.central_flow.models import scalar_model
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


def midpoints(iterates: ArrayLike) -> np.ndarray:
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
    right-hand-side calls; ``stop`` says why the run ended before T (None if it reached T): a
    genuine failure (more critical directions than allowed, no consistent continuation at a
    switch), never a boundary the flow can slide on; ``stop_at`` is (t, theta) of the last switch
    handled when it stopped (None if it reached T).

    ReLU runs also record, at every sample, the held gate pattern ``gates[i]`` (N x r; on a
    sliding pair the gate of the side the flow arrived from, whose Hessian gives the sharpness
    there) and ``sliding[i]`` (N x r bool: the pairs sliding then); ``slides`` lists one dict per
    sliding interval: ``pair``, ``t0``, ``t1`` (the end, or the run's last time if it slides to
    the end), ``k0`` (the mode when it began) and ``exit`` (the gate it left to: 0, 1, or None).
    These are None / empty for the polynomial models.
    """

    t: np.ndarray
    theta: np.ndarray
    k: np.ndarray
    events: list[dict[str, Any]]
    contact: float | None
    nfev: int
    stop: str | None = None
    gates: np.ndarray | None = None
    sliding: np.ndarray | None = None
    slides: list[dict[str, Any]] = field(default_factory=list)
    stop_at: tuple[float, np.ndarray] | None = None


def _tolerances(rtol: float, atol: float) -> tuple[float, float]:
    return _positive(rtol, "rtol"), _positive(atol, "atol")


def _event(fn: Any, direction: float) -> Callable[..., float]:
    """``fn`` as a terminal ``solve_ivp`` event crossing zero in ``direction`` (attributes set on the function)."""
    fn.terminal, fn.direction = True, float(direction)
    return fn


def _sliding_weights(model: Model, y: np.ndarray, G: np.ndarray, sliding: set[tuple[int, int]]) -> np.ndarray:
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


def _settle_sliding(
    model: Model,
    y: np.ndarray,
    G: np.ndarray,
    sliding: set[tuple[int, int]],
    events: list[dict[str, Any]],
    t: float,
) -> None:
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
        worst = max(out, key=out.__getitem__)
        if out[worst] <= 0:
            return
        sliding.discard(worst)
        G[worst] = 0.0 if W[worst] < 0 else 1.0
        events.append({"t": t, "kind": "unslide", "pair": worst, "gate": int(G[worst])})


def _velocity(
    model: Model, y: np.ndarray, eta: float, k: int, G: np.ndarray | None, sliding: set[tuple[int, int]]
) -> np.ndarray:
    if k == 0:
        if G is None:
            return -eta * model.grad(y)
        Gact = G.copy()
        for i, j in sliding:
            Gact[i, j] = 0.0  # z_ij = 0 there, so the activation is 0 on either side
        return -eta * model.grad(y, Gact, _sliding_weights(model, y, Gact, sliding))
    return spectra._cf_velocity(model, y, eta, k, G)["velocity"]


def _zdot(model: Model, y: np.ndarray, vel: np.ndarray, i: int, j: int) -> float:
    n, d, r = model.shape
    return float(model.data["X"][i] @ vel[n * r :].reshape(d, r)[:, j])


# --- the sliding central flow ---------------------------------------------------------------------------

_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)
LCP_TOL = 1e-9  # case selection of the sliding complementarity problem: violations below this (relative) accepted


class _NoContinuation(ArithmeticError):
    """No solution of the sliding complementarity problem (raised inside the right-hand side; ends the run)."""


def _zrows(model: Model, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Rows a_p with a_p . v = x_i^T v_j: the rate of z_ij along a velocity v, one row per pair (i, j)."""
    n, d, r = model.shape
    X = model.data["X"]
    A = np.zeros((len(pairs), model.dim))
    for row, (i, j) in enumerate(pairs):
        A[row, n * r + np.arange(d) * r + j] = X[i]
    return A


def _corner(G: np.ndarray, pairs: list[tuple[int, int]], bits: tuple[float, ...]) -> np.ndarray:
    """The gate pattern ``G`` with the sliding pairs' gates set to ``bits`` (a corner of their gate cube)."""
    Gb = G.copy()
    for p, b in zip(pairs, bits):
        Gb[p] = b
    return Gb


def _corners(pairs: list[tuple[int, int]]) -> list[tuple[float, ...]]:
    return list(itertools.product((0.0, 1.0), repeat=len(pairs)))


def _active_corners(
    model: Model, y: np.ndarray, eta: float, G: np.ndarray, sliding: set[tuple[int, int]], policy: str
) -> set[tuple[float, ...]]:
    """The corner regions other than the held one whose stability constraint is on.

    Those with lambda_max >= (1 - EDGE_LEAVE) 2/eta (the count the hybrid flow makes on entering a
    region); every corner for the fixed-k :func:`central_flow` (``policy`` 'cf'); none for 'gf'.
    """
    if policy == "gf" or not sliding:
        return set()
    pairs = sorted(sliding)
    held = tuple(float(G[p]) for p in pairs)
    floor = (2.0 / eta) * (1 - EDGE_LEAVE)
    return {
        bits
        for bits in _corners(pairs)
        if bits != held
        and (policy == "cf" or np.linalg.eigvalsh(model.hessian(y, _corner(G, pairs, bits)))[-1] >= floor)
    }


def _slide_solve(
    model: Model,
    y: np.ndarray,
    eta: float,
    G: np.ndarray,
    sliding: set[tuple[int, int]],
    held_on: bool,
    act: set[tuple[float, ...]],
) -> dict[str, Any]:
    """The sliding central flow at y (see :func:`sliding_velocity`): the complementarity problem, solved by cases."""
    pairs = sorted(sliding)
    m = len(pairs)
    held = tuple(float(G[p]) for p in pairs)
    Gact = G.copy()
    for p in pairs:
        Gact[p] = 0.0  # z = 0 there: the activation is 0 on either side
    g0 = model.grad(y, Gact, Gact)
    cols = []
    for p in pairs:
        W = Gact.copy()
        W[p] = 1.0
        cols.append(model.grad(y, Gact, W) - g0)  # the gradient is affine in each backward weight
    v_base, Va = -eta * g0, -eta * np.stack(cols, axis=1)
    on = ([held] if held_on else []) + sorted(act)
    lam, qs, cs = [], [], []
    for bits in on:
        lb, Qb = spectra.critical_directions(model, y, 1, _corner(G, pairs, bits))
        lam.append(float(lb[0]))
        qs.append(Qb[:, 0])
        cs.append(model.curvature_grad(y, Qb[:, 0], _corner(G, pairs, bits)))
    Az = _zrows(model, pairs)
    C = np.array(cs).reshape(len(on), model.dim)
    Vp = -0.5 * eta * C.T
    vscale = float(np.abs(v_base).sum() + np.abs(Va).sum()) + _TINY
    best: tuple[float, np.ndarray, np.ndarray, np.ndarray] | None = None
    for size in range(len(on) + 1):
        for J in itertools.combinations(range(len(on)), size):
            J_ = list(J)
            rows = np.vstack([Az, C[J_]])  # z' = 0 on every sliding pair, c_b . v = 0 on the binding constraints
            x = np.linalg.lstsq(rows @ np.hstack([Va, Vp[:, J_]]), -rows @ v_base, rcond=None)[0]
            al = x[:m]
            P = np.zeros(len(on))
            P[J_] = x[m:]
            vel = v_base + Va @ al + Vp @ P
            cn = np.linalg.norm(C, axis=1) * (np.linalg.norm(vel) + vscale * _EPS)
            viol = float(
                max(
                    float(np.max(np.abs(Az @ vel))) / float(np.linalg.norm(Az) * (np.linalg.norm(vel) + vscale * _EPS)),
                    float(np.max(-P / (np.abs(P).sum() + _TINY), initial=0.0)),
                    float(np.max((C @ vel) / cn, initial=0.0)),
                )
            )
            if best is None or viol < best[0]:
                best = (viol, al, P, vel)
            if viol <= LCP_TOL:
                break
        if best is not None and best[0] <= LCP_TOL:
            break
    if best is None or not (best[0] <= LCP_TOL and np.all(np.isfinite(best[3]))):
        raise _NoContinuation(
            f"no solution of the sliding complementarity problem for the pairs {pairs} "
            f"(least violation {best[0] if best else np.inf:.3e})"
        )
    _, al, P, vel = best
    fac = np.where(np.array(held) == 1.0, al, 1.0 - al)
    w_held = float(np.prod(fac))
    Sigma = sum((Pb * np.outer(qb, qb) for Pb, qb in zip(P, qs)), np.zeros((model.dim, model.dim)))
    return {
        "velocity": vel,
        "pairs": pairs,
        "alpha": al,
        "held": held,
        "active": on,
        "lam": np.array(lam),
        "P": P,
        "rate": C @ vel,
        "Q": np.array(qs).reshape(len(on), model.dim).T,
        "C": C,
        "variance": (P[0] / w_held if w_held > 0 else np.inf) if held_on else 0.0,
        "Sigma": Sigma,
    }


def sliding_velocity(
    model: Model,
    theta: ArrayLike,
    eta: float,
    gates: ArrayLike,
    pairs: Any,
    held_active: bool = True,
    policy: str = "hybrid",
) -> dict[str, Any]:
    """The sliding central flow on ReLU activation boundaries: Filippov sliding projected onto the stable set.

    ``theta`` lies on the boundaries z_ij = x_i^T v_j = 0 of the sliding ``pairs`` (i, j);
    ``gates`` is the held pattern (N x r, 0/1): on each sliding pair the gate of the side the flow
    arrived from. Its region is the *held* one; ``held_active`` says that it is at the stability
    edge (the central-flow mode k = 1 there; False: gradient-flow mode k = 0). The corners b of the
    sliding pairs' gate cube are the regions that meet there (two for one pair); a corner's
    stability constraint is on for the held one when ``held_active`` and for every other corner
    whose lambda_max >= (1 - EDGE_LEAVE) 2/eta (``policy`` 'hybrid'; every corner for 'cf').

    The velocity is

        v = -eta sum_b w_b(alpha) grad L_b - (eta/2) sum_{b on} P_b c_b,

    w_b = prod_p alpha_p^{b_p} (1 - alpha_p)^{1 - b_p}, where grad L_b is corner b's gradient (the
    sum is gradient flow's Filippov combination: alpha_p is the first-layer backward weight of
    pair p, as in :func:`gradient_flow`), c_b = grad_theta (q_b^T H_b q_b) the gradient of corner
    b's sharpness (H_b its Hessian, q_b its top eigenvector, from
    :mod:`numerics.central_flow.spectra`) and P_b >= 0 the weight of its oscillation covariance
    P_b q_b q_b^T. It solves the complementarity problem

        x_i^T v_j = 0 for every sliding pair (the pre-activations stay 0),
        P_b >= 0,  c_b . v <= 0,  P_b (c_b . v) = 0 for every corner whose constraint is on

    (its sharpness cannot rise past the edge, and is held there while P_b > 0), solved by cases
    over which P_b are positive. Without sliding pairs it is the central flow (the gradient
    flow projected onto the tangent cone of {lambda_max <= 2/eta}); on the sliding set it is the
    Filippov sliding of the gradient flow projected onto the tangent cone of the stable set, and
    each region's velocity in the combination is that region's gradient flow with the same
    oscillation correction -(eta/2) sum P_b c_b. The flow leaves the sliding set when some alpha_p
    leaves [0, 1].

    Returns a dict: ``velocity``, ``pairs`` (sorted), ``alpha`` (per pair), ``held`` (the held
    corner's gates), ``active`` (the corners whose constraint is on, the held one first),
    ``lam``, ``Q`` (columns q_b), ``C`` (rows c_b) and ``P`` per active corner, ``variance``
    (P_held / w_held: the held region's oscillation variance while the flow is there) and
    ``Sigma`` = sum_b P_b q_b q_b^T.

    This is a construction of ours on the nonsmooth flow (a Filippov sliding continuation of
    the central flow), not the paper's averaged-gradient flow w' = -eta E[grad L(w + delta)]
    (Appendix D), which needs no sliding.
    """
    if model.preacts is None:
        raise ValueError(f"model must be a ReLU model (with pre-activations); got {model.name!r}")
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    N, r = model.data["X"].shape[0], model.shape[2]
    G = np.asarray(gates, dtype=np.float64)
    if G.shape != (N, r) or not np.all((G == 0.0) | (G == 1.0)):
        raise ValueError(f"gates must be an N x r = {N} x {r} array of 0/1; got shape {G.shape}")
    try:
        pset = {(int(i), int(j)) for i, j in pairs}
    except (TypeError, ValueError) as exc:
        raise ValueError("pairs must be a non-empty collection of (sample i, neuron j) index pairs") from exc
    if not pset or not all(0 <= i < N and 0 <= j < r for i, j in pset):
        raise ValueError(f"pairs must be a non-empty collection of (i, j), 0 <= i < {N}, 0 <= j < {r}; got {pairs!r}")
    if policy not in ("hybrid", "cf"):
        raise ValueError(f"policy must be 'hybrid' or 'cf'; got {policy!r}")
    act = _active_corners(model, theta, eta, G, pset, policy)
    return _slide_solve(model, theta, eta, G, pset, bool(held_active), act)


def _side_velocity(
    model: Model, y: np.ndarray, eta: float, k: int, G: np.ndarray, sliding: set[tuple[int, int]], policy: str
) -> np.ndarray:
    """The velocity in mode k with held gates G and sliding pairs ``sliding`` (corner constraints re-counted)."""
    if sliding and policy != "gf":
        act = _active_corners(model, y, eta, G, sliding, policy)
        if k >= 1 or act:
            return _slide_solve(model, y, eta, G, sliding, k >= 1, act)["velocity"]
    return _velocity(model, y, eta, k, G, sliding)


def _entry_mode(model: Model, y: np.ndarray, eta: float, G: np.ndarray, k: int, k_max: int, policy: str) -> int:
    """The mode the flow takes on entering region G at y from mode k.

    The hybrid flow re-counts the eigenvalues of G's Hessian at the edge, lambda >= (1 - EDGE_LEAVE) 2/eta
    (the top k_max + 1; more than k_max stops the run); the fixed-mode flows ('gf', 'cf') keep k.
    """
    if policy != "hybrid":
        return k
    lam = np.linalg.eigvalsh(model.hessian(y, G))[::-1]
    return int(np.sum(lam[: k_max + 1] >= (2.0 / eta) * (1 - EDGE_LEAVE)))


def _boundary_rates(
    model: Model,
    y: np.ndarray,
    eta: float,
    G: np.ndarray,
    sliding: set[tuple[int, int]],
    pair: tuple[int, int],
    k: int,
    k_max: int,
    policy: str,
) -> dict[float, float]:
    """z' of ``pair`` on both sides of its boundary z = 0 at y, each side with the velocity the flow has there.

    The side the flow is in (gate G[pair]) in the current mode k; the other in the mode it would take on
    entering it (:func:`_entry_mode`), with that region's Hessian and covariance. Keys: the side's gate.
    """
    zd: dict[float, float] = {}
    for gate in (0.0, 1.0):
        Gs = G.copy()
        Gs[pair] = gate
        kk = k if gate == G[pair] else _entry_mode(model, y, eta, Gs, k, k_max, policy)
        zd[gate] = _zdot(model, y, _side_velocity(model, y, eta, kk, Gs, sliding, policy), *pair)
    return zd


def _several_directions_sliding(k: int, sliding: set[tuple[int, int]], t: float) -> str | None:
    """The stop message when k >= 2 critical directions meet sliding pairs at time t (None otherwise).

    The sliding central flow (:func:`sliding_velocity`, the one-direction solve ``_slide_solve``) holds one
    critical direction; with k >= 2 at the edge on a sliding boundary there is no continuation of ours, and
    integrating the one-direction solve would give the wrong dynamics silently. :func:`_piecewise` asks it
    at the start of every segment (whatever switch led there), before a rise enters mode k + 1, on entering
    its ``settle`` (before the one-direction solve decides which pairs to release: a gate crossing whose
    re-count gave k >= 2) and on settle's own re-count.
    """
    if k >= 2 and sliding:
        return (
            f"{k} eigenvalues at the edge on a sliding boundary at t = {t!r} "
            "(the sliding central flow has one critical direction)"
        )
    return None


def _piecewise(model, theta0, eta, T, grid, policy, k_fixed, k_max, rtol, atol) -> Trajectory:
    """Integrate GF (policy 'gf'), the CF with k_fixed directions ('cf') or the hybrid flow ('hybrid').

    Segments are smooth: fixed mode k, fixed ReLU gates G, a fixed set of sliding pairs and of
    active corner constraints; every switch is an event located by the solver (see
    :func:`hybrid_flow`, :func:`gradient_flow`, :func:`sliding_velocity`).
    """
    edge = 2.0 / eta
    floor = edge * (1 - EDGE_LEAVE)
    G = model.gates(theta0)
    if G is not None and np.any(model.preacts(theta0) == 0):
        raise ValueError("theta0 lies on an activation boundary (some x_i^T v_j == 0)")
    sliding: set[tuple[int, int]] = set()
    act: set[tuple[float, ...]] = set()
    cache: dict[bytes, dict[str, Any]] = {}

    def eigs(y: np.ndarray) -> np.ndarray:
        return np.linalg.eigvalsh(model.hessian(y, G))[::-1]

    def slide_now(y: np.ndarray) -> dict[str, Any]:
        """The sliding central flow of the current segment at y (cached: the right-hand side and events share it)."""
        key = y.tobytes()
        got = cache.get(key)
        if got is None:
            if len(cache) > 256:
                cache.clear()
            got = cache[key] = _slide_solve(model, y, eta, G, sliding, k >= 1, act)
        return got

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
    k_start = k
    ts: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    ks: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    ss: list[np.ndarray] = []
    events: list[dict[str, Any]] = []
    contact = 0.0 if k > 0 else None
    nfev, stop = 0, None
    last_t, same_t = -1.0, 0

    def settle(y: np.ndarray, t: float, changed: bool = False, recount: bool = True) -> bool:
        """Release sliding pairs whose weights left [0, 1], re-count modes and constraints; False: the run stops.

        ``changed``: the switch that called it moved the held region (re-count even if nothing is released);
        ``recount``: re-count the corner constraints (False after a corner event, which set them itself).
        """
        nonlocal k, contact, stop, act
        stop = _several_directions_sliding(k, sliding, t)  # e.g. a crossing whose re-count gave k >= 2
        if stop is not None:
            return False
        for _ in range(4 * (len(sliding) + 2)):
            before = G.copy()
            if recount:
                act = _active_corners(model, y, eta, G, sliding, policy)
            recount = True
            if sliding and (k >= 1 or act):
                st = _slide_solve(model, y, eta, G, sliding, k >= 1, act)
                out = {p: max(-a, a - 1.0) for p, a in zip(st["pairs"], st["alpha"])}
                worst = max(out, key=out.__getitem__)
                if out[worst] > 0:
                    sliding.discard(worst)
                    G[worst] = 0.0 if st["alpha"][st["pairs"].index(worst)] < 0 else 1.0
                    events.append({"t": t, "kind": "unslide", "pair": worst, "gate": int(G[worst])})
                    changed = changed or not np.array_equal(before, G)
                    continue
            elif sliding:
                _settle_sliding(model, y, G, sliding, events, t)
            if policy != "hybrid" or (not changed and np.array_equal(before, G)):
                return True
            changed = False
            new_k = _entry_mode(model, y, eta, G, k, k_max, policy)  # the held region moved: re-count
            if new_k > k_max:
                stop = f"after the gate change at t = {t!r} more than k_max = {k_max} eigenvalues are at the edge"
                return False
            stop = _several_directions_sliding(new_k, sliding, t)
            if stop is not None:
                return False
            if new_k != k:
                events.append({"t": t, "kind": "mode", "k": (k, new_k), "theta": y.copy()})
                contact = t if (contact is None and new_k > 0) else contact
                k = new_k
        stop = f"no consistent continuation at t = {t!r}: the sliding set and the modes do not settle"
        return False

    for _ in range(MAX_SEGMENTS):
        # whatever switch led here, no segment integrates k >= 2 critical directions with sliding pairs
        stop = _several_directions_sliding(k, sliding, t0)
        if stop is not None:
            break
        evs: list[Callable[..., float]] = []
        tags: list[tuple[Any, ...]] = []  # ('rise',), ('fall',), ('unslide', i, j, side), ('gate', i, j), ('corner', b)
        cache.clear()
        lcp = bool(sliding) and (k >= 1 or bool(act))
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
            order = sorted(sliding)
            for i in range(G.shape[0]):
                for j in range(G.shape[1]):
                    if (i, j) in sliding:
                        for side in (0, 1):
                            fn: Callable[..., float]
                            if lcp:
                                idx = order.index((i, j))
                                fn = lambda t, y, p=idx, side=side: slide_now(y)["alpha"][p] - side  # noqa: E731
                            else:
                                fn = lambda t, y, i=i, j=j, side=side, Gs=Gslide: (  # noqa: E731
                                    _sliding_weights(model, y, Gs, sliding)[i, j] - side
                                )
                            evs.append(_event(fn, 1 if side else -1))
                            tags.append(("unslide", i, j, side))
                    else:
                        evs.append(_event(lambda t, y, i=i, j=j: model.preacts(y)[i, j], 1 if G[i, j] == 0 else -1))
                        tags.append(("gate", i, j))
            if sliding and policy == "hybrid":
                held = tuple(float(G[p]) for p in order)
                for bits in _corners(order):
                    if bits != held:  # a corner constraint switches on at the edge, off below (1 - EDGE_LEAVE) 2/eta
                        Gb = _corner(G, order, bits)
                        on = bits in act
                        evs.append(
                            _event(
                                lambda t, y, Gb=Gb, lo=(floor if on else edge): (
                                    np.linalg.eigvalsh(model.hessian(y, Gb))[-1] - lo
                                ),
                                -1 if on else 1,
                            )
                        )
                        tags.append(("corner", bits))
        sub = grid[(grid > t0) | ((grid == t0) & (t0 == 0.0))]
        rhs: Callable[..., np.ndarray]
        if lcp:
            rhs = lambda t, y: slide_now(y)["velocity"]  # noqa: E731
        else:
            rhs = lambda t, y, k=k: _velocity(model, y, eta, k, G, sliding)  # noqa: E731
        try:
            sol = solve_ivp(
                rhs,
                (t0, T),
                y0,
                method="DOP853",
                t_eval=sub if sub.size else None,
                events=evs or None,
                rtol=rtol,
                atol=atol,
            )
        except _NoContinuation as err:
            stop = f"the sliding central flow failed after t = {t0!r}: {err}"
            break
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
        if G is not None:
            mask = np.zeros(G.shape, dtype=bool)
            for p in sliding:
                mask[p] = True
            gs.append(np.repeat(G[None], int(keep.sum()), axis=0))
            ss.append(np.repeat(mask[None], int(keep.sum()), axis=0))
        if hit is None:
            break
        t0, tag, y0 = hit
        y0 = np.array(y0, dtype=np.float64)
        same_t = same_t + 1 if t0 - last_t <= 1e-12 * max(1.0, abs(t0)) else 0
        last_t = t0
        if same_t >= MAX_SAME_TIME:
            stop = f"no consistent continuation at t = {t0!r}: {MAX_SAME_TIME} switches at one instant (last {tag})"
            break
        try:
            if tag[0] == "rise":
                if k == k_max:
                    stop = (
                        f"lambda_{k + 1} reached 2/eta at t = {t0!r} with k_max = {k_max} critical directions allowed"
                    )
                    break
                stop = _several_directions_sliding(k + 1, sliding, t0)  # checked before the mode is entered
                if stop is not None:
                    break
                events.append({"t": t0, "kind": "mode", "k": (k, k + 1), "theta": y0.copy()})
                k += 1
                contact = t0 if contact is None else contact
                if sliding and not settle(y0, t0):
                    break
            elif tag[0] == "fall":
                events.append({"t": t0, "kind": "mode", "k": (k, k - 1), "theta": y0.copy()})
                k -= 1
                if sliding and not settle(y0, t0):
                    break
            elif tag[0] == "corner":
                if tag[1] in act:
                    act.discard(tag[1])  # its sharpness fell below (1 - EDGE_LEAVE) 2/eta
                else:
                    act.add(tag[1])  # another region at the sliding set reached the edge
                    contact = t0 if contact is None else contact
                if not settle(y0, t0, recount=False):
                    break
            elif tag[0] == "unslide":
                _, i, j, side = tag
                sliding.discard((i, j))
                moved = G[i, j] != float(side)
                G[i, j] = float(side)
                events.append({"t": t0, "kind": "unslide", "pair": (i, j), "gate": side})
                if not settle(y0, t0, changed=moved):
                    break
            else:
                _, i, j = tag
                old = G[i, j]
                zd = _boundary_rates(model, y0, eta, G, sliding, (i, j), k, k_max, policy)
                crossed = (old == 1.0 and zd[0.0] <= 0) or (old == 0.0 and zd[1.0] >= 0)
                if crossed:
                    G[i, j] = 1.0 - old
                    events.append({"t": t0, "kind": "cross", "pair": (i, j), "gate": int(G[i, j])})
                elif k <= 1:
                    sliding.add((i, j))
                    events.append({"t": t0, "kind": "slide", "pair": (i, j)})
                else:
                    stop = (
                        f"the central flow with k = {k} critical directions reached a sliding activation boundary at "
                        f"t = {t0!r}, pair {(i, j)} (the sliding central flow has one critical direction)"
                    )
                    break
                if k == 0 and not (sliding and _active_corners(model, y0, eta, G, sliding, policy)):
                    _settle_sliding(model, y0, G, sliding, events, t0)
                if policy == "hybrid" and crossed:
                    new_k = _entry_mode(model, y0, eta, G, k, k_max, policy)
                    if new_k > k_max:
                        stop = (
                            f"after the gate change at t = {t0!r} more than k_max = {k_max} eigenvalues are at the edge"
                        )
                        break
                    if new_k != k:
                        events.append({"t": t0, "kind": "mode", "k": (k, new_k), "theta": y0.copy()})
                        contact = t0 if (contact is None and new_k > 0) else contact
                        k = new_k
                if sliding and (k >= 1 or _active_corners(model, y0, eta, G, sliding, policy)):
                    if not settle(y0, t0):
                        break
                    if not crossed and (i, j) not in sliding:
                        # both sides push onto the boundary, yet the weight that holds it leaves [0, 1] at once
                        stop = (
                            f"the sliding central flow has no solution on the boundary of pair {(i, j)} at t = {t0!r}: "
                            f"both sides push onto it (z' = {zd[0.0]!r} below, {zd[1.0]!r} above), but the Filippov "
                            "weight that keeps it there while the stability constraints hold lies outside [0, 1]"
                        )
                        break
        except _NoContinuation as err:
            stop = f"the sliding central flow failed at t = {t0!r}: {err}"
            break
        if t0 >= T:
            break
    else:
        raise RuntimeError(f"more than {MAX_SEGMENTS} switches (modes, gates) before T = {T}")
    t = np.concatenate(ts) if ts else np.empty(0)
    th = np.concatenate(ys) if ys else np.empty((0, model.dim))
    traj = Trajectory(t, th, np.concatenate(ks) if ks else np.empty(0, int), events, contact, nfev, stop)
    traj.stop_at = (float(t0), np.array(y0, dtype=np.float64)) if stop else None
    if G is not None:
        shape = (0, *G.shape)
        traj.gates = np.concatenate(gs) if gs else np.empty(shape)
        traj.sliding = np.concatenate(ss) if ss else np.empty(shape, dtype=bool)
        traj.slides = _slide_intervals(events, float(t[-1]) if t.size else t0, k_start)
    return traj


def _slide_intervals(events: list[dict[str, Any]], t_end: float, k: int) -> list[dict[str, Any]]:
    """One dict per sliding interval (pair, t0, t1, k0, exit) from the switch events (``k``: the mode at t = 0)."""
    out: list[dict[str, Any]] = []
    open_: dict[tuple[int, int], dict[str, Any]] = {}
    for e in events:
        if e["kind"] == "mode":
            k = e["k"][1]
        elif e["kind"] == "slide":
            open_[e["pair"]] = {"pair": e["pair"], "t0": e["t"], "t1": None, "k0": k, "exit": None}
        elif e["kind"] == "unslide" and e["pair"] in open_:
            iv = open_.pop(e["pair"])
            iv["t1"], iv["exit"] = e["t"], int(e["gate"])
            out.append(iv)
    for iv in open_.values():
        iv["t1"] = t_end
        out.append(iv)
    return sorted(out, key=lambda iv: (iv["t0"], iv["pair"]))


# --- the paper's averaged-gradient flow (Appendix D, 'Across activation boundaries') ------------------------

GAUSS_CUT = 10.0  # gate changes of the Gaussian average beyond |xi| = 10 standard deviations are ignored
_AVG_NODES = np.array([-1.5, -0.5, 0.5, 1.5])
_AVG_VINV = np.linalg.inv(np.vander(_AVG_NODES, 4, increasing=True))


def _phi(x: float) -> float:
    return float(np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi))


def _gauss_line_mean(model: Model, theta: np.ndarray, d: np.ndarray) -> np.ndarray:
    """E[grad L(theta + xi d)], xi ~ N(0, 1), exactly: grad L is a cubic in xi between the gate changes on the line.

    On each piece the gates are fixed and grad L is the region polynomial's gradient, a cubic in xi
    (interpolated at four nodes); its truncated Gaussian moments M_k = int_a^b xi^k phi are closed
    forms (M_k = (k - 1) M_{k-2} + a^{k-1} phi(a) - b^{k-1} phi(b)). Gate changes beyond
    |xi| = GAUSS_CUT are ignored: the mass there, P(|xi| > 10) = 1.5e-23, times the cubic's growth
    (< 1e4 |grad L| for the audit's scales) is below float64 rounding of the mean.
    """
    assert model.preacts is not None
    Z, dZ = model.preacts(theta), model.preacts(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        cuts = np.where(dZ != 0, -Z / dZ, np.nan)
    cuts = np.unique(cuts[np.isfinite(cuts) & (np.abs(cuts) < GAUSS_CUT)])
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    total = np.zeros(model.dim)
    for a, b in zip(edges[:-1], edges[1:]):
        if np.isfinite(a) and np.isfinite(b):
            mid = 0.5 * (a + b)
        else:
            mid = b - 1.0 if np.isfinite(b) else (a + 1.0 if np.isfinite(a) else 0.0)
        S = (Z + mid * dZ > 0).astype(np.float64)
        coef = _AVG_VINV @ np.array([model.grad(theta + x * d, S) for x in _AVG_NODES])
        # boundary terms x^k phi(x) of the moment recursion, 0 at an infinite end
        ta = [a**k * _phi(a) if np.isfinite(a) else 0.0 for k in range(3)]
        tb = [b**k * _phi(b) if np.isfinite(b) else 0.0 for k in range(3)]
        M0 = float(special.ndtr(b) - special.ndtr(a)) if b <= 0 else float(special.ndtr(-a) - special.ndtr(-b))
        M1 = ta[0] - tb[0]
        M = [M0, M1, M0 + ta[1] - tb[1], 2.0 * M1 + ta[2] - tb[2]]
        total += coef.T @ np.array(M)
    return total


def averaged_velocity(
    model: Model, theta: ArrayLike, eta: float, deltas: ArrayLike, law: str = "two-point"
) -> np.ndarray:
    """The paper's averaged-gradient velocity -eta E[grad L(theta + delta)], E[delta] = 0, Cov(delta) = deltas deltas^T.

    ``deltas`` (D x m, or a vector for m = 1) factors the oscillation covariance (the central flow's:
    ``spectra.central_flow_velocity(...)["deltas"]``). ``law``: 'two-point', delta = sum_a e_a d_a with
    independent signs e_a = +-1 (for m = 1 GD's period-two oscillation, +-d; exact, 2^m gradients);
    'gauss', delta ~ N(0, Sigma), for m = 1 only, computed exactly (piecewise-cubic quadrature along
    the line, :func:`_gauss_line_mean`). The gradient is the model's (relu'(0) := 0 on a boundary,
    a null set of delta for the Gaussian). Inside an activation region with the law's support in it
    both equal the central-flow velocity -eta (grad L + (1/2) grad <H, Sigma>) (a quartic loss,
    symmetric law); across a boundary they differ from it (Appendix D, 'Across activation boundaries').
    """
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    D = np.asarray(deltas, dtype=np.float64)
    D = D[:, None] if D.ndim == 1 else D
    if D.ndim != 2 or D.shape[0] != model.dim or D.shape[1] < 1 or not np.all(np.isfinite(D)):
        raise ValueError(f"deltas must be a finite {model.dim} x m array (m >= 1) or a vector of length {model.dim}")
    if law == "two-point":
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=D.shape[1])))
        return -eta * np.mean([model.grad(theta + D @ e) for e in signs], axis=0)
    if law == "gauss":
        if D.shape[1] != 1:
            raise ValueError(f"law 'gauss' takes a rank-one covariance (deltas with 1 column); got {D.shape[1]}")
        if model.preacts is None:
            raise ValueError("law 'gauss' is implemented for the ReLU model (piecewise-polynomial along a line)")
        return -eta * _gauss_line_mean(model, theta, D[:, 0])
    raise ValueError(f"law must be 'two-point' or 'gauss'; got {law!r}")


def averaged_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    T: float,
    deltas: Callable[[float], np.ndarray],
    law: str = "gauss",
    t_eval: ArrayLike | None = None,
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> Trajectory:
    """w' = averaged_velocity(w, deltas(t)) on [0, T] (the paper's averaged-gradient flow, Appendix D), DOP853.

    ``deltas(t)`` gives the oscillation covariance factor at time t (e.g. the central flow's along its
    own trajectory). With the Gaussian law the velocity is continuous in w (grad L's jumps are averaged
    over the line), so the flow crosses activation boundaries as a classical ODE: no events, no sliding.
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    rtol, atol = _tolerances(rtol, atol)
    if not callable(deltas):
        raise ValueError("deltas must be a callable t -> (D x m covariance factor)")
    grid = _t_eval(t_eval, T)
    sol = solve_ivp(
        lambda t, y: averaged_velocity(model, y, eta, deltas(t), law),
        (0.0, T),
        theta0,
        method="DOP853",
        t_eval=grid,
        rtol=rtol,
        atol=atol,
    )
    if sol.status != 0:
        raise RuntimeError(f"ODE integration of the averaged flow failed: {sol.message}")
    return Trajectory(np.asarray(sol.t), np.asarray(sol.y).T, np.zeros(sol.t.size, int), [], None, sol.nfev)


def gradient_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    T: float,
    t_eval: ArrayLike | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Trajectory:
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


def central_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    T: float,
    k: int = 1,
    t_eval: ArrayLike | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Trajectory:
    """The central flow with the top k eigen-directions critical throughout, on [0, T].

    Meant for starts on the stability edge; off the edge use :func:`hybrid_flow`. ReLU gate
    crossings switch to the new region's Hessian; for k = 1 the flow slides along a boundary both
    sides push it onto (:func:`sliding_velocity`, every region there held at the edge: policy 'cf'),
    for k >= 2 such a boundary stops the run (``stop`` says so).
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    k = _count(k, "k")
    if k > model.dim:
        raise ValueError(f"k must be <= the number of parameters {model.dim}; got {k}")
    rtol, atol = _tolerances(rtol, atol)
    return _piecewise(model, theta0, eta, T, _t_eval(t_eval, T), "cf", k, k, rtol, atol)


def hybrid_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    T: float,
    t_eval: ArrayLike | None = None,
    k_max: int = 1,
    rtol: float = RTOL,
    atol: float = ATOL,
) -> Trajectory:
    """GF until lambda_max = 2/eta, then the central flow with every eigenvalue at the edge critical.

    Mode k (k critical directions, 0 = GF) switches on events located by the solver:
    k -> k + 1 when lambda_{k+1} rises through 2/eta (k < ``k_max``); k -> k - 1 when lambda_k
    falls below (1 - EDGE_LEAVE) 2/eta (the variance s_k has reached 0 and GF lowers the
    sharpness). When lambda_{k_max + 1} reaches 2/eta the run stops there (``stop`` says so):
    more critical directions than allowed. A start above the edge is refused. For the ReLU
    model a gate crossing switches to the new region's Hessian (the paper's piecewise
    continuation, Figure 4) and re-counts the eigenvalues at the edge. At a boundary the flow
    crosses when the side ahead, in the mode that re-count gives it (with its own Hessian and
    covariance), carries z on across, and slides otherwise: GF slides along a
    boundary as in :func:`gradient_flow`, and the central flow (k = 1) by the Filippov sliding
    continuation of :func:`sliding_velocity` (our construction, not the paper's averaged flow),
    holding the held region's sharpness; ``Trajectory.slides`` lists the sliding intervals. The
    run stops (``stop`` says why) where that construction has no solution: both sides push onto
    the boundary but the Filippov weight that keeps the flow there with the sharpness held lies
    outside [0, 1]; on a sliding boundary with a second eigenvalue at the edge; or where the
    switches do not settle at one instant (:data:`MAX_SAME_TIME`). ``Trajectory.stop_at`` holds the
    state there, from which :mod:`numerics.central_flow.averaged` continues the run.
    """
    theta0 = _theta(theta0, model.dim)
    eta, T = _positive(eta, "eta"), _positive(T, "T")
    k_max = _count(k_max, "k_max")
    if k_max >= model.dim:
        raise ValueError(f"k_max must be < the number of parameters {model.dim}; got {k_max}")
    rtol, atol = _tolerances(rtol, atol)
    return _piecewise(model, theta0, eta, T, _t_eval(t_eval, T), "hybrid", 0, k_max, rtol, atol)
