"""Constants of the rare-gates paper to any precision, each with a certified enclosure.

Usage::

    python -m numerics.rare_gates.constants [--lam 1/20] [--digits 50] [--format text|json]

Every value is the SymPy expression derived in :mod:`derivations.rare_gates` (kernels,
risk), evaluated with mpmath with 10 guard digits and printed rounded to nearest at
``digits`` significant digits: a value, not a bound. The enclosure evaluates the same
expression in interval arithmetic (``mpmath.iv``) and is printed rounded outward
exactly (lower end down, upper end up, at ``digits`` significant digits, by
:func:`numerics.intervals.format_enclosure`), so the exact constant lies inside the
printed interval, which is at most a unit or two in the last place wide. ``delta_star``
(the separation at which the best risk at fixed angle reaches 0.4, a root) is enclosed
by certified bisection on a bracket where the interval sign of R_min - 0.4 is known; J
is strictly decreasing, so R_min is and the root is unique.

>>> rows = {r["name"]: r for r in constants_table("1/20", 20)}
>>> rows["q"]["value"]
'0.63661977236758134308'
>>> rows["R_col"]["value"]
'0.59471526543064891422'
>>> rows["q"]["enclosure"]
['0.63661977236758134307', '0.63661977236758134308']
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp
from mpmath import iv

from derivations.rare_gates import kernels, risk
from derivations.rare_gates.symbols import delta, lam

from ..cli_support import Parser, UsageError, int_arg, run_main, shown
from ..intervals import bounds, certified_decreasing_root, enclose, format_enclosure, iv_workdps, value


def _parse_lam(lam_value) -> sp.Rational:
    try:
        frac = Fraction(str(lam_value))
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"lam must be a number in (0, 1/2), e.g. 0.05 or 1/20; got {lam_value!r}") from None
    if not (0 < frac < Fraction(1, 2)):
        raise ValueError(f"lam must lie in (0, 1/2) (B_s = 1 - 2 lam > 0); got {lam_value!r}")
    return sp.Rational(frac.numerator, frac.denominator)


def delta_star(level: str | sp.Expr = "0.4", dps: int = 50) -> Any:
    """Enclosure of the angle where R_min(delta) = ``level`` (reading of Eq. (38), Appendix 17).

    >>> lo, hi = bounds(delta_star(dps=20)); print(mpmath.nstr(lo, 12))
    1.50677738114
    """
    rmin = risk.min_risk_at_angle()
    f = sp.lambdify(delta, rmin, modules=[{"pi": iv.pi, "sin": iv.sin, "cos": iv.cos, "mpf": iv.mpf}, "mpmath"])
    # J decreases on [0, pi], so R_min decreases: from R_col ~ 0.595 at 0 to 1 - 2 q^2 ~ 0.19 at pi.
    with iv_workdps(dps + 15):
        return certified_decreasing_root(f, enclose(level, dps + 15), "0.1", "3.1", dps)


MAX_DIGITS = 10_000


def constants_table(lam_value: str | float | Fraction = "1/20", digits: int = 50) -> list[dict]:
    """Rows ``{name, definition, value, enclosure, source}`` at weight decay ``lam_value``.

    ``value``: the constant rounded to nearest at ``digits`` significant digits (from a
    value with 10 guard digits; for ``delta_star`` the midpoint of a bracket 10**-(digits
    + 3) wide). ``enclosure``: [lo, hi] decimal strings of at most ``digits`` significant
    digits, rounded outward exactly, that contain the exact constant.
    """
    if not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= MAX_DIGITS:
        raise ValueError(f"digits must be an integer in [1, {MAX_DIGITS}]; got {digits!r}")
    lv = _parse_lam(lam_value)
    r_good, _ = risk.good_risk_level()
    exprs = [
        ("q", kernels.q_constant(), "E[relu(e1.X)|X|]", "Section 4; kernels.q_constant"),
        ("R_col", risk.collapsed_risk_level(), "min_omega R_t on the proportional family = 1 - q^2", "Eq. (37)"),
        ("B_s", risk.clone_amplitude("source"), "source clone amplitude 1 - 2 lam", "Section 4"),
        ("B_t", risk.clone_amplitude("target"), "target clone amplitude 2 (q - lam)", "Section 4"),
        ("A", risk.target_rate_A(), "target angular rate q - lam", "Section 4"),
        ("R_good", r_good, "target risk at the separated limit 1 - 2 q^2 + 2 lam^2", "Appendix 16"),
        ("lam_R_good_0.3", risk.good_risk_threshold_lambda(), "lam at which R_good = 0.3", "Appendix 13"),
        ("tau_GF_slope", lam / risk.target_rate_A(), "lam / (2/pi - lam)", "Eq. (3)"),
    ]
    rows = []
    for name, expr, definition, source in exprs:
        e = expr.subs(lam, lv)
        lo, hi = bounds(enclose(e, digits))
        rows.append(
            {
                "name": name,
                "definition": definition,
                "value": mpmath.nstr(value(e, digits), digits),
                "enclosure": list(format_enclosure(lo, hi, digits)),
                "source": source,
            }
        )
    # 3 more digits than printed: the bracket (width < 10**-(digits+3), delta_star ~ 1.5) is
    # then far below the last printed place, so its midpoint rounds as the root does
    lo, hi = bounds(delta_star(dps=digits + 3))
    with mpmath.workdps(digits + 10):
        mid = (lo + hi) / 2
    rows.append(
        {
            "name": "delta_star",
            "definition": "angle where R_min(delta) = 1 - q^2/(1/2 + J(delta)) equals 0.4",
            "value": mpmath.nstr(mid, digits),
            "enclosure": list(format_enclosure(lo, hi, digits)),
            "source": "reading of Eq. (38)",
        }
    )
    return rows


# The command's digit limit (constants_table itself takes up to MAX_DIGITS): measured on a shared
# 2-core x86 machine, the whole command: 50 digits 3.3 s, 500 13 s, 1000 51 s, 2000 > 300 s
# (mostly the certified bisection of delta_star), so --digits stops at 1000, about a minute.
CLI_MAX_DIGITS = 1000
LAM_MAX_DIGITS = 1000  # digits of lam's numerator and denominator (and of a decimal exponent)


def _lam_arg(text: str) -> str:
    """``--lam``: a number in (0, 1/2), exact (``0.05``, ``1/20``), of at most LAM_MAX_DIGITS digits."""
    exponent = re.search(r"[eE]\s*([-+]?\d+)", text)
    if len(text) > 2 * LAM_MAX_DIGITS + 10 or (exponent and abs(int(exponent.group(1))) > LAM_MAX_DIGITS):
        raise argparse.ArgumentTypeError(
            f"must be a number in (0, 1/2) of at most {LAM_MAX_DIGITS} digits; got {shown(text)!r}"
        )
    try:
        _parse_lam(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """The command; 0, or 2 on bad input (one line), 141 when stdout is closed early."""

    def body() -> int:
        parser = Parser(prog="python -m numerics.rare_gates.constants", description=__doc__.split("\n\n")[0])
        parser.add_argument(
            "--lam", type=_lam_arg, default="1/20", help="weight decay in (0, 1/2), e.g. 0.05 or 1/20 (default 1/20)"
        )
        parser.add_argument(
            "--digits",
            type=int_arg(1, CLI_MAX_DIGITS),
            default=50,
            help=f"significant digits, 1 to {CLI_MAX_DIGITS} (default 50; 1000 take about a minute): values "
            "rounded to nearest, enclosures outward",
        )
        parser.add_argument("--format", choices=("text", "json"), default="text")
        args = parser.parse_args(argv)
        try:
            rows = constants_table(args.lam, args.digits)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.format == "json":
            print(json.dumps(rows, indent=2))
        else:
            for r in rows:
                print(f"{r['name']:<15} {r['value']}")
                print(f"{'':<15} in [{r['enclosure'][0]}, {r['enclosure'][1]}]  ({r['definition']}; {r['source']})")
        return 0

    return run_main("python -m numerics.rare_gates.constants", body)


if __name__ == "__main__":
    sys.exit(main())
