"""The tools behind "robust to rounding": keyed start perturbations and the verdict comparison."""

import json

import numpy as np
import pytest

from numerics.perturb import MAX_PERTURB, check_perturbation, perturb_relative
from verify.compare import compare, load_verdicts, main


def test_perturbation_is_keyed_and_reproducible():
    x = np.linspace(-3.0, 3.0, 7)
    a = perturb_relative(x, 1e-12, "run", 1)
    assert np.array_equal(a, perturb_relative(x, 1e-12, "run", 1))  # same key, same numbers
    assert not np.array_equal(a, perturb_relative(x, 1e-12, "run", 2))  # another key, another draw
    assert not np.array_equal(a, x)
    rel = np.abs(a - x)[x != 0] / np.abs(x[x != 0])
    assert rel.max() < 1e-11 and rel.max() > 1e-14  # about 1e-12 relative: 7 normals stay within 10 sigma
    assert a[3] == 0.0  # a zero entry stays zero, as under rounding


def test_zero_perturbation_returns_the_input_itself():
    x = np.ones(3)
    assert perturb_relative(x, 0.0, "run") is x


@pytest.mark.parametrize("bad", [-1e-12, 2 * MAX_PERTURB, float("nan"), "1e-12", True])
def test_bad_perturbation_names_the_parameter_and_range(bad):
    with pytest.raises(ValueError, match=r"perturb must be a relative size in \[0, 1e-06\]"):
        check_perturbation(bad)


def _report(path, verdicts):
    path.write_text(json.dumps({"claims": [{"id": k, "verdict": v} for k, v in verdicts.items()]}))
    return path


def test_compare_lists_changed_verdicts_and_ignores_not_run():
    out = compare(
        {"A": "confirmed", "B": "confirmed", "C": "not-run", "D": "discrepancy"},
        {"A": "confirmed", "B": "check-failed", "C": "confirmed", "E": "confirmed"},
    )
    assert out == {"compared": ["A", "B"], "changed": [{"id": "B", "base": "confirmed", "other": "check-failed"}]}


def test_compare_cli_exit_codes(tmp_path, capsys):
    a = _report(tmp_path / "a.json", {"A": "confirmed", "B": "inconclusive"})
    b = _report(tmp_path / "b.json", {"A": "confirmed", "B": "inconclusive"})
    c = _report(tmp_path / "c.json", {"A": "confirmed", "B": "confirmed"})
    assert main([str(a), str(b)]) == 0
    assert "2 claims compared, 0 verdicts changed" in capsys.readouterr().out
    assert main([str(a), str(c), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)["changed"] == [{"id": "B", "base": "inconclusive", "other": "confirmed"}]
    assert main([str(a), str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not an audit report"):
        load_verdicts(tmp_path / "bad.json")


def test_neighbourhood_rule_tolerates_only_moves_by_power(tmp_path, capsys):
    """``--rule neighbourhood``: confirmed (or confirmed-reading) <-> inconclusive is listed; any other move fails."""
    base = {"A": "confirmed", "B": "inconclusive", "C": "confirmed", "D": "inconclusive", "E": "discrepancy",
            "F": "confirmed-reading", "G": "vacuous"}  # fmt: skip
    other = {"A": "inconclusive", "B": "confirmed", "C": "discrepancy", "D": "check-failed", "E": "inconclusive",
             "F": "inconclusive", "G": "confirmed"}  # fmt: skip
    out = compare(base, other, "neighbourhood")
    assert [c["id"] for c in out["power"]] == ["A", "B", "F"]
    assert [c["id"] for c in out["changed"]] == ["C", "D", "E", "G"]
    assert len(compare(base, other)["changed"]) == 7
    assert "power" not in compare(base, other)  # the exact rule: every move counts
    a = _report(tmp_path / "a.json", {"A": "confirmed", "B": "confirmed"})
    b = _report(tmp_path / "b.json", {"A": "inconclusive", "B": "confirmed"})
    c = _report(tmp_path / "c.json", {"A": "inconclusive", "B": "discrepancy"})
    assert main([str(a), str(b), "--rule", "neighbourhood"]) == 0
    text = capsys.readouterr().out
    assert "A: confirmed -> inconclusive (power; tolerated" in text and "0 verdicts changed, 1 moved by power" in text
    assert main([str(a), str(b)]) == 1  # the default rule is exact
    capsys.readouterr()
    assert main([str(a), str(c), "--rule", "neighbourhood"]) == 1
    assert "B: confirmed -> discrepancy" in capsys.readouterr().out
    with pytest.raises(ValueError, match="rule must be one of exact, neighbourhood; got 'loose'"):
        compare(base, other, "loose")
