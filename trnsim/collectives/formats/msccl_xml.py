"""MSCCL's algorithm XML (microsoft/msccl's runtime, ``src/misc/msccl/msccl_parser.cc``; written by
msccl-tools' ``ir_to_xml`` in its original ``<step>`` form), written from a program and read back.

The file::

    <algo name proto nchannels nchunksperloop ngpus coll inplace outofplace minBytes maxBytes>
      <gpu id i_chunks o_chunks s_chunks>
        <tb id send recv chan>
          <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>

Every rank is a ``gpu``; a threadblock (``tb``) runs its steps in order and talks to at most one
peer each way. Writing, every ``(peer, channel)`` a rank sends to gets a threadblock of ``s`` steps
and every one it receives from one of ``r`` (copies) or ``rrc`` (receive-reduce-copy) steps; the
program's channels are numbered from 0. Chunks are laid out by :mod:`~trnsim.collectives.formats.grid`
(``cnt`` is a run of equal chunks, at most 71: the runtime's ``MSCCL_MAX_COUNT``). A step waits
(``depid``/``deps``) for the steps of other threadblocks it needs: a send for the step that
delivered its chunk, a receive for the steps that last wrote or still read the slot it overwrites
(receives into one slot in one round one after another); further waits become ``nop`` steps before
it, as msccl-tools writes them, and ``hasdep`` marks the steps waited for. An all-to-all's own block
is copied from input to output by a ``cpy`` step.

Two attributes the runtime does not read (NCCL's XML parser keeps unknown attributes and MSCCL's
parser asks only for its own) carry what MSCCL's format has no place for: ``round`` on each send and
receive step (the program's round of that transfer) and ``pipelined="1"`` on ``<algo>`` (trnsim's cost
model overlaps the rounds as pipeline stages; MSCCL's runtime pipelines over the buffer by itself).
A file trnsim wrote thus reads back as the same rounds; without them a transfer runs in the earliest
round its dependencies allow.

Reading rebuilds the program (:mod:`~trnsim.collectives.formats.replay`) with one part per chunk of a
block; ``rcs``, ``rrs`` and ``rrcs`` are read as a receive then a send (``rrs`` as if it kept the sum),
a ``cpy`` as moving nothing between ranks; local reductions (``re``) are refused.
"""

import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field

from trnsim.collectives.formats import Imported, ScheduleFormat, register, replay
from trnsim.collectives.formats.grid import Layout, refuse
from trnsim.collectives.formats.replay import Op
from trnsim.collectives.program import Chunk, Program
from trnsim.errors import UsageError

NAME = "msccl-xml"
MAX_COUNT = 71  # the runtime refuses cnt >= MSCCL_MAX_COUNT (72)
MAX_STEPS = 256  # MSCCL_MAX_NUM_STEPS per threadblock
MAX_TBS = 216  # MSCCL_MAX_NUM_THREAD_BLOCKS per gpu
MAX_BYTES = 2**63 - 1  # the file is valid at every size: minBytes 0, maxBytes the largest int64


@dataclass(eq=False)
class _Step:
    type: str
    src: tuple[str, int]
    dst: tuple[str, int]
    cnt: int
    tb: tuple
    deps: list = field(default_factory=list)
    index: int = -1  # its position in its threadblock, nops included
    round: int | None = None  # the program's round of the transfer a send or receive is half of


def _tb_order(key: tuple) -> tuple[int, int, int]:
    """msccl-tools' order of a gpu's threadblocks: by send peer, then receive peer, then channel."""
    kind, peer, chan = key
    return (peer, -1, chan) if kind == "s" else (-1, peer, chan) if kind == "r" else (-1, -1, 0)


def _runs(layout: Layout, t) -> list[tuple]:
    """``t``'s chunks as runs ``(src slot, dst slot, cnt, chunks)`` contiguous at both ends."""
    items = sorted(
        (layout.slot(t.src, c), layout.slot(t.dst, c), layout.n[c.part], c)
        for c in t.chunks
        if layout.n[c.part]
    )
    runs: list[list] = []
    for src, dst, n, chunk in items:
        last = runs[-1] if runs else None
        if (
            last is not None
            and last[0][0] == src[0]
            and last[0][1] + last[2] == src[1]
            and last[1][0] == dst[0]
            and last[1][1] + last[2] == dst[1]
            and last[2] + n <= MAX_COUNT
        ):
            last[2] += n
            last[3].append(chunk)
            continue
        for lo in range(0, n, MAX_COUNT):
            piece = min(MAX_COUNT, n - lo)
            runs.append([(src[0], src[1] + lo), (dst[0], dst[1] + lo), piece, [chunk]])
    return [tuple(run) for run in runs]


def _steps(program: Program, layout: Layout) -> dict[int, dict[tuple, list[_Step]]]:
    """Every rank's threadblocks and their steps, with the steps each waits for (module docstring)."""
    tbs: dict[int, dict[tuple, list[_Step]]] = defaultdict(lambda: defaultdict(list))
    channel = {c: i for i, c in enumerate(sorted({t.channel for t in program.transfers}))}
    last_write: dict[tuple[int, Chunk], _Step] = {}
    reads: dict[tuple[int, Chunk], list[_Step]] = defaultdict(list)
    for transfers in program.by_round():
        pairs = []
        for t in sorted(transfers, key=lambda t: (t.src, t.dst, t.channel)):
            ch = channel[t.channel]
            for src, dst, cnt, chunks in _runs(layout, t):
                send = _Step("s", src, dst, cnt, (t.src, ("s", t.dst, ch)), round=t.round)
                recv = _Step(
                    "rrc" if t.reduce else "r",
                    dst if t.reduce else src,
                    dst,
                    cnt,
                    (t.dst, ("r", t.src, ch)),
                    round=t.round,
                )
                tbs[t.src][send.tb[1]].append(send)
                tbs[t.dst][recv.tb[1]].append(recv)
                pairs.append((t, send, recv, chunks))
        for t, send, _, chunks in pairs:  # a round's sends read the data as the round starts
            for chunk in chunks:
                if (t.src, chunk) in last_write:
                    send.deps.append(last_write[t.src, chunk])
                reads[t.src, chunk].append(send)
        for t, _, recv, chunks in pairs:
            for chunk in chunks:
                key = (t.dst, chunk)
                recv.deps += [last_write[key]] if key in last_write else []
                recv.deps += reads.pop(key, [])
                last_write[key] = recv
    if program.op == "alltoall":
        for rank in range(program.p):
            src, dst = ("i", rank * layout.g), ("o", rank * layout.g)
            for lo in range(0, layout.g, MAX_COUNT):
                step = _Step(
                    "cpy",
                    (src[0], src[1] + lo),
                    (dst[0], dst[1] + lo),
                    min(MAX_COUNT, layout.g - lo),
                    (rank, ("c", -1, 0)),
                )
                tbs[rank][("c", -1, 0)].append(step)
    return tbs


def _finish(tbs: dict[tuple, list[_Step]]) -> dict[tuple, list[_Step]]:
    """A gpu's steps with waits on their own threadblock or already waited for dropped, and the
    further waits of a step moved to ``nop`` steps before it (one wait a step, as the runtime reads)."""
    position = {id(s): i for steps in tbs.values() for i, s in enumerate(steps)}
    out = {}
    for key, steps in tbs.items():
        waited: dict[tuple, int] = {}
        expanded = []
        for step in steps:
            deps = []
            for dep in sorted(set(step.deps), key=lambda d: (_tb_order(d.tb[1]), position[id(d)])):
                tb, at = dep.tb[1], position[id(dep)]
                if tb != key and waited.get(tb, -1) < at:
                    waited[tb] = at
                    deps.append(dep)
            for dep in deps[1:]:
                expanded.append(_Step("nop", ("i", -1), ("o", -1), 0, step.tb, [dep]))
            step.deps = deps[:1]
            expanded.append(step)
        for i, step in enumerate(expanded):
            step.index = i
        out[key] = expanded
    return out


def write(program: Program, ranks: list[str]) -> bytes:
    """``program`` as MSCCL XML (module docstring); a program it cannot express raises one line."""
    refuse(program, NAME)
    layout = Layout(program)
    gpus = {rank: _finish(tbs) for rank, tbs in _steps(program, layout).items()}
    inputs, outputs = layout.buffers()
    nchannels = 1 + max((key[2] for tbs in gpus.values() for key in tbs), default=0)
    _limits(program, gpus)
    alltoall = program.op == "alltoall"
    algo = ET.Element("algo")
    for attr, value in (
        ("name", program.algorithm or "trnsim"),
        ("proto", "Simple"),
        ("nchannels", nchannels),
        ("nchunksperloop", max(inputs, outputs)),
        ("ngpus", program.p),
        ("coll", program.op),
        ("inplace", int(not alltoall)),
        ("outofplace", int(alltoall)),
        ("minBytes", 0),
        ("maxBytes", MAX_BYTES),
    ):
        algo.set(attr, str(value))
    if program.pipelined:  # read by trnsim only: its cost model overlaps the rounds as stages
        algo.set("pipelined", "1")
    waited = {id(dep) for tbs in gpus.values() for steps in tbs.values() for s in steps for dep in s.deps}
    for rank in range(program.p):
        tbs = gpus.get(rank, {})
        ids = {key: i for i, key in enumerate(sorted(tbs, key=_tb_order))}
        gpu = ET.SubElement(algo, "gpu", id=str(rank), i_chunks=str(inputs), o_chunks=str(outputs))
        gpu.set("s_chunks", str(layout.scratch_units(rank)))
        for key in sorted(tbs, key=_tb_order):
            send, recv, chan = _tb_order(key)
            tb = ET.SubElement(gpu, "tb", id=str(ids[key]), send=str(send), recv=str(recv), chan=str(chan))
            for step in tbs[key]:
                dep = step.deps[0] if step.deps else None
                ET.SubElement(
                    tb,
                    "step",
                    s=str(step.index),
                    type=step.type,
                    srcbuf=step.src[0],
                    srcoff=str(step.src[1]),
                    dstbuf=step.dst[0],
                    dstoff=str(step.dst[1]),
                    cnt=str(step.cnt),
                    depid=str(ids[dep.tb[1]] if dep else -1),
                    deps=str(dep.index if dep else -1),
                    hasdep=str(int(id(step) in waited)),
                )
                if step.round is not None:  # read by trnsim only (see the module docstring)
                    tb[-1].set("round", str(step.round))
    ET.indent(algo, space="  ")
    return ET.tostring(algo, encoding="unicode").encode() + b"\n"


def _limits(program: Program, gpus: dict) -> None:
    """Refuse a file microsoft/msccl's runtime would refuse to load."""
    name = program.algorithm or "this program"
    for rank, tbs in gpus.items():
        if len(tbs) > MAX_TBS:
            raise UsageError(
                f"{name} needs {len(tbs)} threadblocks on rank {rank}; MSCCL runs at most {MAX_TBS}"
            )
        for steps in tbs.values():
            if len(steps) > MAX_STEPS:
                raise UsageError(
                    f"{name} needs {len(steps)} steps in one threadblock of rank {rank}; MSCCL runs at most {MAX_STEPS}"
                )


def sniff(data: bytes) -> bool:
    head = data[:512].lstrip()
    return head.startswith(b"<algo") or (head.startswith(b"<?xml") and b"<algo" in data[:1024])


_TYPES = {  # type -> (receives, reduces, sends, where the send reads: "src" or "dst")
    "s": (False, False, True, "src"),
    "r": (True, False, False, None),
    "rcs": (True, False, True, "dst"),
    "rrc": (True, True, False, None),
    "rrs": (True, True, True, "src"),
    "rrcs": (True, True, True, "dst"),
    "cpy": (False, False, False, None),
    "nop": (False, False, False, None),
}
_OPS = ("allreduce", "allgather", "reducescatter", "alltoall")
_STEP_INTS = ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep")


def _int(node, attr: str, where: str) -> int:
    value = node.get(attr)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: <{node.tag}> needs an integer {attr}=, got {value!r}") from None


def read(data: bytes, where: str) -> Imported:
    """An MSCCL XML file's bytes as a program (module docstring); a bad file raises one line."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        raise UsageError(f"{where}: not well-formed XML ({error})") from None
    if root.tag != "algo":
        raise UsageError(f"{where}: the root element is <{root.tag}>, not MSCCL's <algo>")
    op = root.get("coll")
    if op not in _OPS:
        raise UsageError(f"{where}: <algo coll={op!r}>: trnsim reads {', '.join(_OPS)}")
    p = _int(root, "ngpus", where)
    gpus = root.findall("gpu")
    if p < 2 or sorted(_int(gpu, "id", where) for gpu in gpus) != list(range(p)):
        raise UsageError(f"{where}: <algo ngpus={p}> needs one <gpu> for each id 0..{p - 1}")
    whole = "o_chunks" if op == "allgather" else "i_chunks"
    g = _int(gpus[0], whole, where) // p
    if g < 1 or any(_int(gpu, whole, where) != g * p for gpu in gpus):
        raise UsageError(f"{where}: every <gpu> needs the same {whole}=, a multiple of ngpus ({p})")
    ops: list[Op] = []
    for gpu in sorted(gpus, key=lambda gpu: _int(gpu, "id", where)):
        _gpu(gpu, p, ops, where)
    pipelined, name = root.get("pipelined") == "1", root.get("name", "")
    # what the runtime may do: every step as early as its dependencies allow
    program = replay.program(op, p, g, ops, name, where, pipelined, named=False)
    if any(o.round is not None for o in ops):
        from trnsim.collectives.check import check

        if check(program).ok:  # sound as the runtime runs it: keep the rounds trnsim wrote
            program = replay.program(op, p, g, ops, name, where, pipelined)
    notes = [f"each block is {g} chunk{'s' * (g > 1)} of the file; every chunk is one part"]
    if any(step.get("type") == "rrs" for step in root.iter("step")):
        notes.append("rrs steps are read as keeping the sum they send (the runtime does not)")
    return Imported(program, NAME, None, notes)


def _gpu(gpu, p: int, ops: list[Op], where: str) -> None:
    """Append one gpu's steps to ``ops``, each waiting for the step before it and its dependency."""
    rank = _int(gpu, "id", where)
    size = {b: _int(gpu, f"{b}_chunks", where) for b in "ios"}
    first: dict[int, int] = {}  # tb id -> index in ops of its first step
    steps: dict[int, list] = {}
    peers: set[tuple[str, int, int]] = set()
    for tb in gpu.findall("tb"):
        here = f"{where}: gpu {rank} tb {tb.get('id')}"
        bid, send, recv, chan = (_int(tb, a, here) for a in ("id", "send", "recv", "chan"))
        if bid in first or not (-1 <= send < p and -1 <= recv < p) or rank in (send, recv) or chan < 0:
            raise UsageError(
                f"{here}: needs a new id, send and recv peers in -1..{p - 1} other than {rank}, chan >= 0"
            )
        for kind, peer in (("send", send), ("recv", recv)):
            if peer >= 0 and (kind, peer, chan) in peers:
                raise UsageError(f"{here}: a second threadblock to {kind} with gpu {peer} on channel {chan}")
            peers.add((kind, peer, chan))
        first[bid], steps[bid] = len(ops), tb.findall("step")
        for s, step in enumerate(steps[bid]):
            ops.append(_step(step, s, rank, send, recv, chan, size, f"{where}: gpu {rank} tb {bid} step {s}"))
            if s:
                ops[-1].after.append(len(ops) - 2)
    for bid, listed in steps.items():
        for s, step in enumerate(listed):
            depid, deps = _int(step, "depid", where), _int(step, "deps", where)
            if depid < 0:
                continue
            here = ops[first[bid] + s].where
            if depid not in steps or not 0 <= deps < len(steps[depid]):
                raise UsageError(f"{here}: depends on tb {depid} step {deps}, which gpu {rank} does not have")
            if _int(steps[depid][deps], "hasdep", where) != 1:
                raise UsageError(
                    f"{here}: depends on tb {depid} step {deps}, whose hasdep is not 1 (it would wait forever)"
                )
            ops[first[bid] + s].after.append(first[depid] + deps)


def _step(step, s: int, rank: int, send: int, recv: int, chan: int, size: dict, here: str) -> Op:
    values = {a: _int(step, a, here) for a in _STEP_INTS}
    kind, srcbuf, dstbuf, cnt = step.get("type"), step.get("srcbuf"), step.get("dstbuf"), values["cnt"]
    if values["s"] != s:
        raise UsageError(f"{here}: s={values['s']}, but it is step {s} of its threadblock")
    if kind == "re":
        raise UsageError(f"{here}: a local reduction (re); trnsim reads programs that reduce as they receive")
    if kind not in _TYPES:
        raise UsageError(f"{here}: unknown type {kind!r}; MSCCL's are {', '.join([*_TYPES, 're'])}")
    receives, reduces, sends, reads = _TYPES[kind]
    op = Op(rank, here, reduce=reduces, round=_int(step, "round", here) if step.get("round") else None)
    if kind == "nop":
        return op
    src, dst = (srcbuf, values["srcoff"]), (dstbuf, values["dstoff"])
    reads_src = kind in ("s", "rrc", "rrs", "rrcs", "cpy")  # rrc reduces its source into the sum
    for buf, off, used in ((*src, reads_src), (*dst, receives or kind == "cpy")):
        if used and (buf not in size or off < 0 or cnt < 1 or off + cnt > size[buf]):
            raise UsageError(f"{here}: {cnt} chunks at {buf} {off} lie outside the gpu's buffers {size}")
    if (receives and recv < 0) or (sends and send < 0):
        raise UsageError(
            f"{here}: a {kind} step in a threadblock without a {'recv' if receives and recv < 0 else 'send'} peer"
        )
    if receives:
        op.recv = (recv, chan, *(src if kind == "rrs" else dst), cnt)
    if sends:
        op.send = (send, chan, *(src if reads == "src" else dst), cnt)
    if kind == "cpy":
        op.copy = (*src, *dst, cnt)
    return op


register(
    ScheduleFormat(
        NAME, (".xml",), "MSCCL's algorithm XML (msccl-tools' ir_to_xml, msccl's runtime)", write, read, sniff
    )
)
