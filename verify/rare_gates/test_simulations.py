"""Checks of the simulation claims of the rare-gates paper (Section 8; Appendices 19, 20; Tables 1, 2; Figures 1-5).

Experiments: :mod:`numerics.rare_gates.experiments` (one function per paper experiment),
run as sweeps of independent cells (:mod:`numerics.rare_gates.sweeps`) through the result
store (cells stored by ``python -m numerics.sweep RUN`` or an earlier audit are reused);
figures: :mod:`numerics.rare_gates.figures`. Each experiment runs once per session
(module-scoped fixtures); sizes come from the ``profile`` fixture (see
``experiments.PROFILES``; ``--set NAME=VALUE`` changes one): the quick profile runs most
experiments at the paper's scale (they are cheap) and reduces only the 80-bit replay and
the joint (T, eta) sweep (full only).

Statistics. The paper's fractions are one random sample (their streams, their 64 private
initialisations); ours are another. Each comparison therefore records (i) the literal
check, the paper's fraction inside our 95% Wilson interval, and (ii) the two-sample check
that the assertion uses: Newcombe's hybrid-score interval for the difference of the two
proportions (or Fisher's exact test for counts near 0 or n), at family-wise 95% with a
Bonferroni correction over the comparisons of one table or figure. Seeds are fixed per
experiment (``experiments.SEEDS``), chosen once and never tuned.

Power. Every check records its power against the smallest departure from the paper's
value it must detect (:mod:`verify.rare_gates.power` states the rules: a factor 2 in the
effective intensity of a recovered fraction, an exception rate the paper's own 'all' or
'none' excludes, a factor 2 in a rare count, the nearest competing prediction for a time
or a rate), computed by :mod:`numerics.stats` at the check's sample sizes and level; where
it is below 0.8 the verdict is ``inconclusive`` and the evidence says what size would decide.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy import stats

from derivations.rare_gates import references as R
from numerics import stats as S
from numerics.rare_gates import experiments as E
from numerics.rare_gates import figures as F
from numerics.rare_gates.initialization import in_k
from verify.audit import claim, discrepancy, paper_claim, rounds_to, uses
from verify.rare_gates import power as PW
from verify.rare_gates import source_flows as SF
from verify.registry import paper_numbers

LAM = E.LAM
A = E.A_RATE
READING_OWN = (
    "our own Gaussian draws from D0 (either-labelling reading of the lost display), not the authors' "
    "64 saved initialisations; their counts are compared as an independent binomial sample of the "
    "same population (two-sample Newcombe interval, Bonferroni over the table's cells)"
)
# The paper's numbers, read from the claims registry (its one source); shapes as in the paper's tables.
_FRESH = [int(k) for k in paper_numbers("RG-sim.T1.fresh")[:4]]  # the four (source, target) pairs, T = 0 and 100
_T1_SGD = [int(k) for k in paper_numbers("RG-sim.T1.sgd")[:6]]  # target SGD: source SGD then source GD, T = 200..400
_T1_GD = int(paper_numbers("RG-sim.T1.gd")[0])  # target GD: every T
PAPER_T1 = {  # Table 1: (source, target) -> counts of 64 at T = 0, 100, 200, 300, 400
    ("sgd", "sgd"): (_FRESH[0], _FRESH[0], *_T1_SGD[:3]),
    ("sgd", "gd"): (_FRESH[1],) * 2 + (_T1_GD,) * 3,
    ("gd", "sgd"): (_FRESH[2], _FRESH[2], *_T1_SGD[3:]),
    ("gd", "gd"): (_FRESH[3],) * 2 + (_T1_GD,) * 3,
}
Z_T1 = E.z_bonferroni(20)  # Table 1: 20 cells compared with the paper's counts, family-wise 95%
_T2 = paper_numbers("RG-sim.T2.fractions")  # 5 settings x (t <= 60, 200, 450), in E.TABLE2_SETTINGS order
PAPER_T2 = {  # Table 2: (b, delta0) -> quoted fractions at t <= 60, 200, 450 (of 128 streams)
    setting: tuple(_T2[3 * i : 3 * i + 3]) for i, setting in enumerate(E.TABLE2_SETTINGS)
}
# Appendix 19's five last recovery times (RG-sim.T2.last), in E.TABLE2_SETTINGS order
PAPER_LAST = dict(zip(E.TABLE2_SETTINGS, map(float, paper_numbers("RG-sim.T2.last")), strict=True))
PAPER_HALF = tuple(map(float, paper_numbers("RG-sim.joint.Thalf")))
PAPER_HALF_OFFSET = tuple(map(float, paper_numbers("RG-sim.joint.offsets")))
PAPER_A20_RUNS = 128  # streams per Appendix 20 setting in our reading (READING_A20); lost in the text
_NOISE = [float(v) for v in paper_numbers("RG-sim.A20.noise")]  # none, independent x 3, shared x 3
PAPER_NOISE = dict(
    zip(
        [("none", 0.0), *((mode, s) for mode in ("independent", "shared") for s in (1e-7, 1e-6, 1e-5))],
        _NOISE[:4] + _NOISE[-3:],
        strict=True,
    )
)

# Appendix 20's setting is lost in the text and read as b = 16 (READING_A20), fitted: of Table 2's two batches at
# delta0 = 1e-5 (16 and 64) it is the one whose recovery is near the paper's no-noise 0.04, and it is kept over b = 8
# because our runs at b = 16 reproduce all seven of the paper's noise fractions. The alternatives below are the
# batches its own Lambda(t) (0.85 b delta0/(pi eta) (1 - e^{-lambda t})/lambda at delta0 = 1e-5, eta = 0.01) makes
# plausible and Table 2's b = 64. b = 8 is the batch whose Lambda(1000) gives the paper's no-noise 0.04 (Gamma =
# -log(1 - 0.04) pi lambda/0.85 = 0.0075).
A20_FACTOR, A20_DELTA0, A20_ETA, A20_H, A20_T_LATE = 0.85, 1e-5, 0.01, 1000.0, 240.0


def _a20_model(b: int) -> dict:
    """Appendix 20's Lambda(t) at batch b: no-noise recovery by H = 1000 (lambda = 0.05), P(no first disagreement
    after t = 240 in 128 runs at lambda = 0.01), and the batch that the paper's no-noise fraction implies."""
    gamma = b * A20_DELTA0 / A20_ETA
    total = A20_FACTOR * gamma / (math.pi * LAM) * -math.expm1(-LAM * A20_H)
    q01 = math.exp(-A20_FACTOR * gamma / (math.pi * 0.01) * -math.expm1(-0.01 * A20_T_LATE))
    q01 *= -math.expm1(-A20_FACTOR * gamma / (math.pi * 0.01) * math.exp(-0.01 * A20_T_LATE))
    implied = -math.log1p(-_NOISE[0]) * math.pi * LAM / A20_FACTOR * A20_ETA / A20_DELTA0
    return {"gamma": gamma, "none_H": -math.expm1(-total), "p_none_late": (1 - q01) ** PAPER_A20_RUNS, "b": implied}


def _a20_alternatives(consequence: str) -> dict:
    """The alternatives of the Appendix 20 claims' fitted batch: what Lambda(t) gives for each, and ``consequence``."""
    out = {}
    for b in (8, 4, 32, 64):
        m = _a20_model(b)
        head = f"b = {b} (Gamma = {m['gamma']:.4f})" + {
            8: f", the batch Appendix 20's own Lambda(t) implies from its {_NOISE[0]:g} (b = {m['b']:.1f})",
            64: ", Table 2's other batch at delta0 = 1e-5",
        }.get(b, "")
        out[head] = (
            f"Lambda(t) gives no-noise recovery {m['none_H']:.3f} by H = 1000 (paper {_NOISE[0]:g}) and P(no first "
            f"disagreement after t = 240 in {PAPER_A20_RUNS} runs at lambda = 0.01) = {m['p_none_late']:.3f}; "
            + consequence.format(b=b)
        )
    return out


A20_AT_16 = _a20_model(16)
READING_A20 = (
    "the Appendix 20 setting lost in conversion is read as the noise runs' checkpoint delta0 = 1e-5 with b = 16, "
    "eta = 0.01 and 128 streams, the same streams in every setting: fitted, since b = 16 is chosen among Table 2's "
    "two batches at that delta0 (16 and 64: Appendix 20's own Lambda(t) gives no-noise recovery "
    f"{A20_AT_16['none_H']:.3f} and {_a20_model(64)['none_H']:.3f} by H = 1000 against its {_NOISE[0]:g}) and kept "
    "over b = 8 because our runs at b = 16 reproduce the paper's noise fractions; Lambda(t) itself implies "
    f"b = {A20_AT_16['b']:.1f} from the {_NOISE[0]:g} (the alternatives and what each gives are listed)"
)
# Every Appendix 20 claim also reports its settings rerun at b = 8 (E.A20_ALT_B), the batch Appendix 20's own
# Lambda(t) implies from its no-noise 0.04: what the fitted alternative gives on our runs, reported, not asserted
A20_B8_LABEL = f"at b = {E.A20_ALT_B} (the batch Appendix 20's 0.04 implies; the reading's alternative, reported)"
A20_ALT_NOTE = (
    f"(of the alternatives only b = {E.A20_ALT_B} is simulated, rare_gates.noise_b8 and rare_gates.weight_decay_b8: "
    f"the line '{A20_B8_LABEL}' of ours)"
)


def _count(times) -> int:
    return int(np.isfinite(np.asarray(times, dtype=float)).sum())


def _k_of(quoted: str, n: int) -> int:
    """The one count k with k/n rounding to the quoted fraction (Table 2 prints k/128 to 3 decimals)."""
    ks = [k for k in range(n + 1) if rounds_to(k / n, quoted)]
    assert len(ks) == 1, (quoted, ks)
    return ks[0]


def _compare(k: int, n: int, kp: int, n_p: int, z: float) -> dict:
    """Ours k/n against the paper's kp/n_p: literal (Wilson 95% of ours) and two-sample (Newcombe at z)."""
    lo, hi = E.wilson(k, n)
    dlo, dhi = E.newcombe_difference(k, n, kp, n_p, z)
    # the Wilson ends are exactly 0 at k = 0 and 1 at k = n (numerics.stats), so no slack is needed at the edges
    return {
        "ours": k / n,
        "paper": kp / n_p,
        "wilson": (lo, hi),
        "literal": lo <= kp / n_p <= hi,
        "diff": (dlo, dhi),
        "consistent": dlo <= 0.0 <= dhi,
    }


def _fmt(c: dict) -> str:
    lo, hi = c["wilson"]
    return (
        f"{c['ours']:.3f} [{lo:.3f}, {hi:.3f}] vs paper {c['paper']:.3f} "
        f"(diff CI [{c['diff'][0]:+.3f}, {c['diff'][1]:+.3f}])"
    )


# --- the paper's side of a sample-level comparison ---------------------------------------------------------


def _paper_sample_side(rejected: bool, message: str) -> None:
    """The paper's side of a sample-level comparison whose outcome depends on the sample sizes.

    Rejected by our draws: :class:`PaperClaimFails` (the claim's verdict is ``discrepancy``). Not rejected: the
    paper's side has nothing to show at these sizes, so it is skipped with the test's numbers and the verdict is our
    side's (a strict xfail that passed would read as a regression). The test itself is our side's, so it is the same
    at every size.
    """
    if not rejected:
        pytest.skip(f"not rejected at these sizes (the verdict is our side's): {message}")
    paper_claim(False, message)


def _sample_reason(test: str, where: str = "they do not reject", after: str = "") -> str:
    """The discrepancy reason of a paper side decided by :func:`_paper_sample_side`: ``test`` says what our draws
    test, ``where`` when they do not reject (and so the side is skipped)."""
    return (
        f"sample-level, raised only when our draws reject it: {test}; where {where}, this side is skipped and the "
        f"verdict is our side's{after}"
    )


def _fisher_side(k: int, n: int, p: float, what: str, paper: str, level: float) -> None:
    """:func:`_paper_sample_side` of a two-sided Fisher exact test (p value ``p``) of the paper's count ``paper``
    against our ``k`` of ``n`` ``what``, rejected below ``level``."""
    _paper_sample_side(
        p < level,
        f"{k} of our {n} {what} against the paper's {paper}: two-sided Fisher p = {p:.4f} (level {level:g})",
    )


@functools.lru_cache(maxsize=1)
def _common_gate_path():
    """The common-gate mean path delta0 e^{-lambda t} sqrt(B0/B(t)) at lambda = 0.05, B0 = 0.9, as f(delta0, t)."""
    path = R.common_gate_angle().subs({R.lam: sp.Rational(1, 20), R.B0: sp.Rational(9, 10)})
    return sp.lambdify((R.delta0, R.time), path, "mpmath")


def _common_gate_angle(delta0: float, t: float) -> float:
    """The common-gate mean path from the constructed checkpoint (B0 = 0.9) at time t, 30-digit mpmath."""
    with mpmath.workdps(30):
        return float(_common_gate_path()(mpmath.mpf(delta0), mpmath.mpf(t)))


# --- fixtures: each experiment once per module ----------------------------------------------------------


@pytest.fixture(scope="module")
def sizes(profile, size_changes):
    return E.sizes_with(profile, size_changes)


# --- Table 1 --------------------------------------------------------------------------------------------


def _table1_cells(table1, rows) -> list[tuple]:
    """(T, source, target, ours k, n, paper k) for the Table 1 rows ``rows``."""
    n = table1["init"].shape[0]
    out = []
    for i in rows:
        for src in ("sgd", "gd"):
            for tgt in ("sgd", "gd"):
                k = _count(table1[src][f"{tgt}_recovery"][i])
                out.append((float(table1["times"][i]), src, tgt, k, n, PAPER_T1[(src, tgt)][i]))
    return out


def _table1_check(audit, table1, rows, label):
    cells = _table1_cells(table1, rows)
    comps = [_compare(k, n, kp, 64, Z_T1) for _, _, _, k, n, kp in cells]
    for (T, src, tgt, k, n, _kp), c in zip(cells, comps):
        audit.ours(f"{k}/{n}: {_fmt(c)}", label=f"T={T:g} {src}->{tgt}")
    misses = [f"T={T:g} {s}->{t}" for (T, s, t, *_), c in zip(cells, comps) if not c["literal"]]
    n = cells[0][4]
    audit.evidence(
        f"{label}: {n} Gaussian initialisations drawn from D0 by rejection (keyed Philox), source SGD and GD "
        f"(eta = 1e-3, b = 16, lambda = 0.05) along one trajectory each, both target optimizers through H = 200 "
        f"with risk every 10 updates; target SGD streams paired across the two sources. Two-sample Newcombe "
        f"interval for ours - paper (paper: k of 64), z = {Z_T1:.3f} (Bonferroni over Table 1's 20 cells). "
        f"Literal check (paper's fraction inside our 95% Wilson interval) fails in: {', '.join(misses) or 'none'}."
    )
    return comps


@claim("RG-sim.T1.fresh", reading=READING_OWN)
@uses("rare_gates.table1")
def test_table1_fresh(audit, results):
    table1 = results["rare_gates.table1"]
    comps = _table1_check(audit, table1, (0, 1), "Table 1 rows T = 0, 100")
    n = table1["init"].shape[0]
    cells = _table1_cells(table1, (0, 1))
    failures = [f"T={T:g} {s}->{t}: {n_ - k}" for T, s, t, k, n_, _ in cells if k < n_]
    # decided by the one-sample literal test on our own draws (as RG-T1.fresh): the paper's 'all 64' read as an
    # exception rate of at most q (PW.exception_rate), so one failure in our n of any cell rejects it; the two-sample
    # comparison with the paper's fixed 64/64 (above) is reported but cannot decide: its power is capped by the
    # paper's 64
    audit.evidence(
        f"Decided literally on our own draws: every one of our {n} initialisations recovers in each of the "
        f"{len(cells)} cells; failures: {', '.join(failures) or 'none'}."
    )
    audit.evidence(
        PW.Exceptions("checkpoint failures", 64, "the paper's own 64/64", of=" in a cell").literal(
            audit, n, label="each cell"
        )
    )
    assert all(kp == 64 for *_, kp in cells)  # the paper's 'all 64', read from the registry
    assert not failures and all(c["consistent"] for c in comps)


@claim("RG-sim.T1.sgd", reading=READING_OWN)
@uses("rare_gates.table1")
def test_table1_target_sgd(audit, results):
    table1 = results["rare_gates.table1"]
    n = table1["init"].shape[0]
    cells = [c for c in _table1_cells(table1, (2, 3, 4)) if c[2] == "sgd"]
    comps = [_compare(k, n, kp, 64, Z_T1) for _, _, _, k, n, kp in cells]
    for (T, src, _, k, n, _kp), c in zip(cells, comps):
        audit.ours(f"{k}/{n}: {_fmt(c)}", label=f"T={T:g} source {src}")
    misses = [f"T={T:g} {s}" for (T, s, *_), c in zip(cells, comps) if not c["literal"]]
    opposite = E.angles(table1["init"]) > E.NEAR_OPPOSITE
    for src in ("sgd", "gd"):
        split = [
            f"T={T:g}: {int(np.isfinite(r[opposite]).sum())}/{int(opposite.sum())} near-opposite, "
            f"{int(np.isfinite(r[~opposite]).sum())}/{int((~opposite).sum())} other"
            for T, r in zip(table1["times"][2:], table1[src]["sgd_recovery"][2:])
        ]
        audit.ours("; ".join(split), label=f"source {src}: recoveries by initial angle (near-opposite: > 2.5)")
    audit.evidence(
        f"Target-SGD counts from our {n} D0 draws (see RG-sim.T1.fresh for the protocol) against the paper's k/64: "
        f"two-sample Newcombe interval, z = {Z_T1:.3f} (Bonferroni over Table 1's 20 cells). Literal check "
        f"(paper's fraction inside our 95% Wilson interval) fails in: {', '.join(misses) or 'none'}."
    )
    last = [(src, k, kp) for T, src, _, k, _, kp in cells if T == 400.0]
    ours_400 = " and ".join(f"{k}/{n} from source {src}" for src, k, _ in last)
    kp400 = last[0][2]
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"a factor 2 in the count at T = 400: the paper's {kp400}/64 against {2 * kp400}/64 or "
            f"{kp400 / 2:g}/64 (ours: {ours_400})",
            cells=[(kp / 64, n, 64, "inits") for T, _, _, _, _, kp in cells if T == 400.0],
            directions=PW.count_factor(2),
            z=Z_T1,
            label="T = 400",
        )
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the effective intensity of every cell: see verify.rare_gates.power",
            cells=[(kp / 64, n, 64, "inits") for *_, kp in cells],
            directions=PW.factor(2),
            z=Z_T1,
            label="every T",
        )
    )
    assert all(c["consistent"] for c in comps)


@claim("RG-sim.T1.gd", reading=READING_OWN)
@uses("rare_gates.table1")
def test_table1_target_gd(audit, results):
    table1 = results["rare_gates.table1"]
    n = table1["init"].shape[0]
    counts = {
        src: [_count(table1[src]["gd_recovery"][i]) for i in range(len(table1["times"]))] for src in ("sgd", "gd")
    }
    worst = max(np.nanmax(table1[s]["gd_recovery"]) for s in ("sgd", "gd"))
    audit.ours(counts, label=f"target GD recoveries of {n} at T = 0..400 by source")
    audit.ours(float(worst), label="latest target GD hitting time")
    audit.evidence(
        f"Target GD (exact population gradient) from each of our {n} checkpoints per T and source, "
        "H = 200; the claim 'every checkpoint' is checked literally (all n)."
    )
    audit.evidence(
        PW.Exceptions(
            "target-GD failures", 64, "the paper's own 64/64", of=" of the checkpoints of one (T, source)"
        ).literal(audit, n)
    )
    assert all(k == n for v in counts.values() for k in v)


@claim("RG-sim.T1.pair", reading=READING_OWN + "; 'up to two runs' of 64 scaled to 2n/64 runs of our n")
@uses("rare_gates.table1")
def test_table1_sources_agree(audit, results):
    table1 = results["rare_gates.table1"]
    n = table1["init"].shape[0]
    diffs = []
    for i, T in enumerate(table1["times"]):
        a, b = (_count(table1[s]["sgd_recovery"][i]) for s in ("sgd", "gd"))
        ra, rb = (np.isfinite(table1[s]["sgd_recovery"][i]) for s in ("sgd", "gd"))
        diffs.append((float(T), a, b, int(np.sum(ra != rb))))
    audit.ours(
        "; ".join(f"T={T:g}: {a} vs {b} ({d} discordant inits)" for T, a, b, d in diffs),
        label=f"target-SGD counts of {n}, source SGD vs source GD",
    )
    audit.evidence(
        f"Same {n} inits and the same target samples for both sources' checkpoints; the paper's "
        f"'up to two runs' of 64 is read as |difference| <= 2 n/64 = {2 * n / 64:g}."
    )
    d = 4 / 64  # twice the paper's 'up to two runs' of 64

    def pair_power(m):
        return S.power_of_region(m, d, np.arange(m + 1) > 2 * m / 64)

    need = S.smallest_n(pair_power, n_min=n)
    audit.evidence(
        PW.record(
            audit,
            pair_power(n),
            alternative="a systematic difference of 4 runs in 64 between the sources at one T: "
            "twice the paper's 'up to two runs'",
            method=f"exact: the signed difference of the counts is Bin({n}, {d:.4f}) when all discordant inits favour "
            f"one source; the check fails when it exceeds {2 * n / 64:g}",
            decide=f"{need} inits would decide",
        )
    )
    assert all(abs(a - b) <= 2 * n / 64 for _, a, b, _ in diffs)


# A literal 'none of m' in the paper, read as a rate on our own draws (RG-sim.T1.gamma's part below 1e-2,
# RG-sim.T1.T400.nodis): the paper's own none of m cannot exclude a rate up to r0 = 1 - 0.05^(1/m) (its one-sided 95%
# bound), so its statement is contradicted only where our draws put the rate above r0: a one-sided exact binomial
# test, P(X >= k | n, r0) below the level. Power against q = 1 - 0.01^(1/m), the rate at which the paper's own none
# would have been a 1-in-100 event (verify.rare_gates.power's rule for 'none of n').
NONE_RATE_MAX_N = 65536  # largest sample of ours searched for the size that would decide


def _none_rate_test(k: int, n: int, m_paper: int, level: float) -> dict:
    """One-sided exact binomial test of 'rate <= 1 - 0.05^(1/m_paper)' on our k of n, its power and deciding size."""
    r0, q = 1.0 - 0.05 ** (1.0 / m_paper), PW.exception_rate(m_paper)

    def power_at(m: int) -> float:
        ks = np.arange(m + 1)
        return S.power_of_region(m, q, stats.binom.sf(ks - 1, m, r0) < level)

    p = float(stats.binom.sf(k - 1, n, r0))
    power = power_at(n)
    need = (
        None
        if power >= PW.POWER_REQUIRED
        else S.smallest_n(power_at, PW.POWER_REQUIRED, n_min=n, n_max=NONE_RATE_MAX_N, rel_tol=PW.REL_TOL)
    )
    return {
        "k": k,
        "n": n,
        "m": m_paper,
        "r0": r0,
        "q": q,
        "p": p,
        "reject": p < level,
        "level": level,
        "power": power,
        "need": need,
    }


def _none_rate_power(audit, t: dict, what: str, label: str) -> str:
    """Record the power of :func:`_none_rate_test`; returns the evidence sentence."""
    decide = f"about {t['need']} records of ours would decide (to within {PW.REL_TOL:.0%})" if t["need"] else ""
    return PW.record(
        audit,
        t["power"],
        alternative=PW.Exceptions(what, t["m"], f"the paper's own none of {t['m']}", digits=4).alternative,
        method=f"exact: P(our count k ~ Bin({t['n']}, {t['q']:.4f}) falls where P(X >= k | {t['n']}, r0 = "
        f"{t['r0']:.4f}) < {t['level']:.4g}); r0 = 1 - 0.05^(1/{t['m']}), the rate the paper's own none cannot "
        "exclude",
        label=label,
        decide=decide,
    )


def _none_rate_text(t: dict, what: str) -> str:
    return (
        f"{what}: ours {t['k']}/{t['n']} against the paper's none of {t['m']} read as a rate at most r0 = "
        f"{t['r0']:.4f}: one-sided exact binomial p = {t['p']:.4f} (level {t['level']:.4g})"
    )


def _poisson_bound(k: int, G: np.ndarray) -> tuple[float, float]:
    """Section 8's Poisson account as an upper bound on a count of checkpoints that met a disagreement.

    Each checkpoint meets one at most with probability 1 - exp(-Gamma/(pi lambda)) (the angle frozen would give more
    disagreements; it decays at least at lambda): the sum of those is the expected count, and a count above its
    Poisson upper tail (heavier than the sum of Bernoullis with the same mean, so the test is conservative) at
    a small level contradicts the account. Returns (expected count, one-sided p).
    """
    mu = float(np.sum(E.poisson_reference(G)))
    return mu, float(stats.poisson.sf(k - 1, mu))


GAMMA_READING = (
    READING_OWN + "; 'Gamma_T >~ 1' checked as Gamma_T >= 1 (literally: every record); 'recovers late or only "
    "sometimes' as some but not all of the records in [1e-2, 1); 'no observed recovery below 1e-2', the paper's none "
    "of its share of the records (our count scaled by 64/n), read as a rate: per source optimizer (the two sources "
    "meet the same target streams) a one-sided exact binomial test of 'rate <= 1 - 0.05^(1/m)' on our records, at "
    "0.05/2 (Bonferroni over the two sources); a rejection is the paper's side of a discrepancy, not a failure of our "
    "side, which checks our count against the Section 8 Poisson account"
)
GAMMA_LO_LEVEL = 0.05 / 2


def _gamma_records(table1) -> dict:
    """Target-SGD records with T > 0 per source: Gamma_T, recovered, and sampled a disagreement."""
    cfg = table1["config"]
    out = {}
    for s in ("sgd", "gd"):
        out[s] = (
            E.gamma_of(table1[s]["angle"][1:], cfg["b"], cfg["eta"]).ravel(),
            np.isfinite(table1[s]["sgd_recovery"][1:]).ravel(),
        )
    return out


def _gamma_lo_tests(table1) -> dict:
    n = table1["init"].shape[0]
    recs = _gamma_records(table1)
    m_paper = int(round(sum(int((G < 1e-2).sum()) for G, _ in recs.values()) * 64 / n))
    return {
        s: _none_rate_test(int(R[G < 1e-2].sum()), int((G < 1e-2).sum()), m_paper, GAMMA_LO_LEVEL)
        for s, (G, R) in recs.items()
    }


@claim("RG-sim.T1.gamma", reading=GAMMA_READING)
@uses("rare_gates.table1")
def test_table1_gamma_regimes(audit, results):
    table1 = results["rare_gates.table1"]
    n = table1["init"].shape[0]
    recs = _gamma_records(table1)
    G = np.concatenate([g for g, _ in recs.values()])
    R = np.concatenate([r for _, r in recs.values()])
    hi, lo, mid = G >= 1.0, G < 1e-2, (G >= 1e-2) & (G < 1.0)
    tests = _gamma_lo_tests(table1)
    mu, p_mu = _poisson_bound(int(R[lo].sum()), G[lo])
    audit.ours(f"{int(R[hi].sum())}/{int(hi.sum())}", label="recovered with Gamma_T >= 1")
    audit.ours(
        f"{int(R[lo].sum())}/{int(lo.sum())} (Poisson account: {mu:.2f} expected at most, one-sided p = {p_mu:.3f})",
        label="recovered with Gamma_T < 1e-2",
    )
    audit.ours(f"{int(R[mid].sum())}/{int(mid.sum())}", label="recovered with 1e-2 <= Gamma_T < 1")
    for s, t in tests.items():
        audit.ours(
            f"{t['k']}/{t['n']} (one-sided p = {t['p']:.3f} against r0 = {t['r0']:.4f})",
            label=f"below 1e-2, source {s}",
        )
    audit.evidence(
        f"All target-SGD records with T > 0 of both sources ({G.size} dependent records of {n} inits). "
        "Above 1: literal; the middle band must be mixed (late or only sometimes); below 1e-2: the paper's none, read "
        "as a rate, is decided on our own records per source. "
        + "; ".join(_none_rate_text(t, f"source {s}") for s, t in tests.items())
        + (
            ": not rejected, so the paper's side is skipped."
            if not any(t["reject"] for t in tests.values())
            else ": rejected, a discrepancy (the paper's side)."
        )
        + f" Our side: the recoveries below 1e-2 ({int(R[lo].sum())}) against the Section 8 Poisson account's "
        f"{mu:.2f} (sum over the records of 1 - exp(-Gamma/(pi lambda)); one-sided Poisson p = {p_mu:.3f}, level 0.05)."
    )
    # records of one source at different T meet independent target streams: independent given their checkpoints
    half = G.size // 2
    hi_one = max(int(hi[:half].sum()), int(hi[half:].sum()))
    audit.evidence(
        PW.Exceptions(
            "failures",
            int(round(hi.sum() * 64 / n)),
            "the paper's own 'every' over its share of such records",
            of=" of the records with Gamma_T >= 1",
            digits=4,
        ).literal(audit, hi_one, label="Gamma_T >= 1")
    )
    # the check rejects if either source rejects: its power is at least the larger source's
    best = max(tests.values(), key=lambda t: t["power"])
    audit.evidence(_none_rate_power(audit, best, "recoveries of the records with Gamma_T < 1e-2", "Gamma_T < 1e-2"))
    assert R[hi].all()
    assert 0 < R[mid].sum() < mid.sum()
    assert p_mu >= 0.05


QUICK_96 = "they do not reject (the quick profile's 96 draws)"
GAMMA_REASON = _sample_reason(
    "the paper's 'no observed recovery below 1e-2' read as a recovery rate at most 1 - 0.05^(1/m) over its m records "
    "there, one-sided exact binomial on our records of each source at 0.05/2",
    QUICK_96,
)


@discrepancy("RG-sim.T1.gamma", reason=GAMMA_REASON, reading=GAMMA_READING)
@uses("rare_gates.table1")
def test_table1_gamma_regimes_paper(results):
    tests = _gamma_lo_tests(results["rare_gates.table1"])
    _paper_sample_side(
        any(t["reject"] for t in tests.values()),
        "; ".join(_none_rate_text(t, f"source {s}") for s, t in tests.items()),
    )


def _t400(table1) -> dict:
    """Source-SGD checkpoints at T = 400: Gamma_T, the target-SGD outcomes and the GD hitting times."""
    cfg = table1["config"]
    sgd = table1["sgd"]
    return {
        "n": table1["init"].shape[0],
        "gamma": E.gamma_of(sgd["angle"][-1], cfg["b"], cfg["eta"]),
        "disagreements": sgd["sgd_disagreements"][-1],
        "recovery": sgd["sgd_recovery"][-1],
        "gd": sgd["gd_recovery"][-1],
        "angle": sgd["angle"][-1],
        "checkpoint": sgd["checkpoint"][-1],
        "init_angle": E.angles(table1["init"]),
    }


# One multiplicity rule for the five statements about the T = 400 checkpoints (RG-sim.T1.T400, .nodis, .late, .gd and
# .dichotomy), fixed in advance: Bonferroni, each two-sample test at 0.05/5, family-wise 5% ('.late' included: its
# paper side compares the paper's none of seven with our share at this level).
T400_FAMILY = 5
T400_LEVEL = 0.05 / T400_FAMILY
T400_READING = READING_OWN + "; the sentence's parts are separate claims, each compared with the paper's count by "
T400_READING += f"its own two-sided Fisher exact test at the Bonferroni level 0.05/{T400_FAMILY} = {T400_LEVEL:g} over "
T400_READING += "the five statements about the T = 400 checkpoints (family-wise 5%)"
T400_FISHER = "two-sided Fisher exact below the T = 400 family's Bonferroni level"  # the paper sides' test


T400_SMALL_READING = (
    T400_READING + ". Ours: most checkpoints have contracted below Gamma_T = 0.04 by T = 400 (the one-sided 95% "
    "Clopper-Pearson lower bound of our share above 1/2); the paper's side: its 57 of 64 against our count, two-sided "
    "Fisher exact at the family's level (a rejection is a discrepancy, not a failure of ours)"
)
T400_SMALL_REASON = _sample_reason(
    f"the paper's 57 of 64 with Gamma_T < 0.04 at T = 400 against our count, {T400_FISHER}"
)


def _t400_small(table1) -> tuple[int, int, float]:
    """Checkpoints with Gamma_T < 0.04 at T = 400, all checkpoints, and the Fisher p against the paper's 57 of 64."""
    r = _t400(table1)
    k = int((r["gamma"] < 0.04).sum())
    return k, r["n"], E.fisher_p(k, r["n"], 57, 64)


@claim("RG-sim.T1.T400", reading=T400_SMALL_READING)
@uses("rare_gates.table1")
def test_table1_t400_small_gamma(audit, results):
    k_small, n, p = _t400_small(results["rare_gates.table1"])
    audit.ours(f"{k_small}/{n} (Fisher vs 57/64: p = {p:.3f})", label="Gamma_T < 0.04 at T = 400")
    audit.evidence(
        f"Source-SGD checkpoints at T = 400 of our {n} draws; Gamma_T = b delta_T/eta; our count against the paper's "
        f"57 of 64 by a two-sided Fisher exact test at {T400_LEVEL:g} (Bonferroni over the five T = 400 statements; "
        "earlier revisions tested this one at 0.05)."
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the count of checkpoints with Gamma_T >= 0.04: the paper's 7/64 against "
            "14/64 or 3.5/64",
            cells=[(57 / 64, n, 64, "inits")],
            directions={
                "count above 0.04 x 2": lambda p: 1 - 2 * (1 - p),
                "count above 0.04 / 2": lambda p: 1 - (1 - p) / 2,
            },
            test="fisher",
            level=T400_LEVEL,
        )
    )
    ok = _rate_check(
        audit,
        k_small,
        n,
        0.5,
        side="lower",
        what="share of our checkpoints with Gamma_T < 0.04",
        alternative="no contraction-driven majority: half the checkpoints at Gamma_T >= 0.04 by T = 400",
        label="ours: majority below 0.04",
    )
    assert ok


@discrepancy("RG-sim.T1.T400", reason=T400_SMALL_REASON, reading=T400_SMALL_READING)
@uses("rare_gates.table1")
def test_table1_t400_small_gamma_paper(results):
    _fisher_side(*_t400_small(results["rare_gates.table1"]), "checkpoints with Gamma_T < 0.04", "57 of 64", T400_LEVEL)


NODIS_READING = (
    READING_OWN + "; the sentence's parts are separate claims; this one, the paper's 'none of 57 samples a "
    "disagreement', read as a rate on our own draws: a one-sided exact binomial test of 'rate <= 1 - 0.05^(1/57)' on "
    f"our small-Gamma checkpoints at the Bonferroni level {T400_LEVEL:g} of the five T = 400 statements; "
    "a rejection is the paper's side of a discrepancy, not a failure of our side, which checks our count against the "
    "Section 8 Poisson account"
)
NODIS_REASON = _sample_reason(
    "the paper's none of 57 small-Gamma checkpoints sampling a disagreement, read as a rate at most 1 - 0.05^(1/57), "
    "one-sided exact binomial on our small-Gamma checkpoints at the T = 400 family's Bonferroni level",
    QUICK_96,
)


def _nodis_test(table1) -> tuple[dict, np.ndarray]:
    r = _t400(table1)
    small = r["gamma"] < 0.04
    k = int((r["disagreements"][small] > 0).sum())
    return _none_rate_test(k, int(small.sum()), 57, T400_LEVEL), r["gamma"][small]


@claim("RG-sim.T1.T400.nodis", reading=NODIS_READING)
@uses("rare_gates.table1")
def test_table1_t400_no_disagreement(audit, results):
    t, G = _nodis_test(results["rare_gates.table1"])
    mu, p_mu = _poisson_bound(t["k"], G)
    audit.ours(
        f"{t['k']}/{t['n']} (one-sided p = {t['p']:.3f} against r0 = {t['r0']:.4f}; Poisson account: {mu:.2f} "
        f"expected at most, one-sided p = {p_mu:.3f})",
        label="of those with Gamma_T < 0.04, sampled one",
    )
    audit.evidence(
        "Target-SGD streams (H = 200) from the source-SGD checkpoints with Gamma_T < 0.04 at T = 400: the number that "
        "sampled at least one disagreeing input. The paper's none of 57, read as a rate, decided on our own draws: "
        + _none_rate_text(t, "sampled a disagreement")
        + (
            ": rejected, a discrepancy (the paper's side)."
            if t["reject"]
            else ": not rejected, so the paper's side is skipped."
        )
        + f" Our side: the count against the Section 8 Poisson account's {mu:.2f} (sum over the checkpoints of "
        f"1 - exp(-Gamma/(pi lambda))), one-sided Poisson p = {p_mu:.3f} (level 0.05). Earlier revisions compared "
        "ours with the paper's 0 of 57 by a two-sample Fisher test, whose power the paper's 57 caps."
    )
    audit.evidence(_none_rate_power(audit, t, "sampled disagreements of the small-Gamma checkpoints", "none of 57"))
    assert 0 <= t["k"] <= t["n"]
    assert p_mu >= 0.05


@discrepancy("RG-sim.T1.T400.nodis", reason=NODIS_REASON, reading=NODIS_READING)
@uses("rare_gates.table1")
def test_table1_t400_no_disagreement_paper(results):
    t, _G = _nodis_test(results["rare_gates.table1"])
    _paper_sample_side(t["reject"], _none_rate_text(t, "sampled a disagreement"))


RATE_ALPHA = 0.05  # our own rate checks: one-sided 95% Clopper-Pearson bounds (the house's 95%, exact coverage)


def _cp_bound(k: int, n: int, side: str) -> float:
    """The one-sided 95% Clopper-Pearson bound of k/n: the upper (``side='upper'``) or lower end of the 90% interval."""
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower'; got {side!r}")
    lo, hi = S.clopper_pearson_interval(k, n, alpha=2 * RATE_ALPHA)
    return hi if side == "upper" else lo


def _rate_check(audit, k: int, n: int, r: float, *, side: str, what: str, alternative: str, label: str) -> bool:
    """Our rate k/n checked against ``r`` by its one-sided 95% Clopper-Pearson bound, with the exact power at rate r.

    ``side='upper'``: the check is 'the upper bound lies below r' (our rate is smaller than r); ``'lower'``: 'the lower
    bound lies above r'. Under the alternative, rate ``r`` itself, the bound crosses r with probability at least 95%
    (the interval's coverage), so the power is at least 0.95 once n is large enough for the check to pass at all; it
    is computed exactly over k ~ Bin(n, r) (the bound is monotone in k, so the failing counts are one tail).
    """
    bound = _cp_bound(k, n, side)
    ok = bound < r if side == "upper" else bound > r

    # the failing counts are one tail: k >= k_star (upper) or k <= k_star (lower); k_star by bisection on k
    def crosses(j: int) -> bool:
        return _cp_bound(j, n, side) >= r if side == "upper" else _cp_bound(j, n, side) > r

    lo_k, hi_k = -1, n + 1  # crosses(lo_k) is False, crosses(hi_k) is True (the ends as sentinels)
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        lo_k, hi_k = (lo_k, mid) if crosses(mid) else (mid, hi_k)
    fails = np.arange(n + 1) >= hi_k if side == "upper" else np.arange(n + 1) < hi_k
    power = S.power_of_region(n, r, fails)
    lo, hi = S.clopper_pearson_interval(k, n)
    audit.ours(
        f"{k}/{n} = {k / n:.4f} (95% Clopper-Pearson [{lo:.4f}, {hi:.4f}]; one-sided 95% {side} bound {bound:.4f} "
        f"{'<' if side == 'upper' else '>'} {r:.4f}: {'holds' if ok else 'fails'})",
        label=what,
    )
    audit.evidence(
        PW.record(
            audit,
            power,
            alternative=alternative,
            label=label,
            method=f"exact: P(one-sided 95% Clopper-Pearson {side} bound on the other side of {r:.4f}) over k ~ "
            f"Bin({n}, {r:.4f})",
        )
    )
    return bool(ok)


T400_LATE = 100.0  # 'no run recovers after t = 100'


def _t400_late(table1) -> tuple[int, int, float]:
    """Recoveries after t = 100 of the T = 400 target-SGD runs, all recoveries, and the paper's none of 7 (Fisher p)."""
    rec = _t400(table1)["recovery"]
    m = _count(rec)
    late = int(np.sum(rec > T400_LATE + 1e-9))
    return late, m, E.fisher_p(late, max(m, 1), 0, 7)


T400_LATE_READING = (
    T400_READING + "; ours: the rate of recoveries after t = 100 among our recoveries, its one-sided 95% "
    "Clopper-Pearson upper bound below the rate at which the paper's own none of seven would have been a 1-in-100 "
    "event; the paper's literal none of its seven is its sample's, compared with our share by a two-sided Fisher exact "
    "test at the family's level (the paper's side)"
)
T400_LATE_REASON = _sample_reason(
    f"the paper's none of its seven recoveries after t = 100 against our share, {T400_FISHER}",
    after=" (the late-recovery rate)",
)


@claim("RG-sim.T1.T400.late", reading=T400_LATE_READING)
@uses("rare_gates.table1")
def test_table1_t400_no_late_recovery(audit, results):
    r = _t400(results["rare_gates.table1"])
    rec = r["recovery"]
    last = float(np.nanmax(rec)) if np.isfinite(rec).any() else float("nan")
    late, m, p = _t400_late(results["rare_gates.table1"])
    audit.ours(last, label="latest target-SGD recovery at T = 400")
    audit.ours(f"{late}/{m} (Fisher vs the paper's 0/7: p = {p:.3f})", label="recoveries after t = 100")
    late_rate = PW.Exceptions(
        "recoveries after t = 100", 7, "the paper's own none of its seven", of=" of the recoveries"
    )
    q = late_rate.rate
    audit.evidence(
        f"The target-SGD recoveries from the {r['n']} source-SGD checkpoints at T = 400 (H = 200). 'No run recovers "
        "after t = 100' is a statement about the paper's seven recoveries; ours is the rate of late recoveries in the "
        f"law of D0: its one-sided 95% Clopper-Pearson upper bound must lie below {q:.3f}, the rate at which the "
        "paper's none of seven would have been a 1-in-100 event. The paper's literal none is compared with our share "
        f"by a two-sided Fisher exact test at {T400_LEVEL:g} (its side of the claim)."
    )
    audit.evidence(
        late_rate.fisher(
            audit,
            max(m, 1),
            "recoveries",
            level=T400_LEVEL,
            note=" (the paper's side: its 0/7 against ours)",
            label="the paper's side: Fisher vs its 0/7",
        )
    )
    ok = _rate_check(
        audit,
        late,
        max(m, 1),
        q,
        side="upper",
        what="rate of recoveries after t = 100",
        alternative=late_rate.alternative,
        label="late-recovery rate",
    )
    assert m > 0 and ok


@discrepancy("RG-sim.T1.T400.late", reason=T400_LATE_REASON, reading=T400_LATE_READING)
@uses("rare_gates.table1")
def test_table1_t400_no_late_recovery_paper(results):
    _fisher_side(*_t400_late(results["rare_gates.table1"]), "recoveries after t = 100", "0 of 7", T400_LEVEL)


T400_GD_READING = (
    T400_READING + "; 'GD recovers by t ~ 40' as: no GD hitting time after t = 40. Ours: the rate of GD hitting "
    "times after t = 40 (or none), its one-sided 95% Clopper-Pearson upper bound below the rate at which the paper's "
    "own none of 64 would have been a 1-in-100 event; the paper's side: its none of 64 against our count, two-sided "
    "Fisher exact at the family's level (a rejection is a discrepancy, not a failure of ours)"
)
T400_GD_REASON = _sample_reason(
    f"the paper's none of 64 GD hitting times after t ~ 40 against our count, {T400_FISHER}"
)


def _t400_gd_late(table1) -> tuple[int, int, float]:
    """GD runs from the T = 400 checkpoints not recovered by t = 40 (late or never), all runs, and the Fisher p."""
    r = _t400(table1)
    k = int(np.sum(~(r["gd"] <= 40.0 + 1e-9)))
    return k, r["n"], E.fisher_p(k, r["n"], 0, 64)


@claim("RG-sim.T1.T400.gd", reading=T400_GD_READING)
@uses("rare_gates.table1")
def test_table1_t400_gd_by_40(audit, results):
    r = _t400(results["rare_gates.table1"])
    n, gd = r["n"], r["gd"]
    k_gd40, _, p = _t400_gd_late(results["rare_gates.table1"])
    top = int(np.nanargmax(gd))
    top_offset = float(gd[top] - math.log(1.0 / r["angle"][top]) / A)
    audit.ours(
        f"{k_gd40}/{n}, latest {np.nanmax(gd):.2f} (Fisher vs 0/64: p = {p:.3f})", label="GD hitting times after t = 40"
    )
    audit.evidence(
        f"Target GD from the source-SGD checkpoints at T = 400. The largest hitting time ({gd[top]:.2f}) comes from a "
        f"checkpoint with angle {r['angle'][top]:.3g}, at A^-1 log(1/delta_T) + {top_offset:.2f} (balanced units "
        "have the smallest offset); the largest grows with the number of draws, hence the two-sample comparison "
        f"(two-sided Fisher exact at {T400_LEVEL:g}, Bonferroni over the five T = 400 statements; earlier revisions "
        "tested at 0.05) with the paper's none of 64 after t ~ 40."
    )
    gd_rate = PW.Exceptions("GD hitting times after t = 40", 64, "the paper's own 'GD by t ~ 40' over 64")
    audit.evidence(gd_rate.fisher(audit, n, "inits", level=T400_LEVEL))
    ok = _rate_check(
        audit,
        k_gd40,
        n,
        gd_rate.rate,
        side="upper",
        what="rate of GD runs not recovered by t = 40",
        alternative=gd_rate.alternative,
        label="ours: late-GD rate",
    )
    assert ok


@discrepancy("RG-sim.T1.T400.gd", reason=T400_GD_REASON, reading=T400_GD_READING)
@uses("rare_gates.table1")
def test_table1_t400_gd_by_40_paper(results):
    _fisher_side(*_t400_gd_late(results["rare_gates.table1"]), "GD runs not recovered by t = 40", "0 of 64", T400_LEVEL)


DICHOTOMY_READING = (
    READING_OWN + "; implied by Section 8's 57 of 64 below 0.04 and 'all seven recoveries have Gamma_T > 1' with "
    "57 + 7 = 64: no source-SGD checkpoint at T = 400 has Gamma_T in [0.04, 1]"
)


def _band(table1) -> tuple[int, int, np.ndarray, int]:
    r = _t400(table1)
    band = (r["gamma"] >= 0.04) & (r["gamma"] <= 1.0)
    return int(band.sum()), r["n"], np.sort(r["gamma"][band]), int(np.isfinite(r["recovery"][band]).sum())


DICHOTOMY_LEVEL = T400_LEVEL  # the family's one rule (T400_FAMILY), not a level of its own


DICHOTOMY_BAND_READING = (
    DICHOTOMY_READING + "; a sample-level comparison: the paper's 64 saved draws may have had none in the band, so its "
    "implied 0 of 64 is compared with ours by a two-sided Fisher exact test at the T = 400 family's Bonferroni level; "
    "a rejection is the paper's side of a discrepancy, not a failure of our side"
)
DICHOTOMY_REASON = _sample_reason(
    f"the paper's implied none of 64 in 0.04 <= Gamma_T <= 1 at T = 400 against our count, {T400_FISHER}", QUICK_96
)


def _band_test(table1) -> tuple[int, int, float]:
    """Checkpoints with Gamma_T in [0.04, 1] at T = 400, all checkpoints, and the Fisher p against the implied 0/64."""
    k, n, _G, _rec = _band(table1)
    return k, n, E.fisher_p(k, n, 0, 64)


@claim("RG-sim.T1.dichotomy", reading=DICHOTOMY_BAND_READING)
@uses("rare_gates.table1")
def test_table1_t400_band(audit, results):
    k, n, G, rec_band = _band(results["rare_gates.table1"])
    lo, hi = E.wilson(k, n)
    _, _, p = _band_test(results["rare_gates.table1"])
    audit.ours(
        f"{k}/{n} = {k / n:.3f} (95% Wilson [{lo:.3f}, {hi:.3f}]; Fisher vs the implied 0/64: p = {p:.4f}); "
        f"{rec_band} of them recovered",
        label="checkpoints with 0.04 <= Gamma_T <= 1 at T = 400",
    )
    audit.evidence(
        "The paper's counts leave no checkpoint between the 57 below 0.04 and the seven recovered ones above 1. "
        f"Our {n} draws put {k} there (Gamma_T {', '.join(f'{g:.3g}' for g in G) or 'none'}): the band is not "
        f"empty for the law of D0 (Wilson lower bound {lo:.3f}), and 0 of 64 would have probability "
        f"{(1 - k / n) ** 64:.4f} at our rate. Against the paper's implied 0 of 64 the two-sided Fisher p is "
        f"{p:.4f}, which the Bonferroni level {DICHOTOMY_LEVEL:.3f} over the five T = 400 statements "
        f"{'does not reject: a tension, not a discrepancy' if p >= DICHOTOMY_LEVEL else 'rejects: a discrepancy'} "
        "(the paper's side of the claim decides; this check is ours: the band is not empty)."
    )
    band_rate = PW.Exceptions("checkpoints in [0.04, 1]", 64, "the paper's implied none of 64")
    audit.evidence(band_rate.fisher(audit, n, "inits", level=DICHOTOMY_LEVEL))
    # ours: the band's share of D0 is positive, by its one-sided 95% Clopper-Pearson lower bound (an existence
    # statement by nature: the paper's dichotomy, read for the law of D0, is the share 0)
    ok = _rate_check(
        audit,
        k,
        n,
        0.0,
        side="lower",
        what="share of our checkpoints in [0.04, 1]",
        alternative="the dichotomy in the law of D0: no checkpoint in [0.04, 1] (share 0)",
        label="ours: band share",
    )
    assert ok and lo > 0.0


@discrepancy("RG-sim.T1.dichotomy", reason=DICHOTOMY_REASON, reading=DICHOTOMY_BAND_READING)
@uses("rare_gates.table1")
def test_table1_t400_band_paper(results):
    _fisher_side(
        *_band_test(results["rare_gates.table1"]), "checkpoints in [0.04, 1]", "implied 0 of 64", DICHOTOMY_LEVEL
    )


OPPOSITE_READING = (
    READING_OWN + "; the paper's 'all seven' compared with our recoveries by a two-sided Fisher exact test (7 of 7 "
    "against ours, 5%; a rejection is the paper's side of a discrepancy, not a failure of our side); the literal "
    "'all' is reported separately: it holds in our sample only if every one of our recoveries has the property"
)
OPPOSITE_LEVEL = 0.05  # each of the three 'all seven' statements at 5%: no correction, which can only favour rejection


def _opposite_flags(table1) -> tuple[np.ndarray, dict]:
    """Over all T = 400 source-SGD checkpoints: which recovered (target SGD), and which have each property."""
    r = _t400(table1)
    ck = r["checkpoint"]
    omega = np.abs(ck[:, :2]) * np.stack([np.hypot(ck[:, 2], ck[:, 3]), np.hypot(ck[:, 4], ck[:, 5])], axis=1)
    return np.isfinite(r["recovery"]), {
        "Gamma_T > 1": r["gamma"] > 1,
        "initial angle > 2.5": r["init_angle"] > 2.5,
        "a unit with omega < 1e-8": omega.min(axis=1) < 1e-8,
    }


def _opposite_parts(table1) -> tuple[int, dict]:
    rec, flags = _opposite_flags(table1)
    return int(rec.sum()), {name: int(f[rec].sum()) for name, f in flags.items()}


OPPOSITE_ENRICH_LEVEL = 0.05  # ours: the property more common among recoveries, one-sided Fisher exact at 5% each


def _opposite_enrichment(audit, table1, part: str) -> bool:
    """Ours: the property marks the recoveries. Its share among our recoveries against its share among the checkpoints
    that did not recover (95% Clopper-Pearson each), one-sided Fisher exact ('greater') below 5%."""
    rec, flags = _opposite_flags(table1)
    f = flags[part]
    v, m, w, rest = int(f[rec].sum()), int(rec.sum()), int(f[~rec].sum()), int((~rec).sum())
    p = S.fisher_exact_p(v, m, w, rest, alternative="greater")
    (a_lo, a_hi), (b_lo, b_hi) = S.clopper_pearson_interval(v, m), S.clopper_pearson_interval(w, rest)
    audit.ours(
        f"{v}/{m} = {v / m:.2f} [{a_lo:.2f}, {a_hi:.2f}] of the recoveries against {w}/{rest} = {w / rest:.2f} "
        f"[{b_lo:.2f}, {b_hi:.2f}] of the others (95% Clopper-Pearson; one-sided Fisher p = {p:.2g})",
        label=f"'{part}' among recoveries and the rest",
    )
    # power: under 'the property unrelated to recovery' (one rate, the pooled share) the check fails unless the
    # Fisher test rejects by chance: 1 - its exact size at the pooled share
    pooled = (v + w) / (m + rest)
    size = S.power_two_sample(
        pooled, m, pooled, rest, test="fisher", level=OPPOSITE_ENRICH_LEVEL, alternative="greater"
    )
    audit.evidence(
        PW.record(
            audit,
            1.0 - size,
            alternative=f"'{part}' unrelated to recovery: one share ({pooled:.3f}, pooled) among recoveries and the "
            "rest",
            label="ours: enrichment",
            method=f"exact: 1 - P(one-sided Fisher p < {OPPOSITE_ENRICH_LEVEL:g}) over independent binomial counts of "
            f"{m} recoveries and {rest} others at the pooled share",
        )
    )
    return p < OPPOSITE_ENRICH_LEVEL


def _opposite_check(audit, table1, part: str) -> None:
    m, parts = _opposite_parts(table1)
    v = parts[part]
    p = E.fisher_p(v, m, 7, 7)
    literal = v == m
    audit.ours(f"{v}/{m} (Fisher vs 7/7: p = {p:.3f})", label=part)
    assert 0 <= v <= m
    audit.ours(
        "holds" if literal else f"not reproduced: {m - v} of our {m} recoveries lack it", label="the literal 'all'"
    )
    audit.evidence(
        f"The {m} target-SGD recoveries at T = 400 (source SGD) of our draws: the count with '{part}' against the "
        f"paper's 7 of 7 (two-sided Fisher exact, {OPPOSITE_LEVEL:g}; the paper's side of the claim decides, this "
        "check is ours). The literal 'all' "
        + (
            "holds in our sample."
            if literal
            else f"does not: {v} of {m}; "
            + ("the difference from 7 of 7 is within sampling." if p >= OPPOSITE_LEVEL else "and 7 of 7 is rejected.")
        )
    )
    q7 = PW.exception_rate(7)
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"the property missing in a fraction {q7:.3f} of the recoveries: 1 - 0.01^(1/7), at which "
            "the paper's own 7 of 7 would have been a 1-in-100 event",
            cells=[(1.0, max(m, 1), 7, "recoveries")],
            directions={f"missing in {q7:.3f}": lambda _p: 1 - q7},
            test="fisher",
            level=OPPOSITE_LEVEL,
        )
    )
    assert m > 0 and _opposite_enrichment(audit, table1, part)


def _opposite_paper(table1, part: str) -> None:
    m, parts = _opposite_parts(table1)
    p = E.fisher_p(parts[part], m, 7, 7)
    _fisher_side(parts[part], m, p, f"recoveries with '{part}'", "7 of 7", OPPOSITE_LEVEL)


OPPOSITE_REASON = _sample_reason(
    "the paper's 'all seven' against our recoveries with the property, two-sided Fisher exact below 5%",
    "they do not reject (the quick profile)",
)


@claim("RG-sim.T1.opposite", reading=OPPOSITE_READING)
@uses("rare_gates.table1")
def test_table1_opposite_gamma(audit, results):
    _opposite_check(audit, results["rare_gates.table1"], "Gamma_T > 1")


@discrepancy("RG-sim.T1.opposite", reason=OPPOSITE_REASON, reading=OPPOSITE_READING)
@uses("rare_gates.table1")
def test_table1_opposite_gamma_paper(results):
    _opposite_paper(results["rare_gates.table1"], "Gamma_T > 1")


@claim("RG-sim.T1.opposite.angle", reading=OPPOSITE_READING)
@uses("rare_gates.table1")
def test_table1_opposite_angle(audit, results):
    _opposite_check(audit, results["rare_gates.table1"], "initial angle > 2.5")


@discrepancy("RG-sim.T1.opposite.angle", reason=OPPOSITE_REASON, reading=OPPOSITE_READING)
@uses("rare_gates.table1")
def test_table1_opposite_angle_paper(results):
    _opposite_paper(results["rare_gates.table1"], "initial angle > 2.5")


@claim(
    "RG-sim.T1.opposite.amp",
    reading=OPPOSITE_READING + "; 'amplitude' of a unit read as omega_i = a_i |w_i| (the paper's amplitude "
    "B = omega_1 + omega_2)",
)
@uses("rare_gates.table1")
def test_table1_opposite_amplitude(audit, results):
    _opposite_check(audit, results["rare_gates.table1"], "a unit with omega < 1e-8")


@discrepancy(
    "RG-sim.T1.opposite.amp",
    reason=OPPOSITE_REASON,
    reading=OPPOSITE_READING + "; 'amplitude' of a unit read as omega_i = a_i |w_i| (the paper's amplitude "
    "B = omega_1 + omega_2)",
)
@uses("rare_gates.table1")
def test_table1_opposite_amplitude_paper(results):
    _opposite_paper(results["rare_gates.table1"], "a unit with omega < 1e-8")


# --- Theorem 1 and Corollary 3 ---------------------------------------------------------------------------

THM1_READING = (
    "the bound's T-dependence is its second term C (b/eta) e^{-gamma T}, which 'bounds, up to constants, "
    "b E[d_T]/eta': at fixed b/eta the warm recovery intensity -log(1 - P(tau_w <= H)) is read as proportional to "
    "the checkpoint's separation, so its decay rate in T is at least the contraction rate gamma, which the theorem "
    "fixes in [lambda/2, lambda); the bound is one-sided, so the check is too: the fitted decay rate is at least "
    "lambda/2 up to its one-sided 95% interval (the constants C, c*, L, eps are not given, so the bound's level is "
    "not checked). All our D0 draws up to the last of the not-near-opposite ones (Theorem 1 is for theta0 in K, "
    "which does not exclude near-opposite draws), b = 1, eta = 0.01, one source-SGD trajectory per draw and many "
    "target streams per checkpoint; a draw that recovers in every stream at every T (or in none) has no finite "
    "intercept and cannot enter the fit: it is reported apart"
)
Z_ONE_SIDED = float(stats.norm.ppf(0.95))  # one-sided 95%: the theorem's bound is an inequality in one direction


def _warm_fit(warm: list[dict]) -> dict:
    """Common-slope cloglog fit of the warm recovery counts in T (one intercept per draw), and the angle rate."""
    # a draw recovering in every stream at every T (or in none) has no finite intercept: it is left out of the fit
    warm_fit = [w for w in warm if 0 < sum(_count(r) for r in w["recovery"]) < w["recovery"].size]
    draws = len(warm_fit)
    rows, k, n = [], [], []
    for j, w in enumerate(warm_fit):
        for t, rec in zip(w["times"], w["recovery"]):
            x = np.zeros(draws + 1)
            x[j], x[-1] = 1.0, t
            rows.append(x)
            k.append(_count(rec))
            n.append(rec.size)
    fit = S.cloglog_fit(k, n, np.array(rows))
    # the source separation's rate over the same draws: least squares of log angle on T, one intercept per draw
    A_ = np.array([[*(np.eye(draws)[j]), t] for j, w in enumerate(warm_fit) for t in w["times"]])
    y = np.array([math.log(a) for w in warm_fit for a in w["angle"]])
    coef, *_ = np.linalg.lstsq(A_, y, rcond=None)
    resid = y - A_ @ coef
    dof = max(len(y) - A_.shape[1], 1)
    cov = float(resid @ resid) / dof * np.linalg.inv(A_.T @ A_)
    return {
        "slope": float(fit.coef[-1]),
        "se": float(fit.se()[-1]),
        "angle_rate": float(-coef[-1]),
        "angle_se": float(math.sqrt(cov[-1, -1])),
        "fitted": [w["init_id"] for w in warm_fit],
        "k": k,
        "n": n,
    }


def _init_angles(ids) -> dict:
    """The initial angle of each D0 draw id (the keyed draws of :func:`E.d0_initialisations`)."""
    ids = list(ids)
    return dict(zip(ids, map(float, E.angles(E.d0_initialisations(max(ids) + 1))[ids])))


def _warm_k_text(warm: list[dict], near: list[dict]) -> str:
    """K membership of the warm draws and the source-GF regime times of the near-opposite ones, computed on these
    draws by the functions RG-17.Cs uses (verify.rare_gates.source_flows)."""
    ids = [w["init_id"] for w in warm]
    X = E.d0_initialisations(max(ids) + 1)
    n_k = int(in_k(X[ids]).sum())
    rows = {w["init_id"]: SF.source_row(X[w["init_id"]]) for w in near}
    reg = ", ".join(f"draw {j}: T = {r['t_reg']:.0f}" for j, r in rows.items())
    vac = max((SF.vacuity_time(r, SF.LAM) for r in rows.values()), default=-math.inf)
    late = [str(j) for j, r in rows.items() if r["t_reg"] > 400.0]
    return (
        f"{n_k} of these {len(warm)} draws lie in K (numerics.rare_gates.initialization.in_k). The source GF from "
        "each near-opposite draw (verify.rare_gates.source_flows.source_row, as in RG-17.Cs) enters the "
        f"e^{{-lambda T}} regime (|d log delta/dT + lambda| <= 0.01 lambda from then on) at {reg or 'none'}; on these "
        f"draws Theorem 1's term (C b/eta) e^{{-gamma T}} is >= 1 (vacuous, at c b/eta = 1, gamma -> lambda) for "
        f"T < {vac:.0f}. So at T <= 400 the recoveries of the near-opposite draws that enter the regime only after "
        f"T = 400 ({', '.join(late) or 'none'}) probe the flow before Lemma 13's asymptotics, not Theorem 1's "
        "C b e^{-gamma T}/eta term."
    )


@claim("RG-T1.decay", reading=THM1_READING)
@uses("rare_gates.theorem1")
def test_theorem1_warm_decay(audit, results):
    warm = results["rare_gates.theorem1"]["warm"]
    angle0 = _init_angles(w["init_id"] for w in warm)
    near = [w for w in warm if angle0[w["init_id"]] > E.NEAR_OPPOSITE]
    f = _warm_fit(warm)
    f_not = _warm_fit([w for w in warm if angle0[w["init_id"]] <= E.NEAR_OPPOSITE])
    rate, se = -f["slope"], f["se"]
    upper = rate + Z_ONE_SIDED * se
    z_match = (rate - f["angle_rate"]) / math.hypot(se, f["angle_se"])
    for w in warm:
        counts = ", ".join(f"T={t:g}: {_count(r)}/{r.size}" for t, r in zip(w["times"], w["recovery"]))
        kind = "near-opposite, " if angle0[w["init_id"]] > E.NEAR_OPPOSITE else ""
        apart = "" if w["init_id"] in f["fitted"] else "; no finite intercept: reported apart"
        audit.ours(
            f"{counts}; angles {', '.join(f'{a:.2g}' for a in w['angle'])}{apart}",
            label=f"D0 draw {w['init_id']} ({kind}initial angle {angle0[w['init_id']]:.2f})",
        )
    audit.ours(
        f"{rate:.4f} (one-sided 95% upper bound {upper:.4f}; {len(f['fitted'])} draws fitted)",
        label="decay rate of the warm recovery intensity in T, near-opposite draws included",
    )
    audit.ours(
        f"{-f_not['slope']:.4f} +- {1.96 * f_not['se']:.4f} (95%)", label="the same over the not-near-opposite draws"
    )
    audit.ours(f"{f['angle_rate']:.4f} +- {1.96 * f['angle_se']:.4f} (95%)", label="decay rate of the checkpoint angle")
    apart = [w for w in warm if w["init_id"] not in f["fitted"]]
    near_text = "; ".join(
        f"draw {w['init_id']}: angle slope {E.log_slope(w['times'], w['angle']):+.4f}/time, recovery "
        f"{sum(_count(r) for r in w['recovery'])}/{w['recovery'].size}"
        for w in near
    )
    k_text = _warm_k_text(warm, near)
    audit.evidence(
        f"{len(warm)} D0 draws ({len(near)} near-opposite, initial angle > {E.NEAR_OPPOSITE}), source SGD then "
        f"target SGD with b = {warm[0]['b']}, eta = {warm[0]['eta']:g}, lambda = {LAM:g}, H = {E.WARM_HORIZON:g}; "
        f"{warm[0]['recovery'].shape[1]} target streams per checkpoint. Recovery counts fitted by a binomial "
        "regression with the complementary log-log link (a Poisson count of triggering disagreements), one "
        "intercept per draw and a common slope in T (numerics.stats.cloglog_fit, expected-information SE). "
        f"Theorem 1's bound is one-sided: the check fails if the rate's one-sided 95% upper bound ({upper:.4f}) lies "
        f"below the theorem's smallest gamma, lambda/2 = {LAM / 2:g}. Near-opposite draws: {near_text or 'none'}. "
        f"Reported apart (no finite intercept): {', '.join(str(w['init_id']) for w in apart) or 'none'}; a "
        "near-opposite draw whose one unit is nearly dead keeps its angle (slope near 0) and recovers at every T: "
        "its source separation has not begun its e^{-lambda T} decay by T = 250 (a large C_s, Appendix 17), which "
        "the bound allows through its constant C; it says nothing about the rate. "
        f"{k_text} The reading's proportionality, "
        f"reported and not asserted (the theorem does not state it): the intensity's rate against the checkpoint "
        f"angle's, z = {z_match:+.2f}."
    )
    audit.evidence(
        PW.record(
            audit,
            float(stats.norm.cdf(LAM / 4 / se - Z_ONE_SIDED)),
            alternative=f"an intensity decaying at lambda/4 = {LAM / 4:g}, half the theorem's smallest gamma (a "
            "separation contracting at half the guaranteed rate)",
            label="one-sided decay rate",
            method=f"normal approximation with the fit's SE {se:.4f}: P(rate + {Z_ONE_SIDED:.3f} SE < lambda/2) at "
            "rate lambda/4",
        )
    )
    assert upper >= LAM / 2


@claim(
    "RG-T1.fresh",
    reading="fresh target SGD from our D0 draws (all of them, near-opposite included) at moderate step sizes "
    "0.05, 0.02, 0.01 with b = 16; 'P(tau_f > t0) <= C e^{-c_f/eta}' is checked as: no failure by t0, with the "
    "failure rate's 95% Clopper-Pearson upper bound; the e^{-c_f/eta} shape cannot be fitted when nothing fails",
)
@uses("rare_gates.theorem1")
def test_theorem1_fresh_success(audit, results):
    fresh = results["rare_gates.theorem1"]["fresh"]
    fails, total, t0 = 0, 0, 0.0
    for f in fresh:
        n, k = f["recovery"].size, _count(f["recovery"])
        lo, hi = S.clopper_pearson_interval(n - k, n)
        t_max = float(np.nanmax(f["recovery"])) if k else float("nan")
        t0 = max(t0, t_max)
        fails, total = fails + n - k, total + n
        audit.ours(
            f"{n - k}/{n} fail (95% CP upper {hi:.4f}); latest success t = {t_max:.1f}", label=f"eta={f['eta']:g}"
        )
    audit.evidence(
        f"Fresh runs (T = 0) from {fresh[0]['recovery'].size} D0 draws per step size, b = {fresh[0]['b']}, H = "
        f"{fresh[0]['horizon']:g}, risk every 10 updates: every run succeeds by t0 = {t0:.1f}, far inside H."
    )
    audit.evidence(
        PW.literal_all(
            audit,
            alternative="fresh failures at a rate of 1% at a moderate step size",
            n=total,
            rate=0.01,
            label="fresh failures",
        )
    )
    assert fails == 0


def _cor3_fit(runs: list[dict]) -> tuple[float, float, int]:
    """Cloglog fit of recovery at one source time: one intercept per draw, a common slope in log eta.

    Returns the slope d log Lambda / d log eta, its SE, and the number of draws fitted (a draw that recovers in every
    stream at every eta, or in none, has no finite intercept and says nothing about the slope: it is left out).
    """
    counts: dict[int, list[tuple[int, int]]] = {}
    for w in runs:
        counts.setdefault(w["init_id"], []).append((_count(w["recovery"][0]), w["recovery"][0].size))
    draws = sorted(i for i, c in counts.items() if 0 < sum(k for k, _ in c) < sum(m for _, m in c))
    rows, k, n = [], [], []
    for w in runs:
        if w["init_id"] not in draws:
            continue
        x = np.zeros(len(draws) + 1)
        x[draws.index(w["init_id"])], x[-1] = 1.0, math.log(w["eta"])
        rows.append(x)
        k.append(_count(w["recovery"][0]))
        n.append(w["recovery"][0].size)
    fit = S.cloglog_fit(k, n, np.array(rows))  # log Lambda = a_draw + beta log eta
    return float(fit.coef[-1]), float(fit.se()[-1]), len(draws)


@claim(
    "RG-C3.eta",
    reading="for fixed theta0 and T, P(tau_w(T) <= t1) >= 1 - C e^{-c/eta}: checked at each of several source times "
    "T at b = 1 (the hardest batch) and, since the constants are independent of b, at (b > 1, T) settings (b = 4 "
    "at T = 150 in the quick profile; also b = 16 and b = 4 at T = 200 in the full one); t1 = H = 100, on a "
    "step-size grid per (b, T) (factors of 2, placed where the failure share is measurable: the threshold eta_2 "
    "may depend on T), on our not-near-opposite D0 draws. In the Poisson account of the failures (Section 8) the "
    "failure share is e^{-Lambda}, so the corollary's rate needs the intensity Lambda to grow at least like 1/eta: "
    "per (b, T), the cloglog slope of recovery in log eta at most -1 (not significantly above it, Bonferroni over "
    "the (b, T) settings) and the failure share falling with eta (the smallest step's 95% Clopper-Pearson interval "
    "below the largest step's)",
)
@uses("rare_gates.theorem1")
def test_corollary3_eta_to_zero(audit, results):
    cor3 = results["rare_gates.theorem1"]["cor3"]
    by_time: dict[tuple[int, float], list[dict]] = {}
    for w in cor3:
        by_time.setdefault((int(w["b"]), float(w["times"][0])), []).append(w)
    times = sorted(by_time)
    z = E.z_bonferroni(len(times))  # one-sided 2.5% / (number of (b, T) settings) per slope bound
    ok_slope, ok_fall, powers = [], [], []
    for b, t in times:
        runs = by_time[b, t]
        fails: dict[float, list[int]] = {}
        for w in runs:
            rec = w["recovery"][0]
            f = fails.setdefault(float(w["eta"]), [0, 0])
            f[0] += rec.size - _count(rec)
            f[1] += rec.size
        etas = sorted(fails, reverse=True)
        cps = [S.clopper_pearson_interval(*fails[e]) for e in etas]
        shares = [fails[e][0] / fails[e][1] for e in etas]
        audit.ours(
            "; ".join(
                f"eta = {e:g}: {fails[e][0]}/{fails[e][1]} = {sh:.4f} [{lo:.4f}, {hi:.4f}]"
                for e, sh, (lo, hi) in zip(etas, shares, cps)
            ),
            label=f"b = {b}, T = {t:g}: failures by t1 = {E.WARM_HORIZON:g} (95% CP)",
        )
        beta, se, n_fit = _cor3_fit(runs)
        audit.ours(
            f"{beta:.3f} +- {z * se:.3f} ({n_fit} draws fitted)",
            label=f"b = {b}, T = {t:g}: cloglog slope of recovery in log eta (d log Lambda / d log eta, "
            "Bonferroni 95%)",
        )
        ok_slope.append(beta - z * se <= -1.0)
        ok_fall.append(all(a >= b for a, b in zip(shares, shares[1:])) and cps[-1][1] < cps[0][0])
        powers.append(float(stats.norm.cdf(0.5 / se - z)))  # P(beta_hat - z SE > -1) at beta = -1/2
    n_draws = len({w["init_id"] for w in cor3})
    audit.evidence(
        f"Warm runs at (b, T) = {', '.join(f'({b}, {t:g})' for b, t in times)} (source SGD and target SGD with the "
        f"same b and eta; independent seeds per (b, T)) from {n_draws} D0 draws, {cor3[0]['recovery'].shape[1]} "
        "target streams per (draw, b, T, eta); per (b, T) the recovery counts are fitted by a cloglog regression with "
        "one intercept per draw and a common slope in log eta. A failure share C e^{-c/eta} needs Lambda >= c/eta - "
        f"log C, a slope of at most -1; the check fails at a (b, T) whose slope's lower bound (z = {z:.3f}: "
        f"one-sided 2.5% over {len(times)} settings) lies above -1, or whose failure share does not fall with eta. "
        f"Slope at most -1 at {sum(ok_slope)}/{len(times)} settings; failure share falling at "
        f"{sum(ok_fall)}/{len(times)}. The grids move to smaller steps as T grows (the step at which a given share "
        "is reached shrinks like e^{-lambda T}), the non-uniformity in T that the text notes after the corollary; at "
        "b > 1 they move to larger steps by about the factor b (the intensity grows like b delta_T/eta), while the "
        "slope in log eta, the corollary's rate, is the same."
    )
    weakest = int(np.argmin(powers))
    audit.evidence(
        PW.record(
            audit,
            powers[weakest],
            alternative="an intensity growing only like eta^-1/2 (slope -1/2; failures decaying like "
            "e^{-c/sqrt(eta)}) at a (b, T) setting",
            label="eta slope, weakest (b, T)",
            method=f"normal approximation with each (b, T)'s fitted SE: P(slope - {z:.3f} SE > -1) at slope -1/2, the "
            f"smallest over the settings ((b, T) = {times[weakest]}; per setting: "
            + ", ".join(f"{p:.3f}" for p in powers)
            + ")",
        )
    )
    assert len({t for _, t in times}) >= 2
    assert all(ok_slope)
    assert all(ok_fall)


# --- Figure 2 --------------------------------------------------------------------------------------------


@claim(
    "RG-sim.fig2.offset",
    reading=READING_OWN + "; the paper's c is itself a median over 64 inits: ours and "
    "theirs compared as two estimates, our cluster-bootstrap SE over inits, theirs taken as ours x sqrt(n/64), "
    "|difference| <= 1.96 SE_diff + 0.05 (the rounding of 3.9)",
)
@uses("rare_gates.table1")
def test_fig2_median_offset(audit, results):
    table1 = results["rare_gates.table1"]
    off = E.gd_offsets(table1)  # (2 sources, 4 T, n)
    n = off.shape[2]
    pooled = float(np.nanmedian(off))
    by_init = np.moveaxis(off, 2, 0).reshape(n, -1)
    lo, hi = E.cluster_bootstrap(by_init, lambda v: float(np.nanmedian(v)))
    se = (hi - lo) / (2 * E.Z95)
    se_diff = se * math.sqrt(1 + n / 64)
    audit.ours(pooled, label="median offset over T > 0 and both sources")
    audit.ours(
        f"[{lo:.3f}, {hi:.3f}] (SE {se:.3f}; SE of the difference {se_diff:.3f})",
        label="95% cluster-bootstrap interval",
    )
    audit.ours(f"{np.nanmin(off):.2f} .. {np.nanmax(off):.2f}", label="range of offsets")
    audit.evidence(
        f"Offsets tau_GD - A^-1 log(1/delta_T), A = 2/pi - lambda, over the {off.size} target-GD records "
        f"(T = 100..400, both sources) of our {n} draws. The offset depends on the checkpoint's allocation "
        f"omega_1 : omega_2 (from {np.nanmin(off):.2f}, balanced units, up to {np.nanmax(off):.1f}, a nearly "
        "inactive unit), so the median is a property of the initialisation law with a large spread between sets "
        "of 64 draws; records of one init are dependent, hence the cluster bootstrap (2000 resamples; SE from the "
        f"95% interval's width). Literal check (3.9 inside our 95% interval): "
        f"{'holds' if lo <= 3.95 and hi >= 3.85 else 'fails'}."
    )
    # Figure 1's trajectory (RG-19.fig1, unverifiable: one private trajectory): the offset its two printed numbers
    # imply, beside ours; reported, not asserted (one checkpoint's offset says nothing about the median)
    t_fig1, angle_fig1 = (float(v) for v in paper_numbers("RG-19.fig1"))
    c_fig1 = t_fig1 - math.log(1.0 / angle_fig1) / A
    audit.ours(
        f"{c_fig1:.3f} ({100 * float(np.mean(off[np.isfinite(off)] < c_fig1)):.0f}% of our offsets lie below it)",
        label=f"offset implied by Figure 1's trajectory (t ~ {t_fig1:g} from angle {angle_fig1:g}; RG-19.fig1)",
    )
    audit.figure(F.figure2(table1, pooled), "rg_fig2")
    # the offset of balanced constructed checkpoints, from the paper's own GD time 22.1 at delta0 = 1e-5
    c_bal = 22.1 - math.log(1e5) / A

    def offset_power(se_d):
        return S.power_normal(3.9 - c_bal, se_d, E.Z95 * se_d + 0.05)

    spread = se * math.sqrt(n)  # SE of one init's contribution: SE(m draws) = spread / sqrt(m)
    ours_n = S.smallest_n(lambda m: offset_power(spread * math.sqrt(1 / m + 1 / 64)), n_min=n, n_max=PW.N_MAX_OURS)
    equal = S.smallest_n(lambda m: offset_power(spread * math.sqrt(2 / m)), n_min=n, n_max=PW.N_MAX_OURS)
    decide = (
        f"{ours_n} draws of ours against the paper's 64 would decide"
        if ours_n
        else f"no number of our draws decides against the paper's 64 (power "
        f"{offset_power(spread / 8):.2f} as ours -> oo); {equal} draws on both sides would"
    )
    audit.evidence(
        PW.record(
            audit,
            offset_power(se_diff),
            alternative=f"c = {c_bal:.2f}, the offset of balanced checkpoints (the "
            "paper's GD time 22.1 at delta0 = 1e-5 minus A^-1 log(1e5); RG-19.gdspacing), from which the paper's 3.9 "
            "is distinct",
            method=f"normal approximation of the difference of the two medians, SE {se_diff:.3f} (ours from the "
            f"cluster bootstrap, the paper's as ours x sqrt(n/64)); the check fails when |difference| > 1.96 SE + 0.05",
            decide=decide,
        )
    )
    assert abs(pooled - 3.9) <= E.Z95 * se_diff + 0.05


@claim("RG-sim.fig2.law", reading=READING_OWN)
@uses("rare_gates.table1")
def test_fig2_hitting_time_law(audit, results):
    table1 = results["rare_gates.table1"]
    x = np.log(1.0 / table1["sgd"]["angle"][1:])
    y = table1["sgd"]["gd_recovery"][1:]
    slopes = np.array([np.polyfit(x[:, i], y[:, i], 1)[0] for i in range(x.shape[1])])
    med = float(np.median(slopes))
    audit.ours(med, label="median over inits of d tau_GD / d log(1/delta_T)")
    audit.ours(1.0 / A, label="1/A")
    audit.ours(f"{np.mean(np.abs(slopes * A - 1) < 0.01):.3f}", label="fraction of inits within 1% of 1/A")
    audit.evidence(
        "For each of our inits, least-squares slope of the target-GD hitting time against log(1/delta_T) over its "
        "source-SGD checkpoints T = 100..400; tolerance 1% on the median: the rate A holds at the balanced clone "
        "as delta -> 0, and inits with a nearly inactive unit (slope far from 1/A) are a minority."
    )
    q = 2 / math.pi  # the linear rate without the weight-decay term
    scaled = slopes * (1 / q) / med  # our inits' slopes with their median moved to 1/q

    def trial(rng):
        return abs(float(np.median(scaled[rng.integers(0, scaled.size, scaled.size)])) * A - 1.0) >= 0.01

    sim = S.power_by_simulation(trial, reps=400, seed=E.SEEDS["bootstrap"])
    audit.evidence(
        PW.record(
            audit,
            sim.power,
            alternative=f"hitting times growing as log(1/delta_T)/q with q = 2/pi, the rate without "
            f"weight decay (1/q is {100 * abs(A / q - 1):.1f}% {'below' if q > A else 'above'} 1/A)",
            method=f"simulation: our {scaled.size} per-init slopes rescaled to median 1/q, resampled with replacement "
            f"(the check on each resample); {sim}",
        )
    )
    assert abs(med * A - 1.0) < 0.01


# --- GD from constructed checkpoints; step halving ----------------------------------------------------------


GD_QUOTED = tuple(paper_numbers("RG-sim.gd.constructed"))  # 22.1, 18.2, 14.3 (Appendix 19)


def _fill_alternative(fitted: dict, text: str) -> None:
    """Write what the one alternative of ``fitted`` gives, computed by the check, into the marker's own dict.

    The plugin reads a check's ``fitted`` dict from its marker after the call, so the value the check computes is the
    one the report lists; before the check runs (or if it fails first) the placeholder says so.
    """
    (key,) = fitted
    fitted[key] = text


GD_CONSTRUCTED_ALT = {
    "risk checked every 10 updates (Appendix 19's protocol for these long-horizon runs)": "not computed: the check "
    "did not reach its alternative"
}


@claim(
    "RG-sim.gd.constructed",
    reading="hitting times resolved to single updates (risk checked every update, as "
    "in the Figure 3(a) cells) and rounded to 0.1",
    fitted=GD_CONSTRUCTED_ALT,
)
def test_gd_constructed(audit, perturbation):
    res = E.gd_constructed(perturb=perturbation)
    every1, every10 = res["hit"][1], res["hit"][10]
    quoted = ", ".join(GD_QUOTED)
    _fill_alternative(
        GD_CONSTRUCTED_ALT,
        f"hitting times {', '.join(f'{v:.2f}' for v in every10)} against the quoted {quoted} ("
        f"{sum(rounds_to(v, q) for v, q in zip(every10, GD_QUOTED))} of 3 round to the quotes)",
    )
    audit.ours(every1, label="risk checked every update")
    audit.ours(every10, label="risk checked every 10 updates")
    fits = {k: [rounds_to(v, q) for v, q in zip(res["hit"][k], GD_QUOTED)] for k in (1, 10)}
    misses10 = [f"{v:.2f} vs {q}" for v, q, ok in zip(every10, GD_QUOTED, fits[10]) if not ok]
    audit.evidence(
        f"simulate_gd from the balanced checkpoint at amplitude 0.9, eta = {res['eta']:g}, lambda = {LAM:g}, exact "
        "population gradient (deterministic); compared after rounding to the paper's one decimal. Fitted reading: "
        "Appendix 19 states risk checks every ten updates for these runs; checked every update the hitting times "
        f"are {', '.join(f'{v:.2f}' for v in every1)} ({'all' if all(fits[1]) else 'not all'} rounding to the "
        f"quoted {', '.join(GD_QUOTED)}); checked every 10 updates (the stated protocol) they are "
        f"{', '.join(f'{v:.2f}' for v in every10)}: {'; '.join(misses10) or 'all round to the quotes too'}."
    )
    assert fits[1] == [True] * 3


GD_HALVING_ALT = {
    "risk checked every 10 updates (Table 1's protocol, Appendix 19)": "not computed: the check did not reach its "
    "alternative"
}


@claim(
    "RG-sim.gd.halving",
    reading=READING_OWN + "; risk checked every update (time resolution eta), so changes "
    "of a few 1e-3 are resolved; compared after rounding to the paper's 3 decimals; 'at most' over the paper's eight "
    "saved draws (not ours) read for the law of D0: the change is at most the quoted bound at every one of our "
    "draws (GD is deterministic given a draw, so the only randomness is which draws are taken)",
    fitted=GD_HALVING_ALT,
)
@uses("rare_gates.halving")
def test_gd_step_halving(audit, results):
    halving = results["rare_gates.halving"]
    h = halving["hit"]
    d1, d2 = float(np.max(np.abs(h[0] - h[1]))), float(np.max(np.abs(h[1] - h[2])))
    coarse = np.ceil(h / (10 * np.array(halving["etas"])[:, None]) - 1e-9) * 10 * np.array(halving["etas"])[:, None]
    c1, c2 = float(np.max(np.abs(coarse[0] - coarse[1]))), float(np.max(np.abs(coarse[1] - coarse[2])))
    audit.ours(d1, label="max |tau(1e-3) - tau(5e-4)|")
    audit.ours(d2, label="max |tau(5e-4) - tau(2.5e-4)|")
    audit.ours(f"{c1:.4f}, {c2:.4f}", label="the same with Table 1's checks every 10 updates")
    coarse_ok = round(c1, 3) <= 0.006 and round(c2, 3) <= 0.003
    _fill_alternative(
        GD_HALVING_ALT,
        f"changes {c1:.4f} and {c2:.4f} (the crossing at the next multiple of 10 updates), which "
        f"{'meet' if coarse_ok else 'exceed'} the quoted 0.006 and 0.003",
    )
    audit.evidence(
        f"GD in both phases (T = {halving['T']:g}) from the first {h.shape[1]} of our D0 draws at eta = "
        f"{', '.join(f'{e:g}' for e in halving['etas'])}; target hitting times with risk checked every update. The "
        "coarse line assumes the risk decreases through the crossing (GD near recovery), so a check every 10 "
        "updates hits at the next multiple of 10 updates. First-order convergence is checked as d2 < d1. Fitted "
        f"reading: Table 1's stated checks every 10 updates give changes {c1:.4f} and {c2:.4f}, which "
        f"{'also meet' if coarse_ok else 'exceed'} the quoted 0.006 and 0.003; every update gives {d1:.4f} and "
        f"{d2:.4f}."
    )
    n_draws = int(h.shape[1])
    audit.evidence(
        "GD from a given draw is deterministic (the population gradient), so each draw's two changes are exact; the "
        f"maximum over our {n_draws} draws stands for the maximum over the paper's {n_draws} saved draws (other draws "
        "of the same law D0). "
        + PW.literal_all(
            audit,
            alternative="D0 draws whose change under halving exceeds the quoted bound (0.006 or 0.003 after rounding) "
            f"in a quarter of the law: at that rate the paper's own {n_draws} draws would all meet the bound with "
            f"probability {(1 - UNIVERSAL_ALT) ** n_draws:.2f}",
            n=n_draws,
            rate=UNIVERSAL_ALT,
            label="every draw",
        )
    )
    assert round(d1, 3) <= 0.006 and round(d2, 3) <= 0.003
    assert d2 < d1


# --- Table 2, Figure 3(b) ------------------------------------------------------------------------------------


Z_T2 = E.z_bonferroni(15)  # Table 2: 5 settings x 3 horizons, family-wise 95%


@claim(
    "RG-sim.T2.fractions",
    reading="our own 128 streams per setting, compared with the paper's 128 as two "
    "independent samples (Newcombe interval, Bonferroni over the 15 cells); power per setting against a slip in that "
    "setting alone, the weakest setting's recorded",
)
@uses("rare_gates.table2", "rare_gates.repeat")
def test_table2_fractions(audit, results):
    table2 = results["rare_gates.table2"]
    # the large sample of the most discordant setting (RG-sim.T2.repeat) against the paper's row, at t <= 200
    b1, d1 = E.REPEAT_DISCORDANT
    big = [r for r in results["rare_gates.repeat"] if (r["b"], r["delta0"]) == (b1, d1) and r["check_every"] == 10]
    big = [r for r in big if r["recovery"].size == max(x["recovery"].size for x in big)]
    k_big = sum(E.recovered_by(r["recovery"], 200) for r in big)
    n_big = sum(r["recovery"].size for r in big)
    k_row = _k_of(PAPER_T2[(b1, d1)][1], 128)
    p_big = E.fisher_p(k_big, n_big, k_row, 128)
    comps, misses = [], []
    for s in table2:
        n = s["recovery"].size
        row = []
        for t, q in zip((60, 200, 450), PAPER_T2[(s["b"], s["delta0"])]):
            c = _compare(E.recovered_by(s["recovery"], t), n, _k_of(q, 128), 128, Z_T2)
            comps.append(c)
            row.append(f"{c['ours']:.3f}")
            if not c["literal"]:
                misses.append(f"(b={s['b']}, delta0={s['delta0']:g}, t<={t})")
        audit.ours(
            ", ".join(row) + f" (paper {', '.join(PAPER_T2[(s['b'], s['delta0'])])}); t<=450: " + _fmt(comps[-1]),
            label=f"b={s['b']}, delta0={s['delta0']:g}",
        )
    audit.ours(
        f"{k_big}/{n_big} = {k_big / n_big:.3f} vs paper {k_row}/128 (Fisher p = {p_big:.3f})",
        label=f"large sample at b={b1}, delta0={d1:g}, t <= 200 (RG-sim.T2.repeat)",
    )
    s0 = table2[0]
    audit.evidence(
        f"{len(misses)} of the 15 cells fail the literal check; the cells of one setting are nested (t <= 60, 200, "
        f"450 of the same streams), so the Bonferroni over 15 is conservative. At b = {b1}, delta0 = {d1:g} our row "
        f"is far from the paper's, but our large sample of that setting ({n_big} streams of two seeds, "
        f"RG-sim.T2.repeat) gives {k_big / n_big:.3f} against their {k_row}/128 (Fisher p = {p_big:.3f}): our row "
        "is a high draw. The power below is per setting, against a slip in that setting alone (a factor 2 in its "
        "effective intensity, the other four at the paper's values): the weakest setting's is the claim's power (a "
        "slip in every setting at once would be seen far more easily)."
    )
    audit.evidence(
        f"{s0['recovery'].size} streams per setting, eta = {s0['eta']:g}, lambda = {LAM:g}, risk every 10 updates, "
        f"H = {s0['horizon']:g}; two-sample Newcombe interval for ours - paper at z = {Z_T2:.3f} (Bonferroni over "
        f"15). Literal check (paper's fraction inside our 95% Wilson interval) fails in: "
        f"{', '.join(misses) or 'none'}."
    )
    # per-setting power against a single-setting slip: that setting's three nested cells (t <= 60, 200, 450 of the
    # same streams) form one dependent group, so its power is at least the largest cell power; the minimum over the
    # five settings is the claim's power (each call records one; the verdict takes the weakest)
    for s in table2:
        key = (s["b"], s["delta0"])
        audit.evidence(
            PW.comparison(
                audit,
                alternative=f"a factor 2 in the effective intensity of the setting b = {key[0]}, delta0 = {key[1]:g} "
                "alone (a single-setting slip): see verify.rare_gates.power",
                cells=[(_k_of(q, 128) / 128, s["recovery"].size, 128, key) for q in PAPER_T2[key]],
                directions=PW.factor(2),
                z=Z_T2,
                label=f"b={key[0]}, delta0={key[1]:g}",
            )
        )
    assert all(c["consistent"] for c in comps)


T2_LATE = max(PAPER_LAST.values())  # 'no recovery after t ~ 112' read at the paper's latest last recovery, 112.1


def _t2_late(runs) -> tuple[list[float], int, int, float]:
    """Our recoveries after t = 112.1 (times), all our recoveries, the paper's recoveries and the Fisher p of its 0."""
    late = sorted(float(t) for s in runs for t in s["recovery"] if np.isfinite(t) and t > T2_LATE + 1e-9)
    n_rec = sum(_count(s["recovery"]) for s in runs)
    paper_rec = sum(_k_of(PAPER_T2[k][2], 128) for k in PAPER_T2)
    return late, n_rec, paper_rec, E.fisher_p(len(late), n_rec, 0, paper_rec)


def _frozen_late_share(runs) -> float:
    """The share of recoveries by t = 450 after t = 112.1 under the frozen-angle reference 1 - e^{-Gamma t/pi}.

    The competing account with no saturation (the paper's own reference): each run recovers at the constant rate
    Gamma/pi, so a setting's recoveries by H spread over [0, H]; pooled over our runs of every setting.
    """
    late = sum(
        s["recovery"].size
        * (math.exp(-s["gamma"] * T2_LATE / math.pi) - math.exp(-s["gamma"] * s["horizon"] / math.pi))
        for s in runs
    )
    total = sum(s["recovery"].size * -math.expm1(-s["gamma"] * s["horizon"] / math.pi) for s in runs)
    return late / total


def _t2_late_rate(audit, runs) -> bool:
    """Our side of 'no recovery after t ~ 112': the late share's upper bound below the frozen-angle account's share."""
    late, n_rec, _paper_rec, _p = _t2_late(runs)
    r = _frozen_late_share(runs)
    return _rate_check(
        audit,
        len(late),
        n_rec,
        r,
        side="upper",
        what="share of our recoveries after t = 112.1",
        alternative=f"no saturation: recoveries after t = 112.1 at the share {r:.3f} of those by t = 450 that the "
        "frozen-angle reference 1 - exp(-Gamma t/pi) gives over our runs of the five settings",
        label="late share",
    )


def _t2_late_paper(runs) -> None:
    late, n_rec, paper_rec, p = _t2_late(runs)
    _fisher_side(len(late), n_rec, p, f"recoveries after t = {T2_LATE:g}", f"0 of {paper_rec}", 0.05)


def _t2_late_values(audit, late: list[float], n_rec: int, paper_rec: int, p: float, shown: int | None = None) -> None:
    """Record our recoveries after t = 112.1 against the paper's none, and whether the literal none holds in our
    sample (the first ``shown`` late times listed, all when None)."""
    audit.ours(f"{len(late)}/{n_rec} (paper 0/{paper_rec}; Fisher p = {p:.3f})", label="recoveries after t = 112.1")
    more = ", ..." if shown is not None and len(late) > shown else ""
    audit.ours(
        "holds in our sample"
        if not late
        else f"not in our sample: {len(late)} of our {n_rec} recoveries after t = 112.1 (at t = "
        f"{', '.join(f'{t:.1f}' for t in late[:shown])}{more}); at that rate the paper's {paper_rec} would hold none "
        f"with probability {(1 - len(late) / n_rec) ** paper_rec:.2f}",
        label="the literal 'no recovery after t ~ 112'",
    )


T2_FROZEN_QUOTED = paper_numbers("RG-sim.T2.saturation")[2]  # 'the frozen-angle reference exceeds 0.63 by t = 200'
# the frozen-angle comparison's false-alarm rate per setting: P(upper 95% Wilson bound at t = 200 >= the frozen-angle
# reference) when recovery follows the decaying-angle reference; a setting is compared only below this rate (fixed
# before any run: at 1e-3 a chance red run over the five settings is below 0.5%)
T2_FROZEN_ALARM = 1e-3


def _t2_frozen_alarm(gamma: float, n: int) -> tuple[float, float]:
    """The frozen-angle comparison's false-alarm rate at n streams and the decaying-angle reference by t = 200.

    Decaying angle (Poisson account, intensity Gamma e^{-lambda t}/pi): 1 - exp(-Gamma (1 - e^{-200 lambda})/(pi
    lambda)); the assertion 'upper Wilson < frozen reference' fails by chance with P(upper >= frozen) at that rate.
    """
    frozen = -math.expm1(-gamma * 200 / math.pi)
    decaying = -math.expm1(-gamma * -math.expm1(-200 * LAM) / (math.pi * LAM))
    his = S.wilson_intervals(np.arange(n + 1), n)[1]
    return S.power_of_region(n, decaying, his >= frozen), decaying


T2_SATURATION_READING = (
    "'no recovery after t ~ 112' as a statement about the paper's sample: ours is the saturation of the law, no "
    "recovery in (200, 450] (Table 2's equal t <= 200 and t <= 450 columns), recovery by t = 200 below the "
    "frozen-angle reference (in each setting where our streams can tell it from the decaying-angle reference), and "
    "the share of recoveries after t = 112.1 below the frozen-angle account's share "
    "(one-sided 95% Clopper-Pearson bound); the paper's literal 0 is compared with our share by Fisher's exact test "
    "at 5% (its side of the claim: a rejection is a discrepancy, not a failure of ours)"
)
T2_SATURATION_REASON = _sample_reason(
    "the paper's none of its recoveries after t = 112.1 against our share, two-sided Fisher exact below 5%",
    "they do not reject (the quick profile)",
)


@claim("RG-sim.T2.saturation", reading=T2_SATURATION_READING)
@uses("rare_gates.table2")
def test_table2_saturation(audit, results, sizes):
    table2 = results["rare_gates.table2"]
    late_200 = sum(int(np.sum(s["recovery"] > 200 + 1e-9)) for s in table2)
    late_times, n_rec, paper_rec, p = _t2_late(table2)
    late_112 = len(late_times)
    below_frozen, refs, alarms, told = [], [], [], []
    for s in table2:
        n = s["recovery"].size
        k200 = E.recovered_by(s["recovery"], 200)
        _, hi = E.wilson(k200, n)
        ref = -math.expm1(-s["gamma"] * 200 / math.pi)
        refs.append(ref)
        # the comparison is made only where the frozen-angle reference can be told from the decaying-angle one at n
        # streams: its false-alarm rate (P(upper Wilson >= frozen) at the decaying reference) below T2_FROZEN_ALARM
        alarm, decaying = _t2_frozen_alarm(s["gamma"], n)
        compared = alarm < T2_FROZEN_ALARM
        if compared:
            below_frozen.append(hi < ref)
            alarms.append(alarm)
            told.append(s)
        audit.ours(
            f"by t = 200: {k200}/{n} (upper 95% Wilson {hi:.3f}; frozen-angle reference {ref:.3f}, decaying-angle "
            f"{decaying:.3f}"
            + ("" if compared else f"; not compared at {n} streams: not told apart, false alarm {alarm:.2f}")
            + f"); last recovery {np.nanmax(s['recovery']):.1f} (the paper's last times: RG-sim.T2.last)",
            label=f"b={s['b']}, delta0={s['delta0']:g}",
        )
    audit.ours(late_200, label="recoveries in (200, 450]")
    _t2_late_values(audit, late_times, n_rec, paper_rec, p)
    # expected disagreements after t = 200 under the decaying angle, over the runs still going at t = 200: each
    # has intensity int_200^oo b delta0 e^{-lambda t}/(pi eta) dt = Gamma e^{-200 lambda}/(pi lambda)
    going = {(s["b"], s["delta0"]): s["recovery"].size - E.recovered_by(s["recovery"], 200) for s in table2}
    n_runs = sum(going.values())
    late_expected = sum(
        going[(s["b"], s["delta0"])] * s["gamma"] * math.exp(-200 * LAM) / (math.pi * LAM) for s in table2
    )
    audit.evidence(
        f"Table 2 runs (streams stop at recovery, others run to t = {table2[0]['horizon']:g}). Under the decaying-"
        f"angle reference the expected number of disagreements after t = 200 over the {n_runs} runs still going "
        f"then is "
        f"{late_expected:.2g} (the chance of a red run from that part: 1 - e^{{-{late_expected:.2g}}} = "
        f"{-math.expm1(-late_expected):.2g}): the decaying angle itself predicts none in (200, 450], so that part can "
        "fail only "
        "through a non-decaying angle or a bug, not against a nearby alternative; 'no recovery after t ~ 112' is "
        "compared through the count of later recoveries (the paper's five last recovery times, sample maxima, are "
        "RG-sim.T2.last). Saturation: our upper 95% Wilson bound at t = 200 below the frozen-angle reference "
        f"1 - exp(-Gamma t/pi) in every setting where that reference can be told from the decaying-angle one "
        f"1 - exp(-Gamma (1 - e^{{-200 lambda}})/(pi lambda)) at our streams ({len(told)} of {len(table2)}: the "
        f"assertion's false-alarm rate at the decaying reference below {T2_FROZEN_ALARM:g} in each; summed over them "
        f"{sum(alarms):.2g}; where it is not, the frozen reference is within the Wilson bound of all streams "
        f"recovering and the assertion would only say 'not all recovered'); the frozen-angle reference is at least "
        f"{min(refs):.3f} by t = 200 in every setting (the quoted 'exceeds {T2_FROZEN_QUOTED}': the closed form at "
        "each setting's Gamma = b delta0/eta, exact)."
    )
    audit.evidence(
        f"The literal 'no recovery after t ~ 112' holds in our sample: none of our {n_rec} recoveries is later than "
        f"t = {T2_LATE:g}."
        if not late_times
        else f"Found: the literal 'no recovery after t ~ 112' does not hold in our sample: {late_112} of our {n_rec} "
        f"recoveries {'comes' if late_112 == 1 else 'come'} after t = {T2_LATE:g} (at t = "
        f"{', '.join(f'{t:.1f}' for t in late_times)}), against the paper's 0 of {paper_rec} (two-sided Fisher "
        f"p = {p:.3f}, not a rejection at 5%; at our rate the paper's {paper_rec} would hold none with probability "
        f"{(1 - late_112 / n_rec) ** paper_rec:.2f}). Our side reads the statement as a rate, below the frozen-angle "
        "account's share (checked below); the paper's literal none is its side of the claim."
    )
    if sizes.saturation_streams == 0:
        q = PW.exception_rate(paper_rec)
        full = E.sizes("full")
        n_full = round(n_rec * (full.table2_streams + full.saturation_streams) / sizes.table2_streams)
        audit.evidence(
            _late_comparison(audit, n_rec, paper_rec)
            + f" The full profile decides it: {full.saturation_streams} further streams per setting "
            f"(rare_gates.saturation, {full.table2_streams + full.saturation_streams} in all) give about {n_full} "
            f"recoveries, power {S.power_two_sample(q, n_full, 0.0, paper_rec, test='fisher'):.2f} "
            "(test_table2_late_recoveries)."
        )
    else:
        audit.evidence(
            "The late-recovery comparison at a deciding size, with its power, is test_table2_late_recoveries "
            f"({sizes.saturation_streams} further streams per setting)."
        )
    frozen_powers = []
    for s in told:
        n = s["recovery"].size
        ref = -math.expm1(-s["gamma"] * 200 / math.pi)
        his = S.wilson_intervals(np.arange(n + 1), n)[1]
        frozen_powers.append(S.power_of_region(n, ref, his >= ref))
    frozen_power = 1 - math.prod(1 - v for v in frozen_powers)
    audit.evidence(
        PW.record(
            audit,
            frozen_power,
            alternative="no saturation: recovery by t = 200 at the frozen-angle reference in every setting",
            label="saturation",
            method="exact: per compared setting P(upper 95% Wilson bound >= reference) at p = reference, "
            f"{', '.join(f'{v:.3f}' for v in frozen_powers)}; 1 - product over the independent settings",
        )
    )
    audit.figure(
        F.recovery_curve_figure(
            [s for s in table2 if (s["b"], s["delta0"]) in ((16, 1e-5), (16, 1e-4), (64, 1e-5))],
            horizon=450.0,
            paper={k: [float(q) for q in v] for k, v in PAPER_T2.items()},
        ),
        "rg_fig3b",
    )
    late_ok = _t2_late_rate(audit, table2)
    assert late_200 == 0 and late_ok and all(below_frozen)
    assert min(refs) > float(T2_FROZEN_QUOTED)  # the frozen-angle reference exceeds the quoted 0.63 by t = 200


@discrepancy("RG-sim.T2.saturation", reason=T2_SATURATION_REASON, reading=T2_SATURATION_READING)
@uses("rare_gates.table2")
def test_table2_saturation_paper(results):
    _t2_late_paper(results["rare_gates.table2"])


T2_LATE_READING = (
    T2_SATURATION_READING + "; at a size that decides the comparison: Table 2's streams and the further streams of "
    "rare_gates.saturation (full profile only)"
)


@claim("RG-sim.T2.saturation", reading=T2_LATE_READING)
@uses("rare_gates.table2", "rare_gates.saturation")
def test_table2_late_recoveries(audit, results):
    runs = [*results["rare_gates.table2"], *results["rare_gates.saturation"]]
    late, n_rec, paper_rec, p = _t2_late(runs)
    n_runs = sum(s["recovery"].size for s in runs)
    _t2_late_values(audit, late, n_rec, paper_rec, p, shown=12)
    audit.evidence(
        f"{n_runs} runs of the five Table 2 settings to t = 450 (Table 2's streams and further ones of each setting, "
        f"risk every 10 updates), {n_rec} recoveries. The paper's none of {paper_rec} is compared with our share "
        "after t = 112.1 by Fisher's exact test (the paper's side); ours: the share's upper bound below the "
        "frozen-angle account's."
    )
    audit.evidence(_late_comparison(audit, n_rec, paper_rec))
    assert _t2_late_rate(audit, runs)


@discrepancy("RG-sim.T2.saturation", reason=T2_SATURATION_REASON, reading=T2_LATE_READING)
@uses("rare_gates.table2", "rare_gates.saturation")
def test_table2_late_recoveries_paper(results):
    _t2_late_paper([*results["rare_gates.table2"], *results["rare_gates.saturation"]])


def _late_comparison(audit, n_rec: int, paper_rec: int) -> str:
    """The paper's none of ``paper_rec`` recoveries after t = 112.1 against our share of ``n_rec`` (Fisher), with its
    power against the rate at which the paper's none would have been a 1-in-100 event."""
    late_rate = PW.Exceptions("recoveries after t = 112.1", paper_rec, f"the paper's own none of {paper_rec}", digits=4)
    return late_rate.fisher(audit, n_rec, "runs", label="late recoveries")


def _last_rank_p(rec: np.ndarray, k: int, t: float) -> tuple[int, float]:
    """r, the number of our sorted recovery times ``rec`` later than the paper's last ``t`` of ``k``, and the exact
    two-sided p of the exchangeability (rank) test: under one law P(R >= r) = C(n, r)/C(n + k, r)."""
    n = rec.size
    r = int(np.sum(rec > t + 1e-9))  # our recoveries later than the paper's last
    # under one law the pooled n + k times are exchangeable: R >= r iff the top r are all ours
    p_ge = math.comb(n, r) / math.comb(n + k, r)
    p_le = 1.0 - math.comb(n, r + 1) / math.comb(n + k, r + 1)
    return r, min(1.0, 2 * min(p_ge, p_le))


def _t2_last(table2) -> list[tuple]:
    """Per setting: (label, our sorted recovery times, the paper's k, its last time t, r later than t, rank p)."""
    out = []
    for s in table2:
        key = (s["b"], s["delta0"])
        rec = np.sort(s["recovery"][np.isfinite(s["recovery"])])
        k, t = _k_of(PAPER_T2[key][2], 128), PAPER_LAST[key]
        out.append((f"b={s['b']}, delta0={s['delta0']:g}", rec, k, t, *_last_rank_p(rec, k, t)))
    return out


T2_LAST_LEVEL = 0.05 / len(E.TABLE2_SETTINGS)  # the rank tests of the five settings, Bonferroni
T2_LAST_UPPER = 0.5  # ours: the paper's last time lies in the upper half of our recovery times (a sample maximum does)
T2_LAST_READING = (
    "each printed last recovery time is the maximum of the paper's k recovery times of that setting (k from its t <= "
    "450 column of 128). Ours: in every setting the share of our recoveries later than the printed time has a "
    f"one-sided 95% Clopper-Pearson upper bound below {T2_LAST_UPPER:g} (the printed time lies in the upper half of "
    "our recovery times, as the maximum of k >= 10 draws of one law does with probability above 0.999). The paper's "
    "side: an exact exchangeability (rank) test, r, the number of our recoveries later than the paper's last, has "
    "P(R >= r) = C(n, r)/C(n + k, r) when both samples share one law; two-sided, Bonferroni over the five settings; "
    "a rejection is a discrepancy, not a failure of ours. A printed sample maximum later than ours is untestable at "
    "our sizes (the unverifiable part: the evidence gives the size that would decide); an earlier one is tested"
)
T2_LAST_REASON = _sample_reason(
    "a printed last recovery time against our recovery times of its setting, exact two-sided rank (exchangeability) "
    "test below the Bonferroni level over the five settings",
    "none rejects",
)


@claim("RG-sim.T2.last", reading=T2_LAST_READING)
@uses("rare_gates.table2")
def test_table2_last_recoveries(audit, results):
    table2 = results["rare_gates.table2"]
    rows = _t2_last(table2)
    uppers = []
    for label, rec, k, t, r, pv in rows:
        lo, hi = S.clopper_pearson_interval(r, rec.size)
        uppers.append(_cp_bound(r, rec.size, "upper"))
        audit.ours(
            f"paper's last {t:g} of {k}; {r} of our {rec.size} recoveries later (our last {rec[-1]:.1f}): share "
            f"{r / rec.size:.3f}, 95% Clopper-Pearson [{lo:.3f}, {hi:.3f}], one-sided upper {uppers[-1]:.3f}; rank "
            f"test two-sided p = {pv:.3f}",
            label=label,
        )
    audit.evidence(
        "A last recovery time is a sample maximum. Ours: the share of our recoveries later than the printed time, "
        f"whose one-sided 95% Clopper-Pearson upper bound must lie below {T2_LAST_UPPER:g} in every setting (a maximum "
        "of k draws lies above a fraction 1/2 of its law with probability 1 - 2^-k). The paper's side: if the paper's "
        "k and our n recovery times of a setting come from one law, the pooled times are exchangeable, and the number "
        "r of ours later than the paper's maximum has P(R >= r) = C(n, r)/C(n + k, r) and P(R <= r) = 1 - C(n, r + 1)/"
        f"C(n + k, r + 1), exactly; it rejects where a two-sided p lies below {T2_LAST_LEVEL:.3f} (Bonferroni over "
        "five)."
    )
    # ours fails in a setting once r reaches the smallest count whose upper bound is T2_LAST_UPPER or more (the bound
    # grows with r): found once per setting, so the simulation below needs no interval
    samples = [
        (rec, k, next(j for j in range(rec.size + 1) if _cp_bound(j, rec.size, "upper") >= T2_LAST_UPPER))
        for _label, rec, k, _t, _r, _pv in rows
    ]

    def rejects(rng: np.random.Generator, scale: float) -> tuple[bool, bool]:  # the paper's times ours x scale
        rank, upper = False, False
        for rec, k, r_fail in samples:
            t = scale * float(np.max(rng.choice(rec, size=k)))
            r, pv = _last_rank_p(rec, k, t)
            rank |= pv < T2_LAST_LEVEL
            upper |= r >= r_fail
        return rank, upper

    sims = {
        (f, j): S.power_by_simulation(lambda rng, f=f, j=j: rejects(rng, f)[j], reps=400, seed=E.SEEDS["bootstrap"])
        for f in (2.0, 0.5)
        for j in (0, 1)
    }
    alternative = "the paper's recovery times a factor 2 off ours (twice or half: a slip in the time scale, e.g. eta)"
    # the later direction: a printed maximum later than all n of ours has the rank p 2k/(n + k) at best, so the rank
    # test can reject it only once n > 2k/level - k recoveries of that setting; in streams, at our recovery rate
    need = min(
        (math.ceil((math.floor(2 * k / T2_LAST_LEVEL - k) + 1) * s["recovery"].size / rec.size), label)
        for s, (label, rec, k, *_rest) in zip(table2, rows)
    )
    blind = (
        "A printed sample maximum is not testable in the later direction at any size we run: a maximum later than "
        f"all of ours has the exact rank p >= 2k/(n + k), so it rejects only once n > 2k/{T2_LAST_LEVEL:.3f} - k "
        f"(at least {need[0]} streams of the easiest setting, {need[1]}, against our {table2[0]['recovery'].size}), "
        "and it cannot lie in our lower half; the max-of-k law F(t)^k with our empirical F would reject it, but "
        "only by ignoring our own tail (under one law the paper's maximum exceeds all of ours with probability "
        "k/(n + k), far above the level), so the exact rank test is that law's valid form. The earlier direction "
        "(half ours) is seen by both tests"
    )
    for j, label in ((1, "ours: upper half"), (0, "rank test")):
        audit.evidence(
            PW.record(
                audit,
                min(sims[(f, j)].power for f in (2.0, 0.5)),
                alternative=alternative,
                label=label,
                method="simulation: 400 draws of the paper's k times from our recovery times, scaled; "
                + "; ".join(f"x {f:g}: {sims[(f, j)]}" for f in (2.0, 0.5))
                + f". {blind}",
            )
        )
    assert all(u < T2_LAST_UPPER for u in uppers)


@discrepancy("RG-sim.T2.last", reason=T2_LAST_REASON, reading=T2_LAST_READING)
@uses("rare_gates.table2")
def test_table2_last_recoveries_paper(results):
    rows = _t2_last(results["rare_gates.table2"])
    _paper_sample_side(
        any(pv < T2_LAST_LEVEL for *_, pv in rows),
        "; ".join(f"{label}: {r} of our {rec.size} later than {t:g}, p = {pv:.4f}" for label, rec, _k, t, r, pv in rows)
        + f" (level {T2_LAST_LEVEL:.3f} each)",
    )


@claim("RG-sim.disfirst")
@uses("rare_gates.table1", "rare_gates.table2", "rare_gates.grid", "rare_gates.weight_decay", "rare_gates.cor5")
def test_recovery_follows_disagreement(audit, results):
    table1 = results["rare_gates.table1"]
    table2 = results["rare_gates.table2"]
    grid = results["rare_gates.grid"]
    weight_decay = results["rare_gates.weight_decay"]
    cor5 = results["rare_gates.cor5"]
    groups = {
        "Table 1 target SGD": [
            (table1[s]["sgd_recovery"].ravel(), table1[s]["sgd_first"].ravel()) for s in ("sgd", "gd")
        ],
        "Table 2": [(s["recovery"], s["first"]) for s in table2],
        "Figure 3(a)": [(c["recovery"], c["first"]) for c in grid],
        "weight-decay controls": [(w["recovery"], w["first"]) for w in weight_decay],
        "Corollary 5 design": [(a["recovery"], a["first"]) for a in (*cor5["budget"], cor5["batch"], cor5["horizon"])],
    }
    total = bad = 0
    for name, pairs in groups.items():
        k = sum(_count(r) for r, _ in pairs)
        b = sum(int(np.sum(np.isfinite(r) & ~(f <= r))) for r, f in pairs)
        total, bad = total + k, bad + b
        if k:
            audit.ours(f"{k - b}/{k}", label=f"{name}: recoveries after a sampled disagreement")
    audit.evidence(
        "Every recovery time compared with the stream's first-disagreement time (the update whose batch "
        "held the first disagreeing input, at or before the recovering check); exact, all records."
    )
    paper_t2 = sum(_k_of(v[2], 128) for v in PAPER_T2.values())  # the paper's Table 2 recoveries
    audit.evidence(
        PW.Exceptions(
            "recoveries without a preceding disagreement",
            paper_t2,
            f"'every' over the paper's {paper_t2} Table 2 recoveries",
            digits=4,
        ).literal(audit, sum(_count(s["recovery"]) for s in table2), label="Table 2 recoveries (independent streams)")
    )
    assert total > 0 and bad == 0


@claim("RG-sim.T2.unrecdis", reading="two-sample comparison with the paper's 6 of 348 (Fisher exact, 5%)")
@uses("rare_gates.table2")
def test_table2_unrecovered_disagreements(audit, results):
    table2 = results["rare_gates.table2"]
    unrec = sum(int(np.sum(~np.isfinite(s["recovery"]))) for s in table2)
    dis = sum(int(np.sum(~np.isfinite(s["recovery"]) & (s["disagreements"] > 0))) for s in table2)
    p = E.fisher_p(dis, unrec, 6, 348)
    lo, hi = E.wilson(dis, unrec)
    audit.ours(f"{dis} of {unrec} = {dis / unrec:.4f} (95% Wilson [{lo:.4f}, {hi:.4f}]; Fisher vs 6/348 p = {p:.3f})")
    audit.evidence(
        f"Unrecovered Table 2 runs through t = {table2[0]['horizon']:g} with at least one sampled disagreeing input."
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the count: the paper's 6/348 against 12/348 or 3/348",
            cells=[(6 / 348, unrec, 348, "runs")],
            directions=PW.count_factor(2),
            test="fisher",
        )
    )
    assert p >= 0.05 and dis / unrec < 0.1


EXTENDED_ALL = 640  # the paper's 'all 640 long-horizon runs' (5 settings x 128)


@claim(
    "RG-sim.T2.extended",
    reading="a check of 'the same times in all 640 runs' over the runs we replay: in the quick profile a subset to a "
    "shorter horizon (the scope line says which), so the verdict is inconclusive there by its power against a rate "
    "of differing runs at which the paper's all-640 would have been a 1-in-100 event; the full profile replays all "
    "of them through t = 1000",
)
@uses("rare_gates.extended")
def test_extended_precision(audit, sizes, results):
    extended = results["rare_gates.extended"]
    n = sum(e["ids"].size for e in extended)
    same_rec = all(np.array_equal(e["f64_recovery"], e["ext_recovery"], equal_nan=True) for e in extended)
    same_first = all(np.array_equal(e["f64_first"], e["ext_first"], equal_nan=True) for e in extended)
    events = sum(_count(e["f64_recovery"]) for e in extended), sum(_count(e["f64_first"]) for e in extended)
    total = len(E.TABLE2_SETTINGS) * sizes.table2_streams
    scope = (
        f"all {n} runs through t = {sizes.extended_horizon:g}"
        if n == total and sizes.extended_horizon >= 1000.0
        else f"a subset: {n} of the {total} runs, through t = {sizes.extended_horizon:g} (the paper: all 640 through "
        "t = 1000; the full profile runs them all)"
    )
    audit.ours(scope, label="scope")
    audit.ours(
        f"recovery times equal: {same_rec}; first-disagreement times equal: {same_first} ({events[0]} recoveries, "
        f"{events[1]} disagreements)"
    )
    audit.evidence(
        "simulate_extended (double-double, about 106-bit significand, numerics.rare_gates.dd_kernel; the paper used "
        "80-bit extended precision) replays Table 2 streams from the same random draws; exact equality of the "
        "event times with the float64 kernels. "
        + (
            f"All {n} runs of the five settings."
            if sizes.extended_per_setting is None
            else f"Per setting, up to {sizes.extended_per_setting - 1} streams that sampled a disagreement "
            "in float64 and one that did not (stream order; selection on the float64 outcome cannot bias equality)."
        )
        + " The angle floor below float64 is checked as RG-19.floor80."
    )
    # power: 'the same times in all 640 runs' fails at the first run whose times differ; against runs that differ at
    # the rate q at which the paper's all-640 would have been a 1-in-100 event, n replayed runs see one with
    # probability 1 - (1 - q)^n (an upper bound where the horizon is short of t = 1000: later differences are unseen)
    differing = PW.Exceptions(
        "runs whose recovery or first-disagreement times differ between float64 and extended precision",
        EXTENDED_ALL,
        f"the paper's 'the same in all {EXTENDED_ALL}'",
        digits=4,
    )
    q = differing.rate
    full = sizes.extended_horizon >= 1000.0
    power = -math.expm1(n * math.log1p(-q))
    need = math.ceil(math.log(1 - PW.POWER_REQUIRED) / math.log1p(-q))
    audit.evidence(
        PW.record(
            audit,
            power,
            alternative=differing.alternative,
            label="runs replayed" if full else "a subset of the runs replayed",
            method=f"exact: 1 - (1 - {q:.4f})^{n} over the {n} runs replayed through t = {sizes.extended_horizon:g}"
            + ("" if full else " (an upper bound: differences after that horizon are not seen)"),
            decide=f"{need} runs through t = 1000 would decide (the full profile replays all {EXTENDED_ALL})",
        )
    )
    assert events[0] > 0 and events[1] > 0
    assert same_rec and same_first


def _with_larger(recovery: np.ndarray, larger: dict, side: str) -> np.ndarray:
    """An experiment's own recovery times followed by its seed's further streams in rare_gates.larger (if any)."""
    return np.concatenate([recovery, larger[side]["recovery"]]) if side in larger else np.asarray(recovery)


@claim(
    "RG-sim.T2.agree",
    reading="our Figure 3(a) cell (risk every update, H = 200) and our Table 2 row (every 10 updates, t <= 450), "
    "each with the further streams of its seed (rare_gates.larger: agree_streams each, so that the ours-vs-ours "
    "comparison has power), compared with each other and each with the paper's count by Fisher exact tests",
)
@uses("rare_gates.grid", "rare_gates.table2", "rare_gates.larger")
def test_repeated_cell_agrees(audit, results):
    grid, table2, larger = results["rare_gates.grid"], results["rare_gates.table2"], results["rare_gates.larger"]
    cell = next(c for c in grid if c["b"] == 64 and c["delta0"] == 1e-4 and c["eta"] == 0.01)
    row = next(s for s in table2 if s["b"] == 64 and s["delta0"] == 1e-4)
    own = (_count(cell["recovery"]), cell["recovery"].size, E.recovered_by(row["recovery"], 450), row["recovery"].size)
    rec1 = _with_larger(cell["recovery"], larger, "agree,fig3a")
    rec2 = _with_larger(row["recovery"], larger, "agree,table2")
    k1, n1 = _count(rec1), rec1.size
    k2, n2 = E.recovered_by(rec2, 450), rec2.size
    ps = [E.fisher_p(k1, n1, k2, n2), E.fisher_p(k1, n1, 60, 64), E.fisher_p(k2, n2, 126, 128)]
    audit.ours(f"{k1}/{n1} there, {k2}/{n2} here (Fisher p = {ps[0]:.3f}; vs paper: {ps[1]:.3f}, {ps[2]:.3f})")
    audit.ours(f"{own[0]}/{own[1]} there, {own[2]}/{own[3]} here", label="the experiments' own streams")
    audit.evidence(
        "Two-sided Fisher exact tests, Bonferroni over the three pairs (1.67% each). Our cell and row include "
        f"the further streams of their seeds ({n1} and {n2} in all; the experiments' own {own[1]} and {own[3]} first)."
    )
    fisher3 = dict(test="fisher", level=0.05 / 3, directions=PW.factor(2))
    alt = "a factor 2 in the effective intensity between the two cells: see verify.rare_gates.power"
    audit.evidence(
        PW.comparison(
            audit,
            alternative=alt,
            cells=[(k2 / n2, n1, n2, "cell")],
            label="ours vs ours",
            reference="our Table 2 row",
            both_ours=True,
            **fisher3,
        )
    )
    audit.evidence(
        PW.comparison(
            audit, alternative=alt, cells=[(60 / 64, n1, 64, "cell")], label="Figure 3(a) cell vs 60/64", **fisher3
        )
    )
    audit.evidence(
        PW.comparison(
            audit, alternative=alt, cells=[(126 / 128, n2, 128, "cell")], label="Table 2 row vs 126/128", **fisher3
        )
    )
    assert all(p >= 0.05 / 3 for p in ps)


CADENCE_EFFECT = 0.005  # a check cadence that flips more than 0.5% of outcomes would matter at these sample sizes
# The small-sample pairs are a finding, reported, not asserted: the probability under one rate per setting of a
# difference at least as large (by Fisher p) in some setting is the family-wise p of the most discordant pair over
# the five settings, read at the house's 5% (a level fixed by that rule, not chosen after looking). A bug in one
# experiment would show in the large samples of the two seeds (the seeds check, with power), so no threshold on it
# enters the verdict.
PAIR_FAMILY_LEVEL = 0.05


def _pair_chance(p_obs: float, n1: int, n2: int, rate: float) -> float:
    """P(Fisher two-sided p <= p_obs) for independent Binomial(n1, rate) and Binomial(n2, rate) counts (exact)."""
    grid = S.fisher_p_grid(n1, n2)
    weight = np.outer(stats.binom.pmf(np.arange(n1 + 1), n1, rate), stats.binom.pmf(np.arange(n2 + 1), n2, rate))
    return float(weight[grid <= p_obs * (1 + 1e-9)].sum())  # 1e-9: the p-value grid's float rounding, no more


def _repeat_runs(repeat: list[dict]) -> dict:
    """(b, delta0, streams_of, check_every, streams) -> recovery times of the repeat experiment."""
    return {(r["b"], r["delta0"], r["streams_of"], r["check_every"], r["recovery"].size): r["recovery"] for r in repeat}


@claim(
    "RG-sim.T2.repeat",
    reading="'the settings repeat cells of Figure 3(a)' read as: through t = 200 both experiments estimate one "
    "recovery probability per setting, so the check cadence (every update there, every ten updates here) must not "
    "change outcomes; checked on the same streams (each experiment's streams rerun with the other's cadence). "
    "'The estimates agree' is decided on the evidence with power (see the power lines): the cadence rerun and a "
    "large sample of each experiment's seed at the most discordant setting, which must give one rate. The small "
    "samples' pair difference there (Fisher, Holm-adjusted over the five settings) is a finding of ours, reported "
    "with its significance, not asserted: the exact probability of a difference that large in some setting under "
    "one rate per setting (a family-wise p over the five settings) is read at the house's 5%, a level fixed by that "
    "rule; the verdict rests on the cadence rerun and the large samples of the two seeds",
)
@uses("rare_gates.grid", "rare_gates.table2", "rare_gates.repeat")
def test_repeated_cells_one_probability(audit, results, sizes):
    grid, table2 = results["rare_gates.grid"], results["rare_gates.table2"]
    runs = _repeat_runs(results["rare_gates.repeat"])
    n3, n2, n_big = sizes.fig3a_streams, sizes.table2_streams, sizes.repeat_streams
    flips = paired = 0
    pair_ps, pair_counts = [], []
    for b, d in E.TABLE2_SETTINGS:
        cell = next(c for c in grid if c["b"] == b and c["delta0"] == d and c["eta"] == 0.01)
        row = next(s for s in table2 if s["b"] == b and s["delta0"] == d)
        rec3 = np.isfinite(cell["recovery"])  # every update, H = 200
        rec2 = np.asarray(row["recovery"]) <= 200.0 + 1e-9  # every ten updates, by t = 200
        other3 = np.asarray(runs[(b, d, "fig3a", 10, n3)]) <= 200.0 + 1e-9  # the cell's streams, every ten updates
        other2 = np.isfinite(runs[(b, d, "table2", 1, n2)])  # the row's streams, every update
        flips += int(np.sum(rec3 != other3) + np.sum(rec2 != other2))
        paired += rec3.size + rec2.size
        k3, k2 = int(rec3.sum()), int(rec2.sum())
        pair_ps.append(E.fisher_p(k3, rec3.size, k2, rec2.size))
        pair_counts.append((k3, rec3.size, k2, rec2.size))
        audit.ours(
            f"Figure 3(a) {k3}/{rec3.size} (every 10: {int(other3.sum())}), Table 2 {k2}/{rec2.size} (every update: "
            f"{int(other2.sum())}); Fisher p = {pair_ps[-1]:.4f}",
            label=f"b={b}, delta0={d:g}",
        )
    flip_lo, flip_hi = S.clopper_pearson_interval(flips, paired)
    holm_p = min(1.0, len(pair_ps) * min(pair_ps))  # Holm's first step: the smallest p times the number of settings
    b, d = E.REPEAT_DISCORDANT
    big = {of: np.isfinite(runs[(b, d, of, 10, n_big)]) for of in ("fig3a", "table2")}
    kf, kt = int(big["fig3a"].sum()), int(big["table2"].sum())
    p_big = E.fisher_p(kf, n_big, kt, n_big)
    pooled = (kf + kt) / (2 * n_big)
    i = E.TABLE2_SETTINGS.index((b, d))
    k3 = int(
        np.isfinite(next(c for c in grid if c["b"] == b and c["delta0"] == d and c["eta"] == 0.01)["recovery"]).sum()
    )
    k2 = E.recovered_by(table2[i]["recovery"], 200)
    rates = []
    for bs, ds in E.TABLE2_SETTINGS:
        if (bs, ds) == (b, d):
            rates.append(pooled)
            continue
        cs = next(c for c in grid if c["b"] == bs and c["delta0"] == ds and c["eta"] == 0.01)
        rs = next(s for s in table2 if s["b"] == bs and s["delta0"] == ds)
        rates.append((_count(cs["recovery"]) + E.recovered_by(rs["recovery"], 200)) / (n3 + n2))
    chance = 1.0 - float(np.prod([1.0 - _pair_chance(min(pair_ps), n3, n2, r) for r in rates]))
    # the finding's arithmetic: each pair's p (E.fisher_p) is the one the chance's tail region is cut on (the exact
    # p-value grid), to the grid's float rounding (1e-9 relative, as in _pair_chance): otherwise the reported
    # significance and probability are not those of the observed tables
    grid_agrees = all(
        math.isclose(float(S.fisher_p_grid(m3, m2)[c3, c2]), q, rel_tol=1e-9)
        for (c3, m3, c2, m2), q in zip(pair_counts, pair_ps, strict=True)
    )
    audit.ours(
        f"b={E.TABLE2_SETTINGS[int(np.argmin(pair_ps))][0]}, delta0={E.TABLE2_SETTINGS[int(np.argmin(pair_ps))][1]:g}: "
        f"Fisher p = {min(pair_ps):.4f}, Holm-adjusted {holm_p:.4f} "
        f"({'significant' if holm_p < 0.05 else 'not significant'} at 5%); probability of a difference that large "
        f"in some setting under one rate per setting {chance:.4f} (about 1 in {1 / max(chance, 1e-12):.0f}; "
        f"family-wise, {'significant' if chance < PAIR_FAMILY_LEVEL else 'not significant'} at "
        f"{PAIR_FAMILY_LEVEL:.0%}; reported, not asserted)",
        label="finding: the small-sample pairs",
    )
    tail3 = float(stats.binom.cdf(k3, n3, pooled)) if k3 / n3 < pooled else float(stats.binom.sf(k3 - 1, n3, pooled))
    tail2 = float(stats.binom.cdf(k2, n2, pooled)) if k2 / n2 < pooled else float(stats.binom.sf(k2 - 1, n2, pooled))
    audit.ours(
        f"{flips} of {paired} (95% Clopper-Pearson [{flip_lo:.4f}, {flip_hi:.4f}])",
        label="outcomes changed by the cadence",
    )
    audit.ours(
        f"{kf}/{n_big} (Figure 3(a) seed) vs {kt}/{n_big} (Table 2 seed), Fisher p = {p_big:.3f}",
        label=f"large sample at b={b}, delta0={d:g}, t <= 200",
    )
    audit.evidence(
        "Through t = 200 the two experiments differ in their streams and their check cadence only. Each experiment's "
        f"streams rerun with the other's cadence ({n3} per Figure 3(a) cell, {n2} per Table 2 row, the same random "
        f"inputs) change {flips} of {paired} outcomes: the cadence does not matter (check: the 95% Clopper-Pearson "
        f"lower bound of the changed share below {CADENCE_EFFECT:.1%}). The ours-vs-ours pair difference at "
        f"b={E.TABLE2_SETTINGS[int(np.argmin(pair_ps))][0]}, delta0={E.TABLE2_SETTINGS[int(np.argmin(pair_ps))][1]:g} "
        f"(Fisher p = {min(pair_ps):.4f}; Holm-adjusted over the five settings {holm_p:.4f}) "
        f"{'is significant at 5%: the small samples differ (our finding)' if holm_p < 0.05 else 'is not significant'}"
        f". Under one rate per setting (the pooled small samples; the large samples' at b={b}, delta0={d:g}) a "
        f"difference at least that large (Fisher p <= {min(pair_ps):.4f}) in some setting has probability "
        f"{chance:.4f} (exact over the binomial laws; the settings taken as independent), about 1 in "
        f"{1 / max(chance, 1e-12):.0f}: a family-wise p over the five settings, "
        + (
            f"significant at the house's {PAIR_FAMILY_LEVEL:.0%} (a level fixed by that rule, not chosen after "
            "looking): the small pairs differ by more than one rate per setting makes likely at 5%, a finding of "
            "ours, reported and not asserted"
            if chance < PAIR_FAMILY_LEVEL
            else f"not significant at the house's {PAIR_FAMILY_LEVEL:.0%}"
        )
        + f". The verdict on 'the estimates agree' rests on the checks with power (the cadence rerun "
        f"and the large samples), not on the small pairs (the Figure 3(a) cells share one seed's first {n3} "
        f"streams, the Table 2 rows each have their own). At b={b}, delta0={d:g} a large sample of each seed "
        f"({n_big} streams) gives {kf / n_big:.3f} and {kt / n_big:.3f} (one rate, pooled {pooled:.3f}); against it "
        f"our Figure 3(a) cell's {k3}/{n3} is a one-sided binomial tail of {tail3:.3f} and our Table 2 row's "
        f"{k2}/{n2} one of {tail2:.3f}: two small samples from opposite tails of one rate; the cadence rerun and "
        "the large samples exclude a cadence, horizon or seed effect, so what differs is these particular streams. "
        "The pairs' Fisher p's are checked to be the ones the probability's tail region is cut on (the exact p-value "
        "grid; arithmetic, not a threshold)."
    )
    # power: the cadence check against a cadence that flips 2% of outcomes (four times the tolerated share)
    reject = np.array([S.clopper_pearson_interval(k, paired)[0] > CADENCE_EFFECT for k in range(paired + 1)])
    audit.evidence(
        PW.record(
            audit,
            S.power_of_region(paired, 0.02, reject),
            alternative=f"a cadence that changes 2% of outcomes (four times the tolerated {CADENCE_EFFECT:.1%})",
            label="cadence",
            method=f"exact: P(95% Clopper-Pearson lower bound of the changed share > {CADENCE_EFFECT:.1%}) over "
            f"Binomial({paired}, 0.02)",
        )
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the effective intensity between the two seeds: see verify.rare_gates.power",
            cells=[(kt / n_big, n_big, n_big, "seed")],
            directions=PW.factor(2),
            test="fisher",
            label="seeds",
            reference="the Table 2 seed's large sample",
            both_ours=True,
        )
    )
    assert flip_lo <= CADENCE_EFFECT
    assert p_big >= 0.05
    assert grid_agrees


# The one setting (b = 16, delta0 = 1e-5, eta = 0.01) estimated three times in the paper, by horizon:
# Figure 3(a)'s cell (H = 200; 9 of 64, the cell of kappa_eff 1.49), Table 2's row (t <= 200 and 450: 0.078 of
# 128) and Appendix 20's no-noise runs (H = 1000: 0.04 of 128, in READING_A20).
_SAME = paper_numbers(
    "RG-sim.A20.same"
)  # ['9', '64', '0.078', '128', '200', '0.04', '1000', '128']: 9/64 and 128 inferred
PAPER_SAME = {
    "Figure 3(a), H = 200": (int(_SAME[0]), int(_SAME[1])),
    "Table 2, t <= 200": (_k_of(_SAME[2], int(_SAME[3])), int(_SAME[3])),
    # Appendix 20 prints no number of runs: 128 in our reading (PAPER_A20_RUNS)
    "Appendix 20, H = 1000": (_k_of(_SAME[5], PAPER_A20_RUNS), PAPER_A20_RUNS),
}
SAME_LEVEL = 0.05 / 2  # two one-sided order tests (the H = 1000 fraction below each shorter horizon's), Bonferroni


def _order_tests(counts: dict) -> tuple[float, list[float]]:
    """Exact homogeneity p of the three estimates, and the one-sided Fisher p's of 'H = 1000 below the others'."""
    (k3, n3), (k2, n2), (k1, n1) = counts.values()
    hom = S.homogeneity_exact_p([k3, k2, k1], [n3, n2, n1])
    # recovery by H is non-decreasing in H for one setting, so the H = 1000 fraction below a shorter horizon's
    # can only be sampling: one-sided Fisher exact tests of 'H = 1000 smaller'
    order = [S.fisher_exact_p(k1, n1, k, n, alternative="less") for k, n in ((k3, n3), (k2, n2))]
    return hom, order


def _our_same(results) -> dict:
    """Our three experiments of the setting; Figure 3(a)'s cell and Appendix 20's no-noise runs with the further
    streams of their seeds (rare_gates.larger: same_streams each), so that the order test has power."""
    grid, table2, noise = results["rare_gates.grid"], results["rare_gates.table2"], results["rare_gates.noise"]
    larger = results["rare_gates.larger"]
    cell = next(c for c in grid if c["b"] == 16 and c["delta0"] == 1e-5 and c["eta"] == 0.01)
    row = next(s for s in table2 if s["b"] == 16 and s["delta0"] == 1e-5)
    none = next(z for z in noise if z["s"] == 0.0)
    rec3 = _with_larger(cell["recovery"], larger, "same,fig3a")
    rec1 = _with_larger(none["recovery"], larger, "same,a20")
    return {
        "Figure 3(a), H = 200": (_count(rec3), rec3.size),
        "Table 2, t <= 200": (E.recovered_by(row["recovery"], 200), row["recovery"].size),
        "Appendix 20, H = 1000": (E.recovered_by(rec1, none["horizon"]), rec1.size),
    }


# one reading string for the check, so the report shows it once
A20_SAME_READING = (
    READING_A20 + "; Figure 3(a)'s cell of this setting is the one whose 9/64 gives kappa_eff 1.49 "
    "(RG-19.kappacells), the largest of the 12 printed kappa_eff values. Ours: our three experiments of the setting "
    "(b = 16), in order by one-sided Fisher exact tests. The paper's three under the fitted setting: tested by the "
    "same tests with the selection of its 9/64 cell corrected (Bonferroni over the 12 cells), reported as a tension, "
    "never as a discrepancy, since the conflict exists only under the fitted setting"
)
# the 9/64 cell is the paper's largest of its 12 kappa_eff values (Appendix 19): a selected extreme, so a test of it
# against another estimate is corrected for the selection by Bonferroni over the 12 cells
SAME_SELECTION = int(paper_numbers("RG-sim.fig3a.kappa")[2])


def _paper_same_tension() -> dict:
    """The paper's three estimates under the fitted setting: order p's, selection-corrected, by run count."""
    hom, order = _order_tests(PAPER_SAME)
    (k3, n3), _, _ = PAPER_SAME.values()
    by_runs = {}
    for n in (50, 100, PAPER_A20_RUNS, 2 * PAPER_A20_RUNS):  # Appendix 20 prints no run count: other plausible ones
        k = round(_NOISE[0] * n)
        by_runs[n] = (k, S.fisher_exact_p(k, n, k3, n3, alternative="less"))
    return {
        "hom": hom,
        "order": order,
        "corrected": [min(1.0, SAME_SELECTION * p) for p in order],
        "by_runs": by_runs,
    }


@claim(
    "RG-sim.A20.same",
    reading=A20_SAME_READING,
    fitted=_a20_alternatives(
        "Appendix 20's 0.04 is then not the setting of Figure 3(a)'s 9/64 and Table 2's 0.078 (both b = 16), so the "
        "three are not estimates of one setting and there is no order to test " + A20_ALT_NOTE
    ),
)
@uses("rare_gates.grid", "rare_gates.table2", "rare_gates.noise", "rare_gates.noise_b8", "rare_gates.larger")
def test_same_setting_three_horizons_ours(audit, results):
    ours = _our_same(results)
    hom, order = _order_tests(ours)
    for label, (k, n) in ours.items():
        audit.ours(f"{k}/{n} = {k / n:.3f} (paper {PAPER_SAME[label][0]}/{PAPER_SAME[label][1]})", label=label)
    audit.ours(f"{hom:.3f}", label="exact homogeneity p (Freeman-Halton)")
    audit.ours(", ".join(f"{p:.3f}" for p in order), label="one-sided Fisher p, H = 1000 below H = 200 / t <= 200")
    paper = _paper_same_tension()
    (k3p, n3p), _, (k1p, n1p) = PAPER_SAME.values()
    audit.ours(
        f"one-sided Fisher p of 'H = 1000 below' = {', '.join(f'{p:.4f}' for p in paper['order'])} (exact homogeneity "
        f"p = {paper['hom']:.3f}); with the selection of the {k3p}/{n3p} cell corrected (x {SAME_SELECTION}): "
        f"{', '.join(f'{p:.3f}' for p in paper['corrected'])} against the level {SAME_LEVEL:.3f}; the H = 200 test at "
        "other run counts of Appendix 20 (uncorrected): "
        + ", ".join(f"{k}/{n}: {p:.3f}" for n, (k, p) in paper["by_runs"].items()),
        label="the paper's three under the fitted b = 16 and 128 runs (a tension, not a verdict)",
    )
    none8 = next(z for z in results["rare_gates.noise_b8"] if z["s"] == 0.0)
    k8, n8 = E.recovered_by(none8["recovery"], none8["horizon"]), none8["recovery"].size
    k16, n16 = ours["Appendix 20, H = 1000"]
    audit.ours(
        f"no-noise recovery by H = {none8['horizon']:g}: {k8}/{n8} = {k8 / n8:.3f} against the paper's {_NOISE[0]:g} "
        f"(Fisher p = {E.fisher_p(k8, n8, k1p, n1p):.3f}; at b = 16 ours {k16}/{n16}, Fisher p = "
        f"{E.fisher_p(k16, n16, k1p, n1p):.3f})",
        label=A20_B8_LABEL,
    )
    audit.evidence(
        "Recovery by H is non-decreasing in H for one setting, so three estimates of it at H = 200, t <= 200 and "
        "H = 1000 can differ only by sampling: one-sided Fisher exact tests of 'the H = 1000 fraction below' at "
        f"{SAME_LEVEL:.3f} each (Bonferroni over two), and the exact homogeneity test of the three. Our three "
        "experiments of the setting must pass (this check)."
    )
    audit.evidence(
        f"The paper's side is a tension, not a discrepancy. Under the fitted setting (b = 16, {PAPER_A20_RUNS} runs: "
        "Appendix 20 prints neither; b = 16 is the batch at which our runs reproduce its noise fractions) its own "
        f"{k1p}/{n1p} by H = 1000 lies below its {k3p}/{n3p} by H = 200 at "
        f"one-sided p = {paper['order'][0]:.4f}; but the {k3p}/{n3p} cell is the largest of the paper's "
        f"{SAME_SELECTION} kappa_eff values, a selected extreme, and with that selection corrected (Bonferroni over "
        f"{SAME_SELECTION}) p = {paper['corrected'][0]:.3f}, above the level; the p also moves with the unknown run "
        f"count (values above); and Appendix 20's own Lambda(t) gives {A20_AT_16['none_H']:.3f} at b = 16 against its "
        f"{_NOISE[0]:g} and implies b = {A20_AT_16['b']:.1f}, a batch at which the three are not one setting. The "
        "fitted setting under which the paper's own numbers are in tension is a reading of ours, not the paper's "
        "statement, so no discrepancy is raised."
    )
    (k3, n3), _, (k1, n1) = ours.values()
    audit.evidence(
        f"Our Figure 3(a) cell and our Appendix 20 no-noise runs are taken with the further streams of their seeds "
        f"(rare_gates.larger), {n3} and {n1} in all, so that the order test has power; our Table 2 row is its own "
        f"{ours['Table 2, t <= 200'][1]}."
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="the H = 1000 fraction half the H = 200 one (a factor 2 in the count)",
            cells=[(k3 / n3, n1, n3, "setting")],
            directions={"count / 2": lambda p: p / 2},
            test="fisher",
            level=SAME_LEVEL,
            side="less",
            label="order test",
            reference="our Figure 3(a) cell",
            both_ours=True,
        )
    )
    # the paper's own three: the same order test at the paper's sizes and the selection-corrected level, against the
    # same alternative; its power bounds what the paper's numbers can say about the order, whatever the setting
    paper_level = SAME_LEVEL / SAME_SELECTION
    paper_power = S.power_two_sample(
        k3p / n3p / 2, n1p, k3p / n3p, n3p, test="fisher", level=paper_level, alternative="less"
    )
    audit.evidence(
        PW.record(
            audit,
            paper_power,
            alternative="the H = 1000 fraction half the H = 200 one (a factor 2 in the count), in the paper's own "
            "three under the fitted setting",
            label="the paper's order test",
            method=f"exact enumeration over Bin({n1p}, p/2) x Bin({n3p}, p) at p = {k3p}/{n3p} (the paper's sizes, "
            f"{n1p} read); one-sided Fisher exact p < {SAME_LEVEL:.3f}/{SAME_SELECTION} = {paper_level:.5f} (the "
            "order level with the selection of the cell corrected)",
            decide="a comparison of the paper's own fixed counts under a fitted setting: no run of ours enters it or "
            "can decide it, and the lost setting (b, run count) of Appendix 20 is what would",
        )
    )
    assert all(p >= SAME_LEVEL for p in order)


@claim(
    "RG-sim.decay",
    reading="the angle at t = 100 of the streams of the (b = 16, delta0 = 1e-4) setting that "
    "neither recovered nor sampled a disagreement; compared after rounding to the paper's two digits",
)
@uses("rare_gates.paths")
def test_unrecovered_angle_decay(audit, results):
    paths = results["rare_gates.paths"]
    p = next(q for q in paths if q["b"] == 16 and q["delta0"] == 1e-4)
    quiet = ~np.isfinite(p["recovery"]) & ~np.isfinite(p["first"])
    i100 = int(np.argmin(np.abs(p["t"] - 100.0)))
    a100 = p["trace_angle"][quiet, i100]
    window = (p["t"] >= 20.0) & (p["t"] <= 100.0)
    rate = -float(np.median([E.log_slope(p["t"], a, window) for a in p["trace_angle"][quiet]]))
    med = float(np.median(a100))
    audit.ours(med, label=f"median angle at t = 100 over {int(quiet.sum())} undisturbed streams")
    audit.ours(f"{a100.min():.3e} .. {a100.max():.3e}", label="range")
    audit.ours(rate, label="median decay rate of log angle over t in [20, 100]")
    mean_path = _common_gate_angle(1e-4, 100.0)
    audit.evidence(
        f"Table 2 streams of that setting (same seed), traced every 10 updates. The common-gate mean flow "
        f"predicts {mean_path:.3g} (references.common_gate_angle); the SGD streams give "
        f"{'less' if med < mean_path else 'more'}, median {med:.3g}."
    )
    a_moved = a100 * (mean_path / med)  # our undisturbed streams with their median moved to the mean-flow value
    sim = S.power_by_simulation(
        lambda rng: not rounds_to(float(np.median(a_moved[rng.integers(0, a_moved.size, a_moved.size)])), "5.8e-7"),
        reps=400,
        seed=E.SEEDS["bootstrap"],
    )
    audit.evidence(
        PW.record(
            audit,
            sim.power,
            alternative=f"the common-gate mean-flow angle {mean_path:.3g} at t = 100 (no SGD "
            "fluctuation), which rounds to a different two-digit value",
            label="angle at t = 100",
            method=f"simulation: our {a_moved.size} undisturbed streams' angles rescaled to that median, "
            "resampled with "
            f"replacement; {sim}",
        )
    )
    rates = np.array([-E.log_slope(p["t"], a, window) for a in p["trace_angle"][quiet]])
    implied = math.log(1e-4 / 5.8e-7) / 100  # the mean rate of the paper's own example 1e-4 -> 5.8e-7
    rate_sims = [
        S.power_by_simulation(
            lambda rng, r=r: (
                not rounds_to(float(np.median((rates * r / rate)[rng.integers(0, rates.size, rates.size)])), "0.050")
            ),
            reps=400,
            seed=E.SEEDS["bootstrap"],
        )
        for r in (implied, 2 * LAM - implied)
    ]
    weak = min(rate_sims, key=lambda v: v.power)
    audit.evidence(
        PW.record(
            audit,
            weak.power,
            alternative=f"a decay rate {implied:.4f} or {2 * LAM - implied:.4f} "
            f"({100 * abs(implied / LAM - 1):.0f}% off lambda, the rate the paper's own 1e-4 -> 5.8e-7 implies), which "
            "does not round to 0.050",
            label="rate",
            method=f"simulation: our per-stream rates rescaled to that median, resampled; weaker direction {weak}",
        )
    )
    assert rounds_to(med, "5.8e-7") and rounds_to(rate, "0.050")


@claim(
    "RG-sim.floor",
    reading="'~' read as within 5% (the paper gives two significant digits); the resolution "
    "time is the first check with angle <= 1e-15, median over undisturbed streams",
)
@uses("rare_gates.paths")
def test_angle_floor(audit, results):
    paths = results["rare_gates.paths"]
    result = {}
    for p in paths:
        quiet = ~np.isfinite(p["recovery"]) & ~np.isfinite(p["first"])
        ft = [E.floor_time(p["t"], a) for a in p["trace_angle"][quiet]]
        result[p["delta0"]] = float(np.nanmedian(ft))
        audit.ours(
            f"{result[p['delta0']]:.1f} (streams {int(quiet.sum())}, range {np.nanmin(ft):.0f}..{np.nanmax(ft):.0f})",
            label=f"delta0 = {p['delta0']:g}, b = {p['b']}",
        )
    settings = ", ".join(f"({p['b']}, {p['delta0']:g})" for p in paths)
    settle = _common_gate_angle(1.0, 1000.0) * math.exp(1000.0 * LAM)  # sqrt(B0/B_t): the path's lasting factor
    mean_flow = ", ".join(f"{math.log(settle * p['delta0'] / 1e-15) / LAM:.0f}" for p in paths)
    audit.evidence(
        f"float64 traces of the Table 2 streams (settings {settings}) every 10 updates; the mean-flow "
        f"time log({settle:.3f} delta0/1e-15)/lambda is {mean_flow}."
    )
    p5 = next(p for p in paths if p["delta0"] == 1e-5)
    quiet5 = ~np.isfinite(p5["recovery"]) & ~np.isfinite(p5["first"])
    ft5 = np.array([E.floor_time(p5["t"], a) for a in p5["trace_angle"][quiet5]])
    ft5 = ft5[np.isfinite(ft5)]
    shift = math.log(10) / LAM
    floor_sims = [
        S.power_by_simulation(
            lambda rng, d=d: abs(float(np.median(ft5[rng.integers(0, ft5.size, ft5.size)] + d)) - 460.0) > 0.05 * 460.0,
            reps=400,
            seed=E.SEEDS["bootstrap"],
        )
        for d in (shift, -shift)
    ]
    weak = min(floor_sims, key=lambda v: v.power)
    audit.evidence(
        PW.record(
            audit,
            weak.power,
            alternative=f"a resolution level a decade off (1e-14 or 1e-16), which moves the time by "
            f"log(10)/lambda = {shift:.1f}",
            label="delta0 = 1e-5",
            method=f"simulation: our {ft5.size} undisturbed floor times shifted, resampled with replacement; weaker "
            f"direction {weak}",
        )
    )
    assert abs(result[1e-5] - 460.0) <= 0.05 * 460.0
    assert all(0.95 * 500.0 <= result[d] <= 1.05 * 550.0 for d in (1e-4, 1e-3))


FLOOR_ABOUT = 10.0  # 'about 1e-19' read as within a factor 10 (the paper's float64 level '~1e-15' is ours x 5)
UNIVERSAL_ALT = 0.25  # checks of 'every member' state power against the property failing in a quarter of them


def _universal_power(audit, n: int, what: str) -> None:
    """Power of a check that every one of n independent members has a property, against it failing in a quarter."""
    audit.power(
        1 - (1 - UNIVERSAL_ALT) ** n,
        alternative=f"{what} fails in a quarter of the members",
        method=f"exact: P(at least one of {n} independent members fails) = 1 - 0.75^{n}",
    )


def _geo_median(x: np.ndarray) -> float:
    """Median of positive angles (a zero, an exactly coincident pair, counts as the smallest)."""
    return float(np.median(np.where(x > 0, x, np.finfo(float).tiny)))


@claim(
    "RG-19.floor80",
    reading="80-bit arithmetic emulated: the double-double replay of the same float64 inputs with the state rounded "
    "to 64 significant bits (the x87 significand; round to nearest, ties to even) after every update; the update "
    "itself stays double-double, so the emulation has the storage rounding of an 80-bit run and less arithmetic "
    "error. Calibrated by the same replay rounded to 53 bits, which must reproduce the float64 floor. 'About 1e-19' "
    "read as within a factor 10 (the median over the quiet streams); the plain double-double replay shows the floor "
    "is arithmetic (its angles follow the mean path far below both floors)",
)
@uses("rare_gates.floor80")
def test_angle_floor_below_float64(audit, results):
    fl = results["rare_gates.floor80"]
    f64, dd, r64, r53 = fl["f64_angle"], fl["dd_angle"], fl["r64_angle"], fl["r53_angle"]
    settle = _common_gate_angle(1.0, 1000.0) * math.exp(1000.0 * LAM)  # sqrt(B0/B_t), as in RG-sim.floor
    path = settle * fl["delta0"] * math.exp(-LAM * fl["horizon"])
    floor64, floor53, floor80 = _geo_median(f64), _geo_median(r53), _geo_median(r64)
    paper = 1e-19
    t = f"{fl['horizon']:g}"
    audit.ours(", ".join(f"{a:.3g}" for a in f64), label=f"float64 angles at t = {t} (the float64 floor)")
    audit.ours(", ".join(f"{a:.3g}" for a in r53), label=f"53-bit-storage replay angles at t = {t}")
    audit.ours(", ".join(f"{a:.3g}" for a in r64), label=f"64-bit-storage (80-bit) replay angles at t = {t}")
    audit.ours(", ".join(f"{a:.3g}" for a in dd), label=f"double-double angles at t = {t}")
    audit.ours(f"{path:.3g}", label="the mean path delta0 sqrt(B0/B_t) e^{-lambda t}")
    audit.ours(
        f"{floor80:.2g} (float64 {floor64:.2g}, 53-bit replay {floor53:.2g}; ratio 80/53 {floor80 / floor53:.2g} "
        f"against 2^-11 = {2.0**-11:.2g})",
        label="measured 80-bit floor (median)",
    )
    audit.tolerance(
        FLOOR_ABOUT,
        "factor: 'about' a power of ten; the paper's own float64 level (~1e-15) is a factor 5 above our float64 "
        "floor, and the floor's spread over streams is itself a decade",
        label="80-bit floor against 1e-19, and the 53-bit calibration against the float64 floor",
    )
    audit.evidence(
        f"{dd.size} streams of the Table 2 setting (b = {fl['b']}, delta0 = {fl['delta0']:g}) that neither recover "
        f"nor sample a disagreement through t = {t}, replayed from the same float64 inputs: in double-double each "
        "final angle lies within a factor 2 of the mean path (a floor would put them some 1e4 times above it); "
        "rounded to 53 bits after every update the replay stops at the float64 floor (medians "
        f"{floor53:.2g} and {floor64:.2g}: the floor is the storage rounding of the state); rounded to 64 bits it "
        f"stops at {floor80:.2g}, the paper's 'about 1e-19'. The rounded replays sample no disagreement and do not "
        f"recover ({int(np.sum(fl['rounded_events']))} events). The check fails if a double-double angle leaves the "
        "path, the 53-bit replay misses the float64 floor by more than the factor, or the 64-bit floor is more than "
        "the factor from 1e-19."
    )
    _universal_power(audit, int(dd.size), "a double-double angle within a factor 2 of the mean path")
    log_r64 = np.log10(np.where(r64 > 0, r64, np.finfo(float).tiny))

    def trial(rng, shift):
        draw = log_r64[rng.integers(0, log_r64.size, log_r64.size)] + shift
        return abs(float(np.median(draw)) - math.log10(paper)) > math.log10(FLOOR_ABOUT)

    sims = [
        S.power_by_simulation(functools.partial(trial, shift=d), reps=400, seed=E.SEEDS["bootstrap"]) for d in (2, -2)
    ]
    weak = min(sims, key=lambda v: v.power)
    audit.evidence(
        PW.record(
            audit,
            weak.power,
            alternative="an 80-bit floor two decades off (1e-17, barely below float64's, or 1e-21)",
            label="80-bit floor",
            method=f"simulation: our {r64.size} 64-bit-storage angles shifted by 2 decades, resampled with "
            f"replacement; weaker direction {weak}",
        )
    )
    assert dd.size > 0
    assert np.all((dd / path >= 0.5) & (dd / path <= 2.0))
    assert int(np.sum(fl["rounded_events"])) == 0
    assert 1 / FLOOR_ABOUT <= floor53 / floor64 <= FLOOR_ABOUT
    assert 1 / FLOOR_ABOUT <= floor80 / paper <= FLOOR_ABOUT


# --- Figure 3(a) ---------------------------------------------------------------------------------------------


def _grid_counts(grid):
    G = np.array([c["gamma"] for c in grid])
    k = np.array([_count(c["recovery"]) for c in grid])
    n = np.array([c["recovery"].size for c in grid])
    return G, k, n


FIG3A_BOOT = 2000  # stream-coupled bootstrap replicates of the deviance (its p-value to about +-0.005 near 0.05)


def _coupled_counts(X: np.ndarray, probs: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """Counts (reps, cells) with cell probabilities ``probs`` and the cells' dependence through shared streams.

    ``X`` (cells, m): each stream's recovery in each cell (the same m streams, the same draws, in every cell). The
    streams are resampled jointly across the cells; a stream's uniform in cell c is drawn below the cell's observed
    rate where it recovered there, above it where not, so each uniform is exactly Unif(0, 1) and the streams that
    recover together in the data stay together; a run recovers under ``probs`` when its uniform lies below probs[c].
    """
    X = np.asarray(X, dtype=bool)
    p_hat = X.mean(axis=1)[None, :, None]
    Xs = X[:, rng.integers(0, X.shape[1], size=(reps, X.shape[1]))].transpose(1, 0, 2)  # (reps, cells, m)
    u = rng.random(Xs.shape)
    u = np.where(Xs, u * p_hat, p_hat + u * (1.0 - p_hat))
    return (u < np.asarray(probs, dtype=float)[None, :, None]).sum(axis=2)


@claim(
    "RG-sim.fig3a.gamma",
    reading="'approximately a function of Gamma' read as: a nondecreasing function of Gamma "
    "alone fits the 24 cells (binomial isotonic fit; deviance test, p >= 0.05, calibrated by a bootstrap that keeps "
    "the cells' shared streams: streams resampled jointly across cells; the independent-cell bootstrap's p is "
    "reported) and the Spearman rank correlation of Gamma and the fraction is at least 0.9",
)
@uses("rare_gates.grid", "rare_gates.table1")
def test_fig3a_function_of_gamma(audit, results):
    grid, table1 = results["rare_gates.grid"], results["rare_gates.table1"]
    G, k, n = _grid_counts(grid)
    test = E.monotone_in_gamma_test(G, k, n)
    rho = float(stats.spearmanr(G, k / n)[0])
    audit.ours(rho, label="Spearman rho (Gamma, fraction)")
    # the cells share their streams (the same ids and draws in every cell): the null keeps that dependence
    X = np.array([np.isfinite(c["recovery"]) for c in grid])
    _, inv = np.unique(np.round(np.log(G), 9), return_inverse=True)
    fit_cell = test["fit"][inv]

    def deviance(kk):
        kp, npool = np.bincount(inv, weights=kk), np.bincount(inv, weights=n)
        return E.binomial_deviance(kp, npool, E.isotonic_increasing(kp, npool))

    rng_c = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 5], dtype=np.uint64)))
    null_c = np.array([deviance(kk) for kk in _coupled_counts(X, fit_cell, FIG3A_BOOT, rng_c)])
    p_coupled = float((1 + np.sum(null_c >= test["deviance"])) / (FIG3A_BOOT + 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.corrcoef(X[X.std(axis=1) > 0].astype(float))
    phi_mean = float(np.nanmean(phi[~np.eye(phi.shape[0], dtype=bool)]))
    audit.ours(
        f"deviance {test['deviance']:.2f}, stream-coupled bootstrap p = {p_coupled:.3f} (independent-cell bootstrap "
        f"p = {test['p_value']:.3f}, reported)",
        label="isotonic fit in Gamma",
    )
    audit.ours(f"{phi_mean:.3f}", label="mean correlation of a stream's recovery between two cells")
    audit.evidence(
        f"{G.size} cells x {n[0]} streams (the same streams in every cell), H = 200, risk every update. "
        f"The isotonic deviance is calibrated by {FIG3A_BOOT} resamples from the fitted function that keep the "
        "cells' shared streams (streams resampled jointly across the cells, each run's recovery coupled to its "
        f"recovery in the data; mean between-cell correlation of a stream's recovery {phi_mean:.3f}); the "
        "independent-cell parametric bootstrap, which ignores the sharing, is reported beside it."
    )
    paper_pts = [(0.01, 5 / 64, "b=1"), (0.64, 60 / 64, "b=64")]
    audit.figure(F.figure3a(grid, table1, paper_pts), "rg_fig3a")
    # Power: a factor 2 between the effective intensities of the two step sizes at equal Gamma; the deviance's
    # critical value is taken once from the stream-coupled null law under our fitted function (the test recalibrates
    # per data set), and the alternative's counts are drawn with the same coupling of the cells
    etas = np.array([c["eta"] for c in grid])
    p_alt = np.where(
        etas == min(etas), PW.intensity_scaled(fit_cell, math.sqrt(2)), PW.intensity_scaled(fit_cell, 1 / math.sqrt(2))
    )
    crit = float(np.quantile(null_c, 0.95))

    def trial(rng):
        kk = _coupled_counts(X, p_alt, 1, rng)[0]
        return deviance(kk) > crit or float(stats.spearmanr(G, kk / n)[0]) < 0.9

    sim = S.power_by_simulation(trial, reps=400, seed=E.SEEDS["bootstrap"])
    audit.evidence(
        PW.record(
            audit,
            sim.power,
            alternative="a factor 2 between the effective intensities of the two step sizes at equal "
            "Gamma: recovery a function of b delta0/eta^(1/2) rather than of Gamma",
            method=f"simulation: stream-coupled counts from our isotonic fit with the intensity x sqrt 2 at eta = "
            f"{min(etas):g} and / sqrt 2 at eta = {max(etas):g}; rejects when the deviance exceeds {crit:.2f} (the "
            f"95% point of the stream-coupled null under our fitted function, {FIG3A_BOOT} resamples) or Spearman "
            f"rho < 0.9; {sim}",
        )
    )
    assert rho >= 0.9 and p_coupled >= 0.05


@claim("RG-sim.fig3a.poisson")
@uses("rare_gates.grid")
def test_fig3a_poisson_reference(audit, results):
    grid = results["rare_gates.grid"]
    G, k, n = _grid_counts(grid)
    ref = E.poisson_reference(G)
    lo = np.array([E.wilson(a, b)[0] for a, b in zip(k, n)])
    lo_b = np.array([E.wilson(a, b, E.z_bonferroni(24))[0] for a, b in zip(k, n)])
    audit.ours(int(np.sum(ref < lo)), label="cells with the reference below their 95% Wilson interval")
    audit.ours(int(np.sum(ref < lo_b)), label="the same with Bonferroni-corrected intervals (24 cells)")
    audit.ours(float(np.min(ref - lo)), label="min over cells of reference - lower bound")
    audit.evidence(
        "Per-cell 95% Wilson intervals over the cell's independent streams (the paper's criterion, "
        "literally); the reference may lie above an interval."
    )
    cell_powers = []
    for g, m in zip(ref, n):
        los = S.wilson_intervals(np.arange(int(m) + 1), int(m))[0]
        cell_powers.append(S.power_of_region(int(m), float(PW.intensity_scaled(g, 2.0)), los > g))
    best = int(np.argmax(cell_powers))
    audit.evidence(
        PW.record(
            audit,
            cell_powers[best],
            alternative="recovery at twice the reference's intensity in every cell "
            "(kappa_eff = 2): a factor 2 in Gamma or in the exponent the reference takes from the Section 8 account",
            method="exact: per cell P(lower 95% Wilson bound > reference) at p = 1 - (1 - reference)^2; "
            "the cells share "
            f"streams, so the check's power is at least the largest, {cell_powers[best]:.3f} at Gamma = "
            f"{G[best]:g} (smallest {min(cell_powers):.3f})",
        )
    )
    assert np.all(ref >= lo)


@claim(
    "RG-sim.fig3a.batch",
    reading="two-sample comparison of each cell with the paper's 5/64 and 60/64 "
    "(the counts behind 8% and 94%; Newcombe interval, Bonferroni over the two cells)",
)
@uses("rare_gates.grid")
def test_fig3a_batch(audit, results):
    grid = results["rare_gates.grid"]
    cells = {c["b"]: c for c in grid if c["delta0"] == 1e-4 and c["eta"] == 0.01}
    z = E.z_bonferroni(2)
    ks = {b: _count(c["recovery"]) for b, c in cells.items()}
    n = cells[1]["recovery"].size
    c1, c64 = _compare(ks[1], n, 5, 64, z), _compare(ks[64], n, 60, 64, z)
    audit.ours(f"b=1: {_fmt(c1)}; b=16: {ks[16]}/{n}; b=64: {_fmt(c64)}")
    audit.evidence(
        "Figure 3(a) cells at delta0 = 1e-4, eta = 0.01; literal 95% Wilson checks: "
        f"b=1 {'holds' if c1['literal'] else 'fails'}, b=64 {'holds' if c64['literal'] else 'fails'}."
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the effective intensity of both cells: see verify.rare_gates.power",
            cells=[(5 / 64, n, 64, "streams"), (60 / 64, n, 64, "streams")],
            directions=PW.factor(2),
            z=z,
        )
    )
    assert c1["consistent"] and c64["consistent"] and ks[1] < ks[16] < ks[64]


def _kappa_stats(K: np.ndarray, n: int, G: np.ndarray) -> np.ndarray:
    """Per row of counts K (reps, cells): min and max kappa_eff over interior cells, the share below one, and the
    number of interior cells (0 < k < n: the paper's '12 cells with recovery fraction in (0, 1)')."""
    inner = (K > 0) & (K < n)
    with np.errstate(divide="ignore", invalid="ignore"):
        kap = np.where(inner, -math.pi * LAM * np.log1p(-K / n) / G, np.nan)
    m = inner.sum(axis=1)
    ok = m > 0
    out = np.full((K.shape[0], 4), np.nan)
    out[ok, 0] = np.nanmin(kap[ok], axis=1)
    out[ok, 1] = np.nanmax(kap[ok], axis=1)
    out[ok, 2] = np.nansum(kap[ok] < 1, axis=1) / m[ok]
    out[ok, 3] = m[ok]
    return out


KAPPA_REPS = 20000  # bootstrap replicates under each alternative: powers to about +-0.003
# null replicates of the paper's statistics: they are discrete (extremes of 64-stream counts, a share of 12 cells), and
# an atom of the maximum sat near the Bonferroni tail (null P(max <= 0.966) = 0.0092 against 0.0083 at 0.05/3):
# 200000 draws place it to +-0.0002, where 20000 (+-0.0007) moved the power between 0.80 and 0.87 with the seed
KAPPA_NULL = 200000
KAPPA_OWN_REPS, KAPPA_CHUNK = 4000, 500  # our side's power (near 1: +-0.001 at 4000), in chunks of 500 (32 MB arrays)
KAPPA_LEVEL = 0.05 / 4  # the paper's four statistics (min, max, share below one, interior cells), two-sided, Bonferroni
KAPPA_NAMES = ("min", "max", "share below one", "cells in (0, 1)")
KAPPA_POISSON = 1.0  # the Poisson account's kappa_eff (no transient reduction): 'ten of 12 below one' excludes it
PAPER_KAPPA = tuple(float(v) for v in paper_numbers("RG-sim.fig3a.kappa")[:2])  # the printed range, 0.49 to 1.49
KAPPA_GRID = np.geomspace(0.02, 50.0, 8001)  # pooled-kappa likelihood grid: steps of 0.1% in kappa
KAPPA_HALF_CHI2 = float(stats.chi2.ppf(0.95, 1)) / 2  # 95% profile-likelihood interval: log-likelihood drop 1.92


def _kappa_fit(G: np.ndarray, n: np.ndarray):
    """The binomial isotonic fit machinery: our cells' paper-size draws, and the pooled-kappa likelihood over a grid."""
    c = G / (math.pi * LAM)  # p = 1 - exp(-kappa c): kappa_eff = -pi lambda log(1 - p)/Gamma (Section 8)
    kc = np.outer(KAPPA_GRID, c)
    log_p = np.log(-np.expm1(-kc))  # (grid, cells)

    def loglik(K: np.ndarray) -> np.ndarray:  # K: (reps, cells) counts of n -> (reps, grid) log-likelihoods
        return K @ log_p.T - (n - K) @ kc.T

    return loglik


def _kappa_inside(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of log-likelihoods: the maximum-likelihood kappa, and whether its 95% interval lies inside the printed
    range (the log-likelihood is concave in kappa, so the interval is one run of grid points)."""
    best = np.argmax(ll, axis=1)
    keep = ll >= (ll.max(axis=1) - KAPPA_HALF_CHI2)[:, None]
    lo = KAPPA_GRID[np.argmax(keep, axis=1)]
    hi = KAPPA_GRID[keep.shape[1] - 1 - np.argmax(keep[:, ::-1], axis=1)]
    return KAPPA_GRID[best], lo, hi


def _kappa_pvalues(null: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p-values of the rows of statistics ``x`` (reps, 3) against the ``null`` draws (rows).

    p = 2 min(P(null <= x), P(null >= x)) per statistic, ties counted on both sides: the statistics are discrete (a
    share of 12 cells, extremes of 64-stream counts), so a test by the null's quantiles would move with the atoms.
    """
    out = np.empty(x.shape)
    for j in range(x.shape[1]):
        col = np.sort(null[:, j])
        below = np.searchsorted(col, x[:, j], side="right") / col.size
        above = 1.0 - np.searchsorted(col, x[:, j], side="left") / col.size
        out[:, j] = np.minimum(1.0, 2 * np.minimum(below, above))
    return out


def _kappa_paper_sample(p_true: np.ndarray, G: np.ndarray, reps: int, seed) -> np.ndarray:
    """The paper's three statistics from 64 streams per cell, ``reps`` draws under ``p_true`` (finite rows only)."""
    rng = np.random.default_rng(seed)
    out = _kappa_stats(rng.binomial(64, np.clip(p_true, 0.0, 1.0), size=(reps, G.size)), 64, G)
    return out[np.isfinite(out).all(axis=1)]


@functools.lru_cache(maxsize=2)
def _kappa_null_of(G: tuple, p_fit: tuple) -> np.ndarray:
    """The null draws of the paper's statistics under our fit, once per session (both sides of the pair read them)."""
    return _kappa_paper_sample(np.array(p_fit), np.array(G), KAPPA_NULL, E.SEEDS["bootstrap"])


def _kappa_null(grid) -> dict:
    """Our cells, our isotonic fit of the truth, and the paper's three statistics' p-values under it (bootstrap)."""
    G, k, n = _grid_counts(grid)
    inner = (k > 0) & (k < n)
    kap = np.array([E.kappa_eff(a / b, g) for a, b, g in zip(k[inner], n[inner], G[inner])])
    # our estimate of the truth: the binomial isotonic fit in Gamma (RG-sim.fig3a.gamma: a function of Gamma)
    order = np.argsort(G, kind="stable")
    p_fit = np.empty(G.size)
    p_fit[order] = E.isotonic_increasing(k[order], n[order])
    paper = np.array([*PAPER_KAPPA, 10 / 12, 12])
    null = _kappa_null_of(tuple(G), tuple(p_fit))
    pvals = [float(v) for v in _kappa_pvalues(null, paper[None, :])[0]]
    return {
        "G": G,
        "k": k,
        "n": n,
        "kap": kap,
        "p_fit": p_fit,
        "paper": paper,
        "null": null,
        "pvals": pvals,
    }


KAPPA_READING = (
    "ours: the pooled kappa_eff of our cells, the binomial maximum-likelihood kappa of p = 1 - exp(-kappa Gamma/(pi "
    f"lambda)) over all 24 cells, its 95% profile-likelihood interval inside the printed range {PAPER_KAPPA[0]:g} to "
    f"{PAPER_KAPPA[1]:g} (the "
    "typical effective intensity lies in the paper's range; a summary, as kappa_eff varies with Gamma; the range is a "
    "factor 3 wide, so this part is weak) and, from 'ten of 12 below one', below the Poisson account's kappa_eff = 1 "
    "(its 95% interval's upper end below one). The paper's "
    "side: its range, its share below one (ten of 12) and its number of cells with a fraction in (0, 1) (12) are "
    "statistics of 64-stream estimates; each is tested "
    "against its distribution under our estimate of the truth (parametric bootstrap of the binomial isotonic fit of "
    "our cells in Gamma), two-sided, Bonferroni over the four; a rejection is a discrepancy, not a failure of ours"
)
KAPPA_REASON = _sample_reason(
    "the paper's printed range, share below one and number of cells with a fraction in (0, 1) against their "
    "distribution under our fit (parametric bootstrap of 64 streams per cell), any two-sided p below the Bonferroni "
    "level over the four",
    "none rejects",
)


@claim("RG-sim.fig3a.kappa", reading=KAPPA_READING)
@uses("rare_gates.grid")
def test_fig3a_kappa(audit, results):
    f = _kappa_null(results["rare_gates.grid"])
    G, k, n, kap, null, pvals = f["G"], f["k"], f["n"], f["kap"], f["null"], f["pvals"]
    below = int(np.sum(kap < 1))
    a, b = PAPER_KAPPA
    loglik = _kappa_fit(G, n)
    k_hat, k_lo, k_hi = (float(v[0]) for v in _kappa_inside(loglik(k[None, :].astype(float))))
    ok = a < k_lo and k_hi < b
    below_one = k_hi < KAPPA_POISSON
    lo_b, hi_b = S.clopper_pearson_interval(below, kap.size)
    audit.ours(
        f"{k_hat:.3f} (95% profile-likelihood [{k_lo:.3f}, {k_hi:.3f}], inside {a:g}..{b:g}: {'yes' if ok else 'no'}; "
        f"below {KAPPA_POISSON:g}: {'yes' if below_one else 'no'})",
        label="pooled kappa_eff (ours)",
    )
    audit.ours(
        f"{kap.min():.2f} to {kap.max():.2f}, {below} of {kap.size} below one (95% Clopper-Pearson [{lo_b:.2f}, "
        f"{hi_b:.2f}]); {kap.size} of {G.size} cells with a fraction in (0, 1) (the paper: 12)",
        label="ours (our streams)",
    )
    audit.ours(
        ", ".join(
            f"{name} {lo:.2f}..{hi:.2f} (paper {v:.2f}, p = {pv:.3f})"
            for name, (lo, hi), v, pv in zip(
                KAPPA_NAMES,
                (np.quantile(null[:, j], [KAPPA_LEVEL / 2, 1 - KAPPA_LEVEL / 2]) for j in range(len(KAPPA_NAMES))),
                f["paper"],
                pvals,
            )
        ),
        label=f"the paper's statistics under our fit (central {1 - KAPPA_LEVEL:.1%})",
    )
    audit.evidence(
        "kappa_eff = -pi lambda log(1 - p_hat)/Gamma over the cells with 0 < k < n. Ours: one kappa fitted to all "
        f"{G.size} cells by binomial maximum likelihood (grid of 0.1% steps), its 95% profile-likelihood interval "
        f"(log-likelihood within {KAPPA_HALF_CHI2:.2f} of the maximum) inside the printed range (a factor 3 wide: "
        f"alone it would pass any typical kappa in it) and its upper end below {KAPPA_POISSON:g}. The paper's side: "
        "its range, share below one and count of cells in (0, 1) are extremes and counts of noisy estimates, so they "
        "are tested as such: under our estimate "
        f"of the truth (the binomial isotonic fit of our {G.size} cells in Gamma), 64 streams per cell are drawn "
        f"{KAPPA_NULL} times (independent cells; the paper's cells share streams) and each statistic's two-sided "
        f"p-value is the paper's value's rank, Bonferroni over the four ({KAPPA_LEVEL:.4f} each)."
    )
    # power: the truth's effective intensity scaled by 2 (or 1/2) in every cell; the paper's side rejects when any
    # of the four p-values (the same test as on the paper's values) lies below the Bonferroni level
    rng = np.random.default_rng(E.SEEDS["bootstrap"])
    powers, own = {}, {}
    for i, (name, fac) in enumerate((("intensity x 2", 2.0), ("intensity / 2", 0.5))):
        p_alt = np.clip(PW.intensity_scaled(f["p_fit"], fac), 0.0, 1.0)
        alt = _kappa_paper_sample(p_alt, G, KAPPA_REPS, (E.SEEDS["bootstrap"], i + 1))
        powers[name] = float(np.mean((_kappa_pvalues(null, alt) < KAPPA_LEVEL).any(axis=1)))
        # in chunks: a (reps, grid) log-likelihood array of all KAPPA_OWN_REPS rows would take 0.26 GB
        outside = 0
        for _ in range(KAPPA_OWN_REPS // KAPPA_CHUNK):
            _, lo_a, hi_a = _kappa_inside(loglik(rng.binomial(n, p_alt, size=(KAPPA_CHUNK, G.size)).astype(float)))
            outside += int(np.sum(~((a < lo_a) & (hi_a < b))))
        own[name] = outside / (KAPPA_OWN_REPS // KAPPA_CHUNK * KAPPA_CHUNK)
    weak = min(own, key=own.get)
    audit.evidence(
        PW.record(
            audit,
            own[weak],
            alternative="the effective intensity a factor 2 off in every cell (kappa_eff x 2 or / 2)",
            label="ours: pooled kappa",
            method=f"simulation: {KAPPA_OWN_REPS} draws of our {G.size} cells of {int(n.max())} streams under the "
            f"scaled isotonic fit, failing when the pooled kappa's 95% interval leaves {a:g}..{b:g}; "
            + "; ".join(f"{key}: {v:.3f}" for key, v in own.items()),
        )
    )
    # 'below one' against the Poisson account: the truth's intensity scaled by 1/kappa_hat (pooled kappa_eff 1)
    p_one = np.clip(PW.intensity_scaled(f["p_fit"], KAPPA_POISSON / k_hat), 0.0, 1.0)
    not_below = 0
    for _ in range(KAPPA_OWN_REPS // KAPPA_CHUNK):
        _, _, hi_a = _kappa_inside(loglik(rng.binomial(n, p_one, size=(KAPPA_CHUNK, G.size)).astype(float)))
        not_below += int(np.sum(hi_a >= KAPPA_POISSON))
    audit.evidence(
        PW.record(
            audit,
            not_below / (KAPPA_OWN_REPS // KAPPA_CHUNK * KAPPA_CHUNK),
            alternative=f"kappa_eff = {KAPPA_POISSON:g} (the Poisson account with no transient reduction), which "
            "'ten of 12 below one' excludes",
            label="ours: pooled kappa below one",
            method=f"simulation: {KAPPA_OWN_REPS} draws of our {G.size} cells under the isotonic fit with its "
            f"intensity x {KAPPA_POISSON / k_hat:.3f} (pooled kappa 1), failing when the 95% interval's upper end is "
            f"not below {KAPPA_POISSON:g}",
        )
    )
    # the comparison of the paper's statistics: its power is bounded by the paper's 64 streams per cell, not by ours
    # (ours only sharpen the fit), and sits at the threshold; the Monte Carlo error is taken against it (a lower
    # 95% bound, power - 1.645 SE), so a power indistinguishable from 0.8 is not counted as 0.8
    audit.evidence(
        PW.simulated(
            audit,
            powers,
            KAPPA_REPS,
            alternative="the effective intensity a factor 2 off in every cell (kappa_eff x 2 or / 2)",
            label="the paper's statistics",
            method=f"simulation: {KAPPA_REPS} draws of the paper's statistics under the scaled fit, rejected when any "
            f"two-sided p-value against the null draws lies below {KAPPA_LEVEL:.4f}; ",
            decide="no sample of ours decides: the power is set by the paper's 64 streams per cell (our draws only "
            "sharpen the fit it is computed under), and it lies at the threshold",
        )
    )
    assert ok and below_one


@discrepancy("RG-sim.fig3a.kappa", reason=KAPPA_REASON, reading=KAPPA_READING)
@uses("rare_gates.grid")
def test_fig3a_kappa_paper(results):
    f = _kappa_null(results["rare_gates.grid"])
    _null_side(KAPPA_NAMES, f["paper"], f["pvals"], KAPPA_LEVEL, ".2f")


def _null_side(names, paper, pvals, level: float, fmt: str) -> None:
    """:func:`_paper_sample_side` of the paper's printed statistics ``paper`` (``names``) tested against their
    distribution under our fit, two-sided p values ``pvals``: rejected when one lies below ``level`` (Bonferroni)."""
    _paper_sample_side(
        any(pv < level for pv in pvals),
        ", ".join(f"{name}: paper {v:{fmt}}, p = {pv:.4f}" for name, v, pv in zip(names, paper, pvals))
        + f" (level {level:.4f} each)",
    )


PAPER_COND = tuple(float(v) for v in paper_numbers("RG-sim.fig3a.conditional"))  # the range's ends, 0.81 and 1
PAPER_COND_HALF = (0.005, 0.0)  # printed to two decimals (0.81), and exactly all recovered (1)
COND_STREAMS = 64  # the paper's streams per Figure 3(a) cell (Appendix 19)
COND_NULL = 200000  # null draws of the paper's two statistics: p-values near 0.025 to about +-0.0007
COND_REPS = 20000  # draws under each alternative: powers to about +-0.003
COND_LEVEL = 0.05 / 2  # the paper's two statistics (min, max), two-sided, Bonferroni
COND_READING = (
    "ours: no cell's 95% Wilson interval (Bonferroni over the cells with a sampled disagreement) lies below 0.81, and "
    "some cell recovers all its runs with a sampled disagreement. The paper's side: its range's ends (0.81, printed "
    "to two decimals, and 1) are the minimum and maximum of per-cell estimates over its 64 streams per cell, each "
    "tested against its distribution under our estimate of the truth (per cell our fraction of runs with a sampled "
    "disagreement, and our conditional recovery with the Jeffreys half-count, so that a cell of ours at 1 is not "
    "taken as certain), two-sided, Bonferroni over the two; a rejection is a discrepancy, not a failure of ours"
)
COND_REASON = _sample_reason(
    "the paper's range's ends (0.81 and 1) against their distribution under our fit (64 streams per cell), either "
    "two-sided p below the Bonferroni level over the two",
    "neither rejects",
)


def _cond_rows(grid) -> list[tuple[int, int, int]]:
    """Per cell with a sampled disagreement: (recovered among them, runs with a sampled disagreement, streams)."""
    rows = []
    for c in grid:
        dis = c["disagreements"] > 0
        if dis.any():
            rows.append((int(np.isfinite(c["recovery"])[dis].sum()), int(dis.sum()), int(dis.size)))
    return rows


def _cond_truth(rows) -> tuple[np.ndarray, np.ndarray]:
    """Our estimate of the truth per cell: P(a sampled disagreement), conditional recovery (Jeffreys half-count)."""
    a, m, n = (np.array(v, dtype=float) for v in zip(*rows))
    return m / n, (a + 0.5) / (m + 1.0)


def _cond_sample(q: np.ndarray, r: np.ndarray, reps: int, seed) -> np.ndarray:
    """The paper's (min, max) of the conditional fractions over its cells with a sampled disagreement, ``reps`` draws
    of 64 streams per cell under (q, r); draws with no such cell are dropped."""
    rng = np.random.default_rng(seed)
    m = rng.binomial(COND_STREAMS, q, size=(reps, q.size))
    k = rng.binomial(m, np.clip(r, 0.0, 1.0))
    frac = np.where(m > 0, k / np.maximum(m, 1), np.nan)
    keep = (m > 0).any(axis=1)
    return np.stack([np.nanmin(frac[keep], axis=1), np.nanmax(frac[keep], axis=1)], axis=1)


def _cond_pvalues(null: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Two-sided p-values of the rows of ``x`` (min, max) against the null draws, each value read as its printed
    window [v - h, v + h]: 2 min(P(stat <= v + h), P(stat >= v - h)), capped at 1."""
    out = np.empty(x.shape)
    for j, h in enumerate(PAPER_COND_HALF):
        col = np.sort(null[:, j])
        below = np.searchsorted(col, x[:, j] + h + 1e-12, side="right") / col.size
        above = 1.0 - np.searchsorted(col, x[:, j] - h - 1e-12, side="left") / col.size
        out[:, j] = np.minimum(1.0, 2 * np.minimum(below, above))
    return out


@functools.lru_cache(maxsize=2)
def _cond_null_of(q: tuple, r: tuple) -> np.ndarray:
    """The null draws of the paper's two statistics under our fit, once per session (both sides read them)."""
    return _cond_sample(np.array(q), np.array(r), COND_NULL, (E.SEEDS["bootstrap"], 7))


def _cond_paper(grid) -> dict:
    rows = _cond_rows(grid)
    q, r = _cond_truth(rows)
    null = _cond_null_of(tuple(q), tuple(r))
    pvals = [float(v) for v in _cond_pvalues(null, np.array([PAPER_COND]))[0]]
    return {"rows": rows, "q": q, "r": r, "null": null, "pvals": pvals}


@claim("RG-sim.fig3a.conditional", reading=COND_READING)
@uses("rare_gates.grid")
def test_fig3a_conditional(audit, results):
    f = _cond_paper(results["rare_gates.grid"])
    rows, q, r, null, pvals = f["rows"], f["q"], f["r"], f["null"], f["pvals"]
    z = E.z_bonferroni(len(rows))
    fr = [a / b for a, b, _ in rows]
    his = [E.wilson(a, b, z)[1] for a, b, _ in rows]
    audit.ours(f"{min(fr):.3f} to {max(fr):.3f} over {len(rows)} cells (min upper bound {min(his):.3f})")
    audit.ours(
        ", ".join(
            f"{name} {lo:.3f}..{hi:.3f} (paper {v:g}, p = {pv:.3f})"
            for name, (lo, hi), v, pv in zip(
                ("min", "max"),
                (np.quantile(null[:, j], [COND_LEVEL / 2, 1 - COND_LEVEL / 2]) for j in range(2)),
                PAPER_COND,
                pvals,
            )
        ),
        label=f"the paper's range under our fit (central {1 - COND_LEVEL:.1%})",
    )
    audit.evidence(
        "Per cell: recovered runs among runs with at least one sampled disagreement by H = 200. The paper's side: its "
        f"ends are the minimum and maximum of noisy per-cell estimates, so they are tested as such: under our estimate "
        f"of the truth, {COND_STREAMS} streams per cell are drawn {COND_NULL} times (independent cells; the paper's "
        "cells share streams), the runs with a sampled disagreement binomially at our cell's fraction and their "
        "recoveries at our conditional fraction with the Jeffreys half-count, and each end's two-sided p-value is "
        f"its printed window's rank, Bonferroni over the two ({COND_LEVEL:.4f} each)."
    )
    p_alt = PW.intensity_scaled(0.81, 0.5)
    cond_powers = [
        S.power_of_region(b, p_alt, S.wilson_intervals(np.arange(b + 1), b, z)[1] < 0.81) for _, b, _ in rows
    ]
    audit.evidence(
        PW.record(
            audit,
            max(cond_powers),
            alternative=f"conditional recovery {p_alt:.3f} in every cell: a factor 2 below the "
            "effective intensity of the paper's minimum 0.81",
            label="ours",
            method=f"exact: per cell P(upper Wilson bound < 0.81) at that fraction over the cell's runs with a sampled "
            f"disagreement; the cells share streams, so the check's power is at least the largest cell's "
            f"({max(cond_powers):.3f}, {rows[int(np.argmax(cond_powers))][1]} runs; smallest "
            f"{min(cond_powers):.3f})",
        )
    )
    # power of the paper's side: the conditional recovery's effective intensity a factor 2 off in every cell; the
    # paper's statistics drawn under it, rejected when either p-value against the null lies below the level
    powers = {}
    for i, (name, fac) in enumerate((("intensity x 2", 2.0), ("intensity / 2", 0.5))):
        alt = _cond_sample(q, PW.intensity_scaled(r, fac), COND_REPS, (E.SEEDS["bootstrap"], 7, i + 1))
        powers[name] = float(np.mean((_cond_pvalues(null, alt) < COND_LEVEL).any(axis=1)))
    audit.evidence(
        PW.simulated(
            audit,
            powers,
            COND_REPS,
            alternative="the conditional recovery's effective intensity a factor 2 off in every cell (x 2 or / 2)",
            label="the paper's range",
            method=f"simulation: {COND_REPS} draws of the paper's minimum and maximum ({COND_STREAMS} streams per "
            f"cell) under our fit with the intensity scaled, rejected when either two-sided p-value against the null "
            f"draws lies below {COND_LEVEL:.4f}; ",
            decide=f"no sample of ours decides: the power is set by the paper's {COND_STREAMS} streams per cell (our "
            "draws only sharpen the fit it is computed under)",
        )
    )
    assert min(his) >= 0.81 and max(fr) == 1.0


@discrepancy("RG-sim.fig3a.conditional", reason=COND_REASON, reading=COND_READING)
@uses("rare_gates.grid")
def test_fig3a_conditional_paper(results):
    _null_side(("min", "max"), PAPER_COND, _cond_paper(results["rare_gates.grid"])["pvals"], COND_LEVEL, "g")


def _kappa_mle(x, k, n) -> float:
    """Maximum-likelihood kappa of the Poisson-shaped curve P(recovery) = 1 - exp(-kappa x), x = Gamma/(pi lambda).

    kappa = 1 is the Section 8 reference; a common kappa for two sets of records means one function of Gamma.
    """
    from scipy import optimize

    x, k, n = (np.asarray(v, dtype=float) for v in (x, k, n))

    def nll(log_kappa: float) -> float:
        kappa = math.exp(log_kappa)
        return -float(np.sum(k * np.log(-np.expm1(-kappa * x)) - (n - k) * kappa * x))

    # log kappa in [-6, 6]: kappa from 0.0025 to 400, far beyond the 0.49-1.49 of the paper's cells
    res = optimize.minimize_scalar(nll, bounds=(-6.0, 6.0), method="bounded", options={"xatol": 1e-7})
    return math.exp(float(res.x))


# bootstrap replicates of the kappa ratio: over four bootstrap keys the 95% ends of the log ratio moved by up to 0.05,
# against a margin of about 0.3 to log 2 on our quick data
GAUSS_BOOT = 400
GAUSS_TOL = 2.0  # 'approximately a function of Gamma': the two kappas within a factor 2 (the house rule for a fraction)


def _gaussian_records(table1) -> tuple[np.ndarray, np.ndarray]:
    """Per D0 draw, the target-SGD records with T > 0 of both sources: x = Gamma_T/(pi lambda), recovered (draws, 8)."""
    cfg = table1["config"]
    x = np.concatenate([E.gamma_of(table1[s]["angle"][1:], cfg["b"], cfg["eta"]).T for s in ("sgd", "gd")], axis=1)
    r = np.concatenate([np.isfinite(table1[s]["sgd_recovery"][1:]).T for s in ("sgd", "gd")], axis=1)
    return x / (math.pi * LAM), r.astype(float)


@claim(
    "RG-sim.fig3a.gaussian",
    reading="the hollow diamonds (our Gaussian-initialisation records of Table 1, T > 0, both sources) and the "
    "constructed cells read as one function of Gamma when the effective intensity ratio kappa of the Poisson-shaped "
    "curve 1 - exp(-kappa Gamma/(pi lambda)), fitted to each by maximum likelihood, agrees within a factor 2 (the "
    "rule for a fraction: 'approximately'): the 95% interval of kappa_Gaussian/kappa_cells (bootstrap: the draws "
    "resampled with all their records, the cells' counts binomially) inside [1/2, 2]; the paper's bins (width 0.5 "
    "in log10 Gamma, at least five records) are reported",
)
@uses("rare_gates.grid", "rare_gates.table1")
def test_fig3a_gaussian_records(audit, results):
    grid, table1 = results["rare_gates.grid"], results["rare_gates.table1"]
    G, k, n = _grid_counts(grid)
    xc = G / (math.pi * LAM)
    xg, rg = _gaussian_records(table1)
    kc, kg = _kappa_mle(xc, k, n), _kappa_mle(xg, rg, np.ones_like(rg))
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 14], dtype=np.uint64)))
    boot = []
    for _ in range(GAUSS_BOOT):
        d = rng.integers(0, xg.shape[0], xg.shape[0])
        boot.append(math.log(_kappa_mle(xg[d], rg[d], np.ones_like(rg[d])) / _kappa_mle(xc, rng.binomial(n, k / n), n)))
    lo, hi = (float(v) for v in np.quantile(boot, [0.025, 0.975]))
    se = float(np.std(boot, ddof=1))
    false_alarm = 2 * float(stats.norm.sf(math.log(GAUSS_TOL) / se - 1.96))
    # the paper's bins: width 0.5 in log10 Gamma, at least five records, fractions without binomial intervals
    gam = (xg * math.pi * LAM).ravel()
    edges = np.floor(np.log10(gam) / 0.5) * 0.5
    bins = []
    for e in np.unique(edges):
        m = edges == e
        if m.sum() >= 5:
            bins.append(f"[{e:g}, {e + 0.5:g}): {int(rg.ravel()[m].sum())}/{int(m.sum())}")
    audit.ours(f"{kc:.3f}", label="kappa of the constructed cells (maximum likelihood)")
    audit.ours(f"{kg:.3f}", label="kappa of the Gaussian-checkpoint records (maximum likelihood)")
    audit.ours(
        f"{kg / kc:.3f} (95% bootstrap [{math.exp(lo):.3f}, {math.exp(hi):.3f}])", label="kappa ratio Gaussian/cells"
    )
    audit.ours("; ".join(bins), label="Gaussian records per bin of 0.5 in log10 Gamma (at least five records)")
    audit.evidence(
        f"{rg.size} Gaussian-checkpoint records ({rg.shape[0]} D0 draws x 2 sources x 4 source times; the paper's "
        f"512 of 64 draws) against the {G.size} constructed cells ({n[0]} streams each). Each set is fitted by one "
        "kappa in 1 - exp(-kappa Gamma/(pi lambda)) (maximum likelihood: a Poisson count of triggering "
        f"disagreements with the angle decaying at lambda, the Section 8 reference at kappa = 1). {GAUSS_BOOT} "
        "bootstrap replicates (the draws resampled with their 8 dependent records, the cells' counts binomially, "
        "Philox keyed by the bootstrap seed) give the ratio's 95% interval; the check fails when it leaves [1/2, 2]."
    )
    audit.tolerance(
        GAUSS_TOL,
        "'approximately a function of Gamma' read as the two effective intensities within a factor 2, the rule "
        "verify/rare_gates/power.py fixes for a fraction",
    )
    audit.evidence(
        PW.record(
            audit,
            float(stats.norm.cdf(1.96)),
            alternative="Gaussian records at twice (or half) the constructed cells' effective intensity at equal "
            "Gamma: recovery not one function of Gamma across the two kinds of checkpoint",
            method=f"normal approximation of the log ratio (bootstrap SE {se:.3f}): at a log ratio of log 2 the 95% "
            "interval reaches past log 2 with probability Phi(1.96) whatever the SE; the SE sets the false alarm at "
            f"a ratio of 1, P(|log ratio| + 1.96 SE > log 2) = {false_alarm:.4f}",
        )
    )
    assert -math.log(GAUSS_TOL) <= lo and hi <= math.log(GAUSS_TOL)


@claim(
    "RG-19.kappabelow",
    reading="'values below one are expected' read as: the two named mechanisms each lower kappa_eff by a factor "
    "below one, the share of runs recovering once they sample a disagreement (our Figure 3(a) cells, pooled) and "
    "the amplitude transient's intensity factor int lambda e^{-lambda t} sqrt(B0/B(t)) dt from B0 = 0.9 "
    "(derivations.rare_gates.references, 30-digit quadrature); their product is the kappa_eff they predict",
)
@uses("rare_gates.grid")
def test_kappa_below_one_expected(audit, results):
    grid = results["rare_gates.grid"]
    k_rec = sum(int(np.isfinite(c["recovery"])[c["disagreements"] > 0].sum()) for c in grid)
    k_dis = sum(int((c["disagreements"] > 0).sum()) for c in grid)
    lo, hi = E.wilson(k_rec, k_dis)
    integral = R.transient_intensity_factor().subs({R.lam: sp.Rational(1, 20), R.B0: sp.Rational(9, 10)})
    integrand = sp.lambdify(R.time, integral.function, "mpmath")
    with mpmath.workdps(30):
        factor = float(mpmath.quad(integrand, [0, 20, mpmath.inf]))
    G, k, n = _grid_counts(grid)
    inner = (k > 0) & (k < n)
    kap = np.array([E.kappa_eff(a / b, g) for a, b, g in zip(k[inner], n[inner], G[inner])])
    audit.ours(
        f"{k_rec}/{k_dis} = {k_rec / k_dis:.3f} (95% Wilson [{lo:.3f}, {hi:.3f}])",
        label="recovery once a disagreement is sampled",
    )
    audit.ours(f"{factor:.4f}", label="amplitude-transient intensity factor")
    audit.ours(f"{factor * k_rec / k_dis:.3f}", label="predicted kappa_eff (product)")
    audit.ours(f"{np.median(kap):.3f} ({int(np.sum(kap < 1))} of {kap.size} below one)", label="our median kappa_eff")
    audit.evidence(
        "Both factors must lie below one: the conditional recovery's upper 95% Wilson bound (runs of all 24 cells "
        "that sampled a disagreement, H = 200) and the quadrature of the transient factor (30 digits; its error is "
        "far below the margin)."
    )
    # 'need not trigger' is negated only by 'always triggers' (share 1): then every run with a disagreement
    # recovers, k_rec = k_dis, and the Wilson upper bound is exactly 1, so the check fails with certainty
    audit.evidence(
        PW.record(
            audit,
            1.0 if k_dis > 0 else 0.0,
            alternative="every sampled disagreement triggers recovery (conditional share 1, the premise of the "
            "Poisson reference), the only way 'need not trigger' fails",
            method=f"exact: under share 1 the {k_dis} runs with a disagreement all recover, k_rec = k_dis, whose "
            "Wilson upper bound is 1, and the check (upper bound < 1) fails with probability 1; the transient "
            "factor is a deterministic quadrature",
        )
    )
    assert hi < 1.0 and factor < 1.0


# --- Figure 1 -------------------------------------------------------------------------------------------------


FIG1_ANGLE = 1.67e-8  # the paper's Figure 1 checkpoint angle (Appendix 19, 'Trajectory')
FIG2_OFFSET = 3.9  # the paper's median GD offset c of the Figure 2 line (Appendix 19)


FIG1_RARE = 0.01  # the source '-0.0500' fails ours when it would be a 1-in-100 outcome of a D0 draw


def _fig1_source_slopes(table1) -> np.ndarray:
    """Each source-SGD draw's log-angle slope over its checkpoints T = 100..400 (the Figure 1 window)."""
    t = np.asarray(table1["times"], dtype=float)
    a = np.asarray(table1["sgd"]["angle"])
    return np.array([E.log_slope(t, a[:, j], t >= 100) for j in range(a.shape[1])])


@claim(
    "RG-sim.fig1.slopes",
    reading=READING_OWN + "; trajectory = our first D0 draw at T = 400 (eta = 1e-3, "
    "b = 16); source slope over its checkpoints T = 100..400; GD over t >= 5 with angle < 1e-3; SGD over t >= 10. "
    "The source '-0.0500' is one draw's (the authors' saved draw: unverifiable for that draw); ours is an ensemble "
    "statement: the share of our D0 draws whose source slope rounds to -0.0500, its 95% Wilson lower bound above "
    f"{FIG1_RARE:g} (the printed value is not a 1-in-100 outcome of a draw); our first draw's source slope is "
    "reported only",
)
@uses("rare_gates.table1")
def test_fig1_slopes(audit, results):
    table1 = results["rare_gates.table1"]
    tr = E.trajectory(table1)
    src = E.log_slope(tr["source_t"], tr["source_angle"], tr["source_t"] >= 100)
    gd = E.log_slope(tr["t"], tr["gd_angle"], (tr["t"] >= 5) & (tr["gd_angle"] < 1e-3))
    sgd = [E.log_slope(tr["t"], a, tr["t"] >= 10) for a in tr["sgd_angle"]]
    audit.ours(src, label="source, our first draw (reported only)")
    audit.ours(gd, label="target GD")
    audit.ours(sgd, label="target SGD streams")
    audit.ours(f"checkpoint angle {tr['checkpoint_angle']:.3e}, GD hit {tr['gd_hit']:.2f}", label="trajectory")
    starts = (2.0, 5.0, 10.0)
    moved = [E.log_slope(tr["t"], tr["gd_angle"], (tr["t"] >= t0) & (tr["gd_angle"] < 1e-3)) for t0 in starts]
    audit.evidence(
        f"-lambda slopes compared after rounding to the paper's 4 decimals; the GD slope within 1e-3 of both the "
        f"paper's 0.5861 and A = {A:.5f} (the rate is A only as delta -> 0 at the target clone; the fitted value "
        f"is {', '.join(f'{v:.5f}' for v in moved)} for the window start t = {', '.join(f'{v:g}' for v in starts)})."
    )
    sd = float(np.std(sgd, ddof=1))  # one stream's slope scatter: the spread of the four target SGD streams
    audit.evidence(
        PW.record(
            audit,
            S.power_normal(1e-4, sd, 5e-5),
            alternative="a slope 0.0001 off -lambda (the next printed value, -0.0499 or -0.0501)",
            label="SGD slopes",
            method=f"normal approximation, the slope of one stream with SD {sd:.2g} (the four target SGD streams); the "
            "check fails when it does not round to -0.0500 (|slope + 0.05| > 5e-5)",
        )
    )
    audit.figure(F.figure1(tr), "rg_fig1")
    # Why our trajectory's checkpoint angle differs from the paper's 1.67e-8: the draw, not a bug. The paper's own
    # numbers fit a draw at that angle (its Figure 2 line A^-1 log(1/delta_T) + 3.9 gives its GD time 34.4), which
    # is a typical T = 400 angle among our draws; the draw of ours nearest it is rerun with the same protocol.
    a400 = np.asarray(table1["sgd"]["angle"][-1])
    j = int(np.argmin(np.abs(np.log(a400 / FIG1_ANGLE))))
    tm = E.trajectory(table1, index=j)
    m_src = E.log_slope(tm["source_t"], tm["source_angle"], tm["source_t"] >= 100)
    m_gd = E.log_slope(tm["t"], tm["gd_angle"], (tm["t"] >= 5) & (tm["gd_angle"] < 1e-3))
    m_sgd = [E.log_slope(tm["t"], a, tm["t"] >= 10) for a in tm["sgd_angle"]]
    line = math.log(1.0 / FIG1_ANGLE) / A + FIG2_OFFSET
    audit.ours(
        f"draw {j}: checkpoint angle {tm['checkpoint_angle']:.3e}, GD hit {tm['gd_hit']:.2f}; slopes source "
        f"{m_src:.5f}, GD {m_gd:.5f}, SGD {', '.join(f'{v:.5f}' for v in m_sgd)}",
        label="our draw nearest the paper's checkpoint angle 1.67e-8",
    )
    audit.evidence(
        f"Why the trajectory differs from the paper's (checkpoint angle {tr['checkpoint_angle']:.2g} against 1.67e-8): "
        f"the setting, not a bug. Figure 1's initialisation is one of the authors' saved draws; ours is our first "
        f"draw. The paper's numbers are consistent with a draw at 1.67e-8: its Figure 2 line A^-1 log(1/delta_T) + "
        f"c, c = {FIG2_OFFSET} (Appendix 19), gives {line:.2f} there, its printed GD time 34.4. Among our "
        f"{a400.size} T = 400 checkpoints, {np.mean(a400 < FIG1_ANGLE):.0%} lie below 1.67e-8 (median "
        f"{np.median(a400):.2g}): a typical angle (the angle at T is C_s e^{{-lambda T}} with C_s spread over the "
        f"draws, RG-17.Cs). Our draw {j}, at {tm['checkpoint_angle']:.3g}, reaches risk 0.4 under GD at "
        f"{tm['gd_hit']:.2f} and gives target slopes GD {m_gd:.5f} and SGD "
        f"{', '.join(f'{v:.5f}' for v in m_sgd)} (asserted like ours: the target slopes do not depend on the draw); "
        f"its source slope over the four checkpoints T = 100..400 is {m_src:.5f} (reported: it still carries the "
        "draw's transient, so the source '-0.0500' depends on the draw)."
    )
    # the source slope over the ensemble: a one-draw '-0.0500' becomes the share of draws giving it
    slopes = _fig1_source_slopes(table1)
    n_src = slopes.size
    k_src = sum(rounds_to(v, "-0.0500") for v in slopes)
    lo_src, hi_src = E.wilson(k_src, n_src)
    flat = slopes > -0.8 * LAM  # draws far from the decay -lambda over the window
    init_flat = np.asarray(table1["sgd"]["angle"])[0][flat]  # their initial angles (the T = 0 checkpoints)
    audit.ours(
        f"{k_src}/{n_src} = {k_src / n_src:.3f} (95% Wilson [{lo_src:.3f}, {hi_src:.3f}]); median slope "
        f"{np.median(slopes):.5f}, 2.5-97.5% of draws [{np.quantile(slopes, 0.025):.5f}, "
        f"{np.quantile(slopes, 0.975):.5f}]",
        label="source slope over T = 100..400: draws rounding to -0.0500",
    )
    audit.evidence(
        f"The source slope depends on the draw: over our {n_src} source-SGD draws it rounds to -0.0500 in "
        f"{k_src} ({k_src / n_src:.0%}); the rest still carry the transient toward the decay e^{{-lambda T}} "
        f"(RG-17.Cs: the angle is C_s e^{{-lambda T}}(1 + o(1))); the {int(flat.sum())} draws with a slope above "
        f"-0.8 lambda start at initial angles {np.min(init_flat, initial=np.inf):.2f} to "
        f"{np.max(init_flat, initial=-np.inf):.2f} (near-opposite ones leave a unit nearly dead for long, RG-17.Cs) "
        f"and have slopes up to {slopes.max():.5f}. The paper's -0.0500 is its saved draw's; ours checks that it is "
        f"a typical outcome, not a 1-in-100 one (Wilson lower bound above {FIG1_RARE:g}); our first draw's {src:.5f} "
        "is reported only."
    )
    fails_src = np.array([E.wilson(j, n_src)[0] <= FIG1_RARE for j in range(n_src + 1)])
    audit.evidence(
        PW.record(
            audit,
            S.power_of_region(n_src, FIG1_RARE, fails_src),
            alternative=f"draws rounding to -0.0500 at a share {FIG1_RARE:g} (the printed value a 1-in-100 outcome "
            "of a draw, as when the source decay rate is off lambda)",
            label="source slope share",
            method=f"exact: P(95% Wilson lower bound <= {FIG1_RARE:g}) over k ~ Bin({n_src}, {FIG1_RARE:g})",
        )
    )
    assert lo_src > FIG1_RARE and all(rounds_to(s, "-0.0500") for s in sgd)
    assert abs(gd - 0.5861) <= 1e-3 and abs(gd - A) <= 1e-3
    assert rounds_to(line, "34.4")
    assert all(rounds_to(s, "-0.0500") for s in m_sgd) and abs(m_gd - 0.5861) <= 1e-3


ABOVE_RESIDUAL = 5.0  # 'well above the line': a GD hitting time at least 5 above A^-1 log(1/delta_T) + c (our reading)
INACTIVE_SHARE = 1e-3  # 'a nearly inactive unit': a unit carrying below 0.1% of the amplitude B (our reading)
INACTIVE_OMEGA = 1e-6  # the absolute alternative reading: omega_i = a_i |w_i| below 1e-6


@claim(
    "RG-19.above",
    reading=READING_OWN + f"; 'well above the line' read as a hitting time at least {ABOVE_RESIDUAL:g} above "
    f"A^-1 log(1/delta_T) + c (c our median offset), 'a nearly inactive unit' as a unit carrying less than "
    f"{INACTIVE_SHARE:.1%} of the amplitude B = omega_1 + omega_2, and 'stays close to the GF delay lambda T/A' as "
    "within 25% of it",
    fitted={
        f"a nearly inactive unit as omega_i < {INACTIVE_OMEGA:g} (absolute)": "fails at T = 100, where an inactive "
        "unit has decayed only by e^{-2 lambda T} ~ 5e-5 (counts in the evidence)"
    },
)
@uses("rare_gates.table1")
def test_gd_points_above_the_line(audit, results):
    table1 = results["rare_gates.table1"]
    off = E.gd_offsets(table1)  # (2 sources, 4 T, n)
    c = float(np.nanmedian(off))
    above, inactive, inactive_abs, close, delays = 0, 0, 0, 0, []
    for j, src in enumerate(("sgd", "gd")):
        for i, T in enumerate(table1["times"][1:]):
            ck = table1[src]["checkpoint"][i + 1]
            omega = np.abs(ck[:, :2]) * np.stack([np.hypot(ck[:, 2], ck[:, 3]), np.hypot(ck[:, 4], ck[:, 5])], axis=1)
            sel = off[j, i] - c >= ABOVE_RESIDUAL
            tau = table1[src]["gd_recovery"][i + 1][sel]
            delay = LAM * T / A
            above += int(sel.sum())
            share = omega[sel].min(axis=1) / omega[sel].sum(axis=1)
            inactive += int((share < INACTIVE_SHARE).sum())
            inactive_abs += int((omega[sel].min(axis=1) < INACTIVE_OMEGA).sum())
            close += int(np.sum(np.abs(tau - delay) <= 0.25 * delay))
            delays += [f"T={T:g} {src}: {t:.1f} vs {delay:.1f}" for t in tau]
    audit.ours(f"{above}", label=f"GD records at least {ABOVE_RESIDUAL:g} above the line (of {off.size})")
    audit.ours(f"{inactive}/{above}", label=f"of those, with a unit carrying < {INACTIVE_SHARE:.1%} of B")
    audit.ours(f"{inactive_abs}/{above}", label=f"of those, with a unit of omega < {INACTIVE_OMEGA:g} (alternative)")
    audit.ours(f"{close}/{above}", label="of those, within 25% of the GF delay lambda T/A")
    audit.evidence(
        f"Target-GD hitting times of our Table 1 checkpoints (both sources, T = 100..400) against the Figure 2 line "
        f"A^-1 log(1/delta_T) + c, c = {c:.3f} (our median offset). Each point well above it must come from a "
        "checkpoint with a nearly inactive unit and lie near the GF delay: "
        + "; ".join(delays[:12])
        + ("; ..." if len(delays) > 12 else "")
    )
    _universal_power(audit, above, "a nearly inactive unit and the GF delay, for a GD record well above the line,")
    assert above > 0 and inactive == above and close == above


COINCIDE = 0.005  # 'coincide to line width': a spread below 0.5% of the panel's vertical range (our reading)
# groups of four streams from the same checkpoint (the figure's four first, then further stream ids of its seed):
# 'every group of four coincides' has power 1 - 0.75^6 = 0.82 against groups that fail in a quarter of draws
COINCIDE_GROUPS = 6


@claim(
    "RG-sim.fig1.coincide",
    reading=READING_OWN + f"; trajectory as in RG-sim.fig1.slopes; 'coincide to line width' read as: at every "
    f"traced time the four streams' log10 angles differ by less than {COINCIDE:.1%} of the range panel (c) shows "
    "(it shares the vertical scale of (b): from the source start to the end of the target run); panel (d), the "
    "risk, has no stated scale, so its spread is reported, not tested. The four streams are a random draw (the "
    "figure's is one), so the statement is read for the law of four streams from the checkpoint: "
    f"{COINCIDE_GROUPS} independent groups of four (the figure's four streams first, then further stream ids of the "
    "same seed) must each coincide, with power against groups of four that fail to coincide in a quarter of draws",
)
@uses("rare_gates.table1")
def test_fig1_streams_coincide(audit, results):
    table1 = results["rare_gates.table1"]
    tr = E.trajectory(table1, sgd_streams=4 * COINCIDE_GROUPS)  # stream ids 0..3 are the figure's four
    src = np.log10(tr["source_angle"])

    def spread_of(la: np.ndarray) -> tuple[float, float]:
        """The largest spread of four streams' log10 angles at any traced time, and panel (b)-(c)'s vertical range
        for them (the source angles from the initialisation down to the target's smallest angle)."""
        ok = np.all(np.isfinite(la), axis=0)
        span = float(max(np.max(src), np.max(la[:, ok])) - min(np.min(src), np.min(la[:, ok])))
        return float(np.max(np.ptp(la[:, ok], axis=0))), span

    groups = [spread_of(g) for g in np.log10(tr["sgd_angle"]).reshape(COINCIDE_GROUPS, 4, -1)]
    spread, span = groups[0]
    shares = [a / b for a, b in groups]
    risk = tr["sgd_risk"][:4]
    r_ok = np.all(np.isfinite(risk), axis=0)
    r_spread = float(np.max(np.ptp(risk[:, r_ok], axis=0)))
    audit.ours(f"{spread:.3g} decades = {spread / span:.2e} of the {span:.2f} decades of (b)-(c)", label="panel (c)")
    audit.ours(
        ", ".join(f"{v:.2e}" for v in shares) + f" (largest {max(shares):.2e}; threshold {COINCIDE:g})",
        label=f"panel (c), the spread of each of {COINCIDE_GROUPS} groups of four (the figure's first)",
    )
    audit.ours(f"{r_spread:.3g} (absolute risk)", label="panel (d), reported")
    recovered = int(np.isfinite(tr["sgd_recovery"]).sum())
    audit.evidence(
        f"{COINCIDE_GROUPS} x 4 target-SGD streams from the trajectory's checkpoint (angle "
        f"{tr['checkpoint_angle']:.3e}), traced every 10 updates through t = {tr['t'][-1]:g} ({recovered} of them "
        "recover): per group of four, the largest spread across its streams at any traced time, over the vertical "
        "range of panels (b)-(c); the figure's four are the first group."
    )
    audit.evidence(
        PW.literal_all(
            audit,
            alternative=f"groups of four streams that do not coincide to line width (spread at least {COINCIDE:.1%} "
            f"of the panel) in a quarter of draws: at that rate the figure's one group of four would coincide with "
            "probability 0.75, so one group cannot decide",
            n=COINCIDE_GROUPS,
            rate=UNIVERSAL_ALT,
            label="every group of four",
        )
    )
    assert all(v < COINCIDE for v in shares)


# --- Appendix 20 ----------------------------------------------------------------------------------------------


def _a20_noise_comparisons(noise: list[dict]) -> dict:
    """Each noise setting's recovery by H against the paper's fraction read as k/128 (Newcombe at Z_NOISE)."""
    out = {}
    for z in noise:
        kp = int(round(PAPER_NOISE[(z["mode"], z["s"])] * PAPER_A20_RUNS))
        k = E.recovered_by(z["recovery"], z["horizon"])
        out[(z["mode"], z["s"])] = _compare(k, z["recovery"].size, kp, PAPER_A20_RUNS, Z_NOISE)
    return out


def _a20_counts(noise: list[dict]) -> str:
    """'none k/n; independent k, k, k; shared k, k, k' of recovery by H."""
    by = {(z["mode"], z["s"]): E.recovered_by(z["recovery"], z["horizon"]) for z in noise}
    n = noise[0]["recovery"].size
    parts = [f"none {by[('none', 0.0)]}/{n}"]
    parts += [f"{m} " + ", ".join(str(by[(m, s)]) for s in (1e-7, 1e-6, 1e-5)) for m in ("independent", "shared")]
    return "; ".join(parts) + f" of {n}"


def _late_first_model(lam: float, n: int, *, gamma: float = 0.016, t: float = 240.0, factor: float = 0.85):
    """Expected runs (of n) whose first disagreement comes after t, and P(none), under Appendix 20's Lambda(t).

    Lambda(t) = factor Gamma/(pi lam) (1 - e^{-lam t}); a run's first disagreement is after t with probability
    e^{-Lambda(t)} (1 - e^{-(Lambda(oo) - Lambda(t))}).
    """
    total = factor * gamma / (math.pi * lam)
    before = total * -math.expm1(-lam * t)
    q = math.exp(-before) * -math.expm1(-(total - before))
    return n * q, (1 - q) ** n


def _late_first(weight_decay) -> tuple[dict, int]:
    return {w["lam"]: int(np.sum(w["first"] > 240.0)) for w in weight_decay}, weight_decay[0]["first"].size


WDFIRST_LEVEL = 0.05 / 2  # the paper's 'none' is compared at two weight decays (0.01 and 0.05): Bonferroni


WDFIRST_READING = (
    READING_A20 + "; a setting-dependent tension: the setting of the weight-decay controls is lost in the text. Ours: "
    "none after t = 240 at lambda = 0.05 (literal, over our runs) and our count at lambda = 0.01 inside the 95% "
    "binomial range of Appendix 20's own Lambda(t) model; the paper's side: its 'none' (read as 0 of 128) against "
    "our count at lambda = 0.01, two-sided Fisher exact at the Bonferroni level over the two weight decays it is "
    "claimed for (a rejection is a discrepancy, not a failure of ours)"
)
WDFIRST_REASON = "setting-dependent and " + _sample_reason(
    f"the paper's none of {PAPER_A20_RUNS} runs (our reading) with a first disagreement after t = 240 at lambda = "
    "0.01 against our count, two-sided Fisher exact below the Bonferroni level over the two weight decays; the "
    "setting is a guess (see the reading), and at b <= 8 Appendix 20's own Lambda(t) makes 'none' likely",
    "our draws do not reject",
)


@claim(
    "RG-sim.A20.wdfirst",
    reading=WDFIRST_READING,
    fitted=_a20_alternatives(
        "the paper's 'none' is as (un)likely as that probability says, against "
        f"{A20_AT_16['p_none_late']:.3f} at b = 16: the tension vanishes at b <= 8 and sharpens at b >= 32 "
        + A20_ALT_NOTE
    ),
)
@uses("rare_gates.weight_decay", "rare_gates.weight_decay_b8")
def test_weight_decay_first_disagreements(audit, results):
    weight_decay = results["rare_gates.weight_decay"]
    late, n = _late_first(weight_decay)
    w01 = next(w for w in weight_decay if w["lam"] == 0.01)
    p = E.fisher_p(late[0.01], n, 0, PAPER_A20_RUNS)
    expected, _ = _late_first_model(0.01, n, gamma=w01["gamma"])
    _, p_none_paper = _late_first_model(0.01, PAPER_A20_RUNS, gamma=w01["gamma"])
    # ours against the Lambda(t) model: the count is binomial(n, expected/n); two-sided 95% acceptance region
    lo_k, hi_k = stats.binom.ppf(0.025, n, expected / n), stats.binom.isf(0.025, n, expected / n)
    audit.ours(
        f"lambda=0.05: {late[0.05]}/{n}; lambda=0.01: {late[0.01]}/{n} (last at t = "
        f"{np.nanmax(w01['first']):.1f}; Fisher vs 0/{PAPER_A20_RUNS}: p = {p:.3f}); lambda=0: {late[0.0]}/{n}",
        label="runs with the first disagreement after t = 240",
    )
    audit.ours(
        f"{expected:.2f} expected (95% binomial range {lo_k:.0f}..{hi_k:.0f}); P(none of {PAPER_A20_RUNS}) = "
        f"{p_none_paper:.3f}",
        label="Lambda(t) model at lambda = 0.01",
    )
    wd8 = results["rare_gates.weight_decay_b8"]
    late8, n8 = _late_first(wd8)
    g8 = next(w for w in wd8 if w["lam"] == 0.01)["gamma"]
    exp8, _ = _late_first_model(0.01, n8, gamma=g8)
    audit.ours(
        f"first disagreement after t = 240: lambda=0.05: {late8[0.05]}/{n8}; lambda=0.01: {late8[0.01]}/{n8} (Fisher "
        f"vs 0/{PAPER_A20_RUNS}: p = {E.fisher_p(late8[0.01], n8, 0, PAPER_A20_RUNS):.3f}; Lambda(t) expects "
        f"{exp8:.2f}, P(none of {PAPER_A20_RUNS}) = {_late_first_model(0.01, PAPER_A20_RUNS, gamma=g8)[1]:.3f})",
        label=A20_B8_LABEL,
    )
    lams = ", ".join(f"{w['lam']:g}" for w in weight_decay)
    audit.evidence(
        f"Appendix 20 weight-decay controls: constructed checkpoint, target lambda in "
        f"{{{lams}}}, H = {w01['horizon']:g}, risk "
        f"every 10 updates, disagreements every update. At lambda = 0.05 none after t = 240 ({late[0.05]}/{n}), as "
        f"claimed. At lambda = 0.01 our count {late[0.01]} lies in the 95% range {lo_k:.0f}..{hi_k:.0f} of Appendix "
        f"20's own Lambda(t) model, under which the paper's 'none' of {PAPER_A20_RUNS} has probability "
        f"{p_none_paper:.3f} in this setting: a tension that rests on the setting (a smaller Gamma makes 'none' "
        f"likely) and on one comparison, Fisher p = {p:.3f} against their 0, which the Bonferroni level "
        f"{WDFIRST_LEVEL:.3f} over the two weight decays {'does not reject' if p >= WDFIRST_LEVEL else 'rejects'}."
    )
    q = expected / n
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"late first disagreements at lambda = 0.01 at the Lambda(t) model's rate {q:.4f}, where "
            "the paper has none",
            cells=[(0.0, n, PAPER_A20_RUNS, "streams")],
            directions={f"rate {q:.4f}": lambda _p: q},
            test="fisher",
            level=WDFIRST_LEVEL,
            label="ours vs the paper's none",
        )
    )
    # ours: the count at lambda = 0.01 inside the model's 95% binomial range; power against a factor 2 in the model's
    # intensity Gamma (the late-first probability is not monotone in Gamma, so both directions are computed)
    inside = (np.arange(n + 1) >= lo_k) & (np.arange(n + 1) <= hi_k)
    model_powers = {
        name: S.power_of_region(n, _late_first_model(0.01, n, gamma=w01["gamma"] * f)[0] / n, ~inside)
        for name, f in (("Gamma x 2", 2.0), ("Gamma / 2", 0.5))
    }
    audit.evidence(
        PW.record(
            audit,
            min(model_powers.values()),
            alternative="the Lambda(t) model's intensity a factor 2 off at lambda = 0.01 (Gamma x 2 or / 2)",
            label="ours vs the Lambda(t) model",
            method=f"exact: P(count outside {lo_k:.0f}..{hi_k:.0f}) over k ~ Bin({n}, q) at the model's late-first "
            "probability q of the scaled Gamma; " + "; ".join(f"{k}: {v:.3f}" for k, v in model_powers.items()),
            decide=f"the expected count (about {expected:.0f} of {n}) is too small for a factor 2 to show; the count "
            "is a check "
            "that the timing follows Appendix 20's own Lambda(t), and the tension with the paper's 'none' is its "
            "paper side",
        )
    )
    audit.evidence(
        PW.Exceptions("first disagreements after t = 240 at lambda = 0.05", n, f"none of {n}", digits=4).literal(
            audit, n, label="none at lambda = 0.05"
        )
    )
    assert late[0.05] == 0
    assert lo_k <= late[0.01] <= hi_k


@discrepancy("RG-sim.A20.wdfirst", reason=WDFIRST_REASON, reading=WDFIRST_READING)
@uses("rare_gates.weight_decay")
def test_weight_decay_first_disagreements_paper(results):
    late, n = _late_first(results["rare_gates.weight_decay"])
    p = E.fisher_p(late[0.01], n, 0, PAPER_A20_RUNS)
    what = "runs with a first disagreement after t = 240 at lambda = 0.01"
    _fisher_side(late[0.01], n, p, what, f"0 of {PAPER_A20_RUNS}", WDFIRST_LEVEL)


A20_PLATEAU_READING = (
    READING_A20 + "; 'plateaus through H = 1000' read as a rate: ours, the recoveries in (H/2, H] among the runs "
    "unrecovered at H/2 (both weight decays pooled), its one-sided 95% Clopper-Pearson upper bound below the rate a "
    "recovery intensity that does not decay would give (the second half recovering the unrecovered runs at the first "
    "half's rate); the paper's literal none over its runs (PAPER_A20_RUNS per setting, unrecovered at H/2 in our "
    "proportion) is its sample's, compared with our count by a two-sided Fisher exact test (the paper's side); 'keeps "
    "accumulating' as a Wilson-significant gain over (H/2, H] at lambda = 0"
)
A20_PLATEAU_REASON = _sample_reason(
    "the paper's plateau (no recovery in (H/2, H] over its runs, read as ours in number) against our count, "
    "two-sided Fisher exact at 5%",
    after=" (the late-recovery rate)",
)


def _a20_late(weight_decay) -> tuple[int, int, float, int]:
    """Pooled over the weight decays lambda > 0: recoveries in (H/2, H], runs unrecovered at H/2, the late rate a
    constant recovery intensity would give (P(recovery in (H/2, H] | none by H/2) = P(recovery by H/2) per setting,
    weighted by the runs left), and the paper's runs unrecovered at H/2 (PAPER_A20_RUNS per setting, our proportion)."""
    late = left = left_paper = 0
    flat = 0.0
    for w in weight_decay:
        if w["lam"] > 0:
            n = w["recovery"].size
            k_half, k_end = E.recovered_by(w["recovery"], w["horizon"] / 2), E.recovered_by(w["recovery"], w["horizon"])
            late, left = late + k_end - k_half, left + n - k_half
            flat += (n - k_half) * k_half / n
            left_paper += round((n - k_half) * PAPER_A20_RUNS / n)
    return late, left, flat / max(left, 1), left_paper


@claim(
    "RG-sim.A20.wdplateau",
    reading=A20_PLATEAU_READING,
    fitted=_a20_alternatives(
        "the Poisson reference scales with Gamma (the plateau, a property of the decaying intensity, holds at any b "
        "in the Lambda(t) model, whose tail after H/2 is e^{{-lambda H/2}} of the total) " + A20_ALT_NOTE
    ),
)
@uses("rare_gates.weight_decay", "rare_gates.weight_decay_b8")
def test_weight_decay_plateau(audit, results):
    weight_decay = results["rare_gates.weight_decay"]
    out = {}
    for w in weight_decay:
        n, H = w["recovery"].size, w["horizon"]
        k_half, k_end = E.recovered_by(w["recovery"], H / 2), E.recovered_by(w["recovery"], H)
        lo, hi = E.wilson(k_end, n)
        ref = float(E.poisson_reference(w["gamma"], w["lam"])) if w["lam"] > 0 else math.nan
        out[w["lam"]] = (k_half, k_end, n, lo, ref)
        audit.ours(
            f"{k_half}/{n} by t = {H / 2:g}, {k_end}/{n} by H = {H:g} (95% [{lo:.3f}, {hi:.3f}]; Poisson "
            f"reference {ref:.3f})",
            label=f"lambda = {w['lam']:g}",
        )
    gain0 = out[0.0][1] - out[0.0][0]
    parts8 = []
    for w in results["rare_gates.weight_decay_b8"]:
        n8, H8 = w["recovery"].size, w["horizon"]
        kh, ke = E.recovered_by(w["recovery"], H8 / 2), E.recovered_by(w["recovery"], H8)
        ref8 = f"{float(E.poisson_reference(w['gamma'], w['lam'])):.3f}" if w["lam"] > 0 else "none"
        parts8.append(f"lambda = {w['lam']:g}: {kh}/{n8} by t = {H8 / 2:g}, {ke}/{n8} by H (Poisson reference {ref8})")
    audit.ours("; ".join(parts8), label=A20_B8_LABEL)
    audit.evidence(
        "Recovered counts of the weight-decay controls at H/2 and H; 'at or below the reference': the "
        "reference not below our 95% Wilson interval. Without weight decay the gain over (H/2, H] must "
        "have a Wilson lower bound above zero."
    )
    # plateau: a rate among the runs unrecovered at H/2 (ours), the paper's literal none its sample's (its side)
    late, left, flat, left_paper = _a20_late(weight_decay)
    audit.evidence(
        PW.Exceptions(
            "recoveries in (H/2, H]",
            left_paper,
            f"the paper's none over its {left_paper}",
            of=" of the runs unrecovered at H/2",
            digits=4,
        ).fisher(
            audit,
            left,
            "plateau",
            note=" (the paper's side: its none against ours)",
            label="the paper's side: Fisher vs its none",
        )
    )
    plateau = _rate_check(
        audit,
        late,
        left,
        flat,
        side="upper",
        what="recoveries in (H/2, H] at lambda > 0",
        alternative=f"a recovery intensity that does not decay: the runs unrecovered at H/2 recover in (H/2, H] at "
        f"the first half's rate, {flat:.4f} pooled",
        label="plateau",
    )
    ref_powers = {}
    for lam in (0.01, 0.05):
        _, _, n, _, ref = out[lam]
        los = S.wilson_intervals(np.arange(n + 1), n)[0]
        ref_powers[lam] = S.power_of_region(n, float(PW.intensity_scaled(ref, 2.0)), los > ref)
    audit.evidence(
        PW.record(
            audit,
            max(ref_powers.values()),
            alternative="recovery at twice the Poisson reference's intensity at both weight decays",
            label="at or below the reference",
            method="exact: P(lower 95% Wilson bound > reference) at p = 1 - (1 - reference)^2, "
            + ", ".join(f"lambda = {k:g}: {v:.3f}" for k, v in ref_powers.items())
            + "; the settings share streams, so the check's power is at least the larger",
        )
    )
    assert plateau and all(out[lam][4] >= out[lam][3] for lam in (0.01, 0.05))
    assert E.wilson(gain0, out[0.0][2])[0] > 0


@discrepancy("RG-sim.A20.wdplateau", reason=A20_PLATEAU_REASON, reading=A20_PLATEAU_READING)
@uses("rare_gates.weight_decay")
def test_weight_decay_plateau_paper(results):
    late, left, _, left_paper = _a20_late(results["rare_gates.weight_decay"])
    p = E.fisher_p(late, left, 0, left_paper)
    _fisher_side(late, left, p, "runs unrecovered at H/2 that recover in (H/2, H]", f"0 of {left_paper}", 0.05)


Z_NOISE = E.z_bonferroni(7)  # seven noise settings compared with the paper's values


@claim(
    "RG-sim.A20.noise",
    reading=READING_A20 + "; the paper's fractions read as k/128 and compared as "
    "independent samples (Newcombe, Bonferroni over the 7 settings); power per setting against a slip in that "
    "setting alone, the weakest setting's recorded",
    fitted=_a20_alternatives(
        f"the no-noise base is then that value against {A20_AT_16['none_H']:.3f} at b = 16 " + A20_ALT_NOTE
    ),
)
@uses("rare_gates.noise", "rare_gates.weight_decay", "rare_gates.noise_b8")
def test_parameter_noise(audit, results):
    noise, weight_decay = results["rare_gates.noise"], results["rare_gates.weight_decay"]
    comps = {}
    for z in noise:
        n = z["recovery"].size
        key = (z["mode"], z["s"])
        kp = int(round(PAPER_NOISE[key] * PAPER_A20_RUNS))
        comps[key] = c = _compare(E.recovered_by(z["recovery"], z["horizon"]), n, kp, PAPER_A20_RUNS, Z_NOISE)
        audit.ours(_fmt(c), label=f"{z['mode']}, s = {z['s']:g}")
    indep = [comps[("independent", s)]["ours"] for s in (1e-7, 1e-6, 1e-5)]
    comps8 = _a20_noise_comparisons(results["rare_gates.noise_b8"])
    off8 = [f"{m}, s = {s:g}" for (m, s), c in comps8.items() if not c["consistent"]]
    audit.ours(
        f"{_a20_counts(results['rare_gates.noise_b8'])}; consistent with the paper (Newcombe, Bonferroni over 7) in "
        f"{len(comps8) - len(off8)} of {len(comps8)} settings (b = 16: "
        f"{sum(c['consistent'] for c in comps.values())} of {len(comps)})"
        + (f"; off: {', '.join(off8)}" if off8 else ""),
        label=A20_B8_LABEL,
    )
    audit.evidence(
        "Noise s sqrt(eta) xi_i after every target step (independent per unit, or one vector shared), "
        f"runs continue to H = {noise[0]['horizon']:g}; recovery = first check with risk <= 0.4. Also: "
        "independent noise increases recovery with s, and beats shared noise at s = 1e-6 and 1e-5 "
        "(one-sided Fisher, 1%)."
    )
    # power per setting against a slip in that setting alone (the claim quotes seven numbers, each a statement of its
    # own; the rule of RG-sim.T2.fractions): each call records one, the verdict takes the weakest. A printed 1.00 is
    # 'all of the runs', whose alternative is the exception rate of verify.rare_gates.power
    for (mode, s), c in comps.items():
        if c["paper"] < 1.0:
            what, directions = "a factor 2 in the effective intensity", PW.factor(2)
        else:
            q = PW.exception_rate(PAPER_A20_RUNS)
            what = f"unrecovered runs at the rate {q:.4f} at which all {PAPER_A20_RUNS} would be a 1-in-100 event"
            directions = {f"exceptions at {q:.4f}": lambda p, q=q: p - q}
        audit.evidence(
            PW.comparison(
                audit,
                alternative=f"{what}, in the setting {mode}, s = {s:g} alone (a single-setting slip): see "
                "verify.rare_gates.power",
                cells=[(c["paper"], noise[0]["recovery"].size, PAPER_A20_RUNS, (mode, s))],
                directions=directions,
                z=Z_NOISE,
                label=f"{mode}, s = {s:g}",
            )
        )
    audit.figure(F.figure5(weight_decay, noise, paper_noise=PAPER_NOISE), "rg_fig5")
    assert all(c["consistent"] for c in comps.values())
    assert indep[0] < indep[1] <= indep[2]
    n = noise[0]["recovery"].size
    for s in (1e-6, 1e-5):
        ki, ks = (round(comps[(m, s)]["ours"] * n) for m in ("independent", "shared"))
        assert stats.fisher_exact([[ki, n - ki], [ks, n - ks]], alternative="greater")[1] < 0.01


@claim(
    "RG-sim.A20.noiseangle",
    reading=READING_A20 + "; 'of this order' read as within a factor 3 of 5.8 s; "
    "'continues to increase' as a Wilson-significant gain over (H/2, H] at s = 1e-7",
    fitted=_a20_alternatives(
        "the OU scale s/(r sqrt(lambda)) does not involve b, so the 5.8 s comparison is expected to stand; the "
        "gain over (H/2, H] at s = 1e-7 is reported there " + A20_ALT_NOTE
    ),
)
@uses("rare_gates.noise", "rare_gates.noise_b8")
def test_noise_angle_scale(audit, results):
    noise = results["rare_gates.noise"]
    ratios, angles_by_s = {}, {}
    for z in noise:
        if z["mode"] != "independent":
            continue
        unrec = ~np.isfinite(z["recovery"])
        if unrec.sum() >= 5:
            angles_by_s[z["s"]] = z["final_angle"][unrec] / (5.8 * z["s"])
            ratios[z["s"]] = float(np.median(angles_by_s[z["s"]]))
            audit.ours(ratios[z["s"]], label=f"median unrecovered angle / (5.8 s), s = {z['s']:g}")
    z7 = next(z for z in noise if z["mode"] == "independent" and z["s"] == 1e-7)
    n, H = z7["recovery"].size, z7["horizon"]
    gain = E.recovered_by(z7["recovery"], H) - E.recovered_by(z7["recovery"], H / 2)
    audit.ours(f"{gain}/{n}", label="recoveries in (H/2, H], s = 1e-7")
    parts8 = []
    for z in results["rare_gates.noise_b8"]:
        unrec8 = ~np.isfinite(z["recovery"])
        if z["mode"] == "independent" and unrec8.sum() >= 5:
            parts8.append(f"s = {z['s']:g}: {float(np.median(z['final_angle'][unrec8] / (5.8 * z['s']))):.2f}")
    z8 = next(z for z in results["rare_gates.noise_b8"] if z["mode"] == "independent" and z["s"] == 1e-7)
    gain8 = E.recovered_by(z8["recovery"], H) - E.recovered_by(z8["recovery"], H / 2)
    audit.ours(
        f"median unrecovered angle / (5.8 s): {', '.join(parts8)}; recoveries in (H/2, H] at s = 1e-7: {gain8}/"
        f"{z8['recovery'].size} (95% Wilson lower bound {E.wilson(gain8, z8['recovery'].size)[0]:.3f})",
        label=A20_B8_LABEL,
    )
    r_t = float(sp.N(R.target_clone_norm().subs(R.lam, sp.Rational(1, 20)), 15))
    scale = float(sp.N(R.angle_noise_scale().subs({R.lam: sp.Rational(1, 20), R.s_noise: 1}), 15))
    audit.evidence(
        f"Angle at H = {H:g} of the runs that never reached risk 0.4 (at least 5 such runs); the OU "
        f"scale s/(r sqrt(lambda)) with r = {r_t:.3f} is {scale:.2f} s (references.angle_noise_scale)."
    )
    by_direction = {}
    for f in (4.0, 0.25):
        best = 0.0
        for a in angles_by_s.values():
            moved = a * f / float(np.median(a))  # the runs' angles with their median ratio moved to f

            def trial(rng, moved=moved):
                return not 1 / 3 <= float(np.median(moved[rng.integers(0, moved.size, moved.size)])) <= 3

            best = max(best, S.power_by_simulation(trial, reps=400, seed=E.SEEDS["bootstrap"]).power)
        by_direction[f] = best
    weak = min(by_direction, key=by_direction.get)
    audit.evidence(
        PW.record(
            audit,
            by_direction[weak],
            alternative="median angles a factor 4 from 5.8 s (beyond the factor 3 of the reading 'of this order')",
            method="simulation: each noise scale's unrecovered angles rescaled to that median ratio, resampled with "
            "replacement, 400 replicates; the scales share streams, so the check's power is at least the largest; "
            + ", ".join(f"ratio {k:g}: {v:.3f}" for k, v in by_direction.items()),
        )
    )
    assert ratios and all(1 / 3 <= r <= 3 for r in ratios.values())
    assert E.wilson(gain, n)[0] > 0


# --- joint sweep, Figure 4 (full profile only) --------------------------------------------------------------------


def _half_times(joint, rows=None) -> np.ndarray:
    rec = joint["recovered"] if rows is None else joint["recovered"][:, :, rows]
    return np.array([E.half_time(joint["times"], rec[i].mean(axis=1)) for i in range(rec.shape[0])])


@claim(
    "RG-sim.joint.Thalf",
    reading=READING_OWN + "; ours and the paper's T_1/2 compared as two estimates: our "
    "cluster-bootstrap SE over inits, the paper's SE taken as ours x sqrt(n/64), z Bonferroni over the 5 etas",
)
@uses("rare_gates.joint")
def test_joint_half_times(audit, results):
    joint = results["rare_gates.joint"]
    n = joint["init"].shape[0]
    half = _half_times(joint)
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 2], dtype=np.uint64)))
    boot = np.array([_half_times(joint, rng.integers(0, n, n)) for _ in range(400)])
    se = np.nanstd(boot, axis=0, ddof=1)
    z = E.z_bonferroni(5)
    ok = [abs(h - p) <= z * s * math.sqrt(1 + n / 64) for h, p, s in zip(half, PAPER_HALF, se)]
    audit.ours(", ".join(f"{h:.1f} (SE {s:.1f})" for h, s in zip(half, se)), label="T_1/2 for eta = 4..0.25e-3")
    times = joint["times"]
    audit.evidence(
        f"{n} D0 draws, SGD in both phases (b = {joint['b']}), source checkpoints every "
        f"{times[1] - times[0]:g} along one trajectory per init and eta, fresh target stream from each "
        "through H = 200 (risk every 10 updates); T_1/2 by linear interpolation; SE from 400 bootstrap "
        f"resamples of inits; z = {z:.3f}."
    )
    shift = math.log(2) / LAM
    powers = [S.power_normal(shift, sd * math.sqrt(1 + n / 64), z * sd * math.sqrt(1 + n / 64)) for sd in se]
    audit.evidence(
        PW.record(
            audit,
            max(powers),
            alternative=f"T_1/2 shifted by log(2)/lambda = {shift:.1f} at every eta, the shift a "
            "factor 2 in eta or in Gamma_T makes",
            method="normal approximation per eta with the check's SE of the difference; the etas share inits, so the "
            f"check's power is at least the largest: {', '.join(f'{v:.3f}' for v in powers)}",
        )
    )
    audit.figure(F.figure4(joint, PAPER_HALF), "rg_fig4")
    assert all(ok)


@claim(
    "RG-3.Tloss",
    reading=READING_OWN + "; 'the source time at which warm recovery is lost grows as eta decreases' read as our "
    "T_1/2 (linear interpolation, as RG-sim.joint.Thalf) having a positive least-squares slope against log2(1/eta) "
    "over the five step sizes, the lower end of its 95% cluster-bootstrap interval over inits above 0; the paper's "
    "own five T_1/2 (Appendix 19) are reported beside, as the consistency of Section 3's sentence with them",
)
@uses("rare_gates.joint")
def test_recovery_loss_time_grows_as_eta_decreases(audit, results):
    joint = results["rare_gates.joint"]
    n = joint["init"].shape[0]
    x = np.log2(joint["etas"][0] / np.asarray(joint["etas"], dtype=float))  # 0, 1, .., 4: halvings of eta

    def slope(half) -> float:
        ok = np.isfinite(half)
        return float(np.polyfit(x[ok], half[ok], 1)[0]) if ok.sum() >= 2 else math.nan

    half = _half_times(joint)
    ours = slope(half)
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 4], dtype=np.uint64)))
    boot = np.array([slope(_half_times(joint, rng.integers(0, n, n))) for _ in range(400)])
    boot = boot[np.isfinite(boot)]
    lo, hi = (float(v) for v in np.quantile(boot, [0.025, 0.975]))
    se = float(np.std(boot, ddof=1))
    paper_steps = [b - a for a, b in zip(PAPER_HALF, PAPER_HALF[1:])]
    audit.ours(", ".join(f"{h:.1f}" for h in half), label="our T_1/2 for eta decreasing from 4e-3 to 2.5e-4")
    audit.ours(
        f"{ours:.2f} [{lo:.2f}, {hi:.2f}] (SE {se:.2f})", label="slope of T_1/2 per halving of eta, 95% interval"
    )
    audit.ours(
        f"{', '.join(f'{h:g}' for h in PAPER_HALF)}; successive changes {', '.join(f'{d:+.1f}' for d in paper_steps)}"
        f" ({'increasing' if all(d > 0 for d in paper_steps) else 'not increasing'})",
        label="the paper's own T_1/2 (Appendix 19), reported",
    )
    audit.evidence(
        f"{n} D0 draws of our joint sweep (b = {joint['b']}); T_1/2 per eta by linear interpolation, the slope "
        f"against log2(1/eta) by least squares; 95% percentile interval from {boot.size} bootstrap resamples of inits "
        f"(the etas share inits, so resampling inits keeps their dependence). The collapse in Gamma_T = b delta_T/eta "
        f"predicts log(2)/lambda = {math.log(2) / LAM:.1f} per halving."
    )
    audit.evidence(
        PW.record(
            audit,
            float(stats.norm.cdf(E.Z95)),
            alternative="no growth: T_1/2 flat in eta (slope 0), the nearest account under which the statement is "
            "false",
            method=f"normal approximation of the slope estimate with its bootstrap SE {se:.2f}: P(lower 95% bound "
            "<= 0) at slope 0",
        )
    )
    assert lo > 0


@claim(
    "RG-sim.joint.offsets",
    reading=READING_OWN + "; the offsets T_1/2 - lambda^-1 log(b/eta) read as constant across eta (chi-square with "
    "4 df at 5% on bootstrap SEs, conservative for the positively correlated estimates that share inits); the "
    "paper's printed offsets checked as its own T_1/2 minus lambda^-1 log(b/eta) at lambda = 0.05, b = 16",
)
@uses("rare_gates.joint")
def test_joint_offsets(audit, results):
    joint = results["rare_gates.joint"]
    n = joint["init"].shape[0]
    b = joint["b"]
    half = _half_times(joint)
    offsets = half - np.log(b / np.array(joint["etas"])) / LAM
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 3], dtype=np.uint64)))
    boot = np.array([_half_times(joint, rng.integers(0, n, n)) for _ in range(400)])
    se = np.nanstd(boot, axis=0, ddof=1)
    w = 1 / se**2
    chi2 = float(np.sum(w * (offsets - np.sum(w * offsets) / np.sum(w)) ** 2))
    # the paper's own arithmetic: its T_1/2 minus lambda^-1 log(b/eta) must print as its offsets
    paper_arith = [h - math.log(b / e) / LAM for h, e in zip(PAPER_HALF, joint["etas"])]
    arith_ok = [rounds_to(v, f"{q:.1f}") for v, q in zip(paper_arith, PAPER_HALF_OFFSET)]
    audit.ours(
        ", ".join(f"{o:.1f} (paper {q:.1f})" for o, q in zip(offsets, PAPER_HALF_OFFSET)),
        label="T_1/2 - lambda^-1 log(b/eta)",
    )
    audit.ours(", ".join(f"{v:.2f}" for v in paper_arith), label="the paper's T_1/2 minus lambda^-1 log(b/eta)")
    audit.ours(f"{chi2:.2f} (5% critical value {stats.chi2.isf(0.05, 4):.2f})", label="chi-square of constancy")
    audit.evidence(
        f"{n} D0 draws; T_1/2 per eta by linear interpolation, SEs from 400 bootstrap resamples of the draws; the "
        "offsets' constancy by a chi-square test with 4 df at 5%. Our offsets differ from the paper's exactly as "
        "our T_1/2 differ from its T_1/2 (that comparison, at power, is RG-sim.joint.Thalf); the paper's printed "
        f"offsets are its T_1/2 minus lambda^-1 log(b/eta) to the printed digit: {sum(arith_ok)} of 5."
    )
    step = math.log(2) / (2 * LAM)  # half the eta-dependence of T_1/2 that the collapse in Gamma_T implies
    trend = -step * np.log2(np.array(joint["etas"][0]) / np.array(joint["etas"]))
    nc = float(np.sum(w * (trend - np.sum(w * trend) / np.sum(w)) ** 2))
    audit.evidence(
        PW.record(
            audit,
            float(stats.ncx2.sf(stats.chi2.isf(0.05, 4), 4, nc)),
            alternative=f"offsets falling by "
            f"log(2)/(2 lambda) = {step:.1f} per halving of eta: T_1/2 with half the eta-dependence of a collapse in "
            "Gamma_T",
            label="chi-square of constancy",
            method=f"noncentral chi-square, 4 df, noncentrality {nc:.2f} from the check's bootstrap SEs",
        )
    )
    assert chi2 <= stats.chi2.isf(0.05, 4)
    assert all(arith_ok)


COLLAPSE_BAND = math.log(2) / math.log(16)  # |d log Lambda/d log eta| at fixed Gamma_T: a factor 2 over eta's 16x range


def _collapse_fit(joint, inits=None) -> tuple[float, float]:
    """cloglog fit of the T > 0 records: log Lambda = c + beta log Gamma_T + beta2 (log Gamma_T)^2 + g log eta.

    Returns (beta at the median log Gamma_T, g); ``inits`` selects (and repeats) initialisations.
    """
    rec, ang = joint["recovered"][:, 1:], joint["angle"][:, 1:]
    if inits is not None:
        rec, ang = rec[:, :, inits], ang[:, :, inits]
    etas = np.array(joint["etas"])[:, None, None] * np.ones(rec.shape)
    lg = np.log(joint["b"] * ang / etas).ravel()
    le = np.log(etas).ravel()
    ok = np.isfinite(lg)
    x0 = float(np.median(lg[ok]))
    X = np.column_stack([np.ones(ok.sum()), lg[ok] - x0, (lg[ok] - x0) ** 2, le[ok] - np.mean(le[ok])])
    k = rec.ravel()[ok].astype(float)
    fit = S.cloglog_fit(k, np.ones_like(k), X)
    return float(fit.coef[1]), float(fit.coef[3])


@claim(
    "RG-sim.joint.collapse",
    reading=READING_OWN + "; 'fall close to one curve in Gamma_T' read as: at equal Gamma_T the effective intensity "
    "-log(1 - p) changes by at most a factor 2 across the 16-fold range of eta, i.e. in a cloglog regression of the "
    "T > 0 records on a quadratic in log Gamma_T and on log eta, the log eta coefficient g lies within "
    f"+-{COLLAPSE_BAND:.2f} (log 2/log 16). An equivalence test: the check shows the collapse only when its 95% "
    "cluster-bootstrap interval (over inits: records of one init share a source trajectory) lies inside that band "
    "(two one-sided tests at 2.5% each); its power is the probability of showing it when there is no eta effect at "
    "all (g = 0). Below power 0.8 the verdict is inconclusive and the check then fails only when the interval lies "
    "wholly outside the band (an eta effect shown)",
)
@uses("rare_gates.joint")
def test_joint_collapse(audit, results):
    joint = results["rare_gates.joint"]
    n = joint["init"].shape[0]
    beta, g = _collapse_fit(joint)
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 5], dtype=np.uint64)))
    boot = np.array([_collapse_fit(joint, rng.integers(0, n, n))[1] for _ in range(200)])
    se = float(np.std(boot, ddof=1))
    lo, hi = g - S.Z95 * se, g + S.Z95 * se
    audit.ours(f"{g:+.3f} [{lo:+.3f}, {hi:+.3f}] (95%)", label="log eta coefficient at fixed Gamma_T")
    audit.ours(f"{beta:.3f}", label="log Gamma_T coefficient at the median Gamma_T")
    audit.evidence(
        f"{n} D0 draws x {len(joint['etas'])} step sizes x {joint['recovered'].shape[1] - 1} checkpoint times T > 0, "
        "one record each (recovered by H = 200, the checkpoint's Gamma_T = b delta_T/eta); cloglog regression "
        "(numerics.stats.cloglog_fit), SE of the eta coefficient from 200 bootstrap resamples of the inits. A curve "
        f"in the angle delta_T alone instead of Gamma_T would put g near the Gamma_T slope, {beta:.2f}."
    )
    inside = -COLLAPSE_BAND <= lo and hi <= COLLAPSE_BAND
    # the power at other numbers of inits, the bootstrap SE scaled as 1/sqrt(inits) (independent inits)
    other = {"the paper's 64": 64, **{f"{k} profile": E.sizes(k).joint_inits for k in ("quick", "full")}}
    at_sizes = []
    for name, m in other.items():
        if m == 0:
            at_sizes.append(f"{name}: not run (joint_inits = 0, no verdict)")
            continue
        at_sizes.append(f"{name} ({m} inits): {PW.equivalence_power(se * math.sqrt(n / m), COLLAPSE_BAND):.2f}")
    audit.ours(
        f"{'inside' if inside else 'not inside'} +-{COLLAPSE_BAND:.3f} (95% interval [{lo:+.3f}, {hi:+.3f}])",
        label="equivalence: the interval inside the band",
    )
    eq_text = PW.equivalence(
        audit,
        alternative=f"no eta effect at fixed Gamma_T (g = 0): the probability that the 95% interval falls inside "
        f"+-{COLLAPSE_BAND:.3f}, i.e. that the check shows the collapse when it holds exactly",
        sd=se,
        band=COLLAPSE_BAND,
        label="equivalence",
        sizes="at " + "; ".join(at_sizes),
    )
    audit.evidence(eq_text + f" At {n} inits the interval is {'inside' if inside else 'not inside'} the band.")
    alt = 2 * COLLAPSE_BAND
    audit.evidence(
        PW.record(
            audit,
            float(stats.norm.sf(S.Z95 - (alt - COLLAPSE_BAND) / se)),  # P(g - z se > band) at g = alt
            alternative=f"an eta effect twice the band, |g| = {alt:.2f} (a factor 4 in the intensity across eta's "
            "range at equal Gamma_T)",
            label="eta effect shown",
            method="normal law of the bootstrap-SE estimate of g: P(the 95% interval lies wholly beyond the band) "
            "at g = twice the band (a lower bound on the equivalence check's failure there)",
        )
    )
    if PW.equivalence_power(se, COLLAPSE_BAND) >= PW.POWER_REQUIRED:
        assert inside  # equivalence: the collapse shown
    else:
        # too few inits to show the collapse: the verdict is inconclusive (power below 0.8); the check fails only
        # when an eta effect beyond the band is shown
        assert hi >= -COLLAPSE_BAND and lo <= COLLAPSE_BAND


@claim("RG-sim.joint.fresh", reading=READING_OWN + "; 'always' literally over our draws and step sizes")
@uses("rare_gates.joint")
def test_joint_fresh(audit, results):
    joint = results["rare_gates.joint"]
    fresh = joint["recovered"][:, 0, :]
    audit.ours(f"{int(fresh.sum())}/{fresh.size}", label="fresh runs (T = 0) that recover, all step sizes")
    audit.evidence("Fresh target streams (T = 0) from every draw at every step size, H = 200: literally all recover.")
    audit.evidence(
        PW.Exceptions("fresh failures", 64, "the paper's own 'always' over its 64 draws").literal(
            audit, fresh.shape[1], label="one step size (independent draws)"
        )
    )
    assert fresh.all()


JOINT_TREND_LEVEL = 0.05  # one-sided level of the paired trend test (one test: pooled over source times and pairs)
JOINT_TREND_FACTOR = 1.1  # power alternative: intensity x 1.1 per halving of eta (ours about x 1.2: half on log scale)
JOINT_TREND_REPS = 2000  # replicates of the power simulation


def _joint_trend_scores(recovered: np.ndarray) -> np.ndarray:
    """Per draw: (step-size pairs and source times where the smaller eta recovers and the larger does not) minus
    (the reverse), over all pairs of step sizes; ``recovered`` is (eta, T, draw) with eta in decreasing order.

    The difference telescopes into a linear trend score, sum over T of sum_j (2j - (J - 1)) recovered[j, T]:

    >>> _joint_trend_scores(np.array([[[0, 1]], [[1, 1]], [[1, 0]]])).tolist()  # draw 0 up twice; draw 1 down twice
    [2, -2]
    """
    rec = np.asarray(recovered, dtype=np.int64)
    weights = 2 * np.arange(rec.shape[0]) - (rec.shape[0] - 1)
    return np.einsum("j,jti->i", weights, rec)


def _joint_sign_test(scores: np.ndarray) -> tuple[int, int, float]:
    """Exact one-sided sign test over draws: (draws with a positive score, with a negative one, p of 'positive')."""
    up, down = int(np.sum(scores > 0)), int(np.sum(scores < 0))
    p = float(stats.binomtest(up, up + down, 0.5, alternative="greater").pvalue) if up + down else 1.0
    return up, down, p


def _joint_trend_power(
    reference: np.ndarray, n_eta: int, n: int, factor: float, coupled_in_t: bool, seed: int
) -> S.SimulatedPower:
    """Power of the sign test when each halving of eta multiplies the recovery intensity by ``factor``.

    ``reference``: the fraction recovered at each T at the middle of ``n_eta`` step sizes (halvings apart); step size
    j (0 = largest) recovers with intensity x factor^(j - middle). Draws and step sizes are independent (no credit
    for the draws shared across step sizes, which make the paired differences less noisy); across T a (draw, step
    size) either shares one uniform (recovered while the fraction exceeds it, as along one source trajectory) or
    draws afresh per T.
    """
    j = np.arange(n_eta) - n_eta // 2
    probs = np.stack([PW.intensity_scaled(reference, factor**k) for k in j])  # (eta, T)

    def trial(rng: np.random.Generator) -> bool:
        shape = (probs.shape[0], 1 if coupled_in_t else probs.shape[1], n)
        rec = rng.random(shape) < probs[:, :, None]
        return _joint_sign_test(_joint_trend_scores(rec))[2] < JOINT_TREND_LEVEL

    return S.power_by_simulation(trial, reps=JOINT_TREND_REPS, seed=seed)


@claim(
    "RG-sim.joint.mono",
    reading=READING_OWN + "; 'increases as eta decreases, up to sampling fluctuations' read as two tests that must "
    "both pass: the increase, an exact one-sided sign test over the draws (shared by all step sizes) of each draw's "
    "score (step-size pairs and source times where the smaller eta recovers and the larger does not, minus the "
    "reverse), pooled over all pairs and times, at level 0.05; and no significant inversion (Newcombe interval of "
    "larger-eta minus smaller-eta above 0 at Bonferroni over the adjacent pairs and source times)",
)
@uses("rare_gates.joint")
def test_joint_monotone_in_eta(audit, results):
    joint = results["rare_gates.joint"]
    n, times = joint["init"].shape[0], joint["times"]
    order = np.argsort(-np.asarray(joint["etas"], dtype=float), kind="stable")  # decreasing eta, as recorded
    etas = [joint["etas"][i] for i in order]
    recovered = np.asarray(joint["recovered"])[order]
    # the increase: paired over draws (each draw's initialisation is shared by every step size)
    scores = _joint_trend_scores(recovered)
    up, down, p_trend = _joint_sign_test(scores)
    audit.ours(f"{up} up, {down} down, {n - up - down} tied; one-sided p = {p_trend:.2g}", label="draws by trend score")
    audit.evidence(
        f"The increase: for each of the {n} draws, the count of (pair of step sizes, source time) with the smaller "
        "eta recovering and the larger not, minus the reverse, over all pairs of the step sizes and all T; an exact "
        f"one-sided sign test over the draws with a nonzero score (ties dropped) must give p < {JOINT_TREND_LEVEL} "
        "(one test, pooled over T and pairs; draws are independent, so the test is exact under 'no trend': a "
        "positive and a negative score equally likely)."
    )
    middle = len(etas) // 2
    reference = recovered[middle].mean(axis=1)
    frac = recovered.mean(axis=2)
    inner = (frac[:-1] > 0.05) & (frac[:-1] < 0.95) & (frac[1:] > 0.05) & (frac[1:] < 0.95)
    with np.errstate(divide="ignore", invalid="ignore"):  # fractions 0 or 1 outside ``inner``
        log_ratio = np.log(np.log1p(-frac[1:]) / np.log1p(-frac[:-1]))[inner]
    observed = math.exp(float(np.mean(log_ratio))) if log_ratio.size else math.nan
    audit.ours(f"x {observed:.3f} over {log_ratio.size} cells", label="intensity ratio per halving (geometric mean)")
    seed = E.SEEDS["bootstrap"]
    sims = {
        coupled: _joint_trend_power(reference, len(etas), n, JOINT_TREND_FACTOR, coupled, seed)
        for coupled in (True, False)
    }
    size = _joint_trend_power(reference, len(etas), n, 1.0, True, seed)
    weakest = min(sims.values(), key=lambda s: s.power)
    audit.evidence(
        PW.record(
            audit,
            weakest.power,
            alternative=f"a weak trend: recovery intensity x {JOINT_TREND_FACTOR} per halving of eta about the "
            f"fractions observed at eta = {etas[middle]:g}, about half of our effect on the log scale (ours x "
            f"{observed:.2f}: the geometric mean of -log(1 - p) ratios of adjacent step sizes where both fractions "
            "lie in (0.05, 0.95))",
            method=f"simulation, {JOINT_TREND_REPS} replicates of {n} draws at each of two couplings across T (one "
            "uniform per draw and step size, or one per T), draws and step sizes independent; the smaller power: "
            + ", ".join(f"{'coupled' if c else 'independent'} {s}" for c, s in sims.items()),
            label="increase",
            decide="more draws would decide",
        )
        + f" False alarms with no trend (factor 1, coupled across T): {size} (at most {JOINT_TREND_LEVEL} exactly)."
    )
    # up to sampling fluctuations: no significant inversion at any T
    counts = recovered.sum(axis=2)  # (eta, T), decreasing eta
    n_t = times.size
    m = (counts.shape[0] - 1) * n_t
    z = E.z_bonferroni(m)
    inversions = [
        (etas[i], float(times[k]))
        for i in range(counts.shape[0] - 1)
        for k in range(n_t)
        if E.newcombe_difference(int(counts[i, k]), n, int(counts[i + 1, k]), n, z)[0] > 0
    ]
    audit.ours(f"{len(inversions)} {inversions}", label="significant inversions (larger eta recovering more)")
    audit.evidence(
        f"No inversion: at each T and each adjacent pair of step sizes, the Newcombe interval of (larger eta) - "
        f"(smaller eta) at Bonferroni over the {counts.shape[0] - 1} x {n_t} pairs (z = {z:.3f}) must not lie above 0 "
        "(independent-sample intervals, conservative for records sharing draws)."
    )
    mid = [(i, k) for i in range(counts.shape[0] - 1) for k in range(n_t) if 0.2 <= counts[i + 1, k] / n <= 0.8]
    cells = [(counts[i + 1, k] / n, n, n, "draws") for i, k in mid] or [(0.5, n, n, "draws")]
    audit.evidence(
        PW.comparison(
            audit,
            alternative="an inversion: the larger eta recovering with twice the smaller eta's effective intensity, "
            "in the cells of intermediate recovery",
            cells=cells,
            directions={"intensity x 2": lambda p: PW.intensity_scaled(p, 2.0)},
            z=z,
            side="greater",
            label="inversions",
            reference="the smaller eta's fraction",
            both_ours=True,
        )
    )
    assert p_trend < JOINT_TREND_LEVEL, f"no significant increase as eta decreases (sign test p = {p_trend:.3g})"
    assert not inversions


@claim(
    "RG-sim.joint.rate",
    reading=READING_OWN + "; the median checkpoint angle's log-slope over T in [100, 400], compared after rounding "
    "to the paper's 0.050",
)
@uses("rare_gates.joint")
def test_joint_angle_rate(audit, results):
    joint = results["rare_gates.joint"]
    times = joint["times"]
    rates = [-E.log_slope(times, np.median(joint["angle"][i], axis=1), times >= 100) for i in range(len(joint["etas"]))]
    n = joint["init"].shape[0]
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 4], dtype=np.uint64)))
    boot = np.array(
        [
            [
                -E.log_slope(times, np.median(joint["angle"][i][:, rows], axis=1), times >= 100)
                for i in range(len(rates))
            ]
            for rows in (rng.integers(0, n, n) for _ in range(200))
        ]
    )
    se = np.std(boot, axis=0, ddof=1)
    audit.ours(", ".join(f"{r:.4f} (SE {s:.4f})" for r, s in zip(rates, se)), label="median angle decay rates")
    audit.evidence(
        "Rates of the median checkpoint angle over T in [100, 400] per step size; SEs from 200 bootstrap resamples "
        "of the draws; each must round to the paper's 0.050 (half-width 0.0005)."
    )
    audit.evidence(
        PW.record(
            audit,
            min(S.power_normal(0.0045, float(sd), 0.0005) for sd in se),
            alternative="a rate 10% off (0.045 or 0.055): outside the rounding window by 0.0045",
            method="normal approximation with the bootstrap SE: P(|estimate - 0.05| > 0.0005) at a shift of 0.005",
        )
    )
    assert all(rounds_to(r, "0.050") for r in rates)


OPPOSITE_SEVEN = 7  # Section 8: 'all seven recoveries at T = 400 ... start from near-opposite initializations'


@claim(
    "RG-sim.joint.opposite",
    reading=READING_OWN + "; near-opposite read as initial angle above 2.5 (Section 8)",
)
@uses("rare_gates.joint")
def test_joint_opposite(audit, results):
    joint = results["rare_gates.joint"]
    init_angle = E.angles(joint["init"])
    near = init_angle > E.NEAR_OPPOSITE
    opposite = [int(np.sum(joint["recovered"][i, -1] & near)) for i in range(len(joint["etas"]))]
    total = [int(np.sum(joint["recovered"][i, -1])) for i in range(len(joint["etas"]))]
    audit.ours(
        ", ".join(f"eta={e:g}: {o} of {t}" for e, o, t in zip(joint["etas"], opposite, total)),
        label="recoveries at T = 400 from near-opposite draws",
    )
    audit.evidence(
        f"The runs recovering at T = 400 per step size and how many start near-opposite ({int(near.sum())} of "
        f"{near.size} draws are); the claim holds when every step size has at least one."
    )
    # power: the check fails at a step size where none of our near-opposite draws recovers. Alternative: near-opposite
    # draws recover at T = 400 at a rate q at which the paper's own recoveries of its seven near-opposite draws
    # (Section 8) would have been a 1-in-100 event even read as 'at least one of seven' (the weakest reading, the
    # largest such q); one step size suffices (the step sizes share draws, not streams)
    q = PW.exception_rate(OPPOSITE_SEVEN, level=0.99)
    audit.evidence(
        PW.literal_some(
            audit,
            alternative=f"near-opposite draws that do not recover at T = 400: a recovery rate {q:.5f} among them, "
            f"1 - 0.99^(1/{OPPOSITE_SEVEN}), at which the paper's at least one recovery of its {OPPOSITE_SEVEN} "
            "near-opposite draws would have been a 1-in-100 event",
            n=int(near.sum()),
            rate=q,
            label="one step size",
        )
    )
    assert all(o > 0 for o in opposite)


# --- Corollary 5 -----------------------------------------------------------------------------------------------------


@claim(
    "RG-sim.cor5",
    reading="our design (the paper has no such experiment): constructed checkpoint delta0 = 1e-4; "
    "equal Gamma must give equal recovery (chi-square homogeneity, p >= 0.05) while 4x the batch at the same "
    "eta gives more (Fisher, p < 0.01); 5x the horizon must gain less than 4x the batch; equal N b at N <= 1/eta "
    "gives equal first-disagreement probability (Fisher p >= 0.05) and a quarter of it gives less (p < 0.01)",
)
@uses("rare_gates.cor5")
def test_corollary5_design(audit, results):
    cor5 = results["rare_gates.cor5"]
    budget = [(a["b"], a["eta"], E.recovered_by(a["recovery"], 200), a["recovery"].size) for a in cor5["budget"]]
    table = np.array([[k, n - k] for _, _, k, n in budget])
    p_hom = float(stats.chi2_contingency(table)[1])
    k16, n = budget[1][2], budget[1][3]
    k64 = E.recovered_by(cor5["batch"]["recovery"], 200)
    p_batch = float(stats.fisher_exact([[k64, n - k64], [k16, n - k16]], alternative="greater")[1])
    h = cor5["horizon"]["recovery"]
    k200, k1000 = E.recovered_by(h, 200), E.recovered_by(h, 1000)
    gain_h_hi = E.wilson(k1000 - k200, n)[1]
    gain_b_lo = E.newcombe_difference(k64, n, k16, n)[0]
    firsts = {(a["b"], a["N"]): _count(a["first"]) for a in cor5["samples"]}
    p_same = E.fisher_p(firsts[(64, 100)], n, firsts[(16, 400)], n)
    p_less = float(
        stats.fisher_exact(
            [[firsts[(64, 100)], n - firsts[(64, 100)]], [firsts[(16, 100)], n - firsts[(16, 100)]]],
            alternative="greater",
        )[1]
    )
    audit.ours(
        "; ".join(f"(b={b}, eta={e:g}): {k}/{n}" for b, e, k, n in budget) + f" (homogeneity p = {p_hom:.3f})",
        label="Gamma = 0.16",
    )
    audit.ours(f"b=64: {k64}/{n} vs b=16: {k16}/{n} (p = {p_batch:.2g})", label="4x batch, eta = 0.01")
    audit.ours(f"{k200}/{n} by t = 200, {k1000}/{n} by t = 1000", label="5x horizon, b = 16")
    audit.ours(
        ", ".join(f"(b={b}, N={N}): {k}/{n}" for (b, N), k in firsts.items())
        + f" (equal N b: p = {p_same:.3f}; quarter: p = {p_less:.2g})",
        label="first disagreement by N updates",
    )
    audit.evidence(
        f"{n} independent streams per arm, lambda = {LAM:g}, risk every 10 updates. The horizon gain's "
        "upper 95% Wilson bound must lie below the batch gain's lower 95% Newcombe bound."
    )
    pooled = sum(k for _, _, k, _ in budget) / sum(m for *_, m in budget)
    p_arms = [PW.intensity_scaled(pooled, math.sqrt(2)), pooled, PW.intensity_scaled(pooled, 1 / math.sqrt(2))]

    def homogeneity_rejects(rng):
        kk = [int(rng.binomial(m, p)) for (*_, m), p in zip(budget, p_arms)]
        return float(stats.chi2_contingency(np.array([[k, m - k] for k, (*_, m) in zip(kk, budget)]))[1]) < 0.05

    sim = S.power_by_simulation(homogeneity_rejects, reps=1000, seed=E.SEEDS["bootstrap"])
    audit.evidence(
        PW.record(
            audit,
            sim.power,
            alternative="a factor 2 between the effective intensities of the extreme arms at equal "
            "Gamma (x sqrt 2 at the smallest b, / sqrt 2 at the largest): recovery not a function of Gamma",
            label="equal Gamma",
            method=f"simulation around the pooled fraction {pooled:.3f}; chi-square homogeneity "
            f"test at 5% on each replicate; {sim}",
        )
    )
    p_first = (firsts[(64, 100)] + firsts[(16, 400)]) / (2 * n)
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the first-disagreement intensity between the equal-N b arms",
            cells=[(p_first, n, n, "arms")],
            directions=PW.factor(2),
            test="fisher",
            label="equal N b",
            reference="the other arm's",
            both_ours=True,
        )
    )
    size_batch = S.power_two_sample(k16 / n, n, k16 / n, n, test="fisher", alternative="greater", level=0.01)
    p_q = firsts[(16, 100)] / n
    size_less = S.power_two_sample(p_q, n, p_q, n, test="fisher", alternative="greater", level=0.01)
    audit.evidence(
        PW.record(
            audit,
            1 - max(size_batch, size_less),
            alternative="no effect of the batch (b = 64 recovering as b = 16) or "
            "of N b (a quarter of it sampling as often): the claim's negation",
            label="predicted effects",
            method=f"exact: 1 - the one-sided Fisher test's size at 1% at our fractions ({size_batch:.4f}, "
            f"{size_less:.4f})",
        )
    )
    assert p_hom >= 0.05 and p_batch < 0.01 and gain_h_hi < gain_b_lo
    assert p_same >= 0.05 and p_less < 0.01
