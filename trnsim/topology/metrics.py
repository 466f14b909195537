"""Hop and link statistics, bandwidth per chip, link classes and cut bandwidths.

Two hop metrics are always kept apart: ``links`` is the number of links on a shortest path (the
torus convention) and ``hops`` the number of devices passed through between source and destination
(switches and relaying chips: the convention of the Trainium3 descriptions). On any shortest path
between two distinct chips, ``hops = links - 1``.
"""

from collections import Counter, deque

import numpy as np

from trnsim import limits
from trnsim.topology.graph import Topology
from trnsim.topology.shortest import HopStats

__all__ = ["HopStats"]


def link_distances(topology: Topology, sources: list[str] | None = None) -> np.ndarray:
    """Links on a shortest path from each source chip to every chip (a sources x chips matrix).

    A level-synchronous BFS from all sources at once.
    """
    from trnsim.topology.shortest import bfs, graph_arrays

    arrays = graph_arrays(topology)
    rows = np.asarray([arrays.index[s] for s in (sources if sources is not None else topology.chips)])
    limits.PAIRS_WORK.check(
        len(rows) * (arrays.n_nodes + len(arrays.src)),
        f"{topology.where}: distances from {len(rows):,} chips need",
    )
    return bfs(arrays, rows).dist[:, : topology.n_chips]


def hop_stats(topology: Topology, chips: list[str] | None = None) -> HopStats:
    """Hop statistics over all unordered pairs of the given chips (all chips by default)."""
    from trnsim.topology.shortest import hop_histogram

    return hop_histogram(topology, chips)


def chip_bandwidth_gbps(topology: Topology) -> dict[str, float]:
    """Scale-up bandwidth per chip (per direction, all of its links); cached on the topology."""
    cached = topology.__dict__.get("_chip_bw")
    if cached is not None:
        return cached
    incident = topology.incident
    topology.__dict__["_chip_bw"] = cached = {
        chip: round(sum(data["bw_gbps"] for data in incident[chip]), 9) for chip in topology.chips
    }
    return cached


def link_classes(topology: Topology) -> list[dict]:
    """Links grouped by class: count of links, lanes and bandwidth per link, total bandwidth."""
    groups: dict[tuple, dict] = {}
    for data in topology.links.values():
        per_link_bw = data["bw_gbps"] / data["parallel"]
        key = (data["cls"], data["medium"], data["lanes"] // data["parallel"], round(per_link_bw, 6))
        group = groups.setdefault(
            key,
            {
                "cls": data["cls"],
                "medium": data["medium"],
                "links": 0,
                "lanes_per_link": key[2],
                "bw_gbps_per_link": per_link_bw,
                "total_bw_gbps": 0.0,
            },
        )
        group["links"] += data["parallel"]
        group["total_bw_gbps"] += data["bw_gbps"]
    return sorted(groups.values(), key=lambda g: (g["cls"], -g["bw_gbps_per_link"]))


def switch_roles(topology: Topology) -> list[dict]:
    """Switches grouped by role and model."""
    counts = Counter(
        (data["role"], data["model"]) for data in topology.nodes.values() if data["kind"] == "switch"
    )
    return [{"role": role, "model": model, "count": count} for (role, model), count in sorted(counts.items())]


def cut_bandwidth_gbps(topology: Topology, side: frozenset[str]) -> float:
    """Bandwidth (per direction) of the links with exactly one end in ``side``."""
    total = sum(data["bw_gbps"] for (u, v), data in topology.links.items() if (u in side) != (v in side))
    return round(total, 9)


def cut_bandwidths(topology: Topology) -> dict[str, float]:
    """Every natural cut's bandwidth (per direction), cached on the topology.

    The per-node cuts are disjoint, so one pass over the links serves all of them: a fabric of
    thousands of trays costs one pass, not one per tray.
    """
    cached = topology.__dict__.get("_cut_bw")
    if cached is not None:
        return cached
    owner: dict[str, str] = {}
    result: dict[str, float] = {}
    for name, side in topology.cuts.items():
        if name.startswith("node-"):
            result[name] = 0.0
            owner.update(dict.fromkeys(side, name))
    for (u, v), data in topology.links.items():
        a, b = owner.get(u), owner.get(v)
        if a != b:
            for name in (a, b):
                if name is not None:
                    result[name] += data["bw_gbps"]
    for name, side in topology.cuts.items():
        result[name] = cut_bandwidth_gbps(topology, side) if name not in result else round(result[name], 9)
    topology.__dict__["_cut_bw"] = result
    return result


def natural_cuts(topology: Topology, per_node: bool = False) -> list[dict]:
    """The SKU's natural cuts with their bandwidth: rack halves, torus halves per axis, switch planes,
    and (with ``per_node``) each node with its on-node switches against the rest."""
    return [
        {"cut": name, "bw_gbps": bw}
        for name, bw in cut_bandwidths(topology).items()
        if per_node or not name.startswith("node-")
    ]


def shortest_path(topology: Topology, src: str, dst: str) -> tuple[list[str], int]:
    """One shortest path (fewest links) from ``src`` to ``dst`` and the number of such paths."""
    graph = topology.graph
    dist, sigma, parents = {src: 0}, {src: 1}, {src: []}
    queue = deque([src])
    while queue:
        node = queue.popleft()
        if node == dst:
            break
        for nbr in graph.adj[node]:
            if nbr not in dist:
                dist[nbr], sigma[nbr], parents[nbr] = dist[node] + 1, 0, []
                queue.append(nbr)
            if dist[nbr] == dist[node] + 1:
                sigma[nbr] += sigma[node]
                parents[nbr].append(node)
    if dst not in dist:
        return [], 0
    # sigma[dst] is complete: every parent of dst was dequeued before dst
    path = [dst]
    while path[-1] != src:
        path.append(min(parents[path[-1]]))
    return path[::-1], sigma[dst]
