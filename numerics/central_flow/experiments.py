"""The central-flow paper's experiments: the settings read for the lost ones and their random draws.

The text lost every setting of Figures 1-4 except r = 2 (matrix factorisation), r = 3 (ReLU),
T = 200 (scalar) and "three random seeds"; :data:`SETTINGS` holds the reading (one step size
eta = 0.9, targets of unit scale, unbalanced sub-critical starts whose gradient flow sharpens
past 2/eta). Draw ``draw`` of a model under ``seed`` comes from a Philox generator keyed by
(seed, draw) (:func:`philox`), so every draw is reproducible on its own and independent of the
order in which draws are made; :func:`scalar_setting`, :func:`mf_setting` and
:func:`relu_setting` return (model, theta0, eta) for one draw. The checks in
``verify/central_flow/test_simulations.py`` run the flows of :mod:`numerics.central_flow.flows`
on these draws.

>>> model, theta0, eta = scalar_setting(0, 1)
>>> model.name, theta0.shape, eta
('scalar', (2,), 0.9)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numerics.central_flow.models import Model, _count, mf_model, mf_pack, relu_model, scalar_model

__all__ = [
    "philox",
    "SETTINGS",
    "scalar_setting",
    "mf_setting",
    "relu_setting",
]


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
SETTINGS: dict[str, dict[str, Any]] = {
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
    return mf_model(Y, r), mf_pack(U, V), c["eta"]


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
    return relu_model(X, Y, r), mf_pack(U, V), c["eta"]
