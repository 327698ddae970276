"""Hypothesis examples depend on the property and its seed, not on which modules are loaded.

The root ``conftest.py`` pins Hypothesis's local-constant pool empty
(``pin_hypothesis_local_constants``: unpinned, the literals of every loaded project module
feed about 5% of the draws, so a partial and a full audit run drew different examples).
The pin reaches into ``hypothesis.internal``; these tests fail if a Hypothesis upgrade
moves the pool where the pin no longer reaches it.
"""

import importlib
import sys

from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import Constants, constants_from_module, is_local_module_file

MARKERS = list(range(271_828, 271_828 + 200))  # distinctive integers, inside the drawn range below
N_EXAMPLES = 400  # each integer draw takes a constant with p = 0.05: ~20 constant draws, ~10 from the local pool


def _draws() -> list[int]:
    """The integers a fixed-seed property draws (generation only: no database, no shrinking)."""
    drawn: list[int] = []

    @seed(20240611)
    @settings(max_examples=N_EXAMPLES, database=None, deadline=None, phases=[Phase.generate])
    @given(st.integers(0, 10**6))
    def prop(n):
        drawn.append(n)

    prop()
    return drawn


def _clear_constants_cache() -> None:
    providers.CONSTANTS_CACHE.cache.clear()  # holds each draw's permitted constants, built from the pool


def test_local_constant_pool_is_pinned_empty():
    pool = providers._get_local_constants()
    assert isinstance(pool, Constants)
    assert [len(pool.set_for_type(t)) for t in ("integer", "float", "string", "bytes")] == [0, 0, 0, 0]


def test_loading_a_local_module_leaves_the_examples_unchanged(tmp_path, monkeypatch):
    before = _draws()
    source = tmp_path / "hypo_marker_constants.py"  # a local, non-test module: unpinned, its literals join the pool
    source.write_text("MARKERS = (" + ", ".join(map(str, MARKERS)) + ",)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("hypo_marker_constants")
    try:
        # the setup is one the unpinned pool would see: a local module whose literals are the markers
        assert is_local_module_file(str(source))
        assert set(MARKERS) <= set(constants_from_module(module).integers)
        after = _draws()
    finally:
        del sys.modules["hypo_marker_constants"]
    assert after == before
    assert not set(after) & set(MARKERS)


def test_draws_take_local_constants_from_the_pinned_function(monkeypatch):
    """The control: a pool given through ``_get_local_constants`` does reach the draws.

    If an upgrade builds the pool elsewhere, this fails (the markers no longer appear), and
    the pin in conftest.py no longer keeps loaded modules out of the examples.
    """
    pinned = _draws()
    monkeypatch.setattr(providers, "_get_local_constants", lambda: Constants(integers=set(MARKERS)))
    _clear_constants_cache()
    try:
        seeded = _draws()
    finally:
        _clear_constants_cache()  # no entry built from the marker pool may outlive this test
    assert set(seeded) & set(MARKERS), "Hypothesis did not draw from the pool _get_local_constants returns"
    assert seeded != pinned
