"""Hop metrics: the published hop examples (docs/sources.md#hop-convention), per-rack maxima, and agreement with networkx."""

import itertools
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from conftest import CATALOG, topology

from trnsim.routing.hops import chip_hop_stats, hop_stats, link_distances, shortest_path
from trnsim.topology.load import load_topology
from trnsim.topology.metrics import cut_bandwidth_gbps, natural_cuts


def _hops(sku, a, b):
    topo = topology(sku)
    path, _ = shortest_path(topo, topo.chips[a], topo.chips[b])
    return len(path) - 2


@pytest.mark.parametrize(
    ("sku", "src", "dst", "hops"),
    [
        ("trn3-nl32x2-gen1", 0, 30, 1),  # seed path A: A node 1 -> A node 16
        ("trn3-nl32x2-gen1", 0, 3, 2),  # path B: A node 1 -> B node 2
        ("trn3-nl32x2-gen1", 0, 35, 3),  # path C: A rack A node 1 -> B rack B node 2
        ("trn3-nl72x2-gen1", 0, 4, 1),  # path A
        ("trn3-nl72x2-gen1", 0, 6, 3),  # path B: A node 1 -> C node 2
        ("trn3-nl72x2-gen1", 0, 78, 4),  # path C: A rack A node 1 -> C rack B node 2
    ],
)
def test_seed_hop_examples(sku, src, dst, hops):
    assert _hops(sku, src, dst) == hops


@pytest.mark.parametrize(
    ("sku", "max_in_rack"),
    [
        ("trn3-nl32x2-gen1", 2),
        ("trn3-nl32x2-gen2", 1),
        ("trn3-nl32x2-gen3", 1),
        ("trn3-nl72x2-gen1", 3),
        ("trn3-nl72x2-gen3", 1),
    ],
)
def test_worst_case_hops_inside_a_rack(sku, max_in_rack):
    topo = topology(sku)
    rack0 = [c for c in topo.chips if topo.graph.nodes[c]["rack"] == 0]
    assert hop_stats(topo, rack0).diameter_hops == max_in_rack


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_distances_equal_networkx(path):
    topo = topology(path.stem)
    ours = link_distances(topo)
    for i, chip in enumerate(topo.chips):
        reference = nx.single_source_shortest_path_length(topo.graph, chip)
        assert all(ours[i, j] == reference[other] for j, other in enumerate(topo.chips))


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_hop_histogram_counts_every_pair_once(path):
    topo = topology(path.stem)
    for stats, n in ((hop_stats(topo), topo.n_ranks), (chip_hop_stats(topo), topo.n_chips)):
        assert stats.pairs == n * (n - 1) // 2 == sum(stats.histogram_links.values())
        assert stats.diameter_hops == stats.diameter_links - 1 == max(stats.histogram_hops)


def test_hops_between_ranks_and_between_chips_are_told_apart():
    """trn1: a 4x4 torus of chips with 2 ranks each. Between chips, the distances of a 4x4 torus
    (counted here by brute force over coordinates); between ranks of two chips, two on-chip links
    more, and ranks of one chip meet through their chip (2 links)."""
    topo = topology("trn1-nl16")
    axes = topo.spec.torus.axes
    per_chip = topo.spec.chip.ranks
    coords = list(itertools.product(*(range(axis.size) for axis in axes)))
    ring = [lambda a, b, n=axis.size: min(abs(a - b), n - abs(a - b)) for axis in axes]
    expected = Counter(
        sum(f(x, y) for f, x, y in zip(ring, a, b, strict=True)) for a, b in itertools.combinations(coords, 2)
    )
    assert topo.n_chips == len(coords) and topo.n_ranks == per_chip * len(coords)
    assert chip_hop_stats(topo).histogram_links == dict(expected)
    ranks = Counter({links + 2: count * per_chip**2 for links, count in expected.items()})
    ranks[2] += len(coords) * per_chip * (per_chip - 1) // 2
    assert hop_stats(topo).histogram_links == dict(ranks)


def test_path_counts_match_networkx():
    topo = topology("trn3-nl72x2-gen1")
    for a, b in [(0, 6), (0, 78), (5, 140)]:
        path, count = shortest_path(topo, topo.chips[a], topo.chips[b])
        assert count == len(list(nx.all_shortest_paths(topo.graph, topo.chips[a], topo.chips[b])))
        assert nx.is_path(topo.graph, path)


def test_cut_bandwidths():
    topo = topology("trn3-nl72x2-gen1", raw=True)
    cuts = {c["cut"]: c["bw_gbps"] for c in natural_cuts(topo)}
    # racks meet over one 16-lane cable per chip; a plane's 36 chips leave it over their 64 PCB lanes
    assert cuts == {"rack-halves": 72 * 128.0, **{f"plane-{p}": 36 * 512.0 for p in "ABCD"}}
    node_cuts = {c["bw_gbps"] for c in natural_cuts(topo, per_node=True) if c["cut"].startswith("node-")}
    assert node_cuts == {4 * (512.0 + 128.0)}  # a tray: four chips' backplane and cross-rack links
    cuts = {c["cut"]: c["bw_gbps"] for c in natural_cuts(topology("trn2-nl64", raw=True))}
    # halving a 4-ring cuts two links per ring: 16 z-rings x 2 x 64 GB/s
    assert cuts == {"z-halves": 2048.0, "x-halves": 4096.0, "y-halves": 4096.0}
    topo = topology("trn2-nl16")
    assert cut_bandwidth_gbps(topo, frozenset(topo.chips)) == 0.0


def test_link_distances_are_symmetric():
    d = link_distances(topology("trn3-nl32x2-gen1"))
    assert np.array_equal(d, d.T)


def test_reducing_switches_are_the_reducing_models_every_member_reaches_directly():
    from trnsim.topology.metrics import reducing_switches

    topo = topology("hgx-b200")  # 8 GPUs, each wired to both reducing NVSwitches
    switches = sorted(name for name, data in topo.nodes.items() if data["kind"] == "switch")
    assert len(switches) == 2
    assert sorted(reducing_switches(topo, topo.chips)) == switches
    # the same fabric with switches that do not reduce: none
    plain = load_topology("hgx-b200", overrides=["switch_models.nvlink5-switch.reduction=false"])
    assert reducing_switches(plain, plain.chips) == []
    # a fabric whose switches do not reduce (UALink 1.0): none
    peer = topology("ualink-72")
    assert reducing_switches(peer, peer.chips) == []


def test_a_member_cut_off_from_a_switch_takes_that_switch_out_for_its_groups_only():
    from trnsim.topology.metrics import reducing_switches

    damaged = load_topology("hgx-b200", overrides=[f"fail=link:{0},r0.nvlink.sw0"])
    cut_off = damaged.chips[0]
    assert not damaged.link(cut_off, "r0.nvlink.sw0")
    assert reducing_switches(damaged, damaged.chips) == ["r0.nvlink.sw1"]
    others = [chip for chip in damaged.chips if chip != cut_off]
    assert sorted(reducing_switches(damaged, others)) == ["r0.nvlink.sw0", "r0.nvlink.sw1"]
