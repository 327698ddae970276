"""The one matplotlib setup of the figure modules: the file-only Agg backend and the colour of the paper's values.

Figure modules import ``plt`` from here, so the backend is chosen once, before pyplot loads.

>>> from numerics.plotting import PAPER, plt
>>> plt.get_backend().lower(), PAPER
('agg', 'black')
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only; the audit never opens a window
import matplotlib.pyplot as plt  # noqa: E402

PAPER = "black"  # the paper's values, overlaid on ours

__all__ = ["PAPER", "plt"]
