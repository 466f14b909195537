"""Switch trays as modelled parts: their switches come from the file, for every switched system."""

import json

import pytest
import yaml
from conftest import CATALOG, topology

from trnsim.errors import ConfigError, UsageError
from trnsim.topology import load_topology
from trnsim.topology.faults import components, parse_fault

SWITCHED = [path for path in CATALOG if yaml.safe_load(path.read_text())["kind"] == "switched"]


def trays_from_file(path) -> dict:
    """Each rack's switch trays, as switch names, from the YAML's own numbers: a rack's plane
    switches (switch k of every plane, planes in the file's order, before switch k+1) fill trays of
    ``switches_per_tray`` (one switch of each plane when the file does not say)."""
    doc = yaml.safe_load(path.read_text())["switched"]
    fabric = doc.get("switch_fabric")
    if fabric is None:
        return {}
    planes = [plane["name"] for plane in fabric["planes"]]
    per_tray = fabric.get("switches_per_tray", len(planes))
    if not per_tray:  # the switches are in no tray
        return {}
    out = {}
    for rack in range(doc["racks"]):
        ordered = [f"r{rack}.{plane}.sw{k}" for k in range(fabric["switches_per_plane"]) for plane in planes]
        for start in range(0, len(ordered), per_tray):
            out[(rack, start // per_tray)] = set(ordered[start : start + per_tray])
    return out


@pytest.mark.parametrize("path", SWITCHED, ids=lambda p: p.stem)
def test_every_switch_tray_holds_the_switches_the_file_says_and_no_other_exists(path):
    topo = topology(path.stem)
    trays = trays_from_file(path)
    racks = yaml.safe_load(path.read_text())["switched"]["racks"]
    per_rack = len(trays) // racks
    for (rack, k), names in trays.items():
        assert parse_fault(topo, f"switch-tray:{k}:{rack}").nodes == names
    for k in range(per_rack):  # without a rack: that tray in every rack
        assert parse_fault(topo, f"switch-tray:{k}").nodes == set().union(
            *(trays[(rack, k)] for rack in range(racks))
        )
    # the faults sweep counts the same trays, each with the same switches
    parts = {part.spec: set(part.nodes) for part in components(topo) if part.kind == "switch tray"}
    assert parts == {f"switch-tray:{k}:{rack}": names for (rack, k), names in trays.items()}
    with pytest.raises(UsageError) as refused:
        parse_fault(topo, f"switch-tray:{per_rack}")
    message = str(refused.value)
    assert (f"K is 0..{per_rack - 1}" if per_rack else "no switch trays") in message
    assert "\n" not in message
    if per_rack:
        with pytest.raises(UsageError, match=f"racks 0..{racks - 1}"):
            parse_fault(topo, f"switch-tray:0:{racks}")


def test_hgx_switches_sit_on_the_baseboard_in_no_tray():
    for sku in ("hgx-h100", "hgx-b200"):
        assert not [part for part in components(topology(sku)) if part.kind == "switch tray"]


def test_a_failed_nvl72_switch_tray_takes_two_switches(cli):
    """GB200 NVL72: 9 switch trays of 2 NVSwitch chips. NVLS all-reduce's bound is each GPU's
    remaining switch bandwidth, 2 (n-1)/n of it as busbw: with a tray down, 16 of 18 switches."""
    path = next(p for p in CATALOG if p.stem == "gb200-nvl72")
    doc = yaml.safe_load(path.read_text())
    fabric, n = doc["switched"]["switch_fabric"], 72
    left = fabric["switches_per_plane"] - fabric["switches_per_tray"]
    per_gpu = left * fabric["lanes_per_link"] * doc["chip"]["lane_gbps"] * doc["efficiency"]["default"]
    args = ("collective", "allreduce", "--sku", "nvl72", "--sizes", "1G", "--format", "json")
    tray = json.loads(cli(*args, "--fail", "switch-tray:0").out)["rows"][0]
    assert tray["bound_busbw_gbps"] == pytest.approx(2 * (n - 1) / n * per_gpu, rel=1e-12)
    named = [f"--fail=switch:r0.nvlink.sw{k}" for k in range(fabric["switches_per_tray"])]
    both = json.loads(cli(*args, *named).out)["rows"][0]
    assert tray["busbw_gbps"] == pytest.approx(both["busbw_gbps"], rel=1e-12)
    refused = cli(*args, "--fail", "switch-tray:9")
    assert refused.code == 2 and "K is 0..8" in refused.err and len(refused.err.splitlines()) == 1


def test_the_faults_sweep_counts_nvl72_trays(cli):
    result = cli("faults", "nvl72", "--op", "allreduce", "--kind", "switch tray", "--format", "json")
    assert result.code == 0, result.err
    (row,) = json.loads(result.out)["systems"][0]["classes"]
    assert (row["parts"], row["worst_part"]) == (9, "switch-tray:0:0")


@pytest.mark.parametrize("path", SWITCHED, ids=lambda p: p.stem)
def test_topo_show_says_what_a_tray_holds(cli, path):
    doc = yaml.safe_load(path.read_text())
    layout = doc["switched"]
    trays = json.loads(cli("topo", "show", path.stem, "--format", "json").out)["trays"]
    local = layout.get("node_local") or {}
    assert trays["node"]["chips"] == len(layout["slots"])
    assert trays["node"]["switches"] == (local.get("switches", 1) if local.get("kind") == "switches" else 0)
    fabric = layout["switch_fabric"]
    if fabric.get("switches_per_tray") == 0:
        assert trays["switch"] is None
    else:
        per_tray = fabric.get("switches_per_tray", len(fabric["planes"]))
        assert trays["switch"]["switches"] == per_tray
        assert trays["switch"]["per_rack"] == len(fabric["planes"]) * fabric["switches_per_plane"] // per_tray
        assert trays["switch"]["assumed"] == ("switches_per_tray" not in fabric)
    table = cli("topo", "show", path.stem).out
    assert "switch trays" in table and f"each {len(layout['slots'])} chips" in table


def test_a_tray_size_that_does_not_divide_the_rack_is_refused():
    with pytest.raises(
        ConfigError, match=r"switches_per_tray: expected a divisor of a rack's 18 plane switches"
    ):
        load_topology("nvl72", overrides=["switched.switch_fabric.switches_per_tray=4"])
    edited = load_topology("nvl72", overrides=["switched.switch_fabric.switches_per_tray=6"])
    assert len(parse_fault(edited, "switch-tray:2").nodes) == 6
    with pytest.raises(UsageError, match=r"K is 0\.\.2"):
        parse_fault(edited, "switch-tray:3")
