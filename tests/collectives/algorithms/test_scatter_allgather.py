"""scatter-allgather: the root's scatter (one step of S/p to each rank) and a ring all-gather that
sends nothing into the root (p - 1 steps of S/p per link); a reduce, the mirror image, takes as long."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled, pipelined_us, ring_loads
from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.algorithms import REGISTRY, Context


@pytest.mark.parametrize("p", [5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_on_a_complete_graph_it_takes_p_steps_of_a_block(p, size):
    topology = complete_topology(p, BW)
    want = p * (ALPHA_US + beta(size / p))  # p alpha + S/B
    for op in ("broadcast", "reduce"):
        for root in (0, p - 1):
            assert close(modelled(topology, op, "scatter-allgather", size, root), want), (op, root)


@pytest.mark.parametrize("p", [5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_on_a_ring_the_scatter_loads_the_roots_two_links(p, size):
    # the root's blocks go the shorter way round: its busiest link carries the blocks of the ranks
    # on its side, (p - 1)/2 of them (p even: p/2 - 1 and half the opposite rank's, split by ECMP)
    topology = ring_topology(p, lanes=int(BW))
    root = 2
    scatter = ring_loads(p, [(root, j, 1 / p) for j in range(p) if j != root])
    assert close(max(scatter.values()), (p - 1) / (2 * p))
    want = ALPHA_US + beta(size) * max(scatter.values()) + (p - 1) * (ALPHA_US + beta(size / p))
    for op in ("broadcast", "reduce"):
        assert close(modelled(topology, op, "scatter-allgather", size, root), want), op


def test_nothing_goes_into_the_root_of_a_broadcast_nor_out_of_the_root_of_a_reduce():
    topology = complete_topology(5, BW)
    ctx = Context(topology, list(topology.chips), root=3)
    algo = REGISTRY["scatter-allgather"]
    for step in algo.schedule(ctx, "broadcast"):
        assert 3 not in step.dst.tolist()
    for step in algo.schedule(ctx, "reduce"):
        assert 3 not in step.src.tolist()
    assert [s.label for s in algo.schedule(ctx, "reduce")] == ["reduce-scatter", "gather"]


# scatter-multidim: the scatter, then the best all-gather the group has (multidim, torus, multiring)


def _checked(ctx, op):
    from trnsim.collectives.agreement import agreement
    from trnsim.collectives.check import check

    algo = REGISTRY["scatter-multidim"]
    program = algo.program(ctx, op)
    report = check(program)
    assert report.ok, (op, ctx.root, str(report))
    assert agreement(program, algo.schedule(ctx, op)).ok, (op, ctx.root)
    return program


@pytest.mark.parametrize("gathers", [("multidim",), ("torus",), ("multiring",)])
@pytest.mark.parametrize("graph", ["torus4x4", "switched16"])
def test_scatter_multidim_broadcasts_and_reduces_over_each_all_gather(graph, gathers, monkeypatch):
    from collectives.graphs import graph as built
    from trnsim.collectives.algorithms import scatter_allgather
    from trnsim.collectives.schedule import NotApplicable

    monkeypatch.setattr(scatter_allgather, "FAST_GATHERS", gathers)
    topology, group = built(graph)
    for root in (0, len(group) // 2 + 1):
        ctx = Context(topology, group, root=root)
        try:
            REGISTRY[gathers[0]].schedule(ctx, "allgather")
        except NotApplicable:
            with pytest.raises(NotApplicable, match=gathers[0]):
                REGISTRY["scatter-multidim"].schedule(ctx, "broadcast")
            continue
        for op in ("broadcast", "reduce"):
            program = _checked(ctx, op)
            # nothing goes into the root of a broadcast, nor out of the root of a reduce
            ends = [t.dst if op == "broadcast" else t.src for t in program.transfers]
            assert root not in ends


@pytest.mark.parametrize("p", [5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_scatter_multidim_on_a_complete_graph_is_a_two_stage_pipeline(p, size):
    # one dimension, a mesh: the root's scatter (S/p to each rank), then every rank's block to every
    # other rank but the root, pipelined; the reduce runs the mirror image, as long
    topology = complete_topology(p, BW)
    root = p // 2
    scatter = {(root, j): 1 / p for j in range(p) if j != root}
    gather = {(u, v): 1 / p for u in range(p) for v in range(p) if u != v and v != root}
    want = pipelined_us([scatter, gather], size)
    for op in ("broadcast", "reduce"):
        assert close(modelled(topology, op, "scatter-multidim", size, root), want), op


def test_scatter_multidim_on_nl72x2_doubles_the_ring_all_gather_broadcast_and_stays_under_the_bound():
    from trnsim.model.engine import evaluate
    from trnsim.topology.load import load_topology

    topology = load_topology("trn3-nl72x2-gen1")
    result = evaluate(topology, "broadcast", [1 << 30], topology.chips, algo="all")
    new = result.by_algorithm["scatter-multidim"][0].time_us
    ring = result.by_algorithm["scatter-allgather"][0].time_us
    assert ring >= 2 * new  # measured: 490.8 against 195.0 GB/s
    row = result.by_algorithm["scatter-multidim"][0]
    assert 0 < row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
