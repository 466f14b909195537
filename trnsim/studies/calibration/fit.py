"""Fit the model's free parameters to a measured run by least squares.

The model's time for a collective is a function of parameters that no datasheet gives
(:mod:`~trnsim.studies.calibration.knobs`: per-step and per-call latency, per-link latency, link
efficiency). Each is a ``--set`` edit of the topology file, so a fit is a list of edits that every
command can apply (``--calibration``). :func:`fit` puts the steps together:

* :mod:`~trnsim.studies.calibration.regimes`: which measured sizes are fitted;
* :mod:`~trnsim.studies.calibration.runs`: the model at any values of the parameters, row by row,
  and the residuals ``log(model / measured)``;
* :mod:`~trnsim.studies.calibration.solve`: scipy's trust-region least squares with bounds, and the
  standard errors from the Jacobian at the optimum.
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trnsim.errors import ParameterError, UsageError
from trnsim.studies.calibration import regimes, solve
from trnsim.studies.calibration.knobs import choose, initial_value, knob_for, scales
from trnsim.studies.calibration.mapping import RANKS_KEY, check_mapping, says_ranks_per_chip
from trnsim.studies.calibration.measurement import Measurement
from trnsim.studies.calibration.runs import FitRow, ModelRuns, fit_rows


@dataclass
class Fit:
    """The result of a calibration."""

    measurement: Measurement
    sku: str
    topology_file: str | None
    base_edits: list[str]
    group: str | None
    algorithm: str
    parameters: list[solve.Fitted]
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
            knob = knob_for(parameter.name, self.runtime)
            fitted += knob.edits(parameter.value, self.used_classes, self.kept_classes)
        return list(self.base_edits) + fitted

    fit_sizes: tuple[int | None, int | None] = (None, None)  # the fitted range of sizes, bytes
    runtime: str = "ideal"  # what the parameters were fitted against

    @property
    def rms_error(self) -> float:
        """Root mean square of the log errors of the fitted rows."""
        fitted = [row for row in self.rows if row.fitted]
        return math.sqrt(sum(math.log1p(row.error) ** 2 for row in fitted) / len(fitted))


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
    ranks_per_chip: int | None = None,
    runtime: str | None = None,
    arguments=None,
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
        Names from :data:`~trnsim.studies.calibration.knobs.KNOBS` to fit; the others keep the
        file's values.
    algorithm : str
        ``auto``, an algorithm's name, or ``measured`` (each row with the algorithm the run reports).
    loss : str
        ``linear`` (plain least squares) or ``soft_l1`` (robust: a row off by more than about 10% weighs
        less, for runs with a size that no alpha-beta curve follows).
    fit_sizes : tuple of (int or None, int or None)
        Fit only the rows whose size lies in ``[min, max]`` bytes (None: unbounded). The other rows are
        still evaluated and reported, marked as not fitted: for runs whose library changes protocol
        between sizes, so that the parameters describe one regime (e.g. NCCL's large sizes).
    ranks_per_chip : int, optional
        How many of the run's ranks share a chip (nccom-test counts NeuronCores: 4 for Trn2 at
        LNC=2): an edit of ``chip.ranks`` before ``base_edits``, kept in the calibration. A run whose
        ranks cannot map onto the system is refused (:mod:`~trnsim.studies.calibration.mapping`).
    runtime : str, optional
        What the parameters are fitted against: ``ideal`` (the fabric's model; the default: a
        calibration is of the ideal model unless a runtime is asked for) or a runtime of
        :mod:`trnsim.model.runtime`, whose own parameters are fitted (``call_us``, and the link
        ``efficiency`` its rates follow: :data:`~trnsim.studies.calibration.knobs.RUNTIME_KNOBS`)
        with each row priced by its pick, as the library would run it.
    arguments : Arguments, optional
        The op's root, pairs or counts as the run had them (:mod:`trnsim.collectives.arguments`).
    """
    if loss not in ("linear", "soft_l1"):
        raise ParameterError("expected linear or soft_l1", "loss", repr(loss))
    if algorithm == "all":
        raise ParameterError(
            "a fit needs one model per row; give auto, an algorithm or measured", "algo", "all"
        )
    from trnsim import limits

    limits.SIZES.check(len(measurement.rows), f"{measurement.path}: the run has")
    from trnsim.topology.groups import select_group
    from trnsim.topology.load import load_topology

    runtime = "ideal" if runtime is None else runtime.strip().lower()
    chosen = choose(knobs, runtime)
    if runtime != "ideal" and algorithm != "auto":
        raise ParameterError("a runtime picks its own algorithm per size; give auto", "algo", algorithm)
    if ranks_per_chip is not None:
        if says_ranks_per_chip(base_edits):
            raise UsageError(f"give {{ranks_per_chip}} or an edit of {RANKS_KEY}, not both")
        base_edits = [f"{RANKS_KEY}={ranks_per_chip}", *base_edits]
    base = load_topology(sku, topology_file, base_edits)
    check_mapping(measurement, base, ranks_per_chip is not None or says_ranks_per_chip(base_edits), group)
    members = select_group(base, group, None if group else measurement.ranks)
    if len(members) != measurement.ranks:
        raise UsageError(
            f"{measurement.path}: the run has {measurement.ranks} ranks but the group has {len(members)}"
        )
    sizes = [row.size_bytes for row in measurement.rows]
    inside = regimes.in_range(sizes, fit_sizes, measurement.path)

    def load(edits):
        return load_topology(sku, topology_file, list(base_edits) + edits)

    if runtime != "ideal":
        from trnsim.model.runtime import check_runtime

        check_runtime(base, members, runtime)
    runs = ModelRuns(measurement, load, base, members, algorithm, dtype, runtime, arguments)
    before = runs.rows([], [])  # the file's own values: the 'before' column, and which classes the run uses
    runs.used += sorted({cls for row in before for cls, share in row.link_utilisation.items() if share > 0})
    runs.kept.update({cls: v for cls, v in base.spec.efficiency.classes.items() if cls not in runs.used})
    if not runs.used and any(knob.name == "efficiency" for knob in chosen):
        raise UsageError(f"{measurement.path}: the run moves no bytes over any link; fit without efficiency")
    scale = scales(chosen)
    start = np.asarray([initial_value(base.spec, knob, runs.used) for knob in chosen])
    measured = np.asarray([row.time_us for row in measurement.rows])
    # the model is piecewise (auto switches algorithms), so start twice: from the file's values and
    # from a guess that matches the largest size's bandwidth and the smallest size's time
    starts = (start, solve.second_start(chosen, start, before, measured, inside))
    values, stderr = solve.solve(runs.residuals(chosen, scale, inside), chosen, starts, scale, loss)
    after = runs.rows(chosen, values)
    return Fit(
        measurement,
        base.name,
        str(topology_file) if topology_file else None,
        list(base_edits),
        group,
        algorithm,
        solve.fitted(chosen, start, values, stderr, scale, runs.used),
        fit_rows(measurement, before, after, inside),
        runs.calls,
        regimes.notes(loss, inside, len(chosen), fit_sizes),
        runs.used,
        runs.kept,
        fit_sizes,
        runtime,
    )


def fit_each_regime(
    measurement: Measurement,
    sku: str | None,
    topology_file: Path | None,
    base_edits: list[str],
    group: str | None,
    knobs: list[str],
    **options,
) -> list[Fit]:
    """One fit per regime of the measured curve (:func:`~trnsim.studies.calibration.regimes.detect_regimes`),
    each over its own sizes with the same ``knobs`` and ``options`` as :func:`fit`; empty when the
    curve has one regime or the caller chose a range (``fit_sizes``). Each regime has more rows than
    parameters."""
    if tuple(options.get("fit_sizes", (None, None))) != (None, None):
        return []
    sizes = [row.size_bytes for row in measurement.rows]
    times = [row.time_us for row in measurement.rows]
    runtime = options.get("runtime") or "ideal"
    ranges = regimes.detect_regimes(sizes, times, min_rows=max(3, len(choose(knobs, runtime)) + 1))
    if len(ranges) < 2:
        return []
    return [
        fit(
            measurement,
            sku,
            topology_file,
            base_edits,
            group,
            knobs,
            **{**options, "fit_sizes": (sizes[start], sizes[end - 1])},
        )
        for start, end in ranges
    ]
