"""Bandwidth candidates of the ops with a shape: a root (broadcast, reduce), blocks of unequal sizes
(all-gatherv, reduce-scatterv) or a traffic matrix (the demand ops: gather, scatter, sendrecv,
permute, all-to-allv, whose cheap candidates are :func:`trnsim.model.bounds.families.skewed`'s).

* Broadcast and reduce: the root sends (broadcast) or receives (reduce) the whole size ``S``, and
  every other member receives (broadcast) or sends (reduce) all of it: ``S`` over the slowest of
  those members' own links (:func:`rooted`); and ``S`` over the smallest cut between the root and a
  member (:func:`rooted_optimum`).
* All-gatherv and reduce-scatterv: member ``i`` receives (or sends) everything but its own block,
  ``(1 - b_i) S`` over its links, where ``b_i`` is its block's share (:func:`uneven`); and the
  min-ratio cut weighted by the blocks (:func:`uneven_optimum`).
* Demand ops: the maximum concurrent flow of the matrix (:func:`demand_optimum`).

The ``*_optimum`` candidates are the ``optimum`` family (:mod:`trnsim.model.optimum`): exact where
their functions prove it.
"""

from trnsim.model.bounds.families import Candidate
from trnsim.topology.graph import Topology


def rooted(topology: Topology, group: list[str], root: int) -> list[Candidate]:
    """Broadcast or reduce from (to) ``group[root]``: ``S`` through every member's own links.

    Examples
    --------
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> [(round(c.seconds_per_byte * 300e9, 12), c.label) for c in rooted(square, square.chips, 0)]
    [(1.0, 'injection (c0)')]
    """
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    # the root first: it names a tie, as the member every byte leaves (or reaches)
    slowest = min([group[root]] + group, key=lambda c: chip_bw[c])
    return [Candidate(1 / (chip_bw[slowest] * 1e9), f"injection ({slowest})", "injection")]


def uneven(topology: Topology, group: list[str], blocks: tuple[float, ...]) -> list[Candidate]:
    """All-gatherv or reduce-scatterv: member ``i`` moves ``(1 - blocks[i]) S`` through its links.

    Examples
    --------
    >>> from trnsim.topology.synthetic import complete_topology
    >>> pair = complete_topology(2, bw_gbps=100.0)
    >>> [(round(c.seconds_per_byte * 100e9, 12), c.label) for c in uneven(pair, pair.chips, (0.25, 0.75))]
    [(0.75, 'injection (c0)')]
    """
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    need = [(1 - share) / (chip_bw[chip] * 1e9) for chip, share in zip(group, blocks, strict=True)]
    worst = max(range(len(group)), key=lambda i: need[i])
    return [Candidate(need[worst], f"injection ({group[worst]})", "injection")]


def rooted_optimum(topology: Topology, group: list[str], root: int, reduce: bool) -> list[Candidate]:
    """``S`` over the smallest cut between the root and another member
    (:func:`trnsim.model.optimum.gather.rooted_optimum`): exact when every device is a member.

    Examples
    --------
    Four chips joined pairwise by 100 GB/s: every cut around the root crosses at least 3 links.

    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> [(round(c.seconds_per_byte * 300e9, 12), c.exact) for c in rooted_optimum(square, square.chips, 0, False)]
    [(1.0, True)]
    """
    from trnsim.model.optimum.gather import rooted_optimum as solve

    seconds, label, exact = solve(topology, group, root, reduce)
    return [Candidate(seconds, label, "optimum", exact)]


def uneven_optimum(
    topology: Topology, group: list[str], blocks: tuple[float, ...], reduce: bool
) -> list[Candidate]:
    """The min-ratio cut weighted by the blocks (:func:`trnsim.model.optimum.gather.gather_optimum`);
    ``reduce``: a reduce-scatterv's, on the reversed graph where links are not symmetric."""
    from trnsim.model.optimum.gather import gather_optimum
    from trnsim.model.optimum.graph import network

    reverse = reduce and not network(topology, group).is_symmetric()
    seconds, label, exact = gather_optimum(topology, group, reverse, blocks)
    return [Candidate(seconds, label, "optimum", exact)]


def demand_optimum(topology: Topology, group: list[str], traffic, op_name: str) -> list[Candidate]:
    """The maximum concurrent flow of ``traffic`` (:mod:`trnsim.model.optimum.demand`); nothing past
    its LP's size limit."""
    from trnsim.model.optimum.demand import demand_optimum as solve

    found = solve(topology, group, traffic, op_name)
    return [] if found is None else [Candidate(found[0], found[1], "optimum", found[2])]
