"""The audit's instruments, calibrated on cases with known answers before any verdict is trusted.

Every verdict rests on a few shared instruments: the statistics helpers, the certified
interval predicates and printers, the rounding rule that compares a value with a quote,
the verdict mapping and the result store's code key. A wrong instrument moves reported
values without moving a verdict, so the audit checks each one on cases whose answer is
known independently: published tables, exact rationals, a recomputation at more than
twice the precision, synthetic check outcomes. ``verify/test_instruments.py`` runs them
as part of ``pytest verify``; the report lists each instrument and its outcome, and a
failed calibration fails the audit.

Each calibration returns the list of its failures (empty when the instrument is right),
phrased with the expected and the obtained value.

References:

* Newcombe RG (1998a), Two-sided confidence intervals for the single proportion: comparison
  of seven methods, Stat. Med. 17:857-872, Table I: Wilson score (method 3) and
  Clopper-Pearson (method 5) intervals, 4 decimals;
* Newcombe RG (1998b), Interval estimation for the difference between independent
  proportions: comparison of eleven methods, Stat. Med. 17:873-890, Table II, examples
  (a)-(h) of the hybrid score interval (method 10), 4 decimals;
* Fisher RA (1935), The Design of Experiments: the lady tasting tea, table (3, 1; 1, 3),
  two-sided p = 34/70, one-sided 17/70;
* normal quantiles: Phi^-1(0.975) = 1.959963984540054, Phi^-1(1 - 0.05/40) = 3.0233 (tables).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import mpmath
from mpmath import iv

NEWCOMBE_1998A = [  # k, n, Wilson (method 3), Clopper-Pearson (method 5)
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0000, 0.1611), (0.0000, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
]
NEWCOMBE_1998B = [  # k1, n1, k2, n2, hybrid score interval for k1/n1 - k2/n2 (method 10)
    (56, 70, 48, 80, (0.0524, 0.3339)),  # (a)
    (9, 10, 3, 10, (0.1705, 0.8090)),  # (b)
    (6, 7, 2, 7, (0.0582, 0.8062)),  # (c)
    (5, 56, 0, 29, (-0.0381, 0.1926)),  # (d)
    (0, 10, 0, 20, (-0.1611, 0.2775)),  # (e)
    (0, 10, 0, 10, (-0.2775, 0.2775)),  # (f)
    (10, 10, 0, 20, (0.6791, 1.0000)),  # (g)
    (10, 10, 0, 10, (0.6075, 1.0000)),  # (h)
]
FISHER_TEA = (3, 4, 1, 4, {"two-sided": Fraction(34, 70), "greater": Fraction(17, 70), "less": Fraction(69, 70)})


def r4(pair) -> tuple[float, float]:
    """A pair rounded to the 4 decimals of the published tables (``-0.0`` read as ``0.0``)."""
    return tuple(round(v, 4) + 0.0 for v in pair)


@dataclass(frozen=True)
class Instrument:
    name: str
    used_for: str
    reference: str
    calibrate: Callable[[], list[str]]


def _stats_intervals() -> list[str]:
    from numerics import stats as S

    out = []
    for k, n, wilson, cp in NEWCOMBE_1998A:
        if r4(S.wilson_interval(k, n)) != wilson:
            out.append(f"Wilson {k}/{n}: expected {wilson}, got {r4(S.wilson_interval(k, n))}")
        if r4(S.clopper_pearson_interval(k, n)) != cp:
            out.append(f"Clopper-Pearson {k}/{n}: expected {cp}, got {r4(S.clopper_pearson_interval(k, n))}")
    return out


def _stats_newcombe() -> list[str]:
    from numerics import stats as S

    return [
        f"Newcombe {k1}/{n1} - {k2}/{n2}: expected {want}, got {r4(S.newcombe_difference(k1, n1, k2, n2))}"
        for k1, n1, k2, n2, want in NEWCOMBE_1998B
        if r4(S.newcombe_difference(k1, n1, k2, n2)) != want
    ]


def _stats_fisher() -> list[str]:
    from numerics import stats as S

    k1, n1, k2, n2, want = FISHER_TEA
    out = []
    for alt, p in want.items():
        got = S.fisher_exact_p(k1, n1, k2, n2, alternative=alt)
        if abs(got - float(p)) > 1e-12:  # exact rationals; SciPy sums hypergeometric terms in double
            out.append(f"Fisher {alt}: expected {p} = {float(p):.6f}, got {got:.6f}")
    return out


def _stats_quantiles() -> list[str]:
    from numerics import stats as S

    out = []
    if (
        abs(S.z_bonferroni(1) - 1.959963984540054) > 1e-12
    ):  # the quantile to 16 digits; SciPy's ndtri is exact to ~1e-16
        out.append(f"z_bonferroni(1): expected 1.959963984540054, got {S.z_bonferroni(1)!r}")
    if round(S.z_bonferroni(20), 4) != 3.0233:
        out.append(f"z_bonferroni(20): expected 3.0233, got {S.z_bonferroni(20):.4f}")
    return out


def _interval_predicates() -> list[str]:
    from numerics.intervals import (
        bounds,
        certainly_above,
        certainly_below,
        certified_decreasing_root,
    )

    cases = [  # (predicate, interval, level, expected): inside, straddling, touching, exact-decimal levels
        (certainly_below, [0.25, 0.375], "0.4", True),
        (certainly_below, [0.25, 0.5], "1/2", False),  # touches the level
        (certainly_below, [0.3, 0.5], "0.4", False),  # straddles
        (certainly_below, [0.45, 0.5], "0.4", False),  # wholly above
        (certainly_above, [0.5, 1], "0.4", True),
        (certainly_above, [0.5, 1], "1/2", False),
        (certainly_above, [0.3, 0.5], "0.4", False),
        (certainly_above, [0.1, 0.2], "0.4", False),
    ]
    out = []
    for pred, ends, level, want in cases:
        if pred(iv.mpf(ends), level) is not want:
            out.append(f"{pred.__name__}({ends}, {level}): expected {want}")
    # the certified root: a decreasing function crossing its level inside the bracket is found; a
    # bracket without a sign change must raise
    with mpmath.workdps(30):
        lo, hi = bounds(certified_decreasing_root(lambda x: 1 - x * x, 0, 0, 2, dps=30))
        if not (lo <= 1 <= hi and hi - lo < mpmath.mpf("1e-25")):
            out.append(f"certified root of 1 - x^2 on [0, 2]: expected an enclosure of 1, got [{lo}, {hi}]")
    try:
        certified_decreasing_root(lambda x: 1 - x * x, 0, 2, 3, dps=30)
        out.append("certified root on [2, 3], where 1 - x^2 has no sign change: expected an error")
    except ValueError:
        pass
    return out


def _printed_enclosures() -> list[str]:
    """Printed enclosures at d digits must contain the value recomputed at 2d + 10 digits."""
    from numerics.intervals import bounds, directed_str, enclose, interval_str

    out = []
    for name, exact in _CONSTANTS.items():
        for d in (5, 12, 30):
            with mpmath.workdps(2 * d + 10):
                truth = exact()
                down, up = directed_str(truth, d, up=False), directed_str(truth, d, up=True)
                if not mpmath.mpf(down) <= truth <= mpmath.mpf(up):
                    out.append(f"directed_str({name}, {d}): [{down}, {up}] misses the value")
            text = interval_str(enclose(name, dps=d), d)
            lo_s, hi_s = text.strip("[]").split(", ")
            with mpmath.workdps(2 * d + 10):
                truth = exact()
                if not mpmath.mpf(lo_s) <= truth <= mpmath.mpf(hi_s):
                    out.append(f"interval_str(enclose({name}), {d}) = {text} misses the value")
    # enclose at dps digits: the interval is that narrow (not a 53-bit enclosure)
    lo, hi = bounds(enclose("pi", dps=40))
    with mpmath.workdps(60):
        if not hi - lo < mpmath.mpf("1e-40"):
            out.append(f"enclose(pi, dps=40) has width {mpmath.nstr(hi - lo, 3)}, expected below 1e-40")
    return out


_CONSTANTS = {  # SymPy text for enclose, and the same number in plain mpmath at the working precision
    "pi": lambda: +mpmath.pi,
    "sqrt(2)": lambda: mpmath.sqrt(2),
    "-exp(1)/3": lambda: -mpmath.e / 3,
    "log(2)/10000000": lambda: mpmath.log(2) / 10000000,
}


def _rounds_to() -> list[str]:
    from verify.audit import rounds_to

    cases = [  # (ours, quote, expected): half a unit in the last quoted place is the limit
        ("0.58662", "0.587", True),
        ("0.5864", "0.587", False),
        ("0.5875", "0.587", True),
        ("0.58751", "0.587", False),
        ("0.58649", "0.587", False),
        ("1.93e-4", "1.9e-4", True),
        ("1.96e-4", "1.9e-4", False),
        ("0.59471526", "0.5947152...", True),
        ("0.5947153", "0.5947152...", False),
    ]
    return [f"rounds_to({o}, {q!r}): expected {w}" for o, q, w in cases if rounds_to(o, q) is not w]


def _verdicts() -> list[str]:
    from verify.registry import Claim
    from verify.report import POWER_REQUIRED, CheckResult, verdict_for

    claim = Claim(id="X-1", paper="rare_gates", where="calibration", statement="s", kind="value", paper_value="1")
    weak = [{"power": POWER_REQUIRED / 2, "alternative": "a", "method": "m"}]
    strong = [{"power": 1.0, "alternative": "a", "method": "m"}]
    cases = [
        ([("passed", {})], "confirmed"),
        ([("passed", {"reading": "r"})], "confirmed-reading"),
        ([("passed", {"powers": weak})], "inconclusive"),
        ([("passed", {"reading": "r", "powers": weak})], "inconclusive"),
        ([("passed", {"powers": strong})], "confirmed"),
        ([("passed", {}), ("xfailed", {"discrepancy": "d"})], "discrepancy"),
        ([("passed", {}), ("xpassed", {"discrepancy": "d"})], "check-failed"),  # the paper's claim now holds
        ([("failed", {}), ("xfailed", {"discrepancy": "d"})], "check-failed"),
        ([("skipped", {})], "not-run"),
        ([("skipped", {}), ("passed", {})], "confirmed"),
    ]
    out = []
    for outcomes, want in cases:
        checks = [CheckResult(nodeid=f"c{i}", claim_id="X-1", outcome=o, **kw) for i, (o, kw) in enumerate(outcomes)]
        got = verdict_for(claim, checks)
        if got != want:
            out.append(f"verdict of {[o for o, _ in outcomes]}: expected {want}, got {got}")
    return out


def _store_key() -> list[str]:
    """The result store's code key must change with a module's source, not only with its name."""
    from numerics.sweep.experiment import code_version

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "calibration_store_key_probe.py"
        sys.path.insert(0, tmp)
        try:
            keys = []
            for body in ("X = 1\n", "X = 2\n"):
                pkg.write_text(body)
                importlib.invalidate_caches()
                code_version.cache_clear()
                keys.append(code_version(("calibration_store_key_probe",)))
            if keys[0] == keys[1]:
                out.append("code_version gives the same key for two different sources of one module")
        finally:
            sys.path.remove(tmp)
            code_version.cache_clear()
    return out


INSTRUMENTS = [
    Instrument(
        "Wilson and Clopper-Pearson intervals",
        "proportions in every Monte Carlo check",
        "Newcombe (1998a) Table I",
        _stats_intervals,
    ),
    Instrument(
        "Newcombe hybrid score interval",
        "rare-gates Table 1 and Table 2 comparisons",
        "Newcombe (1998b) Table II (a)-(h)",
        _stats_newcombe,
    ),
    Instrument(
        "Fisher's exact test",
        "count comparisons with the papers' runs",
        "Fisher (1935), tea tasting: 34/70, 17/70, 69/70",
        _stats_fisher,
    ),
    Instrument(
        "normal and Bonferroni quantiles",
        "multiplicity-corrected intervals",
        "normal tables: 1.959963984540054, 3.0233",
        _stats_quantiles,
    ),
    Instrument(
        "certification predicates and certified root",
        "certified inequalities and roots",
        "exact rationals: inside, touching, straddling; 1 - x^2 with and without a sign change",
        _interval_predicates,
    ),
    Instrument(
        "printed enclosures", "every printed interval", "the value recomputed at 2d + 10 digits", _printed_enclosures
    ),
    Instrument(
        "rounds_to",
        "comparison of values with the papers' quotes",
        "half a unit in the last quoted place; truncation with '...'",
        _rounds_to,
    ),
    Instrument("verdict mapping", "every verdict of the report", "synthetic check outcomes", _verdicts),
    Instrument(
        "result store code key",
        "reuse of stored simulation cells",
        "two sources of one module give two keys",
        _store_key,
    ),
]
