"""Turn the steps of a file that runs threads of operations (MSCCL, MSCCL++) back into a program.

A reader lists every rank's operations as :class:`Op` s, each waiting for the operations in ``after``
(the one before it in its thread, and the ones the file says it depends on). A send and the receive
that matches it (the ``k``-th send from ``a`` to ``b`` on a channel meets the ``k``-th receive at ``b``
from ``a`` on that channel) are one *transfer*, taken as a rendezvous: it happens when both sides are
ready. Every transfer runs as early as the file allows: its BSP round is the length of the longest
chain of operations before it (empty rounds dropped), so a dependency the file forgets shows up as
data used before it arrives (:mod:`trnsim.collectives.check`). A cycle is a deadlock.

What a slot holds comes from :func:`~trnsim.collectives.formats.grid.identity` for the input and
output buffers, and from what was last written there for the scratch buffer.
"""

from collections import defaultdict, deque
from dataclasses import dataclass, field

from trnsim.collectives.formats.grid import identity
from trnsim.collectives.program import Chunk, Program, Transfer
from trnsim.errors import UsageError


@dataclass
class Op:
    """One operation of a rank's thread; ``recv`` and ``send`` are ``(peer, channel, buf, off, cnt)``."""

    rank: int
    where: str  # names the operation in errors: "gpu 3 tb 1 step 4"
    recv: tuple | None = None
    reduce: bool = False  # the receive adds into its slot
    send: tuple | None = None
    copy: tuple | None = None  # a local copy (srcbuf, srcoff, dstbuf, dstoff, cnt)
    after: list[int] = field(default_factory=list)
    round: int | None = None  # the BSP round the file itself names for this send, if it names one


def program(
    op: str, p: int, g: int, ops: list[Op], name: str, where: str, pipelined: bool = False, named: bool = True
) -> Program:
    """The program the operations ``ops`` run (see the module docstring).

    Where every send names its round (a file trnsim wrote) and ``named``, transfers keep those rounds
    instead of the earliest ones the dependencies allow; a reader checks the dependencies' own program
    first (:func:`trnsim.collectives.formats.msccl_xml.read`), so a file whose rounds hide a missing
    dependency is caught, not trusted."""
    event = _match(ops, where)
    levels = _levels(ops, event, where)
    state: list[dict[tuple[str, int], Chunk]] = [{} for _ in range(p)]
    found: dict[tuple, list[Chunk]] = defaultdict(list)
    done = set()
    for node, level in sorted(levels.items(), key=lambda item: (item[1], str(item[0]))):
        key = event.get(node, node)
        if key in done:
            continue
        done.add(key)
        kind, i = node
        if kind == "l":
            if ops[i].copy is None:  # a nop: it only waits
                continue
            sb, so, db, do, cnt = ops[i].copy
            for u in range(cnt):
                _put(op, p, g, state, ops[i], db, do + u, _get(op, p, g, state, ops[i], sb, so + u))
            continue
        send, recv = _pair(ops, key)
        peer, channel, sbuf, soff, cnt = ops[send].send
        _, _, rbuf, roff, _ = ops[recv].recv
        chunks = []
        for u in range(cnt):
            chunk = _get(op, p, g, state, ops[send], sbuf, soff + u)
            _put(op, p, g, state, ops[recv], rbuf, roff + u, chunk)
            chunks.append(chunk)
        found[level, ops[send].rank, ops[recv].rank, ops[recv].reduce, channel, send].extend(chunks)
    named = named and all(o.round is not None for o in ops if o.send is not None)
    merged: dict[tuple, list[Chunk]] = defaultdict(list)  # one transfer per round, pair, kind, channel
    for (level, src, dst, reduce, channel, send), chunks in sorted(found.items()):
        merged[ops[send].round if named else level, src, dst, reduce, channel].extend(chunks)
    rounds = {level: r for r, level in enumerate(sorted({key[0] for key in merged}))}
    transfers = tuple(
        Transfer(rounds[level], src, dst, tuple(chunks), reduce, channel)
        for (level, src, dst, reduce, channel), chunks in sorted(merged.items())
    )
    return Program(op, p, len(rounds), transfers, (1 / g,) * g, None, name, pipelined)


def _pair(ops: list[Op], key) -> tuple[int, int]:
    return key[1], key[2]


def _match(ops: list[Op], where: str) -> dict:
    """Each send's and receive's node -> the transfer ``("t", send, recv)`` they make together."""
    sends, recvs = defaultdict(list), defaultdict(list)
    for i, o in enumerate(ops):
        if o.send is not None:
            sends[o.rank, o.send[0], o.send[1]].append(i)
        if o.recv is not None:
            recvs[o.recv[0], o.rank, o.recv[1]].append(i)
    event = {}
    for conn in sorted(set(sends) | set(recvs)):
        a, b = sends.get(conn, []), recvs.get(conn, [])
        if len(a) != len(b):
            raise UsageError(
                f"{where}: gpu {conn[0]} sends {len(a)} times to gpu {conn[1]} on channel {conn[2]}, "
                f"which receives {len(b)} times"
            )
        for s, r in zip(a, b, strict=True):
            if ops[s].send[4] != ops[r].recv[4]:
                raise UsageError(
                    f"{where}: {ops[s].where} sends {ops[s].send[4]} chunks, {ops[r].where} receives {ops[r].recv[4]}"
                )
            event[("s", s)] = event[("r", r)] = ("t", s, r)
    return event


def _nodes(o: Op, i: int) -> list[tuple[str, int]]:
    nodes = [("r", i)] if o.recv is not None else []
    nodes += [("s", i)] if o.send is not None else []
    return nodes or [("l", i)]


def _levels(ops: list[Op], event: dict, where: str) -> dict:
    """Each node's level: the longest chain of operations before it (a cycle is a deadlock)."""

    def ev(node):
        return event.get(node, node)

    succ, indegree = defaultdict(list), defaultdict(int)
    nodes = {ev(n) for i, o in enumerate(ops) for n in _nodes(o, i)}

    def edge(a, b):
        succ[a].append(b)
        indegree[b] += 1

    for i, o in enumerate(ops):
        mine = [ev(n) for n in _nodes(o, i)]
        for a, b in zip(mine, mine[1:], strict=False):
            edge(a, b)
        for j in o.after:
            edge(ev(_nodes(ops[j], j)[-1]), mine[0])
    level = {n: 0 for n in nodes}
    queue = deque(n for n in nodes if indegree[n] == 0)
    seen = 0
    while queue:
        n = queue.popleft()
        seen += 1
        for m in succ[n]:
            level[m] = max(level[m], level[n] + 1)
            indegree[m] -= 1
            if indegree[m] == 0:
                queue.append(m)
    if seen < len(nodes):
        stuck = min((n for n in nodes if indegree[n] > 0), key=str)
        raise UsageError(
            f"{where}: the steps wait for each other in a cycle (a deadlock), {ops[stuck[1]].where} among them"
        )
    return {n: level[ev(n)] for i, o in enumerate(ops) for n in _nodes(o, i)}


def _get(op: str, p: int, g: int, state, o: Op, buf: str, off: int) -> Chunk:
    fixed = identity(op, p, g, o.rank, buf, off)
    if fixed is not None:
        return fixed
    if (buf, off) not in state[o.rank]:
        raise UsageError(f"{o.where} reads scratch chunk {off}, which nothing wrote before")
    return state[o.rank][buf, off]


def _put(op: str, p: int, g: int, state, o: Op, buf: str, off: int, chunk: Chunk) -> None:
    fixed = identity(op, p, g, o.rank, buf, off)
    if fixed is None:
        state[o.rank][buf, off] = chunk
    elif fixed != chunk:
        raise UsageError(
            f"{o.where} writes block {chunk.block} unit {chunk.part} into the slot of block {fixed.block} unit {fixed.part} ({buf} chunk {off})"
        )
