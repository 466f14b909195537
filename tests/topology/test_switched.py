"""The switched-fabric builder (trnsim.topology.switched): counts, bandwidth, rank order and planes."""

import pytest
from conftest import topology

from trnsim.topology.metrics import chip_bandwidth_gbps


@pytest.mark.parametrize(
    ("sku", "chips", "switches"),
    [
        ("trn3-nl32x2-gen1", 64, 32),
        ("trn3-nl32x2-gen2", 64, 16),
        ("trn3-nl32x2-gen3", 64, 16),
        ("trn3-nl72x2-gen1", 144, 368),
        ("trn3-nl72x2-gen2", 144, 328),
        ("trn3-nl72x2-gen3", 144, 308),
        ("trn3-nl72x2-pex90144", 144, 368),
        ("trn3-ultraserver-gen1", 64, 6),
        ("trn3-ultraserver-gen2", 144, 38),
    ],
)
def test_switched_fabric_counts(sku, chips, switches):
    topo = topology(sku)
    assert topo.n_chips == chips and len(topo.switches) == switches


@pytest.mark.parametrize(
    "sku", ["trn3-nl32x2-gen1", "trn3-nl72x2-gen1", "trn3-nl72x2-gen2", "trn3-nl72x2-gen3"]
)
def test_trainium3_chips_have_1152_gbps_from_144_active_lanes(sku):
    topo = topology(sku)
    assert set(chip_bandwidth_gbps(topo, raw=True).values()) == {1152.0}
    for chip in topo.chips:
        active = sum(d["active_lanes"] for _, _, d in topo.graph.edges(chip, data=True))
        assert active == pytest.approx(144)


def test_switched_rank_order_is_rack_node_slot():
    topo = topology("trn3-nl72x2-gen1")
    for rank, name in enumerate(topo.chips):
        data = topo.graph.nodes[name]
        assert rank == (data["rack"] * 18 + data["node"]) * 4 + data["slot_index"]


def test_gen1_planes_reach_one_slot_per_tray():
    topo = topology("trn3-nl72x2-gen1")
    graph = topo.graph
    for switch in topo.switches:
        data = graph.nodes[switch]
        chips = list(graph.adj[switch])
        if data["role"] == "plane":
            assert len(chips) == 18 and {graph.nodes[c]["slot"] for c in chips} == {data["plane"]}
        else:
            assert len(chips) == 4 and len({graph.nodes[c]["node"] for c in chips}) == 1
