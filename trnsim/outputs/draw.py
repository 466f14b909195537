"""Pictures of a fabric: where its chips, switches and links are, and how busy each link is.

:func:`layout` places a topology on a plane without drawing anything (testable, no matplotlib):

* a torus as a grid of chips, a 3-D torus as a row of slices along its slowest axis (the first of
  equals), wrap links as arcs, the links between slices as one band per pair of slices;
* a switched fabric as racks of trays with their chips, each tray's own switches as one box, each
  rack's switch planes as one box per plane, and cross-rack cables between the racks; links are
  drawn per chip and switch group, never per switch, so 144 chips on 368 switches stay readable.

Links keep their class (coloured, with a legend) and the directed edges they stand for, so a heatmap
colours each drawn link by the busiest of its edges. With failures, the healthy system is drawn and
what failed is shown dashed in grey. :func:`save` renders a layout to PNG, SVG or PDF with matplotlib
(the optional ``plot`` extra).
"""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trnsim.errors import UsageError
from trnsim.outputs.pictures import quiet, save_picture
from trnsim.topology.graph import Topology

FORMATS = (".png", ".svg", ".pdf")
# the bottlenecks' halo: a colour the heatmap's scale (plasma) never uses
_OUTLINE = "#00c8ff"
# a drawn link at least this share of the busiest is a bottleneck (ties within rounding)
BOTTLENECK_SHARE = 0.995


@dataclass
class Box:
    """A rectangle: a rack, a tray, a group of switches or a torus slice."""

    x: float
    y: float
    w: float
    h: float
    label: str
    kind: str  # rack | tray | switches | plane | slice
    members: list[str] = field(default_factory=list)  # the switches a box stands for


@dataclass
class Mark:
    """A chip (or a lone switch) at a point."""

    x: float
    y: float
    label: str
    kind: str  # chip | switch
    failed: bool = False


@dataclass
class Segment:
    """One drawn line standing for one or more links of one class."""

    a: tuple[float, float]
    b: tuple[float, float]
    cls: str
    links: list[tuple[str, str]]  # the link bundles (their two ends) it stands for
    bw_gbps: float  # per link, per direction
    curve: float = 0.0  # 0: straight; else the arc's bend (matplotlib's arc3 rad)
    failed: bool = False  # every link it stands for failed
    lost: int = 0  # links it stands for that failed (some, not all: the line stays, marked)
    band: bool = False  # a band of many links between two slices
    inside: bool = False  # inside a tray: drawn over the tray's box
    label: str = ""


@dataclass
class Drawing:
    title: str
    boxes: list[Box] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    classes: dict[str, tuple[int, float]] = field(default_factory=dict)  # class -> (links, GB/s each)
    link_class: dict[tuple[str, str], str] = field(default_factory=dict)  # every link's class
    width: float = 1.0
    height: float = 1.0
    notes: list[str] = field(default_factory=list)


def layout(topology: Topology) -> Drawing:
    """Place ``topology`` (its healthy system, failures marked) for drawing."""
    healthy = topology.healthy or topology
    drawing = _torus(healthy) if healthy.spec.torus is not None else _switched(healthy)
    if topology.healthy is not None:
        alive = {_key(a, b) for a, b in topology.links}
        for segment in drawing.segments:
            kept = [link for link in segment.links if _key(*link) in alive]
            segment.failed = not kept
            segment.lost = 0 if segment.failed else len(segment.links) - len(kept)
            if segment.band and segment.lost:
                segment.label += f", {segment.lost} failed"
            segment.links = kept or segment.links
        for mark in drawing.marks:
            mark.failed = mark.label not in topology.nodes
        for box in drawing.boxes:
            lost = sum(1 for name in box.members if name not in topology.nodes)
            if lost:
                box.label += f" ({lost} failed)"
        drawing.notes.append("failed: " + ", ".join(topology.faults))
    counts: dict[str, list] = {}
    for (a, b), link in healthy.links.items():
        if _drawn(healthy, a) and _drawn(healthy, b):
            parallel = int(link.get("parallel", 1))  # a size-2 ring's two links in one bundle
            entry = counts.setdefault(link["cls"], [0, 0.0])
            entry[0] += parallel
            entry[1] = max(entry[1], float(link["bw_gbps"]) / parallel)
    drawing.classes = {cls: (n, bw) for cls, (n, bw) in counts.items()}
    drawing.link_class = {_key(a, b): link["cls"] for (a, b), link in topology.links.items()}
    return drawing


def drawable(topology: Topology) -> str | None:
    """Why ``topology`` cannot be drawn (one line), or None when it can."""
    torus = (topology.healthy or topology).spec.torus
    if torus is not None and len(torus.axes) > 3:
        return f"{topology.where}: drawings show tori of 1 to 3 axes, this one has {len(torus.axes)}"
    return None


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _drawn(topology: Topology, node: str) -> bool:
    node = topology.nodes[node]
    # a chip hosting several ranks is drawn once (as the device its ranks sit on), its ranks not
    return node.get("kind") in ("chip", "switch") and "core" not in node


# ---------------------------------------------------------------------------------------------
# tori


def _torus(topology: Topology) -> Drawing:
    axes = topology.spec.torus.axes
    reason = drawable(topology)
    if reason is not None:
        raise UsageError(reason)
    sizes = [axis.size for axis in axes]
    names = [axis.name for axis in axes]
    by_class = {}
    for link in topology.links.values():
        by_class[link["cls"]] = min(by_class.get(link["cls"], np.inf), float(link["bw_gbps"]))
    if len(axes) == 3:
        speeds = [by_class.get(name, np.inf) for name in names]
        sliced = int(np.argmin(speeds))  # the slowest axis; the first of equals
    else:
        sliced = None
    grid = [i for i in range(len(axes)) if i != sliced]
    cols = sizes[grid[0]]
    rows = sizes[grid[1]] if len(grid) > 1 else 1
    slices = sizes[sliced] if sliced is not None else 1
    gap = 2.0
    drawing = Drawing(_title(topology))
    position = {}
    for name, node in topology.nodes.items():
        # a chip's place on the grid; a chip hosting several ranks is drawn once, its ranks not
        if "coord" not in node or (node.get("kind") == "chip" and "core" in node):
            continue
        coord = node["coord"]
        k = coord[sliced] if sliced is not None else 0
        x = k * (cols - 1 + gap) + coord[grid[0]]
        y = coord[grid[1]] if len(grid) > 1 else 0
        position[name] = (float(x), float(y))
        drawing.marks.append(Mark(float(x), float(y), name, "chip"))
    if sliced is not None:
        for k in range(slices):
            x0 = k * (cols - 1 + gap) - 0.45
            drawing.boxes.append(
                Box(x0, -0.45, cols - 1 + 0.9, rows - 1 + 0.9, f"{names[sliced]} = {k}", "slice")
            )
    bands: dict[tuple[int, int, str], list] = {}
    for (a, b), link in topology.links.items():
        if a not in position or b not in position:
            continue
        ca, cb = topology.nodes[a]["coord"], topology.nodes[b]["coord"]
        ka = ca[sliced] if sliced is not None else 0
        kb = cb[sliced] if sliced is not None else 0
        if ka != kb:
            lo, hi = sorted((ka, kb))
            per_link = float(link["bw_gbps"]) / int(link.get("parallel", 1))
            bands.setdefault((lo, hi, link["cls"]), []).append((a, b, per_link))
            continue
        (xa, ya), (xb, yb) = position[a], position[b]
        near = abs(xa - xb) + abs(ya - yb) <= 1.0 + 1e-9
        parallel = int(link.get("parallel", 1))
        # a wrap (or a twist) bends around the grid; a doubled link (size-2 ring) shows both
        bends = [0.0] if near and parallel == 1 else [0.0, 0.35] if near else [0.3] * 1
        per_link = float(link["bw_gbps"]) / parallel
        for bend in bends:
            drawing.segments.append(Segment((xa, ya), (xb, yb), link["cls"], [(a, b)], per_link, bend))

    def in_slice(node: str) -> tuple:
        coord = topology.nodes[node]["coord"]
        return tuple(coord[i] for i in grid)

    for (lo, hi, cls), links in sorted(bands.items()):
        twisted = any(in_slice(a) != in_slice(b) for a, b, _ in links)
        around = hi - lo > 1
        kind = "wrap, twisted" if around and twisted else "wrap" if around else "twisted" if twisted else ""
        span = cols - 1 + gap
        xa, xb = lo * span + cols - 1 + 0.45, hi * span - 0.45
        y = (rows - 1) / 2
        wrap = hi - lo > 1
        if wrap:  # the ring's wrap: from the last slice back to the first, over the top
            xa, xb = hi * span + (cols - 1) / 2, lo * span + (cols - 1) / 2
            y = -1.0  # above the slices and their labels
        drawing.segments.append(
            Segment(
                (xa, y),
                (xb, y),
                cls,
                [(a, b) for a, b, _ in links],
                min(bw for *_, bw in links),
                0.12 if wrap else 0.0,
                band=True,
                label=f"{len(links)} x {cls}" + (f" ({kind})" if kind else ""),
            )
        )
    drawing.width = slices * (cols - 1 + gap) - gap + 1
    drawing.height = rows
    return drawing


# ---------------------------------------------------------------------------------------------
# switched fabrics

_CHIP_STEP, _TRAY_H, _TRAY_GAP = 1.0, 0.8, 0.35
_COLUMN_W, _COLUMN_GAP = 0.7, 0.5


def _switched(topology: Topology) -> Drawing:
    """Racks side by side (two face each other), trays stacked in each, a column per switch plane
    beside the trays; a chip's plane links leave its tray at that plane's height."""
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
    lane = 1.2
    rack_w = tray_w + columns_w + lane
    rack_gap = 3.5
    height = max(len(t) for t in trays.values()) * (_TRAY_H + _TRAY_GAP) - _TRAY_GAP
    drawing = Drawing(_title(topology))
    position: dict[str, tuple[float, float]] = {}
    tray_of: dict[str, Box] = {}
    group_of: dict[str, str] = {}
    group_box: dict[str, Box] = {}
    facing: dict[int, float] = {}  # which way each rack's planes lie (-1 left, +1 right)
    mirrored = len(racks) == 2  # two racks face each other: planes outside, cables in the middle
    for r, rack in enumerate(racks):
        left = r * (rack_w + rack_gap)
        planes_left = not (mirrored and r == 1)
        facing[rack] = -1.0 if planes_left else 1.0
        tray_x = left + columns_w + lane if planes_left else left
        columns_x = left if planes_left else left + tray_w + lane
        drawing.boxes.append(Box(left - 0.3, -0.7, rack_w + 0.6, height + 1.0, f"rack {rack}", "rack"))
        for t, tray in enumerate(trays[rack]):
            y = t * (_TRAY_H + _TRAY_GAP)
            box = Box(tray_x, y, tray_w, _TRAY_H, f"{tray}", "tray")
            drawing.boxes.append(box)
            for s, chip in enumerate(in_tray[(rack, tray)]):
                position[chip] = (tray_x + 0.5 + s * _CHIP_STEP, y + _TRAY_H / 2)
                tray_of[chip] = box
                drawing.marks.append(Mark(*position[chip], chip, "chip"))
            members = by_place.get(("node", rack, tray), [])
            if members:
                group = Box(tray_x + slots * _CHIP_STEP + 0.15, y + 0.12, 1.05, _TRAY_H - 0.24,
                            f"{len(members)} sw", "switches")  # fmt: skip
                group.members = members
                drawing.boxes.append(group)
                group_box[f"tray:{rack}:{tray}"] = group
                group_of.update((name, f"tray:{rack}:{tray}") for name in members)
        # the first plane nearest the trays
        for p, plane in enumerate(planes[::-1] if planes_left else planes):
            members = by_place.get(("plane", rack, plane), [])
            if not members:
                continue
            model = nodes[members[0]].get("model") or "switch"
            column = Box(columns_x + p * (_COLUMN_W + _COLUMN_GAP) + _COLUMN_GAP / 2, -0.3, _COLUMN_W,
                         height + 0.6, f"plane {plane}: {len(members)} x {model}", "plane")  # fmt: skip
            column.members = members
            drawing.boxes.append(column)
            group_box[f"plane:{rack}:{plane}"] = column
            group_of.update((name, f"plane:{rack}:{plane}") for name in members)
    # any other switch (no rack, or another role): one box per role along the top
    others: dict[str, list[str]] = {}
    for name, node in switches.items():
        if name not in group_of:
            others.setdefault(str(node.get("role") or "switch"), []).append(name)
    for i, (role, members) in enumerate(sorted(others.items())):
        box = Box(i * 4.0, -3.2, 3.4, 1.2, f"{role}\n{len(members)} x switch", "switches", members)
        drawing.boxes.append(box)
        group_of.update((name, f"other:{role}") for name in members)
        group_box[f"other:{role}"] = box

    def edge_of(chip: str, towards: float, height_share: float) -> tuple[float, float]:
        """Where a link leaves the chip's tray: the side facing ``towards``, at a height of its own."""
        box = tray_of[chip]
        x = box.x + box.w if towards > box.x + box.w / 2 else box.x
        return (x, box.y + height_share * box.h)

    merged: dict[tuple, Segment] = {}
    for (a, b), link in topology.links.items():
        if not (_drawn(topology, a) and _drawn(topology, b)):
            continue
        cls, bw = link["cls"], float(link["bw_gbps"])
        if a not in position and b in position:
            a, b = b, a
        if a in position and b in position:
            if tray_of[a] is tray_of[b]:  # inside a tray: an arc over the chips
                key = (a, b, cls)
                segment = Segment(position[a], position[b], cls, [], bw, 0.5, inside=True)
            else:
                slot_a, slot_b = slot_of[a], slot_of[b]
                pa = edge_of(a, position[b][0], (slot_a + 1) / (slots + 1))
                pb = edge_of(b, position[a][0], (slot_b + 1) / (slots + 1))
                bend = 0.0 if abs(pa[0] - pb[0]) < rack_w + rack_gap + tray_w else 0.12
                key = (a, b, cls)
                segment = Segment(pa, pb, cls, [], bw, bend)
        elif a in position:
            group = group_of[b]
            box = group_box[group]
            if group.startswith("tray:"):  # the tray's own switches: a short arc inside the tray
                key = (a, group, cls)
                slot = slot_of[a]
                target = (box.x, box.y + box.h / 2)
                segment = Segment(position[a], target, cls, [], bw, 0.25 + 0.08 * slot, inside=True)
            elif group.startswith("plane:"):  # one line per tray and plane, at the plane's height
                key = (tray_of[a].x, tray_of[a].y, group, cls)
                index = planes.index(group.split(":", 2)[2])
                pa = edge_of(a, box.x, (index + 1) / (len(planes) + 1))
                near = box.x + box.w if box.x < pa[0] else box.x
                segment = Segment(pa, (near, pa[1]), cls, [], bw)
            else:
                key = (a, group, cls)
                segment = Segment(position[a], (box.x + box.w / 2, box.y + box.h), cls, [], bw)
        else:
            if group_of[a] == group_of[b]:
                continue  # links inside one group of switches are not drawn
            ends = sorted((group_of[a], group_of[b]))
            key = (*ends, cls)
            ba, bb = group_box[ends[0]], group_box[ends[1]]
            segment = Segment((ba.x + ba.w / 2, ba.y + ba.h / 2), (bb.x + bb.w / 2, bb.y + bb.h / 2), cls,
                              [], bw, 0.1)  # fmt: skip
        merged.setdefault(key, segment).links.append((a, b))
    drawing.segments = list(merged.values())
    drawing.width = len(racks) * (rack_w + rack_gap) - rack_gap
    drawing.height = height
    return drawing


def _title(topology: Topology) -> str:
    spec = topology.spec
    links = sum(
        int(link.get("parallel", 1))
        for (a, b), link in topology.links.items()
        if _drawn(topology, a) and _drawn(topology, b)
    )
    chips = (
        f"{topology.n_chips} chips ({topology.n_ranks} ranks)"
        if topology.ranks_per_chip > 1
        else f"{topology.n_chips} chips"
    )
    return f"{spec.name}: {chips}, {topology.n_switches} switches, {links} links"


# ---------------------------------------------------------------------------------------------
# link loads


def link_shares(topology: Topology, busy: np.ndarray) -> dict[tuple[str, str], float]:
    """Each link bundle's share (the busier direction) of per-directed-edge values ``busy`` in the
    order of :func:`trnsim.topology.arrays.graph_arrays`, normalised so the busiest link is 1."""
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topology)
    peak = float(busy.max()) if len(busy) else 0.0
    shares: dict[tuple[str, str], float] = {}
    for e, value in enumerate(busy):
        a, b = arrays.edge_ends[arrays.edge[e]]
        key = _key(a, b)
        shares[key] = max(shares.get(key, 0.0), float(value) / peak if peak > 0 else 0.0)
    return shares


# ---------------------------------------------------------------------------------------------
# rendering (matplotlib, optional)


@quiet()
def save(
    drawing: Drawing,
    output: Path,
    shares: dict[tuple[str, str], float] | None = None,
    subtitle: str = "",
) -> None:
    """Render ``drawing`` to ``output`` (.png, .svg or .pdf); with ``shares`` (link -> busy share,
    :func:`link_shares`) as a heatmap: links coloured by their share, the bottlenecks outlined."""
    from trnsim.outputs.plot import _literal, require

    if output.suffix.lower() not in FORMATS:
        raise UsageError(f"{output}: give a .png, .svg or .pdf file")
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    pyplot = require("matplotlib.pyplot")
    patches = require("matplotlib.patches")
    lines = require("matplotlib.lines")

    scale = 0.55
    width = min(max(drawing.width * scale + 2.5, 7.0), 40.0)
    height = min(max(drawing.height * scale + 2.2, 4.0), 40.0)
    figure, axes = pyplot.subplots(figsize=(width, height), dpi=110)
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    class_colour = {cls: colours[i % len(colours)] for i, cls in enumerate(drawing.classes)}
    top_bw = max((bw for _, bw in drawing.classes.values()), default=1.0) or 1.0
    cmap = pyplot.get_cmap("plasma")
    for box in drawing.boxes:
        style = {
            "rack": dict(facecolor="#f7f7f7", edgecolor="#999999", linewidth=1.0, zorder=0),
            "slice": dict(facecolor="#f7f7f7", edgecolor="#999999", linewidth=1.0, zorder=0),
            "tray": dict(facecolor="#ffffff", edgecolor="#777777", linewidth=0.8, zorder=3),
            "switches": dict(facecolor="#e8eef7", edgecolor="#4a6fa5", linewidth=0.9, zorder=3),
            "plane": dict(facecolor="#e8eef7", edgecolor="#4a6fa5", linewidth=0.9, zorder=1),
        }[box.kind]
        axes.add_patch(patches.Rectangle((box.x, box.y), box.w, box.h, **style))
        if box.kind in ("rack", "slice"):
            axes.text(
                box.x + 0.1, box.y - 0.15, _literal(box.label), fontsize=8, va="bottom", color="#555555"
            )
        elif box.kind == "plane":
            # fit the column: about 0.62 em per character, 72 points per inch
            fits = box.h * scale * 72 / (0.62 * max(len(box.label), 1))
            axes.text(
                box.x + box.w / 2, box.y + box.h / 2, _literal(box.label), fontsize=max(3.0, min(7.0, fits)), ha="center",
                va="center", rotation=90, zorder=4, color="#22406e",
            )  # fmt: skip
        elif box.kind == "switches":
            axes.text(
                box.x + box.w / 2, box.y + box.h / 2, _literal(box.label), fontsize=6, ha="center",
                va="center", zorder=4, color="#22406e",
            )  # fmt: skip
        else:
            axes.text(box.x + 0.06, box.y + 0.04, _literal(box.label), fontsize=5, ha="left", va="top",
                      color="#777777", zorder=4)  # fmt: skip
    used = [max(shares.get(_key(*link), 0.0) for link in s.links) for s in drawing.segments] if shares else []
    peaks = sum(1 for share in used if share >= BOTTLENECK_SHARE)
    # when most links are at the peak the load is balanced: outlining them all would say nothing
    outline = shares is not None and peaks <= sum(1 for share in used if share > 0) / 2
    bottlenecks = 0
    partly: list[tuple[float, float]] = []
    layers: dict[tuple, list] = {}  # (z-order, line style) -> [(points, colour, width, alpha)]
    for segment in drawing.segments:
        width_pt = 0.5 + 2.0 * segment.bw_gbps / top_bw
        if segment.band:
            width_pt = 3.0 + 3.0 * segment.bw_gbps / top_bw
        alpha = 0.9 if segment.band or shares is not None else 0.7
        points = _polyline(segment)
        if segment.failed:
            colour, style, zorder = "#bbbbbb", "--", 1.0
        elif shares is not None:
            share = max(shares.get(_key(*link), 0.0) for link in segment.links)
            colour = cmap(0.15 + 0.85 * share) if share > 0 else "#d9d9d9"
            style, zorder = "-", 2.0 + share * 0.5  # the busiest on top
            if share >= BOTTLENECK_SHARE and outline:
                bottlenecks += 1
                layers.setdefault((1.9, "-"), []).append((points, _OUTLINE, width_pt + 3.0, 0.9))
        else:
            colour, style, zorder = class_colour.get(segment.cls, "black"), "-", 2.0
        if segment.inside:
            zorder += 1.6
            width_pt = min(width_pt, 1.2)
        layers.setdefault((round(zorder, 2), style), []).append((points, colour, width_pt, alpha))
        if segment.lost:  # some of the links this line stands for failed: a grey cross on it
            middle = points[len(points) // 2]
            partly.append((float(middle[0]), float(middle[1])))
        if segment.label and segment.band:
            mx, my = (segment.a[0] + segment.b[0]) / 2, (segment.a[1] + segment.b[1]) / 2
            offset = -0.55 if segment.curve else -0.25
            axes.text(mx, my + offset, _literal(segment.label), fontsize=6, ha="center", color="#333333")
    collections = require("matplotlib.collections")
    colors = require("matplotlib.colors")
    for (zorder, style), entries in sorted(layers.items(), key=lambda kv: kv[0][0]):
        rgba = [colors.to_rgba(colour, alpha) for _, colour, _, alpha in entries]
        axes.add_collection(
            collections.LineCollection(
                [points for points, *_ in entries], colors=rgba, linewidths=[w for _, _, w, _ in entries],
                linestyles=style, zorder=zorder, capstyle="round",
            )
        )  # fmt: skip
    if partly:
        axes.scatter(
            [x for x, _ in partly], [y for _, y in partly], s=30, marker="x", color="#888888", zorder=6
        )
    chips = [m for m in drawing.marks if m.kind == "chip"]
    small = len(chips) > 64
    for failed in (False, True):
        marks = [m for m in drawing.marks if m.failed == failed]
        if marks:
            axes.scatter(
                [m.x for m in marks], [m.y for m in marks], s=28 if small else 60,
                marker="x" if failed else "s", color="#bbbbbb" if failed else "#2b2b2b", zorder=5,
            )  # fmt: skip
    if not small:
        for mark in chips:
            axes.text(
                mark.x, mark.y + 0.28, _literal(mark.label), fontsize=5, ha="center", va="top", zorder=6
            )
    handles = []
    if shares is None:
        for cls, (count, bw) in drawing.classes.items():
            handles.append(
                lines.Line2D([], [], color=class_colour[cls], linewidth=0.5 + 2.0 * bw / top_bw,
                             label=_literal(f"{cls}: {count} links, {bw:.4g} GB/s each"))
            )  # fmt: skip
    else:
        label = (
            f"bottleneck ({bottlenecks} of {len(used)} drawn links)"
            if outline
            else f"balanced: {peaks} of {len(used)} drawn links at the peak"
        )
        handles.append(
            lines.Line2D([], [], color=_OUTLINE, alpha=0.9 if outline else 0.0, linewidth=4, label=label)
        )
        if not peaks:  # the busiest links are inside devices (a chip's ranks, a switch group)
            hidden = sorted(
                {
                    drawing.link_class.get(key, "?")
                    for key, share in shares.items()
                    if share >= BOTTLENECK_SHARE
                }
            )
            handles.append(
                lines.Line2D(
                    [],
                    [],
                    alpha=0.0,
                    label=_literal(
                        f"busiest links not drawn ({', '.join(hidden)}): inside devices or switch groups"
                    ),
                )
            )
        handles.append(lines.Line2D([], [], color="#d9d9d9", linewidth=2, label="idle in that step"))
    if any(s.failed for s in drawing.segments) or any(m.failed for m in drawing.marks):
        handles.append(lines.Line2D([], [], color="#bbbbbb", linestyle=(0, (3, 2)), label="failed"))
    if partly:
        handles.append(
            lines.Line2D(
                [], [], color="#888888", marker="x", linestyle="none", label="some of its links failed"
            )
        )
    axes.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if shares is not None:
        mappable = pyplot.cm.ScalarMappable(cmap=cmap, norm=matplotlib.colors.Normalize(0.15, 1.0))
        bar = figure.colorbar(mappable, ax=axes, fraction=0.025, shrink=0.5, pad=0.01, location="left")
        bar.set_ticks([0.15, 0.575, 1.0], labels=["0%", "50%", "100%"])
        bar.set_label("busy share of the busiest step", fontsize=7)
        bar.ax.tick_params(labelsize=6)
    import textwrap

    parts = [drawing.title, subtitle, "; ".join(drawing.notes)]
    title = "\n".join(textwrap.fill(part, 110) for part in parts if part)
    axes.set_title(_literal(title), fontsize=9, pad=14)
    axes.set_aspect("equal")
    low_x, low_y, high_x, high_y = _extent(drawing)
    axes.set_xlim(low_x - 0.5, high_x + 0.5)
    axes.set_ylim(high_y + 0.6, low_y - 0.6)  # y grows downwards: tray 0 and slice rows on top
    axes.axis("off")
    figure.tight_layout()
    try:
        save_picture(figure, output, bbox_inches="tight")
    finally:
        pyplot.close(figure)


def _polyline(segment: Segment) -> np.ndarray:
    """The points of a segment: its two ends, or a quadratic Bezier arc bent by ``curve`` times its
    length to one side (matplotlib's ``arc3``)."""
    a, b = np.asarray(segment.a, dtype=float), np.asarray(segment.b, dtype=float)
    if not segment.curve:
        return np.stack([a, b])
    d = b - a
    control = (a + b) / 2 + segment.curve * np.array([-d[1], d[0]])  # y grows downwards
    t = np.linspace(0.0, 1.0, 24)[:, None]
    return (1 - t) ** 2 * a + 2 * (1 - t) * t * control + t**2 * b


def _extent(drawing: Drawing) -> tuple[float, float, float, float]:
    """The smallest box holding every box, mark and link (arcs included) and the bands' labels."""
    xs, ys = [], []
    for box in drawing.boxes:
        xs += [box.x, box.x + box.w]
        ys += [box.y, box.y + box.h]
    for mark in drawing.marks:
        xs.append(mark.x)
        ys.append(mark.y)
    for segment in drawing.segments:
        points = _polyline(segment)
        xs += [points[:, 0].min(), points[:, 0].max()]
        ys += [points[:, 1].min() - (0.6 if segment.band else 0.0), points[:, 1].max()]
    return min(xs), min(ys), max(xs), max(ys)


def heatmap(topology: Topology, heat, output: Path, title: str = "") -> None:
    """Draw ``topology`` with its links coloured by ``heat`` (a
    :class:`trnsim.model.engine.LinkHeat`) to ``output``."""
    drawing = layout(topology)
    if title:
        drawing.title = title
    save(drawing, output, link_shares(topology, heat.busy), subtitle=heat.describe())
