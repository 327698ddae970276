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


def test_every_entry_point_is_in_one_family_whose_module_exists():
    import importlib.util

    named = [e for _, _, entries in warmup.FAMILIES for e in entries]
    assert sorted(named) == sorted(name for name, _ in warmup.ENTRY_POINTS)
    assert all(importlib.util.find_spec(module) is not None for _, module, _ in warmup.FAMILIES)


def test_warm_tasks_take_the_families_of_the_named_modules_only():
    assert warmup.warm_tasks(["numerics.central_flow.flows"]) == []
    tasks = warmup.warm_tasks(["numerics.rare_gates.sim_kernels", "numerics.rare_gates.simulate"])
    assert [name for name, _ in tasks] == ["rare_gates SGD", "rare_gates GD"]


def test_unknown_family_names_the_parameter_and_the_choices():
    import pytest

    with pytest.raises(ValueError, match=r"family must be one of rare_gates SGD, .*multipath; got 'x'"):
        warmup.warm_family("x")


def test_a_dask_executor_compiles_each_family_once_before_the_cells(dask_local):
    from tests.conftest import dask_ready

    ex = dask_ready(dask_local)
    before = len(ex.start_log)
    ex._warm_up(ex.client, {"numerics.multipath.gd", "numerics.multipath.wcr"})
    (line,) = ex.start_log[before:]
    assert "kernels compiled (or loaded) once before the cells (multipath): " in line and "failed" not in line
    assert ex.warm_cpu_s is not None and ex.warm_cpu_s >= 0
