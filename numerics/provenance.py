"""Provenance shared by the simulation results and the sweep store: git revision and package version.

>>> rev = git_revision()
>>> rev is None or len(rev) == 40
True
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path


def git_revision() -> str | None:
    """The checked-out commit, read from the repository's .git files (no subprocess); None outside a checkout."""
    root = Path(__file__).resolve().parents[1] / ".git"
    try:
        head = (root / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        path = root / ref
        if path.exists():
            return path.read_text().strip()
        for line in (root / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        return None
    return None


def package_version() -> str:
    """The installed version of this project (``paper-audit``), or 'unknown' when it is not installed."""
    try:
        return metadata.version("paper-audit")
    except metadata.PackageNotFoundError:
        return "unknown"
