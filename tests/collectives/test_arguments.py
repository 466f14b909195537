"""An op's root, pairs and counts: the demand matrices and block shares they make, the files they are
read from (nccom-test's own forms included), and the refusals."""

import json

import numpy as np
import pytest

from trnsim.collectives.arguments import Arguments, parse_pairs, read_counts
from trnsim.collectives.ops import OPS, get_op
from trnsim.errors import UsageError


@pytest.mark.parametrize("p", [2, 5])
def test_demand_matrices_move_what_nccl_tests_sizes_say(p):
    # gather: the root receives everyone's 1/p; scatter: it sends 1/p to everyone; sendrecv: each
    # rank's whole buffer to the next; the root's own block never crosses a link (the diagonal)
    for root in range(p):
        gather = Arguments(root=root).traffic(get_op("gather"), p)
        scatter = Arguments(root=root).traffic(get_op("scatter"), p)
        assert np.allclose(gather, scatter.T)
        assert np.isclose(gather.sum(), 1.0) and np.allclose(gather[:, root], 1 / p)
    ring = Arguments().traffic(get_op("sendrecv"), p)
    assert np.allclose(ring.sum(axis=0), 1) and np.allclose(ring.sum(axis=1), 1)
    assert all(ring[i, (i + 1) % p] == 1 for i in range(p))


def test_only_demand_ops_but_alltoall_get_a_matrix_and_only_v_ops_blocks():
    counts = Arguments(counts=np.array([1.0, 2.0, 5.0]))
    for name, op in OPS.items():
        has_matrix = Arguments().traffic(op, 3) is not None
        assert has_matrix == (op.demand and name != "alltoall")
        assert (counts.blocks(op, 3) is not None) == op.uneven
    assert counts.blocks(get_op("allgatherv"), 3) == pytest.approx((0.125, 0.25, 0.625))


def test_for_op_keeps_only_what_the_op_takes():
    given = Arguments(root=2, pairs=((0, 1),), counts=np.ones(3))
    assert given.for_op(get_op("broadcast")).root == 2 and given.for_op(get_op("broadcast")).pairs is None
    assert given.for_op(get_op("permute")).pairs == ((0, 1),) and given.for_op(get_op("permute")).root == 0
    assert (
        given.for_op(get_op("allgatherv")).counts is not None
        and given.for_op(get_op("allreduce")).counts is None
    )


def test_refusals_name_the_option_and_what_was_expected():
    with pytest.raises(UsageError, match="0 to 3"):
        Arguments(root=4).check(get_op("broadcast"), 4)
    with pytest.raises(UsageError, match="0 to 3"):
        Arguments(pairs=((0, 4),)).check(get_op("permute"), 4)
    with pytest.raises(UsageError, match="pairs.*sendrecv and permute"):
        Arguments(pairs=((0, 1),)).check(get_op("allreduce"), 4)
    with pytest.raises(UsageError, match="expected 4 rows of 4"):
        Arguments(counts=np.ones((1, 4))).check(get_op("alltoallv"), 4)
    with pytest.raises(UsageError, match="4 values"):
        Arguments(counts=np.ones(3)).check(get_op("allgatherv"), 4)
    with pytest.raises(UsageError, match="no rank sends"):
        Arguments(counts=np.eye(3)).check(get_op("alltoallv"), 3)


def test_pairs_parse_from_text_and_from_nccom_tests_example_file(tmp_path):
    assert parse_pairs("0:1,1:0, 4:4") == ((0, 1), (1, 0), (4, 4))
    nested = {"src_target_pairs": [[[0, 1], [1, 0], [2, 3], [3, 2], [4, 4]]]}
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(nested, indent=4))
    assert parse_pairs(str(path)) == ((0, 1), (1, 0), (2, 3), (3, 2), (4, 4))
    path.write_text("[[0, 2], [2, 0]]")
    assert parse_pairs(str(path)) == ((0, 2), (2, 0))
    path.write_text('{"src_target_pairs": [[0, 1, 2]]}')
    with pytest.raises(UsageError, match="src_target_pairs"):
        parse_pairs(str(path))
    with pytest.raises(UsageError, match="SRC:DST"):
        parse_pairs("0-1")


def test_counts_read_text_rows_and_nccom_tests_alltoallv_metadata(tmp_path):
    text = tmp_path / "counts.txt"
    text.write_text("# per rank\n1, 2\n3 4\n")
    assert np.allclose(read_counts(text), np.array([[1, 2], [3, 4]]) / 4)
    meta = tmp_path / "meta.json"
    entry = {
        "send_counts": [512, 1024],
        "send_displs": [0, 512],
        "recv_counts": [256, 768],
        "recv_displs": [0, 256],
    }
    meta.write_text(json.dumps({"alltoallv_metadata": [entry]}))
    # one entry: every rank sends those counts
    assert np.allclose(read_counts(meta), [[0.5, 1.0], [0.5, 1.0]])
    traffic = Arguments(counts=read_counts(meta)).traffic(get_op("alltoallv"), 2)
    assert np.isclose(traffic.sum(axis=1).mean(), 1.0)  # a rank sends the size on average
    text.write_text("1 2\n3\n")
    with pytest.raises(UsageError, match="line 2"):
        read_counts(text)
    text.write_text("0 0\n0 0\n")
    with pytest.raises(UsageError, match="every count is 0"):
        read_counts(text)


@pytest.mark.parametrize("name", ["gather", "scatter", "sendrecv", "permute", "alltoallv"])
def test_a_demand_matrix_past_its_limit_is_refused_before_it_is_built(name, monkeypatch):
    from trnsim.collectives.arguments import resolve

    monkeypatch.setenv("TRNSIM_MAX_DEMAND_CELLS", "16")
    assert resolve(get_op(name), 4, None)[0].shape == (4, 4)  # 16 cells: at the limit
    with pytest.raises(
        UsageError,
        match=rf"^f.yaml: {name} on 5 ranks would need 25 cells of demand .*TRNSIM_MAX_DEMAND_CELLS",
    ):
        resolve(get_op(name), 5, None, where="f.yaml: ")
    for other in ("allgather", "allreduce", "broadcast", "alltoall"):  # no matrix: nothing to count
        assert resolve(get_op(other), 5, None)[0] is None
