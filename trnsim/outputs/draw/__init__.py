"""Pictures of a fabric: where its chips, switches and links are, and how busy each link is.

:func:`layout` places a topology on a plane without drawing anything (testable, no matplotlib):

* a torus as a grid of chips, a 3-D torus as a row of slices along its slowest axis (the first of
  equals), wrap links as arcs, the links between slices as one band per pair of slices
  (:mod:`~trnsim.outputs.draw.layout_torus`);
* a switched fabric as racks of trays with their chips, each tray's own switches as one box, each
  rack's switch planes as one box per plane, and cross-rack cables between the racks; links are
  drawn per chip and switch group, never per switch, so 144 chips on 368 switches stay readable
  (:mod:`~trnsim.outputs.draw.layout_switched`).

Links keep their class (coloured, with a legend) and the directed edges they stand for, so a heatmap
(:mod:`~trnsim.outputs.draw.heat`) colours each drawn link by the busiest of its edges. With
failures, the healthy system is drawn and what failed is shown dashed in grey. :func:`save`
(:mod:`~trnsim.outputs.draw.render`) renders a layout to PNG, SVG or PDF with matplotlib (the
optional ``plot`` extra).
"""

from trnsim.outputs.draw.heat import heatmap, link_shares
from trnsim.outputs.draw.layout import layout
from trnsim.outputs.draw.layout_torus import drawable
from trnsim.outputs.draw.render import BOTTLENECK_SHARE, FORMATS, save
from trnsim.outputs.draw.shapes import Box, Drawing, Mark, Segment, link_key

__all__ = [
    "BOTTLENECK_SHARE",
    "FORMATS",
    "Box",
    "Drawing",
    "Mark",
    "Segment",
    "drawable",
    "heatmap",
    "layout",
    "link_key",
    "link_shares",
    "save",
]
