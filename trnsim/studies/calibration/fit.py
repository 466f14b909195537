"""Fit the model's free parameters to a measured run by least squares.

The model's time for a collective is a function of three parameters that no datasheet gives:

* ``latency.step_ns``: software and synchronisation per algorithm step (alpha);
* ``latency.collective_ns`` (only when asked for): a fixed cost per collective call;
* ``latency.link_ns``: latency per link a message crosses (the per-hop term);
* ``efficiency``: the share of the raw rate that payload reaches, one factor for the link classes
  the run's traffic uses (the others keep the file's values: a run inside one chip says nothing
  about the links between chips).

Each is a ``--set`` edit of the topology file, so a fit is a list of edits that every command can
apply (``--calibration``). Residuals are ``log(model / measured)`` per row, so a 10% miss costs the
same at 1 KiB as at 1 GiB; the fit uses scipy's trust-region least squares with bounds, and the
standard errors come from the Jacobian at the optimum (``s^2 (J^T J)^-1``). The model is
piecewise (``auto`` switches algorithms, pipelines switch chunk counts), so a standard error is a
local figure, reported as ``None`` where the run does not determine the parameter.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trnsim.errors import UsageError
from trnsim.studies.calibration.readers import Measurement


@dataclass(frozen=True)
class Knob:
    """A fitted parameter: its name, the edit that sets it, its range and the scale it is fitted on."""

    name: str
    key: str
    low: float
    high: float
    unit: str

    def edits(self, value: float, used: list[str] = (), kept: dict[str, float] | None = None) -> list[str]:
        """The ``--set`` edits for ``value``. The efficiency applies to the link classes ``used`` by
        the run; ``kept`` are the file's other per-class values."""
        if self.name == "efficiency":
            classes = {**(kept or {}), **dict.fromkeys(used, value)}
            return ["efficiency.classes={" + ", ".join(f"{k}: {v:.6g}" for k, v in classes.items()) + "}"]
        return [f"{self.key}={value:.6g}"]


KNOB_NAMES = ("collective_ns", "step_ns", "link_ns", "efficiency")
KNOBS = {
    "collective_ns": Knob("collective_ns", "latency.collective_ns", 0.0, 1e7, "ns"),
    "step_ns": Knob("step_ns", "latency.step_ns", 0.0, 1e6, "ns"),
    "link_ns": Knob("link_ns", "latency.link_ns", 0.0, 1e5, "ns"),
    "efficiency": Knob("efficiency", "efficiency.classes", 0.01, 1.0, ""),
}


# the algorithm a tool reports, as trnsim's algorithms: the first that applies is used
# (Neuron's KangaRing is two link-disjoint rings: trnsim's multiring where the group has direct links)
MEASURED_ALGORITHMS = {
    "kangaring": ("multiring", "ring"),
    "ring": ("ring",),
    "mesh": ("mesh",),
    "rdh": ("rdh",),
    "tree": ("tree",),
}


def initial_value(spec, knob: Knob, used: list[str]) -> float:
    """The file's own value of a parameter (for efficiency, the mean over the classes used): the
    fit's starting point."""
    if knob.name == "efficiency":
        return float(np.mean([spec.efficiency.of(cls) for cls in used]))
    return float(getattr(spec.latency, knob.key.split(".")[1]))


@dataclass
class FitRow:
    """One measured size: what was measured and what the model gives before and after the fit."""

    bytes: int
    measured_us: float
    measured_busbw_gbps: float
    before_us: float
    after_us: float
    after_busbw_gbps: float
    algorithm: str
    measured_algorithm: str | None
    fitted: bool = True  # inside the fitted size range (rows outside are shown, not fitted)

    @property
    def error(self) -> float:
        """Relative error of the fitted model: model / measured - 1."""
        return self.after_us / self.measured_us - 1

    @property
    def error_before(self) -> float:
        return self.before_us / self.measured_us - 1


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


@dataclass
class Fit:
    """The result of a calibration."""

    measurement: Measurement
    sku: str
    topology_file: str | None
    base_edits: list[str]
    group: str | None
    algorithm: str
    parameters: list[Fitted]
    rows: list[FitRow]
    evaluations: int
    notes: list[str] = field(default_factory=list)
    used_classes: list[str] = field(default_factory=list)  # link classes the run's traffic crossed
    kept_classes: dict[str, float] = field(default_factory=dict)  # the file's other per-class values

    @property
    def edits(self) -> list[str]:
        """The edits a calibrated run applies: the base edits, then the fitted values."""
        fitted = []
        for parameter in self.parameters:
            fitted += KNOBS[parameter.name].edits(parameter.value, self.used_classes, self.kept_classes)
        return list(self.base_edits) + fitted

    fit_sizes: tuple[int | None, int | None] = (None, None)  # the fitted range of sizes, bytes

    @property
    def rms_error(self) -> float:
        """Root mean square of the log errors of the fitted rows."""
        fitted = [row for row in self.rows if row.fitted]
        return math.sqrt(sum(math.log1p(row.error) ** 2 for row in fitted) / len(fitted))


def _range_text(fit_sizes: tuple[int | None, int | None]) -> str:
    """``(67108864, None)`` -> ``"64 MiB:"``."""
    from trnsim.units import format_size

    return ":".join("" if bound is None else format_size(bound).replace(" ", "") for bound in fit_sizes)


def parse_fit_sizes(text: str | None) -> tuple[int | None, int | None]:
    """``--fit-sizes MIN:MAX`` (either side may be empty) as bytes.

    Raises
    ------
    UsageError
        If the text is not ``MIN:MAX`` of sizes, or MIN exceeds MAX.
    """
    from trnsim.units import parse_size

    if text is None or not text.strip():
        return None, None
    if text.count(":") != 1:
        raise UsageError(
            f"--fit-sizes {text!r}: expected MIN:MAX, e.g. 64M: or 1M:1G (either side may be empty)"
        )
    low_text, high_text = (part.strip() for part in text.split(":"))
    try:
        low = parse_size(low_text) if low_text else None
        high = parse_size(high_text) if high_text else None
    except UsageError as exc:
        raise UsageError(f"--fit-sizes {text!r}: {exc}") from None
    if low is not None and high is not None and low > high:
        raise UsageError(f"--fit-sizes {text!r}: the smallest size is above the largest")
    return low, high


def fit(
    measurement: Measurement,
    sku: str | None,
    topology_file: Path | None,
    base_edits: list[str],
    group: str | None,
    knobs: list[str],
    algorithm: str = "auto",
    dtype: str = "float",
    loss: str = "linear",
    fit_sizes: tuple[int | None, int | None] = (None, None),
) -> Fit:
    """Fit ``knobs`` so that the model reproduces ``measurement`` on ``group`` of the topology.

    Parameters
    ----------
    measurement : Measurement
        The measured run (:func:`trnsim.studies.calibration.readers.read_measurement`).
    sku, topology_file : str or Path
        The system it ran on (a catalog SKU or a topology file).
    base_edits : list of str
        ``--set`` edits applied before the fitted ones (e.g. ranks per chip).
    group : str, optional
        The ranks the run used (``--group`` syntax); by default the first ``measurement.ranks``.
    knobs : list of str
        Names from :data:`KNOBS` to fit; the others keep the file's values.
    algorithm : str
        ``auto``, an algorithm's name, or ``measured`` (each row with the algorithm the run reports).
    loss : str
        ``linear`` (plain least squares) or ``soft_l1`` (robust: a row off by more than about 10% weighs
        less, for runs with a size that no alpha-beta curve follows).
    fit_sizes : tuple of (int or None, int or None)
        Fit only the rows whose size lies in ``[min, max]`` bytes (None: unbounded). The other rows are
        still evaluated and reported, marked as not fitted: for runs whose library changes protocol
        between sizes, so that the parameters describe one regime (e.g. NCCL's large sizes).
    """
    if loss not in ("linear", "soft_l1"):
        raise UsageError(f"--loss {loss!r}: expected linear or soft_l1")
    if algorithm == "all":
        raise UsageError("--algo all: a fit needs one model per row; give auto, an algorithm or measured")
    from trnsim import limits

    limits.SIZES.check(len(measurement.rows), f"{measurement.path}: the run has")
    from scipy.optimize import least_squares

    from trnsim.model.engine import evaluate
    from trnsim.topology.groups import select_group
    from trnsim.topology.load import load_topology

    unknown = [name for name in knobs if name not in KNOBS]
    if unknown or not knobs:
        raise UsageError(f"--fit {','.join(knobs)}: expected one or more of {', '.join(KNOBS)}")
    chosen = [KNOBS[name] for name in dict.fromkeys(knobs)]
    base = load_topology(sku, topology_file, base_edits)
    members = select_group(base, group, None if group else measurement.ranks)
    if len(members) != measurement.ranks:
        raise UsageError(
            f"{measurement.path}: the run has {measurement.ranks} ranks but the group has {len(members)}"
        )
    rows = measurement.rows
    sizes = [row.size_bytes for row in rows]
    measured = np.asarray([row.time_us for row in rows])
    low, high = fit_sizes
    inside = np.asarray([(low is None or s >= low) and (high is None or s <= high) for s in sizes])
    if not inside.any():
        raise UsageError(
            f"--fit-sizes {_range_text(fit_sizes)!r}: no row of {measurement.path} lies in the range "
            f"(its sizes are {sizes[0]} to {sizes[-1]} bytes)"
        )
    used: list[str] = []
    kept: dict[str, float] = {}
    # fit on scales where the parameters are comparable: latencies in microseconds
    scale = np.asarray([1e3 if knob.unit == "ns" else 1.0 for knob in chosen])
    calls = 0

    if algorithm == "measured":
        missing = [row.line for row in rows if row.algorithm is None]
        if missing:
            raise UsageError(
                f"{measurement.path}:{missing[0]}: --algo measured needs the algorithm of every row "
                "(nccom-test --show-algorithm)"
            )
    chosen_algorithms: dict[str, str] = {}

    def run_as_measured(topology, group_now):
        """Each row with the algorithm the run reports (mapped by :data:`MEASURED_ALGORITHMS`)."""
        from trnsim.errors import NotApplicableError

        by_name: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            by_name.setdefault(row.algorithm.lower(), []).append(i)
        out = [None] * len(rows)
        for name, where in by_name.items():
            candidates = chosen_algorithms.get(name)
            options = (candidates,) if candidates else MEASURED_ALGORITHMS.get(name, (name,))
            for option in options:
                try:
                    got = evaluate(
                        topology,
                        measurement.op,
                        [sizes[i] for i in where],
                        group_now,
                        algo=option,
                        dtype=dtype,
                    ).rows
                except (NotApplicableError, UsageError):
                    continue
                chosen_algorithms[name] = option
                for i, row in zip(where, got, strict=True):
                    out[i] = row
                break
            else:
                raise UsageError(f"{measurement.path}: no trnsim algorithm models {name!r} on this group")
        return out

    def model(values: np.ndarray):
        nonlocal calls
        calls += 1
        edits = list(base_edits)
        for knob, value in zip(chosen, values, strict=True):
            edits += knob.edits(float(value), used, kept)
        topology = load_topology(sku, topology_file, edits)
        group_now = [topology.chips[base.rank_of[chip]] for chip in members]
        if algorithm == "measured":
            return run_as_measured(topology, group_now)
        return evaluate(topology, measurement.op, sizes, group_now, algo=algorithm, dtype=dtype).rows

    def residuals(scaled: np.ndarray) -> np.ndarray:
        times = np.asarray([row.time_us for row in model(scaled * scale)])
        return np.log(times[inside] / measured[inside])

    chosen_all, chosen = chosen, []
    before = model(np.zeros(0))  # the file's own values: the 'before' column, and which classes the run uses
    chosen = chosen_all
    used += sorted({cls for row in before for cls, share in row.link_utilisation.items() if share > 0})
    kept.update({cls: v for cls, v in base.spec.efficiency.classes.items() if cls not in used})
    if not used and any(knob.name == "efficiency" for knob in chosen):
        raise UsageError(f"{measurement.path}: the run moves no bytes over any link; fit without efficiency")
    start = np.asarray([initial_value(base.spec, knob, used) for knob in chosen])
    lows = np.asarray([knob.low for knob in chosen]) / scale
    highs = np.asarray([knob.high for knob in chosen]) / scale
    # the model is piecewise (auto switches algorithms), so start twice: from the file's values and
    # from a guess that matches the largest size's bandwidth and the smallest size's time
    guess = start.copy()
    first, last = int(np.argmax(inside)), len(inside) - 1 - int(np.argmax(inside[::-1]))
    ratio = before[last].time_us / measured[last]
    overshoot_us = max(measured[first] - before[first].time_us, 0.0)
    for i, knob in enumerate(chosen):
        if knob.name == "efficiency":
            guess[i] = start[i] * ratio
        elif knob.name == "collective_ns":
            guess[i] = start[i] + overshoot_us * 1e3
    result = None
    for x in (start, guess):
        x0 = np.clip(x / scale, lows, highs)
        attempt = least_squares(
            residuals, x0, bounds=(lows, highs), diff_step=1e-3, x_scale="jac", loss=loss, f_scale=0.1
        )
        if result is None or attempt.cost < result.cost:
            result = attempt
    values = result.x * scale
    after = model(values)
    stderr = _standard_errors(result.jac, result.fun, len(chosen))
    parameters = [
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
        for knob, s, v, e, sc in zip(chosen, start, values, stderr, scale, strict=True)
    ]
    fit_rows = [
        FitRow(
            bytes=row.size_bytes,
            measured_us=row.time_us,
            measured_busbw_gbps=row.busbw_gbps,
            before_us=b.time_us,
            after_us=a.time_us,
            after_busbw_gbps=a.busbw_gbps,
            algorithm=a.algorithm,
            measured_algorithm=row.algorithm,
            fitted=bool(in_range),
        )
        for row, b, a, in_range in zip(rows, before, after, inside, strict=True)
    ]
    notes = [] if loss == "linear" else [f"robust fit ({loss}): rows far off the curve weigh less"]
    if not inside.all():
        notes.append(
            f"fitted to the {int(inside.sum())} of {len(rows)} rows in --fit-sizes "
            f"{_range_text(fit_sizes)}; the other rows are shown, not fitted"
        )
    if inside.sum() <= len(chosen):
        notes.append(
            f"{int(inside.sum())} measured sizes for {len(chosen)} parameters: "
            "the fit is exact or underdetermined"
        )
    return Fit(
        measurement,
        base.name,
        str(topology_file) if topology_file else None,
        list(base_edits),
        group,
        algorithm,
        parameters,
        fit_rows,
        calls,
        notes,
        used,
        kept,
        fit_sizes,
    )


def _standard_errors(jac: np.ndarray, fun: np.ndarray, k: int) -> list[float | None]:
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
