"""Rare-gates paper (arXiv 2610.11475): the two-unit bias-free ReLU model on the disk.

Modules: :mod:`.kernels` (input law, J, g, q), :mod:`.risk` (population risks, clone
amplitudes, risk levels); further modules by section.
"""
