"""trnsim.model.cluster.compose: the ops added in issue 27 composed across domains.

On domains that are complete graphs of ``n`` chips with links of ``b`` GB/s (1 us a step), every
in-domain phase the compositions use (scatter, gather, all-gather, reduce-scatter, send/recv of each
rank to the next) sends each rank's piece over its own link at once: ``1 + S/(n b)`` us for the
collectives, ``1 + S/b`` for a send/recv. Across domains a rank's NIC runs at 90 GB/s, 15 us a step.
"""

import math

import pytest

from tests.model.cluster.clusters import HOP_US, catalog_cluster, complete_cluster
from trnsim.errors import UsageError
from trnsim.model.cluster import evaluate_cluster
from trnsim.model.engine import evaluate

NIC = 90.0  # GB/s a rank across domains: 800 Gbit/s at 90%
N, D = 4, 4


def _phase_us(size: float, link: float, n: int = N) -> float:
    """One in-domain collective phase on a complete graph: each piece over its own link."""
    return 1 + size / n / (link * 1e3)


def _chain_us(d: int, m: float) -> float:
    """A pipelined chain across ``d`` domains by brute force over the piece count."""
    return min((d - 2 + k) * (HOP_US + m / k / (NIC * 1e3)) for k in range(1, 5001))


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
def test_a_rooted_op_in_sequence_is_its_phases_in_closed_form(op):
    # broadcast: scatter in the root's domain, chain across on S/n, all-gather everywhere;
    # reduce: reduce-scatter everywhere, chain to the root's domain, gather there
    domain, plan = complete_cluster(N, D, 100.0)
    size = 1 << 30
    row = evaluate_cluster(domain, plan, op, [size], inter_algo="chain", overlap=False).rows[0]
    expected = 2 * _phase_us(size, 100.0) + _chain_us(D, size / N)
    assert row.time_us == pytest.approx(expected, rel=1e-9)
    assert row.chunks == 1 and row.inter_algorithm == "chain"
    assert row.busbw_gbps == pytest.approx(size / (row.time_us * 1e3))  # nccl-tests' factor 1


@pytest.mark.parametrize("op", ["broadcast", "reduce"])
@pytest.mark.parametrize("link", [1000.0, 50.0])
def test_a_large_chain_runs_at_the_slower_of_the_nics_and_the_domains_phases(op, link):
    """About S/rate at large sizes: the domain's NICs together (n x 90 GB/s) or its two in-domain
    phases (each S/(n b)), whichever is slower; chunks overlap them."""
    domain, plan = complete_cluster(N, D, link)
    size = 1 << 40
    row = evaluate_cluster(domain, plan, op, [size], inter_algo="chain").rows[0]
    rate = min(N * NIC, N * link / 2)
    assert row.time_us >= size / (rate * 1e3)
    assert row.time_us == pytest.approx(size / (rate * 1e3), rel=0.03)
    assert row.busbw_gbps <= min(row.ceiling_busbw_gbps, row.bound_busbw_gbps) * (1 + 1e-9)


@pytest.mark.parametrize("link", [1000.0, 50.0])
def test_a_sendrecv_runs_its_pairs_inside_beside_the_crossing(link):
    # ranks 0->1->2->3 inside each domain on their own links (mesh: each pair over its direct link;
    # multipath would also relay through the other chips), rank 3 to the next domain's rank 0 over
    # its NIC, at once: the slower of the two
    domain, plan = complete_cluster(N, D, link)
    sizes = [1 << 20, 1 << 34]
    rows = evaluate_cluster(domain, plan, "sendrecv", sizes, intra_algo="mesh").rows
    for size, row in zip(sizes, rows, strict=True):
        expected = max(1 + size / (link * 1e3), HOP_US + size / (NIC * 1e3))
        assert row.time_us == pytest.approx(expected, rel=1e-12)
        assert row.chunks == 1


@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_gather_and_scatter_cross_through_the_root_domains_nics(op):
    # each rank's S/N to (from) its counterpart in the root's domain, all at once, and the gather
    # (scatter) of S inside the root's domain
    domain, plan = complete_cluster(N, D, 100.0)
    size = 1 << 30
    row = evaluate_cluster(domain, plan, op, [size], inter_algo="direct", overlap=False).rows[0]
    across = HOP_US + (D - 1) / D * size / N / (NIC * 1e3)
    assert row.time_us == pytest.approx(_phase_us(size, 100.0) + across, rel=1e-12)
    assert row.busbw_gbps == pytest.approx((N * D - 1) / (N * D) * size / (row.time_us * 1e3))


NEW = [
    "broadcast",
    "reduce",
    "gather",
    "scatter",
    "sendrecv",
    "permute",
    "allgatherv",
    "reducescatterv",
    "alltoallv",
]


@pytest.mark.parametrize("op", NEW)
@pytest.mark.parametrize("system", ["trn2-nl16", "complete5"])
def test_a_cluster_of_one_domain_is_the_engine_on_that_domain(op, system):
    """No cross-domain phase: the op runs whole on the domain, as the engine runs it (which, until
    broadcast and reduce have algorithms, refuses them alike)."""
    if system == "complete5":
        domain, plan = complete_cluster(5, 1, 100.0)
    else:
        domain, plan = catalog_cluster(system, 1)
    sizes = [1 << 16, 1 << 30]
    try:
        alone = evaluate(domain, op, sizes, domain.chips, exact_bounds=False)
    except UsageError as exc:
        with pytest.raises(UsageError, match=str(exc)):
            evaluate_cluster(domain, plan, op, sizes)
        return
    cluster = evaluate_cluster(domain, plan, op, sizes)
    for together, single in zip(cluster.rows, alone.rows, strict=True):
        assert together.bytes == single.bytes
        assert together.time_us == pytest.approx(single.time_us, rel=1e-12)
        assert together.busbw_gbps <= together.bound_busbw_gbps * (1 + 1e-9)


@pytest.mark.parametrize("edits", [{}, {"policy": "hash"}, {"policy": "hash", "design": "rail"}])
def test_busbw_never_passes_the_bound_or_the_ceiling(edits):
    domain, plan = catalog_cluster("trn2-nl16", 4, **edits)
    for op in NEW:
        for row in evaluate_cluster(domain, plan, op, [1 << 20, 1 << 30]).rows:
            assert 0 < row.busbw_gbps <= row.ceiling_busbw_gbps * (1 + 1e-9), (op, row.bytes)
            assert row.ceiling_busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9), (op, row.bytes)
            assert row.efficiency <= 1 + 1e-9


def test_even_v_ops_are_their_base_ops_and_a_permute_a_sendrecv():
    domain, plan = catalog_cluster("trn2-nl16", 4)
    sizes = [1 << 20, 1 << 30]
    for op, base in (("allgatherv", "allgather"), ("alltoallv", "alltoall"), ("permute", "sendrecv")):
        got, want = (evaluate_cluster(domain, plan, name, sizes).rows for name in (op, base))
        assert [r.time_us for r in got] == [r.time_us for r in want]
        assert [r.busbw_gbps for r in got] == [r.busbw_gbps for r in want]


def test_a_tree_beats_a_chain_only_where_it_is_shallower():
    # at 2 and 3 domains a double binary tree is as deep as a chain: auto keeps the chain
    for d, tree_wins in ((2, False), (3, False), (16, True)):
        domain, plan = complete_cluster(N, d, 100.0)
        row = evaluate_cluster(domain, plan, "broadcast", [1 << 24]).rows[0]
        assert (row.inter_algorithm == "tree") == tree_wins, d
    assert math.ceil(math.log2(16)) < 16 - 1
