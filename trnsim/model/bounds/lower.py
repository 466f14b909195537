"""A collective's lower bound: the largest bandwidth candidate, and the latency floor."""

from dataclasses import dataclass

from trnsim.collectives.ops import Op, get_op
from trnsim.model.bounds.families import (
    Candidate,
    exact_optimum,
    in_network,
    largest,
    natural,
    skewed,
)
from trnsim.model.bounds.shaped import demand_optimum, rooted, rooted_optimum, uneven, uneven_optimum
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class Bound:
    """Per-byte and fixed parts of the lower bound for one op on one group."""

    seconds_per_byte: float
    latency_us: float
    # what limits the bandwidth part: "injection (<chip>)", "cut <name>", or the optimum's label
    limited_by: str
    peak_seconds_per_byte: float  # the injection bound alone: what the members' own links could carry
    exact: bool = True  # the bandwidth part is the optimum (False: a valid bound that may be loose)
    # where the bound is not exact: the bandwidth part a known schedule reaches, so the optimum lies
    # between the two (an all-reduce's reduce-scatter then all-gather at their optima); None: unknown
    achievable_seconds_per_byte: float | None = None

    def time_us(self, size: float) -> float:
        return max(self.latency_us, size * self.seconds_per_byte * 1e6)

    def limit_at(self, size: float) -> str:
        """What the bound is limited by at this size."""
        return "latency" if self.latency_us >= size * self.seconds_per_byte * 1e6 else self.limited_by


def candidates(
    topology: Topology,
    group: list[str],
    op: Op,
    traffic=None,
    with_optimum: bool = True,
    root: int = 0,
    blocks: tuple[float, ...] | None = None,
) -> list[Candidate]:
    """Every bandwidth candidate that applies to ``op`` on ``group``, in the order ties are named.

    A traffic matrix gives the skewed all-to-all's own candidates (every demand op is one), then for
    a demand op (``with_optimum``) the matrix's maximum concurrent flow; a broadcast or reduce (from
    ``root``) and an all-gather or reduce-scatter of unequal ``blocks`` give theirs, then their
    optimum (:mod:`trnsim.model.bounds.shaped`); an all-reduce over switches that
    reduce in the network (:func:`trnsim.topology.metrics.reducing_switches`) gives
    :func:`~trnsim.model.bounds.families.in_network`'s; otherwise injection, the natural cuts and
    the per-chip bound, then (``with_optimum``, two members or more) the exact optimum.

    Examples
    --------
    >>> from trnsim.collectives.ops import get_op
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4)
    >>> [c.family for c in candidates(square, square.chips, get_op("allgather"))]
    ['injection', 'optimum']
    >>> [c.family for c in candidates(square, square.chips, get_op("allgather"), with_optimum=False)]
    ['injection']
    """
    from trnsim.topology.metrics import reducing_switches

    more = len(group) > 1 and with_optimum  # the optimum family, after the cheap ones
    if traffic is not None:
        found = skewed(topology, group, traffic)
        if more and op.demand and op.name != "alltoall":  # an all-to-all's own skew: cheap ones only
            found += demand_optimum(topology, group, traffic, op.name)
        return found
    if op.rooted and not op.demand:
        found = rooted(topology, group, root)
        return found + rooted_optimum(topology, group, root, op.name == "reduce") if more else found
    if blocks is not None:
        found = uneven(topology, group, blocks)
        reduce = op.base == "reducescatter"
        return found + uneven_optimum(topology, group, blocks, reduce) if more else found
    op = get_op(op.base)  # an all-gatherv or reduce-scatterv of even counts is its base op
    if op.name == "allreduce" and len(group) > 1 and reducing_switches(topology, group):
        return in_network(topology, group)
    found = natural(topology, group, op)
    if len(group) > 1 and with_optimum:
        found += exact_optimum(topology, group, op)
    return found


def lower_bound(
    topology: Topology,
    group: list[str],
    op: Op,
    alpha_ns: float,
    max_links: int,
    traffic=None,
    with_optimum: bool = True,
    root: int = 0,
    blocks: tuple[float, ...] | None = None,
) -> Bound:
    """The lower bound for ``op`` on ``group``: the largest of :func:`candidates`, and latency.

    Parameters
    ----------
    topology : Topology
        The built system.
    group : list of str
        Member chips, in rank order.
    op : Op
        The collective (:func:`trnsim.collectives.ops.get_op`).
    alpha_ns : float
        One step's fixed cost.
    max_links : int
        The fewest links between the group's farthest two members.
    traffic : numpy.ndarray, optional
        A skewed all-to-all's traffic matrix, or a demand op's (None: the uniform all-to-all).
    root : int
        A broadcast's or reduce's root (a position in ``group``).
    blocks : tuple of float, optional
        An all-gatherv's or reduce-scatterv's block shares (None: ``1/p`` each).
    with_optimum : bool
        Include the exact optimum (False: injection and natural cuts only, a valid bound that is
        cheap; for callers that do not show it, such as a sweep of failures).

    Returns
    -------
    Bound
        The bandwidth part (the largest candidate, named by the first tied one), the latency part
        (``alpha_ns`` plus ``max_links`` of the lowest link latency), the injection candidate alone,
        and whether the bandwidth part is proven optimal.

    Examples
    --------
    Four chips, every pair joined by a 100 GB/s link: a chip's own 300 GB/s bind every op, and the
    exact optimum agrees (so the bound is exact). All-reduce moves ``2(p-1)/p = 1.5`` of the size.

    >>> from trnsim.collectives.ops import get_op
    >>> from trnsim.topology.synthetic import complete_topology
    >>> square = complete_topology(4, bw_gbps=100.0)
    >>> bound = lower_bound(square, square.chips, get_op("allreduce"), alpha_ns=1000.0, max_links=1)
    >>> round(bound.seconds_per_byte * 300e9, 12), bound.limited_by, bound.exact
    (1.5, 'injection (c0)', True)
    >>> bound.latency_us  # one step's alpha, links without latency
    1.0
    >>> bound.time_us(1024), bound.limit_at(1024)  # a small size: the latency floor binds
    (1.0, 'latency')
    """
    from trnsim.topology.metrics import reducing_switches

    found = candidates(topology, group, op, traffic, with_optimum, root, blocks)
    best = largest(found)
    top = best.seconds_per_byte
    peak = next(c.seconds_per_byte for c in found if c.family == "injection")
    optimal = [c for c in found if c.family == "optimum"]
    # a group of one moves nothing: trivially the optimum, unless the traffic is skewed; a skewed
    # all-to-all, and a demand op past its LP's size limit, have no optimum candidate: not exact
    exact = optimal[0].exact if optimal else (with_optimum and len(group) < 2 and traffic is None)
    achievable = None
    if not exact and with_optimum and op.name == "allreduce" and len(group) > 1 and traffic is None:
        achievable = _two_phase(topology, group)
        # a bound as high as what reduce-scatter then all-gather reach is the optimum
        exact = achievable is not None and achievable <= top * (1 + 1e-6)
        if reducing_switches(topology, group):
            achievable = None  # in-network reduction beats the two phases: they say little of the gap
    min_link_ns = min(data["latency_ns"] for data in topology.links.values())
    latency_us = (alpha_ns + max_links * min_link_ns) / 1e3
    return Bound(top, latency_us, best.label, peak, exact, None if exact else achievable)


def _two_phase(topology: Topology, group: list[str]) -> float | None:
    """Seconds per byte of an all-reduce done as a reduce-scatter then an all-gather, each at its exact
    optimum (achievable by tree packing: ForestColl, Zhao et al. 2024), or None if either optimum is
    only a bound. Any all-reduce that is not faster than this is within the gap it leaves."""
    from trnsim.model.optimum import optimum

    gather = optimum(topology, group, "allgather")
    scatter = optimum(topology, group, "reducescatter")
    if not (gather.exact and scatter.exact):
        return None
    return gather.seconds_per_byte + scatter.seconds_per_byte
