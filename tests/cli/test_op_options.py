"""``--root``, ``--pairs`` and ``--counts`` on the command line: offered by the ops that take them,
named in the header and the JSON, and refused in one line elsewhere."""

import json


def test_the_shape_is_in_the_json_and_moves_the_bytes_it_says(cli, tmp_path):
    gather = cli("collective", "gather", "--sku", "nl16", "--root", "3", "--sizes", "1G", "--format", "json")
    assert gather.code == 0, gather.err
    data = json.loads(gather.out)
    assert data["op_shape"] == "root 3" and data["runtime"] == "ideal"  # neuron's model has no gather
    # a gather to rank 3 of 16: 15/16 of the size enters rank 3, so busbw (x 15/16) is at most its links
    assert data["rows"][0]["busbw_gbps"] <= data["rows"][0]["bound_busbw_gbps"] * (1 + 1e-9)
    counts = tmp_path / "c.txt"
    counts.write_text(" ".join(str(i + 1) for i in range(16)))
    v = cli(
        "collective",
        "allgatherv",
        "--sku",
        "nl16",
        "--counts",
        str(counts),
        "--sizes",
        "1G",
        "--format",
        "json",
    )
    assert v.code == 0 and json.loads(v.out)["op_shape"] == "counts given".replace("given", f"from {counts}")


def test_an_option_no_op_of_the_run_takes_is_refused_in_one_line(cli):
    unknown = cli("collective", "allreduce", "--sku", "nl16", "--root", "1")
    assert unknown.code == 2  # not offered at all: typer's own usage error
    compare = cli("compare", "allreduce", "--sku", "nl16", "--root", "1", "--sizes", "1M")
    assert compare.code == 2 and compare.err.strip() == (
        "error: --root is for broadcast, reduce, gather, scatter; this run is allreduce"
    )
    sweep = cli(
        "sweep", "--sku", "nl16", "--op", "sendrecv", "--op", "alltoall", "--pairs", "0:1", "--sizes", "1M"
    )
    assert sweep.code == 0, sweep.err  # sendrecv takes the pairs; alltoall ignores them
    bad = cli("collective", "sendrecv", "--sku", "nl16", "--pairs", "0:16", "--sizes", "1M")
    assert (
        bad.code == 2
        and bad.err.strip() == "error: --pairs 0:16: each pair is two ranks of the group, 0 to 15"
    )
