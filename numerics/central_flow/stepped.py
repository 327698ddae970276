"""A literal time-stepped central flow: the local Hessian recomputed at every stage point (Figure 4's recipe).

Figure 4 of the central-flow paper continues the hybrid central flow "piecewise by recomputing the
local ReLU Hessian after activation-pattern changes". Taken literally, that is a fixed-step
integration of the k = 1 central-flow velocity theta' = -eta (grad L + (s/2) c) (Section 3;
:func:`numerics.central_flow.spectra.central_flow_velocity`) in which every evaluation uses the
gradient, Hessian and curvature gradient c = grad_theta (q^T H q) of the activation region the
evaluation point lies in. No event detection, no sliding: where both sides of a boundary push the
flow onto it, the steps cross it back and forth (chattering) instead of stopping. This module is that
recipe, the independent route beside the event-driven :func:`numerics.central_flow.flows.hybrid_flow`
(DOP853 with Filippov sliding, which stops where no sliding is consistent).

Scheme: classical fourth-order Runge-Kutta (RK4) with a fixed step. Every stage point gets its own
region's velocity, so each stage literally recomputes the local Hessian. On a smooth stretch (one
region, one mode) the error is O(dt^4); across a gate change or at a chattering boundary it falls to
O(dt). The high smooth order is why RK4 rather than the explicit midpoint rule: in a dt-convergence
measurement (:func:`dt_convergence`) the smooth stretches then contribute almost nothing, and what
is left is the effect of the non-smooth events, which is what the measurement is after.

Modes, as :func:`numerics.central_flow.flows.hybrid_flow` has them (its k = 0 phase below the edge):
at the start of each step the top eigenvalue lambda of the local Hessian decides it, k = 1 (central
flow, s = max(0, -2 <c, g> / |c|^2), the closed form of the k = 1 stability constraint) when
lambda >= (1 - EDGE_LEAVE) 2/eta, else k = 0 (gradient flow theta' = -eta grad L). The step keeps
that mode in all its stages (a stage point in another region gets that region's velocity in the
step's mode: k = 1 there holds that region's own sharpness, as the literal recipe has it). A step
of gradient flow that would end above the edge inside one region is shortened (bisection on its
length) to end on the edge, within [1 - LAND_TOL, 1] 2/eta, as the hybrid flow's contact event
does; a step whose end lies in another region is not (the jump of the Hessian lifts the sharpness
there, and the next step counts the mode again, as the hybrid flow does after a crossing). On the
edge the unclipped variance -2 <c, g> / |c|^2 is negative where holding the sharpness would need a
negative variance: the clipped s = 0 is gradient flow, lambda falls and the next step is k = 0 (the
hybrid flow's fall event); :attr:`SteppedRun.negative_sigma2` lists those step starts.

>>> from numerics.central_flow.models import scalar_model
>>> run = stepped_central_flow(scalar_model(1.0), [1.3, 0.4], 0.9, 0.0, 1.0, 0.05)
>>> run.finite, run.t.tolist(), run.k.tolist()
(True, [1.0], [1])
>>> bool(abs(run.lam[0] - 1.0) < 1e-6)  # held on the edge lambda eta/2 = 1
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

from numerics.central_flow import spectra
from numerics.central_flow.flows import EDGE_LEAVE, _t_eval
from numerics.central_flow.models import Model, _positive, _theta
from numerics.validation import integer, real

__all__ = [
    "SteppedRun",
    "stepped_central_flow",
    "dt_convergence",
    "max_rel_gap",
    "one_sided",
    "MAX_STEPS",
    "CONTACT_BISECT",
    "LAND_TOL",
]

MAX_STEPS = 2_000_000  # steps of one run at most ((T - t0) / dt): a guard against a dt far too small
CONTACT_BISECT = 80  # bisections of a step's length to land the gradient-flow phase on the edge (2^-80 dt)
LAND_TOL = 1e-13  # the landing's lambda lies in [(1 - LAND_TOL) 2/eta, 2/eta]: 450 eps, above eigvalsh's rounding
_ORDER = 4  # the scheme's order on a smooth stretch (classical RK4)


@dataclass
class SteppedRun:
    """A time-stepped central flow sampled at ``t``: ``theta``, ``lam`` (lambda_max eta/2), ``sigma2``, ``loss``, ``k``.

    ``lam`` is the top eigenvalue of the local Hessian (the region of the sample) times eta/2;
    ``sigma2`` the variance s of the step started there (0 in the gradient-flow phase, k = 0);
    ``k`` the mode there. Over the run: ``steps`` taken, ``pattern_changes`` (steps whose end lies
    in another activation region than their start: the chattering count), ``gate_flips`` (gates
    changed, summed over those steps), ``finite`` (every state finite), ``t_end`` (how far it ran),
    ``stop`` (why it ended before T, None if it reached T), ``negative_sigma2`` (step starts on the
    edge where the unclipped variance was < 0) and ``contacts`` (times where the gradient-flow
    phase reached the edge). A run that stops keeps the samples it reached before ``t_end``.
    """

    t: np.ndarray
    theta: np.ndarray
    lam: np.ndarray
    sigma2: np.ndarray
    loss: np.ndarray
    k: np.ndarray
    steps: int = 0
    pattern_changes: int = 0
    gate_flips: int = 0
    finite: bool = True
    t_end: float = 0.0
    stop: str | None = None
    negative_sigma2: list[float] = field(default_factory=list)
    contacts: list[float] = field(default_factory=list)


def _point(model: Model, y: np.ndarray, eta: float, floor: float) -> dict:
    """The state at a step start: its mode, velocity, lambda_max, variance s and the unclipped variance."""
    out = spectra.central_flow_velocity(model, y, eta)
    lam = float(out["lam"][0])
    c, g = out["C"][0], out["grad"]
    cc = float(c @ c)
    raw = -2.0 * float(c @ g) / cc if cc > 0 else 0.0
    k = 1 if lam >= floor else 0
    vel = out["velocity"] if k else -eta * g
    return {"k": k, "vel": vel, "lam": lam, "s": float(out["sigma2"][0]) if k else 0.0, "raw": raw}


def _stage(model: Model, y: np.ndarray, eta: float, k: int) -> np.ndarray:
    """The velocity at a stage point in mode k, with the gradient and Hessian of the region that point lies in.

    A stage point that is not finite gives a velocity of NaNs (the step's end is then not finite and the run stops).
    """
    if not np.all(np.isfinite(y)):
        return np.full(y.shape, np.nan)
    if k:
        return spectra.central_flow_velocity(model, y, eta)["velocity"]
    return -eta * model.grad(y)


def _rk4(model: Model, y: np.ndarray, eta: float, k: int, v1: np.ndarray, h: float) -> np.ndarray:
    """One classical Runge-Kutta step of length h from y (v1: the velocity at y, already computed)."""
    v2 = _stage(model, y + 0.5 * h * v1, eta, k)
    v3 = _stage(model, y + 0.5 * h * v2, eta, k)
    v4 = _stage(model, y + h * v3, eta, k)
    return y + (h / 6.0) * (v1 + 2.0 * v2 + 2.0 * v3 + v4)


def _gates(model: Model, y: np.ndarray) -> np.ndarray | None:
    return model.gates(y)


def _same_region(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return a is None or b is None or bool(np.array_equal(a, b))


def _land_on_edge(
    model: Model, y: np.ndarray, eta: float, v1: np.ndarray, h: float, lo_lam: float, edge: float
) -> tuple[float, np.ndarray] | None:
    """(h', y'): a gradient-flow step of length h' < h from y ending with lambda in [lo, edge], or None.

    Bisection on the step length (lambda at the step end is continuous in it inside one region).
    """
    lo, hi = 0.0, h
    for _ in range(CONTACT_BISECT):
        mid = 0.5 * (lo + hi)
        ym = _rk4(model, y, eta, 0, v1, mid)
        if not np.all(np.isfinite(ym)):
            return None
        lam = float(np.linalg.eigvalsh(model.hessian(ym))[-1])
        if lam < lo_lam:
            lo = mid
        elif lam > edge:
            hi = mid
        else:
            return mid, ym
    return None


def stepped_central_flow(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    t0: float,
    T: float,
    dt: float,
    t_eval: ArrayLike | None = None,
) -> SteppedRun:
    """The k <= 1 hybrid central flow from (t0, theta0) to T by fixed-step RK4, the local Hessian at every stage.

    ``t_eval`` (default [T]): sample times inside [t0, T], strictly increasing. Between two samples
    the interval is cut into equal steps of length <= ``dt`` (so every sample is a step end). The
    run stops early (``stop`` says why) where a state is not finite or the variance fails its
    certificate; the samples then end at the last finite state. See the module docstring for the
    scheme and the modes.

    >>> from numerics.central_flow.models import scalar_model
    >>> stepped_central_flow(scalar_model(1.0), [1.3, 0.4], 0.9, 0.0, 1.0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: dt must be a finite real number > 0; got 0.0
    """
    theta = _theta(theta0, model.dim)
    eta = _positive(eta, "eta")
    t0 = real(t0, "t0", 0.0)
    T = real(T, "T", t0, lo_open=True, lo_text="t0 = " + repr(t0))
    dt = _positive(dt, "dt")
    if (T - t0) / dt > MAX_STEPS:
        raise ValueError(f"dt must be >= (T - t0) / {MAX_STEPS} = {(T - t0) / MAX_STEPS!r}; got {dt!r}")
    grid = _t_eval(t_eval, T, t0)
    edge = 2.0 / eta
    floor = edge * (1.0 - EDGE_LEAVE)
    e = np.empty(0)
    run = SteppedRun(e, np.empty((0, model.dim)), e, e, e, np.empty(0, dtype=int), t_end=t0)
    rows: list[tuple[float, np.ndarray, float, float, float, int]] = []
    t, y = t0, theta
    G = _gates(model, y)
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run ends at its first non-finite state
        try:
            p = _point(model, y, eta, floor)
            for target in grid:
                while t < target:
                    n = max(1, math.ceil((target - t) / dt * (1.0 - 1e-12)))
                    h = (target - t) / n
                    if p["k"] and p["raw"] < 0:
                        run.negative_sigma2.append(t)
                    y_new = _rk4(model, y, eta, p["k"], p["vel"], h)
                    t_new = target if n == 1 else t + h
                    if not np.all(np.isfinite(y_new)):
                        run.finite = False
                        run.stop = f"a state is not finite at t = {t_new!r} (step {run.steps + 1})"
                        break
                    G_new = _gates(model, y_new)
                    p_new = _point(model, y_new, eta, floor)
                    if not p["k"] and p_new["lam"] > edge and _same_region(G, G_new):
                        landed = _land_on_edge(model, y, eta, p["vel"], h, edge * (1.0 - LAND_TOL), edge)
                        if landed is not None:
                            h, y_new = landed
                            t_new, G_new = t + h, _gates(model, y_new)
                            p_new = _point(model, y_new, eta, floor)
                            run.contacts.append(t_new)
                    if not _same_region(G, G_new):
                        run.pattern_changes += 1
                        run.gate_flips += int(np.sum(G != G_new))
                    t, y, G, p = t_new, y_new, G_new, p_new
                    run.steps += 1
                if run.stop is not None:
                    break
                rows.append((t, y, p["lam"] * eta / 2.0, p["s"], float(model.loss(y)), p["k"]))
        except (spectra.SigmaCertificateError, np.linalg.LinAlgError) as err:
            run.stop = f"the central-flow velocity failed in the step from t = {t!r}: {err}"
    run.t_end = t
    if rows:
        run.t = np.array([r[0] for r in rows])
        run.theta = np.array([r[1] for r in rows])
        run.lam, run.sigma2, run.loss = (np.array([r[i] for r in rows]) for i in (2, 3, 4))
        run.k = np.array([r[5] for r in rows], dtype=int)
    return run


class _Sampled(Protocol):
    t: np.ndarray
    theta: np.ndarray


def max_rel_gap(a: _Sampled, b: _Sampled) -> float:
    """max over the samples both runs reached of |theta_a - theta_b|_inf / |theta_b|_inf (nan if none in common).

    ``a`` and ``b``: anything with sample times ``t`` and states ``theta`` (a :class:`SteppedRun`, a
    :class:`numerics.central_flow.flows.Trajectory`), sampled at the same times as far as both go.
    """
    m = min(a.t.size, b.t.size)
    if m == 0:
        return math.nan
    if not np.array_equal(a.t[:m], b.t[:m]):
        raise ValueError("the two runs must be sampled at the same times")
    scale = np.abs(b.theta[:m]).max(axis=1)
    return float(np.max(np.abs(a.theta[:m] - b.theta[:m]).max(axis=1) / scale))


def dt_convergence(
    model: Model,
    theta0: ArrayLike,
    eta: float,
    t0: float,
    T: float,
    dt: float,
    t_eval: ArrayLike | None = None,
    halvings: int = 2,
) -> dict:
    """The same run at dt, dt/2, ..., dt/2^halvings and the largest relative gap of theta between neighbours.

    Returns ``runs`` (finest last), ``gaps`` (gap(dt/2^j, dt/2^(j+1)) per j, :func:`max_rel_gap`) and
    ``ratios`` (each gap over the next: about 2^p for a scheme of order p that has settled; about 2
    across non-smooth events, where RK4 is first order; near 1 or below where the result does not settle).

    >>> from numerics.central_flow.models import scalar_model
    >>> out = dt_convergence(scalar_model(1.0), [1.3, 0.4], 0.9, 0.0, 2.0, 0.2, [1.0, 2.0])
    >>> bool(out["ratios"][0] > 12)  # fourth order on a smooth stretch: ~2^4
    True
    """
    halvings = integer(halvings, "halvings", 1)
    runs = [stepped_central_flow(model, theta0, eta, t0, T, dt / 2**j, t_eval) for j in range(halvings + 1)]
    gaps = [max_rel_gap(a, b) for a, b in zip(runs[:-1], runs[1:])]
    ratios = [g0 / g1 if g1 > 0 else math.inf for g0, g1 in zip(gaps[:-1], gaps[1:])]
    return {"runs": runs, "gaps": gaps, "ratios": ratios, "order": _ORDER}


def one_sided(model: Model, theta: ArrayLike, eta: float, pair: tuple[int, int]) -> dict:
    """The literal recipe's two velocities at a state on the boundary z_ij = 0 of ``pair`` = (i, j), one per side.

    Side b (gate b of the pair, the other gates as at theta) gets its own region's mode (k = 1 iff its
    lambda_max >= (1 - EDGE_LEAVE) 2/eta) and velocity. Returns ``lam`` (lambda_max eta/2 per side),
    ``k``, ``zdot`` (z_ij' per side) and ``alpha``: where both sides push onto the boundary
    (z' > 0 on side 0, < 0 on side 1) the weight in [0, 1] of side 1 in the convex (Filippov)
    combination with z' = 0, the velocity the recipe's chattering approaches as dt -> 0; else None.

    >>> from numerics.central_flow.models import relu_model
    >>> m = relu_model(np.array([[1.0, 0.2], [0.3, 1.0], [1.0, -1.0]]), np.array([[1.0], [0.4], [0.2]]), 1)
    >>> th = np.array([1.4, 0.6, 0.6])  # z_3 = 0.6 - 0.6 = 0: on the boundary of sample 3
    >>> eta = 2.0 / float(np.linalg.eigvalsh(m.hessian(th, m.gates(th)))[-1])  # side 0 (z_3 <= 0) on the edge
    >>> out = one_sided(m, th, eta, (2, 0))
    >>> [round(x, 3) for x in out["lam"]], out["k"], out["alpha"]  # both sides move z_3 up: it crosses, no slide
    ([1.0, 1.098], (1, 1), None)
    """
    if model.preacts is None:
        raise ValueError(f"model must be a ReLU model (with pre-activations); got {model.name!r}")
    theta = _theta(theta, model.dim, "theta")
    eta = _positive(eta, "eta")
    N, r = model.data["X"].shape[0], model.shape[2]
    try:
        i, j = (int(x) for x in pair)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"pair must be a (sample i, neuron j) index pair; got {pair!r}") from exc
    if not (0 <= i < N and 0 <= j < r):
        raise ValueError(f"pair must be (i, j) with 0 <= i < {N}, 0 <= j < {r}; got {pair!r}")
    floor = (2.0 / eta) * (1.0 - EDGE_LEAVE)
    n, d, _ = model.shape
    G = model.gates(theta)
    assert G is not None  # a ReLU model has gates
    lam, ks, zd = [], [], []
    for gate in (0.0, 1.0):
        Gs = G.copy()
        Gs[i, j] = gate
        out = spectra._cf_velocity(model, theta, eta, 1, Gs)
        k = 1 if float(out["lam"][0]) >= floor else 0
        vel = out["velocity"] if k else -eta * model.grad(theta, Gs)
        lam.append(float(out["lam"][0]) * eta / 2.0)
        ks.append(k)
        zd.append(float(model.data["X"][i] @ vel[n * r :].reshape(d, r)[:, j]))
    alpha = zd[0] / (zd[0] - zd[1]) if zd[0] > 0 > zd[1] else None
    return {"lam": tuple(lam), "k": tuple(ks), "zdot": tuple(zd), "alpha": alpha}
