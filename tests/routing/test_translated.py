"""Chip 0's rows translated on demand equal a BFS from every member (brute force), on whole tori,
subgroups and the subgraphs of some axes, and so do the loads walked from them."""

import numpy as np
import pytest

from trnsim.collectives.schedule import Step
from trnsim.model.router import Router
from trnsim.routing import kernels, translated_loads
from trnsim.routing import paths as group_paths
from trnsim.routing.paths import GroupPaths, routing_work
from trnsim.routing.policy import RoutingPolicy
from trnsim.routing.shortest import bfs, path_latency_ns
from trnsim.routing.symmetry import torus_symmetry
from trnsim.routing.translated import invariant
from trnsim.routing.translated_loads import dag_sizes, flow_loads
from trnsim.topology import load_topology
from trnsim.topology.arrays import graph_arrays

EXAMPLE = "examples/torus-32x32x32.yaml"


def torus(*sizes: int, overrides: tuple[str, ...] = ()):
    """The example torus's chips and links on axes of these sizes (x, y, z)."""
    sets = [f"torus.axes.{name}.size={size}" for name, size in zip("xyz", sizes, strict=True)]
    return load_topology(None, EXAMPLE, overrides=sets + list(overrides))


def brute_force(arrays, rows):
    """A BFS from every member: distances and path counts to every node, latencies between members."""
    found = bfs(arrays, rows)
    return found.dist, found.sigma, path_latency_ns(arrays, found)[:, rows]


CASES = [
    ((4, 4, 4), None),  # a cube, even rings: two directions tie half way round
    ((6, 4, 5), None),  # unequal sizes, an odd ring
    ((6, 4, 5), "every third"),  # a subgroup
    ((8, 8, 8), "random"),
]


def _rows(n: int, kind: str | None) -> np.ndarray:
    if kind is None:
        return np.arange(n)
    if kind == "every third":
        return np.arange(1, n, 3)
    return np.random.default_rng(5).permutation(n)[: n // 3]  # not sorted: positions are not ranks


@pytest.mark.parametrize(("sizes", "kind"), CASES)
def test_translated_rows_equal_a_bfs_from_every_member(sizes, kind):
    topo = torus(*sizes)
    arrays = graph_arrays(topo)
    rows = _rows(arrays.n_nodes, kind)
    paths = GroupPaths(arrays, rows, RoutingPolicy("ecmp"), torus_symmetry(topo))
    dist, sigma, latency = brute_force(arrays, rows)
    members = np.arange(len(rows))
    nodes = np.arange(arrays.n_nodes)
    assert np.array_equal(paths.distance(members[:, None], nodes[None, :]), dist)
    assert np.array_equal(paths.latency_between(members[:, None], members[None, :]), latency)
    assert paths.max_links == dist[:, rows].max()
    assert paths.max_latency == latency.max()
    assert paths.unreachable() is None
    # the whole matrices, for strategies that read them, are the same numbers
    assert np.array_equal(paths.dist, dist) and np.array_equal(paths.sigma, sigma)
    assert np.array_equal(paths.latency, latency)


def _axis_subgraph(arrays, classes):
    edges = np.flatnonzero(np.isin(np.asarray(arrays.edge_cls)[arrays.edge], list(classes)))
    return arrays.restricted(np.arange(arrays.n_nodes), edges)


@pytest.mark.parametrize("classes", [("x",), ("y", "z")])
def test_an_axis_subgraph_is_translated_too(classes):
    """The links of some axes: rings or planes, each member reaching only its own."""
    topo = torus(6, 4, 5)
    sub = _axis_subgraph(graph_arrays(topo), classes)
    rows = np.arange(sub.n_nodes)
    paths = GroupPaths(sub, rows, RoutingPolicy("ecmp"), torus_symmetry(topo), partitioned=True)
    dist, _, latency = brute_force(sub, rows)
    assert (dist < 0).any()  # other rings are out of reach
    members = np.arange(len(rows))
    assert np.array_equal(paths.distance(members[:, None], rows[None, :]), dist)
    assert np.array_equal(paths.latency_between(members[:, None], members[None, :]), latency)
    assert paths.max_links == dist.max()
    assert paths.unreachable() == tuple(int(x) for x in np.argwhere(dist < 0)[0])


@pytest.mark.parametrize("walk", ["numpy", "compiled", "templates"])
@pytest.mark.parametrize(("sizes", "kind"), CASES)
def test_flows_walked_from_translated_rows_equal_the_full_matrices(sizes, kind, walk, monkeypatch):
    """The numbers of the compiled walk over every member's own BFS (a translated walk visits each
    node's edges in another order, so the additions may round differently), by both ways of
    translating: chip 0's DAG with its edges moved (all flows at once in numpy, one by one compiled,
    or one template per distinct offset), and each member's own rows read at offsets."""
    monkeypatch.setattr(translated_loads, "NUMPY_WALK", 1 << 40 if walk == "numpy" else 0)
    monkeypatch.setattr(translated_loads, "TEMPLATES", 0 if walk == "templates" else 1 << 40)
    monkeypatch.setattr(translated_loads, "TEMPLATE_ENTRIES", 500)  # several blocks
    topo = torus(*sizes)
    arrays = graph_arrays(topo)
    rows = _rows(arrays.n_nodes, kind)
    paths = GroupPaths(arrays, rows, RoutingPolicy("ecmp"), torus_symmetry(topo))
    dist, sigma, _ = brute_force(arrays, rows)
    rng = np.random.default_rng(11)
    p, count = len(rows), 3 * len(rows)
    src, dst = rng.integers(0, p, count), rng.integers(0, p, count)  # some flows to themselves
    flows = (src, dst, rng.random(count), rng.integers(0, 3, count))
    expected = kernels.flow_loads(arrays, dist, sigma, rows, flows, 3, None)
    assert paths.translated.mover is not None
    np.testing.assert_allclose(flow_loads(paths.translated, flows, 3, None), expected, rtol=1e-12, atol=1e-15)
    # without the edge table (a chip with two edges of one orbit): each member's own rows, read at
    # offsets, walked as the compiled kernel walks them: the same operations in the same order
    paths.translated.__dict__["mover"] = None
    assert np.array_equal(flow_loads(paths.translated, flows, 3, None), expected)


def test_pinned_steps_on_a_whole_torus_use_its_translations(monkeypatch):
    monkeypatch.setattr(group_paths, "SYMMETRY_FROM", 1)  # a small torus, translated all the same
    topo = torus(6, 4, 5)
    router = Router(topo, topo.chips)
    assert router.paths.translated is not None
    arrays = router.arrays
    classes = np.asarray(arrays.edge_cls)[arrays.edge]
    sym = router.paths.symmetry
    assert invariant(sym, arrays, np.flatnonzero(classes == "x")) is sym
    assert invariant(sym, arrays, np.flatnonzero(classes != "y")) is sym
    half = np.flatnonzero(classes == "x")[::2]  # some x links only: no translation keeps them
    assert invariant(sym, arrays, half) is None
    # and the router routes an axis's steps over that axis's links by translation
    step = Step.of((np.arange(120), (np.arange(120) + 20) % 120), 1.0, links=frozenset(["x"]))
    router.route(step)
    ((paths, _, _),) = router._parts.values()
    assert paths.translated is not None and paths.partitioned


def test_a_failure_breaks_the_translations():
    topo = torus(8, 8, 8, overrides=("fail=link:x0.y0.z0,x1.y0.z0",))
    assert torus_symmetry(topo) is None
    assert Router(topo, topo.chips).paths.translated is None


def test_routing_work_counts_one_bfs_on_a_whole_torus():
    """Routed by translation, a whole torus costs one BFS and a row per member, not group x devices."""
    topo = torus(8, 8, 8)
    devices, directed = len(topo.nodes), 2 * len(topo.links)
    assert routing_work(topo, topo.chips) == devices + directed + len(topo.chips)
    half = topo.chips[:256]  # a subgroup is routed from each of its members
    assert routing_work(topo, half) == len(half) * (devices + directed)


def test_dag_sizes_count_the_chips_on_shortest_paths():
    topo = torus(6, 4, 5)
    arrays = graph_arrays(topo)
    sym = torus_symmetry(topo)
    dist = bfs(arrays, np.arange(arrays.n_nodes)).dist
    from_zero = dist[0]
    for offset in range(arrays.n_nodes):  # chips w with d(0, w) + d(w, offset) = d(0, offset)
        on_path = np.sum(from_zero + dist[:, offset] == from_zero[offset])
        assert dag_sizes(sym, np.array([offset]))[0] == on_path


@pytest.mark.parametrize("shape", ["out of one chip", "into one chip", "out of two chips", "mixed sets"])
@pytest.mark.parametrize(("sizes", "kind"), [((8, 8, 8), None), ((6, 4, 5), "every third")])
def test_flows_out_of_or_into_few_chips_accumulated_equal_the_full_matrices(sizes, kind, shape, monkeypatch):
    """A scatter from a root (or a gather into it) is one pass over chip 0's DAG per root."""
    monkeypatch.setattr(group_paths, "SYMMETRY_FROM", 1)
    topo = torus(*sizes)
    arrays = graph_arrays(topo)
    rows = _rows(arrays.n_nodes, kind)
    paths = GroupPaths(arrays, rows, RoutingPolicy("ecmp"), torus_symmetry(topo))
    dist, sigma, _ = brute_force(arrays, rows)
    p, rng = len(rows), np.random.default_rng(2)
    others = np.arange(1, p)
    if shape == "out of one chip":
        src, dst, owner = np.zeros(p - 1, int), others, np.zeros(p - 1, int)
    elif shape == "into one chip":
        src, dst, owner = others, np.zeros(p - 1, int), np.zeros(p - 1, int)
    elif shape == "out of two chips":
        src, dst = np.r_[np.zeros(p - 1, int), np.full(p - 1, 3)], np.r_[others, (others + 3) % p]
        owner = np.zeros(2 * (p - 1), int)
    else:  # a scatter, a gather and scattered flows in one batch
        pick = rng.integers(0, p, (2, 40))
        src = np.r_[np.zeros(p - 1, int), others, pick[0]]
        dst = np.r_[others, np.zeros(p - 1, int), pick[1]]
        owner = np.r_[np.zeros(p - 1, int), np.ones(p - 1, int), np.full(40, 2)]
    flows = (src, dst, rng.random(len(src)), owner)
    n_sets = int(owner.max()) + 1
    expected = kernels.flow_loads(arrays, dist, sigma, rows, flows, n_sets, None)
    accumulated = []
    real = translated_loads._accumulated

    def recording(*args):
        accumulated.append(len(args[1]))
        return real(*args)

    monkeypatch.setattr(translated_loads, "_accumulated", recording)
    monkeypatch.setattr(translated_loads, "PASS_COST", 0)  # small tori too: accumulate every set
    found = flow_loads(paths.translated, flows, n_sets, None)
    np.testing.assert_allclose(found, expected, rtol=1e-12, atol=1e-15)
    assert accumulated  # the scatter and the gather took one pass per root
