"""The on-disk result store: one file per finished cell, written atomically, checked on every read.

Layout: ``<root>/<experiment>/<key>.cell``, where ``key`` hashes the experiment name and
the cell's parameters. A cell file is::

    PAPER-AUDIT-CELL 1\\n
    <header: one line of JSON: meta (configuration, seed, versions), skeleton, payload size>\\n
    <SHA-256 (hex) of the header line and the payload>\\n
    <payload: an uncompressed .npz of the cell's arrays>

A write goes to a temporary file in the same directory, is flushed to disk and then
renamed over the final name (``os.replace``, atomic on POSIX and Windows), so a reader
sees either no file or a whole one; a killed writer leaves only a temporary file
(``.tmp-<host>-<pid>-...``), which later runs on that host remove once its process is gone.
A read checks the magic line, the header, the payload size and the checksum, so a
truncated or damaged file is reported as corrupt, never read as data.

>>> import tempfile
>>> store = ResultStore(tempfile.mkdtemp())
>>> meta = {"experiment": "demo", "params": {"n": 1}, "code_version": "v1"}
>>> path = store.save("demo", {"n": 1}, {"x": np.arange(3.0)}, meta)
>>> found = store.load("demo", {"n": 1}, code_version="v1")
>>> found.status, found.value["x"].tolist()
('ok', [0.0, 1.0, 2.0])
>>> store.load("demo", {"n": 1}, code_version="v2").status
'code-mismatch'
>>> store.load("demo", {"n": 2}, code_version="v1").status
'missing'
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from numerics.sweep.codec import decode, encode

MAGIC = b"PAPER-AUDIT-CELL 1\n"
SUFFIX = ".cell"
TMP_PREFIX = ".tmp-"


def canonical(params: dict) -> str:
    """The canonical JSON text of a cell's parameters (sorted keys; floats as shortest repr).

    >>> canonical({"b": 16, "delta0": 1e-05, "settings": [(16, 1e-05)]})
    '{"b":16,"delta0":1e-05,"settings":[[16,1e-05]]}'
    """
    return json.dumps(params, sort_keys=True, separators=(",", ":"), allow_nan=False)


def cell_key(experiment: str, params: dict) -> str:
    """A 24-hex-digit key of ``(experiment, params)`` (SHA-256 of the canonical text)."""
    return hashlib.sha256(f"{experiment}\n{canonical(params)}".encode()).hexdigest()[:24]


def _current_umask() -> int:
    try:  # Linux: read it without changing it
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


class CorruptCell(Exception):
    """A cell file that is truncated, damaged or not a cell file."""


@dataclass
class Lookup:
    """The outcome of looking a cell up: ``status`` and, if 'ok', its ``value`` and ``meta``.

    ``status``: 'ok', 'missing', 'corrupt', 'config-mismatch' (the file holds another
    configuration) or 'code-mismatch' (computed by another code version); ``reason`` says why.
    """

    status: str
    path: Path
    value: object = None
    meta: dict | None = None
    reason: str = ""


def write_cell(path: Path, value: object, meta: dict) -> None:
    """Write ``value`` with ``meta`` to ``path`` atomically (temporary file, fsync, rename)."""
    skeleton, arrays = encode(value)
    buf = io.BytesIO()
    np.savez(buf, **cast(dict[str, Any], arrays))  # numpy's stub would match a key against allow_pickle
    payload = buf.getvalue()
    header = json.dumps(
        {"meta": meta, "skeleton": skeleton, "payload_bytes": len(payload)},
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
    ).encode()
    digest = hashlib.sha256(header + b"\n" + payload).hexdigest().encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + header + b"\n" + digest + b"\n" + payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # as an ordinary file (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_cell(path: Path) -> tuple[object, dict]:
    """``(value, meta)`` of the cell file at ``path``; raises :class:`CorruptCell` saying what is wrong."""
    data = Path(path).read_bytes()
    if not data.startswith(MAGIC):
        raise CorruptCell("not a cell file (bad first line)")
    rest = data[len(MAGIC) :]
    try:
        header, digest, payload = rest.split(b"\n", 2)
    except ValueError:
        raise CorruptCell("truncated header") from None
    try:
        head = json.loads(header)
        size = int(head["payload_bytes"])
    except (ValueError, KeyError, TypeError):
        raise CorruptCell("damaged header") from None
    if len(payload) != size:
        raise CorruptCell(f"truncated payload ({len(payload)} of {size} bytes)")
    if hashlib.sha256(header + b"\n" + payload).hexdigest().encode() != digest:
        raise CorruptCell("checksum mismatch")
    with np.load(io.BytesIO(payload), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return decode(head["skeleton"], arrays), head["meta"]


class ResultStore:
    """A directory of cell files (see the module docstring)."""

    def __init__(self, root):
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"store: {self.root} exists and is not a directory")

    def check_writable(self) -> None:
        """Create the store directory and write (then remove) a probe file; ValueError saying why not."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-", dir=self.root)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            raise ValueError(f"store: cannot write to {self.root} ({exc.strerror or exc})") from None

    def path(self, experiment: str, params: dict) -> Path:
        return self.root / experiment / f"{cell_key(experiment, params)}{SUFFIX}"

    def save(self, experiment: str, params: dict, value: object, meta: dict) -> Path:
        path = self.path(experiment, params)
        write_cell(path, value, meta)
        return path

    def load(self, experiment: str, params: dict, *, code_version: str) -> Lookup:
        """Look a cell up; reusable only if intact, of this configuration and of this code version."""
        path = self.path(experiment, params)
        if not path.exists():
            return Lookup("missing", path)
        try:
            value, meta = read_cell(path)
        except (CorruptCell, OSError, ValueError) as exc:
            return Lookup("corrupt", path, reason=str(exc) or type(exc).__name__)
        if meta.get("experiment") != experiment or canonical(meta.get("params", {})) != canonical(params):
            return Lookup("config-mismatch", path, meta=meta, reason="the file holds another configuration")
        if meta.get("code_version") != code_version:
            return Lookup(
                "code-mismatch",
                path,
                meta=meta,
                reason=f"computed by code version {meta.get('code_version')}, this is {code_version}",
            )
        return Lookup("ok", path, value, meta)

    def files(self, experiment: str | None = None) -> list[Path]:
        """Cell files (all experiments, or one), sorted."""
        base = self.root / experiment if experiment else self.root
        return sorted(base.rglob(f"*{SUFFIX}")) if base.exists() else []

    def leftover_temporaries(self) -> list[Path]:
        """Temporary files of interrupted writes."""
        return sorted(self.root.rglob(f"{TMP_PREFIX}*")) if self.root.exists() else []

    def remove_dead_temporaries(self) -> int:
        """Remove temporary files written on this host by processes that no longer run; their number."""
        host = socket.gethostname()
        removed = 0
        for tmp in self.leftover_temporaries():
            parts = tmp.name[len(TMP_PREFIX) :].rsplit("-", 2)
            if len(parts) != 3 or parts[0] != host or not parts[1].isdigit():
                continue
            if not _alive(int(parts[1])):
                tmp.unlink(missing_ok=True)
                removed += 1
        return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
