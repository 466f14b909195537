"""A group's dimensions: how its link classes make it a product of lines.

Each link class joins the group's members into *lines*: the members one class-``c`` path apart
through switches, or along a ring or clique of direct class-``c`` links. On a torus the x links
make x-rings; on a switched fabric the tray switches make trays, a switch plane makes the chips it
serves, the cross-rack cables make pairs. Where the lines of one class sit inside another's (a tray
inside a rack served by one plane) or cross them (a plane serving two of a tray's four slots), the
coarser class gets the quotient: counterparts across the finer blocks.

Where chips host several ranks (:func:`trnsim.topology.builders.expand_ranks`), the on-chip links
make each chip's ranks a line, and a rank reaches every other class through its chip: a rank stands
at its chip for every class but the on-chip one.

The result is a list of :class:`Dimension`: each a size ``k``, a coordinate per member, and the link
classes that may carry its traffic (any class whose lines contain the dimension's lines). When the
coordinates number the group as a full product (every combination once), an all-gather can run
dimension by dimension, as in a multi-dimensional torus.
"""

from dataclasses import dataclass, field

import numpy as np

from trnsim.collectives.schedule import Context, NotApplicable
from trnsim.topology.graph import RANK_CLASS


@dataclass
class Dimension:
    """One factor of the group's product structure."""

    name: str
    size: int
    coord: np.ndarray  # per group position, 0..size-1
    classes: tuple[str, ...]  # link classes whose lines contain this dimension's lines
    # per class: "mesh" (every pair one switch or link apart), "ring" (a cycle of direct links) or
    # "chain" (a path of direct links: a torus axis without its wrap), with the order for the last two
    modes: dict[str, str] = field(default_factory=dict)
    rings: dict[str, dict[int, int]] = field(default_factory=dict)  # class -> position -> next position


def _canonical(labels: np.ndarray) -> tuple[int, ...]:
    """Partition labels renumbered by first appearance, so equal partitions compare equal."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(first))
    return tuple(int(x) for x in rank[inverse])


def _class_lines(ctx: Context) -> dict[str, np.ndarray]:
    """For each link class, a line label per member: members joined by that class through switches."""
    topology = ctx.topology
    members = {chip: i for i, chip in enumerate(ctx.group)}
    parent: dict[str, dict[str, str]] = {}

    def find(table, x):
        root = x
        while table.setdefault(root, root) != root:
            root = table[root]
        while table[x] != root:
            table[x], x = root, table[x]
        return root

    # in the order the links first show them: a set's order changes with PYTHONHASHSEED, and with it
    # the order of equal-sized dimensions, the schedule's flow order and the last digits of its times
    classes = list(dict.fromkeys(data["cls"] for data in topology.links.values()))
    for (u, v), data in topology.links.items():
        # a class's lines pass through switches and join members directly, never through other chips
        if (u in members or topology.nodes[u]["kind"] == "switch") and (
            v in members or topology.nodes[v]["kind"] == "switch"
        ):
            if data["cls"] == RANK_CLASS:  # a rank stands at its chip for every class
                for cls in classes:
                    table = parent.setdefault(cls, {})
                    table[find(table, u)] = find(table, v)
                continue
            table = parent.setdefault(data["cls"], {})
            table[find(table, u)] = find(table, v)
    lines = {}
    for cls, table in parent.items():
        roots: dict[str, int] = {}
        labels = [
            roots.setdefault(find(table, chip), len(roots)) if chip in table else -1 - i
            for chip, i in members.items()
        ]
        lines[cls] = np.asarray(_canonical(np.asarray(labels)))
    return lines


def _block_size(labels: tuple[int, ...]) -> int | None:
    counts = np.bincount(np.asarray(labels))
    return int(counts[0]) if np.all(counts == counts[0]) else None


def _refines(fine: tuple[int, ...], coarse: tuple[int, ...]) -> bool:
    """Every block of ``fine`` sits inside one block of ``coarse``."""
    pairs = set(zip(fine, coarse, strict=True))
    return len({f for f, _ in pairs}) == len(pairs)


def _meet(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    second = np.asarray(b)
    return _canonical(np.asarray(a) * (int(second.max()) + 1) + second)


def _join(p: int, partitions: list[tuple[int, ...]]) -> tuple[int, ...]:
    parent = list(range(p))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for labels in partitions:
        first: dict[int, int] = {}
        for i, label in enumerate(labels):
            parent[find(i)] = find(first.setdefault(label, i))
    return _canonical(np.asarray([find(i) for i in range(p)]))


def _mode(ctx: Context, near, cls: str, positions: list[int]) -> tuple[str, dict[int, int]] | None:
    """How class ``cls`` joins these members (one line of a dimension): mesh, ring (with its order), or neither."""
    topology = ctx.topology
    # a rank meets other classes at its chip (its site); the on-chip class joins the ranks themselves
    chips = [ctx.group[i] if cls == RANK_CLASS else _site(topology, ctx.group[i]) for i in positions]
    index = {chip: i for chip, i in zip(chips, positions, strict=True)}
    if len(index) < len(chips):
        return None
    direct: dict[str, list[str]] = {chip: [] for chip in chips}
    via_switch = []
    for chip in chips:
        switches = set()
        for other, data in near[chip]:
            if data["cls"] != cls:
                continue
            if other in index:
                direct[chip].append(other)
            elif topology.nodes[other]["kind"] == "switch":
                switches.add(other)
        via_switch.append(frozenset(switches))
    k = len(chips)
    if all(len(set(direct[c])) == k - 1 for c in chips):
        return "mesh", {}
    if via_switch[0] and all(s == via_switch[0] for s in via_switch) and not any(direct.values()):
        return "mesh", {}
    if k >= 3 and all(len(set(direct[c])) == 2 for c in chips):
        order, previous, current = [chips[0]], None, chips[0]
        while True:
            nxt = next(n for n in sorted(set(direct[current])) if n != previous)
            if nxt == chips[0]:
                break
            order.append(nxt)
            previous, current = current, nxt
        if len(order) == k:
            return "ring", {index[a]: index[b] for a, b in zip(order, order[1:] + order[:1], strict=True)}
    degrees = sorted(len(set(direct[c])) for c in chips)
    if k >= 3 and degrees == [1, 1] + [2] * (k - 2):  # an open line (a torus axis without its wrap)
        start = min(c for c in chips if len(set(direct[c])) == 1)
        order, previous = [start], None
        while len(order) < k:
            nxt = [n for n in sorted(set(direct[order[-1]])) if n != previous]
            if not nxt:
                return None
            previous = order[-1]
            order.append(nxt[0])
        # the chain's order: each position to the next one along it (the last one to none)
        return "chain", {index[a]: index[b] for a, b in zip(order, order[1:], strict=False)}
    return None


def _site(topology, member: str) -> str:
    """Where a member meets the links of other chips: its chip for a rank, else itself."""
    return topology.nodes[member].get("chip", member)


def _adjacency(ctx: Context) -> dict[str, list[tuple[str, dict]]]:
    """Each member's (and each member's chip's) neighbours and the links to them."""
    members = set(ctx.group) | {_site(ctx.topology, chip) for chip in ctx.group}
    near: dict[str, list[tuple[str, dict]]] = {chip: [] for chip in members}
    for (u, v), data in ctx.topology.links.items():
        if u in members:
            near[u].append((v, data))
        if v in members:
            near[v].append((u, data))
    return near


def dimensions(ctx: Context) -> list[Dimension]:
    """The group's dimensions, or :class:`NotApplicable` saying why it is not a product of lines."""
    p = ctx.p
    if p < 2:
        raise NotApplicable("needs at least two ranks")
    on_axes = torus_dimensions(ctx)
    if on_axes is not None:
        return on_axes
    class_lines = {cls: _canonical(labels) for cls, labels in _class_lines(ctx).items()}
    trivial = tuple(range(p))
    family: dict[tuple[int, ...], None] = {}
    for labels in class_lines.values():
        if labels != trivial:
            family[labels] = None
    # close under intersections: a tray's slots that one plane serves are a block of their own
    changed = True
    while changed:
        changed = False
        for a in list(family):
            for b in list(family):
                meet = _meet(a, b)
                if meet != trivial and meet not in family:
                    family[meet] = None
                    changed = True
    for labels in family:
        if _block_size(labels) is None:
            owners = [cls for cls, lines in class_lines.items() if lines == labels]
            what = f"{owners[0]} links" if owners else "the link classes"
            raise NotApplicable(f"{what} join the group's members in blocks of different sizes")
    atoms: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []  # (partition, finer join, k)
    for labels in sorted(family, key=_block_size):
        inside = [a for a, _, _ in atoms if _refines(a, labels)]
        finer = _join(p, inside) if inside else trivial
        outer, inner = _block_size(labels), _block_size(finer)
        if inner is None or outer % inner:
            raise NotApplicable("the link classes' blocks do not nest evenly")
        if outer > inner:
            atoms.append((labels, finer, outer // inner))
    sizes = [k for _, _, k in atoms]
    if not atoms:
        raise NotApplicable(
            "no two members share a line of any link class (a switch, or neighbours along a torus axis)"
        )
    if int(np.prod(sizes)) != p or _join(p, [a for a, _, _ in atoms]) != (0,) * p:
        raise NotApplicable(
            "the group is not a full product of the lines its link classes form "
            f"(blocks of {' x '.join(map(str, sizes)) or 'nothing'} for {p} ranks)"
        )
    result = []
    for labels, finer, k in atoms:
        # coordinate: which finer block, within its own block, in order of their lowest rank
        coord = np.zeros(p, dtype=np.int64)
        seen: dict[int, dict[int, int]] = {}
        for i in range(p):
            numbering = seen.setdefault(labels[i], {})
            coord[i] = numbering.setdefault(finer[i], len(numbering))
        classes = tuple(cls for cls, lines in class_lines.items() if _refines(labels, lines))
        names = [cls for cls, lines in class_lines.items() if lines == labels]
        result.append(Dimension(names[0] if names else "+".join(classes), k, coord, classes))
    coords = np.stack([d.coord for d in result], axis=1)
    if len({tuple(row) for row in coords}) != p:
        raise NotApplicable("the link classes' lines do not number the group as a product")
    near = _adjacency(ctx)
    for number, dim in enumerate(result):
        for cls in dim.classes:
            mode = _line_mode(ctx, near, coords, number, cls)
            if mode is not None:
                dim.modes[cls], ring = mode
                if ring:
                    dim.rings[cls] = ring
        dim.classes = tuple(cls for cls in dim.classes if cls in dim.modes)
        if not dim.classes:
            raise NotApplicable(
                f"the {dim.name} lines are neither cliques (through switches or direct links), rings nor "
                "open chains of direct links"
            )
    return result


def _line_mode(ctx: Context, near, coords: np.ndarray, number: int, cls: str):
    """The mode in which ``cls`` serves dimension ``number`` on every one of its lines, or None."""
    others = np.delete(coords, number, axis=1)
    lines: dict[tuple, list[int]] = {}
    for i, key in enumerate(map(tuple, others)):
        lines.setdefault(key, []).append(i)
    modes, ring = set(), {}
    for positions in lines.values():
        mode = _mode(ctx, near, cls, positions)
        if mode is None:
            return None
        modes.add(mode[0])
        ring.update(mode[1])
    if len(modes) != 1:
        return None
    return modes.pop(), ring


def torus_dimensions(ctx: Context) -> list[Dimension] | None:
    """A whole wrapped torus in rank order, read off its axes: what :func:`dimensions` finds by
    walking the links (tests hold the two equal), without walking them; None for any other group.

    Each axis of size ``k >= 2`` is a dimension named after it (its links' class), in order of size
    (ties in axis order); a member's coordinate is its coordinate on the axis; a ring of ``k >= 4``
    runs towards coordinate + 1 (the neighbour whose name sorts first); two or three chips are a mesh.
    """
    from trnsim.routing.symmetry import torus_symmetry

    topology = ctx.topology
    symmetry = torus_symmetry(topology)
    if symmetry is None or ctx.p < 2 or ctx.group != topology.chips:
        return None
    coords = symmetry.coords.astype(np.int64)
    strides = np.asarray(symmetry.strides)
    axes = [(i, axis) for i, axis in enumerate(topology.spec.torus.axes) if axis.size >= 2]
    out = []
    for i, axis in sorted(axes, key=lambda entry: entry[1].size):
        dim = Dimension(axis.name, axis.size, coords[:, i].copy(), (axis.name,))
        if axis.size <= 3:  # every member of the line is next to every other
            dim.modes[axis.name] = "mesh"
        else:
            dim.modes[axis.name] = "ring"
            # each line from its first member (coordinate 0), lines in order of their first member
            start = np.flatnonzero(coords[:, i] == 0)
            members = (start[:, None] + np.arange(axis.size)[None, :] * strides[i]).ravel()
            nxt = start[:, None] + (np.arange(1, axis.size + 1) % axis.size)[None, :] * strides[i]
            dim.rings[axis.name] = dict(zip(members.tolist(), nxt.ravel().tolist(), strict=True))
        out.append(dim)
    return out
