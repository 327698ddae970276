"""Meta-checks of the audit itself: every registered claim has a check or a reason.

The check modules under verify/ are imported and their test functions' ``claim``
marks read, independently of which tests this run selected.
"""

import importlib
import importlib.util
import pkgutil

import pytest

import verify
from verify.registry import load_registry


def _claim_marks(kind=None):
    """{claim id: [check names]}; ``kind`` 'paper' keeps discrepancy checks only, 'ours' the others."""
    found = {}
    for info in pkgutil.walk_packages(verify.__path__, prefix="verify."):
        leaf = info.name.rsplit(".", 1)[-1]
        if not leaf.startswith("test_"):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if not (name.startswith("test_") and callable(obj)):
                continue
            for mark in getattr(obj, "pytestmark", []):
                is_paper_side = bool(mark.kwargs.get("discrepancy"))
                if mark.name == "claim" and (kind is None or is_paper_side == (kind == "paper")):
                    found.setdefault(mark.args[0], []).append(f"{info.name}.{name}")
    return found


def test_every_claim_has_a_check_or_a_reason():
    registry = load_registry()
    checks = _claim_marks()
    missing = [cid for cid, c in registry.items() if not c.unverifiable and cid not in checks]
    assert not missing, f"registered claims with neither a check nor an 'unverifiable' reason: {missing}"


def test_every_check_names_a_registered_claim():
    registry = load_registry()
    unknown = {cid: where for cid, where in _claim_marks().items() if cid not in registry}
    assert not unknown, f"checks naming unregistered claims: {unknown}"


def test_unverifiable_claims_have_no_check():
    registry = load_registry()
    checks = _claim_marks()
    both = [cid for cid, c in registry.items() if c.unverifiable and cid in checks]
    assert not both, f"claims marked unverifiable that also have checks: {both}"


def test_every_discrepancy_has_a_separate_check_of_our_side():
    """A discrepancy's paper side may fail only as PaperClaimFails; our side is its own passing check."""
    ours = _claim_marks("ours")
    lonely = {cid: where for cid, where in _claim_marks("paper").items() if cid not in ours}
    assert not lonely, f"discrepancy checks without a check of our own side: {lonely}"


@pytest.mark.parametrize("paper", ["rare_gates", "multipath", "central_flow"])
def test_paper_has_claims(paper):
    assert any(c.paper == paper for c in load_registry().values())


def _claim_modules() -> dict[str, set[str]]:
    """{claim id: check modules}, e.g. {'MP-F.72': {'verify.multipath.test_wcr'}}."""
    return {cid: {where.rsplit(".", 1)[0] for where in checks} for cid, checks in _claim_marks().items()}


def test_claims_files_match_check_modules_one_to_one():
    """verify/claims/<paper>/<name>.toml holds the claims checked by verify/<paper>/test_<name>.py, and only those."""
    registry = load_registry()
    files = {(c.paper, c.source.removesuffix(".toml")) for c in registry.values()}
    no_module = sorted(f"{p}/{n}.toml" for p, n in files if importlib.util.find_spec(f"verify.{p}.test_{n}") is None)
    assert not no_module, f"claims files without a check module verify/<paper>/test_<name>.py: {no_module}"
    misplaced = {
        cid: (f"{c.paper}/{c.source}", sorted(mods))
        for cid, mods in _claim_modules().items()
        if (c := registry[cid]) and mods != {f"verify.{c.paper}.test_{c.source.removesuffix('.toml')}"}
    }
    assert not misplaced, f"claims checked outside the module their claims file names: {misplaced}"
