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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp

from numerics.central_flow import spectra
from numerics.central_flow.models import Model, _count, _positive, _theta

__all__ = [
    "gradient_descent",
    "midpoints",
    "gradient_flow",
    "central_flow",
    "hybrid_flow",
    "Trajectory",
    "RTOL",
    "ATOL",
]

RTOL = 1e-12  # default relative tolerance of the adaptive ODE solver (DOP853)
ATOL = 1e-14  # default absolute tolerance of the adaptive ODE solver
EDGE_LEAVE = 1e-9  # CF -> GF when the lowest critical eigenvalue falls below (1 - EDGE_LEAVE) 2/eta
MAX_SEGMENTS = 200  # switches (modes, ReLU gates) of one run before it gives up (chattering guard)


def _t_eval(t_eval: ArrayLike | None, T: float) -> np.ndarray:
    if t_eval is None:
        return np.array([T])
    arr = np.asarray(t_eval, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or not np.all(np.isfinite(arr)):
        raise ValueError("t_eval must be a non-empty 1-D array of finite times")
    if np.any(np.diff(arr) <= 0) or arr[0] < 0 or arr[-1] > T:
        raise ValueError(f"t_eval must be strictly increasing inside [0, T] = [0, {T}]")
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
    right-hand-side calls; ``stop`` says why the run ended before T (None if it reached T).
    """

    t: np.ndarray
    theta: np.ndarray
    k: np.ndarray
    events: list[dict[str, Any]]
    contact: float | None
    nfev: int
    stop: str | None = None


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


def _piecewise(model, theta0, eta, T, grid, policy, k_fixed, k_max, rtol, atol) -> Trajectory:
    """Integrate GF (policy 'gf'), the CF with k_fixed directions ('cf') or the hybrid flow ('hybrid').

    Segments are smooth: fixed mode k, fixed ReLU gates G and a fixed set of sliding pairs;
    every switch is an event located by the solver (see :func:`hybrid_flow`, :func:`gradient_flow`).
    """
    edge = 2.0 / eta
    G = model.gates(theta0)
    if G is not None and np.any(model.preacts(theta0) == 0):
        raise ValueError("theta0 lies on an activation boundary (some x_i^T v_j == 0)")
    sliding: set[tuple[int, int]] = set()

    def eigs(y: np.ndarray) -> np.ndarray:
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
    ts: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    ks: list[np.ndarray] = []
    events: list[dict[str, Any]] = []
    contact = 0.0 if k > 0 else None
    nfev, stop = 0, None
    for _ in range(MAX_SEGMENTS):
        evs: list[Callable[..., float]] = []
        tags: list[tuple[Any, ...]] = []  # ('rise',), ('fall',), ('unslide', i, j, side), ('gate', i, j)
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
            zd: dict[float, float] = {}
            for gate in (0.0, 1.0):
                Gs = G.copy()
                Gs[i, j] = gate
                zd[gate] = _zdot(model, y0, _velocity(model, y0, eta, k, Gs, sliding), i, j)
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
    crossings switch to the new region's Hessian; a sliding boundary stops the run.
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
