"""Source gradient flows shared by the rare-gates checks: D0 draws, their entry into Lemma 13's regime, K's corners.

One place computes them, so that every claim quoting a regime time, a K membership or an entry bound (RG-17.Cs,
RG-17.entry, RG-11.3.burnin, RG-T1.decay) takes it from the same function rather than from another check's text.
Every trajectory is integrated by :func:`numerics.rare_gates.population_flow.flow` (adaptive Dormand-Prince
8(5,3), rtol 1e-12 with a relative error scale on every component).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from numerics.rare_gates import population_flow as pf
from numerics.rare_gates.experiments import d0_initialisations, in_d0
from numerics.rare_gates.initialization import DEFAULT_M_INNER, in_k, k_slack

LAM = 0.05  # the paper's weight decay
B_S = 1.0 - 2.0 * LAM  # source clone amplitude (derivations.rare_gates.dynamics.clone_amplitude)
N_D0 = 128  # D0 initialisations (Philox draws 0..127 of seed 2610_11475)
D0_SEED = 2610_11475
T_SRC = np.linspace(0.0, 4000.0, 201)  # source grid, step 20; the draws' regime times: regime_time (t_reg)
OPPOSITE = 2.5  # "near-opposite": initial angle above 2.5 (about 37% of D0)
RTOL = 1e-12


def source_row(x: np.ndarray) -> dict:
    """Source GF from the initial point ``x`` to T = 4000 with its observables on T_SRC and its regime time."""
    res = pf.flow(x, "source", LAM, T_SRC, rtol=RTOL)
    ob = pf.trajectory_observables(res.states, "source", LAM)
    row = dict(ob)
    row.update(
        x=x,
        states=res.states,
        logC=np.log(ob["delta"]) + LAM * T_SRC,
        rate=ob["dlogdelta"],
        bound=ob["delta"] + np.abs(ob["B"] - B_S) + np.abs(ob["h1"] - 1) + np.abs(ob["h2"] - 1),
        steps=res.n_steps,
    )
    row["t_reg"] = regime_time(row)
    return row


@cache
def d0_source() -> dict:
    """Source GF from N_D0 draws of D0 to T = 4000 with the observables on the grid."""
    X = d0_initialisations(N_D0, seed=D0_SEED)
    assert bool(np.all(in_d0(X)))
    return {"X": X, "rows": [source_row(x) for x in X]}


def regime_time(row, frac: float = 0.01) -> float:
    """First grid time after which |d log delta/dT + lambda| <= frac * lambda for the rest of the grid."""
    ok = np.abs(row["rate"] + LAM) <= frac * LAM
    bad = np.nonzero(~ok)[0]
    if bad.size == 0:
        return 0.0
    if bad[-1] == len(ok) - 1:
        return math.inf
    return float(T_SRC[bad[-1] + 1])


GAMMA_MIN = LAM / 2  # Theorem 1 fixes some gamma in [lambda/2, lambda): lambda/2 is the most lenient rate
D_FLOOR = 1e-12  # d is computed from r_i/a_i differences: float64 floor ~1e-16, so log d is trusted above 1e-12


def last_outside(ts, outside) -> float:
    """The last grid time flagged outside the tube (-inf if none): a lower bound on the entry time."""
    idx = np.nonzero(outside)[0]
    return float(ts[idx[-1]]) if idx.size else -math.inf


def entry_bounds(ts, ob) -> dict:
    """Lower bounds on the entry times of one source flow (observables ``ob`` on the grid ``ts``).

    ``lemma13``: the last grid time with |d log delta/dT + lambda| > lambda/2 (the field's rate, exact at the grid
    point): the tube of Appendix 17, read as one where Lemma 13's remainder is below lambda/2, is not yet entered.
    ``burnin``: the left end of the last grid step over which the mean rate of log d exceeds -gamma_min = -lambda/2
    (d >= 1e-12 at both ends): somewhere in that step d'/d > -gamma, so the inner source tube of Appendix 11.3, read
    as one where the population flow contracts d at rate >= gamma (the eta -> 0 limit of E[d+] <= (1 - gamma eta)
    d, RG-6.dstep), is not yet entered at that time.
    """
    lemma = np.abs(ob["dlogdelta"] + LAM) > GAMMA_MIN
    d = ob["d"]
    ok = (d[:-1] >= D_FLOOR) & (d[1:] >= D_FLOOR)
    mean_rate = np.diff(np.log(np.maximum(d, 1e-300))) / np.diff(ts)
    return {"lemma13": last_outside(ts, lemma), "burnin": last_outside(ts[:-1], ok & (mean_rate > -GAMMA_MIN))}


T_CORNER = np.linspace(0.0, 6000.0, 301)  # past it the dead unit's omega_i (~e^{-2 lambda T}) nears float64's range


@cache
def k_corners() -> list[dict]:
    """Source GF from two points of K on its angular face (a unit 4m from -e1), to T = 6000.

    Cartesian flow as for the D0 draws; the angle at the end is cross-checked against the log-polar flow (whose
    dead-unit coordinates stay exact in log form)."""
    m = float(DEFAULT_M_INNER)
    starts = {
        "balanced (a_i = |w_i| = 0.5)": (0.5, 0.5, 0.5, 0.5, 2 * m, -(math.pi - 4 * m)),
        "small head (a_2 = 2m, |w_2| = 1)": (0.5, 2 * m, 0.5, 1.0, 2 * m, -(math.pi - 4 * m)),
    }
    out = []
    for name, (a1, a2, r1, r2, t1, t2) in starts.items():
        x = pf.from_polar(a1, a2, r1, r2, t1, t2)
        res = pf.flow(x, "source", LAM, T_CORNER, rtol=RTOL)
        ob = pf.trajectory_observables(res.states, "source", LAM)
        lp = pf.logpolar_observables(
            pf.flow(pf.to_logpolar(x), "source", LAM, T_CORNER, rtol=1e-11, coords="logpolar").states
        )
        out.append(
            {
                "name": name,
                "x": x,
                "slack": float(k_slack(x)[0]),
                "ob": ob,
                "entry": entry_bounds(T_CORNER, ob),
                "lp_gap": abs(float(lp["delta"][-1] - ob["delta"][-1])),
                "log_omega_end": float(min(lp["log_omega1"][-1], lp["log_omega2"][-1])),
                "moved": float(abs(lp["beta"][-1] - lp["beta"][0])),  # the unit near -e1 (vartheta_2 = -beta)
            }
        )
    return out


@cache
def k_entry() -> dict:
    """Entry-time lower bounds of the D0 draws (with their K membership) and of the K corners."""
    data = d0_source()
    rows = data["rows"]
    ink = in_k(data["X"])
    ent = [entry_bounds(T_SRC, r) for r in rows]
    reg = np.array([r["t_reg"] for r in rows])
    return {
        "in_k": ink,
        "opp": np.array([r["delta"][0] > OPPOSITE for r in rows]),
        "reg1": reg,
        "lemma13": np.array([e["lemma13"] for e in ent]),
        "burnin": np.array([e["burnin"] for e in ent]),
        "corners": k_corners(),
    }


def vacuity_time(row, gamma: float) -> float:
    """max over T0 >= T_reg (d(T0) >= 1e-12) of T0 + log d(T0)/gamma: the term (c b/eta) e^{-gamma T} with
    C >= c d(T0) e^{gamma T0} is >= 1 for every T up to this time when c b/eta >= 1."""
    ok = (T_SRC >= row["t_reg"]) & (row["d"] >= D_FLOOR)
    return float(np.max(T_SRC[ok] + np.log(row["d"][ok]) / gamma))
