"""Programs: what a collective algorithm does to the data, chunk by chunk, round by round.

A schedule (:mod:`trnsim.collectives.schedule`) says how many bytes cross between which ranks; a
:class:`Program` says which data they are. It is the algorithm written as synchronous rounds (BSP):
in round ``t`` every :class:`Transfer` reads its sender's buffer as it was at the start of round
``t``, and what it delivers is there from round ``t + 1`` on. :mod:`trnsim.collectives.check` runs a
program symbolically and proves it computes its collective; it also proves that the program moves,
round by round, the bytes the costed schedule says it moves.

The data
--------
The collective's size ``S`` (nccl-tests' ``size``: :mod:`trnsim.collectives.ops`) is cut into
*blocks*, each ``S / p``: for all-gather, block ``b`` is rank ``b``'s contribution; for
reduce-scatter, block ``b`` is the piece whose sum rank ``b`` ends with; for all-reduce, the blocks
just cut the buffer. An all-to-all has ``p * p`` blocks, block ``i * p + j`` being what rank ``i``
sends rank ``j`` (``S / p`` each, or ``T[i, j] x S`` for a skewed traffic matrix ``T``). An algorithm
that splits the data further (rings or trees that share it, streams, the two halves of a
bidirectional ring) cuts every block into the same *parts* (``parts[k]`` is part ``k``'s share of a
block). A :class:`Chunk` ``(block, part)`` names one such piece.

Every rank's value of a chunk is a set of *contributors*: the ranks whose input it sums (one rank for
data that is only copied). A transfer either copies its chunks (the receiver's value becomes the
sender's) or reduces them into the receiver (the receiver's value becomes the union of both, which
must not overlap: a contribution counted twice is an error, not a sum).

Bytes
-----
A transfer's ``fraction`` of ``S`` is not stated but derived, as the sum of its chunks' sizes: the
bytes a program is costed for are, by construction, the bytes of the data it moves.

In-network steps
----------------
Switches that reduce in the network (NVLS, SHARP) appear as one endpoint, :data:`NETWORK`: a
transfer *up* (``dst == NETWORK``) sends a member's chunks into the switches, which reduce them (a
reducing up) or hold them (a copying up); a transfer *down* (``src == NETWORK``) multicasts what the
switches hold to a member. They are the one exception to BSP: the switches work on the data in
flight, so a round's downs read what that round's ups delivered, and nothing stays in the switches
from one round to the next (the schedule costs the pair as one step). Several switches sharing the
load each hold a slice of every chunk; as data they act as one reducer.

Pipelines
---------
A pipelined schedule (``tree``, ``multidim``, the ``nvls`` all-reduce) splits the data into ``m``
chunks that pass through its stages one after another, stage ``i`` of chunk ``j + 1`` running with
stage ``i + 1`` of chunk ``j``. Every chunk does the same thing to its own slice of every block, and
slices never mix, so the pipelining changes the time but not what is computed: the program states the
stages once, one round per stage (the schedule run with one chunk), and ``pipelined`` says the cost
model overlaps them.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

NETWORK = -1  # the switches that reduce and multicast in the network, as one endpoint


class Chunk(NamedTuple):
    """A named piece of the data: ``part`` of ``block`` (see the module docstring)."""

    block: int
    part: int = 0


@dataclass(frozen=True)
class Transfer:
    """In ``round``, ``src`` sends ``chunks`` to ``dst``, which reduces them in or takes a copy.

    ``channel`` says which of the algorithm's concurrent strands it belongs to (a ring, a tree, a
    stream, a ring direction): what a runtime maps to a threadblock or DMA queue.
    """

    round: int
    src: int
    dst: int
    chunks: tuple[Chunk, ...]
    reduce: bool = False
    channel: int = 0

    @property
    def kind(self) -> str:
        """``up`` into the reducing switches, ``down`` out of them, or ``link`` between two ranks."""
        if self.dst == NETWORK:
            return "up"
        return "down" if self.src == NETWORK else "link"


@dataclass(frozen=True)
class Program:
    """An algorithm's collective as rounds of transfers on ``p`` ranks (see the module docstring)."""

    op: str
    p: int
    rounds: int
    transfers: tuple[Transfer, ...]
    parts: tuple[float, ...] = (1.0,)
    block_sizes: tuple[float, ...] | None = None  # per block, its share of S (None: 1/p each)
    algorithm: str = ""
    pipelined: bool = False  # the cost model splits the data into chunks and overlaps these rounds
    # ranks p..p+relays-1: chips outside the group that forward (and reduce) data for it; they start
    # empty and the collective asks nothing of them at the end (``forest``)
    relays: int = 0
    root: int = 0  # broadcast and reduce: the rank whose buffer is sent, or that ends with the sum

    @property
    def blocks(self) -> int:
        return self.p * self.p if self.op == "alltoall" else self.p

    def size(self, chunk: Chunk) -> float:
        """The chunk's share of the collective's size ``S``."""
        block = self.block_sizes[chunk.block] if self.block_sizes is not None else 1 / self.p
        return block * self.parts[chunk.part]

    def fraction(self, transfer: Transfer) -> float:
        """The share of ``S`` a transfer carries: the sum of its chunks' sizes."""
        return sum(self.size(chunk) for chunk in transfer.chunks)

    def by_round(self) -> list[list[Transfer]]:
        out: list[list[Transfer]] = [[] for _ in range(self.rounds)]
        for transfer in self.transfers:
            out[transfer.round].append(transfer)
        return out

    def describe(self, chunk: Chunk) -> str:
        """A chunk in words: ``block 3 part 1``, or for an all-to-all ``block 2->5``."""
        if self.op == "alltoall":
            name = f"block {chunk.block // self.p}->{chunk.block % self.p}"
        else:
            name = f"block {chunk.block}"
        return name if len(self.parts) == 1 else f"{name} part {chunk.part}"


@dataclass
class Builder:
    """Collects a program's transfers; drops empty ones and self-sends (nothing crosses a link)."""

    op: str
    p: int
    algorithm: str = ""
    parts: tuple[float, ...] = (1.0,)
    block_sizes: tuple[float, ...] | None = None
    pipelined: bool = False
    transfers: list[Transfer] = field(default_factory=list)
    relays: int = 0
    root: int = 0

    def send(self, round: int, src: int, dst: int, chunks: Iterable[Chunk], reduce=False, channel=0):
        chunks = tuple(chunks)
        if chunks and src != dst:
            self.transfers.append(Transfer(round, src, dst, chunks, reduce, channel))

    def build(self, rounds: int | None = None) -> Program:
        """The program; ``rounds`` defaults to one past the last round used."""
        if rounds is None:
            rounds = 1 + max((t.round for t in self.transfers), default=-1)
        return Program(
            self.op,
            self.p,
            rounds,
            tuple(self.transfers),
            self.parts,
            self.block_sizes,
            self.algorithm,
            self.pipelined,
            self.relays,
            self.root,
        )


def dual(transfers: Sequence[Transfer], rounds: int, start: int = 0) -> list[Transfer]:
    """The reduce-scatter that mirrors an all-gather: every transfer reversed, in reverse round order,
    reducing into its receiver.

    If the all-gather delivers each chunk to each rank once, its transfers of a block form a tree out
    of the block's origin; reversed, they reduce every rank's contribution into the origin once. The
    all-gather's rounds ``0..rounds-1`` become ``start + rounds - 1 .. start``.
    """
    return [
        Transfer(start + rounds - 1 - t.round, t.dst, t.src, t.chunks, True, t.channel) for t in transfers
    ]


def reduce_of(broadcast: Program) -> Program:
    """The reduce that mirrors a broadcast: :func:`dual` of its transfers, to the same root.

    A broadcast that sends the root nothing and every other rank each chunk once moves each chunk
    along a tree out of the root; reversed, every rank's contribution is reduced up that tree into
    the root once (the argument of :func:`dual`). :func:`~trnsim.collectives.check.check` proves it.
    """
    from dataclasses import replace

    transfers = tuple(dual(broadcast.transfers, broadcast.rounds))
    return replace(broadcast, op="reduce", transfers=transfers)


def ring_reduce_scatter(b: Builder, start: int, order: Sequence[int], owned, channel: int = 0) -> int:
    """The ring reduce-scatter along ``order`` (each rank sends to the next), from round ``start``.

    ``owned[rank]`` lists the chunks ``rank`` ends with, reduced over the ring; step ``s`` sends
    ``owned[order[i - s - 1]]`` from ``order[i]`` to ``order[i + 1]``. Returns its rounds (``k - 1``).
    """
    k = len(order)
    for s in range(k - 1):
        for i, rank in enumerate(order):
            b.send(start + s, rank, order[(i + 1) % k], owned[order[(i - s - 1) % k]], True, channel)
    return k - 1


def ring_all_gather(b: Builder, start: int, order: Sequence[int], owned, channel: int = 0) -> int:
    """The ring all-gather along ``order``: every rank starts with ``owned[rank]`` and ends with all.

    Step ``s`` copies ``owned[order[i - s]]`` from ``order[i]`` to ``order[i + 1]``. Returns ``k - 1``.
    """
    k = len(order)
    for s in range(k - 1):
        for i, rank in enumerate(order):
            b.send(start + s, rank, order[(i + 1) % k], owned[order[(i - s) % k]], False, channel)
    return k - 1


def ring_collective(b: Builder, order: Sequence[int], part: int = 0, channel: int = 0) -> int:
    """``b.op`` (reduce-scatter, all-gather or both) round one ring, on ``part`` of every block."""
    owned = {rank: [Chunk(rank, part)] for rank in order}
    rounds = 0
    if b.op in ("reducescatter", "allreduce"):
        rounds += ring_reduce_scatter(b, rounds, order, owned, channel)
    if b.op in ("allgather", "allreduce"):
        rounds += ring_all_gather(b, rounds, order, owned, channel)
    return rounds


def relay(b: Builder, round: int, where: dict[Chunk, int], target: dict[Chunk, int], channel=0) -> None:
    """One round of store-and-forward: each chunk moves from ``where[chunk]`` to ``target[chunk]``.

    Chunks going between the same two ranks travel in one transfer; ``where`` is updated.
    """
    moves: dict[tuple[int, int], list[Chunk]] = {}
    for chunk, dst in target.items():
        src = where[chunk]
        if src != dst:
            moves.setdefault((src, dst), []).append(chunk)
            where[chunk] = dst
    for (src, dst), chunks in moves.items():
        b.send(round, src, dst, chunks, False, channel)


def order_of(pairs: Sequence[tuple[int, int]]) -> list[int]:
    """The ranks of a ring given as ``(src, dst)`` pairs, in the order the data flows."""
    nxt = dict(pairs)
    order = [pairs[0][0]]
    while nxt[order[-1]] != order[0]:
        order.append(nxt[order[-1]])
    return order


def as_op(program: Program, op: str) -> Program:
    """An all-gather program run as ``op``: a reduce-scatter is its mirror image
    (:func:`dual`: every transfer reversed, reducing, in reverse round order), an all-reduce that and
    then the all-gather. What a synthesizer of all-gather trees or flows (ForestColl, TE-CCL) says of
    the other two; :func:`~trnsim.collectives.check.check` proves the result, as it does any program.

    Raises :class:`~trnsim.errors.UsageError` for any other pair of collectives.
    """
    from dataclasses import replace

    from trnsim.errors import UsageError

    if op == program.op:
        return program
    if program.op != "allgather" or op not in ("reducescatter", "allreduce"):
        raise UsageError(f"the schedule is a {program.op}; it does not make a {op}")
    transfers = dual(program.transfers, program.rounds)
    rounds = program.rounds
    if op == "allreduce":
        transfers += [replace(t, round=t.round + rounds) for t in program.transfers]
        rounds *= 2
    return replace(program, op=op, rounds=rounds, transfers=tuple(transfers))
