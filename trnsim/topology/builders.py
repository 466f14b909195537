"""Build the system a spec describes: its fabric (:mod:`trnsim.topology.torus`,
:mod:`trnsim.topology.switched`) at effective link rates, and chips split into the ranks they host.
"""

from trnsim.errors import ConfigError
from trnsim.spec.schema import Spec

# RANK_CLASS is the data model's (trnsim.topology.graph); it stays importable from here for the
# modules that still import it from the builders
from trnsim.topology.graph import RANK_CLASS, Topology
from trnsim.topology.switched import switched_fabric
from trnsim.topology.torus import torus

__all__ = ["RANK_CLASS", "build", "expand_ranks", "switched_fabric", "torus"]


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
