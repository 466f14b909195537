"""What a failure text names: ``KIND:WHAT`` resolved to devices, links and lanes of the healthy system.

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

References are resolved on the healthy system, all faults first, then removed together
(:mod:`trnsim.topology.faults.apply`): ranks in later faults never shift.

A switch tray holds ``switched.switch_fabric.switches_per_tray`` switches of its rack
(:mod:`trnsim.topology.trays`: GB200 NVL72's 9 trays of 2; one switch of each plane when the file
does not say, an assumption); tray numbers outside the file's trays are refused.
"""

from dataclasses import dataclass

from trnsim.errors import ParameterError, UsageError
from trnsim.topology.graph import Topology

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
        raise ParameterError(exc, "fail", repr(fault)) from None


def _device(topology: Topology, ref: str, fault: str) -> str:
    ref = ref.strip()
    if ref in topology.nodes:
        return ref
    return _chip(topology, ref, fault)


def _link_key(topology: Topology, u: str, v: str, fault: str) -> tuple[str, str]:
    for key in ((u, v), (v, u)):
        if key in topology.links:
            return key
    raise ParameterError(f"no link joins {u} and {v}", "fail", repr(fault))


def parse_fault(topology: Topology, text: str) -> Fault:
    """Resolve one ``KIND:WHAT`` on ``topology`` (the healthy system).

    Parameters
    ----------
    topology : Topology
        The healthy system the references name parts of.
    text : str
        The fault as written (see the module docstring).

    Returns
    -------
    Fault
        The devices, link bundles or lanes it takes away.

    Raises
    ------
    UsageError
        For an unknown kind, or a reference to nothing of ``topology`` (one line naming the fault).
    """
    fault = text.strip()
    kind, _, what = fault.partition(":")
    kind, what = kind.strip().lower(), what.strip()
    if kind not in KINDS or not what:
        raise ParameterError(
            f"expected KIND:WHAT with KIND one of {', '.join(KINDS)} (e.g. chip:5, "
            "link:r0.n0.A,r0.A.sw0, lanes:5:17, switch:r0.A.sw3, switch-tray:0, cable:5)",
            "fail",
            repr(text),
        )
    if kind == "chip":
        return Fault(fault, nodes=frozenset({_chip(topology, what, fault)}))
    if kind == "switch":
        if topology.nodes.get(what, {}).get("kind") != "switch":
            raise ParameterError(f"{what!r} is not a switch of {topology.name}", "fail", repr(text))
        return Fault(fault, nodes=frozenset({what}))
    if kind == "link":
        return _link(topology, what, text, fault)
    if kind == "cable":
        return _cable(topology, what, text, fault)
    if kind == "lanes":
        return _lanes(topology, what, text, fault)
    return _switch_group(topology, kind, what, text)


def _link(topology: Topology, what: str, text: str, fault: str) -> Fault:
    """``link:A,B`` (two devices) or ``link:CLASS:K`` (the K-th link of a class)."""
    if "," in what:
        u, _, v = what.partition(",")
        a, b = _device(topology, u, fault), _device(topology, v, fault)
        return Fault(fault, links=frozenset({_link_key(topology, a, b, fault)}))
    cls, _, index = what.rpartition(":")
    of_class = [ends for ends, data in topology.links.items() if data["cls"] == cls]
    if not cls or not index.isascii() or not index.isdigit() or not of_class:
        classes = sorted({data["cls"] for data in topology.links.values()})
        raise ParameterError(
            f"expected link:A,B (two devices) or link:CLASS:K with CLASS one of {', '.join(classes)}",
            "fail",
            repr(text),
        )
    if int(index) >= len(of_class):
        raise ParameterError(
            f"{topology.name} has {len(of_class)} {cls} links (0..{len(of_class) - 1})", "fail", repr(text)
        )
    return Fault(fault, links=frozenset({of_class[int(index)]}))


def _cable(topology: Topology, what: str, text: str, fault: str) -> Fault:
    """``cable:CHIP``: the chip's links to a device of another rack."""
    nodes = topology.nodes
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
        raise ParameterError(f"{chip} has no cross-rack cable", "fail", repr(text))
    return Fault(fault, links=frozenset(across))


def _lanes(topology: Topology, what: str, text: str, fault: str) -> Fault:
    """``lanes:CHIP:N[:CLASS]``; without a class, the one class with spare lanes (or the only one)."""
    parts = what.split(":")
    if len(parts) not in (2, 3) or not parts[1].isascii() or not parts[1].isdigit() or int(parts[1]) < 1:
        raise ParameterError("expected lanes:CHIP:N[:CLASS] with N a whole number >= 1", "fail", repr(text))
    chip = _chip(topology, parts[0], fault)
    classes = chip_classes(topology, chip)
    if len(parts) == 3:
        cls = parts[2].strip()
        if cls not in classes:
            raise ParameterError(
                f"{chip} has no {cls!r} links (it has {', '.join(classes)})", "fail", repr(text)
            )
        chosen = [cls]
    else:
        spare = [cls for cls, (wired, active) in classes.items() if active < wired - 1e-9]
        if len(spare) != 1 and len(classes) != 1:
            raise ParameterError(
                f"name the class, lanes:{parts[0]}:{parts[1]}:CLASS with CLASS one of "
                f"{', '.join(classes)} ({'none has' if not spare else 'several have'} spare lanes)",
                "fail",
                repr(text),
            )
        chosen = spare or list(classes)
    count = int(parts[1])
    (cls,) = chosen
    if count > classes[cls][0]:
        raise ParameterError(f"{chip} wires {classes[cls][0]:g} lanes of {cls}", "fail", repr(text))
    return Fault(fault, lanes=((chip, cls, count),))


def _switch_group(topology: Topology, kind: str, what: str, text: str) -> Fault:
    """``plane:NAME[:RACK]`` or ``switch-tray:K[:RACK]``: switches by plane or tray, and rack."""
    nodes, spec = topology.nodes, topology.spec
    name, _, rack_text = what.partition(":")
    name = name.strip()
    fabric = spec.switched.switch_fabric if spec.kind == "switched" else None
    if fabric is None:
        raise ParameterError(f"{topology.name} has no switch planes", "fail", repr(text))
    racks = spec.switched.racks
    rack = None
    if rack_text:
        if not rack_text.isascii() or not rack_text.isdigit():
            raise ParameterError(
                f"expected {kind}:{'NAME' if kind == 'plane' else 'K'}[:RACK]", "fail", repr(text)
            )
        rack = int(rack_text)
        if rack >= racks:
            raise ParameterError(f"{topology.name} has racks 0..{racks - 1}", "fail", repr(text))
    planes = [n for n, d in nodes.items() if d["kind"] == "switch" and d.get("role") == "plane"]
    if kind == "plane":
        names = [plane.name for plane in fabric.planes]
        if name not in names:
            raise ParameterError(f"{topology.name} has planes {', '.join(names)}", "fail", repr(text))
        chosen = {n for n in planes if nodes[n]["plane"] == name and rack in (None, nodes[n]["rack"])}
        return Fault(text.strip(), nodes=frozenset(chosen))
    per_rack = fabric.trays_per_rack
    if not per_rack:
        raise ParameterError(
            f"{topology.name} has no switch trays (its switches sit on the "
            f"{spec.switched.node_label}'s board): fail them one by one with switch:NAME",
            "fail",
            repr(text),
        )
    if not name.isascii() or not name.isdigit() or int(name) >= per_rack:
        where = "each of its racks" if racks > 1 else "its rack"
        raise ParameterError(
            f"{topology.name} has {per_rack} switch trays in {where}: K is 0..{per_rack - 1}",
            "fail",
            repr(text),
        )
    chosen = {n for n in planes if nodes[n]["switch_tray"] == int(name) and rack in (None, nodes[n]["rack"])}
    return Fault(text.strip(), nodes=frozenset(chosen))


def chip_classes(topology: Topology, chip: str) -> dict[str, tuple[float, float]]:
    """Wired and active lanes of each link class at ``chip``: where a chip has spare lanes."""
    out: dict[str, list[float]] = {}
    for data in topology.incident[chip]:
        wired_active = out.setdefault(data["cls"], [0.0, 0.0])
        wired_active[0] += data["lanes"]
        wired_active[1] += data["active_lanes"]
    return {cls: (w, a) for cls, (w, a) in out.items()}


def ranks_to_chips(texts: list[str], ranks: Topology) -> list[str]:
    """On a system whose chips host several ranks, ``--fail`` numbers and rank names mean ranks, as
    everywhere else: rewrite them as the chips that host those ranks (device names pass through)."""

    def chip_of(ref: str, fault: str) -> str:
        ref = ref.strip()
        if ref in ranks.rank_of or ref.removeprefix("-").isdigit():
            try:
                return ranks.nodes[ranks.resolve_chip(ref)]["chip"]
            except UsageError as exc:
                raise ParameterError(exc, "fail", repr(fault)) from None
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
