"""Translation symmetry of tori: one source stands for all.

On a torus whose axes all wrap, shifting every coordinate by the same offset maps the graph onto
itself, links, bandwidths and latencies included. So distances, path counts and path latencies
from chip ``s`` to chip ``v`` equal those from chip 0 to ``v - s``, and the traffic every chip sends
in a translation-invariant pattern puts on a directed link the sum of what chip 0's traffic puts on
the links of that link's orbit (same axis, same direction).

Fabrics without coordinates (switched racks of trays, planes of switches) are searched for
automorphisms among the permutations their node names suggest (the next tray, the next plane, the
other rack); each candidate is verified edge by edge, so what is kept is always a true symmetry, and
a fabric whose names suggest nothing simply has none. One member per orbit then stands for all in
the all-gather cut and in every-member-to-every-other loads.
"""

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from trnsim.topology.arrays import GraphArrays
from trnsim.topology.graph import Topology

# translations are applied in blocks of about this many (rank, translation, axis) entries, so that a
# large torus under a large group of translations stays within a few hundred MB
BLOCK_ENTRIES = 4_000_000


@dataclass(frozen=True)
class TorusSymmetry:
    """Coordinates of a wrapped torus's chips (node index = rank) and index arithmetic on them."""

    sizes: tuple[int, ...]

    @property
    def n(self) -> int:
        return int(np.prod(self.sizes))

    @cached_property
    def coords(self) -> np.ndarray:
        """Chip coordinates, one row per rank (row-major, last axis fastest)."""
        return np.stack(np.unravel_index(np.arange(self.n), self.sizes), axis=1).astype(np.int32)

    @cached_property
    def strides(self) -> list[int]:
        return [int(np.prod(self.sizes[i + 1 :])) for i in range(len(self.sizes))]

    def offset(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """The rank of ``dst - src`` (coordinate-wise, modulo the sizes), for pairs of ranks."""
        total = np.zeros(np.broadcast(src, dst).shape, dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(self.sizes, self.strides, strict=True)):
            digits = self.coords[:, axis]
            total += (digits[dst] - digits[src]) % size * stride
        return total

    def shifted(self, base: np.ndarray, src: np.ndarray) -> np.ndarray:
        """Rows ``M[s, v] = base[v - s]`` for each ``s`` in ``src``: chip 0's row seen from ``s``."""
        index = np.zeros((len(src), self.n), dtype=np.int64)
        for axis, (size, stride) in enumerate(zip(self.sizes, self.strides, strict=True)):
            digits = self.coords[:, axis]
            index += np.subtract.outer(digits[src], digits) * -1 % size * stride
        return base[index]

    def edge_orbits(self, tails: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """An orbit id per directed edge: which axis it runs along and in which direction."""
        sizes = np.asarray(self.sizes)
        delta = (self.coords[heads] - self.coords[tails]) % sizes
        axis = np.argmax(delta != 0, axis=1)
        step = delta[np.arange(len(tails)), axis]
        forward = step == 1  # a size-2 axis has one orbit: both wraps count as forward
        return axis * 2 + np.where(forward, 0, 1)

    def displacement(self, src: int, dst: int) -> np.ndarray:
        """The coordinate offset (each axis modulo its size) that carries rank ``src`` to ``dst``.

        Examples
        --------
        >>> sym = TorusSymmetry((2, 3))  # rank 5 is (1, 2)
        >>> sym.displacement(0, 5).tolist(), sym.displacement(5, 0).tolist()
        ([1, 2], [1, 1])
        """
        coords = self.coords.astype(np.int64)
        return (coords[dst] - coords[src]) % np.asarray(self.sizes)

    def translate(self, ranks: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """The ranks that ``ranks`` move to under the translation by the coordinate ``offset``.

        Broadcasts: ``ranks`` of shape ``S`` and offsets of shape ``T + (axes,)`` give shape
        ``broadcast(S, T)``, so many ranks under many translations is one call.

        Examples
        --------
        >>> sym = TorusSymmetry((2, 3))  # ranks 0..5, the last axis fastest
        >>> sym.translate(np.arange(6), np.array([0, 1])).tolist()
        [1, 2, 0, 4, 5, 3]
        """
        coords = self.coords.astype(np.int64)
        return ((coords[ranks] + offset) % np.asarray(self.sizes)) @ np.asarray(self.strides)

    def stabiliser(self, members: np.ndarray, block: int = BLOCK_ENTRIES) -> np.ndarray:
        """The translations (coordinate offsets, one per row) that map the set ``members`` onto itself.

        A translation must take the first member to a member, so the members' offsets from it are
        the candidates; each is kept if it maps every member to a member. Costs members^2 x axes,
        in blocks of about ``block`` entries.

        Examples
        --------
        >>> sym = TorusSymmetry((4,))  # a ring of 4
        >>> sym.stabiliser(np.array([0, 2])).tolist()  # every other chip: shifts by 0 and 2
        [[0], [2]]
        """
        members = np.asarray(members, dtype=np.int64)
        p, axes = len(members), len(self.sizes)
        inside = np.zeros(self.n, dtype=bool)
        inside[members] = True
        coords = self.coords.astype(np.int64)
        candidates = (coords[members] - coords[members[0]]) % np.asarray(self.sizes)
        keep = []
        step = max(1, block // max(p * axes, 1))
        for lo in range(0, p, step):
            shifted = self.translate(members[None, :], candidates[lo : lo + step, None, :])
            keep.append(inside[shifted].all(axis=1))
        return candidates[np.concatenate(keep)]

    def orbits(self, offsets: np.ndarray, block: int = BLOCK_ENTRIES) -> np.ndarray:
        """Each rank's orbit under the translations ``offsets`` (a group of them, e.g. a
        :meth:`stabiliser`), named by its smallest rank; costs ranks x offsets x axes, in blocks."""
        orbit = np.empty(self.n, dtype=np.int64)
        step = max(1, block // max(len(offsets) * len(self.sizes), 1))
        for lo in range(0, self.n, step):
            ranks = np.arange(lo, min(lo + step, self.n))
            orbit[lo : lo + step] = self.translate(ranks[:, None], offsets[None, :, :]).min(axis=1)
        return orbit

    def edge_mover(self, tails: np.ndarray, heads: np.ndarray):
        """A function giving, for a coordinate offset, the directed edge each edge moves to under
        that translation; None when a chip has two edges of one orbit (parallel links), which a
        tail and an orbit cannot tell apart."""
        # a directed edge is its tail and its orbit (axis and direction): a translation keeps the orbit
        orbit = self.edge_orbits(tails, heads)
        table = np.full((self.n, int(orbit.max()) + 1), -1, dtype=np.int64)
        table[tails, orbit] = np.arange(len(orbit))
        if np.count_nonzero(table >= 0) != len(orbit):
            return None
        return lambda offset: table[self.translate(tails, offset), orbit]


def torus_symmetry(topology: Topology) -> TorusSymmetry | None:
    """The symmetry of a torus whose every axis wraps, or ``None`` (switched fabrics, meshes, and a
    torus with failed components)."""
    spec = topology.spec
    if (
        spec.kind != "torus"
        or topology.faults
        or spec.chip.ranks > 1
        or not all(axis.wrap or axis.size <= 2 for axis in spec.torus.axes)
        or any(axis.twist for axis in spec.torus.axes)  # a twisted torus is no product of rings
    ):
        return None
    return TorusSymmetry(tuple(axis.size for axis in spec.torus.axes))


# ---------------------------------------------------------------------------------------------
# automorphisms suggested by node names (switched fabrics: racks, trays, planes, switches)

_INDEXED = re.compile(r"^(\D*)(\d+)$")


@lru_cache(maxsize=8)
def _name_candidates(names: tuple[str, ...]) -> list[np.ndarray]:
    """Node permutations that repeated structure in dotted names suggests (``r0.n3.A``,
    ``r1.B.sw4``): for each position of an indexed token, every node moves to its next sibling
    (same other tokens, same prefix; cyclically) or the first two siblings swap; for each position's
    plain words (planes ``A``..``D``), the words are renamed cyclically, or the first two swapped,
    wherever they appear. Each move also leaves the first sibling (word) in place, so that a failure
    there keeps the symmetry of the rest. Candidates only: the caller keeps those that preserve the
    graph."""
    index = {name: i for i, name in enumerate(names)}
    tokens = [name.split(".") for name in names]
    width = max((len(t) for t in tokens), default=0)
    candidates = []
    for k in range(width):
        siblings: dict[tuple, list[tuple[int, int]]] = {}
        words: set[str] = set()
        for i, parts in enumerate(tokens):
            if len(parts) <= k:
                continue
            match = _INDEXED.match(parts[k])
            if match is None:
                words.add(parts[k])
                continue
            key = (len(parts), tuple(parts[:k]), tuple(parts[k + 1 :]), match.group(1))
            siblings.setdefault(key, []).append((int(match.group(2)), i))
        for skip in (0, 1):  # the same moves among all siblings, and among all but the first
            cycle, swap = list(range(len(names))), list(range(len(names)))
            moved = False
            for members in siblings.values():
                order = [i for _, i in sorted(members)][skip:]
                if len(order) < 2:
                    continue
                moved = True
                for a, b in zip(order, order[1:] + order[:1], strict=True):
                    cycle[a] = b
                swap[order[0]], swap[order[1]] = order[1], order[0]
            if moved:
                candidates += [np.asarray(cycle, dtype=np.int64), np.asarray(swap, dtype=np.int64)]
        for skip in (0, 1):
            ordered = sorted(words)[skip:]
            if len(ordered) < 2:
                continue
            for rename in (
                dict(zip(ordered, ordered[1:] + ordered[:1], strict=True)),
                {ordered[0]: ordered[1], ordered[1]: ordered[0]},
            ):
                image = [index.get(".".join(rename.get(t, t) for t in parts), -1) for parts in tokens]
                perm = np.asarray(image, dtype=np.int64)
                if np.all(perm >= 0) and len(np.unique(perm)) == len(perm):
                    candidates.append(perm)
    distinct = {perm.tobytes(): perm for perm in candidates}
    return list(distinct.values())


def name_automorphisms(
    names: list[str],
    src: np.ndarray,
    dst: np.ndarray,
    edge_key: np.ndarray,
    node_key: np.ndarray,
) -> list[np.ndarray]:
    """Automorphisms of a directed graph among the permutations its node names suggest.

    A candidate is kept only if it maps every node to one with the same ``node_key`` and the multiset
    of directed edges ``(tail, head, edge_key)`` onto itself, so every permutation returned is a true
    automorphism (whatever the names mean); a graph whose names suggest nothing gives none.

    Parameters
    ----------
    names : list of str
        Node names (dot-separated tokens, as the switched builder writes them).
    src, dst : numpy.ndarray
        Each directed edge's tail and head.
    edge_key, node_key : numpy.ndarray
        Integer labels an automorphism must preserve (capacity, class and latency of an edge; kind,
        membership and latency of a node).
    """
    n = len(names)
    if n < 2 or len(src) == 0:
        return []
    codes = _edge_codes(n, edge_key)
    if codes is None:
        return []
    reference = np.sort(codes(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)))
    kept = []
    for perm in _name_candidates(tuple(names)):
        if np.array_equal(perm, np.arange(n)) or not np.array_equal(node_key[perm], node_key):
            continue
        if np.array_equal(np.sort(codes(perm[src], perm[dst])), reference):
            kept.append(perm)
    return kept


def _edge_codes(n: int, edge_key: np.ndarray):
    """A function giving each directed edge one integer from its ends and its key (equal integers:
    the same ends and key), or None when the integers would not fit in 63 bits."""
    _, attr = np.unique(edge_key, return_inverse=True)
    attr = attr.ravel().astype(np.int64)
    kinds = int(attr.max()) + 1 if len(attr) else 1
    if n * n * kinds >= 1 << 62:
        return None
    return lambda tail, head: (tail * n + head) * kinds + attr


def edge_image(perm: np.ndarray, src: np.ndarray, dst: np.ndarray, edge_key: np.ndarray) -> np.ndarray:
    """The directed edge each edge maps to under the node automorphism ``perm`` (parallel edges with
    the same key pair up in order)."""
    codes = _edge_codes(len(perm), edge_key)  # perm came from name_automorphisms: the codes fit
    before = np.argsort(codes(src, dst), kind="stable")
    after = np.argsort(codes(perm[src], perm[dst]), kind="stable")
    image = np.empty(len(src), dtype=np.int64)
    image[after] = before
    return image


def orbits(perms: list[np.ndarray], n: int) -> np.ndarray:
    """An orbit label per node under the group the permutations generate (the smallest index in
    the orbit)."""
    label = np.arange(n)
    if not perms:
        return label
    from trnsim.topology.arrays import smallest_in_component

    tails = np.concatenate([np.arange(n)] * len(perms))
    return smallest_in_component(n, tails, np.concatenate(perms))


@dataclass(frozen=True)
class MemberOrbits:
    """A group's orbits under some automorphisms of the graph (:func:`member_orbits`)."""

    reps: np.ndarray  # one member per orbit (group positions)
    sizes: np.ndarray  # members per orbit
    edge_orbit: np.ndarray  # orbit id (0..k-1) per directed edge

    def averaged(self, loads: np.ndarray) -> np.ndarray:
        """Loads averaged over each directed edge's orbit."""
        total = np.bincount(self.edge_orbit, weights=loads)
        return (total / np.bincount(self.edge_orbit))[self.edge_orbit]


def member_orbits(arrays: GraphArrays, rows: np.ndarray, transit: np.ndarray | None) -> MemberOrbits | None:
    """Symmetry beyond tori: under the automorphisms that node names suggest and the graph confirms
    (:func:`name_automorphisms`, preserving bandwidths, latencies, link classes, which nodes relay
    (``transit``, None: all), and the group ``rows``), one member per orbit (positions in the group),
    each orbit's size, and an orbit id per directed edge; None when none is found.

    ECMP loads of a demand the automorphisms preserve (every member to every other) are then the
    representatives' loads, weighted by orbit size and averaged over each edge's orbit.
    """
    member = np.zeros(arrays.n_nodes, dtype=np.int64)
    member[rows] = 1
    _, latency = np.unique(arrays.node_latency_ns, return_inverse=True)
    chip = np.arange(arrays.n_nodes) < arrays.n_chips
    relays = np.ones(arrays.n_nodes, dtype=np.int64) if transit is None else transit
    node_key = ((latency.ravel() * 2 + relays) * 2 + chip) * 2 + member
    _, cls = np.unique(np.asarray(arrays.edge_cls)[arrays.edge], return_inverse=True)
    table = np.stack([arrays.bw_gbps, arrays.link_latency_ns, cls.ravel()], axis=1)
    _, edge_key = np.unique(np.round(table, 9), axis=0, return_inverse=True)
    edge_key = edge_key.ravel()
    perms = name_automorphisms(arrays.nodes, arrays.src, arrays.dst, edge_key, node_key)
    if not perms:
        return None
    label = orbits(perms, arrays.n_nodes)[rows]
    _, reps, sizes = np.unique(label, return_index=True, return_counts=True)
    edge_perms = [edge_image(perm, arrays.src, arrays.dst, edge_key) for perm in perms]
    edge_orbit = np.unique(orbits(edge_perms, len(arrays.src)), return_inverse=True)[1].ravel()
    return MemberOrbits(reps, sizes.astype(float), edge_orbit)
