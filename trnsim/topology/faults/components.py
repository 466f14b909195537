"""Every part of a system that can fail alone: chips, link bundles, switches, switch trays, planes,
and the lane one past a chip's spares. The fault studies (:mod:`trnsim.studies.faults`) fail each.
"""

from dataclasses import dataclass

from trnsim.topology.faults.specs import chip_classes
from trnsim.topology.graph import RANK_CLASS, Topology


@dataclass(frozen=True)
class Component:
    """A part that can fail alone: its class, its ``--fail`` text, and what it takes away."""

    kind: str  # "chip", "link backplane", "switch plane", "switch tray", "plane", "lanes beyond spares", ...
    spec: str
    nodes: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    lanes: tuple[tuple[str, str], ...] = ()  # (chip, class) whose lanes fail
    rate: str | None = None  # its failure-rate class (trnsim.studies.faults.rates.RATES), None: not a part


OPTICAL_MEDIA = {"optics"}  # everything else between devices is copper (pcb, backplane, aec, copper)


def components(topology: Topology) -> list[Component]:
    """Every part of ``topology`` that can fail alone, by class (``trnsim faults`` fails each).

    Chips are physical chips (a chip that hosts several ranks fails with all of them); links are
    bundles between devices (not the on-chip rank links); switch trays and planes exist where the
    fabric has switch planes; "lanes beyond spares" fails one lane more than a chip's spares.
    """
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
        for cls, (wired, active) in chip_classes(topology, chip).items():
            spare = wired - active
            if spare >= 1 - 1e-9 and cls != RANK_CLASS:
                count = int(round(spare)) + 1
                out.append(
                    Component("lanes beyond spares", f"lanes:{chip}:{count}:{cls}", lanes=((chip, cls),))
                )
    return out
