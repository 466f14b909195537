"""A refereed schedule as a table and JSON: per size the file's busbw, its share of the bound, its
bottleneck, and trnsim's best beside it (:mod:`trnsim.studies.referee`)."""

from trnsim.outputs.render import Column, Table, tied


def referee_table(topology, result, group_text: str) -> tuple[dict, Table]:
    """The JSON payload and the table of a :class:`~trnsim.studies.referee.Refereed`."""
    mine, best = result.imported, result.best
    program = result.program
    relays = f" + {len(result.relays)} relay chip(s) {', '.join(result.relays)}" if result.relays else ""
    title = (
        f"{topology.name} {mine.op}: {result.where} ({result.format}, {program.rounds} rounds"
        f"{', pipelined' if program.pipelined else ''}) on {len(result.members)} ranks (group {group_text})"
        f"{relays}; checked {result.checked}; alpha {mine.alpha_us:g} us/step, routing {mine.routing.label}; "
        f"bandwidth bound limited by {mine.bound.limited_by}"
    )
    rows = []
    for own, theirs in zip(mine.rows, best.rows, strict=True):
        rows.append(
            {
                "bytes": own.bytes,
                "time_us": own.time_us,
                "busbw_gbps": own.busbw_gbps,
                "bound_busbw_gbps": own.bound_busbw_gbps,
                "efficiency": own.efficiency,
                "bottleneck": own.bottleneck,
                "chunks": own.chunks,
                "best_algorithm": theirs.algorithm,
                "best_busbw_gbps": theirs.busbw_gbps,
                "vs_best": own.busbw_gbps / theirs.busbw_gbps if theirs.busbw_gbps > 0 else 0.0,
            }
        )
    columns = [
        Column("bytes", "size (B)"),
        Column("time_us", "time (us)", "{:.2f}"),
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
        Column("bound_busbw_gbps", "bound busbw", "{:.2f}", short="bound"),
        Column("efficiency", "% of bound", lambda v: f"{100 * v:.1f}", short="% bound"),
        Column("bottleneck", "bottleneck", tied, align="left"),
        Column("best_busbw_gbps", "trnsim best busbw", "{:.2f}", short="best"),
        Column("best_algorithm", "best algorithm", align="left", short="algo", drop_priority=1),
    ]
    footer = list(result.notes)
    payload = {
        "sku": topology.name,
        "op": mine.op,
        "schedule": result.where,
        "format": result.format,
        "group": result.members,
        "relays": result.relays,
        "rounds": program.rounds,
        "pipelined": program.pipelined,
        "checked": result.checked,
        "alpha_us": mine.alpha_us,
        "runtime": "ideal",
        "bound_limited_by": mine.bound.limited_by,
        "notes": footer,
        "rows": rows,
    }
    return payload, Table(title, columns, rows, footer)
