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
undefined). Long runs show progress on stderr when it is a terminal. Bad input: a one-line
error naming the argument, exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

from numerics.rare_gates.simulate import recovery_summary, simulate_sgd

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


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line instead of usage + message, and no SystemExit
        raise _UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m numerics.rare_gates.recovery",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--b", type=int, required=True, help="batch size (integer >= 1)")
    p.add_argument("--delta0", type=float, required=True, help="checkpoint angle in (0, pi)")
    p.add_argument("--eta", type=float, required=True, help="step size > 0")
    p.add_argument("--streams", type=int, default=128, help="independent streams (default 128)")
    p.add_argument("--horizon", type=float, default=200.0, help="target time horizon H (default 200)")
    p.add_argument("--seed", type=int, default=0, help="non-negative integer seed (default 0)")
    p.add_argument("--lam", type=float, default=0.05, help="weight decay >= 0 (default 0.05)")
    p.add_argument("--check-every", type=int, default=10, help="updates between risk checks (default 10)")
    p.add_argument("--threshold", type=float, default=0.4, help="recovery risk level (default 0.4)")
    p.add_argument("--noise-s", type=float, default=0.0, help="parameter-noise scale s >= 0 (default 0)")
    p.add_argument(
        "--noise",
        choices=("independent", "shared"),
        default="independent",
        help="noise vectors of the two units (default independent)",
    )
    p.add_argument("--no-stop", action="store_true", help="run every stream to the horizon")
    p.add_argument("--threads", type=int, default=None, help="threads (default all; results do not depend on it)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="one JSON object (same as --format json)")
    fmt.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    return p


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
    """CLI entry point; returns the exit status (0, or 2 on bad input)."""
    try:
        args = _parser().parse_args(argv)
        out = run(args, progress=_progress_bar())
    except _UsageError as exc:
        print(f"recovery: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a value the simulator rejects: name the flag
        name = str(exc).split(" ", 1)[0].split("/", 1)[0]
        flag = _FLAGS.get(name)
        prefix = f"argument {flag}: " if flag else ""
        print(f"recovery: error: {prefix}{exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    if args.json or args.format == "json":
        print(json.dumps(out, allow_nan=False))
    else:
        print(_render(out, args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
