"""Tests of numerics.table_wcr (the gamma_WCR table CLI) and of numerics.multipath.wcr's API."""

import csv
import io
import json
import subprocess
import sys
import time

import mpmath
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from numerics import table_wcr
from numerics.multipath import wcr


def run_main(argv, capsys):
    """(exit code, stdout, stderr) of table_wcr.main(argv), SystemExit included."""
    try:
        code = table_wcr.main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ formats
def test_default_text_table(capsys):
    code, out, err = run_main([], capsys)
    lines = out.strip().splitlines()
    assert code == 0 and err == ""
    assert lines[0].split() == ["L", "y", "gamma_WCR(L)", "gamma_WCR/2"]
    assert [int(line.split()[0]) for line in lines[1:]] == list(table_wcr.PAPER_DEPTHS)
    assert lines[1].split()[2] == "3.19615242271"  # 3 sqrt 3 - 2 to 12 significant digits


def test_csv_format(capsys):
    code, out, _ = run_main(["--L", "2", "3", "7", "--format", "csv", "--digits", "8"], capsys)
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0
    assert rows[0] == ["L", "y", "gamma_wcr", "ratio_to_2"]
    assert [r[0] for r in rows[1:]] == ["2", "3", "7"]
    for r in rows[1:]:
        assert float(r[3]) == pytest.approx(float(r[2]) / 2, rel=1e-7)  # both rounded to 8 digits


def test_csv_certified_columns(capsys):
    _, out, _ = run_main(["--L", "4", "--format", "csv", "--certify"], capsys)
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["L", "y", "gamma_wcr", "ratio_to_2", "enclosure_lo", "enclosure_hi"]
    assert float(rows[1][4]) <= float(rows[1][2]) + 1e-11 and float(rows[1][5]) >= float(rows[1][2]) - 1e-11


def test_json_fields_and_types(capsys):
    code, out, _ = run_main(["--L", "2", "50", "--format", "json", "--digits", "20"], capsys)
    data = json.loads(out)
    assert code == 0 and isinstance(data, list) and len(data) == 2
    for row in data:
        assert set(row) == {"L", "y", "gamma_wcr", "ratio_to_2"}
        assert isinstance(row["L"], int)
        assert all(isinstance(row[k], str) for k in ("y", "gamma_wcr", "ratio_to_2"))
        assert len(row["gamma_wcr"].replace(".", "").lstrip("0")) == 20  # significant digits
    with mpmath.workdps(40):
        assert abs(mpmath.mpf(data[0]["gamma_wcr"]) - (3 * mpmath.sqrt(3) - 2)) < mpmath.mpf("1e-19")


def test_markdown_table(capsys):
    code, out, _ = run_main(["--L", "2", "3", "--format", "markdown", "--certify", "--digits", "6"], capsys)
    lines = out.strip().splitlines()
    assert code == 0
    assert lines[0] == "| L | y | gamma_WCR(L) | gamma_WCR/2 | enclosure |"
    assert set(lines[1].replace("|", "")) <= set("-:")
    assert len(lines) == 4 and all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])


def test_L_max(capsys):
    _, out, _ = run_main(["--L-max", "12", "--format", "json", "--digits", "5"], capsys)
    assert [r["L"] for r in json.loads(out)] == list(range(2, 13))


def test_help_is_module_docstring(capsys):
    code, out, _ = run_main(["--help"], capsys)
    assert code == 0 and "worst-case-return constant" in out and "--certify" in out


def test_runs_as_module():
    proc = subprocess.run(
        [sys.executable, "-m", "numerics.table_wcr", "--L", "2", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout)[0]["L"] == 2


def test_defaults_are_fast():
    start = time.perf_counter()
    table_wcr.wcr_table()
    # measured ~0.05 s; 2 s is the stated budget for the CLI defaults (imports included ~0.5 s)
    assert time.perf_counter() - start < 2.0


# ------------------------------------------------------------------ errors
REFUSED = {"--L": ["1", "0", "2.5", "abc"], "--L-max": ["1"], "--digits": ["0", "-3", "1.5"], "--format": ["xml"]}


@pytest.mark.parametrize(
    "argv, name",
    [([name, value], name) for name, values in REFUSED.items() for value in values]
    + [(["--L", "2", "--L-max", "5"], "--L-max")],  # exclusive: --L-max is not allowed with --L
)
def test_bad_input_exits_2_naming_the_argument(argv, name, capsys):
    code, out, err = run_main(argv, capsys)
    assert code == 2 and out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m numerics.table_wcr: error:") and f"argument {name}" in last


@pytest.mark.parametrize("bad", [1, 0, -5, 2.5, "3", True, None])
def test_api_rejects_bad_depth(bad):
    with pytest.raises(ValueError, match="L"):
        wcr.gamma_wcr(bad)
    with pytest.raises(ValueError, match="L"):
        table_wcr.wcr_table([bad])


@pytest.mark.parametrize("bad", [0, -1, 2.0, "5", False])
def test_api_rejects_bad_digits(bad):
    with pytest.raises(ValueError, match="digits"):
        wcr.certify(3, bad)
    with pytest.raises(ValueError, match="digits"):
        table_wcr.wcr_table([3], digits=bad)


@pytest.mark.parametrize("bad", [0, -1, "x", float("inf")])
def test_api_rejects_bad_sigma(bad):
    with pytest.raises(ValueError, match="sigma"):
        wcr.eta_wcr(3, bad)


def test_numpy_integer_depth_accepted():
    assert wcr.gamma_wcr(np.int64(5), 10) == wcr.gamma_wcr(5, 10)


# ------------------------------------------------------------------ certified enclosures
@pytest.mark.parametrize("L, digits", [(2, 1), (2, 12), (5, 30), (100, 12), (10**6, 15), (10**12, 8)])
def test_enclosure_contains_value_and_is_narrow(L, digits):
    row = table_wcr.wcr_table([L], digits=digits, certify=True)[0]
    ref = wcr.gamma_wcr(L, digits + 25)  # independent solve at 25 more digits
    with mpmath.workdps(digits + 40):
        lo, hi = (mpmath.mpf(s) for s in row["enclosure"])
        assert lo <= ref <= hi
        assert hi - lo < mpmath.mpf(10) ** (-digits)
        # the printed value is ref rounded to ``digits`` significant digits
        assert (
            abs(mpmath.mpf(row["gamma_wcr"]) - ref)
            <= mpmath.mpf(10) ** (int(mpmath.floor(mpmath.log10(ref))) - digits + 1) / 2
        )


@pytest.mark.parametrize("L, digits", [(2, 12), (7, 20), (1000, 12), (10**9, 15)])
def test_certificate_covers_gamma_over_its_whole_root_bracket(L, digits):
    """The root is only known to lie in [t_lo, t_hi]: gamma at both ends must be inside the enclosure."""
    c = wcr.certify(L, digits)
    with mpmath.workdps(2 * digits + 60):  # above the bracket's own precision, so y = (1 + t)/2 is exact
        for t in (c.t_lo, c.t_hi):
            y = (1 + t) / 2
            gamma = L * y ** (mpmath.mpf(2) / L - 1) / ((2 * L - 1) * y - (L - 1))  # Eq. (81)
            assert c.gamma_lo <= gamma <= c.gamma_hi
            assert c.y_lo <= y <= c.y_hi


def test_closed_form_L2_inside_certificate():
    c = wcr.certify(2, 60)
    with mpmath.workdps(100):
        exact = 3 * mpmath.sqrt(3) - 2
        assert c.gamma_lo <= exact <= c.gamma_hi
        assert c.y_lo <= (9 + 2 * mpmath.sqrt(3)) / 23 <= c.y_hi


# ------------------------------------------------------------------ float64 against the mpmath oracle
def test_float_sweep_matches_mpmath_over_magnitudes():
    Ls = np.array([2, 3, 4, 17, 100, 1000, 65536, 10**6, 10**9, 10**12, 10**14])
    t, g = wcr.gamma_wcr_float(Ls)
    for L, tf, gf in zip(Ls.tolist(), t, g):
        # float64 bisection to the last bit of t; log-form evaluation keeps ~1e-15 relative
        assert gf == pytest.approx(float(wcr.gamma_wcr(L, 20)), rel=1e-12)
        assert tf == pytest.approx(float(wcr.root_t(L, 20)), rel=1e-11)


def test_float_sweep_validation():
    with pytest.raises(ValueError, match="Ls"):
        wcr.gamma_wcr_float([1, 2])
    with pytest.raises(ValueError, match="Ls"):
        wcr.gamma_wcr_float([2.5])


def test_knife_edge_agrees_with_root_equation():
    for L in (2, 7):
        assert abs(wcr.knife_edge_gamma(L, "0.5", 14) / wcr.gamma_wcr(L, 20) - 1) < mpmath.mpf(
            "1e-11"
        )  # ~11 reliable digits


# ------------------------------------------------------------------ properties
@given(st.integers(min_value=2, max_value=200))
@example(2)
@example(200)
def test_root_in_interval_gamma_above_2_and_increasing(L):
    c, nxt = wcr.certify(L, 10), wcr.certify(L + 1, 10)
    with mpmath.workdps(30):
        assert mpmath.mpf(L - 1) / (2 * L - 1) < c.y_lo and c.y_hi < 1
        assert c.gamma_lo > 2
        assert c.gamma_hi < nxt.gamma_lo


# ------------------------------------------------------------------ CLI polish
# repeated --L
@pytest.mark.parametrize(
    "argv, depths",
    [
        (["--L", "2", "--L", "3"], [2, 3]),
        (["--L", "3", "2", "--L", "3", "7", "2", "--L", "02"], [3, 2, 7]),  # duplicates dropped, first place kept
        (["--L", "7", "7", "7"], [7]),
    ],
)
def test_repeated_L_appends_and_drops_duplicates(argv, depths, capsys):
    code, out, err = run_main(argv + ["--format", "json", "--digits", "5"], capsys)
    assert code == 0 and err == ""
    assert [r["L"] for r in json.loads(out)] == depths
    code, out, _ = run_main(argv + ["--digits", "5"], capsys)
    assert code == 0 and [int(line.split()[0]) for line in out.strip().splitlines()[1:]] == depths


def test_help_documents_repeated_L(capsys):
    code, out, _ = run_main(["--help"], capsys)
    assert code == 0 and "--L may be repeated" in " ".join(out.split())


# rows printed as they are computed
class _Recorder(io.StringIO):
    """A stdout that notes, at each flush, how many root solves had been made and what was written."""

    def __init__(self, solves):
        super().__init__()
        self.solves, self.flushes = solves, []

    def flush(self):
        if not self.flushes or self.flushes[-1][1] != self.getvalue():  # a flush with nothing new is no row
            self.flushes.append((self.solves[0], self.getvalue()))


@pytest.mark.parametrize("fmt", ["text", "markdown", "csv"])
def test_rows_are_flushed_as_they_are_computed(fmt, monkeypatch):
    solves = [0]
    solve = wcr.y_and_gamma

    def counting(L, digits):
        solves[0] += 1
        return solve(L, digits)

    monkeypatch.setattr(wcr, "y_and_gamma", counting)
    out = _Recorder(solves)
    monkeypatch.setattr(sys, "stdout", out)
    depths = ["5", "2", "9", "3"]
    assert table_wcr.main(["--L", *depths, "--format", fmt, "--digits", "6"]) == 0
    header = 2 if fmt == "markdown" else 1
    with_rows = [(n, text) for n, text in out.flushes if len(text.splitlines()) > header]
    # one flush per row, each right after that row's solve (text solves the widest row, L = 9, first)
    assert len(with_rows) == len(depths)
    first_solves = with_rows[0][0]
    assert first_solves <= (2 if fmt == "text" else 1) < len(depths)
    assert [len(text.splitlines()) - header for _, text in with_rows] == [1, 2, 3, 4]
    assert out.getvalue().rstrip("\n") == table_wcr.render(table_wcr.wcr_table([5, 2, 9, 3], 6), fmt)


@pytest.mark.parametrize(
    "depths, digits, certify",
    [
        ([2, 10**6, 7], 3, True),  # gamma 3.2 and 23.9: enclosures of different widths
        ([10**6, 2], 12, True),
        ([10**30, 2, 100], 2, False),  # 131 and 3.2 at 2 digits: "1.3E+2"-free "130", "3.2"
        ([3], 1, False),
        (list(table_wcr.PAPER_DEPTHS), 12, False),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "markdown", "csv"])
def test_streamed_lines_equal_the_rendered_table(depths, digits, certify, fmt):
    rendered = table_wcr.render(table_wcr.wcr_table(depths, digits, certify), fmt)
    assert "\n".join(table_wcr.iter_lines(depths, digits, certify, fmt)) == rendered


def test_iter_lines_refuses_json():
    with pytest.raises(ValueError, match="format"):
        list(table_wcr.iter_lines([2], fmt="json"))


# size bounds
@pytest.mark.parametrize(
    "argv, name, value, allowed",
    [
        (["--digits", "100000"], "--digits", "100000", "[1, 3000]"),
        (["--digits", "3001"], "--digits", "3001", "[1, 3000]"),
        (["--L-max", "100000"], "--L-max", "100000", "[2, 5000]"),
        (["--L-max", "5001"], "--L-max", "5001", "[2, 5000]"),
        (["--L", "1" + "0" * 100 + "1"], "--L", "1" + "0" * 19, "[2, 10^100]"),
        (["--L", "9" * 5000], "--L", "9" * 20, "[2, 10^100]"),  # beyond int()'s 4300-digit limit, too
    ],
)
def test_size_options_are_bounded(argv, name, value, allowed, capsys, monkeypatch):
    monkeypatch.setattr(wcr, "y_and_gamma", None)  # refused before any solve
    code, out, err = run_main(argv, capsys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and out == "" and "Traceback" not in err
    assert last.startswith("python -m numerics.table_wcr: error:") and f"argument {name}" in last
    assert value in last and allowed in last


def test_bounds_are_accepted_at_the_edges():
    args = table_wcr.build_parser().parse_args(["--digits", "3000", "--L", "2", str(10**100)])
    assert args.digits == table_wcr.DIGITS_MAX and args.L == [2, table_wcr.DEPTH_MAX]
    assert table_wcr.build_parser().parse_args(["--L-max", "5000"]).L_max == table_wcr.L_MAX_MAX


@pytest.mark.parametrize(
    "depths, digits",
    [
        (table_wcr.PAPER_DEPTHS, table_wcr.DIGITS_MAX),
        (range(2, table_wcr.L_MAX_MAX + 1), 12),
        ([2, table_wcr.DEPTH_MAX], table_wcr.DIGITS_MAX),
    ],
)
def test_each_bound_alone_fits_the_run_limit(depths, digits):
    # what the CLI accepts option by option (others at their defaults) passes the estimate, --certify included
    assert table_wcr.estimated_seconds(depths, digits, certify=True) <= table_wcr.RUN_LIMIT_S


@pytest.mark.parametrize(
    "argv",
    [
        ["--L-max", "5000", "--digits", "3000", "--certify"],
        ["--L-max", "2000", "--digits", "300", "--certify", "--format", "json"],
        ["--L", *[str(L) for L in range(2, 60)], "--digits", "3000"],  # ~1.4 s a row at most: 80 s
    ],
)
def test_costly_combinations_are_refused_before_starting(argv, capsys, monkeypatch):
    monkeypatch.setattr(wcr, "y_and_gamma", None)  # refused before any solve
    code, out, err = run_main(argv, capsys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and out == "" and "Traceback" not in err
    assert last.startswith("python -m numerics.table_wcr: error:") and "--digits" in last and "limit 60 s" in last


def test_estimate_grows_with_digits_depths_and_certify():
    est = table_wcr.estimated_seconds
    assert est([2], 12) < est([2], 1000) < est([2], 3000)
    assert est(range(2, 100), 12) < est(range(2, 1000), 12)
    assert est([2, 3], 500) < est([2, 3], 500, certify=True)
    assert est([10**14], 12) < est([10**15], 12)  # mpmath bisection start from wcr._FLOAT_LIMIT on


# closed pipe
def test_closed_pipe_ends_quietly_with_141():
    proc = subprocess.Popen(
        [sys.executable, "-m", "numerics.table_wcr", "--L-max", "5000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    head = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()  # as `| head -3` does; the remaining ~5000 rows (~10 s) are never computed
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == "" and head[0].split()[0] == "L" and head[2].split()[0] == "3"


class _ClosedPipe(io.StringIO):
    def write(self, s):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_broken_pipe_in_process_returns_141(fmt, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert table_wcr.main(["--L", "2", "--format", fmt]) == 141


# --digits 1 and other values without a dangling point
def test_digits_1_prints_well_formed_numbers(capsys):
    code, out, _ = run_main(["--digits", "1", "--L", "2", "3", "1000000"], capsys)
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert code == 0
    # gamma 3.196, 3.661, 23.94; gamma/2 1.598, 1.830, 11.97; y 0.5419, 0.5949, 0.5392
    assert rows == [["2", "0.5", "3", "2"], ["3", "0.6", "4", "2"], ["1000000", "0.5", "20", "10"]]


@pytest.mark.parametrize("digits", [1, 2, 3])
@pytest.mark.parametrize("fmt", ["text", "markdown", "csv", "json"])
def test_no_value_ends_with_a_point(digits, fmt, capsys):
    code, out, _ = run_main(["--digits", str(digits), "--L", "2", "1000000", str(10**30), "--format", fmt], capsys)
    assert code == 0 and "." not in {tok[-1] for tok in out.replace(",", " ").replace('"', " ").split()}


@pytest.mark.parametrize("L", [2, 3, 7, 100, 10**6, 10**30])
@pytest.mark.parametrize("digits", [1, 2, 3])
def test_few_digits_are_the_value_rounded_to_nearest(L, digits):
    row = table_wcr.wcr_table([L], digits=digits)[0]
    y, g = wcr.y_and_gamma(L, 40)
    with mpmath.workdps(40):
        for key, ref in (("y", y), ("gamma_wcr", g), ("ratio_to_2", g / 2)):
            unit = mpmath.mpf(10) ** (int(mpmath.floor(mpmath.log10(ref))) - digits + 1)
            assert mpmath.nint(mpmath.mpf(row[key]) / unit) == mpmath.nint(ref / unit), (key, row[key])
