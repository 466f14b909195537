"""The candidates for a collective's bandwidth bound, one function per family, all of one shape.

Every family returns a list of :class:`Candidate` (seconds per byte of the nccl-tests size ``S``, a
label, the family, and whether it is proven optimal); the bound is the largest (:func:`largest`),
named by the first candidate within :data:`TIE` of it, in the order the families are tried:

* ``injection``: a member's own links (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms
  for clusters of workstations", JPDC 2009);
* ``cut``: a natural cut (rack halves, torus halves, a switch plane's chips against the rest);
* ``per-chip``: a chip hosting several ranks, its ranks sharing its links;
* ``optimum``: the exact optimum over every cut and every routing (:mod:`trnsim.model.optimum`).

In-network reduction (:func:`in_network`) and a skewed all-to-all (:func:`skewed`) replace the first
three with their own injection and cut candidates.
"""

from dataclasses import dataclass, replace

from trnsim.collectives.ops import Op
from trnsim.topology.graph import Topology
from trnsim.topology.metrics import cut_bandwidths

# candidates within this relative margin of the largest are ties, named in the order they come
TIE = 1e-9


@dataclass(frozen=True)
class Candidate:
    """One lower bound on a collective's bandwidth term, and what it is.

    Attributes
    ----------
    seconds_per_byte : float
        The bound, in seconds per byte of the nccl-tests size.
    label : str
        What forces it: ``injection (<chip>)``, ``cut <name>``, or the optimum's label.
    family : str
        ``injection``, ``cut``, ``per-chip`` or ``optimum``.
    exact : bool
        Proven to be the optimum (only the ``optimum`` family can be).
    """

    seconds_per_byte: float
    label: str
    family: str
    exact: bool = False


def largest(candidates: list[Candidate]) -> Candidate:
    """The largest bound, named by the first candidate within :data:`TIE` of it.

    Examples
    --------
    >>> largest([Candidate(1.0, "injection (c0)", "injection"), Candidate(1.0 + 1e-12, "cut x", "cut")])
    Candidate(seconds_per_byte=1.000000000001, label='injection (c0)', family='injection', exact=False)
    """
    top = max(c.seconds_per_byte for c in candidates)
    first = next(c for c in candidates if c.seconds_per_byte >= top * (1 - TIE))
    return replace(first, seconds_per_byte=top)


def injection(topology: Topology, group: list[str], op_name: str) -> list[Candidate]:
    """What the members' own links force.

    All-gather, reduce-scatter, all-to-all: each member receives (or sends) ``(p-1)/p S``, so the
    slowest member's links bind. All-reduce: each member sends and receives at least ``S`` (its input
    reaches every result, its result depends on every input) and the members together receive at
    least ``2(p-1) S`` (Patarasuk and Yuan, JPDC 2009); a member cannot be held to ``2(p-1)/p S``
    alone (a leaf of a tree receives ``S``), so with unequal chips the total binds through the sum of
    their bandwidths. With equal chips both give ``2(p-1)/p S`` over one chip's bandwidth.

    Examples
    --------
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)  # each chip: 3 links, 300 GB/s
    >>> [(round(c.seconds_per_byte * 300e9, 12), c.label) for c in injection(square, square.chips, "allreduce")]
    [(1.5, 'injection (c0)')]
    """
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    p = len(group)
    slowest = min(group, key=lambda c: chip_bw[c])
    name = f"injection ({slowest})"
    if op_name != "allreduce":
        return [Candidate((p - 1) / p / (chip_bw[slowest] * 1e9), name, "injection")]
    one = 1 / (chip_bw[slowest] * 1e9)
    total = 2 * (p - 1) / (sum(chip_bw[c] for c in group) * 1e9)
    if one > total * (1 + TIE):
        return [Candidate(one, name, "injection")]
    equal = max(chip_bw[c] for c in group) <= chip_bw[slowest] * (1 + TIE)
    return [Candidate(total, name if equal else "injection (all members' links)", "injection")]


def natural_cuts(topology: Topology, group: list[str], op: Op) -> list[Candidate]:
    """Across a natural cut with ``a`` and ``b`` members on its sides, all-reduce must carry ``S``
    each way, all-gather and reduce-scatter ``max(a, b) S / p``, all-to-all ``a b S / p``; divided
    by the cut's bandwidth per direction. Cuts that do not split the group bind nothing.

    Examples
    --------
    Four chips joined pairwise by 100 GB/s, the natural cut ``half`` splitting them 2|2 across 4
    links: an all-gather sends ``2/4`` of the size across 400 GB/s.

    >>> from trnsim.collectives.ops import get_op
    >>> from trnsim.topology.synthetic import graph_topology
    >>> links = {(f"c{i}", f"c{j}"): 100.0 for i in range(4) for j in range(i + 1, 4)}
    >>> square = graph_topology(4, 0, links, cuts={"half": frozenset({"c0", "c1"})})
    >>> [(c.label, round(c.seconds_per_byte * 400e9, 12)) for c in natural_cuts(square, square.chips, get_op("allgather"))]
    [('cut half', 0.5)]
    """
    p = len(group)
    members = set(group)
    cut_bw = cut_bandwidths(topology)
    found = []
    for name, side in topology.cuts.items():
        a = len(members & side)
        b = p - a
        if a == 0 or b == 0:
            continue
        crossing = {
            "allreduce": 1.0,
            "allgather": max(a, b) / p,
            "reducescatter": max(a, b) / p,
            "alltoall": a * b / p,
        }[op.name]
        found.append(Candidate(crossing / (cut_bw[name] * 1e9), f"cut {name}", "cut"))
    return found


def per_chip(topology: Topology, group: list[str], op: Op) -> list[Candidate]:
    """Where chips host several ranks, each chip is one node of the collective: its ranks combine for
    free on the chip but share its links. With ``k`` members on each of ``m`` chips, a chip moves
    ``2(m-1)/m`` of the size (all-reduce), ``(m-1)/m`` (all-gather, reduce-scatter) or
    ``k(p-k)/p`` (all-to-all) through its links (Patarasuk and Yuan's per-node argument). None
    unless every member sits on a chip and the chips hold equally many members."""
    nodes = topology.nodes
    chips: dict[str, int] = {}
    for member in group:
        chip = nodes[member].get("chip")
        if chip is None:
            return []
        chips[chip] = chips.get(chip, 0) + 1
    counts = set(chips.values())
    m, p = len(chips), len(group)
    if len(counts) != 1 or m < 2:
        return []
    k = counts.pop()
    moved = {
        "allreduce": 2 * (m - 1) / m,
        "allgather": (m - 1) / m,
        "reducescatter": (m - 1) / m,
        "alltoall": k * (p - k) / p,
    }[op.name]
    from trnsim.topology.metrics import device_bandwidth_gbps

    bandwidth = device_bandwidth_gbps(topology)
    slowest = min(chips, key=lambda chip: bandwidth[chip])
    label = f"injection per chip ({slowest}: its {k} ranks share its links)"
    return [Candidate(moved / (bandwidth[slowest] * 1e9), label, "per-chip")]


def natural(topology: Topology, group: list[str], op: Op) -> list[Candidate]:
    """The cheap candidates, in order: injection, every natural cut, per chip."""
    return (
        injection(topology, group, op.name)
        + natural_cuts(topology, group, op)
        + per_chip(topology, group, op)
    )


def in_network(topology: Topology, group: list[str]) -> list[Candidate]:
    """All-reduce where switches reduce: a member still sends its input and receives the result
    (``S`` each way through its own links), and every cut still carries ``S`` each way; the
    ``2(p-1)/p`` of Patarasuk and Yuan assumes the members do the reducing, so it does not hold."""
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    slowest = min(group, key=lambda c: chip_bw[c])
    label = f"injection with in-network reduction ({slowest})"
    found = [Candidate(1 / (chip_bw[slowest] * 1e9), label, "injection")]
    members = set(group)
    cut_bw = cut_bandwidths(topology)
    for name, side in topology.cuts.items():
        if 0 < len(members & side) < len(group):
            found.append(Candidate(1 / (cut_bw[name] * 1e9), f"cut {name}", "cut"))
    return found


def skewed(topology: Topology, group: list[str], traffic) -> list[Candidate]:
    """Injection, natural-cut and per-chip candidates of an all-to-all with traffic matrix
    ``traffic`` (``traffic[i, j]`` of the size goes from member ``i`` to member ``j``): the same
    arguments with the matrix's own sums (each member's sent and received bytes over its links, each
    natural cut's bytes in either direction over the cut, each chip's bytes to and from other chips)."""
    import numpy as np

    from trnsim.topology.metrics import chip_bandwidth_gbps, device_bandwidth_gbps

    moved = np.array(traffic, dtype=float)
    np.fill_diagonal(moved, 0.0)
    sent, received = moved.sum(axis=1), moved.sum(axis=0)
    chip_bw = chip_bandwidth_gbps(topology)
    per_member = np.maximum(sent, received) / np.array([chip_bw[c] * 1e9 for c in group])
    busiest = int(np.argmax(per_member))
    label = f"injection ({group[busiest]}, skewed traffic)"
    found = [Candidate(float(per_member[busiest]), label, "injection")]
    cut_bw = cut_bandwidths(topology)
    for name, side in topology.cuts.items():
        inside = np.fromiter((chip in side for chip in group), dtype=bool, count=len(group))
        if inside.all() or not inside.any():
            continue
        crossing = max(moved[np.ix_(inside, ~inside)].sum(), moved[np.ix_(~inside, inside)].sum())
        found.append(Candidate(float(crossing) / (cut_bw[name] * 1e9), f"cut {name}", "cut"))
    chip_of = [topology.nodes[member].get("chip") for member in group]
    if None not in chip_of and len(set(chip_of)) > 1:
        bandwidth = device_bandwidth_gbps(topology)
        for chip in dict.fromkeys(chip_of):
            mine = np.array([c == chip for c in chip_of])
            out = max(moved[np.ix_(mine, ~mine)].sum(), moved[np.ix_(~mine, mine)].sum())
            found.append(
                Candidate(float(out) / (bandwidth[chip] * 1e9), f"injection per chip ({chip})", "per-chip")
            )
    return found


def exact_optimum(topology: Topology, group: list[str], op: Op) -> list[Candidate]:
    """The optimum over every cut and every routing (:func:`trnsim.model.optimum.optimum`): exact
    for all-gather and reduce-scatter, and where flagged for all-reduce and all-to-all."""
    from trnsim.model.optimum import optimum

    best = optimum(topology, group, op.name)
    return [Candidate(best.seconds_per_byte, best.limited_by, "optimum", best.exact)]
