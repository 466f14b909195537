"""What a design point is judged by: a performance figure (higher is better), its cost and its power.

Three objectives, each written ``KIND:...``:

* ``busbw:OP:SIZE`` (the default, ``busbw:allreduce:1G``): the bus bandwidth of ``OP`` at ``SIZE``
  on every rank, as ``trnsim sweep`` runs it (the system's own runtime unless one is asked for);
  metric ``busbw_gbps``.
* ``moe:EP:SIZE``: the all-to-all of a mixture-of-experts layer: every group of ``EP`` consecutive
  ranks sends ``SIZE`` bytes per rank at once (the dispatch of :mod:`trnsim.studies.layout`, whose
  ``ep`` size is ``T/(cp tp) x k x H x e``), sharing the links; metric ``busbw_gbps``, the slowest
  group's.
* ``layout:DEGREES:SIZES``: a parallelism layout's step time (:mod:`trnsim.studies.layout`), e.g.
  ``layout:tp=4,ep=36:tp=16M,ep=64M``; dimensions not named have degree 1 and ``dp=*`` takes the
  ranks left over; every dimension of degree above 1 needs its size; metric ``steps_per_s``
  (``1e6 / step_time_us``: higher is better, as every metric here).

Each is reported raw, per thousand dollars of the system's capital cost and per kilowatt of its
power (``capex_usd`` and ``power_w`` of its bill of materials, :mod:`trnsim.studies.cost`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trnsim.errors import ParameterError, UsageError

KINDS = ("busbw", "moe", "layout")
DEFAULT = "busbw:allreduce:1G"


@dataclass(frozen=True)
class Objective:
    """A parsed objective (see the module docstring); ``degrees`` 0 stands for ``*``."""

    kind: str
    text: str
    op: str = "allreduce"
    size: int = 1 << 30
    degrees: tuple[tuple[str, int], ...] = ()
    sizes: tuple[tuple[str, int], ...] = ()

    @property
    def metric(self) -> str:
        """The row key of the performance figure (higher is better)."""
        return "steps_per_s" if self.kind == "layout" else "busbw_gbps"

    @property
    def time_key(self) -> str:
        """The row key of the time the metric comes from (microseconds)."""
        return "step_time_us" if self.kind == "layout" else "time_us"

    @property
    def unit(self) -> str:
        return "steps/s" if self.kind == "layout" else "GB/s"

    def describe(self) -> str:
        """One phrase: what the metric measures."""
        from trnsim.units import format_size

        if self.kind == "busbw":
            return f"{self.op} busbw at {format_size(self.size)} on every rank"
        if self.kind == "moe":
            return f"MoE all-to-all of {format_size(self.size)} per rank, groups of {self.degrees[0][1]} ranks at once"
        degrees = ",".join(f"{n}={d or '*'}" for n, d in self.degrees)
        return f"layout {degrees}: steps per second (1e6 / step time in us)"


def parse_objective(text: str | None) -> Objective:
    """An objective from its text (``None``: :data:`DEFAULT`).

    Raises
    ------
    ParameterError
        A kind, op, size or dimension that is not one (named as the parameter ``objective``).
    """
    from trnsim.collectives.ops import get_op
    from trnsim.units import parse_size

    text = DEFAULT if text is None else text.strip()
    kind, *parts = [part.strip() for part in text.split(":")]
    kind = kind.lower()

    def refuse(why: str):
        return ParameterError(why, "objective", repr(text))

    try:
        if kind == "busbw" and len(parts) <= 2:
            op = get_op(parts[0] if parts else "allreduce").name
            size = parse_size(parts[1]) if len(parts) > 1 else 1 << 30
            if size < 1:  # no system runs an op of nothing: the input's mistake, not each point's
                raise refuse("expected a size of at least 1 byte")
            return Objective(kind, text, op=op, size=size)
        if kind == "moe" and len(parts) == 2:
            if not parts[0].isdigit() or int(parts[0]) < 2:
                raise refuse("expected moe:EP:SIZE with EP, the ranks of an expert-parallel group, >= 2")
            return Objective(kind, text, "alltoall", parse_size(parts[1]), (("ep", int(parts[0])),))
        if kind == "layout" and len(parts) == 2:
            return _layout(text, parts[0], parts[1])
    except UsageError as exc:
        if isinstance(exc, ParameterError) and "objective" in exc.parameters:
            raise
        raise refuse(exc.template) from None
    raise refuse("expected busbw:OP:SIZE, moe:EP:SIZE or layout:DIM=DEGREE,...:DIM=SIZE,...")


def _layout(text: str, degrees_text: str, sizes_text: str) -> Objective:
    from trnsim.studies.layout import DIMENSIONS
    from trnsim.units import parse_size

    def pairs(part: str, what: str) -> list[tuple[str, str]]:
        found = []
        for item in part.split(","):
            name, sep, value = (piece.strip() for piece in item.partition("="))
            if not sep or name.lower() not in DIMENSIONS or any(name.lower() == n for n, _ in found):
                raise ParameterError(
                    f"expected {what} with each DIM one of {', '.join(DIMENSIONS)}, once",
                    "objective",
                    repr(text),
                )
            found.append((name.lower(), value))
        return found

    degrees = []
    for name, value in pairs(degrees_text, "DIM=DEGREE,... (DEGREE a whole number or *)"):
        if value != "*" and (not value.isdigit() or int(value) < 1):
            raise ParameterError(
                f"the degree of {name} must be a whole number >= 1 or *", "objective", repr(text)
            )
        degrees.append((name, 0 if value == "*" else int(value)))
    if sum(1 for _, degree in degrees if degree == 0) > 1:
        raise ParameterError("at most one dimension takes the ranks left over (*)", "objective", repr(text))
    sizes = tuple((name, parse_size(value)) for name, value in pairs(sizes_text, "DIM=SIZE,..."))
    sized = {name for name, _ in sizes}
    missing = [name for name, degree in degrees if degree != 1 and name not in sized]
    if missing:
        raise ParameterError(
            f"give the {missing[0]} message size (after the second ':')", "objective", repr(text)
        )
    return Objective("layout", text, degrees=tuple(degrees), sizes=sizes)


def layout_degrees(objective: Objective, ranks: int) -> dict[str, int]:
    """The layout's degrees on a system of ``ranks`` ranks, ``*`` resolved.

    Raises
    ------
    UsageError
        The named degrees do not divide the ranks (the point is infeasible on that system).
    """
    named = {name: degree for name, degree in objective.degrees if degree}
    product = 1
    for degree in named.values():
        product *= degree
    rest = next((name for name, degree in objective.degrees if degree == 0), None)
    if rest is not None:
        if ranks % product:
            raise UsageError(
                f"the layout's degrees multiply to {product}, which does not divide {ranks} ranks"
            )
        named[rest] = ranks // product
    elif product != ranks:
        raise UsageError(f"the layout's degrees multiply to {product}, but the system has {ranks} ranks")
    return named


def measure(objective: Objective, task) -> dict:
    """The metric and its time for one point (``task``: a :class:`trnsim.studies.design.run.PointTask`).

    Raises
    ------
    TrnsimError
        The objective cannot run on this system (an op a runtime cannot price, degrees that do not
        fit): the caller marks the point infeasible with the reason.
    """
    if objective.kind == "layout":
        return _measure_layout(objective, task)
    from trnsim.model.backend import Selection
    from trnsim.studies.sweep import Task, run_task

    chosen = Selection(groups=f"blocks:{objective.degrees[0][1]}") if objective.kind == "moe" else Selection()
    sweep = Task(
        task.variant, task.common, objective.op, "auto", (objective.size,), chosen, task.dtype, task.runtime
    )
    (row,) = run_task(sweep)
    if "skipped" in row:
        raise row["skipped"]
    return {
        "runtime": row.get("runtime", "ideal"),
        "busbw_gbps": row["busbw_gbps"],
        "time_us": row["time_us"],
    }


def _measure_layout(objective: Objective, task) -> dict:
    from trnsim.studies.layout import DIMENSIONS, evaluate_layout
    from trnsim.studies.sweep import _topology
    from trnsim.topology.groups import select_group

    topology = _topology(task.variant)
    members = select_group(topology, None, None)
    degrees = layout_degrees(objective, len(members))
    order = tuple(name for name in DIMENSIONS if degrees.get(name, 1) > 1)
    if not order:
        raise UsageError(f"the layout has no dimension of degree above 1 on {len(members)} ranks")
    result = evaluate_layout(topology, members, degrees, order, dict(objective.sizes), task.dtype)
    if not result.time_us > 0:  # every size is at least a byte: a step takes time
        raise UsageError(f"the layout's step time is {result.time_us} us: give sizes of at least one byte")
    return {"runtime": "ideal", "steps_per_s": 1e6 / result.time_us, "step_time_us": result.time_us}
