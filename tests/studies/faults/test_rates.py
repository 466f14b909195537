"""Failure rates, failures a year and availability (trnsim.studies.faults.rates)."""

import pytest

from studies.faults.common import synthetic
from trnsim.studies.faults import Outcome, reliability, straggler
from trnsim.topology.faults import Component


def test_failure_rates_add_up():
    chip = Component("chip", "chip:0", rate="chip")
    link = Component("link a", "link:0,1", rate="copper link")
    report = synthetic(
        [
            ("chip", [Outcome(chip, 10, ["c"], {("allreduce", 1): 50.0})]),
            ("link a", [Outcome(link, 40, [], {("allreduce", 1): 80.0})]),
        ]
    )
    rates = {"chip": 1000.0, "copper link": 4000.0}
    result = reliability(report, rates, mttr_h=10.0)
    assert result.failures_per_year == pytest.approx(10 * 8766 / 1000 + 40 * 8766 / 4000)
    u = 10 / (1000 + 10)  # a chip is down MTTR / (MTTF + MTTR) of the time
    assert result.chips_out == pytest.approx(10 * u)  # each chip lost only by its own failure
    assert result.availability == pytest.approx(1 - u)
    assert result.p_degraded == pytest.approx(1 - (1 - u) ** 10 * (1 - 10 / 4010) ** 40)


def test_harsh_rates_keep_every_share_between_zero_and_one():
    chip = Component("chip", "chip:0", rate="chip")
    report = synthetic([("chip", [Outcome(chip, 10, list("abcdefghij"), {("allreduce", 1): 0.0})])])
    for mttf in (1.0, 100.0, 1e6):
        result = reliability(report, {"chip": mttf}, mttr_h=1e5)
        assert 0 <= result.chips_out <= 10 and 0 <= result.availability <= 1
        lag = straggler(report, {"chip": mttf}, 1e5, ("allreduce", 1), 1000)
        assert 0 <= lag["p_some_down"] <= 1 and lag["expected_slowdown"] >= 1
