"""Evaluating design points: each builds its system, costs it, measures its objective; then the
constraints and the front over all of them.

A point whose system cannot be built (a lane or port budget exceeded, a switch asked for more ports
than it has: the checks :func:`trnsim.topology.load.load_topology` makes) or on which the objective
cannot run (layout degrees that do not fit its ranks) is a row marked infeasible with its reason,
not an error. An edit the schema refuses (a misspelt key, a value of the wrong type) is a mistake in
the input, refused before any point is evaluated (:func:`check_edits`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from trnsim.errors import ParameterError, TrnsimError
from trnsim.studies.design.constraints import Constraint, broken
from trnsim.studies.design.objectives import Objective, measure
from trnsim.studies.design.pareto import MAXIMISE, MINIMISE, pareto_front
from trnsim.studies.variants import Variant


@dataclass(frozen=True)
class FaultModel:
    """The failure rates (MTTF in hours per rate class) and repair time behind ``--faults``."""

    rates: tuple[tuple[str, float], ...]
    mttr_h: float


@dataclass(frozen=True)
class PointTask:
    """One design point, as a worker evaluates it (picklable: plain data and a top-level function)."""

    index: int
    variant: Variant  # the system with the common edits, then the point's own
    common: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  # each varied key with its value here, as written
    objective: Objective
    dtype: str = "float"
    runtime: str | None = None
    parts: Path | None = None
    faults: FaultModel | None = None
    system: str = field(default="", compare=False)  # the system as the user named it


def evaluate_point(task: PointTask) -> dict:
    """The row of one point: its values, whether it is feasible (and why not), its cost and power,
    its metric raw, per thousand dollars and per kilowatt (and under faults, if asked)."""
    from trnsim.studies.sweep import _topology

    o = task.objective
    row = {"point": task.index, "system": task.system, **dict(task.values)}
    try:
        topology = _topology(task.variant)
        measured = measure(o, task)
        if task.faults is not None:
            from trnsim.studies.design.faults import busbw_under_faults

            rates, mttr = dict(task.faults.rates), task.faults.mttr_h
            measured.update(busbw_under_faults(task, o.op, o.size, measured["runtime"], rates, mttr))
    except TrnsimError as reason:
        return {**row, "feasible": False, "reason": reason}
    bill = cost_of(topology, task.parts)
    row.update(feasible=True, reason=None, **measured, **bill)
    perf = [o.metric] + (["expected_busbw_gbps"] if task.faults is not None else [])
    for key in perf:
        row[f"{key}_per_kusd"] = 1e3 * row[key] / bill["capex_usd"] if bill["capex_usd"] > 0 else None
        row[f"{key}_per_kw"] = 1e3 * row[key] / bill["power_w"] if bill["power_w"] > 0 else None
    return row


def cost_of(topology, parts: Path | None) -> dict:
    """The system's capital cost and power from its bill of materials (:mod:`trnsim.studies.cost`)."""
    from trnsim.studies.cost import bill_of_materials

    # a failed part is still bought: the healthy system is priced (a degraded one has fewer chips,
    # which the scale-out share cannot divide into whole racks)
    bill = bill_of_materials(getattr(topology, "healthy", None) or topology, _parts(parts))
    return {
        "capex_usd": bill.capex_usd,
        "power_w": bill.power_w,
        "network_capex_usd": bill.network_capex_usd,
        "network_power_w": bill.network_power_w,
    }


@cache
def _parts(path: Path | None):
    """The parts catalog (with ``path``'s), read once per process rather than once per point."""
    from trnsim.studies.cost import load_parts

    return load_parts(path)


def columns_of(objective: Objective, keys: list[str], faults: bool) -> list[str]:
    """Every column of the design table, in order (rows of infeasible points leave the numbers out)."""
    metric = [objective.metric] + (["expected_busbw_gbps"] if faults else [])
    return [
        "point", "system", *keys, "feasible", "reason", "runtime", objective.metric, objective.time_key,
        *(["expected_busbw_gbps", "p_multiple_failures"] if faults else []),
        "capex_usd", "power_w", "network_capex_usd", "network_power_w",
        *(f"{m}_per_kusd" for m in metric), *(f"{m}_per_kw" for m in metric),
        "violates", "front",
    ]  # fmt: skip


def numeric_columns(objective: Objective, faults: bool) -> list[str]:
    """The columns a constraint may name."""
    skip = {"point", "system", "feasible", "reason", "runtime", "violates", "front"}
    return [key for key in columns_of(objective, [], faults) if key not in skip]


def run_points(
    tasks: list[PointTask], engine=None, progress: Callable[[PointTask], None] | None = None
) -> Iterator[dict]:
    """Each task's row, in the tasks' order: here (``engine`` None), or through ``engine`` (an
    :class:`trnsim.studies.engines.EngineOptions`, which gives the same rows in the same order)."""
    from trnsim.studies.engines import EngineOptions, run_ordered

    yield from run_ordered(evaluate_point, tasks, engine or EngineOptions(), progress)


def check_edits(systems: list[Variant], edits: list[list[str]]) -> list[str]:
    """Refuse, before any work, an edit the schema refuses on a system: each system with each
    varied edit alone (with the common ones), read and validated but not built. Returns each
    system's name.

    Raises
    ------
    TrnsimError
        The schema's refusal, naming the file and the edit.
    """
    from trnsim.spec.catalog import load_spec
    from trnsim.topology.faults.specs import FAIL_KEY

    names = []
    for variant in systems:
        # failures apply to the built system (load_topology): the schema reads the other edits
        base = [text for text in variant.edits() if text.partition("=")[0].strip().lower() != FAIL_KEY]
        names.append(load_spec(variant.sku, variant.file, base).spec.name)
        for extra in edits:
            for edit in extra:
                try:
                    load_spec(variant.sku, variant.file, [*base, edit])
                except ParameterError as exc:
                    raise _as_varied(exc, edit, names[-1] if len(systems) > 1 else None) from None
    return names


def _as_varied(error: ParameterError, edit: str, system: str | None) -> TrnsimError:
    """A varied edit's refusal named as the ``vary`` parameter's (the schema names every edit an
    ``overrides`` one), and the system it was refused on when there are several."""
    if error.parameters != ("overrides",) or ": " not in error.template:
        return error
    reason = error.template.split(": ", 1)[1]
    if "{" in reason:  # it names other parameters: keep it whole
        return error
    renamed = ParameterError(reason, "vary", edit.partition("=")[0].strip())
    return renamed.within(f"on {system}") if system else renamed


# what the front trades performance against: its name -> the columns minimised
FRONTS = {"cost": ("capex_usd",), "power": ("power_w",), "both": ("capex_usd", "power_w")}


def judge(rows: list[dict], constraints: list[Constraint], performance: str, front: str = "both") -> None:
    """Mark each row with the constraints it breaks (``violates``) and whether it is on the front.

    The front is over the feasible rows that break no constraint: ``performance`` maximised and the
    columns of ``FRONTS[front]`` minimised, all at once. Infeasible rows have neither mark (None).
    """
    eligible = []
    for row in rows:
        if not row["feasible"]:
            row["violates"], row["front"] = None, None
            continue
        row["violates"] = "; ".join(broken(row, constraints))
        row["front"] = False
        if not row["violates"] and all(row.get(k) is not None for k in (performance, *FRONTS[front])):
            eligible.append(row)
    points = [(row[performance], *(row[key] for key in FRONTS[front])) for row in eligible]
    senses = (MAXIMISE, *(MINIMISE for _ in FRONTS[front]))
    for row, on in zip(eligible, pareto_front(points, senses), strict=True):
        row["front"] = on


def tidy(row: dict, columns: list[str]) -> dict:
    """The row with exactly ``columns``, in order (None where a point has no such number)."""
    return {key: row.get(key) for key in columns}
