"""Recovery of target SGD from a constructed balanced checkpoint (Section 8, Appendices 19-20).

Usage::

    python -m numerics.rare_gates.recovery --b 16 --delta0 1e-4 --eta 0.01 --streams 128
        --horizon 200 --seed 0 [--lam 0.05] [--check-every 10] [--threshold 0.4]
        [--noise-s S] [--noise independent|shared] [--no-stop] [--threads N]
        [--json | --format text|markdown|json]

Runs online target SGD (batch ``b``, step ``eta``, weight decay ``lam``) on ``streams``
independent streams (ids 0..streams-1 of ``seed``) from the checkpoint of Appendix 19,
``a_i = |w_i| = sqrt(0.45)`` at angle ``delta0``, through target time ``horizon``, with the
analytic target risk checked every ``check-every`` updates; a stream recovers at the first
check with risk <= 0.4 and stops there (``--no-stop``: runs on to the horizon, as the
Appendix 20 noise runs do). ``--noise-s s`` adds ``s sqrt(eta) xi_i`` to each unit's
parameters after every step, the two units' ``xi`` independent or shared.

Prints the number of streams, the recovered count and fraction with its 95% Wilson
interval, ``Gamma = b delta0 / eta``, the Poisson reference ``1 - exp(-Gamma / (pi lam))``
(undefined at lam = 0), the fraction of recovered runs whose first sampled gate
disagreement came no later than their recovery, and the median recovery time. ``--json``
prints one JSON object with fields ``streams, recovered, fraction, wilson95, gamma,
poisson_reference, disagreement_first_fraction, median_recovery_time, config`` (null where
undefined). Long runs show progress on stderr when it is a terminal.

Allowed values, from the model (q = 2/pi):

* ``--eta`` in [1e-8, 1]: the paper's analysis takes eta <= 1 (and the runs diverge at
  eta = 2); below 1e-8 a step's angular drift eta (q - lam) delta (delta ~ 1e-5) is within a
  few hundred float64 ulps of theta (|theta| ~ 1), while the rounding of each of the
  horizon/eta > 1e10 updates adds up: the angle would follow the rounding, not the model;
* ``--threshold`` in (1 - 2q^2, 1 - q^2) = (0.18943..., 0.59472...): no two-unit predictor
  has target risk below 1 - 2q^2 (the best risk at angle pi), and proportional units reach
  R_col = 1 - q^2, so only a level in between certifies separation (the paper's 0.4);
* ``--lam`` in [0, 2/pi): the target angular rate q - lam must be positive;
* ``--horizon`` >= ``check-every`` x ``eta``: at least one risk check after the start;
* ``--delta0`` in (0, pi); ``--b``, ``--streams``, ``--check-every`` >= 1; ``--seed`` in
  [0, 2^64 - 1]; ``--noise-s`` >= 0.

Cost: a run is refused before it starts if its worst case (no stream stopping early) is
estimated to take more than an hour or its arrays more than 2 GiB; the message gives the
estimate. Bad input: a one-line error naming the argument and its range, exit status 2; a
run whose parameters leave the finite range (a large ``--noise-s``) exits 1; a closed stdout
(``| head``) 141.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence

import numba
import numpy as np

from numerics.cli_support import Parser, RunError, bad, check_cost, flag_error, int_arg, real_arg, run_main
from numerics.rare_gates.model import Q
from numerics.rare_gates.simulate import LAM, recovery_summary, simulate_sgd

PROG = "python -m numerics.rare_gates.recovery"
_FLAGS = {
    name: "--" + name.replace("_", "-")
    for name in (
        "b",
        "delta0",
        "eta",
        "streams",
        "horizon",
        "seed",
        "lam",
        "check_every",
        "threshold",
        "noise_s",
        "threads",
    )
}

# --- allowed ranges (see the module docstring for the reasons) -------------------------------------------
ETA_MIN, ETA_MAX = 1e-8, 1.0
THRESHOLD_MIN = 1.0 - 2.0 * Q * Q  # the best target risk of two units (angle pi): never reached
THRESHOLD_MAX = 1.0 - Q * Q  # R_col: reached by proportional units, so it certifies no separation
LAM_MAX = Q  # the target angular rate q - lam must be positive

# --- cost limits -----------------------------------------------------------------------------------------
# Seconds per stream and update on one thread, measured on a shared 2-core x86 machine (target
# SGD, H = 200, eta = 0.01, every stream run to the horizon): b = 1: 2.3e-8 (risk every 100
# updates); b = 16: 2.6e-7 (every 10), 4.0e-7 (every update), 4.4e-7 (with parameter noise);
# b = 64: 9.9e-7. Fitted: 1.6e-8 b + 1.5e-7 / check_every + 5e-9, + 2e-7 with noise; the
# estimate takes 1.5 times that (load on a shared machine), divided by the threads.
RUN_LIMIT_S = 3600.0
MEMORY_LIMIT_BYTES = 2 * 2**30
BYTES_PER_STREAM = 600  # measured peak of the arrays: 310-600 bytes a stream (1e5 to 4e5 streams)


def estimated_seconds(b: int, streams: int, updates: float, check_every: int, noise: bool, threads: int) -> float:
    """Worst-case run time in seconds (every stream to the horizon) on the machine above."""
    per_update = 1.6e-8 * b + 1.5e-7 / check_every + 5e-9 + (2e-7 if noise else 0.0)
    return 1.5 * streams * updates * per_update / threads


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog=PROG, description=__doc__)
    p.add_argument("--b", type=int_arg(1), required=True, help="batch size (integer >= 1)")
    p.add_argument(
        "--delta0",
        type=real_arg(0, math.pi, lo_open=True, hi_open=True, hi_text="pi"),
        required=True,
        help="checkpoint angle in (0, pi)",
    )
    eta_why = " (the paper's regime is eta <= 1; below 1e-8 the float64 rounding of the updates swamps the drift)"
    p.add_argument("--eta", type=real_arg(ETA_MIN, ETA_MAX, why=eta_why), required=True, help="step size in [1e-8, 1]")
    p.add_argument("--streams", type=int_arg(1), default=128, help="independent streams (default 128)")
    p.add_argument(
        "--horizon",
        type=real_arg(0, None, lo_open=True),
        default=200.0,
        help="target time horizon H >= check-every x eta (default 200)",
    )
    p.add_argument(
        "--seed", type=int_arg(0, 2**64 - 1, hi_text="2^64 - 1"), default=0, help="seed in [0, 2^64 - 1] (default 0)"
    )
    p.add_argument(
        "--lam",
        type=real_arg(0, LAM_MAX, hi_open=True, hi_text="2/pi", why=" (the target rate 2/pi - lam must be > 0)"),
        default=LAM,
        help=f"weight decay in [0, 2/pi) (default {LAM:g})",
    )
    p.add_argument("--check-every", type=int_arg(1), default=10, help="updates between risk checks (default 10)")
    thr_why = (
        " (no two-unit predictor has target risk <= 1 - 2q^2, and proportional units reach R_col = 1 - q^2, q = 2/pi)"
    )
    p.add_argument(
        "--threshold",
        type=real_arg(
            THRESHOLD_MIN,
            THRESHOLD_MAX,
            lo_open=True,
            hi_open=True,
            lo_text=f"{THRESHOLD_MIN:.5f}",
            hi_text=f"{THRESHOLD_MAX:.5f}",
            why=thr_why,
        ),
        default=0.4,
        help=f"recovery risk level in (1 - 2q^2, 1 - q^2) = ({THRESHOLD_MIN:.5f}, {THRESHOLD_MAX:.5f}) (default 0.4)",
    )
    p.add_argument("--noise-s", type=real_arg(0, None), default=0.0, help="parameter-noise scale s >= 0 (default 0)")
    p.add_argument(
        "--noise",
        choices=("independent", "shared"),
        default="independent",
        help="noise vectors of the two units (default independent)",
    )
    p.add_argument("--no-stop", action="store_true", help="run every stream to the horizon")
    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at import from the environment
    p.add_argument(
        "--threads",
        type=int_arg(1, most),
        default=None,
        help=f"threads in [1, {most}] (default all; results do not depend on it)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object (same as --format json)")
    fmt.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    return p


def check_args(args: argparse.Namespace) -> None:
    """Refuse (UsageError) what the ranges of single options cannot: a horizon without a risk check
    after the start, and a run beyond the cost limits (with the estimate)."""
    updates = args.horizon / args.eta
    if updates < args.check_every * (1 - 1e-9):
        raise bad(
            "--horizon",
            f"must be at least check-every x eta = {args.check_every} x {args.eta:g} = {args.check_every * args.eta:g} "
            f"(a risk check after the start); got {args.horizon:g}",
        )
    threads = args.threads or numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    seconds = estimated_seconds(args.b, args.streams, updates, args.check_every, args.noise_s > 0, threads)
    check_cost(
        f"{args.streams} streams of {updates:.3g} updates at b = {args.b}",
        nbytes=float(args.streams) * BYTES_PER_STREAM,
        limit_bytes=MEMORY_LIMIT_BYTES,
        option="--streams",
        hint="ask for fewer --streams",
    )
    check_cost(
        f"{args.streams} streams of {updates:.3g} updates at b = {args.b} on {threads} thread{'s' * (threads > 1)}",
        seconds=seconds,
        limit_s=RUN_LIMIT_S,
        hint="ask for fewer --streams, a smaller --b or --horizon, or a larger --eta",
    )


def _progress_bar():
    """A stderr progress callback when stderr is a terminal, else None."""
    if not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rupdates {done}/{total} ({100 * done / total:.0f}%), {time.perf_counter() - t0:.1f} s{end}")
        sys.stderr.flush()

    return show


def run(args: argparse.Namespace, progress: Callable[[int, int], None] | None = None) -> dict:
    """The pure function behind the CLI: simulate and summarise (see :func:`recovery_summary`)."""
    res = simulate_sgd(
        delta0=args.delta0,
        b=args.b,
        eta=args.eta,
        horizon=args.horizon,
        lam=args.lam,
        streams=args.streams,
        seed=args.seed,
        check_every=args.check_every,
        threshold=args.threshold,
        noise_s=args.noise_s,
        noise=args.noise,
        stop_at_recovery=not args.no_stop,
        threads=args.threads,
        progress=progress,
    )
    finite = np.all(np.isfinite(res.final_theta), axis=1)
    if not finite.all():
        raise RunError(
            f"the parameters of {int((~finite).sum())} of {finite.size} streams left the finite range "
            "(lower --noise-s or --eta); a recovered fraction would mean nothing"
        )
    out = recovery_summary(res)
    out["config"] = dict(out["config"], elapsed_s=round(res.elapsed_s, 3))
    return out


def _num(v, fmt: str = ".4g") -> str:
    return "undefined" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _render(out: dict, fmt: str) -> str:
    lo, hi = out["wilson95"]
    rows = [
        ("streams", str(out["streams"])),
        ("recovered", str(out["recovered"])),
        ("recovered fraction", f"{out['fraction']:.4f}  (95% Wilson [{lo:.4f}, {hi:.4f}])"),
        ("Gamma = b delta0 / eta", _num(out["gamma"])),
        ("Poisson reference 1 - exp(-Gamma/(pi lam))", _num(out["poisson_reference"], ".4f")),
        ("recovered runs with a disagreement first", _num(out["disagreement_first_fraction"], ".4f")),
        ("median recovery time", _num(out["median_recovery_time"])),
    ]
    if fmt == "markdown":
        return "\n".join(["| quantity | value |", "| --- | --- |"] + [f"| {k} | {v} |" for k, v in rows])
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 1 the run diverged; 2 bad input; 141 closed stdout)."""

    def body() -> int:
        args = _parser().parse_args(argv)
        check_args(args)
        try:
            out = run(args, progress=_progress_bar())
        except ValueError as exc:  # a value the simulator rejects: name the flag
            raise flag_error(exc, _FLAGS) from None
        if args.json or args.format == "json":
            print(json.dumps(out, allow_nan=False))
        else:
            print(_render(out, args.format))
        return 0

    return run_main("recovery", body)


if __name__ == "__main__":
    sys.exit(main())
