"""What the run commands share (``python -m numerics.multipath``, ``python -m numerics.central_flow``).

Bad input is one line ``PROG: error: argument OPTION: ...`` and exit status 2, never a
traceback; a run that fails for valid input exits 1; an interrupt 130; a reader that closes the
pipe early (``| head``) ends the command quietly with 141 (128 + SIGPIPE). JSON output has
numbers as numbers and ``null`` where a value is not finite.

>>> to_json({"x": np.array([1.0, np.inf]), "k": np.int64(3)})
'{"x": [1.0, null], "k": 3}'
>>> integer_text("1e3"), fmt_g(float("nan"))
(1000, '-')
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np


class UsageError(Exception):
    """Bad input: the one-line message, printed after ``PROG: error:``."""


class RunError(Exception):
    """A run that failed for valid input (GD diverged, the ODE solver gave up): exit status 1."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (a :class:`UsageError`), with no usage dump."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def bad(option: str, message: str) -> UsageError:
    """The usage error of ``option``: ``argument OPTION: MESSAGE``."""
    return UsageError(f"argument {option}: {message}")


def integer_text(text: str) -> int:
    """``text`` as an int; ``1e3`` too (a float with an integral value); ValueError otherwise."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # ValueError for anything that is not a number
        if not value.is_integer():
            raise ValueError(text) from None
        return int(value)


def check_plot(path: str, option: str = "--plot") -> Path:
    """``path`` as a Path if matplotlib can write its file type there; else a usage error naming ``option``."""
    from matplotlib.backend_bases import FigureCanvasBase

    import numerics.plotting  # noqa: F401  (the Agg backend, before pyplot loads)

    p = Path(path)
    kinds = FigureCanvasBase.get_supported_filetypes()
    kind = p.suffix.lstrip(".").lower() or "png"
    if kind not in kinds:
        raise bad(option, f"the file type must be one of {', '.join(sorted(kinds))}; got {path!r}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir() or p.is_dir():
        raise bad(option, f"must be a file in an existing directory; got {path!r}")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise bad(option, f"must be a writable file; got {path!r}")
    return p


def save_figure(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` (file type from the suffix, PNG by default) and close it."""
    import matplotlib.pyplot as plt

    kind = path.suffix.lstrip(".").lower() or "png"
    try:
        fig.savefig(path, format=kind, dpi=120)
    finally:
        plt.close(fig)


def json_ready(x: Any) -> Any:
    """Arrays -> lists, non-finite floats -> None (JSON has no NaN), numpy scalars -> Python numbers, recursively."""
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return json_ready(x.tolist())
    if isinstance(x, (list, tuple)):
        return [json_ready(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def to_json(summary: dict, indent: int | None = None) -> str:
    """``summary`` as one JSON document."""
    return json.dumps(json_ready(summary), indent=indent, allow_nan=False)


def fmt_g(x: Any) -> str:
    """A number to 10 significant digits; '-' for None and non-finite values."""
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.10g}"


def write_line(text: str) -> bool:
    """Print ``text``; False if the reader has closed the pipe (then stdout goes to devnull, for a quiet exit)."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader left; stop quietly, also at interpreter exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return False
    return True


def run_command(prog: str, body: Callable[[], str]) -> int:
    """Run ``body`` (parse, compute, plot; returns the text to print) with the commands' exit statuses.

    0 printed; 1 :class:`RunError`; 2 :class:`UsageError`; 130 interrupted; 141 the pipe closed.
    """
    try:
        text = body()
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"{prog}: error: the run failed: {exc}", file=sys.stderr)
        return 1
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    return 0 if write_line(text) else 141
