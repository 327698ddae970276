"""Tests of verify.coverage: the location parser, the paper-text parser, the map and the CLI."""

import json
import subprocess
import sys
import textwrap

import pytest

from verify import __main__ as verify_main
from verify import coverage as cv
from verify.registry import Claim, load_registry


# ------------------------------------------------------------------ locations (claims' where)
@pytest.mark.parametrize(
    ("where", "labels"),
    [
        (
            "Appendix B.2, proof of Proposition B.4, Eq. (34); Appendix E.1, Lemma E.1, Eq. (52)",
            ["Appendix B.2", "Proposition B.4", "Eq. (34)", "Appendix E.1", "Lemma E.1", "Eq. (52)"],
        ),
        ("Section 3.2 (after Eq. (7))", ["Section 3.2", "Eq. (7)"]),
        ("Table 1", ["Table 1"]),
        ("Figure 1 caption", ["Figure 1"]),
        ("Figure 3(a); Figure 1b-d; Figure 2 top left", ["Figure 3", "Figure 1", "Figure 2"]),
        (
            "Appendix E.2, Eqs. (53)-(54); Appendix F.6, text around Eqs. (84)-(86)",
            ["Appendix E.2", "Eq. (53)", "Eq. (54)", "Appendix F.6", "Eq. (84)", "Eq. (85)", "Eq. (86)"],
        ),
        ("Sections 4, 7.4 and 9 (Scope and extensions)", ["Section 4", "Section 7.4", "Section 9"]),
        ("Appendix F.4-F.5, after Eq. (80)", ["Appendix F.4", "Appendix F.5", "Eq. (80)"]),
        ("full derivations in Apps. B–D", ["Appendix B", "Appendix C", "Appendix D"]),
        ("Propositions 4 and 12, Lemma 14", ["Proposition 4", "Proposition 12", "Lemma 14"]),
        ("Section 8, 'Identical checkpoints'; Table 1, rows T = 0 and T = 100", ["Section 8", "Table 1"]),
        ("Section 1 (Marcotte et al. 2023)", ["Section 1"]),
        (
            "Hypothesis E.10 (self-stabilized EoS regime); Definition E.7 and Theorem E.8",
            ["Hypothesis E.10", "Definition E.7", "Theorem E.8"],
        ),
        ("the common representation in Equation 1", ["Eq. (1)"]),
        (
            "Theorem[4.2](https://arxiv.org/html/x#S4.Thmtheorem2) and Appendix[E.1](https://a/b#A5.SS1)",
            ["Theorem 4.2", "Appendix E.1"],
        ),
        ("Abstract; Introduction", []),
    ],
)
def test_find_refs(where, labels):
    assert [cv.format_label(r) for r in cv.find_refs(where)] == labels


def test_a_singular_word_takes_no_list():
    # "Section 8, 2 runs": the 2 is no section
    assert cv.find_refs("Section 8, 2 runs") == [("section", "8")]
    assert cv.find_refs("Sections 8, 2 and 3") == [("section", n) for n in ("8", "2", "3")]


@pytest.mark.parametrize(
    ("where", "placed"),
    [
        ("Section 3.2 (after Eq. (7)); Appendix E.1", ["Section 3.2", "Appendix E.1"]),
        ("Appendix B, Eq. (18) (lost in the text; cited by Figure 1)", ["Appendix B", "Eq. (18)"]),
        ("Appendix 14 (kernel J); used in Appendix 13 and Proposition 11", ["Appendix 14"]),
        ("Section 6 before Eq. (20); Appendix F.2", ["Section 6", "Appendix F.2"]),
        (
            "Section 5.3 (last paragraph, 'See Figure 9 in Appendix G'); Appendix G, Figure 8",
            ["Section 5.3", "Appendix G", "Figure 8"],
        ),
    ],
)
def test_where_refs_drops_landmarks(where, placed):
    assert cv.where_refs(where) == [cv.label_ref(label) for label in placed]


def test_section_and_appendix_numbers_share_one_item():
    assert cv.find_refs("Section 13") == cv.find_refs("Appendix 13") == [("section", "13")]


@pytest.mark.parametrize(
    "label", ["Eq (4)", "Eq. 4", "Thm. 1", "Figure 2 caption", "Lemma 7 and Lemma 9", "Abstract", "Eqs. (1)-(2)"]
)
def test_label_ref_rejects_non_canonical_labels(label):
    with pytest.raises(ValueError, match="label"):
        cv.label_ref(label)


# ------------------------------------------------------------------ paper texts
MARKDOWN = textwrap.dedent(r"""
    ---
    title: "A paper"
    abstract: "We prove Theorem 9 and show Figure 9: nothing."
    ---

    # A paper

    ## Abstract

    We prove Theorem 1 (see Lemma 4) and Corollary 2.

    ## 1 Introduction

    Theorem 1 uses a bound; see Theorem 1. Appendix 5.1 has the details.

    **Theorem 1.** For all $x$, $f(1)=2$ and the bound (3) holds.

    Lemma 2 (Tracking). It tracks.

    $$ a = b \tag{3} $$

    $$ c = d $$ (4)

    ### 1.1 Setting

    ![Figure 1: The setting.](fig1.png)
    *Figure 1: The setting.*

    Table 1: Counts. The event is bounded by (5)–(7) and by Lemmas 8 and 9.

    ## 2 Related Work

    Following Smith et al. (2020) in Appendix C.3, nothing. By Theorem 3 of Smith et al., more.

    ## 3 Conclusion

    ## 4 Proofs

    ### 4.1 Proof of Theorem 1

    ## References

    Smith, J. Theorem 7 of nothing. Journal 22(106):1–51, 2021. See Figure 8.
    """)

HTML = (
    "## 3Problem Setup\n\n"
    "Ωh:=Wh\\.\\\\Omega\\_\\{h\\}\\.\\(1\\)The overall map is\n\n"
    "M:=∑Ωh\\.M\\\\;:=\\\\;\\\\sum\\\\Omega\\_\\{h\\}\\.\\(2\\)As in prior work, g\\_\\{\\\\alpha\\}\\(1\\)=1, "
    "and \\\\gamma\\_\\{W\\}\\(50\\)\\\\approx 7\\.\n\n"
    "### 3\\.1Optimization Objective\n\n"
    "ℒ=12‖M‖\\.\\\\mathcal\\{L\\}\\.\\(3\\)\n\n"
    "Figure 1:Training dynamics\\.######Theorem 4\\.2\\(Sharpness Reduction\\)\\.\n\n"
    "Assume L>2\\. By \\([2](https://arxiv.org/html/x#S3.E2)\\) and "
    "Theorem[4\\.2](https://arxiv.org/html/x#S4.Thmtheorem2)\\.\n"
    "Text\\.### 5\\.1Two Stages\n\n"
    "###### Proposition 5\\.1\\(Heterogeneous Depth\\)\\.\n\n"
    "## 8Conclusion\n\n"
    "## Appendix ANotation\n\n"
    "## Appendix BInvariance\n\n"
    "### B\\.1SVS parametrization\n\n"
    "###### Definition B\\.1\\(SVS\\)\\.\n\n"
    "###### Proof of Theorem[4\\.2](https://arxiv.org/html/x#S4.Thmtheorem2)\\.\n\n"
    "![Refer to caption](x7.png)Figure 3:Symmetry Breaking\\.\n"
)


def test_defined_labels_markdown():
    assert cv.defined_labels(MARKDOWN) == [
        "Section 1",
        "Theorem 1",
        "Lemma 2",
        "Eq. (3)",
        "Eq. (4)",
        "Section 1.1",
        "Figure 1",
        "Table 1",
        "Section 2",
        "Section 3",
        "Appendix 4",
        "Appendix 4.1",
    ]


def test_cited_labels_markdown():
    # references to items the text never states; front matter, references and other papers' items excluded
    assert cv.cited_labels(MARKDOWN) == [
        "Lemma 4",
        "Corollary 2",
        "Appendix 5.1",
        "Eq. (5)",
        "Eq. (6)",
        "Eq. (7)",
        "Lemma 8",
        "Lemma 9",
    ]


def test_paper_labels_is_both_in_text_order():
    labels = cv.paper_labels(MARKDOWN)
    assert set(labels) == set(cv.defined_labels(MARKDOWN)) | set(cv.cited_labels(MARKDOWN))
    assert labels.index("Lemma 4") < labels.index("Section 1") < labels.index("Theorem 1")


def test_a_reference_is_no_definition():
    text = "## 1 Intro\n\nTheorem 1 uses SGD.\nSee Theorem 2. Lemma 3 shows it.\nAs in Lemma 4.\n"
    assert cv.defined_labels(text) == ["Section 1"]
    assert cv.cited_labels(text) == ["Theorem 1", "Theorem 2", "Lemma 3", "Lemma 4"]


def test_defined_labels_html_conversion():
    assert cv.defined_labels(HTML) == [
        "Section 3",
        "Eq. (1)",
        "Eq. (2)",
        "Section 3.1",
        "Eq. (3)",
        "Figure 1",
        "Theorem 4.2",
        "Section 5.1",
        "Proposition 5.1",
        "Section 8",
        "Appendix A",
        "Appendix B",
        "Appendix B.1",
        "Definition B.1",
        "Figure 3",
    ]
    assert cv.cited_labels(HTML) == []


def test_equation_tags_increase():
    # an HTML conversion glues tags to the equation; function values g(1), gamma(100) are no tags
    text = "a\\.\\(1\\)b, g\\_\\{a\\}\\(1\\)=1 c\\.\\(2\\)d \\\\gamma\\_\\{W\\}\\(100\\)\\\\approx e,\\(3\\)"
    assert cv.defined_labels(text) == ["Eq. (1)", "Eq. (2)", "Eq. (3)"]


def test_numbered_sections_after_the_conclusion_are_appendices():
    text = "## 1 Intro\n## 2 Conclusion and Future Work\n## 3 Proofs\n### 3.1 Lemma\n"
    assert cv.defined_labels(text) == ["Section 1", "Section 2", "Appendix 3", "Appendix 3.1"]
    # a section cited as an appendix is one
    assert cv.defined_labels("## 1 Intro\n## 2 Details\nSee Appendix 2.\n") == ["Section 1", "Appendix 2"]


def test_paper_files_reads_the_index(tmp_path):
    (tmp_path / "000_a.txt").write_text("## 1 Intro\n")
    (tmp_path / "README.md").write_text(
        "| file | short name |\n|---|---|\n| `000_a.txt` | rare_gates | x |\n| `001_b.txt` | multipath | y |\n"
    )
    assert cv.paper_files(tmp_path) == {"rare_gates": tmp_path / "000_a.txt"}
    assert cv.paper_files(tmp_path / "absent") == {}


# ------------------------------------------------------------------ the map
def _claim(cid, where, paper="rare_gates"):
    return Claim(id=cid, paper=paper, where=where, statement="s", paper_value="1", kind="constant")


def _write_map(directory, body, paper="rare_gates"):
    (directory / paper).mkdir(parents=True, exist_ok=True)
    (directory / paper / cv.MAP_FILE).write_text(textwrap.dedent(body))
    return directory


MAP = """
    [[item]]
    label = "Section 3"

    [[item]]
    label = "Section 3.1"

    [[item]]
    label = "Theorem 1"
    claims = ["RG-x"]

    [[item]]
    label = "Section 2"
    excluded = "related work"

    [[item]]
    label = "Eq. (4)"

    [[item]]
    label = "Figure 1"
"""


def test_coverage_rows(tmp_path):
    registry = {
        "RG-a": _claim("RG-a", "Section 3.1, Eq. (4)"),
        "RG-b": _claim("RG-b", "Figure 1 centre-left; Section 3 (after Theorem 1)"),
        "RG-x": _claim("RG-x", "Abstract"),
        "MP-a": _claim("MP-a", "Section 2", paper="multipath"),
    }
    rows = cv.coverage("rare_gates", registry, _write_map(tmp_path, MAP))
    got = {r.label: (r.claims, r.excluded, r.status) for r in rows}
    assert got == {
        "Section 3": (["RG-a", "RG-b"], None, "covered"),  # RG-a through its subsection 3.1
        "Section 3.1": (["RG-a"], None, "covered"),
        "Theorem 1": (["RG-x"], None, "covered"),  # listed in the map; "after Theorem 1" is a landmark
        "Section 2": ([], "related work", "excluded"),  # the multipath claim does not count
        "Eq. (4)": (["RG-a"], None, "covered"),
        "Figure 1": (["RG-b"], None, "covered"),
    }
    assert [r.label for r in rows] == ["Section 3", "Section 3.1", "Theorem 1", "Section 2", "Eq. (4)", "Figure 1"]


def test_uncovered_item(tmp_path):
    rows = cv.coverage("rare_gates", {}, _write_map(tmp_path, '[[item]]\nlabel = "Lemma 7"\n'))
    assert [(r.label, r.claims, r.excluded, r.status) for r in rows] == [("Lemma 7", [], None, "uncovered")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[item]]\nlabel = "Lemma 7"\nreason = "x"\n', "unknown fields"),
        ('[[item]]\nexcluded = "x"\n', "lacks a label"),
        ('[[item]]\nlabel = "Lemma 7 and Lemma 8"\n', "exactly one item"),
        ('[[item]]\nlabel = "Eq. 4"\n', "not canonical"),
        ('[[item]]\nlabel = "Appendix 4"\n[[item]]\nlabel = "Section 4"\n', "repeats"),
        ('[[item]]\nlabel = "Lemma 7"\nexcluded = ""\n', "non-empty reason"),
        ('[[item]]\nlabel = "Lemma 7"\nclaims = "RG-a"\n', "list of claim ids"),
        ('[[item]]\nlabel = "Lemma 7"\nnote = " "\n', "note must be a non-empty text"),
        ('[[claim]]\nid = "RG-a"\n', "unknown tables"),
        ("[[item]\n", "coverage.toml"),
    ],
)
def test_malformed_maps(tmp_path, body, message):
    with pytest.raises(cv.CoverageError, match=message):
        cv.load_map("rare_gates", _write_map(tmp_path, body))


def test_note_is_kept_and_printed_under_its_item(tmp_path):
    rows = cv.coverage(
        "rare_gates", {}, _write_map(tmp_path, '[[item]]\nlabel = "Lemma 7"\nexcluded = "x"\nnote = "only in part"\n')
    )
    assert rows[0].note == "only in part" and rows[0].as_json()["note"] == "only in part"
    text = cv.render_text({"papers": {"rare_gates": [r.as_json() for r in rows]}})
    assert text.splitlines()[2].strip() == "note: only in part"


def test_missing_map(tmp_path):
    with pytest.raises(cv.CoverageError, match="no coverage map"):
        cv.load_map("rare_gates", tmp_path)


def test_stale_exclusion_and_unknown_claims(tmp_path):
    registry = {"RG-a": _claim("RG-a", "Lemma 7"), "MP-a": _claim("MP-a", "Lemma 7", paper="multipath")}
    with pytest.raises(cv.CoverageError, match="excluded .* but claims cover it"):
        cv.coverage("rare_gates", registry, _write_map(tmp_path, '[[item]]\nlabel = "Lemma 7"\nexcluded = "x"\n'))
    with pytest.raises(cv.CoverageError, match="not registered for rare_gates: \\['MP-a', 'RG-zz'\\]"):
        cv.coverage(
            "rare_gates", registry, _write_map(tmp_path, '[[item]]\nlabel = "Lemma 8"\nclaims = ["MP-a", "RG-zz"]\n')
        )


def test_render_text_and_counts():
    report = {
        "papers": {
            "rare_gates": [
                {"label": "Section 1", "claims": ["RG-1.027", "RG-1.059"], "excluded": None},
                {"label": "Section 2", "claims": [], "excluded": "related work"},
                {"label": "Lemma 7", "claims": [], "excluded": None},
            ]
        }
    }
    lines = cv.render_text(report).splitlines()
    assert lines[0].startswith("rare_gates: Rare Gate Disagreements")
    assert lines[1].split() == ["Section", "1", "covered", "RG-1.027,", "RG-1.059"]
    assert lines[2].split()[:3] == ["Section", "2", "excluded"] and lines[2].endswith("related work")
    assert lines[3].split()[:3] == ["Lemma", "7", "UNCOVERED"]
    assert lines[4].strip() == "rare_gates: 3 items: 1 covered, 1 excluded, 1 uncovered"


# ------------------------------------------------------------------ the command line
def run_cli(argv, capsys, entry=verify_main.main):
    code = entry(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_shape(capsys):
    code, out, err = run_cli(["coverage", "--format", "json"], capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert list(data) == ["papers"] and sorted(data["papers"]) == ["central_flow", "multipath", "rare_gates"]
    for rows in data["papers"].values():
        assert rows
        for row in rows:
            assert list(row) == ["label", "claims", "excluded", "note"]
            assert isinstance(row["label"], str) and isinstance(row["claims"], list)
            assert row["note"] is None or (isinstance(row["note"], str) and row["note"].strip())
            assert row["excluded"] is None or (isinstance(row["excluded"], str) and not row["claims"])


def test_cli_one_paper_json(capsys):
    code, out, _ = run_cli(["coverage", "--paper", "multipath", "--format", "json"], capsys)
    rows = json.loads(out)["papers"]["multipath"]
    assert code == 0 and list(json.loads(out)["papers"]) == ["multipath"]
    by_label = {r["label"]: r for r in rows}
    assert "MP-4.2" in by_label["Theorem 4.2"]["claims"]
    assert by_label["Section 2"]["excluded"] and by_label["Section 2"]["claims"] == []


def test_cli_text(capsys):
    code, out, err = run_cli(["coverage", "--paper", "central_flow"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("central_flow: Symmetry Breaking")
    assert any(line.split()[:3] == ["Figure", "1", "covered"] for line in lines)
    c = cv.counts(cv.coverage_report(["central_flow"])["papers"]["central_flow"])
    assert lines[-1].strip() == (
        f"central_flow: {c['items']} items: {c['covered']} covered, "
        f"{c['excluded']} excluded, {c['uncovered']} uncovered"
    )


def test_coverage_main_alone(capsys):
    code, out, _ = run_cli(["--paper", "rare_gates"], capsys, entry=cv.main)
    assert code == 0 and out.startswith("rare_gates: ")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["coverage", "--paper", "nope"], "argument --paper: unknown paper 'nope'"),
        (["coverage", "--format", "csv"], "argument --format"),
        (["coverage", "extra"], "unrecognized arguments: extra"),
        ([], "a command is required"),
        (["audit"], "invalid choice: 'audit'"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, needle, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("python -m verify") and ": error: " in err and needle in err


def test_cli_bad_map_exits_1(tmp_path, monkeypatch, capsys):
    _write_map(tmp_path, '[[item]]\nlabel = "Eq. 4"\n')
    monkeypatch.setattr(cv, "claims_dir", lambda: tmp_path)
    code, out, err = run_cli(["coverage", "--paper", "rare_gates"], capsys)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "not canonical" in err


def test_python_dash_m(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "verify", "coverage", "--paper", "nope"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "python -m verify coverage: error: argument --paper: unknown paper 'nope'; "
        + "choose from rare_gates, central_flow, multipath"
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "verify", "coverage", "-h"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and "--paper NAME" in proc.stdout and "coverage.toml" in proc.stdout


def test_the_registry_skips_coverage_maps(tmp_path):
    (tmp_path / "rare_gates").mkdir()
    (tmp_path / "rare_gates" / "a.toml").write_text(
        '[[claim]]\nid = "T-1"\npaper = "rare_gates"\nwhere = "Section 1"\nstatement = "s"\n'
        'paper_value = "1"\nkind = "constant"\n'
    )
    (tmp_path / "rare_gates" / cv.MAP_FILE).write_text('[[item]]\nlabel = "Section 1"\n')
    assert list(load_registry(tmp_path)) == ["T-1"]
    assert [r.claims for r in cv.coverage("rare_gates", load_registry(tmp_path), tmp_path)] == [["T-1"]]


# ------------------------------------------------------------------ the shared paper texts
def _shared_text(paper):
    files = cv.paper_files()
    if paper not in files:
        pytest.skip(f"paper text of {paper} not found under {cv.papers_dir()}")
    return files[paper].read_text(encoding="utf-8")


def test_parser_on_the_multipath_text():
    labels = cv.defined_labels(_shared_text("multipath"))
    assert [x for x in labels if x.startswith("Eq.")] == [f"Eq. ({n})" for n in range(1, 88)]
    assert [x for x in labels if x.startswith("Figure")] == [f"Figure {n}" for n in range(1, 11)]
    assert "Theorem 4.2" in labels and "Hypothesis E.10" in labels and "Appendix G" in labels
    assert "Appendix C.3.2" not in cv.paper_labels(_shared_text("multipath"))  # Ghosh et al.'s appendix


def test_parser_on_the_rare_gates_text():
    text = _shared_text("rare_gates")
    labels = cv.defined_labels(text)
    assert labels[:3] == ["Section 1", "Section 2", "Section 3"] and "Appendix 13" in labels
    assert "Section 9" in labels and "Appendix 11.1" in labels and {"Table 1", "Table 2"} <= set(labels)
    # the statements lost their labels in conversion; the text still cites them
    assert not [x for x in labels if x.split()[0] in ("Theorem", "Lemma", "Proposition", "Corollary")]
    assert {"Theorem 1", "Corollary 5", "Lemma 7", "Eq. (4)", "Eq. (38)", "Figure 3"} <= set(cv.cited_labels(text))


def test_parser_on_the_central_flow_text():
    text = _shared_text("central_flow")
    assert cv.defined_labels(text) == [f"Section {n}" for n in range(1, 5)] + [f"Figure {n}" for n in range(1, 5)]
    assert set(cv.cited_labels(text)) == {
        "Eq. (1)",
        "Eq. (2)",
        "Eq. (18)",
        "Eq. (23)",
        "Appendix A",
        "Appendix B",
        "Appendix C",
        "Appendix D",
        "Table 1",
    }
