"""``trnsim collective OP --schedule FILE``: a synthesizer's schedule checked, placed and costed beside
the bound and trnsim's best; wrong schedules exit 1, bad input exits 2, each in one line."""

import json
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples" / "schedules"
FILES = {"forestcoll": EXAMPLES / "forestcoll-8.xml", "te-ccl": EXAMPLES / "teccl-4.json"}
SIZES = "1K,1M,1G"


def _json(cli, *args):
    result = cli("collective", *args, "--sizes", SIZES, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.mark.parametrize("sku", ["nl32x2", "gb200-nvl72"])
@pytest.mark.parametrize("fmt", sorted(FILES))
@pytest.mark.parametrize("op", ["allgather", "reducescatter", "allreduce"])
def test_an_imported_schedule_is_checked_and_costed_against_the_bound_and_trnsims_best(cli, sku, fmt, op):
    data = _json(cli, op, "--sku", sku, "--schedule", str(FILES[fmt]))
    assert data["format"] == fmt and data["checked"].startswith("ok")
    members = data["group"]
    # trnsim's own run on the same chips, through the ordinary command
    own = _json(cli, op, "--sku", sku, "--group", ",".join(members), "--runtime", "ideal")
    for row, theirs in zip(data["rows"], own["rows"], strict=True):
        # the bound is a lower bound on any schedule's time: no imported schedule beats it
        assert row["busbw_gbps"] <= row["bound_busbw_gbps"] * (1 + 1e-9)
        assert row["efficiency"] == pytest.approx(row["busbw_gbps"] / row["bound_busbw_gbps"], rel=1e-9)
        assert row["bound_busbw_gbps"] == pytest.approx(theirs["bound_busbw_gbps"], rel=1e-9)
        assert row["best_busbw_gbps"] == pytest.approx(theirs["busbw_gbps"], rel=1e-9)
        assert row["best_algorithm"] == theirs["algorithm"] and row["bottleneck"]


def test_the_relays_are_chips_outside_the_group_and_a_given_group_places_the_file(cli):
    # TE-CCL's example: GPUs 0-3 need data, GPU 4 relays; --group puts them on chips 4..8
    data = _json(
        cli, "allgather", "--sku", "gb200-nvl72", "--schedule", str(FILES["te-ccl"]), "--group", "4-8"
    )
    assert len(data["group"]) == 4 and len(data["relays"]) == 1
    assert data["relays"][0] not in data["group"]


def test_a_wrong_schedule_exits_1_with_the_violation_in_one_line(cli, tmp_path):
    doc = json.loads(FILES["te-ccl"].read_text())
    doc["7-Flows"] = [
        f for f in doc["7-Flows"] if "from 3 traveled over 1->2" not in f
    ]  # GPU 2 never gets 3's
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(doc))
    result = cli("collective", "allgather", "--sku", "nl32x2", "--schedule", str(wrong), "--sizes", "1M")
    assert result.code == 1 and result.out == ""
    line = result.err.strip()
    assert "\n" not in line and "does not compute allgather: missing" in line and "rank 2" in line


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--schedule", "/nonexistent/s.json"], "no such file"),
        (["--schedule", str(FILES["te-ccl"]), "--schedule-format", "nope"], "unknown schedule format 'nope'"),
        (["--schedule", str(FILES["te-ccl"]), "--group", "0-3"], "the schedule has 5 ranks"),
        (["--schedule", str(FILES["te-ccl"]), "--algo", "ring"], "not with --algo"),
        (["--schedule", str(FILES["te-ccl"]), "--runtime", "neuron"], "--schedule gives one"),
    ],
)
def test_bad_input_exits_2_in_one_line(cli, extra, message):
    result = cli("collective", "allgather", "--sku", "nl32x2", "--sizes", "1M", *extra)
    assert result.code == 2, result.err
    assert message in result.err and len(result.err.strip().splitlines()) == 1


def test_an_all_to_all_file_does_not_make_an_all_reduce(cli, tmp_path):
    # three GPUs (with two, sending each its other's block is also an all-gather)
    pairs = [(s, d) for s in range(3) for d in range(3) if s != d]
    flows = [f"Chunk {d} from {s} traveled over {s}->{d} in epoch 0" for s, d in pairs]
    demand = {f"GPU {d}": {f"GPU {s}": {f"Chunk {d}": 1e-6} for s in range(3) if s != d} for d in range(3)}
    path = tmp_path / "a2a.json"
    path.write_text(json.dumps({"6-Demand_Met": demand, "7-Flows": flows}))
    result = cli("collective", "allreduce", "--sku", "nl32x2", "--schedule", str(path), "--sizes", "1M")
    assert result.code == 2 and "the schedule is a alltoall; it does not make a allreduce" in result.err
