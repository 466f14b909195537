"""``trnsim collective``: the table contract, JSON keys, and bad input."""

import csv
import functools
import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


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
    # --wide: every column on one line, as nccl-tests prints them (80 columns would leave some out);
    # the engine's own table (a runtime's adds its pick and the ideal's figures, tested below)
    result = cli(
        "collective",
        "allgather",
        "--sku",
        "nl16",
        "-b",
        "1K",
        "-e",
        "1M",
        "-f",
        "4",
        "--wide",
        "--runtime",
        "ideal",
    )
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
            "--runtime",
            "ideal",  # trnsim's schedule as asked; a runtime prices its own pick
            "--format",
            "json",
        ).out
    )
    row = data["rows"][0]
    assert row["algorithm"] == "multiring" and row["count"] == (1 << 20) // 2 and row["type"] == "bf16"


def test_set_and_alpha_override(cli):
    base = json.loads(
        cli(
            "collective",
            "allreduce",
            "--sku",
            "nl72x2",
            "--sizes",
            "8",
            "--runtime",
            "ideal",
            "--format",
            "json",
        ).out
    )
    fast = json.loads(
        cli(
            "collective",
            "allreduce",
            "--sku",
            "nl72x2",
            "--sizes",
            "8",
            "--runtime",
            "ideal",  # the fabric's latency edits: the ideal's (a runtime has its own per-call cost)
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
        "forest",
        "chain",
        "scatter-allgather",
        "scatter-multidim",
        "multipath",
    }


def test_algorithms_lists_the_ops_each_runs(cli):
    # the ops column against the engine: on a complete graph of eight, with a root off rank 0, counts
    # of unequal blocks and of a skewed all-to-allv, an algorithm runs exactly the ops it lists
    import numpy as np

    from trnsim.collectives.arguments import Arguments
    from trnsim.collectives.ops import OPS
    from trnsim.errors import NotApplicableError
    from trnsim.model.engine import evaluate
    from trnsim.topology.synthetic import complete_topology

    listed = {
        a["name"]: a["ops"].split(", ")
        for a in json.loads(cli("collective", "algorithms", "--format", "json").out)["algorithms"]
    }
    assert set(listed["chain"]) == {"broadcast", "reduce"} and "allgatherv" in listed["ring"]
    topology = complete_topology(8)
    counts = {"alltoallv": np.arange(64.0).reshape(8, 8), "allgatherv": np.arange(1.0, 9.0)}
    counts["reducescatterv"] = counts["allgatherv"]
    for name in ("ring", "rdh", "tree", "chain", "scatter-allgather", "mesh", "pairwise", "bruck"):
        for op in OPS:
            arguments = Arguments(root=4 if OPS[op].rooted else 0, counts=counts.get(op))
            try:
                evaluate(
                    topology,
                    op,
                    [1 << 20],
                    topology.chips,
                    algo=name,
                    arguments=arguments,
                    exact_bounds=False,
                )
                runs = True
            except NotApplicableError:
                runs = False
            assert runs == (op in listed[name]), (name, op)


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
        (  # the whole torus is routed by translation (one search); an odd part of it is not
            ["alltoall", "--topology", "examples/torus-32x32x32.yaml", "--sizes", "1M", "--group", "0-16382"],
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
    # the exported schedule is the ideal's (trnsim's), whatever runtime prices the table
    result = cli(
        "collective", "allgather", "--sku", "nl16", "-b", "1M", "-e", "1M", "--export-schedule", str(target)
    )
    assert result.code == 0
    document = json.loads(target.read_text())
    assert (
        document["format"] == "trnsim-schedule/2"
        and document["algorithm"]
        == json.loads(
            cli("collective", "allgather", "--sku", "nl16", "-b", "1M", "-e", "1M", "--format", "json").out
        )["rows"][-1]["ideal_algorithm"]
        == json.loads(
            cli(
                *[
                    "collective",
                    "allgather",
                    "--sku",
                    "nl16",
                    "-b",
                    "1M",
                    "-e",
                    "1M",
                    "--runtime",
                    "ideal",
                    "--format",
                    "json",
                ]
            ).out
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


# --- one run, every format: the same numbers -------------------------------------------------------

# what each column the README documents for `trnsim collective` shows: the JSON row key, and how the
# table and Markdown print it (CSV and JSON carry the number itself)
SHOWN = {
    "size (B)": ("bytes", str),
    "count": ("count", str),
    "type": ("type", str),
    "time (us)": ("time_us", "{:.2f}".format),
    "algbw (GB/s)": ("algbw_gbps", "{:.2f}".format),
    "busbw (GB/s)": ("busbw_gbps", "{:.2f}".format),
    "algorithm": ("algorithm", str),
    "neuron algo": ("algorithm", str),  # a runtime's pick, then the ideal's figures beside it
    "ideal busbw": ("ideal_busbw_gbps", "{:.2f}".format),
    "ideal algo": ("ideal_algorithm", str),
    "bound busbw": ("bound_busbw_gbps", "{:.2f}".format),
    "eff %": ("efficiency", lambda v: f"{100 * v:.1f}"),
    "max hops": ("max_hops", str),
    "bottleneck": ("bottleneck", str),  # ties read x=y, spaced x = y in tables to wrap
}


def readme_header() -> list[str]:
    """The header of the first ``trnsim collective`` table in the README (the documented columns)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    line = next(line for line in text.splitlines() if line.startswith("| size (B) | count |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def _grid(out: str, fmt: str) -> list[list[str]]:
    """A printed table's header and rows as cells (table: Rich's box lines; Markdown: pipes)."""
    if fmt == "markdown":
        lines = [line for line in out.splitlines() if line.startswith("| ")]
        # a cell's Markdown escapes read back as the text (a held pick's "*" is printed "\\*")
        unescape = functools.partial(re.sub, r"\\(.)", r"\1")
        return [[unescape(cell.strip()) for cell in line.strip("|").split(" | ")] for line in lines]
    head = [[c.strip() for c in line.split("┃")[1:-1]] for line in out.splitlines() if line.startswith("┃")]
    body = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    return [[" ".join(filter(None, parts)) for parts in zip(*head, strict=True)], *body]


def _expected_cells(header: list[str], data: dict) -> list[list[str]]:
    """The cells a table should print for the JSON document ``data``, column by column."""
    rows = []
    for i, row in enumerate(data["rows"]):
        cells = []
        for name in header:
            if name.endswith(" busbw") and name not in SHOWN:  # --algo all: one column per algorithm
                cells.append(f"{data['algorithms'][name[: -len(' busbw')]][i]['busbw_gbps']:.2f}")
            elif name == "best":
                cells.append(row["algorithm"])
            else:
                key, show = SHOWN[name]
                cells.append(show(row[key]).replace("=", " = ") if key == "bottleneck" else show(row[key]))
        rows.append(cells)
    return rows


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    sku=st.sampled_from(["nl16", "nl72x2", "trn3-ultraserver-gen1"]),
    op=st.sampled_from(["allreduce", "allgather", "reducescatter", "alltoall"]),
    sizes=st.lists(st.sampled_from(["4K", "64K", "1M", "16M", "1G"]), min_size=1, max_size=3, unique=True),
    algo=st.sampled_from(["auto", "all"]),
)
def test_every_format_carries_the_same_numbers(cli, sku, op, sizes, algo):
    """One run printed as JSON, CSV, Markdown and a table, each parsed back: CSV holds JSON's numbers
    exactly; the table and Markdown print them rounded as their columns say, under the headers the
    README documents, and the same average busbw."""
    # each file's default runtime (neuron on these three; --algo all gives way to the ideal's rows)
    args = ["collective", op, "--sku", sku, "--sizes", ",".join(sizes), "--algo", algo]
    data = json.loads(cli(*args, "--format", "json").out)
    got = {fmt: cli(*args, "--format", fmt, "--wide") for fmt in ("csv", "markdown", "table")}
    assert all(result.code == 0 for result in got.values()), {f: r.err for f, r in got.items()}
    table = list(csv.DictReader(io.StringIO(got["csv"].out)))
    assert len(table) == len(data["rows"])
    for line, row in zip(table, data["rows"], strict=True):
        if algo == "all":
            assert (int(line["bytes"]), line["best"]) == (row["bytes"], row["algorithm"])
            assert float(line["bound_busbw_gbps"]) == row["bound_busbw_gbps"]
            for name, rows in data["algorithms"].items():
                assert float(line[name]) == next(r["busbw_gbps"] for r in rows if r["bytes"] == row["bytes"])
        else:
            for key, value in row.items():
                if key in line:
                    assert (line[key] if isinstance(value, str) else float(line[key])) == value, key
    for fmt in ("markdown", "table"):
        header, *cells = _grid(got[fmt].out, fmt)
        if algo == "auto":
            assert header == readme_header()
        else:
            names = list(data["algorithms"])
            assert header == ["size (B)", *(f"{n} busbw" for n in names), "best", "bound busbw"]
        assert cells == _expected_cells(header, data), fmt
        assert f"Avg bus bandwidth    : {data['avg_busbw_gbps']:.3f} GB/s" in got[fmt].out


def _json(cli, *args):
    result = cli("collective", *args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_the_files_runtime_is_the_default_and_ideal_changes_nothing(cli):
    """hgx-h100 names nccl as its default: no --runtime is --runtime nccl, row for row; --runtime
    ideal is the engine's own evaluation, with no runtime's figures."""
    from tests.conftest import topology
    from trnsim.model.engine import evaluate

    args = ("allreduce", "--sku", "h100", "--sizes", "8,1M,1G")
    default, nccl = _json(cli, *args), _json(cli, *args, "--runtime", "nccl")
    assert topology("hgx-h100").spec.runtime.default == "nccl"
    assert default == nccl and default["runtime"] == "nccl"
    ideal = _json(cli, *args, "--runtime", "ideal")
    assert ideal["runtime"] == "ideal" and ideal["runtime_model"] is None
    assert "ideal_busbw_gbps" not in ideal["rows"][0]
    topo = topology("hgx-h100")
    engine = evaluate(topo, "allreduce", [8, 1 << 20, 1 << 30], topo.chips, algo="auto")
    for row, want in zip(ideal["rows"], engine.rows, strict=True):
        assert (row["time_us"], row["busbw_gbps"], row["algorithm"]) == (
            want.time_us,
            want.busbw_gbps,
            want.algorithm,
        )
    assert [row["ideal_busbw_gbps"] for row in default["rows"]] == [
        row["busbw_gbps"] for row in ideal["rows"]
    ]


def test_runtime_nccl_rows_carry_nccls_pick_and_the_ideal(cli):
    from trnsim.model.runtimes.nccl import predict, single_domain_system
    from trnsim.model.runtimes.nccl_chunking import nvls_fill_us
    from trnsim.spec.catalog import find_sku, read_document

    args = ("allreduce", "--sku", "h100", "--sizes", "8,1M,1G")
    ideal, nccl = _json(cli, *args, "--runtime", "ideal"), _json(cli, *args, "--runtime", "nccl")
    assert nccl["runtime"] == "nccl" and "NCCL 2.30.7" in nccl["runtime_model"]
    # NCCL's system from the file's own numbers: its chip's bandwidth over one NVLink's
    document = read_document(find_sku("h100"))
    chip, facts = document["chip"], document["runtime"]["nccl"]
    links = chip["lanes"] * chip["lane_gbps"] / facts["nvlink_gbps"]
    system = single_domain_system(facts["compute_capability"], 8, int(links), nvls=facts["nvls"])
    assert "call_us" not in facts  # default NCCL: its own latency is the per-call cost
    for row, base in zip(nccl["rows"], ideal["rows"], strict=True):
        pick = predict(system, "allreduce", row["bytes"]).pick
        assert row["algorithm"] == f"{pick.algorithm}/{pick.protocol}"
        # NVLS adds its pipeline fill: 16 CTAs x 8 heads on Hopper, two chunk times of a share
        fill = nvls_fill_us(row["bytes"], 16 * 8, pick.model_bw_gbps) if pick.algorithm == "nvls" else 0.0
        time_us = pick.time_us + fill
        assert row["time_us"] == pytest.approx(time_us, rel=1e-9)
        assert row["busbw_gbps"] == pytest.approx(row["bytes"] / (1000 * time_us) * 2 * 7 / 8, rel=1e-9)
        assert row["ideal_busbw_gbps"] == base["busbw_gbps"]
        assert row["ideal_algorithm"] == base["algorithm"]
    assert nccl["avg_busbw_gbps"] == pytest.approx(sum(r["busbw_gbps"] for r in nccl["rows"]) / 3)


def test_runtime_nccl_table_names_the_runtime_and_its_choice(cli):
    result = cli("collective", "allreduce", "--sku", "nvl72", "--runtime", "nccl", "--sizes", "1G", "--wide")
    assert result.code == 0, result.err
    assert "runtime nccl: NCCL 2.30.7's tuner" in result.out
    header = next(line for line in result.out.splitlines() if "nccl algo" in line)
    positions = [header.index(name) for name in ("busbw", "nccl algo", "ideal busbw", "ideal algo")]
    assert positions == sorted(positions)
    assert "nvls/simple" in result.out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--sku", "h100", "--runtime", "mpi"), ["--runtime 'mpi'", "ideal, nccl, neuron, xla"]),
        (("--sku", "nl16", "--runtime", "nccl"), ["--runtime nccl on trn2-nl16", "runtime.nccl"]),
        (("--sku", "h100", "--runtime", "neuron"), ["--runtime neuron on hgx-h100", "runtime.neuron"]),
        (("--sku", "nl16", "--runtime", "xla"), ["--runtime xla on trn2-nl16", "runtime.xla"]),
        (("--sku", "nl16", "--runtime", "neuron", "--ranks-per-chip", "8"), ["4 logical NeuronCores", "lnc"]),
        (
            ("--sku", "nl16", "--ranks-per-chip", "4", "--set", "chip.ranks=2"),
            ["--ranks-per-chip 4", "disagree"],
        ),
        (
            ("--sku", "v5e", "--runtime", "xla", "--group", "0,2"),
            ["--runtime xla on tpu-v5e-16x16", "neighbours"],
        ),
        (("--sku", "h100", "--runtime", "nccl", "--groups", "blocks:4"), ["--runtime nccl", "--groups"]),
        (("--sku", "h100", "--runtime", "nccl", "--algo", "all"), ["--runtime nccl", "--algo all"]),
    ],
)
def test_runtime_refusals_are_one_line_exit_2(cli, args, words):
    result = cli("collective", "allreduce", *args, "--sizes", "1M")
    assert result.code == 2 and not result.out
    assert len(result.err.strip().splitlines()) == 1
    for word in words:
        assert word in result.err


def test_ranks_per_chip_is_chip_ranks(cli):
    # one meaning: --ranks-per-chip N and --set chip.ranks=N give the same run
    args = ("allreduce", "--sku", "trn2", "--ranks", "16", "--sizes", "1M,64M")
    flag, edit = _json(cli, *args, "--ranks-per-chip", "4"), _json(cli, *args, "--set", "chip.ranks=4")
    assert flag["rows"] == edit["rows"]
    assert flag["ranks"] == 16 and flag["rows"][0]["busbw_gbps"] > 0


def test_runtime_neuron_names_the_documented_algorithm_by_size(cli):
    # intranode-collective-comm.rst: Mesh < 1 MiB, RDH 1-56 MiB, KangaRing above, at 64 ranks; a
    # 16-rank group applies them per rank (ranges / 4), as nccom-test's 16-rank example shows
    sizes = {
        128 << 10: "mesh",
        (256 << 10) - 4: "mesh",
        256 << 10: "rdh",
        14 << 20: "rdh",
        (14 << 20) + 4: "kangaring",
    }
    text = ",".join(str(size) for size in sizes)
    args = ("allreduce", "--sku", "trn2", "--runtime", "neuron", "--ranks-per-chip", "4", "--ranks", "16")
    neuron = _json(cli, *args, "--sizes", text)
    ideal = _json(cli, *args, "--sizes", text, "--runtime", "ideal")
    assert neuron["runtime"] == "neuron" and "4 chips x 4 ranks" in neuron["runtime_model"]
    for row, base in zip(neuron["rows"], ideal["rows"], strict=True):
        assert row["algorithm"] == sizes[row["bytes"]]
        assert row["ideal_busbw_gbps"] == base["busbw_gbps"]
        assert row["busbw_gbps"] == pytest.approx(row["bytes"] / (1000 * row["time_us"]) * 2 * 15 / 16)


def test_runtime_xla_on_a_ring_is_the_scaling_books_formula(cli):
    # the first 16 chips of v5e's 16x16 are one whole (wrapping) axis: an all-gather of S moves 15/16 of
    # it over both directions of 45 GB/s links at 95%, after 2 us of call; 8 hops of 1 us overlap it
    size = 10 << 20
    out = _json(cli, "allgather", "--sku", "v5e", "--runtime", "xla", "--ranks", "16", "--sizes", str(size))
    row = out["rows"][0]
    assert row["algorithm"] == "ring"
    assert row["time_us"] == pytest.approx(2.0 + size * 15 / 16 / (2 * 45e3 * 0.95))


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("--sku", "nl16", "--ranks-per-chip", "8"), "more than its 4 logical NeuronCores"),
        (("--sku", "h100", "--algo", "all"), "--algo all"),
        (("--sku", "nl16", "--groups", "blocks:4"), "several at once"),
    ],
)
def test_a_default_runtime_that_cannot_model_the_run_gives_way_to_the_ideal_with_one_note(cli, args, why):
    """No --runtime: the file's default prices what it can; what it cannot is the ideal's, said in one
    plain line on stderr (no placeholder left in it); the numbers are --runtime ideal's."""
    argv = ("collective", "allreduce", *args, "--sizes", "1M,1G", "--format", "json")
    given, ideal = cli(*argv), cli(*argv, "--runtime", "ideal")
    assert given.code == 0 and ideal.code == 0 and ideal.err == ""
    assert given.err.startswith("note: ") and given.err.count("\n") == 1, given.err
    assert "default runtime" in given.err and why in given.err and "{" not in given.err
    assert json.loads(given.out) == json.loads(ideal.out)


def test_an_inexact_allreduce_bound_says_where_the_optimum_lies(cli):
    # one chip of rack 1 with ten of rack 0, the racks joined by one lane per cable: the all-reduce
    # bound is injection, which reduce-scatter then all-gather at their optima do not reach
    args = ["--sku", "nl72x2", "--set", "switched.cross_rack.lanes=1", "--group", "0-9,72", "--sizes", "1G"]
    reduce = _json(cli, "allreduce", *args, "--runtime", "ideal")
    gather = _json(cli, "allgather", *args, "--runtime", "ideal")
    assert reduce["bound_exact"] is False and gather["bound_exact"] is True
    # with links alike both ways, the two phases take twice the all-gather optimum: busbw 2(p-1)/p
    # over twice the all-gather's time is the all-gather's own busbw at its bound
    achievable = reduce["bound_achievable_busbw_gbps"]
    assert achievable == pytest.approx(gather["rows"][0]["bound_busbw_gbps"], rel=1e-6)
    assert achievable < reduce["rows"][0]["bound_busbw_gbps"]
    text = cli("collective", "allreduce", *args, "--runtime", "ideal", "--wide").out
    assert f"the optimum is between it and {achievable:.1f} GB/s busbw" in " ".join(text.split())
    assert gather["bound_achievable_busbw_gbps"] is None
