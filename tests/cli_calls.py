"""Calling a command-line ``main(argv)`` in-process, or its module in a subprocess, from a test, as the CLI tests of
every paper do."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def call(main: Callable[[Sequence[str]], int], capsys: Any, *argv: str) -> tuple[int, str, str]:
    """Run ``main(argv)`` and return its exit code with what it wrote to stdout and stderr."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def call_json(main: Callable[[Sequence[str]], int], capsys: Any, *argv: str) -> dict:
    """Run ``main(argv + --format json)``, assert a clean exit, and parse stdout as strict JSON.

    NaN and infinities are refused: the CLIs promise standard JSON.
    """
    rc, out, err = call(main, capsys, *argv, "--format", "json")
    assert rc == 0 and err == "", (rc, err)

    def no_constant(name: str) -> None:
        raise AssertionError(f"{name} in the JSON output")

    return json.loads(out, parse_constant=no_constant)


def module(name: str, *argv: str) -> subprocess.Popen:
    """Start ``python -m name argv`` from the repository root, with stdout and stderr as text pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", name, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
