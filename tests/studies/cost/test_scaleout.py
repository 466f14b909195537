"""The system's share of its scale-out fabric: NICs, ToRs, and the Clos math above them, checked
against the fabric plan of a cluster whose counts divide exactly."""

import pytest

from trnsim.studies.cost.scaleout import DEFAULT_CLUSTER_CHIPS, default_domains, scale_out_items
from trnsim.topology import load_topology
from trnsim.topology.scaleout import fabric_choice, plan_fabric


def _kind(items, kind):
    return [item for item in items if item.kind == kind]


def test_nl72x2_nics_tors_and_copper():
    items, _ = scale_out_items(load_topology("trn3-nl72x2-gen1"))
    (nic,) = _kind(items, "NIC")
    assert nic.gbit == 144 * 200 and nic.count is None  # the NIC part's capacity says how many
    (tor,) = _kind(items, "ToR switch")
    assert tor.count == 2 * 2  # two racks, dual ToR
    assert tor.gbit == 4 * 25_600
    (copper,) = _kind(items, "link")
    assert copper.count == 144 * 200 / 100  # every chip's 100G ports
    assert copper.medium == "copper" and copper.length == "in-rack"


@pytest.mark.parametrize("sku", ["trn3-nl72x2-gen1", "trn3-nl32x2-gen1", "trn2-nl64", "gb200-nvl72"])
def test_the_share_times_the_domains_is_the_plan_of_an_exact_cluster(sku):
    """With domains chosen so that every layer's uplinks divide by its switches' ports, the plan's
    ceil-rounded counts are exact: the share times the domains must equal them."""
    topology = load_topology(sku)
    chips = topology.n_chips
    racks = topology.spec.switched.racks if topology.spec.kind == "switched" else None
    choice = fabric_choice(topology.spec, chips, racks)
    domains = 1024  # a power of two: every uplink count divides by k and k/2 (radices 128, 256, 288/2)
    plan = plan_fabric(choice, chips, domains)
    items, notes = scale_out_items(topology, domains)
    tors = _kind(items, "ToR switch")[0].count
    assert tors * domains == pytest.approx(plan.layers[0].switches * plan.planes)
    above = [item for item in items if item.kind.endswith(" switch") and item.kind != "ToR switch"]
    assert [item.kind for item in above] == [f"{layer.name} switch" for layer in plan.layers[1:]]
    for item, layer in zip(above, plan.layers[1:], strict=True):
        assert item.count * domains == pytest.approx(layer.switches * plan.planes), layer.name
    (transceivers,) = _kind(items, "transceiver")
    assert transceivers.count * domains == pytest.approx(2 * sum(plan.fabric_links))
    assert f"{domains:,} domains" in notes[0]


def test_the_default_cluster_is_an_assumption_of_whole_domains():
    assert default_domains(144) == DEFAULT_CLUSTER_CHIPS // 144
    assert default_domains(10**9) == 1
    items, notes = scale_out_items(load_topology("trn3-nl72x2-gen1"))
    assert "assumption" in notes[0]


def test_a_one_rack_cluster_has_no_fabric_above_its_tors():
    items, _ = scale_out_items(load_topology("gb200-nvl72"), domains=1)
    assert [item.kind for item in items] == ["NIC", "ToR switch", "link"]


def test_a_file_without_scale_out_counts_none(tmp_path):
    items, notes = scale_out_items(load_topology("trn3-nl72x2-gen1", overrides=["scale_out=null"]))
    assert items == [] and "no scale_out section" in notes[0]


def test_more_nic_bandwidth_means_more_nics_and_tor_ports():
    base, _ = scale_out_items(load_topology("trn3-nl72x2-gen1"))
    more, _ = scale_out_items(
        load_topology(
            "trn3-nl72x2-gen1", overrides=["scale_out.efa_gbit_per_chip=400", "scale_out.tor_tbit=51.2"]
        )
    )
    assert _kind(more, "NIC")[0].gbit == 2 * _kind(base, "NIC")[0].gbit
    assert _kind(more, "link")[0].count == 2 * _kind(base, "link")[0].count


@pytest.mark.parametrize("domains", [1, 3, None])
def test_copper_counts_the_chips_ports_not_the_tors(domains):
    """One cable per 100G port of each chip, however many domains share a rack's ToRs (nl16: two
    servers per rack, so one domain alone leaves half the ToRs' down ports empty)."""
    topology = load_topology("nl16")
    items, _ = scale_out_items(topology, domains)
    (copper,) = _kind(items, "link")
    per_chip = topology.spec.scale_out.efa_gbit_per_chip
    assert copper.count == 16 * per_chip / 100
