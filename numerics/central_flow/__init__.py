"""Float64 numerics of the central-flow paper (arXiv 2611.06718): the three small models (:mod:`.models`)."""
