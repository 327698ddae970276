"""Multi-pathway paper (arXiv 2606.05219): mpmath constants with certified enclosures.

Modules: :mod:`.wcr` (the worst-case-return constant gamma_WCR(L) of Section 6 and
Appendix F, and the independent knife-edge check by iterating the deep-chain map).
"""
