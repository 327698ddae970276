"""Checks of the derived numbers quoted in the simulation sections (Section 8; Appendices 19, 20).

Derivations: :mod:`derivations.rare_gates.references`. Only arithmetic and derivations are
checked here: recovered fractions, hitting times and T_1/2 are the paper's simulation
outputs, used as quoted inputs where a claim relates them.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

import mpmath
import numpy as np
import sympy as sp
from scipy.stats import fisher_exact

from derivations.rare_gates import references as R
from derivations.rare_gates.symbols import lam
from numerics import stats as S
from numerics.rare_gates import experiments as E
from numerics.rare_gates.initialization import wilson_interval
from verify.audit import claim, rounds_to
from verify.registry import paper_numbers

LAMBDA = sp.Rational(1, 20)  # lambda = 0.05 in every simulation of Section 8
ETA = sp.Rational(1, 100)  # eta = 0.01 in the long-horizon settings
SETTINGS = [  # (b, delta0) of Table 2, in its row order
    (16, sp.Rational(1, 10**5)),
    (64, sp.Rational(1, 10**5)),
    (1, sp.Rational(1, 10**3)),
    (16, sp.Rational(1, 10**4)),
    (64, sp.Rational(1, 10**4)),
]
# the paper's Table 2 fractions at t <= 60, 200, 450 per setting, and its GD hitting times by delta0, read from the
# registry (RG-sim.T2.fractions and RG-19.gdspacing quote them; the settings in the order of those statements)
_T2_KEYS = [(16, "1e-5"), (64, "1e-5"), (1, "1e-3"), (16, "1e-4"), (64, "1e-4")]
_T2 = paper_numbers("RG-sim.T2.fractions")
TABLE2_FRACTIONS = {key: tuple(_T2[3 * i : 3 * i + 3]) for i, key in enumerate(_T2_KEYS)}
_GD_DELTA0 = (sp.Rational(1, 10**5), sp.Rational(1, 10**4), sp.Rational(1, 10**3))
GD_HIT = dict(zip(_GD_DELTA0, paper_numbers("RG-19.gdspacing"), strict=True))

Z95 = 1.959963984540054  # two-sided 95% normal quantile (the paper's Wilson intervals)


def _num(expr: sp.Expr) -> mpmath.mpf:
    with mpmath.workdps(60):
        return mpmath.mpf(sp.N(expr, 60))


def _gamma(b, d0, eta=ETA) -> sp.Expr:
    """Gamma = pi x (disagreement rate at angle delta0): b delta0/eta, from the wedge probability."""
    return sp.pi * R.disagreement_rate(R.delta0).subs({R.b: b, R.delta0: d0, R.eta: eta})


# --- Poisson and frozen references -------------------------------------------------------------------


@claim("RG-8.poisson")
def test_poisson_exponent(audit):
    exponent = R.in_budget(R.poisson_exponent())
    audit.ours(exponent, label="int_0^oo b (delta0 e^{-lambda t}/pi)/eta dt in terms of Gamma")
    audit.ours(R.poisson_reference(), label="reference")
    audit.evidence(
        "Gate-disagreement probability delta/pi integrated by SymPy over the input directions, times b/eta samples "
        "per unit time, integrated over t in [0, oo) along delta0 e^{-lambda t}; exact equality with the paper's form."
    )
    assert sp.simplify(exponent - R.Gamma / (sp.pi * lam)) == 0
    assert sp.simplify(R.poisson_reference() - (1 - sp.exp(-R.Gamma / (sp.pi * lam)))) == 0


@claim("RG-19.T2gamma")
def test_table2_gamma(audit):
    quoted = paper_numbers("RG-19.T2gamma")
    ours = [_gamma(b, d0) for b, d0 in SETTINGS]
    audit.ours(", ".join(f"{g} = {sp.N(g, 3)}" for g in ours))
    audit.evidence(
        "Gamma = pi x disagreement rate at delta0 = b delta0/eta with eta = 0.01, "
        "exact rationals; compared to the quoted digits."
    )
    assert all(rounds_to(g, q) for g, q in zip(ours, quoted))


def _column(ref: sp.Expr) -> list:
    """A Table 2 reference column: ``ref`` (a function of Gamma) at each setting's Gamma, 60 digits."""
    return [_num(ref.subs(R.Gamma, _gamma(b, d0))) for b, d0 in SETTINGS]


def _check_column(audit, quoted: list[str], ref: sp.Expr, how: str) -> None:
    """The column of ``ref`` against the paper's ``quoted`` digits, one per setting."""
    ours = _column(ref)
    audit.ours(ours)
    audit.evidence(how)
    assert all(rounds_to(v, q) for v, q in zip(ours, quoted))


@claim("RG-19.T2poisson")
def test_table2_poisson_column(audit):
    _check_column(
        audit,
        paper_numbers("RG-19.T2poisson"),
        R.poisson_reference().subs(lam, LAMBDA),
        "1 - exp(-Gamma/(pi lambda)) from the derived exponent at lambda = 0.05, 60-digit evaluation, "
        "rounded to the quoted 3 decimals.",
    )


@claim("RG-19.T2frozen")
def test_table2_frozen_column(audit):
    _check_column(
        audit,
        paper_numbers("RG-19.T2frozen"),
        R.frozen_reference().subs(R.time, 200),
        "1 - exp(-Gamma t/pi) from the disagreement rate at the frozen angle delta0, integrated over [0, 200]; "
        "rounded to 3 decimals.",
    )


@claim("RG-8.frozen063")
def test_frozen_exceeds_063(audit):
    ours = min(_column(R.frozen_reference().subs(R.time, 200)))
    audit.ours(ours, label="smallest frozen-angle reference at t = 200 over the five settings")
    audit.evidence("Exact comparison of the smallest value (Gamma = 0.016) with 0.63.")
    assert ours > mpmath.mpf("0.63")


# --- Table 2 counts and cross-references -------------------------------------------------------------


def _k_of(quoted: str, n: int) -> list[int]:
    """All integers k with k/n rounding to ``quoted``."""
    return [k for k in range(n + 1) if rounds_to(sp.Rational(k, n), quoted)]


@claim("RG-19.T2counts")
def test_table2_counts(audit):
    ks = {}
    for setting, fracs in TABLE2_FRACTIONS.items():
        found = [_k_of(q, 128) for q in fracs]
        assert all(len(f) == 1 for f in found), (setting, found)  # one integer count per printed fraction
        ks[setting] = [f[0] for f in found]
        assert ks[setting] == sorted(ks[setting])  # cumulative counts cannot decrease in t
    unrecovered = 5 * 128 - sum(k[2] for k in ks.values())
    audit.ours({f"b={b}, delta0={d}": f"{k} of 128" for (b, d), k in ks.items()}, label="counts at t <= 60, 200, 450")
    audit.ours(unrecovered, label="unrecovered at t <= 450")
    audit.evidence(
        "Each printed fraction matches exactly one k/128 (3-decimal rounding); 640 minus the t <= 450 counts."
    )
    assert unrecovered == 348


@claim("RG-19.agree")
def test_60_of_64_and_126_of_128(audit):
    k128 = _k_of(TABLE2_FRACTIONS[(64, "1e-4")][1], 128)
    _, p_value = fisher_exact([[60, 4], [126, 2]], alternative="two-sided")
    audit.ours(f"Table 2 b=64, delta0=1e-4, t<=200: {k128} of 128; Fisher exact two-sided p = {p_value:.4f}")
    audit.evidence(
        f"{', '.join(map(str, k128))}/128 {'is the only count' if len(k128) == 1 else 'are the counts'} printing as "
        "Table 2's 0.984; independent streams (128 new ones here), so a two-sided Fisher exact test of 60/64 vs "
        "126/128; agreement within sampling error read as p > 0.05."
    )
    # Power of 'agree' against a factor 2 in the effective intensity -log(1 - p) between the two cells (the
    # rule of verify.rare_gates.power): the Figure 3(a) cell's fraction moved from the Table 2 value 126/128
    p2 = 126 / 128
    powers = {
        name: S.power_two_sample(1 - (1 - p2) ** f, 64, p2, 128, test="fisher")
        for name, f in (("intensity x 2", 2.0), ("intensity / 2", 0.5))
    }
    weak = min(powers, key=lambda k: powers[k])
    audit.power(
        powers[weak],
        alternative="a factor 2 in the effective intensity between the two cells: a slip of a "
        "factor 2 in b, delta0 or eta would show there",
        method=f"exact enumeration of Bin(64, p) x Bin(128, 126/128), Fisher two-sided p < 0.05; weaker "
        f"direction {weak}",
    )
    # a paper-internal consistency comparison: both counts are the paper's, fixed, so no sample of ours enters it
    # and no run of ours can raise its power; the verdict rule still applies (below 0.8: inconclusive), because
    # 'agree within sampling error' at this power carries no information about the two cells' populations
    decide = (
        f". A paper-internal consistency comparison of the paper's two fixed counts: no sample of ours enters it, so "
        f"no run of ours can decide it, and the verdict stays inconclusive by the rule. It holds literally (p = "
        f"{p_value:.3f} > 0.05) but at this power carries no information on whether the two cells share one "
        "population (our own two experiments of the setting are compared at power in RG-sim.T2.agree)"
        if powers[weak] < 0.8
        else "."
    )
    audit.evidence(f"Power {powers[weak]:.2f} against a factor 2 in the effective intensity between the cells" + decide)
    assert k128 == [126]
    assert p_value > 0.05


def _grid():
    """The 24 constructed cells of Figure 3(a): (delta0, b, eta)."""
    d0s = [sp.Rational(1, 10**k) for k in (5, 4, 3, 2)]
    return list(itertools.product(d0s, (1, 16, 64), (sp.Rational(1, 100), sp.Rational(1, 500))))


def _kappa_cells(p: sp.Rational) -> list[tuple]:
    """Cells whose kappa_eff at recovered fraction p is above one and rounds to at most 1.49."""
    out = []
    for d0, b, eta in _grid():
        gam = _gamma(b, d0, eta)
        k = _num(R.kappa_eff().subs({R.p_hat: p, lam: LAMBDA, R.Gamma: gam}))
        if 1 < k < mpmath.mpf("1.495"):  # 1.495: the largest value that still prints as the quoted max 1.49
            out.append((d0, b, eta, gam, k))
    return out


@claim(
    "RG-8.8to94",
    reading="the 8% cell is the b = 1 cell with 5/64 recoveries, the only grid cell kappa_eff allows for 5/64",
)
def test_8_to_94_percent(audit):
    (cell,) = _kappa_cells(sp.Rational(5, 64))
    d0, b, eta, _, _ = cell
    audit.ours(f"5/64 = {float(5 / 64):.4f} at (b, delta0, eta) = ({b}, {d0}, {eta}); 60/64 = {60 / 64:.4f}")
    audit.evidence(
        f"The 5/64 cell located through kappa_eff is (b={b}, delta0={d0}, eta={eta}), the sentence's b = 1 "
        "cell; fractions rounded to whole percent."
    )
    assert (b, d0, eta) == (1, sp.Rational(1, 10**4), sp.Rational(1, 100))
    assert rounds_to(sp.Rational(5, 64), "0.08") and rounds_to(sp.Rational(60, 64), "0.94")


@claim("RG-19.kappa")
def test_kappa_eff_inverts_reference(audit):
    ours = R.kappa_eff()
    audit.ours(ours)
    audit.evidence(
        "SymPy solves p = 1 - exp(-kappa Gamma/(pi lambda)) (the Poisson exponent with intensity factor kappa) for "
        "kappa and substitutes back; exact equality with the paper's formula."
    )
    assert sp.simplify(ours - (-sp.pi * lam * sp.log(1 - R.p_hat) / R.Gamma)) == 0


@claim("RG-19.kappacells")
def test_kappa_above_one_cells(audit):
    assert len(_grid()) == 24
    five = _kappa_cells(sp.Rational(5, 64))
    nine = _kappa_cells(sp.Rational(9, 64))
    audit.ours(
        {
            f"{p}/64": [
                f"(b={b}, delta0={d0}, eta={eta}, Gamma={gam}) kappa={mpmath.nstr(k, 6)}"
                for d0, b, eta, gam, k in cells
            ]
            for p, cells in ((5, five), (9, nine))
        }
    )
    assert len(five) == 1 and len(nine) == 1
    top = max(five[0][4], nine[0][4])
    audit.ours(top, label="largest kappa_eff above one")
    inside = []
    for p, (_d0, _b, _eta, gam, _) in ((5, five[0]), (9, nine[0])):
        ref = _num(R.poisson_reference().subs({lam: LAMBDA, R.Gamma: gam}))
        lo, hi = wilson_interval(p, 64, Z95)
        inside.append(lo <= ref <= hi)
    audit.evidence(
        f"kappa_eff = -pi lambda log(1 - p)/Gamma over the {len(_grid())} cells of Figure 3(a) for p = 5/64 and 9/64: "
        f"{len(five)} and {len(nine)} cells lie in (1, 1.495); the larger value must print as the quoted max 1.49; "
        f"Wilson 95% intervals of the two cells contain the Poisson reference: {', '.join(map(str, inside))}. Not "
        "checkable here: the minimum 0.49 and 'ten values below one'."
    )
    assert rounds_to(top, "1.49")
    assert all(inside)


@claim("RG-19.offsets")
def test_half_recovery_offsets(audit):
    t_half = ["241.7", "257.9", "265.6", "284.4", "295.0"]
    etas = [
        sp.Rational(4, 1000),
        sp.Rational(2, 1000),
        sp.Rational(1, 1000),
        sp.Rational(5, 10000),
        sp.Rational(25, 100000),
    ]
    quoted = ["75.8", "78.2", "72.0", "76.9", "73.7"]
    expr = R.half_recovery_offset().subs({lam: LAMBDA, R.b: 16})
    ours = [_num(expr.subs({R.T_half: sp.Rational(th), R.eta: e})) for th, e in zip(t_half, etas)]
    audit.ours(ours)
    audit.evidence(
        "T_1/2 minus the time lambda^{-1} log(b/eta) at which b e^{-lambda T}/eta = 1, "
        "b = 16, lambda = 0.05; rounded to one decimal."
    )
    assert all(rounds_to(v, q) for v, q in zip(ours, quoted))


# --- Appendix 20 -------------------------------------------------------------------------------------


@claim(
    "RG-20.Lambda",
    reading="the display read as the integrated disagreement intensity b/eta x (angle/pi) along the angle "
    "0.85 delta0 e^{-lambda s}; what this checks is the display's closed form against that integral (an algebra "
    "slip in the display, a missing 1/pi or a 1/(2 lambda), would fail it), not the factor 0.85, which the text "
    "does not derive (the amplitude transient from B = 0.9 alone gives about 0.88: see the values)",
)
def test_integrated_intensity(audit):
    factor = sp.Rational(85, 100)
    ours = R.integrated_intensity(factor)
    paper = factor * R.b * R.delta0 / (sp.pi * R.eta) * (1 - sp.exp(-lam * R.time)) / lam
    integral = R.transient_intensity_factor().subs({lam: LAMBDA, R.B0: sp.Rational(9, 10)})
    integrand = sp.lambdify(R.time, integral.function, "mpmath")
    with mpmath.workdps(30):
        transient = mpmath.quad(integrand, [0, 20, mpmath.inf])
    audit.ours(ours)
    audit.ours(
        transient, label="intensity factor implied by the amplitude transient from B = 0.9 (for comparison with 0.85)"
    )
    audit.evidence(
        f"SymPy integrates b/eta x (angle/pi) over [0, t] along {float(factor)} delta0 e^{{-lambda s}}; exact equality "
        f"with the display. The text does not derive {float(factor)}; the common-gate amplitude transient alone "
        f"would give {mpmath.nstr(transient, 3)}."
    )
    assert sp.simplify(ours - paper) == 0


@claim("RG-20.OU")
def test_noise_scale(audit):
    discrete, var = R.ou_difference_variance()
    r_t = R.target_clone_norm().subs(lam, LAMBDA)
    scale = R.angle_noise_scale().subs({lam: LAMBDA, R.s_noise: 1})
    scale_at_077 = (sp.sqrt(var) / sp.Rational(77, 100)).subs({lam: LAMBDA, R.s_noise: 1})
    audit.ours(sp.sqrt(var), label="stationary std")
    audit.ours(r_t, label="r = sqrt(B_t/2) at lambda = 0.05")
    audit.ours(scale, label="s/(r sqrt(lambda)) per unit s")
    audit.ours(scale_at_077, label="the same at r = 0.77")
    audit.evidence(
        "Per-step recursion of the transverse difference (independent noise s sqrt(eta) xi on each unit, weight "
        "decay only, since the common-gate data term cancels for balanced units): stationary variance "
        "2 s^2/(lambda(2 - eta lambda)) -> s^2/lambda; B_t = 2(q - lambda) minimises the balanced target objective, "
        "r = sqrt(B_t/2). Rounded to the quoted digits."
    )
    assert sp.simplify(sp.sqrt(var) - R.s_noise / sp.sqrt(lam)) == 0
    assert rounds_to(r_t, "0.77")
    assert rounds_to(scale, "5.8") and rounds_to(scale_at_077, "5.8")


# --- Appendix 19 GD times and angle decay ---------------------------------------------------


@claim("RG-19.gdspacing")
def test_gd_spacing(audit):
    spacing = _num(R.gd_log_angle_spacing().subs(lam, LAMBDA))
    times = [Decimal(GD_HIT[d]) for d in sorted(GD_HIT)]  # delta0 = 1e-5, 1e-4, 1e-3
    diffs = [str(times[i + 1] - times[i]) for i in range(2)]
    offsets = [_num(R.gd_hitting_offset(sp.Rational(GD_HIT[d]), d).subs(lam, LAMBDA)) for d in sorted(GD_HIT)]
    audit.ours(spacing, label="log(10)/A")
    audit.ours(diffs, label="quoted spacings 18.2 - 22.1 and 14.3 - 18.2 per decade of delta0")
    audit.ours([mpmath.nstr(o, 4) for o in offsets], label="implied offsets c for delta0 = 1e-5, 1e-4, 1e-3")
    audit.evidence(
        f"log(10)/A with A = 2/pi - lambda at lambda = {float(LAMBDA)} against the differences of the quoted GD times, "
        "rounded to their one decimal (offsets of these constructed checkpoints are "
        f"{', '.join(mpmath.nstr(o, 3) for o in offsets)}, not Figure 2's 3.9)."
    )
    assert all(rounds_to(spacing, d.lstrip("-")) for d in diffs)


RATIO_ALT = {
    "450/tau_GD at the quoted 14.3 (also our time with the stated risk check every 10 updates, "
    "RG-sim.gd.constructed)": "not computed: the check did not reach its alternative"
}


def _pure_rate_resolution() -> str:
    """What the pure-rate reading of RG-19.resolution gives: log(delta0/1e-15)/lambda, to the nearest 10."""
    times = [math.log(10.0 ** (15 - k)) / 0.05 for k in (5, 4, 3)]  # delta0 = 1e-5, 1e-4, 1e-3; lambda = 0.05
    return (
        f"{', '.join(f'{t:.1f}' for t in times)}, i.e. {', '.join(str(10 * round(t / 10)) for t in times)} to the "
        "nearest 10, against the quoted 460 and 500-550"
    )


@claim(
    "RG-8.ratio",
    reading="'about 20 to 32' read as the rounded ratios 450/tau_GD at our own GD hitting times from the constructed "
    "checkpoints (numerics.rare_gates.experiments.gd_constructed, eta = 0.01, risk checked every update): the time "
    "resolution is RG-sim.gd.constructed's fitted reading, so this one inherits it",
    fitted=RATIO_ALT,
)
def test_horizon_ratio(audit):
    hit = E.gd_constructed()["hit"]  # deterministic GD, delta0 = 1e-5, 1e-4, 1e-3, risk every 1 and 10 updates
    ours = [450 / t for t in hit[1]]
    coarse = [450 / t for t in hit[10]]
    quoted = [_num(450 / sp.Rational(GD_HIT[d])) for d in sorted(GD_HIT)]  # at the quoted 22.1, 18.2, 14.3
    _fill_ratio_alternative(
        f"450/14.3 = {float(quoted[-1]):.2f} rounds to {round(float(quoted[-1]))}; our every-10-updates times "
        f"{', '.join(f'{t:g}' for t in hit[10])} give {', '.join(f'{r:.2f}' for r in coarse)}: 'about "
        f"{round(coarse[0])} to {round(coarse[-1])}', so '32' there is 31.5 read as 'about 32'"
    )
    audit.ours([f"{t:g}" for t in hit[1]], label="our GD hitting times, delta0 = 1e-5, 1e-4, 1e-3 (every update)")
    audit.ours([f"{r:.2f}" for r in ours], label="450/tau_GD at our times")
    audit.ours([mpmath.nstr(q, 4) for q in quoted], label="450/tau_GD at the quoted 22.1, 18.2, 14.3")
    audit.evidence(
        "GD hitting time depends on delta0 only, so the five settings span three times. Our deterministic GD from the "
        f"constructed checkpoints (risk every update) hits at {', '.join(f'{t:g}' for t in hit[1])}; 450 over them "
        f"is {', '.join(f'{r:.2f}' for r in ours)}, whose extremes round to {round(ours[0])} and {round(ours[-1])}: "
        "'about 20 to 32' with no stretch. Fitted: that time resolution is RG-sim.gd.constructed's fitted reading; "
        f"the quoted 14.3, which our stated-protocol run (every 10 updates) also gives, yields "
        f"{mpmath.nstr(quoted[-1], 4)}, which rounds to 31, and 32 only as 'about 32' (1.7% off)."
    )
    assert round(ours[0]) == 20 and round(ours[-1]) == 32
    assert all(rounds_to(t, q) for t, q in zip(hit[1], ("22.1", "18.2", "14.3")))  # our times match the quotes


def _fill_ratio_alternative(text: str) -> None:
    """Write what RATIO_ALT's alternative gives, computed by the check, into the marker's own dict."""
    (key,) = RATIO_ALT
    RATIO_ALT[key] = text


@claim(
    "RG-19.resolution",
    reading="the unrecovered angle follows the common-gate mean path delta0 e^{-lambda t} sqrt(B0/B(t)) from the "
    "constructed checkpoint (B0 = 0.9), floor 1e-15, times read to the nearest 10",
    fitted={"the pure rate lambda (no amplitude transient), floor 1e-15": _pure_rate_resolution()},
)
def test_resolution_times(audit):
    path = R.common_gate_angle().subs({lam: LAMBDA, R.B0: sp.Rational(9, 10)})
    pure = R.resolution_time().subs({lam: LAMBDA, R.floor: sp.Rational(1, 10**15)})
    ours, plain = [], []
    for d0 in (sp.Rational(1, 10**5), sp.Rational(1, 10**4), sp.Rational(1, 10**3)):
        f = sp.lambdify(R.time, sp.log(path.subs(R.delta0, d0)) - sp.log(sp.Rational(1, 10**15)), "mpmath")
        with mpmath.workdps(50):
            ours.append(mpmath.findroot(f, _num(pure.subs(R.delta0, d0))))
        plain.append(_num(pure.subs(R.delta0, d0)))
    audit.ours([mpmath.nstr(v, 6) for v in ours], label="common-gate path, delta0 = 1e-5, 1e-4, 1e-3")
    audit.ours([mpmath.nstr(v, 6) for v in plain], label="pure rate lambda")
    audit.evidence(
        "Root of log(angle) = log(1e-15) on the derived common-gate path (transverse decay at lambda, shared amplitude "
        f"logistic from 0.9 to B_t) gives {', '.join(mpmath.nstr(v, 4) for v in ours)}; pure lambda gives "
        f"{', '.join(mpmath.nstr(v, 4) for v in plain)}, which fit only if 500-550 is read to the nearest 50. "
        "Nearest-10 rounding of 460, 500, 550."
    )
    assert rounds_to(ours[0], "4.6e2") and rounds_to(ours[1], "5.0e2") and rounds_to(ours[2], "5.5e2")


def _decay_numbers() -> tuple[float, float]:
    """The angle at t = 100 at the pure rate lambda from 1e-4, and the mean rate the quoted 5.8e-7 implies."""
    return 1e-4 * math.exp(-0.05 * 100), math.log(1e-4 / 5.8e-7) / 100


@claim(
    "RG-19.decay",
    reading="'rate ~ lambda' read as the mean log-decay rate agreeing with lambda = 0.05 to its one significant "
    f"digit; pure rate lambda would give {_decay_numbers()[0]:.3g}, so the quoted 5.8e-7 implies "
    f"{_decay_numbers()[1]:.4f} ({100 * (_decay_numbers()[1] / 0.05 - 1):.0f}% faster)",
)
def test_angle_decay_example(audit):
    with mpmath.workdps(50):
        implied = mpmath.log(mpmath.mpf("1e-4") / mpmath.mpf("5.8e-7")) / 100
        quoted = mpmath.mpf("5.8e-7")
    path = R.common_gate_angle().subs({lam: LAMBDA, R.B0: sp.Rational(9, 10), R.delta0: sp.Rational(1, 10**4)})
    transient = _num(path.subs(R.time, 100))
    pure = _num(sp.Rational(1, 10**4) * sp.exp(-LAMBDA * 100))  # the reading 'rate exactly lambda'
    audit.ours(implied, label="mean rate implied by 1e-4 -> 5.8e-7 over t = 100")
    audit.ours(pure, label="angle at t = 100, pure rate lambda")
    audit.ours(transient, label="angle at t = 100, common-gate path with the amplitude transient from B = 0.9")
    d_transient, d_pure = abs(mpmath.log(transient / quoted)), abs(mpmath.log(pure / quoted))
    extra = implied / mpmath.mpf("0.05") - 1  # relative to lambda = 0.05
    audit.evidence(
        f"The implied rate {mpmath.nstr(implied, 3)} {'rounds' if rounds_to(implied, '0.05') else 'does not round'} "
        f"to lambda = 0.05. The extra {mpmath.nstr(100 * extra, 2)}% is mostly the amplitude transient the paper "
        f"itself invokes: the derived common-gate path gives {mpmath.nstr(transient, 3)} (log-distance "
        f"{mpmath.nstr(d_transient, 2)} from 5.8e-7, versus {mpmath.nstr(d_pure, 3)} for pure lambda); the remaining "
        f"{mpmath.nstr(100 * d_transient, 2)}% needs the simulator (one SGD run's fluctuation)."
    )
    assert rounds_to(implied, "0.05")
    assert abs(mpmath.log(transient / quoted)) < abs(mpmath.log(pure / quoted))


# --- Appendix 19 against Table 1: the paper's own numbers --------------------------------------


def _paper_half_times() -> list[float]:
    return [float(v) for v in paper_numbers("RG-sim.joint.Thalf")]


HALF_DRAWS = 20000  # bootstrap draws of Table 1's two counts (the range's quantiles to about +-0.3)
HALF_REPS, HALF_INNER = 400, 2000  # power: simulated Table 1s under the alternative, bootstrap draws for each


def _table1_half_ranges(k200: int, k300: int, draws: int, rng) -> dict:
    """95% ranges of the half-time interpolated from Table 1's two counts (of 64), under two laws of the pair.

    ``independent``: two binomials; ``nested``: every draw recovering at T = 300 also recovers at T = 200 (a
    multinomial over the three outcome classes), the strongest positive dependence the two margins allow; the two
    counts come from the same 64 draws along one source trajectory each, so the truth lies between.
    """

    def interp(f2, f3):
        return 200.0 + (f2 - 0.5) / (f2 - f3) * 100.0

    f2 = rng.binomial(64, k200 / 64, draws) / 64
    f3 = rng.binomial(64, k300 / 64, draws) / 64
    m = rng.multinomial(64, [k300 / 64, (k200 - k300) / 64, 1 - k200 / 64], draws)
    out = {}
    for name, (a, c) in {"independent": (f2, f3), "nested": ((m[:, 0] + m[:, 1]) / 64, m[:, 0] / 64)}.items():
        ok = (a > 0.5) & (c < 0.5)
        out[name] = tuple(float(v) for v in np.quantile(interp(a[ok], c[ok]), [0.025, 0.975]))
    return out


@claim(
    "RG-19.halfcross",
    reading="the joint sweep's T_1/2 at eta = 1e-3 (SGD in both phases, b = 16, H = 200, the same 64 saved draws, "
    "risk every ten updates) is the Table 1 protocol on a finer grid of T with fresh target streams; read as: the "
    "paper's 265.6 must lie in the 95% range of the half-time that linear interpolation of Table 1's source-SGD "
    "counts at T = 200 and 300 gives under resampling of both counts (parametric bootstrap, 20000 draws), the wider "
    "of two laws of the pair (independent binomials; nested outcomes, the strongest positive dependence); not "
    "modelled: the joint sweep's own sampling error and its covariance with Table 1 (same draws and source "
    "trajectories), and the interpolation's bias from the curve's shape",
    by_construction="consistency only: both sides are the paper's printed numbers (Table 1's 59/64 and 20/64, the "
    "joint sweep's 265.6) and no simulation of ours enters, so the check shows that Appendix 19 and Table 1 agree "
    "with each other within binomial noise, not that the half-time is 265.6; our own half-time is "
    "RG-sim.joint.Thalf (full profile)",
)
def test_joint_half_time_against_table1(audit):
    from verify.registry import paper_numbers

    k200, k300 = (int(v) for v in paper_numbers("RG-sim.T1.sgd")[:2])  # source SGD at T = 200, 300 (of 64)
    half = _paper_half_times()[2]  # eta = 1e-3
    point = 200.0 + (k200 / 64 - 0.5) / ((k200 - k300) / 64) * 100.0
    ranges = _table1_half_ranges(k200, k300, HALF_DRAWS, np.random.default_rng(2610114762))  # a fixed seed
    lo, hi = min(r[0] for r in ranges.values()), max(r[1] for r in ranges.values())
    audit.ours(f"{point:.1f} (95% range {lo:.1f}..{hi:.1f})", label="Table 1's interpolated half-time at eta = 1e-3")
    audit.ours(
        "; ".join(f"{name} {a:.1f}..{b:.1f}" for name, (a, b) in ranges.items()), label="the range under each law"
    )
    audit.ours(half, label="the paper's joint-sweep T_1/2 at eta = 1e-3")
    audit.evidence(
        f"Table 1: {k200}/64 and {k300}/64 recover from source-SGD checkpoints at T = 200 and 300; linear "
        f"interpolation to one half gives {point:.1f}; resampling both counts gives the range (the wider of the "
        f"two laws of the pair); the joint sweep's {half:g} must fall inside it."
    )
    # power against the shift a factor 2 in eta makes (log(2)/lambda, the alternative of RG-sim.joint.Thalf): Table 1's
    # two fractions moved along the line through them until it crosses one half at 265.6 -/+ that shift, drawn, and
    # the check's range recomputed for each simulated Table 1
    shift = math.log(2) / float(LAMBDA)
    slope = (k200 - k300) / 64 / 100.0
    powers = {}
    for sign in (-1, 1):
        h = half + sign * shift
        p200, p300 = 0.5 + slope * (h - 200.0), 0.5 + slope * (h - 300.0)

        def trial(rng, p200=p200, p300=p300):
            k2, k3 = rng.binomial(64, min(max(p200, 0.0), 1.0)), rng.binomial(64, min(max(p300, 0.0), 1.0))
            if not (32 < k2 and k3 < 32):  # no crossing between T = 200 and 300: counted as no rejection (conservative)
                return False
            r = _table1_half_ranges(k2, k3, HALF_INNER, rng)
            return not (min(v[0] for v in r.values()) <= half <= max(v[1] for v in r.values()))

        powers[f"T_1/2 {'-' if sign < 0 else '+'} {shift:.1f}"] = S.power_by_simulation(trial, HALF_REPS, 2610114763)
    weak = min(powers, key=lambda k: powers[k].power)
    audit.power(
        powers[weak].power,
        alternative=f"a true half-time log(2)/lambda = {shift:.1f} from 265.6, the shift a factor 2 in eta makes (the "
        "alternative of RG-sim.joint.Thalf)",
        method=f"simulation: Table 1's two fractions moved along the line through them to cross one half there, drawn "
        f"as binomials of 64, the check's range recomputed from {HALF_INNER} bootstrap draws each; "
        + "; ".join(f"{k}: {v}" for k, v in powers.items())
        + f"; weaker direction {weak}",
    )
    audit.evidence(
        f"Power {powers[weak].power:.2f} against a true half-time {shift:.1f} from {half:g}"
        + (
            ". A comparison of the paper's own fixed numbers (its 64 saved draws): no sample of ours enters it, so no "
            "run of ours can decide it, and the verdict stays inconclusive by the rule; our own half-time at power is "
            "RG-sim.joint.Thalf (full profile)"
            if powers[weak].power < 0.8
            else "."
        )
    )
    assert lo <= half <= hi


NOWD_WEAK = 2.0  # 'contracts only weakly': by at most a factor 2 over the whole run (our reading)


@claim(
    "RG-8.nowd",
    reading="The separation is the common-gate mean-path angle delta0 e^{-lambda t} sqrt(B0/B(t)) of the constructed "
    "checkpoint (B0 = 0.9; references.common_gate_angle, whose transverse rate -lambda is derived); 'contracts only "
    f"weakly' read as: at lambda = 0 its total contraction over t in [0, oo) is at most a factor {NOWD_WEAK:g}, so the "
    "disagreement intensity b delta(t)/(pi eta) keeps a positive floor and its integral diverges ('recovery keeps "
    "accumulating'); with weight decay lambda in {0.01, 0.05} the angle decays exponentially and the integral is "
    "finite (saturation)",
)
def test_no_weight_decay_contracts_weakly(audit):
    path = R.common_gate_angle().subs({R.B0: sp.Rational(9, 10), R.delta0: 1})
    at0 = path.subs(lam, 0)
    floor = sp.nsimplify(sp.limit(at0, R.time, sp.oo))
    floor_f = float(sp.N(floor, 30))
    # with weight decay: the angle at t = 240 (where Appendix 20's first disagreements stop) and the finite integral
    decayed = {
        lv: float(sp.N(path.subs({lam: lv, R.time: 240}), 20)) for lv in (sp.Rational(1, 100), sp.Rational(1, 20))
    }
    integral = {
        lv: float(sp.N(sp.Integral(path.subs(lam, lv), (R.time, 0, sp.oo)), 15))
        for lv in (sp.Rational(1, 100), sp.Rational(1, 20))
    }
    audit.ours(floor, label="lim_{t->oo} delta(t)/delta0 at lambda = 0")
    audit.ours(floor_f, 20, label="the same, numerically")
    audit.ours({f"lambda = {k}": f"{v:.4g}" for k, v in decayed.items()}, label="delta(240)/delta0 with weight decay")
    audit.ours({f"lambda = {k}": f"{v:.4g}" for k, v in integral.items()}, label="int_0^oo delta(t)/delta0 dt")
    audit.evidence(
        "SymPy: at lambda = 0 the mean-path angle falls from delta0 to "
        f"delta0 sqrt(B0/B_oo) = {floor} = {floor_f:.4f} delta0 (B_oo = 2A = 4/pi, the target clone amplitude), a "
        f"contraction by a factor {1 / floor_f:.3f} in all; so the disagreement intensity keeps the floor "
        f"{floor_f:.3f} b delta0/(pi eta) and its integral grows linearly in t. With weight decay the angle at t = 240 "
        f"is {', '.join(f'{v:.3g}' for v in decayed.values())} delta0 (lambda = 0.01, 0.05) and the integrals are "
        f"finite ({', '.join(f'{v:.4g}' for v in integral.values())} delta0), which is the saturation. The data side "
        "(recovery keeps accumulating at lambda = 0) is RG-sim.A20.wdplateau. Exact symbolic limit."
    )
    assert floor > 0 and 1 / floor_f <= NOWD_WEAK
    assert all(v < 0.1 for v in decayed.values()) and all(math.isfinite(v) for v in integral.values())


@claim(
    "RG-9.reginit",
    reading="regularization toward initialization read as Kumar et al.'s L2 toward the initial parameters: the "
    "target phase's weight-decay term -lambda theta replaced by -lambda (theta - theta_0), same strength lambda, "
    "theta_0 the source-phase initialisation (a D0 draw); in the common-gate mean flow of near-clones (Section 7.1) "
    "with a symmetric reference, 'pull them apart' read as: the transverse separation moves to the "
    "initialisation's instead of contracting to zero, i.e. grows from the checkpoint's",
    by_construction="with a symmetric reference and the gated residual's transverse part zero, y' = -lambda (y - y_r) "
    "is the regulariser's own term, so the path moves toward y_r by definition; the content left is (i) that the "
    "gated residual has no transverse part for balanced symmetric units (derived from the gated moments) and (ii) "
    "that D0 draws give y_r far above a near-clone checkpoint's y0. Not covered: a non-symmetric theta_0 and "
    "amplitude differences between the units, where the gated residual's transverse part need not vanish",
)
def test_regularisation_toward_init_separates(audit):
    path = R.regularised_transverse_path()
    y0, yr = sp.symbols("y0 y_r", positive=True)
    lim_zero = sp.limit(path["to_zero"], R.time, sp.oo)
    lim_ref = sp.limit(path["to_reference"], R.time, sp.oo)
    slope = sp.simplify(sp.diff(path["to_reference"], R.time))  # lambda (y_r - y0) e^{-lambda t}
    grows = sp.simplify(slope / (lam * (yr - y0) * sp.exp(-lam * R.time))) == 1
    # the reference's half-angle against the checkpoint's: D0 initial angles and the Table 1 checkpoint angles
    init_angle = np.asarray(E.angles(E.d0_initialisations(256)))
    ratio = float(np.median(np.tan(init_angle / 2))) / math.tan(1e-3 / 2)
    audit.ours(sp.sstr(path["rate"]), label="y' toward the reference (derived, common gate)")
    audit.ours(f"{sp.sstr(lim_zero)} (L2 to zero); {sp.sstr(lim_ref)} (toward the initialisation)", label="y(oo)")
    audit.ours(
        f"{np.median(init_angle):.3f} rad (median of 256 D0 draws; range {init_angle.min():.3f} .. "
        f"{init_angle.max():.3f}); y_r/y0 = {ratio:.3g} against a checkpoint at angle 1e-3",
        label="initial angle between the units",
    )
    audit.evidence(
        "SymPy, from the gated moments: in the common-gate mean flow of balanced symmetric units the gated residual "
        "has no transverse part, so y' = -lambda (y - y_r) with the regulariser toward a reference and y' = -lambda "
        "y with L2 decay (RG-4.contract's rate). Solved exactly: y(t) = y0 e^{-lambda t} -> 0 (the separation "
        "contracts), against y(t) = y_r + (y0 - y_r) e^{-lambda t} -> y_r, increasing in t whenever y0 < y_r. Every "
        "D0 draw has units at a positive angle (vartheta_1 > 0 > vartheta_2), so y_r > 0, and it exceeds a "
        f"near-clone checkpoint's y0 by a factor of about {ratio:.3g} (angle 1e-3): the regulariser pulls the units "
        "apart by orders of magnitude, to the initialisation's separation, where the disagreement intensity "
        "b delta/(pi eta) has a positive floor. The check fails if the derived rate has another form, either limit "
        "differs, or the path toward the reference does not increase."
    )
    assert sp.simplify(path["rate"] + lam * (sp.Symbol("y", positive=True) - yr)) == 0
    assert lim_zero == 0 and sp.simplify(lim_ref - yr) == 0 and grows
    assert np.all(init_angle > 0) and ratio > 1
