"""Reading an MSCCL++ execution plan (:mod:`~trnsim.collectives.formats.mscclpp_json`) back into a program.

Every operation of every threadblock is a node; a node happens after the one before it in its
threadblock, a ``wait`` after the signal it consumes (the ``n``-th wait on a rank's ``k``-th memory
channel to a peer consumes the peer's ``n``-th signal on its ``k``-th channel back), a
``sem_acquire`` after the matching ``sem_release`` of the gpu, and the ``n``-th ``barrier`` of a
chain of threadblocks (threadblocks continued through a semaphore) after every chain's ``n``-th
barrier call. A node's level is the longest chain of nodes before it (a cycle is a deadlock).

A ``put`` takes its data when it runs and writes it into the peer's scratch buffer; what a later
operation of the peer reads there is the last write that *happens before* it (through the order
above): a read that no wait orders after the put reads nothing, so the data never arrives and the
checker finds the rank without it. A ``copy`` or ``re`` (added in place) of received data is the
transfer's receiving end; the transfer's round is its put's level (empty levels dropped). Puts into
a peer's input or output buffer, port or switch channels, packets and other operations are refused.
"""

import json
from collections import defaultdict, deque

from trnsim.collectives.formats import Imported
from trnsim.collectives.formats.grid import OPS, identity
from trnsim.collectives.program import Chunk, Program, Transfer
from trnsim.errors import UsageError

_READ = ("put", "signal", "wait", "copy", "re", "barrier", "nop", "sem_acquire", "sem_release")


class _Plan:
    """The nodes of a plan and what they do (module docstring)."""

    def __init__(self, where: str):
        self.where = where
        self.nodes: list[dict] = []  # {"rank", "here", "op", and what the op touches}
        self.succ: dict[int, list[int]] = defaultdict(list)

    def edge(self, a: int, b: int) -> None:
        self.succ[a].append(b)

    def fail(self, here: str, what: str):
        raise UsageError(f"{self.where}: {here}: {what}")


def _get(obj, key: str, kind, here: str, where: str):
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UsageError(
            f"{where}: {here}.{key}: expected {getattr(kind, '__name__', 'a value')}, got {value!r}"
        )
    return value


def read(data: bytes, where: str, name: str) -> Imported:
    """The plan's bytes as a program (module docstring); a bad file raises one line."""
    try:
        plan = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"{where}: not valid JSON ({error})") from None
    if not isinstance(plan, dict):
        raise UsageError(f"{where}: expected a JSON object (an MSCCL++ execution plan)")
    op = _get(plan, "collective", str, "plan", where)
    if op not in OPS:
        raise UsageError(f"{where}: collective {op!r}: trnsim reads {', '.join(OPS)}")
    gpus = _get(plan, "gpus", list, "plan", where)
    p = len(gpus)
    whole = "output_chunks" if op == "allgather" else "input_chunks"
    for rank, gpu in enumerate(gpus):
        if _get(gpu, "id", int, f"gpus[{rank}]", where) != rank:
            raise UsageError(f"{where}: gpus[{rank}].id: expected {rank} (the executor reads gpus[rank])")
    g = _get(gpus[0], whole, int, "gpus[0]", where) // p if p else 0
    if (
        p < 2
        or g < 1
        or any(_get(gpu, whole, int, f"gpus[{r}]", where) != g * p for r, gpu in enumerate(gpus))
    ):
        raise UsageError(
            f"{where}: gpus: expected 2 or more, each with the same {whole}, a multiple of their number"
        )
    graph = _Plan(where)
    signals: dict[tuple, list[int]] = defaultdict(list)
    waits: dict[tuple, list[int]] = defaultdict(list)
    for rank, gpu in enumerate(gpus):
        _gpu(graph, gpu, rank, p, signals, waits)
    for key in sorted(set(signals) | set(waits)):
        a, b = signals.get(key, []), waits.get(key, [])
        if len(a) != len(b):
            raise UsageError(
                f"{where}: gpu {key[0]} signals gpu {key[1]} {len(a)} times on their channel {key[2]}, which waits {len(b)} times"
            )
        for s, w in zip(a, b, strict=True):
            graph.edge(s, w)
    order, level = _levels(graph)
    program, notes = _replay(graph, order, level, op, p, g, plan.get("name") or "")
    notes.insert(0, f"each block is {g} chunk{'s' * (g > 1)} of the file; every chunk is one part")
    return Imported(program, name, None, notes)


def _refs(tb: dict, key: str, field: str, kind_key: str, here: str, where: str, limit: int) -> list[int]:
    """A threadblock's memory channel ids or remote buffer ids, each checked against the gpu's."""
    out = []
    for entry in tb.get(key) or []:
        if _get(entry, kind_key, str, here, where) != "memory":
            raise UsageError(
                f"{where}: {here}.{key}: trnsim reads memory channels only, got {entry.get(kind_key)!r}"
            )
        for i in _get(entry, field, list, here, where):
            if not isinstance(i, int) or not 0 <= i < limit:
                raise UsageError(f"{where}: {here}.{key}: {i!r} is not one of the gpu's {limit}")
            out.append(i)
    return out


def _gpu(graph: _Plan, gpu: dict, rank: int, p: int, signals: dict, waits: dict) -> None:
    """Add one gpu's nodes and their edges within the gpu to ``graph``."""
    where, here = graph.where, f"gpus[{rank}]"
    peers = []  # the gpu's memory channels: (peer, k)
    for channel in _get(gpu, "channels", list, here, where):
        if _get(channel, "channel_type", str, here + ".channels", where) != "memory":
            raise UsageError(
                f"{where}: {here}.channels: trnsim reads memory channels only, got {channel['channel_type']!r}"
            )
        for peer in _get(channel, "connected_to", list, here + ".channels", where):
            if not isinstance(peer, int) or not 0 <= peer < p or peer == rank:
                raise UsageError(f"{where}: {here}.channels: peer {peer!r} is not another gpu")
            peers.append((peer, sum(q == peer for q, _ in peers)))
    buffers = []
    for buf in _get(gpu, "remote_buffers", list, here, where):
        peer, kind = _get(buf, "rank", int, here + ".remote_buffers", where), buf.get("type")
        if not 0 <= peer < p or kind != "s":
            raise UsageError(
                f"{where}: {here}.remote_buffers: trnsim reads puts into another gpu's scratch (type 's')"
            )
        buffers.append(peer)
    size = {
        b: _get(gpu, f"{n}_chunks", int, here, where)
        for b, n in (("i", "input"), ("o", "output"), ("s", "scratch"))
    }
    n_sems = len(gpu.get("semaphores") or [])
    sems: dict[str, dict[int, list]] = {"sem_release": defaultdict(list), "sem_acquire": defaultdict(list)}
    barriers, first, last = [], {}, {}
    for t, tb in enumerate(_get(gpu, "threadblocks", list, here, where)):
        th = f"{here}.threadblocks[{t}]"
        if _get(tb, "id", int, th, where) != t:
            raise UsageError(f"{where}: {th}.id: expected {t}")
        chans = [
            peers[i] for i in _refs(tb, "channels", "channel_ids", "channel_type", th, where, len(peers))
        ]
        refs = [
            buffers[i]
            for i in _refs(
                tb, "remote_buffer_refs", "remote_buffer_ids", "access_channel_type", th, where, len(buffers)
            )
        ]
        calls, previous = [], None
        for i, spec in enumerate(_get(tb, "ops", list, th, where)):
            node = _node(spec, f"gpu {rank} tb {t} op {i}", rank, chans, refs, size, n_sems, where)
            index = len(graph.nodes)
            graph.nodes.append(node)
            if previous is not None:
                graph.edge(previous, index)
            previous = index
            kind = node["op"]
            if kind == "signal":
                for peer, k in node["chans"]:
                    signals[rank, peer, k].append(index)
            elif kind == "wait":
                for peer, k in node["chans"]:
                    waits[peer, rank, k].append(index)
            elif kind in sems:
                for s in node["sems"]:
                    sems[kind][s].append((t, index))
            elif kind == "barrier":
                calls.append(index)
            first.setdefault(t, index), last.update({t: index})
        barriers.append(calls)
    _syncs(graph, gpu, rank, sems, barriers, first, last)


def _node(spec, here: str, rank: int, chans: list, refs: list, size: dict, n_sems: int, where: str) -> dict:
    kind = spec.get("name") if isinstance(spec, dict) else None
    if kind not in _READ:
        raise UsageError(f"{where}: {here}: operation {kind!r}; trnsim reads {', '.join(_READ)}")
    node = {"rank": rank, "here": here, "op": kind, "chans": chans}

    def buffs(key: str, remote: bool) -> list[tuple]:
        out = []
        for b in _get(spec, key, list, here, where):
            index, n = _get(b, "index", int, here, where), _get(b, "size", int, here, where)
            if remote:
                ref = _get(b, "buffer_id", int, here, where)
                if not 0 <= ref < len(refs):
                    raise UsageError(
                        f"{where}: {here}: buffer_id {ref} is not in its threadblock's remote_buffer_refs"
                    )
                out.append((refs[ref], "s", index, n))
            else:
                buf = b.get("type")
                if buf not in size or index < 0 or n < 1 or index + n > size[buf]:
                    raise UsageError(
                        f"{where}: {here}: {n} chunks at {buf!r} {index} lie outside the gpu's buffers {size}"
                    )
                out.append((rank, buf, index, n))
        return out

    if kind in ("signal", "wait"):
        ids = _get(spec, "channel_ids", list, here, where)
        if not ids or any(not isinstance(i, int) or not 0 <= i < len(chans) for i in ids):
            raise UsageError(
                f"{where}: {here}: channel_ids {ids} are not its threadblock's {len(chans)} channels"
            )
        node["chans"] = [chans[i] for i in ids]
    elif kind in ("put", "copy", "re"):
        node["src"], node["dst"] = buffs("src_buff", False), buffs("dst_buff", kind == "put")
        if not node["src"] or len(node["dst"]) != (len(node["src"]) if kind == "put" else 1):
            raise UsageError(f"{where}: {here}: expected one dst_buff for each src_buff ({kind})")
        if any(s[3] != d[3] for s, d in zip(node["src"], node["dst"] * len(node["src"]), strict=False)):
            raise UsageError(f"{where}: {here}: its src_buff and dst_buff sizes differ")
        if kind == "re" and (
            len(node["src"]) < 2 or node["src"][0] != node["dst"][0] or node["dst"][0][1] == "s"
        ):
            raise UsageError(
                f"{where}: {here}: trnsim reads re that adds into an input or output chunk in place"
            )
    elif kind in ("sem_acquire", "sem_release"):
        node["sems"] = _get(spec, "semaphore_ids", list, here, where)
        if any(not isinstance(s, int) or not 0 <= s < n_sems for s in node["sems"]):
            raise UsageError(f"{where}: {here}: semaphore_ids {node['sems']} are not the gpu's {n_sems}")
    elif kind == "barrier":
        node["count"] = _get(spec, "num_threadblocks", int, here, where)
        node["id"] = _get(spec, "barrier_id", int, here, where)
    return node


def _syncs(graph: _Plan, gpu: dict, rank: int, sems: dict, barriers: list, first: dict, last: dict) -> None:
    """Edges of a gpu's semaphores and barriers; threadblocks continued through a semaphore are one chain."""
    nodes, where = graph.nodes, graph.where
    after = {}  # tb -> the tb it continues
    for s in set(sems["sem_release"]) | set(sems["sem_acquire"]):
        rel, acq = sems["sem_release"].get(s, []), sems["sem_acquire"].get(s, [])
        if (
            (gpu["semaphores"][s] or {}).get("init_value", 0) != 0
            or len(rel) != len(acq)
            or len({t for t, _ in rel}) > 1
            or len({t for t, _ in acq}) > 1
        ):
            raise UsageError(
                f"{where}: gpu {rank} semaphore {s}: trnsim reads ones starting at 0, released and acquired as often, each from one threadblock"
            )
        for (tr, r), (ta, a) in zip(rel, acq, strict=True):
            graph.edge(r, a)
            if r == last[tr] and a == first[ta]:
                after[ta] = tr
    chains: dict[int, list[int]] = defaultdict(list)
    for t in range(len(barriers)):
        root = t
        while root in after:
            root = after[root]
        chains[root].extend(barriers[t])  # continuations come after their roots in tb order
    calls = [c for c in chains.values() if c]
    for n in range(max((len(c) for c in calls), default=0)):
        members = [c[n] for c in calls if len(c) > n]
        if len(members) != len(calls) or any(
            nodes[m]["count"] != len(members) or nodes[m]["id"] != nodes[members[0]]["id"] for m in members
        ):
            raise UsageError(
                f"{where}: {nodes[members[0]]['here']}: barrier {n} of gpu {rank} is called by {len(members)} of its {len(calls)} threadblock chains, with num_threadblocks {nodes[members[0]]['count']}"
            )
        meet = len(nodes)
        nodes.append({"rank": rank, "here": f"gpu {rank} barrier {n}", "op": "meet"})
        for m in members:
            graph.edge(m, meet)
            for nxt in [x for x in graph.succ[m] if x != meet and nodes[x]["rank"] == rank and x == m + 1]:
                graph.edge(meet, nxt)


def _levels(graph: _Plan) -> tuple[list[int], list[int]]:
    """A topological order of the nodes and each node's level (a cycle is a deadlock)."""
    n = len(graph.nodes)
    indegree = [0] * n
    for a in range(n):
        for b in graph.succ.get(a, []):
            indegree[b] += 1
    level, order = [0] * n, []
    queue = deque(i for i in range(n) if indegree[i] == 0)
    while queue:
        a = queue.popleft()
        order.append(a)
        for b in graph.succ.get(a, []):
            level[b] = max(level[b], level[a] + 1)
            indegree[b] -= 1
            if indegree[b] == 0:
                queue.append(b)
    if len(order) < n:
        stuck = next(i for i in range(n) if indegree[i] > 0)
        raise UsageError(
            f"{graph.where}: the operations wait for each other in a cycle (a deadlock), {graph.nodes[stuck]['here']} among them"
        )
    return order, level


def _ancestors(graph: _Plan, order: list[int]) -> list[int]:
    """Per node, a bit mask of the scratch-writing nodes that happen before it."""
    writes = [n.get("op") in ("put", "copy") and n["dst"][0][1] == "s" for n in graph.nodes]
    anc = [0] * len(graph.nodes)
    for a in order:
        mine = anc[a] | (1 << a if writes[a] else 0)
        for b in graph.succ.get(a, []):
            anc[b] |= mine
    return anc


def _replay(graph: _Plan, order: list[int], level: list[int], op: str, p: int, g: int, name: str):
    """Run the nodes in order: the program of the puts whose data their receivers use (module docstring)."""
    anc = _ancestors(graph, order)
    history: dict[tuple, list[tuple]] = defaultdict(list)  # (rank, "s", unit) -> [(writer, value)]
    used: dict[tuple[int, bool], list[Chunk]] = defaultdict(list)  # (put, reduces) -> chunks
    notes: set[str] = set()

    def load(node: int, rank: int, buf: str, unit: int):
        """``(chunk, (put, unit) or None)`` at a slot as ``node`` sees it; None if nothing arrived."""
        fixed = identity(op, p, g, rank, buf, unit)
        if fixed is not None:
            return fixed, None
        for writer, value in reversed(history[rank, buf, unit]):
            if anc[node] >> writer & 1:
                return value
        notes.add(
            f"{graph.nodes[node]['here']} reads scratch chunk {unit} before any write to it is waited for: read as nothing arriving"
        )
        return None

    def use(value, reduces: bool) -> None:
        if value is not None and value[1] is not None:
            used[value[1], reduces].append(value[0])

    for i in order:
        node = graph.nodes[i]
        kind = node["op"]
        if kind not in ("put", "copy", "re"):
            continue
        for (rank, sbuf, soff, n), dst in zip(node["src"], node["dst"] * len(node["src"]), strict=False):
            for u in range(n):
                value = load(i, rank, sbuf, soff + u)
                if kind == "put":
                    use(value, False)  # a relay forwards what it received: a copy to it
                    history[dst[0], "s", dst[2] + u].append((i, None if value is None else (value[0], i)))
                elif kind == "re" and (rank, sbuf, soff) != node["dst"][0][:3]:
                    target = identity(op, p, g, rank, dst[1], dst[2] + u)
                    if value is not None and value[0] != target:
                        graph.fail(
                            node["here"],
                            f"adds block {value[0].block} unit {value[0].part} into the slot of block {target.block} unit {target.part}",
                        )
                    if value is not None and value[1] is None:
                        graph.fail(node["here"], "adds data it did not receive (a local reduction)")
                    use(value, True)
                elif kind == "copy":
                    _copy(graph, node, value, op, p, g, dst, u, history, i)
                    use(value, False)
    return _program(graph, level, used, op, p, g, name), sorted(notes)


def _copy(
    graph: _Plan, node: dict, value, op: str, p: int, g: int, dst: tuple, u: int, history, i: int
) -> None:
    rank, buf, off = dst[0], dst[1], dst[2] + u
    target = identity(op, p, g, rank, buf, off)
    if target is None:
        history[rank, buf, off].append((i, None if value is None else (value[0], None)))
    elif value is not None and value[0] != target:
        graph.fail(
            node["here"],
            f"writes block {value[0].block} unit {value[0].part} into the slot of block {target.block} unit {target.part}",
        )


def _program(graph: _Plan, level: list[int], used: dict, op: str, p: int, g: int, name: str) -> Program:
    found: dict[tuple, list[Chunk]] = defaultdict(list)
    for (put, reduces), chunks in used.items():
        node = graph.nodes[put]
        dst = node["dst"][0][0]
        channel = next((k for peer, k in node["chans"] if peer == dst), 0)
        found[level[put], node["rank"], dst, reduces, channel].extend(chunks)
    rounds = {lv: r for r, lv in enumerate(sorted({key[0] for key in found}))}
    transfers = tuple(
        Transfer(rounds[lv], src, dst, tuple(dict.fromkeys(chunks)), reduces, channel)
        for (lv, src, dst, reduces, channel), chunks in sorted(found.items())
    )
    return Program(op, p, len(rounds), transfers, (1 / g,) * g, None, name)
