"""The routes of an exported schedule (``trnsim-schedule/2``): every path with its share, or the rule.

A pattern's flows are routed as the model routed them. Where the paths are few enough
(:data:`MAX_LISTED_PATHS` over the whole document), each flow lists every path it takes with the
share of the flow's bytes ECMP puts on it; trnsim's ECMP splits a flow evenly over all its shortest
paths (:mod:`trnsim.routing.ecmp`), so a path's share is ``1 / (number of shortest paths)``. The
listed paths are checked to put on every link exactly the load the model's routing does; where they
do not (or are too many, or the policy is not ECMP, or the step reduces in the network), the pattern
names the rule instead, and a replay re-derives the loads with :mod:`trnsim.routing`. A step that
names its own paths (``multipath``) lists them as they are, whatever the budget.
"""

import numpy as np

from trnsim.collectives.schedule import Step
from trnsim.model.router import Router
from trnsim.topology.arrays import GraphArrays, graph_arrays
from trnsim.topology.builders import RANK_CLASS
from trnsim.topology.graph import Topology

# paths listed over the whole document; beyond it, patterns name their routing rule
MAX_LISTED_PATHS = 100_000


def graph_table(topology: Topology) -> dict:
    """The graph a replay costs on: nodes and directed links in the model's order and units."""
    arrays = graph_arrays(topology)
    return {
        "nodes": list(arrays.nodes),
        "node_latency_ns": arrays.node_latency_ns.tolist(),
        "links": [
            [
                int(u),
                int(v),
                arrays.edge_cls[arrays.edge[e]],
                float(arrays.bw_gbps[e]),
                float(arrays.link_latency_ns[e]),
            ]
            for e, (u, v) in enumerate(zip(arrays.src, arrays.dst, strict=True))
        ],
    }


class PathLister:
    """Lists each flow's shortest paths within a pattern's link classes, within a path budget."""

    def __init__(self, topology: Topology, group: list[str], router: Router):
        self.arrays: GraphArrays = graph_arrays(topology)
        self.group, self.router = group, router
        self.budget = MAX_LISTED_PATHS
        self._searches: dict = {}

    def _search(self, source: int, links: frozenset | None):
        """BFS from ``source`` over the allowed links: parents on shortest paths and path counts."""
        key = (source, links)
        if key not in self._searches:
            a = self.arrays
            allowed = [
                links is None or a.edge_cls[a.edge[e]] in links or a.edge_cls[a.edge[e]] == RANK_CLASS
                for e in range(len(a.src))
            ]
            relay = self.router.routing.relay
            out: dict[int, list[tuple[int, int]]] = {n: [] for n in range(a.n_nodes)}
            for e in np.flatnonzero(allowed):
                out[int(a.src[e])].append((int(a.dst[e]), int(e)))
            depth, parents, sigma = {source: 0}, {source: []}, {source: 1}
            frontier = [source]
            while frontier:
                following = []
                for node in frontier:
                    if node != source and not relay and node < a.n_chips:
                        continue  # without relay only switches forward
                    for other, e in out[node]:
                        if other not in depth:
                            depth[other], parents[other], sigma[other] = depth[node] + 1, [], 0
                            following.append(other)
                        if depth[other] == depth[node] + 1:
                            parents[other].append((node, e))
                            sigma[other] += sigma[node]
                frontier = following
            self._searches[key] = (parents, sigma)
        return self._searches[key]

    def _paths(self, source: int, target: int, links) -> list[list[int]]:
        parents, _ = self._search(source, links)
        found: list[list[int]] = []

        def walk(node: int, tail: list[int]) -> None:
            if node == source:
                found.append([source, *reversed(tail)])
                return
            for parent, _ in sorted(parents[node]):
                walk(parent, [*tail, node])

        walk(target, [])
        return found

    def routes(self, step: Step, flows) -> dict:
        """The pattern's routes: ``{"paths": ...}`` (checked against the model's loads) or the rule."""
        links = step.links
        rule = {
            "rule": self.router.routing.policy,
            "link_classes": sorted(links) if links else "any",
            "relay": self.router.routing.relay,
        }
        if step.in_network:
            return {**rule, "rule": "in-network"}
        if step.paths is not None:  # the algorithm chose them (multipath): no rule regenerates them
            index = self.arrays.index
            self.budget -= sum(len(paths) for paths in step.paths)
            return {
                "paths": [
                    [[[index[n] for n in path], share] for path, share in paths] for paths in step.paths
                ]
            }
        src, dst, weight = flows
        rows = self.router.rows
        counts = [
            self._search(int(rows[s]), links)[1].get(int(rows[d]), 0) for s, d in zip(src, dst, strict=True)
        ]
        if self.router.routing.policy != "ecmp" or sum(counts) > self.budget or 0 in counts:
            return rule
        listed, loads = [], np.zeros(len(self.arrays.src))
        edge_of = {
            (int(u), int(v)): e for e, (u, v) in enumerate(zip(self.arrays.src, self.arrays.dst, strict=True))
        }
        for s, d, w, count in zip(src, dst, weight, counts, strict=True):
            paths = self._paths(int(rows[s]), int(rows[d]), links)
            listed.append([[path, 1 / count] for path in paths])
            for path in paths:
                for u, v in zip(path, path[1:], strict=False):
                    loads[edge_of[u, v]] += w / count
        expected = self.router.route(step.unit or step).link_loads
        if not np.allclose(
            loads, expected, rtol=1e-12, atol=1e-15 * max(1.0, float(expected.max(initial=0)))
        ):
            return rule
        self.budget -= sum(counts)
        return {"paths": listed}
