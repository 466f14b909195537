"""Edge classes for the all-to-all dual, from 1-WL colour refinement of the devices.

Automorphisms that fix the group preserve colours, so every class is a union of edge orbits; on the
catalog's regular fabrics the classes are the orbits, but they can merge orbits on unusual graphs,
and a scattered group breaks the symmetry into many classes.
"""

import numpy as np

from trnsim.model.optimum.graph import Network
from trnsim.routing.mix import splitmix64


def edge_classes(net: Network, max_classes: int | None = None) -> np.ndarray:
    """Directed edge classes from 1-WL colour refinement of the nodes.

    Nodes start coloured by (kind, role, member); each round a node's colour becomes its old colour
    with the multisets of (edge colour, neighbour colour) over its out- and in-edges, hashed
    (splitmix64 sums: a collision would only merge classes, which keeps the bound valid). Edge
    colour is (link class, bandwidth); an edge's class is its colour with its two ends' colours.
    Automorphisms that fix the group preserve colours, so every class is a union of edge orbits.
    With ``max_classes``, refinement stops at the last round that gives at most that many classes
    (the first round's classes are kept even if more).

    Examples
    --------
    Three chips on one switch: the links up to the switch form one class, the links down another.

    >>> from trnsim.model.optimum.graph import network
    >>> from trnsim.topology.synthetic import graph_topology
    >>> star = graph_topology(3, 1, {("c0", "s0"): 100.0, ("c1", "s0"): 100.0, ("c2", "s0"): 100.0})
    >>> net = network(star, star.chips)
    >>> [(int(u), int(v), int(k)) for u, v, k in zip(net.src, net.dst, edge_classes(net))]
    [(0, 3, 0), (1, 3, 0), (2, 3, 0), (3, 0, 1), (3, 1, 1), (3, 2, 1)]
    """
    member = np.zeros(net.n, dtype=np.int64)
    member[net.members] = 1
    _, colour = np.unique(net.node_key * 2 + member, return_inverse=True)
    colour = colour.ravel()
    _, cls_id = np.unique(net.edge_cls.astype(str), return_inverse=True)
    _, ecol = np.unique(np.stack([cls_id.ravel(), np.round(net.cap, 9)], axis=1), axis=0, return_inverse=True)
    ecol = ecol.ravel().astype(np.uint64)

    def classes_of(colour):
        rows = np.stack([ecol.astype(np.int64), colour[net.src], colour[net.dst]], axis=1)
        return np.unique(rows, axis=0, return_inverse=True)[1].ravel()

    classes = classes_of(colour)
    count = colour.max() + 1
    while True:
        nc = np.uint64(count)
        out_hash = splitmix64((ecol * nc + colour[net.dst].astype(np.uint64)) << np.uint64(1))
        in_hash = splitmix64(((ecol * nc + colour[net.src].astype(np.uint64)) << np.uint64(1)) | np.uint64(1))
        h_out = np.zeros(net.n, dtype=np.uint64)
        h_in = np.zeros(net.n, dtype=np.uint64)
        np.add.at(h_out, net.src, out_hash)
        np.add.at(h_in, net.dst, in_hash)
        signature = np.stack([colour.astype(np.uint64), h_out, h_in], axis=1)
        new = np.unique(signature, axis=0, return_inverse=True)[1].ravel()
        if new.max() + 1 == count:
            return classes
        finer = classes_of(new)
        if max_classes is not None and finer.max() + 1 > max_classes:
            return classes
        colour, count, classes = new, new.max() + 1, finer
