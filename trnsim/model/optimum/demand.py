"""The demand ops' optimum: the maximum concurrent flow of a traffic matrix, every device relaying.

Member ``i`` sends ``T[i, j] S`` to member ``j`` (gather, scatter, send/recv, permute, all-to-allv:
:meth:`trnsim.collectives.arguments.Arguments.traffic`). The fluid optimum over every routing is
``1 / lambda*`` seconds per byte of ``S``, where ``lambda*`` is the largest ``lambda`` with
``lambda T`` routable within the links' capacities (the maximum concurrent multicommodity flow):

* **Two members, one way or both** on symmetric links: the heavier way's max-flow (its mirror
  image carries the other way on the directions it leaves free).
* **One source or one sink** (a send/recv pair, a scatter, a gather): a single commodity. By
  max-flow min-cut, ``lambda* = min B(X) / T(X -> rest)`` over ``X`` holding the source (a sink:
  ``X`` missing the sink, ``T(X)`` the demand in it); a max-flow with a super source whose supplies
  are scaled by the demand finds it (:func:`trnsim.model.optimum.cuts.gather_cut` on the reversed
  graph for a source, as is for a sink). A single pair's is the max-flow between the two chips.
* **An even all-to-allv** is the all-to-all (:mod:`trnsim.model.optimum.alltoall`), scaled.
* **Otherwise** the source-aggregated multicommodity flow LP (one commodity per source, or per
  sink on the reversed graph when there are fewer sinks:
  :func:`trnsim.model.optimum.alltoall.flow_lp`), with twins merged. The bound reported is the LP's
  dual lengths evaluated here (Dijkstra: ``sum T[s, t] dist(s, t) / sum_e cap_e l_e``, valid for any
  lengths), exact when the LP's flow comes within ``GAP`` of it. Past ``DEMAND_LP_ENTRIES`` there is
  no optimum (None): the injection and natural-cut candidates stand alone.
"""

import hashlib

import numpy as np

from trnsim.model.optimum.alltoall import GAP, Dual, class_label, flow_lp
from trnsim.model.optimum.cuts import gather_cut
from trnsim.model.optimum.disk import kept
from trnsim.model.optimum.gather import cut_label, prepared
from trnsim.model.optimum.graph import Network, network
from trnsim.model.optimum.lengths import LENGTH_FLOOR
from trnsim.model.optimum.twins import merge_twins
from trnsim.topology.graph import Topology

# --- numbers that are not proofs ---
# the multicommodity LP is solved when commodities x directed links (twins merged) is at most this:
# HiGHS takes about 1 s at 10,000 on nl72x2 (14 commodities x 720 links) on a 2-core machine, and
# grows faster than linearly; past it there is no optimum candidate (a valid bound still stands)
DEMAND_LP_ENTRIES = 10_000


def demand_optimum(
    topology: Topology, group: list[str], traffic: np.ndarray, op_name: str
) -> tuple[float, str, bool] | None:
    """The optimum of the traffic matrix ``traffic`` on ``group`` (module docstring): (seconds per
    byte of ``S``, label, exact), or None past ``DEMAND_LP_ENTRIES``. Kept in the topology's cache
    per group, op and matrix.

    Examples
    --------
    Four chips joined pairwise by 100 GB/s: chip 0 sends its buffer to chip 1 over the direct link
    and through each of the two others, 300 GB/s in all (chip 0's own links).

    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> pair = np.zeros((4, 4))
    >>> pair[0, 1] = 1.0
    >>> seconds, label, exact = demand_optimum(square, square.chips, pair, "sendrecv")
    >>> round(1 / seconds / 1e9, 9), label, exact
    (300.0, 'max-flow c0 -> c1', True)
    """
    moved = np.array(traffic, dtype=float)
    np.fill_diagonal(moved, 0.0)
    digest = hashlib.blake2b(moved.tobytes() + str(moved.shape).encode(), digest_size=16).hexdigest()
    cache = topology.cache.optimum
    key = (tuple(group), op_name, digest)
    if key not in cache:
        cache[key] = kept(topology, "demand", key, lambda: _demand_optimum(topology, list(group), moved))
    return cache[key]


def _demand_optimum(topology: Topology, group: list[str], moved: np.ndarray):
    if not np.any(moved > 0):
        return 0.0, "nothing to move", True
    p = len(group)
    ends = np.flatnonzero(moved.sum(axis=0) + moved.sum(axis=1) > 0)
    if len(ends) == 2 and network(topology, group).is_symmetric():
        return _pair(topology, group, moved, *ends)
    off = moved[~np.eye(p, dtype=bool)]
    if np.all(off == off[0]):  # an even all-to-all(v): 1/p of S per pair there, off[0] here
        from trnsim.model.optimum.solve import optimum

        found = optimum(topology, group, "alltoall")
        return found.seconds_per_byte * off[0] * p, found.limited_by, found.exact
    sources = np.flatnonzero(moved.sum(axis=1) > 0)
    sinks = np.flatnonzero(moved.sum(axis=0) > 0)
    if len(sources) == 1 or len(sinks) == 1:
        return _single(topology, group, moved, sources, sinks)
    return _multi(topology, group, moved, sources, sinks)


def _single(topology: Topology, group: list[str], moved: np.ndarray, sources, sinks):
    """One source (the min-ratio cut on the reversed graph, the source the target) or one sink."""
    reverse = len(sources) == 1
    end = int(sources[0] if reverse else sinks[0])
    weights = moved[end, :] if reverse else moved[:, end]
    net, merged, mapping, hints, _ = prepared(topology, group, reverse, symmetric_targets=False)
    cut = gather_cut(merged, mapping[net.members[[end]]], hints=hints, weights=weights)
    side = cut.side[mapping]
    weight = np.zeros(net.n)
    weight[net.members] = weights
    bandwidth = net.out_bandwidth(side)
    seconds = float(weight[side].sum()) / (bandwidth * 1e9) if bandwidth > 0 else float("inf")
    if len(sources) == 1 and len(sinks) == 1:
        label = f"max-flow {group[sources[0]]} -> {group[sinks[0]]}"
    else:
        where = "from" if reverse else "to"
        label = f"max-flow {where} {group[end]} ({cut_label(topology, group, net, side)})"
    return seconds, label, cut.exact


def _pair(topology: Topology, group: list[str], moved: np.ndarray, a: int, b: int):
    """Two members, one way or both, on symmetric links: the heavier way's max-flow. A max-flow
    without cycles never uses both directions of a link, so its mirror image carries the other way
    on the unused directions: ``max(T[a, b], T[b, a]) / maxflow(a, b)``."""
    one = np.zeros_like(moved)
    heavier = (a, b) if moved[a, b] >= moved[b, a] else (b, a)
    one[heavier] = moved[heavier]
    seconds, label, exact = _single(topology, group, one, np.array(heavier[:1]), np.array(heavier[1:]))
    if moved[a, b] > 0 and moved[b, a] > 0:
        label = f"max-flow {group[a]} <-> {group[b]}"
    return seconds, label, exact


def _multi(topology: Topology, group: list[str], moved: np.ndarray, sources, sinks):
    """The source-aggregated LP (per sink, on the reversed graph, when there are fewer sinks)."""
    reverse = len(sinks) < len(sources)
    if reverse:
        moved, sources = moved.T, sinks
    net = network(topology, group)
    net, _ = merge_twins(net.reversed() if reverse else net)
    if len(sources) * len(net.src) > DEMAND_LP_ENTRIES:
        return None
    rows = np.arange(len(sources))
    demand = np.zeros((len(sources), net.n))
    demand[:, net.members] = moved[sources]
    demand[rows, net.members[sources]] -= moved[sources].sum(axis=1)
    result = flow_lp(net, demand)
    if result.status != 0:
        return None
    lengths = np.maximum(-np.asarray(result.ineqlin.marginals), 0.0)
    total = float(net.cap @ lengths)
    if not total > 0:
        return None
    # normalised as the all-to-all's points, then evaluated here: valid whatever the solver's tolerances
    point = lengths * (float(net.cap.sum()) / total) + LENGTH_FLOOR
    dist = _distances(net, point, net.members[sources])[:, net.members]
    seconds = float(np.sum(moved[sources] * dist)) / float(net.cap @ point) / 1e9
    primal = result.fun / 1e9
    discrete = np.arange(len(net.src))
    label = class_label(net, Dual(seconds, point, discrete, primal, primal, 1))
    return seconds, label, primal <= seconds * (1 + GAP)


def _distances(net: Network, lengths: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Shortest distances from ``sources`` at edge ``lengths`` (parallel edges: the shortest)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import dijkstra

    key = net.src.astype(np.int64) * net.n + net.dst
    order = np.lexsort((lengths, key))
    first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
    graph = sp.csr_array((lengths[first], (net.src[first], net.dst[first])), shape=(net.n, net.n))
    return dijkstra(graph, directed=True, indices=sources)
