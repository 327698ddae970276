"""Simulation API of the rare-gates paper: validate, seed, allocate, run the kernels, collect.

Runs (Sections 3 and 8, Appendices 19-20 of arXiv 2610.11475):

* :func:`simulate_sgd`: online SGD with fresh batches of ``b`` inputs, step ``eta`` and
  weight decay ``lam``, on ``streams`` independent streams; fresh or constructed
  (``source_time = 0``) or warm (``floor(T / eta)`` source updates, then the target);
  optional parameter noise (Appendix 20);
* :func:`simulate_gd`: the same with the exact population gradient;
* :func:`simulate_extended`: a double-double (about 106-bit) replay of SGD streams from the
  *same* float64 inputs (:mod:`numerics.rare_gates.dd_kernel`), to compare recovery and
  first-disagreement times with float64 (Appendix 19 reports that 80-bit runs give the
  same times) and to follow unrecovered angles below the float64 floor.

Recovery is the first target time (a multiple of ``check_every * eta``) at which the
analytic target risk is ``<= threshold`` (0.4); time is ``updates * eta``. A gate
disagreement is a sampled input on which the two gates differ at the current parameters;
the first-disagreement time is ``n * eta`` for the first update n whose batch held one.
:func:`balanced_checkpoint` builds the constructed checkpoints of Appendix 19 and
:func:`recovery_summary` the statistics printed by ``python -m numerics.rare_gates.recovery``.

Randomness: stream ``i`` of seed ``s`` draws its inputs from the xoshiro256++ generator
keyed by ``(s, i, phase, offset)`` (:mod:`numerics.rare_gates.sim_rng`), so each stream's
numbers are bit-identical for any thread count and any split of the stream ids over calls
(``first_stream``); results carry their configuration, seed and the git revision.

>>> res = simulate_sgd(delta0=1e-2, b=16, eta=0.01, horizon=2.0, streams=4, seed=1)
>>> res.recovery_time.shape, bool(np.all(res.updates == 200))
((4,), True)
>>> simulate_sgd(delta0=1e-2, b=0, eta=0.01, horizon=1.0)
Traceback (most recent call last):
...
ValueError: b (batch size) must be an integer >= 1; got 0
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from numerics.provenance import git_revision as _git_revision
from numerics.rare_gates import dd_kernel as DD
from numerics.rare_gates import sim_kernels as K
from numerics.rare_gates import sim_rng as R
from numerics.rare_gates.initialization import wilson_interval
from numerics.rare_gates.sim_rng import PHASE_NOISE, PHASE_SOURCE, PHASE_TARGET
from numerics.validation import choice, integer, real

THRESHOLD = 0.4  # the recovery level of the target risk (Section 3: R_good < 0.4 < R_col)
LAM = 0.05  # the weight decay of every Section 8 run except the Appendix 20 controls
AMPLITUDE = 0.9  # B_s of the constructed checkpoints (the lam = 0.05 source optimum, Appendix 19)
Z95 = 1.959963984540054  # two-sided 95% normal quantile (Wilson intervals)
NOISE_MODES = {"independent": K.NOISE_INDEPENDENT, "shared": K.NOISE_SHARED}
Progress = Callable[[int, int], None]


# --- validation ---------------------------------------------------------------------------------


def _int(value, name: str, lo: int, what: str) -> int:
    return integer(value, f"{name}{what}", lo)


def _real(value, name: str, *, positive: bool = False, what: str = "") -> float:
    return real(value, f"{name}{what}", 0.0, lo_open=positive)


def _seed(seed) -> int:
    return integer(seed, "seed", 0, 2**64 - 1)


def _delta0(delta0) -> float:
    return real(delta0, "delta0 (checkpoint angle)", 0.0, math.pi, lo_open=True, hi_open=True, hi_text="pi")


def _theta0(theta0, delta0, streams: int) -> np.ndarray:
    if (theta0 is None) == (delta0 is None):
        raise ValueError("theta0/delta0: give exactly one (a parameter vector or a constructed-checkpoint angle)")
    if delta0 is not None:
        th = balanced_checkpoint(delta0)
    else:
        th = np.asarray(theta0, dtype=float)
    if th.shape == (6,):
        th = np.tile(th, (streams, 1))
    if th.shape != (streams, 6) or not np.all(np.isfinite(th)):
        raise ValueError(
            f"theta0 must be a finite array of shape (6,) or (streams, 6) = ({streams}, 6); got shape {th.shape}"
        )
    return np.ascontiguousarray(th)


def _updates(duration: float, eta: float) -> int:
    """floor(duration / eta), read as the nearest integer when within 1e-9 relative of it."""
    q = duration / eta
    n = round(q)
    return int(n) if abs(q - n) <= 1e-9 * max(1.0, q) else int(math.floor(q))


def _stream_config(b, streams, first_stream, seed) -> dict:
    """Validated sampling parameters of an SGD run."""
    return {
        "b": _int(b, "b", 1, " (batch size)"),
        "streams": _int(streams, "streams", 1, ""),
        "first_stream": _int(first_stream, "first_stream", 0, ""),
        "seed": _seed(seed),
    }


def _run_config(eta, lam, horizon, check_every, threshold, source_time, stop_at_recovery) -> dict:
    """Validated parameters shared by SGD and GD runs."""
    return {
        "eta": _real(eta, "eta", positive=True, what=" (step size)"),
        "lam": _real(lam, "lam", what=" (weight decay)"),
        "horizon": _real(horizon, "horizon", positive=True, what=" (target time)"),
        "check_every": _int(check_every, "check_every", 1, " (updates between risk checks)"),
        "threshold": real(threshold, "threshold"),
        "source_time": _real(source_time, "source_time", what=" (T)"),
        "stop_at_recovery": bool(stop_at_recovery),
    }


def _threads(threads) -> int:
    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at import from the environment
    if threads is None:
        return most
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= most:
        raise ValueError(f"threads must be an integer in [1, {most}]; got {threads!r}")
    return int(threads)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# --- results ------------------------------------------------------------------------------------


@dataclass
class SimResult:
    """Per-stream outcomes of one simulation, with its configuration (times in target time units).

    ``recovery_time`` / ``first_disagreement_time``: NaN where none; ``disagreements``:
    sampled disagreeing inputs (target phase); ``final_angle``: angle between w1 and w2 at
    the end (the recovery time when the run stops there); ``trace[s, m] = (risk, angle)`` at
    check m when requested (NaN after a stop); ``final_theta_lo``: for double-double runs
    (:func:`simulate_extended`) the lo part of the final state, ``final_theta`` its hi part.
    """

    config: dict
    seed: int
    stream_ids: np.ndarray
    recovery_time: np.ndarray
    recovered: np.ndarray
    first_disagreement_time: np.ndarray
    disagreements: np.ndarray
    final_angle: np.ndarray
    final_theta: np.ndarray
    updates: np.ndarray
    checkpoint: np.ndarray | None = None
    trace: np.ndarray | None = None
    elapsed_s: float = 0.0
    extra: dict = field(default_factory=dict)
    final_theta_lo: np.ndarray | None = None  # lo part of a double-double final state (simulate_extended)

    def to_dict(self) -> dict:
        """JSON-ready dict (NaN -> None)."""

        def clean(a):
            return [None if isinstance(v, float) and math.isnan(v) else v for v in np.asarray(a).tolist()]

        out = {
            "config": self.config,
            "seed": self.seed,
            "stream_ids": self.stream_ids.tolist(),
            "recovery_time": clean(self.recovery_time),
            "recovered": self.recovered.tolist(),
            "first_disagreement_time": clean(self.first_disagreement_time),
            "disagreements": self.disagreements.tolist(),
            "final_angle": clean(self.final_angle),
            "updates": self.updates.tolist(),
            "elapsed_s": self.elapsed_s,
        }
        if self.checkpoint is not None:
            out["checkpoint_angle"] = clean(angles(self.checkpoint))
        return out


def angles(theta: npt.ArrayLike) -> np.ndarray:
    """Angle in [0, pi] between w1 and w2 for each row of ``theta`` (atan2 form)."""
    th = np.atleast_2d(np.asarray(theta, dtype=float))
    c = th[:, 2] * th[:, 5] - th[:, 3] * th[:, 4]
    d = th[:, 2] * th[:, 4] + th[:, 3] * th[:, 5]
    return np.arctan2(np.abs(c), d)


def balanced_checkpoint(delta0: float, amplitude: float = AMPLITUDE) -> np.ndarray:
    """Appendix 19's constructed checkpoint: a_i = |w_i| = sqrt(B/2), w_i at angles +-delta0/2.

    >>> th = balanced_checkpoint(1e-4)
    >>> bool(th[0] == th[1] == math.sqrt(0.45)), round(float(angles(th)[0]), 15)
    (True, 0.0001)
    """
    d = _delta0(delta0)
    r = math.sqrt(_real(amplitude, "amplitude", positive=True) / 2.0)
    c, s = math.cos(d / 2.0), math.sin(d / 2.0)
    return np.array([r, r, r * c, r * s, r * c, -r * s])


def _result(cfg, ids, eta, rec, first, count, theta, updates, t0, checkpoint=None, trace=None, theta_lo=None):
    """The :class:`SimResult` of a run's kernel outputs (``theta_lo``: the lo part of a double-double state)."""
    rec_t = np.where(rec >= 0, rec * eta, np.nan)
    first_t = np.where(first >= 0, first * eta, np.nan)
    cfg = dict(cfg, git_revision=_git_revision())
    return SimResult(
        config=cfg,
        seed=cfg["seed"],
        stream_ids=ids,
        recovery_time=rec_t,
        recovered=rec >= 0,
        first_disagreement_time=first_t,
        disagreements=count,
        final_angle=angles(theta) if theta_lo is None else DD.angles_dd(theta, theta_lo)[:, 0],
        final_theta=theta,
        updates=updates,
        checkpoint=checkpoint,
        trace=trace,
        elapsed_s=time.perf_counter() - t0,
        final_theta_lo=theta_lo,
    )


# --- SGD ----------------------------------------------------------------------------------------


def simulate_sgd(
    theta0: npt.ArrayLike | None = None,
    *,
    delta0: float | None = None,
    b: int,
    eta: float,
    horizon: float,
    lam: float = LAM,
    streams: int = 64,
    first_stream: int = 0,
    seed: int = 0,
    check_every: int = 10,
    threshold: float = THRESHOLD,
    stop_at_recovery: bool = True,
    source_time: float = 0.0,
    noise_s: float = 0.0,
    noise: str = "independent",
    trace: bool = False,
    threads: int | None = None,
    progress: Progress | None = None,
    arithmetic: str = "float64",
) -> SimResult:
    """Online SGD on ``streams`` streams (ids ``first_stream ...``) through target time ``horizon``.

    Parameters: ``theta0`` (shape (6,) or (streams, 6)) or ``delta0`` (the constructed
    checkpoint :func:`balanced_checkpoint`); batch size ``b``; step ``eta``; weight decay
    ``lam`` (both phases); risk checked every ``check_every`` updates from update 0;
    ``stop_at_recovery`` ends a stream at recovery; ``source_time`` T > 0 makes a warm run
    (``floor(T/eta)`` source SGD updates from ``theta0``, checkpoint kept in ``checkpoint``);
    ``noise_s`` s >= 0 adds ``s sqrt(eta) xi_i`` to each unit after every target step,
    ``noise`` 'independent' or 'shared' between the units; ``trace`` records (risk, angle)
    at every check. ``threads`` (default all) and ``progress(done, total)`` (called with the
    updates done over both phases, the run then proceeding in horizon segments) change only
    the schedule, never the numbers. ``arithmetic='double-double'``: the same streams in
    double-double (:func:`simulate_extended`; fresh target runs only: no source phase, noise,
    trace or progress).
    """
    double = choice(arithmetic, "arithmetic", ("float64", "double-double")) == "double-double"
    cfg = dict(
        optimizer="sgd-double-double" if double else "sgd",
        **_stream_config(b, streams, first_stream, seed),
        **_run_config(eta, lam, horizon, check_every, threshold, source_time, stop_at_recovery),
    )
    cfg["noise_s"] = _real(noise_s, "noise_s", what=" (s)")
    if noise not in NOISE_MODES:
        raise ValueError(f"noise must be 'independent' or 'shared'; got {noise!r}")
    if double:
        return _double_double(cfg, theta0, delta0, _threads(threads), trace, progress)
    cfg["noise"] = noise
    if delta0 is not None:
        cfg["delta0"] = _delta0(delta0)
    S = cfg["streams"]
    th0 = _theta0(theta0, delta0, S)
    n_threads = _threads(threads)
    eta = cfg["eta"]
    n_target, n_source = _updates(cfg["horizon"], eta), _updates(cfg["source_time"], eta)
    cfg.update(target_updates=n_target, source_updates=n_source)
    ids = np.arange(cfg["first_stream"], cfg["first_stream"] + S, dtype=np.int64)
    run = _SGDRun(cfg, n_source, n_target, NOISE_MODES[noise] if cfg["noise_s"] > 0.0 else K.NOISE_NONE, n_threads)
    tgt = R.seed_states(cfg["seed"], ids, PHASE_TARGET, n_source)
    nst = R.seed_states(cfg["seed"], ids, PHASE_NOISE, n_source)
    out = K.outputs(S, n_target // cfg["check_every"] + 1 if trace else 0)
    ckpt = np.empty((S, 6)) if n_source > 0 else None
    t0 = time.perf_counter()
    old = numba.get_num_threads()
    numba.set_num_threads(n_threads)
    try:
        if progress is None and n_source > 0:
            src = R.seed_states(cfg["seed"], ids, PHASE_SOURCE, 0)
            K._warm_sgd(th0, src, tgt, nst, n_source, run.params(n_target), run.chunk(S), ckpt, out)
        elif progress is None:
            K._sgd_streams(th0, tgt, nst, run.params(n_target), run.chunk(S), out)
        else:
            start = th0
            if n_source > 0:
                src = R.seed_states(cfg["seed"], ids, PHASE_SOURCE, 0)
                assert ckpt is not None  # allocated whenever there are source updates
                run.source_in_segments(th0, src, nst, ckpt, progress)
                start = ckpt
            run.target_in_segments(start, tgt, nst, out, progress)
    finally:
        numba.set_num_threads(old)
    theta, _, _, rec, first, count, updates, tr = out
    return _result(cfg, ids, eta, rec, first, count, theta, updates, t0, ckpt, tr if trace else None)


class _SGDRun:
    """A run cut into horizon segments for progress reports, with the one-shot's exact numbers.

    A segment continues every live stream from its parameters and generator states, so the
    draws and updates are those of the one-shot run; segments are multiples of
    ``check_every`` updates, so the checks fall on the same updates (a segment's check at its
    update 0 repeats the previous segment's last check, on the same parameters); streams
    that stopped at recovery leave the live set. Per-stream results are merged with the
    update offset.
    """

    SEGMENTS = 50  # progress reports per phase, about

    def __init__(self, cfg: dict, n_source: int, n_target: int, mode: int, threads: int):
        self.cfg, self.n_source, self.n_target, self.threads = cfg, n_source, n_target, threads
        self.head = (cfg["b"], cfg["eta"], cfg["lam"])
        self.tail = (cfg["check_every"], cfg["threshold"], cfg["stop_at_recovery"], cfg["noise_s"], mode)
        self.total = n_source + n_target

    def params(self, n_updates: int) -> K.SGDParams:
        """The target phase's kernel parameters over ``n_updates`` updates."""
        return K.SGDParams(True, *self.head, n_updates, *self.tail)

    def chunk(self, streams: int) -> int:
        """Streams per parallel chunk: whole lane pools, one chunk per thread (schedule only)."""
        return K.LANES * _ceil_div(_ceil_div(streams, self.threads), K.LANES)

    def _segment(self, n: int) -> int:
        k = self.cfg["check_every"]
        return k * max(1, _ceil_div(_ceil_div(n, self.SEGMENTS), k))

    def source_in_segments(
        self, th0: np.ndarray, states: np.ndarray, nstates: np.ndarray, ckpt: np.ndarray, progress: Progress
    ) -> None:
        S = th0.shape[0]
        theta, st = th0.copy(), states.copy()
        done, seg = 0, self._segment(self.n_source)
        while done < self.n_source:
            m = min(seg, self.n_source - done)
            o = K.outputs(S, 0)
            source = K.SGDParams(False, *self.head, m, 0, self.cfg["threshold"], False, 0.0, K.NOISE_NONE)
            K._sgd_streams(theta, st, nstates, source, self.chunk(S), o)
            theta, st = o[0], o[1]
            done += m
            progress(done, self.total)
        ckpt[:] = theta

    def target_in_segments(
        self, th0: np.ndarray, states: np.ndarray, nstates: np.ndarray, out: K.Outputs, progress: Progress
    ) -> None:
        theta, st, ns, rec, first, count, upd, tr = out
        theta[:], st[:], ns[:] = th0, states, nstates
        rec[:], first[:], count[:], upd[:] = -1, -1, 0, 0
        k, stop = self.cfg["check_every"], self.cfg["stop_at_recovery"]
        live = np.arange(theta.shape[0])
        done, seg = 0, self._segment(self.n_target)
        while live.size and done < self.n_target:
            m = min(seg, self.n_target - done)
            o = K.outputs(live.size, m // k + 1 if tr.shape[1] else 0)
            K._sgd_streams(theta[live], st[live], ns[live], self.params(m), self.chunk(live.size), o)
            theta[live], st[live], ns[live] = o[0], o[1], o[2]
            new_rec = (rec[live] < 0) & (o[3] >= 0)
            rec[live[new_rec]] = o[3][new_rec] + done
            new_first = (first[live] < 0) & (o[4] >= 0)
            first[live[new_first]] = o[4][new_first] + done
            count[live] += o[5]
            upd[live] = o[6] + done
            if tr.shape[1]:
                tr[live, done // k : done // k + o[7].shape[1]] = o[7]
            done += m
            if stop:
                live = live[rec[live] < 0]
            progress(self.n_source + done, self.total)
        if done < self.n_target:  # every stream stopped early
            progress(self.total, self.total)


# --- GD -----------------------------------------------------------------------------------------


def simulate_gd(
    theta0: npt.ArrayLike | None = None,
    *,
    delta0: float | None = None,
    eta: float,
    horizon: float,
    lam: float = LAM,
    check_every: int = 10,
    threshold: float = THRESHOLD,
    stop_at_recovery: bool = True,
    source_time: float = 0.0,
    trace: bool = False,
) -> SimResult:
    """Population GD ``theta <- theta - eta grad(R + lam/2 |theta|^2)`` (exact gradient).

    Rows of ``theta0`` are independent runs (``delta0`` gives one constructed run); with
    ``source_time`` T > 0, ``floor(T/eta)`` source GD steps come first. Disagreement fields
    are NaN / 0 (GD samples no inputs).
    """
    th = np.asarray(theta0, dtype=float) if theta0 is not None else None
    S = 1 if th is None or th.ndim == 1 else th.shape[0]
    cfg = dict(
        optimizer="gd",
        runs=S,
        seed=None,
        **_run_config(eta, lam, horizon, check_every, threshold, source_time, stop_at_recovery),
    )
    if delta0 is not None:
        cfg["delta0"] = _delta0(delta0)
    th0 = _theta0(theta0, delta0, S)
    if np.any(np.hypot(th0[:, 2], th0[:, 3]) == 0.0) or np.any(np.hypot(th0[:, 4], th0[:, 5]) == 0.0):
        raise ValueError("theta0: hidden vectors w1 and w2 must be nonzero for GD")
    eta = cfg["eta"]
    n_target, n_source = _updates(cfg["horizon"], eta), _updates(cfg["source_time"], eta)
    cfg.update(target_updates=n_target, source_updates=n_source)
    t0 = time.perf_counter()
    ckpt = None
    start = th0
    rec = np.empty(S, dtype=np.int64)
    upd = np.empty(S, dtype=np.int64)
    if n_source > 0:
        ckpt = np.empty((S, 6))
        K._gd_streams(
            th0, False, eta, cfg["lam"], n_source, 0, cfg["threshold"], False, ckpt, rec, upd, np.empty((S, 0, 2))
        )
        start = ckpt
    n_trace = n_target // cfg["check_every"] + 1 if trace else 0
    tr = np.full((S, n_trace, 2), np.nan)
    theta = np.empty((S, 6))
    K._gd_streams(
        start,
        True,
        eta,
        cfg["lam"],
        n_target,
        cfg["check_every"],
        cfg["threshold"],
        cfg["stop_at_recovery"],
        theta,
        rec,
        upd,
        tr,
    )
    res = _result(
        cfg,
        np.arange(S),
        eta,
        rec,
        np.full(S, -1),
        np.zeros(S, dtype=np.int64),
        theta,
        upd,
        t0,
        ckpt,
        tr if trace else None,
    )
    return res


# --- summary ------------------------------------------------------------------------------------


def recovery_summary(res: SimResult, z: float = Z95) -> dict:
    """Recovered count and fraction with its Wilson interval, Gamma, the Poisson reference, ...

    ``gamma = b delta0 / eta`` (``delta0`` from the configuration, else the mean initial
    angle); ``poisson_reference = 1 - exp(-gamma / (pi lam))`` (Section 8; None at
    lam = 0); ``disagreement_first_fraction``: among recovered runs, the fraction whose
    first disagreement came no later than the recovery update; ``median_recovery_time``
    over recovered runs (None when there are none).
    """
    cfg = res.config
    n = int(res.recovered.size)
    k = int(res.recovered.sum())
    lo, hi = wilson_interval(k, n, z)
    delta0 = cfg.get("delta0")
    gamma = cfg["b"] * delta0 / cfg["eta"] if delta0 is not None and "b" in cfg else None
    lam = cfg["lam"]
    poisson = 1.0 - math.exp(-gamma / (math.pi * lam)) if gamma is not None and lam > 0 else None
    rec_t = res.recovery_time[res.recovered]
    first_t = res.first_disagreement_time[res.recovered]
    dis_first = float(np.mean(first_t <= rec_t)) if k else None  # NaN (no disagreement) compares False
    return {
        "streams": n,
        "recovered": k,
        "fraction": k / n,
        "wilson95": [lo, hi],
        "gamma": gamma,
        "poisson_reference": poisson,
        "disagreement_first_fraction": dis_first,
        "median_recovery_time": float(np.median(rec_t)) if k else None,
        "config": cfg,
    }


# --- extended precision -------------------------------------------------------------------------

DD_EPS = 2.0**-104  # double-double machine epsilon (unit roundoff 2**-106 ~ 1.2e-32)


def simulate_extended(
    theta0: npt.ArrayLike | None = None, *, streams: int = 4, block_updates: int = 256, **run: Any
) -> SimResult:
    """Fresh target SGD in double-double (about 106-bit significand) from the same inputs as :func:`simulate_sgd`.

    ``simulate_sgd(theta0, streams=streams, arithmetic="double-double", **run)``: ``run`` takes
    :func:`simulate_sgd`'s keywords (``delta0``, ``b``, ``eta``, ``horizon``, ``lam``, ``first_stream``,
    ``seed``, ``check_every``, ``threshold``, ``stop_at_recovery``, ``threads``), the same checks and
    defaults; a source phase, noise, a trace and progress are refused. The kernel is
    :func:`numerics.rare_gates.dd_kernel._dd_streams`: each input is exactly the float64 input of the
    float64 kernels (same stream, same draws, same order), taken as an exact number; the state, the
    update, the gates, the analytic risk of the recovery test and the final angle are double-double.
    ``final_theta`` is the hi part of the final state and ``final_theta_lo`` its lo part (the state is
    ``final_theta + final_theta_lo``); ``final_angle`` is the angle of the dd state (hi part), resolved
    down to about 1e-31. ``block_updates`` is accepted for compatibility and no longer used (the kernel
    needs no blocks).
    """
    _int(block_updates, "block_updates", 1, "")
    return simulate_sgd(theta0, streams=streams, arithmetic="double-double", **run)


def _double_double(cfg: dict, theta0, delta0, threads: int, trace: bool, progress: Progress | None) -> SimResult:
    """The double-double run of :func:`simulate_sgd` (``cfg``: its validated configuration so far)."""
    for name, unsupported in (
        ("source_time", cfg["source_time"] > 0.0),
        ("noise_s", cfg["noise_s"] > 0.0),
        ("trace", bool(trace)),
        ("progress", progress is not None),
    ):
        if unsupported:
            raise ValueError(f"{name} is not supported with arithmetic='double-double' (fresh target runs only)")
    cfg["double_double_eps"] = DD_EPS
    if delta0 is not None:
        cfg["delta0"] = _delta0(delta0)
    S, b, eta_f, k = cfg["streams"], cfg["b"], cfg["eta"], cfg["check_every"]
    th = _theta0(theta0, delta0, S)
    n_target = _updates(cfg["horizon"], eta_f)
    cfg["target_updates"] = n_target
    ids = np.arange(cfg["first_stream"], cfg["first_stream"] + S, dtype=np.int64)
    states = R.seed_states(cfg["seed"], ids, PHASE_TARGET, 0)
    out = DD.dd_outputs(S)
    stop = cfg["stop_at_recovery"]
    par = K.SGDParams(True, b, eta_f, cfg["lam"], n_target, k, cfg["threshold"], stop, 0.0, K.NOISE_NONE)
    t0 = time.perf_counter()
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        DD._dd_streams(th, np.zeros_like(th), states, par, False, out)
    finally:
        numba.set_num_threads(old)
    return _result(cfg, ids, eta_f, out.rec, out.first, out.disagreements, out.hi, out.updates, t0, theta_lo=out.lo)
