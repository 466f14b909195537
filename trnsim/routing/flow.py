"""Route a demand matrix by a maximum concurrent flow: the split over paths whose busiest link is least busy.

Where :mod:`trnsim.routing.ecmp` spreads each flow over its shortest paths only, :func:`min_congestion`
may send it along any path through devices that forward (every device, or switches only; see
:func:`trnsim.routing.shortest.transit_mask`): a send/recv between two chips then reaches the
max-flow between them, not what their shortest paths carry.

The multicommodity linear program (HiGHS) has one commodity per distinct source, or per distinct
sink where those are fewer (a gather's one sink: solved on the reversed graph, where it is the
source): its variables are each commodity's bytes on each directed link (per byte of collective
size), conservation holds at every device, and the objective is the busiest link's time ``t``
(bytes / bandwidth). A second program keeps ``t`` and minimises bytes x links, so that no flow
takes a longer path than the optimum needs (a step's latency counts its longest path). Each
commodity's flow is then cut into paths (:func:`_decompose`).

The programs have ``commodities x directed links`` variables: above :data:`MAX_FLOW_VARIABLES` they
are refused (:class:`~trnsim.errors.NotApplicable`) before they are built.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.errors import NotApplicable
from trnsim.topology.arrays import GraphArrays

# Assumption (a speed limit, not a model figure): one source or sink on the largest catalog fabric
# (5,328 directed links, 0.3-0.5 s) and 16 on a 4x4x4 torus (6,144: 1.3 s) fit; HiGHS's time grows
# much faster than the size beyond (32 sources on that torus: 24 s), so larger demands are refused
MAX_FLOW_VARIABLES = 6_000
# the second program may let the busiest link be this much busier than the first's optimum (without
# slack HiGHS's own tolerances may call the first's solution infeasible)
_SLACK = 1e-9
# a flow below this share of the largest demand is rounding: left out of the paths
_ROUNDING = 1e-9


@dataclass(frozen=True)
class Routed:
    """A demand routed by :func:`min_congestion`.

    ``paths[i]`` lists flow ``i``'s paths as ``(node indices, share of the flow's bytes)``, the
    shares summing to 1; ``seconds_per_byte`` is the optimum's busiest link time per byte of
    collective size (the first program's ``t``).
    """

    paths: list[list[tuple[tuple[int, ...], float]]]
    seconds_per_byte: float


def check_size(arrays: GraphArrays, src: np.ndarray, dst: np.ndarray) -> None:
    """Refuse flows whose programs would have more than :data:`MAX_FLOW_VARIABLES` variables
    (commodities x directed links), before anything is built."""
    count = min(len(np.unique(src)), len(np.unique(dst))) * len(arrays.src)
    if count > MAX_FLOW_VARIABLES:
        raise NotApplicable(
            f"its flow program would have {count:,} variables (commodities x directed links), more than "
            f"{MAX_FLOW_VARIABLES:,}"
        )


def min_congestion(
    arrays: GraphArrays,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray,
    transit: np.ndarray | None = None,
) -> Routed:
    """Route flows ``src[i] -> dst[i]`` (node indices) of ``weight[i]`` x size bytes at least congestion.

    Parameters
    ----------
    arrays : GraphArrays
        The graph; each directed edge's capacity is its ``bw_gbps``.
    src, dst : numpy.ndarray of int
        Each flow's end nodes (different nodes).
    weight : numpy.ndarray
        Each flow's bytes per byte of collective size (positive).
    transit : numpy.ndarray of bool, optional
        Nodes that may forward others' bytes (None: every node).

    Raises
    ------
    NotApplicable
        Above :data:`MAX_FLOW_VARIABLES`, or when a flow's ends are not joined through devices
        that forward.

    Examples
    --------
    Two chips of a ring of four, 100 GB/s per link each way: the short way and the long way round
    carry half each, so the busiest link carries half the size.

    >>> from trnsim.topology.arrays import graph_arrays
    >>> from trnsim.topology.synthetic import ring_topology
    >>> routed = min_congestion(graph_arrays(ring_topology(4, lanes=100)), [0], [1], [1.0])
    >>> sorted((len(path) - 1, round(share, 6)) for path, share in routed.paths[0])
    [(1, 0.5), (3, 0.5)]
    >>> round(1e-9 / routed.seconds_per_byte, 6)  # GB/s
    200.0
    """
    src, dst, weight = np.asarray(src), np.asarray(dst), np.asarray(weight, dtype=float)
    check_size(arrays, src, dst)
    reverse = len(np.unique(dst)) < len(np.unique(src))
    tails, heads = (arrays.dst, arrays.src) if reverse else (arrays.src, arrays.dst)
    roots, leaves = (dst, src) if reverse else (src, dst)
    sources, commodity = np.unique(roots, return_inverse=True)
    x, t_ns, (kk, ee) = _solve(arrays, tails, heads, sources, commodity, leaves, weight, transit)
    flows = np.zeros((len(sources), len(tails)))
    flows[kk, ee] = x
    rounding = _ROUNDING * float(weight.max(initial=1.0))
    by_pair: dict[tuple[int, int], list[tuple[tuple[int, ...], float]]] = {}
    for k, root in enumerate(sources.tolist()):
        need: dict[int, float] = {}
        for leaf, w in zip(leaves[commodity == k].tolist(), weight[commodity == k].tolist(), strict=True):
            need[leaf] = need.get(leaf, 0.0) + w
        for leaf, paths in _decompose(flows[k], tails, heads, arrays.n_nodes, root, need, rounding).items():
            total = sum(amount for _, amount in paths)
            by_pair[root, leaf] = [
                (path[::-1] if reverse else path, amount / total) for path, amount in paths
            ]
    return Routed([by_pair[r, v] for r, v in zip(roots.tolist(), leaves.tolist(), strict=True)], t_ns * 1e-9)


def _solve(arrays, tails, heads, sources, commodity, leaves, weight, transit):
    """The two programs (module docstring): each (commodity, edge) variable's bytes, the optimum's
    busiest link time in nanoseconds per byte, and the variables' (commodity, edge) indices."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m, k = arrays.n_nodes, len(tails), len(sources)
    allowed = heads[None, :] != sources[:, None]  # nothing flows back into its own source
    if transit is not None:  # a device that does not forward sends only its own bytes
        allowed &= transit[tails][None, :] | (tails[None, :] == sources[:, None])
    kk, ee = np.nonzero(allowed)
    v = len(kk)
    supply = np.zeros((k, n))
    np.add.at(supply, (commodity, sources[commodity]), weight)
    np.add.at(supply, (commodity, leaves), -weight)
    ones, cols = np.ones(v), np.arange(v)
    rows = np.r_[kk * n + tails[ee], kk * n + heads[ee]]
    a_eq = sp.csr_array((np.r_[ones, -ones], (rows, np.r_[cols, cols])), shape=(k * n, v + 1))
    # bytes on a link <= its GB/s x t, with t the busiest link's time in nanoseconds per byte
    capacity = arrays.bw_gbps.astype(float)
    a_ub = sp.csr_array(
        (np.r_[ones, -capacity], (np.r_[ee, np.arange(m)], np.r_[cols, np.full(m, v)])), shape=(m, v + 1)
    )
    cost = np.zeros(v + 1)
    cost[v] = 1.0
    first = linprog(cost, a_ub, np.zeros(m), a_eq, supply.ravel(), method="highs")
    if first.status == 2:
        raise NotApplicable("a flow's ends are not joined through devices that forward")
    if first.status != 0:
        raise NotApplicable(f"its flow program did not solve ({first.message})")
    t_ns = float(first.x[v])
    load = sp.csr_array((ones, (ee, cols)), shape=(m, v))
    second = linprog(ones, load, capacity * t_ns * (1 + _SLACK), a_eq[:, :v], supply.ravel(), method="highs")
    x = second.x if second.status == 0 else first.x[:v]
    return np.clip(x, 0.0, None), t_ns, (kk, ee)


def _decompose(flow, tails, heads, n: int, root: int, need: dict[int, float], rounding: float):
    """One commodity's flow (bytes per directed edge) as paths from ``root`` to each leaf in ``need``
    (the bytes it receives): ``{leaf: [(nodes, bytes), ...]}``.

    From the leaf, walk back along the in-edge that carries the most flow until the root, and take
    the path's bottleneck (at most what the leaf still needs) off every edge on it. A walk that
    meets a node it passed has found a cycle of flow: the cycle's bottleneck is cancelled and the
    walk goes on from that node. Flow below ``rounding`` is left: a leaf whose remaining need is
    that small is served (the caller turns each leaf's paths into shares of what they carry).
    """
    flow = flow.copy()
    order = np.argsort(heads, kind="stable")
    starts = np.searchsorted(heads[order], np.arange(n + 1))
    out: dict[int, list[tuple[tuple[int, ...], float]]] = {}
    for leaf, left in need.items():
        found = out.setdefault(leaf, [])
        while left > rounding:
            nodes, edges, seen = [leaf], [], {leaf: 0}
            while nodes[-1] != root:
                inbound = order[starts[nodes[-1]] : starts[nodes[-1] + 1]]
                if not len(inbound) or flow[inbound].max() <= rounding:
                    break
                e = int(inbound[np.argmax(flow[inbound])])
                tail = int(tails[e])
                if tail in seen:  # a cycle: cancel it and walk on from where it closed
                    cycle = edges[seen[tail] :] + [e]
                    flow[cycle] -= flow[cycle].min()
                    del nodes[seen[tail] + 1 :], edges[seen[tail] :]
                    seen = {node: i for i, node in enumerate(nodes)}
                    continue
                seen[tail] = len(nodes)
                nodes.append(tail)
                edges.append(e)
            if nodes[-1] != root:
                break
            amount = min(left, float(flow[edges].min()))
            flow[edges] -= amount
            left -= amount
            found.append((tuple(reversed(nodes)), amount))
        if not found:
            raise NotApplicable("its flow program lost a flow to rounding (a bug: please report it)")
    return out
