"""Run the papers' long experiments outside pytest, resumably, on one machine or a Dask cluster.

Usage::

    python -m numerics.sweep LIST   [--profile quick|full] [--set NAME=VALUE ...]
    python -m numerics.sweep RUN    EXPERIMENT ... [--profile quick|full] [--set NAME=VALUE ...]
                                    [--store DIR] [--scheduler serial|local|ADDRESS] [--workers N] [--quiet]
    python -m numerics.sweep STATUS [EXPERIMENT ...] [--profile quick|full] [--set NAME=VALUE ...] [--store DIR]

(each with ``--format text|json``). EXPERIMENT is a name from LIST (``rare_gates.table2``),
a paper (``rare_gates``: all of its experiments) or ``all``.

LIST shows the experiments and their cell counts at the profile's sizes. RUN computes
every cell not already in the store (default ``verify-report/sweep-store``, the store
that ``pytest verify`` reads by default when started in the same directory with the
default ``--report-dir``) and writes each finished cell at once, so an
interrupted run (Ctrl-C, a killed worker, a lost machine) continues where it stopped
when started again. ``--scheduler local`` (the default) starts a Dask LocalCluster with
one single-threaded worker process per core (``--workers N`` to choose) and prints its
dashboard address; ``--scheduler tcp://HOST:8786`` uses a running Dask cluster whose
workers have this package installed at the same revision; ``--scheduler serial`` runs in
this process. The numbers are bit-identical in every case. STATUS shows, per experiment,
the cells stored, missing, stale (another code version or configuration) or corrupt.

``--profile full`` gives the paper-scale sizes that ``pytest verify --full`` uses, so a
full RUN followed by ``pytest verify --full`` only reads results. ``--set NAME=VALUE``
changes a size (``--set table1_inits=1024``); ``pytest verify`` takes the same option. A
size may be at most 16 times the larger of its quick and full values (the full profile is
already paper scale or above; beyond that a LIST alone can take hours).

A progress line (cells done, reused, failed, ETA) is drawn on a terminal outside CI. RUN
reports per experiment its cells reused from the store and computed, ``done at`` (seconds
from the start of the run to the experiment's last cell: experiments run together, so this
is not the experiment's own time) and ``compute`` (the sum of its computed cells' times on
the workers). Exit status: 0; 1 if a cell failed (each failure is printed with its cell and
error; the other cells are stored); 2 on bad input (one line); 130 when interrupted; 141
when stdout is closed early (``| head``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from numerics.cli_support import Parser, UsageError, bad, int_arg, run_main
from numerics.sweep.engine import CellOutcome, describe, make_executor, run_sweeps
from numerics.sweep.experiment import check_overrides
from numerics.sweep.registry import experiments, resolve
from numerics.sweep.store import ResultStore

DEFAULT_STORE = Path("verify-report") / "sweep-store"
SIZE_FACTOR_MAX = 16  # a --set size may be at most this times the larger of its quick and full values


def parse_sets(items: Iterable[str] | None) -> dict:
    """``['a=1', 'b=none']`` -> ``{'a': '1', 'b': 'none'}``; raises ValueError naming a malformed item.

    >>> parse_sets(["table1_inits=128"])
    {'table1_inits': '128'}
    >>> parse_sets(["table1_inits"])
    Traceback (most recent call last):
    ...
    ValueError: --set: expected NAME=VALUE; got 'table1_inits'
    """
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"--set: expected NAME=VALUE; got {item!r}")
        out[name.strip()] = value.strip()
    return out


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="python -m numerics.sweep", description=__doc__)
    p.add_argument("command", type=str.upper, choices=("LIST", "RUN", "STATUS"), help="LIST, RUN or STATUS")
    p.add_argument("experiments", nargs="*", default=[], help="experiment names, papers, or 'all' (RUN: at least one)")
    p.add_argument("--profile", choices=("quick", "full"), default="quick", help="sizes of this audit profile")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"change one size, at most {SIZE_FACTOR_MAX} x its larger profile value (repeatable)",
    )
    p.add_argument("--store", default=str(DEFAULT_STORE), help=f"result store directory (default {DEFAULT_STORE})")
    p.add_argument("--scheduler", default="local", help="serial, local (default) or a Dask scheduler address")
    cores = os.cpu_count() or 1
    p.add_argument(
        "--workers",
        type=int_arg(1, cores),
        default=None,
        help=f"worker processes of the local cluster, in [1, {cores}] (the cores; default: all)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    return p


def size_limits() -> dict[str, float]:
    """Each numeric size's upper bound for ``--set``: SIZE_FACTOR_MAX x its larger quick/full value.

    Sizes that a profile leaves at None ('all') and ``perturb`` (bounded on its own) have none.
    """
    base: dict[str, float] = {}
    unbounded = {"perturb"}
    for exp in experiments().values():
        own = set(exp.size_names())
        for profile in ("quick", "full"):
            sizes = exp.sizes(profile, {})
            for name in own:
                value = getattr(sizes, name, None)
                if value is None or isinstance(value, bool):
                    unbounded.add(name)
                elif isinstance(value, (int, float)):
                    base[name] = max(base.get(name, 0), value)
    return {name: SIZE_FACTOR_MAX * max(v, 1) for name, v in base.items() if name not in unbounded}


def check_size_limits(overrides: dict) -> None:
    """Refuse (as bad input of ``--set``) a size above its limit (:func:`size_limits`), before any cell is listed."""
    limits = size_limits()
    for name, raw in overrides.items():
        try:
            value = float(str(raw))
        except ValueError:
            continue  # not a number: check_overrides has named it
        limit = limits.get(name)
        if limit is not None and not (math.isfinite(value) and value <= limit):
            raise bad(
                "--set",
                f"size {name} must be at most {limit:g} ({SIZE_FACTOR_MAX} x its larger profile value "
                f"{limit / SIZE_FACTOR_MAX:g}); got {raw!r}",
            )


# --- the three commands: pure functions returning data ---------------------------------------------------


def list_experiments(profile: str, overrides: dict) -> list[dict]:
    """Name, summary and cell count of every experiment at the sizes of ``profile``."""
    out = []
    for exp in experiments().values():
        out.append(
            {"name": exp.name, "cells": len(exp.cells(exp.own_sizes(profile, overrides))), "summary": exp.summary}
        )
    return out


def status(names: Sequence[str] | None, profile: str, overrides: dict, store: ResultStore) -> dict:
    """Per experiment: cells, and how many are stored (reusable), missing, stale or corrupt."""
    rows, wanted = [], set()
    for exp in resolve(names or ["all"]):
        counts = {"stored": 0, "missing": 0, "stale": 0, "corrupt": 0}
        compute_s = 0.0
        cells = exp.cells(exp.own_sizes(profile, overrides))
        for p in cells:
            found = store.load(exp.name, p, code_version=exp.code_version)
            wanted.add(found.path.resolve())
            key = {"ok": "stored", "missing": "missing", "corrupt": "corrupt"}.get(found.status, "stale")
            counts[key] += 1
            if found.status == "ok":
                assert found.meta is not None  # an 'ok' lookup carries the file's meta
                compute_s += float(found.meta.get("worker", {}).get("elapsed_s", 0.0))
        rows.append({"name": exp.name, "cells": len(cells), **counts, "compute_s": round(compute_s, 1)})
    others = [f for f in store.files() if f.resolve() not in wanted]
    return {
        "store": str(store.root),
        "profile": profile,
        "overrides": overrides,
        "experiments": rows,
        "other_files": len(others),
        "temporary_files": len(store.leftover_temporaries()),
    }


def run(
    names: Iterable[str],
    profile: str,
    overrides: dict,
    store: ResultStore,
    scheduler: str,
    workers: int | None,
    quiet: bool,
) -> dict:
    """Run the experiments' missing cells (all together); per experiment: reused, computed, failed, times, failures.

    ``wall_s`` of an experiment: from the start of the run to its last cell; ``compute_s``:
    the sum of its computed cells' times on the workers; ``cpu_s``: their CPU seconds there.
    """
    chosen = resolve(names)
    rows = []
    with make_executor(scheduler, workers) as executor:
        runs = run_sweeps(chosen, profile, overrides, store=store, executor=executor, progress=False if quiet else None)
        for exp, res in zip(chosen, runs):
            rows.append(
                {
                    "name": exp.name,
                    "cells": len(res.params),
                    "reused": res.count("reused"),
                    "computed": res.count("computed"),
                    "failed": res.count("failed"),
                    "wall_s": round(res.wall_s, 2),
                    "compute_s": round(_compute_s(res.outcomes), 2),
                    "cpu_s": round(sum(o.cpu_s for o in res.outcomes if o.status == "computed"), 2),
                    "recomputed_because": _reasons(res.outcomes),
                    "failures": [{"cell": describe(o.params), "error": o.error} for o in res.failures],
                }
            )
    return {
        "store": str(store.root),
        "profile": profile,
        "overrides": overrides,
        "scheduler": executor.description,
        "experiments": rows,
    }


def _compute_s(outcomes: list[CellOutcome]) -> float:
    return sum(o.elapsed_s for o in outcomes if o.status == "computed")


def _reasons(outcomes: list[CellOutcome]) -> dict:
    out: dict[str, int] = {}
    for o in outcomes:
        if o.status != "reused" and o.reason:
            key = o.reason.split(":", 1)[0]
            out[key] = out.get(key, 0) + 1
    return out


# --- rendering ---------------------------------------------------------------------------------------------


def _render(command: str, data) -> str:
    if command == "LIST":
        width = max(len(r["name"]) for r in data)
        return "\n".join(f"{r['name']:<{width}}  {r['cells']:>5} cells  {r['summary']}" for r in data)
    head = (
        f"store {data['store']} (profile {data['profile']}"
        + (f", sizes {data['overrides']}" if data["overrides"] else "")
        + ")"
    )
    if command == "STATUS":
        width = max([len(r["name"]) for r in data["experiments"]] + [10])
        lines = [head, f"{'experiment':<{width}}  cells  stored  missing  stale  corrupt  compute_s"]
        lines += [
            f"{r['name']:<{width}}  {r['cells']:>5}  {r['stored']:>6}  {r['missing']:>7}  {r['stale']:>5}  "
            f"{r['corrupt']:>7}  {r['compute_s']:>9.1f}"
            for r in data["experiments"]
        ]
        lines.append(
            f"other cell files in the store: {data['other_files']}; "
            f"temporary files of interrupted writes: {data['temporary_files']}"
        )
        return "\n".join(lines)
    lines = [head, f"scheduler: {data['scheduler']}"]
    for r in data["experiments"]:
        why = ", ".join(f"{k} {v}" for k, v in r["recomputed_because"].items())
        lines.append(
            f"{r['name']}: {r['cells']} cells, {r['reused']} reused, {r['computed']} computed"
            f"{' (' + why + ')' if why else ''}, {r['failed']} failed; done at {r['wall_s']:.1f} s from the start, "
            f"compute {r['compute_s']:.1f} s ({r['cpu_s']:.1f} CPU-s)"
        )
        lines += [f"  FAILED cell {f['cell']}: {f['error']}" for f in r["failures"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point; returns the exit status (0; 1 failed cells; 2 bad input; 130 interrupted; 141 closed stdout)."""

    def body() -> int:
        data: Any  # the rows of LIST, the report of STATUS or RUN
        args = _parser().parse_args(argv)
        try:
            overrides = parse_sets(args.set)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        try:
            if overrides:
                try:
                    check_overrides(experiments().values(), args.profile, overrides)
                except ValueError as exc:
                    raise bad("--set", str(exc)) from None
                check_size_limits(overrides)
            store = ResultStore(args.store)
            if args.command == "LIST":
                if args.experiments:
                    raise UsageError("LIST takes no experiment names (it lists them all)")
                data = list_experiments(args.profile, overrides)
            elif args.command == "STATUS":
                data = status(args.experiments, args.profile, overrides, store)
            else:
                if not args.experiments:
                    raise UsageError("RUN needs at least one experiment (see LIST), a paper, or 'all'")
                data = run(args.experiments, args.profile, overrides, store, args.scheduler, args.workers, args.quiet)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:
            print(
                "sweep: interrupted; finished cells are stored, run the same command again to continue",
                file=sys.stderr,
            )
            return 130
        except BrokenPipeError:
            raise
        except OSError as exc:  # the store became unwritable during the run (a full disk, a lost mount)
            print(f"sweep: error: {exc}; the cells stored before it are kept", file=sys.stderr)
            return 1
        print(json.dumps(data, indent=1) if args.format == "json" else _render(args.command, data))
        failed = args.command == "RUN" and any(r["failed"] for r in data["experiments"])
        return 1 if failed else 0

    return run_main("sweep", body)
