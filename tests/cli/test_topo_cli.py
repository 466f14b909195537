"""``trnsim topo``: output contract, exit codes and clean errors."""

import json
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
    assert (data["chips"], data["links"], data["chip_bw_gbps"], data["diameter_links"]) == (16, 32, 512.0, 4)


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
    result = cli("topo", "hops", "nl16", "--matrix", "--metric", "links", "--format", "csv")
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
def test_broken_copy_exits_2_without_traceback(path, tmp_path):
    text = path.read_text().replace("lane_gbps: 8", "lane_gbps: -8").replace("lane_gbps: 4", "lane_gbps: -4")
    broken = tmp_path / path.name
    broken.write_text(text)
    process = subprocess.run(
        [sys.executable, "-m", "trnsim", "topo", "validate", str(broken)], capture_output=True, text=True
    )
    assert process.returncode == 2
    assert "Traceback" not in process.stderr
    assert f"{path.name}: chip.lane_gbps: expected `float` > 0" in process.stderr.replace("\n", "")


def test_debug_shows_the_traceback(tmp_path):
    process = subprocess.run(
        [sys.executable, "-m", "trnsim", "--debug", "topo", "show", "nope"], capture_output=True, text=True
    )
    assert process.returncode != 0 and "Traceback" in process.stderr


def test_path_takes_a_topology_file(cli):
    data = json.loads(
        cli("topo", "path", "--topology", "topologies/trn2-nl64.yaml", "0", "63", "--format", "json").out
    )
    assert (data["links"], data["src_rank"], data["dst_rank"]) == (3, 0, 63)
    assert cli("topo", "path", "nl72x2", "0").code == 2
