"""Double binary tree, pipelined: reduce up and broadcast down, half the data on each tree, in chunks.

Tree A is the heap numbering (node ``n``'s parent is ``(n - 1) // 2``, root 0); tree B mirrors it
(node ``p - 1 - n``, root ``p - 1``), as NCCL pairs two trees so that most ranks are a leaf in one.
"""

from trnsim.collectives.algorithms.registry import algorithm, program_of
from trnsim.collectives.program import Builder, Chunk, Program
from trnsim.collectives.schedule import Context, Pipeline, Step


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


@algorithm(
    "tree",
    {"allreduce"},
    "double binary tree, pipelined: reduce up and broadcast down, half the data on each tree, in chunks",
)
def schedule(ctx: Context, op: str) -> list[Pipeline]:
    p = ctx.p
    depth = p.bit_length() - 1
    links = [(level, c, par) for _, level, c, par in tree_edges(p)]
    # a chunk is reduced level by level up to the roots, then broadcast back down; NCCL pipelines
    # the chunks through the levels, so every level works on its own chunk at once
    reduce_stages = [
        (Step.of([(c, par) for level, c, par in links if level == d], 0.5, 1, f"reduce level {d}"),)
        for d in range(depth, 0, -1)
    ]
    broadcast_stages = [
        (Step.of([(par, c) for level, c, par in links if level == d], 0.5, 1, f"broadcast level {d}"),)
        for d in range(1, depth + 1)
    ]
    return [Pipeline((tuple(reduce_stages + broadcast_stages),), "double binary tree")]


@program_of("tree")
def program(ctx: Context, op: str) -> Program:
    """Tree ``t`` carries part ``t`` of every block: level by level from the deepest, each child
    reduces what it holds into its parent; then each parent copies the sum down, level by level."""
    p = ctx.p
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
