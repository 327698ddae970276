"""derivations.rare_gates.gradient_bounds against the float64 sample gradients."""

from __future__ import annotations

import numpy as np
import sympy as sp

from derivations.rare_gates import gradient_bounds as GB
from numerics.rare_gates import one_step as OS


def test_gate_chart_identity():
    assert GB.gate_chart_gradient_identity() == 0


def test_bound_is_attained_and_not_exceeded():
    a_max, w_max, r = 1.5, 0.7, float(GB.DISK_RADIUS)
    g = float(GB.sample_gradient_bound().subs({GB.A: a_max, GB.W: w_max, GB.R: r}))
    u = np.array([0.6, 0.8])
    corner = np.array([-a_max, -a_max, *(w_max * u), *(w_max * u)])
    for task in ("source", "target"):
        at = np.linalg.norm(OS.sample_gradients(corner, task, (r * u)[None, :]), axis=1)[0]
        assert abs(at - g) <= 1e-12 * g or task == "source"  # source label relu(x1) < |x| off e1: below the bound
        assert at <= g * (1 + 1e-12)
    rng = np.random.default_rng(3)
    th = rng.uniform(-1, 1, size=(500, 6)) * np.array([a_max, a_max, *[w_max / np.sqrt(2)] * 4])
    x = OS.sample_disk(rng, (64,))
    worst = max(float(np.linalg.norm(OS.sample_gradients(t, "target", x), axis=1).max()) for t in th)
    assert worst <= g
    assert sp.simplify(GB.noise_bound() - 2 * GB.risk_lipschitz_bound()) == 0
