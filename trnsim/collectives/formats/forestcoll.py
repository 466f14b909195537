"""ForestColl's spanning trees (read only): the XML ``spanning_trees_to_xml`` of ForestColl writes.

ForestColl (Liang et al., "ForestColl: Efficient Collective Communications on Heterogeneous Network
Fabrics", arXiv 2402.06787; github.com/liangyuRain/ForestColl) packs spanning out-trees rooted at every
compute node; its ``spanning_trees_to_xml(Ts, Cs, k)`` writes them as::

    <Algo nchunkspernode="k">
      <tree root="(0, 'GPU', 0)" index="0" nchunks="1" height="5">
        <send src="(0, 'GPU', 0)" dst="(0, 'GPU', 1)" path="(0, 'GPU', 0),(0, 'GPU', 1)"/>
        <send src="(0, 'GPU', 0)" dst="(1, 'GPU', 0)" path="(0, 'GPU', 0),(-1, 'IB', 0),(1, 'GPU', 0)"/>
        ...

Each compute node's data is cut into ``k`` chunks; its tree ``index`` broadcasts ``nchunks`` of them
along its ``send`` edges (in breadth-first order). How it is read:

* the ranks are the trees' roots, in the order of their names (names that are Python tuples, as
  ForestColl writes them, sort as tuples); a node in a tree that roots none is a *relay* (it
  forwards data and has none of its own: :class:`~trnsim.collectives.program.Program`'s ``relays``);
* block ``b`` is cut into ``k`` equal parts, and a root's trees take its parts in ``index`` order,
  ``nchunks`` each (every root's must add up to ``k``);
* a send from a node at depth ``d`` of its tree runs in round ``d``; the trees are pipelined
  (ForestColl streams chunks down them), so the program is ``pipelined``, one stage per tree level;
* ``path`` (the physical route, switches included) is not used: trnsim routes each send itself;
* the trees are an all-gather; a reduce-scatter is the trees reversed and an all-reduce both
  (:func:`~trnsim.collectives.program.as_op`), as ForestColl's paper does.
"""

import ast
import xml.etree.ElementTree as ET

from trnsim.collectives.formats import Imported, ScheduleFormat, register
from trnsim.collectives.program import Chunk, Program, Transfer
from trnsim.errors import UsageError


def sniff(data: bytes) -> bool:
    head = data[:4096]
    return b"nchunkspernode" in head and b"<tree" in head


def _order(name: str):
    """Sort key: ForestColl's tuple names as tuples, other names as text after them."""
    try:
        value = ast.literal_eval(name)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return (1, name)
    return (0, tuple(str(x) for x in value)) if isinstance(value, tuple) else (1, name)


def _int(element: ET.Element, key: str, where: str, minimum: int) -> int:
    text = element.get(key)
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = None
    if value is None or value < minimum:
        raise UsageError(f"{where}: <{element.tag}> {key}={text!r}: expected a whole number >= {minimum}")
    return value


def _trees(data: bytes, where: str) -> tuple[int, list[tuple[str, int, int, list[tuple[str, str]]]]]:
    """``k`` and every tree as ``(root, index, nchunks, [(src, dst), ...])``."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        raise UsageError(f"{where}: not well-formed XML ({error})") from None
    if root.tag != "Algo":
        raise UsageError(f"{where}: the root element is <{root.tag}>; a ForestColl file's is <Algo>")
    k = _int(root, "nchunkspernode", where, 1)
    trees = []
    for tree in root.findall("tree"):
        name = tree.get("root")
        if not name:
            raise UsageError(f"{where}: a <tree> without root=")
        sends = []
        for send in tree.findall("send"):
            src, dst = send.get("src"), send.get("dst")
            if not src or not dst:
                raise UsageError(f"{where}: tree rooted at {name}: a <send> without src= or dst=")
            sends.append((src, dst))
        trees.append((name, _int(tree, "index", where, 0), _int(tree, "nchunks", where, 1), sends))
    if not trees:
        raise UsageError(f"{where}: no <tree> in <Algo>")
    return k, trees


def _depths(root: str, sends: list[tuple[str, str]], where: str) -> dict[str, int]:
    """Each node's depth in the tree out of ``root`` (a send from a node not yet reached is refused)."""
    children: dict[str, list[str]] = {}
    for src, dst in sends:
        children.setdefault(src, []).append(dst)
    depth, frontier = {root: 0}, [root]
    while frontier:
        reached = []
        for src in frontier:
            for dst in children.get(src, []):
                if dst not in depth:
                    depth[dst] = depth[src] + 1
                    reached.append(dst)
        frontier = reached
    for src, dst in sends:
        if src not in depth:
            raise UsageError(
                f"{where}: tree rooted at {root}: {src} -> {dst} sends from a node the tree never reaches"
            )
    return depth


def read(data: bytes, where: str) -> Imported:
    """A ForestColl file as the all-gather program of its trees (module docstring)."""
    k, trees = _trees(data, where)
    members = sorted({name for name, *_ in trees}, key=_order)
    others = {node for *_, sends in trees for pair in sends for node in pair} - set(members)
    names = members + sorted(others, key=_order)
    position = {name: i for i, name in enumerate(names)}
    used = dict.fromkeys(members, 0)
    transfers = []
    for channel, (name, _, nchunks, sends) in enumerate(sorted(trees, key=lambda t: (_order(t[0]), t[1]))):
        first = used[name]
        used[name] += nchunks
        if used[name] > k:
            raise UsageError(f"{where}: the trees rooted at {name} carry more than nchunkspernode={k} chunks")
        chunks = tuple(Chunk(position[name], part) for part in range(first, first + nchunks))
        depth = _depths(name, sends, where)
        transfers += [
            Transfer(depth[src], position[src], position[dst], chunks, False, channel) for src, dst in sends
        ]
    short = [name for name, n in used.items() if n != k]
    if short:
        raise UsageError(
            f"{where}: the trees rooted at {short[0]} carry {used[short[0]]} of nchunkspernode={k} chunks"
        )
    rounds = 1 + max((t.round for t in transfers), default=0)
    program = Program(
        "allgather",
        len(members),
        rounds,
        tuple(transfers),
        (1 / k,) * k,
        algorithm="forestcoll",
        pipelined=True,
        relays=len(others),
    )
    notes = [
        "ForestColl's trees are pipelined: one stage per tree level; send paths are routed by trnsim, "
        "not as the file's path= says",
    ]
    if others:
        notes.append(
            f"{len(others)} of the file's nodes root no tree and only relay: "
            + ", ".join(sorted(others, key=_order))
        )
    return Imported(program, "forestcoll", names, notes)


register(
    ScheduleFormat("forestcoll", (".xml",), "ForestColl spanning trees (read only)", read=read, sniff=sniff)
)
