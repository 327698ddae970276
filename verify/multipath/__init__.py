"""Checks of the multi-pathway paper (arXiv 2606.05219), one module per section."""
