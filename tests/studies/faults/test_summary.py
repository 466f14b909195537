"""Statistics over classes of parts and over draws (trnsim.studies.faults.summary), checked against
the textbook medians of the losses written out one by one."""

import statistics

import pytest

from studies.faults.common import synthetic
from trnsim.studies.faults import ClassResult, FaultReport, Outcome, draw_summary, loss_summary
from trnsim.studies.faults.summary import class_rows, worst_losing_no_chip
from trnsim.topology.faults import Component

KEY = ("allreduce", 1)
CHIP = Component("chip", "chip:0", rate="chip")


def _draws(after: list[float], lost: list[int]) -> list[Outcome]:
    return [
        Outcome(CHIP, 1, [f"c{k}" for k in range(n)], {KEY: busbw}, note=f"draw {i}")
        for i, (busbw, n) in enumerate(zip(after, lost, strict=True))
    ]


@pytest.mark.parametrize(
    ("after", "lost"),
    [
        ([100.0, 50.0, 80.0, 0.0, 90.0], [0, 1, 0, 16, 0]),  # odd: the middle draw
        ([100.0, 50.0, 80.0, 90.0], [0, 2, 0, 0]),  # even: the upper of the two middle draws
        ([70.0], [0]),
    ],
)
def test_draws_are_summed_up_as_their_losses_say(after, lost):
    report = synthetic([("chip", _draws(after, lost))])
    (row,) = draw_summary(report, _draws(after, lost), [KEY])
    losses = [1 - busbw / 100.0 for busbw in after]
    assert row["samples"] == len(after)
    assert row["mean_loss"] == pytest.approx(statistics.fmean(losses))
    assert row["median_loss"] == pytest.approx(statistics.median_high(losses))
    assert row["worst_loss"] == pytest.approx(max(losses))
    assert row["worst_draw"] == f"draw {losses.index(max(losses))}"
    assert row["chips_lost_mean"] == pytest.approx(statistics.fmean(lost))
    assert row["p_chips_lost"] == pytest.approx(sum(n > 0 for n in lost) / len(lost))


@pytest.mark.parametrize("weights", [[1, 1, 1, 1], [3, 1, 2], [1, 5, 1, 1], [2, 2]])
def test_the_median_of_a_class_weighs_each_evaluation_by_the_parts_it_stands_for(weights):
    after = [100.0 - 10 * (i + 1) * (-1) ** i for i in range(len(weights))]  # losses of both signs
    outcomes = [Outcome(CHIP, w, [], {KEY: busbw}) for w, busbw in zip(weights, after, strict=True)]
    report = FaultReport("x", 10, "chip", {KEY: 100.0}, [ClassResult("chip", sum(weights), outcomes)], 0)
    (row,) = loss_summary(report, KEY)
    # every part written out: an evaluation standing for w parts is w equal losses
    every = [1 - busbw / 100.0 for w, busbw in zip(weights, after, strict=True) for _ in range(w)]
    assert row["median_loss"] == pytest.approx(statistics.median_low(every))
    assert row["mean_loss"] == pytest.approx(statistics.fmean(every))
    assert row["worst_loss"] == pytest.approx(max(every))
    assert row["parts"] == len(every) and row["distinct"] == len(weights)


def test_the_worst_part_losing_no_chip_skips_parts_that_lose_chips_or_fail_not_by_themselves():
    link = Component("link a", "link:0,1", rate="copper link")
    plane = Component("plane", "plane:A:0")  # not a part that fails by itself: no rate class
    report = synthetic(
        [
            ("chip", [Outcome(CHIP, 4, ["c"], {KEY: 10.0})]),  # the worst, but it loses a chip
            ("plane", [Outcome(plane, 1, [], {KEY: 20.0})]),
            ("link a", [Outcome(link, 8, [], {KEY: 60.0})]),
        ]
    )
    rows = class_rows(report, [KEY])
    assert [row["kind"] for row in rows] == ["chip", "plane", "link a"]
    worst = worst_losing_no_chip(report, rows, KEY)
    assert worst["kind"] == "link a" and worst["worst_loss"] == pytest.approx(0.4)
    assert worst_losing_no_chip(report, rows[:2], KEY) is None
