"""Groups that are copies of another under an automorphism of the system: scheduled and routed once.

Under ECMP, a group that an automorphism of the system carries onto another (member by member) is an
exact copy of it: it takes the same schedule, and its loads are the first group's moved along the
automorphism's map of directed edges. Two kinds are found:

* on a wrapped torus, a group that is another shifted by a fixed offset (a translation);
* on any other fabric, groups whose device names correspond token by token through renamings that
  are automorphisms (:mod:`trnsim.routing.relabel`: the trays, slots, planes and racks of a
  switched fabric), each carried from the first group of its class (:class:`Carried`).
"""

from dataclasses import dataclass, replace

import numpy as np

from trnsim.model.router import StepRoute
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class Carried:
    """Where directed edges go under an automorphism that renames name tokens, computed only for
    the edges asked (``carried[edges]``): a group's loads sit on a few of the system's links."""

    relabels: object  # the :class:`~trnsim.routing.relabel.Relabels` that built ``perm``
    perm: np.ndarray  # the node permutation

    def __getitem__(self, edges: np.ndarray) -> np.ndarray:
        return self.relabels.edge_map(self.perm, np.asarray(edges))


def translates(topology: Topology, groups: list[list[str]]) -> list:
    """For each group: ``None`` when it must be scheduled and routed itself, else the index of an
    earlier group it is a copy of (member by member) and where each directed edge goes (an array on
    a torus, a :class:`Carried` elsewhere)."""
    from trnsim.routing.policy import routing_of
    from trnsim.routing.symmetry import torus_symmetry
    from trnsim.topology.arrays import graph_arrays

    out: list = [None] * len(groups)
    routing = routing_of(topology.spec)
    if routing.policy != "ecmp" or len(groups) < 2:
        return out
    symmetry = torus_symmetry(topology) if routing.relay else None
    if symmetry is None:
        return _carried(topology, groups) if topology.spec.kind != "torus" else out
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


def _carried(topology: Topology, groups: list[list[str]]) -> list:
    """Per group, None for the first of its class under name-token renamings (or on a system with
    failures, whose schedules are planned on the healthy one), else (that group, :class:`Carried`)."""
    from trnsim.routing.relabel import relabels
    from trnsim.topology.arrays import graph_arrays

    out: list = [None] * len(groups)
    found = relabels(topology) if not topology.faults else None
    if found is None:
        return out
    index = graph_arrays(topology).index
    rows = [np.asarray([index[chip] for chip in group], dtype=np.int64) for group in groups]
    first: dict[bytes, int] = {}
    for k, members in enumerate(rows):
        j = first.setdefault(found.signature(members), k)
        if j != k:
            out[k] = (j, Carried(found, found.carry(rows[j], members)))
    return out


def moved(route: StepRoute, where) -> StepRoute:
    """A route carried along an automorphism: the load of edge ``e`` moves to edge ``where[e]``."""
    loads = np.zeros_like(route.link_loads)
    if isinstance(where, Carried):
        used = np.flatnonzero(route.link_loads)
        loads[where[used]] = route.link_loads[used]
    else:
        loads[where] = route.link_loads
    return replace(route, link_loads=loads)
