"""Every member to every other on a fabric with automorphisms: one source per orbit.

Under automorphisms that node names suggest and the graph confirms (the next tray, the next plane,
the other rack: :func:`trnsim.routing.symmetry.member_orbits`), the all-pairs demand is preserved,
so its ECMP loads are one representative per member orbit, weighted by the orbit's size, averaged
over each directed edge's orbit. Used with the compiled kernels (large fabrics), where finding the
automorphisms costs less than the sources it saves.
"""

import numpy as np

from trnsim.routing import kernels
from trnsim.routing.paths import GroupPaths
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy, shortest_extent


def applies(paths: GroupPaths, demand: Demand) -> bool:
    """ECMP, all pairs, a group large enough for the compiled kernels, and automorphisms found."""
    return paths.ecmp and demand.everyone and paths.compiled and paths.member_orbits is not None


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    found, arrays, rows = paths.member_orbits, paths.arrays, paths.rows
    sources = rows[found.reps]
    out = []
    for demand in demands:
        matrix = np.zeros((len(found.reps), arrays.n_nodes))
        matrix[:, rows] = float(demand.weight[0]) * found.sizes[:, None]
        matrix[np.arange(len(found.reps)), sources] = 0.0
        totals = kernels.ecmp_demand_loads(arrays, sources, paths.transit, matrix)
        out.append(shortest_extent(paths, demand, found.averaged(totals)))
    return out


STRATEGY = Strategy("orbits", "one source per member orbit under the fabric's automorphisms", applies, loads)
