"""Parametric builders: an N-dimensional torus and a switched multi-rack fabric.

Builders never use ``networkx.grid_graph(periodic=True)``: it merges the two wrap links of a size-2
ring and reverses coordinate order. Here a size-2 ring keeps both links as one bundle with
``parallel=2``, and coordinates are enumerated row-major with the last axis fastest.
"""

import itertools
import math
from dataclasses import dataclass

from trnsim import limits
from trnsim.errors import ConfigError
from trnsim.spec.schema import Spec
from trnsim.topology.graph import Topology

# Gray code of a 4-ring: consecutive positions differ in one bit, so C4 is the 2-cube.
_GRAY4 = (0b00, 0b01, 0b11, 0b10)
_GRAY2 = (0, 1)


def build(spec: Spec) -> Topology:
    """Build the topology a validated spec describes, its links at their effective rate.

    Every link keeps its raw rate (``raw_bw_gbps``, lanes x lane rate) and its ``efficiency``;
    ``bw_gbps`` is their product, the rate payload moves at, and what every model uses.
    """
    topology = torus(spec) if spec.kind == "torus" else switched_fabric(spec)
    for data in topology.links.values():
        data["raw_bw_gbps"] = data["bw_gbps"]
        data["efficiency"] = spec.efficiency.of(data["cls"])
        data["bw_gbps"] = data["raw_bw_gbps"] * data["efficiency"]
    return topology


RANK_CLASS = "core"  # link class of the on-chip link between a rank and its chip


def expand_ranks(topology: Topology) -> Topology:
    """Split every chip into the ranks (cores) it hosts, when the spec gives more than one.

    Each rank becomes an endpoint (``kind`` chip, ``rank``, the chip's location) joined to its chip
    by an on-chip link of ``chip.rank_gbps`` (at the efficiency of class ``core``); the chip becomes the device its ranks' traffic passes
    through (``kind`` switch, ``role`` chip), paying the relay latency. Ranks of one chip are
    consecutive, as nccom-test numbers them. Tori lose their coordinate arithmetic (``hcube``).
    """
    spec = topology.spec
    ranks = spec.chip.ranks
    if ranks == 1:
        return topology
    if spec.chip.rank_gbps is None:
        raise ConfigError(
            f"{topology.where}: chip.rank_gbps: expected the bandwidth (GB/s per direction) between a rank "
            f"and its chip, needed when chip.ranks is {ranks}"
        )
    share = spec.efficiency.of(RANK_CLASS)
    nodes: dict[str, dict] = {}
    links: dict = {}
    members: dict[str, list[str]] = {}
    for chip in topology.chips:
        attrs = topology.nodes[chip]
        members[chip] = []
        for core in range(ranks):
            name = f"{chip}.c{core}"
            rank_attrs = {k: v for k, v in attrs.items() if k not in ("hcube", "rank", "latency_ns")}
            nodes[name] = {**rank_attrs, "rank": len(nodes), "chip": chip, "core": core, "latency_ns": 0.0}
            members[chip].append(name)
    for chip in topology.chips:
        attrs = topology.nodes[chip]
        location = {k: v for k, v in attrs.items() if k not in ("kind", "rank", "hcube")}
        nodes[chip] = {**location, "kind": "switch", "role": "chip", "model": spec.chip.name, "plane": None}
    for name, data in topology.nodes.items():
        if data["kind"] == "switch":
            nodes[name] = data
    for chip, names in members.items():
        for name in names:
            links[(name, chip)] = {
                "cls": RANK_CLASS,
                "lanes": 0,
                "active_lanes": 0,
                "bw_gbps": spec.chip.rank_gbps * share,
                "raw_bw_gbps": spec.chip.rank_gbps,
                "efficiency": share,
                "latency_ns": 0.0,
                "medium": "onchip",
                "parallel": 1,
            }
    links.update(topology.links)
    cuts = {
        name: side | frozenset(rank for chip in side if chip in members for rank in members[chip])
        for name, side in topology.cuts.items()
    }
    # a chip's ranks share its links: each chip against the rest is a natural cut
    cuts.update({f"chip-{chip}": frozenset([chip, *names]) for chip, names in members.items()})
    chips = [name for names in members.values() for name in names]
    expanded = Topology(spec=spec, nodes=nodes, links=links, chips=chips, cuts=cuts)
    expanded.path, expanded.overrides, expanded.faults = topology.path, topology.overrides, topology.faults
    return expanded


@dataclass(frozen=True)
class SizeEstimate:
    """What a spec would build, computed from its numbers alone (before building anything)."""

    chips: int
    switches: int
    links: int
    ranks_per_chip: int = 1

    @property
    def rank_endpoints(self) -> int:
        """Rank nodes :func:`expand_ranks` adds (one per rank, each with a link to its chip), when
        chips host several ranks."""
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
    """Count the chips, switches and links :func:`build` would create, in closed form.

    Used to refuse oversized specs (``racks: 100000``, a torus axis of 10**9, 64 ranks on each of
    100,000 chips) before any memory is spent; exact for every builder and for :func:`expand_ranks`
    (a test compares it with what they make).
    """
    size = _estimate_fabric(spec)
    return SizeEstimate(size.chips, size.switches, size.links, spec.chip.ranks)


def _estimate_fabric(spec: Spec) -> SizeEstimate:
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


def _add_link(
    links: dict,
    u: str,
    v: str,
    *,
    cls: str,
    lanes: int,
    active_lanes: float,
    lane_gbps: float,
    latency_ns: float,
    medium: str,
) -> None:
    """Add one link to the bundle between ``u`` and ``v`` (bundles add up lanes and bandwidth)."""
    data = links.get((u, v)) or links.get((v, u))
    if data is not None:
        data["lanes"] += lanes
        data["active_lanes"] += active_lanes
        data["bw_gbps"] += active_lanes * lane_gbps
        data["parallel"] += 1
        return
    links[(u, v)] = {
        "cls": cls,
        "lanes": lanes,
        "active_lanes": active_lanes,
        "bw_gbps": active_lanes * lane_gbps,
        "latency_ns": latency_ns,
        "medium": medium,
        "parallel": 1,
    }


def torus(spec: Spec) -> Topology:
    """Build an N-dimensional torus with per-axis lanes (and so bandwidth).

    Parameters
    ----------
    spec : Spec
        A spec of kind ``torus``; axis ``i`` links coordinate ``c`` to ``c+1 (mod size)``.

    Returns
    -------
    Topology
        Chips named ``<axis><coord>`` joined by dots (``z1.x2.y3``); ranks row-major, last axis fastest.
        Tori whose axes are all of size 1, 2 or 4 are hypercubes: chips carry ``hcube``, their cube
        address. A ``hypercube_plane`` adds ``tray`` and ``slot`` labels (bit 0 of the plane's
        4-cube address is the slot; its links are PCB traces).
    """
    axes = spec.torus.axes
    latency = spec.latency
    lane_gbps = spec.chip.lane_gbps
    coords = list(itertools.product(*(range(axis.size) for axis in axes)))
    names = [".".join(f"{axis.name}{c}" for axis, c in zip(axes, coord, strict=True)) for coord in coords]
    index_of_axis = {axis.name: i for i, axis in enumerate(axes)}
    is_cube = all(axis.size in (1, 2, 4) for axis in axes) and not any(axis.twist for axis in axes)
    plane = spec.torus.hypercube_plane
    server_axis = spec.torus.server_axis

    nodes: dict[str, dict] = {}
    for rank, (name, coord) in enumerate(zip(names, coords, strict=True)):
        attrs = {"kind": "chip", "rank": rank, "coord": coord, "latency_ns": latency.relay_ns}
        if server_axis is not None:
            attrs["server"] = coord[index_of_axis[server_axis]]
        if is_cube:
            attrs["hcube"] = _cube_address(coord, [axis.size for axis in axes])
        if plane is not None:
            address = _cube_address([coord[index_of_axis[a]] for a in plane], [4, 4])
            attrs["tray"], attrs["slot"] = address >> 1, address & 1
        nodes[name] = attrs

    links: dict = {}
    strides = [1] * len(axes)
    for i in range(len(axes) - 2, -1, -1):
        strides[i] = strides[i + 1] * axes[i + 1].size
    for rank, coord in enumerate(coords):
        for i, axis in enumerate(axes):
            c = coord[i]
            if axis.size == 1 or (c + 1 == axis.size and not axis.wrap):
                continue
            neighbour = rank + ((c + 1) % axis.size - c) * strides[i]
            if axis.twist and c + 1 == axis.size:  # a twisted wrap link lands shifted on other axes
                landing = list(coord)
                landing[i] = 0
                for other, offset in axis.twist.items():
                    j = index_of_axis[other]
                    landing[j] = (landing[j] + offset) % axes[j].size
                neighbour = sum(x * stride for x, stride in zip(landing, strides, strict=True))
            medium = axis.medium
            if plane is not None and axis.name == plane[1] and (_GRAY4[c] ^ _GRAY4[(c + 1) % 4]) == 1:
                medium = "pcb"  # bit 0 of the plane's cube address: the two chips of one tray
            _add_link(
                links,
                names[rank],
                names[neighbour],
                cls=axis.name,
                lanes=axis.lanes,
                active_lanes=axis.lanes,
                lane_gbps=lane_gbps,
                latency_ns=latency.link_ns,
                medium=medium,
            )

    cuts = {}
    for i, axis in enumerate(axes):
        if axis.size >= 2:
            half = frozenset(n for n, coord in zip(names, coords, strict=True) if coord[i] < axis.size // 2)
            cuts[f"{axis.name}-halves"] = half
    return Topology(spec=spec, nodes=nodes, links=links, chips=names, cuts=cuts)


def _cube_address(coord, sizes) -> int:
    address = 0
    for c, size in zip(coord, sizes, strict=True):
        bits = {1: 0, 2: 1, 4: 2}[size]
        code = _GRAY4[c] if size == 4 else _GRAY2[c] if size == 2 else 0
        address = (address << bits) | code
    return address


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
    layout = spec.switched
    latency = spec.latency
    lane_gbps = spec.chip.lane_gbps
    nodes: dict[str, dict] = {}
    links: dict = {}
    chips: list[str] = []

    def chip_name(rack: int, node: int, slot: str) -> str:
        return f"r{rack}.n{node}.{slot}"

    for rack in range(layout.racks):
        for node in range(layout.nodes_per_rack):
            for slot_index, slot in enumerate(layout.slots):
                name = chip_name(rack, node, slot)
                nodes[name] = {
                    "kind": "chip",
                    "rank": len(chips),
                    "rack": rack,
                    "node": node,
                    "slot": slot,
                    "slot_index": slot_index,
                    "latency_ns": latency.relay_ns,
                }
                chips.append(name)

    local = layout.node_local
    if local is not None:
        model = spec.switch_models.get(local.switch_model) if local.switch_model else None
        link = {
            "cls": local.cls,
            "lanes": local.lanes_per_link,
            "active_lanes": local.lanes_per_link,
            "lane_gbps": lane_gbps,
            "latency_ns": latency.link_ns,
            "medium": local.medium,
        }
        for rack in range(layout.racks):
            for node in range(layout.nodes_per_rack):
                members = [chip_name(rack, node, slot) for slot in layout.slots]
                if local.kind == "direct":
                    for u, v in itertools.combinations(members, 2):
                        _add_link(links, u, v, **link)
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
                        _add_link(links, member, switch, **link)

    fabric = layout.switch_fabric
    if fabric is not None:
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
                            _add_link(
                                links,
                                chip_name(rack, node, slot),
                                switch,
                                cls=fabric.cls,
                                lanes=fabric.lanes_per_link,
                                active_lanes=fabric.lanes_per_link * derate,
                                lane_gbps=lane_gbps,
                                latency_ns=latency.link_ns,
                                medium=fabric.medium,
                            )

    cross = layout.cross_rack
    if cross is not None:
        for rack in range(0, layout.racks, 2):
            for node in range(layout.nodes_per_rack):
                for slot in layout.slots:
                    _add_link(
                        links,
                        chip_name(rack, node, slot),
                        chip_name(rack + 1, node, slot),
                        cls=cross.cls,
                        lanes=cross.lanes,
                        active_lanes=cross.lanes,
                        lane_gbps=lane_gbps,
                        latency_ns=latency.link_ns,
                        medium=cross.medium,
                    )

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
    return Topology(spec=spec, nodes=nodes, links=links, chips=chips, cuts=cuts)


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
