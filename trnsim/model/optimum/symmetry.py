"""Symmetries that let the exact bounds work from one member per orbit.

On a wrapped torus, the translations that map the group onto itself map targets onto targets and
shortest paths onto shortest paths (:class:`Translations`; the arithmetic is
:class:`trnsim.routing.symmetry.TorusSymmetry`'s). Elsewhere, the automorphisms that node names
suggest and the network confirms (:func:`trnsim.routing.symmetry.name_automorphisms`) give the
member orbits of the all-gather cut search.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.model.optimum.graph import Network
from trnsim.topology.graph import Topology

# translations of a torus that fix a group: skipped when members^2 or chips x stabiliser exceed this
STABILISER_WORK = 50_000_000


def member_orbit_reps(topology: Topology, net: Network) -> np.ndarray | None:
    """One member per orbit of the automorphisms that node names suggest and the network's
    capacities and membership confirm (:func:`trnsim.routing.symmetry.name_automorphisms`), or None
    when none is found. The min-ratio cut needs only one target per orbit."""
    from trnsim.routing.symmetry import name_automorphisms, orbits
    from trnsim.topology.arrays import graph_arrays

    member = np.zeros(net.n, dtype=np.int64)
    member[net.members] = 1
    perms = name_automorphisms(graph_arrays(topology).nodes, net.src, net.dst, np.round(net.cap, 9), member)
    if not perms:
        return None
    return np.unique(orbits(perms, net.n)[net.members])


@dataclass(frozen=True)
class Translations:
    """The translations of a wrapped torus that map the group onto itself.

    They act freely (no translation but the identity fixes a chip), so every member's orbit has
    ``multiplicity`` members and every edge's orbit as many edges.
    """

    reps: np.ndarray  # one member per orbit (node indices)
    multiplicity: int  # translations in the stabiliser
    edge_orbit: np.ndarray  # orbit id per directed edge


def translations(topology: Topology, group: list[str]) -> Translations | None:
    """The stabiliser of the group among a wrapped torus's translations, or None.

    The stabiliser and the orbits under it are :meth:`trnsim.routing.symmetry.TorusSymmetry.stabiliser`
    and :meth:`~trnsim.routing.symmetry.TorusSymmetry.orbits`. The whole torus is every translation
    (edge orbits: axis and direction). Skipped (None) on fabrics without translations, when only the
    identity fixes the group, or past ``STABILISER_WORK``.

    Examples
    --------
    Every other chip of a ring of 4: the shifts by 0 and by 2 chips map the pair onto itself, so
    one member stands for both.

    >>> from trnsim.topology.synthetic import ring_topology
    >>> ring = ring_topology(4)
    >>> found = translations(ring, [ring.chips[0], ring.chips[2]])
    >>> found.reps.tolist(), found.multiplicity
    ([0], 2)
    """
    from trnsim.routing.symmetry import torus_symmetry
    from trnsim.topology.arrays import graph_arrays

    symmetry = torus_symmetry(topology)
    if symmetry is None:
        return None
    arrays = graph_arrays(topology)
    axis_dir = symmetry.edge_orbits(arrays.src, arrays.dst)
    members = np.asarray([topology.rank_of[c] for c in group], dtype=np.int64)  # torus: node = rank
    n, p = symmetry.n, len(members)
    if p == n:
        return Translations(members[:1], n, np.unique(axis_dir, return_inverse=True)[1].ravel())
    if p * p > STABILISER_WORK:
        return None
    stabiliser = symmetry.stabiliser(members)
    s = len(stabiliser)
    if s == 1 or n * s > STABILISER_WORK:
        return None
    # a node's orbit is named by its smallest rank; a member's orbit holds members only
    orbit = symmetry.orbits(stabiliser)
    reps = np.unique(orbit[members])
    axes = len(symmetry.sizes)
    edge_orbit = np.unique(orbit[arrays.src] * (2 * axes) + axis_dir, return_inverse=True)[1].ravel()
    return Translations(reps, s, edge_orbit)
