"""Prove a program correct: run it symbolically and compare every rank's buffer with its collective's.

:func:`check` executes a :class:`~trnsim.collectives.program.Program` on its ``p`` ranks, tracking for
every rank and chunk the set of ranks whose input the rank's copy sums (a bit mask). It starts from
what the collective gives each rank:

* all-gather: rank ``r`` holds block ``r``;
* reduce-scatter, all-reduce and reduce: every rank holds every block, of its own input;
* all-to-all: rank ``i`` holds blocks ``i -> j`` for every ``j``;
* broadcast: the root holds every block; the others hold nothing;

and proves that every rank ends with exactly what the collective defines. A program's *relays*
(positions ``p .. p + relays - 1``: chips outside the group that forward data, as a synthesizer's
schedule may route through them) start with nothing, contribute nothing and need nothing at the end;
they may hold and forward copies, and reduce what they receive (a relay's first reduction of a chunk
starts from nothing, as the switches' does, since it has no input to add). The members must end with:

* all-gather: every block ``b``, from rank ``b`` alone;
* reduce-scatter: block ``r`` at rank ``r``, summed over all ``p`` ranks, each once;
* all-reduce: every block at every rank, summed over all ``p`` ranks, each once;
* all-to-all: block ``i -> j`` at rank ``j``, rank ``i``'s (a chunk of zero bytes is not required);
* broadcast: every block at every rank, the root's;
* reduce: every block at the root, summed over all ``p`` ranks, each once.

The other ops run as one of these (:attr:`trnsim.collectives.ops.Op.base`): gather, scatter,
sendrecv, permute and all-to-allv as an all-to-all of their traffic matrix, all-gatherv and
reduce-scatterv as all-gather and reduce-scatter with blocks of unequal sizes.

The first broken rule stops the run; the report names it, with the round, the rank and the chunk:

``sizes``         the parts of a block do not add up to the whole block, or a size is negative
``endpoint``      a transfer names a rank outside the group, sends to itself, or between switches;
                  or a broadcast's or reduce's root is not a rank of the group
``chunk``         a transfer names a block or part the program does not have
``unavailable``   data used before it arrives: a sender reads a chunk it does not hold at the start of
                  the round (the switches: one not sent up in this round), or a rank reduces into
                  a chunk it does not hold
``double-count``  a reduction adds a contribution the receiver already has
``conflict``      a rank's chunk is overwritten by a copy and written again in the same round
``missing``       a rank ends without a chunk the collective gives it
``incomplete``    a rank ends with a chunk whose contributors are not the ones the collective defines
"""

from dataclasses import dataclass

from trnsim.collectives.program import NETWORK, Chunk, Program, Transfer

RULES = ("sizes", "endpoint", "chunk", "unavailable", "double-count", "conflict", "missing", "incomplete")


@dataclass(frozen=True)
class Violation:
    """The first rule a program breaks, and where."""

    rule: str
    round: int | None
    rank: int | None  # NETWORK for the switches
    chunk: str | None
    detail: str

    def __str__(self) -> str:
        where = []
        if self.round is not None:
            where.append(f"round {self.round}")
        elif self.rule in ("missing", "incomplete"):
            where.append("at the end")
        if self.rank is not None:
            where.append("the switches" if self.rank == NETWORK else f"rank {self.rank}")
        if self.chunk is not None:
            where.append(self.chunk)
        return ": ".join([self.rule, *([", ".join(where)] if where else []), self.detail])


@dataclass(frozen=True)
class Report:
    """What :func:`check` found: ``ok``, or the first violation."""

    ok: bool
    violation: Violation | None
    rounds: int
    transfers: int

    def __str__(self) -> str:
        if self.ok:
            return f"ok: {self.rounds} rounds, {self.transfers} transfers"
        return str(self.violation)


def _ranks(mask: int) -> str:
    ranks = [str(i) for i in range(mask.bit_length()) if mask >> i & 1]
    return "{" + ", ".join(ranks) + "}" if ranks else "{}"


def initial(program: Program) -> list[dict[Chunk, int]]:
    """What each rank holds before the collective: chunk -> mask of contributing ranks."""
    p, parts = program.p, range(len(program.parts))
    relays: list[dict[Chunk, int]] = [{} for _ in range(program.relays)]  # relays start empty
    if program.op == "allgather":
        return [{Chunk(r, k): 1 << r for k in parts} for r in range(p)] + relays
    if program.op == "alltoall":
        return [{Chunk(r * p + j, k): 1 << r for j in range(p) for k in parts} for r in range(p)] + relays
    if program.op == "broadcast":
        root = {Chunk(b, k): 1 << program.root for b in range(p) for k in parts}
        return [dict(root) if r == program.root else {} for r in range(p)] + relays
    return [{Chunk(b, k): 1 << r for b in range(p) for k in parts} for r in range(p)] + relays


def expected(program: Program):
    """``(rank, chunk, mask)`` for every chunk a rank must end with, and its contributors."""
    p, parts = program.p, range(len(program.parts))
    everyone = (1 << p) - 1
    for r in range(p):
        if program.op == "allgather":
            wanted = [(Chunk(b, k), 1 << b) for b in range(p) for k in parts]
        elif program.op == "reducescatter":
            wanted = [(Chunk(r, k), everyone) for k in parts]
        elif program.op == "allreduce":
            wanted = [(Chunk(b, k), everyone) for b in range(p) for k in parts]
        elif program.op == "broadcast":
            wanted = [(Chunk(b, k), 1 << program.root) for b in range(p) for k in parts]
        elif program.op == "reduce":
            wanted = [(Chunk(b, k), everyone) for b in range(p) for k in parts] if r == program.root else []
        else:
            wanted = [(Chunk(i * p + r, k), 1 << i) for i in range(p) for k in parts]
        for chunk, mask in wanted:
            if program.size(chunk) > 0:
                yield r, chunk, mask


def check(program: Program) -> Report:
    """Run ``program`` symbolically; the report is ok or names the first rule broken (module docstring)."""
    violation = _sizes(program)
    if violation is None and program.op in ("broadcast", "reduce") and not 0 <= program.root < program.p:
        detail = f"the root {program.root} is not a rank of the group, 0 to {program.p - 1}"
        violation = Violation("endpoint", None, None, None, detail)
    if violation is not None:
        return Report(False, violation, program.rounds, len(program.transfers))
    state = initial(program)
    for number, transfers in enumerate(program.by_round()):
        violation = _round(program, state, number, transfers)
        if violation is not None:
            return Report(False, violation, program.rounds, len(program.transfers))
    for rank, chunk, mask in expected(program):
        have = state[rank].get(chunk)
        violation = None
        if have is None:
            violation = Violation("missing", None, rank, program.describe(chunk), "never arrives")
        elif have != mask:
            lacks, extra = mask & ~have, have & ~mask
            detail = f"sums ranks {_ranks(have)}; should sum {_ranks(mask)}"
            if lacks:
                detail += f" (lacks {_ranks(lacks)})"
            if extra:
                detail += f" (has {_ranks(extra)} too)"
            violation = Violation("incomplete", None, rank, program.describe(chunk), detail)
        if violation is not None:
            return Report(False, violation, program.rounds, len(program.transfers))
    return Report(True, None, program.rounds, len(program.transfers))


def _sizes(program: Program) -> Violation | None:
    parts, blocks = program.parts, program.block_sizes
    if abs(sum(parts) - 1) > 1e-9 or min(parts) < 0:
        return Violation("sizes", None, None, None, f"the parts' shares {parts} do not add up to 1")
    if blocks is not None and (len(blocks) != program.blocks or min(blocks) < 0):
        detail = f"{len(blocks)} block sizes for {program.blocks} blocks, or a negative one"
        return Violation("sizes", None, None, None, detail)
    return None


def _endpoints(program: Program, number: int, t: Transfer) -> Violation | None:
    last = program.p + program.relays - 1

    def valid(x: int) -> bool:
        return 0 <= x <= last or x == NETWORK

    if not (valid(t.src) and valid(t.dst)) or t.src == t.dst:
        what = "sends to itself" if t.src == t.dst else f"names a rank outside 0..{last}"
        return Violation("endpoint", number, t.src, None, f"transfer {t.src} -> {t.dst} {what}")
    for chunk in t.chunks:
        if not (0 <= chunk.block < program.blocks and 0 <= chunk.part < len(program.parts)):
            return Violation(
                "chunk",
                number,
                t.src,
                f"block {chunk.block} part {chunk.part}",
                f"the program has blocks 0..{program.blocks - 1} and parts 0..{len(program.parts) - 1}",
            )
    return None


def _read(program: Program, number: int, holder: dict, src: int, t: Transfer):
    """The values ``t`` carries, read from ``holder``, or the violation of reading what is not there."""
    values = []
    for chunk in t.chunks:
        value = holder.get(chunk)
        if value is None:
            detail = (
                f"sent to rank {t.dst} but not sent up in this round"
                if src == NETWORK
                else f"sent to {'the switches' if t.dst == NETWORK else f'rank {t.dst}'} before it arrives"
            )
            return Violation("unavailable", number, src, program.describe(chunk), detail)
        values.append(value)
    return values


def _write(program, number, buffer, written, rank, t, values) -> Violation | None:
    """Deliver ``t``'s values into ``buffer`` (a rank's, or the switches'), reducing or copying."""
    for chunk, value in zip(t.chunks, values, strict=True):
        before = written.get((rank, chunk))
        if before is not None and (not t.reduce or before == "copy"):
            detail = f"written by two transfers in one round, one of them a copy (the second from {t.src})"
            return Violation("conflict", number, rank, program.describe(chunk), detail)
        written[rank, chunk] = "reduce" if t.reduce else "copy"
        have = buffer.get(chunk)
        if t.reduce and have is None and rank != NETWORK and rank < program.p:
            # a rank reduces into its own copy: without one it would add to garbage (the switches
            # start every round empty and reduce what arrives, and a relay rank, which holds no
            # input of its own, starts a sum with the first contribution it receives)
            detail = f"reduced from {t.src} into a rank that does not hold it"
            return Violation("unavailable", number, rank, program.describe(chunk), detail)
        if t.reduce and have is not None:
            if have & value:
                detail = (
                    f"reducing {_ranks(value)} from {t.src} into {_ranks(have)} counts "
                    f"{_ranks(have & value)} twice"
                )
                return Violation("double-count", number, rank, program.describe(chunk), detail)
            buffer[chunk] = have | value
        else:
            buffer[chunk] = value
    return None


def _round(program: Program, state, number: int, transfers: list[Transfer]) -> Violation | None:
    """One BSP round: links and ups read the state at the round's start; downs read the switches."""
    for t in transfers:
        violation = _endpoints(program, number, t)
        if violation is not None:
            return violation
    network: dict[Chunk, int] = {}
    written: dict = {}
    deliveries = []
    for t in [t for t in transfers if t.src != NETWORK]:
        values = _read(program, number, state[t.src], t.src, t)
        if isinstance(values, Violation):
            return values
        if t.dst == NETWORK:
            violation = _write(program, number, network, written, NETWORK, t, values)
            if violation is not None:
                return violation
        else:
            deliveries.append((t, values))
    for t in [t for t in transfers if t.src == NETWORK]:
        values = _read(program, number, network, NETWORK, t)
        if isinstance(values, Violation):
            return values
        deliveries.append((t, values))
    for t, values in deliveries:
        violation = _write(program, number, state[t.dst], written, t.dst, t, values)
        if violation is not None:
            return violation
    return None
