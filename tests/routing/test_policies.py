"""Routing policies (``ecmp``, ``single``, ``hash``, with and without relay) against brute force.

Small graphs are routed twice: by :class:`trnsim.model.router.Router` and by plain Python over
networkx (every shortest path enumerated for ECMP; the D-mod-K + dimension-order rule walked node by
node for ``single``). The catalog checks published behaviour: one path per destination makes a ring
all-reduce several times slower on the Trainium3 switched fabrics.
"""

import itertools
import re
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
from collectives.synthetic import graph_topology
from conftest import topology
from model.test_optimum import random_topology

from trnsim.collectives.schedule import Step
from trnsim.errors import ParameterError, UsageError
from trnsim.model.engine import evaluate
from trnsim.model.router import Router
from trnsim.routing.policy import (
    HASH_SEEDS,
    MAX_HASH_SEEDS,
    RoutingPolicy,
    parse_routing,
    routing_of,
    routing_overrides,
)
from trnsim.spec.catalog import find_sku, read_document, validate_document
from trnsim.topology.builders import build
from trnsim.topology.graph import Topology
from trnsim.topology.load import load_topology

GIB = 1 << 30


# ----------------------------------------------------------------------------------------------
# small graphs


def _torus(axes: list[dict]) -> Topology:
    """A torus from axis specs (``name``, ``size``, ``lanes``, optional ``wrap``), nl16's other fields."""
    document = read_document(find_sku("nl16"))
    document["torus"] = {"axes": [{"lanes": 8, **axis} for axis in axes]}
    return build(validate_document(document, find_sku("nl16")))


def _fabric(seed: int) -> Topology:
    """Chips hung on a few switches (many equal-cost paths), a few direct chip links, some relaying."""
    rng = np.random.default_rng(seed)
    chips, switches = int(rng.integers(4, 9)), int(rng.integers(2, 5))
    links = {}
    for c in range(chips):
        # most chips reach two or more switches; a chip with none must be relayed by its neighbours
        reach = int(rng.integers(0, switches + 1)) if c % 4 == 3 else int(rng.integers(2, switches + 1))
        for k in rng.choice(switches, reach, replace=False):
            links[(f"c{c}", f"s{k}")] = 100.0
    for a, b in itertools.combinations(range(chips), 2):
        if rng.random() < 0.2:
            links[(f"c{a}", f"c{b}")] = 50.0
    for c in range(1, chips):  # keep it connected: a chain of direct links where nothing else joins
        graph = nx.Graph(list(links))
        graph.add_nodes_from(f"c{i}" for i in range(chips))
        if not nx.has_path(graph, "c0", f"c{c}"):
            links[(f"c{c - 1}", f"c{c}")] = 50.0
    return graph_topology(chips, switches, links, name=f"fabric{seed}")


TORI = {
    "nl16 (4x4)": lambda: topology("trn2-nl16"),
    "3x3": lambda: _torus([{"name": "x", "size": 3}, {"name": "y", "size": 3}]),
    "4x3 line": lambda: _torus([{"name": "x", "size": 4, "wrap": False}, {"name": "y", "size": 3}]),
    "2x3x2": lambda: _torus(
        [{"name": "x", "size": 2}, {"name": "y", "size": 3}, {"name": "z", "size": 2, "wrap": False}]
    ),
    # file order is not alphabetical: dimension order must follow the file
    "b3 a4": lambda: _torus([{"name": "b", "size": 3}, {"name": "a", "size": 4}]),
    "5-line x 4": lambda: _torus([{"name": "u", "size": 4}, {"name": "v", "size": 5, "wrap": False}]),
}
GRAPHS = {
    **TORI,
    **{f"fabric{seed}": (lambda seed=seed: _fabric(seed)) for seed in range(6)},
    **{f"random{seed}": (lambda seed=seed: random_topology(seed)) for seed in (1, 4, 7, 12, 19)},
}


def _allowed(topo: Topology, s: str, t: str, relay: bool) -> nx.Graph:
    """The graph a flow ``s -> t`` may use: everything, or (no relay) switches and its own ends."""
    if relay:
        return topo.graph
    return topo.graph.subgraph(set(topo.switches) | {s, t})


def _reachable(topo: Topology, group: list[str], relay: bool) -> bool:
    return all(nx.has_path(_allowed(topo, s, t, relay), s, t) for s, t in itertools.permutations(group, 2))


def _edge_index(router: Router) -> dict[tuple[str, str], int]:
    a = router.arrays
    return {(a.nodes[a.src[e]], a.nodes[a.dst[e]]): e for e in range(len(a.src))}


def _flows(rng, p: int, count: int | None = None):
    """Random distinct ordered pairs of positions with weights (a quarter of all by default: sparse)."""
    pairs = list(itertools.permutations(range(p), 2))
    count = count or max(1, len(pairs) // 4)
    chosen = [pairs[i] for i in rng.choice(len(pairs), min(count, len(pairs)), replace=False)]
    weights = rng.integers(1, 9, len(chosen)).astype(float) / 4
    return chosen, weights


def _group(topo: Topology, rng) -> list[str]:
    if rng.random() < 0.4:
        return list(topo.chips)
    k = int(rng.integers(2, topo.n_ranks + 1))
    return [topo.chips[i] for i in sorted(rng.choice(topo.n_ranks, k, replace=False))]


def _meeting(topo: Topology, group: list[str], relay: bool) -> list[str]:
    """The members of ``group`` that reach each other (greedily, in order) under the relay rule."""
    kept: list[str] = []
    for chip in group:
        if all(_reachable(topo, [chip, other], relay) for other in kept):
            kept.append(chip)
    return kept


def _routable_group(topo: Topology, rng, policy: str, relay: bool) -> list[str]:
    """A random group; one with a pair that cannot meet must be refused (then a smaller one is used)."""
    group = _group(topo, rng)
    if _reachable(topo, group, relay):
        return group
    with pytest.raises(UsageError, match="relay") as error:
        Router(topo, group, routing=RoutingPolicy(policy, relay=relay))
    assert "cannot reach" in str(error.value)
    return _meeting(topo, group, relay)


def _ecmp_brute(topo, router, group, pairs, weights, relay) -> np.ndarray:
    index = _edge_index(router)
    loads = np.zeros(len(router.arrays.src))
    for (a, b), w in zip(pairs, weights, strict=True):
        s, t = group[a], group[b]
        paths = list(nx.all_shortest_paths(_allowed(topo, s, t, relay), s, t))
        for path in paths:
            for u, v in itertools.pairwise(path):
                loads[index[(u, v)]] += w / len(paths)
    return loads


def _single_path(topo: Topology, router: Router, s: str, t: str, relay: bool) -> list[str]:
    """The ``single`` rule walked by hand: shortest-path next hops, lowest axis, then D-mod-K."""
    a = router.arrays
    torus = topo.spec.torus
    place = {axis.name: i for i, axis in enumerate(torus.axes)} if torus is not None else {}
    dist = nx.single_source_shortest_path_length(_allowed(topo, s, t, relay), t)
    out = defaultdict(list)  # out-edges in directed-edge order
    for e in range(len(a.src)):
        out[a.nodes[a.src[e]]].append(e)
    t_index = a.nodes.index(t)
    path = [s]
    while path[-1] != t:
        here = path[-1]
        candidates = [e for e in out[here] if dist.get(a.nodes[a.dst[e]], -9) == dist[here] - 1]
        if place:
            rank = [place.get(a.edge_cls[a.edge[e]], len(place)) for e in candidates]
            candidates = [e for e, r in zip(candidates, rank, strict=True) if r == min(rank)]
        path.append(a.nodes[a.dst[candidates[t_index % len(candidates)]]])
    return path


def _path_of(router: Router, loads: np.ndarray, s: str, t: str, weight: float) -> list[str]:
    """The one path a single flow's loads trace from ``s`` to ``t`` (asserting it is one path)."""
    a = router.arrays
    used = np.flatnonzero(loads)
    np.testing.assert_allclose(loads[used], weight)
    step = {}
    for e in used:
        tail = a.nodes[a.src[e]]
        assert tail not in step, f"the flow {s} -> {t} leaves {tail} on two links"
        step[tail] = a.nodes[a.dst[e]]
    path = [s]
    while path[-1] != t:
        assert path[-1] in step and len(path) <= len(used), f"no path {s} -> {t} in the loads"
        path.append(step[path[-1]])
    assert len(path) == len(used) + 1, "loads off the flow's path"
    return path


def _single_route(router: Router, pair, weight=1.0) -> np.ndarray:
    return router.route(Step.of([pair], weight)).link_loads


def _cases(names, seeds):
    return [(name, seed) for name in names for seed in seeds]


# ----------------------------------------------------------------------------------------------
# ECMP


@pytest.mark.parametrize("relay", [True, False])
@pytest.mark.parametrize(("name", "seed"), _cases(GRAPHS, range(2)))
def test_ecmp_sparse_loads_are_the_even_split_over_all_shortest_paths(name, seed, relay):
    topo = GRAPHS[name]()
    rng = np.random.default_rng(seed)
    group = _routable_group(topo, rng, "ecmp", relay)
    if len(group) < 2:
        return
    router = Router(topo, group, routing=RoutingPolicy("ecmp", relay=relay))
    pairs, weights = _flows(rng, len(group))
    route = router.route(Step.of(pairs, weights))
    expected = _ecmp_brute(topo, router, group, pairs, weights, relay)
    np.testing.assert_allclose(route.link_loads, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("relay", [True, False])
@pytest.mark.parametrize("name", GRAPHS)
def test_ecmp_dense_steps_match_brute_force(name, relay):
    topo = GRAPHS[name]()
    group = _meeting(topo, list(topo.chips), relay)
    router = Router(topo, group, routing=RoutingPolicy("ecmp", relay=relay))
    pairs = list(itertools.permutations(range(len(group)), 2))
    weights = np.random.default_rng(3).integers(1, 5, len(pairs)).astype(float)
    for step, w in (
        (Step.everyone(len(group), 0.5), np.full(len(pairs), 0.5)),
        (Step.of(pairs, weights), weights),
    ):
        expected = _ecmp_brute(topo, router, group, pairs, w, relay)
        np.testing.assert_allclose(router.route(step).link_loads, expected, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# single


@pytest.mark.parametrize("relay", [True, False])
@pytest.mark.parametrize(("name", "seed"), _cases(GRAPHS, range(2)))
def test_single_equals_a_hand_walked_d_mod_k_dimension_order_rule(name, seed, relay):
    topo = GRAPHS[name]()
    rng = np.random.default_rng(seed + 10)
    group = _routable_group(topo, rng, "single", relay)
    if len(group) < 2:
        return
    router = Router(topo, group, routing=RoutingPolicy("single", relay=relay))
    index = _edge_index(router)
    pairs, weights = _flows(rng, len(group), count=3 * len(group))
    route = router.route(Step.of(pairs, weights))
    expected = np.zeros(len(router.arrays.src))
    lengths = []
    for (a, b), w in zip(pairs, weights, strict=True):
        s, t = group[a], group[b]
        path = _single_path(topo, router, s, t, relay)
        for u, v in itertools.pairwise(path):
            expected[index[(u, v)]] += w
        lengths.append(len(path) - 1)
        assert len(path) - 1 == nx.shortest_path_length(_allowed(topo, s, t, relay), s, t)
        # the same pair on its own, in another step, takes the same path
        assert _path_of(router, _single_route(router, (a, b), w), s, t, w) == path
    np.testing.assert_allclose(route.link_loads, expected, rtol=1e-12)
    assert route.link_loads.sum() == pytest.approx(float(np.dot(weights, lengths)))
    assert route.max_links == max(lengths)


def test_single_candidates_follow_the_out_edge_listing():
    """The hand-walked rule lists out-edges by directed-edge index: so does ``arrays.expand``."""
    router = Router(topology("trn3-nl32x2-gen1"), topology("trn3-nl32x2-gen1").chips[:4])
    a = router.arrays
    nodes = np.arange(a.n_nodes)
    owner, edges = a.expand(nodes)
    for node in nodes:
        assert list(edges[owner == node]) == list(np.flatnonzero(a.src == node))


@pytest.mark.parametrize("name", TORI)
def test_single_on_a_torus_corrects_axes_in_file_order(name):
    topo = TORI[name]()
    router = Router(topo, list(topo.chips), routing=RoutingPolicy("single"))
    axes = [axis.name for axis in topo.spec.torus.axes]
    coord = {chip: topo.nodes[chip]["coord"] for chip in topo.chips}
    for a, b in itertools.permutations(range(topo.n_ranks), 2):
        s, t = topo.chips[a], topo.chips[b]
        path = _path_of(router, _single_route(router, (a, b)), s, t, 1.0)
        assert len(path) - 1 == nx.shortest_path_length(topo.graph, s, t)
        moved = [
            axes.index(topo.links.get((u, v), topo.links.get((v, u)))["cls"])
            for u, v in itertools.pairwise(path)
        ]
        assert moved == sorted(moved), (s, t, moved)  # an axis once left is never taken again
        first_differing = next(i for i in range(len(axes)) if coord[s][i] != coord[t][i])
        assert moved[0] == first_differing
        for u, v in itertools.pairwise(path):  # each hop changes exactly one coordinate
            assert sum(x != y for x, y in zip(coord[u], coord[v], strict=True)) == 1


def test_single_gives_a_pair_the_same_path_in_every_step():
    topo = topology("trn3-nl72x2-gen1")
    router = Router(topo, topo.chips, routing=RoutingPolicy("single"))
    rng = np.random.default_rng(5)
    pairs, _ = _flows(rng, topo.n_ranks, count=40)
    alone = [_single_route(router, pair) for pair in pairs]
    for trial in range(3):
        chosen = sorted(rng.choice(len(pairs), 15, replace=False))
        step = Step.of([pairs[i] for i in chosen], 1.0, label=f"trial{trial}")
        np.testing.assert_allclose(router.route(step).link_loads, sum(alone[i] for i in chosen))
    # and a fresh router (another collective) routes it the same way
    again = Router(topo, topo.chips, routing=RoutingPolicy("single"))
    for pair, loads in zip(pairs[:10], alone, strict=False):
        np.testing.assert_array_equal(_single_route(again, pair), loads)


# ----------------------------------------------------------------------------------------------
# hash


@pytest.mark.parametrize("relay", [True, False])
@pytest.mark.parametrize(("name", "seed"), _cases(GRAPHS, range(2)))
def test_hash_puts_each_flow_on_one_shortest_path(name, seed, relay):
    topo = GRAPHS[name]()
    rng = np.random.default_rng(seed + 20)
    group = _routable_group(topo, rng, "hash", relay)
    if len(group) < 2:
        return
    router = Router(topo, group, routing=RoutingPolicy("hash", relay=relay), seed=seed + 3)
    pairs, weights = _flows(rng, len(group), count=3 * len(group))
    route = router.route(Step.of(pairs, weights))
    total, lengths = np.zeros(len(router.arrays.src)), []
    for (a, b), w in zip(pairs, weights, strict=True):
        s, t = group[a], group[b]
        loads = _single_route(router, (a, b), w)
        path = _path_of(router, loads, s, t, w)
        assert len(path) - 1 == nx.shortest_path_length(_allowed(topo, s, t, relay), s, t)
        assert nx.is_path(_allowed(topo, s, t, relay), path)
        total += loads
        lengths.append(len(path) - 1)
    # the flows of one step take the paths they take alone (same seed): a hash of the flow only
    np.testing.assert_allclose(route.link_loads, total, rtol=1e-12)
    assert route.link_loads.sum() == pytest.approx(float(np.dot(weights, lengths)))
    assert route.max_links == max(lengths)


def test_hash_seeds_are_different_hash_functions_and_each_is_repeatable():
    topo = topology("trn3-nl32x2-gen1")
    rng = np.random.default_rng(11)
    pairs, _ = _flows(rng, topo.n_ranks, count=200)
    step = Step.of(pairs, 1.0)
    by_seed = {}
    for seed in range(4):
        loads = Router(topo, topo.chips, routing=RoutingPolicy("hash"), seed=seed).route(step).link_loads
        by_seed[seed] = loads
        again = Router(topo, topo.chips, routing=RoutingPolicy("hash"), seed=seed).route(Step.of(pairs, 1.0))
        np.testing.assert_array_equal(again.link_loads, loads)
        np.testing.assert_array_equal(
            Router(topo, topo.chips, routing=RoutingPolicy("hash")).with_seed(seed).route(step).link_loads,
            loads,
        )
    for a, b in itertools.combinations(by_seed, 2):
        assert not np.array_equal(by_seed[a], by_seed[b]), (a, b)
    # one pair with many equal paths takes more than one of them over a few seeds
    s, t = 0, 40  # different racks
    paths = {
        tuple(
            _path_of(
                router := Router(topo, topo.chips, routing=RoutingPolicy("hash"), seed=seed),
                _single_route(router, (s, t)),
                topo.chips[s],
                topo.chips[t],
                1.0,
            )
        )
        for seed in range(8)
    }
    assert len(paths) > 1


def test_hash_keeps_a_pair_on_its_path_across_steps():
    topo = topology("trn3-nl72x2-gen1")
    router = Router(topo, topo.chips, routing=RoutingPolicy("hash"), seed=7)
    rng = np.random.default_rng(8)
    pairs, _ = _flows(rng, topo.n_ranks, count=30)
    alone = [_single_route(router, pair) for pair in pairs]
    for trial in range(3):
        chosen = sorted(rng.choice(len(pairs), 12, replace=False))
        step = Step.of([pairs[i] for i in chosen], 1.0, label=f"trial{trial}")
        np.testing.assert_allclose(router.route(step).link_loads, sum(alone[i] for i in chosen))


# ----------------------------------------------------------------------------------------------
# no relay


@pytest.mark.parametrize("policy", ["ecmp", "single", "hash"])
@pytest.mark.parametrize("seed", range(6))
def test_no_relay_never_leaves_a_chip_but_the_source(policy, seed):
    topo = _fabric(seed)
    rng = np.random.default_rng(seed)
    # chips that reach every other one through switches alone
    group = _meeting(topo, list(topo.chips), relay=False)
    if len(group) < 2:
        pytest.skip("no two chips meet through switches alone")
    router = Router(topo, group, routing=RoutingPolicy(policy, relay=False), seed=seed)
    a = router.arrays
    for a_pos, b_pos in itertools.permutations(range(len(group)), 2):
        loads = _single_route(router, (a_pos, b_pos))
        tails = {a.nodes[a.src[e]] for e in np.flatnonzero(loads)}
        assert not (tails & set(topo.chips)) - {group[a_pos]}, (policy, group[a_pos], group[b_pos])
    pairs, weights = _flows(rng, len(group), count=len(group) * (len(group) - 1))
    loads = router.route(Step.of(pairs, weights)).link_loads
    chip_tails = a.src < a.n_chips
    sources = {router.rows[i] for i, _ in pairs}
    assert not loads[chip_tails & ~np.isin(a.src, list(sources))].any()


def test_no_relay_ecmp_loads_nothing_through_a_chip_that_may_not_forward():
    """c0 -> c1 through switch s0, or through chip c2 which may not relay: all bytes via s0."""
    topo = graph_topology(3, 1, {("c0", "s0"): 1, ("s0", "c1"): 1, ("c0", "c2"): 1, ("c2", "c1"): 1})
    for policy in ("ecmp", "single", "hash"):
        router = Router(topo, topo.chips, routing=RoutingPolicy(policy, relay=False))
        index = _edge_index(router)
        loads = router.route(Step.of([(0, 1)], 1.0)).link_loads
        expected = np.zeros(len(loads))
        expected[[index[("c0", "s0")], index[("s0", "c1")]]] = 1.0
        np.testing.assert_array_equal(loads, expected, err_msg=policy)
        # with relay, ECMP splits over both two-link paths
        relayed = Router(topo, topo.chips, routing=RoutingPolicy(policy, relay=True))
        assert relayed.route(Step.of([(0, 1)], 1.0)).link_loads.sum() == pytest.approx(2.0)


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl32x2-gen1", "trn3-nl72x2-gen1"])
@pytest.mark.parametrize("policy", ["ecmp", "single", "hash"])
def test_no_relay_where_a_pair_needs_a_relaying_chip_is_a_usage_error(sku, policy):
    topo = topology(sku)
    with pytest.raises(UsageError, match="relay") as error:
        Router(topo, topo.chips, routing=RoutingPolicy(policy, relay=False))
    assert "cannot reach" in str(error.value)
    # through the loader and the engine as the CLI does it
    loaded = load_topology(sku, overrides=routing_overrides(f"{policy},no-relay"))
    with pytest.raises(UsageError, match="relay"):
        evaluate(loaded, "allreduce", [GIB], loaded.chips, algo="ring")


# ----------------------------------------------------------------------------------------------
# the catalog


@pytest.mark.parametrize("sku", ["trn3-nl32x2-gen1", "trn3-nl72x2-gen1"])
def test_single_path_ring_allreduce_is_several_times_slower_than_ecmp(sku):
    times = {}
    for policy in ("ecmp", "single", "hash"):
        topo = load_topology(sku, overrides=[f"routing.policy={policy}"])
        (row,) = evaluate(topo, "allreduce", [GIB], topo.chips, algo="ring").rows
        times[policy] = row.time_us
        if policy == "hash":
            assert row.worst_time_us >= row.time_us * (1 - 1e-12)
        else:
            assert row.worst_time_us == row.time_us
    # one port per destination: each ring flow gets one of a chip's many links instead of all
    assert times["single"] > 3 * times["ecmp"]
    assert times["hash"] > 3 * times["ecmp"]


def test_ring_on_a_torus_uses_neighbour_links_under_every_policy():
    """A ring of torus neighbours has one shortest path per flow: every policy costs the same."""
    times = set()
    for policy in ("ecmp", "single", "hash"):
        topo = load_topology("trn2-nl16", overrides=[f"routing.policy={policy}"])
        (row,) = evaluate(topo, "allreduce", [GIB], topo.chips, algo="ring").rows
        times.add(round(row.time_us, 6))
    assert len(times) == 1


@pytest.mark.parametrize("sku", ["trn3-nl32x2-gen1", "trn3-nl72x2-gen1"])
@pytest.mark.parametrize("op", ["allreduce", "alltoall"])
def test_worst_time_is_the_mean_unless_hashed(sku, op):
    sizes = [1 << 12, 1 << 20, GIB]
    hashed_spread = False
    for policy in ("ecmp", "single", "hash"):
        topo = load_topology(sku, overrides=[f"routing.policy={policy}"])
        evaluation = evaluate(topo, op, sizes, topo.chips, algo="all")
        assert evaluation.routing.policy == policy
        for rows in evaluation.by_algorithm.values():
            for row in rows:
                if policy == "hash":
                    assert row.worst_time_us >= row.time_us * (1 - 1e-12)
                    hashed_spread |= row.worst_time_us > row.time_us * (1 + 1e-9)
                else:
                    assert row.worst_time_us == row.time_us
    assert hashed_spread  # some seed is slower than the mean somewhere


# ----------------------------------------------------------------------------------------------
# --routing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ecmp", RoutingPolicy("ecmp", True, HASH_SEEDS)),
        ("single", RoutingPolicy("single", True, HASH_SEEDS)),
        ("hash", RoutingPolicy("hash", True, HASH_SEEDS)),
        ("hash:16", RoutingPolicy("hash", True, 16)),
        ("hash:1", RoutingPolicy("hash", True, 1)),
        (f"hash:{MAX_HASH_SEEDS}", RoutingPolicy("hash", True, MAX_HASH_SEEDS)),
        ("HASH:3, No-Relay", RoutingPolicy("hash", False, 3)),
        ("  single ,no-relay ", RoutingPolicy("single", False, HASH_SEEDS)),
        ("ecmp,relay", RoutingPolicy("ecmp", True, HASH_SEEDS)),
        ("no-relay", RoutingPolicy("ecmp", False, HASH_SEEDS)),
        ("relay", RoutingPolicy("ecmp", True, HASH_SEEDS)),
    ],
)
def test_parse_routing_good_spellings(text, expected):
    assert parse_routing(text) == expected
    assert parse_routing(expected.label) == expected  # the label spells it back


def test_parse_routing_keeps_the_files_parts_not_given():
    base = RoutingPolicy("single", relay=False, seeds=4)
    assert parse_routing("hash", base) == RoutingPolicy("hash", False, 4)
    assert parse_routing("relay", base) == RoutingPolicy("single", True, 4)
    assert parse_routing("ecmp,relay", base) == RoutingPolicy("ecmp", True, 4)
    assert parse_routing("hash:9", base) == RoutingPolicy("hash", False, 9)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "ospf",
        "ecmp,",
        ",relay",
        "ecmp,relay,no-relay",
        "ecmp,hash",
        "no-relay,relay",
        "relay,single",
        "hash:0",
        f"hash:{MAX_HASH_SEEDS + 1}",
        "hash:-1",
        "hash:two",
        "single:4",
        "ecmp:2",
        "ecmp,norelay",
    ],
)
def test_parse_routing_bad_spellings_name_the_parameter(text):
    for refuse in (parse_routing, routing_overrides):
        with pytest.raises(ParameterError, match=f"^routing {re.escape(repr(text))}: ") as refused:
            refuse(text)
        assert refused.value.parameters == ("routing",)
    with pytest.raises(ParameterError, match="^other "):
        parse_routing(text, parameter="other")


@pytest.mark.parametrize(
    ("text", "edits"),
    [
        ("single", ["routing.policy=single"]),
        ("hash", ["routing.policy=hash"]),
        ("hash:16", ["routing.policy=hash", "routing.hash_seeds=16"]),
        ("hash:16,no-relay", ["routing.policy=hash", "routing.hash_seeds=16", "routing.relay=false"]),
        ("ECMP,Relay", ["routing.policy=ecmp", "routing.relay=true"]),
        ("no-relay", ["routing.relay=false"]),
        ("relay", ["routing.relay=true"]),
    ],
)
def test_routing_overrides_edit_only_the_parts_given(text, edits):
    assert routing_overrides(text) == edits
    # applied to a file, they give what parse_routing gives with the file's routing as default
    loaded = load_topology("trn2-nl16", overrides=edits)
    base = routing_of(topology("trn2-nl16").spec)
    assert routing_of(loaded.spec) == parse_routing(text, base)


def test_hash_chooses_afresh_at_every_hop():
    """Two stages of four equal ports in a row: a per-hop hash reaches all 16 combinations over seeds."""
    links = {("c0", f"s{k}"): 1.0 for k in range(4)} | {(f"s{k}", "c1"): 1.0 for k in range(4)}
    links |= {("c1", f"s{k}"): 1.0 for k in range(4, 8)} | {(f"s{k}", "c2"): 1.0 for k in range(4, 8)}
    topo = graph_topology(3, 8, links)
    router = Router(topo, topo.chips, routing=RoutingPolicy("hash"))
    paths = set()
    for seed in range(64):
        loads = router.with_seed(seed).route(Step.of([(0, 2)], 1.0)).link_loads
        path = _path_of(router, loads, "c0", "c2", 1.0)
        assert path[2] == "c1" and len(path) == 5
        paths.add((path[1], path[3]))
    assert len(paths) >= 12  # one key for both hops would give only the four "diagonal" pairs


def test_single_pins_a_pair_to_the_same_path_when_pinned_to_its_links():
    """x0.y1 -> x2.y1 on nl16 is half an x ring away: two x paths tie and D-mod-K picks one.

    Pinned to the x links, the candidates are the same two ports in the same order, so the pair
    takes the same path: the pinned sub-graph keys on the destination's whole-topology node number.
    """
    topo = topology("trn2-nl16")
    router = Router(topo, topo.chips, routing=RoutingPolicy("single"))
    a, b = topo.chips.index("x0.y1"), topo.chips.index("x2.y1")
    free = router.route(Step.of([(a, b)], 1.0)).link_loads
    pinned = router.route(Step.of([(a, b)], 1.0, links=frozenset({"x"}))).link_loads
    np.testing.assert_array_equal(pinned, free)
