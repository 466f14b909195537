"""The bounds of the ops with a shape (a root, unequal blocks, a traffic matrix) through
lower_bound: the optimum family after the cheap ones, exact where proven, and THE done-means check
(send/recv across nl72x2's racks against networkx's max-flow)."""

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import get_op
from trnsim.model.bounds import candidates, lower_bound
from trnsim.model.optimum import demand
from trnsim.topology.synthetic import complete_topology, graph_topology, ring_topology

B = 100.0  # GB/s per link


def bound(topo, group, op_name, arguments=None, **options):
    op, arguments = get_op(op_name), arguments or Arguments()
    p = len(group)
    shape = dict(traffic=arguments.traffic(op, p), root=arguments.root, blocks=arguments.blocks(op, p))
    return lower_bound(topo, group, op, 0.0, 1, **shape, **options)


def max_flow(topo, a: str, b: str) -> float:
    """networkx's max-flow between two devices of the built graph: every link's bw_gbps (at its
    efficiency) in each direction."""
    import networkx as nx

    graph = nx.DiGraph()
    for (u, v), link in topo.links.items():
        for x, y in ((u, v), (v, u)):
            capacity = graph.get_edge_data(x, y, {"capacity": 0.0})["capacity"] + link["bw_gbps"]
            graph.add_edge(x, y, capacity=capacity)
    return nx.maximum_flow_value(graph, a, b)


@pytest.mark.parametrize("pairs", [((0, 1),), None])
def test_sendrecv_across_nl72x2_racks_is_the_max_flow_between_the_chips(pairs):
    """THE done-means check: chips 0 and 100 are in different racks; one way (0:1) or both (the
    default, each rank to the next), the bound's bandwidth is their max-flow, computed here by
    networkx on the built graph, and it is exact."""
    from trnsim.model.engine import evaluate

    topo = topology("nl72x2")
    a, b = topo.chips[0], topo.chips[100]
    assert topo.nodes[a]["rack"] != topo.nodes[b]["rack"]
    flow = max_flow(topo, a, b)
    raw = sum(link["raw_bw_gbps"] for ends, link in topo.links.items() if a in ends)
    assert flow < raw  # the links at their efficiency, as the bound uses them
    found = bound(topo, [a, b], "sendrecv", Arguments(pairs=pairs))
    assert found.exact and 1 / (found.seconds_per_byte * 1e9) == pytest.approx(flow, rel=1e-9)
    # the max-flow itself, not only a tie with chip 0's own links
    traffic = Arguments(pairs=pairs).traffic(get_op("sendrecv"), 2)
    optimum = candidates(topo, [a, b], get_op("sendrecv"), traffic)[-1]
    assert optimum.family == "optimum" and optimum.exact
    assert 1 / (optimum.seconds_per_byte * 1e9) == pytest.approx(flow, rel=1e-9)
    # the figure `trnsim collective sendrecv` prints (busbw = algbw for send/recv)
    row = evaluate(topo, "sendrecv", [1 << 30], [a, b], arguments=Arguments(pairs=pairs)).rows[0]
    assert row.bound_busbw_gbps == pytest.approx(flow, rel=1e-9)


def test_the_optimum_comes_after_the_cheap_candidates_of_each_shape():
    square = complete_topology(4, bw_gbps=B)
    chips = square.chips
    cases = [
        ("sendrecv", Arguments(pairs=((0, 2),))),
        ("gather", Arguments(root=1)),
        ("broadcast", Arguments(root=3)),
        ("reduce", Arguments()),
        ("allgatherv", Arguments(counts=np.array([1.0, 2.0, 3.0, 4.0]))),
    ]
    for name, arguments in cases:
        op = get_op(name)
        shape = dict(traffic=arguments.traffic(op, 4), root=arguments.root, blocks=arguments.blocks(op, 4))
        families = [c.family for c in candidates(square, chips, op, **shape)]
        assert families[-1] == "optimum" and families.count("optimum") == 1, name
        cheap = [c.family for c in candidates(square, chips, op, with_optimum=False, **shape)]
        assert "optimum" not in cheap and families[:-1] == cheap, name


@pytest.mark.parametrize("p", [3, 5, 8])
def test_broadcast_and_reduce_on_a_complete_graph_are_its_min_cut_and_exact(p):
    """Every cut around the root crosses p-1 links: (p-1) B (the root's own links: injection)."""
    topo = complete_topology(p, bw_gbps=B)
    for op in ("broadcast", "reduce"):
        found = bound(topo, topo.chips, op, Arguments(root=p - 1))
        assert found.seconds_per_byte * (p - 1) * B * 1e9 == pytest.approx(1.0, rel=1e-12)
        assert found.exact and found.limited_by == f"injection (c{p - 1})"


def test_a_broadcast_held_by_a_thin_link_names_its_cut_and_through_switches_is_not_exact():
    """Two triangles of chips bridged by one 10 GB/s link: the far side gets S over 10 GB/s, below
    every chip's own 200; exact (chips only). The same behind a switch is a Steiner bound."""
    left, right = ["c0", "c1", "c2"], ["c3", "c4", "c5"]
    links = {(a, b): B for side in (left, right) for i, a in enumerate(side) for b in side[i + 1 :]}
    bridge = {**links, ("c2", "c3"): 10.0}
    found = bound(graph_topology(6, 0, bridge), [f"c{i}" for i in range(6)], "broadcast")
    assert found.seconds_per_byte * 10e9 == pytest.approx(1.0, rel=1e-12)
    assert found.exact and found.limited_by.startswith("min cut from c0 (cut: ")
    switched = {**links, ("c2", "s0"): 10.0, ("s0", "c3"): 10.0}
    found = bound(graph_topology(6, 1, switched), [f"c{i}" for i in range(6)], "broadcast")
    assert found.seconds_per_byte * 10e9 == pytest.approx(1.0, rel=1e-12) and not found.exact


def test_allgatherv_with_two_ranks_is_the_larger_missing_share():
    pair = complete_topology(2, bw_gbps=B)
    found = bound(pair, pair.chips, "allgatherv", Arguments(counts=np.array([1.0, 3.0])))
    assert found.seconds_per_byte * B * 1e9 == pytest.approx(0.75, rel=1e-12)
    assert found.exact and found.limited_by == "injection (c0)"


def test_demand_ops_are_exact_where_solved_and_valid_past_the_lp_limit(monkeypatch):
    ring = ring_topology(5)
    permute = bound(ring, ring.chips, "permute")  # each rank to the next: (p-1)/p S / B on a ring
    assert permute.exact and permute.seconds_per_byte * B * 1e9 == pytest.approx(4 / 5, rel=1e-6)
    monkeypatch.setattr(demand, "DEMAND_LP_ENTRIES", 0)
    cheap = bound(ring_topology(6), ring_topology(6).chips, "permute")
    assert not cheap.exact and cheap.seconds_per_byte * 2 * B * 1e9 == pytest.approx(1.0, rel=1e-12)
    assert not bound(ring, ring.chips, "permute", with_optimum=False).exact


def test_a_skewed_all_to_all_keeps_its_cheap_candidates_only():
    ring = ring_topology(4)
    traffic = np.arange(16.0).reshape(4, 4)
    found = candidates(ring, ring.chips, get_op("alltoall"), traffic)
    assert "optimum" not in [c.family for c in found]
    assert not lower_bound(ring, ring.chips, get_op("alltoall"), 0.0, 1, traffic).exact


def test_nl64_broadcast_is_the_smallest_max_flow_from_the_root():
    """nl64 has no switches: every device is a member, so the min cut is the optimum (Edmonds).
    min over every other chip of networkx's max-flow from chip 0."""
    topo = topology("nl64")
    assert len(topo.nodes) == len(topo.chips)
    smallest = min(max_flow(topo, topo.chips[0], chip) for chip in topo.chips[1:])
    found = bound(topo, topo.chips, "broadcast")
    assert found.exact and 1 / (found.seconds_per_byte * 1e9) == pytest.approx(smallest, rel=1e-9)
