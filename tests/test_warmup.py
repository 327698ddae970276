"""``python -m numerics.warmup``: every entry point runs, the report is well formed, bad input is one line."""

from __future__ import annotations

import json

from numerics import warmup


def test_every_entry_point_runs_and_is_reported(capsys):
    assert warmup.main(["--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = data["entry_points"]
    assert [r["entry_point"] for r in rows] == [name for name, _ in warmup.ENTRY_POINTS]
    assert all(r["first_cpu_s"] >= 0 and r["second_cpu_s"] >= 0 for r in rows)


def test_text_lists_each_entry_point_and_the_total():
    rows = [{"entry_point": "a", "first_cpu_s": 1.5, "second_cpu_s": 0.01}]
    text = warmup.render(rows, "/cache", "text")
    assert "compiled-code cache: /cache" in text and "a " in text and "total of the first calls: 1.5 CPU-s" in text


def test_bad_option_is_one_line_with_exit_2(capsys):
    assert warmup.main(["--format", "xml"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--format" in err[0]
