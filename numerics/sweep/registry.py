"""The experiments the sweep layer knows, by name ('paper.experiment').

Each paper's sweep module (``numerics.<paper>.sweeps``) defines ``EXPERIMENTS`` (name ->
:class:`~numerics.sweep.experiment.Experiment`); :data:`PROVIDERS` lists those modules. Every
simulation of the audit is one of these experiments, so ``--set``, the result store, Dask and
the progress line work the same for all three papers.

>>> resolve(["rare_gates.table2"])[0].name
'rare_gates.table2'
>>> papers = sorted({e.name.split(".")[0] for e in resolve(["all"])})
>>> papers
['central_flow', 'multipath', 'rare_gates']
>>> len(resolve(["all"])) == sum(len(resolve([p])) for p in papers)
True
>>> resolve(["table9"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown experiment 'table9'; known: all, central_flow, multipath, rare_gates, ...
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from numerics.sweep.experiment import Experiment

PROVIDERS = ("numerics.rare_gates.sweeps", "numerics.central_flow.sweeps", "numerics.multipath.sweeps")


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
