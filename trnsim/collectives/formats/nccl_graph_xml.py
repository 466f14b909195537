"""NCCL's graph file (``NCCL_GRAPH_FILE``): ring and tree channel orders, written and read back.

NCCL reads the file in ``ncclTopoCompute`` (NVIDIA/nccl ``src/graph/search.cc``:
``ncclTopoGetXmlGraphFromFile``, ``ncclTopoGetGraphFromXml``; the XML reader in ``src/graph/xml.cc``)
in place of its own search. The document is ``<graphs version="1">`` holding ``<graph>`` elements
with the attributes ``id`` (0 the ring graph, 1 the tree graph), ``pattern`` (``4`` ring; ``1``
balanced tree, ``2`` split tree, ``3`` tree: ``NCCL_TOPO_PATTERN_*`` in ``src/include/graph.h``),
``crossnic``, ``nchannels``, ``speedintra``, ``speedinter``, ``latencyinter``, ``typeintra``,
``typeinter`` and ``samechannels``; each ``<channel>`` lists the node's GPUs in order as
``<gpu dev=".." rank=".."/>`` (NCCL 2.19 on reads ``dev`` as hexadecimal and prefers ``rank``
where given; older versions read ``dev`` with ``strtol(.., 0)``: ``0x..`` reads the same in both).

What the orders mean (``ncclTopoPreset``, ``src/graph/connect.cc``): a ring channel's GPUs pass the
data on in the order listed, the last back to the first; a tree channel's GPUs form a *chain*
inside the node, each GPU's parent the one before it (the first is the node's root, which joins the
inter-node trees). NCCL splits the data evenly over the channels.

How trnsim maps ranks
---------------------
The file is per node and names GPUs by their device index on that node. trnsim writes the group as
one node: the rank at group position ``i`` is ``<gpu dev="0x{i:x}" rank="i"/>``, so the file
applies to a node (or NVLink domain) whose GPUs are numbered in the group's order. A group that
spans several NCCL nodes would need the ``<net>`` endpoints and the same order on every node, which
trnsim does not write; a multi-node group is written as if its ranks were one node's GPUs (the
order is still the order the data flows in), and reading gives positions, not chip names.

Writing takes a program that is one or more rings (``ring``, ``multiring``: per channel, the
transfers of :func:`~trnsim.collectives.program.ring_collective` round one Hamiltonian cycle, on
equal parts) or chains (a tree pattern); anything else is refused in one line: NCCL's graph file
holds ring and chain orders only. trnsim's ``tree`` algorithm is a pair of binary trees, not chains,
so it is refused too (on two ranks it is a chain and is written). The file does not say which
collective it serves: :func:`read` gives an all-reduce and says so in its notes;
:func:`program_from_graph` takes the op.
"""

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from trnsim.collectives.formats import Imported, ScheduleFormat, register
from trnsim.collectives.program import Builder, Chunk, Program, ring_collective
from trnsim.errors import UsageError

NAME = "nccl-graph-xml"
RING_PATTERN = 4
TREE_PATTERNS = {1: "balanced tree", 2: "split tree", 3: "tree"}
RING_OPS = ("allreduce", "allgather", "reducescatter")
MAX_BYTES = 4 << 20  # a graph file is a few KiB; refuse anything that is plainly not one


class NotWritable(UsageError):
    """A program NCCL's graph file cannot hold (the message says why)."""


def chain_collective(b: Builder, order: Sequence[int], part: int, channel: int) -> int:
    """NCCL's intra-node tree on ``part`` of every block: the chain ``order`` (``order[0]`` the root)
    reduces towards the root one hop per round, then the root's sum is copied back down."""
    k, chunks = len(order), [Chunk(x, part) for x in range(b.p)]
    for s in range(k - 1):
        b.send(s, order[k - 1 - s], order[k - 2 - s], chunks, True, channel)
    for s in range(k - 1):
        b.send(k - 1 + s, order[s], order[s + 1], chunks, False, channel)
    return 2 * (k - 1)


def _build(op: str, p: int, orders: list[list[int]], tree: bool) -> Program:
    n = len(orders)
    name = "tree" if tree else ("ring" if n == 1 else "multiring")
    b = Builder(op, p, name, parts=tuple(1 / n for _ in orders), pipelined=tree)
    for c, order in enumerate(orders):
        if tree:
            chain_collective(b, order, c, c)
        else:
            ring_collective(b, order, c, c)
    return b.build()


def _transfers(program: Program) -> set:
    return {(t.round, t.src, t.dst, t.chunks, t.reduce, t.channel) for t in program.transfers}


def _ring_order(pairs: set[tuple[int, int]], p: int) -> list[int] | None:
    """The cycle the channel's ``(src, dst)`` pairs form through all ``p`` ranks, or None."""
    nxt = dict(pairs)
    if len(nxt) != p or len(pairs) != p:
        return None
    order = [0]
    while len(order) <= p and nxt.get(order[-1], -2) != 0:
        order.append(nxt.get(order[-1], -2))
    return order if len(order) == p and sorted(order) == list(range(p)) else None


def _chain_order(program: Program, channel: int) -> list[int] | None:
    """The chain a tree channel reduces along (its root first), from its first reduce-up transfers."""
    ups = sorted((t.round, t.src, t.dst) for t in program.transfers if t.channel == channel and t.reduce)
    if not ups:
        return None
    order = [ups[-1][2]] + [src for _, src, _ in reversed(ups)]
    # a chain: one hop per round, each round's sender the previous round's receiver
    linked = all(a[2] == b[1] and b[0] == a[0] + 1 for a, b in zip(ups, ups[1:], strict=False))
    return order if linked and sorted(order) == list(range(program.p)) else None


def orders_of(program: Program) -> tuple[list[list[int]], bool]:
    """Each channel's order and whether they are chains (a tree), or :class:`NotWritable`."""
    why = f"{program.algorithm or 'this program'} is not"
    if any(t.kind != "link" for t in program.transfers):
        raise NotWritable(f"{why} a set of rings or chains: it reduces in the network (NVLS)")
    if program.op not in RING_OPS:
        raise NotWritable(f"NCCL's graph file holds rings and trees, which do not run {program.op}")
    channels = sorted({t.channel for t in program.transfers})
    if channels != list(range(len(channels))) or len(set(program.parts)) > 1:
        raise NotWritable(
            f"{why} rings or chains on equal shares of the data (NCCL splits it evenly over channels)"
        )
    tree = program.op == "allreduce" and program.pipelined
    orders = []
    for c in channels:
        if tree:
            order = _chain_order(program, c)
        else:
            order = _ring_order({(t.src, t.dst) for t in program.transfers if t.channel == c}, program.p)
        if order is None:
            shape = "a chain through every rank" if tree else "a Hamiltonian cycle"
            raise NotWritable(
                f"{why} NCCL's graph: channel {c} is not {shape} (NCCL's graph file holds ring orders "
                "and tree orders, which are chains inside a node)"
            )
        orders.append(order)
    if _transfers(_build(program.op, program.p, orders, tree)) != _transfers(program):
        raise NotWritable(
            f"{why} NCCL's ring or tree on its channels' orders (NCCL's graph file holds ring and chain "
            "orders only)"
        )
    return orders, tree


def write(program: Program, ranks: list[str]) -> bytes:
    """The graph file of a ring or tree program (see the module docstring)."""
    orders, tree = orders_of(program)
    root = ET.Element("graphs", version="1")
    graph = ET.SubElement(
        root,
        "graph",
        id="1" if tree else "0",
        pattern="1" if tree else str(RING_PATTERN),
        crossnic="0",
        nchannels=str(len(orders)),
        # NCCL's per-channel GB/s and path types are its search's results; 0 and NVL leave them open
        speedintra="0",
        speedinter="0",
        latencyinter="0",
        typeintra="NVL",
        typeinter="PIX",
        samechannels="0",
    )
    for order in orders:
        channel = ET.SubElement(graph, "channel")
        for rank in order:
            ET.SubElement(channel, "gpu", dev=f"0x{rank:x}", rank=str(rank))
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def _int(text: str | None, where: str, path: str, base: int = 0) -> int:
    try:
        return int(str(text).strip(), base)
    except ValueError:
        raise UsageError(f"{where}: {path}: expected a whole number, got {text!r}") from None


def _channels(graph: ET.Element, where: str, path: str) -> tuple[list[list[int]], list[str]]:
    """Each channel's GPUs as positions: ``rank`` where given, else ``dev`` (hexadecimal, as NCCL
    2.19 on reads it)."""
    orders, notes = [], []
    for c, channel in enumerate(graph.findall("channel")):
        gpus = channel.findall("gpu")
        if channel.findall("net"):
            notes.append(f"{path}/channel[{c}]: its <net> endpoints (inter-node) are left out")
        order = []
        for g, gpu in enumerate(gpus):
            at = f"{path}/channel[{c}]/gpu[{g}]"
            if gpu.get("rank") is not None:
                order.append(_int(gpu.get("rank"), where, f"{at}@rank"))
            else:
                order.append(_int(gpu.get("dev"), where, f"{at}@dev", 16))
        orders.append(order)
    if not orders:
        raise UsageError(f"{where}: {path}: expected at least one <channel> of <gpu> elements")
    p = len(orders[0])
    for c, order in enumerate(orders):
        if sorted(order) != list(range(p)):
            raise UsageError(
                f"{where}: {path}/channel[{c}]: expected every GPU 0..{p - 1} once (as in channel 0), "
                f"got {order}"
            )
    return orders, notes


def program_from_graph(data: bytes, where: str, op: str = "allreduce") -> Imported:
    """The file's first ring or tree graph as a program for ``op`` (a tree: all-reduce only)."""
    if len(data) > MAX_BYTES:
        raise UsageError(f"{where}: {len(data):,} bytes is not an NCCL graph file (at most {MAX_BYTES:,})")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        raise UsageError(f"{where}: not well-formed XML ({error})") from None
    if root.tag != "graphs":
        raise UsageError(f"{where}: expected a <graphs> root element (NCCL's graph file), got <{root.tag}>")
    notes = []
    for i, graph in enumerate(root.findall("graph")):
        path = f"graphs/graph[{i}]"
        pattern = _int(graph.get("pattern"), where, f"{path}@pattern")
        if pattern != RING_PATTERN and pattern not in TREE_PATTERNS:
            notes.append(f"{path}: pattern {pattern} (not ring or tree) is left out")
            continue
        tree = pattern != RING_PATTERN
        if op not in (("allreduce",) if tree else RING_OPS):
            raise UsageError(f"{where}: {path}: a {'tree' if tree else 'ring'} graph does not run {op}")
        orders, more = _channels(graph, where, path)
        notes += more
        if graph.get("nchannels") not in (None, str(len(orders))):
            notes.append(f"{path}: nchannels {graph.get('nchannels')} but {len(orders)} channels listed")
        kind = f"{TREE_PATTERNS[pattern]} (chains)" if tree else "ring"
        notes.append(f"{path}: {len(orders)} {kind} channel(s) read as {op} on equal shares of the data")
        if op == "allreduce" and not tree:
            notes.append("the file does not say the collective: read as an all-reduce")
        return Imported(_build(op, len(orders[0]), orders, tree), NAME, None, notes)
    raise UsageError(f"{where}: expected a <graph> with pattern 4 (ring) or 1-3 (tree) under <graphs>")


def read(data: bytes, where: str) -> Imported:
    """The file's first ring or tree graph, as an all-reduce (:func:`program_from_graph`)."""
    return program_from_graph(data, where)


def sniff(data: bytes) -> bool:
    head = data[:512].lstrip()
    return head.startswith((b"<graphs", b"<?xml")) and b"<graphs" in head


register(
    ScheduleFormat(
        NAME,
        (".xml",),
        "NCCL's graph file (NCCL_GRAPH_FILE): ring and tree channel orders",
        write,
        read,
        sniff,
    )
)
