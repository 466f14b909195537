"""ECMP: every flow split evenly over all shortest paths (the ideal spread of a multipath fabric).

Two ways to the same loads. Many flows from few sources: bytes a flow from ``s`` puts on the directed
edge ``u -> v`` are its share ``sigma_s(u) / sigma_s(v)`` of what enters ``v`` towards its
destinations (Brandes' dependency accumulation, one BFS level at a time: :func:`ecmp_loads`). Few
flows: edge ``u -> v`` carries ``w sigma_s(u) sigma_t(v) / sigma_s(t)`` of flow ``s -> t`` when it
lies on a shortest path (:func:`pair_loads`).
"""

import numpy as np

from trnsim.routing.shortest import BFS, bfs, source_chunks
from trnsim.routing.symmetry import torus_symmetry
from trnsim.topology.arrays import GraphArrays, graph_arrays
from trnsim.topology.graph import Topology

# flows x nodes handled in one vectorised chunk (bounds memory)
_CHUNK = 1_000_000


def ecmp_loads(arrays: GraphArrays, result: BFS, demand: np.ndarray) -> np.ndarray:
    """Bytes on each directed edge when every row's demand is split evenly over shortest paths.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    result : BFS
        BFS from the demand's source nodes (row ``r`` starts at ``result.sources[r]``).
    demand : ndarray, rows x nodes
        Bytes each source sends to each node.

    Returns
    -------
    ndarray
        Bytes per directed edge (length ``2 * edges``), summed over all sources.
    """
    _, n = demand.shape
    through = demand.astype(float).copy()  # bytes entering each node that are bound for it or beyond
    flat_through, flat_sigma = through.reshape(-1), result.sigma.reshape(-1)
    loads = np.zeros(len(arrays.src))
    for r, e in reversed(result.dag):
        base = r.astype(np.int64) * n
        tails, heads = base + arrays.src[e], base + arrays.dst[e]
        share = flat_sigma[tails] / flat_sigma[heads] * flat_through[heads]
        loads += np.bincount(e, weights=share, minlength=len(loads))
        np.add.at(flat_through, tails, share)  # only the touched entries, not every (row, node)
    return loads


def alltoall_link_loads(topology: Topology) -> np.ndarray:
    """Bytes on every directed edge when every chip sends one byte to every other chip over ECMP.

    Summed over both directions and halved, this is networkx's
    ``edge_betweenness_centrality_subset(G, chips, chips, normalized=False)`` (every device forwards,
    whatever the file's ``routing.relay``). On a torus with every axis wrapped, one source's loads
    summed over each edge's translation orbit give the answer; on other big graphs the compiled
    per-source kernel (:func:`trnsim.routing.kernels.ecmp_demand_loads`), else numpy per chunk of
    sources.
    """
    arrays = graph_arrays(topology)
    chips = np.arange(topology.n_ranks)  # chips come first in node order
    symmetry = torus_symmetry(topology)
    if symmetry is not None:
        result = bfs(arrays, np.array([0]))
        demand = np.zeros((1, arrays.n_nodes))
        demand[0, 1 : topology.n_ranks] = 1.0
        from_zero = ecmp_loads(arrays, result, demand)
        orbit = symmetry.edge_orbits(arrays.src, arrays.dst)
        return np.bincount(orbit, weights=from_zero)[orbit]
    from trnsim.routing import kernels

    if len(chips) * (arrays.n_nodes + len(arrays.src)) >= kernels.COMPILED_FROM:
        demand = np.zeros((1, arrays.n_nodes))
        demand[0, : topology.n_ranks] = 1.0  # one row that every source shares (its own entry left out)
        return kernels.ecmp_demand_loads(arrays, chips, None, demand)
    loads = np.zeros(len(arrays.src))
    for _, chunk in source_chunks(arrays, chips):
        demand = np.zeros((len(chunk), arrays.n_nodes))
        demand[:, : topology.n_ranks] = 1.0
        demand[np.arange(len(chunk)), chunk] = 0.0
        loads += ecmp_loads(arrays, bfs(arrays, chunk), demand)
    return loads


def pair_loads(
    arrays: GraphArrays,
    dist: np.ndarray,
    sigma: np.ndarray,
    rows: np.ndarray,
    flows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    n_sets: int,
    transit: np.ndarray | None = None,
) -> np.ndarray:
    """Loads of sets of flows between group members, flow by flow.

    Nodes on some shortest ``s -> t`` path satisfy ``d_s(w) + d_t(w) = d_s(t)``; only their
    out-edges are examined, which keeps the work near the paths' own size.

    Parameters
    ----------
    dist, sigma : ndarray, members x nodes
        Distances and shortest-path counts from each group member (BFS with the same ``transit``).
    rows : array of int
        Each member's node index.
    flows : (src, dst, weight, owner)
        Member positions of each flow's ends, its bytes, and which set it belongs to.
    n_sets : int
        How many sets of flows (rows of the result).
    transit : array of bool, optional
        Nodes that may forward traffic (all when None).

    Returns
    -------
    ndarray, n_sets x directed edges
        Bytes per directed edge for each set.
    """
    src, dst, weight, owner = flows
    n_edges = len(arrays.src)
    totals = np.zeros(n_sets * n_edges)
    if not len(src):
        return totals.reshape(n_sets, n_edges)
    d_st = dist[src, rows[dst]]
    share = weight / sigma[src, rows[dst]]
    chunk = max(1, _CHUNK // arrays.n_nodes)
    for lo in range(0, len(src), chunk):
        s, t, d = src[lo : lo + chunk], dst[lo : lo + chunk], d_st[lo : lo + chunk]
        # (flow, node) for nodes on a shortest path, the target excluded (it has no onward edge)
        on_path = (dist[s] + dist[t] == d[:, None]) & (dist[t] > 0) & (dist[s] >= 0)
        if transit is not None:  # a node that may not forward is on a path only as its source
            on_path &= transit[None, :] | (dist[s] == 0)
        flow, nodes = np.nonzero(on_path)
        which, edges = arrays.expand(nodes)
        flow, tails, heads = flow[which], nodes[which], arrays.dst[edges]
        s_f, t_f = s[flow], t[flow]
        onward = (dist[s_f, heads] == dist[s_f, tails] + 1) & (dist[t_f, heads] == dist[t_f, tails] - 1)
        onward &= True if transit is None else transit[heads] | (dist[t_f, heads] == 0)  # a chip forwards?
        flow, tails, heads, edges = flow[onward], tails[onward], heads[onward], edges[onward]
        values = share[lo + flow] * sigma[s[flow], tails] * sigma[t[flow], heads]
        totals += np.bincount(owner[lo + flow] * n_edges + edges, weights=values, minlength=len(totals))
    return totals.reshape(n_sets, n_edges)
