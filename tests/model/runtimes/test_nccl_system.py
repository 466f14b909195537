"""The NCCL system description: NCCL's derived settings, and bad values refused in one line."""

import pytest

from trnsim.errors import UsageError
from trnsim.model.runtimes.nccl_system import NcclGraph, NcclSystem

RING = NcclGraph(8, 20.0, 10.0)


def _system(**changes):
    fields = {"compute_capability": 90, "n_ranks": 16, "n_nodes": 2, "intra_link": "nvlink", "ring": RING}
    return NcclSystem(**{**fields, **changes})


def test_derived_settings_follow_nccl():
    assert _system().ranks_per_node == 8
    # connect.cc line 460: 2 x 8; lines 480-483 double again only when ring bwIntra > 45
    assert _system().comm_n_channels == 16
    assert _system(ring=NcclGraph(4, 50.0, 10.0)).comm_n_channels == 16
    assert _system(n_nodes=1, ring=NcclGraph(4, 50.0, 10.0)).comm_n_channels == 8
    # PAT (tuning.cc ncclPatEnable): one rank per node, or forced
    assert not _system().pat_enabled
    assert _system(n_nodes=16).pat_enabled
    assert _system(pat=True).pat_enabled and not _system(compute_capability=50, pat=True).pat_enabled
    # LL128: NVLink (or one GPU) inside a node and compute capability >= 70
    assert _system().ll128_enabled and not _system(intra_link="pci").ll128_enabled
    assert _system(intra_link="pci", n_nodes=16).ll128_enabled
    assert not _system(compute_capability=60).ll128_enabled
    assert _system(tree=NcclGraph(4, 30.0, 12.0)).tree_graph.n_channels == 4


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"n_ranks": 1}, "n_ranks: expected a whole number of at least 2"),
        ({"n_ranks": 15}, "n_ranks: expected a multiple of n_nodes"),
        ({"n_nodes": 0}, "n_nodes"),
        ({"intra_link": "nvswitch"}, "intra_link: expected one of nvlink, pci"),
        ({"cpu": "sparc"}, "cpu: expected one of"),
        ({"ring": NcclGraph(0, 20.0, 10.0)}, "ring.n_channels"),
        ({"ring": NcclGraph(8, float("nan"), 10.0)}, "ring.bw_intra_gbps"),
        ({"nvls": NcclGraph(8, 40.0, -1.0)}, "nvls.bw_inter_gbps"),
        ({"ring": "fast"}, "ring: expected an NcclGraph"),
        ({"comm_channels": 65}, "comm_channels"),
        ({"compute_capability": True}, "compute_capability"),
    ],
)
def test_bad_values_are_refused_in_one_line(changes, words):
    with pytest.raises(UsageError, match=words) as error:
        _system(**changes)
    assert str(error.value).startswith("NCCL system: ") and "\n" not in str(error.value)
