"""Small synthetic topologies built in code: a ring, a complete graph, any graph of chips and switches.

For examples, doctests and closed-form tests: equal links, zero link latency, a chip of 10,000
lanes (so its links, not its lanes, limit it). Not for modelling real systems: those come from a
topology file (:func:`trnsim.topology.load.load_topology`).

Examples
--------
>>> square = complete_topology(4, bw_gbps=100.0)
>>> square.chips, len(square.links)
(['c0', 'c1', 'c2', 'c3'], 6)
>>> ring_topology(8).n_chips
8
"""

import msgspec

from trnsim.spec.catalog import validate_document
from trnsim.spec.schema import Spec
from trnsim.topology.builders import build
from trnsim.topology.graph import Topology

# example values (no system has them): one microsecond per step, links and switches without latency,
# and chips with lanes to spare, so that their links bind
LATENCY = {"step_ns": 1000.0, "link_ns": 0.0, "relay_ns": 0.0, "source": "test"}
CHIP = {"name": "x", "lanes": 10_000, "lane_gbps": 1.0}


def ring_topology(p: int, lanes: int = 100, step_ns: float = 1000.0) -> Topology:
    """A 1-D torus: p chips on a ring of links of ``lanes`` GB/s each."""
    document = {
        "name": f"ring{p}",
        "kind": "torus",
        "chip": CHIP,
        "latency": {**LATENCY, "step_ns": step_ns},
        "torus": {"axes": [{"name": "x", "size": p, "lanes": lanes}]},
    }
    return build(validate_document(document, "ring.yaml"))


def complete_topology(p: int, bw_gbps: float = 100.0, step_ns: float = 1000.0) -> Topology:
    """p chips, every pair joined by one link of ``bw_gbps`` (no switches, zero link latency)."""
    pairs = {(f"c{i}", f"c{j}"): bw_gbps for i in range(p) for j in range(i + 1, p)}
    return graph_topology(p, 0, pairs, name=f"complete{p}", step_ns=step_ns)


def graph_topology(
    chips: int,
    switches: int,
    links: dict[tuple[str, str], float],
    cls: dict[tuple[str, str], str] | None = None,
    cuts: dict[str, frozenset[str]] | None = None,
    name: str = "graph",
    step_ns: float = 1000.0,
) -> Topology:
    """Any graph: chips ``c0..``, switches ``s0..`` and links ``{(u, v): bw_gbps}`` between them.

    Links default to class ``link``; ``cls`` names others. Zero link latency, one rack and node.
    """
    chip_names = [f"c{i}" for i in range(chips)]
    spec = msgspec.convert(
        {
            "name": name,
            "kind": "switched",
            "chip": CHIP,
            "latency": {**LATENCY, "step_ns": step_ns},
            "switched": {"racks": 1, "nodes_per_rack": 1, "slots": chip_names},
        },
        Spec,
    )
    nodes = {
        chip: {
            "kind": "chip",
            "rank": rank,
            "rack": 0,
            "node": 0,
            "slot": chip,
            "slot_index": rank,
            "latency_ns": 0.0,
        }
        for rank, chip in enumerate(chip_names)
    }
    for k in range(switches):
        nodes[f"s{k}"] = {
            "kind": "switch",
            "role": "plane",
            "model": "test",
            "rack": 0,
            "node": None,
            "plane": None,
            "ports": 64,
            "lanes": 64,
            "latency_ns": 0.0,
        }
    data = {
        (u, v): {
            "cls": (cls or {}).get((u, v), "link"),
            "lanes": 1,
            "active_lanes": 1,
            "bw_gbps": float(bw),
            "latency_ns": 0.0,
            "medium": "pcb",
            "parallel": 1,
        }
        for (u, v), bw in links.items()
    }
    return Topology(spec=spec, nodes=nodes, links=data, chips=chip_names, cuts=dict(cuts or {}))
