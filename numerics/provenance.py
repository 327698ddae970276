"""Provenance shared by the simulation results, the sweep store and the audit report: git revision and package version.

>>> rev = git_revision()
>>> rev is None or len(rev) == 40
True
>>> sorted(git_state())
['dirty', 'revision']
"""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]


def git_revision() -> str | None:
    """The checked-out commit, read from the repository's .git files (no subprocess); None outside a checkout."""
    root = _ROOT / ".git"
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


def git_dirty() -> bool | None:
    """True when tracked files differ from the checked-out commit; None when git cannot tell (no git, no checkout).

    Runs ``git --no-optional-locks status --porcelain --untracked-files=no``: read-only, it
    never refreshes or locks the index.
    """
    if not (_ROOT / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"],
            cwd=_ROOT,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return bool(out.stdout.strip())


def git_state() -> dict:
    """``{"revision": 40-hex commit or None, "dirty": bool or None}`` of this checkout."""
    return {"revision": git_revision(), "dirty": git_dirty()}


def package_version() -> str:
    """The installed version of this project (``paper-audit``), or 'unknown' when it is not installed."""
    try:
        return metadata.version("paper-audit")
    except metadata.PackageNotFoundError:
        return "unknown"
