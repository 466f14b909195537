"""The compiled kernels give the numbers of the numpy routines they stand in for on big fabrics."""

import numpy as np
import pytest

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


@pytest.mark.parametrize(("sku", "op", "group"), [
    ("trn3-nl72x2-gen1", "allreduce", None),
    ("trn3-nl72x2-gen1", "alltoall", "rack:0"),
    ("trn2-nl64", "alltoall", None),
])  # fmt: skip
def test_an_evaluation_is_the_same_through_the_compiled_kernels(monkeypatch, sku, op, group):
    from trnsim.topology.groups import select_group

    sizes = [1 << 10, 1 << 20, 1 << 30]
    topology = load_topology(sku, overrides=["torus.axes.x.wrap=false"] if sku == "trn2-nl64" else [])
    chips = select_group(topology, group, None)
    plain = evaluate(topology, op, sizes, chips, algo="all")
    monkeypatch.setattr(kernels, "COMPILED_FROM", 0)
    again = load_topology(sku, overrides=["torus.axes.x.wrap=false"] if sku == "trn2-nl64" else [])
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
