"""report.html: the audit report as one self-contained page (no network, no external files).

:func:`render_html` turns a report (schema version 0 or 1) into a page with, in order: the
verdict counts per paper, the discrepancies, failed checks, inconclusive and vacuous claims, filters
(paper, verdict, kind; a few lines of inline JavaScript, the page reads in full without
it), then per paper an index table (id, location, verdict, the paper's value against ours
to the paper's digits) and every claim as an ``<article id="CLAIM-ID">``: statement, the
paper's value, ours (short; the full digits in ``<details>``), tolerance, reading, evidence,
power, the checks with their outcomes, and its figures beside it, embedded as ``data:``
URIs and captioned with the claim ids and the profile. Every text is escaped
(:func:`html.escape`), so ``report.html#MP-6.map`` opens claim MP-6.map.

>>> page = render_html({"generated": "now", "profile": "quick", "git_revision": "abc", "summary": {}, "claims": []})
>>> page.startswith("<!DOCTYPE html>") and "<script" in page and "http" not in page.split("<body")[1]
True
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from .registry import PAPERS
from .report import FLAGGED, PACKAGES, VERDICTS, figure_caption, figure_claims, migrate, short_ours

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:0 1.5em 4em;color:#1b1b1b}
h1{margin-bottom:.2em}h2{border-bottom:1px solid #ccc;margin-top:2em}h3{margin:.2em 0 .4em}
table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #d4d4d4;padding:.25em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}td.num{text-align:right}
code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;overflow-wrap:anywhere}
.v{font-weight:600;white-space:nowrap}.v-confirmed{color:#176b2c}.v-confirmed-reading{color:#2b6d8f}
.v-inconclusive{color:#9a6700}.v-discrepancy{color:#b3261e}.v-check-failed{color:#fff;background:#b3261e;padding:0 .3em}
.v-unverifiable{color:#6e6e6e}.v-not-run{color:#8a8a8a}
.claim{display:flex;flex-wrap:wrap;gap:1.2em;border:1px solid #ddd;border-radius:4px;padding:.6em 1em;margin:1em 0}
.claim{scroll-margin-top:3.5em}.claim:target{outline:3px solid #2b6d8f}
.claim .body{flex:1 1 520px;min-width:0}.claim .figs{flex:0 1 560px}
.claim dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:0}.claim dt{color:#555}
.claim dd{margin:0;overflow-wrap:anywhere}figure{margin:0 0 1em}figure img{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#444}.filters{position:sticky;top:0;background:#fff;padding:.5em 0;z-index:1}
.filters label{margin-right:1em}button.count{border:0;background:none;cursor:pointer;font:inherit;color:#0b57d0}
.missing{color:#b3261e}[hidden]{display:none !important}
"""

_JS = """
(function () {
  var names = ["paper", "verdict", "kind"];
  var boxes = {};
  names.forEach(function (n) { boxes[n] = document.getElementById("filter-" + n); });
  var claims = Array.prototype.slice.call(document.querySelectorAll("[data-claim]"));
  var shown = document.getElementById("shown");
  function apply() {
    var count = 0, total = 0;
    claims.forEach(function (el) {
      var ok = names.every(function (n) { return !boxes[n].value || el.dataset[n] === boxes[n].value; });
      el.hidden = !ok;
      if (el.tagName === "ARTICLE") { total += 1; if (ok) { count += 1; } }
    });
    document.querySelectorAll("section.paper").forEach(function (s) {
      s.hidden = !s.querySelector("article.claim:not([hidden])");
    });
    shown.textContent = count + " of " + total + " claims shown";
  }
  names.forEach(function (n) { boxes[n].addEventListener("change", apply); });
  document.getElementById("filter-reset").addEventListener("click", function () {
    names.forEach(function (n) { boxes[n].value = ""; });
    apply();
  });
  document.querySelectorAll("button.count").forEach(function (b) {
    b.addEventListener("click", function () {
      boxes.paper.value = b.dataset.setPaper || "";
      boxes.verdict.value = b.dataset.setVerdict || "";
      boxes.kind.value = "";
      apply();
      document.getElementById("filters").scrollIntoView();
    });
  });
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.hidden) {
      names.forEach(function (n) { boxes[n].value = ""; });
      apply();
      el.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", reveal);
  apply();
  reveal();
})();
"""


def _e(text) -> str:
    return escape("" if text is None else str(text), quote=True)


def _v(verdict: str) -> str:
    return f'<span class="v v-{_e(verdict)}">{_e(verdict)}</span>'


def figure_data_uri(directory: Path | None, fig: str) -> str | None:
    """The figure file ``fig`` (relative to the report directory) as a ``data:`` URI; None when absent."""
    if directory is None:
        return None
    base = Path(directory).resolve()
    path = (base / fig).resolve()
    mime = _MIME.get(path.suffix.lower())
    if mime is None or not path.is_relative_to(base) or not path.is_file():
        return None
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def render_html(report: dict, directory: Path | None = None) -> str:
    """The report as one HTML page; figures are read from ``directory`` (the report directory)."""
    report = migrate(report)
    claims = report["claims"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Audit report ({_e(report['profile'])})</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Audit report</h1>",
        _header(report),
        _summary(report),
        _flagged(claims),
        _filters(claims),
    ]
    captions = figure_claims(report)
    for paper, title in PAPERS.items():
        rows = [c for c in claims if c["paper"] == paper]
        if rows:
            parts.append(_paper(paper, title, rows, captions, report["profile"], directory))
    others = [c for c in claims if c["paper"] not in PAPERS]
    if others:
        parts.append(
            _paper("other", "claims of papers not in the registry", others, captions, report["profile"], directory)
        )
    parts += [f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"


def _header(report: dict) -> str:
    dirty = report.get("git_dirty")
    state = " (uncommitted changes)" if dirty else (" (dirty state unknown)" if dirty is None else "")
    run = report.get("run") or {}
    run_text = ""
    if run:
        sel = run.get("selection")
        run_text = f"; run: {'partial' if run.get('partial') else 'complete'}" + (
            f", selection {_e(', '.join(sel))}" if sel else ""
        )
    lines = [
        f"<p>Generated {_e(report['generated'])}, profile <code>{_e(report['profile'])}</code>, "
        f"revision <code>{_e(report['git_revision'])}</code>{state}{run_text}.</p>"
    ]
    env = report.get("environment")
    if env:
        blas = env.get("blas")
        cpu = env.get("cpu") or {}
        rows = [(k, env.get(k, "unknown")) for k in ("python", *PACKAGES)]
        rows.append(("BLAS", " ".join(f"{blas[k]}" for k in ("name", "version")) if isinstance(blas, dict) else blas))
        rows += [
            ("CPU", cpu.get("model", "unknown")),
            ("CPU flags", " ".join(cpu.get("flags") or [])),
            ("OS", env.get("os")),
        ]
        body = "".join(f"<tr><th>{_e(k)}</th><td class='mono'>{_e(v)}</td></tr>" for k, v in rows)
        lines.append(f"<details><summary>Environment</summary><table>{body}</table></details>")
    else:
        lines.append("<p>Environment: not recorded (a schema version 0 report).</p>")
    return "\n".join(lines)


def _summary(report: dict) -> str:
    head = "".join(f"<th>{_e(v)}</th>" for v in VERDICTS)
    rows = []
    for paper, counts in report["summary"].items():
        if not counts:
            continue
        cells = "".join(
            f'<td class="num"><button class="count" data-set-paper="{_e(paper)}" data-set-verdict="{_e(v)}">'
            f"{counts.get(v, 0)}</button></td>"
            if counts.get(v)
            else '<td class="num">0</td>'
            for v in VERDICTS
        )
        rows.append(f"<tr><th>{_e(paper)}</th>{cells}</tr>")
    return f'<h2 id="summary">Summary</h2><table><tr><th>paper</th>{head}</tr>{"".join(rows)}</table>'


def _flagged(claims: list[dict]) -> str:
    flagged = [c for c in claims if c["verdict"] in FLAGGED]
    out = ['<h2 id="flagged">Discrepancies, failed checks, inconclusive and vacuous claims</h2>']
    if not flagged:
        return out[0] + "<p>None.</p>"
    out.append("<ul>")
    for c in flagged:
        out.append(
            f'<li><a href="#{_e(c["id"])}"><b>{_e(c["id"])}</b></a> ({_e(c["where"])}) {_v(c["verdict"])}: '
            f"paper <code>{_e(c['paper_value'])}</code>, ours <code>{_e(short_ours(c))}</code>. "
            f"{_e(c.get('discrepancy') or c.get('evidence'))}</li>"
        )
    out.append("</ul>")
    return "\n".join(out)


def _options(name: str, values: list[str]) -> str:
    opts = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
    return f'<label>{name} <select id="filter-{name}"><option value="">all</option>{opts}</select></label>'


def _filters(claims: list[dict]) -> str:
    papers = list(dict.fromkeys(c["paper"] for c in claims))
    verdicts = [v for v in VERDICTS if any(c["verdict"] == v for c in claims)]
    verdicts += sorted({c["verdict"] for c in claims} - set(VERDICTS))
    kinds = sorted({c.get("kind") or "" for c in claims})
    return (
        '<div class="filters" id="filters">'
        + _options("paper", papers)
        + _options("verdict", verdicts)
        + _options("kind", kinds)
        + '<button type="button" id="filter-reset">show all</button> '
        + f'<output id="shown">{len(claims)} of {len(claims)} claims shown</output></div>'
    )


def _data(c: dict) -> str:
    return f'data-claim data-paper="{_e(c["paper"])}" data-verdict="{_e(c["verdict"])}" data-kind="{_e(c.get("kind"))}"'


def _paper(paper: str, title: str, rows: list[dict], captions: dict, profile: str, directory: Path | None) -> str:
    index = "".join(
        f'<tr {_data(c)}><td><a href="#{_e(c["id"])}">{_e(c["id"])}</a></td><td>{_e(c["where"])}</td>'
        f"<td>{_v(c['verdict'])}</td><td class='mono'>{_e(c['paper_value'])}</td>"
        f"<td class='mono'>{_e(short_ours(c))}</td></tr>"
        for c in rows
    )
    out = [
        f'<section class="paper" data-paper="{_e(paper)}"><h2 id="paper-{_e(paper)}">{_e(paper)}: {_e(title)}</h2>',
        "<table class='index'><tr><th>id</th><th>where</th><th>verdict</th><th>paper</th>"
        f"<th>ours (paper's digits)</th></tr>{index}</table>",
    ]
    out += [_claim(c, captions, profile, directory) for c in rows]
    out.append("</section>")
    return "\n".join(out)


def _dl(items: list[tuple[str, str]]) -> str:
    return "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in items if v) + "</dl>"


def _claim(c: dict, captions: dict, profile: str, directory: Path | None) -> str:
    values = c.get("values") or []
    ours = f"<code>{_e(short_ours(c, width=160))}</code>" if values or c.get("ours") else ""
    if values:
        full = "".join(
            f"<tr><th>{_e(v.get('label') or 'value')}</th><td class='mono'>{_e(v.get('text', v['value']))}</td></tr>"
            for v in values
        )
        ours += f"<details><summary>full digits</summary><table>{full}</table></details>"
    items = [
        ("where", f"{_e(c['where'])} ({_e(c.get('kind'))})"),
        ("statement", _e(c["statement"])),
        ("paper", f"<code>{_e(c['paper_value'])}</code>"),
        ("ours", ours or "—"),
        (
            "tolerance",
            "<br>".join(
                f"<code>{_e(t['value'])}</code>{' (' + _e(t['label']) + ')' if t.get('label') else ''}: "
                f"{_e(t['reason'])}"
                for t in c.get("tolerance") or []
            ),
        ),
        ("reading" + (" (fitted)" if c.get("fitted") else ""), _e(c.get("reading"))),
        (
            "alternatives",
            "<br>".join(f"{_e(a)} gives {_e(g)}" for a, g in (c.get("alternatives") or {}).items()),
        ),
        ("by construction", _e(c.get("by_construction"))),
        ("vacuous", _e(c.get("vacuous"))),
        ("discrepancy", _e(c.get("discrepancy"))),
        ("evidence", _e(c.get("evidence")) or "—"),
        ("power", _power(c)),
        ("checks", _checks(c)),
        ("last run", _e(c.get("last_run"))),
    ]
    figs = "".join(_figure(f, captions.get(f, [c["id"]]), profile, directory) for f in c.get("figures") or [])
    return (
        f'<article class="claim" id="{_e(c["id"])}" {_data(c)}><div class="body">'
        f"<h3>{_e(c['id'])} — {_v(c['verdict'])}</h3>{_dl(items)}</div>"
        + (f'<div class="figs">{figs}</div>' if figs else "")
        + "</article>"
    )


def _power(c: dict) -> str:
    rows = c.get("power_checks") or []
    if not rows and c.get("power") is not None:
        rows = [{"power": c["power"], "alternative": c.get("alternative") or "", "method": "", "label": None}]
    return "<br>".join(
        f"{float(p['power']):.3f}{' (' + _e(p['label']) + ')' if p.get('label') else ''} against "
        f"{_e(p.get('alternative'))}{' [' + _e(p['method']) + ']' if p.get('method') else ''}"
        for p in rows
    )


def _checks(c: dict) -> str:
    rows = c.get("check_outcomes") or []
    return "<br>".join(
        f"<code>{_e(r['nodeid'])}</code> <b>{_e(r['outcome'])}</b>{': ' + _e(r['message']) if r.get('message') else ''}"
        for r in rows
    )


def _figure(fig: str, claim_ids: list[str], profile: str, directory: Path | None) -> str:
    caption = figure_caption(fig, claim_ids, profile)
    uri = figure_data_uri(directory, fig)
    if uri is None:
        return (
            f'<figure><p class="missing">figure {_e(fig)} is missing</p><figcaption>{_e(caption)}</figcaption></figure>'
        )
    return f'<figure><img src="{_e(uri)}" alt="{_e(caption)}"><figcaption>{_e(caption)}</figcaption></figure>'
