"""Calibration of the audit's instruments (see :mod:`verify.instruments`): each on cases with known answers.

A failure here fails the audit: every verdict that uses the instrument is suspect.
"""

import pytest

from verify.instruments import INSTRUMENTS


@pytest.mark.parametrize(
    "inst", [pytest.param(i, marks=pytest.mark.instrument(i.name, i.reference), id=i.name) for i in INSTRUMENTS]
)
def test_instrument(inst):
    failures = inst.calibrate()
    assert not failures, f"{inst.name} (used for {inst.used_for}) miscalibrated against {inst.reference}: " + "; ".join(
        failures
    )
