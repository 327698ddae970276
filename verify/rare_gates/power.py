"""The power of the rare-gates Monte Carlo checks against their stated alternatives.

Every Monte Carlo check of the rare-gates paper states the smallest departure from the
paper's value it must detect (its *alternative*) and records, with ``audit.power``, the
probability that it rejects under that departure at its own sample sizes and level
(:mod:`numerics.stats`: exact enumeration where the test is a binomial comparison,
simulation otherwise). Below :data:`verify.audit.POWER_REQUIRED` the verdict is
``inconclusive`` and the evidence says what sample size would decide: ours against the
paper's fixed sample, or, where no sample of ours can (the paper's side bounds the
power), equal samples on both sides.

The alternatives follow four rules, chosen once for the paper's kinds of numbers:

* a recovered fraction ``p``: a factor 2 in its effective intensity ``-log(1 - p)``
  (``p -> 1 - (1 - p)^2`` or ``1 - (1 - p)^(1/2)``; for small ``p`` a factor 2 in the
  count): the Poisson account of Section 8 puts the budget ``Gamma = b delta0/eta`` in that
  exponent, so a slip of a factor 2 in ``b``, ``delta0``, ``eta`` or in the two labellings
  of the units shows up exactly there (:func:`intensity_scaled`);
* 'all n' / 'none of n' in the paper: a rate ``1 - 0.01^(1/n)`` of exceptions, the rate
  at which the paper's own all-of-n would have been a 1-in-100 event, so its observation
  excludes it (:func:`exception_rate`; 6.9% for n = 64; :class:`Exceptions` states it and records the checks
  against it);
* a count of rare events (a few of n): a factor 2 in the count;
* a time, rate or median: the nearest value a competing account predicts (stated per check).

Both directions of a factor are checked and the smaller power is recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from numerics import stats as S
from verify.audit import POWER_REQUIRED

N_MAX_OURS = 8192  # largest sample of ours searched for a deciding size (the tables stay below ~2^20 cells)
N_MAX_EQUAL = 2048  # largest pair of equal samples searched (a 2049 x 2049 table of each test)
REL_TOL = 0.05  # deciding sizes are found to within 5% (an upper bound): fewer large tables to compute


def intensity_scaled(p: float, factor: float) -> float:
    """The fraction with its effective intensity ``-log(1 - p)`` multiplied by ``factor``.

    >>> round(intensity_scaled(0.5, 2.0), 12), round(intensity_scaled(0.75, 0.5), 12)
    (0.75, 0.5)
    """
    return 1.0 - (1.0 - p) ** factor


def exception_rate(n_paper: int, level: float = 0.01) -> float:
    """The exception rate ``q`` at which all of ``n_paper`` has probability ``level``: ``1 - level^(1/n)``.

    >>> round(exception_rate(64), 4)
    0.0694
    """
    return 1.0 - level ** (1.0 / n_paper)


def _test_text(test: str, z: float, level: float, alternative: str) -> str:
    if test == "newcombe":
        return f"Newcombe interval at z = {z:.3f} excludes 0"
    return f"Fisher exact ({alternative}) p < {level:.4g}"


def comparison(
    audit,
    *,
    alternative: str,
    cells,
    directions: dict,
    independent: bool = False,
    test: str = "newcombe",
    z: float = S.Z95,
    level: float = 0.05,
    side: str = "two-sided",
    label: str | None = None,
    reference: str = "the paper's",
    both_ours: bool = False,
) -> str:
    """Record the exact power of a check made of two-sample comparisons; returns an evidence sentence.

    ``cells``: ``(p_paper, n_ours, n_paper, group)`` per compared cell, ``p_paper`` the paper's
    fraction taken as its population value (``reference`` names that side where it is not
    the paper's, e.g. another arm of ours; ``both_ours``: both sides are our samples, so the
    deciding size is searched for both at once); ``directions``: ``{name: p_paper -> p_ours}``, the
    alternative in each direction. The check fails if any cell rejects, so within a group
    of dependent cells (same initialisations or streams) its power is at least the largest
    cell power, and over ``independent`` groups at least ``1 - prod(1 - group power)``; the
    smallest over the directions is recorded. Below :data:`POWER_REQUIRED` the sentence
    says what sizes would decide (ours in every cell against the paper's, else equal samples).
    """
    test_args = {"test": test, "z": z, "level": level, "alternative": side}
    cells = [(float(pp), int(n), int(n_p), g) for pp, n, n_p, g in cells]

    def power_at(ours=None, paper=None) -> tuple[float, str]:
        worst = (2.0, "")
        for name, shift in directions.items():
            groups: dict = {}
            for pp, n, n_p, g in cells:
                pw = S.power_two_sample(min(max(shift(pp), 0.0), 1.0), ours or n, pp, paper or n_p, **test_args)
                groups[g] = max(groups.get(g, 0.0), pw)
            total = 1.0 - math.prod(1.0 - v for v in groups.values()) if independent else max(groups.values())
            worst = min(worst, (total, name))
        return worst

    power, direction = power_at()
    n_groups = len({c[3] for c in cells})
    scope = (
        "one cell"
        if len(cells) == 1
        else f"{len(cells)} cells in {n_groups} {'independent' if independent else 'dependent'} group(s): at least "
        + ("1 - prod(1 - largest cell power of each group)" if independent else "the largest cell power")
    )
    method = (
        f"exact enumeration over the binomial laws of our count and {reference} (its fraction taken as its "
        f"population value); rejects when the {_test_text(test, z, level, side)}; {scope}; weakest "
        f"direction: {direction}"
    )
    audit.power(power, alternative=alternative, method=method, label=label)
    text = f"Power {power:.2f}{f' ({label})' if label else ''} against {alternative.split(':')[0]}"
    if power >= POWER_REQUIRED:
        return text + "."
    n_now = max(c[1] for c in cells)
    n_paper = max(c[2] for c in cells)
    search = {"n_max": N_MAX_EQUAL, "rel_tol": REL_TOL}
    if both_ours:
        equal = S.smallest_n(
            lambda m: power_at(ours=m, paper=m)[0], POWER_REQUIRED, n_min=max(n_now, n_paper), **search
        )
        return (
            f"{text}: {equal} streams on each side would decide (to within {REL_TOL:.0%})."
            if equal
            else f"{text}: not even {N_MAX_EQUAL} streams on each side would decide."
        )
    ours = S.smallest_n(lambda m: power_at(ours=m)[0], POWER_REQUIRED, n_min=n_now, n_max=N_MAX_OURS, rel_tol=REL_TOL)
    if ours is not None:
        return f"{text}: {ours} of ours per cell against {reference} {n_paper} would decide (to within {REL_TOL:.0%})."
    limit = power_at(ours=N_MAX_OURS)[0]
    equal = S.smallest_n(lambda m: power_at(ours=m, paper=m)[0], POWER_REQUIRED, n_min=max(n_now, n_paper), **search)
    both = (
        f"equal samples of {equal} per cell on both sides would (to within {REL_TOL:.0%})"
        if equal is not None
        else f"not even equal samples of {N_MAX_EQUAL} on both sides would"
    )
    return (
        f"{text}: no sample of ours decides against {reference} {n_paper} (power {limit:.2f} at "
        f"{N_MAX_OURS} of ours); {both}."
    )


def factor(f: float) -> dict:
    """The two directions of a factor ``f`` in the effective intensity (see :func:`intensity_scaled`)."""
    return {
        f"intensity x {f:g}": lambda p: intensity_scaled(p, f),
        f"intensity / {f:g}": lambda p: intensity_scaled(p, 1.0 / f),
    }


def count_factor(f: float) -> dict:
    """The two directions of a factor ``f`` in a count (its fraction times ``f`` or over ``f``)."""
    return {f"count x {f:g}": lambda p: min(f * p, 1.0), f"count / {f:g}": lambda p: p / f}


def record(audit, power: float, *, alternative: str, method: str, label: str | None = None, decide: str = "") -> str:
    """Record a power computed by the check itself; returns an evidence sentence (with ``decide`` below 0.8)."""
    audit.power(power, alternative=alternative, method=method, label=label)
    text = f"Power {power:.2f}{f' ({label})' if label else ''} against {alternative.split(':')[0]}"
    if power >= POWER_REQUIRED or not decide:
        return text + "."
    return f"{text}: {decide}."


Z_ONE_SIDED_95 = NormalDist().inv_cdf(0.95)  # 1.6449: the one-sided 95% quantile


def simulated(
    audit,
    powers: dict[str, float],
    reps: int,
    *,
    alternative: str,
    method: str,
    label: str | None = None,
    decide: str = "",
) -> str:
    """Record the weakest of ``powers`` (each a rejection rate over ``reps`` simulated draws) at its lower one-sided
    95% bound, power - 1.645 SE: a power indistinguishable from 0.8 by the simulation is not counted as 0.8.

    ``method`` describes the simulation; the powers, their Monte Carlo error and the bound are appended to it.
    """
    weak = min(powers, key=lambda k: powers[k])
    se = math.sqrt(powers[weak] * (1 - powers[weak]) / reps)
    return record(
        audit,
        max(powers[weak] - Z_ONE_SIDED_95 * se, 0.0),
        alternative=alternative,
        method=method
        + "; ".join(f"{key}: {v:.4f}" for key, v in powers.items())
        + f" (+-{se:.4f}); recorded: the lower one-sided 95% bound",
        label=label,
        decide=decide,
    )


def literal_all(audit, *, alternative: str, n: int, rate: float, label: str | None = None) -> str:
    """Power of a literal 'all n' (or 'none of n') check when each record is an exception with probability ``rate``.

    The check fails at the first exception: power ``1 - (1 - rate)^n`` over ``n`` independent records.
    """
    power = -math.expm1(n * math.log1p(-rate))
    need = math.ceil(math.log(1 - POWER_REQUIRED) / math.log1p(-rate))
    return record(
        audit,
        power,
        alternative=alternative,
        label=label,
        method=f"exact: 1 - (1 - {rate:.4f})^{n} over {n} independent records",
        decide=f"{need} independent records would decide",
    )


def literal_some(audit, *, alternative: str, n: int, rate: float, label: str | None = None) -> str:
    """Power of a literal 'at least one of n' check when each record has the property with probability ``rate``.

    The check fails when none of the ``n`` independent records has it: power ``(1 - rate)^n``.
    """
    power = math.exp(n * math.log1p(-rate))
    return record(
        audit,
        power,
        alternative=alternative,
        label=label,
        method=f"exact: (1 - {rate:.4g})^{n}, the probability that none of {n} independent records has the property",
        decide="this power falls as records are added (more records make at least one likely even at a small rate), "
        "so only a rarer alternative rate would decide",
    )


@dataclass(frozen=True)
class Exceptions:
    """The rule for a paper's 'all' or 'none' of ``n_paper``: ``what`` at the :func:`exception_rate`, the rate at which
    the paper's own ``statement`` would have been a 1-in-100 event (``of`` says of what; ``digits`` of the rate).

    >>> Exceptions("failures", 64, "the paper's own 64/64").alternative
    "failures at a rate 0.069: 1 - 0.01^(1/64), at which the paper's own 64/64 would have been a 1-in-100 event"
    """

    what: str
    n_paper: int
    statement: str
    of: str = ""
    digits: int = 3

    @property
    def rate(self) -> float:
        return exception_rate(self.n_paper)

    @property
    def alternative(self) -> str:
        return (
            f"{self.what} at a rate {self.rate:.{self.digits}f}{self.of}: 1 - 0.01^(1/{self.n_paper}), at which "
            f"{self.statement} would have been a 1-in-100 event"
        )

    def literal(self, audit, n: int, label: str | None = None) -> str:
        """:func:`literal_all` of our ``n`` independent records against this rate."""
        return literal_all(audit, alternative=self.alternative, n=n, rate=self.rate, label=label)

    def fisher(
        self, audit, n: int, group: str, *, level: float = 0.05, note: str = "", label: str | None = None
    ) -> str:
        """:func:`comparison` of our count of ``n`` (``group``) with the paper's none of ``n_paper`` by a two-sided
        Fisher exact test at ``level``, against our share at this rate (``note`` is added to the alternative)."""
        rate = self.rate
        return comparison(
            audit,
            alternative=self.alternative + note,
            cells=[(0.0, n, self.n_paper, group)],
            directions={f"rate {rate:.{self.digits}f}": lambda _p: rate},
            test="fisher",
            level=level,
            label=label,
        )


def equivalence_power(sd: float, band: float, at: float = 0.0, z: float = S.Z95) -> float:
    """P(the ``z``-sd interval of a normal estimate with standard deviation ``sd`` lies inside ``[-band, band]``) at
    the true value ``at``: the power of an equivalence check (0 when the interval is wider than the band).

    >>> round(equivalence_power(0.05, 0.25), 4), equivalence_power(0.2, 0.25)
    (0.9976, 0.0)
    """
    from scipy import stats

    lo, hi = -band + z * sd, band - z * sd
    return max(0.0, float(stats.norm.cdf((hi - at) / sd) - stats.norm.cdf((lo - at) / sd))) if hi > lo else 0.0


def equivalence(
    audit,
    *,
    alternative: str,
    sd: float,
    band: float,
    at: float = 0.0,
    z: float = S.Z95,
    label: str | None = None,
    sizes: str = "",
) -> str:
    """Power of an equivalence check: the estimate's ``z`` interval must lie inside ``[-band, band]``.

    The roles of a comparison swap: the check shows the departure to lie within the band, so its power is the
    probability that the interval falls inside the band when the true value is ``at`` (0: the paper's statement
    holds exactly), under a normal law of the estimate with standard deviation ``sd``; at the band's edge the check
    passes with probability at most ``1 - Phi(z)`` (its size). ``sizes`` adds the same power at other sample sizes.
    """
    from scipy import stats

    power = equivalence_power(sd, band, at, z)
    need = (band / (z + float(stats.norm.ppf((1 + POWER_REQUIRED) / 2)))) if at == 0.0 else None
    return record(
        audit,
        power,
        alternative=alternative,
        label=label,
        method=f"normal law of the estimate (sd {sd:.4g}): P(its {z:.2f}-sd interval lies inside +-{band:.4g}) at "
        f"the true value {at:g}; at the band's edge it passes with probability at most "
        f"{float(stats.norm.sf(z)):.3f}" + (f"; {sizes}" if sizes else ""),
        decide=(f"an estimate with sd below {need:.4g} would decide" if need is not None else "")
        + (f" ({sizes})" if sizes else ""),
    )
