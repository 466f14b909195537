"""The least-squares solve's standard errors (trnsim.studies.calibration.solve), against the
textbook formulas of a straight-line fit."""

import math

import numpy as np
import pytest

from trnsim.studies.calibration.solve import Fitted, determined, standard_errors


def test_standard_errors_of_a_straight_line_are_the_textbook_ones():
    rng = np.random.default_rng(3)
    x = np.linspace(0.0, 10.0, 12)
    y = 2.0 + 0.5 * x + rng.normal(0.0, 0.3, len(x))
    jac = np.stack([np.ones_like(x), x], axis=1)  # residual a + b x - y: its Jacobian
    (a, b), *_ = np.linalg.lstsq(jac, y, rcond=None)
    fun = a + b * x - y
    n = len(x)
    s2 = sum(fun**2) / (n - 2)
    sxx = sum((x - x.mean()) ** 2)
    se_a, se_b = standard_errors(jac, fun, 2)
    assert se_b == pytest.approx(math.sqrt(s2 / sxx), rel=1e-9)
    assert se_a == pytest.approx(math.sqrt(s2 * (1 / n + x.mean() ** 2 / sxx)), rel=1e-9)


def test_parameters_that_move_the_residuals_together_are_not_determined():
    x = np.linspace(1.0, 4.0, 6)
    jac = np.stack([x, 2 * x, np.ones_like(x)], axis=1)  # the first two always move together
    fun = np.array([0.1, -0.2, 0.05, 0.0, 0.1, -0.05])
    first, second, third = standard_errors(jac, fun, 3)
    assert first is None and second is None and third is not None
    assert standard_errors(jac[:3], fun[:3], 3) == [None] * 3  # as many rows as parameters


def test_a_parameter_is_determined_when_its_error_is_below_its_value():
    def latency(value, stderr):
        return Fitted("step_ns", "latency.step_ns", 0.0, value, stderr, "ns")

    assert determined(latency(5000.0, 400.0)) and not determined(latency(5000.0, 6000.0))
    assert determined(latency(10.0, 900.0))  # near zero: an error under 1 us still pins it
    assert not determined(latency(5000.0, None))
