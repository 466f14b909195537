"""Parts that look alike, found by colour refinement: a fault sweep evaluates one per class.

Colour refinement (1-dimensional Weisfeiler-Leman) runs on the system with the part marked as
failed, and two parts whose refined colour histograms agree are taken as equivalent (an assumption:
it holds for the symmetric fabrics of the catalog, where it merges the parts an automorphism maps
onto each other; the sweep's ``exhaustive=True`` evaluates every part).
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
    groups: dict[bytes, list] = {}
    for part in parts:
        groups.setdefault(refiner.key(part)[0], []).append(part)
    return list(groups.values())


def _edge_bw(arrays) -> np.ndarray:
    """Bandwidth of each undirected edge (from its first directed copy)."""
    bw = np.zeros(len(arrays.edge_ends))
    bw[arrays.edge] = arrays.bw_gbps
    return bw
