"""The weighted min-ratio cut (all-gatherv, reduce-scatterv) and the rooted min cut (broadcast,
reduce) against enumeration of every vertex set, and their closed forms."""

import numpy as np
import pytest
from collectives.synthetic import complete_topology, graph_topology, ring_topology

from model.test_optimum import SEEDS, arrays_of, random_group, random_topology, subsets
from trnsim.model.optimum.cuts import gather_cut
from trnsim.model.optimum.gather import gather_optimum, rooted_optimum
from trnsim.model.optimum.graph import Network


def leaving(n, src, dst, cap) -> tuple[np.ndarray, np.ndarray]:
    """Every vertex set (rows) and the bandwidth of the edges leaving it."""
    sets = subsets(n)
    return sets, (sets[:, src] & ~sets[:, dst]) @ cap


def brute_weighted(n, src, dst, cap, members, weights, must_miss=None) -> float:
    """max over X missing a member (of ``must_miss``, every member by default) and holding weight
    of w(X n C) / B(X): seconds per byte of S, times 1e9."""
    sets, out = leaving(n, src, dst, cap)
    inside = sets[:, members] @ weights
    pool = members if must_miss is None else must_miss
    valid = (inside > 0) & ~sets[:, pool].all(axis=1)
    return float(np.max(inside[valid] / out[valid]))


def brute_rooted(n, src, dst, cap, members, root) -> float:
    """min over X holding the root and missing a member of B(X) (GB/s)."""
    sets, out = leaving(n, src, dst, cap)
    valid = sets[:, members[root]] & ~sets[:, members].all(axis=1)
    return float(np.min(out[valid]))


@pytest.mark.parametrize("seed", SEEDS)
def test_weighted_gather_equals_the_best_weighted_cut_by_brute_force(seed):
    topo = random_topology(seed, cuts=True)
    group = random_group(topo, seed)
    rng = np.random.default_rng(seed + 7)
    blocks = rng.dirichlet(np.ones(len(group)))
    if seed % 3 == 0:
        blocks[0] = 0.0  # a member with nothing to give still receives everything
        blocks /= blocks.sum()
    n, src, dst, cap, members = arrays_of(topo, group)
    seconds, _, exact = gather_optimum(topo, group, False, tuple(blocks))
    assert exact
    assert seconds * 1e9 == pytest.approx(brute_weighted(n, src, dst, cap, members, blocks), rel=1e-9)


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_weighted_cuts_on_directed_graphs_by_brute_force(seed):
    """Links that differ by direction, the search over every member and over one target."""
    topo = random_topology(seed)
    group = random_group(topo, seed)
    n, src, dst, cap, members = arrays_of(topo, group)
    rng = np.random.default_rng(seed + 11)
    cap = cap * rng.uniform(0.25, 1.0, len(cap))  # each direction its own capacity
    net = Network(
        n, src, dst, cap, members, np.zeros(n, dtype=np.int64), np.full(len(src), "x", dtype=object)
    )
    weights = rng.dirichlet(np.ones(len(group)))
    cut = gather_cut(net, weights=weights)
    assert 1 / cut.ratio == pytest.approx(brute_weighted(n, src, dst, cap, members, weights), rel=1e-9)
    target = members[int(rng.integers(len(group)))]
    rooted = gather_cut(net, np.array([target]), weights=weights)
    expected = brute_weighted(n, src, dst, cap, members, weights, must_miss=np.array([target]))
    assert 1 / rooted.ratio == pytest.approx(expected, rel=1e-9)


def test_even_blocks_are_the_all_gather_itself():
    topo = random_topology(3)
    group = list(topo.chips)
    even = tuple([1 / len(group)] * len(group))
    assert gather_optimum(topo, group, False, even) == gather_optimum(topo, group, False)


def test_two_ranks_with_blocks_a_quarter_and_three_quarters():
    """Rank 0 lacks 3/4 of the size and receives it over the one link: 0.75 S / B."""
    pair = complete_topology(2, bw_gbps=100.0)
    seconds, label, exact = gather_optimum(pair, pair.chips, False, (0.25, 0.75))
    assert seconds * 100e9 == pytest.approx(0.75, rel=1e-12)
    assert (label, exact) == ("injection (c0)", True)


def test_a_thin_bridge_binds_the_side_holding_the_larger_blocks():
    """Two triangles of 100 GB/s joined by one 10 GB/s link: the blocks of one side cross it. With
    shares 0.1 each on the left and 0.7/3 on the right, 0.7 S crosses: 0.7 / 10 GB/s."""
    left, right = ["c0", "c1", "c2"], ["c3", "c4", "c5"]
    links = {(a, b): 100.0 for side in (left, right) for i, a in enumerate(side) for b in side[i + 1 :]}
    links[("c2", "c3")] = 10.0
    topo = graph_topology(6, 0, links)
    blocks = (0.1, 0.1, 0.1, 0.7 / 3, 0.7 / 3, 0.7 / 3)
    seconds, label, exact = gather_optimum(topo, topo.chips, False, blocks)
    assert seconds * 10e9 == pytest.approx(0.7, rel=1e-12)
    assert exact and label == "cut: 3 of 6 members vs the rest"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_rooted_cut_is_the_smallest_max_flow_from_the_root_by_brute_force(seed):
    topo = random_topology(seed, cuts=True)
    group = random_group(topo, seed)
    root = seed % len(group)
    n, src, dst, cap, members = arrays_of(topo, group)
    for reverse in (False, True):  # trnsim's links are symmetric: a reduce's is the same cut
        seconds, label, exact = rooted_optimum(topo, group, root, reverse)
        assert 1 / (seconds * 1e9) == pytest.approx(brute_rooted(n, src, dst, cap, members, root), rel=1e-9)
        # exact only without Steiner nodes: every device a member
        assert exact == (n == len(group))
        assert label.startswith(f"min cut {'to' if reverse else 'from'} {group[root]} (")


@pytest.mark.parametrize("p", [3, 5, 8])
def test_broadcast_closed_forms(p):
    """A complete graph: every cut around the root crosses p-1 links, (p-1) B, exact. A ring: two
    links, 2 B, exact. A star of chips on one switch: one link, B, a Steiner node so not exact."""
    seconds, _, exact = rooted_optimum(
        complete_topology(p, bw_gbps=100.0), [f"c{i}" for i in range(p)], 1, False
    )
    assert (seconds * (p - 1) * 100e9, exact) == (pytest.approx(1.0, rel=1e-12), True)
    ring = ring_topology(p)
    seconds, _, exact = rooted_optimum(ring, ring.chips, 0, False)
    assert (seconds * 200e9, exact) == (pytest.approx(1.0, rel=1e-12), True)
    star = graph_topology(p, 1, {(f"c{i}", "s0"): 100.0 for i in range(p)})
    seconds, _, exact = rooted_optimum(star, star.chips, 0, True)
    assert (seconds * 100e9, exact) == (pytest.approx(1.0, rel=1e-12), False)


def test_chips_outside_the_group_relay_and_make_it_a_steiner_bound():
    """Every other chip of a ring of 6: the path to the next member has two routes (around either
    way), 2 B, but the chips between are not members, so not proven reachable by routing."""
    ring = ring_topology(6)
    seconds, _, exact = rooted_optimum(ring, ring.chips[::2], 0, False)
    assert (seconds * 200e9, exact) == (pytest.approx(1.0, rel=1e-12), False)
