"""The mutation catalogue: realistic bugs planted one at a time to see whether the audit notices.

``verify/mutation/catalogue.toml`` holds one ``[[mutant]]`` table per bug:

- ``id``: unique, lower case, e.g. ``"rg-q-radial-power"``;
- ``area``: one of :data:`AREAS`;
- ``description``: the plausible bug, one line;
- ``file``: the file it edits, relative to the repository root;
- ``old`` / ``new``: the exact snippet and its replacement; ``old`` must occur exactly once
  in ``file`` unless ``occurrence`` (1-based) says which occurrence is meant;
- ``checks``: the audit checks that should catch it, pytest node ids or files under ``verify/``
  (narrow, so a run is fast);
- ``tests`` (optional): library tests that should catch it: files or node ids under ``tests/``,
  or modules of ``numerics/`` and ``derivations/`` whose doctests should;
- ``sizes`` (optional): quick-profile size overrides ``"name=value"`` for the audit run of this
  mutant and of its baseline (``pytest verify --set name=value``), for checks whose experiment
  has no cells in the quick profile (the joint sweep, say).

>>> m = Mutant(
...     id="x", area="machinery", description="d", file="f.py", old="a = 1", new="a = 2", checks=("verify/t.py",)
... )
>>> m.apply_to("b = 0\\na = 1\\n")
'b = 0\\na = 2\\n'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

AREAS = ("rare_gates", "central_flow", "multipath", "machinery")
CATALOGUE = Path(__file__).with_name("catalogue.toml")
_REQUIRED = ("id", "area", "description", "file", "old", "new", "checks")
_OPTIONAL = ("occurrence", "tests", "sizes")
_SIZE = re.compile(r"^[a-z][a-z0-9_]*=\S+$")
CHECK_DIRS = ("verify/",)  # the audit
TEST_DIRS = ("tests/", "numerics/", "derivations/")  # the library suite: tests and doctest modules
_ID = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


class CatalogueError(ValueError):
    """The catalogue is malformed: unknown or missing field, duplicate id, bad value, missing file."""


class StaleMutant(ValueError):
    """A mutant's ``old`` snippet no longer occurs in its file as the catalogue says."""


@dataclass(frozen=True)
class Mutant:
    """One planted bug (see the module docstring for the fields)."""

    id: str
    area: str
    description: str
    file: str
    old: str
    new: str
    checks: tuple[str, ...]
    tests: tuple[str, ...] = ()
    occurrence: int | None = None
    sizes: tuple[str, ...] = ()

    def locate(self, text: str) -> int:
        """Index of the snippet this mutant replaces in ``text``; StaleMutant if it is not there as specified."""
        count = text.count(self.old)
        if self.occurrence is None:
            if count != 1:
                raise StaleMutant(
                    f"{self.id}: `old` occurs {count} times in {self.file}, expected exactly once"
                    + (" (give `occurrence`)" if count > 1 else "")
                )
            return text.index(self.old)
        if count < self.occurrence:
            raise StaleMutant(
                f"{self.id}: `old` occurs {count} times in {self.file}; occurrence {self.occurrence} was asked for"
            )
        at = -1
        for _ in range(self.occurrence):
            at = text.index(self.old, at + 1)
        return at

    def apply_to(self, text: str) -> str:
        """``text`` with this mutant's snippet replaced."""
        at = self.locate(text)
        return text[:at] + self.new + text[at + len(self.old) :]

    def check_set(self) -> tuple[str, ...]:
        """The audit checks, as a sorted tuple (the key under which its baseline is shared)."""
        return tuple(sorted(set(self.checks)))


def _strings(raw, key: str, where: str, prefixes: tuple[str, ...], required: bool) -> tuple[str, ...]:
    value = raw.get(key, [] if not required else None)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise CatalogueError(f"{where}: `{key}` must be a list of non-empty strings")
    if required and not value:
        raise CatalogueError(f"{where}: `{key}` must name at least one check")
    for v in value:
        path = v.split("::", 1)[0]
        if not path.startswith(prefixes) or ".." in Path(path).parts or Path(path).is_absolute():
            raise CatalogueError(
                f"{where}: `{key}` entry {v!r} must be a file or node id under " + " or ".join(prefixes)
            )
    return tuple(value)


def parse_catalogue(data: dict, source: str = "catalogue") -> list[Mutant]:
    """Validate the TOML data of a catalogue and return its mutants (files are not looked at)."""
    unknown_top = set(data) - {"mutant"}
    if unknown_top:
        raise CatalogueError(f"{source}: unknown top-level keys {sorted(unknown_top)}; expected [[mutant]] tables")
    raw_list = data.get("mutant", [])
    if not isinstance(raw_list, list):
        raise CatalogueError(f"{source}: `mutant` must be an array of tables ([[mutant]])")
    out: list[Mutant] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_list):
        where = f"{source}: mutant #{i + 1}" + (f" ({raw['id']})" if isinstance(raw.get("id"), str) else "")
        unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
        if unknown:
            raise CatalogueError(
                f"{where} has unknown fields {sorted(unknown)}; allowed: {', '.join(_REQUIRED + _OPTIONAL)}"
            )
        missing = [k for k in _REQUIRED if k not in raw]
        if missing:
            raise CatalogueError(f"{where} lacks {', '.join(missing)}")
        for k in ("id", "area", "description", "file", "old", "new"):
            if not isinstance(raw[k], str) or (k != "new" and not raw[k].strip()):
                raise CatalogueError(f"{where}: `{k}` must be a non-empty string")
        mid = raw["id"]
        if not _ID.match(mid):
            raise CatalogueError(f"{where}: id {mid!r} must be lower case letters, digits, '-' and '.'")
        if mid in seen:
            raise CatalogueError(f"{source}: duplicate mutant id {mid!r}")
        seen.add(mid)
        if raw["area"] not in AREAS:
            raise CatalogueError(f"{where}: area {raw['area']!r}; allowed: {', '.join(AREAS)}")
        if "\n" in raw["description"].strip():
            raise CatalogueError(f"{where}: `description` must be one line")
        if raw["old"] == raw["new"]:
            raise CatalogueError(f"{where}: `old` and `new` are equal: the mutant changes nothing")
        fpath = Path(raw["file"])
        if fpath.is_absolute() or ".." in fpath.parts:
            raise CatalogueError(f"{where}: `file` must be a path inside the repository; got {raw['file']!r}")
        occ = raw.get("occurrence")
        if occ is not None and (isinstance(occ, bool) or not isinstance(occ, int) or occ < 1):
            raise CatalogueError(f"{where}: `occurrence` must be an integer >= 1")
        sizes = raw.get("sizes", [])
        if not isinstance(sizes, list) or not all(isinstance(x, str) and _SIZE.match(x) for x in sizes):
            raise CatalogueError(f'{where}: `sizes` must be a list of "name=value" size overrides')
        out.append(
            Mutant(
                id=mid,
                area=raw["area"],
                description=raw["description"].strip(),
                file=raw["file"],
                old=raw["old"],
                new=raw["new"],
                checks=_strings(raw, "checks", where, CHECK_DIRS, True),
                tests=_strings(raw, "tests", where, TEST_DIRS, False),
                occurrence=occ,
                sizes=tuple(sizes),
            )
        )
    if not out:
        raise CatalogueError(f"{source}: no [[mutant]] tables")
    return out


def load_catalogue(path: Path | str = CATALOGUE) -> list[Mutant]:
    """Read and validate a catalogue file."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise CatalogueError(f"catalogue {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path.name}: not valid TOML: {exc}") from None
    return parse_catalogue(data, path.name)


def _node_problem(root: Path, node: str) -> str | None:
    """Why the check or test ``node`` cannot be found under ``root`` (None when it can)."""
    path, _, rest = node.partition("::")
    target = root / path
    if not target.exists():
        return f"{path} does not exist"
    if rest:
        if not target.is_file():
            return f"{path} is not a file, so {node!r} is not a node id"
        text = target.read_text()
        for part in rest.split("::"):
            name = part.split("[", 1)[0]
            if not re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b", text, re.MULTILINE):
                return f"{path} defines no {name!r}"
    return None


def problems(mutants: list[Mutant], root: Path | str) -> list[str]:
    """Every reason a mutant would not apply to the tree at ``root`` (empty when all apply).

    A mutant is stale when its file is gone, its ``old`` snippet does not occur as specified,
    or a check or test it names does not exist.
    """
    root = Path(root)
    out: list[str] = []
    cache: dict[str, str] = {}
    for m in mutants:
        target = root / m.file
        if not target.is_file():
            out.append(f"{m.id}: file {m.file} not found")
            continue
        text = cache.setdefault(m.file, target.read_text())
        try:
            m.locate(text)
        except StaleMutant as exc:
            out.append(str(exc))
        for node in (*m.checks, *m.tests):
            why = _node_problem(root, node)
            if why:
                out.append(f"{m.id}: {why}")
    return out


def select(mutants: list[Mutant], only) -> list[Mutant]:
    """The mutants with ids in ``only`` (all when empty), in catalogue order; CatalogueError for unknown ids."""
    if not only:
        return list(mutants)
    known = {m.id for m in mutants}
    bad = [i for i in only if i not in known]
    if bad:
        raise CatalogueError(f"unknown mutant ids: {', '.join(bad)}")
    wanted = set(only)
    return [m for m in mutants if m.id in wanted]
