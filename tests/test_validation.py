"""numerics.validation: every check returns the value in a plain type or raises a ValueError naming
the parameter, the allowed range and the value given (bools, strings and NaN refused)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from numerics import validation as V


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3)])
def test_integer_accepts_integers(value):
    out = V.integer(value, "n", 1, 5)
    assert out == 3 and type(out) is int


@pytest.mark.parametrize(
    "value, message",
    [
        (True, r"n must be an integer >= 1; got True"),
        (np.bool_(True), r"n must be an integer >= 1; got"),
        (2.0, r"n must be an integer >= 1; got 2.0"),
        ("2", r"n must be an integer >= 1; got '2'"),
        (0, r"n must be an integer >= 1; got 0"),
    ],
)
def test_integer_refusals(value, message):
    with pytest.raises(ValueError, match=message):
        V.integer(value, "n", 1)


def test_integer_upper_end():
    assert V.integer(5, "k", 0, 5) == 5
    with pytest.raises(ValueError, match=r"k must be an integer in \[0, 5\]; got 6"):
        V.integer(6, "k", 0, 5)


@pytest.mark.parametrize("value", [0.5, 1, np.float32(0.5), Fraction(1, 2)])
def test_real_accepts_real_numbers(value):
    out = V.real(value, "x", 0.0, 1.0)
    assert out == float(value) and type(out) is float


@pytest.mark.parametrize(
    "value, kwargs, message",
    [
        (math.nan, {}, r"x must be a finite real number; got nan"),
        (math.inf, {"lo": 0.0}, r"x must be a finite real number >= 0; got inf"),
        (0.0, {"lo": 0.0, "lo_open": True}, r"x must be a finite real number > 0; got 0.0"),
        (1.0, {"lo": 0.0, "hi": 1.0, "hi_open": True}, r"x must be a finite real number in \[0, 1\); got 1.0"),
        (4.0, {"hi": math.pi, "hi_text": "pi"}, r"x must be a finite real number <= pi; got 4.0"),
        (False, {}, r"x must be a finite real number; got False"),
        ("0.1", {}, r"x must be a finite real number; got '0.1'"),
        (None, {}, r"x must be a finite real number; got None"),
    ],
)
def test_real_refusals(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        V.real(value, "x", **kwargs)


def test_positive_probability_and_level():
    assert V.positive(2, "eta") == 2.0
    assert V.probability(0, "p") == 0.0 and V.probability(1, "p") == 1.0
    assert V.level(0.05) == 0.05
    with pytest.raises(ValueError, match=r"p must be a finite real number in \[0, 1\]; got 1.5"):
        V.probability(1.5, "p")
    with pytest.raises(ValueError, match=r"alpha must be a finite real number in \(0, 1\); got 1"):
        V.level(1)
    with pytest.raises(ValueError, match=r"power must be a finite real number in \(0, 1\); got 0.0"):
        V.level(0.0, "power")


def test_successes():
    assert V.successes(np.int64(2), 5) == (2, 5)
    with pytest.raises(ValueError, match=r"k2 must be an integer in \[0, 5\]; got 6"):
        V.successes(6, 5, "k2", "n2")
    with pytest.raises(ValueError, match=r"n2 must be an integer >= 1; got 0"):
        V.successes(0, 0, "k2", "n2")


def test_choice():
    assert V.choice("fisher", "test", ("newcombe", "fisher")) == "fisher"
    with pytest.raises(ValueError, match=r"test must be one of 'newcombe', 'fisher'; got 'wald'"):
        V.choice("wald", "test", ("newcombe", "fisher"))
    with pytest.raises(ValueError, match=r"mode must be one of 1, 2; got True"):
        V.choice(True, "mode", (1, 2))  # a bool is not the integer 1
    with pytest.raises(ValueError, match=r"task must be one of 'source', 'target'; got array"):
        V.choice(np.array(["source", "target"]), "task", ("source", "target"))


def test_reals_values_and_shapes():
    out = V.reals([0, 1.5], "t", None, 0.0, math.pi, hi_text="pi")
    assert out.dtype == np.float64 and out.flags.c_contiguous and out.tolist() == [0.0, 1.5]
    assert V.reals(2.0, "t").shape == ()  # a number stays 0-d
    assert V.reals(np.arange(6), "theta", (6,)).shape == (6,)


@pytest.mark.parametrize(
    "value, args, message",
    [
        ([0.5, 4.0], (None, 0.0, math.pi), r"t must hold finite real numbers in \[0, pi\]; got \[0.5, 4.0\]"),
        (-1e-300, (None, 0.0, math.pi), r"t must hold finite real numbers in \[0, pi\]"),
        ([0.1, math.nan], (None, 0.0, math.pi), r"t must hold finite real numbers in \[0, pi\]"),
        ([True, False], (), r"t must hold finite real numbers; got \[True, False\]"),
        ("0.5", (), r"t must hold finite real numbers; got '0.5'"),
        ([[1.0], [1.0, 2.0]], (), r"t must hold finite real numbers"),  # ragged
        (np.zeros(5), ((6,),), r"t must be an array of shape \(6,\) = \(a, b\); got shape \(5,\)"),
        (np.full(6, math.inf), ((6,),), r"t must hold finite real numbers; got"),
    ],
)
def test_reals_refusals(value, args, message):
    with pytest.raises(ValueError, match=message):
        V.reals(value, "t", *args, what=" = (a, b)", hi_text="pi" if len(args) == 3 else None)
