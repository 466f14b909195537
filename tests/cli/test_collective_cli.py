"""``trnsim collective``: the table contract, JSON keys, and bad input."""

import csv
import io
import json

import pytest


def test_json_contract(cli):
    result = cli("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1K,1M,1G", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["schema"] == "trnsim/1"
    assert (data["sku"], data["op"], data["ranks"]) == ("trn3-nl72x2-gen1", "allreduce", 144)
    assert [row["bytes"] for row in data["rows"]] == [1024, 1 << 20, 1 << 30]
    for key in ("bytes", "time_us", "algbw_gbps", "busbw_gbps", "algorithm", "bound_busbw_gbps", "max_hops"):
        assert key in data["rows"][0]


def test_table_has_nccl_tests_columns_and_average(cli):
    # --wide: every column on one line, as nccl-tests prints them (80 columns would leave some out)
    result = cli("collective", "allgather", "--sku", "nl16", "-b", "1K", "-e", "1M", "-f", "4", "--wide")
    assert result.code == 0
    header = result.out.splitlines()[2]
    order = [
        "size (B)",
        "count",
        "type",
        "time (us)",
        "algbw",
        "busbw",
        "algorithm",
        "bound busbw",
        "eff %",
        "max hops",
        "bottleneck",
    ]
    positions = [header.index(name) for name in order]
    assert positions == sorted(positions)
    assert "# Avg bus bandwidth" in result.out


def test_default_sweep_is_8_bytes_to_1_gib(cli):
    data = json.loads(cli("collective", "allreduce", "--sku", "nl16", "--format", "json").out)
    sizes = [row["bytes"] for row in data["rows"]]
    assert sizes == [8 << k for k in range(28)]  # factor 2, on a terminal or not


def test_algo_all_prints_side_by_side(cli):
    result = cli(
        "collective", "allreduce", "--sku", "nl16", "--algo", "all", "--sizes", "1G", "--format", "csv"
    )
    header = result.out.splitlines()[0].split(",")
    assert {"ring", "multiring", "torus", "rdh", "tree", "mesh", "best"} <= set(header)


def test_kangaring_alias_and_dtype(cli):
    data = json.loads(
        cli(
            "collective",
            "allreduce",
            "--sku",
            "nl16",
            "--algo",
            "kangaring",
            "--sizes",
            "1M",
            "--dtype",
            "bf16",
            "--format",
            "json",
        ).out
    )
    row = data["rows"][0]
    assert row["algorithm"] == "multiring" and row["count"] == (1 << 20) // 2 and row["type"] == "bf16"


def test_set_and_alpha_override(cli):
    base = json.loads(
        cli("collective", "allreduce", "--sku", "nl72x2", "--sizes", "8", "--format", "json").out
    )
    fast = json.loads(
        cli(
            "collective",
            "allreduce",
            "--sku",
            "nl72x2",
            "--sizes",
            "8",
            "--alpha-us",
            "0",
            "--set",
            "latency.switch_ns=0",
            "--format",
            "json",
        ).out
    )
    assert fast["rows"][0]["time_us"] < base["rows"][0]["time_us"]


def test_algorithms_lists_the_registry(cli):
    out = cli("collective", "algorithms", "--format", "json").out
    names = {a["name"] for a in json.loads(out)["algorithms"]}
    assert names == {
        "ring",
        "multiring",
        "multidim",
        "torus",
        "rdh",
        "tree",
        "mesh",
        "pairwise",
        "bruck",
        "hierarchical",
        "nvls",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["allreduc", "--sku", "nl16"], "No such command"),
        (
            ["allreduce", "--sku", "nl16", "--algo", "fastest"],
            "--algo 'fastest': not an algorithm; choose one of",
        ),
        (["allreduce", "--sku", "nl72x2", "--algo", "torus"], "does not apply"),
        (["alltoall", "--sku", "nl16", "--algo", "ring"], "does not implement alltoall"),
        (["allreduce", "--sku", "nl16", "--group", "0-99"], "not a chip"),
        (["allreduce", "--sku", "nl16", "--sizes", "12XB"], "not a size"),
        (["allreduce", "--sku", "nl16", "-b", "-5"], "error: -b: size '-5' is negative"),
        (["allreduce", "--sku", "nl16", "-e", "1X"], "error: -e: size '1X' is not a size"),
        (["allreduce", "--sku", "nl16", "--sizes", "1G,-1G"], "error: --sizes: size '-1G' is negative"),
        (["allreduce", "--sku", "nl16", "--sizes", ""], "error: --sizes needs at least one size"),
        (["allreduce", "--sku", "nl16", "--dtype", "float7"], "unknown --dtype"),
        (["allreduce"], "exactly one of --sku"),
        (["allreduce", "--sku", "nl17"], "did you mean"),
        (["allreduce", "--sku", "nl16", "--alpha-us", "nan"], "not a finite number"),
        (["allreduce", "--sku", "nl16", "-f", "inf"], "finite number greater than 1"),
        (["allreduce", "--sku", "nl16", "--sizes", "1K", "-b", "8"], "not both"),
        (["allreduce", "--sku", "nl16", "--ranks", "abc"], "is not a valid int"),
        (["allreduce", "--sku", "nl16", "--format", "xml"], "is not one of"),
        (
            ["alltoall", "--topology", "examples/torus-32x32x32.yaml", "--sizes", "1M"],
            "TRNSIM_MAX_ROUTING",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(cli, args, message):
    result = cli("collective", *args)
    assert result.code == 2
    assert message in result.err
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_explain_adds_chunks_and_busy_link_classes(cli):
    result = cli("collective", "allreduce", "--sku", "nl72x2", "-b", "1G", "-e", "1G", "--explain", "--wide")
    assert result.code == 0
    assert "links busy" in result.out and "xrack" in result.out and "chunks" in result.out
    rows = json.loads(
        cli("collective", "allreduce", "--sku", "nl72x2", "-b", "1G", "-e", "1G", "--format", "json").out
    )
    row = rows["rows"][0]
    assert row["chunks"] > 1 and set(row["link_utilisation"]) == {"pcb", "backplane", "xrack"}


def test_export_schedule_writes_json_and_refuses_a_bad_path(cli, tmp_path):
    target = tmp_path / "schedule.json"
    result = cli(
        "collective", "allgather", "--sku", "nl16", "-b", "1M", "-e", "1M", "--export-schedule", str(target)
    )
    assert result.code == 0
    document = json.loads(target.read_text())
    assert (
        document["format"] == "trnsim-schedule/1"
        and document["algorithm"]
        == json.loads(
            cli("collective", "allgather", "--sku", "nl16", "-b", "1M", "-e", "1M", "--format", "json").out
        )["rows"][-1]["algorithm"]
    )
    bad = cli(
        "collective", "allgather", "--sku", "nl16", "--export-schedule", str(tmp_path / "no" / "x.json")
    )
    assert bad.code == 2 and "--export-schedule" in bad.err and "Traceback" not in bad.err


def test_a_tied_bottleneck_is_one_string_in_json_and_the_same_in_the_table(cli):
    argv = ["collective", "allreduce", "--sku", "nl64", "--sizes", "1G"]
    row = json.loads(cli(*argv, "--format", "json").out)["rows"][0]
    assert isinstance(row["bottleneck"], str) and sorted(row["bottleneck"].split("=")) == sorted(
        row["link_utilisation"]
    )
    (csv_row,) = csv.DictReader(io.StringIO(cli(*argv, "--format", "csv").out))
    assert csv_row["bottleneck"] == row["bottleneck"]


def test_the_header_marks_the_files_assumed_alpha_and_efficiency(cli):
    """nl16's latency and efficiency sources both say assumption: the header says (assumed) after
    each; a value the user gave is not marked."""
    argv = ["collective", "allreduce", "--sku", "nl16", "--sizes", "1G"]
    header = " ".join(cli(*argv).out.split("┏")[0].split())
    assert "alpha 1.5 us/step (assumed)" in header and "of raw rate (assumed; see topo show)" in header
    assert json.loads(cli(*argv, "--format", "json").out)["assumed"] == ["alpha", "efficiency"]
    given = cli(*argv, "--alpha-us", "2", "--set", "efficiency.default=0.9")
    assert "(assumed" not in given.out
    assert json.loads(cli(*argv, "--alpha-us", "2", "--format", "json").out)["assumed"] == ["efficiency"]


def test_alpha_us_says_which_edit_it_overrides(cli):
    argv = ["collective", "allreduce", "--sku", "nl16", "--sizes", "1G", "--format", "json"]
    both = cli(*argv, "--alpha-us", "10", "--set", "latency.step_ns=0")
    assert both.err == "note: --alpha-us 10 overrides --set latency.step_ns=0\n"
    assert json.loads(both.out)["alpha_us"] == 10  # the option wins
    assert cli(*argv, "--alpha-us", "10").err == "" and cli(*argv, "--set", "latency.step_ns=0").err == ""
    variant = cli("compare", "allreduce", "--sku", "nl16:set=latency.step_ns=5", "--sku", "nl64", "--sizes", "1G",
                  "--alpha-us", "10")  # fmt: skip
    assert "note: --alpha-us 10 overrides --set latency.step_ns=5" in variant.err
