"""Table of the worst-case-return constant gamma_WCR(L) of a deep linear chain.

Usage::

    python -m numerics.table_wcr [--L 2 3 7 ... [--L ...] | --L-max N] [--digits D]
                                 [--format text|markdown|csv|json] [--certify]

For each depth L: y, the unique root of Eq. (80) in ((L-1)/(2L-1), 1); gamma_WCR(L) =
L y^{2/L-1}/B(y) (Eq. (81)), the largest eta S_1 for which the worst overshoot of the
deep-chain GD map (19) still returns without crossing the origin; and gamma_WCR/2, the
ratio of eta_WCR to the classical stability bound 2/S_1. Values are rounded to nearest
at D significant digits (default 12), from a solve with 5 guard digits: values, not
bounds. Default depths: the paper's 2, 3, 4, 5, 6, 8, 10, 20, 50, 100
(table (82) and Appendix F.5); ``--L-max N`` gives every depth 2..N. A repeated ``--L``
adds its depths to the earlier ones; a depth given twice is kept once, at its first place.

``--certify`` adds a certified enclosure [lo, hi] of gamma_WCR(L) (interval arithmetic,
sign change of the root function on a bracket plus a derivative enclosure excluding 0;
end points rounded outward exactly to D + 3 decimals by
numerics.intervals.format_enclosure_fixed, so the printed interval contains
gamma_WCR(L); width below 10^-D).

Sizes are bounded so that a run stays under about a minute: --digits in [1, 3000],
--L-max in [2, 5000], each L in [2, 10^100], and a combination whose estimated run time
exceeds 60 s is refused before it starts (exit status 2). Text, markdown and CSV rows are
printed as they are computed; a closed stdout (``| head``) ends the run quietly with exit
status 141 (128 + SIGPIPE).

JSON output is a list of objects {"L": int, "y": str, "gamma_wcr": str, "ratio_to_2":
str[, "enclosure": [lo, hi]]}. Computed by :mod:`numerics.multipath.wcr` (mpmath).

>>> rows = wcr_table([2, 20], digits=6)
>>> [(r["L"], r["y"], r["gamma_wcr"], r["ratio_to_2"]) for r in rows]
[(2, '0.541917', '3.19615', '1.59808'), (20, '0.621771', '5.84360', '2.92180')]
>>> wcr_table([2], digits=4, certify=True)[0]["enclosure"]
['3.1961524', '3.1961525']
>>> [wcr_table([L], digits=1)[0]["gamma_wcr"] for L in (2, 3, 10**6)]  # 3.196..., 3.660..., 23.94...
['3', '4', '20']

Reference: arXiv 2606.05219, Section 6, Theorem 6.2; Appendix F, Eqs. (80)-(82).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterable, Iterator, Sequence

import mpmath

from numerics.cli_support import Parser, duration_text, int_arg, run_main
from numerics.intervals import format_enclosure_fixed
from numerics.multipath import wcr

PROG = "python -m numerics.table_wcr"
PAPER_DEPTHS = (2, 3, 4, 5, 6, 8, 10, 20, 50, 100)
FORMATS = ("text", "markdown", "csv", "json")

# ---------------------------------------------------------------- CLI size limits
# Measured with mpmath's pure-Python backend (no gmpy2) on a shared 2-core x86 machine
# (load ~2, so repeat runs differ by up to 2x; ranges are the runs seen), wcr_table alone:
#   --digits D, the paper's 10 depths:  D =  300     1000    2000    3000     4000
#       plain                               0.10 s  0.96 s  3.4 s   7.5 s    13-24 s
#       --certify                           0.19 s  2.4 s   9.3 s   18-28 s  46 s
#   (about D^2 from 1000 digits on: the Newton steps run at full precision)
#   --L-max N, 12 digits:               N =  1000    3000    5000
#       plain                               1.4 s   4.0 s   6.9 s   (1.4 ms a row)
#       --certify                           4.4 s   17 s    23 s    (4-6 ms a row)
#   one depth L, 12 digits, --certify:  L =  10^30   10^100  10^300  10^1000
#                                           0.07 s  0.11 s  0.84 s  8.9 s
#   (from 10^15 on, Newton starts from an mpmath bisection with 2 working digits per digit of L)
# So each option alone at its bound, the others at their defaults, runs in under ~30 s even
# with --certify; combinations are refused before starting by the estimate below.
DIGITS_MAX = 3000
L_MAX_MAX = 5000
DEPTH_MAX = 10**100
RUN_LIMIT_S = 60.0
# The estimate: seconds a row, base + quad (P/1000)^2 at P = digits + wcr._guard(L)
# working digits, plus the bisection start for L >= wcr._FLOAT_LIMIT; fitted to the
# measurements above (and to 1 to 1000 digits at L = 2..950 and L ~ 10^6), erring high:
# estimate / measured 1.1-2.6 on nine runs of 7-23 s (e.g. the paper's depths at 3000
# digits certified: 32 s / 18 s; --L-max 5000 certified: 42 s / 23 s).
_ROW_BASE_S = {False: 0.003, True: 0.008}
_ROW_QUAD_S = {False: 0.15, True: 0.35}
_ROW_BIG_L_S = {False: 0.05, True: 0.1}


def estimated_seconds(depths: Iterable[int], digits: int, certify: bool = False) -> float:
    """Rough run time in seconds of ``wcr_table(depths, digits, certify)`` (the machine above).

    >>> round(estimated_seconds(PAPER_DEPTHS, 12), 2)
    0.03
    >>> estimated_seconds(range(2, L_MAX_MAX + 1), DIGITS_MAX, True) > RUN_LIMIT_S
    True
    """
    total = 0.0
    for L in depths:
        P = digits + wcr._guard(L)
        total += _ROW_BASE_S[certify] + _ROW_QUAD_S[certify] * (P / 1000) ** 2
        if L >= wcr._FLOAT_LIMIT:
            total += _ROW_BIG_L_S[certify]
    return total


def _sig(x, digits: int) -> str:
    """``x`` with exactly ``digits`` significant digits (trailing zeros kept, no dangling point).

    >>> _sig(mpmath.mpf("3.196"), 1), _sig(mpmath.mpf("9.96"), 1), _sig(mpmath.mpf("41.3"), 3)
    ('3', '10', '41.3')
    """
    s = mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)
    return s[:-1] if s.endswith(".") else s  # "3." (all digits before the point) -> "3"


def _row(L: int, digits: int, certify: bool) -> dict:
    y, g = wcr.y_and_gamma(L, digits + 5)  # 5 guard digits: one rounding, to ``digits``, below
    with mpmath.workdps(digits + 5):
        ratio = g / 2
    row = {"L": L, "y": _sig(y, digits), "gamma_wcr": _sig(g, digits), "ratio_to_2": _sig(ratio, digits)}
    if certify:
        cert = wcr.certify(L, digits)
        row["enclosure"] = list(format_enclosure_fixed(cert.gamma_lo, cert.gamma_hi, digits + 3))
    return row


def wcr_table(depths: Iterable[int] | None = None, digits: int = 12, certify: bool = False) -> list[dict]:
    """Rows {L, y, gamma_wcr, ratio_to_2[, enclosure]} for ``depths`` (default: the paper's).

    Values are decimal strings rounded to nearest at ``digits`` significant digits;
    ``enclosure`` is a certified [lo, hi] for gamma_WCR(L), rounded outward exactly to
    ``digits`` + 3 decimals (each end within one unit of that place of the certified end).
    Raises ValueError naming ``L`` or ``digits`` on bad input. (The CLI's size limits
    DIGITS_MAX, L_MAX_MAX, DEPTH_MAX and RUN_LIMIT_S do not apply here.)
    """
    digits = wcr.check_digits(digits)
    depths = PAPER_DEPTHS if depths is None else depths
    return [_row(wcr.check_depth(raw), digits, certify) for raw in depths]


_TITLES = {"L": "L", "y": "y", "gamma_wcr": "gamma_WCR(L)", "ratio_to_2": "gamma_WCR/2", "enclosure": "enclosure"}


def _columns(certify: bool) -> list[str]:
    return ["L", "y", "gamma_wcr", "ratio_to_2"] + (["enclosure"] if certify else [])


def _cell(row, key) -> str:
    val = row[key]
    return f"[{val[0]}, {val[1]}]" if key == "enclosure" else str(val)


def _csv_line(values: list) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue().rstrip("\n")


def _header_lines(cols: list[str], fmt: str, widths: dict[str, int]) -> list[str]:
    if fmt == "csv":
        plain = [c for c in cols if c != "enclosure"]
        return [_csv_line(plain + (["enclosure_lo", "enclosure_hi"] if "enclosure" in cols else []))]
    if fmt == "markdown":
        return [
            "| " + " | ".join(_TITLES[c] for c in cols) + " |",
            "|" + "|".join("---:" if c != "enclosure" else "---" for c in cols) + "|",
        ]
    return ["  ".join(_TITLES[c].rjust(widths[c]) for c in cols)]


def _row_line(row: dict, cols: list[str], fmt: str, widths: dict[str, int]) -> str:
    if fmt == "csv":
        return _csv_line(
            [row[c] for c in cols if c != "enclosure"] + (list(row["enclosure"]) if "enclosure" in cols else [])
        )
    if fmt == "markdown":
        return "| " + " | ".join(_cell(row, c) for c in cols) + " |"
    return "  ".join(_cell(row, c).rjust(widths.get(c, 0)) for c in cols)


def _widths(cols: list[str], rows: Iterable[dict]) -> dict[str, int]:
    widths = {c: len(_TITLES[c]) for c in cols}
    for r in rows:
        for c in cols:
            widths[c] = max(widths[c], len(_cell(r, c)))
    return widths


def render(rows: list[dict], fmt: str) -> str:
    """The rows as ``text``, ``markdown``, ``csv`` or ``json``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}; got {fmt!r}")
    if fmt == "json":
        return json.dumps(rows, indent=2)
    cols = _columns(bool(rows) and "enclosure" in rows[0])
    widths = _widths(cols, rows) if fmt == "text" else {}
    return "\n".join(_header_lines(cols, fmt, widths) + [_row_line(r, cols, fmt, widths) for r in rows])


def iter_lines(depths: Iterable[int], digits: int = 12, certify: bool = False, fmt: str = "text") -> Iterator[str]:
    """The lines of ``render(wcr_table(depths, digits, certify), fmt)``, each row's line as soon as it is computed.

    Not for ``json`` (one document). For ``text`` the column widths come from the row of
    the largest depth, computed first: every cell's length is non-decreasing in L (gamma_WCR
    increases with L, y stays in (1/3, 1)), so that row is the widest and the lines are those
    of ``render``.

    >>> for line in iter_lines([3, 2], digits=3):
    ...     print(line)
    L      y  gamma_WCR(L)  gamma_WCR/2
    3  0.595          3.66         1.83
    2  0.542          3.20         1.60
    """
    if fmt not in FORMATS or fmt == "json":
        raise ValueError(f"format must be one of {FORMATS[:-1]}; got {fmt!r}")
    digits = wcr.check_digits(digits)
    depths = [wcr.check_depth(raw) for raw in depths]
    cols = _columns(certify)
    done: dict[int, dict] = {}
    widths: dict[str, int] = {}
    if fmt == "text":
        if depths:
            big = max(depths)
            done[big] = _row(big, digits, certify)
        widths = _widths(cols, done.values())
    yield from _header_lines(cols, fmt, widths)
    for L in depths:
        row = done.pop(L) if L in done else _row(L, digits, certify)
        yield _row_line(row, cols, fmt, widths)


_depth_arg = int_arg(2, DEPTH_MAX, hi_text="10^100")
_l_max_arg = int_arg(2, L_MAX_MAX)
_digits_arg = int_arg(1, DIGITS_MAX)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__.split("\n\n>>>")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--L",
        nargs="+",
        action="extend",
        type=_depth_arg,
        metavar="L",
        help="depths (integers in [2, 10^100]); --L may be repeated, the values add up (a depth given "
        "twice is kept once, at its first place); default: the paper's",
    )
    which.add_argument("--L-max", type=_l_max_arg, metavar="N", help=f"every depth 2..N (N in [2, {L_MAX_MAX}])")
    parser.add_argument(
        "--digits", type=_digits_arg, default=12, help=f"significant digits, in [1, {DIGITS_MAX}] (default 12)"
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--certify", action="store_true", help="add a certified enclosure of gamma_WCR(L)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; 0 on success, 2 on bad input (one line), 141 (128 + SIGPIPE) if stdout is closed early."""

    def body() -> int:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.L_max is not None:
            depths = list(range(2, args.L_max + 1))
        else:
            depths = list(dict.fromkeys(PAPER_DEPTHS if args.L is None else args.L))
        estimate = estimated_seconds(depths, args.digits, args.certify)
        if estimate > RUN_LIMIT_S:
            parser.error(
                f"{len(depths)} depths at --digits {args.digits}{' with --certify' if args.certify else ''} "
                f"would take about {duration_text(estimate)} (limit {RUN_LIMIT_S:.0f} s); ask for fewer depths or "
                "digits"
            )
        try:
            if args.format == "json":
                print(render(wcr_table(depths, args.digits, args.certify), "json"), flush=True)
            else:
                for line in iter_lines(depths, args.digits, args.certify, args.format):
                    print(line, flush=True)
        except ValueError as exc:
            parser.error(str(exc))
        return 0

    return run_main(PROG, body)


if __name__ == "__main__":
    sys.exit(main())
