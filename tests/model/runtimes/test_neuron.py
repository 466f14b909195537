"""The Neuron runtime model: hand computations, the documented selection as properties, and a loose
check against the nccom-test page's published runs.

The hand computations type the documented numbers in (1.5 us per hop, 15 us per EFA hop, 3 us per
call, HBM accesses Ring 1R1W/2R1W and KangaRing 1R2W/3R1W per two ranks) rather than reading them from
the module under test.
"""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.model.runtimes.neuron import NeuronSystem, lnc_ranks_per_chip, predict
from trnsim.model.runtimes.neuron_system import dma_shares

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

# A 16-chip 4x4 torus at LNC=2: 64 ranks. Four links of 128 GB/s per direction per chip (trn2-arch.rst:
# 1,024 GB/s per chip inside the instance, both directions) -> 128 GB/s per rank; HBM 2.9 TB/s per
# chip (trainium2.rst); EFA 200 Gbit/s per chip -> 6.25 GB/s per rank (collectives.rst: "each rank
# gets 3.2 Tbps / 64 = 50Gbps").
TORUS = NeuronSystem(
    chips_per_node=16,
    ranks_per_chip=lnc_ranks_per_chip(2),
    link_gbps_per_rank=128.0,
    torus_dims=(4, 4),
    hbm_gbps_per_chip=2900.0,
    hop_latency_us=1.5,
    call_overhead_us=3.0,
)


def _get(prediction, algorithm):
    [choice] = [x for x in prediction.candidates if x.algorithm == algorithm]
    return choice


def test_mesh_at_64_kib_by_hand():
    size = 64 * KiB
    got = predict(TORUS, "allreduce", size)
    assert got.pick.algorithm == "mesh"  # 64 KiB < 1 MiB
    # two steps per phase (routed inter-chip write, intra-chip broadcast), reduce-scatter + all-gather
    latency = 3.0 + 2 * 2 * 1.5
    # each chip sends 15/16 of the buffer an average of 32/15 hops (the torus' mean distance) over its
    # 4 x 128 GB/s: 2 x 64 KiB per phase
    link_us = size * 15 / 16 * 32 / 15 / (1000 * 512)
    # HBM per phase: 4 ranks x 63/64 of the buffer x 3 accesses (reduce-scatter) or 2 (all-gather)
    rs_hbm_us = 3 * 4 * size * 63 / 64 / (1000 * 2900)
    ag_hbm_us = 2 * 4 * size * 63 / 64 / (1000 * 2900)
    time = latency + max(link_us, rs_hbm_us) + max(link_us, ag_hbm_us)
    assert got.pick.latency_us == pytest.approx(latency)
    assert got.pick.time_us == pytest.approx(time)
    assert got.pick.busbw_gbps == pytest.approx(size / (1000 * time) * 2 * 63 / 64)


def test_kangaring_at_1_gib_by_hand():
    size = GiB
    got = predict(TORUS, "allreduce", size)
    assert got.pick.algorithm == "kangaring"  # > 56 MiB
    # 32 primaries (rank pairs): 31 steps per phase; a chip sends 31/32 of the buffer per phase
    link_us = size * 31 / 32 / (1000 * 512)
    # KangaRing's HBM: 3R1W per two ranks in reduce-scatter (2 per rank), 1R2W in all-gather (1.5)
    rs_hbm_us = 2 * 4 * size * 63 / 64 / (1000 * 2900)
    ag_hbm_us = 1.5 * 4 * size * 63 / 64 / (1000 * 2900)
    assert rs_hbm_us > ag_hbm_us > link_us  # HBM bounds both phases at 2.9 TB/s per chip
    time = 3.0 + 2 * 31 * 1.5 + rs_hbm_us + ag_hbm_us
    assert got.pick.time_us == pytest.approx(time)
    # Ring: 63 steps, the same link bytes per chip but 1R1W and 2R1W per rank
    ring = _get(got, "ring")
    ring_time = 3.0 + 2 * 63 * 1.5 + (3 + 2) * 4 * size * 63 / 64 / (1000 * 2900)
    assert ring.time_us == pytest.approx(ring_time)


def test_two_nodes_hierarchical_by_hand():
    two = NeuronSystem(
        **{**TORUS.__dict__, "nodes": 2, "efa_gbps_per_rank": 6.25, "efa_hop_latency_us": 15.0}
    )
    size = 256 * MiB
    got = predict(two, "allreduce", size)
    # intra-node KangaRing reduce-scatter, inter-node all-reduce of each rank's 1/64 over 2 nodes
    # (one step per phase, half of it each way), intra-node KangaRing all-gather
    intra = (2 + 1.5) * 4 * size * 63 / 64 / (1000 * 2900)  # both phases HBM-bound, as at 1 GiB
    piece = size / 64
    ring_efa = 2 * piece / 2 / (1000 * 6.25 * 1.0)  # Ring keeps all of EFA; RDH 0.8, Mesh 0.5
    assert got.pick.algorithm == "kangaring+ring"
    assert got.pick.latency_us == pytest.approx(3.0 + 2 * 31 * 1.5 + 2 * 15.0)
    assert got.pick.time_us == pytest.approx(3.0 + 2 * 31 * 1.5 + 2 * 15.0 + intra + ring_efa)
    assert _get(got, "kangaring+mesh").time_us == pytest.approx(got.pick.time_us + ring_efa)  # x 2
    # 128 ranks in nccom-test's bus bandwidth
    assert got.pick.busbw_gbps == pytest.approx(size / (1000 * got.pick.time_us) * 2 * 127 / 128)
    assert len(got.candidates) == 4 * 3


def test_alltoall_by_hand():
    size = 16 * MiB  # each rank's send buffer
    got = predict(TORUS, "alltoall", size)
    # 60 of a rank's 64 pieces leave the chip, 4 ranks per chip, 32/15 hops on average
    link_us = 4 * size * 60 / 64 * 32 / 15 / (1000 * 512)
    hbm_us = 2 * 4 * size * 63 / 64 / (1000 * 2900)
    assert got.pick.time_us == pytest.approx(3.0 + 1.5 + max(link_us, hbm_us))
    assert got.pick.busbw_gbps == pytest.approx(size / (1000 * got.pick.time_us) * 63 / 64)


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (1, "mesh"),
        (MiB - 1, "mesh"),
        (MiB, "rdh"),
        (56 * MiB, "rdh"),
        (56 * MiB + 1, "kangaring"),
        (64 * GiB, "kangaring"),
    ],
)
def test_the_pick_follows_the_documented_ranges_on_the_16_chip_torus(size, expected):
    for op in ("allreduce", "allgather", "reducescatter"):
        assert predict(TORUS, op, size).pick.algorithm == expected


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, 4 * GiB))
def test_the_pick_is_by_size_not_by_time(size):
    got = predict(TORUS, "allreduce", size)
    expected = "mesh" if size < MiB else "rdh" if size <= 56 * MiB else "kangaring"
    assert got.pick.algorithm == expected
    assert got.pick in got.candidates


def test_fallbacks_are_ring():
    # one rank per chip: no rank pairs, so Ring where KangaRing would run (intranode page)
    single = NeuronSystem(chips_per_node=16, ranks_per_chip=1, link_gbps_per_rank=512.0, torus_dims=(4, 4))
    assert "kangaring" not in {x.algorithm for x in predict(single, "allreduce", GiB).candidates}
    assert predict(single, "allreduce", GiB).pick.algorithm == "ring"
    # 12 chips: RDH needs a power of two; its range falls back to Ring
    twelve = NeuronSystem(chips_per_node=12, ranks_per_chip=4, link_gbps_per_rank=128.0, torus_dims=(4, 3))
    got = predict(twelve, "allreduce", 8 * MiB)
    assert "rdh" not in {x.algorithm for x in got.candidates} and got.pick.algorithm == "ring"


def test_ranges_scale_with_ranks():
    # 4 chips at LNC=2, 16 ranks: Mesh below 1 MiB x 16/64 = 256 KiB, RDH up to 56 MiB x 16/64 = 14 MiB
    four = NeuronSystem(chips_per_node=4, ranks_per_chip=4, link_gbps_per_rank=64.0, torus_dims=(4,))
    picks = {s: predict(four, "allreduce", s).pick.algorithm for s in (256 * KiB - 1, 256 * KiB, 14 * MiB)}
    assert picks == {256 * KiB - 1: "mesh", 256 * KiB: "rdh", 14 * MiB: "rdh"}
    assert predict(four, "allreduce", 14 * MiB + 1).pick.algorithm == "kangaring"
    fixed = NeuronSystem(**{**four.__dict__, "ranges_per_rank": False})
    assert predict(fixed, "allreduce", 14 * MiB + 1).pick.algorithm == "rdh"
    assert predict(fixed, "allreduce", 56 * MiB + 1).pick.algorithm == "kangaring"


def _systems():
    return st.builds(
        NeuronSystem,
        chips_per_node=st.sampled_from([2, 4, 8, 16]),
        ranks_per_chip=st.sampled_from([1, 2, 4, 8]),
        link_gbps_per_rank=st.floats(1.0, 500.0),
        nodes=st.sampled_from([1, 2, 3, 4]),
        efa_gbps_per_rank=st.floats(0.5, 50.0),
        hbm_gbps_per_chip=st.one_of(st.none(), st.floats(100.0, 5000.0)),
    )


@settings(max_examples=60, deadline=None)
@given(
    system=_systems(), size=st.integers(1, GiB), op=st.sampled_from(["allreduce", "allgather", "alltoall"])
)
def test_time_grows_with_size(system, size, op):
    small, big = predict(system, op, size), predict(system, op, 2 * size)
    for a, b in zip(small.candidates, big.candidates, strict=True):
        assert a.algorithm == b.algorithm
        assert b.time_us > a.time_us and b.latency_us == pytest.approx(a.latency_us)
        assert b.transfer_us == pytest.approx(2 * a.transfer_us)  # alpha-beta: bytes scale
    factor = {"allreduce": 2, "allgather": 1, "alltoall": 1}[op] * (system.n_ranks - 1) / system.n_ranks
    assert big.pick.busbw_gbps == pytest.approx(2 * size / (1000 * big.pick.time_us) * factor)


@settings(max_examples=40, deadline=None)
@given(system=_systems(), size=st.integers(1, GiB), share=st.floats(0.01, 1.0))
def test_a_dma_share_stretches_only_the_transfer(system, size, share):
    full, shared = (
        predict(system, "allreduce", size),
        predict(system, "allreduce", size, bandwidth_share=share),
    )
    for a, b in zip(full.candidates, shared.candidates, strict=True):
        assert b.latency_us == pytest.approx(a.latency_us)
        assert b.transfer_us == pytest.approx(a.transfer_us / share)


def test_a_collective_at_compute_priority_slows_by_its_packet_share():
    # compute-comm-overlap.rst's TP x FSDP setting: compute DMA at 64 KiB packets, FSDP CC at 4 KiB
    share = dma_shares([65536, 4096])[1]
    alone, shared = predict(TORUS, "allgather", GiB), predict(TORUS, "allgather", GiB, bandwidth_share=share)
    assert shared.pick.transfer_us == pytest.approx(alone.pick.transfer_us * 17)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 4 * GiB))
def test_allreduce_is_reducescatter_then_allgather(size):
    # each algorithm's all-reduce is its reduce-scatter and all-gather, one call overhead between them
    ar, rs, ag = (predict(TORUS, op, size) for op in ("allreduce", "reducescatter", "allgather"))
    for a, r, g in zip(ar.candidates, rs.candidates, ag.candidates, strict=True):
        assert a.time_us == pytest.approx(r.time_us + g.time_us - 3.0)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 4 * GiB))
def test_kangaring_beats_ring_at_every_size(size):
    # intranode page: "KangaRing is better than Ring at all sizes" (fewer hops, fewer HBM accesses)
    got = predict(TORUS, "allreduce", size)
    assert _get(got, "kangaring").time_us < _get(got, "ring").time_us


def test_the_fastest_runs_mesh_then_rdh_then_kangaring():
    # by this model's times, the fastest algorithm changes in the documented order as sizes grow
    # (the switch points differ from the documented 1 and 56 MiB: see the report)
    sizes = [int(KiB * 1.25**k) for k in range(80)]
    fastest = [
        min(predict(TORUS, "allreduce", s).candidates, key=lambda x: x.time_us).algorithm for s in sizes
    ]
    assert [name for name, _ in itertools.groupby(fastest)] == ["mesh", "rdh", "kangaring"]


def test_one_rank_per_node_is_purely_inter_node():
    nodes = NeuronSystem(
        chips_per_node=1, ranks_per_chip=1, link_gbps_per_rank=1.0, nodes=8, efa_gbps_per_rank=25.0
    )
    got = predict(nodes, "allreduce", MiB)
    assert {x.algorithm for x in got.candidates} == {"mesh", "rdh", "ring"}
    ring = _get(got, "ring")  # 7 steps per phase, 7/8 of the buffer each way per phase
    assert ring.time_us == pytest.approx(
        nodes.call_overhead_us + 2 * 7 * 15.0 + 2 * MiB * 7 / 8 / (1000 * 25.0)
    )
    assert got.pick == min(got.candidates, key=lambda x: x.time_us)
    # three nodes: no RDH (not a power of two)
    three = NeuronSystem(**{**nodes.__dict__, "nodes": 3})
    assert "rdh" not in {x.algorithm for x in predict(three, "allreduce", MiB).candidates}


# nccom-test.rst (aws-neuron-sdk, tools/neuron-sys-tools), the --show-algorithm example:
# "nccom-test -r 16 allr -b 4 -e 1gb -f 16 -d fp32" -> (size, time:avg us, algorithm)
N8 = [
    (4, 299.91, "mesh"),
    (32, 299.69, "mesh"),
    (512, 299.82, "mesh"),
    (8192, 299.74, "mesh"),
    (131072, 574.15, "mesh"),
    (2097152, 686.32, "rdh"),
    (33554432, 2754.15, "kangaring"),
    (536870912, 9689.51, "kangaring"),
]


def _n8_system(chips, ranks_per_chip, link_gbps_per_rank, dims, **changes):
    return NeuronSystem(
        chips_per_node=chips,
        ranks_per_chip=ranks_per_chip,
        link_gbps_per_rank=link_gbps_per_rank,
        torus_dims=dims,
        hbm_gbps_per_chip=2900.0,
        **changes,
    )


def test_nccom_test_16_rank_algorithm_column():
    # 16 ranks with KangaRing: rank pairs on each chip. Per rank, the documented ranges give every row;
    # applied to the size as it is, 32 MiB would still be RDH. (The per-rank rule was chosen to fit this
    # example: a consistency check, not an independent one.)
    system = _n8_system(4, 4, 64.0, (4,))
    assert [predict(system, "allreduce", size).pick.algorithm for size, _, _ in N8] == [a for _, _, a in N8]
    fixed = _n8_system(4, 4, 64.0, (4,), ranges_per_rank=False)
    assert predict(fixed, "allreduce", 32 * MiB).pick.algorithm == "rdh"


def _marginal_gbps(system) -> tuple[float, float]:
    """N8's rate between its two KangaRing rows (its fixed ~300 us cancels), and the model's."""
    (small, t_small, _), (big, t_big, _) = N8[-2:]
    model = [predict(system, "allreduce", s).pick.time_us for s in (small, big)]
    return (big - small) / (1000 * (t_big - t_small)), (big - small) / (1000 * (model[1] - model[0]))


def test_nccom_test_16_rank_kangaring_rate_two_chips_lnc1():
    # Reading: 16 ranks = 2 Trainium2 chips at LNC=1 (8 ranks each) joined by one 128 GB/s link.
    measured, model = _marginal_gbps(_n8_system(2, 8, 16.0, (2,)))
    assert measured == pytest.approx(72.57, abs=0.01)
    assert model == pytest.approx(measured, rel=0.25)


def test_nccom_test_16_rank_kangaring_rate_four_chips_lnc2():
    # Reading: 16 ranks = 4 chips at LNC=2 (the default), a ring of the torus, 2 x 128 GB/s per chip.
    # A ring of chips has one Hamiltonian cycle, which the model runs one way: 128 GB/s per chip, and
    # N8 moved 72.6. The rule was inferred from this run (the validation lists N8 as fitted), so this
    # holds the fit; what it changes is checked by hand: half a ring's rate, nothing else.
    ring = _n8_system(4, 4, 64.0, (4,))
    measured, model = _marginal_gbps(ring)
    assert model == pytest.approx(measured, rel=0.25)
    size = 512 * MiB
    kanga = next(x for x in predict(ring, "allreduce", size).candidates if x.algorithm == "kangaring")
    # 8 primaries: 7/8 of the buffer leaves a chip per phase, at half of its 256 GB/s; HBM (4 ranks,
    # 3R1W = 2 and 1R2W = 1.5 touches per rank, 15/16 of the buffer, at 2.9 TB/s) is below that
    link_us = size * 7 / 8 / (1000 * 256 * 0.5)
    assert link_us > 2 * 4 * size * 15 / 16 / (1000 * 2900)
    assert kanga.time_us == pytest.approx(kanga.latency_us + 2 * link_us, rel=1e-12)
    # (the 16-chip torus, two cycles, keeps the whole chip's links: test_kangaring_at_1_gib_by_hand)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((TORUS, "broadcast", 8), "Neuron op: expected one of allreduce, allgather, reducescatter, alltoall"),
        ((TORUS, "allreduce", 0), "Neuron size: expected a whole number of bytes of at least 1"),
        ((TORUS, "allreduce", 1.5), "Neuron size"),
        ((TORUS, "allreduce", True), "Neuron size"),
        ((TORUS, "allreduce", 8, 0.0), "bandwidth_share: expected a number above 0 and at most 1"),
        ((TORUS, "allreduce", 8, 1.5), "bandwidth_share"),
        (("torus", "allreduce", 8), "system: expected a NeuronSystem"),
    ],
)
def test_bad_calls_are_refused_in_one_line(args, words):
    with pytest.raises(UsageError, match=words) as error:
        predict(*args)
    assert "\n" not in str(error.value)
