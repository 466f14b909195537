"""What XLA's collectives cost on a TPU torus, as the scaling book states them.

"How to Scale Your Model" (jax-ml/scaling-book, sharding and TPU chapters; docs/sources.md#t1,
#t4, #doc-scaling-book) prices a TPU collective ring by ring along the torus axes over bidirectional
ICI links:

- an all-gather along an axis of ``X`` chips that wraps around moves each chip's shard around the
  ring in both directions at once: ``(X-1)/X`` of the gathered bytes per chip over twice a link's
  one-way rate, so its time hardly depends on ``X``; along an axis that does not wrap (a part of an
  axis), one direction's worth (the book: half the bandwidth);
- it takes ``X/2`` hops on a wrapping ring, ``X-1`` on a line, about 1 us each, and is latency-bound
  while a hop's chunk is below about 45 kB (v5e): the time of an axis is the larger of its hops'
  latency and its bytes' transfer (the book's roofline, max rather than sum);
- a gather over several axes runs axis by axis (each moving the data the earlier axes gathered);
  reduce-scatter is its mirror at the same cost; all-reduce = reduce-scatter + all-gather;
- all-to-all along an axis costs a quarter of an all-gather of the same array (each byte travels a
  quarter of the ring on average, both directions busy); over several axes, axis by axis, each
  moving the whole buffer;
- a large collective reaches about 95% of the links' rate (T1, v5e): ``efficiency``.

Assumed (each overridable, :class:`XlaSystem`): the per-call cost ``call_us`` (launch and
completion of one collective inside a compiled program; no published TPU floor: 2 us, range 1-5; the
Ironwood all-gather curves of T8, timed one call at a time from the host, saturate as if a call cost
about 2.4 MB of transfer time, some 25 us); the axes run in the order that is fastest (the compiler's
choice, not published); a twisted axis (TPU v4) as a ring of its length.

Sizes are nccl-tests' (the gathered output for all-gather, the whole input for reduce-scatter, the
buffer for all-reduce, each chip's send buffer for all-to-all); bandwidths GB/s = 1e9 B/s per
direction, times microseconds.

Example: one wrapping 16-chip v5e axis at 45 GB/s one way. An all-gather of 10 MB moves 15/16 of it
over 2 x 0.95 x 45 GB/s, 109.6 us, more than its 8 hops of 1 us; with the 2 us call it takes
111.6 us:

>>> axis = XlaAxis(name="y", size=16, wrap=True, link_gbps=45.0)
>>> round(predict(XlaSystem(axes=(axis,)), "allgather", 10_000_000).time_us, 1)
111.6
"""

import itertools
import math
from dataclasses import dataclass

from trnsim.errors import UsageError

OPS = ("allreduce", "allgather", "reducescatter", "alltoall")
CALL_US = 2.0  # assumption (module docstring), range 1-5 us
CALL_RANGE_US = (1.0, 5.0)
HOP_US = 1.0  # docs/sources.md#t4: about 1 us per ICI hop
EFFICIENCY = 0.95  # docs/sources.md#t1: about 95% of a link's one-way rate at large sizes


@dataclass(frozen=True)
class XlaAxis:
    """One torus axis the group spans: ``size`` chips, whether the ring closes, a link's one-way
    rate (GB/s) between neighbours along it."""

    name: str
    size: int
    wrap: bool
    link_gbps: float

    @property
    def hops(self) -> int:
        """Hops to the farthest chip: half the ring both ways round, else the line's length."""
        return self.size // 2 if self.wrap else self.size - 1

    @property
    def directions(self) -> int:
        """Link directions a ring collective keeps busy per chip (the book's bidirectional ring)."""
        return 2 if self.wrap else 1


@dataclass(frozen=True)
class XlaSystem:
    """A group of TPU chips as the axes it spans (see the module docstring for the assumptions)."""

    axes: tuple[XlaAxis, ...]
    efficiency: float = EFFICIENCY
    hop_us: float = HOP_US
    call_us: float = CALL_US

    def __post_init__(self):
        if not self.axes or any(not isinstance(a, XlaAxis) or a.size < 2 for a in self.axes):
            raise UsageError("XLA system: axes: expected one or more axes of at least 2 chips")
        for name in ("efficiency", "hop_us", "call_us"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise UsageError(f"XLA system: {name}: expected a non-negative finite number, got {value!r}")
        if not 0 < self.efficiency <= 1 or any(not a.link_gbps > 0 for a in self.axes):
            raise UsageError("XLA system: expected an efficiency in (0, 1] and positive link rates")

    @property
    def n_chips(self) -> int:
        return math.prod(a.size for a in self.axes)


@dataclass(frozen=True)
class XlaPrediction:
    """The time of ``op`` at ``size_bytes``: the call, then each axis's max(latency, transfer)."""

    op: str
    size_bytes: int
    algorithm: str  # "ring" along one axis, "ring-xy" axis by axis in that order
    latency_us: float  # the call and every axis's hops
    transfer_us: float  # every axis's bytes
    time_us: float


def _gather_axis_us(system: XlaSystem, axis: XlaAxis, out_bytes: float) -> tuple[float, float]:
    """(latency, transfer) of an all-gather along ``axis`` whose output per chip is ``out_bytes``."""
    rate = axis.link_gbps * system.efficiency * axis.directions * 1e3  # bytes per microsecond
    return axis.hops * system.hop_us, out_bytes * (axis.size - 1) / axis.size / rate


def _alltoall_axis_us(system: XlaSystem, axis: XlaAxis, buffer: float) -> tuple[float, float]:
    """(latency, transfer) of an all-to-all along ``axis`` of a ``buffer``-byte send buffer per chip:
    the busiest link direction's bytes (each chip sends buffer / X to every other chip)."""
    x = axis.size
    if axis.wrap:  # the byte-hops leaving a chip, spread over its two directions
        load = buffer / x * sum(min(j, x - j) for j in range(1, x)) / 2
    else:  # the middle link of a line carries every pair across it, one direction
        load = buffer * (x // 2) * (x - x // 2) / x
    return axis.hops * system.hop_us, load / (axis.link_gbps * system.efficiency * 1e3)


def _ordered(system: XlaSystem, op: str, size: int, order: tuple[XlaAxis, ...]) -> tuple[float, float, float]:
    """(latency, transfer, time) of the axes in ``order`` (all-gather's order; mirrored for the rest)."""
    latency = transfer = total = 0.0
    parts = []
    if op == "alltoall":
        parts = [_alltoall_axis_us(system, axis, size) for axis in order]
    else:
        out = size / system.n_chips
        for axis in order:  # the gathered data grows axis by axis
            out *= axis.size
            parts.append(_gather_axis_us(system, axis, out))
        if op == "allreduce":  # reduce-scatter (the mirror) then all-gather
            parts = parts + parts
    for lat, xfer in parts:
        latency, transfer, total = latency + lat, transfer + xfer, total + max(lat, xfer)
    return latency, transfer, total


def predict(system: XlaSystem, op: str, size_bytes: int) -> XlaPrediction:
    """The time of ``op`` on ``size_bytes`` (nccl-tests' size) over ``system``'s axes, in the
    fastest order of its axes."""
    if op not in OPS:
        raise UsageError(f"XLA op: expected one of {', '.join(OPS)}, got {op!r}")
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or size_bytes < 1:
        raise UsageError(f"XLA size: expected a whole number of bytes of at least 1, got {size_bytes!r}")
    best = None
    for order in itertools.permutations(system.axes):
        priced = _ordered(system, op, size_bytes, order)
        if best is None or priced[2] < best[1][2]:
            best = (order, priced)
    order, (latency, transfer, total) = best
    name = "ring" if len(order) == 1 else "ring-" + "".join(axis.name for axis in order)
    return XlaPrediction(op, size_bytes, name, system.call_us + latency, transfer, system.call_us + total)
