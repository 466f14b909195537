"""A design's outputs: the table written whole (CSV and JSON, atomically) and its plot."""

import csv
import json

import pytest

from trnsim.outputs.design import design_columns, save_design_plot, write_table

ROWS = [
    {"point": 0, "system": "a", "feasible": True, "busbw_gbps": 10.0, "capex_usd": 5.0, "violates": "", "front": True},
    {"point": 1, "system": "a", "feasible": True, "busbw_gbps": 8.0, "capex_usd": 6.0, "violates": "", "front": True},
    {"point": 2, "system": "b", "feasible": True, "busbw_gbps": 12.0, "capex_usd": 9.0, "violates": "x < 1", "front": False},
    {"point": 3, "system": "b", "feasible": False, "busbw_gbps": None, "capex_usd": None, "violates": None, "front": None},
]  # fmt: skip


def test_csv_and_json_hold_every_row(tmp_path):
    write_table(tmp_path / "t.csv", ROWS, {"objective": "busbw"})
    read = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert [r["point"] for r in read] == ["0", "1", "2", "3"] and read[3]["busbw_gbps"] == ""
    write_table(tmp_path / "t.json", ROWS, {"objective": "busbw"})
    document = json.loads((tmp_path / "t.json").read_text())
    assert document["rows"] == ROWS and document["objective"] == "busbw" and document["schema"]


def test_the_columns_follow_the_objective_and_the_faults():
    keys = [c.key for c in design_columns("steps_per_s", "steps/s", ["a.b"], False)]
    assert "steps_per_s_per_kusd" in keys and "a.b" in keys and "expected_busbw_gbps" not in keys
    keys = [c.key for c in design_columns("busbw_gbps", "GB/s", [], True)]
    assert "expected_busbw_gbps" in keys and "expected_busbw_gbps_per_kw" in keys


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_the_plot_is_written_whole(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    # a point on the front by its power alone (1: under 0's busbw at more capex) sits under the staircase
    save_design_plot(ROWS, "busbw_gbps", "busbw (GB/s)", tmp_path / f"p{suffix}", "a $title$ with _ and \x07")
    data = (tmp_path / f"p{suffix}").read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data[:2000]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"p{suffix}"]  # no temporary file left
