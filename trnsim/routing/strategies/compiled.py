"""Dense demands on large groups: per-source ECMP accumulation in compiled kernels.

One source at a time with a queue, at compiled speed (:func:`trnsim.routing.kernels.ecmp_demand_loads`):
the work is sources x (nodes + edges), and no shortest-path DAG is kept. An all-pairs demand is one
row that every source shares.
"""

import numpy as np

from trnsim.routing import kernels
from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy, shortest_extent


def applies(paths: GroupPaths, demand: Demand) -> bool:
    """ECMP on a group large enough for the compiled kernels (:data:`kernels.COMPILED_FROM`)."""
    return paths.ecmp and paths.compiled


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    arrays, rows = paths.arrays, paths.rows
    out = []
    for demand in demands:
        if demand.everyone:
            matrix = np.zeros((1, arrays.n_nodes))
            matrix[0, rows] = float(demand.weight[0])  # every source's own entry is left out by the kernel
        else:
            matrix = np.zeros((len(rows), arrays.n_nodes))
            np.add.at(matrix, (demand.src, rows[demand.dst]), demand.weight)
        totals = kernels.ecmp_demand_loads(arrays, rows, paths.transit, matrix)
        out.append(shortest_extent(paths, demand, totals))
    return out


STRATEGY = Strategy("compiled", "per-source accumulation in compiled kernels", applies, loads)
