"""Coverage map: every labelled item of each paper, with the claims that cover it.

Usage::

    python -m verify coverage [--paper NAME] [--format text|json]

For each paper (or the one named by ``--paper``) the command lists every labelled item
of the paper, in the order of the map: numbered sections, subsections and appendices,
theorems, lemmas, propositions, corollaries, definitions, assumptions, hypotheses,
numbered remarks, figures, tables and numbered equations. Each item shows the
registered claims that cover it, or the reason it holds no checkable claim; an item
with neither is *uncovered* (a checkable statement that waits for a claim). The text
format ends each paper with its counts of covered, excluded and uncovered items; the
JSON format is ``{"papers": {NAME: [{"label": ..., "claims": [...], "excluded": ..., "note": ...}]}}``
with ``excluded`` null unless a reason is given and ``note`` null unless the map gives one.

The map is data, one file per paper: ``verify/claims/<paper>/coverage.toml``, one
``[[item]]`` table per labelled item with ``label`` (``"Theorem 1"``, ``"Appendix B.2"``,
``"Eq. (34)"``), optionally ``excluded`` (why no checkable claim covers it) and
``claims`` (claim ids to add where a claim's ``where`` cannot name the item). The claims
covering an item are otherwise computed: a claim covers every item its ``where`` field
places it in (see :func:`where_refs`: ``Appendix B.2, proof of Proposition B.4, Eq. (34)``
places it in all three; ``after Eq. (7)`` or ``cited by Figure 1`` only name landmarks),
and a section also collects the claims of its numbered subsections. ``Section N`` and
``Appendix N`` name the same item.

Exit status: 0; 1 when a map file is malformed; 2 on bad input (one line on stderr).

>>> find_refs("Appendix B.2, proof of Proposition B.4, Eqs. (33)-(34)")
[('section', 'B.2'), ('proposition', 'B.4'), ('equation', '33'), ('equation', '34')]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from numerics.cli_support import PlainHelpFormatter, closed_pipe
from verify.registry import PAPERS, Claim, claims_dir, load_registry

MAP_FILE = "coverage.toml"
FORMATS = ("text", "json")

Ref = tuple[str, str]
"""An item's identity: (kind, number), e.g. ``("lemma", "E.5")`` or ``("section", "13")``."""

# ---------------------------------------------------------------- label vocabulary

# kind -> regular expression of the words that name it (singular, plural, abbreviations)
_KIND_WORDS: dict[str, str] = {
    "section": r"Sections?|Secs?\.|§§?|Appendix|Appendices|Apps?\.",
    "theorem": r"Theorems?|Thms?\.",
    "lemma": r"Lemmas?|Lemmata",
    "proposition": r"Propositions?|Props?\.",
    "corollary": r"Corollary|Corollaries|Cors?\.",
    "definition": r"Definitions?|Defs?\.",
    "assumption": r"Assumptions?",
    "hypothesis": r"Hypothesis|Hypotheses",
    "remark": r"Remarks?",
    "figure": r"Figures?|Figs?\.",
    "table": r"Tables?|Tabs?\.",
    "equation": r"Equations?|Eqs?\.|Eqns?\.?",
}
_DISPLAY = {k: k.capitalize() for k in _KIND_WORDS}
STATEMENT_KINDS = ("theorem", "lemma", "proposition", "corollary", "definition", "assumption", "hypothesis", "remark")
_NUMBER = {
    "section": r"\d+(?:\.\d+)*|[A-Z](?:\.\d+)*(?![A-Za-z])",
    "statement": r"[A-Z]?\d+(?:\.\d+)*|[A-Z](?:\.\d+)+",
    # a figure number may carry panel letters: 3a, 3(a), 1b-d
    "figure": r"\d+(?:\(?[a-z]\)?(?![a-z])(?:[–-]\(?[a-z]\)?(?![a-z]))?)?",
    "table": r"\d+",
    # an equation number, bare or in parentheses, possibly as a link: (34), 1, ([19](url))
    "equation": r"\(\s*\[?\d+[a-z]?\]?(?:\(https?://[^()\s]*\))?\s*\)|\d+[a-z]?(?!\d|\.\d)",
}
_SEP_RANGE = r"\s*(?:–|—|-|\bto\b)\s*"
_SEP_LIST = r"\s*(?:,\s*(?:and\s+|or\s+)?|\band\b|\bor\b|&)\s*"
_LINK = r"(?:\(https?://[^()\s]*\))"
_SINGULAR = {
    "Section",
    "Sec.",
    "§",
    "Appendix",
    "App.",
    "Theorem",
    "Thm.",
    "Lemma",
    "Proposition",
    "Prop.",
    "Corollary",
    "Cor.",
    "Definition",
    "Def.",
    "Assumption",
    "Hypothesis",
    "Remark",
    "Figure",
    "Fig.",
    "Table",
    "Tab.",
    "Equation",
    "Eq.",
    "Eqn.",
    "Eqn",
}


def _number_class(kind: str) -> str:
    if kind in ("section", "figure", "table", "equation"):
        return kind
    return "statement"


def _linked_number(kind: str) -> str:
    """A number as written, possibly as link text: ``4.2``, ``[4.2](https://...)``."""
    return rf"\[?(?:{_NUMBER[_number_class(kind)]})\]?{_LINK}?"


_REF_PATTERNS = {
    kind: re.compile(rf"(?<![A-Za-z])(?P<word>{words})\s*~?\s*(?P<first>{_linked_number(kind)})")
    for kind, words in _KIND_WORDS.items()
}
_CONTINUATIONS = {
    kind: re.compile(
        rf"(?P<sep>{_SEP_RANGE}|{_SEP_LIST})(?:(?:{_KIND_WORDS[kind]})\s*~?\s*)?(?P<num>{_linked_number(kind)})"
    )
    for kind in _KIND_WORDS
}


def _clean_number(kind: str, token: str) -> str:
    """The bare number of one token: ``'([19](url))'`` -> ``'19'``, ``'3(a)'`` -> ``'3'``."""
    token = re.sub(_LINK, "", token).strip().strip("()[] ").strip()
    if kind == "figure":
        token = re.match(r"\d+", token).group(0)  # type: ignore[union-attr]
    return token


def _expand_range(lo: str, hi: str) -> list[str]:
    """Numbers from ``lo`` to ``hi`` where the range is unambiguous, else the two ends.

    >>> _expand_range("4", "6"), _expand_range("B", "D"), _expand_range("11.1", "11.3")
    (['4', '5', '6'], ['B', 'C', 'D'], ['11.1', '11.2', '11.3'])
    >>> _expand_range("F.4", "F.5"), _expand_range("4.1", "5.2")
    (['F.4', 'F.5'], ['4.1', '5.2'])
    """
    a, b = lo.split("."), hi.split(".")
    if len(b) == 1 and len(a) > 1 and b[0].isdigit():  # 11.1-2 means 11.1-11.2
        b = [*a[:-1], b[0]]
    if len(a) == len(b) and a[:-1] == b[:-1]:
        x, y = a[-1], b[-1]
        prefix = "".join(f"{p}." for p in a[:-1])
        if x.isdigit() and y.isdigit() and int(x) < int(y) <= int(x) + 50:
            return [prefix + str(n) for n in range(int(x), int(y) + 1)]
        if len(x) == len(y) == 1 and x.isupper() and y.isupper() and x < y:
            return [prefix + chr(c) for c in range(ord(x), ord(y) + 1)]
    return [lo, hi]


def _refs_at(kind: str, m: re.Match[str], text: str) -> tuple[list[tuple[int, Ref]], int]:
    """The (position, ref) pairs of one matched reference, with its list and ranges
    expanded, and the end of the whole reference.

    A list (``Lemmas 7 and 9``, ``Sections 4, 7.4 and 9``) follows a plural word only, so
    that ``Section 8, 2 runs`` names Section 8 alone; a range (``4–6``, ``B–D``,
    ``(53)-(54)``) may follow either; members keep the shape (digit- or letter-led) of the
    first number.
    """
    plural = m.group("word") not in _SINGULAR
    prev = _clean_number(kind, m.group("first"))
    out = [(m.start(), (kind, prev))]
    pos = m.end()
    while (s := _CONTINUATIONS[kind].match(text, pos)) is not None:
        is_range = s.group("sep").strip() in ("–", "—", "-", "to")
        number = _clean_number(kind, s.group("num"))
        if (not is_range and not plural) or number[:1].isdigit() != prev[:1].isdigit():
            break
        new = _expand_range(prev, number)[1:] if is_range else [number]
        out.extend((s.start(), (kind, n)) for n in new)
        prev, pos = number, s.end()
    return out, pos


def _find_refs_at(text: str) -> list[tuple[int, int, Ref]]:
    """(start, end of the whole reference, ref) of every item named in ``text``, in order."""
    found: list[tuple[int, int, Ref]] = []
    for kind, pattern in _REF_PATTERNS.items():
        for m in pattern.finditer(text):
            refs, end = _refs_at(kind, m, text)
            found.extend((pos, end, ref) for pos, ref in refs)
    found.sort(key=lambda t: t[0])
    return found


def find_refs(text: str) -> list[Ref]:
    """Every item a location string names, in order, without repeats.

    A location names items as the papers and the registry's ``where`` fields do:
    ``Section 3.2``, ``Appendix B``, ``Apps. B–D``, ``Sections 4, 7.4 and 9``,
    ``Proposition B.4``, ``Lemmas 7 and 9``, ``Figure 3(a)``, ``Figure 1b–d``,
    ``Table 2``, ``Eq. (34)``, ``Eqs. (53)-(54)``, ``Equation 1``, and the linked forms
    ``Theorem[4.2](url)``. Section and appendix numbers share the kind ``section``.

    >>> find_refs("Section 3.2 (after Eq. (7)); Appendix E.1, Lemma E.1, Eq. (52)")
    [('section', '3.2'), ('equation', '7'), ('section', 'E.1'), ('lemma', 'E.1'), ('equation', '52')]
    >>> find_refs("Figure 1 caption; Sections 4, 7.4 and 9; Apps. B–D")[1:]
    [('section', '4'), ('section', '7.4'), ('section', '9'), ('section', 'B'), ('section', 'C'), ('section', 'D')]
    >>> find_refs("Section 8, 'Identical checkpoints'; Table 1, rows T = 0 and T = 100")
    [('section', '8'), ('table', '1')]
    """
    out: list[Ref] = []
    for _, _, ref in _find_refs_at(text):
        if ref not in out:
            out.append(ref)
    return out


# "after Eq. (7)", "cited by Figure 1", "used in Appendix 13": the item is a landmark, not the place
_ANCHOR = re.compile(
    r"\b(?:after|before|following|preceding|around|see|cited (?:by|in)|used (?:by|in))\b", re.IGNORECASE
)


def where_refs(where: str) -> list[Ref]:
    """The items a claim's ``where`` places it in: those :func:`find_refs` names, less the
    landmarks (an item after ``after``, ``before``, ``around``, ``see``, ``cited by``,
    ``used in`` within the same clause, i.e. since the last ``,`` or ``;``).

    >>> where_refs("Section 3.2 (after Eq. (7)); Appendix E.1, Lemma E.1, Eq. (52)")
    [('section', '3.2'), ('section', 'E.1'), ('lemma', 'E.1'), ('equation', '52')]
    >>> where_refs("Appendix 14 (kernel J); used in Appendix 13 and Proposition 11")
    [('section', '14')]
    """
    out: list[Ref] = []
    for start, _, ref in _find_refs_at(where):
        clause = re.split(r"[,;]", where[:start])[-1]
        if not _ANCHOR.search(clause) and ref not in out:
            out.append(ref)
    return out


def format_label(ref: Ref, appendix: bool = False) -> str:
    """The canonical label of an item.

    >>> format_label(("equation", "12")), format_label(("section", "B.2")), format_label(("lemma", "7"))
    ('Eq. (12)', 'Appendix B.2', 'Lemma 7')
    >>> format_label(("section", "13"), appendix=True), format_label(("section", "3.1"))
    ('Appendix 13', 'Section 3.1')
    """
    kind, number = ref
    if kind == "equation":
        return f"Eq. ({number})"
    if kind == "section":
        return f"{'Appendix' if appendix or number[:1].isalpha() else 'Section'} {number}"
    return f"{_DISPLAY[kind]} {number}"


def label_ref(label: str) -> Ref:
    """The item a map label names; raises ValueError unless it is one canonical label.

    >>> label_ref("Appendix 13"), label_ref("Eq. (4)")
    (('section', '13'), ('equation', '4'))
    """
    refs = find_refs(label)
    if len(refs) != 1:
        raise ValueError(f"label {label!r} must name exactly one item; it names {len(refs)}")
    ref = refs[0]
    canonical = {format_label(ref), format_label(ref, appendix=True)}
    if label not in canonical:
        raise ValueError(f"label {label!r} is not canonical; write {' or '.join(sorted(canonical))!r}")
    return ref


# ---------------------------------------------------------------- the paper texts

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# a display equation, and the tag "(N)" that may follow it on its line
_DISPLAY_MATH = re.compile(
    r"(?<!\\)\$\$(.*?)(?<!\\)\$\$(?:[ \t]*\((\d+[a-z]?)\)(?=[ \t]*$))?", re.DOTALL | re.MULTILINE
)
_INLINE_MATH = re.compile(r"(?<!\\)\$[^$\n]*?(?<!\\)\$")
_TAG = re.compile(r"\\tag\*?\{\s*(\d+[a-z]?)\s*\}")
# an HTML conversion glues the tag to the end of the equation's text: "...\.(12)where"
_GLUED_TAG = re.compile(r"(?<=[.,;:}\])])\(([1-9]\d{0,2})\)(?![\\=^_{\d])")
_HEADING = re.compile(r"^(#{1,6})[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_GLUED_HEADING = re.compile(r"(?<=[^\s#])(#{2,6})(?=[^#\n]|$)", re.MULTILINE)
_CAPTION = re.compile(r"(?:^|(?<=[\s)\]*!\[]))(Figure|Table)\s*(\d+)\s*:", re.MULTILINE)
_STATEMENT_WORDS = "|".join(_DISPLAY[k] for k in STATEMENT_KINDS)
_STATEMENT_HEAD = re.compile(
    rf"^[ \t]*(?:[*_]{{1,2}})?(?P<kind>{_STATEMENT_WORDS})[ \t]*(?P<num>{_NUMBER['statement']})"
    r"(?P<title>[ \t]*\([^)\n]*\))?[ \t]*[.:](?:[*_]{1,2})?(?=\s|$)",
    re.MULTILINE,
)
_HEADING_STATEMENT = re.compile(rf"^(?P<kind>{_STATEMENT_WORDS})[ \t]*(?P<num>{_NUMBER['statement']})(?![\d]|\.\d)")
_HEADING_APPENDIX = re.compile(r"^Appendix[ \t]*(?P<num>(?:[A-Z](?![a-z])|\d+)(?:\.\d+)*)")
_HEADING_LETTERED = re.compile(r"^(?P<num>[A-Z](?:\.\d+)+)")
_HEADING_NUMBERED = re.compile(r"^(?P<num>\d+(?:\.\d+)*)(?=[\s.:)]|[A-Z]|$)")
_END_OF_BODY = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s*)?(Conclusions?|Concluding|Discussion and [Cc]onclusions?)\b")
_BACK_MATTER = re.compile(r"^(References|Bibliography|Appendix|Appendices|Supplementary)\b", re.IGNORECASE)
# "(26)", "(11)–(14)" in prose: a cited equation (not "O(1)", "Sym(2)", "22(106)")
_EQ_CITE_BARE = re.compile(
    r"(?<![\w)\]\\])\(([1-9]\d{0,2}[a-z]?)\)(?:\s*[–-]\s*\(([1-9]\d{0,2}[a-z]?)\))?(?=[\s.,;:)\]–-]|$)"
)
_EQ_ANCHOR = re.compile(r"\]\(https?://[^()\s]*#(?:[A-Z]+\d+\.)*E(\d+)\)")


def _front_matter_end(text: str) -> int:
    m = re.match(r"\A\s*---\n.*?\n---\n", text, re.DOTALL)
    return m.end() if m else 0


def _blank(m: re.Match[str]) -> str:
    """The match blanked out, same length, newlines kept."""
    return re.sub(r"[^\n]", " ", m.group(0))


def _mask_display(m: re.Match[str]) -> str:
    """A display equation blanked out (newlines kept), its tags kept as ``\\tag{N}``."""
    tags = _TAG.findall(m.group(1)) + ([m.group(2)] if m.group(2) else [])
    return " " + " ".join(f"\\tag{{{t}}}" for t in tags) + _blank(m)


def _prepare(text: str) -> str:
    """The body of a paper text for label search: front matter and references removed, math
    masked, markdown escapes undone, headings glued to the previous line split off."""
    body = text[_front_matter_end(text) :]
    body = _DISPLAY_MATH.sub(_mask_display, body)
    body = _INLINE_MATH.sub(lambda m: " M" + _blank(m)[2:], body)
    body = _ESCAPE.sub(r"\1", body)
    body = _GLUED_HEADING.sub(r"\n\1", body)
    # drop the references: from their heading to the next heading
    out, skipping = [], False
    for line in body.split("\n"):
        m = _HEADING.match(line)
        if m:
            skipping = bool(re.match(r"(References|Bibliography)\b", m.group(2), re.IGNORECASE))
        out.append("" if skipping else line)
    return "\n".join(out)


@dataclass(frozen=True)
class TextItem:
    """A labelled item found in a paper text: where it sits and whether the text defines it."""

    ref: Ref
    position: int
    defined: bool


def _appendix_sections(body: str) -> set[str]:
    """Top-level numeric sections that are appendices: after the conclusion or the back
    matter, or cited as ``Appendix N``."""
    out: set[str] = set()
    after_body = False
    for m in _HEADING.finditer(body):
        title = m.group(2)
        top = _HEADING_NUMBERED.match(title)
        if top and after_body and "." not in top.group("num"):
            out.add(top.group("num"))
        top_level = (top is not None and "." not in top.group("num")) or len(m.group(1)) <= 2
        if top_level and (_END_OF_BODY.match(title) or _BACK_MATTER.match(title)):
            after_body = True
    for m in re.finditer(r"(?<![A-Za-z])(?:Appendix|Appendices|Apps?\.)\s*\[?(\d+)", body):
        out.add(m.group(1))
    return out


def _defined(body: str) -> list[TextItem]:
    items: list[TextItem] = []
    for m in _HEADING.finditer(body):
        title = m.group(2).strip()
        for pattern, kind in (
            (_HEADING_STATEMENT, None),
            (_HEADING_APPENDIX, "section"),
            (_HEADING_LETTERED, "section"),
            (_HEADING_NUMBERED, "section"),
        ):
            h = pattern.match(title)
            if h:
                k = kind or h.group("kind").lower()
                items.append(TextItem((k, h.group("num")), m.start(), True))
                break
    for m in _STATEMENT_HEAD.finditer(body):
        items.append(TextItem((m.group("kind").lower(), m.group("num")), m.start(), True))
    for m in _CAPTION.finditer(body):
        items.append(TextItem((m.group(1).lower(), m.group(2)), m.start(), True))
    items.extend(_equation_tags(body))
    return items


def _equation_tags(body: str) -> list[TextItem]:
    """Numbered equations: ``\\tag{N}`` in (or ``(N)`` after) markdown display math, and the tags an
    HTML conversion glues to the equation's text (``...\\.(12)where``), accepted only in
    increasing order, each at most 5 above the previous one, which rejects function values
    such as ``g(1)`` or ``gamma(100)``."""
    items = [TextItem(("equation", m.group(1)), m.start(), True) for m in _TAG.finditer(body)]
    last = 0
    for m in _GLUED_TAG.finditer(body):
        n = int(m.group(1))
        if last < n <= last + 5:
            items.append(TextItem(("equation", str(n)), m.start(), True))
            last = n
    return items


# "Ghosh et al. (2025) in Appendix C.3.2", "Theorem 3 of Smith et al.": another paper's item
_EXTERNAL_BEFORE = re.compile(r"(?:et al\.?,?\s*\(?\[?\d{4}[a-z]?\]?\)?|\[\d+\])\s*,?\s*(?:in|of|see)\s*$")
_EXTERNAL_AFTER = re.compile(
    r"^\s*(?:of|in)\s+(?:the\s+)?(?:[A-Z][^\s,.;]*\s*et al|\[\d|[A-Z][a-z]+\s*\(\d{4}|[a-z]+\d{4})"
)
_LINK_TARGET = re.compile(r"\]\([^()\s]*\)")


def _external(body: str, start: int, end: int) -> bool:
    """Whether the reference at ``body[start:end]`` names an item of another work."""
    before = _LINK_TARGET.sub("]", body[max(0, start - 160) : start])
    after = _LINK_TARGET.sub("]", body[end : end + 160])
    return bool(_EXTERNAL_BEFORE.search(before) or _EXTERNAL_AFTER.match(after))


def _cited(body: str) -> list[TextItem]:
    items = [TextItem(ref, pos, False) for pos, end, ref in _find_refs_at(body) if not _external(body, pos, end)]
    for m in _EQ_ANCHOR.finditer(body):
        items.append(TextItem(("equation", m.group(1)), m.start(), False))
    for m in _EQ_CITE_BARE.finditer(body):
        lo, hi = m.group(1), m.group(2)
        numbers = _expand_range(lo, hi) if hi else [lo]
        items.extend(TextItem(("equation", n), m.start(), False) for n in numbers)
    return items


def text_items(text: str) -> list[TextItem]:
    """Every labelled item of a paper text, once, in the order of the text.

    An item is *defined* where the text states it: a numbered heading (``## 3 Setting``,
    ``### 3\\.1Optimization``, ``## Appendix BInvariance``, ``### B\\.1SVS``), a numbered
    statement heading or opening (``###### Lemma E\\.5\\(One\\-dimensional reduction\\)\\.``,
    ``**Theorem 1.**``, ``Lemma 7 (Tracking).``), a caption (``Table 1:``, ``![Figure 2:``)
    or an equation tag. A reference (``see Theorem 1``, ``by (26)``, ``Apps. B–D``) is no
    definition; an item the text only cites (its label lost in conversion) is listed at its
    first citation with ``defined=False``. References and front matter are not searched.
    """
    return _items(_prepare(text))


def _items(body: str) -> list[TextItem]:
    first: dict[Ref, TextItem] = {}
    for item in sorted(_defined(body) + _cited(body), key=lambda i: (not i.defined, i.position)):
        first.setdefault(item.ref, item)
    return sorted(first.values(), key=lambda i: i.position)


def _labels(text: str, defined: bool | None) -> list[str]:
    body = _prepare(text)
    appendix = _appendix_sections(body)
    out = []
    for item in _items(body):
        if defined is not None and item.defined != defined:
            continue
        kind, number = item.ref
        out.append(format_label(item.ref, appendix=kind == "section" and number.split(".")[0] in appendix))
    return out


def defined_labels(text: str) -> list[str]:
    """Labels of the items the text states (headings, statement heads, captions, tags), in order.

    >>> defined_labels("## 1 Introduction\\nSee Theorem 2.\\n\\n**Theorem 2.** It holds.\\n"
    ...                "## 2 Conclusion\\n## 3 Proofs\\nTable 1: Counts.")
    ['Section 1', 'Theorem 2', 'Section 2', 'Appendix 3', 'Table 1']
    """
    return _labels(text, True)


def cited_labels(text: str) -> list[str]:
    """Labels of the items the text cites but never states (labels lost in conversion).

    >>> cited_labels("## 1 Introduction\\nBy Lemma 7 and (12), see Figures 1–2 and Appendix 14.")
    ['Lemma 7', 'Eq. (12)', 'Figure 1', 'Figure 2', 'Appendix 14']
    """
    return _labels(text, False)


def paper_labels(text: str) -> list[str]:
    """Labels of every labelled item of the text, stated or only cited, in the order of the text."""
    return _labels(text, None)


def papers_dir() -> Path:
    """The shared paper texts: ``../shared/papers`` next to the repository root."""
    return Path(__file__).resolve().parents[1].parent / "shared" / "papers"


def paper_files(directory: Path | None = None) -> dict[str, Path]:
    """Paper short name -> text file, from the index table of the directory's README.md
    (rows ``| `000_....txt` | rare_gates | ...``); only existing files are returned."""
    directory = papers_dir() if directory is None else Path(directory)
    readme = directory / "README.md"
    out: dict[str, Path] = {}
    if readme.is_file():
        row = re.compile(r"^\|\s*`?([^`|\s]+\.txt)`?\s*\|\s*([a-z_]+)\s*\|", re.MULTILINE)
        for m in row.finditer(readme.read_text("utf-8")):
            if m.group(2) in PAPERS and (directory / m.group(1)).is_file():
                out[m.group(2)] = directory / m.group(1)
    return out


# ---------------------------------------------------------------- the map


class CoverageError(ValueError):
    """A coverage map file is malformed (unknown field, bad label, duplicate, unknown claim)."""


@dataclass(frozen=True)
class MapItem:
    """One ``[[item]]`` of a paper's coverage map."""

    label: str
    ref: Ref
    excluded: str | None = None
    claims: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class Row:
    """One line of the coverage report: an item, the claims that cover it, or its exclusion."""

    label: str
    claims: list[str] = field(default_factory=list)
    excluded: str | None = None
    note: str | None = None

    @property
    def status(self) -> str:
        """``covered``, ``excluded`` or ``uncovered``."""
        if self.claims:
            return "covered"
        return "excluded" if self.excluded else "uncovered"

    def as_json(self) -> dict:
        return {"label": self.label, "claims": list(self.claims), "excluded": self.excluded, "note": self.note}


def map_path(paper: str, directory: Path | None = None) -> Path:
    """The coverage map file of ``paper`` under ``directory`` (default: the packaged claims)."""
    return (claims_dir() if directory is None else Path(directory)) / paper / MAP_FILE


def load_map(paper: str, directory: Path | None = None) -> list[MapItem]:
    """The items of ``paper``'s coverage map, in file order; raises CoverageError when malformed."""
    path = map_path(paper, directory)
    if not path.is_file():
        raise CoverageError(f"no coverage map for {paper}: {path} does not exist")
    with path.open("rb") as fh:
        try:
            data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise CoverageError(f"{paper}/{MAP_FILE}: {exc}") from None
    if set(data) - {"item"}:
        raise CoverageError(f"{paper}/{MAP_FILE}: unknown tables {sorted(set(data) - {'item'})}")
    items: list[MapItem] = []
    seen: dict[Ref, str] = {}
    for i, raw in enumerate(data.get("item", []), start=1):
        where = f"{paper}/{MAP_FILE}: item #{i}"
        unknown = set(raw) - {"label", "excluded", "claims", "note"}
        if unknown:
            raise CoverageError(f"{where} has unknown fields {sorted(unknown)}")
        label = raw.get("label")
        if not isinstance(label, str) or not label.strip():
            raise CoverageError(f"{where} lacks a label")
        try:
            ref = label_ref(label)
        except ValueError as exc:
            raise CoverageError(f"{where}: {exc}") from None
        if ref in seen:
            raise CoverageError(f"{where}: {label!r} repeats {seen[ref]!r}")
        seen[ref] = label
        excluded = raw.get("excluded")
        if excluded is not None and (not isinstance(excluded, str) or not excluded.strip()):
            raise CoverageError(f"{where} ({label}): excluded must be a non-empty reason")
        claims = raw.get("claims", [])
        if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
            raise CoverageError(f"{where} ({label}): claims must be a list of claim ids")
        note = raw.get("note")
        if note is not None and (not isinstance(note, str) or not note.strip()):
            raise CoverageError(f"{where} ({label}): note must be a non-empty text")
        items.append(MapItem(label, ref, excluded, tuple(claims), note))
    return items


def _covering(items: Sequence[MapItem], claims: Iterable[Claim]) -> dict[Ref, set[str]]:
    """Claim ids per item: the items each claim's ``where`` places it in (:func:`where_refs`),
    plus, for a section, the claims of its numbered subsections, plus the map's own lists."""
    refs = {item.ref for item in items}
    out: dict[Ref, set[str]] = {item.ref: set(item.claims) for item in items}
    for claim in claims:
        for kind, number in where_refs(claim.where):
            if kind == "section":
                parts = number.split(".")
                for k in range(1, len(parts) + 1):
                    if ("section", ".".join(parts[:k])) in refs:
                        out[("section", ".".join(parts[:k]))].add(claim.id)
            elif (kind, number) in refs:
                out[(kind, number)].add(claim.id)
    return out


def _claim_order(cid: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", cid)]


def coverage(paper: str, registry: Mapping[str, Claim] | None = None, directory: Path | None = None) -> list[Row]:
    """The coverage rows of ``paper``: one per map item, in map order.

    Raises CoverageError when the map names a claim that is not registered for the paper,
    or excludes an item that claims cover (a stale reason).
    """
    if paper not in PAPERS:
        raise KeyError(paper)
    registry = load_registry() if registry is None else registry
    items = load_map(paper, directory)
    claims = [c for c in registry.values() if c.paper == paper]
    for item in items:
        bad = [cid for cid in item.claims if cid not in registry or registry[cid].paper != paper]
        if bad:
            raise CoverageError(f"{paper}/{MAP_FILE}: {item.label} lists claims not registered for {paper}: {bad}")
    covering = _covering(items, claims)
    rows = []
    for item in items:
        ids = sorted(covering[item.ref], key=_claim_order)
        if ids and item.excluded:
            raise CoverageError(
                f"{paper}/{MAP_FILE}: {item.label} is excluded ({item.excluded!r}) but claims cover it: {ids}"
            )
        rows.append(Row(item.label, ids, item.excluded, item.note))
    return rows


def coverage_report(papers: Sequence[str] | None = None, directory: Path | None = None) -> dict:
    """``{"papers": {name: [row, ...]}}`` for the given papers (default: all), rows as JSON objects."""
    registry = load_registry()
    names = list(PAPERS) if papers is None else list(papers)
    return {"papers": {p: [r.as_json() for r in coverage(p, registry, directory)] for p in names}}


def counts(rows: Sequence[Mapping]) -> dict[str, int]:
    """Items, covered, excluded and uncovered among JSON rows.

    >>> counts([{"label": "Table 1", "claims": ["X-1"], "excluded": None},
    ...         {"label": "Section 2", "claims": [], "excluded": "related work"},
    ...         {"label": "Lemma 3", "claims": [], "excluded": None}])
    {'items': 3, 'covered': 1, 'excluded': 1, 'uncovered': 1}
    """
    statuses = [Row(r["label"], r["claims"], r["excluded"]).status for r in rows]
    return {"items": len(statuses), **{s: statuses.count(s) for s in ("covered", "excluded", "uncovered")}}


def render_text(report: Mapping) -> str:
    """The report as text: per paper one line per item, then the counts."""
    lines: list[str] = []
    for paper, rows in report["papers"].items():
        if lines:
            lines.append("")
        lines.append(f"{paper}: {PAPERS[paper]}")
        width = max((len(r["label"]) for r in rows), default=0)
        for r in rows:
            status = Row(r["label"], r["claims"], r["excluded"]).status
            detail = {"covered": ", ".join(r["claims"]), "excluded": r["excluded"], "uncovered": "no claim yet"}[status]
            lines.append(f"  {r['label']:<{width}}  {status.upper() if status == 'uncovered' else status:<9}  {detail}")
            if r.get("note"):
                lines.append(f"  {'':<{width}}  {'':<9}  note: {r['note']}")
        c = counts(rows)
        lines.append(
            f"  {paper}: {c['items']} items: {c['covered']} covered, {c['excluded']} excluded, "
            f"{c['uncovered']} uncovered"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- command line


class UsageError(Exception):
    """Bad command-line input; the message is the whole one-line error (exit status 2)."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage dump) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: error: {message}")


def _paper_arg(text: str) -> str:
    if text not in PAPERS:
        raise argparse.ArgumentTypeError(f"unknown paper {text!r}; choose from {', '.join(PAPERS)}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the ``coverage`` command."""
    parser.add_argument(
        "--paper", type=_paper_arg, metavar="NAME", help=f"one paper: {', '.join(PAPERS)} (default: all)"
    )
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")


def run(args: argparse.Namespace) -> int:
    """Print the coverage report for parsed ``args``; returns the exit status."""
    report = coverage_report(None if args.paper is None else [args.paper])
    print(json.dumps(report, indent=2) if args.format == "json" else render_text(report))
    return 0


def build_parser(prog: str = "python -m verify coverage") -> argparse.ArgumentParser:
    """The parser of the ``coverage`` command on its own (``python -m verify.coverage``)."""
    parser = OneLineParser(prog=prog, description=help_text(), formatter_class=PlainHelpFormatter)
    add_arguments(parser)
    return parser


def help_text() -> str:
    """The command's help: this module's docstring without its doctests."""
    return (__doc__ or "").split("\n\n>>>")[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``coverage`` command; returns the exit status."""
    prog = "python -m verify coverage"
    try:
        status = run(build_parser(prog).parse_args(argv))
        sys.stdout.flush()  # a closed pipe shows here, inside the handler
        return status
    except BrokenPipeError:
        return closed_pipe()
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except CoverageError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
