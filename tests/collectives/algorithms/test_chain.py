"""chain: the pipelined chain broadcast and reduce equal (p - 2 + m)(alpha + S/(m B)) at the best
chunk count m, on a fully connected graph and on a ring, wherever the root is."""

import pytest

from collectives.algorithms.forms import ALPHA_US, BW, SIZES, beta, close, modelled
from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.algorithms import REGISTRY, Context
from trnsim.model.cost import MAX_CHUNKS, MIN_CHUNK_BYTES


def _chain_us(p: int, size: int) -> float:
    """p - 1 hops, each over its own link: m chunks take p - 2 + m rounds of alpha + S/(m B)."""
    top = max(1, min(MAX_CHUNKS, size // MIN_CHUNK_BYTES))
    return min((p - 2 + m) * (ALPHA_US + beta(size / m)) for m in range(1, top + 1))


@pytest.mark.parametrize("kind", ["complete", "ring"])
@pytest.mark.parametrize("p", [5, 8])
@pytest.mark.parametrize("size", SIZES)
def test_the_chain_is_p_minus_2_plus_m_rounds_of_a_chunk(kind, p, size):
    topology = complete_topology(p, BW) if kind == "complete" else ring_topology(p, lanes=int(BW))
    want = _chain_us(p, size)
    for op in ("broadcast", "reduce"):
        for root in (0, p // 2, p - 1):
            got = modelled(topology, op, "chain", size, root)
            assert close(got, want), (op, root, got, want)


def test_at_large_sizes_the_chain_nears_one_buffer_over_one_link():
    # (p - 2 + m)/m S/B -> S/B as the chunks grow in number: within p-2 of 1,024 at 1 GiB
    topology = complete_topology(8, BW)
    got = modelled(topology, "broadcast", "chain", SIZES[1])
    assert beta(SIZES[1]) < got <= beta(SIZES[1]) * (1 + 6 / MAX_CHUNKS) + (6 + MAX_CHUNKS) * ALPHA_US


def test_the_chain_starts_at_the_root_and_a_reduce_ends_there_going_round_the_ring():
    topology = ring_topology(6, lanes=int(BW))
    ctx = Context(topology, list(topology.chips), root=4)
    order = ctx.ring_order
    for op, first, last in (("broadcast", 0, None), ("reduce", None, -1)):
        (pipe,) = REGISTRY["chain"].schedule(ctx, op)
        hops = [(int(stage[0].src[0]), int(stage[0].dst[0])) for stage in pipe.chains[0]]
        ranks = [hops[0][0]] + [dst for _, dst in hops]
        assert ranks[first if first is not None else last] == 4 and sorted(ranks) == list(range(6))
        # each hop goes to the next rank of the ring, in the ring's own direction
        assert all(order[(order.index(a) + 1) % 6] == b for a, b in hops), (op, hops)
