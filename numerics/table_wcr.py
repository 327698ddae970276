"""Table of the worst-case-return constant gamma_WCR(L) of a deep linear chain.

Usage::

    python -m numerics.table_wcr [--L 2 3 7 ... | --L-max N] [--digits D]
                                 [--format text|markdown|csv|json] [--certify]

For each depth L: y, the unique root of Eq. (80) in ((L-1)/(2L-1), 1); gamma_WCR(L) =
L y^{2/L-1}/B(y) (Eq. (81)), the largest eta S_1 for which the worst overshoot of the
deep-chain GD map (19) still returns without crossing the origin; and gamma_WCR/2, the
ratio of eta_WCR to the classical stability bound 2/S_1. Values are rounded to nearest
at D significant digits (default 12), from a solve with 5 guard digits: values, not
bounds. Default depths: the paper's 2, 3, 4, 5, 6, 8, 10, 20, 50, 100
(table (82) and Appendix F.5); ``--L-max N`` gives every depth 2..N.

``--certify`` adds a certified enclosure [lo, hi] of gamma_WCR(L) (interval arithmetic,
sign change of the root function on a bracket plus a derivative enclosure excluding 0;
end points rounded outward exactly to D + 3 decimals by
numerics.intervals.format_enclosure_fixed, so the printed interval contains
gamma_WCR(L); width below 10^-D).

JSON output is a list of objects {"L": int, "y": str, "gamma_wcr": str, "ratio_to_2":
str[, "enclosure": [lo, hi]]}. Computed by :mod:`numerics.multipath.wcr` (mpmath).

>>> rows = wcr_table([2, 20], digits=6)
>>> [(r["L"], r["y"], r["gamma_wcr"], r["ratio_to_2"]) for r in rows]
[(2, '0.541917', '3.19615', '1.59808'), (20, '0.621771', '5.84360', '2.92180')]
>>> wcr_table([2], digits=4, certify=True)[0]["enclosure"]
['3.1961524', '3.1961525']

Reference: arXiv 2606.05219, Section 6, Theorem 6.2; Appendix F, Eqs. (80)-(82).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterable, Sequence

import mpmath

from numerics.intervals import format_enclosure_fixed
from numerics.multipath import wcr

PAPER_DEPTHS = (2, 3, 4, 5, 6, 8, 10, 20, 50, 100)
FORMATS = ("text", "markdown", "csv", "json")


def _sig(x, digits: int) -> str:
    """``x`` with exactly ``digits`` significant digits (trailing zeros kept)."""
    return mpmath.nstr(x, digits, strip_zeros=False, min_fixed=-mpmath.inf, max_fixed=mpmath.inf)


def wcr_table(depths: Iterable[int] | None = None, digits: int = 12, certify: bool = False) -> list[dict]:
    """Rows {L, y, gamma_wcr, ratio_to_2[, enclosure]} for ``depths`` (default: the paper's).

    Values are decimal strings rounded to nearest at ``digits`` significant digits;
    ``enclosure`` is a certified [lo, hi] for gamma_WCR(L), rounded outward exactly to
    ``digits`` + 3 decimals (each end within one unit of that place of the certified end).
    Raises ValueError naming ``L`` or ``digits`` on bad input.
    """
    digits = wcr.check_digits(digits)
    depths = PAPER_DEPTHS if depths is None else depths
    rows = []
    for raw in depths:
        L = wcr.check_depth(raw)
        y, g = wcr.y_and_gamma(L, digits + 5)  # 5 guard digits: one rounding, to ``digits``, below
        with mpmath.workdps(digits + 5):
            ratio = g / 2
        row = {"L": L, "y": _sig(y, digits), "gamma_wcr": _sig(g, digits), "ratio_to_2": _sig(ratio, digits)}
        if certify:
            cert = wcr.certify(L, digits)
            row["enclosure"] = list(format_enclosure_fixed(cert.gamma_lo, cert.gamma_hi, digits + 3))
        rows.append(row)
    return rows


def _columns(rows) -> list[str]:
    return ["L", "y", "gamma_wcr", "ratio_to_2"] + (["enclosure"] if rows and "enclosure" in rows[0] else [])


def _cell(row, key) -> str:
    val = row[key]
    return f"[{val[0]}, {val[1]}]" if key == "enclosure" else str(val)


def render(rows: list[dict], fmt: str) -> str:
    """The rows as ``text``, ``markdown``, ``csv`` or ``json``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}; got {fmt!r}")
    if fmt == "json":
        return json.dumps(rows, indent=2)
    cols = _columns(rows)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        header = [c for c in cols if c != "enclosure"] + (
            ["enclosure_lo", "enclosure_hi"] if "enclosure" in cols else []
        )
        writer.writerow(header)
        for r in rows:
            writer.writerow(
                [r[c] for c in cols if c != "enclosure"] + (list(r["enclosure"]) if "enclosure" in cols else [])
            )
        return buf.getvalue().rstrip("\n")
    titles = {"L": "L", "y": "y", "gamma_wcr": "gamma_WCR(L)", "ratio_to_2": "gamma_WCR/2", "enclosure": "enclosure"}
    if fmt == "markdown":
        lines = [
            "| " + " | ".join(titles[c] for c in cols) + " |",
            "|" + "|".join("---:" if c != "enclosure" else "---" for c in cols) + "|",
        ]
        lines += ["| " + " | ".join(_cell(r, c) for c in cols) + " |" for r in rows]
        return "\n".join(lines)
    widths = {c: max([len(titles[c])] + [len(_cell(r, c)) for r in rows]) for c in cols}
    lines = ["  ".join(titles[c].rjust(widths[c]) for c in cols)]
    lines += ["  ".join(_cell(r, c).rjust(widths[c]) for c in cols) for r in rows]
    return "\n".join(lines)


def _depth_arg(text: str) -> int:
    try:
        return wcr.check_depth(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2; got {text!r}") from None


def _digits_arg(text: str) -> int:
    try:
        return wcr.check_digits(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m numerics.table_wcr",
        description=__doc__.split("\n\n>>>")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--L", nargs="+", type=_depth_arg, metavar="L", help="depths (integers >= 2); default: the paper's"
    )
    which.add_argument("--L-max", type=_depth_arg, metavar="N", help="every depth 2..N")
    parser.add_argument("--digits", type=_digits_arg, default=12, help="significant digits (default 12)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--certify", action="store_true", help="add a certified enclosure of gamma_WCR(L)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    depths = list(range(2, args.L_max + 1)) if args.L_max is not None else args.L
    try:
        rows = wcr_table(depths, args.digits, args.certify)
    except ValueError as exc:
        parser.error(str(exc))
    print(render(rows, args.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
