"""Float64 numerics of the central-flow paper (arXiv 2611.06718).

- :mod:`.models`: the three small models (losses, gradients, exact Hessians) and the
  :class:`~.models.Model` bundles the flows use, with their curvature gradients;
- :mod:`.spectra`: sharpness, the critical directions, the oscillation covariance Sigma and the
  central-flow velocity;
- :mod:`.flows`: gradient descent, gradient flow, the central flow and the hybrid flow;
- :mod:`.laws`: the gradient-flow conservation laws and the breaking matrices;
- :mod:`.experiments`: the paper's settings (as read) and their seeded draws;
- :mod:`.figures`: Figures 1-4 redrawn from the runs.
"""
