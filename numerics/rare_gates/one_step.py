"""One SGD step of the two-unit model from a fixed parameter, over many independent minibatches (vectorised NumPy).

The model is that of :mod:`numerics.rare_gates.model`: ``theta = (a1, a2, w1x, w1y, w2x, w2y)``,
``f(x) = a1 relu(w1.x) + a2 relu(w2.x)``, inputs uniform on the disk of radius 2, source label
``relu(x1)``, target label ``|x|``, objective ``R + lam/2 |theta|^2`` with ``R = E[(f - y)^2]/2``.
The per-sample gradient uses ``relu'(0) = 0`` (zero-gate inputs have probability zero).

* :func:`minibatch_gradients`: ``n`` independent minibatch gradients of ``b`` inputs each;
  :func:`sgd_step`: the post-step parameters ``theta - eta * gradient``.
* :func:`common_gate_step`: the auxiliary process of Section 7.1. Both units use the gate
  ``g(x) = 1{w.x > 0}`` of the common hidden vector ``w = (w1 + w2)/sqrt(2)`` and the predictor
  ``f_aux(x) = g(x) U.x`` with ``U = a1 w1 + a2 w2``; its SGD step maps each full neuron
  ``z_i = (a_i, w_i)`` to ``Q z_i`` with the same random symmetric matrix
  ``Q = (1 - eta lam) I - eta [[0, v^T], [v, 0]]``, ``v = (1/b) sum_j (f_aux(X_j) - |X_j|) g(X_j) X_j``.
* :func:`target_coordinates` (Section 7): ``h = (z1 + z2)/sqrt(2)``, ``d_z = (z1 - z2)/sqrt(2)``,
  ``rho = h.d_z/|h|^2``, ``e = d_z - rho h``; :func:`projective_separation` (Appendix 11):
  ``d = |w1/a1 - w2/a2|``; :func:`angle` the angle between ``w1`` and ``w2``.

Every function that draws takes an explicit integer ``seed`` (``numpy.random.default_rng(seed)``)
or a ``numpy.random.Generator``; nothing is seeded globally.

>>> th = np.array([0.6, 0.6, 0.6, 0.001, 0.6, -0.001])
>>> post = sgd_step(th, "target", 0.05, eta=0.01, b=4, n=3, seed=1)
>>> post.shape
(3, 6)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from numerics import validation as V
from numerics.rare_gates import model

RADIUS = 2.0  # the disk's radius: E|X|^2 = 2
MAX_DRAWS = 2**27  # n * b inputs per call at most (about 2 GiB of float64 inputs)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(V.integer(seed, "seed", 0))


def _theta(theta) -> np.ndarray:
    th = np.asarray(theta, dtype=float)
    if th.shape != (6,) or not np.all(np.isfinite(th)):
        raise ValueError(f"theta must be a finite vector of shape (6,) = (a1, a2, w1x, w1y, w2x, w2y); got {theta!r}")
    return th


def _thetas(theta) -> np.ndarray:
    th = np.asarray(theta, dtype=float)
    if th.ndim not in (1, 2) or th.shape[-1] != 6 or not np.all(np.isfinite(th)):
        raise ValueError(f"theta must be finite with last axis of length 6; got shape {np.shape(theta)}")
    return th


def _lam(lam) -> float:
    return V.real(lam, "lam (weight decay)", 0.0)


def _sizes(b, n) -> tuple[int, int]:
    b = V.integer(b, "b", 1)
    n = V.integer(n, "n", 1)
    if b * n > MAX_DRAWS:
        raise ValueError(f"n * b must be at most {MAX_DRAWS} inputs per call; got n = {n}, b = {b}")
    return b, n


def sample_disk(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Inputs uniform on the disk of radius 2, shape ``shape + (2,)`` (r = 2 sqrt(U), angle 2 pi V)."""
    r = RADIUS * np.sqrt(rng.random(shape))
    phi = 2.0 * math.pi * rng.random(shape)
    return np.stack((r * np.cos(phi), r * np.sin(phi)), axis=-1)


def sample_gradients(theta: npt.ArrayLike, task: str, x: np.ndarray) -> np.ndarray:
    """Per-sample gradients of ``(f(x) - y(x))^2 / 2`` in theta (no weight decay), shape ``x.shape[:-1] + (6,)``."""
    th = _theta(theta)
    target = model.is_target(task)
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"x must have last axis of length 2; got shape {x.shape}")
    a = th[:2]
    w = th[2:].reshape(2, 2)
    pre = x @ w.T  # (..., 2): w_i.x
    gate = pre > 0.0
    act = np.where(gate, pre, 0.0)
    f = act @ a
    y = np.linalg.norm(x, axis=-1) if target else np.maximum(x[..., 0], 0.0)
    res = f - y
    out = np.empty(x.shape[:-1] + (6,))
    out[..., 0:2] = res[..., None] * act
    for i in range(2):
        out[..., 2 + 2 * i : 4 + 2 * i] = (res * a[i] * gate[..., i])[..., None] * x
    return out


def minibatch_gradients(theta: npt.ArrayLike, task: str, lam: float, b: int, n: int, seed) -> np.ndarray:
    """``n`` independent minibatch gradients ``(1/b) sum_j grad l(X_j) + lam theta``, shape ``(n, 6)``."""
    th = _theta(theta)
    model.is_target(task)
    lam = _lam(lam)
    b, n = _sizes(b, n)
    x = sample_disk(_rng(seed), (n, b))
    return sample_gradients(th, task, x).mean(axis=1) + lam * th


def sgd_step(theta: npt.ArrayLike, task: str, lam: float, eta: float, b: int, n: int, seed) -> np.ndarray:
    """Post-step parameters ``theta - eta * minibatch gradient`` for ``n`` independent minibatches, shape ``(n, 6)``."""
    eta = V.positive(eta, "eta")
    th = _theta(theta)
    return th - eta * minibatch_gradients(th, task, lam, b, n, seed)


def sgd_steps(
    theta: npt.ArrayLike, task: str, lam: float, eta: float, b: int, streams: int, steps: int, seed, record=None
) -> np.ndarray:
    """``steps`` SGD updates on ``streams`` independent streams from one ``theta``; returns the final (streams, 6).

    ``record(n, thetas)``, when given, is called before every update (n = 0..steps-1) and after the last (n = steps).
    """
    eta = V.positive(eta, "eta")
    lam = _lam(lam)
    target = model.is_target(task)
    b, streams = _sizes(b, streams)
    steps = V.integer(steps, "steps", 0)
    rng = _rng(seed)
    th = np.tile(_theta(theta), (streams, 1))
    for k in range(steps + 1):
        if record is not None:
            record(k, th)
        if k == steps:
            break
        x = sample_disk(rng, (streams, b))
        a = th[:, :2]
        w = th[:, 2:].reshape(streams, 2, 2)
        pre = np.einsum("sjd,sid->sji", x, w)  # (streams, b, 2)
        gate = pre > 0.0
        act = np.where(gate, pre, 0.0)
        f = np.einsum("sji,si->sj", act, a)
        y = np.linalg.norm(x, axis=-1) if target else np.maximum(x[..., 0], 0.0)
        res = f - y
        grad = np.empty_like(th)
        grad[:, :2] = np.einsum("sj,sji->si", res, act) / b
        for i in range(2):
            grad[:, 2 + 2 * i : 4 + 2 * i] = a[:, i : i + 1] * np.einsum("sj,sjd->sd", res * gate[..., i], x) / b
        th = th - eta * (grad + lam * th)
    return th


def _neurons(th: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full neurons z_i = (a_i, w_i) of parameter rows, each of shape (..., 3)."""
    z1 = np.concatenate((th[..., 0:1], th[..., 2:4]), axis=-1)
    z2 = np.concatenate((th[..., 1:2], th[..., 4:6]), axis=-1)
    return z1, z2


def _from_neurons(z1: np.ndarray, z2: np.ndarray) -> np.ndarray:
    return np.concatenate((z1[..., 0:1], z2[..., 0:1], z1[..., 1:3], z2[..., 1:3]), axis=-1)


def target_coordinates(theta: npt.ArrayLike) -> dict:
    """Section 7's coordinates of parameter row(s): ``h``, ``d_z``, ``rho``, ``e`` (vectors of length 3)."""
    th = _thetas(theta)
    z1, z2 = _neurons(th)
    h = (z1 + z2) / math.sqrt(2.0)
    dz = (z1 - z2) / math.sqrt(2.0)
    hh = np.sum(h * h, axis=-1)
    if np.any(hh == 0.0):
        raise ValueError("theta: h = (z1 + z2)/sqrt(2) must be nonzero")
    rho = np.sum(h * dz, axis=-1) / hh
    e = dz - rho[..., None] * h
    return {"h": h, "d_z": dz, "rho": rho, "e": e}


def from_target_coordinates(h: npt.ArrayLike, rho: float, e: npt.ArrayLike) -> np.ndarray:
    """The parameter with ``h``, ``d_z = rho h + e`` (``e`` is projected off ``h``): z_{1,2} = (h +- d_z)/sqrt(2)."""
    hv = np.asarray(h, dtype=float)
    ev = np.asarray(e, dtype=float)
    if hv.shape != (3,) or ev.shape != (3,) or not (np.all(np.isfinite(hv)) and np.all(np.isfinite(ev))):
        raise ValueError(f"h and e must be finite vectors of shape (3,); got {h!r}, {e!r}")
    if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not math.isfinite(rho):
        raise ValueError(f"rho must be a finite real number; got {rho!r}")
    hh = float(hv @ hv)
    if hh == 0.0:
        raise ValueError("h must be nonzero")
    ev = ev - (hv @ ev) / hh * hv
    dz = rho * hv + ev
    return _from_neurons((hv + dz) / math.sqrt(2.0), (hv - dz) / math.sqrt(2.0))


def projective_separation(theta: npt.ArrayLike) -> Any:
    """``d = |w1/a1 - w2/a2|`` (Appendix 11) of parameter row(s); amplitudes must be nonzero."""
    th = _thetas(theta)
    if np.any(th[..., 0] == 0.0) or np.any(th[..., 1] == 0.0):
        raise ValueError("theta: amplitudes a1, a2 must be nonzero for the projective separation")
    diff = th[..., 2:4] / th[..., 0:1] - th[..., 4:6] / th[..., 1:2]
    return np.linalg.norm(diff, axis=-1)[()]  # a float64 for one row, an array for several


def angle(theta: npt.ArrayLike) -> Any:
    """Angle in [0, pi] between w1 and w2 of parameter row(s) (atan2 of cross and dot: accurate near 0)."""
    th = _thetas(theta)
    cross = th[..., 2] * th[..., 5] - th[..., 3] * th[..., 4]
    dot = th[..., 2] * th[..., 4] + th[..., 3] * th[..., 5]
    return np.arctan2(np.abs(cross), dot)[()]  # a float64 for one row, an array for several


def common_gate_matrix(theta: npt.ArrayLike, lam: float, eta: float, b: int, n: int, seed) -> np.ndarray:
    """The random matrices ``Q`` of the common-gate step (Section 7.1) for ``n`` minibatches, shape ``(n, 3, 3)``."""
    th = _theta(theta)
    lam = _lam(lam)
    eta = V.positive(eta, "eta")
    b, n = _sizes(b, n)
    z1, z2 = _neurons(th)
    w = (z1[1:] + z2[1:]) / math.sqrt(2.0)
    if not np.any(w != 0.0):
        raise ValueError("theta: the common hidden vector (w1 + w2)/sqrt(2) must be nonzero")
    U = th[0] * th[2:4] + th[1] * th[4:6]
    x = sample_disk(_rng(seed), (n, b))
    g = (x @ w) > 0.0
    res = np.where(g, x @ U, 0.0) - np.linalg.norm(x, axis=-1)
    v = np.einsum("nj,njd->nd", res * g, x) / b
    Q = np.zeros((n, 3, 3))
    Q[:, 0, 1:] = v
    Q[:, 1:, 0] = v
    Q *= -eta
    Q += (1.0 - eta * lam) * np.eye(3)
    return Q


def common_gate_step(theta: npt.ArrayLike, lam: float, eta: float, b: int, n: int, seed) -> np.ndarray:
    """Post-step parameters of the common-gate process (Section 7.1): ``z_i -> Q z_i`` per minibatch, shape (n, 6)."""
    th = _theta(theta)
    Q = common_gate_matrix(th, lam, eta, b, n, seed)
    z1, z2 = _neurons(th)
    return _from_neurons(Q @ z1, Q @ z2)


def common_gate_steps(
    theta: npt.ArrayLike, lam: float, eta: float, b: int, streams: int, steps: int, seed, record=None
) -> np.ndarray:
    """``steps`` common-gate updates on ``streams`` independent streams from one ``theta``; returns (streams, 6).

    The gate of each update is that of the current common hidden vector of its stream.
    ``record(n, thetas)`` is called before every update and after the last.
    """
    lam = _lam(lam)
    eta = V.positive(eta, "eta")
    b, streams = _sizes(b, streams)
    steps = V.integer(steps, "steps", 0)
    rng = _rng(seed)
    th = np.tile(_theta(theta), (streams, 1))
    z1, z2 = _neurons(th)
    for k in range(steps + 1):
        if record is not None:
            record(k, _from_neurons(z1, z2))
        if k == steps:
            break
        w = (z1[:, 1:] + z2[:, 1:]) / math.sqrt(2.0)
        U = z1[:, :1] * z1[:, 1:] + z2[:, :1] * z2[:, 1:]
        x = sample_disk(rng, (streams, b))
        g = np.einsum("sjd,sd->sj", x, w) > 0.0
        res = np.where(g, np.einsum("sjd,sd->sj", x, U), 0.0) - np.linalg.norm(x, axis=-1)
        v = np.einsum("sj,sjd->sd", res * g, x) / b
        decay = 1.0 - eta * lam
        z1 = np.concatenate((decay * z1[:, :1] - eta * np.sum(v * z1[:, 1:], axis=1, keepdims=True),
                             decay * z1[:, 1:] - eta * z1[:, :1] * v), axis=1)  # fmt: skip
        z2 = np.concatenate((decay * z2[:, :1] - eta * np.sum(v * z2[:, 1:], axis=1, keepdims=True),
                             decay * z2[:, 1:] - eta * z2[:, :1] * v), axis=1)  # fmt: skip
    return _from_neurons(z1, z2)


def disagreements(theta: npt.ArrayLike, x: np.ndarray) -> np.ndarray:
    """Whether the gates of w1 and w2 differ on each input of ``x`` (shape ``x.shape[:-1]``)."""
    th = _theta(theta)
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] != 2:
        raise ValueError(f"x must have last axis of length 2; got shape {x.shape}")
    return (x @ th[2:4] > 0.0) != (x @ th[4:6] > 0.0)


def target_clone_state(B: float, p: float, psi: float = 0.0) -> np.ndarray:
    """The balanced proportional point ``a_i = r_i = sqrt(omega_i)``, ``omega_1 = p B``, ``omega_2 = (1 - p) B``,
    both hidden vectors along ``(cos psi, sin psi)``."""
    B = V.positive(B, "B")
    if not isinstance(p, (int, float)) or not 0.0 < p < 1.0:
        raise ValueError(f"p (allocation) must lie in (0, 1); got {p!r}")
    if not isinstance(psi, (int, float)) or not math.isfinite(psi):
        raise ValueError(f"psi must be a finite real number; got {psi!r}")
    r1, r2 = math.sqrt(p * B), math.sqrt((1.0 - p) * B)
    c, s = math.cos(psi), math.sin(psi)
    return np.array([r1, r2, r1 * c, r1 * s, r2 * c, r2 * s])


def allocation_increment(theta: npt.ArrayLike, lam: float, eta: float, b: int, n: int, seed) -> dict:
    """One source SGD step from ``theta`` over ``n`` minibatches: the allocation increment and its bound (App. 11.1).

    ``l_a = log(a1/a2)`` (amplitudes must be positive). Returns, per minibatch:

    * ``dl``: ``l_a^+ - l_a`` from the model's SGD step (:func:`sample_gradients`), as
      ``log1p(-eta g_1/a_1) - log1p(-eta g_2/a_2)`` with ``g_i`` the minibatch gradient in ``a_i``;
    * ``dl_form``: Appendix 11.1's form ``log[(s - (eta/b) sum R_j relu(u_1.X_j)) / (s - (eta/b) sum R_j
      relu(u_2.X_j))]``, ``s = 1 - eta lam``, ``u_i = w_i/a_i``, ``R_j = f(X_j) - relu(X_j1)``;
    * ``bound``: ``eta d (1/b) sum_j |R_j| |X_j| / min(den_1, den_2)`` (``d = |u_1 - u_2|``), which bounds
      ``|dl|`` for every batch: ``|log x - log y| <= |x - y|/min(x, y)`` and ``|relu(s) - relu(t)| <= |s - t|``;
    * ``disagree``: whether some input of the batch has different gates for u_1 and u_2;
    * ``d`` (a float) and the inputs' largest ``|u_i.X|/(d |X|)`` and ``|X_1|/|X|`` over disagreeing inputs
      (``wedge_u``, ``wedge_x1``; NaN when none), the two local bounds of Appendix 11.1.
    """
    th = _theta(theta)
    lam = _lam(lam)
    eta = V.positive(eta, "eta")
    b, n = _sizes(b, n)
    if th[0] <= 0.0 or th[1] <= 0.0:
        raise ValueError(f"theta: amplitudes a1, a2 must be > 0 for l_a = log(a1/a2); got {th[:2]!r}")
    x = sample_disk(_rng(seed), (n, b))
    grad = sample_gradients(th, "source", x).mean(axis=1) + lam * th
    dl = np.log1p(-eta * grad[:, 0] / th[0]) - np.log1p(-eta * grad[:, 1] / th[1])
    u = np.stack((th[2:4] / th[0], th[4:6] / th[1]))  # (2, 2): u_1, u_2
    pre = x @ u.T  # (n, b, 2)
    act = np.maximum(pre, 0.0)
    # f = sum_i a_i relu(w_i.x) = sum_i a_i^2 relu(u_i.x) for a_i > 0 (positive homogeneity)
    res = np.einsum("nbi,i->nb", act, th[:2] ** 2) - np.maximum(x[..., 0], 0.0)
    den = (1.0 - eta * lam) - eta * np.einsum("nb,nbi->ni", res, act) / b  # (n, 2)
    dl_form = np.log(den[:, 0] / den[:, 1])
    d = float(np.hypot(*(u[0] - u[1])))
    norm = np.hypot(x[..., 0], x[..., 1])
    bound = eta * d * np.mean(np.abs(res) * norm, axis=1) / np.min(den, axis=1)
    dis = (pre[..., 0] > 0.0) != (pre[..., 1] > 0.0)
    wedge_u = np.max(np.abs(pre[dis]), axis=-1) / (d * norm[dis]) if np.any(dis) else np.array([np.nan])
    wedge_x1 = np.abs(x[..., 0][dis]) / norm[dis] if np.any(dis) else np.array([np.nan])
    return {
        "dl": dl,
        "dl_form": dl_form,
        "bound": bound,
        "disagree": np.any(dis, axis=1),
        "d": d,
        "wedge_u": float(np.max(wedge_u)),
        "wedge_x1": float(np.max(wedge_x1)),
    }


def coupled_target_runs(
    theta: npt.ArrayLike, lam: float, eta: float, b: int, streams: int, steps: int, seed, risk_every: int = 10
) -> dict:
    """Target SGD and the common-gate process on the same inputs, from one ``theta`` (Section 7.4's coupling).

    Both :func:`sgd_steps` and :func:`common_gate_steps` draw one ``(streams, b)`` batch per update
    from ``default_rng(seed)``, so with one seed they meet the same inputs; the batches are redrawn
    here to find each stream's first disagreeing batch. Returns per stream: ``n_dis`` (index of the
    first update whose batch holds an input with different gates for w_1, w_2 along the SGD path;
    ``steps`` if none), ``dev_before`` (largest |theta_SGD - theta_cg| over states 0..n_dis),
    ``dev_after`` (|theta_SGD - theta_cg| at state n_dis + 1; NaN if none), ``n_hit`` (first checked
    state, every ``risk_every`` updates, with target risk <= 0.4 on the SGD path; -1 if none) and
    ``cg_min_risk`` (smallest target risk of the common-gate path at the checked states).
    """
    steps = V.integer(steps, "steps", 1)
    risk_every = V.integer(risk_every, "risk_every", 1)
    b, streams = _sizes(b, streams)
    paths = {"sgd": np.empty((steps + 1, streams, 6)), "cg": np.empty((steps + 1, streams, 6))}

    def keeper(name):
        def record(k, th):
            paths[name][k] = th

        return record

    sgd_steps(theta, "target", lam, eta, b, streams, steps, seed, record=keeper("sgd"))
    common_gate_steps(theta, lam, eta, b, streams, steps, seed, record=keeper("cg"))
    rng = _rng(seed)
    n_dis = np.full(streams, steps)
    for k in range(steps):
        x = sample_disk(rng, (streams, b))
        w = paths["sgd"][k][:, 2:].reshape(streams, 2, 2)
        pre = np.einsum("sjd,sid->sji", x, w)
        hit = np.any((pre[..., 0] > 0.0) != (pre[..., 1] > 0.0), axis=1) & (n_dis == steps)
        n_dis[hit] = k
    dev = np.max(np.abs(paths["sgd"] - paths["cg"]), axis=2)  # (steps + 1, streams)
    idx = np.arange(streams)
    dev_before = np.array([dev[: n_dis[s] + 1, s].max() for s in idx])
    dev_after = np.where(n_dis < steps, dev[np.minimum(n_dis + 1, steps), idx], np.nan)
    checked = range(0, steps + 1, risk_every)
    risk_sgd = np.array([[model.target_risk(paths["sgd"][k, s]) for s in idx] for k in checked])
    risk_cg = np.array([[model.target_risk(paths["cg"][k, s]) for s in idx] for k in checked])
    below = risk_sgd <= 0.4
    n_hit = np.where(np.any(below, axis=0), np.argmax(below, axis=0) * risk_every, -1)
    return {
        "n_dis": n_dis,
        "dev_before": dev_before,
        "dev_after": dev_after,
        "n_hit": n_hit,
        "cg_min_risk": risk_cg.min(axis=0),
    }
