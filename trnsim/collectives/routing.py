"""Route a schedule's steps over the graph and summarise each step's cost per byte.

Flows are split evenly over all shortest paths (ECMP). A step costs its path latency (the largest,
over its flows and their shortest paths) plus, per byte of collective size, the time of its busiest
directed link: bytes on that link / the link's bandwidth.

Two ways to get link loads, chosen by size: for sparse steps (a ring, a shift, a hypercube exchange)
each flow's share of edge ``u -> v`` is ``sigma_s(u) sigma_t(v) / sigma_s(t)`` when ``u -> v`` lies
on a shortest ``s -> t`` path, computed for many flows and steps in one vectorised pass; dense
steps (all pairs) use the per-source accumulation of :func:`trnsim.topology.shortest.ecmp_loads`.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.collectives.algorithms import Step
from trnsim.topology.graph import Topology
from trnsim.topology.shortest import BFS, bfs, ecmp_loads, graph_arrays, path_latency_ns

# a step with more flows than this share of all ordered pairs is routed per source instead of per flow
_DENSE_SHARE = 0.25
# flows x nodes handled in one vectorised chunk (bounds memory)
_CHUNK = 1_000_000


@dataclass(frozen=True)
class StepRoute:
    """What one step costs, independent of the collective's size."""

    seconds_per_byte: float  # busiest link's seconds per byte of collective size
    latency_ns: float  # largest path latency among the step's flows
    max_links: int  # longest shortest path (in links) among the step's flows
    bottleneck: str  # class of the busiest link
    link_loads: np.ndarray  # bytes per directed edge per byte of collective size


def _key(step: Step) -> bytes:
    return step.src.tobytes() + b"|" + step.dst.tobytes() + b"|" + step.weight.tobytes()


class Router:
    """Routes steps for one group on one topology, caching BFS results and identical steps."""

    def __init__(self, topology: Topology, group: list[str]):
        arrays = self.arrays = graph_arrays(topology)
        self.rows = np.asarray([arrays.index[chip] for chip in group], dtype=np.int64)
        self.bfs: BFS = bfs(arrays, self.rows)
        self.latency = path_latency_ns(arrays, self.bfs)
        self._cache: dict[bytes, StepRoute] = {}
        # per group member: distance and path count at every directed edge's tail and head
        # the narrowest integers that hold a sum of two distances: the on-path test is memory-bound
        self._dist = self.bfs.dist.astype(np.int8 if self.bfs.dist.max() < 60 else np.int16)

    def route(self, step: Step) -> StepRoute:
        """Summarise one step (cached by its flows)."""
        return self.route_all([step])[0]

    def route_all(self, steps: list[Step]) -> list[StepRoute]:
        """Summarise many steps, routing the sparse ones together in vectorised chunks."""
        p = len(self.rows)
        pending = {}
        for step in steps:
            key = _key(step)
            if key not in self._cache and key not in pending:
                pending[key] = step
        sparse = [(k, s) for k, s in pending.items() if len(s.src) <= _DENSE_SHARE * p * (p - 1)]
        for key, loads in zip((k for k, _ in sparse), self._pair_loads([s for _, s in sparse]), strict=True):
            self._cache[key] = self._summary(pending[key], loads)
        for key, step in pending.items():
            if key not in self._cache:
                self._cache[key] = self._summary(step, self._dense_loads(step))
        return [self._cache[_key(step)] for step in steps]

    def _summary(self, step: Step, loads: np.ndarray) -> StepRoute:
        arrays = self.arrays
        if len(step.src) == 0:
            return StepRoute(0.0, 0.0, 0, "-", loads)
        seconds = loads / (arrays.bw_gbps * 1e9)
        busiest = int(np.argmax(seconds))
        dst_nodes = self.rows[step.dst]
        return StepRoute(
            seconds_per_byte=float(seconds[busiest]),
            latency_ns=float(self.latency[step.src, dst_nodes].max()),
            max_links=int(self.bfs.dist[step.src, dst_nodes].max()),
            bottleneck=arrays.edge_cls[arrays.edge[busiest]],
            link_loads=loads,
        )

    def _dense_loads(self, step: Step) -> np.ndarray:
        demand = np.zeros((len(self.rows), self.arrays.n_nodes))
        np.add.at(demand, (step.src, self.rows[step.dst]), step.weight)
        return ecmp_loads(self.arrays, self.bfs, demand)

    def _pair_loads(self, steps: list[Step]) -> list[np.ndarray]:
        """Loads of several sparse steps, flow by flow.

        Edge ``u -> v`` carries ``w sigma_s(u) sigma_t(v) / sigma_s(t)`` of flow ``s -> t`` when it lies on
        a shortest path. Nodes on some shortest ``s -> t`` path satisfy ``d_s(w) + d_t(w) = d_s(t)``;
        only their out-edges are examined, which keeps the work near the paths' own size.
        """
        arrays, result = self.arrays, self.bfs
        n_edges = len(arrays.src)
        if not steps:
            return []
        src = np.concatenate([s.src for s in steps])
        dst = np.concatenate([s.dst for s in steps])
        weight = np.concatenate([s.weight for s in steps])
        owner = np.repeat(np.arange(len(steps)), [len(s.src) for s in steps])
        totals = np.zeros(len(steps) * n_edges)
        dist, sigma = self._dist, result.sigma
        d_st = dist[src, self.rows[dst]]
        share = weight / sigma[src, self.rows[dst]]
        chunk = max(1, _CHUNK // arrays.n_nodes)
        for lo in range(0, len(src), chunk):
            s, t, d = src[lo : lo + chunk], dst[lo : lo + chunk], d_st[lo : lo + chunk]
            # (flow, node) for nodes on a shortest path, the target excluded (it has no onward edge)
            on_path = (dist[s] + dist[t] == d[:, None]) & (dist[t] > 0)
            flows, nodes = np.nonzero(on_path)
            which, edges = arrays.expand(nodes)
            flows, tails, heads = flows[which], nodes[which], arrays.dst[edges]
            s_f, t_f = s[flows], t[flows]
            onward = (dist[s_f, heads] == dist[s_f, tails] + 1) & (dist[t_f, heads] == dist[t_f, tails] - 1)
            flows, tails, heads, edges = flows[onward], tails[onward], heads[onward], edges[onward]
            values = share[lo + flows] * sigma[s[flows], tails] * sigma[t[flows], heads]
            totals += np.bincount(owner[lo + flows] * n_edges + edges, weights=values, minlength=len(totals))
        return list(totals.reshape(len(steps), n_edges))
