"""Bandwidth candidates of the ops with a shape: a root (broadcast, reduce) or blocks of unequal
sizes (all-gatherv, reduce-scatterv). The demand ops (gather, scatter, sendrecv, permute, all-to-allv)
are all-to-alls of their traffic matrix: :func:`trnsim.model.bounds.families.skewed`.

* Broadcast and reduce: the root sends (broadcast) or receives (reduce) the whole size ``S``, and
  every other member receives (broadcast) or sends (reduce) all of it: ``S`` over the slowest of
  those members' own links.
* All-gatherv and reduce-scatterv: member ``i`` receives (or sends) everything but its own block,
  ``(1 - b_i) S`` over its links, where ``b_i`` is its block's share.
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
