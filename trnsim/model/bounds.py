"""Lower bounds on a collective's time: injection, natural cuts, the exact optimum, and latency.

The bandwidth part is the largest of:

* Injection: a rank must move at least ``factor * size`` bytes (the op's busbw factor) through its
  own links, so ``time >= factor * size / (the slowest member's total link bandwidth)`` (Patarasuk
  and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009);
  for all-reduce with unequal chips, the members' total (see
  :func:`trnsim.model.optimum.injection`).
* Natural cuts: across a natural cut (rack halves, torus halves, a switch plane's chips against the
  rest) with ``a`` and ``b`` members on its sides, allreduce must carry ``size`` each way, allgather
  and reducescatter ``max(a, b) * size / p``, alltoall ``a * b * size / p``; divided by the cut's
  bandwidth per direction.
* The optimum over every cut and every routing (:mod:`trnsim.model.optimum`): for all-gather
  and reduce-scatter the min-ratio cut over all vertex sets, which is achievable (ForestColl, Zhao et
  al. 2024, arXiv 2402.06787) and so exact; for all-reduce the larger of injection and
  the reduction cut (``size`` across the smallest cut splitting the group, each way); for all-to-all the maximum concurrent multicommodity flow
  through its LP dual (Shahrokhi and Matula 1990; Leighton and Rao 1999). It is never below the
  natural-cut bounds when exact; it can be, where it is only a valid bound (an irregular group's
  all-to-all), so the largest of all three is taken.

Ties are named in the order above: a bound reached by a chip's own links is "injection (chip)", one
reached by a natural cut "cut <name>", and the optimum's own label otherwise ("cut: 36 of 144
members vs the rest", "reduction cut: ...", "link classes xrack").

A skewed all-to-all (a traffic matrix, :mod:`trnsim.collectives.traffic`) is bounded by the same
arguments with the matrix's own sums: each member's sent and received bytes over its links, each
natural cut's bytes in either direction over the cut, each chip's bytes to and from other chips. The
optimum's flow LP is for the uniform matrix, so the bound is then valid but not marked exact.

Latency: one step's alpha plus the fewest links between the farthest two members, each at the
lowest link latency.
"""

from dataclasses import dataclass

from trnsim.collectives.ops import Op
from trnsim.topology.graph import Topology
from trnsim.topology.metrics import cut_bandwidths

# candidates within this relative margin of the largest are ties, named in the order above
TIE = 1e-9


@dataclass(frozen=True)
class Bound:
    """Per-byte and fixed parts of the lower bound for one op on one group."""

    seconds_per_byte: float
    latency_us: float
    # what limits the bandwidth part: "injection (<chip>)", "cut <name>", or the optimum's label
    limited_by: str
    peak_seconds_per_byte: float  # the injection bound alone: what the members' own links could carry
    exact: bool = True  # the bandwidth part is the optimum (False: a valid bound that may be loose)

    def time_us(self, size: float) -> float:
        return max(self.latency_us, size * self.seconds_per_byte * 1e6)

    def limit_at(self, size: float) -> str:
        """What the bound is limited by at this size."""
        return "latency" if self.latency_us >= size * self.seconds_per_byte * 1e6 else self.limited_by


def natural_bounds(topology: Topology, group: list[str], op: Op) -> list[tuple[float, str]]:
    """The injection bound and every natural cut's bound, in seconds per byte, with their names."""
    from trnsim.model.optimum import injection

    p = len(group)
    candidates = [injection(topology, group, op.name)]
    members = set(group)
    cut_bw = cut_bandwidths(topology)
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
        candidates.append((crossing / (cut_bw[name] * 1e9), f"cut {name}"))
    shared = _chip_injection(topology, group, op)
    if shared is not None:
        candidates.append(shared)
    return candidates


def _chip_injection(topology: Topology, group: list[str], op: Op) -> tuple[float, str] | None:
    """Where chips host several ranks, each chip is one node of the collective: its ranks combine for
    free on the chip but share its links. With ``k`` members on each of ``m`` chips, a chip moves
    ``2(m-1)/m`` of the size (all-reduce), ``(m-1)/m`` (all-gather, reduce-scatter) or
    ``k(p-k)/p`` (all-to-all) through its links (Patarasuk and Yuan's per-node argument)."""
    nodes = topology.nodes
    chips: dict[str, int] = {}
    for member in group:
        chip = nodes[member].get("chip")
        if chip is None:
            return None
        chips[chip] = chips.get(chip, 0) + 1
    counts = set(chips.values())
    m, p = len(chips), len(group)
    if len(counts) != 1 or m < 2:
        return None
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
    return moved / (
        bandwidth[slowest] * 1e9
    ), f"injection per chip ({slowest}: its {k} ranks share its links)"


def traffic_bounds(topology: Topology, group: list[str], traffic) -> list[tuple[float, str]]:
    """Injection, natural-cut and per-chip bounds of an all-to-all with traffic matrix ``traffic``
    (``traffic[i, j]`` of the size goes from member ``i`` to member ``j``), in seconds per byte."""
    import numpy as np

    from trnsim.topology.metrics import chip_bandwidth_gbps, device_bandwidth_gbps

    moved = np.array(traffic, dtype=float)
    np.fill_diagonal(moved, 0.0)
    sent, received = moved.sum(axis=1), moved.sum(axis=0)
    chip_bw = chip_bandwidth_gbps(topology)
    per_member = np.maximum(sent, received) / np.array([chip_bw[c] * 1e9 for c in group])
    busiest = int(np.argmax(per_member))
    candidates = [(float(per_member[busiest]), f"injection ({group[busiest]}, skewed traffic)")]
    cut_bw = cut_bandwidths(topology)
    for name, side in topology.cuts.items():
        inside = np.fromiter((chip in side for chip in group), dtype=bool, count=len(group))
        if inside.all() or not inside.any():
            continue
        crossing = max(moved[np.ix_(inside, ~inside)].sum(), moved[np.ix_(~inside, inside)].sum())
        candidates.append((float(crossing) / (cut_bw[name] * 1e9), f"cut {name}"))
    chip_of = [topology.nodes[member].get("chip") for member in group]
    if None not in chip_of and len(set(chip_of)) > 1:
        bandwidth = device_bandwidth_gbps(topology)
        for chip in dict.fromkeys(chip_of):
            mine = np.array([c == chip for c in chip_of])
            out = max(moved[np.ix_(mine, ~mine)].sum(), moved[np.ix_(~mine, mine)].sum())
            candidates.append((float(out) / (bandwidth[chip] * 1e9), f"injection per chip ({chip})"))
    return candidates


def _reduces_in_network(topology: Topology, group: list[str]) -> bool:
    from trnsim.topology.metrics import reducing_switches

    return bool(reducing_switches(topology, group))


def _in_network_bounds(topology: Topology, group: list[str], op: Op) -> list[tuple[float, str]]:
    """All-reduce where switches reduce: a member still sends its input and receives the result
    (``size`` each way through its own links), and every cut still carries ``size`` each way; the
    ``2(p-1)/p`` of Patarasuk and Yuan assumes the members do the reducing, so it does not hold."""
    from trnsim.topology.metrics import chip_bandwidth_gbps

    chip_bw = chip_bandwidth_gbps(topology)
    slowest = min(group, key=lambda c: chip_bw[c])
    candidates = [(1 / (chip_bw[slowest] * 1e9), f"injection with in-network reduction ({slowest})")]
    members = set(group)
    cut_bw = cut_bandwidths(topology)
    for name, side in topology.cuts.items():
        if 0 < len(members & side) < len(group):
            candidates.append((1 / (cut_bw[name] * 1e9), f"cut {name}"))
    return candidates


def lower_bound(
    topology: Topology,
    group: list[str],
    op: Op,
    alpha_ns: float,
    max_links: int,
    traffic=None,
    with_optimum: bool = True,
) -> Bound:
    """The lower bound for ``op`` on ``group``.

    Parameters
    ----------
    max_links : int
        The fewest links between the group's farthest two members.
    traffic : numpy.ndarray, optional
        A skewed all-to-all's traffic matrix (None: the uniform one).
    with_optimum : bool
        Include the exact optimum (False: injection and natural cuts only, a valid bound that is
        cheap; for callers that do not show it, such as a sweep of failures).
    """
    from trnsim.model.optimum import optimum

    if traffic is not None:
        candidates = traffic_bounds(topology, group, traffic)
        peak, exact = candidates[0][0], False
    elif op.name == "allreduce" and len(group) > 1 and _reduces_in_network(topology, group):
        candidates = _in_network_bounds(topology, group, op)
        peak, exact = candidates[0][0], False
    else:
        candidates = natural_bounds(topology, group, op)
        peak, exact = candidates[0][0], with_optimum
        if len(group) > 1 and with_optimum:
            best = optimum(topology, group, op.name)
            candidates.append((best.seconds_per_byte, best.limited_by))
            exact = best.exact
    top = max(value for value, _ in candidates)
    limited_by = next(name for value, name in candidates if value >= top * (1 - TIE))
    if not exact and with_optimum and op.name == "allreduce" and len(group) > 1:
        # a reduce-scatter then an all-gather, each at its exact optimum, achieves twice the all-gather
        # optimum (the two mirror each other): a bound that high is the optimum
        gather = optimum(topology, group, "allgather")
        exact = gather.exact and 2 * gather.seconds_per_byte <= top * (1 + 1e-6)
    min_link_ns = min(data["latency_ns"] for data in topology.links.values())
    latency_us = (alpha_ns + max_links * min_link_ns) / 1e3
    return Bound(top, latency_us, limited_by, peak, exact)
