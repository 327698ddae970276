"""Rare-gates paper (arXiv 2610.11475): float64 model code and mpmath constants."""
