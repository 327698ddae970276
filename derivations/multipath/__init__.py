"""Multi-pathway paper (arXiv 2606.05219): "Gradient Descent with Large Step Size Restores
Symmetry in Deep Linear Networks with Multi-Pathway".

Modules: :mod:`.wcr` (Section 6 and Appendix F: the deep-chain GD map, its
normalisation, Lemmas F.1-F.2, the boundary system (79), the root equation (80), the
worst-case-return constant gamma_WCR(L) (81), the t-form (83) and the asymptotics).
"""
