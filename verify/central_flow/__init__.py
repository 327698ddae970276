"""Checks of the central-flow paper (arXiv 2611.06718), one module per part: laws, scalar, matrix, ReLU."""

#: the EoS setting c = eta lambda*/2 = 1.002 (scalar 1.0005) was picked from the scan because it sustains EoS (just
#: above c = 1 no stable minimum exists, so GD is forced to oscillate at the edge): the reading is fitted, and the
#: scan's other settings are its alternatives (quick scan, eta = 0.9, start scale 0.3, one draw per cell; EoS
#: fractions scalar / mf / relu, values reported under "scan" in CF-1.eos-*). The scalar's own c = 1.0005 is not in
#: the quick grid (it uses 1.002 for every model); the full grid has it.
EOS_FITTED = {
    "c = 0.95 (a stable minimum exists)": "GD reaches the edge and converges below it: EoS fraction 0.08 / 0.075 / "
    "0.078 (scalar / mf / relu), EoS not sustained, nothing at the edge to check",
    "c = 1.05": "a period-two orbit whose iterate sharpness swings beyond 10%: EoS fraction 0.00 / 0.003 / 0.00, not "
    "sustained under the 10% reading",
    "eta = 0.5, c = 1.002": "the same as eta = 0.9 (0.84 / 0.86 / 0.85; eta only changes the units by homogeneity)",
}
