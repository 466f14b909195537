"""``--range`` from the command line: low <= busbw <= high per row, in the table and the JSON."""

import json


def test_range_brackets_every_row_and_says_what_was_ranged(cli):
    result = cli(
        "collective", "allreduce", "--sku", "trn2-nl16", "--sizes", "64K,1G", "--range", "--format", "json"
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data["ranges"]) == {"efficiency.default", "latency.step_ns", "runtime.neuron.call_us"}
    for row in data["rows"]:
        assert row["busbw_low_gbps"] <= row["busbw_gbps"] <= row["busbw_high_gbps"]
        assert row["busbw_low_gbps"] < row["busbw_high_gbps"]
    table = cli("collective", "allreduce", "--sku", "trn2-nl16", "--sizes", "64K", "--range", "--wide")
    assert "busbw low" in table.out and "efficiency.default 0.85-0.91" in table.out


def test_a_set_parameter_is_not_ranged_and_a_file_without_ranges_says_so(cli):
    data = json.loads(
        cli(
            "collective", "allreduce", "--sku", "trn2-nl16", "--sizes", "1G", "--range",
            "--set", "efficiency.default=0.9", "--set", "latency.step_ns=1500",
            "--set", "runtime.neuron.call_us=3", "--format", "json",
        ).out
    )  # fmt: skip
    row = data["rows"][0]
    assert row["busbw_low_gbps"] == row["busbw_gbps"] == row["busbw_high_gbps"]
    assert data["ranges"] == {}
    plain = cli("collective", "allreduce", "--sku", "hgx-h100", "--sizes", "1M", "--range", "--wide")
    assert plain.code == 0 and "ranges none" in plain.out


def test_range_refuses_what_it_does_not_cover(cli):
    result = cli("collective", "allreduce", "--sku", "trn2-nl16", "--range", "--algo", "all")
    assert result.code == 2 and "--range" in result.err
