"""Helpers shared by the multipath check modules (not checks themselves): the paper's text and the GF leaf's
zero-loss point."""

from __future__ import annotations

import mpmath

from numerics.multipath import sharpness as ns
from verify.audit import paper_text as audit_paper_text


def paper_text() -> str:
    """The multipath paper's text; the calling check is skipped when the shared papers are absent."""
    return audit_paper_text("multipath")


def leaf_point(alphas, L: int) -> tuple[list[float], float]:
    """The zero-loss point of the GF leaf through the initialisation (11) (Propositions E.3-E.4): the pathways'
    singular values (float) and the sharpness there, from the leaf coordinates ``z_h = q_h - mean(q)``,
    ``q_h = alpha_h^((2-L)/L)``, computed at 40 digits (:func:`numerics.multipath.sharpness.leaf_sharpness`)."""
    with mpmath.workdps(40):
        q = [mpmath.mpf(a) ** (mpmath.mpf(2 - L) / L) for a in alphas]
        mq = mpmath.fsum(q) / len(q)
        z = [v - mq for v in q]
    m, lam = ns.leaf_sharpness(z, L, 1, 30)
    return [float((m + v) ** (-mpmath.mpf(L) / (L - 2))) for v in z], float(lam)
