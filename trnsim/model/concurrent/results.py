"""What a concurrent run returns: one row per size, and the whole evaluation."""

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from trnsim.model.rows import Evaluation, Row


@dataclass(kw_only=True)
class ConcurrentRow(Row):
    """One size: the run with every group sharing the links, and the same run with nothing shared.

    ``time_us`` is the slowest group's time with every group running (mean over hash seeds), the
    busbw that group's; ``bound_busbw_gbps`` is the slowest group's lower bound alone (sharing only
    slows it) and ``bottleneck`` the link class limiting it under sharing.
    """

    alone_time_us: float  # the same with every group on its own links (each as if the others idled)
    slowdown: float  # time_us / alone_time_us: what sharing links costs
    slowest: int  # index of the slowest group
    group_times_us: list[float] = field(default_factory=list)
    group_busbw_gbps: list[float] = field(default_factory=list)  # each group's busbw at its time
    groups: int = 1  # how many groups ran at once
    worst_time_us: float = 0.0  # under hash routing the slowest seed's time, else time_us

    # the per-group lists are not columns (a command shows them as a table of their own)
    COLUMNS: ClassVar[tuple[str, ...]] = (
        "bytes",
        "count",
        "algorithm",
        "time_us",
        "busbw_gbps",
        "alone_time_us",
        "slowdown",
        "slowest",
        "bottleneck",
        "requested_bytes",
        "groups",
        "bound_busbw_gbps",
        "efficiency",
        "worst_time_us",
    )


@dataclass(kw_only=True)
class ConcurrentEvaluation(Evaluation):
    """All results of a concurrent run."""

    groups: list[list[str]]
    rows: list[ConcurrentRow]
    by_algorithm: dict[str, list[ConcurrentRow]]
    skipped: dict[str, str]
    link_loads: dict[str, np.ndarray]  # per algorithm: bytes per directed edge per byte, summed over steps

    @property
    def ranks(self) -> int:
        """Ranks per group."""
        return len(self.groups[0])
