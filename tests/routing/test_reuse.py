"""Demands routed once for their repeats, reverses and mirror images give the loads routing each
demand by itself gives."""

import numpy as np
import pytest

from trnsim.collectives.algorithms import rdh, ring, tree
from trnsim.collectives.schedule import Context, Pipeline
from trnsim.model.router import Router
from trnsim.routing import reuse
from trnsim.routing.loads import loads
from trnsim.routing.strategies.base import Demand
from trnsim.topology import load_topology


def torus(*sizes: int):
    sets = [f"torus.axes.{name}.size={size}" for name, size in zip("xyz", sizes, strict=True)]
    return load_topology(None, "examples/torus-32x32x32.yaml", overrides=sets)


def _demands(topo) -> list[Demand]:
    """Every step of the tree, ring and recursive-doubling all-reduces, and a few of their own."""
    ctx = Context(topo, topo.chips)
    steps = []
    for algorithm in (tree, ring, rdh):
        if algorithm is rdh and len(topo.chips) & (len(topo.chips) - 1):
            continue  # a power-of-two group only
        for entry in algorithm.schedule(ctx, "allreduce"):
            steps += entry.steps if isinstance(entry, Pipeline) else [entry]
    demands = [Demand(s.src, s.dst, s.weight) for s in steps if not s.all_pairs]
    rng = np.random.default_rng(3)
    p = len(topo.chips)
    src, dst = rng.integers(0, p, 200), rng.integers(0, p, 200)
    odd = Demand(src, dst, rng.random(200))  # no symmetry
    return demands + [odd, Demand(dst, src, odd.weight), odd]  # turned round, and repeated


@pytest.mark.parametrize("sizes", [(8, 8, 8), (9, 8, 8)])  # an odd ring: chips that are their own image
def test_reused_loads_equal_routing_each_demand(sizes):
    topo = torus(*sizes)
    paths = Router(topo, topo.chips).paths
    assert paths.translated is not None
    demands = _demands(topo)
    images = reuse.Images(paths)
    assert images.reverse is not None and images.mirror is not None
    found = reuse.loads(paths, demands, 0, images)
    for demand, got in zip(demands, found, strict=True):
        (alone,) = loads(paths, [demand], 0)
        np.testing.assert_allclose(got.loads, alone.loads, rtol=1e-12, atol=1e-15)
        assert got.latency_ns == pytest.approx(alone.latency_ns, rel=1e-12)
        assert (got.max_links, got.flows) == (alone.max_links, alone.flows)


def test_the_tree_is_routed_in_halves_and_once_per_direction(monkeypatch):
    topo = torus(8, 8, 8)
    paths = Router(topo, topo.chips).paths
    (pipeline,) = tree.schedule(Context(topo, topo.chips), "allreduce")
    demands = [Demand(s.src, s.dst, s.weight) for stage in pipeline.chains[0] for s in stage]
    routed = []
    route = reuse._route

    def counting(paths, batch, seed):
        routed.extend(demand for demand, _ in batch)
        return route(paths, batch, seed)

    monkeypatch.setattr(reuse, "_route", counting)
    reuse.loads(paths, demands, 0, reuse.Images(paths))
    # the broadcast levels are the reduce levels turned round; tree B mirrors tree A
    assert sum(len(d.src) for d in routed) == sum(len(d.src) for d in demands) // 4


def test_the_images_are_the_mirror_and_the_reverse():
    topo = torus(6, 4, 5)
    from trnsim.routing import paths as group_paths

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(group_paths, "SYMMETRY_FROM", 1)
        paths = Router(topo, topo.chips).paths
    a = paths.arrays
    images = reuse.Images(paths)
    assert np.array_equal(a.src[images.reverse], a.dst) and np.array_equal(a.dst[images.reverse], a.src)
    position, edge = images.mirror
    n = a.n_nodes
    coords = np.array(np.unravel_index(np.arange(n), (6, 4, 5))).T
    mirrored = np.ravel_multi_index(tuple((np.array([6, 4, 5]) - 1 - coords).T), (6, 4, 5))
    assert np.array_equal(position, mirrored)  # rank n - 1 - r is each coordinate reflected
    assert np.array_equal(a.src[edge], mirrored[a.src]) and np.array_equal(a.dst[edge], mirrored[a.dst])
    assert reuse.Images(Router(topo, topo.chips[:30]).paths).mirror is None  # a subgroup: no mirror


def test_a_translation_invariant_step_keeps_its_one_bfs(monkeypatch):
    """Every chip to the others of its x ring is its own mirror image, but one BFS routes it whole."""
    from trnsim.collectives.algorithms import torus as torus_algorithm

    topo = torus(8, 8, 8)
    paths = Router(topo, topo.chips).paths
    steps = torus_algorithm.schedule(Context(topo, topo.chips), "alltoall")
    demands = [Demand(s.src, s.dst, s.weight) for s in steps]
    used = []
    route = reuse._route

    def recording(paths, batch, seed):
        used.extend(strategy.name for _, strategy in batch)
        return route(paths, batch, seed)

    monkeypatch.setattr(reuse, "_route", recording)
    found = reuse.loads(paths, demands, 0, reuse.Images(paths))
    assert used == ["translation"] * len(demands)
    for demand, got in zip(demands, found, strict=True):
        (alone,) = loads(paths, [demand], 0)
        np.testing.assert_allclose(got.loads, alone.loads, rtol=1e-12, atol=1e-15)
