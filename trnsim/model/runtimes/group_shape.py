"""Where a group's chips sit in the fabric, read from the graph: what the Neuron and XLA runtime models
need (their chips, ranks per chip, link bandwidth, and on a torus the axes the group spans).

A group is a list of rank names; a rank on a chip that hosts several (``chip.ranks``) names its chip
in the node's ``chip`` attribute, otherwise the rank is the chip. Shapes a model cannot take raise
:class:`GroupShapeError` with the reason, which the runtime turns into its one-line refusal.
"""

import math
from dataclasses import dataclass

from trnsim.topology.graph import RANK_CLASS, Topology


class GroupShapeError(ValueError):
    """The group's shape is not one the runtime's model covers; the message says why."""


@dataclass(frozen=True)
class AxisSpan:
    """The group's extent along one torus axis: ``size`` chips, whether that is the whole axis and
    the ring closes (``wrap``), and the slowest link between neighbours along it (GB/s per
    direction, raw and after the file's efficiency)."""

    name: str
    size: int
    wrap: bool
    raw_gbps: float
    bw_gbps: float
    twisted: bool = False


def chips_of(topology: Topology, group: list[str]) -> tuple[list[str], int]:
    """The group's chips in first-seen order, and the ranks it takes on each (equal on every chip)."""
    per_chip: dict[str, int] = {}
    for rank in group:
        chip = topology.nodes[rank].get("chip", rank)
        per_chip[chip] = per_chip.get(chip, 0) + 1
    counts = set(per_chip.values())
    if len(counts) > 1:
        raise GroupShapeError(
            f"the group takes {min(counts)} to {max(counts)} ranks on different chips; the model takes "
            "the same ranks on every chip"
        )
    return list(per_chip), counts.pop()


def chip_bandwidth(topology: Topology, chips: list[str]) -> float:
    """The slowest chip's link bandwidth to the rest of the group (GB/s per direction, after the
    file's efficiency): its links to switches and to the group's other chips."""
    members = set(chips)
    total = dict.fromkeys(chips, 0.0)
    for (u, v), data in topology.links.items():
        if data["cls"] == RANK_CLASS:
            continue
        for end, other in ((u, v), (v, u)):
            if end not in members:
                continue
            node = topology.nodes[other]
            if other in members or (node["kind"] == "switch" and node.get("role") != "chip"):
                total[end] += data["bw_gbps"]
    return min(total.values())


def _between(topology: Topology, a: str, b: str) -> dict | None:
    return topology.links.get((a, b)) or topology.links.get((b, a))


def torus_spans(topology: Topology, chips: list[str]) -> list[AxisSpan]:
    """The axes a group of a torus file spans (more than one chip along them), in the file's order.

    Raises
    ------
    GroupShapeError
        The chips are not a box (every combination of the coordinates they take along each axis).
    """
    axes = topology.spec.torus.axes
    coords = [topology.nodes[chip]["coord"] for chip in chips]
    taken = [sorted({c[i] for c in coords}) for i in range(len(axes))]
    if math.prod(len(values) for values in taken) != len(set(coords)):
        raise GroupShapeError("its chips are not a box of the torus (whole rows, planes or the lot)")
    by_coord = {topology.nodes[chip]["coord"]: chip for chip in chips}
    spans = []
    for i, axis in enumerate(axes):
        values = taken[i]
        if len(values) == 1:
            continue
        full = len(values) == axis.size
        ring = full and axis.wrap and axis.size > 2
        links = []
        for coord, chip in by_coord.items():
            if coord[i] == values[-1] and (not ring or axis.twist):
                continue  # a line's last chip has no next one; a twisted wrap lands elsewhere
            step = list(coord)
            step[i] = values[(values.index(coord[i]) + 1) % len(values)]
            link = _between(topology, chip, by_coord[tuple(step)])
            if link is None:
                raise GroupShapeError(
                    f"its chips along axis {axis.name} are not neighbours (a gap in the axis)"
                )
            links.append(link)
        spans.append(
            AxisSpan(
                axis.name,
                len(values),
                ring,
                min(link.get("raw_bw_gbps", link["bw_gbps"]) for link in links),
                min(link["bw_gbps"] for link in links),
                twisted=bool(axis.twist),
            )
        )
    return spans
