"""Checks of the central-flow paper (arXiv 2611.06718), one module per part: laws, scalar, matrix, ReLU."""
