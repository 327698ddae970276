"""The audit audits itself: a catalogue of realistic planted bugs and a runner that checks the audit catches them.

Each mutant in ``catalogue.toml`` is one plausible bug (a kernel's Jacobian, a sign in a
gradient, a batch sum for a mean, a gate convention, an interval's rounding direction, a
verdict mapping, a statistics helper, a wrong constant or step count, a seed-independent
stream ...), applied alone to a scratch copy of the repository; the audit checks named for
it must then fail or change a claim's verdict against a baseline run of the unmutated tree
(:mod:`verify.mutation.runner`). ``python -m verify.mutation list|check|run`` is the command
line (:mod:`verify.mutation.cli`); ``check`` keeps the catalogue current and runs in CI
through ``tests/test_mutation.py``.

Why a small runner rather than mutmut or cosmic-ray. Both generate mutants from syntactic
operators (``+`` to ``-``, a constant plus one, ``<`` to ``<=``, strings) over every line
and run one test command per mutant, judging by its exit status alone. Here that costs too
much and says too little: one audit run is a minute or more (SymPy derivations, certified
mpmath enclosures, numba kernels compiled per file and cached by path and mtime, simulation
cells from a result store), so thousands of operator mutants over three packages would take
days, most of them equivalent (docstrings, error messages, validation branches) or caught at
import. mutmut 3 routes every mutated function through a trampoline in a ``mutants/`` copy,
which numba cannot compile, and mutmut 2 and cosmic-ray edit or clone the tree their own way,
so neither keeps the numba cache or the sweep store warm between mutants. And an exit status
misses half of what the audit says: a discrepancy is a passing strict xfail and a
reconstructed reading a passing check, so a bug that turns ``confirmed`` into
``discrepancy`` or ``inconclusive`` exits 0; the runner therefore also compares every
claim's verdict with the baseline. The runner is a few hundred lines: a curated,
reviewed catalogue of bugs someone could really write (each with the narrow checks that
should catch it, so a full run fits in half an hour on two cores), exact snippet
replacement, fixed per-slot work directories, a shared sweep store keyed by code version
and cached baselines.
"""

from .catalogue import AREAS, CatalogueError, Mutant, StaleMutant, load_catalogue, parse_catalogue, problems

__all__ = ["AREAS", "CatalogueError", "Mutant", "StaleMutant", "load_catalogue", "parse_catalogue", "problems"]
