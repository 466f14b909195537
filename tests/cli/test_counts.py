"""One definition of chips, ranks and switches: every command, every output format, every catalog
system, against counts taken from the YAML files' own numbers (not from trnsim)."""

import csv
import io
import json
import math
import re

import pytest
import yaml
from conftest import CATALOG

FORMATS = ("table", "json", "csv", "markdown")


@pytest.fixture(autouse=True)
def _wide_tables(monkeypatch):
    """Every column of every table: the counts are read from the text (tables fit 80 columns by default)."""
    monkeypatch.setenv("COLUMNS", "1000")


def expected(path) -> dict:
    """Chips, ranks and switches from the file itself: a torus's axes multiplied out; a switched
    fabric's racks x nodes x slots, its plane switches per rack and its on-node switches."""
    doc = yaml.safe_load(path.read_text())
    per_chip = doc["chip"].get("ranks", 1)
    if doc["kind"] == "torus":
        chips = math.prod(axis["size"] for axis in doc["torus"]["axes"])
        return {"chips": chips, "ranks": chips * per_chip, "switches": 0, "plane_switches": 0}
    layout = doc["switched"]
    nodes = layout["racks"] * layout["nodes_per_rack"]
    fabric, local = layout.get("switch_fabric"), layout.get("node_local")
    plane = layout["racks"] * len(fabric["planes"]) * fabric["switches_per_plane"] if fabric else 0
    on_node = nodes * local.get("switches", 1) if local and local["kind"] == "switches" else 0
    chips = nodes * len(layout["slots"])
    return {"chips": chips, "ranks": chips * per_chip, "switches": plane + on_node, "plane_switches": plane}


def tables(text: str, fmt: str) -> list[dict]:
    """The tables of a table, CSV or Markdown output: each ``{"title", "rows"}``, rows as dicts."""
    out: list[dict] = []
    if fmt == "csv":
        for block in text.strip().split("\n\n"):
            lines = block.splitlines()
            title = lines.pop(0)[2:] if lines[0].startswith("# ") else None
            out.append({"title": title, "rows": list(csv.DictReader(io.StringIO("\n".join(lines))))})
        return out
    title, header = None, None
    for line in text.splitlines():
        if fmt == "markdown":
            if line.startswith("**"):
                title, header = re.sub(r"\\(.)", r"\1", line.strip("*")), None
            elif line.startswith("|"):
                cells = [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", line)[1:-1]]
                if header is None:
                    header = cells
                    out.append({"title": title, "rows": []})
                elif not set("".join(cells)) <= set("-:"):
                    out[-1]["rows"].append(dict(zip(header, cells, strict=True)))
            continue
        if line.startswith("┃"):
            header = [c.strip() for c in line.split("┃")[1:-1]]
            out.append({"title": title, "rows": []})
        elif line.startswith("│"):
            out[-1]["rows"].append(dict(zip(header, [c.strip() for c in line.split("│")[1:-1]], strict=True)))
        elif line and line[0] not in "┏┡└":
            title = line
    return out


def number(text) -> int:
    """``32 (2 per chip)`` -> 32; ``1,296`` -> 1296."""
    return int(str(text).split()[0].replace(",", ""))


def test_the_expected_counts_are_not_trivial():
    """The independent counts exercise what differs: ranks beside chips, switches of both kinds."""
    counts = {path.stem: expected(path) for path in CATALOG}
    assert counts["trn1-nl16"] == {"chips": 16, "ranks": 32, "switches": 0, "plane_switches": 0}
    assert counts["trn3-nl72x2-gen1"]["switches"] == 2 * 4 * 10 + 36 * 8
    assert counts["gb200-nvl72"]["switches"] == 18


@pytest.mark.parametrize("fmt", FORMATS)
def test_topo_list(cli, fmt):
    result = cli("topo", "list", "--format", fmt)
    assert result.code == 0, result.err
    if fmt == "json":
        rows = json.loads(result.out)["skus"]
    else:
        (table,) = tables(result.out, fmt)
        rows = table["rows"]
    by_name = {row["name"]: row for row in rows}
    for path in CATALOG:
        want, row = expected(path), by_name[path.stem]
        assert [number(row[key]) for key in ("chips", "ranks", "switches")] == [
            want["chips"],
            want["ranks"],
            want["switches"],
        ], (path.stem, fmt)


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_topo_show(cli, path):
    want = expected(path)
    data = json.loads(cli("topo", "show", path.stem, "--format", "json").out)
    assert {key: data[key] for key in ("chips", "ranks", "switches")} == {
        key: want[key] for key in ("chips", "ranks", "switches")
    }
    assert data["ranks_per_chip"] * data["chips"] == data["ranks"]
    assert sum(role["count"] for role in data["switch_roles"]) == want["switches"]
    trays = data["trays"]
    if "node" in trays:  # every chip sits in one compute tray (or server)
        assert trays["node"]["count"] * trays["node"]["chips"] == want["chips"]
    if trays.get("switch"):  # every plane switch sits in one switch tray
        assert trays["switch"]["count"] * trays["switch"]["switches"] == want["plane_switches"]
    # hops: between ranks, and between chips where they differ (two on-chip links apart)
    assert data["hops_between"] == ("ranks" if want["ranks"] > want["chips"] else "chips")
    if want["ranks"] > want["chips"]:
        assert data["diameter_links"] == data["chip_hops"]["diameter_links"] + 2
    for fmt in ("table", "csv", "markdown"):
        result = cli("topo", "show", path.stem, "--format", fmt)
        assert result.code == 0, result.err
        shown = tables(result.out, fmt)
        items = {row["property"]: row["value"] for row in shown[0]["rows"]}
        assert number(items["chips"]) == want["chips"], fmt
        assert number(items.get("ranks", items["chips"])) == want["ranks"], fmt
        assert number(items["switches"]) == want["switches"], fmt
        roles = [t for t in shown if t["title"] == "switches by role"]
        assert sum(number(row["count"]) for t in roles for row in t["rows"]) == want["switches"], fmt
        if want["ranks"] > want["chips"]:
            assert {"diameter (between ranks)", "diameter (between chips)"} <= items.keys(), fmt


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_topo_validate_and_export(cli, path, tmp_path):
    want = expected(path)
    keys = ("chips", "ranks", "switches")
    for fmt in FORMATS:
        result = cli("topo", "validate", str(path), "--format", fmt)
        assert result.code == 0, result.err
        if fmt == "json":
            (row,) = json.loads(result.out)["files"]
        else:
            ((row,),) = [t["rows"] for t in tables(result.out, fmt)]
        assert {key: number(row[key]) for key in keys} == {key: want[key] for key in keys}, fmt
    out = tmp_path / "graph.json"
    result = cli("topo", "export", path.stem, "--format", "json", "-o", str(out))
    ranks = f" ({want['ranks']} ranks)" if want["ranks"] > want["chips"] else ""
    assert f"{want['chips']} chips{ranks}, {want['switches']} switches)" in result.err
    nodes = json.loads(out.read_text())["nodes"]
    assert sum(node["kind"] == "chip" for node in nodes) == want["ranks"]
    assert sum(node["kind"] == "switch" and node["role"] != "chip" for node in nodes) == want["switches"]


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_collective_header(cli, path):
    want = expected(path)
    args = ("collective", "allgather", "--sku", path.stem, "--sizes", "64K", "--algo", "ring")
    data = json.loads(cli(*args, "--format", "json").out)
    assert (data["ranks"], data["chips"]) == (want["ranks"], want["chips"])
    on_chips = f" on {want['chips']} chips" if want["ranks"] > want["chips"] else ""
    for fmt in ("table", "markdown"):
        (table,) = tables(cli(*args, "--format", fmt).out, fmt)
        assert f": {want['ranks']} ranks{on_chips} (group all)" in table["title"], fmt
    # CSV has no header line: its variant column names the system
    (table,) = tables(cli(*args, "--format", "csv").out, "csv")
    assert table["rows"][0]["variant"] == path.stem
