"""The typed result of reading a measured run: :class:`Measurement`, a list of
:class:`MeasuredRow` (size, time and bandwidth in decimal GB/s), as
:func:`~trnsim.studies.calibration.readers.read_measurement` returns it and a fit consumes it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasuredRow:
    """One measured size of one collective.

    Attributes
    ----------
    op : str
        ``"allreduce"``, ``"allgather"``, ``"reducescatter"`` or ``"alltoall"``.
    size_bytes : int
        The tools' convention: all-reduce the buffer size; all-gather and reduce-scatter the full
        gathered buffer; all-to-all the bytes each rank sends in all.
    time_us : float
        The time as the tool reports it (nccl-tests: out-of-place; nccom-test: the average, or the
        first time column when there is no average).
    algbw_gbps : float
        ``size_bytes / time`` in decimal GB/s (1e9 B/s), recomputed, never copied from the file.
    busbw_gbps : float
        ``algbw_gbps`` times the busbw factor: all-reduce 2(r-1)/r, the others (r-1)/r.
    line : int
        The 1-based line of the row in a text file; in a JSON file, the index of the entry in
        ``results``.
    algorithm : str or None
        The algorithm column when the tool printed one (nccom-test ``--show-algorithm``).
    """

    op: str
    size_bytes: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    line: int
    algorithm: str | None = None


@dataclass(frozen=True)
class Measurement:
    """One measured run read from a file.

    Attributes
    ----------
    path : str
        The file (or the name given to
        :func:`~trnsim.studies.calibration.readers.parse_measurement`).
    tool : str
        ``"nccl-tests"`` or ``"nccom-test"``.
    format : str
        ``"text"`` or ``"json"``.
    ranks : int
        The number of ranks of the collective (nccom-test: NeuronCores, not chips).
    printed_units : str
        ``"GB/s"`` or ``"GiB/s"``: what the file's bandwidth columns turned out to be.
    dtype : str or None
        The data type column (``float``, ``fp32``, ...), when present.
    rows : list of MeasuredRow
        The rows in file order.
    source : str
        The text of a ``# source: ...`` comment (JSON: ``trnsim.source``), else ``""``.
    nodes : int or None
        The nodes (hosts, instances) the run spanned, where the file or the caller says; None:
        not stated.
    """

    path: str
    tool: str
    format: str
    ranks: int
    printed_units: str
    dtype: str | None
    rows: list[MeasuredRow]
    source: str
    nodes: int | None = None

    @property
    def op(self) -> str:
        """The collective every row measures."""
        return self.rows[0].op
