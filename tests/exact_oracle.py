"""Exact rational readings of mpmath numbers: the oracle the enclosure tests compare against."""

from fractions import Fraction


def exact(x) -> Fraction:
    """An mpf (or int, Fraction) as an exact Fraction, from its sign and unsigned mantissa.

    Not ``mpmath.mpf(x)``: that would round to the ambient precision.
    """
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    sign, man, exp, _ = x._mpf_
    v = Fraction(man) * Fraction(2) ** exp
    return -v if sign else v


def floor_log10(v: Fraction) -> int:
    """The k with 10^k <= |v| < 10^(k+1), by exact comparison."""
    v = abs(v)
    k = len(str(v.numerator)) - len(str(v.denominator))
    while Fraction(10) ** k > v:
        k -= 1
    while Fraction(10) ** (k + 1) <= v:
        k += 1
    return k
