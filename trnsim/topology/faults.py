"""Failed components: the topology rebuilt without them, spare lanes used first.

A fault is written ``KIND:WHAT`` (``--fail``, repeatable, or ``--set fail=KIND:WHAT``):

============================  =====================================================================
``chip:REF``                  a chip (its rank in the healthy system, or its name) and its links
``link:A,B``                  the link bundle between two devices (names; ranks for chips)
``link:CLASS:K``              the K-th link of a class, in the file's order (``link:xrack:3``)
``lanes:CHIP:N[:CLASS]``      N lanes of the chip's links of one class (default: the class that has
                              spare lanes, or the chip's only class)
``switch:NAME``               a switch and its links
``plane:NAME[:RACK]``         every switch of a switch plane (in one rack, or all)
``switch-tray:K[:RACK]``      the switches of switch tray K (in one rack, or in every rack)
``cable:CHIP``                the chip's cross-rack cable (its link to the paired rack)
============================  =====================================================================

References are resolved on the healthy system, all faults first, then removed together: ranks in
later faults never shift. The surviving chips are renumbered in their old order (names are stable).

Spare lanes: where a chip wires more lanes of a class than it activates (Trainium3 wires 80
backplane lanes and runs 64), the difference is a pool of spares against backplane, cable and
switch-tray faults (docs/sources.md#trn3-chip). After a fault the chip's surviving lanes of that
class run ``min(active before, wired after)`` lanes, spread evenly (as the builder spreads them):
losing 16 of 80 lanes costs nothing, the 17th costs 1/64 of the class's bandwidth. Failed lanes
(``lanes:``) come off the class's links in proportion to their lanes, as the spare pool is not tied
to a port (an assumption: which lanes are spares is not published); a failed switch, switch tray or
cable takes its whole port, and the chip's other ports of the class absorb it from the spares.

A switch tray holds ``switched.switch_fabric.switches_per_tray`` switches of its rack
(:mod:`trnsim.topology.trays`: GB200 NVL72's 9 trays of 2; one switch of each plane when the file
does not say, an assumption); tray numbers outside the file's trays are refused.
"""

from dataclasses import dataclass, replace

from trnsim.errors import UsageError
from trnsim.topology.graph import Topology
from trnsim.topology.hardware import connected_parts

FAIL_KEY = "fail"  # --fail SPEC travels with the --set edits as fail=SPEC
KINDS = ("chip", "link", "lanes", "switch", "plane", "switch-tray", "cable")


@dataclass(frozen=True)
class Fault:
    """One failed component, as the user wrote it and as devices and links of the healthy system."""

    text: str
    nodes: frozenset[str] = frozenset()  # devices removed with their links
    links: frozenset[tuple[str, str]] = frozenset()  # link bundles removed
    lanes: tuple[tuple[str, str, int], ...] = ()  # (chip, class, failed lanes)


def _chip(topology: Topology, ref: str, fault: str) -> str:
    try:
        return topology.resolve_chip(ref)
    except UsageError as exc:
        raise UsageError(f"--fail {fault!r}: {exc}") from None


def _device(topology: Topology, ref: str, fault: str) -> str:
    ref = ref.strip()
    if ref in topology.nodes:
        return ref
    return _chip(topology, ref, fault)


def _link_key(topology: Topology, u: str, v: str, fault: str) -> tuple[str, str]:
    for key in ((u, v), (v, u)):
        if key in topology.links:
            return key
    raise UsageError(f"--fail {fault!r}: no link joins {u} and {v}")


def parse_fault(topology: Topology, text: str) -> Fault:
    """Resolve one ``KIND:WHAT`` on ``topology`` (the healthy system)."""
    fault = text.strip()
    kind, _, what = fault.partition(":")
    kind, what = kind.strip().lower(), what.strip()
    if kind not in KINDS or not what:
        raise UsageError(
            f"--fail {text!r}: expected KIND:WHAT with KIND one of {', '.join(KINDS)} (e.g. chip:5, "
            "link:r0.n0.A,r0.A.sw0, lanes:5:17, switch:r0.A.sw3, switch-tray:0, cable:5)"
        )
    nodes = topology.nodes
    if kind == "chip":
        return Fault(fault, nodes=frozenset({_chip(topology, what, fault)}))
    if kind == "switch":
        if nodes.get(what, {}).get("kind") != "switch":
            raise UsageError(f"--fail {text!r}: {what!r} is not a switch of {topology.name}")
        return Fault(fault, nodes=frozenset({what}))
    if kind == "link":
        if "," in what:
            u, _, v = what.partition(",")
            a, b = _device(topology, u, fault), _device(topology, v, fault)
            return Fault(fault, links=frozenset({_link_key(topology, a, b, fault)}))
        cls, _, index = what.rpartition(":")
        of_class = [ends for ends, data in topology.links.items() if data["cls"] == cls]
        if not cls or not index.isascii() or not index.isdigit() or not of_class:
            classes = sorted({data["cls"] for data in topology.links.values()})
            raise UsageError(
                f"--fail {text!r}: expected link:A,B (two devices) or link:CLASS:K with CLASS one of "
                f"{', '.join(classes)}"
            )
        if int(index) >= len(of_class):
            raise UsageError(
                f"--fail {text!r}: {topology.name} has {len(of_class)} {cls} links (0..{len(of_class) - 1})"
            )
        return Fault(fault, links=frozenset({of_class[int(index)]}))
    if kind == "cable":
        chip = _chip(topology, what, fault)
        rack = nodes[chip].get("rack")
        across = [
            ends
            for ends, data in topology.links.items()
            if chip in ends
            and rack is not None
            and nodes[ends[0] if ends[1] == chip else ends[1]].get("rack") not in (rack, None)
        ]
        if not across:
            raise UsageError(f"--fail {text!r}: {chip} has no cross-rack cable")
        return Fault(fault, links=frozenset(across))
    if kind == "lanes":
        parts = what.split(":")
        if len(parts) not in (2, 3) or not parts[1].isascii() or not parts[1].isdigit() or int(parts[1]) < 1:
            raise UsageError(f"--fail {text!r}: expected lanes:CHIP:N[:CLASS] with N a whole number >= 1")
        chip = _chip(topology, parts[0], fault)
        classes = _chip_classes(topology, chip)
        if len(parts) == 3:
            cls = parts[2].strip()
            if cls not in classes:
                raise UsageError(
                    f"--fail {text!r}: {chip} has no {cls!r} links (it has {', '.join(classes)})"
                )
            chosen = [cls]
        else:
            spare = [cls for cls, (wired, active) in classes.items() if active < wired - 1e-9]
            if len(spare) != 1 and len(classes) != 1:
                raise UsageError(
                    f"--fail {text!r}: name the class, lanes:{parts[0]}:{parts[1]}:CLASS with CLASS one of "
                    f"{', '.join(classes)} ({'none has' if not spare else 'several have'} spare lanes)"
                )
            chosen = spare or list(classes)
        count = int(parts[1])
        (cls,) = chosen
        if count > classes[cls][0]:
            raise UsageError(f"--fail {text!r}: {chip} wires {classes[cls][0]:g} lanes of {cls}")
        return Fault(fault, lanes=((chip, cls, count),))
    return _switch_group(topology, kind, what, text)


def _switch_group(topology: Topology, kind: str, what: str, text: str) -> Fault:
    """``plane:NAME[:RACK]`` or ``switch-tray:K[:RACK]``: switches by plane or tray, and rack."""
    nodes, spec = topology.nodes, topology.spec
    name, _, rack_text = what.partition(":")
    name = name.strip()
    fabric = spec.switched.switch_fabric if spec.kind == "switched" else None
    if fabric is None:
        raise UsageError(f"--fail {text!r}: {topology.name} has no switch planes")
    racks = spec.switched.racks
    rack = None
    if rack_text:
        if not rack_text.isascii() or not rack_text.isdigit():
            raise UsageError(f"--fail {text!r}: expected {kind}:{'NAME' if kind == 'plane' else 'K'}[:RACK]")
        rack = int(rack_text)
        if rack >= racks:
            raise UsageError(f"--fail {text!r}: {topology.name} has racks 0..{racks - 1}")
    planes = [n for n, d in nodes.items() if d["kind"] == "switch" and d.get("role") == "plane"]
    if kind == "plane":
        names = [plane.name for plane in fabric.planes]
        if name not in names:
            raise UsageError(f"--fail {text!r}: {topology.name} has planes {', '.join(names)}")
        chosen = {n for n in planes if nodes[n]["plane"] == name and rack in (None, nodes[n]["rack"])}
        return Fault(text.strip(), nodes=frozenset(chosen))
    per_rack = fabric.trays_per_rack
    if not per_rack:
        raise UsageError(
            f"--fail {text!r}: {topology.name} has no switch trays (its switches sit on the "
            f"{spec.switched.node_label}'s board): fail them one by one with switch:NAME"
        )
    if not name.isascii() or not name.isdigit() or int(name) >= per_rack:
        where = "each of its racks" if racks > 1 else "its rack"
        raise UsageError(
            f"--fail {text!r}: {topology.name} has {per_rack} switch trays in {where}: K is 0..{per_rack - 1}"
        )
    chosen = {n for n in planes if nodes[n]["switch_tray"] == int(name) and rack in (None, nodes[n]["rack"])}
    return Fault(text.strip(), nodes=frozenset(chosen))


def _chip_classes(topology: Topology, chip: str) -> dict[str, tuple[float, float]]:
    """Wired and active lanes of each link class at ``chip``."""
    out: dict[str, list[float]] = {}
    for data in topology.incident[chip]:
        wired_active = out.setdefault(data["cls"], [0.0, 0.0])
        wired_active[0] += data["lanes"]
        wired_active[1] += data["active_lanes"]
    return {cls: (w, a) for cls, (w, a) in out.items()}


def apply_faults(topology: Topology, texts: list[str], keep_largest: bool = False) -> Topology:
    """``topology`` without the failed components (see the module docstring).

    Parameters
    ----------
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
                raise UsageError(f"--fail {fault.text!r} {same}: give each failure once")
    dead_nodes = frozenset().union(*(f.nodes for f in faults))
    dead_links = frozenset().union(*(f.links for f in faults))
    failed_lanes: dict[tuple[str, str], int] = {}
    for fault in faults:
        for chip, cls, count in fault.lanes:
            failed_lanes[(chip, cls)] = failed_lanes.get((chip, cls), 0) + count
    before = {chip: _chip_classes(topology, chip) for chip in topology.chips if chip not in dead_nodes}
    links = {
        ends: dict(data)
        for ends, data in topology.links.items()
        if ends not in dead_links and not (dead_nodes & set(ends))
    }
    at: dict[str, list[tuple[str, str]]] = {}
    for ends in links:
        for end in ends:
            at.setdefault(end, []).append(ends)
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
    # spares first: each chip's surviving lanes of a class run min(active before, wired now)
    at = {}
    for ends in links:
        for end in ends:
            at.setdefault(end, []).append(ends)
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
    nodes = {name: data for name, data in topology.nodes.items() if name not in dead_nodes}
    chips = [chip for chip in topology.chips if chip not in dead_nodes]
    if len(chips) < 2:
        raise UsageError(f"{topology.where}: the failures ({', '.join(texts)}) leave fewer than two chips")
    cuts = {name: side & nodes.keys() for name, side in topology.cuts.items()}
    cuts = {name: side for name, side in cuts.items() if side and len(side) < len(nodes)}
    failed = replace(  # a new object: no cached property of the healthy system survives
        topology, nodes=nodes, links=links, chips=chips, cuts=cuts, faults=topology.faults + tuple(texts)
    )
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
        nodes={n: d for n, d in nodes.items() if n in keep},
        links={ends: d for ends, d in links.items() if ends[0] in keep},
        chips=[chip for chip in chips if chip in keep],
        cuts={
            name: side & keep for name, side in cuts.items() if side & keep and len(side & keep) < len(keep)
        },
    )


def _classes_of(links: dict, ends_list: list) -> dict[str, tuple[float, float]]:
    out: dict[str, list[float]] = {}
    for ends in ends_list:
        data = links[ends]
        wired_active = out.setdefault(data["cls"], [0.0, 0.0])
        wired_active[0] += data["lanes"]
        wired_active[1] += data["active_lanes"]
    return {cls: (w, a) for cls, (w, a) in out.items()}


@dataclass(frozen=True)
class Component:
    """A part that can fail alone: its class, its ``--fail`` text, and what it takes away."""

    kind: str  # "chip", "link backplane", "switch plane", "switch tray", "plane", "lanes beyond spares", ...
    spec: str
    nodes: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    lanes: tuple[tuple[str, str], ...] = ()  # (chip, class) whose lanes fail
    rate: str | None = None  # its failure-rate class (trnsim.reliability.RATES), None: not a part


OPTICAL_MEDIA = {"optics"}  # everything else between devices is copper (pcb, backplane, aec, copper)


def components(topology: Topology) -> list[Component]:
    """Every part of ``topology`` that can fail alone, by class (``trnsim faults`` fails each).

    Chips are physical chips (a chip that hosts several ranks fails with all of them); links are
    bundles between devices (not the on-chip rank links); switch trays and planes exist where the
    fabric has switch planes; "lanes beyond spares" fails one lane more than a chip's spares.
    """
    from trnsim.topology.builders import RANK_CLASS

    nodes = topology.nodes
    physical = (
        [n for n, d in nodes.items() if d.get("role") == "chip"]
        if topology.spec.chip.ranks > 1
        else topology.chips
    )
    out = [Component("chip", f"chip:{chip}", nodes=(chip,), rate="chip") for chip in physical]
    for ends, data in topology.links.items():
        if data["cls"] == RANK_CLASS:
            continue
        rate = "optical link" if data.get("medium") in OPTICAL_MEDIA else "copper link"
        out.append(Component(f"link {data['cls']}", f"link:{ends[0]},{ends[1]}", links=(ends,), rate=rate))
    planes: dict[tuple[int, str], list[str]] = {}
    trays: dict[tuple[int, int], list[str]] = {}
    for name, data in nodes.items():
        if data["kind"] != "switch" or data.get("role") == "chip":
            continue
        out.append(
            Component(
                f"switch {data.get('role') or 'switch'}", f"switch:{name}", nodes=(name,), rate="switch"
            )
        )
        if data.get("role") == "plane":
            planes.setdefault((data["rack"], str(data["plane"])), []).append(name)
            if data.get("switch_tray") is not None:
                trays.setdefault((data["rack"], data["switch_tray"]), []).append(name)
    for (rack, index), members in sorted(trays.items()):
        out.append(
            Component("switch tray", f"switch-tray:{index}:{rack}", nodes=tuple(members), rate="switch tray")
        )
    for (rack, plane), members in sorted(planes.items()):
        out.append(Component("plane", f"plane:{plane}:{rack}", nodes=tuple(members)))
    for chip in physical:
        for cls, (wired, active) in _chip_classes(topology, chip).items():
            spare = wired - active
            if spare >= 1 - 1e-9 and cls != RANK_CLASS:
                count = int(round(spare)) + 1
                out.append(
                    Component("lanes beyond spares", f"lanes:{chip}:{count}:{cls}", lanes=((chip, cls),))
                )
    return out


def ranks_to_chips(texts: list[str], ranks: Topology) -> list[str]:
    """On a system whose chips host several ranks, ``--fail`` numbers and rank names mean ranks, as
    everywhere else: rewrite them as the chips that host those ranks (device names pass through)."""

    def chip_of(ref: str, fault: str) -> str:
        ref = ref.strip()
        if ref in ranks.rank_of or ref.removeprefix("-").isdigit():
            try:
                return ranks.nodes[ranks.resolve_chip(ref)]["chip"]
            except UsageError as exc:
                raise UsageError(f"--fail {fault!r}: {exc}") from None
        return ref

    out = []
    for text in texts:
        kind, sep, what = text.strip().partition(":")
        key = kind.strip().lower()
        if key in ("chip", "cable"):
            what = chip_of(what, text)
        elif key == "lanes":
            first, _, rest = what.partition(":")
            what = chip_of(first, text) + (":" + rest if rest else "")
        elif key == "link" and "," in what:
            a, _, b = what.partition(",")
            what = f"{chip_of(a, text)},{chip_of(b, text)}"
        out.append(f"{kind}{sep}{what}")
    return out
