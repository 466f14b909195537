"""A torus placed on a plane: a grid of chips; a 3-D torus as a row of slices along its slowest axis
(the first of equals), wrap links as arcs, the links between slices as one band per pair of slices."""

from dataclasses import dataclass

import numpy as np

from trnsim.errors import UsageError
from trnsim.outputs.draw.shapes import Box, Drawing, Mark, Segment, title
from trnsim.topology.graph import Topology

GAP = 2.0  # between slices, in chip steps


def drawable(topology: Topology) -> str | None:
    """Why ``topology`` cannot be drawn (one line), or None when it can."""
    torus = (topology.healthy or topology).spec.torus
    if torus is not None and len(torus.axes) > 3:
        return f"{topology.where}: drawings show tori of 1 to 3 axes, this one has {len(torus.axes)}"
    return None


@dataclass
class _Grid:
    """How the axes map onto the plane: the sliced axis (None below 3 axes) and the grid's two."""

    sliced: int | None
    grid: list[int]  # the axes across (columns) and down (rows)
    cols: int
    rows: int
    slices: int
    names: list[str]

    def slice_of(self, coord) -> int:
        return coord[self.sliced] if self.sliced is not None else 0

    @property
    def span(self) -> float:
        """From one slice's first column to the next one's."""
        return self.cols - 1 + GAP


def torus(topology: Topology) -> Drawing:
    """Place a torus of 1 to 3 axes (see the module docstring).

    Raises
    ------
    UsageError
        For a torus of more than 3 axes (:func:`drawable`).
    """
    reason = drawable(topology)
    if reason is not None:
        raise UsageError(reason)
    g = _grid(topology)
    drawing = Drawing(title(topology))
    position = _place_chips(topology, g, drawing)
    if g.sliced is not None:
        for k in range(g.slices):
            x0 = k * g.span - 0.45
            drawing.boxes.append(
                Box(x0, -0.45, g.cols - 1 + 0.9, g.rows - 1 + 0.9, f"{g.names[g.sliced]} = {k}", "slice")
            )
    bands = _links(topology, g, position, drawing)
    _bands(topology, g, bands, drawing)
    drawing.width = g.slices * g.span - GAP + 1
    drawing.height = g.rows
    return drawing


def _grid(topology: Topology) -> _Grid:
    """Slice a 3-D torus along its slowest axis (the first of equals); the other axes make the grid."""
    axes = topology.spec.torus.axes
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
    return _Grid(sliced, grid, cols, rows, slices, names)


def _place_chips(topology: Topology, g: _Grid, drawing: Drawing) -> dict[str, tuple[float, float]]:
    """A mark per chip at its place on its slice's grid; the places by name."""
    position = {}
    for name, node in topology.nodes.items():
        # a chip's place on the grid; a chip hosting several ranks is drawn once, its ranks not
        if "coord" not in node or (node.get("kind") == "chip" and "core" in node):
            continue
        coord = node["coord"]
        x = g.slice_of(coord) * g.span + coord[g.grid[0]]
        y = coord[g.grid[1]] if len(g.grid) > 1 else 0
        position[name] = (float(x), float(y))
        drawing.marks.append(Mark(float(x), float(y), name, "chip"))
    return position


def _links(topology: Topology, g: _Grid, position: dict, drawing: Drawing) -> dict[tuple, list]:
    """A segment per link inside a slice (arcs for wraps and doubled links); the links between
    slices gathered by (first slice, last slice, class) for :func:`_bands`."""
    bands: dict[tuple[int, int, str], list] = {}
    for (a, b), link in topology.links.items():
        if a not in position or b not in position:
            continue
        ka, kb = g.slice_of(topology.nodes[a]["coord"]), g.slice_of(topology.nodes[b]["coord"])
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
    return bands


def _bands(topology: Topology, g: _Grid, bands: dict, drawing: Drawing) -> None:
    """One band per pair of slices and class, labelled with its links and whether they wrap or twist."""

    def in_slice(node: str) -> tuple:
        coord = topology.nodes[node]["coord"]
        return tuple(coord[i] for i in g.grid)

    for (lo, hi, cls), links in sorted(bands.items()):
        twisted = any(in_slice(a) != in_slice(b) for a, b, _ in links)
        around = hi - lo > 1
        kind = "wrap, twisted" if around and twisted else "wrap" if around else "twisted" if twisted else ""
        span = g.span
        xa, xb = lo * span + g.cols - 1 + 0.45, hi * span - 0.45
        y = (g.rows - 1) / 2
        wrap = hi - lo > 1
        if wrap:  # the ring's wrap: from the last slice back to the first, over the top
            xa, xb = hi * span + (g.cols - 1) / 2, lo * span + (g.cols - 1) / 2
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
