"""Edge-of-stability diagnostics of gradient descent and its comparison with the central flow.

GD at the edge of stability (EoS; Section 1 of arXiv 2611.06718): the sharpness lambda_max(H(theta_k))
rises to 2/eta and hovers there while the iterates oscillate with period two. Measured here:

- :func:`sharpness_series`: lambda_max at every iterate (dense exact Hessian);
- :func:`period_two_amplitude`: |theta_{k+1} - 2 theta_k + theta_{k-1}| / 4 at every inner iterate
  (= b for theta_k = a + (-1)^k b), relative to |theta_k|;
- :func:`edge_stats`: from the first step with lambda_max eta/2 >= 1, over ``window`` steps, the
  fraction of steps within ``band`` of 2/eta ("edge"), with a period-two amplitude above
  ``amp_floor`` ("oscillating"), and both ("EoS"); sustained when the window is complete and the
  EoS fraction is >= ``need``;
- :func:`catapult_end`: where the catapult ends, the first step from which GD stays on a slow period-two
  orbit at the edge (sharpness within ``band`` of 2/eta, the centre's step at most 1/TRACK_C of the
  oscillation) to the end of the window (the comparisons with the flows start there);
- :func:`tracking_errors`: time-averaged GD (adjacent-iterate midpoints, at t = k + 1/2) against a
  central-flow trajectory at the same times, on the slow quantities, and the theory tolerance
  :func:`tracking_tolerance` = C (rho + a^2) (see there).

>>> edge_stats(np.array([0.5, 1.05, 0.95, 1.05, 0.97]), 2.0, np.array([0.0, 0.1, 0.1, 0.1, 0.1]), window=3)["frac_eos"]
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from numerics.central_flow import laws as CL
from numerics.central_flow import spectra as SPEC
from numerics.central_flow.models import Model
from numerics.validation import integer, positive

__all__ = [
    "sharpness_series",
    "period_two_amplitude",
    "edge_stats",
    "catapult_end",
    "tracking_tolerance",
    "tracking_errors",
    "TRACK_C",
    "AMP_FLOOR",
    "cf_sigma2",
]

AMP_FLOOR = 1e-3  # "oscillating": period-two amplitude >= 0.1% of |theta| (a converged GD decays to ~1e-15)
TRACK_C = 10.0  # the constant of the tracking tolerance C (rho + a^2); reason in tracking_tolerance


def _iterates(iterates: ArrayLike, name: str = "iterates", rows: int = 1) -> np.ndarray:
    it = np.asarray(iterates, dtype=np.float64)
    if it.ndim != 2 or it.shape[0] < rows or not np.all(np.isfinite(it)):
        raise ValueError(f"{name} must be a finite 2-D array with at least {rows} rows; got shape {it.shape}")
    return it


def sharpness_series(model: Model, iterates: ArrayLike) -> np.ndarray:
    """lambda_max(H(theta_k)) for every row theta_k of ``iterates`` (dense exact Hessian; ReLU: region of theta_k).

    >>> from numerics.central_flow.models import scalar_model
    >>> sharpness_series(scalar_model(0.0), [[1.0, 0.0], [0.0, 2.0]]).tolist()
    [1.0, 4.0]
    """
    it = _iterates(iterates)
    if it.shape[1] != model.dim:
        raise ValueError(f"iterates must have {model.dim} columns (the model's parameters); got {it.shape[1]}")
    return np.array([float(np.linalg.eigvalsh(model.hessian(x))[-1]) for x in it])


def period_two_amplitude(iterates: ArrayLike) -> np.ndarray:
    """|theta_{k+1} - 2 theta_k + theta_{k-1}| / (4 |theta_k|) at every iterate (NaN at the two ends).

    >>> period_two_amplitude([[1.0, 1.0], [3.0, 1.0], [1.0, 1.0]]).round(3).tolist()
    [nan, 0.316, nan]
    """
    it = _iterates(iterates, rows=3)
    out = np.full(it.shape[0], np.nan)
    d2 = np.linalg.norm(np.diff(it, 2, axis=0), axis=1) / 4
    norm = np.linalg.norm(it[1:-1], axis=1)
    out[1:-1] = np.divide(d2, norm, out=np.zeros_like(d2), where=norm > 0)
    return out


def edge_stats(
    lam: ArrayLike,
    eta: float,
    amp: ArrayLike,
    window: int = 200,
    band: float = 0.1,
    amp_floor: float = AMP_FLOOR,
    need: float = 0.8,
) -> dict[str, Any]:
    """Where GD first reaches 2/eta and how it behaves over the next ``window`` steps.

    ``lam``: lambda_max per iterate; ``amp``: relative period-two amplitude per iterate
    (:func:`period_two_amplitude`; NaN counts as not oscillating). Returns ``first`` (None if
    lambda_max eta/2 never reaches 1), ``steps`` (window length available), ``frac_edge``
    (|lambda eta/2 - 1| <= band), ``frac_osc`` (amp >= amp_floor), ``frac_eos`` (both), ``sustained``
    (steps == window and frac_eos >= need), and the window's min, max and last lambda eta/2.
    """
    r = np.asarray(lam, dtype=np.float64) * positive(eta, "eta") / 2
    a = np.asarray(amp, dtype=np.float64)
    if r.ndim != 1 or a.shape != r.shape:
        raise ValueError(f"lam and amp must be 1-D arrays of the same length; got {r.shape} and {a.shape}")
    window = integer(window, "window", 1)
    band, amp_floor = positive(band, "band"), positive(amp_floor, "amp_floor")
    if not 0 < need <= 1:
        raise ValueError(f"need must be a fraction in (0, 1]; got {need!r}")
    hit = np.nonzero(r >= 1)[0]
    if hit.size == 0:
        return {"first": None, "steps": 0, "frac_edge": 0.0, "frac_osc": 0.0, "frac_eos": 0.0, "sustained": False,
                "lam_min": float("nan"), "lam_max": float(r.max()), "lam_last": float(r[-1])}  # fmt: skip
    first = int(hit[0])
    w, wa = r[first : first + window], a[first : first + window]
    edge = np.abs(w - 1) <= band
    osc = np.nan_to_num(wa, nan=0.0) >= amp_floor
    return {
        "first": first,
        "steps": int(w.size),
        "frac_edge": float(edge.mean()),
        "frac_osc": float(osc.mean()),
        "frac_eos": float((edge & osc).mean()),
        "sustained": bool(w.size == window and (edge & osc).mean() >= need),
        "lam_min": float(w.min()),
        "lam_max": float(w.max()),
        "lam_last": float(r[-1]),
    }


def catapult_end(
    iterates: ArrayLike, lam: ArrayLike, eta: float, first: int, window: int = 200, band: float = 0.1
) -> int | None:
    """Where the catapult ends: the first k >= ``first`` from which GD is on a slow period-two orbit at the edge.

    The catapult is GD's first passage over the edge: the sharpness overshoots 2/eta and swings around it by more
    than ``band`` while the iterates' centre moves fast (the loss spikes and the factors rebalance). It has ended
    at step k when from k to the window's end (``first .. first + window - 1``) every step has both
    |lambda_j eta/2 - 1| <= ``band`` (the EoS band of :func:`edge_stats`) and a slow centre: the midpoints' relative
    step |m_{j+1} - m_j| / |m_j| at most a_j / TRACK_C, a_j the relative period-two amplitude
    (:func:`period_two_amplitude`): the separation of time scales a time average needs, at the scale of the tracking
    tolerance C (rho + a^2), whose discretisation part C rho must stay below the oscillation it averages out (the
    tracking checks' guard tolerance < a). Detected on GD alone (no flow enters). ``lam``:
    lambda_max per iterate; ``first``: GD's first step with lambda_max eta/2 >= 1. None when the window's last
    step fails either test or the window is incomplete.

    >>> it = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 0.0], [1.2, 0.0], [1.0, 0.0], [1.2, 0.0], [1.0, 0.0]])
    >>> catapult_end(it, np.array([0.5, 1.3, 0.8, 1.05, 0.96, 1.04, 0.97]), 2.0, 1, window=4)
    3
    """
    it = _iterates(iterates, rows=3)
    r = np.asarray(lam, dtype=np.float64) * positive(eta, "eta") / 2
    first, window = integer(first, "first", 0), integer(window, "window", 1)
    band = positive(band, "band")
    if r.ndim != 1 or r.size != it.shape[0]:
        raise ValueError(f"lam must hold one value per iterate ({it.shape[0]}); got shape {r.shape}")
    if first + window + 2 > r.size:  # the centre's speed at step j needs m_{j+1}, i.e. iterate j + 2
        return None
    mids = 0.5 * (it[1:] + it[:-1])
    speed = np.linalg.norm(np.diff(mids, axis=0), axis=1) / np.linalg.norm(mids[:-1], axis=1)  # step j: m_j -> m_j+1
    amp = np.nan_to_num(period_two_amplitude(it), nan=np.inf)
    ks = np.arange(first, first + window)
    ok = (np.abs(r[ks] - 1) <= band) & (TRACK_C * speed[ks] <= amp[ks])
    bad = np.nonzero(~ok)[0]
    if bad.size == 0:
        return first
    k = first + int(bad[-1]) + 1
    return k if k < first + window else None


def tracking_tolerance(rho: float, a: float, C: float = TRACK_C) -> float:
    """C (rho + a^2): the distance allowed between time-averaged GD and the central flow, relative to each scale.

    rho: GD's slow step, max_k |m_{k+1} - m_k| / |m_k| over the compared midpoints (the flow's O(eta)
    discretisation error, written without units: a first-order integrator's global error is of the
    order of its step relative to the path's scale). a: GD's largest relative period-two amplitude.
    The losses here are quartic polynomials, so averaging grad L over the two sides of a symmetric
    period-two orbit theta = c +- delta gives exactly grad L(c) + (1/2) grad <H(c), delta delta^T>: the
    central flow's drift with Sigma = delta delta^T, nothing neglected; what the central flow does
    neglect is delta's tilt off the top eigenvector (H(c) delta = (2/eta) delta - (1/6) D^4 L[delta^3],
    relative O(a^2) as |D^4 L| |theta|^2 / lambda_max = O(1)) and the asymmetry of a transient
    oscillation, O(a^2) again. C = 10 was fixed before the comparisons in the EoS settings were run: it covers the O(1)
    constants (1/6 times a fourth-derivative ratio <= 3, times the inverse gap lambda_max/(lambda_max -
    lambda_2) <= 4 for the settings used, about 2) with a factor 5 of margin, and it is stated, not fitted.
    """
    return positive(C, "C") * (max(float(rho), 0.0) + float(a) ** 2)


def tracking_errors(
    model: Model, iterates: ArrayLike, eta: float, cf_t: ArrayLike, cf_theta: ArrayLike, sigma2: ArrayLike
) -> dict[str, Any]:
    """Midpoint GD against the central flow at matched times t = k + 1/2 (max over the CF samples given).

    ``cf_t`` must be half-integer times k + 1/2 inside the GD run; ``sigma2`` the CF's sigma^2 there.
    Errors (each relative to a scale): parameters |m - theta_CF| / |theta_CF|; the GF law(s)
    (h, Psi, (h_j)) in norm over |theta_CF|^2; sharpness |lambda(m) - lambda(theta_CF)| / (2/eta);
    the 2-step average loss (L(theta_k) + L(theta_{k+1})) / 2 against the central flow's time-averaged
    loss L(theta_CF) + (1/2) sigma^2 lambda_max (Cohen et al. 2025), over the loss scale
    lambda_max |theta_CF|^2 / 2. Also rho and a of :func:`tracking_tolerance` over the same steps.
    """
    it = _iterates(iterates, rows=3)
    eta = positive(eta, "eta")
    t = np.asarray(cf_t, dtype=np.float64)
    th = _iterates(cf_theta, "cf_theta")
    s2 = np.asarray(sigma2, dtype=np.float64)
    if t.ndim != 1 or t.size != th.shape[0] or s2.shape != t.shape:
        raise ValueError("cf_t, cf_theta and sigma2 must have one entry per central-flow sample")
    k = np.rint(t - 0.5).astype(int)
    if t.size == 0 or np.any(np.abs(t - k - 0.5) > 1e-9) or k.min() < 0 or k.max() + 1 >= it.shape[0]:
        raise ValueError("cf_t must be half-integer times k + 1/2 with both iterates k, k + 1 in the GD run")
    mid = 0.5 * (it[k] + it[k + 1])
    nrm = np.linalg.norm(th, axis=1)
    lam_m = sharpness_series(model, mid)
    lam_c = sharpness_series(model, th)
    law_m, law_c = np.asarray(CL.law(mid, model)), np.asarray(CL.law(th, model))
    dlaw = np.linalg.norm((law_m - law_c).reshape(t.size, -1), axis=1) / nrm**2
    loss_gd = 0.5 * np.array([model.loss(it[j]) + model.loss(it[j + 1]) for j in k])
    loss_cf = np.array([model.loss(x) for x in th]) + 0.5 * s2 * lam_c
    mids = 0.5 * (it[1:] + it[:-1])
    steps = np.linalg.norm(np.diff(mids, axis=0), axis=1) / np.linalg.norm(mids[:-1], axis=1)
    amp = period_two_amplitude(it)
    lo, hi = int(k.min()), int(k.max())
    errs = {
        "theta": float(np.max(np.linalg.norm(mid - th, axis=1) / nrm)),
        "law": float(np.max(dlaw)),
        "sharpness": float(np.max(np.abs(lam_m - lam_c)) * eta / 2),
        "loss": float(np.max(np.abs(loss_gd - loss_cf) / (0.5 * lam_c * nrm**2))),
    }
    rho = float(np.max(steps[lo : hi + 1])) if hi >= lo else 0.0
    a = float(np.nanmax(amp[max(lo, 1) : hi + 2]))
    return {
        "errors": errs,
        "rho": rho,
        "a": a,
        "tol": tracking_tolerance(rho, a),
        "t0": float(t[0]),
        "t1": float(t[-1]),
    }


def cf_sigma2(model: Model, theta: ArrayLike, eta: float, k: int) -> float:
    """sigma^2 of the central flow at ``theta`` with ``k`` (0 or 1) critical directions (0 on gradient flow)."""
    if integer(k, "k", 0, 1) == 0:
        return 0.0
    return float(SPEC.central_flow_velocity(model, np.asarray(theta, dtype=np.float64), eta)["sigma2"][0])
