"""report.html (verify/report_html.py): a self-contained page, escaped, one element per claim.

The browser tests load the page in headless Chromium through selenium (Debian's
``chromium`` and ``chromium-driver``: /usr/bin/chromium, /usr/bin/chromedriver; ``pip
install -e ".[browser]"``) and skip with the reason where either is missing. They check
every claim element, the filters and that every embedded image decodes; the real
report (verify-report/report.json, if present) is checked too.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.synthetic_report import HOSTILE, png_bytes, synthetic_report, version0_report
from verify.report import FLAGGED, render_markdown, write_report
from verify.report_html import figure_data_uri, render_html

pytest_plugins = ["pytester"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REAL_REPORT = Path(__file__).resolve().parents[1] / "verify-report"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    directory = tmp_path_factory.mktemp("report")
    return synthetic_report(directory), directory


def _claim_ids(page: str) -> list[str]:
    return re.findall(r'<article class="claim" id="([^"]+)"', page)


# ------------------------------------------------------------------ the page itself


def test_write_report_writes_html_beside_the_markdown(synthetic):
    report, directory = synthetic
    page = (directory / "report.html").read_text(encoding="utf-8")
    assert page == render_html(report, directory)
    assert (directory / "report.md").read_text() == render_markdown(report)


def test_every_claim_is_an_element_with_its_id(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    assert _claim_ids(page) == [c["id"] for c in _paper_order(report)]
    for c in report["claims"]:
        assert f'href="#{c["id"]}"' in page  # the index links to it


def _paper_order(report):
    from verify.registry import PAPERS

    return [c for p in PAPERS for c in report["claims"] if c["paper"] == p]


def test_page_is_self_contained(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    sources = re.findall(r'\bsrc="([^"]*)"', page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r'<script[^>]+src=|href="(?!#)', page)  # inline script only, links within the page
    assert "default-src 'none'; img-src data:" in page  # the page itself forbids fetching anything


def test_figures_are_embedded_with_captions_naming_claims_and_profile(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    data = base64.b64encode((directory / "figures" / "t_fig.png").read_bytes()).decode()
    assert f'src="data:image/png;base64,{data}"' in page
    assert "t_shared: T-2.fig, T-3.cf (profile quick)" in page  # a figure shared by two claims names both
    assert "figure figures/t_absent.png is missing" in page
    article = page.split('id="T-2.fig"')[1].split("</article>")[0]
    assert article.count("<figure>") == 3


def test_all_text_is_escaped(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    assert HOSTILE not in page and "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quoted&quot;" in page
    assert page.count("<script>") == 1  # the page's own filter script


def test_claim_shows_short_and_full_values_tolerance_power_and_checks(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    ok = page.split('id="T-1.ok"')[1].split("</article>")[0]
    assert "<code>0.5947152; [0.5, 0.75]</code>" in ok  # to the paper's 7 digits
    assert "<details><summary>full digits</summary>" in ok and "0.59471526" in ok
    assert "1e-12</code>: 4500 x float64 eps over 20 steps" in ok
    assert "verify/t/test_T_1_ok.py::test_passed</code> <b>passed</b>" in ok
    mc = page.split('id="T-1.mc"')[1].split("</article>")[0]
    assert "0.420 against a relative 25% in the proportion [exact binomial]" in mc
    fail = page.split('id="T-1.fail"')[1].split("</article>")[0]
    assert "<b>failed</b>: AssertionError: 1 == 2" in fail


def test_summary_then_flagged_then_papers(synthetic):
    report, directory = synthetic
    page = render_html(report, directory)
    assert page.index('id="summary"') < page.index('id="flagged"') < page.index('id="filters"') < page.index("<article")
    flagged = page.split('id="flagged"')[1].split("</ul>")[0]
    assert re.findall(r'href="#([^"]+)"', flagged) == [c["id"] for c in report["claims"] if c["verdict"] in FLAGGED]


def test_a_version_0_report_renders(tmp_path):
    v0 = version0_report("x = 0.2500001")
    page = render_html(v0, tmp_path)
    assert 'id="MP-6.map"' in page and "<code>0.25</code>" in page and "not recorded" in page


def test_figure_outside_the_report_directory_is_not_read(tmp_path):
    (tmp_path / "inside").mkdir()
    (tmp_path / "outside.png").write_bytes(png_bytes())
    assert figure_data_uri(tmp_path / "inside", "../outside.png") is None
    assert figure_data_uri(tmp_path, "outside.png").startswith("data:image/png;base64,")
    assert figure_data_uri(None, "outside.png") is None


# ------------------------------------------------------------------ in a browser


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        pytest.skip(f"selenium is not importable ({exc}): pip install -e '.[browser]'")

    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            pytest.skip(f"{path} is missing (apt-get install -y {package})")
    profile = tempfile.mkdtemp(prefix="report-html-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


_VISIBLE = (
    "return Array.from(document.querySelectorAll('article.claim')).filter(e => e.offsetParent !== null).map(e => e.id)"
)
_IMAGES = "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])"


def _visible(driver) -> list[str]:
    return list(driver.execute_script(_VISIBLE))


def _check_page(driver, report, directory):
    driver.get((directory / "report.html").as_uri())
    ids = driver.execute_script("return Array.from(document.querySelectorAll('article.claim')).map(e => e.id)")
    assert sorted(ids) == sorted(c["id"] for c in report["claims"])
    for c in report["claims"][:20]:
        assert driver.find_element("id", c["id"]).tag_name == "article"
    assert sorted(_visible(driver)) == sorted(ids)
    images = driver.execute_script(_IMAGES)
    assert all(done and w > 0 and h > 0 for done, w, h in images), images
    return images


def test_browser_shows_every_claim_and_renders_images(browser, synthetic):
    report, directory = synthetic
    images = _check_page(browser, report, directory)
    assert sorted(w for _, w, _ in images) == [2, 2, 4]  # t_fig (4 px) once, t_shared (2 px) for two claims
    assert (
        browser.find_element("id", "shown").text == f"{len(report['claims'])} of {len(report['claims'])} claims shown"
    )


def test_browser_filters(browser, synthetic):
    from selenium.webdriver.support.ui import Select

    report, directory = synthetic
    browser.get((directory / "report.html").as_uri())
    claims = report["claims"]
    Select(browser.find_element("id", "filter-paper")).select_by_value("rare_gates")
    assert sorted(_visible(browser)) == sorted(c["id"] for c in claims if c["paper"] == "rare_gates")
    Select(browser.find_element("id", "filter-kind")).select_by_value("constant")
    want = sorted(c["id"] for c in claims if c["paper"] == "rare_gates" and c["kind"] == "constant")
    assert sorted(_visible(browser)) == want and len(want) == 4
    assert browser.find_element("id", "shown").text == f"4 of {len(claims)} claims shown"
    browser.find_element("id", "filter-reset").click()
    assert len(_visible(browser)) == len(claims)
    Select(browser.find_element("id", "filter-verdict")).select_by_value("confirmed")
    assert sorted(_visible(browser)) == sorted(c["id"] for c in claims if c["verdict"] == "confirmed")
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.index tr[data-claim]'))"
        ".filter(e => e.offsetParent !== null)"
    )
    assert len(rows) == sum(c["verdict"] == "confirmed" for c in claims)  # the index rows follow the filter
    # a count in the summary table sets the paper and verdict filters
    browser.find_element(
        "css selector", "button.count[data-set-paper='rare_gates'][data-set-verdict='discrepancy']"
    ).click()
    assert _visible(browser) == ["T-1.disc"]
    assert Select(browser.find_element("id", "filter-verdict")).first_selected_option.text == "discrepancy"


def test_browser_link_to_a_claim_reveals_it(browser, synthetic):
    from selenium.webdriver.support.ui import Select

    report, directory = synthetic
    browser.get((directory / "report.html").as_uri())
    Select(browser.find_element("id", "filter-paper")).select_by_value("multipath")
    assert "T-1.ok" not in _visible(browser)
    browser.get((directory / "report.html").as_uri() + "#T-1.ok")
    assert browser.execute_script("return document.querySelector(':target').id") == "T-1.ok"
    assert "T-1.ok" in _visible(browser)


def test_browser_real_report(browser, tmp_path):
    source = REAL_REPORT / "report.json"
    if not source.exists():
        pytest.skip(f"no audit report at {source} (run pytest verify first)")
    report = json.loads(source.read_text())
    if (REAL_REPORT / "figures").is_dir():
        shutil.copytree(REAL_REPORT / "figures", tmp_path / "figures")
    write_report(report, tmp_path)  # written from a copy: the real report directory is left as it is
    migrated = json.loads((tmp_path / "report.json").read_text())
    _check_page(browser, migrated, tmp_path)
    flagged = [c["id"] for c in migrated["claims"] if c["verdict"] in FLAGGED]
    if flagged:
        from selenium.webdriver.support.ui import Select

        Select(browser.find_element("id", "filter-verdict")).select_by_value(
            next(c["verdict"] for c in migrated["claims"] if c["id"] == flagged[0])
        )
        assert flagged[0] in _visible(browser)


# ------------------------------------------------------------------ through the plugin

_INI = """
[pytest]
markers =
    claim(id, reading=None, discrepancy=None): ties a check to a registered paper claim
"""


def test_plugin_writes_html_with_values_tolerance_and_figure(pytester):
    from verify.registry import load_registry

    if "RG-16.Rcol" not in load_registry():
        pytest.skip("RG-16.Rcol is not registered in verify/claims; the plugin needs a registered id")
    pytester.makeini(_INI)
    pytester.makepyfile(
        test_rcol="""
        import sympy
        from numerics.plotting import plt
        from verify.audit import claim, rounds_to

        @claim("RG-16.Rcol")
        def test_rcol(audit):
            ours = 1 - (2 / sympy.pi) ** 2
            audit.ours(ours, label="R_col")
            audit.ours({"n": 3, "x": [0.5, 0.25]})
            audit.tolerance(0.5e-7, "half a unit of the paper's last digit")
            fig, ax = plt.subplots(figsize=(1, 1))
            ax.plot([0, 1], [0, 1])
            audit.figure(fig, "rcol")
            assert rounds_to(ours, "0.5947152...")
        """
    )
    result = pytester.runpytest_inprocess("-p", "verify.plugin", "--report-dir", "out", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = pytester.path / "out"
    report = json.loads((out / "report.json").read_text())
    claim = next(c for c in report["claims"] if c["id"] == "RG-16.Rcol")
    assert claim["values"][0]["label"] == "R_col" and abs(claim["values"][0]["value"] - 0.5947152656) < 1e-9
    assert claim["values"][1] == {"label": None, "value": {"n": 3, "x": [0.5, 0.25]}, "text": "n: 3; x: [0.5, 0.25]"}
    assert claim["tolerance"] == [{"value": 5e-8, "reason": "half a unit of the paper's last digit", "label": None}]
    page = (out / "report.html").read_text(encoding="utf-8")
    data = base64.b64encode((out / "figures" / "rcol.png").read_bytes()).decode()
    assert f'src="data:image/png;base64,{data}"' in page and 'id="RG-16.Rcol"' in page
    md = (out / "report.md").read_text()
    assert "![rcol: RG-16.Rcol (profile quick)](figures/rcol.png)" in md
    assert "| RG-16.Rcol |" in md and "| 0.5947152; {n: 3, x: [0.5, 0.25]} |" in md
