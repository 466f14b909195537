"""The validation's arithmetic: errors, the geometric-mean error and the gate, from closed forms."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.studies.validation import Predicted, geomean_error, parse_run, rows_of, summarise
from trnsim.studies.validation.summary import LARGE_BYTES, LARGE_TOLERANCE, SMALL_TOLERANCE, tolerance_for

BASE = {
    "id": "T1",
    "title": "t",
    "source": "s",
    "tool": "nccl-tests",
    "system": "hgx-h100",
    "mapping": "m",
    "op": "allreduce",
    "ranks": 8,
    "conditions": "c",
    "measured": "time",
    "units": "us",
    "statistic": "mean",
    "role": "predicted",
    "points": [["1K", 10.0], ["1G", 1000.0]],
}


def test_geomean_error_is_symmetric_in_log_space():
    assert geomean_error([]) == 0.0
    assert math.isclose(geomean_error([1.1]), 0.1)
    # 1.1 and 1/1.1 are equally far off: the mean of |ln| is ln 1.1
    assert math.isclose(geomean_error([1.1, 1 / 1.1]), 0.1)
    assert math.isclose(geomean_error([2.0, 8.0]), math.exp((math.log(2) + math.log(8)) / 2) - 1)


@given(st.lists(st.floats(0.01, 100), min_size=1, max_size=20))
def test_geomean_error_lies_between_the_best_and_worst_row(ratios):
    logs = [abs(math.log(r)) for r in ratios]
    value = geomean_error(ratios)
    assert math.exp(min(logs)) - 1 - 1e-9 <= value <= math.exp(max(logs)) - 1 + 1e-9


def test_the_gate_by_size_and_the_recorded_tolerance():
    run = parse_run({**BASE, "tolerance_pct": {"1K": 45}}, "t.yaml")
    assert tolerance_for(run, 1024) == 0.45
    assert tolerance_for(run, LARGE_BYTES) == LARGE_TOLERANCE
    assert tolerance_for(run, LARGE_BYTES - 1) == SMALL_TOLERANCE
    fitted = parse_run({**BASE, "role": "fitted", "fitted_to": "x"}, "t.yaml")
    assert tolerance_for(fitted, 1024) is None
    excluded = parse_run({**BASE, "role": "excluded", "excluded_because": "old"}, "t.yaml")
    assert tolerance_for(excluded, 1024) is None


@pytest.mark.parametrize("role", ["predicted", "fitted"])
def test_rows_errors_and_summary(role):
    run = parse_run({**BASE, "role": role, "fitted_to": "x" if role == "fitted" else ""}, "t.yaml")
    # 1 KiB predicted 13 us (+30%: at the small gate, passes), 1 GiB 800 us (-20%: outside 15%)
    predicted = Predicted(run, "ideal", "m", {1024: 13.0, 1 << 30: 800.0}, {1024: "ring", 1 << 30: "ring"})
    rows = rows_of(predicted)
    assert [round(row.error, 12) for row in rows] == [0.3, -0.2]
    assert [row.passed for row in rows] == ([True, False] if role == "predicted" else [True, True])
    (summary,) = summarise(rows)
    assert summary.rows == 2 and summary.runs == 1 and summary.role == role
    assert math.isclose(summary.geomean_error, math.exp((math.log(1.3) + abs(math.log(0.8))) / 2) - 1)
    assert summary.worst_error == pytest.approx(0.3)
    assert summary.failed == (1 if role == "predicted" else 0)


def test_an_unpriced_run_has_rows_without_errors_and_no_summary():
    run = parse_run(BASE, "t.yaml")
    rows = rows_of(Predicted(run, "", "", {}, {}, refused="why"))
    assert all(row.error is None and row.passed for row in rows)
    assert summarise(rows) == []
