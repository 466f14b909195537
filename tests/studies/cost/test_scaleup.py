"""The scale-up parts counted from the graph against closed forms of each file's wiring."""

import math

import pytest

from trnsim.studies.cost.scaleup import length_class, scale_up_items
from trnsim.topology import load_topology

SWITCHED = [
    "trn3-nl32x2-gen1",
    "trn3-nl32x2-gen2",
    "trn3-nl32x2-gen3",
    "trn3-nl72x2-gen1",
    "trn3-nl72x2-gen2",
    "trn3-nl72x2-gen3",
    "gb200-nvl72",
]


def _by_kind(items, kind):
    return [item for item in items if item.kind == kind]


def _total(items, kind, attribute="count"):
    return sum(getattr(item, attribute) for item in _by_kind(items, kind))


def test_nl72x2_gen1_has_368_switch_chips_per_domain():
    # published: 2 racks x (4 planes x 10 Scorpio X + 18 trays x 8 Scorpio P) = 2 x (40 + 144)
    items = scale_up_items(load_topology("trn3-nl72x2-gen1"))
    assert _total(items, "switch chip") == 2 * (40 + 144) == 368
    by_model = {item.parts[0]: item.count for item in _by_kind(items, "switch chip")}
    assert by_model == {"scorpio-x-160": 80, "scorpio-p-32": 288}


@pytest.mark.parametrize("sku", SWITCHED)
def test_switched_counts_follow_from_the_file(sku):
    topology = load_topology(sku)
    spec = topology.spec
    layout = spec.switched
    items = scale_up_items(topology)
    racks, nodes, slots = layout.racks, layout.nodes_per_rack, len(layout.slots)
    (chips,) = _by_kind(items, "chip")
    assert chips.count == racks * nodes * slots
    fabric, local, cross = layout.switch_fabric, layout.node_local, layout.cross_rack
    on_node = local.switches if local is not None and local.kind == "switches" else 0
    plane = len(fabric.planes) * fabric.switches_per_plane
    assert _total(items, "switch chip") == racks * (plane + nodes * on_node)
    assert _total(items, "switch tray") == (racks * plane // fabric.tray_size if fabric.tray_size else 0)
    # links: a plane switch to every chip of its slots in each node; the node's links; the cross-rack pairs
    links = racks * nodes * sum(len(p.slots) for p in fabric.planes) * fabric.switches_per_plane
    lanes = links * fabric.lanes_per_link
    if local is not None:
        node_links = math.comb(slots, 2) if local.kind == "direct" else slots * local.switches
        links += racks * nodes * node_links
        lanes += racks * nodes * node_links * local.lanes_per_link
    if cross is not None:
        links += racks // 2 * nodes * slots
        lanes += racks // 2 * nodes * slots * cross.lanes
    assert _total(items, "link") == links
    assert _total(items, "link", "lanes") == lanes


def test_nl72x2_links_by_medium_and_length():
    items = scale_up_items(load_topology("trn3-nl72x2-gen1"))
    links = {(item.medium, item.length): (item.count, item.lanes) for item in _by_kind(items, "link")}
    assert links == {
        ("pcb", "in-node"): (
            2 * 18 * 4 * 8,
            2 * 18 * 4 * 8 * 8,
        ),  # chip to each of its tray's 8 Scorpio P, x8
        ("backplane", "in-rack"): (2 * 18 * 4 * 10, 2 * 18 * 4 * 10 * 8),  # to its plane's 10 switches, x8
        ("aec", "cross-rack"): (18 * 4, 18 * 4 * 16),  # to its twin in the other rack, x16
    }


def test_gen2_halves_the_tray_switch_count_and_keeps_the_rest():
    gen1 = scale_up_items(load_topology("trn3-nl72x2-gen1"))
    gen2 = scale_up_items(load_topology("trn3-nl72x2-gen2"))
    plane1 = next(i for i in gen1 if i.parts == ("scorpio-x-160",))
    plane2 = next(i for i in gen2 if i.parts == ("scorpio-x-320",))
    assert plane2.count * 2 == plane1.count
    for kind in ("chip", "link", "switch tray"):
        assert _total(gen1, kind) == _total(gen2, kind), kind
    assert _total(gen1, "link", "lanes") == _total(gen2, "link", "lanes")


def test_nl64_torus_links_by_axis():
    # 4x4x4, every axis a wrapped ring: 64 links per axis; z over AECs between servers (two servers
    # a rack: half the z links leave the rack), x on the backplane, y half PCB (the tray) half backplane
    items = scale_up_items(load_topology("trn2-nl64"))
    links = {
        (item.medium, item.length, item.detail.split(":")[0]): item.count for item in _by_kind(items, "link")
    }
    assert links == {
        ("aec", "cross-rack", "class z"): 32,
        ("aec", "in-rack", "class z"): 32,
        ("backplane", "in-node", "class x"): 64,
        ("backplane", "in-node", "class y"): 32,
        ("pcb", "in-node", "class y"): 32,
    }
    assert not _by_kind(items, "switch chip") and not _by_kind(items, "switch tray")


def test_retimers_are_counted_where_the_file_declares_them():
    plain = load_topology("trn3-nl72x2-gen1")
    assert not _by_kind(scale_up_items(plain), "retimer")
    edited = load_topology(
        "trn3-nl72x2-gen1",
        overrides=["switched.switch_fabric.retimers_per_link=2", "switched.cross_rack.retimers_per_link=1"],
    )
    retimers = {item.medium: item.count for item in _by_kind(scale_up_items(edited), "retimer")}
    assert retimers == {"backplane": 2 * (2 * 18 * 4 * 10), "aec": 18 * 4}
    torus = load_topology("trn2-nl64", overrides=["torus.axes.z.retimers_per_link=2"])
    assert _total(scale_up_items(torus), "retimer") == 2 * 64


def test_optical_links_get_two_transceivers_each():
    topology = load_topology("trn3-nl72x2-gen1", overrides=["switched.cross_rack.medium=optics"])
    items = scale_up_items(topology)
    (transceivers,) = _by_kind(items, "transceiver")
    assert transceivers.count == 2 * 72
    assert transceivers.gbit == 2 * 72 * 16 * 8 * 8  # x16 at 8 GB/s a lane, in Gbit/s


def test_ranks_per_chip_do_not_change_the_count():
    one = scale_up_items(load_topology("trn3-nl72x2-gen1"))
    four = scale_up_items(load_topology("trn3-nl72x2-gen1", overrides=["chip.ranks=4"]))
    assert [(i.kind, i.parts, i.count, i.lanes) for i in one] == [
        (i.kind, i.parts, i.count, i.lanes) for i in four
    ]


def test_a_failed_part_is_still_bought():
    healthy = scale_up_items(load_topology("trn3-nl72x2-gen1"))
    failed = scale_up_items(load_topology("trn3-nl72x2-gen1", overrides=["fail=chip:0"]))
    assert healthy == failed


def test_length_class_of_named_devices():
    topology = load_topology("trn3-nl72x2-gen1")
    assert length_class(topology, "r0.n0.A", "r0.n0.sw0") == "in-node"
    assert length_class(topology, "r0.n0.A", "r0.A.sw0") == "in-rack"
    assert length_class(topology, "r0.n0.A", "r1.n0.A") == "cross-rack"
