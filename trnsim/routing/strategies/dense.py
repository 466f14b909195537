"""Dense demands under ECMP: per-source accumulation over the shortest-path DAG, in numpy.

Every member's demand row is pushed back up its BFS DAG level by level (Brandes' dependency
accumulation, :func:`trnsim.routing.ecmp.ecmp_loads`); the fallback for every ECMP demand that no
faster strategy takes.
"""

import numpy as np

from trnsim.routing.ecmp import ecmp_loads
from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy, shortest_extent


def applies(paths: GroupPaths, demand: Demand) -> bool:
    """Any ECMP demand."""
    return paths.ecmp


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    arrays, rows, p = paths.arrays, paths.rows, paths.p
    out = []
    for demand in demands:
        matrix = np.zeros((p, arrays.n_nodes))
        if demand.everyone:
            matrix[:, rows] = float(demand.weight[0])
            matrix[np.arange(p), rows] = 0.0
        else:
            np.add.at(matrix, (demand.src, rows[demand.dst]), demand.weight)
        out.append(shortest_extent(paths, demand, ecmp_loads(arrays, paths.bfs, matrix)))
    return out


STRATEGY = Strategy("dense", "per-source accumulation over the shortest-path DAG", applies, loads)
