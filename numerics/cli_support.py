"""What the commands share (``python -m numerics.multipath``, ``numerics.central_flow``,
``numerics.rare_gates.recovery``, ``numerics.sweep``, ``numerics.bench``, ...).

Bad input is one line ``PROG: error: argument OPTION: ...`` naming the option and its allowed
range, exit status 2, never a traceback; a run that fails for valid input exits 1; an interrupt
130; a reader that closes the pipe early (``| head``) ends the command quietly with 141
(128 + SIGPIPE). A run estimated to cost more than a stated limit (time, memory) is refused
before it starts, as bad input, with the estimate (:func:`check_cost`). Negative numbers in
any notation (``-1e-4``, ``-inf``) are option values, not options, so that their range check
answers. Help texts are plain text: the docstrings' reST markup is stripped
(:func:`strip_markup`). JSON output has numbers as numbers and ``null`` where a value is not
finite.

>>> to_json({"x": np.array([1.0, np.inf]), "k": np.int64(3)})
'{"x": [1.0, null], "k": 3}'
>>> integer_text("1e3"), fmt_g(float("nan"))
(1000, '-')
>>> print(strip_markup(":mod:`numerics.sweep`, ``--eta`` of :func:`~numerics.gd.run`. Usage::"))
numerics.sweep, --eta of run. Usage:
>>> real_arg(1e-8, 1)("1e-300")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a real number in [1e-08, 1]; got '1e-300'
>>> duration_text(7200), bytes_text(3 * 2**30)
('2.0 h', '3.0 GiB')
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from numerics.validation import in_range, range_text


class UsageError(Exception):
    """Bad input: the one-line message, printed after ``PROG: error:``."""


class RunError(Exception):
    """A run that failed for valid input (GD diverged, the ODE solver gave up): exit status 1."""


# --- help text ------------------------------------------------------------------------------------------

_ROLE = re.compile(r":[A-Za-z][\w.:+-]*:`([^`]*)`")  # :func:`x`, :py:mod:`x`
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_INTERPRETED = re.compile(r"(?<![\w`])`([^`\n]+)`(?:__?)?(?![\w`])")  # `x`, `link`_


def _role_text(match: re.Match) -> str:
    text = match.group(1)
    target = re.fullmatch(r"(.*?)\s*<[^<>]*>", text)  # :ref:`words <target>` -> words
    if target:
        return target.group(1)
    if text.startswith("~"):  # :func:`~a.b.c` -> c
        return text[1:].rsplit(".", 1)[-1]
    return text.lstrip("!")


def strip_markup(text: str) -> str:
    """A docstring as plain text for ``--help``: reST roles (``:func:`~a.b``` -> ``b``), literals
    (double backquotes, also across a line break), interpreted text, ``::`` literal-block markers
    and doctest blocks removed."""
    lines, in_doctest = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_doctest = True
        if in_doctest:
            if stripped:
                continue
            in_doctest = False
        if stripped == "::":
            continue
        if line.endswith("::"):
            line = line[:-2].rstrip() + ":" if line[:-2].rstrip() else ""
        lines.append(line)
    out = _ROLE.sub(_role_text, "\n".join(lines))
    out = _LITERAL.sub(r"\1", out)
    out = _INTERPRETED.sub(r"\1", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip("\n") if text.strip() else out


class PlainHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions kept as laid out (raw), reST markup stripped from them and from every option's help."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(strip_markup(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return strip_markup(super()._expand_help(action))


# ``-1e-4``, ``-.5``, ``-3``, ``-inf``: a value, never an option (argparse's own pattern misses exponents)
NEGATIVE_NUMBER = re.compile(r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^-(?:inf|infinity|nan)$", re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (a :class:`UsageError`), with no usage dump.

    Its help is plain text (:class:`PlainHelpFormatter` unless another formatter is given), and
    a negative number in any notation is read as a value (``--delta0 -1e-4`` reaches the range
    check of ``--delta0`` instead of "expected one argument").
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", PlainHelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def bad(option: str, message: str) -> UsageError:
    """The usage error of ``option``: ``argument OPTION: MESSAGE``."""
    return UsageError(f"argument {option}: {message}")


def flag_error(exc: Exception, flags: dict[str, str]) -> UsageError:
    """The usage error of a library's ValueError whose message starts with a parameter name
    (``eta must be ...``; ``theta0/delta0: ...``): ``argument --eta: eta must be ...`` when ``flags``
    maps the name to its option, else the message alone."""
    message = str(exc)
    name = message.split(" ", 1)[0].split("/", 1)[0].rstrip(":,")
    flag = flags.get(name)
    return bad(flag, message) if flag else UsageError(message)


def integer_text(text: str) -> int:
    """``text`` as an int; ``1e3`` too (a float with an integral value); ValueError otherwise."""
    try:
        return int(text)
    except ValueError:
        value = float(text)  # ValueError for anything that is not a number
        if not value.is_integer():
            raise ValueError(text) from None
        return int(value)


def shown(text: str, width: int = 40) -> str:
    """``text`` for an error message, cut to about ``width`` characters (a value can be a megabyte long)."""
    return text if len(text) <= width else f"{text[: width // 2]}...({len(text)} characters)"


def int_arg(lo: int, hi: int | None = None, *, hi_text: str | None = None) -> Callable[[str], int]:
    """An argparse ``type=``: an integer in [lo, hi] (``1e3`` too), else "must be an integer in [lo, hi]; got '...'"."""
    want = "an integer " + range_text(lo, hi, hi_text=hi_text)

    def parse(text: str) -> int:
        try:
            value = integer_text(text)
        except (ValueError, OverflowError):
            value = None
        if value is None or value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be {want}; got {shown(text)!r}")
        return value

    parse.__name__ = "integer"
    return parse


def real_arg(
    lo: float | None,
    hi: float | None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    lo_text: str | None = None,
    hi_text: str | None = None,
    why: str = "",
) -> Callable[[str], float]:
    """An argparse ``type=``: a finite real number in the range (see :func:`numerics.validation.range_text`),
    else "must be a real number in [lo, hi]{why}; got '...'" (``why``: the range's reason, e.g. " (eta <= 1: ...)")."""
    where = range_text(lo, hi, lo_open=lo_open, hi_open=hi_open, lo_text=lo_text, hi_text=hi_text)
    want = "a real number" + ("" if where == "any value" else " " + where)

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not in_range(value, lo, hi, lo_open=lo_open, hi_open=hi_open):
            raise argparse.ArgumentTypeError(f"must be {want}{why}; got {shown(text)!r}")
        return value

    parse.__name__ = "real"
    return parse


# --- cost limits ----------------------------------------------------------------------------------------


def duration_text(seconds: float) -> str:
    """``seconds`` in words: ``42 s``, ``12 min``, ``3.5 h``, ``40 days``, ``3e+08 years``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 600:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 72 * 3600:
        return f"{seconds / 3600:.1f} h"
    days = seconds / 86400
    return f"{days:.0f} days" if days < 1000 else f"{days / 365.25:.2g} years"


def bytes_text(n: float) -> str:
    """A size in bytes in words (binary units)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10000 else f"{value:.2g} {unit}"
    return f"{n:.0f} bytes"


def check_cost(
    what: str,
    *,
    seconds: float | None = None,
    limit_s: float | None = None,
    nbytes: float | None = None,
    limit_bytes: float | None = None,
    option: str | None = None,
    hint: str = "",
) -> None:
    """Refuse, as bad input, a run whose estimated time or memory exceeds its stated limit.

    The message names the run (``what``), the estimate and the limit, then ``hint`` (what to ask
    for instead): ``argument OPTION: WHAT would need about 9.3 GiB of memory (limit 2.0 GiB); ...``.
    """
    parts = []
    if nbytes is not None and limit_bytes is not None and not nbytes <= limit_bytes:
        parts.append(f"would need about {bytes_text(nbytes)} of memory (limit {bytes_text(limit_bytes)})")
    if seconds is not None and limit_s is not None and not seconds <= limit_s:
        parts.append(f"would take about {duration_text(seconds)} (limit {duration_text(limit_s)})")
    if parts:
        message = f"{what} {' and '.join(parts)}" + (f"; {hint}" if hint else "")
        raise bad(option, message) if option else UsageError(message)


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


def save_plot(fig: Any, path: Path, title_axes: Any, title: str, legend_axes: Sequence[Any] = ()) -> None:
    """Finish a command's plot and write it to ``path`` (:func:`save_figure`): a legend on each of
    ``legend_axes`` and the title on ``title_axes`` (both in small print), the layout tight."""
    for axes in legend_axes:
        axes.legend(fontsize=7)
    title_axes.set_title(title, fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


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


def closed_pipe() -> int:
    """After a BrokenPipeError on stdout (``| head``: the reader left): point stdout at devnull, so
    that the interpreter's final flush is quiet too, and return 141 (128 + SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (captured, replaced)
        pass
    return 141


def write_line(text: str) -> bool:
    """Print ``text``; False if the reader has closed the pipe (then stdout goes to devnull, for a quiet exit)."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        closed_pipe()
        return False
    return True


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    return code if isinstance(code, int) else 0 if code is None else 1


def run_main(prog: str, body: Callable[[], int | None]) -> int:
    """Run a command's ``body`` (parse, compute, print; returns its exit status, None for 0) with the
    commands' exit statuses: 2 :class:`UsageError` (one line ``PROG: error: ...``); 1 :class:`RunError`;
    130 interrupted; 141 the reader closed the pipe (also during ``--help``); SystemExit's own code."""
    try:
        try:
            status = body()
        except SystemExit as exc:  # --help, --version
            status = _exit_status(exc)
        sys.stdout.flush()  # inside: a closed pipe shows here, not at the interpreter's exit
    except UsageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"{prog}: error: the run failed: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return closed_pipe()
    return int(status or 0)


def run_command(prog: str, body: Callable[[], str]) -> int:
    """Run ``body`` (parse, compute, plot; returns the text to print) with the commands' exit statuses.

    0 printed; 1 :class:`RunError`; 2 :class:`UsageError`; 130 interrupted; 141 the pipe closed.
    """
    return run_main(prog, lambda: 0 if write_line(body()) else 141)


# --- the simulation commands (``numerics.central_flow``, ``numerics.multipath``) --------------------------


def add_output_options(parser: argparse.ArgumentParser, plot_help: str) -> None:
    """The simulation commands' last two options: ``--format text|json`` and ``--plot FILE`` (``plot_help``)."""
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--plot", metavar="FILE", help=plot_help)


def run_simulation(
    prog: str,
    argv: Sequence[str] | None,
    parser: Callable[[], argparse.ArgumentParser],
    setting: Callable[[argparse.Namespace], Any],
    run: Callable[[Any], Any],
    plot: Callable[[Any, Any, Path], None],
    to_json: Callable[[dict], str],
    render_text: Callable[[dict], str],
    summary: Callable[[Any], dict] | None = None,
) -> int:
    """A simulation command's ``main``: parse ``argv`` with ``parser()`` (options of
    :func:`add_output_options` among them), check the options together (``setting(args)``, whose
    ``.plot`` is the checked path or None), ``run`` the setting, draw ``plot(result, setting, path)``
    if asked, and print ``summary(result)`` (the result itself by default) as ``to_json`` or
    ``render_text`` gives it; exit statuses as :func:`run_command`'s. A plot file that cannot be
    written after all is a usage error naming ``--plot``."""

    def body() -> str:
        args = parser().parse_args(argv)
        s = setting(args)
        result = run(s)
        if s.plot is not None:
            try:
                plot(result, s, s.plot)
            except OSError as exc:
                raise bad("--plot", f"cannot write {str(s.plot)!r}: {exc.strerror or exc}") from None
        out = result if summary is None else summary(result)
        return to_json(out) if args.format == "json" else render_text(out)

    return run_command(prog, body)
