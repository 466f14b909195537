"""What a spec would build, counted in closed form before anything is built: oversized specs
(``racks: 100000``, a torus axis of 10**9, 64 ranks on each of 100,000 chips) are refused before any
memory is spent.
"""

import math
from dataclasses import dataclass

from trnsim import limits
from trnsim.spec.schema import Spec


@dataclass(frozen=True)
class SizeEstimate:
    """What a spec would build, computed from its numbers alone (before building anything)."""

    chips: int
    switches: int
    links: int
    ranks_per_chip: int = 1

    @property
    def rank_endpoints(self) -> int:
        """Rank nodes :func:`trnsim.topology.builders.expand_ranks` adds (one per rank, each with a
        link to its chip), when chips host several ranks."""
        return self.chips * self.ranks_per_chip if self.ranks_per_chip > 1 else 0

    @property
    def devices(self) -> int:
        """Every node of the topology the commands use: chips, switches and rank endpoints."""
        return self.chips + self.switches + self.rank_endpoints

    @property
    def all_links(self) -> int:
        """Links of the built fabric plus the rank-to-chip links."""
        return self.links + self.rank_endpoints


def estimate(spec: Spec) -> SizeEstimate:
    """Count the chips, switches and links :func:`trnsim.topology.builders.build` would create, in
    closed form.

    Used to refuse oversized specs (``racks: 100000``, a torus axis of 10**9, 64 ranks on each of
    100,000 chips) before any memory is spent; exact for every builder and for :func:`~trnsim.topology.builders.expand_ranks`
    (a test compares it with what they make).
    """
    size = _estimate_fabric(spec)
    return SizeEstimate(size.chips, size.switches, size.links, spec.chip.ranks)


def _estimate_fabric(spec: Spec) -> SizeEstimate:
    """The built fabric's counts (no rank endpoints): the builders' loops, summed in closed form."""
    if spec.kind == "torus":
        sizes = [axis.size for axis in spec.torus.axes]
        chips = math.prod(sizes)
        links = sum(
            chips // axis.size * (axis.size if axis.wrap else axis.size - 1)
            for axis in spec.torus.axes
            if axis.size > 1
        )
        return SizeEstimate(chips, 0, links)
    layout = spec.switched
    nodes = layout.racks * layout.nodes_per_rack
    slots = len(layout.slots)
    chips, switches, links = nodes * slots, 0, 0
    local = layout.node_local
    if local is not None and local.kind == "direct":
        links += nodes * (slots * (slots - 1) // 2)
    elif local is not None:
        switches += nodes * local.switches
        links += nodes * local.switches * slots
    fabric = layout.switch_fabric
    if fabric is not None:
        switches += layout.racks * len(fabric.planes) * fabric.switches_per_plane
        members = sum(len(set(plane.slots)) for plane in fabric.planes)
        links += nodes * fabric.switches_per_plane * members
    if layout.cross_rack is not None:
        links += (layout.racks // 2) * layout.nodes_per_rack * slots
    return SizeEstimate(chips, switches, links)


def check_size(spec: Spec, where: str) -> SizeEstimate:
    """Refuse a spec that would build more devices or links than the limits allow (before building).

    Raises
    ------
    UsageError
        Naming the file, the count and the limit (and the environment variable that raises it).
    """
    size = estimate(spec)
    limits.DEVICES.check(size.devices, f"{where}: the topology would have")
    limits.LINKS.check(size.all_links, f"{where}: the topology would have")
    return size
