"""What a routed schedule costs at each size: plain steps one after another, pipelines round by round.

A plain step costs ``repeat x (alpha + its largest path latency + size x its busiest link's seconds
per byte)``.

A pipeline of ``D`` stages moves the data in ``m`` chunks. In round ``r`` the stages ``i`` with
``0 <= r - i < m`` are busy, each on its own chunk, all at once, so ``m + D - 1`` rounds run: ``D - 1``
to fill, ``m - D + 1`` in the steady state (when ``m >= D``), ``D - 1`` to drain. A round costs the
largest latency among its busy stages (``repeat x (alpha + path latency)``) plus ``size / m`` times the
busiest link's seconds per byte under the busy stages' combined load. The chunk count is chosen per
size to minimise the total, between 1 and :data:`MAX_CHUNKS`, with chunks of at least
:data:`MIN_CHUNK_BYTES`.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trnsim.collectives.routing import StepRoute
from trnsim.collectives.schedule import Step

# Assumptions (not published figures): a pipeline splits the collective into at most this many chunks,
# each at least this large; below that, per-message costs the model does not count would dominate.
MAX_CHUNKS = 1024
MIN_CHUNK_BYTES = 64 * 1024


@dataclass
class StepCost:
    """One plain step, routed."""

    step: Step
    route: StepRoute
    alpha_ns: float

    def time_us(self, size: float) -> float:
        route = self.route
        return self.step.repeat * ((self.alpha_ns + route.latency_ns) / 1e3 + size * route.seconds_per_byte * 1e6)

    def chunks(self, size: float) -> int:
        return 1

    @property
    def max_links(self) -> int:
        return self.route.max_links

    @property
    def weight(self) -> float:
        """Seconds per byte this item spends on bandwidth (to name the bottleneck of a plan)."""
        return self.step.repeat * self.route.seconds_per_byte

    @property
    def bottleneck(self) -> str:
        return self.route.bottleneck

    def edge_seconds_per_byte(self, bw_bps: np.ndarray) -> np.ndarray:
        """How long each directed link is busy, per byte of collective size."""
        return self.step.repeat * self.route.link_loads / bw_bps


class PipelineCost:
    """A pipeline's stages, routed; costed at the best chunk count for each size."""

    def __init__(self, stages: list[list[tuple[Step, StepRoute]]], alpha_ns: float, bw_bps: np.ndarray, classes):
        self.stages = stages
        self.alpha_ns = alpha_ns
        self._bw = bw_bps
        self._classes = classes  # link class of each directed edge
        d = len(stages)
        # per stage: latency of one pass (us) and link loads per byte of size
        self.stage_latency_us = np.array(
            [max((s.repeat * (alpha_ns + r.latency_ns) / 1e3 for s, r in stage), default=0.0) for stage in stages]
        )
        loads = np.array([sum(s.repeat * r.link_loads for s, r in stage) for stage in stages])
        prefix = np.vstack([np.zeros(loads.shape[1]), np.cumsum(loads / bw_bps, axis=0)])
        # busiest link's seconds per byte and the largest latency for every run of busy stages lo..hi
        self.range_spb = np.zeros((d, d))
        self.range_latency = np.zeros((d, d))
        self._busiest = np.zeros((d, d), dtype=np.int64)
        for lo in range(d):
            for hi in range(lo, d):
                seconds = prefix[hi + 1] - prefix[lo]
                busiest = int(np.argmax(seconds))
                self._busiest[lo, hi] = busiest
                self.range_spb[lo, hi] = seconds[busiest]
                self.range_latency[lo, hi] = self.stage_latency_us[lo : hi + 1].max()
        self._loads_per_bw = prefix[-1]

    @property
    def depth(self) -> int:
        return len(self.stages)

    def _times_us(self, size: float) -> tuple[np.ndarray, np.ndarray]:
        """Candidate chunk counts and the total time of each."""
        d = self.depth
        top = int(max(1, min(MAX_CHUNKS, size // MIN_CHUNK_BYTES)))
        counts = np.arange(1, top + 1)
        times = np.empty(len(counts))
        lat, spb = self.range_latency, self.range_spb
        # m >= d: fill [0, r] and drain [r, d-1] for r < d-1 and r > 0, plus m-d+1 full rounds
        edge_lat = sum(lat[0, r] for r in range(d - 1)) + sum(lat[r, d - 1] for r in range(1, d))
        edge_spb = sum(spb[0, r] for r in range(d - 1)) + sum(spb[r, d - 1] for r in range(1, d))
        big = counts >= d
        m = counts[big]
        times[big] = edge_lat + (m - d + 1) * lat[0, d - 1] + size / m * 1e6 * (edge_spb + (m - d + 1) * spb[0, d - 1])
        for i in np.nonzero(~big)[0]:
            m = int(counts[i])
            total = 0.0
            for r in range(m + d - 1):
                lo, hi = max(0, r - m + 1), min(r, d - 1)
                total += lat[lo, hi] + size / m * 1e6 * spb[lo, hi]
            times[i] = total
        return counts, times

    def time_us(self, size: float) -> float:
        return float(self._times_us(size)[1].min())

    def chunks(self, size: float) -> int:
        counts, times = self._times_us(size)
        return int(counts[int(np.argmin(times))])

    @cached_property
    def max_links(self) -> int:
        return max((r.max_links for stage in self.stages for _, r in stage), default=0)

    @property
    def weight(self) -> float:
        return float(self.range_spb[0, self.depth - 1])

    @property
    def bottleneck(self) -> str:
        """The class of the busiest link in the steady state (every stage busy)."""
        return self._classes[self._busiest[0, self.depth - 1]]

    def edge_seconds_per_byte(self, bw_bps: np.ndarray) -> np.ndarray:
        return self._loads_per_bw
