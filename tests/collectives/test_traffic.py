"""Skewed all-to-all: the matrices, their routing (linear in the matrix), bounds and the CLI."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives.ops import get_op
from trnsim.collectives.schedule import Step
from trnsim.collectives.traffic import hot_destinations, imbalance, read_traffic, uniform
from trnsim.errors import NotApplicableError, TrnsimError, UsageError
from trnsim.model.bounds import lower_bound
from trnsim.model.bounds.families import natural as natural_candidates
from trnsim.model.concurrent import evaluate_concurrent
from trnsim.model.engine import evaluate
from trnsim.model.router import Router
from trnsim.topology.groups import select_group, select_groups

SIZES = [1 << 20, 1 << 30]


@pytest.mark.parametrize(("p", "factor", "hot"), [(8, 1.0, 1), (8, 2.0, 1), (144, 3.5, 4), (16, 16.0, 1)])
def test_hot_destinations_keep_every_rank_sending_its_buffer(p, factor, hot):
    matrix = hot_destinations(p, factor, hot)
    assert matrix.sum(axis=1) == pytest.approx(np.ones(p))
    assert imbalance(matrix) == pytest.approx(factor)
    assert np.all(matrix >= 0)


def test_hot_destinations_refuse_what_cannot_be():
    with pytest.raises(UsageError, match="from 1 to 4"):
        hot_destinations(8, 5.0, 2)
    with pytest.raises(UsageError, match="hot ranks"):
        hot_destinations(8, 1.0, 8)


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl72x2-gen1"])
def test_a_uniform_matrix_is_the_nccl_all_to_all(sku):
    topo = topology(sku)
    group = select_group(topo, "all")
    plain = evaluate(topo, "alltoall", SIZES, group, algo="mesh")
    matrix = evaluate(topo, "alltoall", SIZES, group, algo="mesh", traffic=uniform(len(group)))
    assert [r.time_us for r in matrix.rows] == pytest.approx(
        [r.time_us for r in plain.rows], rel=1e-12, abs=0
    )


def test_skewed_loads_are_the_matrix_weighted_sum_of_pair_loads():
    # routing is linear: the skewed step's loads are sum_ij T_ij x (the loads of one pair alone)
    topo = topology("trn2-nl16")
    group = select_group(topo, "all")
    p = len(group)
    matrix = hot_destinations(p, 3.0, 2)
    router = Router(topo, group)
    src, dst = np.nonzero(~np.eye(p, dtype=bool))
    skewed = router.route(Step.of((src, dst), matrix[src, dst])).link_loads
    brute = sum(
        matrix[i, j] * router.route(Step.of([(int(i), int(j))], 1.0)).link_loads
        for i, j in zip(src, dst, strict=True)
    )
    assert skewed == pytest.approx(brute, rel=1e-9, abs=1e-12)


def test_hot_ranks_slow_the_all_to_all_down_monotonically():
    topo = topology("trn3-nl32x2-gen1")
    group = select_group(topo, "all")
    times = [
        evaluate(topo, "alltoall", [1 << 30], group, traffic=hot_destinations(len(group), f)).rows[0].time_us
        for f in (1.0, 1.5, 2.0, 4.0)
    ]
    assert times == sorted(times) and times[-1] > 1.5 * times[0]


@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0])
def test_the_skewed_bound_holds_and_agrees_with_the_uniform_one(factor):
    topo = topology("trn3-nl72x2-gen1")
    group = select_group(topo, "all")
    matrix = hot_destinations(len(group), factor)
    result = evaluate(topo, "alltoall", SIZES, group, traffic=matrix)
    for row in result.rows:
        assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
    assert not result.bound.exact
    if factor == 1.0:  # the matrix's sums are the uniform ones: the same injection and cut bounds
        natural = max(c.seconds_per_byte for c in natural_candidates(topo, group, get_op("alltoall")))
        assert result.bound.seconds_per_byte == pytest.approx(natural, rel=1e-9, abs=0)
    else:  # the hottest rank receives factor x the mean: it binds at least that much
        bound = lower_bound(topo, group, get_op("alltoall"), 0.0, 1, matrix)
        mean = lower_bound(topo, group, get_op("alltoall"), 0.0, 1, uniform(len(group)))
        assert bound.seconds_per_byte >= mean.peak_seconds_per_byte * factor * (1 - 1e-9)


def test_store_and_forward_algorithms_refuse_a_matrix():
    topo = topology("trn2-nl16")
    group = select_group(topo, "all")
    with pytest.raises(NotApplicableError, match="straight to its destination"):
        evaluate(topo, "alltoall", SIZES, group, algo="torus", traffic=uniform(16))
    result = evaluate(topo, "alltoall", SIZES, group, traffic=hot_destinations(16, 2.0))
    # multipath sends each block straight too (its paths only forward bytes)
    assert {row.algorithm for row in result.rows} <= {"mesh", "pairwise", "multipath"}
    assert "torus" in result.skipped
    with pytest.raises(UsageError, match="for alltoall"):
        evaluate(topo, "allreduce", SIZES, group, traffic=uniform(16))


def test_every_group_takes_the_same_skew_at_once():
    topo = topology("trn3-nl72x2-gen1")
    racks = select_groups(topo, "rack:*")
    matrix = hot_destinations(72, 2.0)
    together = evaluate_concurrent(topo, "alltoall", SIZES, racks, traffic=matrix)
    alone = evaluate(topo, "alltoall", SIZES, racks[0], traffic=matrix)
    # the racks share no link under ECMP: each takes its skewed time alone
    assert [r.time_us for r in together.rows] == pytest.approx(
        [r.time_us for r in alone.rows], rel=1e-12, abs=0
    )


def test_traffic_files_are_read_and_checked(tmp_path):
    good = tmp_path / "m.csv"
    good.write_text("# from, to\n0,1,1,1\n1 0 1 1\n1,1,0,1\n1,1,1,0\n")
    matrix = read_traffic(good, 4)
    assert matrix.sum() == pytest.approx(4.0) and imbalance(matrix) == pytest.approx(1.0)
    cases = {
        "0,1\n1,0\n": "expected 4 values",
        "0,1,1,1\n": "expected 4 rows",
        "0,1,x,1\n" * 4: "line 1: expected numbers",
        "0,-1,1,1\n" * 4: ">= 0",
        "0,nan,1,1\n" * 4: ">= 0",
        "1,0,0,0\n0,1,0,0\n0,0,1,0\n0,0,0,1\n": "no rank sends anything",
    }
    for text, message in cases.items():
        path = tmp_path / "bad.csv"
        path.write_text(text)
        with pytest.raises(UsageError, match=message):
            read_traffic(path, 4)
    with pytest.raises(TrnsimError, match="missing.csv: no such file"):
        read_traffic(tmp_path / "missing.csv", 4)


def test_traffic_files_must_be_regular_files(tmp_path):
    """A FIFO blocked forever and /dev/zero grew to the memory cap: only regular files are read."""
    import os
    import threading

    fifo = tmp_path / "matrix.fifo"
    os.mkfifo(fifo)
    outcome = []

    def read():
        try:
            read_traffic(fifo, 4)
        except TrnsimError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)  # before the fix it blocks in open()
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert outcome and "not a regular file" in outcome[0]
    # /dev/null is a device that ends at once: before the fix it was read as an empty matrix
    with pytest.raises(TrnsimError, match="/dev/null: not a regular file"):
        read_traffic(Path("/dev/null"), 4)


def test_traffic_file_size_is_bounded_by_its_own_limit(tmp_path, monkeypatch):
    path = tmp_path / "m.csv"
    path.write_text("0,1,1,1\n1,0,1,1\n1,1,0,1\n1,1,1,0\n")
    monkeypatch.setenv("TRNSIM_MAX_TRAFFIC_BYTES", str(path.stat().st_size - 1))
    with pytest.raises(TrnsimError, match="TRNSIM_MAX_TRAFFIC_BYTES"):
        read_traffic(path, 4)
    monkeypatch.setenv("TRNSIM_MAX_TRAFFIC_BYTES", str(path.stat().st_size))
    assert read_traffic(path, 4).shape == (4, 4)


def test_traffic_option_refuses_a_device(cli):
    result = cli("collective", "alltoall", "--sku", "nl16", "--sizes", "1M", "--traffic", "/dev/zero")
    assert result.code == 2 and result.err.strip().splitlines() == [
        "error: /dev/zero: not a regular file (a pipe, socket or device); expected a traffic matrix file"
    ]


def test_skew_on_the_command_line(cli, tmp_path):
    args = ("collective", "alltoall", "--sku", "nl16", "--sizes", "1G", "--format", "json")
    plain = json.loads(cli(*args).out)["rows"][0]
    skewed = cli(*args, "--skew", "2:2")
    assert skewed.code == 0, skewed.err
    document = json.loads(skewed.out)
    assert "max/mean received 2.00" in document["traffic"]
    assert document["rows"][0]["time_us"] > plain["time_us"]
    matrix = tmp_path / "m.txt"
    matrix.write_text("\n".join(" ".join("1" for _ in range(16)) for _ in range(16)))
    from_file = json.loads(cli(*args, "--traffic", str(matrix), "--algo", "mesh").out)["rows"][0]
    assert from_file["time_us"] == pytest.approx(
        json.loads(cli(*args, "--algo", "mesh").out)["rows"][0]["time_us"], rel=1e-12, abs=0
    )
    for bad in (("--skew", "0.5"), ("--skew", "x"), ("--skew", "2", "--traffic", str(matrix))):
        result = cli(*args, *bad)
        assert result.code == 2 and "Traceback" not in result.err
    assert cli("collective", "allreduce", "--sku", "nl16", "--skew", "2").code == 2
    compare = cli("compare", "alltoall", "--sku", "nl16", "--skew", "2", "--sizes", "1G", "--format", "json")
    assert compare.code == 0, compare.err
    assert json.loads(compare.out)["group"] == "all; skew 2"


@pytest.mark.parametrize("value", ["1e308", "1.7e308", "1e-320", "5e-324", "3"])
def test_a_matrix_of_equal_values_is_uniform_at_any_magnitude(tmp_path, value):
    """Equal values are the uniform all-to-all whatever they are: 1e308s must not overflow the sum
    (16 x 16 x 1e308 is infinite), nor 1e-320s the scale factor (16 / 2.6e-318 is)."""
    p = 16
    path = tmp_path / "m.txt"
    path.write_text("\n".join(" ".join([value] * p) for _ in range(p)))
    matrix = read_traffic(path, p)
    assert np.all(np.isfinite(matrix)) and matrix == pytest.approx(uniform(p), rel=1e-12)


def test_a_matrix_whose_traffic_vanishes_next_to_its_largest_value_is_refused(tmp_path):
    p = 4
    path = tmp_path / "m.txt"
    path.write_text("\n".join(" ".join("1e308" if i == j else "1e-320" for j in range(p)) for i in range(p)))
    with pytest.raises(UsageError, match=f"^{path}: what ranks send to others vanishes"):
        read_traffic(path, p)


def test_extreme_traffic_runs_on_the_command_line(cli, tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("\n".join(" ".join(["1e308"] * 16) for _ in range(16)))
    argv = [
        "collective",
        "alltoall",
        "--sku",
        "nl16",
        "--sizes",
        "1G",
        "--runtime",
        "ideal",
        "--format",
        "json",
    ]
    big = cli(*argv, "--traffic", str(path))
    assert big.code == 0, big.err
    plain = json.loads(cli(*argv).out)["rows"][0]["busbw_gbps"]
    assert json.loads(big.out)["rows"][0]["busbw_gbps"] == pytest.approx(plain, rel=1e-9)
