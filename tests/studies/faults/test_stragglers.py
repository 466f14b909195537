"""A job over many domains at its slowest one's pace (trnsim.studies.faults.stragglers)."""

import pytest

from studies.faults.common import synthetic
from trnsim.studies.faults import Outcome, straggler
from trnsim.topology.faults import Component


def test_a_job_over_many_domains_waits_for_its_slowest():
    link = Component("link a", "link:0,1", rate="copper link")
    report = synthetic([("link a", [Outcome(link, 5, [], {("allreduce", 1): 50.0})])])
    rates = {"copper link": 1000.0}
    u = 10 / (1000 + 10)
    none, one = (1 - u) ** 5, 5 * u * (1 - u) ** 4  # no link down; exactly one (two or more: a spare)
    for domains in (1, 10, 100):
        result = straggler(report, rates, 10.0, ("allreduce", 1), domains)
        # slowdown 2 (busbw halves) unless every domain is healthy
        healthy = none / (none + one)
        assert result["expected_slowdown"] == pytest.approx(1 + (1 - healthy**domains))
        assert result["p_some_down"] == pytest.approx(1 - (none + one) ** domains)
