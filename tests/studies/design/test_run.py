"""A design point evaluated: feasible or not (and why), per dollar and per watt; the front judged."""

import math

import pytest

from trnsim.studies.design import run
from trnsim.studies.design.constraints import parse_constraint
from trnsim.studies.design.objectives import parse_objective
from trnsim.studies.design.run import PointTask, columns_of, evaluate_point, judge, tidy
from trnsim.studies.variants import Variant

GOAL = parse_objective("busbw:allreduce:16M")
KEY = "switched.switch_fabric.lanes_per_link"


def fake_cost(topology, parts):
    """A bill that grows with the lanes wired (what a real one does with links), for these tests."""
    lanes = sum(link["lanes"] for link in topology.links.values())
    return {"capex_usd": 1000.0 * len(topology.chips) + 10.0 * lanes, "power_w": 50.0 * len(topology.chips) + lanes,
            "network_capex_usd": 10.0 * lanes, "network_power_w": float(lanes)}  # fmt: skip


@pytest.fixture
def cost(monkeypatch):
    monkeypatch.setattr(run, "cost_of", fake_cost)


def _point(index: int, lanes: int) -> PointTask:
    variant = Variant(sku="hgx-h100", overrides=(f"{KEY}={lanes}",))
    return PointTask(index, variant, (), ((KEY, str(lanes)),), GOAL, system="hgx-h100")


def test_a_feasible_point_has_its_figures_per_kusd_and_per_kw(cost):
    row = evaluate_point(_point(0, 9))
    assert row["feasible"] and row["reason"] is None and row[KEY] == "9"
    assert math.isclose(row["busbw_gbps_per_kusd"], 1e3 * row["busbw_gbps"] / row["capex_usd"])
    assert math.isclose(row["busbw_gbps_per_kw"], 1e3 * row["busbw_gbps"] / row["power_w"])


def test_a_point_past_the_lane_budget_is_infeasible_with_its_reason(cost):
    from trnsim.errors import HardwareError

    row = evaluate_point(_point(1, 10))  # 4 switches x 10 lanes: 40 of an H100's 36
    assert row["feasible"] is False and isinstance(row["reason"], HardwareError)
    assert "lanes" in str(row["reason"]) and "busbw_gbps" not in row
    tidied = tidy(row, columns_of(GOAL, [KEY], False))
    assert list(tidied) == columns_of(GOAL, [KEY], False) and tidied["busbw_gbps"] is None


def test_schema_errors_are_refused_before_work():
    from trnsim.errors import ConfigError

    assert run.check_edits([Variant(sku="hgx-h100")], [[f"{KEY}=4"]]) == ["hgx-h100"]
    with pytest.raises(ConfigError, match="expected `int`"):
        run.check_edits([Variant(sku="hgx-h100")], [[f"{KEY}=4", f"{KEY}=x"]])


def _rows(specs):
    return [
        {"point": n, "feasible": True, "busbw_gbps": b, "capex_usd": c, "power_w": p}
        for n, (b, c, p) in enumerate(specs)
    ]


def test_judge_keeps_breaking_rows_out_of_the_front():
    rows = _rows([(10, 5, 5), (8, 3, 5), (6, 3, 6), (12, 9, 9)]) + [{"point": 4, "feasible": False}]
    judge(rows, [], "busbw_gbps", "both")
    assert [r["front"] for r in rows] == [True, True, False, True, None]
    judge(rows, [parse_constraint("capex_usd <= 8", ["capex_usd"])], "busbw_gbps", "both")
    assert [r["front"] for r in rows] == [True, True, False, False, None]
    assert rows[3]["violates"] == "capex_usd <= 8" and rows[0]["violates"] == ""


@pytest.mark.parametrize(
    ("front", "expected"), [("cost", [True, True, False, True]), ("power", [True, False, False, True])]
)
def test_the_front_is_over_the_pair_asked_for(front, expected):
    rows = _rows([(10, 5, 5), (8, 3, 5), (6, 3, 6), (12, 9, 9)])
    judge(rows, [], "busbw_gbps", front)
    assert [r["front"] for r in rows] == expected


def test_rows_are_the_same_through_an_engine(cost, monkeypatch):
    """Local processes give the rows a serial run gives, in order (the cost stand-in is inherited by
    the forked workers)."""
    from trnsim.studies.engines import EngineOptions

    tasks = [_point(n, lanes) for n, lanes in enumerate((4, 10, 9, 6))]
    serial = [tidy(r, columns_of(GOAL, [KEY], False)) for r in run.run_points(tasks)]
    pooled = [tidy(r, columns_of(GOAL, [KEY], False)) for r in run.run_points(tasks, EngineOptions(jobs=2))]
    assert [str(r["reason"]) for r in serial] == [str(r["reason"]) for r in pooled]
    strip = [{k: v for k, v in r.items() if k != "reason"} for r in serial]
    assert strip == [{k: v for k, v in r.items() if k != "reason"} for r in pooled]
