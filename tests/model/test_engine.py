"""Engine invariants over the whole catalog, and the issue's published-behaviour checks."""

import math

import numpy as np
import pytest
from conftest import CATALOG, topology
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trnsim.collectives.algorithms import Context
from trnsim.collectives.ops import OPS
from trnsim.model.engine import evaluate
from trnsim.model.plan import make_plan
from trnsim.model.router import Router
from trnsim.topology.groups import select_group

SIZES = [8, 1024, 65536, 1 << 20, 1 << 24, 1 << 30]


def _check_rows(result, op):
    factor = OPS[op].busbw_factor(result.ranks)
    previous = 0.0
    for row in result.rows:
        assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9), row
        assert 0 < row.efficiency <= 1 + 1e-9
        assert row.time_us >= previous - 1e-9  # time never falls as size grows
        previous = row.time_us
        assert math.isclose(row.busbw_gbps, row.algbw_gbps * factor, rel_tol=1e-12)
        assert row.bound_busbw_gbps <= row.peak_busbw_gbps * (1 + 1e-9) or row.bound_limited_by == "latency"


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
@pytest.mark.parametrize("op", list(OPS))
def test_every_sku_and_op_runs_with_auto(path, op):
    topo = topology(path.stem)
    result = evaluate(topo, op, SIZES, topo.chips, algo="auto")
    kept = [row.requested_bytes for row in result.rows]
    assert sorted(kept + result.dropped) == SIZES  # every size is a row or named as left out
    assert all(size < min(kept) for size in result.dropped)  # only sizes below one aligned unit
    _check_rows(result, op)


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize(
    "ranks, dtype, element", [(2, "float", 4), (16, "bf16", 2), (144, "double", 8), (7, "int8", 1)]
)
def test_sizes_are_aligned_as_nccl_tests_does(op, ranks, dtype, element):
    """Brute force over every size up to 4 units: the aligned size is the largest that nccl-tests
    runs (whole elements; per-rank blocks of whole 16-byte lines where the op splits by rank)."""
    unit = element if op == "allreduce" else ranks * max(16, element)
    for size in range(1, 4 * unit + 3):
        nbytes, count = OPS[op].align(size, ranks, element)
        runnable = [n for n in range(0, size + 1, unit)]
        assert nbytes == max(runnable)
        assert count == (nbytes // element if op == "allreduce" else nbytes // element // ranks)


def test_sizes_below_one_unit_are_left_out_and_named():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate(topo, "allgather", [8, 2303, 2304, 3000], topo.chips)
    assert result.dropped == [8, 2303]
    assert [(r.requested_bytes, r.bytes, r.count) for r in result.rows] == [(2304, 2304, 4), (3000, 2304, 4)]
    assert "left out 8, 2303 B" in result.alignment_note() and "3000 -> 2304" in result.alignment_note()


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl32x2-gen1", "trn3-ultraserver-gen1"])
@pytest.mark.parametrize("op", list(OPS))
def test_every_applicable_algorithm_respects_the_bound(sku, op):
    topo = topology(sku)
    result = evaluate(topo, op, SIZES, topo.chips, algo="all")
    for rows in result.by_algorithm.values():
        for row in rows:
            assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
    # auto picks the fastest of them at every size
    for i, row in enumerate(result.rows):
        assert row.time_us == min(rows[i].time_us for rows in result.by_algorithm.values())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sku=st.sampled_from(
        ["trn2-nl16", "trn2-nl64", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1", "trn3-ultraserver-gen2"]
    ),
    op=st.sampled_from(list(OPS)),
    data=st.data(),
)
def test_random_groups_never_beat_their_bound(sku, op, data):
    topo = topology(sku)
    ranks = data.draw(st.lists(st.integers(0, topo.n_ranks - 1), min_size=2, max_size=12, unique=True))
    group = [topo.chips[r] for r in sorted(ranks)]
    _check_rows(evaluate(topo, op, SIZES, group, algo="auto"), op)


def test_ring_over_one_row_of_the_4x4_torus_reaches_the_link():
    topo = topology("trn2-nl16", raw=True)
    row = evaluate(topo, "allreduce", [1 << 30], select_group(topo, "0-3"), algo="ring").rows[0]
    assert abs(row.busbw_gbps - 128) / 128 < 0.01


def test_best_large_allreduce_on_nl16_uses_every_link_of_every_chip():
    topo = topology("trn2-nl16", raw=True)
    row = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="auto").rows[0]
    assert row.busbw_gbps > 0.95 * 512 and row.algorithm == "multidim"
    router = Router(topo, topo.chips)
    plan = make_plan(topo, router, Context(topo, topo.chips), "allreduce", row.algorithm, 0.0)
    loads = sum(item.edge_seconds_per_byte(plan.bw_bps) for item in plan.items)
    assert np.all(loads > 0)  # both directions of all 32 links carry data
    # and evenly: every directed link carries the same bytes
    assert np.allclose(loads, loads[0])


def test_alltoall_on_nl64_turns_bandwidth_bound_between_16k_and_1m():
    topo = topology("trn2-nl64")
    sizes = [1024, 16 << 10, 1 << 20, 2 << 20, 4 << 20, 1 << 30, 2 << 30]
    rows = evaluate(topo, "alltoall", sizes, topo.chips).rows
    small, k16, m1, m2, m4, g1, g2 = rows
    assert k16.time_us < 1.1 * small.time_us  # latency-bound: 16 KiB costs about what 8 B does
    assert k16.bound_limited_by == "latency"
    assert m4.time_us / m2.time_us > 1.7  # from ~1 MiB, time grows with size
    assert math.isclose(g2.time_us / g1.time_us, 2, rel_tol=0.01)
    assert g1.bound_limited_by.startswith("cut")  # oversubscribed: the torus bisection limits it


def test_trn3_rack_alltoall_keeps_far_more_of_its_links_than_the_torus():
    nl64 = topology("trn2-nl64")
    torus = evaluate(nl64, "alltoall", [1 << 30], nl64.chips).rows[0]
    for sku in ("trn3-nl72x2-gen1", "trn3-nl32x2-gen1", "trn3-nl72x2-gen3"):
        topo = topology(sku)
        rack = evaluate(topo, "alltoall", [1 << 30], select_group(topo, "rack:0")).rows[0]
        assert rack.busbw_gbps / rack.peak_busbw_gbps > 2 * torus.busbw_gbps / torus.peak_busbw_gbps
        assert rack.efficiency > 0.75


def test_hierarchical_beats_flat_on_the_paired_racks():
    topo = topology("trn3-nl72x2-gen1")
    result = evaluate(topo, "allreduce", [1 << 30], topo.chips, algo="all")
    # the balanced schedule keeps every link class busy; hierarchical leaves the tray and rack links idle
    assert result.rows[0].algorithm == "multidim"
    assert result.rows[0].busbw_gbps > 0.95 * result.rows[0].bound_busbw_gbps
    assert (
        result.by_algorithm["multidim"][0].busbw_gbps > 2 * result.by_algorithm["hierarchical"][0].busbw_gbps
    )
    assert result.by_algorithm["hierarchical"][0].busbw_gbps > 1.5 * result.by_algorithm["mesh"][0].busbw_gbps


def test_alpha_override_changes_latency_only():
    topo = topology("trn2-nl16")
    fast = evaluate(topo, "allreduce", [8, 1 << 30], topo.chips, algo="ring", alpha_us=0.0).rows
    slow = evaluate(topo, "allreduce", [8, 1 << 30], topo.chips, algo="ring", alpha_us=10.0).rows
    assert math.isclose(slow[0].time_us - fast[0].time_us, 30 * 10.0)  # 2(p-1) = 30 steps
    assert math.isclose(slow[1].time_us - fast[1].time_us, 30 * 10.0)


def test_pipelined_tree_keeps_up_with_ring_on_a_torus_row():
    # a double binary tree pipelined in chunks moves every byte once up and once down: at 1 GiB it
    # is within a few percent of ring on a 4-chip ring of links (unpipelined it was 3-17x slower)
    topo = topology("trn2-nl16")
    row = select_group(topo, "0-3")
    result = evaluate(topo, "allreduce", [1 << 30], row, algo="all")
    tree, ring = result.by_algorithm["tree"][0], result.by_algorithm["ring"][0]
    assert tree.busbw_gbps >= 0.8 * ring.busbw_gbps
    assert tree.chunks > 1


def test_the_ring_search_runs_once_per_group_and_wiring(monkeypatch):
    from trnsim.collectives import rings, schedule
    from trnsim.topology.load import load_topology as load

    calls = []
    original = rings.disjoint_hamiltonian_cycles

    def counted(graph, *args, **kwargs):
        calls.append(graph.number_of_nodes())
        return original(graph, *args, **kwargs)

    monkeypatch.setattr(rings, "disjoint_hamiltonian_cycles", counted)
    monkeypatch.setattr(schedule, "_RINGS", {})
    for op in ("allreduce", "allgather", "reducescatter"):
        topology = load("trn2-nl16")  # a fresh load per op, as a sweep does
        evaluate(topology, op, [1 << 20], topology.chips, algo="multiring")
    assert calls == [16]


def test_busiest_classes_names_every_class_at_the_peak_within_rounding():
    from trnsim.model.router import busiest_classes

    peak = 0.7
    seconds = np.array([peak * (1 - 1e-12), 0.2, peak, peak * (1 - 1e-6), 0.0])
    assert busiest_classes(seconds, ["z", "q", "x", "y", "w"]) == "x=z"  # y is 1e-6 below: not tied
    assert busiest_classes(np.zeros(3), ["x", "y", "z"]) == "-"


@pytest.mark.parametrize(
    ("sku", "op"), [("nl64", "allreduce"), ("nl72x2", "allreduce"), ("nl64", "alltoall")]
)
def test_the_bottleneck_names_every_class_whose_links_peak_in_the_busiest_step(sku, op):
    """A balanced multidim all-reduce keeps every class of link at the same peak (nl64: x, y and z;
    nl72x2: pcb, backplane and xrack, as their link_utilisation shows); the bottleneck names them
    all rather than the first in edge order. NL64's all-to-all is limited by its z links alone."""
    topo = topology(sku)
    result = evaluate(topo, op, [1 << 30], topo.chips, algo="auto")
    row = result.rows[0]
    plan = result.plans[row.algorithm]
    _, busy = plan.busiest_step()
    peak_of = {}
    for seconds, cls in zip(busy, plan.edge_class, strict=True):
        peak_of[cls] = max(peak_of.get(cls, 0.0), float(seconds))
    top = max(peak_of.values())
    expected = sorted(cls for cls, peak in peak_of.items() if math.isclose(peak, top, rel_tol=1e-9))
    assert row.bottleneck.split("=") == expected
    assert f"bottleneck {row.bottleneck}," in result.busiest_links().describe()  # the heatmap's step
    if op == "allreduce":  # balanced: every class the run uses is at the peak
        assert expected == sorted(row.link_utilisation) and len(expected) == 3
    else:
        assert expected == ["z"]
