"""What a sweep runs: an :class:`Experiment` is a list of independent cells and a rule to join them.

A cell is a dict of plain parameters (numbers, strings, lists), enough to compute its part
of the experiment on any machine: ``compute(params)`` returns plain data (dicts, lists,
arrays). ``assemble(sizes, params_list, values)`` joins the cells' values, in cell order,
into the experiment's result; it must equal the result of the one-call experiment function,
bit for bit (each cell covers a range of streams or initialisations whose random numbers
are keyed by their ids, so the split changes nothing).

The *code version* of an experiment is a hash of the source of the modules its cells run
(``code_modules`` and every project module they import, directly or not: :func:`code_closure`),
taken when the experiment is defined, and of the numerical environment (NumPy, numba,
llvmlite, C library, architecture). A stored cell is reused only under the same code
version; any edit of those modules, a docstring included, recomputes the cells.

>>> chunks(70, 32)
[(0, 32), (32, 32), (64, 6)]
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import math
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Experiment:
    """One experiment of the sweep layer.

    ``name`` ('paper.experiment'), ``summary`` (what it reproduces, with the paper's
    location), ``sizes(profile, overrides)`` (the size object of an audit profile),
    ``cells(sizes)`` (the cells' parameters, in order), ``compute(params)`` (one cell; must be
    importable by name, as workers import it), ``assemble(sizes, params_list, values)``,
    and ``code_modules`` (the modules whose source determines the cells' numbers).
    """

    name: str
    summary: str
    sizes: Callable[[str, dict], Any]
    cells: Callable[[Any], list[dict]]
    compute: Callable[[dict], Any]
    assemble: Callable[[Any, list[dict], list[Any]], Any]
    code_modules: tuple[str, ...] = field(default=())
    code_version: str = field(init=False)

    def __post_init__(self):
        # Fixed when the experiment is defined, i.e. when its modules are imported: a source
        # file edited later (a pull during a long run) cannot relabel cells computed by the
        # code already in memory.
        object.__setattr__(self, "code_version", code_version(self.code_modules))

    def size_names(self, profile: str = "quick") -> tuple[str, ...]:
        """The names of this experiment's sizes (fields of its size object; none when it has none)."""
        base = self.sizes(profile, {})
        return tuple(f.name for f in fields(base)) if is_dataclass(base) else ()

    def own_sizes(self, profile: str, overrides: dict | None = None) -> Any:
        """The sizes of ``profile`` changed by those ``overrides`` that name this experiment's own sizes.

        Overrides are given once for every paper (``--set NAME=VALUE``); each experiment
        takes the names its paper defines and leaves the others' (a name several papers
        define, such as ``perturb``, reaches them all). See :func:`check_overrides`.
        """
        own = set(self.size_names(profile))
        return self.sizes(profile, {k: v for k, v in (overrides or {}).items() if k in own})


def check_overrides(experiments, profile: str, overrides: dict) -> None:
    """ValueError for a size no experiment defines, or a value some experiment refuses (naming the size)."""
    known: dict[str, None] = {}
    for exp in experiments:
        known.update(dict.fromkeys(exp.size_names(profile)))
    for name in overrides:
        if name not in known:
            raise ValueError(f"unknown size {name!r}; sizes are: {', '.join(known)}")
    for exp in experiments:
        exp.own_sizes(profile, overrides)


def call_cell(call: str, **kwargs: Any) -> dict:
    """A cell that calls the function ``call`` of its paper's experiments module with ``kwargs``."""
    return {"call": call, "kwargs": kwargs}


def run_call(module: Any, calls: frozenset[str] | set[str], params: dict) -> Any:
    """Compute a :func:`call_cell`: ``module.<call>(**kwargs)``, refusing a call not in ``calls``."""
    name = params["call"]
    if name not in calls:
        raise ValueError(f"call must be one of {', '.join(sorted(calls))}; got {name!r}")
    return getattr(module, name)(**params["kwargs"])


def perturbed_cells(cells: Callable[[Any], list[dict]], sizes: Any) -> list[dict]:
    """``cells(sizes)``, each call given ``perturb`` when the sizes set one (cells at 0 keep their stored keys)."""
    out = cells(sizes)
    if sizes.perturb:
        for p in out:
            p["kwargs"]["perturb"] = sizes.perturb
    return out


def call_experiments(
    paper: str,
    sizes: Callable[[str, dict], Any],
    compute: Callable[[dict], Any],
    code_modules: tuple[str, ...],
    specs: list[tuple[str, str, Callable[[Any], list[dict]], Callable]],
) -> dict[str, Experiment]:
    """A paper's ``EXPERIMENTS`` whose cells are :func:`call_cell` s: name -> :class:`Experiment`.

    ``specs`` lists ``(name, summary, cells, assemble)``; each experiment is named
    'paper.name', shares the paper's ``sizes``, ``compute`` and ``code_modules``, and its
    cells get the sizes' ``perturb`` (:func:`perturbed_cells`).
    """
    out = {}
    for name, summary, cells, assemble in specs:
        exp = Experiment(
            name=f"{paper}.{name}",
            summary=summary,
            sizes=sizes,
            cells=functools.partial(perturbed_cells, cells),
            compute=compute,
            assemble=assemble,
            code_modules=code_modules,
        )
        out[exp.name] = exp
    return out


def profile_sizes(profiles: Mapping[str, Any], profile: str) -> Any:
    """The size object of ``profile`` in ``profiles`` ('quick' or 'full'), else a ValueError naming both.

    >>> profile_sizes({"quick": 1, "full": 2}, "fast")
    Traceback (most recent call last):
    ...
    ValueError: profile must be 'quick' or 'full'; got 'fast'
    """
    if profile not in profiles:
        raise ValueError(f"profile must be {' or '.join(repr(p) for p in profiles)}; got {profile!r}")
    return profiles[profile]


def replace_sizes(base: Any, overrides: Mapping[str, object] | None, minimum: Mapping[str, int] | None = None) -> Any:
    """The size dataclass ``base`` with fields replaced by ``overrides`` (values as numbers or as text).

    Integer sizes must be >= ``minimum.get(name, 1)``; float sizes must be finite and > 0;
    a field typed ``... | None`` also takes 'none'; ``perturb`` is a relative size in
    [0, 1e-6] (:func:`numerics.perturb.check_perturbation`). Every refusal names the size
    and the allowed range; an unknown name lists the sizes there are.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Z:
    ...     draws: int
    ...     horizon: float = 1.0
    >>> replace_sizes(Z(3), {"draws": "8"})
    Z(draws=8, horizon=1.0)
    >>> replace_sizes(Z(3), {"draws": "0"})
    Traceback (most recent call last):
    ...
    ValueError: size draws must be an integer >= 1; got '0'
    >>> replace_sizes(Z(3), {"streams": 2})
    Traceback (most recent call last):
    ...
    ValueError: unknown size 'streams'; sizes are: draws, horizon
    """
    if not overrides:
        return base
    from numerics.perturb import check_perturbation

    kinds = {f.name: str(f.type) for f in fields(base)}
    new: dict[str, Any] = {}
    for name, raw in overrides.items():
        if name not in kinds:
            raise ValueError(f"unknown size {name!r}; sizes are: {', '.join(kinds)}")
        text = str(raw).strip().lower()
        if name == "perturb":
            try:
                new[name] = check_perturbation(float(text))
            except ValueError:
                raise ValueError(f"size perturb must be a relative size in [0, 1e-6]; got {raw!r}") from None
            continue
        if "None" in kinds[name] and text == "none":
            new[name] = None
            continue
        is_float = kinds[name] == "float"
        lo = (minimum or {}).get(name, 1)
        try:
            value: float | int | None = float(text) if is_float else int(text)
        except ValueError:
            value = None
        if is_float:
            if value is None or not math.isfinite(value) or value <= 0:
                raise ValueError(f"size {name} must be a number > 0; got {raw!r}")
        elif value is None or value < lo:
            extra = " or 'none'" if "None" in kinds[name] else ""
            raise ValueError(f"size {name} must be an integer >= {lo}{extra}; got {raw!r}")
        new[name] = value
    return replace(base, **new)


PROJECT_PACKAGES = ("numerics", "derivations")  # the packages whose modules a code version follows


def _project_imports(name: str, path: str) -> set[str]:
    """The project modules that module ``name`` (source at ``path``) imports anywhere in its source.

    Read statically from every import statement (inside functions too), relative ones
    resolved; ``from P import x`` counts P and, where it is a module, P.x.
    """
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m.split(".")[0] in PROJECT_PACKAGES and _origin(m) is not None}


def _origin(name: str) -> str | None:
    """The source file of module ``name``, or None where it is not a module (an attribute of a package)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".py") else None


@cache
def code_closure(modules: tuple[str, ...]) -> tuple[str, ...]:
    """``modules`` and every project module (:data:`PROJECT_PACKAGES`) they import, directly or not, sorted.

    A module that shapes the cells' numbers but is not listed in ``code_modules`` (a helper
    the listed modules import) is thereby still part of the code version.

    >>> "numerics.validation" in code_closure(("numerics.stats",))
    True
    """
    for name in modules:
        if _origin(name) is None:
            raise ValueError(f"code_modules: cannot find module {name!r}")
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_project_imports(name, _origin(name) or ""))
    return tuple(sorted(seen))


@cache
def code_version(modules: tuple[str, ...]) -> str:
    """16 hex digits of SHA-256 over the source of the modules and of what they import (:func:`code_closure`)
    and the numerical environment.

    The environment: NumPy, numba and llvmlite versions, the C library and the machine
    architecture (``numpy.longdouble`` and libm differ between them). Computed once per
    process and set of modules (cached), at the first request: experiments request it when
    they are defined, right after their modules are imported.
    """
    import llvmlite
    import numba

    h = hashlib.sha256()
    for name in code_closure(tuple(sorted(set(modules)))):
        with open(_origin(name) or "", "rb") as f:
            h.update(name.encode() + b"\0" + f.read() + b"\0")
    libc = " ".join(platform.libc_ver())
    h.update(
        f"numpy {np.__version__}; numba {numba.__version__}; llvmlite {llvmlite.__version__}; {libc}; "
        f"{platform.machine()}".encode()
    )
    return h.hexdigest()[:16]


def chunks(n: int, size: int) -> list[tuple[int, int]]:
    """``(first, count)`` pairs covering ``0 .. n - 1`` in pieces of at most ``size``."""
    if n < 0 or size < 1:
        raise ValueError(f"chunks: need n >= 0 and size >= 1; got n={n}, size={size}")
    return [(i, min(size, n - i)) for i in range(0, n, size)]


def concat_records(records: list[dict], per_stream: tuple[str, ...]) -> dict:
    """Join records of one setting computed on consecutive stream ranges.

    Keys in ``per_stream`` are arrays whose first axis runs over streams: concatenated.
    Every other key must be equal in all records (a setting's parameters, a time grid).

    >>> a = {"b": 16, "rec": np.array([1.0]), "t": np.arange(2.0)}
    >>> b = {"b": 16, "rec": np.array([2.0]), "t": np.arange(2.0)}
    >>> concat_records([a, b], ("rec",))["rec"].tolist()
    [1.0, 2.0]
    """
    from numerics.sweep.codec import equal

    out = {}
    for key, first in records[0].items():
        if key in per_stream:
            out[key] = np.concatenate([r[key] for r in records], axis=0)
        else:
            if not all(equal(r[key], first) for r in records[1:]):
                raise ValueError(f"cells of one setting disagree on {key!r}")
            out[key] = first
    return out
