"""The paper's own labels, read from its text: headings, statement headings, equation tags and citations.

The checks of the text's cross-references (e.g. Section 3.3 of the multi-pathway paper cites
Proposition B.4 "in Appendix E.1"; Appendix B.2 cites the initialisation as "Eq. (4)")
establish where each label actually sits by parsing the HTML-to-text conversion of the paper
(``../shared/papers``). Pure text processing (``re``); :mod:`verify.coverage` reads the same
files for the coverage map.
"""

from __future__ import annotations

import re

_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_GLUED = re.compile(r"(?<=[^\s#])(#{2,6})(?=[^#\n])")
_HEAD = re.compile(r"^(#{1,6})[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_SEC_NUM = re.compile(r"^(\d+(?:\.\d+)*)(?=[A-Z\s.:)]|$)")
_SEC_APP = re.compile(r"^Appendix[ \t]*([A-Z])(?![a-z])")
_SEC_LET = re.compile(r"^([A-Z](?:\.\d+)+)")
_STMT = re.compile(
    r"^(Proposition|Lemma|Theorem|Definition|Corollary|Hypothesis|Assumption|Remark)[ \t]*((?:[A-Z]|\d+)(?:\.\d+)*)"
)
# an equation tag glued to its display by the conversion: "...(t)),(4)with"; not "W(0)", "g(1)^2"
_TAG = re.compile(r"(?<=[.,;:}\])])\(([1-9]\d{0,2})\)(?![\\=^_{\d])")


def unescape(text: str) -> str:
    """The text with its markdown escapes undone (``\\(4\\)`` -> ``(4)``, ``B\\.4`` -> ``B.4``) and glued
    headings (``...\\.### 5\\.1Two``) moved to a line of their own."""
    return _GLUED.sub(r"\n\1", _MD_ESCAPE.sub(r"\1", text))


def headings(text: str) -> list[dict]:
    """Numbered headings in text order: ``{"pos", "kind", "number", "title"}`` with kind ``section``
    (``3.2``, ``B``, ``B.2``) or a statement kind (``proposition`` ``B.4``); unnumbered headings are skipped.

    >>> [(h["kind"], h["number"]) for h in headings("## 3Setup\\n### 3\\\\.2The SVS\\n###### Lemma B\\\\.2\\\\(x\\\\)")]
    [('section', '3'), ('section', '3.2'), ('lemma', 'B.2')]
    """
    out = []
    for m in _HEAD.finditer(unescape(text)):
        title = m.group(2)
        st = _STMT.match(title)
        if st:
            out.append({"pos": m.start(), "kind": st.group(1).lower(), "number": st.group(2), "title": title})
            continue
        for pat in (_SEC_APP, _SEC_LET, _SEC_NUM):
            sm = pat.match(title)
            if sm:
                out.append({"pos": m.start(), "kind": "section", "number": sm.group(1), "title": title})
                break
    return out


def statement_section(text: str, kind: str, number: str) -> str:
    """The innermost numbered section holding the heading of statement ``kind number`` (the last section
    heading before it); raises ValueError when the text states no such item.

    >>> statement_section("## Appendix BX\\n### B\\\\.2Y\\n###### Proposition B\\\\.4\\\\(Z\\\\)", "Proposition", "B.4")
    'B.2'
    """
    current = None
    for h in headings(text):
        if h["kind"] == "section":
            current = h["number"]
        elif h["kind"] == kind.lower() and h["number"] == number:
            if current is None:
                raise ValueError(f"{kind} {number} precedes every numbered section")
            return current
    raise ValueError(f"the text states no {kind} {number}")


def cited_locations(text: str, kind: str, number: str) -> list[dict]:
    """Where the prose says statement ``kind number`` is: every "<kind> <number> in Appendix|Section X".

    Returns ``{"location", "anchor"}`` per citation, ``anchor`` being the HTML anchor the statement's own
    link points to (``A2.Thmtheorem4``: the second appendix), or None.

    >>> cited_locations("(Proposition[B\\\\.4](https://x.org/p#A2.Thmtheorem4)in Appendix[E\\\\.1](https://x.org/p#A5.SS1))",
    ...                 "Proposition", "B.4")
    [{'location': 'E.1', 'anchor': 'A2.Thmtheorem4'}]
    """
    pat = re.compile(
        rf"{re.escape(kind)}\s*\[?{re.escape(number)}\]?(?:\([^()\s]*#(?P<anchor>[^()\s#]*)\))?"
        r"\s*in\s*(?:Appendix|Section)\s*\[?(?P<loc>[A-Z]?\d*(?:\.\d+)*)\]?"
    )
    return [{"location": m.group("loc"), "anchor": m.group("anchor")} for m in pat.finditer(unescape(text))]


def anchor_appendix(anchor: str) -> str | None:
    """The appendix letter an HTML anchor names (``A2.Thmtheorem4`` -> ``B``: arXiv's HTML numbers appendices
    A1, A2, ...), or None for an anchor outside the appendices (``S3.E6``).

    >>> anchor_appendix("A2.Thmtheorem4"), anchor_appendix("A5.SS1"), anchor_appendix("S3.E6")
    ('B', 'E', None)
    """
    m = re.match(r"A(\d+)(?:\.|$)", anchor or "")
    return chr(ord("A") + int(m.group(1)) - 1) if m else None


def equation_tags(text: str) -> list[tuple[int, int, int]]:
    """(number, start, end) of every equation tag glued to its display, accepted in increasing order, each at most
    5 above the previous (which rejects function values such as ``W(0)`` inside the LaTeX source).

    >>> [n for n, _, _ in equation_tags("a=b,\\\\(1\\\\)so W\\\\(0\\\\)=c\\\\.\\\\(2\\\\)and x}\\\\(9\\\\)y")]
    [1, 2]
    """
    out, last = [], 0
    for m in _TAG.finditer(unescape(text)):
        n = int(m.group(1))
        if last < n <= last + 5:
            out.append((n, m.start(), m.end()))
            last = n
    return out


def equation_display(text: str, n: int) -> str:
    """The (unescaped) display tagged (n): from the line start, or the previous tag, to the tag."""
    body = unescape(text)
    prev_end = 0
    for num, start, end in equation_tags(text):
        if num == n:
            return body[max(prev_end, body.rfind("\n", 0, start) + 1) : start]
        prev_end = end
    raise ValueError(f"the text has no equation tag ({n})")


def first_tag_after(text: str, phrase: str) -> int:
    """The number of the first equation tag after the first match of the regex ``phrase`` (in the unescaped text)."""
    m = re.search(phrase, unescape(text))
    if m is None:
        raise ValueError(f"phrase {phrase!r} not in the text")
    for num, start, _ in equation_tags(text):
        if start > m.end():
            return num
    raise ValueError(f"no equation tag after {phrase!r}")


def cited_equations(text: str, phrase: str) -> list[int]:
    """The equation numbers cited as "Eq. (N)" right after each match of the regex ``phrase`` (within 40 characters).

    >>> cited_equations("Our initialization \\\\(Eq\\\\. \\\\(4\\\\)\\\\) satisfies", r"initiali[sz]ation")
    [4]
    """
    body = unescape(text)
    out = []
    for m in re.finditer(phrase, body):
        c = re.compile(r"Eq\.\s*\(\[?(\d+)\]?").search(body, m.end(), m.end() + 40)
        if c:
            out.append(int(c.group(1)))
    return out
