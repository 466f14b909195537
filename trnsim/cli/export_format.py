"""``--schedule-format``: ``collective --export-schedule`` in a registered schedule format
(:mod:`trnsim.collectives.formats`) instead of trnsim's own JSON."""

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from trnsim.errors import UsageError

OWN = "trnsim-schedule"  # trnsim's own JSON, written by trnsim.outputs.schedule_export
# the format a suffix means when --schedule-format is not given (any other suffix: trnsim's own JSON)
BY_SUFFIX = {".xml": "msccl-xml", ".et": "chakra"}

ScheduleFormatOption = Annotated[
    str | None,
    typer.Option(
        "--schedule-format",
        help="The format of the schedule file: written by --export-schedule (trnsim-schedule: trnsim's "
        "JSON with every route; msccl-xml: MSCCL's algorithm XML; or another listed by 'trnsim schedule "
        "formats'; default by the file's suffix, .xml: msccl-xml, else trnsim-schedule; the program is "
        "the --algo named, else the best one at the largest size) or read by --schedule (default: "
        "recognised from its content).",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class Shape:
    """A registered format the chosen algorithm's program is written in."""

    name: str

    def program(self, topo, group: list[str], traffic, algo: str, op: str):
        """The algorithm's program on the group; raises one line if the format cannot express it
        (a root or unequal blocks are not known yet: :meth:`write` refuses those after the run)."""
        from trnsim.collectives.algorithms import REGISTRY
        from trnsim.collectives.ops import get_op
        from trnsim.collectives.schedule import Context, NotApplicable

        try:
            program = REGISTRY[algo].program(Context(topo.planner, list(group), traffic), get_op(op).base)
        except NotApplicable as why:
            raise UsageError(f"--schedule-format {self.name}: {algo} has no program: {why}") from None
        return self.encode(program, list(group), 1 << 20)

    def encode(self, program, group: list[str], size: int) -> dict[str, bytes]:
        """The files of ``program``: ``{"": data}`` for one file, ``{".{r}.et": ...}`` per rank for
        Chakra (its traces are one file per rank, at a given size)."""
        from trnsim.collectives.formats import get

        try:
            if self.name == "chakra":
                from trnsim.collectives.formats.chakra import write_traces

                return {f".{r}.et": data for r, data in write_traces(program, group, size).items()}
            return {"": get(self.name).write(program, group)}
        except UsageError as error:
            raise UsageError(f"--schedule-format {self.name}: {error}") from None

    def write(self, topo, traffic, result, path: Path) -> None:
        from trnsim.atomic import write_atomic  # never over an input (checked before and during the run)
        from trnsim.collectives.schedule import NotApplicable

        algo = result.rows[-1].algorithm
        try:  # the program of the plan that was costed: its root, traffic matrix or unequal blocks
            program = result.plans[algo].program(result.op)
        except NotApplicable as why:
            raise UsageError(f"--schedule-format {self.name}: {algo} has no program: {why}") from None
        files = self.encode(program, list(result.group), result.rows[-1].bytes)
        stem = path.with_suffix("") if path.suffix.lower() == ".et" else path
        for suffix, data in files.items():
            write_atomic(Path(f"{stem}{suffix}") if suffix else path, data)
        written = path if "" in files else f"{stem}.{{0..{len(files) - 1}}}.et"
        typer.echo(f"wrote {written} ({self.name}, {algo})", err=True)


def schedule_shape(path: Path | None, name: str | None) -> Shape | None:
    """The registered format ``--export-schedule`` is written in, or None for trnsim's own JSON."""
    if path is None:
        if name is not None:
            raise UsageError("--schedule-format says the format of --export-schedule FILE; give the file too")
        return None
    from trnsim.collectives.formats import get

    if name is None:  # by the suffix; several formats write XML, and .xml means MSCCL's
        name = BY_SUFFIX.get(path.suffix.lower())
        return None if name is None else Shape(name)
    if name.startswith(OWN):  # written from the routed plan (trnsim-schedule/2), not by the registry
        return None
    try:
        chosen = get(name)
    except UsageError as error:
        raise UsageError(f"--schedule-format: {error} (or {OWN})") from None
    if chosen.write is None:
        raise UsageError(f"--schedule-format {name}: trnsim reads this format but does not write it")
    return Shape(name)
