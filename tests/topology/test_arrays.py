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


@pytest.mark.parametrize("hooked", [True, False])
def test_components_label_each_part_by_its_smallest_node(monkeypatch, hooked):
    """Against a breadth-first search on random graphs (forests, paths, one giant part, lone nodes),
    in numpy and through scipy's search alike."""
    import random

    from trnsim.topology import arrays

    if not hooked:
        monkeypatch.setattr(arrays, "HOOK_EDGES", -1)
    rng = random.Random(11)
    for n, m in [(1, 0), (6, 0), (10, 4), (50, 49), (200, 150), (300, 900)]:
        pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(m)]
        if n == 50:  # a path, shuffled: the longest chain of hooks
            order = rng.sample(range(n), n)
            pairs = list(zip(order, order[1:], strict=False))
        neighbours = {v: set() for v in range(n)}
        for u, v in pairs:
            neighbours[u].add(v)
            neighbours[v].add(u)
        expected = [-1] * n
        for start in range(n):  # ascending: the first node reached of a part is its smallest
            if expected[start] < 0:
                expected[start], queue = start, [start]
                while queue:
                    for nxt in neighbours[queue.pop()]:
                        if expected[nxt] < 0:
                            expected[nxt] = start
                            queue.append(nxt)
        src = np.array([u for u, _ in pairs], dtype=np.int64)
        dst = np.array([v for _, v in pairs], dtype=np.int64)
        assert arrays.components(n, src, dst).tolist() == expected, (n, m)
