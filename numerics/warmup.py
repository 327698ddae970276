"""Compile every JIT kernel of the project once, and say what each entry point's compilation costs.

Usage::

    python -m numerics.warmup [--format text|json]

Each entry point below is called twice on a tiny input; the first call's CPU seconds are
its compilation (or, with a warm cache, loading the machine code from the JIT's on-disk
cache), the second call's are the tiny run itself. Run before several processes start on
a cold cache (``.ci/run`` does, before the library tests and the audit's Dask workers
start side by side), it makes every later process load the kernels instead of compiling
the same ones in parallel. The cache is the one :mod:`numerics` keys to the kernels'
source (the cache directory variable, keyed by the package).

This module names the JIT only in words: the code key of ``numerics/__init__.py`` hashes every module that
mentions it by name, and this one computes nothing that the key must follow.

Other argument types compile their own specialisations later, as they would without the
warm-up: nothing here changes what a kernel computes.

>>> [name for name, _ in ENTRY_POINTS][:2]
['rare_gates.simulate_sgd (b = 16, trace)', 'rare_gates.simulate_sgd (b = 1, noise)']
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from numerics.cli_support import Parser, run_command

PROG = "python -m numerics.warmup"
CACHE_VARIABLE = "NUMBA" + "_CACHE_DIR"  # spelled in two parts: see the module docstring


def _sgd_b16() -> None:
    from numerics.rare_gates.simulate import simulate_sgd

    simulate_sgd(delta0=1e-4, b=16, eta=0.01, horizon=0.5, streams=2, trace=True)
    simulate_sgd(delta0=1e-4, b=16, eta=0.01, horizon=0.5, streams=2)


def _sgd_b1_noise() -> None:
    from numerics.rare_gates.simulate import simulate_sgd

    simulate_sgd(delta0=1e-4, b=1, eta=0.01, horizon=0.5, streams=2, noise_s=1e-3, source_time=0.1)


def _gd() -> None:
    from numerics.rare_gates.simulate import simulate_gd

    simulate_gd(delta0=1e-4, eta=0.01, horizon=0.5, trace=True)


def _extended() -> None:
    from numerics.rare_gates.simulate import simulate_extended

    simulate_extended(delta0=1e-4, b=16, eta=0.01, horizon=0.5, streams=2)


def _population_flow() -> None:
    from numerics.rare_gates import population_flow as pf

    theta = pf.from_polar(0.5, 0.5, 0.5, 0.5, 0.1, -0.1)
    pf.flow(theta, "target", 0.05, [0.5, 1.0])
    pf.flow(theta, "source", 0.05, [0.5, 1.0], coords="logpolar")


def _svs() -> None:
    from numerics.multipath import gd

    gd.simulate_svs([3, 3], [1.0], 0.5, [1e-3, 1e-3], 20)


def _full() -> None:
    from numerics.multipath import gd

    layers = [[np.eye(2) * 0.3] * 2] * 2
    gd.simulate_full(layers, np.eye(2), 0.1, 10)
    gd.simulate_full(layers, np.eye(2), 0.1, 10, activation="tanh")


ENTRY_POINTS: list[tuple[str, Callable[[], None]]] = [
    ("rare_gates.simulate_sgd (b = 16, trace)", _sgd_b16),
    ("rare_gates.simulate_sgd (b = 1, noise)", _sgd_b1_noise),
    ("rare_gates.simulate_gd", _gd),
    ("rare_gates.simulate_extended (double-double)", _extended),
    ("rare_gates.population_flow", _population_flow),
    ("multipath.simulate_svs", _svs),
    ("multipath.simulate_full", _full),
]


# The entry points grouped by the kernels they compile, each family with the module that holds those kernels: a
# sweep whose experiments name that module among their code modules needs the family (see warm_tasks). The
# entry points of one family run in one process, in order, so that the later ones reuse what the first compiled.
FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "rare_gates SGD",
        "numerics.rare_gates.sim_kernels",
        ("rare_gates.simulate_sgd (b = 16, trace)", "rare_gates.simulate_sgd (b = 1, noise)"),
    ),
    ("rare_gates GD", "numerics.rare_gates.sim_kernels", ("rare_gates.simulate_gd",)),
    ("rare_gates extended", "numerics.rare_gates.dd_kernel", ("rare_gates.simulate_extended (double-double)",)),
    ("rare_gates population flow", "numerics.rare_gates.population_flow", ("rare_gates.population_flow",)),
    ("multipath", "numerics.multipath.gd", ("multipath.simulate_svs", "multipath.simulate_full")),
)


def warm_family(name: str) -> float:
    """Call each entry point of family ``name`` once; the CPU seconds this took (compilation or loading)."""
    calls = dict(ENTRY_POINTS)
    for family, _, entries in FAMILIES:
        if family == name:
            c0 = time.process_time()
            for entry in entries:
                calls[entry]()
            return time.process_time() - c0
    raise ValueError(f"family must be one of {', '.join(f for f, _, _ in FAMILIES)}; got {name!r}")


def warm_tasks(modules: Iterable[str]) -> list[tuple[str, Callable[[], float]]]:
    """(family, task) for each family whose kernels' module is among ``modules`` (an experiment's code modules).

    A Dask executor runs these before the cells (one family per worker at a time), so that each kernel is
    compiled once and every worker then loads it from the on-disk cache, instead of each worker compiling the
    same kernels for its first cells. With a warm cache a task only loads (about 1 CPU-s for all of them).

    >>> [name for name, _ in warm_tasks(["numerics.multipath.gd", "numerics.multipath.wcr"])]
    ['multipath']
    """
    wanted = set(modules)
    return [(family, functools.partial(warm_family, family)) for family, module, _ in FAMILIES if module in wanted]


def warm_up() -> list[dict]:
    """Call every entry point twice; per entry point the CPU seconds of the first call and of the second."""
    rows = []
    for name, call in ENTRY_POINTS:
        c0 = time.process_time()
        call()
        c1 = time.process_time()
        call()
        c2 = time.process_time()
        rows.append({"entry_point": name, "first_cpu_s": round(c1 - c0, 2), "second_cpu_s": round(c2 - c1, 3)})
    return rows


def render(rows: list[dict], cache: str, fmt: str) -> str:
    """The warm-up's rows as text or JSON."""
    if fmt == "json":
        return json.dumps({"cache_dir": cache, "entry_points": rows}, indent=2)
    lines = [f"compiled-code cache: {cache}"]
    lines += [
        f"{r['entry_point']:46s} first call {r['first_cpu_s']:6.2f} CPU-s (compile or load), "
        f"second {r['second_cpu_s']:.3f}"
        for r in rows
    ]
    lines.append(f"total of the first calls: {sum(r['first_cpu_s'] for r in rows):.1f} CPU-s")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 2 bad input; 130 interrupted; 141 closed stdout)."""
    parser = Parser(prog=PROG, description=(__doc__ or "").split("\n\n>>>")[0])
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")

    def body() -> str:
        args = parser.parse_args(argv)
        cache = os.environ.get(CACHE_VARIABLE, "(the default, beside the sources)")  # keyed by numerics/__init__
        return render(warm_up(), cache, args.format)

    return run_command(PROG, body)


if __name__ == "__main__":
    sys.exit(main())
