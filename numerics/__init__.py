"""Numerics of the audit: mpmath constants with enclosures, float64 model code, numba kernels."""
