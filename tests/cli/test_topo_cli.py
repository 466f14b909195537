"""``trnsim topo``: output contract, exit codes and clean errors."""

import json
import re
import subprocess
import sys

import pytest
from conftest import CATALOG


def test_list_shows_every_sku(cli):
    result = cli("topo", "list", "--format", "json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["schema"] == "trnsim/1"
    assert len(data["skus"]) == len(CATALOG)


def test_show_json_contract(cli):
    data = json.loads(cli("topo", "show", "nl16", "--format", "json").out)
    for key in (
        "name",
        "chips",
        "switches",
        "links",
        "diameter_links",
        "diameter_hops",
        "avg_links",
        "avg_hops",
        "chip_bw_gbps",
        "hop_histogram",
        "link_classes",
    ):
        assert key in data
    assert (data["chips"], data["links"], data["chip_raw_bw_gbps"], data["diameter_links"]) == (
        16,
        32,
        512.0,
        4,
    )
    assert data["chip_bw_gbps"] == pytest.approx(512.0 * 0.88)  # the file's PCIe Gen5 efficiency


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "json"])
def test_every_format_renders(cli, fmt):
    for command in (
        ["topo", "show", "nl32x2"],
        ["topo", "hops", "nl16", "--from", "3"],
        ["topo", "path", "nl72x2", "0", "78"],
        ["topo", "list"],
    ):
        result = cli(*command, "--format", fmt)
        assert result.code == 0, result.err
        assert result.out.strip()


def test_path_json(cli):
    data = json.loads(cli("topo", "path", "nl72x2", "0", "r1.n1.C", "--format", "json").out)
    assert (data["links"], data["hops"], data["dst_rank"]) == (5, 4, 78)
    assert data["path"][0] == "r0.n0.A" and data["path"][-1] == "r1.n1.C"


def test_hops_matrix_csv(cli):
    result = cli("topo", "hops", "nl16", "--matrix", "--distance", "links", "--format", "csv")
    rows = result.out.strip().splitlines()
    assert len(rows) == 17 and rows[1].split(",")[1:4] == ["0", "1", "2"]


@pytest.mark.parametrize("fmt", ["graphml", "json", "dot"])
def test_export(cli, fmt, tmp_path):
    out = tmp_path / f"g.{fmt}"
    assert cli("topo", "export", "nl32x2", "--format", fmt, "-o", str(out)).code == 0
    text = out.read_text()
    assert "r0.n0.A" in text


def test_export_json_is_node_link_data(cli, tmp_path):
    import networkx as nx

    out = tmp_path / "g.json"
    cli("topo", "export", "nl16", "--format", "json", "-o", str(out))
    graph = nx.node_link_graph(json.loads(out.read_text()), edges="links")
    assert graph.number_of_nodes() == 16 and graph.number_of_edges() == 32


def test_validate_catalog(cli):
    result = cli("topo", "validate", *map(str, CATALOG))
    assert result.code == 0 and result.out.count("ok") == len(CATALOG)


def test_unknown_sku_exits_2_with_a_suggestion(cli):
    result = cli("topo", "show", "nl72")
    assert result.code == 2
    assert "did you mean" in result.err and "Traceback" not in result.err


def test_bad_chip_exits_2(cli):
    result = cli("topo", "path", "nl16", "0", "99")
    assert result.code == 2 and "ranks are 0..15" in result.err


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_broken_copy_exits_2_without_traceback(path, tmp_path, cli):
    """In-process: the CLI's error path is what is under test (test_debug_shows_the_traceback and
    tests/test_limits.py cover the process itself)."""
    import re

    text = re.sub(r"lane_gbps: ([0-9.]+)\n", r"lane_gbps: -\1\n", path.read_text())
    broken = tmp_path / path.name
    broken.write_text(text)
    result = cli("topo", "validate", str(broken))
    assert result.code == 2
    assert "Traceback" not in result.err
    # the bound itself (> 0, >= 0.001) belongs to trnsim/spec/schema.py
    assert f"{path.name}: chip.lane_gbps: expected `float` >" in result.err.replace("\n", "")


def test_debug_shows_the_traceback(tmp_path):
    process = subprocess.run(
        [sys.executable, "-m", "trnsim", "--debug", "topo", "show", "nope"], capture_output=True, text=True
    )
    assert process.returncode == 2 and "Traceback" in process.stderr


def test_path_takes_a_topology_file(cli):
    data = json.loads(
        cli("topo", "path", "--topology", "topologies/trn2-nl64.yaml", "0", "63", "--format", "json").out
    )
    assert (data["links"], data["src_rank"], data["dst_rank"]) == (3, 0, 63)
    assert cli("topo", "path", "nl72x2", "0").code == 2


NL64 = "topologies/trn2-nl64.yaml"


@pytest.mark.parametrize(
    "command",
    [["show"], ["hops"], ["hops", "--from", "3"], ["export", "--format", "json"]],
    ids=lambda c: " ".join(c),
)
def test_sku_as_option_equals_sku_as_argument(cli, command):
    positional = cli("topo", command[0], "nl16", *command[1:])
    option = cli("topo", command[0], "--sku", "nl16", *command[1:])
    assert positional.code == option.code == 0, option.err
    assert positional.out == option.out


def test_path_with_sku_option_takes_src_dst(cli):
    positional = cli("topo", "path", "nl72x2", "0", "78", "--format", "json")
    option = cli("topo", "path", "--sku", "nl72x2", "0", "78", "--format", "json")
    assert positional.code == option.code == 0, option.err
    assert positional.out == option.out
    assert json.loads(option.out)["dst_rank"] == 78


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "nl16", "--sku", "nl64"], "give the SKU once"),
        (["hops", "nl16", "--sku", "nl16"], "give the SKU once"),
        (["export", "nl16", "--sku", "nl16"], "give the SKU once"),
        (["show", "nl16", "--topology", NL64], "give a SKU or --topology FILE, not both"),
        (["show", "--sku", "nl16", "--topology", NL64], "give a SKU or --topology FILE, not both"),
        (["path", "--sku", "nl16", "--topology", NL64, "0", "1"], "give a SKU or --topology FILE, not both"),
        (["path", "nl16", "0", "1", "--sku", "nl16"], "with --sku NAME give SRC DST only"),
        (["path", "nl16", "0", "1", "--topology", NL64], "with --topology FILE give SRC DST only"),
        (["path", "--sku", "nl16", "0"], "give SKU SRC DST, or SRC DST with --sku NAME or --topology FILE"),
        (["path"], "give SKU SRC DST"),
    ],
)
def test_sku_given_twice_is_one_usage_line(cli, argv, message):
    result = cli("topo", *argv)
    assert result.code == 2
    assert message in result.err and result.err.count("\n") == 1 and "Traceback" not in result.err


@pytest.mark.parametrize("command", ["show", "hops", "export", "path"])
def test_missing_sku_message_names_options_the_command_has(cli, command):
    result = cli("topo", command)
    assert result.code == 2 and result.err.count("\n") == 1
    named = set(re.findall(r"--[a-z][a-z-]*", result.err))
    assert {"--sku", "--topology"} <= named
    help_text = cli("topo", command, "--help").out
    for option in named:
        assert option in help_text, f"{option} is named by `topo {command}` but is not one of its options"


def test_validate_checks_every_file(cli, tmp_path):
    good = str(CATALOG[0])
    bad = tmp_path / "bad.yaml"
    bad.write_text(CATALOG[0].read_text().replace("name: ", "nmae: ", 1))
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    missing = tmp_path / "missing.yaml"
    result = cli("topo", "validate", str(bad), good, str(broken), str(missing), "--format", "json")
    assert result.code == 2
    rows = json.loads(result.out)["files"]
    assert [row["file"] for row in rows] == [str(bad), good, str(broken), str(missing)]
    status = [row["status"] for row in rows]
    assert status[1] == "ok" and all(s != "ok" and "\n" not in s for s in status[:1] + status[2:])
    assert "unknown key `nmae`" in status[0] and "not valid YAML" in status[2] and "no such file" in status[3]
    # one line on stderr per bad file, each naming the file
    lines = result.err.splitlines()
    assert len(lines) == 3 and "Traceback" not in result.err
    assert all(
        line.startswith(f"error: {f}: ") for line, f in zip(lines, (bad, broken, missing), strict=True)
    )
    table = cli("topo", "validate", good, str(broken), "--wide")  # each status on one line
    assert table.code == 2 and "ok" in table.out and "not valid YAML" in table.out


def test_list_json_aliases_are_a_list_like_show(cli):
    skus = json.loads(cli("topo", "list", "--format", "json").out)["skus"]
    nl16 = next(row for row in skus if row["name"] == "trn2-nl16")
    shown = json.loads(cli("topo", "show", "nl16", "--format", "json").out)
    assert nl16["aliases"] == shown["aliases"] == ["nl16", "trn2"]
    assert all(isinstance(row["aliases"], list) for row in skus)
    assert 'trn2-nl16,"nl16, trn2"' in cli("topo", "list", "--format", "csv").out


@pytest.mark.parametrize("fmt", ["GraphML", "DOT", "Json", "ASTRA-SIM"])
def test_export_format_is_case_insensitive(cli, fmt):
    result = cli("topo", "export", "nl16", "--format", fmt)
    assert result.code == 0, result.err
    assert result.out.strip()


def test_set_value_is_not_yaml_1_1(cli):
    result = cli("topo", "show", "nl16", "--set", "torus.axes.x.lanes=0x10")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "torus.axes[0].lanes" in result.err and "expected `int`, got `str`" in result.err
    assert cli("topo", "show", "nl16", "--set", "torus.axes.x.lanes=16").code == 0


def test_from_and_matrix_together_are_refused(cli):
    result = cli("topo", "hops", "nl16", "--from", "0", "--matrix")
    assert result.code == 2 and "not both" in result.err


def test_a_missing_catalog_folder_is_named(cli, monkeypatch):
    monkeypatch.setenv("TRNSIM_CATALOG", "/nonexistent")
    from trnsim.spec import catalog

    catalog._catalog_index.cache_clear()
    result = cli("topo", "list")
    assert result.code == 2 and "TRNSIM_CATALOG='/nonexistent'" in result.err


def test_topo_draw_writes_a_picture_and_refuses_bad_names(cli, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "nl64.svg"
    result = cli("topo", "draw", "nl64", "-o", str(out))
    assert result.code == 0 and "wrote" in result.err and "64 chips" in result.err
    assert out.read_text().count("<path") > 100
    bad = cli("topo", "draw", "nl64", "-o", str(tmp_path / "nl64.txt"))
    assert bad.code == 2 and "give a .png, .svg or .pdf file" in bad.err
    nowhere = cli("topo", "draw", "nl64", "-o", str(tmp_path / "missing" / "x.png"))
    assert nowhere.code == 2 and "does not exist" in nowhere.err


def test_topo_draw_without_matplotlib_says_how_to_install(cli, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it now fails
    result = cli("topo", "draw", "nl16", "-o", str(tmp_path / "x.png"))
    assert result.code == 2 and "pip install '.[plot]'" in result.err


@pytest.mark.parametrize("sku", ["nl72x2", "trn3-nl72x2-gen3", "nl16", "nvl72"])
def test_show_lists_every_latency_and_efficiency_parameter_with_its_basis(cli, sku):
    """README: every assumption is shown by topo show. Each latency field of the schema and each
    efficiency is listed with the file's value, marked an assumption exactly when its section's
    source: says so, and the sources are printed in full within 80 columns."""
    import yaml

    from trnsim.spec.catalog import find_sku
    from trnsim.spec.schema import Latency

    data = json.loads(cli("topo", "show", sku, "--format", "json").out)
    document = yaml.safe_load(find_sku(sku).read_text())
    latency, efficiency = document["latency"], document.get("efficiency", {})
    fields = [name for name in Latency.__struct_fields__ if name != "source"]
    expected = {f"latency.{name}": float(latency.get(name, 0)) for name in fields}
    expected["efficiency.default"] = efficiency.get("default", 1.0)
    expected.update({f"efficiency.classes.{k}": v for k, v in efficiency.get("classes", {}).items()})
    shown = {p["key"]: p for p in data["parameters"]}
    assert {key: p["value"] for key, p in shown.items()} == expected
    for key, p in shown.items():
        source = (latency if key.startswith("latency") else efficiency).get("source", "")
        assert p["source"] == source
        assert p["basis"] == ("assumption" if "assumption" in source.lower() else "cited")
    table = cli("topo", "show", sku).out
    assert max(len(line) for line in table.splitlines()) <= 80
    words = " ".join(table.split())
    for key, p in shown.items():
        assert re.search(rf"{re.escape(key)} .* {p['basis']}", table)
        assert " ".join(p["source"].split()) in words  # the whole source text, wrapped


def test_show_marks_an_edited_parameter_and_names_the_edit(cli):
    data = json.loads(cli("topo", "show", "nl72x2", "--set", "latency.step_ns=0", "--format", "json").out)
    step = next(p for p in data["parameters"] if p["key"] == "latency.step_ns")
    assert (step["value"], step["basis"], step["edit"]) == (0, "edited", "latency.step_ns=0")
    out = cli("topo", "show", "nl72x2", "--set", "latency.step_ns=0").out
    assert "latency.step_ns: edited by 'latency.step_ns=0'" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["nl72x2"],
        ["trn1-nl16"],
        ["nl64", "--fail", "link:x:0"],
        ["nl72x2", "--fail", "switch:r0.n0.sw0", "--distance", "links"],
    ],
)
def test_a_matrix_table_builds_only_its_columns_and_they_are_the_csvs(cli, argv):
    """The table computes only the columns 80 columns can show (distances from those ranks, the
    matrix being symmetric); they equal the CSV's, which holds every column, and the note names the
    rest."""
    import csv
    import io

    full = list(csv.reader(io.StringIO(cli("topo", "hops", *argv, "--matrix", "--format", "csv").out)))
    n = len(full) - 1
    table = cli("topo", "hops", *argv, "--matrix").out
    assert max(len(line) for line in table.splitlines()) <= 80
    lines = [line.strip("│").split("│") for line in table.splitlines() if line.startswith("│")]
    cells = [[cell.strip() for cell in line] for line in lines]
    shown = len(cells[0]) - 1
    assert len(cells) == n and shown < n
    assert cells == [row[: shown + 1] for row in full[1:]]
    note = " ".join(table.split("not shown to fit 80 columns: ")[1].split())
    assert note.startswith(f"ranks {shown} to {n - 1} ({n - shown} columns)")


def test_a_matrix_table_of_4096_ranks_is_quick_and_the_whole_matrix_is_refused(cli, monkeypatch):
    import time

    from conftest import CATALOG

    monkeypatch.chdir(CATALOG[0].parent.parent)
    start = time.perf_counter()
    table = cli("topo", "hops", "--topology", "examples/torus-16x16x16.yaml", "--matrix")
    assert table.code == 0 and "to 4095" in table.out
    assert time.perf_counter() - start < 30  # was over 120 s: every column was built
    for extra in (["--format", "csv"], ["--format", "json"], ["--wide"]):
        start = time.perf_counter()
        refused = cli("topo", "hops", "--topology", "examples/torus-16x16x16.yaml", "--matrix", *extra)
        assert refused.code == 2 and "TRNSIM_MAX_MATRIX_CELLS" in refused.err
        assert "16,777,216 distances" in refused.err and time.perf_counter() - start < 5


def test_path_between_chips_of_several_ranks_runs_between_their_first_ranks(cli):
    data = json.loads(cli("topo", "path", "trn1-nl16", "x0.y0", "x1.y0", "--format", "json").out)
    ranks = json.loads(cli("topo", "path", "trn1-nl16", "x0.y0.c0", "x1.y0.c0", "--format", "json").out)
    assert data == ranks  # the chips' first ranks
    table = cli("topo", "path", "trn1-nl16", "x0.y0", "x1.y0").out
    assert "x0.y0 hosts ranks 0, 1: the path is its first rank's (x0.y0.c0)" in table


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["nl72x2", "-1", "5"],
            "error: SRC '-1': -1 is negative, and ranks count from 0: trn3-nl72x2-gen1 has ranks 0..143",
        ),
        (
            ["nl72x2", "0", "144"],
            "error: DST '144': rank 144 is not a chip of trn3-nl72x2-gen1: ranks are 0..143",
        ),
        (["nl72x2", "0", "5", "--bogus"], "error: No such option: --bogus (see: trnsim topo path --help)"),
    ],
)
def test_path_names_the_end_that_is_not_a_rank(cli, argv, message):
    result = cli("topo", "path", *argv)
    assert (result.code, result.err) == (2, message + "\n")


def test_a_path_from_a_chip_to_itself_is_one_line(cli):
    out = cli("topo", "path", "nl16", "3", "x0.y3").out
    assert out == "trn2-nl16: rank 3 (x0.y3) -> rank 3 (x0.y3): the same chip: 0 links, 0 hops\n"
    data = json.loads(cli("topo", "path", "nl16", "3", "3", "--format", "json").out)
    assert (data["links"], data["hops"], data["path"], data["steps"]) == (0, 0, ["x0.y3"], [])
    assert "2 links, 1 hop (" in cli("topo", "path", "trn1-nl16", "0", "1").out


def test_topo_new_writes_a_file_every_command_takes_and_never_replaces_one_unasked(cli, tmp_path):
    target = tmp_path / "mine.yaml"
    assert cli("topo", "new", "torus", "-o", str(target)).code == 0
    assert cli("topo", "validate", str(target)).code == 0
    first = target.read_text()
    refused = cli("topo", "new", "switched", "-o", str(target))
    assert refused.code == 2 and "exists" in refused.err and target.read_text() == first
    assert cli("topo", "new", "switched", "-o", str(target), "--force").code == 0
    assert "kind: switched" in target.read_text()
    assert cli("collective", "allreduce", "--topology", str(target), "--sizes", "1M").code == 0
    assert cli("topo", "new", "mesh").code == 2


def test_a_file_without_efficiency_says_it_runs_at_raw_rates(cli, tmp_path):
    import yaml

    target = tmp_path / "raw.yaml"
    assert cli("topo", "new", "torus", "-o", str(target)).code == 0
    document = yaml.safe_load(target.read_text())
    del document["efficiency"]
    target.write_text(yaml.safe_dump(document))
    result = cli("collective", "allreduce", "--topology", str(target), "--sizes", "1M")
    assert result.code == 0 and "no efficiency section" in result.err and "raw rate" in result.err
    edited = cli(
        "collective",
        "allreduce",
        "--topology",
        str(target),
        "--sizes",
        "1M",
        "--set",
        "efficiency.default=0.9",
    )
    assert "no efficiency section" not in edited.err
