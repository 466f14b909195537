"""The scale-up domain's parts, counted from the built graph: chips, switch chips by model and role,
switch trays, links by medium and length class, retimers where the file declares them, and the
transceivers of optical links.

A link's length class follows from where its two ends sit: ``in-node`` (one tray or server: a PCB
trace, an on-node switch), ``in-rack`` (two nodes of one rack, or a chip and its rack's plane
switch) or ``cross-rack``. A switched file places every device in its rack and node; a torus places
a chip in its server (``server_axis``) or tray (``hypercube_plane``), and in rack ``index //
scale_out.chips_per_rack`` (the whole domain one rack when the file does not say).
"""

from collections import Counter, defaultdict

from trnsim.studies.cost.bill import Item
from trnsim.topology.graph import RANK_CLASS, Topology

GBIT_PER_GBPS = 8  # a lane's GB/s (10^9 bytes) in Gbit/s


def scale_up_items(topology: Topology) -> list[Item]:
    """The chips and the scale-up network of the built system (its healthy form: a failed part is
    still bought)."""
    topology = topology.planner
    items = [
        Item(
            "chip",
            (topology.spec.chip.name,),
            topology.n_chips,
            network=False,
            fabric=None,
            detail=f"{topology.spec.chip.name} accelerators",
        )
    ]
    items += _switch_items(topology)
    items += _link_items(topology)
    return items


def _switch_items(topology: Topology) -> list[Item]:
    """Switch chips by model and role, and the switch trays that hold the plane switches."""
    by_model: Counter = Counter()
    trays = set()
    tray_size: Counter = Counter()
    for name in topology.switches:
        data = topology.nodes[name]
        if data.get("role") == "chip":  # a chip that hosts several ranks, not a switch
            continue
        by_model[(data.get("model"), data.get("role"))] += 1
        if data.get("switch_tray") is not None:
            tray = (data.get("rack"), data["switch_tray"])
            trays.add(tray)
            tray_size[tray] += 1
    roles = {"plane": "plane switches (switch trays)", "node": "on-node switches"}
    items = [
        Item("switch chip", (model,), count, detail=f"{count:,} {roles.get(role, role or 'switches')}")
        for (model, role), count in sorted(by_model.items(), key=lambda kv: (str(kv[0][1]), str(kv[0][0])))
    ]
    if trays:
        sizes = sorted(set(tray_size.values()))
        each = " or ".join(str(size) for size in sizes)
        items.append(Item("switch tray", ("switch-tray",), len(trays), detail=f"{each} switch chips each"))
    return items


def _link_items(topology: Topology) -> list[Item]:
    """Links grouped by medium, length class and link class; their retimers; optical transceivers."""
    spec = topology.spec
    lane_gbps = spec.chip.lane_gbps
    index = {name: i for i, name in enumerate(topology.physical_chips)}
    groups: dict[tuple, list[float]] = defaultdict(lambda: [0, 0, 0])  # links, lanes, retimers
    for (u, v), data in topology.links.items():
        if data["cls"] == RANK_CLASS:
            continue
        length = length_class(topology, u, v, index)
        key = (data["medium"], length, data["cls"])
        group = groups[key]
        group[0] += data["parallel"]
        group[1] += data["lanes"]
        group[2] += data["parallel"] * retimers_per_link(topology, u, v, data["cls"])
    items = []
    for (medium, length, cls), (links, lanes, retimers) in sorted(groups.items()):
        items.append(
            Item(
                "link",
                (f"{medium}-{length}", medium),
                links,
                lanes=lanes,
                gbit=lanes * lane_gbps * GBIT_PER_GBPS,
                medium=medium,
                length=length,
                detail=f"class {cls}: {links:,} links, {lanes:,} lanes",
            )
        )
        if retimers:
            items.append(
                Item(
                    "retimer",
                    ("retimer",),
                    retimers,
                    medium=medium,
                    length=length,
                    detail=f"on class {cls} links",
                )
            )
        if medium == "optics":  # a transceiver at each end, at the link's raw rate
            items.append(
                Item(
                    "transceiver",
                    ("transceiver",),
                    2 * links,
                    gbit=2 * lanes * lane_gbps * GBIT_PER_GBPS,
                    medium=medium,
                    length=length,
                    detail=f"2 per class {cls} optical link",
                )
            )
    return items


def _place(topology: Topology, name: str, index: dict[str, int]) -> tuple:
    """(rack, node) of a device; None where the file does not place it."""
    data = topology.nodes[name]
    if topology.spec.kind == "switched":
        return data.get("rack"), data.get("node")
    out = topology.spec.scale_out
    per_rack = out.chips_per_rack if out is not None and out.chips_per_rack else None
    rack = index[name] // per_rack if per_rack and name in index else 0
    node = data.get("server", data.get("tray"))
    return rack, node


def length_class(topology: Topology, u: str, v: str, index: dict[str, int] | None = None) -> str:
    """``in-node``, ``in-rack`` or ``cross-rack``: where a link's two ends sit (module docstring)."""
    if index is None:
        index = {name: i for i, name in enumerate(topology.physical_chips)}
    (rack_u, node_u), (rack_v, node_v) = _place(topology, u, index), _place(topology, v, index)
    if rack_u != rack_v:
        return "cross-rack"
    if node_u is not None and node_u == node_v:
        return "in-node"
    return "in-rack"


def retimers_per_link(topology: Topology, u: str, v: str, cls: str) -> int:
    """The retimers the file declares on a link's section (0 where it declares none).

    The section follows from the link's ends: a plane switch's link is the switch fabric's, an
    on-node switch's or two chips of one node are the node's, chips of two racks the cross-rack
    links'; a torus link is its axis's (the link class names the axis)."""
    spec = topology.spec
    if spec.kind == "torus":
        axis = next((axis for axis in spec.torus.axes if axis.name == cls), None)
        return axis.retimers_per_link if axis is not None else 0
    layout = spec.switched
    roles = {topology.nodes[u].get("role"), topology.nodes[v].get("role")}
    if "plane" in roles:
        section = layout.switch_fabric
    elif "node" in roles:
        section = layout.node_local
    elif topology.nodes[u].get("rack") != topology.nodes[v].get("rack"):
        section = layout.cross_rack
    else:
        section = layout.node_local
    return section.retimers_per_link if section is not None else 0
