"""Binary trees, pipelined in chunks: the double binary tree all-reduce, and one tree out of the root
for broadcast and reduce.

All-reduce: reduce up and broadcast down, half the data on each tree. Tree A is the heap numbering
(node ``n``'s parent is ``(n - 1) // 2``, root 0); tree B mirrors it (node ``p - 1 - n``, root
``p - 1``), as NCCL pairs two trees so that most ranks are a leaf in one.

Broadcast and reduce: one binary tree, the heap numbering counted from the root (node ``n`` is rank
``(root + n) mod p``), the whole buffer down it level by level (a reduce: up it, the mirror image).
Its ``D = floor(log2 p)`` levels take ``D - 1 + m`` rounds for ``m`` chunks: on a fully connected
graph, where each parent reaches its two children over two links, ``(D - 1 + m)(alpha + S/(m B))``.
"""

import numpy as np

from trnsim.collectives.algorithms.registry import ROOTED, algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program, reduce_of
from trnsim.collectives.schedule import Context, Pipeline, Step, mirrored


def tree_edges(p: int) -> list[tuple[int, int, int, int]]:
    """``(tree, level, child, parent)`` for every edge of both trees (level of the child, root 0)."""
    out = []
    for tree in (0, 1):
        for node in range(1, p):
            parent = (node - 1) // 2
            level = (node + 1).bit_length() - 1
            if tree:
                out.append((tree, level, p - 1 - node, p - 1 - parent))
            else:
                out.append((tree, level, node, parent))
    return out


def _edge_arrays(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tree_edges` as arrays ``(level, child, parent)``, in the same order."""
    node = np.arange(1, p, dtype=np.int64)
    parent = (node - 1) // 2
    level = np.searchsorted(1 << np.arange(63, dtype=np.int64), node + 1, side="right") - 1
    return np.r_[level, level], np.r_[node, p - 1 - node], np.r_[parent, p - 1 - parent]


def rooted_edges(p: int, root: int) -> list[tuple[int, int, int]]:
    """``(level, child, parent)`` for every edge of the binary tree out of ``root`` (level of the child)."""
    return [
        ((node + 1).bit_length() - 1, (root + node) % p, (root + (node - 1) // 2) % p) for node in range(1, p)
    ]


def _rooted_broadcast(ctx: Context) -> list[Pipeline]:
    edges = rooted_edges(ctx.p, ctx.root)
    stages = tuple(
        (Step.of([(par, c) for level, c, par in edges if level == d], 1.0, 1, f"level {d}"),)
        for d in range(1, ctx.p.bit_length())
    )
    return [Pipeline((stages,), "binary tree")]


@algorithm(
    "tree",
    {"allreduce"} | ROOTED,
    "pipelined binary trees: all-reduce on a double binary tree (reduce up, broadcast down, half the "
    "data on each); broadcast and reduce on one tree out of the root",
)
def schedule(ctx: Context, op: str) -> list[Pipeline]:
    if op == "broadcast":
        return _rooted_broadcast(ctx)
    if op == "reduce":
        return mirrored(_rooted_broadcast(ctx))
    p = ctx.p
    depth = p.bit_length() - 1
    level, child, parent = _edge_arrays(p)
    # a chunk is reduced level by level up to the roots, then broadcast back down; NCCL pipelines
    # the chunks through the levels, so every level works on its own chunk at once
    reduce_stages = [
        (Step.of((child[level == d], parent[level == d]), 0.5, 1, f"reduce level {d}"),)
        for d in range(depth, 0, -1)
    ]
    broadcast_stages = [
        (Step.of((parent[level == d], child[level == d]), 0.5, 1, f"broadcast level {d}"),)
        for d in range(1, depth + 1)
    ]
    return [Pipeline((tuple(reduce_stages + broadcast_stages),), "double binary tree")]


@program_of("tree")
def program(ctx: Context, op: str) -> Program:
    """Tree ``t`` carries part ``t`` of every block: level by level from the deepest, each child
    reduces what it holds into its parent; then each parent copies the sum down, level by level.
    A broadcast copies every block down the root's tree, level by level; a reduce is its mirror."""
    p = ctx.p
    if op in ROOTED:
        b = Builder("broadcast", p, "tree", pipelined=True, root=ctx.root)
        for level, child, parent in rooted_edges(p, ctx.root):
            b.send(level - 1, parent, child, [Chunk(x) for x in range(p)])
        return b.build() if op == "broadcast" else reduce_of(b.build())
    depth = p.bit_length() - 1
    edges = tree_edges(p)
    b = Builder(op, p, "tree", parts=(0.5, 0.5), pipelined=True)
    for step, d in enumerate(range(depth, 0, -1)):
        for tree, level, child, parent in edges:
            if level == d:
                b.send(step, child, parent, [Chunk(x, tree) for x in range(p)], True, tree)
    for step, d in enumerate(range(1, depth + 1), depth):
        for tree, level, child, parent in edges:
            if level == d:
                b.send(step, parent, child, [Chunk(x, tree) for x in range(p)], False, tree)
    return b.build()
