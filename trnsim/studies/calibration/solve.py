"""The least-squares solve: scipy's trust-region least squares with bounds, started twice, and the
standard errors from the Jacobian at the optimum (``s^2 (J^T J)^-1``).

The model is piecewise (``auto`` switches algorithms, pipelines switch chunk counts), so a standard
error is a local figure, reported as ``None`` where the run does not determine the parameter.
"""

import math
from dataclasses import dataclass

import numpy as np

from trnsim.studies.calibration.knobs import Knob


@dataclass
class Fitted:
    """A parameter's fitted value and standard error (None: the run does not determine it)."""

    name: str
    key: str
    before: float
    value: float
    stderr: float | None
    unit: str
    at_limit: bool = False  # the fit stopped at the parameter's bound: the run wants it beyond


def second_start(knobs: list[Knob], start: np.ndarray, before, measured: np.ndarray, inside: np.ndarray):
    """A guess that matches the largest fitted size's bandwidth (efficiency) and the smallest fitted
    size's time (per-call cost), from the file's values ``start`` and the model's rows ``before``."""
    guess = start.copy()
    first, last = int(np.argmax(inside)), len(inside) - 1 - int(np.argmax(inside[::-1]))
    ratio = before[last].time_us / measured[last]
    overshoot_us = max(measured[first] - before[first].time_us, 0.0)
    for i, knob in enumerate(knobs):
        if knob.name == "efficiency":
            guess[i] = start[i] * ratio
        elif knob.name == "collective_ns":
            guess[i] = start[i] + overshoot_us * 1e3
    return guess


def solve(residuals, knobs: list[Knob], starts, scale: np.ndarray, loss: str):
    """Least squares of ``residuals`` (a function of the scaled values) from each of ``starts``
    (unscaled): the solution of least cost.

    Returns
    -------
    tuple
        The values (unscaled) and the standard errors (scaled, None where not determined).
    """
    from scipy.optimize import least_squares

    lows = np.asarray([knob.low for knob in knobs]) / scale
    highs = np.asarray([knob.high for knob in knobs]) / scale
    result = None
    for x in starts:
        x0 = np.clip(x / scale, lows, highs)
        attempt = least_squares(
            residuals, x0, bounds=(lows, highs), diff_step=1e-3, x_scale="jac", loss=loss, f_scale=0.1
        )
        if result is None or attempt.cost < result.cost:
            result = attempt
    return result.x * scale, standard_errors(result.jac, result.fun, len(knobs))


def fitted(knobs: list[Knob], start, values, stderr, scale, used: list[str]) -> list[Fitted]:
    """Each knob's value before and after, with its standard error in its own unit."""
    return [
        Fitted(
            knob.name,
            knob.key + ("." + ",".join(used) if knob.name == "efficiency" else ""),
            float(s),
            float(v),
            None if e is None else float(e * sc),
            knob.unit,
            at_limit=bool(
                np.isclose(v, knob.low, rtol=1e-6, atol=1e-9) or np.isclose(v, knob.high, rtol=1e-6)
            ),
        )
        for knob, s, v, e, sc in zip(knobs, start, values, stderr, scale, strict=True)
    ]


def standard_errors(jac: np.ndarray, fun: np.ndarray, k: int) -> list[float | None]:
    """Standard errors from the Jacobian at the optimum; None where a parameter is not determined."""
    n = len(fun)
    if n <= k:
        return [None] * k
    sigma2 = float(fun @ fun) / (n - k)
    if not np.all(np.isfinite(jac)):
        return [None] * k
    # parameters that move the residuals together (alpha and per-link latency on a fixed number of
    # steps and hops) span J's null space: those are not determined; the others get their errors
    # from the pseudo-inverse
    _, singular, vt = np.linalg.svd(jac, full_matrices=True)
    singular = np.concatenate([singular, np.zeros(k - len(singular))])
    null = vt[singular <= 1e-6 * max(singular.max(), 1e-300)]
    covariance = np.linalg.pinv(jac.T @ jac) * sigma2
    out: list[float | None] = []
    for i in range(k):
        variance = covariance[i, i]
        free = bool(len(null)) and float(np.max(np.abs(null[:, i]))) > 0.1
        ok = not free and np.linalg.norm(jac[:, i]) > 1e-9 and np.isfinite(variance) and variance >= 0
        out.append(math.sqrt(variance) if ok else None)
    return out


def determined(parameter: Fitted) -> bool:
    """Whether the run pins a parameter down: a standard error below its own value (and below 1 us
    for a latency that fits near zero)."""
    if parameter.stderr is None:
        return False
    floor = 1e3 if parameter.unit == "ns" else 0.01
    return parameter.stderr < max(abs(parameter.value), floor)
