"""Failed components removed: the topology rebuilt without them, spare lanes used first.

References are resolved on the healthy system (:mod:`trnsim.topology.faults.specs`), all faults
first, then removed together: ranks in later faults never shift. The surviving chips are renumbered
in their old order (names are stable).

Spare lanes: where a chip wires more lanes of a class than it activates (Trainium3 wires 80
backplane lanes and runs 64), the difference is a pool of spares against backplane, cable and
switch-tray faults (docs/sources.md#trn3-chip). After a fault the chip's surviving lanes of that
class run ``min(active before, wired after)`` lanes, spread evenly (as the builder spreads them):
losing 16 of 80 lanes costs nothing, the 17th costs 1/64 of the class's bandwidth. Failed lanes
(``lanes:``) come off the class's links in proportion to their lanes, as the spare pool is not tied
to a port (an assumption: which lanes are spares is not published); a failed switch, switch tray or
cable takes its whole port, and the chip's other ports of the class absorb it from the spares.
"""

from dataclasses import replace

from trnsim.errors import UsageError
from trnsim.topology.faults.specs import chip_classes, parse_fault
from trnsim.topology.graph import Topology
from trnsim.topology.hardware import connected_parts


def apply_faults(topology: Topology, texts: list[str], keep_largest: bool = False) -> Topology:
    """``topology`` without the failed components (see the module docstring).

    Parameters
    ----------
    topology : Topology
        The healthy system (the texts' references name its parts).
    texts : list of str
        Failures, ``KIND:WHAT`` each (:mod:`trnsim.topology.faults.specs`).
    keep_largest : bool
        When the failures split the chips, keep the part with the most chips (the rest is lost)
        instead of refusing.

    Raises
    ------
    UsageError
        For a fault that names nothing, or failures that split the chips (naming the parts).
    """
    if not texts:
        return topology
    faults = [parse_fault(topology, text) for text in texts]
    # the same part twice is a slip (or two ways of naming it); failed lanes add up instead
    for n, fault in enumerate(faults):
        for earlier in faults[:n]:
            if not fault.lanes and (fault.nodes, fault.links) == (earlier.nodes, earlier.links):
                same = "is given twice" if fault.text == earlier.text else f"fails what {earlier.text!r} does"
                raise UsageError(f"{{fail}} {fault.text!r} {same}: give each failure once")
    dead_nodes = frozenset().union(*(f.nodes for f in faults))
    dead_links = frozenset().union(*(f.links for f in faults))
    failed_lanes: dict[tuple[str, str], int] = {}
    for fault in faults:
        for chip, cls, count in fault.lanes:
            failed_lanes[(chip, cls)] = failed_lanes.get((chip, cls), 0) + count
    before = {chip: chip_classes(topology, chip) for chip in topology.chips if chip not in dead_nodes}
    links = {
        ends: dict(data)
        for ends, data in topology.links.items()
        if ends not in dead_links and not (dead_nodes & set(ends))
    }
    _fail_lanes(links, failed_lanes, before, dead_nodes)
    _spares_first(links, before)
    nodes = {name: data for name, data in topology.nodes.items() if name not in dead_nodes}
    chips = [chip for chip in topology.chips if chip not in dead_nodes]
    if len(chips) < 2:
        raise UsageError(f"{topology.where}: the failures ({', '.join(texts)}) leave fewer than two chips")
    cuts = {name: side & nodes.keys() for name, side in topology.cuts.items()}
    cuts = {name: side for name, side in cuts.items() if side and len(side) < len(nodes)}
    failed = replace(  # a new object: no cached property of the healthy system survives
        topology, nodes=nodes, links=links, chips=chips, cuts=cuts, faults=topology.faults + tuple(texts)
    )
    return _connected(topology, failed, texts, keep_largest)


def _ends_at(links: dict) -> dict[str, list[tuple[str, str]]]:
    """The bundles at each device."""
    at: dict[str, list[tuple[str, str]]] = {}
    for ends in links:
        for end in ends:
            at.setdefault(end, []).append(ends)
    return at


def _fail_lanes(links: dict, failed_lanes: dict, before: dict, dead_nodes: frozenset) -> None:
    """Take the failed lanes off each chip's links of their class (a link left without lanes goes)."""
    at = _ends_at(links)
    for (chip, cls), count in failed_lanes.items():
        if chip in dead_nodes:
            continue
        mine = [e for e in at.get(chip, []) if e in links and links[e]["cls"] == cls]
        wired = sum(links[e]["lanes"] for e in mine)
        spares = before[chip][cls][0] - before[chip][cls][1] > 1e-9
        for k, ends in enumerate(mine):
            if spares:  # the spare pool is not tied to a port: the loss spreads over the class's ports
                lost = count * links[ends]["lanes"] / wired
            else:  # whole lanes off each port in turn (a port keeps running on what it has left)
                lost = min(links[ends]["lanes"], count // len(mine) + (1 if k < count % len(mine) else 0))
            links[ends]["lanes"] -= lost
            if links[ends]["lanes"] <= 1e-9:
                del links[ends]


def _spares_first(links: dict, before: dict) -> None:
    """Spares first: each chip's surviving lanes of a class run min(active before, wired now);
    a link whose ends changed runs at its weaker end's share (its rate scaled with its lanes)."""
    at = _ends_at(links)
    after = {chip: _classes_of(links, at.get(chip, [])) for chip in before}

    def share(end: str, cls: str) -> float:
        """The share of its wired lanes of ``cls`` a device runs (1 for a switch)."""
        if end not in before:
            return 1.0
        active_before = before[end][cls][1]
        wired_now = after[end][cls][0]
        return min(active_before, wired_now) / wired_now if wired_now else 0.0

    changed = {
        (chip, cls)
        for chip in before
        for cls, (wired, _) in after[chip].items()
        if wired != before[chip][cls][0]
    }
    for (u, v), data in links.items():
        cls = data["cls"]
        if (u, cls) in changed or (v, cls) in changed:
            active = data["lanes"] * min(share(u, cls), share(v, cls))  # a link runs at its weaker end
            scale = active / data["active_lanes"] if data["active_lanes"] else 0.0
            data["bw_gbps"] *= scale
            data["raw_bw_gbps"] = data.get("raw_bw_gbps", data["bw_gbps"]) * scale
            data["active_lanes"] = active


def _connected(topology: Topology, failed: Topology, texts: list[str], keep_largest: bool) -> Topology:
    """``failed`` when its chips still form one part; else its largest part (``keep_largest``), or
    a refusal naming the parts."""
    parts = connected_parts(failed)
    if len(parts) == 1:
        return failed
    if not keep_largest:
        shown = "; ".join(
            f"{len(chips)} chips ({chips[0]}{', ...' if len(chips) > 1 else ''})" for chips, _ in parts[:4]
        )
        raise UsageError(
            f"{topology.where}: the failures ({', '.join(texts)}) split the chips into {len(parts)} parts: {shown}"
        )
    if len(parts[0][0]) < 2:  # every chip cut off alone (a single switch plane failed): nothing runs
        raise UsageError(f"{topology.where}: the failures ({', '.join(texts)}) leave no two chips connected")
    keep = parts[0][1]
    return replace(
        failed,
        nodes={n: d for n, d in failed.nodes.items() if n in keep},
        links={ends: d for ends, d in failed.links.items() if ends[0] in keep},
        chips=[chip for chip in failed.chips if chip in keep],
        cuts={
            name: side & keep
            for name, side in failed.cuts.items()
            if side & keep and len(side & keep) < len(keep)
        },
    )


def _classes_of(links: dict, ends_list: list) -> dict[str, tuple[float, float]]:
    """Wired and active lanes of each link class over the bundles ``ends_list``."""
    out: dict[str, list[float]] = {}
    for ends in ends_list:
        data = links[ends]
        wired_active = out.setdefault(data["cls"], [0.0, 0.0])
        wired_active[0] += data["lanes"]
        wired_active[1] += data["active_lanes"]
    return {cls: (w, a) for cls, (w, a) in out.items()}
