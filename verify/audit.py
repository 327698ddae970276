"""What a check uses: the ``claim`` and ``discrepancy`` markers and the ``audit`` recorder.

A check is a test that names one registered claim::

    @claim("RG-16.Rcol")
    def test_rcol(audit):
        ours = derive_rcol()
        audit.ours(ours)                       # printed to 50 significant digits
        audit.evidence("SymPy minimisation of ...; tolerance ...")
        assert rounds_to(ours, "0.5947152")

``@claim(id, reading="...")`` marks a check that holds under a stated
reconstruction; ``fitted={...}`` adds that the reading was chosen among alternatives
because it reproduces the paper's number (the dict maps each alternative reading to
what it gives), and ``by_construction="..."`` says why a check holds by construction.
``vacuous="..."`` marks a check that confirms an implication whose premise fails where the
paper applies it (the reason names the check that shows the premise failing): the verdict is
then ``vacuous``, true and empty, never ``confirmed``.

A discrepancy has two checks. Our own side is an ordinary ``@claim`` check that must
pass. The paper's side is ``@discrepancy(id, reason="...")``: a strict xfail that
expects exactly :class:`PaperClaimFails`, raised by :func:`paper_claim` when the
paper's statement fails on our numbers. Any other exception, a failed ``assert`` or a
fixture error, is a failed check (a regression of ours), never a "discrepancy"; a
paper side that stops failing is a strict XPASS (the claim now holds: revisit it)::

    @claim("MP-E.10")
    def test_bracketing_ours(audit, cycles):           # our derivation: must pass
        assert shift["residual"] == 0

    @discrepancy("MP-E.10", reason="C must grow like 2A/|r|")
    def test_bracketing_paper(audit, cycles):
        paper_claim(c_small <= 1.25 * c_big, f"C needed grows {c_small / c_big:.2f}x")

A Monte Carlo check states its strength with ``audit.power(power, alternative=...,
method=...)``: the smallest departure from the paper's value it must detect and its
power against it at its sample size and level. A passing check whose power is below
:data:`POWER_REQUIRED` gives the verdict ``inconclusive``, not ``confirmed``.

A tolerance is recorded with its reason, ``audit.tolerance(1e-12, "64 x float64 eps: ...")``:
the sentence joins the evidence and report.json lists the value and reason under the claim's
``tolerance``. Each ``audit.ours`` value also reaches report.json as a number (or a list, or
an object) beside its text (:func:`json_value`).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
import sympy

POWER_REQUIRED = 0.8  # a Monte Carlo check confirms only with power >= 0.8 against its stated alternative


class PaperClaimFails(Exception):
    """The paper's side of a discrepancy check fails on our numbers (the one expected failure)."""


def paper_text(paper: str) -> str:
    """The text of ``paper`` (its short name) from the shared papers; the calling check is skipped, with the
    reason, when the shared papers are absent (a checkout without ``../shared``): it is then not run, never
    failed."""
    from verify.coverage import paper_files, papers_dir

    files = paper_files()
    if paper not in files:
        pytest.skip(f"paper text of {paper} not found under {papers_dir()} (the shared papers are absent)")
    return files[paper].read_text("utf-8")


def paper_claim(holds, message: str) -> None:
    """The paper's side of a discrepancy check: raise :class:`PaperClaimFails` unless ``holds``.

    ``holds`` must be a plain truth value (a bool or NumPy bool): anything else is a bug of
    the check, not a finding.

    >>> paper_claim(True, "holds")
    >>> paper_claim(1 + 1 == 3, "ours 2, paper 3")
    Traceback (most recent call last):
    ...
    verify.audit.PaperClaimFails: ours 2, paper 3
    """
    if not isinstance(holds, (bool, np.bool_)):
        raise TypeError(f"paper_claim needs a bool; got {type(holds).__name__}")
    if not holds:
        raise PaperClaimFails(message)


def claim(
    claim_id: str,
    *,
    reading: str | None = None,
    fitted: dict | None = None,
    by_construction: str | None = None,
    vacuous: str | None = None,
):
    """Mark a check of ``claim_id``.

    ``reading`` states a reconstruction the check relies on. ``fitted`` marks that reading
    as chosen because it reproduces the paper's number: a dict mapping each alternative
    reading to what it gives (needs ``reading``; the verdict is then at most
    confirmed-reading, and the report lists the alternatives). ``by_construction`` says
    why the check holds by construction, where it does. ``vacuous`` says why what the check
    confirms (an implication) is empty where the paper uses it: its premise fails there.
    """
    if vacuous is not None and (not isinstance(vacuous, str) or not vacuous.strip()):
        raise ValueError(f"{claim_id}: vacuous must say why the premise fails (a non-empty str)")
    if fitted is not None:
        if not reading:
            raise ValueError(f"{claim_id}: fitted needs the reading that was fitted (reading=...)")
        if (
            not isinstance(fitted, dict)
            or not fitted
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in fitted.items())
        ):
            raise ValueError(f"{claim_id}: fitted must map each alternative reading (str) to what it gives (str)")
    return pytest.mark.claim(claim_id, reading=reading, fitted=fitted, by_construction=by_construction, vacuous=vacuous)


def uses(*experiments: str):
    """Mark a check as reading the results of sweep ``experiments`` (``results["rare_gates.table2"]``).

    The plugin submits the experiments of every selected check together, once per run.
    Unknown names raise at import, naming the known experiments.
    """
    from numerics.sweep import resolve

    if not experiments:
        raise ValueError("uses: name at least one experiment")
    for name in experiments:
        if "." not in name:
            raise ValueError(f"uses: name experiments in full ('paper.experiment'); got {name!r}")
        resolve([name])
    return pytest.mark.uses(*experiments)


def discrepancy(claim_id: str, *, reason: str, reading: str | None = None):
    """Mark the paper's side of a discrepancy: a strict xfail that expects :class:`PaperClaimFails` only."""

    def deco(fn):
        fn = pytest.mark.xfail(strict=True, raises=PaperClaimFails, reason=reason)(fn)
        return pytest.mark.claim(claim_id, reading=reading, discrepancy=reason)(fn)

    return deco


def format_value(value, digits: int = 50) -> str:
    """A value as report text: numbers to ``digits`` significant digits, exact ones kept exact.

    >>> format_value(sympy.pi, 10)
    '3.141592654'
    >>> format_value(sympy.Rational(1, 3), 5)
    '1/3 = 0.33333'
    >>> format_value(0.5)
    '0.5'
    >>> format_value(sympy.Rational(9, 10))
    '9/10 = 0.9'
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, Fraction, sympy.Integer)):
        return str(value)
    if isinstance(value, sympy.Rational):
        if value.q == 1:
            return str(value)
        with mpmath.workdps(digits + 10):
            return f"{value} = {mpmath.nstr(mpmath.mpf(value.p) / value.q, digits)}"
    if isinstance(value, sympy.Basic):
        if value.is_number and value.is_real:
            text = str(sympy.N(value, digits))
            mant, sep, exp = text.partition("e")
            if "." in mant:
                mant = mant.rstrip("0").rstrip(".")
            return mant + sep + exp
        return sympy.sstr(sympy.N(value, digits) if value.is_number else value)
    if isinstance(value, mpmath.ctx_iv.ivmpf):
        from numerics.intervals import interval_str

        return interval_str(value, digits)  # rounded outward exactly, signs included
    if isinstance(value, mpmath.mpf):
        return mpmath.nstr(value, digits)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v, digits) for v in value) + "]"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {format_value(v, digits)}" for k, v in value.items())
    return str(value)


def json_value(value):
    """A recorded value as JSON data: numbers as numbers, sequences as lists, mappings as objects.

    Exact and high-precision numbers become floats (their full digits stay in the text of
    :func:`format_value`); intervals become ``[lower, upper]``; a string that is one decimal
    number (``f"{x:.2e}"``) becomes that number; non-finite floats, complex numbers and
    symbolic expressions become strings.

    >>> json_value(sympy.Rational(1, 4)), json_value(np.int64(3)), json_value(True), json_value("1.5e-03")
    (0.25, 3, True, 0.0015)
    >>> json_value({(1, 2): [0.5, float("nan")], "s": sympy.Symbol("x") + 1, "m": sympy.eye(2)})
    {'(1, 2)': [0.5, 'nan'], 's': 'x + 1', 'm': [[1, 0], [0, 1]]}
    """
    if value is None or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    if isinstance(value, (int, np.integer, sympy.Integer)):
        return int(value)
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, mpmath.ctx_iv.ivmpf):
        return [_finite(float(value.a)), _finite(float(value.b))]
    if isinstance(value, (float, np.floating, mpmath.mpf)):
        return _finite(float(value))
    if isinstance(value, (np.ndarray, sympy.MatrixBase)):
        return [json_value(v) for v in value.tolist()]
    if isinstance(value, sympy.Basic):
        if value.is_number and value.is_real:
            return _finite(float(value))
        return sympy.sstr(value)
    if isinstance(value, str):
        if _DECIMAL.match(value.strip()):
            return int(value) if _INTEGER.match(value.strip()) else _finite(float(value))
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {_key(k): json_value(v) for k, v in value.items()}
    return str(value)


_DECIMAL = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_INTEGER = re.compile(r"^[-+]?\d+$")


def _key(k) -> str:
    if isinstance(k, tuple):
        return "(" + ", ".join(format_value(x, 17) for x in k) + ")"
    return format_value(k, 17)


def _finite(x: float):
    return x if np.isfinite(x) else repr(x)


class Recorded(str):
    """The report text of one ``audit.ours`` value (``"label = text"``), carrying it as data.

    ``label``, ``text`` (our digits) and ``value`` (:func:`json_value`) travel with the
    string through the plugin to report.json's per-claim ``values``.
    """

    label: str | None
    text: str
    value: object

    def __new__(cls, text: str, *, label: str | None = None, value=None):
        self = super().__new__(cls, f"{label} = {text}" if label else text)
        self.label, self.text, self.value = label, text, value
        return self

    def __getnewargs_ex__(self):  # copy, deepcopy and pickle keep the data
        return (self.text,), {"label": self.label, "value": self.value}


class ToleranceNote(str):
    """The evidence sentence of an ``audit.tolerance``, carrying ``tolerance``: {value, reason, label}."""

    tolerance: dict

    def __new__(cls, text: str, *, tolerance: dict | None = None):
        self = super().__new__(cls, text)
        self.tolerance = tolerance or {}
        return self

    def __getnewargs_ex__(self):
        return (str(self),), {"tolerance": self.tolerance}


class Audit:
    """Collects what one check found: our value(s) and the evidence sentence."""

    def __init__(self, claim_id: str | None, figures_dir: Path | None = None):
        self.claim_id = claim_id
        self.values: list[str] = []
        self.notes: list[str] = []
        self.figures: list[str] = []
        self.figures_dir = figures_dir
        self.powers: list[dict] = []

    def ours(self, value, digits: int = 50, label: str | None = None) -> None:
        """Record our value (numbers to ``digits`` significant digits)."""
        self.values.append(Recorded(format_value(value, digits), label=label, value=json_value(value)))

    def evidence(self, text: str) -> None:
        """Record how our value was obtained and the tolerance used (one or two sentences)."""
        self.notes.append(text.strip())

    def tolerance(self, value, reason: str, label: str | None = None) -> None:
        """Record a tolerance the check uses and why it is that size (a sentence of the evidence).

        >>> a = Audit("T-1")
        >>> a.tolerance(1e-12, "about 4500 x float64 eps over 20 steps")
        >>> a.notes
        ['tolerance 1e-12: about 4500 x float64 eps over 20 steps.']
        >>> a.notes[0].tolerance
        {'value': 1e-12, 'reason': 'about 4500 x float64 eps over 20 steps', 'label': None}
        """
        reason = (reason or "").strip().rstrip(".")
        if not reason:
            raise ValueError("tolerance needs its reason (why the tolerance is that size)")
        data = json_value(value)
        if isinstance(data, bool) or not isinstance(data, (int, float, list)):
            raise ValueError(f"tolerance must be a number or a list of numbers; got {value!r}")
        text = format_value(value, 17)
        name = f"tolerance ({label})" if label else "tolerance"
        self.notes.append(
            ToleranceNote(f"{name} {text}: {reason}.", tolerance={"value": data, "reason": reason, "label": label})
        )

    def power(self, power: float, *, alternative: str, method: str, label: str | None = None) -> None:
        """Record the strength of a Monte Carlo check.

        ``alternative``: the smallest departure from the paper's value the check must
        detect, with why it was chosen (e.g. "a relative 25% in each proportion: ...");
        ``power``: the probability that the check rejects under that alternative at its
        sample size and level; ``method``: how it was computed (exact enumeration,
        simulation with its replicate count).
        """
        p = float(power)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"power must lie in [0, 1]; got {power!r}")
        if not alternative or not method:
            raise ValueError("power needs a non-empty alternative and method")
        self.powers.append({"power": p, "alternative": alternative.strip(), "method": method.strip(), "label": label})

    def figure(self, fig, name: str) -> Path | None:
        """Save a matplotlib figure as ``figures/<name>.png`` beside the report, link it, and close it.

        Returns the path written, or None when this run has no report directory.
        """
        if not name or any(ch in name for ch in "/\\ "):
            raise ValueError(f"name must be a plain file stem without spaces or slashes; got {name!r}")
        from numerics.plotting import plt

        try:
            if self.figures_dir is None:
                return None
            self.figures_dir.mkdir(parents=True, exist_ok=True)
            path = self.figures_dir / f"{name}.png"
            fig.savefig(path, dpi=120, bbox_inches="tight")
            self.figures.append(f"figures/{name}.png")
            return path
        finally:
            plt.close(fig)


def rounds_to(ours, quoted: str) -> bool:
    """True when ``ours`` rounded to the digits of ``quoted`` gives ``quoted``.

    Trailing ``...`` in the quote means truncation: ours must start with those digits.

    >>> rounds_to(mpmath.mpf('0.58662'), '0.587')
    True
    >>> rounds_to('0.59471526', '0.5947152...')
    True
    >>> rounds_to('0.5864', '0.587')
    False
    """
    q = quoted.strip()
    truncated = q.endswith("...")
    q = q.rstrip(".") if truncated else q
    mant = q.lstrip("-+")
    if "e" in mant.lower():
        base, _, _ = mant.lower().partition("e")
        decimals_in_base = len(base.split(".")[1]) if "." in base else 0
        exponent = int(mant.lower().split("e")[1])
        scale = -decimals_in_base + exponent
    else:
        scale = -(len(mant.split(".")[1]) if "." in mant else 0)
    with mpmath.workdps(60):
        x = mpmath.mpf(ours) if not isinstance(ours, sympy.Basic) else mpmath.mpf(sympy.N(ours, 60))
        target = mpmath.mpf(q)
        unit = mpmath.mpf(10) ** scale
        if truncated:  # truncation toward zero: [t, t + unit) for t >= 0, (t - unit, t] below
            if target >= 0 and not q.startswith("-"):
                return bool(target <= x < target + unit)
            return bool(target - unit < x <= target)
        return bool(abs(x - target) <= unit / 2)
