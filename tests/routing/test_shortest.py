"""The vectorised shortest-path core equals the straightforward networkx computation.

Hop histograms against ``nx.all_pairs_shortest_path_length`` and all-to-all ECMP link loads against
``nx.edge_betweenness_centrality_subset``, on every catalog SKU, random small graphs and random tori.
"""

from contextlib import contextmanager

import networkx as nx
import numpy as np
import pytest
from conftest import CATALOG, topology
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trnsim.routing.ecmp import alltoall_link_loads
from trnsim.routing.hops import hop_histogram
from trnsim.spec.catalog import find_sku, read_document, validate_document
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.builders import build
from trnsim.topology.graph import Topology


def _reference_histogram(topo: Topology) -> dict[int, int]:
    graph, chips = topo.graph, topo.chips
    histogram: dict[int, int] = {}
    for i, chip in enumerate(chips):
        lengths = nx.single_source_shortest_path_length(graph, chip)
        for other in chips[i + 1 :]:
            histogram[lengths[other]] = histogram.get(lengths[other], 0) + 1
    return histogram


def _brute_force_loads(topo: Topology, edge_ends) -> np.ndarray:
    """Every ordered chip pair's unit of traffic split evenly over all its shortest paths, counted."""
    load: dict[frozenset, float] = {}
    for s in topo.chips:
        for t in topo.chips:
            if s == t:
                continue
            paths = list(nx.all_shortest_paths(topo.graph, s, t))
            for path in paths:
                for u, v in zip(path, path[1:], strict=False):
                    key = frozenset((u, v))
                    load[key] = load.get(key, 0.0) + 1 / len(paths)
    return np.array([load.get(frozenset(ends), 0.0) / 2 for ends in edge_ends])


def _check_against_networkx(topo: Topology) -> None:
    assert hop_histogram(topo).histogram_links == _reference_histogram(topo)
    arrays = graph_arrays(topo)
    loads = alltoall_link_loads(topo)
    m = len(arrays.edge_ends)
    ours = (loads[:m] + loads[m:]) / 2  # networkx halves undirected betweenness
    if len(topo.nodes) <= 30:
        # small graphs: path enumeration itself (networkx 3.6's subset betweenness is off on some
        # graphs with non-member nodes, e.g. n=11, p=0.1875, seed=522 with 3 switches)
        expected = _brute_force_loads(topo, arrays.edge_ends)
    else:
        reference = nx.edge_betweenness_centrality_subset(
            topo.graph, topo.chips, topo.chips, normalized=False
        )
        expected = np.array([reference.get((u, v), reference.get((v, u))) for u, v in arrays.edge_ends])
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_catalog_equals_networkx(path):
    _check_against_networkx(topology(path.stem))


def _from_networkx(graph: nx.Graph, n_switches: int) -> Topology:
    """A topology whose first nodes are chips and last ``n_switches`` nodes are switches."""
    # a switched spec: the torus shortcuts key off the spec, and this graph is no torus
    spec = validate_document(read_document(find_sku("nl32x2")), find_sku("nl32x2"))
    names = [f"v{i}" for i in graph.nodes]
    n_chips = len(names) - n_switches
    nodes = {
        name: {"kind": "chip", "rank": i, "latency_ns": 1.0}
        if i < n_chips
        else {
            "kind": "switch",
            "role": "plane",
            "model": "m",
            "ports": None,
            "lanes": None,
            "latency_ns": 2.0,
        }
        for i, name in enumerate(names)
    }
    links = {
        (f"v{u}", f"v{v}"): {
            "cls": "l",
            "lanes": 1,
            "active_lanes": 1,
            "bw_gbps": 1.0,
            "latency_ns": 1.0,
            "medium": "pcb",
            "parallel": 1,
        }
        for u, v in graph.edges
    }
    return Topology(spec=spec, nodes=nodes, links=links, chips=names[:n_chips])


@contextmanager
def _compiled_from(threshold: int | None):
    """The compiled kernels from ``threshold`` (units of :data:`kernels.COMPILED_FROM`; None: as is)."""
    from trnsim.routing import kernels

    saved = kernels.COMPILED_FROM
    kernels.COMPILED_FROM = saved if threshold is None else threshold
    try:
        yield
    finally:
        kernels.COMPILED_FROM = saved


@pytest.mark.parametrize("compiled_from", [None, 0], ids=["numpy", "compiled"])
@settings(max_examples=40, deadline=None)
@example(n=11, p=0.1875, seed=522, switches=3)
@given(n=st.integers(4, 24), p=st.floats(0.1, 0.6), seed=st.integers(0, 10_000), switches=st.integers(0, 3))
def test_random_graphs_equal_networkx(compiled_from, n, p, seed, switches):
    graph = nx.gnp_random_graph(n, p, seed=seed)
    graph.add_edges_from(zip(range(n - 1), range(1, n), strict=True))  # keep it connected
    with _compiled_from(compiled_from):
        _check_against_networkx(_from_networkx(graph, min(switches, n - 2)))


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    wrap=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_random_tori_equal_networkx(sizes, wrap):
    """Open axes (a mesh) take the BFS and the per-source loads, wrapped ones the closed forms."""
    document = read_document(find_sku("nl16"))
    del document["torus"]["hypercube_plane"]
    document["torus"]["axes"] = [
        {"name": f"a{i}", "size": size, "lanes": 8, "wrap": wrap[i]} for i, size in enumerate(sizes)
    ]
    topo = build(validate_document(document, find_sku("nl16")))
    if topo.n_chips >= 2:
        _check_against_networkx(topo)
        with _compiled_from(0):
            _check_against_networkx(build(validate_document(document, find_sku("nl16"))))


def _scipy_distances(arrays, sources):
    from scipy.sparse.csgraph import shortest_path

    found = np.atleast_2d(shortest_path(arrays.unit_csr, unweighted=True, directed=True, indices=sources))
    return np.where(np.isfinite(found), found, -1).astype(np.int32)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 30), p=st.floats(0.0, 0.5), seed=st.integers(0, 10_000), rows=st.integers(1, 30))
def test_numpy_distances_are_scipys_also_unreachable(n, p, seed, rows):
    # no path kept: components apart, nodes alone
    from trnsim.routing.shortest import _frontier_distances

    graph = nx.gnp_random_graph(n, p, seed=seed)
    graph.add_edge(0, n - 1)  # at least one link
    arrays = graph_arrays(_from_networkx(graph, 0))
    sources = np.random.default_rng(seed).integers(0, n, size=min(rows, n))
    found = _frontier_distances(arrays, sources, 1 << 30)
    assert found is not None and found.dtype == np.int32
    np.testing.assert_array_equal(found, _scipy_distances(arrays, sources))


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_distances_are_scipys_within_or_past_the_numpy_budget(path, monkeypatch):
    from trnsim.routing import shortest

    arrays = graph_arrays(topology(path.stem))
    sources = np.arange(arrays.n_chips)
    expected = _scipy_distances(arrays, sources)
    np.testing.assert_array_equal(shortest.distances(arrays, sources), expected)
    # a budget too small for the search: it stops (None), and scipy's answer is the same
    assert shortest._frontier_distances(arrays, sources, len(sources) * len(arrays.src)) is None
    monkeypatch.setattr(shortest, "_FRONTIER_WORK", 1)
    np.testing.assert_array_equal(shortest.distances(arrays, sources), expected)
