"""A switched fabric placed on a plane: racks side by side (two face each other), trays stacked in
each with their chips, each tray's own switches as one box, a column per switch plane beside the
trays, and cross-rack cables between the racks. Links are drawn per chip and switch group, never
per switch, so 144 chips on 368 switches stay readable; a chip's plane links leave its tray at that
plane's height."""

from dataclasses import dataclass, field

from trnsim.outputs.draw.shapes import Box, Drawing, Mark, Segment, drawn, title
from trnsim.topology.graph import Topology

_CHIP_STEP, _TRAY_H, _TRAY_GAP = 1.0, 0.8, 0.35
_COLUMN_W, _COLUMN_GAP = 0.7, 0.5
_LANE, _RACK_GAP = 1.2, 3.5  # between a rack's trays and its planes; between racks


@dataclass
class _Places:
    """Where the layout put things, for the links to find: chips, their trays and switch groups."""

    nodes: dict
    racks: list
    trays: dict  # rack -> its trays (nodes), in order
    in_tray: dict  # (rack, tray) -> its chips, in slot order
    slot_of: dict
    slots: int  # most chips in a tray
    by_place: dict  # (role, rack, tray or plane) -> switches
    planes: list[str]
    tray_w: float
    columns_w: float
    rack_w: float
    height: float
    position: dict = field(default_factory=dict)  # chip -> (x, y)
    tray_of: dict = field(default_factory=dict)  # chip -> its tray's box
    group_of: dict = field(default_factory=dict)  # switch -> its group's name
    group_box: dict = field(default_factory=dict)  # group's name -> its box

    def edge_of(self, chip: str, towards: float, height_share: float) -> tuple[float, float]:
        """Where a link leaves the chip's tray: the side facing ``towards``, at a height of its own."""
        box = self.tray_of[chip]
        x = box.x + box.w if towards > box.x + box.w / 2 else box.x
        return (x, box.y + height_share * box.h)


def switched(topology: Topology) -> Drawing:
    """Place a switched fabric (see the module docstring)."""
    places = _plan(topology)
    drawing = Drawing(title(topology))
    mirrored = len(places.racks) == 2  # two racks face each other: planes outside, cables in the middle
    for r, rack in enumerate(places.racks):
        _place_rack(places, drawing, r, rack, planes_left=not (mirrored and r == 1))
    _place_other_switches(places, drawing)
    drawing.segments = _links(topology, places)
    drawing.width = len(places.racks) * (places.rack_w + _RACK_GAP) - _RACK_GAP
    drawing.height = places.height
    return drawing


def _plan(topology: Topology) -> _Places:
    """The racks, trays, slots and switch groups, and the sizes they give the racks."""
    nodes = topology.nodes
    chips = [name for name in topology.chips if nodes[name].get("kind") == "chip"]
    racks = sorted({nodes[c]["rack"] for c in chips})
    where = {c: (nodes[c]["rack"], nodes[c]["node"]) for c in chips}
    trays = {rack: sorted({node for r, node in where.values() if r == rack}) for rack in racks}
    in_tray: dict[tuple, list[str]] = {}
    for chip in chips:
        in_tray.setdefault(where[chip], []).append(chip)
    slot_of = {}
    for members in in_tray.values():
        members.sort(key=lambda c: nodes[c].get("slot_index", 0))
        slot_of.update((chip, s) for s, chip in enumerate(members))
    slots = max(len(members) for members in in_tray.values())
    switches = {name: node for name, node in nodes.items() if node.get("kind") == "switch"}
    by_place: dict[tuple, list[str]] = {}  # (role, rack, tray or plane) -> switches
    for name, node in switches.items():
        place = node.get("node") if node.get("role") == "node" else str(node.get("plane"))
        by_place.setdefault((node.get("role"), node.get("rack"), place), []).append(name)
    tray_switches = any(node.get("role") == "node" for node in switches.values())
    planes = sorted({str(n.get("plane")) for n in switches.values() if n.get("role") == "plane"})
    tray_w = slots * _CHIP_STEP + (1.4 if tray_switches else 0.2)
    columns_w = len(planes) * (_COLUMN_W + _COLUMN_GAP)
    rack_w = tray_w + columns_w + _LANE
    height = max(len(t) for t in trays.values()) * (_TRAY_H + _TRAY_GAP) - _TRAY_GAP
    return _Places(
        nodes, racks, trays, in_tray, slot_of, slots, by_place, planes, tray_w, columns_w, rack_w, height
    )


def _place_rack(places: _Places, drawing: Drawing, r: int, rack, planes_left: bool) -> None:
    """One rack: its box, its trays with their chips and switches, and its plane columns."""
    p = places
    left = r * (p.rack_w + _RACK_GAP)
    tray_x = left + p.columns_w + _LANE if planes_left else left
    columns_x = left if planes_left else left + p.tray_w + _LANE
    drawing.boxes.append(Box(left - 0.3, -0.7, p.rack_w + 0.6, p.height + 1.0, f"rack {rack}", "rack"))
    for t, tray in enumerate(p.trays[rack]):
        y = t * (_TRAY_H + _TRAY_GAP)
        box = Box(tray_x, y, p.tray_w, _TRAY_H, f"{tray}", "tray")
        drawing.boxes.append(box)
        for s, chip in enumerate(p.in_tray[(rack, tray)]):
            p.position[chip] = (tray_x + 0.5 + s * _CHIP_STEP, y + _TRAY_H / 2)
            p.tray_of[chip] = box
            drawing.marks.append(Mark(*p.position[chip], chip, "chip"))
        members = p.by_place.get(("node", rack, tray), [])
        if members:
            group = Box(tray_x + p.slots * _CHIP_STEP + 0.15, y + 0.12, 1.05, _TRAY_H - 0.24,
                        f"{len(members)} sw", "switches")  # fmt: skip
            group.members = members
            drawing.boxes.append(group)
            p.group_box[f"tray:{rack}:{tray}"] = group
            p.group_of.update((name, f"tray:{rack}:{tray}") for name in members)
    # the first plane nearest the trays
    for i, plane in enumerate(p.planes[::-1] if planes_left else p.planes):
        members = p.by_place.get(("plane", rack, plane), [])
        if not members:
            continue
        model = p.nodes[members[0]].get("model") or "switch"
        column = Box(columns_x + i * (_COLUMN_W + _COLUMN_GAP) + _COLUMN_GAP / 2, -0.3, _COLUMN_W,
                     p.height + 0.6, f"plane {plane}: {len(members)} x {model}", "plane")  # fmt: skip
        column.members = members
        drawing.boxes.append(column)
        p.group_box[f"plane:{rack}:{plane}"] = column
        p.group_of.update((name, f"plane:{rack}:{plane}") for name in members)


def _place_other_switches(places: _Places, drawing: Drawing) -> None:
    """Any other switch (no rack, or another role): one box per role along the top."""
    others: dict[str, list[str]] = {}
    for name, node in places.nodes.items():
        if node.get("kind") == "switch" and name not in places.group_of:
            others.setdefault(str(node.get("role") or "switch"), []).append(name)
    for i, (role, members) in enumerate(sorted(others.items())):
        box = Box(i * 4.0, -3.2, 3.4, 1.2, f"{role}\n{len(members)} x switch", "switches", members)
        drawing.boxes.append(box)
        places.group_of.update((name, f"other:{role}") for name in members)
        places.group_box[f"other:{role}"] = box


def _links(topology: Topology, places: _Places) -> list[Segment]:
    """The drawn lines: links merged per chip pair, per chip and tray switches, per tray and plane,
    per pair of switch groups (links inside one group are not drawn)."""
    merged: dict[tuple, Segment] = {}
    for (a, b), link in topology.links.items():
        if not (drawn(topology, a) and drawn(topology, b)):
            continue
        cls, bw = link["cls"], float(link["bw_gbps"])
        if a not in places.position and b in places.position:
            a, b = b, a
        if a in places.position and b in places.position:
            key, segment = _chip_to_chip(places, a, b, cls, bw)
        elif a in places.position:
            key, segment = _chip_to_switch(places, a, b, cls, bw)
        else:
            if places.group_of[a] == places.group_of[b]:
                continue  # links inside one group of switches are not drawn
            ends = sorted((places.group_of[a], places.group_of[b]))
            key = (*ends, cls)
            ba, bb = places.group_box[ends[0]], places.group_box[ends[1]]
            segment = Segment((ba.x + ba.w / 2, ba.y + ba.h / 2), (bb.x + bb.w / 2, bb.y + bb.h / 2), cls,
                              [], bw, 0.1)  # fmt: skip
        merged.setdefault(key, segment).links.append((a, b))
    return list(merged.values())


def _chip_to_chip(places: _Places, a: str, b: str, cls: str, bw: float) -> tuple[tuple, Segment]:
    """Two chips: an arc over the chips inside a tray; else from tray side to tray side, bent when
    it passes another rack."""
    position = places.position
    if places.tray_of[a] is places.tray_of[b]:  # inside a tray: an arc over the chips
        return (a, b, cls), Segment(position[a], position[b], cls, [], bw, 0.5, inside=True)
    slot_a, slot_b = places.slot_of[a], places.slot_of[b]
    pa = places.edge_of(a, position[b][0], (slot_a + 1) / (places.slots + 1))
    pb = places.edge_of(b, position[a][0], (slot_b + 1) / (places.slots + 1))
    bend = 0.0 if abs(pa[0] - pb[0]) < places.rack_w + _RACK_GAP + places.tray_w else 0.12
    return (a, b, cls), Segment(pa, pb, cls, [], bw, bend)


def _chip_to_switch(places: _Places, a: str, b: str, cls: str, bw: float) -> tuple[tuple, Segment]:
    """A chip and a switch: to the tray's switches, to a plane's column, or to another group."""
    group = places.group_of[b]
    box = places.group_box[group]
    position = places.position
    if group.startswith("tray:"):  # the tray's own switches: a short arc inside the tray
        target = (box.x, box.y + box.h / 2)
        return (a, group, cls), Segment(
            position[a], target, cls, [], bw, 0.25 + 0.08 * places.slot_of[a], inside=True
        )
    if group.startswith("plane:"):  # one line per tray and plane, at the plane's height
        index = places.planes.index(group.split(":", 2)[2])
        pa = places.edge_of(a, box.x, (index + 1) / (len(places.planes) + 1))
        near = box.x + box.w if box.x < pa[0] else box.x
        return (places.tray_of[a].x, places.tray_of[a].y, group, cls), Segment(pa, (near, pa[1]), cls, [], bw)
    return (a, group, cls), Segment(position[a], (box.x + box.w / 2, box.y + box.h), cls, [], bw)
