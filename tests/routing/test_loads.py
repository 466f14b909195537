"""The load strategies behind one interface: each one that applies gives what enumerating every
shortest path gives, the choice follows the demand's shape, and batching changes nothing."""

import itertools

import networkx as nx
import numpy as np
import pytest
from conftest import topology

from trnsim.routing.loads import STRATEGIES, choose, loads
from trnsim.routing.paths import GroupPaths
from trnsim.routing.policy import RoutingPolicy
from trnsim.routing.strategies import walked
from trnsim.routing.strategies.base import Demand
from trnsim.routing.symmetry import torus_symmetry
from trnsim.topology.arrays import graph_arrays


def _paths(sku: str, count: int | None = None, policy: str = "ecmp", symmetric: bool = False) -> GroupPaths:
    topo = topology(sku)
    arrays = graph_arrays(topo)
    rows = np.arange(count or topo.n_ranks)  # chips come first, in rank order
    symmetry = torus_symmetry(topo) if symmetric else None
    return GroupPaths(arrays, rows, RoutingPolicy(policy), symmetry)


def _brute_force(sku: str, paths: GroupPaths, demand: Demand) -> tuple[np.ndarray, float, int]:
    """Every flow split evenly over every shortest path networkx enumerates: loads per directed
    edge, the largest path latency (links and the devices passed through) and the longest path."""
    topo = topology(sku)
    arrays = paths.arrays
    edge = {(int(u), int(v)): i for i, (u, v) in enumerate(zip(arrays.src, arrays.dst, strict=True))}
    expected = np.zeros(len(arrays.src))
    latency, longest = 0.0, 0
    for s, t, w in zip(*demand.flows(paths.p), strict=True):
        found = list(
            nx.all_shortest_paths(topo.graph, arrays.nodes[paths.rows[s]], arrays.nodes[paths.rows[t]])
        )
        for path in found:
            ids = [arrays.index[name] for name in path]
            hops = [edge[pair] for pair in itertools.pairwise(ids)]
            expected[hops] += w / len(found)
            through = sum(topo.nodes[name]["latency_ns"] for name in path[1:-1])
            latency = max(latency, through + float(arrays.link_latency_ns[hops].sum()))
            longest = max(longest, len(hops))
    return expected, latency, longest


def _axis_step(paths: GroupPaths) -> Demand:
    """Every chip of a torus to its neighbour one step along the last axis: translation-invariant."""
    sizes = paths.symmetry.sizes
    coords = np.array(np.unravel_index(np.arange(paths.p), sizes))
    coords[-1] = (coords[-1] + 1) % sizes[-1]
    return Demand(np.arange(paths.p), np.ravel_multi_index(tuple(coords), sizes), np.full(paths.p, 0.5))


def _demands(paths: GroupPaths, rng) -> dict[str, Demand]:
    p = paths.p
    sparse = rng.choice(p * p, size=p // 2, replace=False)
    src, dst = sparse // p, sparse % p
    keep = src != dst
    dense_src, dense_dst = (axis.ravel() for axis in np.nonzero(rng.random((p, p)) < 0.6))
    keep_dense = dense_src != dense_dst
    shift = np.arange(p)
    found = {
        "sparse": Demand(src[keep], dst[keep], rng.random(keep.sum())),
        "dense": Demand(dense_src[keep_dense], dense_dst[keep_dense], rng.random(keep_dense.sum())),
        "shift": Demand(shift, (shift + 1) % p, np.full(p, 0.25)),
        "all pairs": Demand.all_pairs(1.0 / p),
        "empty": Demand(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)),
    }
    if paths.symmetry is not None:
        found["axis step"] = _axis_step(paths)
    return found


GRAPHS = [
    ("trn2-nl16", None, True),  # a wrapped 4x4 torus: translations
    ("hgx-h100", None, False),  # one switch level
    ("trn3-nl32x2-gen1", None, False),  # trays and racks: automorphisms from node names
    ("trn3-nl32x2-gen1", 40, False),  # part of it: several member orbits, or none
]


def test_every_strategy_that_applies_gives_the_brute_force_loads():
    rng = np.random.default_rng(7)
    used = set()
    for sku, count, symmetric in GRAPHS:
        for compiled in (False, True):
            paths = _paths(sku, count, symmetric=symmetric)
            paths.compiled = compiled  # catalog sizes take the numpy kernels: try the compiled ones too
            for kind, demand in _demands(paths, rng).items():
                expected, latency, longest = _brute_force(sku, paths, demand)
                for strategy in STRATEGIES:
                    if strategy is walked.STRATEGY or not strategy.applies(paths, demand):
                        continue
                    used.add(strategy.name)
                    (found,) = strategy.loads(paths, [demand], 0)
                    where = f"{strategy.name} on {sku} ({kind}, compiled={compiled})"
                    np.testing.assert_allclose(found.loads, expected, rtol=1e-9, atol=1e-12, err_msg=where)
                    assert found.flows == demand.count(paths.p), where
                    if found.flows:
                        assert found.latency_ns == pytest.approx(latency, rel=1e-12), where
                        assert found.max_links == longest, where
    assert used == {strategy.name for strategy in STRATEGIES} - {"walked"}


def test_the_demands_shape_chooses_the_strategy():
    torus = _paths("trn2-nl16", symmetric=True)
    p = torus.p
    step = _axis_step(torus)
    uneven = Demand(step.src, step.dst, np.linspace(1, 2, p))  # not the same pattern at every chip
    ring = Demand(np.arange(p), (np.arange(p) + 1) % p, np.full(p, 1.0))  # rank order: rows wrap
    assert choose(torus, step).name == "translation"
    assert choose(torus, Demand.all_pairs(1.0)).name == "translation"
    assert choose(torus, uneven).name == "pairs"
    assert choose(torus, ring).name == "pairs"
    plain = _paths("trn2-nl16")  # no translations
    everyone = np.nonzero(~np.eye(p, dtype=bool))
    assert choose(plain, ring).name == "pairs"
    assert choose(plain, Demand(*everyone, np.ones(p * (p - 1)))).name == "dense"
    plain.compiled = True
    assert choose(plain, Demand(*everyone, np.ones(p * (p - 1)))).name == "compiled"
    for policy in ("single", "hash"):
        assert choose(_paths("trn2-nl16", policy=policy), ring).name == "walked"


@pytest.mark.parametrize("policy", ["ecmp", "single", "hash"])
def test_routing_demands_together_equals_routing_each_alone(policy):
    paths = _paths("trn3-nl32x2-gen1", policy=policy)
    demands = list(_demands(paths, np.random.default_rng(3)).values())
    together = loads(paths, demands, seed=5)
    for demand, found in zip(demands, together, strict=True):
        (alone,) = loads(paths, [demand], seed=5)
        np.testing.assert_allclose(found.loads, alone.loads, rtol=1e-12, atol=1e-15)
        assert (found.flows, found.max_links) == (alone.flows, alone.max_links)


@pytest.mark.parametrize("policy", ["single", "hash"])
def test_a_walked_flow_takes_one_shortest_path(policy):
    # each flow's bytes land on exactly as many links as its shortest path has
    paths = _paths("trn3-nl32x2-gen1", policy=policy)
    rng = np.random.default_rng(11)
    for demand in _demands(paths, rng).values():
        (found,) = loads(paths, [demand], seed=2)
        src, dst, weight = demand.flows(paths.p)
        hops = paths.dist[src, paths.rows[dst]]
        assert found.loads.sum() == pytest.approx(float(np.sum(weight * hops)), rel=1e-12)
        assert found.max_links == (int(hops.max()) if len(hops) else 0)
