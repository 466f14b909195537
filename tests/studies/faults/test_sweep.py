"""Every single failure of a system (trnsim.studies.faults.sweep)."""

import pytest

from studies.faults.common import GIB, by_kind, sweep
from trnsim.model.engine import evaluate
from trnsim.studies.faults import loss_summary
from trnsim.topology import load_topology


@pytest.mark.parametrize(("sku", "lost"), [("trn2-nl64", 64), ("trn2-nl256-concept", 256)])
def test_one_failed_chip_takes_the_whole_torus_under_cuboid(sku, lost):
    report = sweep(sku, kinds=["chip"])
    chip = by_kind(report)["chip"]
    assert all(len(outcome.lost) == lost for outcome in chip.outcomes)
    assert chip.outcomes[0].busbw_gbps[("allreduce", GIB)] == 0.0


def test_a_failed_torus_link_loses_no_chip_and_costs_what_the_collective_measures():
    report = sweep("trn2-nl64", kinds=["link z"])
    link = by_kind(report)["link z"]
    assert link.lost_max == 0 and link.count == 64
    outcome = link.outcomes[0]
    # the sweep's figure is a plain run of the collective on the system without that link
    degraded = load_topology("trn2-nl64", overrides=[f"fail={outcome.component.spec}"])
    alone = evaluate(degraded, "allreduce", [GIB], degraded.chips).rows[0].busbw_gbps
    assert outcome.busbw_gbps[("allreduce", GIB)] == pytest.approx(alone, rel=1e-12)
    assert 0 < alone < report.healthy[("allreduce", GIB)]


def test_spares_hide_switch_and_tray_failures_from_all_reduce_but_not_the_lane_after_them():
    report = sweep("trn3-nl72x2-gen1", kinds=["switch plane", "switch tray", "lanes beyond spares"])
    rows = {row["kind"]: row for row in loss_summary(report, ("allreduce", GIB))}
    assert rows["switch plane"]["worst_loss"] == pytest.approx(0.0, abs=1e-12)
    assert rows["switch tray"]["worst_loss"] == pytest.approx(0.0, abs=1e-12)
    assert rows["lanes beyond spares"]["worst_loss"] > 0.001


def test_failed_chips_are_sampled_and_agree_with_failing_each():
    # a failed chip changes the survivors' rank order: several chips per class are evaluated, and
    # on NL32x2 their mean is within a few points of failing every chip in turn
    fast = sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="chip")
    every = sweep("trn3-nl32x2-gen1", kinds=["chip"], policy="chip", exhaustive=True)
    (a,) = loss_summary(fast, ("allreduce", GIB))
    (b,) = loss_summary(every, ("allreduce", GIB))
    assert len(fast.classes[0].outcomes) == 6 and b["distinct"] == 64
    assert a["mean_loss"] == pytest.approx(b["mean_loss"], abs=0.05)
    assert a["worst_loss"] <= b["worst_loss"] + 1e-12


def test_a_failure_that_leaves_no_two_chips_connected_loses_the_domain():
    # NVL72 has one switch plane: failing it cuts every GPU off alone (it used to divide by zero)
    (plane,) = sweep("gb200-nvl72", kinds=["plane"]).classes
    assert plane.lost_max == 72 and plane.outcomes[0].busbw_gbps[("allreduce", GIB)] == 0.0
