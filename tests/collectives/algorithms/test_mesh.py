"""mesh: broadcast and reduce in two direct rounds, and all-gather and reduce-scatter of unequal
blocks in one, each block at its own size; the even ops are in tests/model/test_closed_forms.py."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled, ring_loads
from collectives.algorithms.uneven import GRAPHS, assert_proven_and_costed_alike, shares
from collectives.graphs import contexts
from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.algorithms import REGISTRY, NotApplicable
from trnsim.collectives.check import check


@pytest.mark.parametrize("p", [2, 5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_on_a_complete_graph_a_broadcast_is_two_direct_rounds_of_a_block(p, size):
    topology = complete_topology(p, BW)
    want = 2 * (ALPHA_US + beta(size / p))
    for op in ("broadcast", "reduce"):
        for root in (0, p - 1):
            assert close(modelled(topology, op, "mesh", size, root), want), (op, root)


@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
@pytest.mark.parametrize("graph", GRAPHS)
def test_unequal_blocks_are_proven_and_costed_as_scheduled(graph, op):
    assert_proven_and_costed_alike(graph, "mesh", op)


@pytest.mark.parametrize("op", ["allgatherv", "reducescatterv"])
@pytest.mark.parametrize("size", SIZES)
def test_unequal_blocks_take_one_step_as_long_as_the_busiest_link(op, size):
    # a complete graph: each pair's link carries one block, the largest binds; a ring of five:
    # each block crosses the links on its way, the sender's (all-gather) or receiver's (reduce-scatter)
    p = 5
    counts = [x * 1e3 for x in shares(p)]  # any scale: only the proportions count
    b = shares(p)
    assert close(
        modelled(complete_topology(p, BW), op, "mesh", size, counts=counts), ALPHA_US + beta(size) * max(b)
    )
    block = (lambda i, j: b[i]) if op == "allgatherv" else (lambda i, j: b[j])
    load = ring_loads(p, [(i, j, block(i, j)) for i in range(p) for j in range(p) if i != j])
    want = ALPHA_US + beta(size) * max(load.values())
    assert close(modelled(ring_topology(p, lanes=int(BW)), op, "mesh", size, counts=counts), want)


def test_unequal_blocks_make_only_an_all_gather_or_a_reduce_scatter():
    from collectives.algorithms.uneven import uneven_context

    ctx = uneven_context("complete5")
    for op in ("allreduce", "alltoall", "broadcast"):
        for build in (REGISTRY["mesh"].schedule, REGISTRY["mesh"].program):
            with pytest.raises(NotApplicable, match="all-gather and reduce-scatter"):
                build(ctx, op)


@pytest.mark.parametrize("op", ["gather", "scatter", "sendrecv", "permute", "alltoallv"])
def test_the_demand_ops_run_as_all_to_alls_of_their_matrix_and_are_proven(op):
    # mesh, pairwise and multipath, the algorithms that take a traffic matrix: the programs check,
    # and an algorithm that combines blocks for several destinations is refused
    import numpy as np

    from trnsim.collectives.arguments import Arguments
    from trnsim.collectives.ops import get_op
    from trnsim.collectives.schedule import Context
    from trnsim.model.engine import evaluate

    plain, _ = contexts("torus3x4")
    counts = np.arange(144, dtype=float).reshape(12, 12) if op == "alltoallv" else None
    arguments = Arguments(root=5, counts=counts)
    traffic = arguments.traffic(get_op(op), plain.p)
    ctx = Context(plain.topology, plain.group, traffic)
    for algo in ("mesh", "pairwise", "multipath"):
        program = REGISTRY[algo].program(ctx, "alltoall")
        assert check(program).ok, (algo, check(program))
    result = evaluate(plain.topology, op, [1 << 20], plain.group, algo="all", arguments=arguments)
    assert set(result.plans) == {"mesh", "pairwise", "multipath"}
