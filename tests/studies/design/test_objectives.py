"""Objectives: parsed with one clear refusal each, and measured as the commands they stand for."""

import math

import pytest

from trnsim.errors import UsageError
from trnsim.studies.design.objectives import Objective, layout_degrees, measure, parse_objective
from trnsim.studies.design.run import PointTask
from trnsim.studies.variants import Variant


def test_the_default_is_allreduce_busbw_at_1g():
    goal = parse_objective(None)
    assert (goal.kind, goal.op, goal.size, goal.metric) == ("busbw", "allreduce", 1 << 30, "busbw_gbps")
    assert parse_objective("busbw:alltoall:64M").size == 64 << 20
    moe = parse_objective("moe:8:4M")
    assert (moe.op, moe.size, moe.degrees, moe.metric) == ("alltoall", 4 << 20, (("ep", 8),), "busbw_gbps")
    layout = parse_objective("layout:tp=4,dp=*:tp=16M,dp=1G")
    assert layout.degrees == (("tp", 4), ("dp", 0)) and dict(layout.sizes) == {"tp": 16 << 20, "dp": 1 << 30}
    assert layout.metric == "steps_per_s"


@pytest.mark.parametrize(
    "text",
    ["speed", "busbw:nosuchop:1G", "busbw:allreduce:lots", "moe:1:4M", "moe:x:4M", "moe:8",
     "layout:tp=4", "layout:tp=4:ep=1M", "layout:zz=4:zz=1M", "layout:tp=0:tp=1M",
     "layout:tp=*,dp=*:tp=1M,dp=1M", "layout:tp=2,tp=2:tp=1M"],
)  # fmt: skip
def test_bad_objectives_are_refused_naming_the_option(text):
    with pytest.raises(UsageError) as caught:
        parse_objective(text)
    assert caught.value.template.startswith("{objective}"), caught.value.template


def test_layout_degrees_fill_the_ranks_or_say_why_not():
    goal = parse_objective("layout:tp=4,dp=*:tp=1M,dp=1M")
    assert layout_degrees(goal, 16) == {"tp": 4, "dp": 4}
    with pytest.raises(UsageError, match="does not divide 18 ranks"):
        layout_degrees(goal, 18)
    with pytest.raises(UsageError, match="the system has 8 ranks"):
        layout_degrees(parse_objective("layout:tp=4:tp=1M"), 8)


def _task(objective: Objective, sku: str = "nl16", runtime: str | None = None) -> PointTask:
    return PointTask(0, Variant(sku=sku), (), (), objective, runtime=runtime)


def test_busbw_is_what_sweep_gives():
    from trnsim.studies.sweep import Task, run_task

    measured = measure(parse_objective("busbw:allgather:16M"), _task(parse_objective("busbw:allgather:16M")))
    (row,) = run_task(Task(Variant(sku="nl16"), (), "allgather", "auto", (16 << 20,)))
    assert measured["busbw_gbps"] == row["busbw_gbps"] and measured["time_us"] == row["time_us"]


def test_moe_is_every_block_of_ep_ranks_at_once():
    from trnsim.model.backend import Selection
    from trnsim.studies.sweep import Task, run_task

    goal = parse_objective("moe:4:1M")
    measured = measure(goal, _task(goal))
    (row,) = run_task(
        Task(Variant(sku="nl16"), (), "alltoall", "auto", (1 << 20,), Selection(groups="blocks:4"))
    )
    assert measured["busbw_gbps"] == row["busbw_gbps"] and row["groups"] == 4


def test_layout_is_its_step_time_inverted():
    from tests.conftest import topology
    from trnsim.studies.layout import evaluate_layout

    goal = parse_objective("layout:tp=4,dp=*:tp=1M,dp=8M")
    measured = measure(goal, _task(goal))
    topo = topology("nl16")
    result = evaluate_layout(
        topo, topo.chips, {"tp": 4, "dp": 4}, ("tp", "dp"), {"tp": 1 << 20, "dp": 8 << 20}
    )
    assert math.isclose(measured["step_time_us"], result.time_us)
    assert math.isclose(measured["steps_per_s"], 1e6 / result.time_us)
