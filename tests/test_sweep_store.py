"""Library tests of the sweep result store (:mod:`numerics.sweep.store`) and its codec (:mod:`numerics.sweep.codec`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from numerics.sweep.codec import decode, encode, equal
from numerics.sweep.store import MAGIC, TMP_PREFIX, CorruptCell, ResultStore, canonical, cell_key, read_cell

# --- codec ------------------------------------------------------------------------------------------------

_arrays = st.one_of(
    hnp.arrays(
        st.sampled_from([np.float64, np.float32, np.longdouble]),
        hnp.array_shapes(min_dims=0, max_dims=3),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    ),
    hnp.arrays(st.sampled_from([np.int64, np.int8, np.uint64, np.bool_]), hnp.array_shapes(min_dims=0, max_dims=2)),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    _arrays.map(lambda a: a.reshape(-1)[0] if a.size else np.float64(0.0)),
)
_values = st.recursive(
    st.one_of(_scalars, _arrays),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner, inner), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(_values)
def test_codec_round_trip_is_bit_exact(value):
    skeleton, arrays = encode(value)
    back = decode(skeleton, arrays)
    assert equal(back, value)


@given(_values)
def test_store_round_trip_is_bit_exact(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("cell") / "x.cell"
    from numerics.sweep.store import write_cell

    write_cell(path, value, {"k": 1})
    back, meta = read_cell(path)
    assert equal(back, value) and meta == {"k": 1}


def test_equal_distinguishes_types_and_bits():
    assert not equal([1.0], (1.0,))
    assert not equal({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is part of the value
    assert not equal(np.float64(1.0), 1.0)
    assert equal(np.array([np.nan]), np.array([np.nan]))


def test_unsupported_values_name_their_path():
    with pytest.raises(TypeError, match=r"/a\[1\]"):
        encode({"a": [1, object()]})
    with pytest.raises(TypeError, match="non-string keys"):
        encode({1: 2})
    with pytest.raises(TypeError, match="object array"):
        encode(np.array([None, 1], dtype=object))


def test_numerics_records_round_trip_and_nothing_else_is_imported():
    from numerics.multipath import gd

    run = gd.simulate_svs([3, 3], [1.0], 0.3, [1e-2, 9e-3], 50, record_every=7)
    back = decode(*encode({"run": run}))["run"]
    assert type(back) is gd.SVSRun and equal(back, run) and back.flipped == run.flipped
    assert not equal(back, gd.simulate_svs([3, 3], [1.0], 0.3, [1e-2, 9e-3], 51, record_every=7))
    skeleton, arrays = encode(run)
    for name in ("os:system", "numerics.multipath.gd:SVSRun.sub", "numerics.multipath.gd:Missing"):
        with pytest.raises(ValueError, match="stored dataclass"):
            decode({**skeleton, "dataclass": name}, arrays)


def test_canonical_parameters_and_keys():
    assert canonical({"b": 1, "a": [1, 2.5]}) == canonical({"a": (1, 2.5), "b": 1})
    assert cell_key("x", {"a": 1}) != cell_key("y", {"a": 1}) != cell_key("x", {"a": 2})
    with pytest.raises(ValueError):
        canonical({"a": float("nan")})


# --- store --------------------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    return ResultStore(tmp_path / "store")


PARAMS = {"call": "demo", "kwargs": {"streams": 4, "seed": 7}}
VALUE = {"rec": np.array([1.5, np.nan, 3.0]), "n": 3, "label": "demo"}


def _save(store, params=PARAMS, value=VALUE, code="v1"):
    meta = {"experiment": "demo", "params": params, "code_version": code}
    return store.save("demo", params, value, meta)


def test_lookup_statuses(store):
    assert store.load("demo", PARAMS, code_version="v1").status == "missing"
    path = _save(store)
    hit = store.load("demo", PARAMS, code_version="v1")
    assert hit.status == "ok" and equal(hit.value, VALUE) and hit.path == path
    miss = store.load("demo", PARAMS, code_version="v2")
    assert miss.status == "code-mismatch" and "v1" in miss.reason and miss.value is None


def test_a_file_with_another_configuration_is_not_reused(store):
    other = {"call": "demo", "kwargs": {"streams": 4, "seed": 8}}
    src = _save(store, params=other)
    dst = store.path("demo", PARAMS)
    dst.write_bytes(src.read_bytes())  # a file renamed or copied by hand
    assert store.load("demo", PARAMS, code_version="v1").status == "config-mismatch"


@pytest.mark.parametrize("cut", [0, 5, len(MAGIC) + 3, -1, -100])
def test_truncated_files_are_corrupt(store, cut):
    path = _save(store)
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut >= 0 else data[: len(data) + cut])
    found = store.load("demo", PARAMS, code_version="v1")
    assert found.status == "corrupt" and found.value is None


def test_every_single_byte_change_is_detected(store):
    path = _save(store)
    data = bytearray(path.read_bytes())
    for i in range(0, len(data), max(1, len(data) // 97)):  # ~100 positions over magic, header, digest, payload
        damaged = bytearray(data)
        damaged[i] ^= 0x01
        path.write_bytes(bytes(damaged))
        with pytest.raises(CorruptCell):
            read_cell(path)


def test_failed_write_leaves_no_file(store):
    with pytest.raises(TypeError):
        store.save("demo", PARAMS, {"f": print}, {})
    assert not store.path("demo", PARAMS).exists() and not store.leftover_temporaries()


def test_temporaries_of_dead_writers_are_removed(store, tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)
    folder = store.root / "demo"
    folder.mkdir(parents=True)
    dead = folder / f"{TMP_PREFIX}{socket.gethostname()}-{dead_pid}-abc123"
    alive = folder / f"{TMP_PREFIX}{socket.gethostname()}-{os.getpid()}-def456"
    foreign = folder / f"{TMP_PREFIX}elsewhere-{dead_pid}-ghi789"
    for p in (dead, alive, foreign):
        p.write_bytes(b"partial")
    assert store.remove_dead_temporaries() == 1
    assert not dead.exists() and alive.exists() and foreign.exists()
    assert store.files() == []  # temporaries are never cells


def test_cell_files_are_ordinary_files(store):
    path = _save(store)
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
