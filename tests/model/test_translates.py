"""Groups carried onto each other by automorphisms of a switched fabric (name-token renamings):
scheduled and routed once, and exactly what scheduling and routing each would give."""

import random

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives import algorithms
from trnsim.collectives.schedule import Context
from trnsim.model.concurrent import evaluate_concurrent, prepare
from trnsim.model.concurrent.prepare import flat
from trnsim.model.concurrent.translates import Carried, moved, translates
from trnsim.model.router import Router

SIZES = [1 << 10, 1 << 20, 1 << 30]
OPS = ["allreduce", "allgather", "reducescatter", "alltoall"]


def _system(sku):
    """A catalog system, or (``SKU/ranks``) the same with two ranks per chip."""
    from trnsim.topology import load_topology

    name, _, ranks = sku.partition("/")
    return load_topology(name, overrides=["chip.ranks=2", "chip.rank_gbps=1000"]) if ranks else topology(name)


def _pairs(chips, p):
    return [chips[i : i + p] for i in range(0, len(chips), p)]


CASES = [
    # (system, groups): trays' pairs, strided slots, racks, and groups with no copy among them
    ("trn3-nl72x2-gen1", lambda chips: _pairs(chips, 2)),
    ("trn3-nl72x2-gen1", lambda chips: [chips[0::4], chips[1::4], chips[2::4], chips[3::4]]),
    ("trn3-nl72x2-gen1", lambda chips: [chips[:72], chips[72:]]),
    ("trn3-nl32x2-gen1", lambda chips: _pairs(chips, 8)),
    ("trn3-ultraserver-gen1", lambda chips: _pairs(chips, 4)),
    ("hgx-h100", lambda chips: _pairs(chips, 2)),
    ("trn3-nl32x2-gen1/ranks", lambda ranks: _pairs(ranks, 4)),  # two ranks per chip
    (
        "trn3-nl72x2-gen1",
        lambda chips: [chips[0:2], chips[4:6], [chips[8], chips[13]], [chips[16], chips[21]]],
    ),
]


@pytest.mark.parametrize(("sku", "pick"), CASES)
def test_each_copys_own_schedule_and_routes_are_its_originals_moved(sku, pick):
    """Brute force: every algorithm schedules each copy itself, and routes it itself; the schedule
    equals its original's, and every step's link loads are the original's moved, bit for bit."""
    topo = _system(sku)
    groups = pick(list(topo.chips))
    images = translates(topo, groups)
    copies = [k for k, image in enumerate(images) if image is not None]
    assert copies and all(isinstance(images[k][1], Carried) for k in copies)
    copies = copies[:: max(1, len(copies) // 4)]  # a few spread over the groups
    for op in OPS:
        for name, algorithm in algorithms.REGISTRY.items():
            if op not in algorithm.ops or algorithm.named_only:
                continue
            for k in copies:
                original, where = images[k]
                try:
                    mine = algorithm.schedule(Context(topo, groups[original]), op)
                except algorithms.NotApplicable:
                    continue
                theirs = algorithm.schedule(Context(topo, groups[k]), op)
                steps, direct = flat(mine), flat(theirs)
                assert [_flows(s) for s in steps] == [_flows(s) for s in direct], (op, name, k)
                routes = Router(topo, groups[original]).route_all(steps)
                for route, own in zip(routes, Router(topo, groups[k]).route_all(direct), strict=True):
                    assert np.array_equal(moved(route, where).link_loads, own.link_loads), (op, name, k)
                    assert (route.seconds_per_byte, route.latency_ns) == (
                        own.seconds_per_byte,
                        own.latency_ns,
                    )


def _flows(step) -> tuple:
    src, dst, weight = step.flows()
    return (tuple(src), tuple(dst), tuple(weight), step.repeat, step.links, step.relays, step.in_network)


@pytest.mark.parametrize(("sku", "pick"), CASES)
def test_copies_evaluate_exactly_as_every_group_routed_itself(sku, pick, monkeypatch):
    topo = _system(sku)
    groups = pick(list(topo.chips))
    assert any(image is not None for image in translates(topo, groups))
    for op in OPS:
        fast = evaluate_concurrent(topo, op, SIZES, groups)
        with monkeypatch.context() as patched:
            patched.setattr(prepare, "translates", lambda topology, groups: [None] * len(groups))
            slow = evaluate_concurrent(topo, op, SIZES, groups)
        assert fast.rows == slow.rows
        assert fast.by_algorithm == slow.by_algorithm
        for name in slow.link_loads:
            assert np.array_equal(fast.link_loads[name], slow.link_loads[name])


def test_the_layouts_groups_fall_in_one_class_per_dimension():
    topo = topology("trn3-nl72x2-gen1")
    chips = list(topo.chips)
    assert sum(image is None for image in translates(topo, _pairs(chips, 2))) == 1
    assert sum(image is None for image in translates(topo, [chips[0::2], chips[1::2]])) == 1


def test_a_group_in_another_order_is_no_copy():
    topo = topology("trn3-nl72x2-gen1")
    chips = list(topo.chips)
    shuffled = chips[72:]
    random.Random(0).shuffle(shuffled)
    assert translates(topo, [chips[:72], shuffled]) == [None, None]


def test_no_copies_with_failures_or_without_ecmp():
    from trnsim.topology import load_topology

    degraded = load_topology("trn3-nl72x2-gen1", overrides=["fail=chip:r0.n0.A"])
    pairs = _pairs(list(degraded.chips)[1:], 2)
    assert all(image is None for image in translates(degraded, pairs))
    hashed = load_topology("trn3-nl72x2-gen1", overrides=["routing.policy=hash"])
    assert all(image is None for image in translates(hashed, _pairs(list(hashed.chips), 2)))


@pytest.mark.parametrize(
    ("sku", "op", "arguments"),
    [
        ("hgx-h100", "allreduce", None),  # nvls names the reducing switches
        ("trn3-nl32x2-gen1", "sendrecv", ((0, 1), (1, 2))),  # multipath names its paths
    ],
)
def test_schedules_that_name_devices_route_every_group_itself(sku, op, arguments, monkeypatch):
    from trnsim.collectives.arguments import Arguments
    from trnsim.model.concurrent import prepare_concurrent

    topo = topology(sku)
    groups = _pairs(list(topo.chips), 4)
    args = None if arguments is None else Arguments(pairs=arguments)
    assert any(image is not None for image in translates(topo, groups))
    prepared = prepare_concurrent(topo, op, SIZES, groups, arguments=args)
    assert prepare._names_devices(prepared.schedules) and len(prepared.routed) == len(groups)
    fast = evaluate_concurrent(topo, op, SIZES, groups, arguments=args)
    monkeypatch.setattr(prepare, "translates", lambda topology, groups: [None] * len(groups))
    assert evaluate_concurrent(topo, op, SIZES, groups, arguments=args).rows == fast.rows
