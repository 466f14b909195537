"""The fabric as the exact bounds see it: a directed graph with capacities and a group of members.

Every device is a node (switches and chips outside the group relay); every link is two directed
edges of ``bw_gbps`` each. Nodes carry an initial colour (device kind and role) for colour refinement
(:mod:`trnsim.model.optimum.refine`), edges their link class (for labels and edge classes).
"""

from dataclasses import dataclass

import numpy as np

from trnsim.topology.graph import Topology


@dataclass
class Network:
    """A directed graph with capacities (GB/s) and a group of member nodes."""

    n: int
    src: np.ndarray
    dst: np.ndarray
    cap: np.ndarray
    members: np.ndarray  # node indices of the group, in group order
    node_key: np.ndarray  # initial node colour (device kind and role), for colour refinement
    edge_cls: np.ndarray  # link class name per directed edge

    @property
    def p(self) -> int:
        return len(self.members)

    def reversed(self) -> "Network":
        return Network(self.n, self.dst, self.src, self.cap, self.members, self.node_key, self.edge_cls)

    def is_symmetric(self) -> bool:
        """Every directed edge has a reverse edge of the same capacity."""
        key = self.src.astype(np.int64) * self.n + self.dst
        rev = self.dst.astype(np.int64) * self.n + self.src
        order = np.argsort(key)
        pos = np.searchsorted(key[order], rev)
        pos = np.minimum(pos, len(key) - 1)
        found = key[order][pos] == rev
        return bool(np.all(found) and np.allclose(self.cap[order][pos], self.cap, rtol=1e-12, atol=0))

    def out_bandwidth(self, side: np.ndarray) -> float:
        """B(X): total capacity of the directed edges leaving ``side`` (a node mask)."""
        return float(self.cap[side[self.src] & ~side[self.dst]].sum())


def network(topology: Topology, group: list[str]) -> Network:
    """The topology as a :class:`Network` with ``group`` as members.

    Examples
    --------
    Four chips joined pairwise: 6 links, 12 directed edges, every chip a member.

    >>> from trnsim.topology.synthetic import complete_topology
    >>> net = network(complete_topology(4), ["c0", "c1", "c2", "c3"])
    >>> net.n, len(net.src), net.members.tolist(), net.is_symmetric()
    (4, 12, [0, 1, 2, 3], True)
    """
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topology)
    keys = {}
    node_key = np.asarray(
        [
            keys.setdefault((topology.nodes[v]["kind"], topology.nodes[v].get("role")), len(keys))
            for v in arrays.nodes
        ],
        dtype=np.int64,
    )
    cls = np.asarray(arrays.edge_cls, dtype=object)[arrays.edge]
    members = np.asarray([arrays.index[c] for c in group], dtype=np.int64)
    return Network(arrays.n_nodes, arrays.src, arrays.dst, arrays.bw_gbps, members, node_key, cls)
