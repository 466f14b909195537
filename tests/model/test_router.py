"""The router: a step that names its flows' paths is costed on those paths, as ECMP costs its own."""

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives.schedule import Step
from trnsim.model.router import Router


def test_a_named_shortest_path_costs_what_ecmp_costs_it():
    nl16 = topology("nl16")
    a, b = nl16.chips[0], nl16.chips[1]
    assert (a, b) in nl16.links or (b, a) in nl16.links  # neighbours: one shortest path
    router = Router(nl16, nl16.chips)
    named = router.route(Step(np.array([0]), np.array([1]), np.array([0.5]), paths=((((a, b), 1.0),),)))
    routed = router.route(Step.of([(0, 1)], 0.5))
    assert np.array_equal(named.link_loads, routed.link_loads)
    assert (named.latency_ns, named.max_links) == (routed.latency_ns, routed.max_links)


def test_a_named_long_path_costs_its_links_and_the_devices_it_passes():
    nl16 = topology("nl16")
    ring = [chip for chip in nl16.chips if nl16.nodes[chip]["coord"][1] == 0]  # one x ring of 4
    a, b = ring[0], ring[1]
    long_way = (a, *reversed(ring[1:]))  # a -> ring[3] -> ring[2] -> b
    assert len(long_way) == 4
    paths = (((((a, b), 0.25), (long_way, 0.75))),)
    step = Step(np.array([0]), np.array([1]), np.array([2.0]), paths=paths)
    group = [a, b]
    route = Router(nl16, group).route(step)
    hops = list(zip(long_way, long_way[1:], strict=False))
    link = {**nl16.links, **{(v, u): d for (u, v), d in nl16.links.items()}}
    latency = sum(link[h]["latency_ns"] for h in hops) + sum(
        nl16.nodes[c]["latency_ns"] for c in long_way[1:-1]
    )
    assert (route.latency_ns, route.max_links) == (pytest.approx(latency), 3)
    assert route.link_loads.sum() == pytest.approx(2.0 * (0.25 * 1 + 0.75 * 3))
    bw = link[hops[0]]["bw_gbps"] * 1e9
    assert route.seconds_per_byte == pytest.approx(1.5 / bw)  # 0.75 x 2 on each link of the long way
    scaled = Router(nl16, group).route(step.scaled(0.5))
    assert scaled.seconds_per_byte == pytest.approx(0.75 / bw)
    back = Router(nl16, group).route(step.reversed())
    assert back.seconds_per_byte == pytest.approx(route.seconds_per_byte)


def test_a_named_path_over_a_failed_link_is_rerouted_as_the_hardware_would():
    from trnsim.topology import load_topology

    broken = load_topology("nl16", overrides=["fail=link:x0.y0,x1.y0"])
    assert broken.chips[:2] == ["x0.y0", "x0.y1"]
    around = ("x0.y0", "x1.y0", "x1.y1", "x0.y1")  # planned on the healthy system, over the failed link
    named = Step(np.array([0]), np.array([1]), np.array([1.0]), paths=(((around, 1.0),),))
    route = Router(broken, broken.chips).route(named)
    routed = Router(broken, broken.chips).route(Step.of([(0, 1)], 1.0))
    assert np.array_equal(route.link_loads, routed.link_loads)


def test_routers_of_one_group_share_its_paths_and_route_as_a_fresh_one():
    from trnsim.model import router as module
    from trnsim.topology import load_topology

    nl72 = load_topology("trn3-nl72x2-gen1")  # its own cache
    first = Router(nl72, nl72.chips)
    again = Router(nl72, nl72.chips)
    assert again.paths is first.paths
    step = Step.of([(i, (i + 1) % 144) for i in range(144)], 1.0)
    fresh = Router(load_topology("trn3-nl72x2-gen1"), nl72.chips)
    assert np.array_equal(again.route(step).link_loads, fresh.route(step).link_loads)
    others = [Router(nl72, nl72.chips[k : k + 2]) for k in range(0, 2 * module.KEPT_PATHS, 2)]
    assert Router(nl72, nl72.chips).paths is not first.paths  # the oldest made way
    assert Router(nl72, others[-1].group).paths is others[-1].paths
