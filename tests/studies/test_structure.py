"""What the topo commands report, checked against networkx on the built graph."""

import networkx as nx

from trnsim.studies.structure import counts, distances_from, path_between, structure
from trnsim.topology import load_topology


def test_counts_and_hops_match_networkx_on_a_torus():
    topology = load_topology("nl16")
    graph = nx.Graph(topology.graph)
    assert counts(topology)["chips"] == 16 and counts(topology)["links"] == graph.number_of_edges()
    lengths = dict(nx.all_pairs_shortest_path_length(graph))
    report = structure(topology)
    assert report["diameter_links"] == max(max(row.values()) for row in lengths.values())
    pairs = [lengths[a][b] for i, a in enumerate(topology.chips) for b in topology.chips[i + 1 :]]
    assert abs(report["avg_links"] - sum(pairs) / len(pairs)) < 1e-12
    origin = topology.chips[0]
    assert [row["links"] for row in distances_from(topology, origin)] == [
        lengths[origin][chip] for chip in topology.chips
    ]


def test_a_path_between_racks_is_a_shortest_path_counted_by_networkx():
    topology = load_topology("nl72x2")
    a, b = topology.chips[0], topology.chips[78]
    report = path_between(topology, a, b)
    graph = nx.Graph(topology.graph)
    assert report["links"] == nx.shortest_path_length(graph, a, b)
    assert report["path"][0] == a and report["path"][-1] == b
    assert all(graph.has_edge(u, v) for u, v in zip(report["path"], report["path"][1:], strict=False))
    assert report["paths"] == sum(1 for _ in nx.all_shortest_paths(graph, a, b))
