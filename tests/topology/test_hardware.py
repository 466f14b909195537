"""Impossible hardware is refused: switch ports and lanes, chip lanes."""

import pytest
from conftest import CATALOG

from trnsim.errors import HardwareError
from trnsim.topology import load_topology


def test_more_trays_than_switch_ports_is_refused():
    # a 160-lane Scorpio X has 20 ports; 21 trays need 21
    with pytest.raises(
        HardwareError, match=r"switch_models\.scorpio-x-160\.ports: .* needs 21 ports .* has 20"
    ):
        load_topology("nl72x2", overrides=["switched.nodes_per_rack=21"])


def test_more_lanes_than_a_switch_has_is_refused():
    with pytest.raises(HardwareError, match=r"switch_models\.pex90144\.lanes: .* needs 152 lanes .* has 144"):
        load_topology("trn3-nl72x2-pex90144", overrides=["switched.nodes_per_rack=19"])


def test_more_lanes_than_a_chip_has_is_refused():
    with pytest.raises(HardwareError, match=r"chip\.lanes: .* wired with 176 lanes .* has 160"):
        load_topology("nl72x2", overrides=["switched.cross_rack.lanes=32"])
    with pytest.raises(HardwareError, match="chip.lanes"):
        load_topology("nl64", overrides=["torus.axes.z.lanes=32"])


def test_more_backplane_links_than_backplane_lanes_is_refused():
    with pytest.raises(HardwareError, match="backplane_lanes"):
        load_topology("nl72x2", overrides=["switched.switch_fabric.switches_per_plane=11"])


def test_catalog_fits_its_hardware():
    for sku in ("nl16", "nl64", "nl32x2", "nl72x2", "trn3-nl72x2-pex90144", "trn3-nl72x2-gen3"):
        load_topology(sku)


def test_a_fabric_with_unreachable_chips_is_refused():
    with pytest.raises(HardwareError, match="unreachable: r0.n0.A has no path to r0.n1.A"):
        load_topology("nl72x2", overrides=["switched.switch_fabric.planes=[]"])


NO_RELAY_CASES = [
    ("trn2-nl16", ()),  # a 4x4 torus: only neighbours meet
    ("tpu7x-4x4x4", ("torus.axes.0.size=3", "torus.axes.1.size=1", "torus.axes.2.size=1")),  # a 3-ring
    ("trn3-nl72x2-gen3", ()),  # one switch per rack; the racks meet only over chips
    ("trn3-nl72x2-gen1", ()),
    ("gb200-nvl72", ()),  # every GPU on every NVSwitch
    ("hgx-h100", ()),
    ("trn1-nl16", ()),  # two ranks per chip: the chip forwards for its ranks, as a switch does
]


@pytest.mark.parametrize(("sku", "edits"), NO_RELAY_CASES)
def test_reachability_without_relay_agrees_with_a_search_from_every_chip(sku, edits):
    from trnsim.errors import ConfigError, UsageError
    from trnsim.routing.hops import link_distances
    from trnsim.topology.hardware import check_reachable_without_relay

    topo = load_topology(sku, overrides=[*edits, "routing.relay=false"])
    try:
        link_distances(topo)  # the breadth-first search every routing command runs
        searched = None
    except UsageError as exc:
        searched = str(exc)
    try:
        check_reachable_without_relay(topo)
        checked = None
    except ConfigError as exc:
        checked = str(exc)
    assert checked == searched


def test_validate_refuses_what_every_other_command_refuses(cli, tmp_path):
    """topo validate said ok to a torus routed without relay that topo show refused as disconnected."""
    import yaml

    document = yaml.safe_load((CATALOG[0].parent / "trn2-nl16.yaml").read_text())
    document["routing"]["relay"] = False
    path = tmp_path / "no-relay.yaml"
    path.write_text(yaml.safe_dump(document))
    shown = cli("topo", "show", "--topology", str(path))
    validated = cli("topo", "validate", str(path))
    assert shown.code == validated.code == 2
    assert validated.err == shown.err and "cannot reach" in shown.err
