"""tree: broadcast and reduce down and up one binary tree out of the root, pipelined, equal the tree
simulated round by round at the best chunk count, on a fully connected graph and on a ring; the
all-reduce's double binary tree is tested in tests/model/test_closed_forms.py."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled, pipelined_us, ring_loads
from collectives.synthetic import complete_topology, ring_topology
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES


def _levels(p: int, root: int) -> list[list[tuple[int, int]]]:
    """The heap numbering counted from the root: node n (rank root + n) hangs under node (n-1)//2,
    level floor(log2(n + 1)); per level, its (parent, child) ranks."""
    depth = p.bit_length() - 1
    out: list[list[tuple[int, int]]] = [[] for _ in range(depth)]
    for node in range(1, p):
        level = (node + 1).bit_length() - 1
        out[level - 1].append(((root + (node - 1) // 2) % p, (root + node) % p))
    return out


@pytest.mark.parametrize("p", [5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_on_a_complete_graph_the_tree_is_depth_minus_1_plus_m_rounds(p, size):
    # every parent reaches each child over its own link: a round is alpha + S/(m B) however many
    # levels are busy, and floor(log2 p) levels take floor(log2 p) - 1 + m rounds
    depth = p.bit_length() - 1
    top = max(1, min(MAX_CHUNKS, size // MIN_CHUNK_BYTES))
    want = min((depth - 1 + m) * (ALPHA_US + beta(size / m)) for m in range(1, top + 1))
    topology = complete_topology(p, BW)
    for op in ("broadcast", "reduce"):
        for root in (0, p - 1):
            assert close(modelled(topology, op, "tree", size, root), want), (op, root)


@pytest.mark.parametrize("p", [7, 8])
@pytest.mark.parametrize("size", SIZES)
def test_on_a_ring_the_tree_edges_share_the_ring_links(p, size):
    # a parent and child up to 4 ranks apart: their flows cross several ring links, and levels
    # pipelined together load the same links
    topology = ring_topology(p, lanes=int(BW))
    for root in (0, 3):
        down = [ring_loads(p, [(a, b, 1.0) for a, b in level]) for level in _levels(p, root)]
        up = [ring_loads(p, [(b, a, 1.0) for a, b in level]) for level in reversed(_levels(p, root))]
        assert close(modelled(topology, "broadcast", "tree", size, root), pipelined_us(down, size))
        assert close(modelled(topology, "reduce", "tree", size, root), pipelined_us(up, size))
