"""Root pytest configuration: the audit plugin and the hypothesis profiles.

Hypothesis profiles: ``dev`` (default), ``ci`` (derandomized, no deadline; chosen
automatically when ``CI`` is set) and ``thorough``; ``HYPOTHESIS_PROFILE`` overrides.
"""

import os

from hypothesis import HealthCheck, settings

os.environ.setdefault("MPLBACKEND", "Agg")  # figures are written to files; no display

pytest_plugins = ("verify.plugin",)

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "ci", max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
