"""The claims registry: every checkable statement of the audited papers.

Claims live in TOML files under ``verify/claims/<paper>/``; each ``[[claim]]`` table
has

- ``id``: unique, e.g. ``"RG-14.J"`` (paper prefix, section, tag);
- ``paper``: the paper's short name (``rare_gates``, ``central_flow``, ``multipath``);
- ``where``: section, equation, table, figure or appendix;
- ``statement``: the claim in one line;
- ``paper_value``: the value as the paper quotes it (a string, the paper's digits);
- ``kind``: one of :data:`KINDS`;
- ``unverifiable`` (optional): why the claim cannot be checked; such a claim has no
  check and gets the verdict ``unverifiable``.

>>> reg = load_registry()
>>> reg["RG-16.Rcol"].paper
'rare_gates'
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

KINDS = ("closed-form", "constant", "theorem", "simulation", "qualitative")
PAPERS = {
    "rare_gates": "Rare Gate Disagreements Can Limit Plasticity (arXiv 2610.11475)",
    "central_flow": "Symmetry Breaking at the Edge of Stability via Central Flow Analysis (arXiv 2611.06718)",
    "multipath": (
        "Gradient Descent with Large Step Size Restores Symmetry in Deep Linear Networks "
        "with Multi-Pathway (arXiv 2606.05219)"
    ),
}
_REQUIRED = ("id", "paper", "where", "statement", "paper_value", "kind")


class RegistryError(ValueError):
    """A claims file is malformed (missing field, unknown kind or paper, duplicate id)."""


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    where: str
    statement: str
    paper_value: str
    kind: str
    unverifiable: str | None = None
    source: str = ""


def claims_dir() -> Path:
    """The directory holding the per-paper claim files."""
    return Path(str(resources.files("verify") / "claims"))


def _parse(path: Path) -> list[Claim]:
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    out = []
    for i, raw in enumerate(data.get("claim", [])):
        missing = [k for k in _REQUIRED if not str(raw.get(k, "")).strip()]
        if missing:
            raise RegistryError(f"{path.name}: claim #{i + 1} lacks {', '.join(missing)}")
        not_text = [k for k in (*_REQUIRED, "unverifiable") if k in raw and not isinstance(raw[k], str)]
        if not_text:
            raise RegistryError(
                f"{path.name}: claim {raw['id']}: {', '.join(not_text)} must be strings "
                "(quote numbers to keep the paper's digits)"
            )
        unknown = set(raw) - set(_REQUIRED) - {"unverifiable"}
        if unknown:
            raise RegistryError(f"{path.name}: claim {raw['id']} has unknown fields {sorted(unknown)}")
        if raw["kind"] not in KINDS:
            raise RegistryError(f"{path.name}: claim {raw['id']} has kind {raw['kind']!r}; allowed: {KINDS}")
        if raw["paper"] not in PAPERS:
            raise RegistryError(f"{path.name}: claim {raw['id']} has paper {raw['paper']!r}; allowed: {sorted(PAPERS)}")
        out.append(Claim(source=path.name, **{k: raw[k] for k in raw}))
    return out


def load_registry(directory: Path | None = None) -> dict[str, Claim]:
    """Read every ``*.toml`` under ``directory`` (default: the packaged claims) into an id-keyed dict.

    ``coverage.toml`` files are the papers' coverage maps (:mod:`verify.coverage`), not claims.
    """
    directory = claims_dir() if directory is None else Path(directory)
    if not directory.is_dir():
        raise RegistryError(f"claims directory {directory} does not exist")
    registry: dict[str, Claim] = {}
    for path in sorted(directory.rglob("*.toml")):
        if path.name == "coverage.toml":
            continue
        for c in _parse(path):
            if c.id in registry:
                raise RegistryError(f"duplicate claim id {c.id} in {path.name} and {registry[c.id].source}")
            registry[c.id] = c
    return registry


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def paper_numbers(claim_id: str, registry: dict[str, Claim] | None = None) -> list[str]:
    """The numbers quoted in claim ``claim_id``'s ``paper_value``, in order, as printed.

    Checks take the paper's numbers from here rather than typing them again, so the registry
    is their one source. The text keeps the paper's digits ('0.070', not 0.07).

    >>> paper_numbers("MP-F.table")[:3]
    ['3.196', '3.661', '3.979']
    """
    reg = registry if registry is not None else load_registry()
    if claim_id not in reg:
        raise KeyError(f"claim_id: no registered claim {claim_id!r}")
    return _NUMBER.findall(reg[claim_id].paper_value)
