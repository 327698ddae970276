"""A one-line progress display for sweeps: cells done / total, reused, failed, elapsed time and ETA.

Drawn on a terminal only (``stream.isatty()``) and never when the environment variable
``CI`` is set, so logs and CI runs stay quiet. The ETA extrapolates the rate of the cells
computed so far (reused cells, read from the store, cost nothing) over the cells still to compute.

>>> import io
>>> p = Progress("demo", total=4, stream=io.StringIO(), enabled=True, clock=iter([0.0, 10.0]).__next__)
>>> p.start(reused=1)
>>> p.advance(ok=True)
>>> p.line()
'demo: 2/4 cells (1 reused, 0 failed) elapsed 0:00:10 ETA 0:00:20'
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def terminal_wanted(stream: TextIO) -> bool:
    """Whether to draw progress on ``stream``: a terminal, and not in CI."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not os.environ.get("CI")


class Progress:
    """Progress of one experiment's cells (see the module docstring)."""

    def __init__(self, label: str, total: int, *, stream=None, enabled: bool | None = None, clock=time.monotonic):
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = terminal_wanted(self.stream) if enabled is None else enabled
        self.clock = clock
        self.reused = self.computed = self.failed = 0
        self.t0 = 0.0
        self.now = 0.0

    def start(self, reused: int) -> None:
        self.reused = reused
        self.t0 = self.now = self.clock()
        self._draw()

    def advance(self, ok: bool) -> None:
        if ok:
            self.computed += 1
        else:
            self.failed += 1
        self.now = self.clock()
        self._draw()

    def line(self) -> str:
        done = self.reused + self.computed + self.failed
        elapsed = self.now - self.t0
        ran = self.computed + self.failed
        eta = _hms(elapsed / ran * (self.total - done)) if ran else "?"
        return (
            f"{self.label}: {done}/{self.total} cells ({self.reused} reused, {self.failed} failed) "
            f"elapsed {_hms(elapsed)} ETA {eta}"
        )

    def _draw(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[2K" + self.line())
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
