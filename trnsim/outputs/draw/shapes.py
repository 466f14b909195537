"""What a drawing is made of: boxes, marks and segments on a plane, and the geometry of lines.

Pure geometry (numpy, no matplotlib): the layouts (:mod:`~trnsim.outputs.draw.layout_torus`,
:mod:`~trnsim.outputs.draw.layout_switched`) place these, the renderer
(:mod:`~trnsim.outputs.draw.render`) draws them. Links keep their class (coloured, with a legend)
and the link bundles they stand for, so a heatmap colours each drawn line by the busiest of them.
"""

from dataclasses import dataclass, field

import numpy as np

from trnsim.topology.graph import Topology


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
    """A placed system: its boxes, marks and lines, the link classes for the legend, and its extent."""

    title: str
    boxes: list[Box] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    classes: dict[str, tuple[int, float]] = field(default_factory=dict)  # class -> (links, GB/s each)
    link_class: dict[tuple[str, str], str] = field(default_factory=dict)  # every link's class
    width: float = 1.0
    height: float = 1.0
    notes: list[str] = field(default_factory=list)


def link_key(a: str, b: str) -> tuple[str, str]:
    """A link bundle's two ends in one order, so that either direction finds it."""
    return (a, b) if a <= b else (b, a)


def drawn(topology: Topology, node: str) -> bool:
    """Whether a device is drawn: chips and switches, not the ranks of a chip that hosts several."""
    node = topology.nodes[node]
    # a chip hosting several ranks is drawn once (as the device its ranks sit on), its ranks not
    return node.get("kind") in ("chip", "switch") and "core" not in node


def title(topology: Topology) -> str:
    """A drawing's title: the system's chips, switches and drawn links."""
    spec = topology.spec
    links = sum(
        int(link.get("parallel", 1))
        for (a, b), link in topology.links.items()
        if drawn(topology, a) and drawn(topology, b)
    )
    chips = (
        f"{topology.n_chips} chips ({topology.n_ranks} ranks)"
        if topology.ranks_per_chip > 1
        else f"{topology.n_chips} chips"
    )
    return f"{spec.name}: {chips}, {topology.n_switches} switches, {links} links"


def polyline(segment: Segment) -> np.ndarray:
    """The points of a segment: its two ends, or a quadratic Bezier arc bent by ``curve`` times its
    length to one side (matplotlib's ``arc3``)."""
    a, b = np.asarray(segment.a, dtype=float), np.asarray(segment.b, dtype=float)
    if not segment.curve:
        return np.stack([a, b])
    d = b - a
    control = (a + b) / 2 + segment.curve * np.array([-d[1], d[0]])  # y grows downwards
    t = np.linspace(0.0, 1.0, 24)[:, None]
    return (1 - t) ** 2 * a + 2 * (1 - t) * t * control + t**2 * b


def extent(drawing: Drawing) -> tuple[float, float, float, float]:
    """The smallest box holding every box, mark and link (arcs included) and the bands' labels."""
    xs, ys = [], []
    for box in drawing.boxes:
        xs += [box.x, box.x + box.w]
        ys += [box.y, box.y + box.h]
    for mark in drawing.marks:
        xs.append(mark.x)
        ys.append(mark.y)
    for segment in drawing.segments:
        points = polyline(segment)
        xs += [points[:, 0].min(), points[:, 0].max()]
        ys += [points[:, 1].min() - (0.6 if segment.band else 0.0), points[:, 1].max()]
    return min(xs), min(ys), max(xs), max(ys)
