"""Numerics of the audit: mpmath constants with enclosures, float64 model code, numba kernels.

Importing the package keys numba's on-disk cache to the source of the kernel modules. Numba
checks a cached function against its own file only, so after an edit to a function it calls
in another module it would load stale machine code. Here ``NUMBA_CACHE_DIR`` becomes
``<base>/code-<key>``, ``key`` a hash of every module under ``numerics/`` that mentions numba
and of every ``numerics`` module those import, directly or not (numba freezes imported globals
into the machine code), and ``base`` the user's ``NUMBA_CACHE_DIR`` or ``$XDG_CACHE_HOME/paper-audit/numba``
(``~/.cache/...``). Any edit of a kernel module gives a fresh cache; nobody clears one by
hand. This must happen before numba is first imported, which the package ensures for its
own modules; a process that imported numba earlier keeps numba's default cache (a warning
says so).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import warnings
from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def _module_file(name: str, root: Path = _ROOT) -> Path | None:
    """The file of module ``numerics.<...>`` (a module or a package's ``__init__``), None if there is none."""
    parts = name.split(".")[1:]
    for path in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
        if parts and path.is_file():
            return path
    return None


_FROM = re.compile(rb"^[ \t]*from[ \t]+(\.+[\w.]*|numerics(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M)
_IMPORT = re.compile(rb"^[ \t]*import[ \t]+(numerics(?:\.\w+)*)", re.M)


def _numerics_imports(path: Path, text: bytes, root: Path = _ROOT) -> set[Path]:
    """Files of the ``numerics`` modules that ``path`` imports (absolute or relative; read from the import lines)."""
    package = ["numerics", *path.relative_to(root).with_suffix("").parts[:-1]]
    names = [m.decode() for m in _IMPORT.findall(text)]
    for source, imported in _FROM.findall(text):
        src = source.decode()
        level = len(src) - len(src.lstrip("."))
        mod = ".".join([*package[: len(package) - level + 1], src[level:]] if level else [src]).rstrip(".")
        names.append(mod)  # ``from numerics.x import y``: y may itself be a module
        names += [
            f"{mod}.{n.split()[0]}" for n in imported.decode().strip("()").replace("\n", " ").split(",") if n.strip()
        ]
    return {f for n in names if n.startswith("numerics.") and (f := _module_file(n, root)) is not None}


def numba_code_key(root: Path = _ROOT) -> str:
    """16 hex digits of SHA-256 over the kernel modules (those mentioning numba) and what they import from numerics.

    >>> len(numba_code_key())
    16
    """
    todo = [p for p in root.rglob("*.py") if b"numba" in p.read_bytes()]
    seen: dict[Path, bytes] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = path.read_bytes()
        todo += _numerics_imports(path, seen[path], root) - seen.keys()
    h = hashlib.sha256()
    for path in sorted(seen):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + seen[path] + b"\0")
    return h.hexdigest()[:16]


def _key_numba_cache() -> None:
    leaf = f"code-{numba_code_key()}"
    base = os.environ.get("NUMBA_CACHE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "paper-audit" / "numba"
    )
    if Path(base).name == leaf:  # already keyed (a worker process inherits its parent's setting)
        return
    if "numba" in sys.modules:
        warnings.warn(
            "numba was imported before numerics: its cache is not keyed to the kernels' source "
            "(import numerics first, or clear NUMBA_CACHE_DIR after editing a kernel module)",
            stacklevel=2,
        )
        return
    os.environ["NUMBA_CACHE_DIR"] = str(Path(base) / leaf)


_key_numba_cache()
