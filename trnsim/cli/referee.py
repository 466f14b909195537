"""``trnsim collective OP --schedule FILE``: referee a schedule another tool made (read, check, cost
beside the bound and trnsim's best; :mod:`trnsim.studies.referee`)."""

from pathlib import Path
from typing import Annotated

import typer

ScheduleFile = Annotated[
    Path | None,
    typer.Option(
        "--schedule",
        help="Referee a schedule made by another tool (ForestColl trees, TE-CCL flows, and the formats "
        "`trnsim schedule` lists): check it computes the op (exit 1 with the first violation if not), "
        "place its ranks on --group (default: the chips the file names, else the first chips) and cost "
        "it beside the bound and trnsim's best algorithm.",
    ),
]
# what --schedule does not combine with, and why (the run is one group's, of the file's schedule)
_NOT_WITH = {
    "groups": "--groups",
    "skew": "--skew",
    "traffic_file": "--traffic",
    "heatmap": "--heatmap",
    "export_schedule": "--export-schedule",
    "show_range": "--range",
}


def referee_run(op: str, schedule: Path, schedule_format: str | None, topo, sizes, options: dict) -> None:
    """Referee ``schedule`` on ``topo``; ``options`` are the collective command's other options."""
    from trnsim import limits
    from trnsim.errors import UsageError
    from trnsim.model.runtime import choose_runtime
    from trnsim.outputs.referee import referee_table
    from trnsim.outputs.render import emit, print_error
    from trnsim.studies.referee import referee
    from trnsim.topology.groups import group_label, select_group
    from trnsim.yamlio import read_bytes

    given = [flag for key, flag in _NOT_WITH.items() if options.get(key)]
    if options.get("algo", "auto") != "auto":
        given.insert(0, "--algo")
    if given:
        raise UsageError(f"--schedule costs the file's schedule on one group: not with {', '.join(given)}")
    _, note = choose_runtime(
        topo, None, options.get("runtime"), "a runtime picks its own algorithm per size; --schedule gives one"
    )
    data = read_bytes(schedule, "schedule file", limits.TRAFFIC_BYTES)
    group, ranks = options.get("group"), options.get("ranks")
    chosen = select_group(topo, group, ranks) if group is not None or ranks is not None else None
    result = referee(
        topo,
        op,
        data,
        str(schedule),
        schedule_format,
        sizes,
        chosen,
        options.get("dtype", "float"),
        options.get("alpha_us"),
        options.get("chunking", (None, None)),
    )
    text = group_label(group, ranks) if chosen is not None else "from the file"
    payload, table = referee_table(topo, result, text)
    if note is not None:
        print_error(note, label="note")
    emit(payload, [table], options["fmt"])
