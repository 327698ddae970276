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
from verify.audit import claim, discrepancy, paper_claim, rounds_to, uses
from verify.rare_gates import power as PW
from verify.registry import paper_numbers

LAM = E.LAM
A = E.A_RATE
READING_OWN = (
    "our own Gaussian draws from D0 (either-labelling reading of the lost display), not the authors' "
    "64 saved initialisations; their counts are compared as an independent binomial sample of the "
    "same population (two-sample Newcombe interval, Bonferroni over the table's cells)"
)
READING_A20 = (
    "the Appendix 20 setting lost in conversion is read as the noise runs' checkpoint delta0 = 1e-5 with "
    "b = 16, eta = 0.01 (the Table 2 setting of that delta0) and 128 streams, the same streams in every "
    "setting"
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
# "no recovery after t ~ 112 through t = 450; last at ...": the five last recoveries close the quote
PAPER_LAST = dict(zip(E.TABLE2_SETTINGS, map(float, paper_numbers("RG-sim.T2.saturation")[-5:]), strict=True))
PAPER_HALF = tuple(map(float, paper_numbers("RG-sim.joint.Thalf")))
PAPER_HALF_OFFSET = tuple(map(float, paper_numbers("RG-sim.joint.collapse")[1:]))  # after "rate 0.050"
PAPER_A20_RUNS = 128  # streams per Appendix 20 setting in our reading (READING_A20); lost in the text
_NOISE = [float(v) for v in paper_numbers("RG-sim.A20.noise")]  # none, independent x 3, shared x 3
PAPER_NOISE = dict(
    zip(
        [("none", 0.0), *((mode, s) for mode in ("independent", "shared") for s in (1e-7, 1e-6, 1e-5))],
        _NOISE[:4] + _NOISE[-3:],
        strict=True,
    )
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
    q = PW.exception_rate(64)
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"checkpoint failures at a rate {q:.3f} in every cell: 1 - 0.01^(1/64), at which the "
            "paper's own 64/64 would have been a 1-in-100 event",
            cells=[(c["paper"], n, 64, "inits") for c in comps],
            directions={f"failure rate {q:.3f}": lambda p: p - q},
            z=Z_T1,
        )
    )
    assert all(c["consistent"] for c in comps)


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
    q = PW.exception_rate(64)
    audit.evidence(
        PW.literal_all(
            audit,
            alternative=f"target-GD failures at a rate {q:.3f} of the checkpoints of one (T, source): "
            "1 - 0.01^(1/64), at which the paper's own 64/64 would have been a 1-in-100 event",
            n=n,
            rate=q,
        )
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


@claim(
    "RG-sim.T1.gamma",
    reading=READING_OWN + "; 'Gamma_T >~ 1' checked as Gamma_T >= 1 (literally: every "
    "record); 'no observed recovery below 1e-2' compared as the paper's 0 of its share of records (our count "
    "scaled by 64/n) against ours, Fisher exact at 5%",
)
@uses("rare_gates.table1")
def test_table1_gamma_regimes(audit, results):
    table1 = results["rare_gates.table1"]
    cfg = table1["config"]
    n = table1["init"].shape[0]
    G = np.concatenate([E.gamma_of(table1[s]["angle"][1:], cfg["b"], cfg["eta"]).ravel() for s in ("sgd", "gd")])
    R = np.concatenate([np.isfinite(table1[s]["sgd_recovery"][1:]).ravel() for s in ("sgd", "gd")])
    hi, lo, mid = G >= 1.0, G < 1e-2, (G >= 1e-2) & (G < 1.0)
    m_paper = int(round(lo.sum() * 64 / n))
    p_lo = E.fisher_p(int(R[lo].sum()), int(lo.sum()), 0, m_paper)
    audit.ours(f"{int(R[hi].sum())}/{int(hi.sum())}", label="recovered with Gamma_T >= 1")
    audit.ours(
        f"{int(R[lo].sum())}/{int(lo.sum())} (Fisher vs 0/{m_paper}: p = {p_lo:.3f})",
        label="recovered with Gamma_T < 1e-2",
    )
    audit.ours(f"{int(R[mid].sum())}/{int(mid.sum())}", label="recovered with 1e-2 <= Gamma_T < 1")
    audit.evidence(
        f"All target-SGD records with T > 0 of both sources ({G.size} dependent records of {n} inits). "
        "Above 1: literal; below 1e-2: two-sample against the paper's 'none observed' in its "
        f"{G.size * 64 // n} records; the middle band must be mixed (late or only sometimes)."
    )
    # records of one source at different T meet independent target streams: independent given their checkpoints
    half = G.size // 2
    hi_one = max(int(hi[:half].sum()), int(hi[half:].sum()))
    m_hi_paper = int(round(hi.sum() * 64 / n))
    q_hi, q_lo = PW.exception_rate(m_hi_paper), PW.exception_rate(m_paper)
    audit.evidence(
        PW.literal_all(
            audit,
            alternative=f"failures at a rate {q_hi:.4f} of the records with Gamma_T >= 1: 1 - 0.01^(1/"
            f"{m_hi_paper}), at which the paper's own 'every' over its share of such records would have been a "
            f"1-in-100 event",
            n=hi_one,
            rate=q_hi,
            label="Gamma_T >= 1",
        )
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"recoveries at a rate {q_lo:.4f} of the records with Gamma_T < 1e-2: 1 - 0.01^(1/"
            f"{m_paper}), at which the paper's own 'none' would have been a 1-in-100 event",
            cells=[(0.0, int(lo.sum()), m_paper, "records")],
            directions={f"rate {q_lo:.4f}": lambda p: q_lo},
            test="fisher",
            label="Gamma_T < 1e-2",
        )
    )
    assert R[hi].all() and p_lo >= 0.05
    assert 0 < R[mid].sum() < mid.sum()


@claim(
    "RG-sim.T1.T400",
    reading=READING_OWN + "; the three counts (Gamma_T < 0.04; of those, a sampled "
    "disagreement; target-GD hitting time after t = 40) compared with the paper's 57/64, 0/57 and 0/64 by "
    "Fisher exact tests (Bonferroni over three, 1.67% each); 'no recovery after t = 100' literally",
)
@uses("rare_gates.table1")
def test_table1_t400(audit, results):
    table1 = results["rare_gates.table1"]
    cfg = table1["config"]
    n = table1["init"].shape[0]
    G = E.gamma_of(table1["sgd"]["angle"][-1], cfg["b"], cfg["eta"])
    small = G < 0.04
    k_small, k_dis = int(small.sum()), int((table1["sgd"]["sgd_disagreements"][-1][small] > 0).sum())
    last = float(np.nanmax(table1["sgd"]["sgd_recovery"][-1]))
    gd = table1["sgd"]["gd_recovery"][-1]
    k_gd40 = int(np.sum(~(gd <= 40.0 + 1e-9)))
    ps = [E.fisher_p(k_small, n, 57, 64), E.fisher_p(k_dis, k_small, 0, 57), E.fisher_p(k_gd40, n, 0, 64)]
    audit.ours(f"{k_small}/{n} (Fisher vs 57/64: p = {ps[0]:.3f})", label="Gamma_T < 0.04")
    audit.ours(f"{k_dis}/{k_small} (Fisher vs 0/57: p = {ps[1]:.3f})", label="of those, sampled a disagreement")
    audit.ours(last, label="latest target-SGD recovery at T = 400")
    audit.ours(
        f"{k_gd40}/{n}, latest {np.nanmax(gd):.2f} (Fisher vs 0/64: p = {ps[2]:.3f})",
        label="target-GD hitting times after t = 40",
    )
    top = int(np.nanargmax(gd))
    top_offset = float(gd[top] - math.log(1.0 / table1["sgd"]["angle"][-1][top]) / A)
    audit.evidence(
        f"Source-SGD checkpoints at T = 400 of our {n} draws; Gamma_T = b delta_T/eta. The largest GD hitting "
        f"time ({gd[top]:.2f}) comes from a checkpoint with angle {table1['sgd']['angle'][-1][top]:.3g}, at "
        f"A^-1 log(1/delta_T) + {top_offset:.2f} (balanced units have the smallest offset); the largest grows "
        "with the number of draws, hence the two-sample comparison."
    )
    q57, q64 = PW.exception_rate(57), PW.exception_rate(64)
    fisher3 = dict(test="fisher", level=0.05 / 3)
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
            label="Gamma_T < 0.04",
            **fisher3,
        )
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"sampled disagreements at a rate {q57:.3f} of the small-Gamma checkpoints: 1 - 0.01^(1/57), "
            "at which the paper's own 'none of 57' would have been a 1-in-100 event",
            cells=[(0.0, max(k_small, 1), 57, "inits")],
            directions={f"rate {q57:.3f}": lambda p: q57},
            label="disagreements",
            **fisher3,
        )
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"GD hitting times after t = 40 at a rate {q64:.3f}: 1 - 0.01^(1/64), at which the "
            "paper's own 'GD by t ~ 40' over 64 would have been a 1-in-100 event",
            cells=[(0.0, n, 64, "inits")],
            directions={f"rate {q64:.3f}": lambda p: q64},
            label="GD after t = 40",
            **fisher3,
        )
    )
    assert all(p >= 0.05 / 3 for p in ps)
    assert last <= 100.0


@claim(
    "RG-sim.T1.opposite",
    reading=READING_OWN + "; 'amplitude' of a unit read as omega_i = a_i |w_i| (the "
    "paper's amplitude B = omega_1 + omega_2); the paper's 7 records and ours compared by Fisher exact tests",
)
@uses("rare_gates.table1")
def test_table1_opposite(audit, results):
    table1 = results["rare_gates.table1"]
    cfg = table1["config"]
    ck = table1["sgd"]["checkpoint"][-1]
    rec = np.isfinite(table1["sgd"]["sgd_recovery"][-1])
    G = E.gamma_of(table1["sgd"]["angle"][-1], cfg["b"], cfg["eta"])[rec]
    init_angle = E.angles(table1["init"])[rec]
    omega = np.abs(ck[:, :2]) * np.stack([np.hypot(ck[:, 2], ck[:, 3]), np.hypot(ck[:, 4], ck[:, 5])], axis=1)
    small_amp = omega[rec].min(axis=1) < 1e-8
    m = int(rec.sum())
    parts = {
        "Gamma_T > 1": int((G > 1).sum()),
        "initial angle > 2.5": int((init_angle > 2.5).sum()),
        "a unit with omega < 1e-8": int(small_amp.sum()),
    }
    ps = {k: E.fisher_p(v, m, 7, 7) for k, v in parts.items()}
    for k, v in parts.items():
        audit.ours(f"{v}/{m} (Fisher vs 7/7: p = {ps[k]:.3f})", label=k)
    audit.evidence(
        f"The {m} target-SGD recoveries at T = 400 (source SGD) of our draws: each property's count against the "
        "paper's 7 of 7 by a two-sided Fisher exact test, Bonferroni over the three properties (1.67% each). "
        "The literal claim ('all') holds for a property only if every record has it: it holds for "
        f"{', '.join(k for k, v in parts.items() if v == m) or 'none of the three'}."
    )
    q7 = PW.exception_rate(7)
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"a property missing in a fraction {q7:.3f} of the recoveries: 1 - 0.01^(1/7), at which "
            "the paper's own 7 of 7 would have been a 1-in-100 event",
            cells=[(1.0, max(m, 1), 7, "recoveries")],
            directions={f"missing in {q7:.3f}": lambda p: 1 - q7},
            test="fisher",
            level=0.05 / 3,
            label="each property",
        )
    )
    assert m > 0
    assert all(p >= 0.05 / 3 for p in ps.values())


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


GD_QUOTED = ("22.1", "18.2", "14.3")


@claim(
    "RG-sim.gd.constructed",
    reading="hitting times resolved to single updates (risk checked every update, as "
    "in the Figure 3(a) cells) and rounded to 0.1",
    fitted={
        "risk checked every 10 updates (Appendix 19's protocol for these long-horizon runs)": (
            "the first crossing check: computed in the run (a simulation), see the evidence"
        )
    },
)
def test_gd_constructed(audit, perturbation):
    res = E.gd_constructed(perturb=perturbation)
    every1, every10 = res["hit"][1], res["hit"][10]
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


@claim(
    "RG-sim.gd.halving",
    reading=READING_OWN + "; risk checked every update (time resolution eta), so changes "
    "of a few 1e-3 are resolved; compared after rounding to the paper's 3 decimals",
    fitted={
        "risk checked every 10 updates (Table 1's protocol, Appendix 19)": (
            "the changes with the crossing at the next multiple of 10 updates: computed in the run (a "
            "simulation), see the evidence"
        )
    },
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
    audit.evidence(
        f"GD in both phases (T = {halving['T']:g}) from the first {h.shape[1]} of our D0 draws at eta = "
        f"{', '.join(f'{e:g}' for e in halving['etas'])}; target hitting times with risk checked every update. The "
        "coarse line assumes the risk decreases through the crossing (GD near recovery), so a check every 10 "
        "updates hits at the next multiple of 10 updates. First-order convergence is checked as d2 < d1. Fitted "
        f"reading: Table 1's stated checks every 10 updates give changes {c1:.4f} and {c2:.4f}, which "
        f"{'also meet' if coarse_ok else 'exceed'} the quoted 0.006 and 0.003; every update gives {d1:.4f} and "
        f"{d2:.4f}."
    )
    assert round(d1, 3) <= 0.006 and round(d2, 3) <= 0.003
    assert d2 < d1


# --- Table 2, Figure 3(b) ------------------------------------------------------------------------------------


Z_T2 = E.z_bonferroni(15)  # Table 2: 5 settings x 3 horizons, family-wise 95%


@claim(
    "RG-sim.T2.fractions",
    reading="our own 128 streams per setting, compared with the paper's 128 as two "
    "independent samples (Newcombe interval, Bonferroni over the 15 cells)",
)
@uses("rare_gates.table2")
def test_table2_fractions(audit, results):
    table2 = results["rare_gates.table2"]
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
    s0 = table2[0]
    audit.evidence(
        f"{s0['recovery'].size} streams per setting, eta = {s0['eta']:g}, lambda = {LAM:g}, risk every 10 updates, "
        f"H = {s0['horizon']:g}; two-sample Newcombe interval for ours - paper at z = {Z_T2:.3f} (Bonferroni over "
        f"15). Literal check (paper's fraction inside our 95% Wilson interval) fails in: "
        f"{', '.join(misses) or 'none'}."
    )
    cells = [
        (_k_of(q, 128) / 128, s["recovery"].size, 128, (s["b"], s["delta0"]))
        for s in table2
        for q in PAPER_T2[(s["b"], s["delta0"])]
    ]
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the effective intensity of every setting: see verify.rare_gates.power",
            cells=cells,
            directions=PW.factor(2),
            independent=True,
            z=Z_T2,
        )
    )
    assert all(c["consistent"] for c in comps)


@claim(
    "RG-sim.T2.saturation",
    reading="'no recovery after t ~ 112' checked as: no recovery in (200, 450] (Table 2's "
    "equal t <= 200 and t <= 450 columns) and the share of recoveries after t = 112.1 consistent with the "
    "paper's 0 (Fisher exact, 5%); observed recovery below the frozen-angle reference",
)
@uses("rare_gates.table2")
def test_table2_saturation(audit, results):
    table2 = results["rare_gates.table2"]
    late_200 = sum(int(np.sum(s["recovery"] > 200 + 1e-9)) for s in table2)
    late_112 = sum(int(np.sum(s["recovery"] > 112.1 + 1e-9)) for s in table2)
    n_rec = sum(_count(s["recovery"]) for s in table2)
    paper_rec = sum(_k_of(PAPER_T2[k][2], 128) for k in PAPER_T2)
    p = E.fisher_p(late_112, n_rec, 0, paper_rec)
    below_frozen = []
    for s in table2:
        n = s["recovery"].size
        _, hi = E.wilson(E.recovered_by(s["recovery"], 200), n)
        below_frozen.append(hi < -math.expm1(-s["gamma"] * 200 / math.pi))
        audit.ours(
            f"last recovery {np.nanmax(s['recovery']):.1f} (paper {PAPER_LAST[(s['b'], s['delta0'])]})",
            label=f"b={s['b']}, delta0={s['delta0']:g}",
        )
    audit.ours(late_200, label="recoveries in (200, 450]")
    audit.ours(f"{late_112}/{n_rec} (paper 0/{paper_rec}; Fisher p = {p:.3f})", label="recoveries after t = 112.1")
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
        f"{late_expected:.2g}, so 'none in (200, 450]' is a sharp check; the paper's last recovery time is a sample "
        "maximum, compared through the count of later recoveries. Saturation: our upper 95% Wilson bound at "
        "t = 200 below the frozen-angle reference 1 - exp(-Gamma t/pi) in every setting."
    )
    q = PW.exception_rate(paper_rec)
    audit.evidence(
        PW.comparison(
            audit,
            alternative=f"recoveries after t = 112.1 at a rate {q:.4f}: 1 - 0.01^(1/{paper_rec}), at which the "
            f"paper's own none of {paper_rec} would have been a 1-in-100 event",
            cells=[(0.0, n_rec, paper_rec, "runs")],
            directions={f"rate {q:.4f}": lambda p: q},
            test="fisher",
            label="late recoveries",
        )
    )
    frozen_powers = []
    for s in table2:
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
            method="exact: per setting P(upper 95% Wilson bound >= reference) at p = reference, "
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
    assert late_200 == 0 and p >= 0.05 and all(below_frozen)


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
    q = PW.exception_rate(paper_t2)
    audit.evidence(
        PW.literal_all(
            audit,
            alternative=f"recoveries without a preceding disagreement at a rate {q:.4f}: 1 - 0.01^(1/{paper_t2}), "
            f"at which 'every' over the paper's {paper_t2} Table 2 recoveries would have been a 1-in-100 event",
            n=sum(_count(s["recovery"]) for s in table2),
            rate=q,
            label="Table 2 recoveries (independent streams)",
        )
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


@claim("RG-sim.T2.extended")
@uses("rare_gates.extended")
def test_extended_precision(audit, sizes, results):
    extended = results["rare_gates.extended"]
    n = sum(e["ids"].size for e in extended)
    same_rec = all(np.array_equal(e["f64_recovery"], e["ext_recovery"], equal_nan=True) for e in extended)
    same_first = all(np.array_equal(e["f64_first"], e["ext_first"], equal_nan=True) for e in extended)
    events = sum(_count(e["f64_recovery"]) for e in extended), sum(_count(e["f64_first"]) for e in extended)
    audit.ours(
        f"{n} streams through t = {sizes.extended_horizon:g}: recovery times equal: {same_rec}; "
        f"first-disagreement times equal: {same_first} ({events[0]} recoveries, {events[1]} disagreements)"
    )
    audit.evidence(
        "simulate_extended (NumPy longdouble, 64-bit significand) replays Table 2 streams from the same random "
        "draws; exact equality of the event times with the float64 kernels. "
        + (
            f"All {n} runs of the five settings."
            if sizes.extended_per_setting is None
            else f"Per setting, up to {sizes.extended_per_setting - 1} streams that sampled a disagreement "
            "in float64 and one that did not (stream order; selection on the float64 outcome cannot bias equality)."
        )
        + " The 80-bit angle floor (~1e-19) is not checked: simulate_extended returns its final parameters "
        "rounded to float64."
    )
    assert events[0] > 0 and events[1] > 0
    assert same_rec and same_first


@claim(
    "RG-sim.T2.agree",
    reading="our Figure 3(a) cell (64 streams, risk every update) and our Table 2 row "
    "(128 streams, every 10 updates) compared with each other and each with the paper's count by Fisher exact "
    "tests",
)
@uses("rare_gates.grid", "rare_gates.table2")
def test_repeated_cell_agrees(audit, results):
    grid, table2 = results["rare_gates.grid"], results["rare_gates.table2"]
    cell = next(c for c in grid if c["b"] == 64 and c["delta0"] == 1e-4 and c["eta"] == 0.01)
    row = next(s for s in table2 if s["b"] == 64 and s["delta0"] == 1e-4)
    k1, n1 = _count(cell["recovery"]), cell["recovery"].size
    k2, n2 = E.recovered_by(row["recovery"], 450), row["recovery"].size
    ps = [E.fisher_p(k1, n1, k2, n2), E.fisher_p(k1, n1, 60, 64), E.fisher_p(k2, n2, 126, 128)]
    audit.ours(f"{k1}/{n1} there, {k2}/{n2} here (Fisher p = {ps[0]:.3f}; vs paper: {ps[1]:.3f}, {ps[2]:.3f})")
    audit.evidence("Two-sided Fisher exact tests, Bonferroni over the three pairs (1.67% each).")
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


# --- Figure 3(a) ---------------------------------------------------------------------------------------------


def _grid_counts(grid):
    G = np.array([c["gamma"] for c in grid])
    k = np.array([_count(c["recovery"]) for c in grid])
    n = np.array([c["recovery"].size for c in grid])
    return G, k, n


@claim(
    "RG-sim.fig3a.gamma",
    reading="'approximately a function of Gamma' read as: a nondecreasing function of Gamma "
    "alone fits the 24 cells (binomial isotonic fit; parametric-bootstrap deviance test, p >= 0.05) and the "
    "Spearman rank correlation of Gamma and the fraction is at least 0.9",
)
@uses("rare_gates.grid", "rare_gates.table1")
def test_fig3a_function_of_gamma(audit, results):
    grid, table1 = results["rare_gates.grid"], results["rare_gates.table1"]
    G, k, n = _grid_counts(grid)
    test = E.monotone_in_gamma_test(G, k, n)
    rho = float(stats.spearmanr(G, k / n)[0])
    audit.ours(rho, label="Spearman rho (Gamma, fraction)")
    audit.ours(f"deviance {test['deviance']:.2f}, bootstrap p = {test['p_value']:.3f}", label="isotonic fit in Gamma")
    audit.evidence(
        f"{G.size} cells x {n[0]} streams (the same streams in every cell), H = 200, risk every update. "
        "The isotonic deviance is calibrated by 2000 binomial resamples from the fitted function."
    )
    paper_pts = [(0.01, 5 / 64, "b=1"), (0.64, 60 / 64, "b=64")]
    audit.figure(F.figure3a(grid, table1, paper_pts), "rg_fig3a")
    # Power: a factor 2 between the effective intensities of the two step sizes at equal Gamma; the deviance's
    # critical value is taken once from the null law under our fitted function (the test recalibrates per data set)
    _, inv = np.unique(np.round(np.log(G), 9), return_inverse=True)
    fit_cell = test["fit"][inv]
    etas = np.array([c["eta"] for c in grid])
    p_alt = np.where(
        etas == min(etas), PW.intensity_scaled(fit_cell, math.sqrt(2)), PW.intensity_scaled(fit_cell, 1 / math.sqrt(2))
    )

    def deviance(kk):
        kp, npool = np.bincount(inv, weights=kk), np.bincount(inv, weights=n)
        return E.binomial_deviance(kp, npool, E.isotonic_increasing(kp, npool))

    rng0 = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 4], dtype=np.uint64)))
    null = [deviance(rng0.binomial(n, fit_cell)) for _ in range(2000)]
    crit = float(np.quantile(null, 0.95))

    def trial(rng):
        kk = rng.binomial(n, p_alt)
        return deviance(kk) > crit or float(stats.spearmanr(G, kk / n)[0]) < 0.9

    sim = S.power_by_simulation(trial, reps=400, seed=E.SEEDS["bootstrap"])
    audit.evidence(
        PW.record(
            audit,
            sim.power,
            alternative="a factor 2 between the effective intensities of the two step sizes at equal "
            "Gamma: recovery a function of b delta0/eta^(1/2) rather than of Gamma",
            method=f"simulation: counts from our isotonic fit with the intensity x sqrt 2 at eta = {min(etas):g} and "
            f"/ sqrt 2 at eta = {max(etas):g}; rejects when the deviance exceeds {crit:.2f} (the 95% point under "
            f"our fitted function, 2000 resamples) or Spearman rho < 0.9; {sim}",
        )
    )
    assert rho >= 0.9 and test["p_value"] >= 0.05


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


@claim(
    "RG-sim.fig3a.kappa",
    reading="our cells' kappa_eff intervals (from 95% Wilson intervals, Bonferroni over "
    "the interior cells) must meet [0.49, 1.49]; the count below one is compared with ten of 12 (Fisher, 5%)",
)
@uses("rare_gates.grid")
def test_fig3a_kappa(audit, results):
    grid = results["rare_gates.grid"]
    G, k, n = _grid_counts(grid)
    inner = (k > 0) & (k < n)
    z = E.z_bonferroni(int(inner.sum()))
    kap = np.array([E.kappa_eff(a / b, g) for a, b, g in zip(k[inner], n[inner], G[inner])])
    ivs = [
        (E.kappa_eff(lo, g) if lo > 0 else 0.0, E.kappa_eff(hi, g) if hi < 1 else math.inf)
        for (lo, hi), g in zip((E.wilson(a, b, z) for a, b in zip(k[inner], n[inner])), G[inner])
    ]
    below = int(np.sum(kap < 1))
    p = E.fisher_p(below, kap.size, 10, 12)
    audit.ours(f"{kap.min():.2f} to {kap.max():.2f}, {below} of {kap.size} below one (Fisher vs 10/12: p = {p:.3f})")
    audit.evidence(
        "kappa_eff = -pi lambda log(1 - p_hat)/Gamma over the cells with 0 < k < n; each cell's interval "
        "maps its Wilson interval through the increasing function p -> kappa_eff(p)."
    )
    powers = {}
    for name, kappa in (("2 x 1.49", 2 * 1.49), ("0.49 / 2", 0.49 / 2)):
        best = 0.0
        for g, m in zip(G[inner], n[inner]):
            m = int(m)
            los, his = S.wilson_intervals(np.arange(m + 1), m, z)
            kap_lo = np.array([E.kappa_eff(lo, g) if lo > 0 else 0.0 for lo in los])
            kap_hi = np.array([E.kappa_eff(hi, g) if hi < 1 else math.inf for hi in his])
            p_alt = -math.expm1(-kappa * g / (math.pi * LAM))
            best = max(best, S.power_of_region(m, p_alt, (kap_lo > 1.49) | (kap_hi < 0.49)))
        powers[name] = best
    weak = min(powers, key=powers.get)
    audit.evidence(
        PW.record(
            audit,
            powers[weak],
            alternative="kappa_eff a factor 2 outside the paper's range in every interior cell (2 x 1.49 or 0.49/2)",
            method="exact: per interior cell P(its kappa interval misses [0.49, 1.49]) at that kappa; the cells share "
            "streams, so the check's power is at least the largest cell's; "
            f"{'; '.join(f'kappa {k}: {v:.3f}' for k, v in powers.items())}",
        )
    )
    assert all(lo <= 1.49 and hi >= 0.49 for lo, hi in ivs) and p >= 0.05


@claim(
    "RG-sim.fig3a.conditional",
    reading="no cell's 95% Wilson interval (Bonferroni over the cells with a sampled disagreement) lies below 0.81",
)
@uses("rare_gates.grid")
def test_fig3a_conditional(audit, results):
    grid = results["rare_gates.grid"]
    rows = []
    for c in grid:
        dis = c["disagreements"] > 0
        if dis.any():
            rows.append((int(np.isfinite(c["recovery"])[dis].sum()), int(dis.sum())))
    z = E.z_bonferroni(len(rows))
    fr = [a / b for a, b in rows]
    his = [E.wilson(a, b, z)[1] for a, b in rows]
    audit.ours(f"{min(fr):.3f} to {max(fr):.3f} over {len(rows)} cells (min upper bound {min(his):.3f})")
    audit.evidence("Per cell: recovered runs among runs with at least one sampled disagreement by H = 200.")
    p_alt = PW.intensity_scaled(0.81, 0.5)
    cond_powers = [S.power_of_region(b, p_alt, S.wilson_intervals(np.arange(b + 1), b, z)[1] < 0.81) for _, b in rows]
    audit.evidence(
        PW.record(
            audit,
            max(cond_powers),
            alternative=f"conditional recovery {p_alt:.3f} in every cell: a factor 2 below the "
            "effective intensity of the paper's minimum 0.81",
            method=f"exact: per cell P(upper Wilson bound < 0.81) at that fraction over the cell's runs with a sampled "
            f"disagreement; the cells share streams, so the check's power is at least the largest cell's "
            f"({max(cond_powers):.3f}, {rows[int(np.argmax(cond_powers))][1]} runs; smallest "
            f"{min(cond_powers):.3f})",
        )
    )
    assert min(his) >= 0.81 and max(fr) == 1.0


# --- Figure 1 -------------------------------------------------------------------------------------------------


@claim(
    "RG-sim.fig1.slopes",
    reading=READING_OWN + "; trajectory = our first D0 draw at T = 400 (eta = 1e-3, "
    "b = 16); source slope over its checkpoints T = 100..400; GD over t >= 5 with angle < 1e-3; SGD over t >= 10",
)
@uses("rare_gates.table1")
def test_fig1_slopes(audit, results):
    table1 = results["rare_gates.table1"]
    tr = E.trajectory(table1)
    src = E.log_slope(tr["source_t"], tr["source_angle"], tr["source_t"] >= 100)
    gd = E.log_slope(tr["t"], tr["gd_angle"], (tr["t"] >= 5) & (tr["gd_angle"] < 1e-3))
    sgd = [E.log_slope(tr["t"], a, tr["t"] >= 10) for a in tr["sgd_angle"]]
    audit.ours(src, label="source")
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
    assert rounds_to(src, "-0.0500") and all(rounds_to(s, "-0.0500") for s in sgd)
    assert abs(gd - 0.5861) <= 1e-3 and abs(gd - A) <= 1e-3


# --- Appendix 20 ----------------------------------------------------------------------------------------------


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


@claim("RG-sim.A20.wdfirst", reading=READING_A20)
@uses("rare_gates.weight_decay")
def test_weight_decay_first_disagreements_ours(audit, results):
    weight_decay = results["rare_gates.weight_decay"]
    late, n = _late_first(weight_decay)
    w01 = next(w for w in weight_decay if w["lam"] == 0.01)
    p = E.fisher_p(late[0.01], n, 0, PAPER_A20_RUNS)
    expected, p_none = _late_first_model(0.01, n, gamma=w01["gamma"])
    # ours against the Lambda(t) model: the count is binomial(n, expected/n); two-sided 95% acceptance region
    lo_k, hi_k = stats.binom.ppf(0.025, n, expected / n), stats.binom.isf(0.025, n, expected / n)
    audit.ours(
        f"lambda=0.05: {late[0.05]}/{n}; lambda=0.01: {late[0.01]}/{n} (last at t = "
        f"{np.nanmax(w01['first']):.1f}; Fisher vs 0/{PAPER_A20_RUNS}: p = {p:.3f}); lambda=0: {late[0.0]}/{n}",
        label="runs with the first disagreement after t = 240",
    )
    audit.ours(
        f"{expected:.2f} expected (95% binomial range {lo_k:.0f}..{hi_k:.0f}), P(none) = {p_none:.3f}",
        label="Lambda(t) model at lambda = 0.01",
    )
    lams = ", ".join(f"{w['lam']:g}" for w in weight_decay)
    audit.evidence(
        f"Appendix 20 weight-decay controls: constructed checkpoint, target lambda in "
        f"{{{lams}}}, H = {w01['horizon']:g}, risk "
        "every 10 updates, disagreements every update. Our side (this check): at lambda = "
        f"0.05 none after t = 240 ({late[0.05]}/{n}), and at lambda = 0.01 our count {late[0.01]} lies in "
        f"the 95% range {lo_k:.0f}..{hi_k:.0f} of Appendix 20's own Lambda(t) model. The paper's side: its "
        f"'none' read as 0 of {PAPER_A20_RUNS}, compared with ours by a two-sided Fisher exact test at 5%: "
        f"p = {p:.3f}."
    )
    q = expected / n

    def model_power(m, rate):
        lo, hi = stats.binom.ppf(0.025, m, q), stats.binom.isf(0.025, m, q)
        k = np.arange(m + 1)
        return S.power_of_region(m, rate, (k < lo) | (k > hi))

    directions = {"expected count x 2": 2 * q, "expected count / 2": q / 2}
    powers = {name: model_power(n, rate) for name, rate in directions.items()}
    weak = min(powers, key=powers.get)
    need = S.smallest_n(lambda m: model_power(m, directions[weak]), n_min=n, n_max=PW.N_MAX_OURS)
    audit.evidence(
        PW.record(
            audit,
            powers[weak],
            alternative=f"a factor 2 in the expected count of late first disagreements at lambda = "
            f"0.01 ({2 * expected:.2f} or {expected / 2:.2f} of {n} instead of {expected:.2f})",
            method=f"exact: P(our count outside the model's 95% range) under Bin({n}, rate); weaker direction {weak}",
            decide=f"{need} streams would decide" if need else f"not {PW.N_MAX_OURS} streams",
        )
    )
    assert late[0.05] == 0
    assert lo_k <= late[0.01] <= hi_k


@discrepancy(
    "RG-sim.A20.wdfirst",
    reading=READING_A20,
    reason=(
        "At lambda = 0.01 some of our runs sample their first disagreement after t = 240, about as many as Appendix "
        "20's own intensity Lambda(t) (factor 0.85) predicts, so the paper's 'none after t ~ 240' is unlikely in this "
        "setting and our count against their 0 fails a two-sided Fisher test at 5% (counts, model and p in the "
        "evidence of the check of our side); at lambda = 0.05 none, as claimed. The setting (b, delta0, number of "
        "runs) of the weight-decay controls is not stated in the text; a smaller Gamma would make 'none' likely."
    ),
)
@uses("rare_gates.weight_decay")
def test_weight_decay_first_disagreements_paper(results):
    weight_decay = results["rare_gates.weight_decay"]
    late, n = _late_first(weight_decay)
    p = E.fisher_p(late[0.01], n, 0, PAPER_A20_RUNS)
    paper_claim(
        p >= 0.05,
        f"lambda = 0.01: {late[0.01]}/{n} first disagreements after t = 240 against the paper's "
        f"0/{PAPER_A20_RUNS}: two-sided Fisher p = {p:.3f}",
    )


@claim(
    "RG-sim.A20.wdplateau",
    reading=READING_A20 + "; 'plateaus through H = 1000' checked as no recovery in "
    "(H/2, H]; 'keeps accumulating' as a Wilson-significant gain over (H/2, H] at lambda = 0",
)
@uses("rare_gates.weight_decay")
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
    audit.evidence(
        "Recovered counts of the weight-decay controls at H/2 and H; 'at or below the reference': the "
        "reference not below our 95% Wilson interval. Without weight decay the gain over (H/2, H] must "
        "have a Wilson lower bound above zero."
    )
    # plateau: any recovery in (H/2, H] fails the check; the paper's runs read as ours in number (READING_A20)
    left = min(n - k_half for k_half, _, n, _, _ in (out[0.01], out[0.05]))
    q = PW.exception_rate(left)
    audit.evidence(
        PW.literal_all(
            audit,
            alternative=f"late recoveries at a rate {q:.4f} of the runs unrecovered at H/2: 1 - 0.01^(1/{left}), "
            "at which a plateau over as many runs of the paper would have been a 1-in-100 event",
            n=left,
            rate=q,
            label="plateau",
        )
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
    for lam in (0.01, 0.05):
        k_half, k_end, n, lo, ref = out[lam]
        assert k_end == k_half and ref >= lo
    assert E.wilson(gain0, out[0.0][2])[0] > 0


Z_NOISE = E.z_bonferroni(7)  # seven noise settings compared with the paper's values


@claim(
    "RG-sim.A20.noise",
    reading=READING_A20 + "; the paper's fractions read as k/128 and compared as "
    "independent samples (Newcombe, Bonferroni over the 7 settings)",
)
@uses("rare_gates.noise", "rare_gates.weight_decay")
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
    audit.evidence(
        "Noise s sqrt(eta) xi_i after every target step (independent per unit, or one vector shared), "
        f"runs continue to H = {noise[0]['horizon']:g}; recovery = first check with risk <= 0.4. Also: "
        "independent noise increases recovery with s, and beats shared noise at s = 1e-6 and 1e-5 "
        "(one-sided Fisher, 1%)."
    )
    audit.evidence(
        PW.comparison(
            audit,
            alternative="a factor 2 in the effective intensity of every setting: see verify.rare_gates.power",
            cells=[(c["paper"], noise[0]["recovery"].size, PAPER_A20_RUNS, "streams") for c in comps.values()],
            directions=PW.factor(2),
            z=Z_NOISE,
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
)
@uses("rare_gates.noise")
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
    "RG-sim.joint.collapse",
    reading=READING_OWN + "; collapse read as T_1/2 - lambda^-1 log(b/eta) constant "
    "across eta (chi-square with 4 df at 5% on bootstrap SEs, conservative for the positively correlated "
    "estimates that share inits)",
)
@uses("rare_gates.joint")
def test_joint_collapse(audit, results):
    joint = results["rare_gates.joint"]
    n = joint["init"].shape[0]
    b, times = joint["b"], joint["times"]
    fresh = joint["recovered"][:, 0, :].all()
    half = _half_times(joint)
    offsets = half - np.log(b / np.array(joint["etas"])) / LAM
    rng = np.random.Generator(np.random.Philox(key=np.array([E.SEEDS["bootstrap"], 3], dtype=np.uint64)))
    boot = np.array([_half_times(joint, rng.integers(0, n, n)) for _ in range(400)])
    se = np.nanstd(boot, axis=0, ddof=1)
    w = 1 / se**2
    chi2 = float(np.sum(w * (offsets - np.sum(w * offsets) / np.sum(w)) ** 2))
    rates = [-E.log_slope(times, np.median(joint["angle"][i], axis=1), times >= 100) for i in range(len(joint["etas"]))]
    counts = joint["recovered"].sum(axis=2)  # (eta, T), etas in decreasing order
    n_t = times.size
    z = E.z_bonferroni(4 * n_t)  # adjacent eta pairs x source times
    inversions = [
        (joint["etas"][i], float(times[k]))
        for i in range(counts.shape[0] - 1)
        for k in range(n_t)
        if E.newcombe_difference(int(counts[i, k]), n, int(counts[i + 1, k]), n, z)[0] > 0
    ]
    init_angle = E.angles(joint["init"])
    opposite = [bool(np.any(joint["recovered"][i, -1] & (init_angle > 2.5))) for i in range(len(joint["etas"]))]
    audit.ours(", ".join(f"{o:.1f}" for o in offsets), label="T_1/2 - lambda^-1 log(b/eta)")
    audit.ours(f"{chi2:.2f} (5% critical value {stats.chi2.isf(0.05, 4):.2f})", label="chi-square of constancy")
    audit.ours(", ".join(f"{r:.4f}" for r in rates), label="median checkpoint angle decay rates")
    audit.ours(f"{len(inversions)} {inversions}", label="significant inversions (larger eta recovering more)")
    audit.ours(
        f"{fresh}; near-opposite recoveries at T = 400 for every eta: {all(opposite)}", label="fresh all recover"
    )
    audit.evidence(
        f"Monotonicity in eta: at each T and each adjacent pair of step sizes, the Newcombe interval of "
        f"(larger eta) - (smaller eta) at Bonferroni over the {counts.shape[0] - 1} x {n_t} pairs must "
        "not lie above 0 (independent-sample intervals, conservative for records sharing inits); decay "
        "rates of the median checkpoint angle over T in [100, 400] compared after rounding to 0.050."
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
    assert fresh and all(opposite)
    assert chi2 <= stats.chi2.isf(0.05, 4)
    assert all(rounds_to(r, "0.050") for r in rates)
    assert not inversions


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
