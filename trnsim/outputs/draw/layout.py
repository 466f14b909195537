"""A system placed for drawing, failures marked: the healthy system's layout (a torus or a switched
fabric), with what failed shown dashed in grey, and the link classes for the legend."""

from trnsim.outputs.draw.layout_switched import switched
from trnsim.outputs.draw.layout_torus import torus
from trnsim.outputs.draw.shapes import Drawing, drawn, link_key
from trnsim.topology.graph import Topology


def layout(topology: Topology) -> Drawing:
    """Place ``topology`` (its healthy system, failures marked) for drawing.

    Parameters
    ----------
    topology : Topology
        The system; with failures, its healthy system is placed and what failed is marked.

    Returns
    -------
    Drawing
        Boxes, marks and segments on a plane (no matplotlib: :func:`trnsim.outputs.draw.save`
        renders it).
    """
    healthy = topology.healthy or topology
    drawing = torus(healthy) if healthy.spec.torus is not None else switched(healthy)
    if topology.healthy is not None:
        _mark_failures(topology, drawing)
    counts: dict[str, list] = {}
    for (a, b), link in healthy.links.items():
        if drawn(healthy, a) and drawn(healthy, b):
            parallel = int(link.get("parallel", 1))  # a size-2 ring's two links in one bundle
            entry = counts.setdefault(link["cls"], [0, 0.0])
            entry[0] += parallel
            entry[1] = max(entry[1], float(link["bw_gbps"]) / parallel)
    drawing.classes = {cls: (n, bw) for cls, (n, bw) in counts.items()}
    drawing.link_class = {link_key(a, b): link["cls"] for (a, b), link in topology.links.items()}
    return drawing


def _mark_failures(topology: Topology, drawing: Drawing) -> None:
    """Lines whose links all failed are marked failed, lines that lost some count them; failed chips
    and switch groups that lost switches say so."""
    alive = {link_key(a, b) for a, b in topology.links}
    for segment in drawing.segments:
        kept = [link for link in segment.links if link_key(*link) in alive]
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
