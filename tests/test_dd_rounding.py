"""The 64-bit-significand emulation of the double-double replay (:func:`numerics.rare_gates.dd_kernel.replay_rounded`).

The rounding of a dd value to ``bits`` significant bits is compared with exact rational
rounding (fractions), ties included; the replay without rounding equals
:func:`~numerics.rare_gates.simulate.simulate_extended` bit for bit, and the rounded replay
is the same whatever the split of its streams.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from numerics.rare_gates import dd_kernel as DD
from numerics.rare_gates import sim_rng as R
from numerics.rare_gates.simulate import balanced_checkpoint, simulate_extended


def _exact_round(h: float, lo: float, bits: int) -> Fraction:
    """h + lo rounded to ``bits`` significant bits, to nearest with ties to even, in rationals."""
    x = Fraction(h) + Fraction(lo)
    if x == 0:
        return x
    e = math.frexp(h)[1]
    while Fraction(2) ** e > abs(x):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(x):
        e += 1
    q = Fraction(2) ** (e - bits + 1)
    y = x / q
    f = math.floor(y)
    if y - f > Fraction(1, 2) or (y - f == Fraction(1, 2) and f % 2 == 1):
        f += 1
    return f * q


def _cases(n: int, seed: int):
    """Random dd pairs (h, lo, bits), a third of them exact ties at their bit count."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        h = float(rng.standard_normal() * 2.0 ** int(rng.integers(-40, 40)))
        ulp = float(np.spacing(abs(h)))
        bits = int(rng.integers(53, 107))
        lo = float(rng.uniform(-0.5, 0.5) * ulp)
        if rng.random() < 1 / 3 and bits < 100:
            q = 2.0 ** (math.frexp(h)[1] - bits)
            lo = (int(rng.integers(-(2 ** (bits - 53)), 2 ** (bits - 53))) + 0.5) * q if bits > 53 else 0.5 * ulp
        yield h, lo, bits


def test_rounding_equals_exact_rational_rounding():
    cases = list(_cases(4000, 20261202))
    got = [DD._round_bits(h, lo, bits) for h, lo, bits in cases]
    assert all(Fraction(a) + Fraction(b) == _exact_round(h, lo, bits) for (a, b), (h, lo, bits) in zip(got, cases))
    assert all(abs(b) <= np.spacing(abs(a)) / 2 for a, b in got)  # the result is a normalised dd


@pytest.mark.parametrize(
    ("h", "lo", "bits", "expected"),
    [
        (1.0, 2.0**-64, 64, Fraction(1)),  # a tie at the 64th bit of 1: to the even significand, 1
        (1.0, 3 * 2.0**-64, 64, 1 + Fraction(1, 2**62)),  # a tie above an odd last bit: up
        (1.0, -(2.0**-64), 64, 1 - Fraction(1, 2**64)),  # below a power of two the spacing halves: kept
        (1.0, -3 * 2.0**-66, 64, 1 - Fraction(1, 2**64)),  # ... and rounded on that finer grid
        (1.0, -(2.0**-65), 64, Fraction(1)),  # ... where a tie goes to the even 1
        (1.0 + 2.0**-52, 2.0**-53, 53, 1 + Fraction(1, 2**51)),  # bits = 53, a tie above an odd significand: up
    ],
)
def test_rounding_at_ties_and_binade_edges(h, lo, bits, expected):
    a, b = DD._round_bits(h, lo, bits)
    assert Fraction(a) + Fraction(b) == expected


def _streams(n: int, seed: int = 7):
    return np.tile(balanced_checkpoint(1e-5), (n, 1)), R.seed_states(seed, np.arange(n), R.PHASE_TARGET, 0)


def test_unrounded_replay_is_the_extended_simulation():
    theta, states = _streams(3)
    kw = dict(b=4, eta=0.01, lam=0.05, check_every=10)
    plain = DD.replay_rounded(theta, states, n_updates=300, bits=0, threshold=0.4, **kw)
    ext = simulate_extended(delta0=1e-5, horizon=3.0, streams=3, seed=7, **kw)
    assert np.array_equal(plain["hi"], ext.final_theta) and np.array_equal(plain["lo"], ext.final_theta_lo)


def test_rounded_replay_is_split_invariant_and_rounds():
    theta, states = _streams(4)
    kw = dict(b=4, eta=0.01, lam=0.05, n_updates=300, bits=64, threshold=0.4)
    whole = DD.replay_rounded(theta, states, **kw)
    parts = [DD.replay_rounded(theta[i : i + 2], states[i : i + 2], **kw) for i in (0, 2)]
    assert np.array_equal(whole["hi"], np.vstack([p["hi"] for p in parts]))
    assert np.array_equal(whole["lo"], np.vstack([p["lo"] for p in parts]))
    back = DD.round_to_bits(whole["hi"], whole["lo"], 64)
    assert np.array_equal(back[0], whole["hi"]) and np.array_equal(back[1], whole["lo"])  # already 64-bit values


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"bits": 52}, "bits"),
        ({"bits": 107}, "bits"),
        ({"eta": 0.0}, "eta"),
        ({"b": 0}, "b"),
        ({"threshold": -1}, "threshold"),
    ],
)
def test_replay_rejects_bad_input(kw, name):
    theta, states = _streams(1)
    args = dict(b=4, eta=0.01, lam=0.05, n_updates=1, bits=64, threshold=0.4) | kw
    with pytest.raises(ValueError, match=name):
        DD.replay_rounded(theta, states, **args)
