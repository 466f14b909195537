"""Equal-sized chunks for formats that cut the buffers into them (MSCCL, MSCCL++), and back.

A program cuts every block into parts whose shares may differ (``parts``); MSCCL's chunks are all the
same size. Every block is cut into ``G`` *units* and part ``k`` into ``n[k]`` of them, so that a chunk
of the program is a run of ``n[k]`` consecutive units (a step's ``cnt``):

* when every share is a fraction whose denominators' least common multiple is at most
  :data:`MAX_EXACT_UNITS`, exactly (``G`` is that multiple);
* otherwise (shares from an optimiser, such as ``multidim``'s stream weights) to the nearest
  :data:`ROUNDED_UNITS`-th of a block, by largest remainder, every non-empty part keeping a unit: the
  written file moves at most half a unit more or less per part than the program (``schedule check``
  prints the bytes it does move).

Blocks must be equal (``S / p``): MSCCL's all-to-all moves equal blocks, so a skewed traffic matrix
is refused.

Where a chunk lives in a rank's buffers follows msccl-tools: the all-reduce in place in the input
(``i``), the all-gather in place in the output (``o``, rank ``r``'s own block at ``r * G``), the
reduce-scatter in place in the input (rank ``r``'s result at ``r * G``), the all-to-all out of place
(``i`` at its source, ``o`` at its destination, the scratch buffer ``s`` anywhere in between).
"""

from fractions import Fraction
from math import lcm

from trnsim.collectives.program import NETWORK, Chunk, Program
from trnsim.errors import UsageError

MAX_EXACT_UNITS = 1024  # assumption: the finest exact cut of a block worth writing (nchunksperloop / p)
ROUNDED_UNITS = 120  # assumption: the cut of a block when the shares are not small fractions
OPS = ("allreduce", "allgather", "reducescatter", "alltoall")


def refuse(program: Program, fmt: str) -> None:
    """Raise a one-line :class:`UsageError` if ``fmt`` cannot express ``program`` (see module docstring)."""
    name = program.algorithm or "this program"
    if any(NETWORK in (t.src, t.dst) for t in program.transfers):
        raise UsageError(f"{name} reduces in the network (NVLS/SHARP): {fmt} has no in-network steps")
    if program.op not in OPS:
        raise UsageError(f"{fmt} has no {program.op} (the op of {name}); it writes {', '.join(OPS)}")
    if program.relays:
        raise UsageError(
            f"{name} forwards through {program.relays} chips outside the group: {fmt} names only the "
            "collective's ranks"
        )
    sizes = program.block_sizes
    if sizes is not None and any(abs(s - 1 / program.p) > 1e-12 for s in sizes):
        raise UsageError(
            f"{name}'s {program.op} moves unequal blocks (a skewed traffic matrix or unequal counts): {fmt} moves equal ones"
        )


def units(parts: tuple[float, ...]) -> tuple[int, list[int], bool]:
    """``(G, n, exact)``: units per block, units per part, and whether the cut is exact."""
    fractions = [Fraction(x).limit_denominator(MAX_EXACT_UNITS) for x in parts]
    if all(abs(float(f) - x) < 1e-12 for f, x in zip(fractions, parts, strict=True)):
        g = lcm(*(f.denominator for f in fractions))
        if g <= MAX_EXACT_UNITS:
            return g, [int(f * g) for f in fractions], True
    g = ROUNDED_UNITS
    if sum(x > 0 for x in parts) > g:
        raise UsageError(f"{len(parts)} parts of a block do not fit a cut into {g} equal chunks")
    n = [max(1, int(x * g)) if x > 0 else 0 for x in parts]
    order = sorted(range(len(parts)), key=lambda k: int(parts[k] * g) - parts[k] * g)
    while sum(n) < g:
        n[order.pop(0)] += 1
    while sum(n) > g:
        k = max((k for k in range(len(n)) if n[k] > 1), key=lambda k: n[k] - parts[k] * g)
        n[k] -= 1
    return g, n, False


class Layout:
    """Where each chunk of ``program`` lives in each rank's buffers, in units (module docstring)."""

    def __init__(self, program: Program):
        self.program, self.p = program, program.p
        self.g, self.n, self.exact = units(program.parts)
        self.start = [sum(self.n[:k]) for k in range(len(self.n))]
        self.scratch: list[dict[Chunk, int]] = [{} for _ in range(self.p)]

    def buffers(self) -> tuple[int, int]:
        """Units in the input and output buffers of every rank."""
        whole, one = self.p * self.g, self.g
        return {"allgather": (one, whole), "reducescatter": (whole, one)}.get(self.program.op, (whole, whole))

    def slot(self, rank: int, chunk: Chunk) -> tuple[str, int]:
        """``(buffer, offset)`` of ``chunk`` at ``rank`` (an all-to-all's relays get scratch slots)."""
        op, g, k = self.program.op, self.g, chunk.part
        if op == "allreduce":  # any order works; part-major keeps a part of every block contiguous
            return "i", self.start[k] * self.p + chunk.block * self.n[k]
        if op in ("allgather", "reducescatter"):
            return ("o" if op == "allgather" else "i"), chunk.block * g + self.start[k]
        src, dst = divmod(chunk.block, self.p)
        if rank == src:
            return "i", dst * g + self.start[k]
        if rank == dst:
            return "o", src * g + self.start[k]
        mine = self.scratch[rank]
        if chunk not in mine:
            mine[chunk] = sum(self.n[c.part] for c in mine)
        return "s", mine[chunk]

    def scratch_units(self, rank: int) -> int:
        return sum(self.n[c.part] for c in self.scratch[rank])


def identity(op: str, p: int, g: int, rank: int, buf: str, off: int) -> Chunk | None:
    """The program chunk (one unit: ``part`` = unit within the block) at a positional slot, else None.

    The reader's counterpart of :meth:`Layout.slot` at unit granularity: ``i`` and ``o`` slots name
    fixed data; the scratch buffer's content is whatever was last written there.
    """
    if buf == "s":
        return None
    if op == "allreduce":
        return Chunk(off // g, off % g)
    if op == "allgather":
        return Chunk(off // g, off % g) if buf == "o" else Chunk(rank, off)
    if op == "reducescatter":
        return Chunk(off // g, off % g) if buf == "i" else Chunk(rank, off)
    if buf == "i":
        return Chunk(rank * p + off // g, off % g)
    return Chunk((off // g) * p + rank, off % g)
