"""Throughput of the rare-gates simulation kernels, with a plain-C reference of the same loop.

Usage::

    python -m numerics.bench [--json] [--repeat N] [--scale X] [--no-c]

Workload (the Table 2 setting of Appendix 19): target SGD from the constructed balanced
checkpoint at ``delta0 = 1e-5``, ``eta = 0.01``, ``lam = 0.05``, horizon ``t = 200``
(20000 updates), analytic risk every 10 updates, gate disagreements counted, each stream
stopping at recovery. Measured:

* ``sgd_target`` (:func:`numerics.rare_gates.sim_kernels._sgd_streams`) at ``b = 1, 16,
  64`` on one thread and on all threads: ``inputs_per_s`` counts the inputs the streams
  drew (``b`` times the updates they ran, idle lanes excluded) over the kernel's wall time,
  ``inputs_per_s_per_thread`` divides by the threads;
* ``sgd_target_extended`` (:func:`numerics.rare_gates.dd_kernel._dd_streams`, the
  double-double kernel of ``simulate_extended``): the same workload and inputs at
  ``b = 16`` on one thread (``DD_STREAMS`` streams), with ``ratio_to_float64``, its rate
  over the ``sgd_target`` one-thread ``b = 16`` row of the same run;
* ``gd`` (:func:`~numerics.rare_gates.sim_kernels._gd_streams`): population GD steps per
  second over the same horizon, not stopping, on one and on all threads;
* ``c_reference``: ``numerics/bench_ref.c``, one stream at a time on one thread, built on
  demand with the system compiler ``cc`` (``-O3 -march=native -ffp-contract=off``) in a
  temporary directory, at ``b = 16``; its per-stream results are compared with the numba
  kernel's bit for bit (``identical_to_numba``). Skipped, with a message, without ``cc``.

Each figure is the best of ``--repeat`` timed runs (default 3) after a warm-up call that
compiles or loads the cached kernels; ``--scale`` multiplies the stream counts. With
``--json`` the last line is one JSON object ``{"kernels": [...], "c_reference": {...} or
null, "ratio_numba_over_c": ...}`` (the ratio: numba one-thread ``b = 16`` over C).
Speed is measured here, never asserted in a test.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numba
import numpy as np

from numerics.cli_support import Parser, check_cost, int_arg, real_arg, run_main

WORKLOAD: dict[str, Any] = {
    "delta0": 1e-5,
    "eta": 0.01,
    "lam": 0.05,
    "horizon": 200.0,
    "check_every": 10,
    "threshold": 0.4,
    "seed": 0,
}
BATCHES = (1, 16, 64)
STREAMS = {1: 2048, 16: 256, 64: 128}  # about 4e7-1.6e8 inputs each: a few tenths of a second
GD_ROWS = 64
DD_BATCH = 16
DD_STREAMS = 32  # about 1e7 inputs: about a second
C_BATCH = 16
C_STREAMS = 64
C_FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fno-fast-math")


def _setup(S: int):
    from numerics.rare_gates import sim_rng as R
    from numerics.rare_gates.simulate import balanced_checkpoint

    theta0 = np.tile(balanced_checkpoint(WORKLOAD["delta0"]), (S, 1))
    ids = np.arange(S)
    st = R.seed_states(WORKLOAD["seed"], ids, R.PHASE_TARGET, 0)
    ns = R.seed_states(WORKLOAD["seed"], ids, R.PHASE_NOISE, 0)
    return theta0, st, ns


def _n_updates() -> int:
    return round(WORKLOAD["horizon"] / WORKLOAD["eta"])


def run_sgd(b: int, S: int, threads: int) -> tuple[float, int, list]:
    """One timed target-SGD run: (seconds, inputs drawn, outputs)."""
    from numerics.rare_gates import sim_kernels as K

    theta0, st, ns = _setup(S)
    outs: list[np.ndarray] = [np.empty((S, 6)), np.empty((S, 4), np.uint64), np.empty((S, 4), np.uint64)]
    outs += [np.empty(S, np.int64) for _ in range(4)] + [np.empty((S, 0, 2))]
    chunk = K.LANES * math.ceil(math.ceil(S / threads) / K.LANES)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        K._sgd_streams(
            theta0,
            st,
            ns,
            True,
            b,
            WORKLOAD["eta"],
            WORKLOAD["lam"],
            _n_updates(),
            WORKLOAD["check_every"],
            WORKLOAD["threshold"],
            True,
            0.0,
            K.NOISE_NONE,
            chunk,
            *outs,
        )
        dt = time.perf_counter() - t0
    finally:
        numba.set_num_threads(old)
    return dt, int(outs[6].sum()) * b, outs


def run_dd(b: int, S: int, threads: int) -> tuple[float, int, list]:
    """One timed double-double target-SGD run (same workload and streams): (seconds, inputs drawn, outputs)."""
    from numerics.rare_gates import dd_kernel as D

    theta0, st, _ = _setup(S)
    outs: list[np.ndarray] = [np.empty((S, 6)), np.empty((S, 6)), np.empty((S, 4), np.uint64)]
    outs += [np.empty(S, np.int64) for _ in range(4)] + [np.empty((S, 0, 2))]
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        D._dd_streams(
            theta0,
            np.zeros_like(theta0),
            st,
            True,
            b,
            WORKLOAD["eta"],
            WORKLOAD["lam"],
            _n_updates(),
            WORKLOAD["check_every"],
            WORKLOAD["threshold"],
            True,
            False,
            *outs,
        )
        dt = time.perf_counter() - t0
    finally:
        numba.set_num_threads(old)
    return dt, int(outs[6].sum()) * b, outs


def run_gd(rows: int, threads: int) -> tuple[float, int]:
    """One timed GD run over the whole horizon (no stop): (seconds, GD steps)."""
    from numerics.rare_gates import sim_kernels as K

    theta0, _, _ = _setup(rows)
    out_theta, rec, upd = np.empty((rows, 6)), np.empty(rows, np.int64), np.empty(rows, np.int64)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        K._gd_streams(
            theta0,
            True,
            WORKLOAD["eta"],
            WORKLOAD["lam"],
            _n_updates(),
            WORKLOAD["check_every"],
            WORKLOAD["threshold"],
            False,
            out_theta,
            rec,
            upd,
            np.empty((rows, 0, 2)),
        )
        dt = time.perf_counter() - t0
    finally:
        numba.set_num_threads(old)
    return dt, int(upd.sum())


def _best(fn, repeat: int):
    best = None
    for _ in range(repeat):
        dt, work, *rest = fn()
        if best is None or dt < best[0]:
            best = (dt, work, *rest)
    return best


def measure_numba(repeat: int, scale: float) -> list[dict]:
    """Rows ``{name, b, threads, streams, seconds, inputs, inputs_per_s, inputs_per_s_per_thread}``."""
    all_threads = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at import from the environment
    thread_counts = (1,) if all_threads == 1 else (1, all_threads)
    run_sgd(1, 16, 1)  # warm-up: compile or load the cache
    rows = []
    for b in BATCHES:
        S = max(16, int(STREAMS[b] * scale))
        for t in thread_counts:
            dt, inputs, _ = _best(lambda b=b, S=S, t=t: run_sgd(b, S, t), repeat)
            rows.append(
                {
                    "name": "sgd_target",
                    "b": b,
                    "threads": t,
                    "streams": S,
                    "seconds": dt,
                    "inputs": inputs,
                    "inputs_per_s": inputs / dt,
                    "inputs_per_s_per_thread": inputs / dt / t,
                }
            )
    run_dd(DD_BATCH, 1, 1)  # warm-up
    S = max(1, int(DD_STREAMS * scale))
    dt, inputs, _ = _best(lambda: run_dd(DD_BATCH, S, 1), repeat)
    f64 = next(r for r in rows if r["name"] == "sgd_target" and r["b"] == DD_BATCH and r["threads"] == 1)
    rows.append(
        {
            "name": "sgd_target_extended",
            "b": DD_BATCH,
            "threads": 1,
            "streams": S,
            "seconds": dt,
            "inputs": inputs,
            "inputs_per_s": inputs / dt,
            "inputs_per_s_per_thread": inputs / dt,
            "ratio_to_float64": inputs / dt / f64["inputs_per_s"],
        }
    )
    run_gd(2, 1)
    G = max(2, int(GD_ROWS * scale))
    for t in thread_counts:
        dt, steps = _best(lambda t=t: run_gd(G, t), repeat)
        rows.append(
            {
                "name": "gd",
                "b": None,
                "threads": t,
                "streams": G,
                "seconds": dt,
                "updates": steps,
                "updates_per_s": steps / dt,
                "updates_per_s_per_thread": steps / dt / t,
            }
        )
    return rows


def build_c(tmp: Path) -> tuple[Path | None, str]:
    """Compile bench_ref.c into ``tmp``; (executable or None, message)."""
    cc = shutil.which("cc")
    if cc is None:
        return None, "no C compiler 'cc' on PATH: C reference skipped"
    src = Path(__file__).with_name("bench_ref.c")
    exe = tmp / "bench_ref"
    cmd = [cc, *C_FLAGS, "-o", str(exe), str(src), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"C reference skipped: '{' '.join(cmd)}' failed: {proc.stderr.strip()[:500]}"
    return exe, " ".join(cmd)


def run_c(exe: Path, b: int, S: int) -> tuple[float, int, list[list[str]]]:
    """Run the C reference: (seconds, inputs, per-stream fields)."""
    w = WORKLOAD
    args = [
        str(exe),
        str(b),
        repr(w["eta"]),
        repr(w["lam"]),
        repr(w["delta0"]),
        str(_n_updates()),
        str(w["check_every"]),
        repr(w["threshold"]),
        str(S),
        str(w["seed"]),
    ]
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    head = lines[0].split()
    return float(head[1]), int(head[3]), [line.split() for line in lines[1:]]


def _identical(c_rows: list[list[str]], outs: list) -> bool:
    theta, _, _, rec, first, count, upd, _ = outs
    for s, row in enumerate(c_rows):
        ints = [int(v) for v in row[1:5]]
        if ints != [int(rec[s]), int(first[s]), int(count[s]), int(upd[s])]:
            return False
        if [float.fromhex(v) for v in row[5:11]] != theta[s].tolist():
            return False
    return True


def measure_c(repeat: int, scale: float) -> tuple[dict | None, str]:
    """The C reference row (or None) and a message."""
    with tempfile.TemporaryDirectory(prefix="bench_ref_") as tmp:
        exe, msg = build_c(Path(tmp))
        if exe is None:
            return None, msg
        S = max(16, int(C_STREAMS * scale))
        dt, inputs, c_rows = _best(lambda: run_c(exe, C_BATCH, S), repeat)
    _, _, outs = run_sgd(C_BATCH, S, 1)
    same = _identical(c_rows, outs)
    row = {
        "name": "c_reference",
        "b": C_BATCH,
        "threads": 1,
        "streams": S,
        "seconds": dt,
        "inputs": inputs,
        "inputs_per_s": inputs / dt,
        "identical_to_numba": same,
        "compiler": msg,
    }
    return row, msg


def benchmark(repeat: int = 3, scale: float = 1.0, with_c: bool = True) -> dict:
    """The pure function behind the CLI: every measurement as one dict."""
    kernels = measure_numba(repeat, scale)
    c_row, c_msg = measure_c(repeat, scale) if with_c else (None, "C reference not requested (--no-c)")
    ratio = None
    if c_row is not None:
        numba_1t = next(r for r in kernels if r["name"] == "sgd_target" and r["b"] == C_BATCH and r["threads"] == 1)
        ratio = numba_1t["inputs_per_s"] / c_row["inputs_per_s"]
    return {
        "kernels": kernels,
        "c_reference": c_row,
        "ratio_numba_over_c": ratio,
        "c_message": c_msg,
        "workload": WORKLOAD,
        "machine": {
            "cpu_count": os.cpu_count(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS,  # type: ignore[attr-defined]
            "numba": numba.__version__,
            "python": platform.python_version(),
            "processor": platform.processor() or platform.machine(),
        },
    }


def _render(res: dict) -> str:
    lines = [f"workload: {res['workload']}", f"{'kernel':<20} {'b':>3} {'thr':>3} {'streams':>7} {'seconds':>8}  rate"]
    for r in res["kernels"]:
        if r["name"] == "gd":
            rate = f"{r['updates_per_s']:.3e} GD steps/s ({r['updates_per_s_per_thread']:.3e} per thread)"
            lines.append(f"{'gd':<20} {'-':>3} {r['threads']:>3} {r['streams']:>7} {r['seconds']:>8.3f}  {rate}")
        else:
            rate = f"{r['inputs_per_s']:.3e} inputs/s ({r['inputs_per_s_per_thread']:.3e} per thread)"
            if "ratio_to_float64" in r:
                rate += f", {r['ratio_to_float64']:.3f} x float64"
            lines.append(
                f"{r['name']:<20} {r['b']:>3} {r['threads']:>3} {r['streams']:>7} {r['seconds']:>8.3f}  {rate}"
            )
    c = res["c_reference"]
    if c is None:
        lines.append(res["c_message"])
    else:
        lines.append(
            f"{'C reference':<20} {c['b']:>3} {1:>3} {c['streams']:>7} {c['seconds']:>8.3f}  "
            f"{c['inputs_per_s']:.3e} inputs/s; bit-identical to numba: {c['identical_to_numba']}"
        )
        lines.append(f"ratio numba/C (one thread, b = {c['b']}): {res['ratio_numba_over_c']:.2f}")
    return "\n".join(lines)


# Bounds of the command: --repeat in [1, 100], --scale in (0, 64]; and a run estimated to take
# more than RUN_LIMIT_S is refused before it starts. Measured on a shared 2-core x86 machine
# (numba kernels cached): --repeat 1 --scale 0.2 --no-c: 5 s in all, 2.9 s of it timed kernels,
# so about 15 s of kernels per repeat at scale 1; the estimate takes 20 s (the C reference
# included) plus 5 s of start-up.
REPEAT_MAX = 100
SCALE_MAX = 64.0
RUN_LIMIT_S = 900.0


def estimated_seconds(repeat: int, scale: float) -> float:
    """Rough run time in seconds of ``benchmark(repeat, scale)`` (the machine above)."""
    return 5.0 + repeat * max(scale, 0.01) * 20.0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 2 bad input, one line naming the option; 141 closed stdout)."""

    def body() -> int:
        p = Parser(prog="python -m numerics.bench", description=__doc__)
        p.add_argument("--json", action="store_true", help="one JSON object on the last line")
        p.add_argument(
            "--repeat",
            type=int_arg(1, REPEAT_MAX),
            default=3,
            help=f"timed runs per figure, best kept, in [1, {REPEAT_MAX}] (default 3)",
        )
        p.add_argument(
            "--scale",
            type=real_arg(0, SCALE_MAX, lo_open=True),
            default=1.0,
            help=f"multiply the stream counts, in (0, {SCALE_MAX:g}] (default 1)",
        )
        p.add_argument("--no-c", action="store_true", help="skip the C reference")
        args = p.parse_args(argv)
        check_cost(
            f"--repeat {args.repeat} --scale {args.scale:g}",
            seconds=estimated_seconds(args.repeat, args.scale),
            limit_s=RUN_LIMIT_S,
            hint="ask for a smaller --repeat or --scale",
        )
        res = benchmark(args.repeat, args.scale, not args.no_c)
        print(json.dumps(res) if args.json else _render(res))
        return 0

    return run_main("bench", body)


if __name__ == "__main__":
    sys.exit(main())
