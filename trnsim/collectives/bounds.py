"""Lower bounds on a collective's time: injection, natural cuts, and latency.

* Injection: a rank must move at least ``factor * size`` bytes (the op's busbw factor) through its
  own links, so ``time >= factor * size / (the slowest member's total link bandwidth)``.
* Cuts: across a natural cut (rack halves, torus halves, a switch plane's chips against the rest) with ``a`` and ``b`` members on its sides,
  allreduce must carry ``size`` each way, allgather and reducescatter ``max(a, b) * size / p``,
  alltoall ``a * b * size / p``; divided by the cut's bandwidth per direction.
* Latency: one step's alpha plus the fewest links between the farthest two members, each at the
  lowest link latency.
"""

from dataclasses import dataclass

from trnsim.collectives.ops import Op
from trnsim.topology.graph import Topology
from trnsim.topology.metrics import chip_bandwidth_gbps, cut_bandwidths


@dataclass(frozen=True)
class Bound:
    """Per-byte and fixed parts of the lower bound for one op on one group."""

    seconds_per_byte: float
    latency_us: float
    limited_by: str  # what limits the bandwidth part: "injection" or "cut <name>"
    peak_seconds_per_byte: float  # the injection bound alone: what the members' own links could carry

    def time_us(self, size: float) -> float:
        return max(self.latency_us, size * self.seconds_per_byte * 1e6)

    def limit_at(self, size: float) -> str:
        """What the bound is limited by at this size."""
        return "latency" if self.latency_us >= size * self.seconds_per_byte * 1e6 else self.limited_by


def lower_bound(topology: Topology, group: list[str], op: Op, alpha_ns: float, max_links: int) -> Bound:
    """The lower bound for ``op`` on ``group``.

    Parameters
    ----------
    max_links : int
        The fewest links between the group's farthest two members.
    """
    p = len(group)
    factor = op.busbw_factor(p)
    injection = min(chip_bandwidth_gbps(topology)[chip] for chip in group)
    peak = factor / (injection * 1e9)
    candidates = [(peak, "injection")]
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
    seconds_per_byte, limited_by = max(candidates)
    min_link_ns = min(data["latency_ns"] for data in topology.links.values())
    latency_us = (alpha_ns + max_links * min_link_ns) / 1e3
    return Bound(seconds_per_byte, latency_us, limited_by, peak)
