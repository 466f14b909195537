"""Groups that are translates of another on a wrapped torus: scheduled and routed once.

Under ECMP on a wrapped torus, a group that is another shifted by a fixed offset (member by member)
is an exact copy of it: it takes the same schedule, and its loads are the first group's moved along
the translation (an automorphism of the torus).
"""

from dataclasses import replace

import numpy as np

from trnsim.model.router import StepRoute
from trnsim.topology.graph import Topology


def translates(topology: Topology, groups: list[list[str]]) -> list:
    """For each group: ``None`` when it must be scheduled and routed itself, else the index of an
    earlier group it is a translate of (member by member) and where each directed edge goes."""
    from trnsim.routing.policy import routing_of
    from trnsim.routing.symmetry import torus_symmetry
    from trnsim.topology.arrays import graph_arrays

    out: list = [None] * len(groups)
    routing = routing_of(topology.spec)
    symmetry = torus_symmetry(topology) if routing.policy == "ecmp" and routing.relay else None
    if symmetry is None or len(groups) < 2:
        return out
    arrays = graph_arrays(topology)
    mover = symmetry.edge_mover(arrays.src, arrays.dst)
    if mover is None:
        return out  # two links of one orbit at a chip: a translation's image of an edge is ambiguous
    rank = topology.rank_of
    first = np.asarray([rank[c] for c in groups[0]])
    for k in range(1, len(groups)):
        members = np.asarray([rank[c] for c in groups[k]])
        offset = symmetry.displacement(first[0], members[0])
        if np.array_equal(symmetry.translate(first, offset), members):
            out[k] = (0, mover(offset))
    return out


def moved(route: StepRoute, where: np.ndarray) -> StepRoute:
    """A route carried along a translation: the load of edge ``e`` moves to edge ``where[e]``."""
    loads = np.empty_like(route.link_loads)
    loads[where] = route.link_loads
    return replace(route, link_loads=loads)
