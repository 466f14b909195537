"""The switched-fabric builder: racks of nodes (trays or servers), node-local links or switches,
switch planes per rack, and cross-rack cables between paired racks.

Each section of the file's ``switched`` block is wired by its own function, in the order the
devices and links are numbered (chips, node-local, planes, cross-rack), so that ranks, switch names
and link order are those every command and test has always seen.
"""

import itertools

from trnsim.spec.schema import Spec
from trnsim.topology.graph import Topology, add_link


def switched_fabric(spec: Spec) -> Topology:
    """Build a switched multi-rack fabric.

    Racks hold ``nodes_per_rack`` nodes (trays or servers) of ``len(slots)`` chips. Chips of a node
    meet over direct links or on-node switches (``node_local``); switch trays give each plane
    ``switches_per_plane`` switches per rack, each linked to every chip of the plane's slots in that
    rack; cross-rack links join each chip to the chip in the same position of the paired rack
    (racks 0-1, 2-3, ...).

    When a chip wires more backplane lanes than are active (for example 80 wired, 64 active), every
    backplane link is derated evenly: which lanes are the spares is not published, and an even split
    keeps the aggregate right.

    Returns
    -------
    Topology
        Chips ``r<rack>.n<node>.<slot>`` with rank ``(rack * nodes_per_rack + node) * slots + slot``;
        plane switches ``r<rack>.<plane>.sw<k>`` (with ``switch_tray``, their tray in the rack, see
        :mod:`trnsim.topology.trays`), node switches ``r<rack>.n<node>.sw<k>``.
    """
    nodes: dict[str, dict] = {}
    links: dict = {}
    chips = _chips(spec, nodes)
    if spec.switched.node_local is not None:
        _node_local(spec, nodes, links)
    if spec.switched.switch_fabric is not None:
        _planes(spec, nodes, links)
    if spec.switched.cross_rack is not None:
        _cross_rack(spec, links)
    return Topology(spec=spec, nodes=nodes, links=links, chips=chips, cuts=_cuts(spec, nodes))


def _chip_name(rack: int, node: int, slot: str) -> str:
    return f"r{rack}.n{node}.{slot}"


def _chips(spec: Spec, nodes: dict[str, dict]) -> list[str]:
    """Add every chip to ``nodes``, rack by rack, node by node, slot by slot (their rank order)."""
    layout = spec.switched
    chips: list[str] = []
    for rack in range(layout.racks):
        for node in range(layout.nodes_per_rack):
            for slot_index, slot in enumerate(layout.slots):
                name = _chip_name(rack, node, slot)
                nodes[name] = {
                    "kind": "chip",
                    "rank": len(chips),
                    "rack": rack,
                    "node": node,
                    "slot": slot,
                    "slot_index": slot_index,
                    "latency_ns": spec.latency.relay_ns,
                }
                chips.append(name)
    return chips


def _node_local(spec: Spec, nodes: dict[str, dict], links: dict) -> None:
    """The chips of each node: joined pairwise (``direct``) or through the node's own switches."""
    layout, latency = spec.switched, spec.latency
    local = layout.node_local
    model = spec.switch_models.get(local.switch_model) if local.switch_model else None
    link = {
        "cls": local.cls,
        "lanes": local.lanes_per_link,
        "active_lanes": local.lanes_per_link,
        "lane_gbps": spec.chip.lane_gbps,
        "latency_ns": latency.link_ns,
        "medium": local.medium,
    }
    for rack in range(layout.racks):
        for node in range(layout.nodes_per_rack):
            members = [_chip_name(rack, node, slot) for slot in layout.slots]
            if local.kind == "direct":
                for u, v in itertools.combinations(members, 2):
                    add_link(links, u, v, **link)
                continue
            for k in range(local.switches):
                switch = f"r{rack}.n{node}.sw{k}"
                nodes[switch] = {
                    "kind": "switch",
                    "role": "node",
                    "model": local.switch_model,
                    "rack": rack,
                    "node": node,
                    "plane": None,
                    "ports": model.ports,
                    "lanes": model.lanes,
                    "latency_ns": latency.node_switch_ns,
                }
                for member in members:
                    add_link(links, member, switch, **link)


def _planes(spec: Spec, nodes: dict[str, dict], links: dict) -> None:
    """Each rack's switch planes: every switch of a plane linked to every chip of the plane's slots,
    the links derated evenly where a chip wires more lanes than it activates."""
    layout, latency = spec.switched, spec.latency
    fabric = layout.switch_fabric
    model = spec.switch_models[fabric.switch_model]
    for slot in layout.slots:
        planes_of_slot = sum(slot in plane.slots for plane in fabric.planes)
        wired = planes_of_slot * fabric.switches_per_plane * fabric.lanes_per_link
        derate = min(1.0, fabric.active_lanes / wired) if wired else 1.0
        for rack in range(layout.racks):
            for plane_index, plane in enumerate(fabric.planes):
                if slot not in plane.slots:
                    continue
                for k in range(fabric.switches_per_plane):
                    switch = f"r{rack}.{plane.name}.sw{k}"
                    if switch not in nodes:
                        nodes[switch] = {
                            "kind": "switch",
                            "role": "plane",
                            "model": fabric.switch_model,
                            "rack": rack,
                            "node": None,
                            "plane": plane.name,
                            "switch_tray": fabric.tray_of(plane_index, k),
                            "ports": model.ports,
                            "lanes": model.lanes,
                            "latency_ns": latency.switch_ns,
                        }
                    for node in range(layout.nodes_per_rack):
                        add_link(
                            links,
                            _chip_name(rack, node, slot),
                            switch,
                            cls=fabric.cls,
                            lanes=fabric.lanes_per_link,
                            active_lanes=fabric.lanes_per_link * derate,
                            lane_gbps=spec.chip.lane_gbps,
                            latency_ns=latency.link_ns,
                            medium=fabric.medium,
                        )


def _cross_rack(spec: Spec, links: dict) -> None:
    """Each chip to the chip in the same position of the paired rack (racks 0-1, 2-3, ...)."""
    layout = spec.switched
    cross = layout.cross_rack
    for rack in range(0, layout.racks, 2):
        for node in range(layout.nodes_per_rack):
            for slot in layout.slots:
                add_link(
                    links,
                    _chip_name(rack, node, slot),
                    _chip_name(rack + 1, node, slot),
                    cls=cross.cls,
                    lanes=cross.lanes,
                    active_lanes=cross.lanes,
                    lane_gbps=spec.chip.lane_gbps,
                    latency_ns=spec.latency.link_ns,
                    medium=cross.medium,
                )


def _cuts(spec: Spec, nodes: dict[str, dict]) -> dict[str, frozenset[str]]:
    """The natural cuts of the fabric: rack halves, one node against the rest, one plane against
    the rest (what crosses a plane's cut must use the node-local links)."""
    layout = spec.switched
    local, fabric = layout.node_local, layout.switch_fabric
    cuts = {}
    if layout.racks >= 2:
        cuts["rack-halves"] = frozenset(n for n, data in nodes.items() if data["rack"] < layout.racks // 2)
    if layout.nodes_per_rack * layout.racks > 1 and (local is not None or fabric is not None):
        # one node (tray or server) with its on-node switches against the rest (one pass: a loop
        # over nodes x devices would be quadratic on large fabrics)
        members: dict[tuple[int, int], list[str]] = {}
        for n, data in nodes.items():
            if data["node"] is not None:
                members.setdefault((data["rack"], data["node"]), []).append(n)
        for (rack, node), names in members.items():
            cuts[f"node-r{rack}.n{node}"] = frozenset(names)
    if fabric is not None and len(fabric.planes) > 1:
        # a plane's chips and switches against the rest: what crosses must use the node-local links
        for plane in fabric.planes:
            cuts[f"plane-{plane.name}"] = frozenset(
                n
                for n, data in nodes.items()
                if data.get("plane") == plane.name or (data["kind"] == "chip" and data["slot"] in plane.slots)
            )
    return cuts
