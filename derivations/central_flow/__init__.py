"""Central-flow paper (arXiv 2611.06718): conservation laws and their breaking at the edge of stability.

Modules: :mod:`.laws` (invariances, generators, gradient-flow conservation laws, their
number via the generated Lie algebra, the central-flow drift of a law, H = H_p + H_c),
:mod:`.scalar` (the scalar two-layer model, Appendix B), :mod:`.matrix` (two-layer
matrix factorisation and the breaking matrix, Appendix C), :mod:`.relu` (two-layer ReLU
inside a fixed activation region, Appendix D).

Several displayed equations of the paper were lost in the text (Eq. (18), the
definitions of N and N', of M, of the ReLU breaking matrix); each module states the
reading it derives and uses.
"""
