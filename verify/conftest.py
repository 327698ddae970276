"""The audit's property checks draw their examples deterministically.

A report must give the same numbers on every run with the same code, so the Hypothesis
checks under ``verify/`` use the derandomized ``ci`` profile (fixed examples) unless
``HYPOTHESIS_PROFILE`` names another one on purpose. ``derandomize`` (or ``@seed``) fixes the
seed; the examples also stay the same however the audit is split (one file, ``--claim``, the
whole audit) because the root ``conftest.py`` pins Hypothesis's local-constant pool empty.
"""

import os

from hypothesis import settings

if "HYPOTHESIS_PROFILE" not in os.environ:
    settings.load_profile("ci")
