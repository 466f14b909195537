"""trnsim.model.cluster.runtime: a runtime prices only the ops its model covers."""

import pytest

from tests.model.cluster.clusters import catalog_cluster
from trnsim.errors import NotApplicableError
from trnsim.model.cluster import evaluate_cluster
from trnsim.model.cluster.runtime import apply_cluster_runtime, choose_cluster_runtime


def test_a_default_runtime_that_does_not_model_the_op_gives_way_to_ideal():
    domain, plan = catalog_cluster("trn2-nl16", 4)  # its file's default: the Neuron runtime
    assert choose_cluster_runtime(domain, plan, None, "allreduce") == ("neuron", None)
    chosen, note = choose_cluster_runtime(domain, plan, None, "broadcast")
    assert chosen == "ideal" and "default runtime neuron" in note and "not broadcast" in note
    with pytest.raises(NotApplicableError, match="not broadcast"):
        choose_cluster_runtime(domain, plan, "neuron", "broadcast")
    assert choose_cluster_runtime(domain, plan, "ideal", "broadcast") == ("ideal", None)


def test_nccl_prices_its_ring_broadcast_and_refuses_a_gather():
    domain, plan = catalog_cluster("hgx-h100", 2)
    assert choose_cluster_runtime(domain, plan, "nccl", "reduce") == ("nccl", None)
    ideal = evaluate_cluster(domain, plan, "broadcast", [1 << 20, 1 << 30])
    priced = apply_cluster_runtime(domain, ideal, "nccl")
    for row, kept in zip(priced.rows, ideal.rows, strict=True):
        assert row.algorithm.startswith("ring/")  # NCCL runs broadcast as a ring only
        assert row.ideal_busbw_gbps == kept.busbw_gbps
        assert row.busbw_gbps == pytest.approx(row.bytes / (row.time_us * 1e3))  # factor 1
    gather = evaluate_cluster(domain, plan, "gather", [1 << 20])
    with pytest.raises(NotApplicableError, match="not gather"):
        apply_cluster_runtime(domain, gather, "nccl")
