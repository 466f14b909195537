"""One path per flow, chosen hop by hop: the machinery of the single-path policies.

Every flow advances one link per round, all flows at once. At node ``u`` bound for ``t`` the next hops
are the out-edges ``u -> v`` on a shortest path (``d_t(v) = d_t(u) - 1``, ``v`` allowed to forward or
``t`` itself); a policy narrows them by link-class priority and picks one with an integer key per
flow (``key mod candidates``, candidates in a fixed link order).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trnsim.topology.arrays import GraphArrays


@dataclass(frozen=True)
class Walked:
    """Where a set of single-path flows went."""

    loads: np.ndarray  # bytes per directed edge, summed over the flows (one row per set of flows)
    latency_ns: np.ndarray  # per flow: its links' and forwarding devices' latencies
    links: np.ndarray  # per flow: links on its path


def walk(
    arrays: GraphArrays,
    dist_to: np.ndarray,
    src_nodes: np.ndarray,
    targets: np.ndarray,
    target_nodes: np.ndarray,
    weight: np.ndarray,
    keys: Callable[[np.ndarray, np.ndarray], np.ndarray],
    transit: np.ndarray | None = None,
    priority: np.ndarray | None = None,
    sets: np.ndarray | None = None,
    n_sets: int = 1,
) -> Walked:
    """Route each flow on one shortest path, choosing among next hops with ``keys``.

    Parameters
    ----------
    arrays : GraphArrays
        The graph.
    dist_to : ndarray, targets x nodes
        Links from every node to each target (a BFS from the targets, with the same ``transit``).
    src_nodes : array of int
        Each flow's source node.
    targets, target_nodes : arrays of int
        Each flow's row of ``dist_to`` and its destination node.
    weight : array of float
        Each flow's bytes.
    keys : callable
        ``keys(flows, nodes)`` gives a non-negative integer per flow still travelling (``flows`` are
        their indices, ``nodes`` where they are); the flow takes candidate ``key mod count``.
    transit : array of bool, optional
        Nodes that may forward traffic (all when None).
    priority : array of int, optional
        Per undirected edge: only the candidates of the lowest value are kept (dimension order).
    sets, n_sets : array of int, int
        Which of ``n_sets`` sets each flow belongs to (many steps walked at once); the loads then
        have one row per set.
    """
    n_flows = len(src_nodes)
    n_edges = len(arrays.src)
    loads = np.zeros(n_sets * n_edges)
    offset = np.zeros(n_flows, dtype=np.int64) if sets is None else np.asarray(sets, dtype=np.int64) * n_edges
    latency = np.zeros(n_flows)
    links = np.zeros(n_flows, dtype=np.int64)
    at = np.asarray(src_nodes, dtype=np.int64).copy()
    active = np.nonzero(at != target_nodes)[0]
    if np.any(dist_to[targets[active], at[active]] < 0):
        raise ValueError("a flow's destination is unreachable")
    while len(active):
        owner, edges = arrays.expand(at[active])
        heads = arrays.dst[edges]
        flow_targets = targets[active][owner]
        ok = dist_to[flow_targets, heads] == dist_to[flow_targets, at[active][owner]] - 1
        if transit is not None:
            ok &= transit[heads] | (heads == target_nodes[active][owner])
        owner, edges, heads = owner[ok], edges[ok], heads[ok]
        if priority is not None:
            rank = priority[arrays.edge[edges]]
            best = np.full(len(active), np.iinfo(np.int64).max)
            np.minimum.at(best, owner, rank)
            keep = rank == best[owner]
            owner, edges, heads = owner[keep], edges[keep], heads[keep]
        count = np.bincount(owner, minlength=len(active))
        first = np.cumsum(count) - count
        position = np.arange(len(owner)) - first[owner]
        pick = keys(active, at[active]) % count
        chosen = position == pick[owner]
        edges, heads = edges[chosen], heads[chosen]  # one per active flow, in flow order
        loads += np.bincount(offset[active] + edges, weights=weight[active], minlength=len(loads))
        arrived = heads == target_nodes[active]
        latency[active] += arrays.link_latency_ns[edges] + np.where(
            arrived, 0.0, arrays.node_latency_ns[heads]
        )
        links[active] += 1
        at[active] = heads
        active = active[~arrived]
    return Walked(loads.reshape(n_sets, n_edges) if sets is not None else loads, latency, links)
