"""Link loads on a drawing: each drawn link's share of the busiest, and the heatmap picture."""

from pathlib import Path

import numpy as np

from trnsim.outputs.draw.layout import layout
from trnsim.outputs.draw.render import save
from trnsim.outputs.draw.shapes import link_key
from trnsim.topology.graph import Topology


def link_shares(topology: Topology, busy: np.ndarray) -> dict[tuple[str, str], float]:
    """Each link bundle's share (the busier direction) of per-directed-edge values ``busy`` in the
    order of :func:`trnsim.routing.shortest.graph_arrays`, normalised so the busiest link is 1."""
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topology)
    peak = float(busy.max()) if len(busy) else 0.0
    shares: dict[tuple[str, str], float] = {}
    for e, value in enumerate(busy):
        a, b = arrays.edge_ends[arrays.edge[e]]
        key = link_key(a, b)
        shares[key] = max(shares.get(key, 0.0), float(value) / peak if peak > 0 else 0.0)
    return shares


def heatmap(topology: Topology, heat, output: Path, title: str = "") -> None:
    """Draw ``topology`` with its links coloured by ``heat`` (a
    :class:`trnsim.model.plan.LinkHeat`) to ``output``."""
    drawing = layout(topology)
    if title:
        drawing.title = title
    save(drawing, output, link_shares(topology, heat.busy), subtitle=heat.describe())
