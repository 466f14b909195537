"""The demand ops' optimum (maximum concurrent flow of a traffic matrix) against an independent
per-pair LP, enumeration of every cut and closed forms on rings (nl72x2's send/recv against
networkx's max-flow: tests/model/bounds/test_shaped.py)."""

import numpy as np
import pytest
from collectives.synthetic import complete_topology, graph_topology, ring_topology

from model.test_optimum import SEEDS, arrays_of, random_group, random_topology, subsets
from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import get_op
from trnsim.model.optimum import demand
from trnsim.model.optimum.demand import demand_optimum
from trnsim.model.optimum.solve import optimum


def pair_lp(n, src, dst, cap, members, traffic) -> float:
    """The maximum concurrent flow with one commodity per ordered pair (not aggregated by source):
    the least T (ns per byte of S) with every pair's T[s, t] routed and every edge within cap x T."""
    from scipy.optimize import linprog

    pairs = [(s, t) for s in range(len(members)) for t in range(len(members)) if s != t and traffic[s, t] > 0]
    k, m = len(pairs), len(src)
    a_eq = np.zeros((k * n, k * m + 1))
    b_eq = np.zeros(k * n)
    for i, (s, t) in enumerate(pairs):
        for e in range(m):
            a_eq[i * n + dst[e], i * m + e] += 1.0
            a_eq[i * n + src[e], i * m + e] -= 1.0
        b_eq[i * n + members[t]] += traffic[s, t]
        b_eq[i * n + members[s]] -= traffic[s, t]
    a_ub = np.zeros((m, k * m + 1))
    for e in range(m):
        a_ub[e, [i * m + e for i in range(k)]] = 1.0
        a_ub[e, -1] = -cap[e]
    cost = np.zeros(k * m + 1)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=b_eq, method="highs")
    assert result.status == 0
    return result.fun / 1e9


def random_demand(seed: int, p: int) -> np.ndarray:
    """A sparse random matrix with at least two sources and two sinks, not uniform."""
    rng = np.random.default_rng(seed + 99)
    while True:
        traffic = np.where(rng.random((p, p)) < 0.4, rng.uniform(0.1, 1.0, (p, p)), 0.0)
        np.fill_diagonal(traffic, 0.0)
        if (traffic.sum(axis=1) > 0).sum() >= 2 and (traffic.sum(axis=0) > 0).sum() >= 2:
            return traffic


# random graphs with three chips or more: two have at most one source and one sink each way
WIDE = [seed for seed in SEEDS if random_topology(seed).n_ranks >= 3][:24]


@pytest.mark.parametrize("seed", WIDE)
def test_many_sources_and_sinks_equal_the_per_pair_lp(seed):
    topo = random_topology(seed)
    group = random_group(topo, seed)
    if len(group) < 3:
        group = list(topo.chips)
    traffic = random_demand(seed, len(group))
    seconds, label, exact = demand_optimum(topo, group, traffic, "alltoallv")
    expected = pair_lp(*arrays_of(topo, group), traffic)
    assert seconds <= expected * (1 + 1e-9)  # a valid bound whatever the solver did
    assert exact and seconds == pytest.approx(expected, rel=1e-6)
    assert label.startswith("link classes")


def brute_single(n, src, dst, cap, members, weights, end, source) -> float:
    """One source ``end`` sending ``weights[j]`` to member j: max over X holding it of
    d(outside X) / B(X); one sink: max over X missing it of d(X) / B(X). Seconds per byte x 1e9."""
    sets = subsets(n)
    out = (sets[:, src] & ~sets[:, dst]) @ cap
    holds = sets[:, members[end]]
    inside = sets[:, members] @ weights
    moved = (weights.sum() - inside) if source else inside
    valid = (holds if source else ~holds) & (moved > 0)
    return float(np.max(moved[valid] / out[valid]))


@pytest.mark.parametrize("seed", SEEDS)
def test_one_source_or_one_sink_is_the_best_cut_by_brute_force(seed):
    topo = random_topology(seed, cuts=True)
    group = random_group(topo, seed)
    p = len(group)
    rng = np.random.default_rng(seed + 5)
    end = int(rng.integers(p))
    weights = rng.uniform(0.0, 1.0, p) * (rng.random(p) < 0.7)
    weights[end] = 0.0
    if not weights.any():
        weights[(end + 1) % p] = 0.5
    traffic = np.zeros((p, p))
    source = seed % 2 == 0
    if source:
        traffic[end, :] = weights
    else:
        traffic[:, end] = weights
    seconds, _, exact = demand_optimum(topo, group, traffic, "scatter" if source else "gather")
    expected = brute_single(*arrays_of(topo, group), weights, end, source)
    assert exact and seconds * 1e9 == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("p", [3, 6, 9])
def test_sendrecv_between_ring_neighbours_goes_both_ways_round(p):
    """Both ways round the ring: the direct link and the long way, 2 B in all (B = 100 GB/s); a pair
    each way as much, on the directions the other leaves free."""
    ring = ring_topology(p)
    for pairs in [((0, 1),), ((0, p // 2),), ((0, 1), (1, 0))]:
        traffic = Arguments(pairs=pairs).traffic(get_op("sendrecv"), p)
        seconds, _, exact = demand_optimum(ring, ring.chips, traffic, "sendrecv")
        assert (seconds * 200e9, exact) == (pytest.approx(1.0, rel=1e-12), True)


@pytest.mark.parametrize("p", [3, 5, 8])
def test_a_ring_permute_splits_each_buffer_between_the_short_and_the_long_way(p):
    """Every chip sends S to the next: a share x the direct way (one link of each clockwise link's
    B per pair) and 1 - x the long way (p-1 links, so each anticlockwise link carries (p-1)(1-x)).
    Balanced at x = (p-1)/p: (p-1)/p S / B. The multicommodity LP (its lengths have a floor of
    1e-7 relative, so 1e-6 here)."""
    ring = ring_topology(p)
    traffic = Arguments().traffic(get_op("permute"), p)
    seconds, label, exact = demand_optimum(ring, ring.chips, traffic, "permute")
    assert (seconds * 100e9, exact) == (pytest.approx((p - 1) / p, rel=1e-6), True)
    assert label.startswith("link classes")


def test_a_pair_behind_thin_links_is_held_to_its_max_flow():
    """A ring of 4 whose links alternate 100 and 10 GB/s: c0 -> c2 has two routes, each through a
    10 GB/s link: 20 GB/s, below c0's own 110."""
    links = {("c0", "c1"): 100.0, ("c1", "c2"): 10.0, ("c2", "c3"): 100.0, ("c3", "c0"): 10.0}
    topo = graph_topology(4, 0, links)
    traffic = np.zeros((4, 4))
    traffic[0, 2] = 1.0
    seconds, label, exact = demand_optimum(topo, topo.chips, traffic, "sendrecv")
    assert (seconds * 20e9, label, exact) == (pytest.approx(1.0, rel=1e-12), "max-flow c0 -> c2", True)


@pytest.mark.parametrize("p", [4, 7])
def test_gather_on_a_ring_is_the_roots_two_links(p):
    """Every member sends S/p to the root: (p-1)/p of S into it over 2 links, and no arc of the ring
    holds more demand per link leaving it."""
    ring = ring_topology(p)
    traffic = Arguments(root=2).traffic(get_op("gather"), p)
    seconds, _, exact = demand_optimum(ring, ring.chips, traffic, "gather")
    assert (seconds * 200e9, exact) == (pytest.approx((p - 1) / p, rel=1e-12), True)


def test_gather_across_a_thin_bridge():
    """Two triangles of 100 GB/s joined by 10 GB/s, the root on the left: the three on the right
    send 3/6 of S over the bridge, 0.5 / 10 GB/s (the root's own links take 5/6 over 200)."""
    left, right = ["c0", "c1", "c2"], ["c3", "c4", "c5"]
    links = {(a, b): 100.0 for side in (left, right) for i, a in enumerate(side) for b in side[i + 1 :]}
    links[("c2", "c3")] = 10.0
    topo = graph_topology(6, 0, links)
    for op in ("gather", "scatter"):  # the same cut, the other way
        traffic = Arguments(root=0).traffic(get_op(op), 6)
        seconds, label, exact = demand_optimum(topo, topo.chips, traffic, op)
        assert (seconds * 10e9, exact) == (pytest.approx(0.5, rel=1e-12), True)
        assert label == f"max-flow {'to' if op == 'gather' else 'from'} c0 (cut: 3 of 6 members vs the rest)"


def test_an_even_alltoallv_is_the_all_to_all():
    square = complete_topology(5, bw_gbps=100.0)
    even = Arguments().traffic(get_op("alltoallv"), 5)
    seconds, label, exact = demand_optimum(square, square.chips, even, "alltoallv")
    uniform = optimum(square, square.chips, "alltoall")
    assert (seconds, label, exact) == (uniform.seconds_per_byte, uniform.limited_by, uniform.exact)


def test_past_the_lp_limit_there_is_no_optimum(monkeypatch):
    ring = ring_topology(5)
    traffic = random_demand(1, 5)
    monkeypatch.setattr(demand, "DEMAND_LP_ENTRIES", 0)
    assert demand_optimum(ring, ring.chips, traffic, "alltoallv") is None


def test_results_are_kept_per_group_op_and_matrix():
    ring = ring_topology(5)
    one, two = np.zeros((5, 5)), np.zeros((5, 5))
    one[0, 1], two[0, 2] = 1.0, 2.0
    first = demand_optimum(ring, ring.chips, one, "sendrecv")
    assert demand_optimum(ring, ring.chips, one.copy(), "sendrecv") is first
    assert demand_optimum(ring, ring.chips, two, "sendrecv")[0] == pytest.approx(2 * first[0], rel=1e-12)
