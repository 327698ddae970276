"""Reproducibility of the rare-gates simulators: keyed streams, threads, chunks, reference kernel.

Every stream draws from its own xoshiro256++ state keyed by (seed, stream, phase, offset)
and the lock-step lanes never mix streams, so the results must be *bit-identical*
(``np.array_equal``, NaN equal to NaN) for one thread and for all threads, for the stream
ids in one call and split over two calls, and between the vectorised lock-step kernel and
the straightforward one-stream-at-a-time kernel ``_sgd_simple``. The configurations
sample disagreements and recover within a short horizon, with stream counts that leave
partly filled lane pools (not multiples of ``LANES``), so refills and idle lanes are
exercised. These are equalities, not statistics: no tolerance.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from numerics.rare_gates import sim_kernels as K
from numerics.rare_gates import sim_rng as R
from numerics.rare_gates.simulate import balanced_checkpoint, simulate_sgd

FIELDS = (
    "recovery_time",
    "recovered",
    "first_disagreement_time",
    "disagreements",
    "final_angle",
    "final_theta",
    "updates",
)
# short runs that recover in some streams and not in others (delta0 = 1e-2, Gamma = b)
BASE = dict(delta0=1e-2, b=4, eta=0.01, horizon=12.0, lam=0.05, check_every=10)
GENERIC = np.array([0.8, 0.5, 1.0, 0.3, 0.2, -0.9])  # a Gaussian-like initialisation for warm runs


def assert_same(a, b, fields=FIELDS):
    for name in fields:
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y, equal_nan=True), name


def _threads_pair():
    most = numba.config.NUMBA_NUM_THREADS
    return 1, most


@pytest.mark.parametrize(
    "extra", [{}, {"noise_s": 1e-3, "stop_at_recovery": False}, {"noise_s": 1e-3, "noise": "shared", "check_every": 1}]
)
def test_one_thread_equals_all_threads(extra):
    one, most = _threads_pair()
    kw = dict(BASE, streams=45, seed=7, **extra)
    a = simulate_sgd(threads=one, **kw)
    b = simulate_sgd(threads=most, **kw)
    assert_same(a, b)
    assert 0 < a.recovered.sum() < a.recovered.size or extra.get("stop_at_recovery") is False


def test_stream_ids_split_over_two_calls():
    kw = dict(BASE, seed=3)
    whole = simulate_sgd(streams=70, **kw)
    left = simulate_sgd(streams=29, first_stream=0, **kw)
    right = simulate_sgd(streams=41, first_stream=29, **kw)
    for name in FIELDS:
        joined = np.concatenate([getattr(left, name), getattr(right, name)])
        assert np.array_equal(getattr(whole, name), joined, equal_nan=True), name
    assert np.array_equal(whole.stream_ids, np.arange(70))


@pytest.mark.parametrize(
    "extra",
    [
        dict(BASE, streams=50),
        dict(BASE, streams=20, check_every=3, horizon=7.0, trace=True),
        dict(BASE, streams=20, noise_s=1e-3, stop_at_recovery=False, trace=True),
        dict(b=8, eta=0.01, horizon=5.0, source_time=3.0, streams=20, theta0=GENERIC),
    ],
)
def test_progress_segments_do_not_change_results(extra):
    """With a progress callback the run proceeds in horizon segments; the numbers are the same."""
    seen = []
    a = simulate_sgd(seed=5, **extra)
    b = simulate_sgd(seed=5, progress=lambda done, total: seen.append((done, total)), **extra)
    assert_same(a, b)
    for name in ("trace", "checkpoint"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None and y is None) or np.array_equal(x, y, equal_nan=True), name
    total = a.config["source_updates"] + a.config["target_updates"]
    assert seen[-1] == (total, total) and len(seen) > 3
    assert all(x[0] < y[0] for x, y in zip(seen, seen[1:]))


def test_warm_runs_thread_and_split_invariant():
    kw = dict(b=8, eta=0.01, horizon=5.0, source_time=3.0, seed=11)
    one, most = _threads_pair()
    a = simulate_sgd(GENERIC, streams=40, threads=one, **kw)
    b = simulate_sgd(GENERIC, streams=40, threads=most, **kw)
    assert_same(a, b)
    assert np.array_equal(a.checkpoint, b.checkpoint)
    right = simulate_sgd(GENERIC, streams=15, first_stream=25, **kw)
    assert np.array_equal(right.checkpoint, a.checkpoint[25:])
    assert np.array_equal(right.final_theta, a.final_theta[25:])
    assert a.config["source_updates"] == 300


def test_same_seed_same_numbers_different_seed_differs():
    a = simulate_sgd(streams=33, seed=0, **BASE)
    b = simulate_sgd(streams=33, seed=0, **BASE)
    c = simulate_sgd(streams=33, seed=1, **BASE)
    assert_same(a, b)
    # every stream's final parameters differ under another seed (continuous in the draws)
    assert np.all(np.any(a.final_theta != c.final_theta, axis=1))
    assert not np.array_equal(a.disagreements, c.disagreements)


def test_stream_keys_distinct():
    ids = np.arange(1000)
    keys = [
        R.seed_states(0, ids, phase, off)
        for phase in (R.PHASE_TARGET, R.PHASE_SOURCE, R.PHASE_NOISE)
        for off in (0, 1, 20000)
    ]
    keys.append(R.seed_states(1, ids))
    rows = np.concatenate(keys)
    assert len({tuple(r) for r in rows.tolist()}) == rows.shape[0]
    # a stream's state depends only on its own key
    assert np.array_equal(R.seed_states(0, np.array([999, 3])), keys[0][[999, 3]])


@pytest.mark.parametrize(
    "target, b, eta, n_up, k, stop, s, mode, n_trace, delta0",
    [
        (True, 16, 0.01, 1500, 10, True, 0.0, K.NOISE_NONE, 0, 1e-2),
        (True, 1, 0.01, 1200, 1, True, 0.0, K.NOISE_NONE, 40, 1e-2),
        (False, 5, 0.02, 300, 0, False, 0.0, K.NOISE_NONE, 0, 0.5),
        (True, 16, 0.01, 800, 7, False, 1e-3, K.NOISE_INDEPENDENT, 30, 1e-3),
        (True, 3, 0.01, 800, 10, True, 1e-3, K.NOISE_SHARED, 0, 1e-3),
    ],
)
def test_lockstep_kernel_equals_simple_kernel(target, b, eta, n_up, k, stop, s, mode, n_trace, delta0):
    """The optimised kernel (lanes, refill, risk pre-check) against the straightforward one, bit for bit."""
    S = 37
    th0 = np.tile(balanced_checkpoint(delta0), (S, 1))
    st = R.seed_states(3, np.arange(S))
    ns = R.seed_states(3, np.arange(S), R.PHASE_NOISE)
    fast, simple = K.outputs(S, n_trace), K.outputs(S, n_trace)
    par = K.SGDParams(target, b, eta, 0.05, n_up, k, 0.4, stop, s, mode)
    K._sgd_streams(th0, st, ns, par, 2 * K.LANES, fast)
    K._sgd_simple(th0, st, ns, par, simple)
    for x, y in zip(fast, simple):
        assert np.array_equal(x, y, equal_nan=True)
    assert fast[5].sum() > 0  # disagreements were sampled
    # the returned generator states continue the streams: rerunning from them is the second half
    if not stop and mode == K.NOISE_NONE:
        half = K.outputs(S, 0)
        K._sgd_simple(th0, st, ns, par._replace(n_updates=n_up // 2, check_every=0, stop=False), half)
        rest = K.outputs(S, 0)
        K._sgd_simple(*half[:3], par._replace(n_updates=n_up - n_up // 2, check_every=0, stop=False), rest)
        assert np.array_equal(rest[0], simple[0])


def test_disk_inputs_are_the_kernel_draws():
    """disk_inputs replays a stream exactly as the kernels consume it (used by the longdouble path)."""
    x = R.disk_inputs(4, 2, 5)
    assert x.shape == (5, 3)
    assert np.allclose(np.hypot(x[:, 0], x[:, 1]), x[:, 2], rtol=4 * np.finfo(float).eps, atol=0)
    # one SGD update with b = 5 from the draws, by hand, equals the kernel's update
    th0 = np.array([0.7, 0.4, 0.9, 0.2, -0.3, 0.8])
    out = K.outputs(1, 0)
    st = R.seed_states(4, np.array([2]))
    K._sgd_simple(th0[None, :], st, st.copy(), K.SGDParams(True, 5, 0.1, 0.05, 1, 0, 0.4, False, 0.0, 0), out)
    z = x[:, :2] @ th0[2:].reshape(2, 2).T
    h = np.maximum(z, 0.0)
    r = h @ th0[:2] - x[:, 2]
    grad = (
        np.concatenate([r @ h, th0[0] * ((r * (z[:, 0] > 0)) @ x[:, :2]), th0[1] * ((r * (z[:, 1] > 0)) @ x[:, :2])])
        / 5
    )
    expect = th0 - 0.1 * (grad + 0.05 * th0)
    assert np.allclose(out.theta[0], expect, rtol=0, atol=1e-15)


# --- the kernels' thread pool (sim_kernels.run_blocks) ----------------------------------------------------------


class _Threads:
    """``with _Threads(n):`` numba's thread count (what run_blocks reads) is ``n`` inside, restored after."""

    def __init__(self, n):
        self.n, self.old = n, numba.get_num_threads()

    def __enter__(self):
        numba.set_num_threads(self.n)

    def __exit__(self, *exc):
        numba.set_num_threads(self.old)


def test_run_blocks_runs_every_block_once_and_raises_the_first_error():
    """Every block exactly once, on at most numba.get_num_threads() threads; a failing block's error reaches the
    caller (after the other threads stop) instead of being lost in a worker thread."""
    import threading

    _, most = _threads_pair()
    blocks = [(lo, lo + 3) for lo in range(0, 60, 3)]
    seen, idents = [], set()

    def kernel(lo, hi, tag):
        seen.append((tag, lo, hi))
        idents.add(threading.get_ident())

    with _Threads(most):
        K.run_blocks(kernel, blocks, ("t",))
    assert sorted(seen) == [("t", lo, hi) for lo, hi in blocks]
    assert 1 <= len(idents) <= most

    def failing(lo, hi):
        if lo == 30:
            raise ValueError("block 30")

    with _Threads(most), pytest.raises(ValueError, match="block 30"):
        K.run_blocks(failing, blocks, ())
    with _Threads(1), pytest.raises(ValueError, match="block 30"):
        K.run_blocks(failing, blocks, ())


def test_kernels_release_the_gil():
    """The chunk kernels run on Python threads, so they must release the GIL (``nogil``) to run side by side."""
    from numerics.rare_gates import dd_kernel as D

    for kernel in (K._sgd_chunk, K._gd_rows, D._dd_block):
        assert kernel.targetoptions.get("nogil") is True, kernel


@pytest.mark.parametrize("chunk", [K.LANES, 2 * K.LANES, 45, 1])
def test_chunk_sizes_and_threads_give_the_same_numbers(chunk):
    """Any chunk size (whole lane pools or not) on all threads equals one chunk on one thread, bit for bit."""
    S = 45
    th0 = np.tile(balanced_checkpoint(1e-2), (S, 1))
    st, ns = R.seed_states(9, np.arange(S)), R.seed_states(9, np.arange(S), R.PHASE_NOISE)
    par = K.SGDParams(True, 4, 0.01, 0.05, 1200, 10, 0.4, False, 1e-3, K.NOISE_INDEPENDENT)
    one, split = K.outputs(S, 5), K.outputs(S, 5)
    _, most = _threads_pair()
    with _Threads(1):
        K._sgd_streams(th0, st, ns, par, S, one)
    with _Threads(most):
        K._sgd_streams(th0, st, ns, par, chunk, split)
    for x, y in zip(one, split):
        assert np.array_equal(x, y, equal_nan=True)
    assert one.disagreements.sum() > 0


def test_gd_and_double_double_are_thread_invariant():
    """GD rows and double-double streams in blocks on all threads equal the one-thread runs, bit for bit."""
    from numerics.rare_gates.simulate import simulate_extended, simulate_gd

    _, most = _threads_pair()
    rows = np.array([GENERIC, [0.6, 0.9, 1.0, 0.1, 0.8, -0.5], *np.tile(balanced_checkpoint(1e-3), (5, 1))])
    gd = {}
    for n in (1, most):
        with _Threads(n):
            gd[n] = simulate_gd(rows, eta=0.01, horizon=3.0, source_time=1.0, trace=True)
    assert_same(gd[1], gd[most], fields=("recovery_time", "final_theta", "updates", "trace", "checkpoint"))
    kw = dict(BASE, streams=9, seed=7)
    one = simulate_extended(threads=1, **kw)
    every = simulate_extended(threads=most, **kw)
    assert_same(one, every, fields=(*FIELDS, "final_theta_lo"))
    assert 0 < one.recovered.sum()


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(chunk=0), "chunk"),
        (dict(states=np.zeros((3, 4), dtype=np.uint64)), "states"),
        (dict(nstates=np.zeros((4, 4))), "nstates"),
        (dict(theta0=np.zeros((4, 5))), "theta0"),
        (dict(out=K.outputs(4)._replace(rec=np.zeros(4))), "out.rec"),
        (dict(out=K.outputs(3)), "out.theta"),
        (dict(par=K.SGDParams(True, 0, 0.01, 0.05, 10, 1, 0.4, True, 0.0, K.NOISE_NONE)), "b"),
        (dict(par=K.SGDParams(True, 2, 0.01, 0.05, 10, 1, 0.4, True, 0.0, 7)), "noise_mode"),
    ],
)
def test_kernel_drivers_refuse_bad_arrays_naming_them(change, name):
    """The kernels index without bounds checks, so their drivers check shapes and dtypes first."""
    S = 4
    args = dict(
        theta0=np.tile(balanced_checkpoint(1e-2), (S, 1)),
        states=R.seed_states(0, np.arange(S)),
        nstates=R.seed_states(0, np.arange(S), R.PHASE_NOISE),
        par=K.SGDParams(True, 2, 0.01, 0.05, 10, 1, 0.4, True, 0.0, K.NOISE_NONE),
        chunk=K.LANES,
        out=K.outputs(S),
    )
    args.update(change)
    with pytest.raises(ValueError, match=name.replace(".", r"\.")):
        K._sgd_streams(**args)
