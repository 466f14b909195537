"""Collective operations with nccl-tests' size and busbw conventions (also AWS nccom-test's).

``size`` is, as in nccl-tests: for allreduce the buffer each rank reduces; for allgather and
reducescatter the full gathered buffer; for alltoall the bytes each rank sends in all.
algbw = size / time and busbw = algbw * factor, with GB = 1e9 bytes.
"""

from dataclasses import dataclass

from trnsim.errors import UsageError


@dataclass(frozen=True)
class Op:
    """A collective operation and its bus-bandwidth factor."""

    name: str
    description: str

    def busbw_factor(self, ranks: int) -> float:
        """nccl-tests' busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for the others."""
        if ranks <= 1:
            return 0.0
        share = (ranks - 1) / ranks
        return 2 * share if self.name == "allreduce" else share

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
        if self.name == "allreduce":
            return count * element, count
        per_rank = (count // ranks) & -max(16 // element, 1)
        return per_rank * ranks * element, per_rank


OPS = {
    "allreduce": Op("allreduce", "every rank ends with the element-wise sum of all ranks' buffers"),
    "allgather": Op("allgather", "every rank ends with every rank's block (size = the gathered buffer)"),
    "reducescatter": Op("reducescatter", "rank i ends with block i of the sum (size = the full input)"),
    "alltoall": Op("alltoall", "rank i sends block j of its buffer to rank j (size = bytes each rank sends)"),
}

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
