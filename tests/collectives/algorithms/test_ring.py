"""ring: all-gather and reduce-scatter of unequal blocks, each ring step as long as the largest block
it forwards; the even ops are in tests/model/test_closed_forms.py."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled
from collectives.algorithms.uneven import GRAPHS, assert_proven_and_costed_alike, shares
from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.arguments import Arguments
from trnsim.model.engine import evaluate


@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
@pytest.mark.parametrize("graph", GRAPHS)
def test_unequal_blocks_are_proven_and_costed_as_scheduled(graph, op):
    assert_proven_and_costed_alike(graph, "ring", op)


@pytest.mark.parametrize("op", ["allgatherv", "reducescatterv"])
@pytest.mark.parametrize("size", SIZES)
def test_every_ring_step_forwards_every_block_once_so_the_largest_binds(op, size):
    # step s: the rank at ring position i forwards block order[i - s] (reduce-scatter: i - s - 1),
    # every block once, each over its own link: p - 1 steps of the largest block
    p = 5
    b = shares(p)
    want = (p - 1) * (ALPHA_US + beta(size) * max(b))
    for topology in (complete_topology(p, BW), ring_topology(p, lanes=int(BW))):
        assert close(modelled(topology, op, "ring", size, counts=list(b)), want), topology.name


def test_only_the_algorithms_that_move_unequal_blocks_run_them():
    topology = complete_topology(8, BW)
    counts = Arguments(counts=__import__("numpy").arange(1.0, 9.0))
    result = evaluate(topology, "allgatherv", [1 << 20], topology.chips, algo="all", arguments=counts)
    assert set(result.plans) == {"ring", "mesh"}
    assert all("equal sizes" in why for why in result.skipped.values()), result.skipped
    # even counts are the all-gather itself, which every all-gather algorithm runs
    even = evaluate(topology, "allgatherv", [1 << 20], topology.chips, algo="all")
    assert {"ring", "mesh", "rdh", "bruck"} <= set(even.plans)
