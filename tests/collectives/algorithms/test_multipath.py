"""multipath: closed forms on rings and complete graphs, and NL72x2's max-flow between racks.

Bandwidths are read off the model as a slope: a plain step costs alpha + its latency + size x its
busiest link's seconds per byte, so ``S / (time(2S) - time(S))`` is the step's bandwidth exactly,
whatever alpha and the paths' latency (which ``max_hops`` checks on its own).
"""

import networkx as nx
import pytest
from conftest import topology

from collectives.graphs import contexts
from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.agreement import agreement
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.arguments import Arguments
from trnsim.collectives.check import check
from trnsim.collectives.ops import get_op
from trnsim.collectives.schedule import Context, NotApplicable
from trnsim.model.engine import evaluate
from trnsim.model.router import Router

S = 1 << 30


def _run(topo, group, op, pairs, algo="multipath"):
    """The op's two rows at S and 2S, and its modelled bandwidth per pair in GB/s (the slope)."""
    result = evaluate(topo, op, [S, 2 * S], group, algo=algo, arguments=Arguments(pairs=pairs))
    small, large = result.by_algorithm[algo]
    return small, S / ((large.time_us - small.time_us) * 1e3)


@pytest.mark.parametrize("p", [3, 6])
def test_neighbours_on_a_ring_get_both_ways_round(p):
    ring = ring_topology(p, lanes=100)
    row, gbps = _run(ring, ring.chips, "sendrecv", ((0, 1),))
    assert gbps == pytest.approx(2 * 100, rel=1e-6)
    assert row.max_hops == p - 2  # the long way round: p - 1 links
    assert _run(ring, ring.chips, "sendrecv", ((0, 1),), "mesh")[1] == pytest.approx(100, rel=1e-9)


def test_two_chips_of_a_complete_graph_get_the_direct_link_and_every_two_hop_path():
    p = 5
    square = complete_topology(p, bw_gbps=100.0)
    row, gbps = _run(square, square.chips, "sendrecv", ((0, 3),))
    assert gbps == pytest.approx((p - 1) * 100, rel=1e-6)
    assert row.max_hops == 1


def test_a_cyclic_shift_on_a_ring_sends_a_pth_the_long_way():
    # each flow sends f the long way (p - 1 links): clockwise links carry 1 - f, the others
    # (p - 1) f; balanced at f = 1/p, a link carries (p - 1)/p of a block: p/(p - 1) B per pair
    p = 5
    ring = ring_topology(p, lanes=100)
    shift = tuple((i, (i + 1) % p) for i in range(p))
    assert _run(ring, ring.chips, "permute", shift)[1] == pytest.approx(p / (p - 1) * 100, rel=1e-6)


def _max_flow_gbps(topo, a: str, b: str) -> float:
    """networkx's max-flow between two chips over the built graph's links, each direction at the
    link's modelled bandwidth (every device forwards: the system's routing relays through chips)."""
    assert topo.spec.routing.relay
    graph = nx.DiGraph()
    for (u, v), data in topo.links.items():
        graph.add_edge(u, v, capacity=data["bw_gbps"])
        graph.add_edge(v, u, capacity=data["bw_gbps"])
    return nx.maximum_flow_value(graph, a, b)


def test_sendrecv_between_nl72x2_racks_reaches_the_max_flow_between_the_chips():
    topo = topology("nl72x2")
    a, b = topo.chips[0], topo.chips[100]
    assert topo.nodes[a]["rack"] != topo.nodes[b]["rack"]
    expected = _max_flow_gbps(topo, a, b)
    row, gbps = _run(topo, [a, b], "sendrecv", ((0, 1),))
    assert gbps == pytest.approx(expected, rel=1e-6)
    # at 1 GiB what is left is alpha, the collective's fixed cost and the longest path's latency
    assert row.busbw_gbps < expected and row.busbw_gbps == pytest.approx(expected, rel=1e-2)
    assert _run(topo, [a, b], "sendrecv", ((0, 1),), "mesh")[1] < expected / 4
    ctx = Context(topo, [a, b], Arguments(pairs=((0, 1),)).traffic(get_op("sendrecv"), 2))
    algo = REGISTRY["multipath"]
    program = algo.program(ctx, "alltoall")
    assert check(program).ok
    assert agreement(program, algo.schedule(ctx, "alltoall")).ok


@pytest.mark.parametrize("graph", ["ring5", "complete5", "torus3x4", "hgx8"])
def test_at_large_sizes_it_is_never_slower_than_mesh(graph):
    # the flow program may use every path mesh's ECMP uses (hgx8: through switches only, as its
    # routing does not relay through GPUs), so its busiest link is never busier
    _, ctx = contexts(graph)
    router = Router(ctx.topology, ctx.group)
    (mine,) = REGISTRY["multipath"].schedule(ctx, "alltoall")
    (direct,) = REGISTRY["mesh"].schedule(ctx, "alltoall")
    ours, theirs = router.route(mine).seconds_per_byte, router.route(direct).seconds_per_byte
    assert ours <= theirs * (1 + 1e-6)


def test_it_refuses_a_uniform_all_to_all_and_a_program_too_large():
    ring = ring_topology(4)
    with pytest.raises(NotApplicable, match="demand matrix"):
        REGISTRY["multipath"].schedule(Context(ring, ring.chips), "alltoall")
    nl64 = topology("nl64")
    shift = Arguments().traffic(get_op("sendrecv"), 64)  # 64 sources x 384 directed links
    with pytest.raises(NotApplicable, match="24,576 variables"):
        REGISTRY["multipath"].schedule(Context(nl64, nl64.chips, shift), "alltoall")
