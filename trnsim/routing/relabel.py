"""Automorphisms that rename the tokens of device names: one group carried onto another.

A switched fabric names its devices with dotted tokens (``r0.n3.A``: rack, tray, slot; ``r1.B.sw4``:
rack, plane, switch). Renaming the values of one kind of token everywhere (every tray index, or the
plane letters wherever they appear) permutes the devices. Where the renaming by a cycle of all of
a token's values and the swap of its first two values are both automorphisms (checked edge by edge,
with every device's and link's attributes and which devices relay), every renaming of that token is
one: those two permutations generate all permutations of the values, and renamings compose. Such a
token is *free*.

Two groups are then carried onto each other by one automorphism when their members' names agree
position by position in everything but free tokens, and the free tokens correspond one to one
(tray 3 to tray 7 wherever it appears, plane A to plane C): :meth:`Relabels.signature` is equal for
exactly those groups, and :meth:`Relabels.carry` builds the automorphism. Under ECMP, a collective on
the second group is the first one's with every link load moved along the automorphism's map of
directed edges (:meth:`Relabels.edge_map`).
"""

import re
from dataclasses import dataclass, replace

import numpy as np

from trnsim.topology.arrays import GraphArrays, graph_arrays
from trnsim.topology.graph import Topology

_INDEXED = re.compile(r"^(\D*)(\d+)$")
# device attributes that say where a device sits, not what it is: a renaming may change them
POSITIONAL = frozenset(
    {"rank", "rack", "node", "slot", "slot_index", "plane", "switch_tray", "server", "chip", "core"}
)


# a fabric whose names would need a lookup table larger than this many entries per device has none
SPARSE_NAMES = 64


@dataclass(frozen=True)
class Relabels:
    """A fabric's name tokens as integer arrays, and which of them are free (module docstring)."""

    slot: np.ndarray  # (devices, width): each token's kind ("slot"), -1 past the end of the name
    value: np.ndarray  # (devices, width): the token's value, numbered within its slot
    sizes: np.ndarray  # values per slot
    free: np.ndarray  # per slot: every renaming of its values is an automorphism
    stride: np.ndarray  # (devices, width): where a token's value moves a name in the lookup table
    base: np.ndarray  # per device: where names of its slots start in the lookup table
    lookup: np.ndarray  # the device a name's place in the table stands for, -1 for none
    tails: np.ndarray  # each directed edge's tail and head
    heads: np.ndarray
    attr: np.ndarray  # each directed edge's attributes, as one integer
    edge_codes: np.ndarray  # sorted codes of the directed edges (tail, head, attributes), all distinct
    edge_of_code: np.ndarray  # the directed edge of each sorted code

    def signature(self, rows: np.ndarray) -> bytes:
        """What two groups (node indices, in group order) share exactly when :meth:`carry` maps one
        onto the other: their tokens' slots, each free token numbered by where its value first
        appears in the group, and every other token's value itself."""
        slots = self.slot[rows].ravel()
        keys = slots * (int(self.sizes.max()) + 1) + self.value[rows].ravel()
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        free = (slots >= 0) & self.free[np.maximum(slots, 0)]
        label = np.where(free, first[inverse.ravel()], -1 - keys)
        return np.stack([slots, label]).tobytes()

    def carry(self, source: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The node permutation ``perm`` (an automorphism) with ``perm[source[i]] == target[i]``, for
        groups of equal :meth:`signature` (what the caller checks)."""
        slots = self.slot[source].ravel()
        a, b = self.value[source].ravel(), self.value[target].ravel()
        table = np.tile(np.arange(int(self.sizes.max())), (len(self.sizes), 1))
        for s in np.unique(slots[(a != b) & (slots >= 0)]):  # only free slots move (equal signatures)
            mine = slots == s
            src, dst = a[mine], b[mine]
            table[s, src] = dst
            # the values the group does not name go to the values left, in order: any bijection
            # of a free token's values is an automorphism
            rest_src = np.ones(self.sizes[s], dtype=bool)
            rest_dst = rest_src.copy()
            rest_src[src] = rest_dst[dst] = False
            table[s, np.flatnonzero(rest_src)] = np.flatnonzero(rest_dst)
        return self._renamed(table)

    def generators(self) -> list[np.ndarray]:
        """Node permutations that generate every renaming of the free tokens: per free token, the
        cycle of its values and the swap of its first two."""
        out = []
        for s in np.flatnonzero(self.free & (self.sizes > 1)):
            m = int(self.sizes[s])
            for image in (np.roll(np.arange(m), -1), np.r_[1, 0, np.arange(2, m)]):
                out.append(self._renamed(self._table(s, image)))
        return out

    def _table(self, s: int, image: np.ndarray) -> np.ndarray:
        """Every slot's values in place but slot ``s``'s, renamed by ``image``."""
        table = np.tile(np.arange(int(self.sizes.max())), (len(self.sizes), 1))
        table[s, : len(image)] = image
        return table

    def edge_map(self, perm: np.ndarray, edges: np.ndarray | None = None) -> np.ndarray:
        """Where each directed edge (or each of ``edges``) goes under the automorphism ``perm``."""
        tails, heads, attr = (
            (self.tails, self.heads, self.attr)
            if edges is None
            else (self.tails[edges], self.heads[edges], self.attr[edges])
        )
        codes = self._edge_code(perm[tails], perm[heads], attr)
        return self.edge_of_code[np.searchsorted(self.edge_codes, codes)]

    def is_automorphism(self, perm: np.ndarray | None, node_key: np.ndarray) -> bool:
        """Whether ``perm`` is a permutation that keeps every device's key and maps the directed
        edges (with their attributes) onto themselves."""
        if perm is None or len(np.unique(perm)) != len(perm) or not np.array_equal(node_key[perm], node_key):
            return False
        codes = self._edge_code(perm[self.tails], perm[self.heads], self.attr)
        return np.array_equal(np.sort(codes), self.edge_codes)

    def _renamed(self, table: np.ndarray) -> np.ndarray | None:
        """The node permutation that renames each slot's values by ``table[slot]``, or None when a
        renamed name is no device's."""
        values = np.where(self.slot >= 0, table[np.maximum(self.slot, 0), self.value], 0)
        perm = self.lookup[self.base + (values * self.stride).sum(axis=1)]
        return None if np.any(perm < 0) else perm

    def _edge_code(self, tails: np.ndarray, heads: np.ndarray, attr: np.ndarray) -> np.ndarray:
        return (tails * len(self.base) + heads) * (int(self.attr.max()) + 1) + attr


def relabels(topology: Topology) -> Relabels | None:
    """The topology's name tokens and which are free (kept in its cache); None when its names would
    need too large a lookup table or two directed edges join the same devices alike."""
    if topology.cache.relabels is None:
        topology.cache.relabels = (_build(topology),)
    return topology.cache.relabels[0]


def _build(topology: Topology) -> Relabels | None:
    arrays = graph_arrays(topology)
    n = arrays.n_nodes
    slot, value, sizes = _tokens(arrays.nodes)
    # names of the same slots share a block of the lookup table, one place per combination of values
    shapes, shape = np.unique(slot, axis=0, return_inverse=True)
    extent = np.where(shapes >= 0, sizes[np.maximum(shapes, 0)], 1)
    stride = np.cumprod(extent[:, ::-1], axis=1)[:, ::-1]
    blocks = stride[:, 0]
    stride = np.concatenate([stride[:, 1:], np.ones((len(shapes), 1), dtype=np.int64)], axis=1)
    if blocks.sum() > SPARSE_NAMES * n:
        return None
    starts = np.concatenate([[0], np.cumsum(blocks)[:-1]])
    shape = shape.ravel()
    node_stride = np.where(slot >= 0, stride[shape], 0)
    place = starts[shape] + (value * node_stride).sum(axis=1)
    lookup = np.full(int(blocks.sum()), -1, dtype=np.int64)
    lookup[place] = np.arange(n)
    node_key, attr = _keys(topology, arrays)
    if float(n) * n * (int(attr.max()) + 1) >= 2.0**62:
        return None
    tails, heads = arrays.src.astype(np.int64), arrays.dst.astype(np.int64)
    edge_codes = (tails * n + heads) * (int(attr.max()) + 1) + attr
    if len(np.unique(edge_codes)) != len(edge_codes):
        return None  # parallel links alike: an edge's image would be ambiguous
    order = np.argsort(edge_codes)
    found = Relabels(
        slot,
        value,
        sizes,
        np.zeros(len(sizes), dtype=bool),
        node_stride,
        starts[shape],
        lookup,
        tails,
        heads,
        attr,
        edge_codes[order],
        order,
    )
    free = np.asarray([_is_free(found, s, node_key) for s in range(len(sizes))], dtype=bool)
    return replace(found, free=free)


def _is_free(found: Relabels, s: int, node_key: np.ndarray) -> bool:
    """Whether renaming slot ``s`` by a cycle of its values and by a swap of its first two values
    are both automorphisms (then every renaming is)."""
    m = int(found.sizes[s])
    for image in (np.roll(np.arange(m), -1), np.r_[1, 0, np.arange(2, m)]) if m > 1 else ():
        if not found.is_automorphism(found._renamed(found._table(s, image)), node_key):
            return False
    return True


def _tokens(names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each name's tokens as (slot, value) arrays, and the values per slot.

    An indexed token (``n3``, ``sw12``, ``7``) belongs to the slot of its position and its letters
    (in names of any length: a chip's ranks, ``r0.n3.A.c1``, rename with it); its values are
    ordered by number. A plain word (``A``, ``nvlink``)
    belongs to the slot of the words found at its position (positions whose words overlap share
    one): a word is renamed wherever it appears, as plane letters name chips and switches alike.
    """
    tokens = [name.split(".") for name in names]
    width = max(len(t) for t in tokens)
    words_at: dict[int, set[str]] = {}
    for parts in tokens:
        for k, token in enumerate(parts):
            if _INDEXED.match(token) is None:
                words_at.setdefault(k, set()).add(token)
    word_slot = _word_slots(list(words_at.values()))
    keys: dict[tuple, dict[str, None]] = {}  # slot key -> its values, in order of appearance
    cells = []
    for parts in tokens:
        row = []
        for k, token in enumerate(parts):
            match = _INDEXED.match(token)
            key = ("word", word_slot[token]) if match is None else (k, match.group(1))
            keys.setdefault(key, {})[token if match is None else match.group(2)] = None
            row.append((key, token if match is None else match.group(2)))
        cells.append(row)
    slot_of = {key: s for s, key in enumerate(keys)}
    numbered = {}
    for key, values in keys.items():
        ordered = sorted(values) if key[0] == "word" else sorted(values, key=lambda v: (int(v), v))
        numbered[key] = {v: i for i, v in enumerate(ordered)}
    slot = np.full((len(names), width), -1, dtype=np.int64)
    value = np.zeros((len(names), width), dtype=np.int64)
    for i, row in enumerate(cells):
        for k, (key, token) in enumerate(row):
            slot[i, k] = slot_of[key]
            value[i, k] = numbered[key][token]
    sizes = np.asarray([len(numbered[key]) for key in keys], dtype=np.int64)
    return slot, value, sizes


def _word_slots(sets: list[set[str]]) -> dict[str, int]:
    """A slot per word: the words of positions whose words overlap share one."""
    merged: list[set[str]] = []
    for words in sets:
        joined = [m for m in merged if m & words]
        union = set(words).union(*joined)
        merged = [m for m in merged if not m & words] + [union]
    return {word: s for s, words in enumerate(merged) for word in words}


def _keys(topology: Topology, arrays: GraphArrays) -> tuple[np.ndarray, np.ndarray]:
    """Integer keys an automorphism keeps: per device, its attributes but where it sits, and
    whether it is a rank (what decides whether it relays, under every policy); per directed edge,
    its link's attributes."""
    kinds: dict = {}
    node_key = np.fromiter(
        (
            _intern(kinds, {k: v for k, v in topology.nodes[name].items() if k not in POSITIONAL})
            for name in arrays.nodes
        ),
        dtype=np.int64,
        count=arrays.n_nodes,
    )
    rank = np.arange(arrays.n_nodes) < arrays.n_chips
    links: dict = {}
    link_key = np.fromiter(
        (_intern(links, data) for data in topology.links.values()), dtype=np.int64, count=len(topology.links)
    )
    return node_key * 2 + rank, link_key[arrays.edge]


def _intern(seen: dict, attributes: dict) -> int:
    """One integer per distinct set of attributes."""
    try:
        key = tuple(sorted(attributes.items()))
        hash(key)
    except TypeError:  # a list or a dict among the values
        key = repr(sorted((k, repr(v)) for k, v in attributes.items()))
    return seen.setdefault(key, len(seen))
