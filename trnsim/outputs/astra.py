"""Export a topology as an ASTRA-sim analytical network file, where the fabric maps onto one.

ASTRA-sim's analytical backend describes a network as dimensions, each a ``Ring``,
``FullyConnected`` or ``Switch`` of some NPUs with one bandwidth and latency; NPU ids run with the
first dimension fastest. It counts a GB as 2^30 bytes, so bandwidths are converted from trnsim's
10^9. What maps:

* a torus whose axes all wrap: one ``Ring`` per axis (exact);
* a switched fabric with one switch plane: a ``Switch`` per rack (the plane's bandwidth per chip),
  an on-node switch level as a ``Switch`` per node, and a ``Ring`` of the paired racks. Direct
  on-tray links (PCB) have no building block and are left out, which the file says.

What cannot be expressed is refused with the reason: several switch planes (chips of different
planes meet only through relaying chips), unwrapped torus axes, more than two racks.
"""

from trnsim.errors import UsageError
from trnsim.topology.graph import Topology

_GIB_PER_GB = 1e9 / 2**30


def _astra_bw(gbps: float) -> float:
    return round(gbps * _GIB_PER_GB, 6)


def _number(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


# one ASTRA-sim dimension: kind, NPUs, bandwidth (GB/s, 1e9) per chip, latency (ns), what it stands for
Dim = tuple[str, int, float, float, str]


def to_astra_sim(topology: Topology) -> str:
    """The ASTRA-sim analytical network YAML for ``topology``.

    Parameters
    ----------
    topology : Topology
        A torus whose axes all wrap, or a switched fabric of one switch plane and at most two racks.

    Returns
    -------
    str
        The file's text: comments saying what each dimension stands for, then the four lists.

    Raises
    ------
    UsageError
        Saying why the system cannot be expressed (see the module docstring).
    """
    _check_expressible(topology)
    notes: list[str] = []
    dims = _torus_dims(topology) if topology.spec.kind == "torus" else _switched_dims(topology, notes)
    if not dims:
        raise UsageError(f"{topology.name} cannot be expressed in ASTRA-sim: no dimension to describe")
    lines = [
        f"# ASTRA-sim analytical network for {topology.name}, exported by trnsim",
        "# bandwidth in ASTRA-sim's GB/s (2^30 bytes per second) per NPU and dimension, at trnsim's "
        "effective link rate (raw x the file's link efficiency); latency in ns",
        *[
            f"# dim {i}: {kind} of {npus} ({what}); {bw:g} GB/s (1e9) per chip"
            for i, (kind, npus, bw, _, what) in enumerate(dims)
        ],
        *[f"# note: {note}" for note in notes],
        f"topology: [ {', '.join(d[0] for d in dims)} ]",
        f"npus_count: [ {', '.join(str(d[1]) for d in dims)} ]",
        f"bandwidth: [ {', '.join(_number(_astra_bw(d[2])) for d in dims)} ]",
        f"latency: [ {', '.join(f'{d[3]:g}' for d in dims)} ]",
    ]
    total = 1
    for d in dims:
        total *= d[1]
    if total != topology.n_ranks:
        raise UsageError(f"{topology.name}: dimensions give {total} NPUs, not {topology.n_ranks} chips")
    return "\n".join(lines) + "\n"


def _check_expressible(topology: Topology) -> None:
    """Refuse what no ASTRA-sim dimension describes whatever the fabric: several ranks per chip, failures."""
    spec = topology.spec
    if spec.chip.ranks > 1:
        raise UsageError(
            f"{topology.name} cannot be expressed in ASTRA-sim: its chips host {spec.chip.ranks} ranks each "
            "(export with {overrides} chip.ranks=1 for one NPU per chip)"
        )
    if topology.faults:
        raise UsageError(
            f"{topology.name} with failed components ({', '.join(topology.faults)}) cannot be expressed in "
            "ASTRA-sim's regular dimensions"
        )


def _torus_dims(topology: Topology) -> list[Dim]:
    """A ``Ring`` per axis of more than one chip, the fastest (trnsim's last) first."""
    spec = topology.spec
    dims: list[Dim] = []
    for axis in reversed(spec.torus.axes):  # trnsim's last axis is fastest; ASTRA-sim's first dim is
        if axis.size == 1:
            continue
        if not axis.wrap:
            raise UsageError(f"{topology.name}: axis {axis.name} does not wrap; ASTRA-sim's Ring does")
        if axis.twist:
            raise UsageError(f"{topology.name}: axis {axis.name} is twisted; ASTRA-sim's Ring is not")
        bw = axis.lanes * spec.chip.lane_gbps * spec.efficiency.of(axis.name)
        if axis.size == 2:
            bw *= 2  # a ring of two keeps both links between the pair
        dims.append(("Ring", axis.size, bw, spec.latency.link_ns, f"torus axis {axis.name}"))
    return dims


def _switched_dims(topology: Topology, notes: list[str]) -> list[Dim]:
    """On-node switches, the rack's switch plane, the paired racks; what is approximated or left
    out goes to ``notes``."""
    spec = topology.spec
    link_ns = spec.latency.link_ns
    layout = spec.switched
    fabric = layout.switch_fabric
    if fabric is not None and len(fabric.planes) > 1:
        raise UsageError(
            f"{topology.name} cannot be expressed in ASTRA-sim: its {len(fabric.planes)} switch planes each reach "
            "only some slots, so chips of different planes meet through relaying chips, and ASTRA-sim's "
            "analytical backend has no such building block (single-plane fabrics export)"
        )
    if layout.racks > 2:
        raise UsageError(
            f"{topology.name} cannot be expressed in ASTRA-sim: more than two racks are not paired"
        )
    local = layout.node_local
    per_class = {}  # a chip's bandwidth per link class
    for data in topology.incident[topology.chips[0]]:
        per_class[data["cls"]] = per_class.get(data["cls"], 0.0) + data["bw_gbps"]
    dims: list[Dim] = []
    if local is not None and local.kind == "switches" and len(layout.slots) > 1:
        switch_ns = 2 * link_ns + spec.latency.node_switch_ns
        dims.append(
            ("Switch", len(layout.slots), per_class[local.cls], switch_ns, f"on-node switches ({local.cls})")
        )
    elif local is not None:
        notes.append(
            f"direct {local.cls} links between the chips of a node are left out "
            f"({per_class.get(local.cls, 0):g} GB/s per chip): ASTRA-sim has no building block for them"
        )
    if fabric is not None:
        npus = layout.nodes_per_rack if dims else layout.nodes_per_rack * len(layout.slots)
        switch_ns = 2 * link_ns + spec.latency.switch_ns
        dims.append(
            ("Switch", npus, per_class[fabric.cls], switch_ns, f"switch plane per rack ({fabric.cls})")
        )
        if dims[0][0] == "Switch" and len(dims) == 2:
            notes.append(
                "the rack switch reaches every chip of the rack; as an ASTRA-sim dimension it joins "
                "only chips in the same slot of different nodes (an approximation)"
            )
    if layout.racks == 2 and layout.cross_rack is not None:
        dims.append(("Ring", 2, per_class[layout.cross_rack.cls], link_ns, "paired racks (cross-rack links)"))
    return dims
