"""The experiments the sweep layer knows, by name ('paper.experiment').

Each paper's sweep module defines ``EXPERIMENTS`` (name -> :class:`~numerics.sweep.experiment.Experiment`);
:data:`PROVIDERS` lists those modules. Today only the rare-gates paper has long
experiments; the multipath and central-flow checks run in seconds.

>>> resolve(["rare_gates.table2"])[0].name
'rare_gates.table2'
>>> len(resolve(["rare_gates"])) == len(resolve(["all"])) > 5
True
>>> resolve(["table9"])
Traceback (most recent call last):
...
ValueError: unknown experiment 'table9'; known: all, rare_gates, rare_gates.cor5, rare_gates.extended, \
rare_gates.grid, rare_gates.halving, rare_gates.joint, rare_gates.noise, rare_gates.paths, rare_gates.table1, \
rare_gates.table2, rare_gates.weight_decay
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from numerics.sweep.experiment import Experiment

PROVIDERS = ("numerics.rare_gates.sweeps",)


def experiments() -> dict[str, Experiment]:
    """Every registered experiment, in the providers' order."""
    out: dict[str, Experiment] = {}
    for name in PROVIDERS:
        out.update(importlib.import_module(name).EXPERIMENTS)
    return out


def resolve(names: Iterable[str]) -> list[Experiment]:
    """Experiments named by full name, by paper (every experiment of it) or 'all'; order kept, no repeats."""
    known = experiments()
    papers = sorted({n.split(".")[0] for n in known})
    chosen: list[Experiment] = []
    for name in names:
        if name == "all":
            hits = list(known.values())
        elif name in papers:
            hits = [e for n, e in known.items() if n.split(".")[0] == name]
        elif name in known:
            hits = [known[name]]
        else:
            raise ValueError(f"unknown experiment {name!r}; known: {', '.join(['all', *papers, *sorted(known)])}")
        chosen += [e for e in hits if e not in chosen]
    return chosen
