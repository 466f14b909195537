"""trnsim.model.cluster.limits: the bounds and ceilings of the ops added in issue 27."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import get_op
from trnsim.model.cluster.limits import busiest_rank_gbps, ceiling_us, efa_bound_us, injection_us

DEMAND = ["alltoall", "gather", "scatter", "sendrecv"]
COMPOSED = ["allreduce", "allgather", "reducescatter", "broadcast", "reduce", *DEMAND]


@pytest.mark.parametrize("op", DEMAND)
@pytest.mark.parametrize(("n", "d"), [(1, 5), (4, 2), (3, 7), (8, 4)])
def test_a_demand_ops_bounds_are_its_matrix_cuts(op, n, d):
    """What the busiest domain's NICs carry and the busiest rank moves, read off the op's demand
    matrix over all N ranks (rank i sends T[i, j] S to rank j; domains are runs of n ranks)."""
    size, nic, rank = 1e9, 50.0, 200.0
    p = n * d
    matrix = Arguments().traffic(get_op(op), p) if op != "alltoall" else np.full((p, p), 1 / p)
    np.fill_diagonal(matrix, 0.0)
    domain = np.arange(p) // n
    crossing = [
        max(matrix[domain == k][:, domain != k].sum(), matrix[domain != k][:, domain == k].sum())
        for k in range(d)
    ]
    assert efa_bound_us(op, size, n, d, nic) == pytest.approx(max(crossing) * size / n / (nic * 1e3))
    busiest = max(matrix.sum(axis=0).max(), matrix.sum(axis=1).max())
    assert injection_us(op, size, p, rank) == pytest.approx(busiest * size / (rank * 1e3))


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
def test_a_whole_buffer_enters_or_leaves_every_domain_but_the_roots(op):
    # 4 domains of 8 ranks: each non-root domain receives (sends) S through its 8 NICs
    assert efa_bound_us(op, 8e9, 8, 4, 100.0) == pytest.approx(8e9 / 8 / 100e3)
    # every rank but the root receives (sends) S; the root sends (receives) at least S
    assert injection_us(op, 8e9, 32, 100.0) == pytest.approx(8e9 / 100e3)
    assert efa_bound_us(op, 8e9, 8, 1, 100.0) == 0.0


@given(
    op=st.sampled_from(COMPOSED),
    n=st.integers(1, 72),
    d=st.integers(1, 500),
    size=st.integers(1 << 10, 1 << 40),
    rank=st.floats(1.0, 2000.0),
    nic=st.floats(1.0, 200.0),
    share=st.floats(0.05, 1.0),
)
def test_a_compositions_ceiling_is_never_under_the_bound(op, n, d, size, rank, nic, share):
    """The ceiling is one schedule's busiest resource, the bound any schedule's: no composition may
    pass the bound, so its ceiling (as a time) is never shorter."""
    if n * d < 2:
        return
    ceiling = ceiling_us(op, size, n, d, rank if n > 1 else 0.0, nic * share)
    bound = max(
        efa_bound_us(op, size, n, d, nic),
        injection_us(op, size, n * d, (rank if n > 1 else 0.0) + (nic if d > 1 else 0.0)),
    )
    assert ceiling >= bound * (1 - 1e-12)


def test_the_roots_links_bind_a_rooted_op():
    rates = [40.0, 100.0, 80.0]
    assert busiest_rank_gbps("gather", rates, 1) == busiest_rank_gbps("scatter", rates, 3) == 40.0
    # across domains the root's links carry its domain's scatter and its share of the all-gather
    assert busiest_rank_gbps("broadcast", [100.0, 40.0], 2) == 100.0
    # on one domain every rank moves the whole buffer: the slowest binds
    assert (
        busiest_rank_gbps("broadcast", [100.0, 40.0], 1)
        == busiest_rank_gbps("sendrecv", [100.0, 40.0], 4)
        == 40.0
    )
