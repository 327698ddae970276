"""The C references of ``python -m numerics.bench`` reproduce the numba target-SGD kernel bit for bit.

``numerics/bench_simd.c`` (hand-vectorised, lock-step lanes) and ``numerics/bench_ref.c`` (plain
loop) are built as the bench builds them and run on small workloads: one with recoveries, stream
ends and refills at b = 1, and the bench's own at b = 16 over a short horizon. Their per-stream
outputs (recovery, first disagreement, count, updates, final parameters as hex floats) must equal
the numba kernel's on the same keyed streams, so the bench compares like with like. Speed is not
judged here. Skipped, with the reason, where there is no C compiler.
"""

from __future__ import annotations

import math
import shutil

import pytest

from numerics import bench

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler 'cc' on PATH")

# (b, workload overrides, streams): recoveries and refills at b = 1; the bench's setting at b = 16, short.
WORKLOADS = [
    (1, {"delta0": 1e-3, "eta": 0.02, "horizon": 60.0, "check_every": 7, "seed": 3}, 45),
    (16, {"horizon": 20.0}, 37),
]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench_c")
    out = {}
    for name, source in bench.C_PROGRAMS.items():
        exe, msg = bench.build_c(tmp, source)
        assert exe is not None, msg
        out[name] = exe
    return out


@pytest.mark.parametrize("b, overrides, S", WORKLOADS)
@pytest.mark.parametrize("name", sorted(bench.C_PROGRAMS))
def test_c_reference_matches_numba_bit_for_bit(programs, name, b, overrides, S, monkeypatch):
    for key, value in overrides.items():
        monkeypatch.setitem(bench.WORKLOAD, key, value)
    _, _, inputs, outs = bench._sgd_call(b, S, 1)
    res = bench.run_c(programs[name], b, S)
    assert len(res["rows"]) == S
    assert bench._identical(res["rows"], outs)
    assert int(res["inputs"]) == inputs
    if b == 1:  # the workload exercises the risk test: some streams recover, some do not
        rec = outs[3]
        assert 0 < int((rec >= 0).sum()) < S


def test_identical_sees_a_one_ulp_difference(programs, monkeypatch):
    """The comparison can fail: one parameter moved by one ulp, or one count changed, is caught."""
    monkeypatch.setitem(bench.WORKLOAD, "horizon", 5.0)
    _, _, _, outs = bench._sgd_call(16, 20, 1)
    rows = bench.run_c(programs["c_simd"], 16, 20)["rows"]
    assert bench._identical(rows, outs)
    moved = [r[:] for r in rows]
    moved[7][9] = math.nextafter(float.fromhex(moved[7][9]), math.inf).hex()
    assert not bench._identical(moved, outs)
    counted = [r[:] for r in rows]
    counted[3][3] = str(int(counted[3][3]) + 1)
    assert not bench._identical(counted, outs)


def test_simd_width_follows_the_compiler(programs, monkeypatch):
    """The SIMD program reports its vector width (2, 4 or 8 doubles) and lanes, and a TSC tick count."""
    monkeypatch.setitem(bench.WORKLOAD, "horizon", 1.0)
    res = bench.run_c(programs["c_simd"], 16, 4)
    assert int(res["width"]) in (2, 4, 8) and int(res["lanes"]) % int(res["width"]) == 0
    assert res["ticks"] >= 0 and res["cpu_seconds"] >= 0
