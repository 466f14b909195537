"""Predicted against measured, row by row, and summarised the way ASTRA-sim reports its validation:
the geometric-mean error per system and rank count, fitted and predicted runs kept apart.

The error of a row is ``predicted / measured - 1`` on time (so +20% means the model is 20% slow,
and its bus bandwidth 17% low). The geometric-mean error of a set of rows is
``exp(mean |ln(predicted / measured)|) - 1``: a factor of two too fast and a factor of two too slow
count alike, and no row can cancel another.

A predicted row passes when its error is within its tolerance: the run's recorded ``tolerance_pct``
for that size, else :data:`LARGE_TOLERANCE` at or above :data:`LARGE_BYTES` and
:data:`SMALL_TOLERANCE` below (issue 25's targets). Fitted rows are shown and summarised, never gated:
a model matching what it was fitted to proves nothing. Excluded rows (a run of conditions the model
does not claim, such as a runtime release older than the one modelled; the run says why) are shown
and summarised apart, never gated.

>>> round(geomean_error([2.0, 0.5]), 3)  # twice too slow and twice too fast: a factor of 2
1.0
"""

import math
from dataclasses import dataclass

from trnsim.studies.validation.predict import Predicted

LARGE_BYTES = 256 << 20  # from here every published curve is within 10% of its plateau
LARGE_TOLERANCE = 0.15
SMALL_TOLERANCE = 0.30


@dataclass(frozen=True)
class ValidationRow:
    """One size of one run: measured, predicted and the error, with the gate it faces."""

    run_id: str
    system: str
    op: str
    ranks: int
    role: str  # predicted | fitted | excluded
    runtime: str  # the runtime that priced it ("" when the run was not priced)
    bytes: int
    measured_us: float
    predicted_us: float | None
    choice: str
    tolerance: float | None  # None for fitted rows (not gated)

    @property
    def error(self) -> float | None:
        """``predicted / measured - 1`` (None when the run was not priced)."""
        return None if self.predicted_us is None else self.predicted_us / self.measured_us - 1

    @property
    def passed(self) -> bool:
        """Within tolerance (fitted and unpriced rows pass: they are not gated)."""
        if self.tolerance is None or self.error is None:
            return True
        return abs(self.error) <= self.tolerance + 1e-12


def tolerance_for(run, nbytes: int) -> float | None:
    """The gate a row faces: the run's recorded tolerance for the size, else the rule by size."""
    from trnsim.units import parse_size

    if run.role != "predicted":
        return None
    for size, pct in run.tolerance_pct.items():
        if parse_size(size) == nbytes:
            return pct / 100
    return LARGE_TOLERANCE if nbytes >= LARGE_BYTES else SMALL_TOLERANCE


def rows_of(predicted: Predicted) -> list[ValidationRow]:
    """One :class:`ValidationRow` per measured size of ``predicted.run``."""
    run = predicted.run
    rows = []
    for nbytes, measured in run.measured_us():
        got = predicted.times_us.get(nbytes)
        rows.append(
            ValidationRow(
                run.id,
                run.system,
                run.op,
                run.ranks,
                run.role,
                predicted.runtime,
                nbytes,
                measured,
                got,
                predicted.choices.get(nbytes, ""),
                tolerance_for(run, nbytes),
            )
        )
    return rows


def geomean_error(ratios) -> float:
    """``exp(mean |ln r|) - 1`` over ``ratios`` (predicted / measured), 0 for none."""
    logs = [abs(math.log(r)) for r in ratios if r > 0 and math.isfinite(r)]
    return math.exp(sum(logs) / len(logs)) - 1 if logs else 0.0


@dataclass(frozen=True)
class GroupSummary:
    """The rows of one system, rank count and role, summarised."""

    system: str
    ranks: int
    role: str
    runs: int
    rows: int
    geomean_error: float
    worst_error: float  # the signed error of the row furthest off
    failed: int  # predicted rows outside their tolerance


def summarise(rows: list[ValidationRow]) -> list[GroupSummary]:
    """Per (system, ranks, role): the geometric-mean error, the worst row and the failures."""
    groups: dict[tuple[str, int, str], list[ValidationRow]] = {}
    for row in rows:
        if row.error is not None:
            groups.setdefault((row.system, row.ranks, row.role), []).append(row)
    out = []
    for (system, ranks, role), members in sorted(groups.items()):
        errors = [row.error for row in members]
        out.append(
            GroupSummary(
                system,
                ranks,
                role,
                len({row.run_id for row in members}),
                len(members),
                geomean_error([1 + e for e in errors]),
                max(errors, key=abs),
                sum(not row.passed for row in members),
            )
        )
    return out
