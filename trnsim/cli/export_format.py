"""``--schedule-format``: ``collective --export-schedule`` in a registered schedule format
(:mod:`trnsim.collectives.formats`) instead of trnsim's own JSON."""

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from trnsim.errors import UsageError

OWN = "trnsim-schedule"  # trnsim's own JSON, written by trnsim.outputs.schedule_export

ScheduleFormatOption = Annotated[
    str | None,
    typer.Option(
        "--schedule-format",
        help="The format of --export-schedule: trnsim-schedule (trnsim's JSON: steps, flows, routes), "
        "msccl-xml (MSCCL's algorithm XML), or another listed by 'trnsim schedule formats'. Default: by "
        "the file's suffix (.xml: msccl-xml), else trnsim-schedule. The program is the --algo named, "
        "else the best one at the largest size.",
        show_default=False,
    ),
]


@dataclass(frozen=True)
class Shape:
    """A registered format the chosen algorithm's program is written in."""

    name: str

    def program(self, topo, group: list[str], traffic, algo: str, op: str):
        """The algorithm's program on the group; raises one line if the format cannot express it."""
        from trnsim.collectives.algorithms import REGISTRY
        from trnsim.collectives.formats import get
        from trnsim.collectives.schedule import Context

        program = REGISTRY[algo].program(Context(topo.planner, list(group), traffic), op)
        try:
            data = get(self.name).write(program, list(group))
        except UsageError as error:
            raise UsageError(f"--schedule-format {self.name}: {error}") from None
        return data

    def write(self, topo, traffic, result, path: Path) -> None:
        from trnsim.cli.options import write_text  # atomic; never over an input (checked before the run)

        data = self.program(topo, result.group, traffic, result.rows[-1].algorithm, result.op)
        write_text(path, data.decode())
        typer.echo(f"wrote {path} ({self.name}, {result.rows[-1].algorithm})", err=True)


def schedule_shape(path: Path | None, name: str | None) -> Shape | None:
    """The registered format ``--export-schedule`` is written in, or None for trnsim's own JSON."""
    if path is None:
        if name is not None:
            raise UsageError("--schedule-format says the format of --export-schedule FILE; give the file too")
        return None
    from trnsim.collectives.formats import FORMATS, get

    if name is None:
        from trnsim.collectives.formats import _load

        _load()  # every format module registers itself
        suffix = path.suffix.lower()
        guesses = [f.name for f in FORMATS.values() if f.write and suffix in f.suffixes and suffix != ".json"]
        return Shape(guesses[0]) if len(guesses) == 1 else None
    if name.startswith(OWN) and name not in FORMATS:
        return None
    try:
        chosen = get(name)
    except UsageError as error:
        raise UsageError(f"--schedule-format: {error} (or {OWN})") from None
    if chosen.write is None:
        raise UsageError(f"--schedule-format {name}: trnsim reads this format but does not write it")
    return Shape(name)
