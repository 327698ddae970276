"""The multi-pathway experiments as sweeps (:mod:`numerics.multipath.sweeps`): cells equal the direct runs.

Experiments with sizes run through the sweep layer at small sizes and are compared bit for bit
with the functions of :mod:`numerics.multipath.experiments` called directly; the rank-p
ensembles are checked on their mode-recursion half, split into two cells. Results must survive
the store's codec (run records are dataclasses) unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from numerics.multipath import ensembles as ens
from numerics.multipath import experiments as E
from numerics.multipath import gd
from numerics.sweep import resolve
from numerics.sweep.codec import decode, encode, equal
from tests.sweep_calls import assert_sizes_refused, experiment, run_quick

SMALL = {"mp_fig1_steps": 20_000, "mp_fig1_scales": 1, "mp_hetero_steps": 3000, "mp_ensemble": 20}


def test_listing_names_every_multipath_experiment():
    names = {e.name.split(".")[1] for e in resolve(["multipath"])}
    assert names == {
        "fig1",
        "three_pathways",
        "hetero",
        "fig9",
        "chain",
        "warmup",
        "rank_p",
        "window",
        "peak",
        "supercritical",
        "fig1_members",
        "hetero_members",
        "three_members",
        "warmup_members",
    }


def test_fig1_cells_equal_the_direct_runs():
    run = run_quick("multipath.fig1", SMALL)
    got = run.result()
    assert set(got) == {(1e-4, g) for g in (*E.GAMMA_SMALL, *E.GAMMA_EOS, "bal")} | {"coarse"}
    for key in [(1e-4, 1.0), (1e-4, 2.8), (1e-4, "bal")]:
        assert equal(got[key], E.fig1_run(*key, steps=20_000))
    assert isinstance(got["coarse"], gd.SVSRun) and got["coarse"].config["n_steps"] == E.COARSE[2]
    assert equal(decode(*encode(got[(1e-4, 2.8)])), got[(1e-4, 2.8)])


def test_hetero_cells_carry_the_allocation_and_both_scales():
    got = run_quick("multipath.hetero", SMALL).result()
    assert len(got["opt"]) == 25 and len(got["runs"]) == 50 and got["scales"] == E.HETERO_SCALES
    direct = E.hetero_pair(3, 7, 3000)
    assert got["opt"][(3, 7)] == direct["opt"]
    assert equal(got["runs"][(3, 7, 1e-6)], direct["runs"][1])


def test_rank_p_members_split_across_cells_equal_one_call():
    exp = experiment("multipath.rank_p")
    z = E.sizes_with("quick", SMALL)
    cells = [p for p in exp.cells(z) if p["kwargs"].get("kind") == "manifold"]
    assert [(p["kwargs"]["first"], p["kwargs"]["count"]) for p in cells] == [(0, 16), (16, 4)]
    joined = exp.assemble(z, cells, [exp.compute(p) for p in cells])["manifold"]
    assert equal(joined, ens.rank_p_on_manifold(20))


def test_keyed_experiments_have_one_cell_per_setting():
    assert [p["kwargs"]["L"] for p in experiment("multipath.chain").cells(E.sizes("quick"))] == list(E.CHAIN_DEPTHS)
    assert [p["kwargs"]["factor"] for p in experiment("multipath.fig9").cells(E.sizes("quick"))] == list(E.WCR_FACTORS)
    warm = experiment("multipath.warmup").cells(E.sizes("quick"))
    assert [p["kwargs"]["scale"] for p in warm] == [float(a) for a in E.SCALE_GRID]
    assert all(type(p["kwargs"]["scale"]) is float for p in warm)  # plain floats: canonical store keys


def test_chain_cell_counts_flips_as_the_runs_do():
    flips = E.chain_flips(3)
    direct = [
        sum(gd.simulate_svs([3], [1.0], g / 3, None, 3000, record_every=3000, a0=[[u]]).flipped for u in E.CHAIN_STARTS)
        for g in E.CHAIN_GAMMAS
    ]
    assert flips == direct


def test_perturbed_start_moves_by_rounding_and_reaches_the_cells():
    ref = E.svs([5, 5], [1.0], 0.1, [1e-3, 9e-4], 0, record_every=1)
    moved = E.svs([5, 5], [1.0], 0.1, [1e-3, 9e-4], 0, 1e-12, record_every=1)
    rel = np.abs(moved.sigma[0] / ref.sigma[0] - 1)
    assert np.all(rel < 1e-10) and rel.max() > 1e-15
    exp = experiment("multipath.fig9")
    assert all("perturb" not in p["kwargs"] for p in exp.cells(E.sizes("quick")))
    assert all(p["kwargs"]["perturb"] == 1e-12 for p in exp.cells(E.sizes_with("quick", {"perturb": 1e-12})))


def test_rank_p_under_perturb_draws_another_ensemble(monkeypatch):
    seeds = []
    monkeypatch.setattr(ens, "rank_p_on_manifold", lambda n, *, seed, first: seeds.append((seed, first, n)))
    E.rank_p("manifold", 3, 2)
    E.rank_p("manifold", 3, 2, perturb=1e-12)
    assert seeds == [(ens.SEED, 3, 2), (ens.SEED + 1, 3, 2)]
    with pytest.raises(ValueError, match="kind must be 'manifold' or 'full'; got 'svs'"):
        E.rank_p("svs", 0, 2)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"mp_fig1_scales": "4"}, r"size mp_fig1_scales must be an integer from 1 to 3; got '4'"),
        ({"mp_ensemble": "5"}, r"size mp_ensemble must be an integer >= 10; got '5'"),
        ({"mp_fig1_steps": "1.5"}, r"size mp_fig1_steps must be an integer >= 1; got '1.5'"),
        ({"fig1_steps": 3}, r"unknown size 'fig1_steps'; sizes are: mp_fig1_steps"),
    ],
)
def test_bad_sizes_are_refused_naming_the_size(overrides, message):
    assert_sizes_refused(E, overrides, message)


ENS_SMALL = {
    "mp_fig1_steps": 20_000,
    "mp_fig1_scales": 1,
    "mp_fig1_draws": 2,
    "mp_hetero_ens_steps": 3001,
    "mp_hetero_draws": 1,
}


def test_ensemble_cells_equal_the_direct_members():
    got = run_quick("multipath.fig1_members", ENS_SMALL).result()
    assert set(got) == {1.8, *E.GAMMA_EOS, "bal"}
    direct = E.fig1_members(2.8, 20_000, 1, 2)
    assert equal(got[2.8], direct) and got[2.8]["sigma_end"].shape == (2, 2)
    assert np.allclose(got[2.8]["u"][:, 1], E.asymmetries(2, 2)[:, 1])  # members: scales (outer) x draws (inner)
    het = run_quick("multipath.hetero_members", ENS_SMALL).result()
    assert len(het) == 25 and equal(het[(7, 3)], E.hetero_members(7, 3, 3001, 1))
    assert het[(3, 7)]["opt"] == E.hetero_pair(3, 7, 10)["opt"]
    three = experiment("multipath.three_members").cells(E.sizes("quick"))
    assert [(p["kwargs"]["L"], p["kwargs"]["gamma"]) for p in three] == [
        (3, 1.0), (3, 2.5), (5, 1.0), (5, 2.5), (3, "bal"), (5, "bal"), (10, "bal"), (20, "bal")
    ]  # fmt: skip
    warm = experiment("multipath.warmup_members").cells(E.sizes("quick"))
    assert [p["kwargs"]["scale"] for p in warm] == list(E.WARMUP_ENS_GRID)


def test_member_summary_reads_the_run():
    run = E.svs([5, 5], [1.0], 2.8 / 5, [1e-3, 7e-4], 200_000, record_every=21, tol=E.TOL_R)
    m = ens.member_summary(run)
    s = run.sigma[:, :, 0]
    k = int(np.argmax(s.sum(axis=1) >= 0.9))
    assert np.array_equal(m["sigma90"], s[k]) and m["peak"] == float(np.nanmax(run.sharpness[:, 0]))
    assert m["state"] == ens.end_state(run, 2) == "re-balanced" and m["converged"] and not m["flipped"]
    assert m["gap_end"] == float(abs(s[-1, 0] - s[-1, 1])) and m["gap_late"] >= m["gap_end"]
    assert E._odd_stride(20_000) % 2 == 1 and E._odd_stride(10**8) % 2 == 1


def test_ensemble_verdict_and_its_power():
    v = ens.verdict([True] * 17 + [False])
    assert v["k"] == 17 and not v["holds"] and 0.8 < v["power"] <= 1  # 17/18: CP lower bound 0.727 < 0.8
    assert ens.verdict([True] * 18)["holds"]
    assert ens.established(8, 8) and not ens.established(7, 8)
    assert ens.cp_text(0, 4) == "0/4 [0.000, 0.602]"
