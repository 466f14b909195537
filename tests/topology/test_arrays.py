"""The graph as arrays: every link bundle twice (once each way), chips first in rank order, and CSR
views that list exactly each node's out- and in-edges."""

import numpy as np
import pytest
from conftest import CATALOG, topology
from hypothesis import given, settings
from hypothesis import strategies as st

from trnsim.topology.arrays import graph_arrays


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_each_bundle_is_two_directed_edges_with_its_attributes(path):
    topo = topology(path.stem)
    arrays = graph_arrays(topo)
    assert arrays.nodes[: topo.n_ranks] == topo.chips
    assert sorted(arrays.nodes) == sorted(topo.nodes)
    m = len(topo.links)
    assert len(arrays.src) == 2 * m
    seen = {}
    for i in range(2 * m):
        u, v = arrays.nodes[arrays.src[i]], arrays.nodes[arrays.dst[i]]
        data = topo.link(u, v)
        assert data is not None, f"{u} -> {v} is no link"
        assert arrays.bw_gbps[i] == data["bw_gbps"]
        assert arrays.link_latency_ns[i] == data["latency_ns"]
        assert arrays.edge_cls[arrays.edge[i]] == data["cls"]
        seen.setdefault(arrays.edge[i], set()).add((u, v))
    # each undirected edge index holds its bundle both ways, nothing else
    assert len(seen) == m
    for pair in seen.values():
        a, b = next(iter(pair))
        assert pair == {(a, b), (b, a)}


@pytest.mark.parametrize("sku", ["trn3-nl32x2-gen2", "trn2-nl16", "tpu-v4-4x4x8"])
def test_the_csr_views_list_each_nodes_edges(sku):
    arrays = graph_arrays(topology(sku))
    order, starts = arrays.out_edges
    in_starts, in_ids = arrays.in_edges
    for node in range(arrays.n_nodes):
        out = set(order[starts[node] : starts[node + 1]].tolist())
        into = set(in_ids[in_starts[node] : in_starts[node + 1]].tolist())
        assert out == set(np.flatnonzero(arrays.src == node).tolist())
        assert into == set(np.flatnonzero(arrays.dst == node).tolist())


def _scipy_components(n, tails, heads):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    joined = sp.coo_array((np.ones(len(tails)), (tails, heads)), shape=(n, n))
    return connected_components(joined, directed=False)[1]


_EDGES = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60)
    )
)


@given(_EDGES)
@settings(max_examples=200, deadline=None)
def test_components_are_scipys_numbered_alike(case):
    from trnsim.topology.arrays import component_labels, smallest_in_component

    n, edges = case
    tails = np.array([a for a, _ in edges], dtype=np.int64)
    heads = np.array([b for _, b in edges], dtype=np.int64)
    expected = _scipy_components(n, tails, heads)
    assert component_labels(n, tails, heads).tolist() == expected.tolist()
    smallest = smallest_in_component(n, tails, heads)
    # the smallest node of each component, by brute force over the reference's labels
    assert smallest.tolist() == [int(np.flatnonzero(expected == expected[v])[0]) for v in range(n)]


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_components_of_each_link_class_are_scipys(path):
    from trnsim.topology.arrays import component_labels

    arrays = graph_arrays(topology(path.stem))
    for cls in set(arrays.edge_cls):
        kept = np.flatnonzero([arrays.edge_cls[e] == cls for e in arrays.edge])
        src, dst = arrays.src[kept], arrays.dst[kept]
        assert (
            component_labels(arrays.n_nodes, src, dst).tolist()
            == _scipy_components(arrays.n_nodes, src, dst).tolist()
        )
