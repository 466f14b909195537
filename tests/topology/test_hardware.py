"""Impossible hardware is refused: switch ports and lanes, chip lanes."""

import pytest

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
