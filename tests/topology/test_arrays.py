"""The graph as arrays: every link bundle twice (once each way), chips first in rank order, and CSR
views that list exactly each node's out- and in-edges."""

import numpy as np
import pytest
from conftest import CATALOG, topology

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
