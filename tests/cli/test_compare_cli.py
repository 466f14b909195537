"""``trnsim compare``, ``sweep`` and ``plot`` from the command line, with baselines."""

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import CATALOG, topology

NL72X2_GENS = ["--sku", "trn3-nl72x2-gen1", "--sku", "trn3-nl72x2-gen2", "--sku", "trn3-nl72x2-gen3"]
SIZES = ["--sizes", "64K,1M,1G"]


def _json(result):
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_compare_ratios_match_collective(cli):
    data = _json(cli("compare", "alltoall", *NL72X2_GENS, *SIZES, "--format", "json"))
    labels = [v["label"] for v in data["variants"]]
    assert labels == ["trn3-nl72x2-gen1", "trn3-nl72x2-gen2", "trn3-nl72x2-gen3"]
    for label in labels:
        single = _json(cli("collective", "alltoall", "--sku", label, *SIZES, "--format", "json"))
        for row, alone in zip(data["rows"], single["rows"], strict=True):
            assert row["values"][label]["busbw_gbps"] == alone["busbw_gbps"]
            first = row["values"][labels[0]]["busbw_gbps"]
            assert row["ratios"][label] == pytest.approx(alone["busbw_gbps"] / first, rel=1e-12)


def test_compare_names_the_algorithm_of_every_value(cli):
    """Each variant's number comes from its own algorithm (NVL72's from nvls): the table, Markdown
    and CSV say which, as the JSON does."""
    argv = ["compare", "allreduce", "--sku", "nl72x2", "--sku", "nvl72", "--sizes", "1M,1G"]
    data = _json(cli(*argv, "--format", "json"))
    labels = [v["label"] for v in data["variants"]]
    expected = [[row["values"][label]["algorithm"] for label in labels] for row in data["rows"]]
    assert len({name for names in expected for name in names}) > 1  # not one name everywhere
    rows = list(csv.DictReader(io.StringIO(cli(*argv, "--format", "csv").out)))
    assert [[row["A_algorithm"], row["B_algorithm"]] for row in rows] == expected
    markdown = cli(*argv, "--format", "markdown").out
    header = next(line for line in markdown.splitlines() if line.startswith("| size"))
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()]
    names = [cell.strip() for cell in header.strip("|").split("|")]
    body = [row for row in cells if row and row[0].isdigit()]
    assert [[row[names.index("A algo")], row[names.index("B algo")]] for row in body] == expected
    table = cli(*argv).out  # 80 columns: both algorithms shown
    for names_of_row in expected:
        assert all(name in table for name in names_of_row)


def test_compare_what_if_of_one_sku(cli):
    data = _json(
        cli(
            "compare",
            "allreduce",
            "--sku",
            "nl72x2",
            "--sku",
            "nl72x2:set=latency.switch_ns=50",
            "--sizes",
            "8",
            "--metric",
            "time",
            "--runtime",
            "ideal",  # the fabric's switch latency: the ideal's (a runtime has its own per-call cost)
            "--format",
            "json",
        )
    )
    assert [v["label"] for v in data["variants"]] == [
        "trn3-nl72x2-gen1",
        "trn3-nl72x2-gen1 [latency.switch_ns=50]",
    ]
    assert data["rows"][0]["ratios"]["trn3-nl72x2-gen1 [latency.switch_ns=50]"] < 1  # faster switches


def test_compare_markdown_is_a_pull_request_table(cli):
    out = cli("compare", "alltoall", *NL72X2_GENS, *SIZES, "--format", "markdown").out
    assert "| size (B) | A busbw (GB/s) |" in out and "C/A" in out and "C = trn3-nl72x2-gen3" in out


def test_baseline_round_trip_and_regression(cli, tmp_path):
    base = tmp_path / "base.json"
    assert cli("compare", "alltoall", *NL72X2_GENS, *SIZES, "--save-baseline", str(base)).code == 0
    saved = json.loads(base.read_text())
    assert saved["schema"] == "trnsim/1" and saved["trnsim_version"]
    assert all(len(v["sha256"]) == 64 and v["file"].startswith("topologies/") for v in saved["variants"])
    same = cli("compare", "alltoall", *NL72X2_GENS, *SIZES, "--baseline", str(base), "--max-regression", "5%")
    assert same.code == 0, same.err
    slower = cli(
        "compare",
        "alltoall",
        *NL72X2_GENS,
        *SIZES,
        "--set",
        "switched.cross_rack.lanes=8",
        "--baseline",
        str(base),
        "--max-regression",
        "5%",
    )
    assert slower.code == 1
    assert "REGRESSION trn3-nl72x2-gen1 alltoall group all algo auto float 1073741824 B" in slower.err
    assert "this run's --set edits (switched.cross_rack.lanes=8) differ" in slower.err
    assert "-50.0%" in slower.err  # half the cross-rack lanes, half the all-to-all busbw at 1 GiB


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"schema": "other/9", "rows": []}', "not a trnsim/1 baseline"),
        ("[1, 2]", "not a trnsim/1 baseline"),
        ('{"schema": "trnsim/1", "kind": "baseline", "rows": [{"x": 1}]}', "rows[0]: missing required key"),
        ('{"schema": "trnsim/1", "kind": "baseline", "rows": 5}', "rows: expected `array`"),
    ],
)
def test_bad_baselines_exit_2(cli, tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--baseline", str(path))
    assert result.code == 2 and message in result.err and "Traceback" not in result.err


def test_sweep_writes_csv_and_json(cli, tmp_path):
    csv_path, json_path = tmp_path / "r.csv", tmp_path / "r.json"
    args = [
        "sweep",
        "--sku",
        "nl16",
        "--sku",
        "nl32x2",
        "--op",
        "allreduce",
        "--op",
        "alltoall",
        "--sizes",
        "1K,1M",
    ]
    assert cli(*args, "-o", str(csv_path)).code == 0
    assert cli(*args, "-o", str(json_path), "--jobs", "2").code == 0
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 2 * 2 * 2
    data = json.loads(json_path.read_text())
    assert data["schema"] == "trnsim/1"
    assert [(r["sku"], r["op"], r["bytes"]) for r in data["rows"]] == [
        (r["sku"], r["op"], int(r["bytes"])) for r in rows
    ]
    assert float(rows[0]["busbw_gbps"]) == pytest.approx(data["rows"][0]["busbw_gbps"])


def test_sweep_refuses_other_extensions(cli, tmp_path):
    assert cli("sweep", "--sku", "nl16", "-o", str(tmp_path / "r.xlsx")).code == 2


def test_plot_png(cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "curve.png"
    result = cli("plot", "alltoall", *NL72X2_GENS, "--sizes", "1K,1M,1G", "-o", str(out))
    assert result.code == 0, result.err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_plot_terminal(cli):
    pytest.importorskip("plotext")
    result = cli("plot", "allreduce", "--sku", "nl16", "--sizes", "1K,1M,1G", "--terminal")
    assert result.code == 0 and "trn2-nl16" in result.out


def test_plot_needs_an_output(cli):
    assert cli("plot", "allreduce", "--sku", "nl16").code == 2


def test_threshold_is_checked_before_the_work(cli, tmp_path):
    base = tmp_path / "b.json"
    cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1K", "--save-baseline", str(base))
    result = cli(
        "compare",
        "alltoall",
        "--sku",
        "nl16",
        "--sizes",
        "1K",
        "--baseline",
        str(base),
        "--max-regression",
        "5",
    )
    assert result.code == 2 and "500%" in result.err and result.out == ""


def test_baseline_rows_with_bad_values_exit_2(cli, tmp_path):
    base = tmp_path / "b.json"
    cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1K", "--save-baseline", str(base))
    data = json.loads(base.read_text())
    data["rows"][0]["busbw_gbps"] = "fast"
    base.write_text(json.dumps(data))
    result = cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1K", "--baseline", str(base))
    assert result.code == 2 and "rows[0].busbw_gbps: expected `float`" in result.err


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "--sku", "nl16", "-o", "/nonexistent/r.csv"],
        ["topo", "export", "nl16", "-o", "/"],
        ["compare", "alltoall", "--sku", "nl16", "--sizes", "1K", "--save-baseline", "/nonexistent/b.json"],
        ["plot", "alltoall", "--sku", "nl16", "-o", "/nonexistent/c.png"],
    ],
)
def test_unwritable_outputs_exit_2_before_any_work(cli, args):
    result = cli(*args)
    assert result.code == 2 and result.out == "" and "internal error" not in result.err


def test_algo_all_is_refused_where_it_cannot_be_shown(cli):
    for command in (
        ["compare", "allreduce", "--sku", "nl16"],
        ["plot", "allreduce", "--sku", "nl16", "--terminal"],
    ):
        result = cli(*command, "--algo", "all", "--sizes", "1K")
        assert result.code == 2 and "--algo all is for trnsim collective" in result.err


def test_sweep_skips_what_does_not_apply_and_expands_all(cli, tmp_path):
    out = tmp_path / "r.csv"
    result = cli(
        "sweep",
        "--sku",
        "nl16",
        "--sku",
        "nl72x2",
        "--op",
        "alltoall",
        "--algo",
        "all",
        "--sizes",
        "1M",
        "--runtime",
        "ideal",  # trnsim's schedules, each as asked
        "-o",
        str(out),
    )
    assert result.code == 0 and "skipped: algorithm ring does not apply to alltoall" in result.err
    algorithms = {row["algorithm"] for row in csv.DictReader(out.open())}
    assert algorithms == {"torus", "mesh", "pairwise", "bruck", "hierarchical"}


def test_compare_names_the_variant_that_fails(cli):
    result = cli(
        "compare", "allreduce", "--sku", "nl16", "--sku", "nl72x2", "--algo", "torus", "--sizes", "1K"
    )
    assert result.code == 2 and "trn3-nl72x2-gen1" in result.err


def test_sweep_baselines_save_and_check(cli, tmp_path):
    base = tmp_path / "sweep.json"
    args = ["sweep", "--sku", "nl16", "--op", "allreduce", "--sizes", "1K,1M"]
    assert cli(*args, "--save-baseline", str(base), "--format", "json").code == 0
    saved = json.loads(base.read_text())
    assert saved["variants"][0]["sha256"] and saved["variants"][0]["file"] == "topologies/trn2-nl16.yaml"
    same = cli(*args, "--baseline", str(base), "--format", "json")
    assert same.code == 0, same.err
    worse = cli(*args, "--set", "torus.axes.x.lanes=8", "--baseline", str(base), "--format", "json")
    assert (
        worse.code == 1 and "REGRESSION trn2-nl16 allreduce group all algo auto float 1048576 B" in worse.err
    )


def test_baseline_rows_match_on_group_and_report_one_sided_rows(cli, tmp_path):
    base = tmp_path / "b.json"
    cli("compare", "allreduce", "--sku", "nl16", "--sizes", "1K,1M", "--save-baseline", str(base))
    # a 2-rank run with alpha 0 is a different row, not a 74.7% regression of the 16-rank one
    other = cli(
        "compare",
        "allreduce",
        "--sku",
        "nl16",
        "--sizes",
        "1K,1M",
        "--ranks",
        "2",
        "--alpha-us",
        "0",
        "--baseline",
        str(base),
    )
    assert other.code == 2 and "no row of this run matches the baseline" in other.err
    partly = cli("compare", "allreduce", "--sku", "nl16", "--sizes", "1M,1G", "--baseline", str(base))
    assert partly.code == 0
    assert (
        "1 row of the baseline not produced by this run, not checked; --require-all-rows fails on them: "
        "trn2-nl16 allreduce group all algo auto float 1024 B" in partly.err
    )
    assert "1 row of this run not in the baseline, not checked" in partly.err


def test_require_all_rows_fails_on_baseline_rows_the_run_does_not_produce(cli, tmp_path):
    from trnsim.studies.baseline import describe_key, row_key

    base = tmp_path / "b.json"
    both = ["compare", "allreduce", "--sku", "nl16", "--sku", "nl64"]
    assert cli(*both, "--sizes", "1K,64K,1M,1G", "--save-baseline", str(base)).code == 0
    rows = {row_key(row) for row in json.loads(base.read_text())["rows"]}
    # another size range and one variant fewer: the baseline's other rows are not produced
    run = ["compare", "allreduce", "--sku", "nl16", "--sizes", "1M,1G,4G", "--baseline", str(base)]
    produced = {key for key in rows if key[0] == "trn2-nl16" and key[-1] in (2**20, 2**30)}
    missing = rows - produced
    lenient = cli(*run)
    assert lenient.code == 0, lenient.err
    assert f"{len(missing)} rows of the baseline not produced by this run, not checked" in lenient.err
    assert "1 row of this run not in the baseline" in lenient.err  # 4 GiB
    strict = cli(*run, "--require-all-rows")
    assert strict.code == 1 and "trn2-nl16" in strict.out  # the table is still printed
    (failure,) = [line for line in strict.err.splitlines() if line.startswith("regression:")]
    assert f"regression: {len(missing)} rows of the baseline not produced by this run" in failure
    assert "--require-all-rows" in failure
    shown = [key for key in missing if describe_key(key) in failure]
    assert len(shown) == min(5, len(missing)) and f"and {len(missing) - 5} more" in failure
    # every row of the baseline produced (new rows are only listed): the gate passes
    whole = cli(*both, "--sizes", "1K,64K,1M,1G,4G", "--baseline", str(base), "--require-all-rows")
    assert whole.code == 0, whole.err


def test_require_all_rows_on_a_sweep(cli, tmp_path):
    base = tmp_path / "sweep.json"
    args = ["sweep", "--sku", "nl16", "--sizes", "1M"]
    assert cli(*args, "--op", "allreduce", "--op", "alltoall", "--save-baseline", str(base)).code == 0
    fewer = cli(*args, "--op", "allreduce", "--baseline", str(base), "--require-all-rows")
    assert (
        fewer.code == 1 and "1 row of the baseline not produced by this run (--require-all-rows)" in fewer.err
    )
    assert "alltoall" in fewer.err.splitlines()[-1]


def test_every_output_names_the_edits(cli):
    edit = "latency.switch_ns=50"
    table = cli("collective", "allreduce", "--sku", "nl72x2", "--sizes", "1M", "--set", edit)
    assert f"with --set {edit}" in " ".join(table.out.split())  # the header wraps at 80 columns
    data = json.loads(
        cli(
            "collective", "allreduce", "--sku", "nl72x2", "--sizes", "1M", "--set", edit, "--format", "json"
        ).out
    )
    assert data["overrides"] == [edit] and data["variant"] == f"trn3-nl72x2-gen1 [{edit}]"
    csv_text = cli(
        "collective", "allreduce", "--sku", "nl72x2", "--sizes", "1M", "--set", edit, "--format", "csv"
    ).out
    assert next(csv.DictReader(io.StringIO(csv_text)))["variant"] == f"trn3-nl72x2-gen1 [{edit}]"
    compare_csv = cli(
        "compare",
        "allreduce",
        "--sku",
        "nl16",
        "--sizes",
        "1M",
        "--set",
        "torus.axes.x.lanes=8",
        "--format",
        "csv",
    ).out
    assert (
        next(csv.DictReader(io.StringIO(compare_csv)))["A_variant"]
        == "trn2-nl16 with --set torus.axes.x.lanes=8"
    )
    compare_table = cli(
        "compare", "allreduce", "--sku", "nl16", "--sizes", "1M", "--set", "torus.axes.x.lanes=8"
    ).out
    assert "every variant with --set torus.axes.x.lanes=8" in " ".join(compare_table.split())
    sweep_csv = cli(
        "sweep",
        "--sku",
        "nl16",
        "--op",
        "allreduce",
        "--sizes",
        "1M",
        "--set",
        "torus.axes.x.lanes=8",
        "--format",
        "csv",
    ).out
    assert next(csv.DictReader(io.StringIO(sweep_csv)))["overrides"] == "torus.axes.x.lanes=8"


def test_what_if_labels_keep_their_brackets_in_every_format(cli):
    for fmt in ("table", "markdown", "csv"):
        out = cli(
            "compare",
            "allreduce",
            "--sku",
            "nl16:set=torus.axes.x.lanes=16",
            "--sizes",
            "1M",
            "--format",
            fmt,
        ).out
        assert "[torus.axes.x.lanes=16]" in out.replace("\\[", "[").replace("\\]", "]").replace("\\_", "_"), (
            fmt
        )


def test_sweep_table_is_formatted(cli):
    out = cli("sweep", "--sku", "nl16", "--op", "allreduce", "--sizes", "1M", "--wide").out
    assert "busbw (GB/s)" in out and "time (us)" in out and "busbw_gbps" not in out
    assert not any(
        len(cell) > 12 and cell.replace(".", "").isdigit() for cell in out.split()
    )  # no raw floats


def test_baseline_problems_are_found_before_the_work(cli, tmp_path):
    missing = cli(
        "compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--baseline", str(tmp_path / "no.json")
    )
    assert missing.code == 2 and missing.out == "" and "no such file" in missing.err
    base = tmp_path / "b.json"
    cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--save-baseline", str(base))
    same = cli(
        "compare",
        "alltoall",
        "--sku",
        "nl16",
        "--sizes",
        "1M",
        "--save-baseline",
        str(base),
        "--baseline",
        str(base),
    )
    assert same.code == 2 and same.out == "" and f"is the same file as --baseline {base}" in same.err


def test_spellings_of_dtype_group_and_algo_match_the_baseline(cli, tmp_path):
    base = tmp_path / "b.json"
    cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--save-baseline", str(base))
    loud = cli(
        "compare",
        "ALLTOALL",
        "--sku",
        "NL16",
        "--sizes",
        "1M",
        "--dtype",
        "FLOAT",
        "--group",
        "ALL",
        "--algo",
        "AUTO",
        "--baseline",
        str(base),
    )
    assert loud.code == 0 and "4 rows compared" not in loud.err and "1 rows compared" in loud.err


def test_a_sweep_where_nothing_applies_says_why_in_one_line(cli):
    result = cli("sweep", "--sku", "nl16", "--algo", "ring", "--op", "alltoall", "--sizes", "1M")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "ring does not" in result.err


def test_sweep_all_keeps_the_files_named_beside_it(cli, tmp_path):
    # a file of its own beside the catalog (nl16 renamed: any file will do, and a small one is quick)
    beside = tmp_path / "beside.yaml"
    text = next(path for path in CATALOG if path.stem == "trn2-nl16").read_text()
    beside.write_text(text.replace("name: trn2-nl16", "name: beside-the-catalog", 1))
    result = cli(
        "sweep",
        "--sku",
        "all",
        "--topology",
        str(beside),
        "--op",
        "allreduce",
        "--sizes",
        "1M",
        "--format",
        "json",
    )
    variants = {row["variant"] for row in json.loads(result.out)["rows"]}
    assert "beside-the-catalog" in variants and "trn3-nl72x2-gen1" in variants
    assert len(variants) == len(CATALOG) + 1


def test_a_bad_threshold_is_refused_without_a_baseline(cli):
    result = cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--max-regression", "garbage")
    assert (
        result.code == 2
        and result.out == ""
        and "--max-regression 'garbage' is not a percentage" in result.err
    )
    for bad in ("nan", "-1%"):  # the message names the option (it said 'threshold')
        refused = cli("compare", "alltoall", "--sku", "nl16", "--sizes", "1M", "--max-regression", bad)
        assert refused.code == 2 and refused.err.startswith(
            f"error: --max-regression {bad!r} must be a finite"
        )


def test_chunk_limits_are_part_of_a_baseline_row(cli, tmp_path):
    base = tmp_path / "base.json"
    common = ("compare", "allreduce", "--sku", "nl72x2", "--sizes", "1G", "--runtime", "ideal")
    assert cli(*common, "--max-chunks", "1", "--save-baseline", str(base)).code == 0
    other = cli(*common, "--baseline", str(base))
    assert other.code == 2 and "max-chunks 1" in other.err
    assert cli(*common, "--max-chunks", "1", "--baseline", str(base)).code == 0
    # one chunk leaves link classes idle while others work: a real difference, not noise
    saved = json.loads(base.read_text())["rows"][0]
    full = json.loads(cli(*common, "--format", "json").out)["rows"][0]["values"]
    assert saved["busbw_gbps"] < 0.97 * next(iter(full.values()))["busbw_gbps"]


def test_groups_on_compare_and_sweep_match_collective(cli, tmp_path):
    import json

    common = ("--groups", "tray:*", "--sizes", "1M,1G", "--format", "json")
    alone = json.loads(cli("collective", "allreduce", "--sku", "nl72x2", *common).out)["rows"]
    compared = cli("compare", "allreduce", "--sku", "nl72x2", "--sku", "nl32x2", *common)
    assert compared.code == 0, compared.err
    document = json.loads(compared.out)
    assert document["group"] == "groups tray:*"
    times = [row["values"]["trn3-nl72x2-gen1"]["time_us"] for row in document["rows"]]
    assert times == pytest.approx([row["time_us"] for row in alone], rel=1e-12)
    swept = cli("sweep", "--sku", "nl72x2", "--op", "allreduce", *common)
    assert swept.code == 0, swept.err
    rows = json.loads(swept.out)["rows"]
    assert [row["time_us"] for row in rows] == pytest.approx(times, rel=1e-12)
    assert {row["group"] for row in rows} == {"groups tray:*"} and rows[0]["groups"] == 36
    # the groups are part of a baseline row's identity: a single-group run does not match it
    saved = tmp_path / "b.json"
    assert cli("compare", "allreduce", "--sku", "nl72x2", *common, "--save-baseline", str(saved)).code == 0
    assert cli("compare", "allreduce", "--sku", "nl72x2", *common, "--baseline", str(saved)).code == 0
    # several groups are the ideal's: a single group under the same runtime finds no row
    plain = cli(
        "compare",
        "allreduce",
        "--sku",
        "nl72x2",
        "--sizes",
        "1M,1G",
        "--runtime",
        "ideal",
        "--baseline",
        str(saved),
    )
    assert plain.code == 2 and "no row of this run matches" in plain.err
    both = cli("compare", "allreduce", "--sku", "nl72x2", "--groups", "tray:*", "--group", "rack:0")
    assert both.code == 2 and "not both" in both.err


def test_heatmaps_per_variant_and_the_html_report(cli, tmp_path):
    pytest.importorskip("matplotlib")
    heat = tmp_path / "heat.png"
    result = cli(
        "compare", "alltoall", "--sku", "nl16", "--sku", "nl64", "--sizes", "1G", "--heatmap", str(heat)
    )
    assert result.code == 0, result.err
    assert (tmp_path / "heat-A.png").stat().st_size > 10_000 and (
        tmp_path / "heat-B.png"
    ).stat().st_size > 10_000
    assert "mesh at 1 GiB" in result.err
    grouped = cli("compare", "allreduce", "--sku", "nl64", "--groups", "rows", "--heatmap", str(heat))
    assert grouped.code == 2 and "--groups is not drawn" in grouped.err
    report = tmp_path / "r.html"
    done = cli("report", "allreduce", "--sku", "nl16", "--sku", "nl16:set=latency.step_ns=3000",
               "--sizes", "1K,1G", "--runtime", "ideal", "-o", str(report), "--title", "<b>mine</b>")  # fmt: skip
    assert done.code == 0, done.err
    text = report.read_text()
    assert text.startswith("<!DOCTYPE html>") and "&lt;b&gt;mine&lt;/b&gt;" in text and "<b>mine" not in text
    assert text.count("<svg") == 5 and text.count("<table>") == 3
    side = text.split("Side by side")[1].split("</table>")[0]
    ratios = [float(cell) for cell in re.findall(r"<td>([0-9.]+)x</td>", side)]
    # a slower alpha costs most at 1 KiB and little at 1 GiB
    assert "<th>B/A</th>" in side and len(ratios) == 2 and ratios[0] < 0.7 < 0.99 < ratios[1] < 1.0
    wrong = cli("report", "allreduce", "--sku", "nl16", "-o", str(tmp_path / "r.txt"))
    assert wrong.code == 2 and "give an .html file" in wrong.err


def test_collective_heatmap(cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "h.svg"
    result = cli(
        "collective", "allreduce", "--sku", "nl72x2", "--algo", "ring", "--sizes", "1G", "--heatmap", str(out)
    )
    assert result.code == 0 and "ring at 1 GiB" in result.err
    assert out.read_text().count("<path") > 300
    grouped = cli("collective", "allreduce", "--sku", "nl64", "--groups", "rows", "--heatmap", str(out))
    assert grouped.code == 2 and "--groups is not drawn" in grouped.err


def test_one_run_is_one_run(cli, tmp_path):
    argv = ["sweep", "--sku", "nl16", "--op", "allreduce", "--sizes", "1M"]
    assert cli(*argv).out.startswith("sweep: 1 run\n")
    written = cli(*argv, "-o", str(tmp_path / "s.csv"))
    assert written.err == f"wrote 1 row (1 run) to {tmp_path / 's.csv'}\n"


H100_B200 = ["--sku", "hgx-h100", "--sku", "hgx-b200"]


def test_compare_under_a_runtime_shows_its_numbers_with_the_ideals_beside(cli):
    """Each variant's values are what `collective --runtime nccl` gives it alone; the ideal's beside
    are the `--runtime ideal` comparison's values."""
    priced = _json(cli("compare", "allreduce", *H100_B200, *SIZES, "--runtime", "nccl", "--format", "json"))
    ideal = _json(cli("compare", "allreduce", *H100_B200, *SIZES, "--runtime", "ideal", "--format", "json"))
    assert [v["runtime"] for v in priced["variants"]] == ["nccl", "nccl"]
    assert all("runtime" not in v for v in ideal["variants"])
    for label in ("hgx-h100", "hgx-b200"):
        alone = _json(
            cli("collective", "allreduce", "--sku", label, *SIZES, "--runtime", "nccl", "--format", "json")
        )
        for row, one, bare in zip(priced["rows"], alone["rows"], ideal["rows"], strict=True):
            values = row["values"][label]
            assert (values["busbw_gbps"], values["algorithm"]) == (one["busbw_gbps"], one["algorithm"])
            assert values["ideal_busbw_gbps"] == bare["values"][label]["busbw_gbps"]
            assert values["ideal_algorithm"] == bare["values"][label]["algorithm"]
    table = cli("compare", "allreduce", *H100_B200, *SIZES, "--runtime", "nccl", "--wide")
    assert "runtime nccl" in table.out.splitlines()[0] + table.out.splitlines()[1]
    assert "A runtime nccl: NCCL" in table.out.replace("\n", " ") and "A ideal busbw" in table.out


def test_compare_without_a_runtime_is_the_files_default_and_ideal_is_unchanged(cli):
    """Every catalog file defaults to a runtime; where that is ideal, --runtime ideal changes no byte."""
    from trnsim.topology import load_topology

    argv = ["compare", "allreduce", "--sku", "nl16", "--sku", "hgx-h100", *SIZES, "--format"]
    if {load_topology(name).spec.runtime.default for name in ("nl16", "hgx-h100")} != {"ideal"}:
        pytest.skip("a file's default runtime is not ideal")
    for fmt in ("json", "csv", "table"):
        assert cli(*argv, fmt).out == cli(*argv, fmt, "--runtime", "ideal").out


def test_compare_under_a_runtime_refuses_what_it_cannot_price(cli):
    for extra, words in (
        (["--sku", "nl16"], "variant nl16: --runtime nccl on trn2-nl16: the file has no runtime.nccl"),
        (["--groups", "server:*"], "several groups at once"),
        (["--runtime", "mpi"], "--runtime 'mpi': expected one of"),
    ):
        runtime = [] if "--runtime" in extra else ["--runtime", "nccl"]
        result = cli("compare", "allreduce", "--sku", "hgx-h100", *extra, *runtime, "--sizes", "1M")
        assert result.code == 2 and words in result.err and len(result.err.strip().splitlines()) == 1


def test_a_baseline_saved_under_one_runtime_refuses_a_check_under_another(cli, tmp_path):
    saved = tmp_path / "b.json"
    argv = ["compare", "allreduce", "--sku", "hgx-h100", "--sizes", "1M,1G"]
    assert cli(*argv, "--runtime", "nccl", "--save-baseline", str(saved)).code == 0
    document = json.loads(saved.read_text())
    assert [v["runtime"] for v in document["variants"]] == ["nccl"]
    same = cli(*argv, "--runtime", "nccl", "--baseline", str(saved))
    assert same.code == 0 and "ok: no row worse" in same.err
    other = cli(*argv, "--runtime", "ideal", "--baseline", str(saved))
    assert other.code == 2 and len(other.err.strip().splitlines()) == 1
    assert "saved under runtime nccl and this run models ideal: run with --runtime nccl" in other.err
    ideal_saved = tmp_path / "ideal.json"
    assert cli(*argv, "--runtime", "ideal", "--save-baseline", str(ideal_saved)).code == 0
    assert cli(*argv, "--runtime", "nccl", "--baseline", str(ideal_saved)).code == 2


def test_sweep_under_a_runtime_skips_what_it_cannot_price_and_keeps_columns_uniform(cli, tmp_path):
    argv = ["sweep", "--sku", "hgx-h100", "--sku", "nl16", "--op", "allreduce", "--sizes", "1M,1G"]
    result = cli(*argv, "--runtime", "nccl", "--format", "csv")
    assert result.code == 0 and "skipped: --runtime nccl on trn2-nl16" in result.err
    rows = list(csv.DictReader(io.StringIO(result.out)))
    assert {row["variant"] for row in rows} == {"hgx-h100"} and {row["runtime"] for row in rows} == {"nccl"}
    ideal = list(csv.DictReader(io.StringIO(cli(*argv, "--runtime", "ideal", "--format", "csv").out)))
    h100 = [row for row in ideal if row["variant"] == "hgx-h100"]
    assert [row["ideal_busbw_gbps"] for row in rows] == [row["busbw_gbps"] for row in h100]
    assert "runtime" not in ideal[0]
    # a sweep mixing a runtime's rows and the ideal's: every row has the same columns
    path = tmp_path / "own.yaml"
    spec = yaml.safe_load(Path("topologies/hgx-h100.yaml").read_text())
    spec.update(name="h100-own", aliases=[])
    spec["runtime"]["default"] = "nccl"
    path.write_text(yaml.safe_dump(spec))
    mixed = cli(
        "sweep",
        "--topology",
        str(path),
        "--sku",
        "ualink-72",  # the one catalog file whose default is ideal
        "--op",
        "allreduce",
        "--sizes",
        "1M",
        "--format",
        "json",
    )
    assert topology("ualink-72").spec.runtime.default == "ideal"
    rows = _json(mixed)["rows"]
    assert [row["runtime"] for row in rows] == ["nccl", "ideal"]
    assert list(rows[0]) == list(rows[1]) and rows[1]["ideal_busbw_gbps"] == rows[1]["busbw_gbps"]


def test_plot_and_report_name_the_runtime(cli, tmp_path):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "c.svg"
    assert (
        cli(
            "plot", "allreduce", "--sku", "hgx-h100", "--runtime", "nccl", "--sizes", "1M,1G", "-o", str(svg)
        ).code
        == 0
    )
    text = svg.read_text()
    assert "runtime nccl" in text and "hgx-h100 (nccl)" in text and "hgx-h100 (ideal)" in text
    html = tmp_path / "r.html"
    result = cli("report", "allreduce", *H100_B200, "--runtime", "nccl", "--sizes", "1M,1G", "-o", str(html))
    assert result.code == 0
    assert "A runtime nccl: NCCL" in html.read_text() and "B runtime nccl: NCCL" in html.read_text()
