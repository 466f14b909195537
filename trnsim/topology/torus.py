"""The torus builder: an N-dimensional torus with per-axis lanes, hypercube addresses and twists.

Builders never use ``networkx.grid_graph(periodic=True)``: it merges the two wrap links of a size-2
ring and reverses coordinate order. Here a size-2 ring keeps both links as one bundle with
``parallel=2``, and coordinates are enumerated row-major with the last axis fastest.
"""

import itertools

from trnsim.spec.schema import Spec
from trnsim.topology.graph import Topology, add_link

# Gray code of a 4-ring: consecutive positions differ in one bit, so C4 is the 2-cube.
_GRAY4 = (0b00, 0b01, 0b11, 0b10)
_GRAY2 = (0, 1)


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
            add_link(
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
    """A hypercube chip's address: each axis's Gray code (2 bits for a 4-ring, 1 for a pair), the
    first axis in the highest bits, so that torus neighbours differ in one bit."""
    address = 0
    for c, size in zip(coord, sizes, strict=True):
        bits = {1: 0, 2: 1, 4: 2}[size]
        code = _GRAY4[c] if size == 4 else _GRAY2[c] if size == 2 else 0
        address = (address << bits) | code
    return address
