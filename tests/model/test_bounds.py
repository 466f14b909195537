"""The bound's candidates against closed forms on small graphs, ties named in order, and latency."""

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives.ops import BASIC, get_op
from trnsim.model.bounds import Candidate, candidates, largest, lower_bound
from trnsim.model.bounds.families import in_network, injection, natural_cuts, per_chip, skewed
from trnsim.topology.load import load_topology
from trnsim.topology.synthetic import complete_topology, graph_topology

B = 100.0  # GB/s per link


@pytest.mark.parametrize("p", [2, 3, 4, 6])
@pytest.mark.parametrize("op", list(BASIC))
def test_injection_on_a_complete_graph_is_the_members_share_over_its_links(p, op):
    # each chip has p-1 links of B: all-reduce moves 2(p-1)/p of the size through them, the others (p-1)/p
    topo = complete_topology(p, bw_gbps=B)
    [found] = injection(topo, topo.chips, op)
    moved = 2 * (p - 1) / p if op == "allreduce" else (p - 1) / p
    assert found.seconds_per_byte == pytest.approx(moved / ((p - 1) * B * 1e9), rel=1e-12, abs=0)
    assert (found.label, found.family, found.exact) == ("injection (c0)", "injection", False)


def test_unequal_chips_bind_all_reduce_through_their_total_or_the_slowest_alone():
    # chip bandwidths 200, 110, 110: the total 2(p-1) S / 420 GB/s beats one chip's S / 110 GB/s
    topo = graph_topology(3, 0, {("c0", "c1"): 100.0, ("c0", "c2"): 100.0, ("c1", "c2"): 10.0})
    [found] = injection(topo, topo.chips, "allreduce")
    assert found.seconds_per_byte == pytest.approx(4 / 420e9, rel=1e-12, abs=0)
    assert found.label == "injection (all members' links)"
    # a chip on one thin link: S through its 10 GB/s beats the total
    links = {(f"c{i}", f"c{j}"): 1000.0 for i in range(3) for j in range(i + 1, 3)} | {("c0", "c3"): 10.0}
    topo = graph_topology(4, 0, links)
    [found] = injection(topo, topo.chips, "allreduce")
    assert found.seconds_per_byte == pytest.approx(1 / 10e9, rel=1e-12, abs=0)
    assert found.label == "injection (c3)"


@pytest.mark.parametrize(
    ("op", "one", "half"),
    [
        # (bytes across per byte of size) for the cut {c0} (1|3 members) and {c0, c1} (2|2)
        ("allreduce", 1.0, 1.0),
        ("allgather", 3 / 4, 2 / 4),  # max(a, b) / p: the larger side's blocks cross
        ("reducescatter", 3 / 4, 2 / 4),
        ("alltoall", 3 / 4, 4 / 4),  # a b / p
    ],
)
def test_natural_cuts_carry_their_closed_form_over_the_cut_bandwidth(op, one, half):
    cuts = {"one": frozenset({"c0"}), "half": frozenset({"c0", "c1"}), "none": frozenset({"c2", "c3"})}
    pairs = {(f"c{i}", f"c{j}"): B for i in range(4) for j in range(i + 1, 4)}
    topo = graph_topology(4, 0, pairs, cuts=cuts)
    found = natural_cuts(topo, topo.chips, get_op(op))
    # {c0} is crossed by 3 links, {c0, c1} by 4
    assert [(c.label, c.family) for c in found] == [
        ("cut one", "cut"),
        ("cut half", "cut"),
        ("cut none", "cut"),
    ]
    assert found[0].seconds_per_byte == pytest.approx(one / (3 * B * 1e9), rel=1e-12, abs=0)
    assert found[1].seconds_per_byte == pytest.approx(half / (4 * B * 1e9), rel=1e-12, abs=0)
    # a cut with every member on one side binds nothing
    assert [c.label for c in natural_cuts(topo, ["c0", "c1"], get_op(op))] == ["cut one"]


def test_chips_hosting_several_ranks_bind_through_their_own_links():
    topo = topology("trn1-nl16")  # 16 chips of 2 ranks
    chip = topo.nodes[topo.chips[0]]["chip"]
    off_chip = sum(
        data["bw_gbps"]
        for (u, v), data in topo.links.items()
        if chip in (u, v) and data["medium"] != "onchip"
    )
    m, k, p = 16, 2, 32
    for op, moved in [
        ("allreduce", 2 * (m - 1) / m),
        ("allgather", (m - 1) / m),
        ("reducescatter", (m - 1) / m),
        ("alltoall", k * (p - k) / p),
    ]:
        [found] = per_chip(topo, topo.chips, get_op(op))
        assert found.family == "per-chip" and "its 2 ranks share its links" in found.label
        assert found.seconds_per_byte == pytest.approx(moved / (off_chip * 1e9), rel=1e-9, abs=0), op
    # members spread unevenly over chips, or on one chip: no such bound
    assert per_chip(topo, topo.chips[:3], get_op("allreduce")) == []
    assert per_chip(topo, topo.chips[:2], get_op("allreduce")) == []


def test_in_network_reduction_leaves_a_members_size_each_way():
    topo = topology("hgx-b200", raw=True)  # 900 GB/s per GPU to its reducing switches
    found = in_network(topo, topo.chips)
    assert found[0].seconds_per_byte == pytest.approx(1 / 900e9, rel=1e-9, abs=0)
    assert found[0].label.startswith("injection with in-network reduction")
    bound = lower_bound(topo, topo.chips, get_op("allreduce"), 0.0, 2)
    assert bound.seconds_per_byte == pytest.approx(1 / 900e9, rel=1e-9, abs=0)
    # not proven optimal: reduce-scatter then all-gather at their optima take 2 (p-1)/p, more than 1
    assert not bound.exact


def test_a_skewed_matrix_binds_the_member_receiving_most():
    topo = complete_topology(4, bw_gbps=B)
    traffic = np.zeros((4, 4))
    traffic[[0, 1, 3], 2] = 1.0  # every other member sends a whole size to c2
    found = skewed(topo, topo.chips, traffic)
    assert found[0].label == "injection (c2, skewed traffic)"
    assert found[0].seconds_per_byte == pytest.approx(3 / (3 * B * 1e9), rel=1e-12, abs=0)
    bound = lower_bound(topo, topo.chips, get_op("alltoall"), 0.0, 1, traffic=traffic)
    assert bound.seconds_per_byte == found[0].seconds_per_byte and not bound.exact


def test_ties_are_named_by_the_first_candidate_and_the_value_is_the_largest():
    cut, inj = Candidate(1.0, "cut half", "cut"), Candidate(1.0 + 1e-12, "injection (c0)", "injection")
    assert largest([cut, inj]) == Candidate(1.0 + 1e-12, "cut half", "cut")
    assert largest([inj, cut]).label == "injection (c0)"
    # beyond the tie margin the larger one names itself
    wider = Candidate(1.0 + 1e-6, "injection (c0)", "injection")
    assert largest([cut, wider]) == wider


def test_the_candidates_come_in_the_documented_order():
    cuts = {"half": frozenset({"c0", "c1"})}
    pairs = {(f"c{i}", f"c{j}"): B for i in range(4) for j in range(i + 1, 4)}
    topo = graph_topology(4, 0, pairs, cuts=cuts)
    found = candidates(topo, topo.chips, get_op("alltoall"))
    assert [c.family for c in found] == ["injection", "cut", "optimum"]
    assert [c.family for c in candidates(topo, topo.chips, get_op("alltoall"), with_optimum=False)] == [
        "injection",
        "cut",
    ]
    # all-to-all on K4 across the halves: injection (3/4 over 3 B) and the cut (4/4 over 4 B) tie,
    # and the optimum equals both; the first, injection, names the bound
    bound = lower_bound(topo, topo.chips, get_op("alltoall"), 0.0, 1)
    assert bound.seconds_per_byte == pytest.approx(1 / (4 * B * 1e9), rel=1e-9, abs=0)
    assert (bound.limited_by, bound.exact) == ("injection (c0)", True)
    assert bound.peak_seconds_per_byte == found[0].seconds_per_byte
    # without the optimum, the same value, not proven
    cheap = lower_bound(topo, topo.chips, get_op("alltoall"), 0.0, 1, with_optimum=False)
    assert (
        cheap.seconds_per_byte == pytest.approx(bound.seconds_per_byte, rel=1e-9, abs=0) and not cheap.exact
    )


def test_the_latency_part_is_alpha_plus_the_hops_at_the_lowest_link_latency():
    topo = complete_topology(4, bw_gbps=B)
    for k, data in enumerate(topo.links.values()):
        data["latency_ns"] = 20.0 if k == 3 else 50.0
    bound = lower_bound(topo, topo.chips, get_op("allgather"), 1000.0, 3)
    assert bound.latency_us == pytest.approx((1000.0 + 3 * 20.0) / 1e3, rel=1e-12, abs=0)
    # below the crossover the latency binds, above it the bandwidth
    crossover = bound.latency_us / (bound.seconds_per_byte * 1e6)
    assert bound.limit_at(crossover / 2) == "latency" and bound.time_us(crossover / 2) == bound.latency_us
    assert bound.limit_at(crossover * 2) == bound.limited_by
    assert bound.time_us(crossover * 2) == pytest.approx(2 * bound.latency_us, rel=1e-12, abs=0)


def test_a_failed_link_to_a_reducing_switch_keeps_in_network_bounds_on_the_rest():
    damaged = load_topology("hgx-b200", overrides=["fail=link:0,r0.nvlink.sw0"])
    found = candidates(damaged, damaged.chips, get_op("allreduce"))
    assert found[0].label.startswith("injection with in-network reduction")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("op", ["allgather", "reducescatter"])
def test_the_cheap_bound_is_the_best_natural_cut_by_brute_force(seed, op):
    """Without the optimum, the all-gather (and reduce-scatter) bound is the larger of injection and
    every named cut, each worked out here from the cut-set formula (ForestColl, Zhao et al. 2024):
    the blocks of the members inside a set X must leave it, ``|X n C| S/p`` over the bandwidth leaving
    X; a named cut is two such sets, its side and the rest. Random graphs, random named cuts, random
    groups; ``evaluate`` with ``exact_bounds=False`` reports the same at a large size."""
    from trnsim.model.engine import evaluate

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 8))
    names = [f"c{i}" for i in range(n)]
    links = {(names[i], names[int(rng.integers(0, i))]): float(rng.integers(1, 9) * 25) for i in range(1, n)}
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < 0.3 and (names[j], names[i]) not in links:
                links[(names[i], names[j])] = float(rng.integers(1, 9) * 25)
    cuts = {f"cut{k}": frozenset(rng.choice(names, int(rng.integers(1, n)), replace=False)) for k in range(3)}
    # links across the first cut ten times thinner, so that named cuts bind, not only the chips' links
    thin = cuts["cut0"]
    links = {(u, v): bw / 10 if (u in thin) != (v in thin) else bw for (u, v), bw in links.items()}
    topo = graph_topology(n, 0, links, cuts=cuts)
    group = [names[i] for i in sorted(rng.choice(n, int(rng.integers(2, n + 1)), replace=False))]
    p = len(group)

    def leaving(side):
        return sum(bw for (u, v), bw in links.items() if (u in side) != (v in side)) * 1e9

    chip = min(leaving({c}) for c in group)
    found = [(p - 1) / p / chip]
    for side in cuts.values():
        inside = sum(c in side for c in group)
        if 0 < inside < p:  # a cut splitting no members binds nothing
            found.append(max(inside, p - inside) / p / leaving(side))
    bound = lower_bound(topo, group, get_op(op), 0.0, 1, with_optimum=False)
    assert bound.seconds_per_byte == pytest.approx(max(found), rel=1e-12, abs=0)
    size = 1 << 34
    row = evaluate(topo, op, [size], group, algo="ring", exact_bounds=False).rows[0]
    assert row.bound_busbw_gbps == pytest.approx((p - 1) / p / max(found) / 1e9, rel=1e-9, abs=0)


def test_an_inexact_allreduce_bound_names_the_gap_to_what_reduce_scatter_then_all_gather_reach():
    # a triangle of 100 GB/s links and a fourth chip hanging off it by one 10 GB/s bridge
    links = {("c0", "c1"): 100.0, ("c1", "c2"): 100.0, ("c0", "c2"): 100.0, ("c2", "c3"): 10.0}
    topo = graph_topology(4, 0, links)
    bound = lower_bound(topo, topo.chips, get_op("allreduce"), 0.0, 2)
    # c3 receives the whole size over its one link, and the bridge carries it each way: S / 10 GB/s
    assert bound.seconds_per_byte == pytest.approx(1 / 10e9, rel=1e-9, abs=0)
    # reduce-scatter and all-gather each bring c3 three quarters of the size over the bridge
    assert not bound.exact
    assert bound.achievable_seconds_per_byte == pytest.approx(2 * 0.75 / 10e9, rel=1e-9, abs=0)


def test_an_exact_bound_names_no_gap():
    topo = complete_topology(4, bw_gbps=B)
    bound = lower_bound(topo, topo.chips, get_op("allreduce"), 0.0, 1)
    assert bound.exact and bound.achievable_seconds_per_byte is None
