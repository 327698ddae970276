"""GD at the edge of stability against the averaged central flow across an activation-boundary event (ReLU).

The audit's ReLU EoS setting (:func:`numerics.central_flow.experiments.eos_problem`, inputs in the teacher's
active half-space) never changes an activation pattern after GD settles at the edge, so whether GD's time
average follows the central flow *past* a boundary event cannot be checked there. This module adds the
setting where it can (:func:`boundary_problem`): the same draw plus one teacher-inactive sample just below the
teacher's boundary, x* = -m w_hat + sqrt(1 - m^2) g (m = ``margin``, g a unit vector orthogonal to w_hat,
target 0). Student units start active on x* (their v_j scatter around w_hat); while GD oscillates at the edge
the centre of unit j's pre-activation z_*j drifts through 0: a boundary event at the edge.

How it was found (reproducible, fixed seeds; :data:`SEARCH` records it): the EoS family at eta = 0.9,
c = 1.002, start scale 0.3, with one extra sample at margin m below (sign -1) or above (sign +1) the teacher's
boundary, draws 0-7 under seed 0, 1200 GD steps each; counted: draws whose midpoint gate pattern changes after
the catapult's end (:func:`numerics.central_flow.eos.catapult_end`) while the sharpness stays within 10% of
2/eta. Only the event rate was looked at, before any flow was compared with GD.

- :func:`boundary_event`: GD, where the catapult ends, the first change of the midpoints' gate pattern after
  it (``event``: the midpoint index k_b, its pairs and direction), the Hessian's jump along the top
  eigenvector there (``qjump``, in units of 2/eta: how much the event matters to the central flow) and the
  steps whose two adjacent iterates lie on different sides of the event's boundary (``straddle``).
- :func:`boundary_track`: one draw: the averaged central flow (:mod:`numerics.central_flow.averaged`),
  gradient flow and the *frozen* central flow (the hybrid central flow of the polynomial loss with the
  gates held at the pre-event pattern: the flow that ignores the event) from the first sub-edge midpoint
  at most ``pre`` steps before the event, against GD's midpoints at t = k + 1/2 before and after it
  (:func:`numerics.central_flow.eos.tracking_errors`; one tolerance C (rho + a^2) over all compared steps),
  and the flows' separation from one another after the event (computed without GD: it sets the power
  against the alternatives).

>>> model, theta0, eta = boundary_problem(0, 0)
>>> model.data["X"].shape, float(model.data["Y"][-1, 0]), eta
((7, 3), 0.0, 0.9)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerics.central_flow import averaged as AV
from numerics.central_flow import eos as EOS
from numerics.central_flow import experiments as E
from numerics.central_flow import flows as F
from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.models import Model, _count, _positive, relu_model
from numerics.perturb import perturb_relative

__all__ = [
    "BOUNDARY_SETTING",
    "BOUNDARY_SIZES",
    "SEARCH",
    "BAND",
    "boundary_problem",
    "frozen_model",
    "boundary_event",
    "boundary_track",
]

#: The setting: the ReLU EoS family at the audit's EoS values (experiments.EOS_SETTINGS["relu"]) plus one
#: teacher-inactive sample at ``margin`` below the teacher's boundary; GD runs ``steps`` steps.
BOUNDARY_SETTING: dict[str, Any] = {"eta": 0.9, "c": 1.002, "scale": 0.3, "margin": 0.05, "steps": 1200}
#: Sizes per profile: draws tried (cells; a draw without an event at the edge is reported unused), the steps
#: compared before the event (at most) and after it.
BOUNDARY_SIZES = {"quick": {"tries": 1, "pre": 30, "post": 40}, "full": {"tries": 12, "pre": 30, "post": 300}}
BAND = 0.1  # "at the edge": |lambda_max eta/2 - 1| <= 10% (the EoS band of CF-1.eos-*) at every compared step
#: The search that chose the margin (seed 0, draws 0-7, 1200 steps; counts of draws with an event after the
#: catapult's end inside the band; exploratory script, same construction with the extra sample drawn from the
#: draw's own stream after the start, not the jumped stream used here): (margin, sign) -> events / draws. Sign -1 =
#: below the teacher's boundary. With the module's construction the full cells find events in draws 0, 2, 4, 7, 8, 10
#: of 0-11.
SEARCH = {
    (0.05, -1): "6/8 (all deactivations of the extra sample; Hessian jump along q <= 1e-3 of 2/eta)",
    (0.1, -1): "2/6",
    (0.2, -1): "0/8",
    (0.05, 1): "2/6 (one draw chatters: 4 events in 10 steps)",
    (0.1, 1): "1/6",
    (0.2, 1): "1/8 (6 of 8 draws leave the band)",
}


def boundary_problem(seed: int, draw: int, margin: float | None = None) -> tuple[Model, np.ndarray, float]:
    """(model, theta0, eta): draw ``draw`` of the ReLU EoS family plus a sample ``margin`` below the teacher's boundary.

    The base is :func:`numerics.central_flow.experiments.eos_problem` ("relu", eta = 0.9, c = 1.002, scale 0.3)
    keyed by (seed, draw); the extra sample x* = -m w_hat + sqrt(1 - m^2) g (|x*| = 1, x*^T w = -m |w|, target
    relu(x*^T w) = 0) takes g from a jumped Philox stream of the same key (independent of the base draw).
    """
    seed, draw = _count(seed, "seed", 0), _count(draw, "draw", 0)
    m = BOUNDARY_SETTING["margin"] if margin is None else _positive(margin, "margin")
    if not m < 1:
        raise ValueError(f"margin must lie in (0, 1); got {margin!r}")
    s = BOUNDARY_SETTING
    base, theta0, eta = E.eos_problem("relu", s["eta"], s["c"], s["scale"], seed, draw)
    X, Y = base.data["X"], base.data["Y"]
    w = np.linalg.lstsq(X, Y[:, 0], rcond=None)[0]  # the teacher (Y = X w exactly: every base sample is active)
    what = w / np.linalg.norm(w)
    rng = np.random.Generator(np.random.Philox(key=np.array([seed, draw], dtype=np.uint64)).jumped())
    g = rng.normal(size=what.size)
    g -= (g @ what) * what
    g /= np.linalg.norm(g)
    x = -m * what + np.sqrt(1 - m * m) * g
    return relu_model(np.vstack([X, x]), np.vstack([Y, [[0.0]]]), base.shape[2]), theta0, eta


def frozen_model(model: Model, gates: np.ndarray) -> Model:
    """The polynomial loss of one activation region: ``model`` with its gates held at ``gates`` everywhere.

    Its flows ignore every boundary (no pre-activations): the central flow "frozen in the old region".
    """
    if model.preacts is None:
        raise ValueError(f"model must be a ReLU model (with pre-activations); got {model.name!r}")
    G = np.asarray(gates, dtype=np.float64)
    n_samples, r = model.data["X"].shape[0], model.shape[2]
    if G.shape != (n_samples, r) or not np.all((G == 0) | (G == 1)):
        raise ValueError(f"gates must be a 0/1 array of shape {(n_samples, r)}; got shape {G.shape}")
    X, Y = model.data["X"], model.data["Y"]
    n, d, _ = model.shape

    def loss(th: np.ndarray) -> float:
        V = np.asarray(th)[n * r :].reshape(d, r)
        U = np.asarray(th)[: n * r].reshape(n, r)
        E_ = (G * (X @ V)) @ U.T - Y
        return 0.5 * float(np.sum(E_ * E_))

    return Model(
        f"{model.name}/frozen",
        model.dim,
        model.shape,
        loss,
        lambda th, gates=None, weights=None: model.grad(th, G),
        lambda th, gates=None: model.hessian(th, G),
        lambda th, q, gates=None: model.curvature_grad(th, q, G),
        data={"X": X, "Y": Y, "gates": G},
    )


def boundary_event(model: Model, theta0: np.ndarray, eta: float, steps: int) -> dict[str, Any]:
    """GD of ``steps`` steps and its first boundary event at the edge (``event`` None when there is none).

    Returns ``gd`` (iterates), ``lam`` (lambda_max eta/2 per iterate), ``first`` (first iterate at the edge),
    ``settle`` (:func:`numerics.central_flow.eos.catapult_end` over experiments.EOS_WINDOW steps) and, at
    the first midpoint k_b > ``settle`` whose gate pattern differs from the previous midpoint's, ``event`` =
    {``k``: k_b, ``pairs``: the (sample, unit) pairs that changed, ``dir``: 1 activated / 0 deactivated (of
    the first pair), ``qjump``: q^T (H_new - H_old) q eta/2 at midpoint k_b - 1 (q: the old region's top
    eigenvector), ``straddle``: the steps j (from ``settle``) whose iterates j, j + 1 lie on different sides of
    the first pair's boundary}.
    """
    if model.preacts is None:
        raise ValueError(f"model must be a ReLU model (with pre-activations); got {model.name!r}")
    eta = _positive(eta, "eta")
    steps = _count(steps, "steps", E.EOS_WINDOW + 3)
    gd = F.gradient_descent(model, theta0, eta, steps)
    lam = EOS.sharpness_series(model, gd) * eta / 2
    hit = np.nonzero(lam >= 1)[0]
    out: dict[str, Any] = {"gd": gd, "lam": lam, "first": None, "settle": None, "event": None}
    if hit.size == 0:
        return out
    out["first"] = first = int(hit[0])
    settle = EOS.catapult_end(gd, lam * 2 / eta, eta, first, min(E.EOS_WINDOW, steps - first - 2))
    out["settle"] = settle
    if settle is None:
        return out
    mids = F.midpoints(gd)
    G = (np.array([model.preacts(x) for x in mids]) > 0).astype(np.float64)
    ks = [k for k in range(settle + 1, len(G)) if not np.array_equal(G[k], G[k - 1])]
    if not ks:
        return out
    k = ks[0]
    pairs = [(int(a), int(b)) for a, b in np.argwhere(G[k] != G[k - 1])]
    H0, H1 = model.hessian(mids[k - 1], G[k - 1]), model.hessian(mids[k - 1], G[k])
    q = np.linalg.eigh(H0)[1][:, -1]
    Z = np.array([model.preacts(x)[pairs[0]] for x in gd])
    out["event"] = {
        "k": k,
        "pairs": pairs,
        "dir": int(G[k][pairs[0]]),
        "qjump": float(q @ (H1 - H0) @ q) * eta / 2,
        "straddle": [int(j) for j in range(settle, steps) if (Z[j] > 0) != (Z[j + 1] > 0)],
        "later": len(ks) - 1,
    }
    return out


def _sep(model: Model, a: np.ndarray, b: np.ndarray) -> float:
    """max over samples of |a - b| / |a| and |law(a) - law(b)| / |a|^2 (the scales of eos.tracking_errors)."""
    nrm = np.linalg.norm(a, axis=1)
    d = np.linalg.norm(np.asarray(CL.law(a, model)) - np.asarray(CL.law(b, model)), axis=1)
    return float(max(np.max(np.linalg.norm(a - b, axis=1) / nrm), np.max(d / nrm**2)))


def boundary_track(i: int, post: int = 300, pre: int = 30, perturb: float = 0.0) -> dict[str, Any]:
    """Draw ``i`` of :func:`boundary_problem` (seed experiments.SEED): GD against the flows across its boundary event.

    ``used`` is False (with the reason) when GD has no boundary event after the catapult, the event leaves
    fewer than ``post`` steps, or the sharpness leaves the 10% band over the compared steps. Otherwise the
    flows start at the first midpoint m_j, j in [max(settle, k_b - ``pre``), k_b), below the edge (t0 = j + 1/2)
    and are sampled at t = k + 1/2, k = j + 1 .. k_b + ``post`` - 1: the averaged central flow (``acf``), gradient
    flow (``gf``) and the central flow frozen in the pre-event region (``frozen``, :func:`frozen_model`). Each
    gets :func:`numerics.central_flow.eos.tracking_errors` over the steps before the event (``pre``) and from it
    on (``post``), both with ``tol`` = C (rho + a^2), rho and a over all compared steps; ``sep_gf`` and
    ``sep_frozen`` are each alternative's largest separation from the averaged flow after the event (parameters
    and laws, :func:`_sep`), ``acf_cross`` the time the averaged flow's centre crosses the event's first pair.
    """
    i = _count(i, "i", 0)
    post, pre = _count(post, "post"), _count(pre, "pre")
    model, th, eta = boundary_problem(E.SEED, i)
    th = perturb_relative(th, perturb, "boundary_problem", E.SEED, i)
    steps = BOUNDARY_SETTING["steps"]
    ev = boundary_event(model, th, eta, steps)
    out: dict[str, Any] = {"draw": i, "eta": eta, "first": ev["first"], "settle": ev["settle"], "used": False}
    if ev["event"] is None:
        return {**out, "why": "no boundary event after the catapult"}
    e = ev["event"]
    kb = e["k"]
    out.update(event=kb, pairs=e["pairs"], dir=e["dir"], qjump=e["qjump"], straddle=len(e["straddle"]),
               straddle_span=(e["straddle"][0], e["straddle"][-1]) if e["straddle"] else None)  # fmt: skip
    if kb + post + 1 >= steps:
        return {**out, "why": f"the event at {kb} leaves fewer than {post} steps"}
    gd, mids = ev["gd"], F.midpoints(ev["gd"])
    j0 = next((j for j in range(max(ev["settle"], kb - pre), kb) if SPEC.sharpness(model, mids[j])[0] < 2 / eta), None)
    if j0 is None:
        return {**out, "why": "no midpoint below the edge before the event"}
    band = float(np.max(np.abs(ev["lam"][j0 : kb + post + 1] - 1)))
    out["band"] = band
    if band > BAND:
        return {**out, "why": f"the sharpness leaves the {BAND:.0%} band (max |lambda eta/2 - 1| = {band:.3f})"}
    t0 = j0 + 0.5
    times = np.arange(j0 + 1, kb + post) + 0.5
    acf = AV.averaged_central_flow(model, mids[j0], eta, t0, float(times[-1]), times)
    rel = times - t0
    gf = F.gradient_flow(model, mids[j0], eta, float(rel[-1]), rel)
    G_old = model.gates(mids[kb - 1])
    assert G_old is not None
    frz = F.hybrid_flow(frozen_model(model, G_old), mids[j0], eta, float(rel[-1]), rel)
    after = times >= kb
    full = EOS.tracking_errors(model, gd, eta, times, acf["theta"], acf["s"])
    fm = frozen_model(model, G_old)
    flows = {
        "acf": (acf["theta"], acf["s"]),
        "gf": (gf.theta, np.zeros(gf.t.size)),
        "frozen": (frz.theta, np.array([EOS.cf_sigma2(fm, x, eta, int(k)) for x, k in zip(frz.theta, frz.k)])),
    }
    res: dict[str, Any] = {}
    for name, (path, s2) in flows.items():
        n = path.shape[0]
        part = {}
        for win, mask in (("pre", ~after[:n]), ("post", after[:n])):
            got = EOS.tracking_errors(model, gd, eta, times[:n][mask], path[mask], s2[mask]) if mask.any() else None
            part[win] = None if got is None else got["errors"]
        res[name] = part
    preacts = model.preacts
    assert preacts is not None  # a ReLU model (boundary_problem builds one)
    za = np.array([preacts(x)[e["pairs"][0]] for x in acf["theta"]])
    cross = np.nonzero(np.sign(za[1:]) != np.sign(za[:-1]))[0]
    post_f = after[: frz.theta.shape[0]]
    return {
        **out,
        "used": True,
        "t_start": t0,
        "t_end": float(times[-1]),
        "tol": full["tol"],
        "rho": full["rho"],
        "a": full["a"],
        "errors": res,
        "sep_gf": _sep(model, acf["theta"][after], gf.theta[after]),
        "sep_frozen": _sep(model, acf["theta"][: post_f.size][post_f], frz.theta[post_f]) if post_f.any() else None,
        "frozen_stop": frz.stop,
        "acf_cross": float(times[cross[0] + 1]) if cross.size else None,
        "acf_lam": (float(acf["lam"].min() * eta / 2), float(acf["lam"].max() * eta / 2)),
        "acf_residual": float(acf["max_residual"]),
        "acf_restarts": int(acf["restarts"]),
    }
