"""scatter-allgather: the root's scatter (one step of S/p to each rank) and a ring all-gather that
sends nothing into the root (p - 1 steps of S/p per link); a reduce, the mirror image, takes as long."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled, ring_loads
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
