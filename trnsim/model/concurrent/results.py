"""What a concurrent run returns: one row per size, and the whole evaluation."""

from dataclasses import dataclass, field

import numpy as np

from trnsim.model.engine import size_note


@dataclass
class ConcurrentRow:
    """One size: the run with every group sharing the links, and the same run with nothing shared."""

    bytes: int
    count: int
    algorithm: str
    time_us: float  # the slowest group's time with every group running (mean over hash seeds)
    busbw_gbps: float  # that group's busbw
    alone_time_us: float  # the same with every group on its own links (each as if the others idled)
    slowdown: float  # time_us / alone_time_us: what sharing links costs
    slowest: int  # index of the slowest group
    group_times_us: list[float] = field(default_factory=list)
    bottleneck: str = "-"  # the link class limiting the slowest group under sharing
    requested_bytes: int = 0  # the size asked for; ``bytes`` is what nccl-tests runs for it
    groups: int = 1  # how many groups ran at once
    bound_busbw_gbps: float = 0.0  # the slowest group's lower bound alone (sharing only slows it)
    efficiency: float = 0.0  # busbw_gbps / bound_busbw_gbps
    worst_time_us: float = 0.0  # under hash routing the slowest seed's time, else time_us

    def as_dict(self) -> dict:
        """The row for CSV and JSON: every field but the per-group times."""
        return {key: value for key, value in self.__dict__.items() if key != "group_times_us"}


@dataclass
class ConcurrentEvaluation:
    """All results of a concurrent run."""

    sku: str
    op: str
    groups: list[list[str]]
    rows: list[ConcurrentRow]
    by_algorithm: dict[str, list[ConcurrentRow]]
    skipped: dict[str, str]
    link_loads: dict[str, np.ndarray]  # per algorithm: bytes per directed edge per byte, summed over steps
    dropped: list[int] = field(default_factory=list)  # requested sizes that align to 0 bytes

    @property
    def ranks(self) -> int:
        """Ranks per group."""
        return len(self.groups[0])

    def alignment_note(self) -> str | None:
        """One line saying which sizes were aligned or left out, or None when all ran as asked."""
        return size_note(self.rows, self.dropped)
