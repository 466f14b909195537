"""What every load strategy takes and gives: a demand (flows between group positions) in, link
loads with their path latency and length out, and the :class:`Strategy` record that names one."""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trnsim.routing.paths import GroupPaths


@dataclass(frozen=True, eq=False)
class Demand:
    """Flows between group positions, flow ``i`` carrying ``weight[i]`` x size bytes from ``src[i]``
    to ``dst[i]``; or, with ``everyone``, every position to every other at ``weight[0]`` (``src``
    and ``dst`` unused: the p(p-1) flows are built only by a strategy that needs them)."""

    src: np.ndarray | None
    dst: np.ndarray | None
    weight: np.ndarray
    everyone: bool = False

    @staticmethod
    def all_pairs(weight: float) -> "Demand":
        """Every position to every other, ``weight`` each."""
        return Demand(None, None, np.array([weight]), everyone=True)

    def flows(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, weight)``, built for an all-pairs demand over ``p`` positions."""
        if not self.everyone:
            return self.src, self.dst, self.weight
        src, dst = (axis.ravel() for axis in np.nonzero(~np.eye(p, dtype=bool)))
        return src, dst, np.full(len(src), float(self.weight[0]))

    def count(self, p: int) -> int:
        """How many flows."""
        return p * (p - 1) if self.everyone else len(self.src)


@dataclass(frozen=True)
class LinkLoads:
    """A demand routed: its bytes per directed edge and its paths' extent."""

    loads: np.ndarray  # bytes per directed edge per byte of collective size
    latency_ns: float  # largest path latency among the flows
    max_links: int  # longest path (in links) among the flows
    flows: int  # how many flows (0: nothing moves)


@dataclass(frozen=True)
class Strategy:
    """One way of computing link loads.

    ``applies(paths, demand)`` says whether this strategy should route the demand (it can, and it is
    the right one when the strategies before it in :data:`trnsim.routing.loads.STRATEGIES` declined);
    ``loads(paths, demands, seed)`` routes a batch of demands at once (some strategies vectorise
    over the batch), one :class:`LinkLoads` per demand, in order.
    """

    name: str
    summary: str
    applies: Callable[[GroupPaths, Demand], bool]
    loads: Callable[[GroupPaths, list[Demand], int], list[LinkLoads]]


def shortest_extent(paths: GroupPaths, demand: Demand, loads: np.ndarray) -> LinkLoads:
    """A demand's loads with the latency and length of its flows' shortest paths (every flow of an
    ECMP strategy takes only shortest paths, so these are read off the BFS)."""
    if demand.everyone:
        p = paths.p
        return LinkLoads(loads, paths.max_latency, paths.max_links, p * (p - 1))
    if len(demand.src) == 0:
        return LinkLoads(loads, 0.0, 0, 0)
    latency = paths.latency_between(demand.src, demand.dst).max()
    links = paths.distance(demand.src, paths.rows[demand.dst]).max()
    return LinkLoads(loads, float(latency), int(links), len(demand.src))
