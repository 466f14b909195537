"""Collective operations with nccl-tests' size and busbw conventions (also AWS nccom-test's).

``size`` is, as in nccl-tests: for allreduce, broadcast and reduce the buffer each rank holds; for
allgather, reducescatter, gather, scatter and their ``v`` forms the full gathered buffer; for
alltoall(v) the bytes each rank sends in all; for sendrecv and permute the buffer each sender sends.
algbw = size / time and busbw = algbw * factor, with GB = 1e9 bytes: ``2(n-1)/n`` for allreduce,
``1`` for broadcast, reduce, sendrecv and permute (nccl-tests' ``BroadcastGetBw`` and siblings:
every byte crosses one bus), ``(n-1)/n`` for the others.

Every op has a *base*: the collective whose data it moves and whose algorithms run it.

* ``allreduce``, ``allgather``, ``reducescatter``, ``broadcast`` and ``reduce`` are their own base;
* ``allgatherv`` and ``reducescatterv`` are all-gather and reduce-scatter with blocks of unequal
  sizes (:class:`trnsim.collectives.arguments.Arguments` gives their counts);
* ``alltoall``, ``alltoallv``, ``gather``, ``scatter``, ``sendrecv`` and ``permute`` are *demand*
  ops: rank ``i`` sends ``T[i, j]`` of the size to rank ``j`` for a ``p x p`` matrix ``T``
  (:mod:`trnsim.collectives.traffic`), and run as an all-to-all of that matrix.
"""

from dataclasses import dataclass

from trnsim.errors import UsageError


@dataclass(frozen=True)
class Op:
    """A collective operation: its data (``base``), bus-bandwidth factor and size convention.

    Attributes
    ----------
    base : str
        The collective whose data it moves and whose algorithms run it (module docstring).
    factor : str
        ``twice`` (2(n-1)/n), ``share`` ((n-1)/n) or ``one`` (1): nccl-tests' busbw / algbw.
    split : bool
        The size is split into per-rank blocks (nccl-tests aligns each to whole 16-byte lines).
    rooted : bool
        One rank (the root) is the source or destination of all the data.
    """

    name: str
    description: str
    base: str = ""
    factor: str = "share"
    split: bool = True
    rooted: bool = False

    def __post_init__(self):
        if not self.base:
            object.__setattr__(self, "base", self.name)

    @property
    def demand(self) -> bool:
        """A point-to-point op: rank ``i`` sends ``T[i, j]`` of the size to rank ``j``."""
        return self.base == "alltoall"

    @property
    def uneven(self) -> bool:
        """An all-gather or reduce-scatter whose blocks may differ in size (``allgatherv``...)."""
        return self.name in ("allgatherv", "reducescatterv")

    def busbw_factor(self, ranks: int) -> float:
        """nccl-tests' busbw / algbw: 2(n-1)/n for allreduce, 1 for broadcast, reduce, sendrecv and
        permute, (n-1)/n for the others.

        >>> get_op("allreduce").busbw_factor(4), get_op("broadcast").busbw_factor(4)
        (1.5, 1.0)
        """
        if ranks <= 1:
            return 0.0
        share = (ranks - 1) / ranks
        return {"twice": 2 * share, "one": 1.0}.get(self.factor, share)

    def align(self, size: int, ranks: int, element: int) -> tuple[int, int]:
        """The size nccl-tests actually runs for a requested ``size``, and its count column.

        nccl-tests rounds down: all-reduce to whole elements; all-gather, reduce-scatter and
        all-to-all to a per-rank block of whole 16-byte lines (``(count / ranks) & -(16 / element)``),
        whose element count is the count it prints. A size smaller than one such unit runs 0 bytes.

        Returns
        -------
        (bytes, count)
            The aligned size in bytes and the count nccl-tests prints for it.
        """
        count = size // element
        if not self.split:
            return count * element, count
        per_rank = (count // ranks) & -max(16 // element, 1)
        return per_rank * ranks * element, per_rank


OPS = {
    "allreduce": Op(
        "allreduce",
        "every rank ends with the element-wise sum of all ranks' buffers",
        factor="twice",
        split=False,
    ),
    "allgather": Op("allgather", "every rank ends with every rank's block (size = the gathered buffer)"),
    "reducescatter": Op("reducescatter", "rank i ends with block i of the sum (size = the full input)"),
    "alltoall": Op("alltoall", "rank i sends block j of its buffer to rank j (size = bytes each rank sends)"),
    "broadcast": Op(
        "broadcast", "every rank ends with the root's buffer", factor="one", split=False, rooted=True
    ),
    "reduce": Op(
        "reduce",
        "the root ends with the element-wise sum of all ranks' buffers",
        factor="one",
        split=False,
        rooted=True,
    ),
    "gather": Op(
        "gather",
        "the root ends with every rank's block (size = the gathered buffer)",
        "alltoall",
        rooted=True,
    ),
    "scatter": Op(
        "scatter",
        "rank i ends with block i of the root's buffer (size = the root's buffer)",
        "alltoall",
        rooted=True,
    ),
    "sendrecv": Op(
        "sendrecv",
        "each sender sends its buffer to its receiver (default: rank i to rank i+1; size = one buffer)",
        "alltoall",
        "one",
        split=False,
    ),
    "permute": Op(
        "permute",
        "collective permute: each source sends its buffer to its target (size = one buffer)",
        "alltoall",
        "one",
        split=False,
    ),
    "alltoallv": Op(
        "alltoallv", "all-to-all with per-pair counts (size = what a rank sends, on average)", "alltoall"
    ),
    "allgatherv": Op(
        "allgatherv", "all-gather of blocks of unequal sizes (size = the gathered buffer)", "allgather"
    ),
    "reducescatterv": Op(
        "reducescatterv",
        "reduce-scatter into blocks of unequal sizes (size = the full input)",
        "reducescatter",
    ),
}

# the four collectives every model covers: the exact optimum, the runtimes, the cluster composition
BASIC = ("allreduce", "allgather", "reducescatter", "alltoall")

# element sizes in bytes, by the names nccl-tests and nccom-test use
DTYPES = {
    "int8": 1,
    "uint8": 1,
    "fp8": 1,
    "fp8e4m3": 1,
    "fp8e5m2": 1,
    "half": 2,
    "fp16": 2,
    "float16": 2,
    "bfloat16": 2,
    "bf16": 2,
    "float": 4,
    "fp32": 4,
    "float32": 4,
    "int32": 4,
    "uint32": 4,
    "int": 4,
    "double": 8,
    "fp64": 8,
    "float64": 8,
    "int64": 8,
    "uint64": 8,
}


def get_op(name: str) -> Op:
    """The op called ``name`` (case-insensitive)."""
    try:
        return OPS[name.lower()]
    except KeyError:
        raise UsageError(f"unknown collective {name!r}; choose one of {', '.join(OPS)}") from None


def dtype_size(name: str) -> int:
    """Bytes per element of a dtype name."""
    try:
        return DTYPES[name.lower()]
    except KeyError:
        raise UsageError(
            f"unknown {{dtype}} {name!r}; choose one of {', '.join(DTYPES)}", names="dtype"
        ) from None
