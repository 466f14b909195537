"""A built topology read as arrays: nodes (chips first, in rank order) and directed edges.

The one numeric view of the graph that routing, bounds, reliability and pictures share: each link
bundle ``(u, v)`` becomes two directed edges, ``u -> v`` at index ``i`` and ``v -> u`` at ``i + m``,
carrying the bundle's bandwidth (per direction) and latency.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trnsim.topology.graph import Topology

# edges up to which components() labels in numpy (no scipy import); beyond, scipy's compiled search
HOOK_EDGES = 1 << 16


@dataclass
class GraphArrays:
    """A topology as arrays: nodes (chips first, in rank order) and directed edges."""

    nodes: list[str]
    n_chips: int
    src: np.ndarray  # directed edge tail (node index)
    dst: np.ndarray  # directed edge head
    edge: np.ndarray  # undirected edge index of each directed edge
    bw_gbps: np.ndarray  # per directed edge
    link_latency_ns: np.ndarray  # per directed edge
    node_latency_ns: np.ndarray  # per node, paid when a path passes through it
    edge_cls: list[str]  # per undirected edge
    edge_ends: list[tuple[str, str]]  # per undirected edge
    # each node's index in the whole topology (a sub-graph keeps them, so that rules that key on a
    # node, like destination routing, choose alike on the sub-graph and on the whole)
    ids: np.ndarray | None = None

    @property
    def node_ids(self) -> np.ndarray:
        return self.ids if self.ids is not None else np.arange(self.n_nodes)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.nodes)}

    @cached_property
    def out_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR view: directed edges sorted by tail, and where each node's run starts (length n + 1)."""
        order = np.argsort(self.src, kind="stable")
        return order, np.searchsorted(self.src[order], np.arange(self.n_nodes + 1))

    @cached_property
    def unit_csr(self):
        """The directed graph as a scipy CSR matrix of ones (for compiled BFS)."""
        import scipy.sparse as sp

        n = self.n_nodes
        return sp.csr_array((np.ones(len(self.src)), (self.src, self.dst)), shape=(n, n))

    def expand(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each entry of ``nodes``, its out-edges: (index into ``nodes``, directed edge)."""
        order, starts = self.out_edges
        degree = starts[nodes + 1] - starts[nodes]
        owner = np.repeat(np.arange(len(nodes)), degree)
        offsets = np.arange(degree.sum()) - np.repeat(np.cumsum(degree) - degree, degree)
        return owner, order[np.repeat(starts[nodes], degree) + offsets]

    def restricted(self, nodes: np.ndarray, edges: np.ndarray) -> "GraphArrays":
        """The subgraph of ``nodes`` (indices, ascending) and the directed ``edges`` among them;
        undirected edge indices, classes and each node's whole-topology id are kept."""
        local = np.full(self.n_nodes, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        return GraphArrays(
            nodes=[self.nodes[i] for i in nodes],
            n_chips=int(np.sum(nodes < self.n_chips)),
            src=local[self.src[edges]],
            dst=local[self.dst[edges]],
            edge=self.edge[edges],
            bw_gbps=self.bw_gbps[edges],
            link_latency_ns=self.link_latency_ns[edges],
            node_latency_ns=self.node_latency_ns[nodes],
            edge_cls=self.edge_cls,
            edge_ends=self.edge_ends,
            ids=self.node_ids[nodes],
        )

    @cached_property
    def in_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR view by head: ``(starts, edge_ids)``, directed edges sorted by head and where each
        node's run starts (length n + 1)."""
        edge_ids = np.argsort(self.dst, kind="stable").astype(np.int64)
        starts = np.searchsorted(self.dst[edge_ids], np.arange(self.n_nodes + 1)).astype(np.int64)
        return starts, edge_ids


def graph_arrays(topology: Topology) -> GraphArrays:
    """Arrays for a topology (kept in its :attr:`~trnsim.topology.graph.Topology.cache`)."""
    if topology.cache.arrays is None:
        topology.cache.arrays = _arrays(topology)
    return topology.cache.arrays


def _arrays(topology: Topology) -> GraphArrays:
    nodes = list(topology.chips) + topology.switches
    index = {name: i for i, name in enumerate(nodes)}
    ends = list(topology.links)
    data = list(topology.links.values())
    m = len(ends)
    u_idx = np.fromiter((index[u] for u, _ in ends), dtype=np.int64, count=m)
    v_idx = np.fromiter((index[v] for _, v in ends), dtype=np.int64, count=m)
    bw = np.fromiter((d["bw_gbps"] for d in data), dtype=float, count=m)
    lat = np.fromiter((d["latency_ns"] for d in data), dtype=float, count=m)
    arrays = GraphArrays(
        nodes=nodes,
        n_chips=topology.n_ranks,
        src=np.concatenate([u_idx, v_idx]),
        dst=np.concatenate([v_idx, u_idx]),
        edge=np.concatenate([np.arange(m), np.arange(m)]),
        bw_gbps=np.tile(bw, 2),
        link_latency_ns=np.tile(lat, 2),
        node_latency_ns=np.asarray([topology.nodes[n]["latency_ns"] for n in nodes], dtype=float),
        edge_cls=[d["cls"] for d in data],
        edge_ends=ends,
    )
    return arrays


def components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Each of ``n`` nodes' connected component over the edges ``src -> dst`` (taken both ways),
    labelled by its smallest node index.

    Up to :data:`HOOK_EDGES` edges, hook and compress in array operations: each round, every edge
    hooks the root of its larger label under its smaller label, then every label jumps to its root
    (a component settles in a few rounds). That spares a scale-up domain scipy's import, which costs
    more than the work; larger graphs use scipy's compiled search.
    """
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    if len(src) > HOOK_EDGES:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        count, found = connected_components(
            sp.coo_array((np.ones(len(src)), (src, dst)), shape=(n, n)), directed=False
        )
        smallest = np.full(count, n)
        np.minimum.at(smallest, found, np.arange(n))
        return smallest[found]
    label = np.arange(n)
    while True:
        low = np.minimum(label[src], label[dst])
        hooked = label.copy()
        np.minimum.at(hooked, label[src], low)
        np.minimum.at(hooked, label[dst], low)
        while True:  # compress: every node points at its root
            jumped = hooked[hooked]
            if np.array_equal(jumped, hooked):
                break
            hooked = jumped
        if np.array_equal(hooked, label):
            return label
        label = hooked
