"""Sparse demands (a ring, a shift, a hypercube exchange) under ECMP, flow by flow.

Edge ``u -> v`` carries ``w sigma_s(u) sigma_t(v) / sigma_s(t)`` of flow ``s -> t`` when it lies on
a shortest path (:func:`trnsim.routing.ecmp.pair_loads`); a batch of demands is one vectorised pass.
On groups large enough for the compiled kernels, each flow's own shortest-path DAG is walked back
from its target instead (:func:`trnsim.routing.kernels.flow_loads`): the work is the flows' paths,
not flows x nodes (on a 4,096-chip mesh, whose paths are long, 45x less time than the numpy pass).
A large wrapped torus reads each member's rows off chip 0's by translation instead
(:func:`trnsim.routing.translated_loads.flow_loads`).
"""

import numpy as np

from trnsim.routing import kernels, translated_loads
from trnsim.routing.ecmp import pair_loads
from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy, shortest_extent

# a demand with more flows than this share of all ordered pairs is dense
DENSE_SHARE = 0.25


def applies(paths: GroupPaths, demand: Demand) -> bool:
    """ECMP and few flows: at most :data:`DENSE_SHARE` of all ordered pairs (in a graph of small
    parts, more than two flows per member are dense within the parts)."""
    if not paths.ecmp or demand.everyone:
        return False
    p, flows = paths.p, len(demand.src)
    return flows <= DENSE_SHARE * p * (p - 1) and not (paths.partitioned and paths.compiled and flows > 2 * p)


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    if not demands:
        return []
    flows = (
        np.concatenate([d.src for d in demands]),
        np.concatenate([d.dst for d in demands]),
        np.concatenate([d.weight for d in demands]),
        np.repeat(np.arange(len(demands)), [len(d.src) for d in demands]),
    )
    arrays, rows, n = paths.arrays, paths.rows, len(demands)
    if paths.translated is not None and paths.compiled:
        totals = translated_loads.flow_loads(paths.translated, flows, n, paths.transit)
    elif paths.compiled:
        totals = kernels.flow_loads(arrays, paths.dist, paths.sigma, rows, flows, n, paths.transit)
    else:
        totals = pair_loads(arrays, paths.narrow_dist, paths.sigma, rows, flows, n, paths.transit)
    return [shortest_extent(paths, demand, row) for demand, row in zip(demands, totals, strict=True)]


STRATEGY = Strategy("pairs", "flow by flow over each flow's shortest paths, batched", applies, loads)
