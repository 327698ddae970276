"""Root pytest configuration: the audit plugin and the hypothesis profiles.

Hypothesis profiles: ``dev`` (default), ``ci`` (derandomized, no deadline; chosen
automatically when ``CI`` is set) and ``thorough``; ``HYPOTHESIS_PROFILE`` overrides.

The examples a Hypothesis property draws depend on the property and its seed only, not on
which other modules the run happened to import (:func:`pin_hypothesis_local_constants`).
"""

import os

from hypothesis import HealthCheck, settings
from hypothesis.internal.conjecture import providers as hypothesis_providers
from hypothesis.internal.constants_ast import Constants

os.environ.setdefault("MPLBACKEND", "Agg")  # figures are written to files; no display

pytest_plugins = ("verify.plugin",)

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile(
    "ci", max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

NO_LOCAL_CONSTANTS = Constants()  # the pinned pool: empty, never added to


def _no_local_constants() -> Constants:
    """Hypothesis's local-constant pool, pinned empty (see :func:`pin_hypothesis_local_constants`)."""
    return NO_LOCAL_CONSTANTS


def pin_hypothesis_local_constants() -> None:
    """Make a property's examples independent of which modules the run has imported.

    Why: Hypothesis (6.131 on; pinned 6.170.17) draws about 5% of its integers, floats and
    strings from a pool of constants: its own fixed edge cases (``GLOBAL_CONSTANTS``) and the
    literals of every *local* module (not stdlib, not site-packages, not a test file) found
    in ``sys.modules`` when a test case starts
    (``hypothesis.internal.conjecture.providers._get_local_constants``, which
    ``HypothesisProvider._local_constants`` calls once per test case). Which project modules
    are loaded depends on how the run is split (one file, one directory, ``--claim``, the
    whole audit, and the checks that ran before), so the pool did too; the pool decides
    which constant is drawn and how much of the seeded random stream picking it consumes,
    so the same derandomized (or ``@seed``-ed) property drew different examples in a
    partial run and in a full one (MP-E.6's recorded range: three different values from
    ``test_leaf.py`` alone, ``verify/multipath`` and ``verify``). Hypothesis 6.170.17
    offers no setting or environment variable to turn the pool off.

    What: the module-level function is replaced by one returning an empty pool, and the
    cache of permitted constants (``CONSTANTS_CACHE``, keyed by the draw's constraints,
    holding the global and local candidates) is emptied so no entry built from an earlier
    pool survives. This runs when pytest imports this file, before any test is collected.

    Why it is safe: only the project-literal pool goes; Hypothesis's own edge-case
    constants are still mixed in, generation, shrinking, ``derandomize`` and ``@seed`` are
    untouched, and no ``.hypothesis/constants`` cache is read or written any more. It
    relies on two internals: the name ``_get_local_constants`` being looked up in
    ``providers`` at call time, and ``providers.CONSTANTS_CACHE``. A missing one is an
    error here; tests/test_hypothesis_determinism.py fails if an upgrade routes draws
    around the pinned function (the pool would leak back in silently otherwise).
    """
    missing = [name for name in ("_get_local_constants", "CONSTANTS_CACHE") if not hasattr(hypothesis_providers, name)]
    if missing:
        raise RuntimeError(
            "hypothesis.internal.conjecture.providers no longer has "
            + ", ".join(missing)
            + ": the local-constant pool cannot be pinned, so property examples would depend on which modules a "
            "run imports; find where this Hypothesis version builds the pool and re-point conftest.py"
        )
    hypothesis_providers._get_local_constants = _no_local_constants
    hypothesis_providers.CONSTANTS_CACHE.cache.clear()


pin_hypothesis_local_constants()
