"""What every evaluator returns: one :class:`Row` per size in nccl-tests' columns, in an
:class:`Evaluation`.

The single-group engine (:mod:`trnsim.model.engine`), concurrent groups
(:mod:`trnsim.model.concurrent`) and the cluster composition (:mod:`trnsim.model.cluster`) each extend
both with what only they know; whatever reads results from any of them (compare, plot, report, sweep)
reads these fields (:mod:`trnsim.model.backend` is the one way to ask any of them).
"""

from dataclasses import dataclass, field
from typing import ClassVar

from trnsim.collectives.ops import Op, get_op


def algbw_gbps(size: float, time_us: float) -> float:
    """nccl-tests' algbw: ``size`` bytes over ``time_us`` microseconds, in GB/s (1e9 B/s); 0 when
    no time passes."""
    return size / (time_us * 1e3) if time_us > 0 else 0.0


def busbw_gbps(op: Op | str, ranks: int, size: float, time_us: float) -> float:
    """nccl-tests' busbw: the algbw of ``size`` bytes in ``time_us`` times the op's factor for
    ``ranks`` (:meth:`~trnsim.collectives.ops.Op.busbw_factor`). Every model row's busbw, and its
    bounds in busbw terms, come from here.

    >>> busbw_gbps("allreduce", 4, 3e9, 2e6)  # 1.5 GB/s of algbw, times 2 (4 - 1) / 4
    2.25
    """
    op = get_op(op) if isinstance(op, str) else op
    return algbw_gbps(size, time_us) * op.busbw_factor(ranks)


@dataclass(kw_only=True)
class Row:
    """One size of a collective (units in the names; GB = 1e9 bytes).

    The first eight fields are nccl-tests' columns; ``requested_bytes`` is the size asked for and
    ``bytes`` what nccl-tests runs for it (:meth:`trnsim.collectives.ops.Op.align`).
    """

    bytes: int
    count: int
    type: str  # the element type (``float``, ``bfloat16``, ...)
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    algorithm: str  # what ran at this size (the fastest, under ``auto``)
    requested_bytes: int
    bound_busbw_gbps: float = 0.0  # a lower bound on the time, in busbw terms (0: not computed)
    efficiency: float = 0.0  # the bound's time over the modelled time, 0 to 1
    bottleneck: str = "-"  # the link class that limits it ("-": the evaluator does not say)

    # the keys of :meth:`as_dict` in order: the JSON and CSV a command prints, a contract scripts
    # rely on, so each evaluator lists its own (a field left out stays off the output)
    COLUMNS: ClassVar[tuple[str, ...]] = (
        "bytes",
        "count",
        "type",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
        "algorithm",
        "requested_bytes",
        "bound_busbw_gbps",
        "efficiency",
        "bottleneck",
    )

    def as_dict(self) -> dict:
        """The row for JSON and CSV: :attr:`COLUMNS`, in order."""
        return {key: getattr(self, key) for key in self.COLUMNS}


def size_note(rows: list[Row], dropped: list[int]) -> str | None:
    """One line saying which sizes were aligned or left out, or None when all ran as asked."""
    moved = [row for row in rows if row.bytes != row.requested_bytes]
    if not moved and not dropped:
        return None
    parts = []
    if moved:
        parts.append(
            f"{len(moved)} size{'s' if len(moved) != 1 else ''} rounded down as nccl-tests does "
            f"(e.g. {moved[0].requested_bytes} -> {moved[0].bytes} B)"
        )
    if dropped:
        shown = ", ".join(str(size) for size in dropped[:4]) + (", ..." if len(dropped) > 4 else "")
        parts.append(f"left out {shown} B (0 bytes once aligned)")
    return "sizes: " + "; ".join(parts)


@dataclass(kw_only=True)
class Evaluation:
    """A collective evaluated at every size: its rows, in the order of the sizes asked for."""

    sku: str  # the system's name
    op: str
    rows: list[Row]
    dropped: list[int] = field(default_factory=list)  # requested sizes that align to 0 bytes
    alpha_us: float = (
        0.0  # the per-step alpha the steps were costed with (:func:`trnsim.model.cost.step_alpha`)
    )

    @property
    def ranks(self) -> int:
        """The ranks of one collective (the ``r`` of busbw's factor)."""
        raise NotImplementedError

    def alignment_note(self) -> str | None:
        """One line saying which sizes were aligned or left out, or None when all ran as asked."""
        return size_note(self.rows, self.dropped)

    @property
    def avg_busbw_gbps(self) -> float:
        """The mean busbw over the sizes (nccl-tests' "Avg bus bandwidth")."""
        return sum(r.busbw_gbps for r in self.rows) / len(self.rows) if self.rows else 0.0
