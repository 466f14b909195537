"""The tree, recursive-doubling and torus schedules built as arrays give the flows, in the order and
with the weights, that building them pair by pair gives (the pair-by-pair builders are kept here as
the reference)."""

import numpy as np
import pytest

from trnsim.collectives.algorithms import rdh, torus, tree
from trnsim.collectives.schedule import Context, Pipeline, Step
from trnsim.topology import load_topology


def _tree_by_pairs(p: int) -> list[Step]:
    depth = p.bit_length() - 1
    links = [(level, c, par) for _, level, c, par in tree.tree_edges(p)]
    reduce = [Step.of([(c, par) for level, c, par in links if level == d], 0.5) for d in range(depth, 0, -1)]
    down = [Step.of([(par, c) for level, c, par in links if level == d], 0.5) for d in range(1, depth + 1)]
    return reduce + down


def _rdh_by_pairs(ctx: Context) -> list[Step]:
    p = ctx.p
    at, bits = rdh.cube_order(ctx)
    halving = [
        Step.of([(at[a], at[a ^ (1 << b)]) for a in range(p)], 1 / 2 ** (k + 1)) for k, b in enumerate(bits)
    ]
    doubling = [
        Step.of([(at[a], at[a ^ (1 << b)]) for a in range(p)], 2**j / p) for j, b in enumerate(reversed(bits))
    ]
    return halving + doubling


def _torus_by_pairs(ctx: Context, op: str) -> list[Step]:
    axes, sizes, strides, order = torus.torus_lines(ctx)
    p, steps = ctx.p, []
    for i in order:
        pairs = []
        for rank in range(p):
            c = (rank // strides[i]) % sizes[i]
            if op == "alltoall":
                pairs += [(rank, rank + (other - c) * strides[i]) for other in range(sizes[i]) if other != c]
        if op != "alltoall":
            forward = [
                (
                    r,
                    r
                    + (((r // strides[i]) % sizes[i] + 1) % sizes[i] - (r // strides[i]) % sizes[i])
                    * strides[i],
                )
                for r in range(p)
            ]
            backward = [
                (
                    r,
                    r
                    + (((r // strides[i]) % sizes[i] - 1) % sizes[i] - (r // strides[i]) % sizes[i])
                    * strides[i],
                )
                for r in range(p)
            ]
            pairs = forward + backward
        steps.append(Step.of(pairs, 1.0))
    return steps


def _flat(schedule) -> list[Step]:
    return [step for entry in schedule for step in (entry.steps if isinstance(entry, Pipeline) else [entry])]


def _same_flows(built: list[Step], reference: list[Step], weights: bool = True):
    assert len(built) == len(reference)
    for a, b in zip(built, reference, strict=True):
        assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
        assert a.src.dtype == b.src.dtype == np.int64
        if weights:
            assert np.array_equal(a.weight, b.weight)


TORI = [("trn2-nl64", ()), ("examples/torus-16x16x16.yaml", ("torus.axes.x.size=6", "torus.axes.y.size=2"))]


@pytest.mark.parametrize(("source", "sets"), TORI)
def test_schedules_built_as_arrays_equal_the_pairs(source, sets):
    topo = load_topology(None, source, overrides=list(sets)) if "/" in source else load_topology(source)
    ctx = Context(topo, topo.chips)
    _same_flows(_flat(tree.schedule(ctx, "allreduce")), _tree_by_pairs(ctx.p))
    if rdh.power_of_two(ctx.p):
        _same_flows(_flat(rdh.schedule(ctx, "allreduce")), _rdh_by_pairs(ctx))
    for op in ("reducescatter", "alltoall"):
        _same_flows(torus.schedule(ctx, op), _torus_by_pairs(ctx, op), weights=False)


@pytest.mark.parametrize("p", [2, 3, 7, 8, 100])
def test_tree_edge_arrays_are_the_tree_edges(p):
    level, child, parent = tree._edge_arrays(p)
    assert list(zip(level.tolist(), child.tolist(), parent.tolist(), strict=True)) == [
        (lv, c, par) for _, lv, c, par in tree.tree_edges(p)
    ]


def _dimension_scatter_by_blocks(dims, order, root: int, p: int):
    """The root's scatter dimension by dimension, block by block (the reference)."""
    coords = np.stack([d.coord for d in dims], axis=1)
    where = {tuple(c): r for r, c in enumerate(coords.tolist())}
    holders = {root: list(range(p))}
    stages = []
    for d in order:
        stage, after = [], {}
        for u, blocks in holders.items():
            sends: dict[int, list[int]] = {}
            for x in blocks:
                target = list(coords[u])
                target[d] = coords[x][d]
                sends.setdefault(where[tuple(target)], []).append(x)
            for v, moved in sends.items():
                after[v] = moved
                if v != u:
                    stage.append((u, v, moved))
        holders = after
        stages.append(stage)
    return stages


@pytest.mark.parametrize(
    ("source", "sets"),
    [
        ("trn3-nl72x2-gen1", ()),
        ("examples/torus-16x16x16.yaml", ("torus.axes.x.size=6", "torus.axes.z.size=5")),
    ],
)
def test_the_dimension_scatter_built_as_arrays_equals_block_by_block(source, sets):
    from trnsim.collectives import multidim
    from trnsim.collectives.algorithms.scatter_allgather import dimension_scatter

    topo = load_topology(None, source, overrides=list(sets)) if "/" in source else load_topology(source)
    ctx = Context(topo, topo.chips)
    chosen = multidim.plan(ctx)
    for order in {stream.order[::-1] for stream in chosen.streams} | {tuple(range(len(chosen.dims)))}:
        for root in (0, 5, ctx.p - 1):
            expected = _dimension_scatter_by_blocks(chosen.dims, order, root, ctx.p)
            assert dimension_scatter(chosen.dims, order, root, ctx.p) == expected
