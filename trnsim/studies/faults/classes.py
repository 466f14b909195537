"""Parts that look alike, found by colour refinement: a fault sweep evaluates one per class.

Colour refinement (1-dimensional Weisfeiler-Leman) runs on the system with the part marked as
failed, and two parts whose refined colour histograms agree are taken as equivalent (an assumption:
it holds for the symmetric fabrics of the catalog, where it merges the parts an automorphism maps
onto each other; the sweep's ``exhaustive=True`` evaluates every part).

Refinement gives parts that an automorphism of the system maps onto each other the same histogram
(it sees no names), so it runs once per orbit of parts under the automorphisms that rename name
tokens (:mod:`trnsim.routing.relabel`: the trays, slots and racks of a switched fabric), and every
part of an orbit takes its first part's histogram: the classes are those of refining every part.
"""

import numpy as np

from trnsim.topology.faults import Component
from trnsim.topology.graph import Topology


def refined_histogram(src, dst, order, starts, edge_colour, node_colour) -> tuple[bytes, int]:
    """Colour refinement to a fixed point; the histogram of the final colours, as bytes, and the
    rounds it took.

    Colours are hashed with random 64-bit keys drawn afresh each round from one seed, so equal
    structures get equal hashes in every call (sums wrap modulo 2**64: order does not matter).
    """
    rng = np.random.default_rng(20261123)
    colours = node_colour
    count = len(np.unique(colours))
    rounds = 0
    while rounds < len(colours):
        rounds += 1
        node_keys = rng.integers(1, 2**63, size=int(colours.max()) + 1, dtype=np.uint64)
        edge_keys = rng.integers(
            1, 2**63, size=(int(edge_colour.max()) + 1, int(colours.max()) + 1), dtype=np.uint64
        )
        incoming = edge_keys[edge_colour, colours[src]][order]
        hashes = node_keys[colours].copy()
        hashes += np.add.reduceat(incoming, starts) if len(incoming) else 0
        unique, colours = np.unique(hashes, return_inverse=True)
        if len(unique) == count:
            break
        count = len(unique)
    return unique.tobytes() + np.bincount(colours).astype(np.int64).tobytes(), rounds


class Refiner:
    """Colour refinement of a system with one part marked as failed (see the module docstring).

    The system's arrays and starting colours are computed once; :meth:`key` marks one part and
    refines. ``applies`` is False for a system with a device without links (no refinement shortcut).
    """

    def __init__(self, topology: Topology):
        from trnsim.topology.arrays import graph_arrays

        self.arrays = arrays = graph_arrays(topology)
        kinds: dict = {}
        self.node_colour = np.array(
            [
                kinds.setdefault((topology.nodes[n]["kind"], topology.nodes[n].get("role")), len(kinds))
                for n in arrays.nodes
            ],
            dtype=np.int64,
        )
        link_kinds: dict = {}
        self.undirected = np.array(
            [
                link_kinds.setdefault((cls, round(float(bw), 6)), len(link_kinds))
                for cls, bw in zip(arrays.edge_cls, _edge_bw(arrays), strict=True)
            ],
            dtype=np.int64,
        )
        self.edge_of = {ends: k for k, ends in enumerate(arrays.edge_ends)}
        self.directed_cls = np.array([arrays.edge_cls[e] for e in arrays.edge])  # once, not per part
        self.order = np.argsort(arrays.dst, kind="stable")
        heads = arrays.dst[self.order]
        self.starts = np.flatnonzero(np.r_[True, heads[1:] != heads[:-1]])
        # a device without links: no refinement shortcut
        self.applies = len(self.starts) == arrays.n_nodes

    def key(self, part: Component) -> tuple[bytes, int]:
        """The part's kind and refined colour histogram (its class), and the rounds it took."""
        arrays, index, edge_of = self.arrays, self.arrays.index, self.edge_of
        failed_node = self.node_colour.max() + 1
        failed_edge, degraded_edge = self.undirected.max() + 1, self.undirected.max() + 2
        nodes = self.node_colour.copy()
        edges = self.undirected.copy()
        for name in part.nodes:
            nodes[index[name]] = failed_node
        for ends in part.links:
            edges[edge_of[ends] if ends in edge_of else edge_of[(ends[1], ends[0])]] = failed_edge
        for chip, cls in part.lanes:
            touched = (arrays.src == index[chip]) & (self.directed_cls == cls)
            edges[arrays.edge[touched]] = degraded_edge
        histogram, rounds = refined_histogram(
            arrays.src, arrays.dst, self.order, self.starts, edges[arrays.edge], nodes
        )
        return part.kind.encode() + b"|" + histogram, rounds


def equivalence_classes(topology: Topology, parts: list[Component]) -> list[list[Component]]:
    """The parts grouped into classes that look alike (see the module docstring), in order.

    Parameters
    ----------
    topology : Topology
        The system the parts belong to.
    parts : list of Component
        Parts that can fail (:func:`trnsim.topology.faults.components`).

    Returns
    -------
    list of list of Component
        The classes in order of their first part; each part alone where refinement does not apply.
    """
    refiner = Refiner(topology)
    if not refiner.applies:
        return [[part] for part in parts]
    first = _first_of_orbit(topology, parts)
    keys: dict[int, bytes] = {}
    groups: dict[bytes, list] = {}
    for part, rep in zip(parts, first, strict=True):
        if rep not in keys:
            keys[rep] = refiner.key(parts[rep])[0]
        groups.setdefault(keys[rep], []).append(part)
    return list(groups.values())


def _first_of_orbit(topology: Topology, parts: list[Component]) -> list[int]:
    """Per part, the first part of its orbit under the name-token renamings that are automorphisms
    (each part alone on a system without them)."""
    from trnsim.routing.relabel import relabels
    from trnsim.topology.arrays import graph_arrays

    parent = list(range(len(parts)))
    found = relabels(topology)
    if found is None or len(parts) < 2:
        return parent

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    names = graph_arrays(topology).nodes
    index = {_shape(part, {}): i for i, part in enumerate(parts)}
    for perm in found.generators():
        rename = dict(zip(names, (names[j] for j in perm), strict=True))
        for i, part in enumerate(parts):
            j = index.get(_shape(part, rename))
            if j is not None:
                a, b = sorted((root(i), root(j)))
                parent[b] = a  # the smaller index stays the root: the first part of the orbit
    return [root(i) for i in range(len(parts))]


def _shape(part: Component, rename: dict) -> tuple:
    """What a part fails, with its devices renamed (as sets: the order a part lists them in is not
    what fails)."""
    name = lambda node: rename.get(node, node)  # noqa: E731
    return (
        part.kind,
        frozenset(map(name, part.nodes)),
        frozenset(frozenset(map(name, ends)) for ends in part.links),
        frozenset((name(chip), cls) for chip, cls in part.lanes),
    )


def _edge_bw(arrays) -> np.ndarray:
    """Bandwidth of each undirected edge (from its first directed copy)."""
    bw = np.zeros(len(arrays.edge_ends))
    bw[arrays.edge] = arrays.bw_gbps
    return bw
