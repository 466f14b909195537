"""The torus builder (trnsim.topology.torus): closed-form counts, isomorphisms, rank order and the
size-1/size-2 corner cases."""

import networkx as nx
from conftest import topology

from trnsim.spec.catalog import find_sku, read_document, validate_document
from trnsim.topology.builders import build
from trnsim.topology.metrics import chip_bandwidth_gbps


def _torus(axes, **extra):
    document = read_document(find_sku("nl16"))
    document["torus"] = {"axes": axes, **extra}
    return build(validate_document(document, find_sku("nl16")))


def test_nl16_is_a_4x4_torus_and_a_4_cube():
    topo = topology("trn2-nl16")
    graph = topo.graph
    assert topo.n_chips == 16 and graph.number_of_edges() == 32
    assert {d for _, d in graph.degree()} == {4}
    assert set(chip_bandwidth_gbps(topo, raw=True).values()) == {512.0}
    assert nx.is_isomorphic(graph, nx.hypercube_graph(4))
    assert nx.diameter(graph) == 4


def test_nl16_tray_slot_labels_follow_the_hypercube_wiring():
    graph = topology("trn2-nl16").graph
    trays = {}
    for node, data in graph.nodes(data=True):
        trays.setdefault(data["tray"], []).append(node)
        # every hypercube edge flips exactly one address bit
    assert sorted(len(v) for v in trays.values()) == [2] * 8
    for u, v, data in graph.edges(data=True):
        flipped = graph.nodes[u]["hcube"] ^ graph.nodes[v]["hcube"]
        assert flipped in (1, 2, 4, 8)
        same_tray = graph.nodes[u]["tray"] == graph.nodes[v]["tray"]
        assert same_tray == (flipped == 1) == (data["medium"] == "pcb")
    # one PCB neighbour and three backplane neighbours per chip
    for node in graph:
        media = sorted(d["medium"] for _, _, d in graph.edges(node, data=True))
        assert media == ["backplane", "backplane", "backplane", "pcb"]


def test_nl64_counts_bandwidths_and_rank_order():
    topo = topology("trn2-nl64")
    graph = topo.graph
    assert topo.n_chips == 64 and graph.number_of_edges() == 192
    assert set(chip_bandwidth_gbps(topo, raw=True).values()) == {640.0}
    z_links = [d for _, _, d in graph.edges(data=True) if d["cls"] == "z"]
    assert len(z_links) == 64 and {d["raw_bw_gbps"] for d in z_links} == {64.0}
    assert nx.diameter(graph) == 6
    # rank order: row-major, last axis fastest; the server axis (z) is first, so servers are rank blocks
    for rank, name in enumerate(topo.chips):
        data = graph.nodes[name]
        assert data["rank"] == rank
        assert rank == data["coord"][0] * 16 + data["coord"][1] * 4 + data["coord"][2]
        assert data["server"] == rank // 16
    assert nx.is_isomorphic(graph, nx.hypercube_graph(6))


def test_nl256_concept_has_256_chips():
    topo = topology("trn2-nl256-concept")
    assert topo.n_chips == 256 and topo.graph.number_of_edges() == 768


def test_size_two_ring_keeps_both_links_and_size_one_has_none():
    topo = _torus(
        [
            {"name": "a", "size": 2, "lanes": 8},
            {"name": "b", "size": 1, "lanes": 8},
            {"name": "c", "size": 3, "lanes": 4},
        ]
    )
    graph = topo.graph
    assert topo.n_chips == 6
    a_links = [d for _, _, d in graph.edges(data=True) if d["cls"] == "a"]
    assert len(a_links) == 3 and all(d["parallel"] == 2 and d["lanes"] == 16 for d in a_links)
    assert not [d for _, _, d in graph.edges(data=True) if d["cls"] == "b"]
    assert set(chip_bandwidth_gbps(topo, raw=True).values()) == {2 * 8 * 4 + 2 * 4 * 4}


def test_unwrapped_axis_is_a_line():
    topo = _torus([{"name": "a", "size": 4, "lanes": 8, "wrap": False}])
    assert nx.is_isomorphic(topo.graph, nx.path_graph(4))


def test_general_torus_matches_a_product_of_cycles():
    topo = _torus([{"name": "a", "size": 3, "lanes": 8}, {"name": "b", "size": 5, "lanes": 8}])
    assert nx.is_isomorphic(topo.graph, nx.cartesian_product(nx.cycle_graph(3), nx.cycle_graph(5)))
