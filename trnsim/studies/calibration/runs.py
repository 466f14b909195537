"""The model run a fit compares with the measurement: the system with the knobs' edits applied,
each measured size evaluated on the run's group, and the rows of measured against modelled times.

Residuals are ``log(model / measured)`` per row, so a 10% miss costs the same at 1 KiB as at 1 GiB.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.errors import UsageError
from trnsim.studies.calibration.knobs import Knob
from trnsim.studies.calibration.measurement import Measurement

# the algorithm a tool reports, as trnsim's algorithms: the first that applies is used
# (Neuron's KangaRing is two link-disjoint rings: trnsim's multiring where the group has direct links)
MEASURED_ALGORITHMS = {
    "kangaring": ("multiring", "ring"),
    "ring": ("ring",),
    "mesh": ("mesh",),
    "rdh": ("rdh",),
    "tree": ("tree",),
}


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


class ModelRuns:
    """The model of one measured run, evaluated at any values of the knobs (each call counted).

    Parameters
    ----------
    measurement : Measurement
        The measured run.
    load : callable
        ``load(edits)`` builds the system with ``--set`` edits (the base edits included).
    base : Topology
        The system with the base edits: the group's ranks are named on it.
    members : list of str
        The ranks the run used, on ``base``.
    algorithm, dtype : str
        ``auto``, an algorithm, or ``measured`` (each row with the algorithm the run reports).
    """

    def __init__(
        self,
        measurement: Measurement,
        load,
        base,
        members: list[str],
        algorithm: str,
        dtype: str,
        runtime: str = "ideal",
        arguments=None,
    ):
        self.measurement, self.load, self.base, self.members = measurement, load, base, members
        self.algorithm, self.dtype, self.runtime = algorithm, dtype, runtime
        self.arguments = arguments  # the op's root, pairs or counts
        self.sizes = [row.size_bytes for row in measurement.rows]
        self.calls = 0
        self.used: list[str] = []  # link classes the run's traffic crosses (set after the first run)
        self.kept: dict[str, float] = {}  # the file's efficiencies of the other classes
        self._chosen_algorithms: dict[str, str] = {}  # a measured name -> the trnsim algorithm that applied
        if algorithm == "measured":
            missing = [row.line for row in measurement.rows if row.algorithm is None]
            if missing:
                raise UsageError(
                    f"{measurement.path}:{missing[0]}: {{algo}} measured needs the algorithm of every row "
                    "(nccom-test --show-algorithm)",
                    names="algo",
                )

    def rows(self, knobs: list[Knob], values) -> list:
        """The engine's rows at every measured size with ``knobs`` set to ``values``."""
        from trnsim.model.engine import evaluate

        self.calls += 1
        edits = []
        for knob, value in zip(knobs, values, strict=True):
            edits += knob.edits(float(value), self.used, self.kept)
        topology = self.load(edits)
        group_now = [topology.chips[self.base.rank_of[chip]] for chip in self.members]
        if self.algorithm == "measured":
            return self._as_measured(topology, group_now)
        m = self.measurement
        ideal = evaluate(
            topology,
            m.op,
            self.sizes,
            group_now,
            algo=self.algorithm,
            dtype=self.dtype,
            arguments=self.arguments,
        )
        if self.runtime == "ideal":
            return ideal.rows
        from trnsim.model.runtime import apply_runtime

        return apply_runtime(topology, ideal, self.runtime).rows  # the runtime's pick and time

    def _as_measured(self, topology, group_now) -> list:
        """Each row with the algorithm the run reports (mapped by :data:`MEASURED_ALGORITHMS`)."""
        from trnsim.errors import NotApplicableError
        from trnsim.model.engine import evaluate

        rows = self.measurement.rows
        by_name: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            by_name.setdefault(row.algorithm.lower(), []).append(i)
        out = [None] * len(rows)
        for name, where in by_name.items():
            candidates = self._chosen_algorithms.get(name)
            options = (candidates,) if candidates else MEASURED_ALGORITHMS.get(name, (name,))
            for option in options:
                try:
                    got = evaluate(
                        topology,
                        self.measurement.op,
                        [self.sizes[i] for i in where],
                        group_now,
                        algo=option,
                        dtype=self.dtype,
                        arguments=self.arguments,
                    ).rows
                except (NotApplicableError, UsageError):
                    continue
                self._chosen_algorithms[name] = option
                for i, row in zip(where, got, strict=True):
                    out[i] = row
                break
            else:
                raise UsageError(
                    f"{self.measurement.path}: no trnsim algorithm models {name!r} on this group"
                )
        return out

    def residuals(self, knobs: list[Knob], scale: np.ndarray, inside: np.ndarray):
        """``residuals(scaled values)``: the log errors of the rows ``inside`` the fitted range."""
        measured = np.asarray([row.time_us for row in self.measurement.rows])

        def residuals(scaled: np.ndarray) -> np.ndarray:
            times = np.asarray([row.time_us for row in self.rows(knobs, scaled * scale)])
            return np.log(times[inside] / measured[inside])

        return residuals


def fit_rows(measurement: Measurement, before: list, after: list, inside: np.ndarray) -> list[FitRow]:
    """Each measured row beside the model's before and after the fit."""
    return [
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
        for row, b, a, in_range in zip(measurement.rows, before, after, inside, strict=True)
    ]
