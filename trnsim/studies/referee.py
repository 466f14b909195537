"""Referee a schedule another tool made: read it, prove it, place it on a group, cost it beside the bound
and trnsim's own best.

:func:`referee` reads a schedule file (:mod:`trnsim.collectives.formats`), runs an all-gather file
as the op asked for (:func:`~trnsim.collectives.program.as_op`), proves the program computes it
(:mod:`trnsim.collectives.check`: a wrong one is refused with the first rule it breaks, as a failed
threshold), maps its ranks onto chips, and costs it with the system's routing and link efficiencies
(:func:`~trnsim.model.engine.evaluate` with ``program=``), next to trnsim's algorithms on the same
group and sizes.

Ranks onto chips: position ``i`` of the program is chip ``i`` of the group (members, then relays),
the group being the one given, else the chips the file names when they are all chips of the
system, else the system's first chips. A file's ranks are costed by the ideal model: a runtime's
choice of algorithm does not apply to a schedule given to it.
"""

from dataclasses import dataclass, field

from trnsim.collectives.program import Program
from trnsim.errors import ThresholdError, UsageError


@dataclass
class Refereed:
    """A schedule file checked and costed, and trnsim's best on the same group."""

    where: str
    format: str
    program: Program
    members: list[str]
    relays: list[str]
    imported: object  # the GroupEvaluation of the file's program
    best: object  # the GroupEvaluation of trnsim's algorithms (auto)
    checked: str  # the checker's report, in words
    notes: list[str] = field(default_factory=list)


def place(topology, names: list[str] | None, positions: int, where: str, chosen: list[str] | None):
    """The chips of a program's ``positions`` (module docstring) and a note on how they were chosen."""
    if chosen is not None:
        if len(chosen) != positions:
            raise UsageError(
                f"{where}: the schedule has {positions} ranks (relays included); the group has "
                f"{len(chosen)} chips: give {{group}} with {positions}"
            )
        return chosen, None
    if names and all(name in topology.nodes and name in set(topology.chips) for name in names):
        return list(names), None
    if positions > len(topology.chips):
        raise UsageError(
            f"{where}: the schedule has {positions} ranks; {topology.name} has {len(topology.chips)} chips"
        )
    return list(
        topology.chips[:positions]
    ), f"the file's ranks 0..{positions - 1} are the system's first {positions} chips"


def referee(
    topology,
    op: str,
    data: bytes,
    where: str,
    fmt: str | None,
    sizes: list[int],
    group: list[str] | None = None,
    dtype: str = "float",
    alpha_us: float | None = None,
    chunking: tuple[int | None, int | None] = (None, None),
) -> Refereed:
    """Read, check, place and cost the schedule in ``data`` (module docstring).

    Raises
    ------
    UsageError
        An unreadable file, a collective it does not make, or a group that does not fit it.
    ThresholdError
        The program does not compute ``op`` (the first rule it breaks, in one line).
    """
    from trnsim.collectives import formats
    from trnsim.collectives.check import check
    from trnsim.collectives.program import as_op
    from trnsim.model.engine import evaluate

    imported = formats.read(data, where, fmt)
    try:
        program = as_op(imported.program, op)
    except UsageError as error:
        raise UsageError(f"{where}: {error}") from None
    report = check(program)
    if not report.ok:
        raise ThresholdError(f"{where}: the schedule does not compute {op}: {report}")
    positions = program.p + program.relays
    chips, placed = place(topology, imported.ranks, positions, where, group)
    members, relays = chips[: program.p], chips[program.p :]
    max_chunks, min_chunk = chunking
    costing = {"dtype": dtype, "alpha_us": alpha_us, "max_chunks": max_chunks, "min_chunk_bytes": min_chunk}
    costed = evaluate(topology, op, sizes, members, program=program, relays=relays, **costing)
    best = evaluate(topology, op, sizes, members, **costing)  # trnsim's own, the same way
    notes = list(imported.notes) + ([placed] if placed else [])
    return Refereed(where, imported.format, program, members, relays, costed, best, str(report), notes)
