"""Meta-checks of the coverage map: every labelled item of each paper is in its map.

The map (``verify/claims/<paper>/coverage.toml``) must hold every item a claim's
``where`` names and every item the paper text states or cites; each map item must be
found in the text or named by a claim, carry well-formed fields, and not be excluded
while claims cover it. See :mod:`verify.coverage`.
"""

import pytest

from verify.coverage import (
    CoverageError,
    coverage,
    find_refs,
    format_label,
    label_ref,
    load_map,
    paper_files,
    papers_dir,
    text_items,
)
from verify.registry import PAPERS, load_registry


def _describe(ref):
    """An item for a failure message; a numbered section may be a section or an appendix."""
    kind, number = ref
    return f"Section/Appendix {number}" if kind == "section" and number[:1].isdigit() else format_label(ref)


def _map_refs(paper):
    return {item.ref: item.label for item in load_map(paper)}


def _paper_text(paper):
    files = paper_files()
    if paper not in files:
        pytest.skip(f"paper text of {paper} not found under {papers_dir()} (the shared papers are absent)")
    return files[paper].read_text(encoding="utf-8")


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_map_is_well_formed_and_consistent_with_the_registry(paper):
    """Loads (labels canonical and unique) and no exclusion is stale, no listed claim unknown."""
    try:
        rows = coverage(paper, load_registry())
    except CoverageError as exc:
        pytest.fail(str(exc))
    assert rows, f"the coverage map of {paper} is empty"


def test_every_item_a_claim_names_is_in_the_map():
    """Each Section/Appendix/Theorem/Lemma/.../Figure/Table/Eq. a claim's where names is a map item."""
    maps = {paper: _map_refs(paper) for paper in PAPERS}
    missing = []
    for claim in load_registry().values():
        for ref in find_refs(claim.where):
            if ref not in maps[claim.paper]:
                missing.append(f"{claim.id} ({claim.paper}): {_describe(ref)} (where: {claim.where!r})")
    assert not missing, "items named by claims but missing from the coverage map:\n  " + "\n  ".join(missing)


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_labelled_item_of_the_text_is_in_the_map(paper):
    """Each item the paper text states (heading, statement, caption, tag) or cites is a map item."""
    text = _paper_text(paper)
    refs = _map_refs(paper)
    missing = [
        f"{_describe(item.ref)} ({'stated' if item.defined else 'cited only'})"
        for item in text_items(text)
        if item.ref not in refs
    ]
    assert not missing, f"labelled items of the {paper} text missing from its coverage map: {missing}"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_every_map_item_is_in_the_text_or_named_by_a_claim(paper):
    """No map item is a typo: the text states or cites it, or a claim names it."""
    known = {item.ref for item in text_items(_paper_text(paper))}
    known |= {ref for c in load_registry().values() if c.paper == paper for ref in find_refs(c.where)}
    unknown = [label for ref, label in _map_refs(paper).items() if ref not in known]
    assert not unknown, f"{paper} coverage map items found neither in the text nor in a claim: {unknown}"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_map_labels_round_trip(paper):
    for ref, label in _map_refs(paper).items():
        assert label_ref(label) == ref
