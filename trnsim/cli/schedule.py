"""``trnsim schedule``: schedule files in the formats runtimes read (:mod:`trnsim.collectives.formats`)."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import FormatOption
from trnsim.errors import ThresholdError
from trnsim.outputs.render import Format, emit, kv_table

FormatOut = Annotated[Format, typer.Option("--format-out", help="Output format.", case_sensitive=False)]

app = typer.Typer(
    help="Read schedule files (MSCCL XML, ...) and prove them correct.\n\nExamples:\n\n"
    "trnsim schedule check examples/schedules/ring4.xml\ntrnsim schedule formats",
    no_args_is_help=True,
)

ENDS = {  # what check() proves the ranks end with, per collective
    "allreduce": "every rank ends with every block, summed over all {p} ranks, each once",
    "allgather": "every rank ends with every rank's block",
    "reducescatter": "every rank ends with its own block, summed over all {p} ranks, each once",
    "alltoall": "every rank ends with the block every rank sent it",
    "broadcast": "every rank ends with every block of the root's (rank {root}) buffer",
    "reduce": "the root (rank {root}) ends with every block, summed over all {p} ranks, each once",
}


@app.command("check")
def check_command(
    file: Annotated[Path, typer.Argument(help="The schedule file.", show_default=False)],
    schedule_format: Annotated[
        str | None,
        typer.Option(
            "--format", help="Its format, as 'trnsim schedule formats' lists (default: recognised)."
        ),
    ] = None,
    fmt: FormatOut = Format.table,
) -> None:
    """Read a schedule file, run its program symbolically and prove it computes its collective.

    Prints the format, the collective, ranks, rounds, transfers and the bytes each rank sends (as a
    share of the collective's size S), then that every rank ends with what the collective gives it,
    or the first rule broken (rule, round, rank, chunk). Exit 0: correct; 1: the program is wrong;
    2: the file cannot be read.

    Examples:

        trnsim schedule check examples/schedules/ring4.xml
        trnsim schedule check examples/schedules/ring4.xml --format-out json
    """
    from trnsim import limits
    from trnsim.collectives.check import check
    from trnsim.collectives.formats import read
    from trnsim.yamlio import read_bytes

    data = read_bytes(file, "schedule file", limits.TRAFFIC_BYTES)
    imported = read(data, str(file), schedule_format)
    program = imported.program
    report = check(program)
    sent = [0.0] * program.p
    for t in program.transfers:
        if t.src >= 0:
            sent[t.src] += program.fraction(t)
    verdict = (
        f"correct: {ENDS[program.op].format(p=program.p, root=program.root)}"
        if report.ok
        else f"wrong: {report.violation}"
    )
    violation = report.violation
    payload = {
        "file": str(file),
        "format": imported.format,
        "algorithm": program.algorithm,
        "collective": program.op,
        "ranks": program.p,
        "rounds": program.rounds,
        "transfers": len(program.transfers),
        "sent_share_of_size": {"min": min(sent), "mean": sum(sent) / len(sent), "max": max(sent)},
        "correct": report.ok,
        "violation": None if violation is None else {
            "rule": violation.rule, "round": violation.round, "rank": violation.rank,
            "chunk": violation.chunk, "detail": violation.detail,
        },
        "verdict": verdict,
        "notes": imported.notes,
    }  # fmt: skip
    items = [
        ("format", imported.format),
        ("algorithm", program.algorithm or "-"),
        ("collective", program.op),
        ("ranks", program.p),
        ("rounds", program.rounds),
        ("transfers", len(program.transfers)),
        ("sent per rank", f"{min(sent):.4g} .. {max(sent):.4g} x S (mean {sum(sent) / len(sent):.4g})"),
    ]
    emit(payload, [kv_table(str(file), items)], fmt)
    if fmt != Format.json:
        for note in imported.notes:
            typer.echo(f"note: {note}")
        typer.echo(verdict)
    if not report.ok:
        raise ThresholdError(f"{file}: the program is wrong: {violation}")


@app.command("formats")
def formats_command(fmt: FormatOption = Format.table) -> None:
    """List the schedule formats trnsim writes (collective --export-schedule) and reads (schedule check).

    Examples:

        trnsim schedule formats
    """
    from trnsim.collectives.formats import FORMATS, _load
    from trnsim.outputs.render import Column, Table

    _load()
    rows = [
        {
            "name": f.name,
            "suffixes": " ".join(f.suffixes),
            "writes": "yes" if f.write or f.name.startswith("trnsim-schedule") else "no",  # from the plan
            "reads": "yes" if f.read else "no",
            "summary": f.summary,
        }
        for f in sorted(FORMATS.values(), key=lambda f: f.name)
    ]
    columns = [Column(key, key, align="left") for key in ("name", "suffixes", "writes", "reads", "summary")]
    emit({"formats": rows}, [Table(title="schedule formats", columns=columns, rows=rows)], fmt)
