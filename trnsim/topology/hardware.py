"""Refuse impossible hardware: more lanes than a chip has, more ports or lanes than a switch has."""

from trnsim.errors import ConfigError, HardwareError
from trnsim.topology.graph import RANK_CLASS, Topology


def check_efficiency(topology: Topology) -> None:
    """Per-class efficiencies must name link classes the system has (a typo would apply to nothing)."""
    present = {data["cls"] for data in topology.links.values()} | {RANK_CLASS}
    for name in topology.spec.efficiency.classes:
        if name not in present:
            raise ConfigError(
                f"{topology.where}: efficiency.classes.{name}: no link of class {name!r}; "
                f"classes: {', '.join(sorted(present - {RANK_CLASS}))}"
                + (
                    f", {RANK_CLASS} (on-chip, with chip.ranks > 1)"
                    if topology.spec.chip.ranks == 1
                    else f", {RANK_CLASS}"
                )
            )


def check_hardware(topology: Topology) -> None:
    """Check every chip's and switch's lane and port budget.

    Raises
    ------
    HardwareError
        Naming the file, the key whose budget is exceeded, the device and the numbers.
    """
    spec, nodes, incident = topology.spec, topology.nodes, topology.incident
    where = topology.where
    chip = spec.chip
    spare = _unwired_backplane_lanes(topology)
    for name in topology.chips:
        links = incident[name]
        wired = sum(data["lanes"] for data in links) + spare.get(nodes[name].get("slot"), 0)
        active = sum(data["active_lanes"] for data in links)
        if wired > chip.lanes:
            raise HardwareError(
                f"{where}: chip.lanes: chip {name} is wired with {wired} lanes but a {chip.name} has {chip.lanes}"
            )
        if active > chip.usable_lanes + 1e-9:
            raise HardwareError(
                f"{where}: chip.active_lanes: chip {name} uses {active:g} active lanes "
                f"but a {chip.name} has {chip.usable_lanes}"
            )
    for name in topology.switches:
        node = nodes[name]
        links = incident[name]
        used_ports = sum(data["parallel"] for data in links)
        used_lanes = sum(data["lanes"] for data in links)
        key = f"switch_models.{node['model']}"
        if node["ports"] is not None and used_ports > node["ports"]:
            raise HardwareError(
                f"{where}: {key}.ports: switch {name} needs {used_ports} ports but a {node['model']} has "
                f"{node['ports']}"
            )
        if node["lanes"] is not None and used_lanes > node["lanes"]:
            raise HardwareError(
                f"{where}: {key}.lanes: switch {name} needs {used_lanes} lanes but a {node['model']} has "
                f"{node['lanes']}"
            )


def connected_parts(topology: Topology) -> list[tuple[list[str], set[str]]]:
    """The connected parts that hold chips, most chips first: (their chips, all their devices)."""
    parent = {node: node for node in topology.nodes}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for u, v in topology.links:
        parent[root(u)] = root(v)
    devices: dict[str, set[str]] = {}
    for node in topology.nodes:
        devices.setdefault(root(node), set()).add(node)
    chips: dict[str, list[str]] = {}
    for chip in topology.chips:
        chips.setdefault(root(chip), []).append(chip)
    return sorted(((chips[r], devices[r]) for r in chips), key=lambda part: -len(part[0]))


def check_connected(topology: Topology) -> None:
    """Refuse a fabric in which some chips cannot reach each other (no path, no collective).

    Raises
    ------
    HardwareError
        Naming two chips that are not connected.
    """
    parts = connected_parts(topology)
    if len(parts) > 1:
        first = topology.chips[0]
        other = next(chips[0] for chips, _ in parts if first not in chips)
        raise HardwareError(
            f"{topology.where}: the links leave chips unreachable: {first} has no path to {other} "
            "(check the switch planes, node-local and cross-rack sections)"
        )


def check_reachable_without_relay(topology: Topology) -> None:
    """Refuse a fabric routed without relay (only switches forward) where some chips cannot reach
    each other, as routing all of them (``topo show``, a collective on every chip) does. Loading
    does not check it: a group inside a part that connects still runs.

    Chips reach each other through a direct link or a connected set of switches both touch (a chip
    hosting several ranks forwards for them, as a switch does). Union-find over the switches: no
    all-pairs search, so it is cheap on any fabric that loads.

    Raises
    ------
    ConfigError
        Naming the first chip, in rank order, with a chip it cannot reach.
    """
    if topology.spec.routing.relay:
        return
    chips = topology.chips
    endpoint = set(chips)
    parent = {node: node for node in topology.nodes if node not in endpoint}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    neighbours: dict[str, set[str]] = {chip: set() for chip in chips}
    for u, v in topology.links:
        if u in endpoint and v in endpoint:
            neighbours[u].add(v)
            neighbours[v].add(u)
        elif u not in endpoint and v not in endpoint:
            parent[root(u)] = root(v)
    touching: dict[str, set[str]] = {chip: set() for chip in chips}  # a chip's switch components
    members: dict[str, set[str]] = {}  # a switch component's chips
    for u, v in topology.links:
        for chip, switch in ((u, v), (v, u)):
            if chip in endpoint and switch not in endpoint:
                touching[chip].add(root(switch))
                members.setdefault(root(switch), set()).add(chip)
    if any(len(chips_of) == len(chips) for chips_of in members.values()):
        return  # one set of switches touches every chip
    for chip in chips:
        reach = neighbours[chip].union(*(members[c] for c in touching[chip]))
        if len(reach | {chip}) < len(chips):
            other = next(c for c in chips if c != chip and c not in reach)
            raise ConfigError(
                f"{topology.where}: {chip} cannot reach {other} when only switches forward traffic "
                "(routing without relay)"
            )


def _unwired_backplane_lanes(topology: Topology) -> dict[str, int]:
    """Backplane lanes a chip has but the fabric does not wire (redundant spares), per slot."""
    spec = topology.spec
    if spec.kind != "switched" or spec.switched.switch_fabric is None:
        return {}
    fabric = spec.switched.switch_fabric
    spare = {}
    for slot in spec.switched.slots:
        planes = sum(slot in plane.slots for plane in fabric.planes)
        wired = planes * fabric.switches_per_plane * fabric.lanes_per_link
        if wired > fabric.backplane_lanes:
            raise HardwareError(
                f"{topology.where}: switched.switch_fabric.backplane_lanes: slot {slot} is wired "
                f"to {planes * fabric.switches_per_plane} switches x{fabric.lanes_per_link} = {wired} lanes, "
                f"more than its {fabric.backplane_lanes} backplane lanes"
            )
        spare[slot] = fabric.backplane_lanes - wired
    return spare
