"""trnsim.model.cluster.phases: every op has a composition across domains."""

import pytest

from trnsim.collectives.ops import OPS, get_op
from trnsim.model.cluster.inter import INTER_ALGORITHMS
from trnsim.model.cluster.phases import COMPOSITIONS, composition, phase_arguments


@pytest.mark.parametrize("name", list(OPS))
def test_every_op_composes_from_ops_the_engine_runs(name):
    op = get_op(name)
    got = composition(op)
    assert got.name in INTER_ALGORITHMS
    for phase in (got.before, got.after):
        assert phase is None or get_op(phase).name == phase
    # a v-op's data is its base's; a permute of each rank to the next is a send/recv
    v_op = op.uneven or name == "alltoallv"
    assert got.name == {"permute": "sendrecv"}.get(name, op.base if v_op else name)


def test_the_roots_domain_runs_the_rooted_phases():
    assert (COMPOSITIONS["broadcast"].before, COMPOSITIONS["broadcast"].after) == ("scatter", "allgather")
    assert (COMPOSITIONS["reduce"].before, COMPOSITIONS["reduce"].after) == ("reducescatter", "gather")
    assert (COMPOSITIONS["gather"].before, COMPOSITIONS["scatter"].after) == (None, None)
    # the cross-domain phase moves S/n a rank, but a send/recv's and an all-to-all's whole buffers
    assert [c.per_rank(64, 4) for c in (COMPOSITIONS["broadcast"], COMPOSITIONS["sendrecv"])] == [16, 64]


def test_a_sendrecv_inside_a_domain_leaves_the_crossing_out():
    assert phase_arguments("sendrecv", 4).pairs == ((0, 1), (1, 2), (2, 3))
    assert phase_arguments("scatter", 4) is None  # root 0
