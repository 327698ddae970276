"""Throughput of the rare-gates simulation kernels, against SIMD and plain C references of the same algorithm.

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
* the comparison (:func:`measure_comparison`), one thread, ``b = 16``, ``C_STREAMS`` streams:
  the numba kernel (``sgd_target_numba``), ``c_simd`` (``numerics/bench_simd.c``, the same
  algorithm hand-vectorised in lock-step lanes: 4 doubles per vector with AVX2, 8 with
  AVX-512, from the compiler's macros) and ``c_plain`` (``numerics/bench_ref.c``, the plain
  one-stream loop), run in turn in every repetition (at least 5). Each row has inputs per
  CPU-second (best), per wall second, cycles per input (TSC reference cycles from ``rdtsc``;
  no ``perf`` counters needed) and ``ratio_to_simd``, the median over the repetitions of its
  rate over the SIMD C rate of the same repetition, with the range. The C programs are built
  on demand with the system compiler ``cc`` (``-O3 -march=native -ffp-contract=off``) in a
  temporary directory, and their per-stream results are compared with the numba kernel's
  bit for bit (``identical_to_numba``). Skipped, with a message, without ``cc``.

Each kernel figure is the best of ``--repeat`` timed runs (default 3) after a warm-up call
that compiles or loads the cached kernels; ``--scale`` multiplies the stream counts. With
``--json`` the last line is one JSON object ``{"kernels": [...], "comparison": {"rows": [...],
"cycle_source", "cycle_hz", "messages"} or null, "c_reference": <the c_plain row>, "c_simd":
<the c_simd row>, "ratio_numba_over_c": <numba over plain C>, "ratio_numba_over_simd": <numba
over SIMD C, median>, ...}``. Rates per CPU-second make the figures robust to other processes on
a shared machine (time the process waits does not count); the ratios, from runs side by side,
are the figures to compare across machines.
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


def _workload(b: int) -> tuple[bool, int, float, float, int, int, float, bool]:
    """The kernels' common arguments: target, b, eta, lam, n_updates, check_every, threshold, stop."""
    w = WORKLOAD
    return True, b, w["eta"], w["lam"], _n_updates(), w["check_every"], w["threshold"], True


class _Threads:
    """``with _Threads(n):`` runs the kernels on ``n`` threads, then restores the count."""

    def __init__(self, n: int) -> None:
        self.n, self.old = n, numba.get_num_threads()

    def __enter__(self) -> None:
        numba.set_num_threads(self.n)

    def __exit__(self, *exc: object) -> None:
        numba.set_num_threads(self.old)


def _sgd_call(b: int, S: int, threads: int) -> tuple[float, float, int, tuple]:
    """One timed target-SGD run: (wall seconds, process CPU seconds, inputs drawn, outputs)."""
    from numerics.rare_gates import sim_kernels as K

    theta0, st, ns = _setup(S)
    outs = K.outputs(S)
    chunk = K.LANES * math.ceil(math.ceil(S / threads) / K.LANES)
    par = K.SGDParams(*_workload(b), 0.0, K.NOISE_NONE)
    with _Threads(threads):
        c0 = time.process_time()
        t0 = time.perf_counter()
        K._sgd_streams(theta0, st, ns, par, chunk, outs)
        dt = time.perf_counter() - t0
        cpu = time.process_time() - c0
    return dt, cpu, int(outs.updates.sum()) * b, outs


def run_sgd(b: int, S: int, threads: int) -> tuple[float, int, tuple]:
    """One timed target-SGD run: (seconds, inputs drawn, outputs)."""
    dt, _, inputs, outs = _sgd_call(b, S, threads)
    return dt, inputs, outs


def run_dd(b: int, S: int, threads: int) -> tuple[float, int, list]:
    """One timed double-double target-SGD run (same workload and streams): (seconds, inputs drawn, outputs)."""
    from numerics.rare_gates import dd_kernel as D
    from numerics.rare_gates import sim_kernels as K

    theta0, st, _ = _setup(S)
    outs = D.dd_outputs(S)
    par = K.SGDParams(*_workload(b), 0.0, K.NOISE_NONE)
    with _Threads(threads):
        t0 = time.perf_counter()
        D._dd_streams(theta0, np.zeros_like(theta0), st, par, False, outs)
        dt = time.perf_counter() - t0
    return dt, int(outs.updates.sum()) * b, list(outs)


def run_gd(rows: int, threads: int) -> tuple[float, int]:
    """One timed GD run over the whole horizon (no stop): (seconds, GD steps)."""
    from numerics.rare_gates import sim_kernels as K

    theta0, _, _ = _setup(rows)
    out_theta, rec, upd = np.empty((rows, 6)), np.empty(rows, np.int64), np.empty(rows, np.int64)
    w = _workload(1)
    gd = (w[0], *w[2:7], False)  # target, eta, lam, n_updates, check_every, threshold; no stop (GD has no b)
    with _Threads(threads):
        t0 = time.perf_counter()
        K._gd_streams(theta0, *gd, out_theta, rec, upd, np.empty((rows, 0, 2)))
        dt = time.perf_counter() - t0
    return dt, int(upd.sum())


def _best(fn, repeat: int):
    best = None
    for _ in range(repeat):
        dt, work, *rest = fn()
        if best is None or dt < best[0]:
            best = (dt, work, *rest)
    return best


def _row(name: str, b: int | None, threads: int, streams: int, dt: float, work: int, unit: str = "inputs") -> dict:
    """A kernel row: ``work`` (inputs or updates) in ``dt`` seconds, per second and per thread-second."""
    rate = work / dt
    keys = ("name", "b", "threads", "streams", "seconds", unit, f"{unit}_per_s", f"{unit}_per_s_per_thread")
    return dict(zip(keys, (name, b, threads, streams, dt, work, rate, rate / threads), strict=True))


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
            rows.append(_row("sgd_target", b, t, S, dt, inputs))
    run_dd(DD_BATCH, 1, 1)  # warm-up
    S = max(1, int(DD_STREAMS * scale))
    dt, inputs, _ = _best(lambda: run_dd(DD_BATCH, S, 1), repeat)
    f64 = next(r for r in rows if r["name"] == "sgd_target" and r["b"] == DD_BATCH and r["threads"] == 1)
    rows.append(_row("sgd_target_extended", DD_BATCH, 1, S, dt, inputs))
    rows[-1]["ratio_to_float64"] = inputs / dt / f64["inputs_per_s"]
    run_gd(2, 1)
    G = max(2, int(GD_ROWS * scale))
    for t in thread_counts:
        dt, steps = _best(lambda t=t: run_gd(G, t), repeat)
        rows.append(_row("gd", None, t, G, dt, steps, unit="updates"))
    return rows


C_PROGRAMS = {"c_simd": "bench_simd.c", "c_plain": "bench_ref.c"}


def build_c(tmp: Path, source: str = "bench_ref.c") -> tuple[Path | None, str]:
    """Compile ``numerics/<source>`` into ``tmp``; (executable or None, message)."""
    cc = shutil.which("cc")
    if cc is None:
        return None, f"no C compiler 'cc' on PATH: {source} skipped"
    src = Path(__file__).with_name(source)
    exe = tmp / Path(source).stem
    cmd = [cc, *C_FLAGS, "-o", str(exe), str(src), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, f"{source} skipped: '{' '.join(cmd)}' failed: {proc.stderr.strip()[:500]}"
    return exe, " ".join(cmd)


def run_c(exe: Path, b: int, S: int) -> dict[str, Any]:
    """Run a C reference: its header fields (``seconds``, ``inputs``, ``cpu_seconds``, ...) and ``rows``."""
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
    res: dict[str, Any] = {k: float(v) for k, v in zip(head[::2], head[1::2], strict=True)}
    res["rows"] = [line.split() for line in lines[1:]]
    return res


def _identical(c_rows: list[list[str]], outs: Sequence) -> bool:
    theta, _, _, rec, first, count, upd, _ = outs
    if len(c_rows) != len(rec):
        return False
    for s, row in enumerate(c_rows):
        ints = [int(v) for v in row[1:5]]
        if ints != [int(rec[s]), int(first[s]), int(count[s]), int(upd[s])]:
            return False
        if [float.fromhex(v) for v in row[5:11]] != theta[s].tolist():
            return False
    return True


def _nominal_hz() -> float | None:
    """The CPU's nominal clock from /proc/cpuinfo (Linux), None elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("cpu MHz"):
            return float(line.split(":")[1]) * 1e6
    return None


def measure_comparison(repeat: int, scale: float) -> dict[str, Any]:
    """The numba kernel, the SIMD C reference and the plain C loop, one thread, b = C_BATCH, interleaved.

    Every repetition runs the three once each, in turn, on the same ``C_STREAMS`` streams, so a
    load change on a shared machine hits them alike. Rates are inputs per CPU-second of the
    process (``time.process_time`` for numba, ``CLOCK_PROCESS_CPUTIME_ID`` in C: time the
    process was descheduled does not count), best of the repetitions; ``ratio_to_simd`` is the
    median over the repetitions of the rate over the SIMD C rate of the same repetition, with
    its range. Cycles per input are TSC reference cycles (the rate of ``rdtsc``, measured in
    the SIMD C run against its wall clock) per CPU-second: the nominal clock, not the core's
    actual clock (no ``perf`` counters needed); without a TSC, the ``cpu MHz`` of /proc/cpuinfo.
    Each C program's per-stream outputs are compared with the numba kernel's bit for bit.
    """
    S = max(16, int(C_STREAMS * scale))
    reps = max(5, repeat)
    messages: dict[str, str] = {}
    samples: dict[str, list[tuple[float, float, int]]] = {"numba": []}
    c_out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench_ref_") as tmp:
        exes = {}
        for name, source in C_PROGRAMS.items():
            exe, messages[name] = build_c(Path(tmp), source)
            if exe is not None:
                exes[name] = exe
                samples[name] = []
        _, _, _, outs = _sgd_call(C_BATCH, S, 1)  # warm-up, and the outputs the C programs must reproduce
        for _ in range(reps):
            wall, cpu, inputs, _ = _sgd_call(C_BATCH, S, 1)
            samples["numba"].append((cpu, wall, inputs))
            for name, exe in exes.items():
                c_out[name] = run_c(exe, C_BATCH, S)
                samples[name].append((c_out[name]["cpu_seconds"], c_out[name]["seconds"], int(c_out[name]["inputs"])))
    simd_run = c_out.get("c_simd", {})
    if simd_run.get("ticks") and simd_run["seconds"] > 0:  # the TSC rate, from the last SIMD run's wall clock
        hz = simd_run["ticks"] / simd_run["seconds"]
        source = "TSC reference cycles (rdtsc in bench_simd.c) per CPU-second"
    else:
        hz, source = _nominal_hz(), "nominal clock (cpu MHz of /proc/cpuinfo) per CPU-second"
    rows = []
    for name, smp in samples.items():
        cpu, wall, inputs = min(smp)
        row: dict[str, Any] = {
            "name": {"numba": "sgd_target_numba"}.get(name, name),
            "b": C_BATCH,
            "threads": 1,
            "streams": S,
            "repetitions": len(smp),
            "cpu_seconds": cpu,
            "inputs": inputs,
            "inputs_per_s": inputs / cpu,
            "inputs_per_s_wall": inputs / min(s[1] for s in smp),
            "cycles_per_input": hz * cpu / inputs if hz else None,
        }
        if name in c_out:
            row["identical_to_numba"] = _identical(c_out[name]["rows"], outs)
            row["compiler"] = messages[name]
            if "width" in c_out[name]:
                row["simd_width"], row["lanes"] = int(c_out[name]["width"]), int(c_out[name]["lanes"])
        if "c_simd" in samples:
            ratios = sorted((i / c) / (si / sc) for (c, _, i), (sc, _, si) in zip(smp, samples["c_simd"], strict=True))
            row["ratio_to_simd"] = ratios[len(ratios) // 2]
            row["ratio_to_simd_range"] = [ratios[0], ratios[-1]]
        rows.append(row)
    return {"rows": rows, "cycle_source": source, "cycle_hz": hz, "messages": messages}


def benchmark(repeat: int = 3, scale: float = 1.0, with_c: bool = True) -> dict:
    """The pure function behind the CLI: every measurement as one dict."""
    kernels = measure_numba(repeat, scale)
    comp = measure_comparison(repeat, scale) if with_c else None
    by_name = {r["name"]: r for r in comp["rows"]} if comp else {}
    plain, simd = by_name.get("c_plain"), by_name.get("c_simd")
    numba_row = by_name.get("sgd_target_numba")
    c_msg = "; ".join(comp["messages"].values()) if comp else "C references not requested (--no-c)"
    ratio_plain = None
    if plain is not None and numba_row is not None:
        ratio_plain = numba_row["inputs_per_s"] / plain["inputs_per_s"]
    return {
        "kernels": kernels,
        "comparison": comp,
        "c_reference": plain,
        "c_simd": simd,
        "ratio_numba_over_c": ratio_plain,
        "ratio_numba_over_simd": numba_row.get("ratio_to_simd") if numba_row else None,
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
    comp = res.get("comparison")
    if not comp or not comp["rows"]:
        lines.append(res["c_message"])
        return "\n".join(lines)
    r0 = comp["rows"][0]
    lines.append(
        f"one thread, b = {r0['b']}, {r0['streams']} streams, {r0['repetitions']} interleaved repetitions; "
        f"inputs per CPU-second (best); cycles: {comp['cycle_source']}"
        + (f" at {comp['cycle_hz'] / 1e9:.3f} GHz" if comp["cycle_hz"] else "")
    )
    head = f"{'kernel':<20} {'inputs/s':>10} {'(wall)':>10} {'cyc/input':>9}"
    lines.append(head + "  x SIMD C: median [range]  same bits")
    for r in comp["rows"]:
        cyc = f"{r['cycles_per_input']:9.2f}" if r["cycles_per_input"] else f"{'-':>9}"
        ratio = (
            f"{r['ratio_to_simd']:.3f} [{r['ratio_to_simd_range'][0]:.3f}, {r['ratio_to_simd_range'][1]:.3f}]"
            if "ratio_to_simd" in r
            else "-"
        )
        same = str(r.get("identical_to_numba", "-"))
        name = r["name"] + (f" ({r['simd_width']}x{r['lanes'] // r['simd_width']})" if "simd_width" in r else "")
        lines.append(
            f"{name:<20} {r['inputs_per_s']:>10.3e} {r['inputs_per_s_wall']:>10.3e} {cyc}  {ratio:<24}  {same}"
        )
    for name, msg in comp["messages"].items():
        if name not in {r["name"] for r in comp["rows"]}:
            lines.append(msg)
    return "\n".join(lines)


# Bounds of the command: --repeat in [1, 100], --scale in (0, 64]; and a run estimated to take
# more than RUN_LIMIT_S is refused before it starts. Measured on a shared 2-core x86 machine
# (numba kernels cached): --repeat 1 --scale 0.2 --no-c: 5 s in all, 2.9 s of it timed kernels,
# so about 15 s of kernels per repeat at scale 1; the estimate takes 20 s per repeat plus
# 1.5 s per repetition of the comparison with the C references, plus 5 s of start-up.
REPEAT_MAX = 100
SCALE_MAX = 64.0
RUN_LIMIT_S = 900.0


def estimated_seconds(repeat: int, scale: float) -> float:
    """Rough run time in seconds of ``benchmark(repeat, scale)`` (the machine above; the comparison's
    repetitions, at least 5, about 1.5 s each at scale 1)."""
    return 5.0 + max(scale, 0.01) * (repeat * 20.0 + max(5, repeat) * 1.5)


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
