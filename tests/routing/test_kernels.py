"""The compiled kernels give the numbers of the numpy routines they stand in for on big fabrics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trnsim.model.engine import evaluate
from trnsim.routing import kernels
from trnsim.routing.ecmp import ecmp_loads, pair_loads
from trnsim.routing.shortest import bfs, path_latency_ns, transit_mask
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.load import load_topology

SYSTEMS = [
    ("trn3-nl72x2-gen1", []),  # switches, relaying chips, several link classes
    ("trn2-nl64", ["torus.axes.x.wrap=false"]),  # a torus cut open on one axis
    ("tpu-v4-4x4x8", []),  # twisted
]


@pytest.mark.parametrize(("sku", "edits"), SYSTEMS)
@pytest.mark.parametrize("relay", [True, False])
def test_bfs_counts_latencies_and_loads_equal_the_numpy_walk(sku, edits, relay):
    topology = load_topology(sku, overrides=edits)
    arrays = graph_arrays(topology)
    transit = transit_mask(arrays, relay)
    sources = np.arange(topology.n_ranks)
    reference = bfs(arrays, sources, transit)
    dist, sigma, latency = kernels.bfs_all(arrays, sources, transit)
    assert np.array_equal(dist, reference.dist)
    assert np.allclose(sigma, reference.sigma)
    assert np.allclose(latency, path_latency_ns(arrays, reference))
    rng = np.random.default_rng(1)
    demand = np.zeros((len(sources), arrays.n_nodes))
    demand[:, : topology.n_ranks] = rng.random((len(sources), topology.n_ranks))
    demand[sources, sources] = 0.0
    reached = reference.dist >= 0
    demand *= reached
    assert np.allclose(
        kernels.ecmp_demand_loads(arrays, sources, transit, demand), ecmp_loads(arrays, reference, demand)
    )
    flows = (
        rng.integers(0, len(sources), 400),
        rng.integers(0, len(sources), 400),
        rng.random(400),
        rng.integers(0, 4, 400),
    )
    keep = reference.dist[flows[0], flows[1]] >= 0
    flows = tuple(part[keep] for part in flows)
    narrow = reference.dist.astype(np.int16)
    expected = pair_loads(arrays, narrow, reference.sigma, sources, flows, 4, transit)
    got = kernels.flow_loads(arrays, reference.dist, reference.sigma, sources, flows, 4, transit)
    assert np.allclose(got, expected)


OPEN = {
    "trn2-nl64": ["torus.axes.x.wrap=false"],
    "tpu-v5e-16x16": ["torus.axes.x.wrap=false", "torus.axes.y.wrap=false"],
}


@pytest.mark.parametrize(("sku", "op", "group"), [
    ("trn3-nl72x2-gen1", "allreduce", None),
    ("trn3-nl72x2-gen1", "alltoall", "rack:0"),
    ("trn2-nl64", "alltoall", None),
    ("tpu-v5e-16x16", "alltoall", None),  # a 16x16 mesh: paths of up to 30 links, flow by flow
])  # fmt: skip
def test_an_evaluation_is_the_same_through_the_compiled_kernels(monkeypatch, sku, op, group):
    from trnsim.topology.groups import select_group

    sizes = [1 << 10, 1 << 20, 1 << 30]
    topology = load_topology(sku, overrides=OPEN.get(sku, []))
    chips = select_group(topology, group, None)
    plain = evaluate(topology, op, sizes, chips, algo="all")
    monkeypatch.setattr(kernels, "COMPILED_FROM", 0)
    again = load_topology(sku, overrides=OPEN.get(sku, []))
    compiled = evaluate(again, op, sizes, select_group(again, group, None), algo="all")
    for name, rows in plain.by_algorithm.items():
        for a, b in zip(rows, compiled.by_algorithm[name], strict=True):
            assert b.time_us == pytest.approx(a.time_us, rel=1e-9), name
            assert b.bound_busbw_gbps == pytest.approx(a.bound_busbw_gbps, rel=1e-6), name


def test_the_length_kernel_equals_the_numpy_dual_evaluation(monkeypatch):
    from trnsim.model import optimum
    from trnsim.model.optimum.lengths import LENGTH_FLOOR, csr_layout, dual_value

    topology = load_topology("trn2-nl64", overrides=["torus.axes.x.wrap=false"])
    net = optimum.network(topology, topology.chips)
    classes = optimum.edge_classes(net)
    k = int(classes.max()) + 1
    member_mask = np.zeros(net.n, dtype=bool)
    member_mask[net.members] = True
    structure = csr_layout(net)
    for w in (np.ones(k), np.linspace(1.0, 2.0, k)):
        point = w + LENGTH_FLOOR
        monkeypatch.setattr(kernels, "COMPILED_FROM", 1 << 60)
        g, grad, loads, _ = dual_value(net, structure, classes, point, net.members, member_mask, True)
        monkeypatch.setattr(kernels, "COMPILED_FROM", 0)
        g2, grad2, loads2, _ = dual_value(net, structure, classes, point, net.members, member_mask, True)
        assert g2 == pytest.approx(g, rel=1e-9)
        assert np.allclose(grad2, grad) and np.allclose(loads2, loads)


def _random_arrays(n: int, p: float, seed: int, switches: int):
    """A connected random graph of ``n`` nodes, the last ``switches`` of them switches, with random
    link rates and latencies (ECMP splits by path counts: the rates must not matter)."""
    import networkx as nx

    from trnsim.topology.arrays import GraphArrays

    graph = nx.gnp_random_graph(n, p, seed=seed)
    graph.add_edges_from(zip(range(n - 1), range(1, n), strict=True))
    rng = np.random.default_rng(seed)
    u, v = (np.array(side, dtype=np.int64) for side in zip(*graph.edges, strict=True))
    m = len(u)
    return GraphArrays(
        nodes=[f"v{i}" for i in range(n)],
        n_chips=n - switches,
        src=np.concatenate([u, v]),
        dst=np.concatenate([v, u]),
        edge=np.tile(np.arange(m), 2),
        bw_gbps=np.tile(rng.choice([25.0, 50.0, 100.0], m), 2),
        link_latency_ns=np.tile(rng.integers(1, 50, m).astype(float), 2),
        node_latency_ns=rng.integers(0, 300, n).astype(float),
        edge_cls=["l"] * m,
        edge_ends=[(f"v{a}", f"v{b}") for a, b in zip(u, v, strict=True)],
    )


GRAPHS = dict(
    n=st.integers(3, 40),
    p=st.floats(0.05, 0.5),
    seed=st.integers(0, 10_000),
    switches=st.integers(0, 6),
    relay=st.booleans(),
)


@settings(max_examples=60, deadline=None)
@given(**GRAPHS, data=st.data())
def test_hop_counts_equal_the_numpy_bfs_on_random_graphs(n, p, seed, switches, relay, data):
    """Ordered pairs of distinct members at each distance, and pairs that cannot meet (without relay,
    chips only end paths), as the numpy BFS's distance matrix counts them; any members, any order."""
    arrays = _random_arrays(n, p, seed, min(switches, n - 2))
    transit = transit_mask(arrays, relay)
    members = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)[: data.draw(st.integers(1, n))]
    dist = bfs(arrays, members, transit).dist[:, members]
    off_diagonal = ~np.eye(len(members), dtype=bool)
    counts, missing = kernels.hop_counts(arrays, members, transit)
    expected = np.bincount(dist[off_diagonal & (dist >= 0)], minlength=len(counts))
    assert counts.tolist() == expected.tolist()
    assert missing == int(np.sum(off_diagonal & (dist < 0)))


@settings(max_examples=60, deadline=None)
@given(**GRAPHS, shared=st.booleans())
def test_ecmp_demand_loads_equal_the_numpy_accumulation_on_random_graphs(n, p, seed, switches, relay, shared):
    """Per-source demand rows (or one row every source shares) split over shortest paths, through
    switches only without relay, as :func:`ecmp_loads` walks the BFS DAG level by level."""
    arrays = _random_arrays(n, p, seed, min(switches, n - 2))
    transit = transit_mask(arrays, relay)
    sources = np.arange(arrays.n_chips)
    reference = bfs(arrays, sources, transit)
    rng = np.random.default_rng(seed + 1)
    row = np.zeros(n)
    row[: arrays.n_chips] = rng.random(arrays.n_chips)
    demand = (
        np.tile(row, (len(sources), 1)) if shared else np.where(row > 0, rng.random((len(sources), n)), 0)
    )
    demand[sources, sources] = 0.0
    demand *= reference.dist >= 0  # the numpy walk needs every demand reachable
    # one shared row (each source's own entry is left out by the kernel) when every node is reached
    given_demand = row[None, :] if shared and len(sources) > 1 and np.all(reference.dist >= 0) else demand
    got = kernels.ecmp_demand_loads(arrays, sources, transit, given_demand)
    assert np.allclose(got, ecmp_loads(arrays, reference, demand), rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(**GRAPHS)
def test_bfs_and_flow_loads_equal_the_numpy_walks_on_random_graphs(n, p, seed, switches, relay):
    """Distances, path counts, largest path latencies, and flow-by-flow loads (pair_loads)."""
    arrays = _random_arrays(n, p, seed, min(switches, n - 2))
    transit = transit_mask(arrays, relay)
    sources = np.arange(arrays.n_chips)
    reference = bfs(arrays, sources, transit)
    dist, sigma, latency = kernels.bfs_all(arrays, sources, transit, columns=sources)
    assert np.array_equal(dist, reference.dist)
    assert np.allclose(sigma, reference.sigma, rtol=1e-12)
    assert np.array_equal(latency, path_latency_ns(arrays, reference)[:, sources])
    rng = np.random.default_rng(seed)
    flows = tuple(rng.integers(0, len(sources), 50) for _ in range(2)) + (
        rng.random(50),
        rng.integers(0, 3, 50),
    )
    keep = dist[flows[0], flows[1]] >= 0
    flows = tuple(part[keep] for part in flows)
    expected = pair_loads(arrays, reference.dist, reference.sigma, sources, flows, 3, transit)
    assert np.allclose(kernels.flow_loads(arrays, dist, sigma, sources, flows, 3, transit), expected)
