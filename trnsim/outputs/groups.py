"""Several groups running a collective at once, as tables and JSON: the slowest group against the
same run with nothing shared, and each group's time at every size."""

from trnsim.outputs.collective import Given, ranks_text
from trnsim.outputs.render import PERCENT, Column, Scaled, Table, tied


def many_groups(topology, result, algo: str, assumed: set[str], given: Given, per_group: bool) -> tuple:
    """The JSON payload and the tables of a run of several groups at once (``result``: a
    :class:`~trnsim.model.concurrent.ConcurrentEvaluation`); ``per_group`` adds every group's time at
    every size."""
    from trnsim.routing.policy import routing_of

    chosen, routing = result.groups, routing_of(topology.spec)
    header = (
        f"{topology.name} {result.op}: {len(chosen)} group{'s' if len(chosen) != 1 else ''} of "
        f"{len(chosen[0])} ranks ({given.group}) at once, alpha {result.alpha_us:g} "
        f"us/step{' (assumed)' if 'alpha' in assumed else ''}, algorithm {algo}, "
        f"routing {routing.label}"
        + (f"; {given.traffic} traffic" if given.skewed else "")
        + (f"; with {given.edits}" if given.edits else "")
    )
    rows = [_row(topology, chosen, r) for r in result.rows]
    payload = {
        "sku": topology.name,
        "op": result.op,
        "groups": [[topology.rank_of[c] for c in g] for g in chosen],
        "algorithm": algo,
        "alpha_us": result.alpha_us,
        "overrides": list(topology.overrides),
        "rows": [
            {**row, "group_times_us": r.group_times_us} for row, r in zip(rows, result.rows, strict=True)
        ],
        "skipped": result.skipped,
    }
    tables = [Table(header, _columns(routing.realisations), rows, _footer(routing.realisations))]
    if per_group:
        tables.append(_each_group(topology, result, routing.realisations))
    return payload, tables


def _row(topology, chosen: list[list[str]], r) -> dict:
    return {
        "bytes": r.bytes,
        "count": r.count,
        "type": r.type,
        "time_us": r.time_us,
        "busbw_gbps": r.busbw_gbps,
        "algorithm": r.algorithm,
        "alone_time_us": r.alone_time_us,
        "slowdown": r.slowdown,
        "slowest_group": r.slowest,
        "slowest_ranks": ranks_text([topology.rank_of[c] for c in chosen[r.slowest]]),
        "bound_busbw_gbps": r.bound_busbw_gbps,
        "efficiency": r.efficiency,
        "worst_time_us": r.worst_time_us,
        "bottleneck": r.bottleneck,
    }


def _columns(realisations: int) -> list[Column]:
    columns = [
        Column("bytes", "size (B)"),
        Column("count", "count", drop_priority=3),
        Column("type", "type", align="left", drop_priority=2),
        Column("time_us", "time (us)" if realisations == 1 else "mean time (us)", "{:.2f}"),
    ]
    if realisations > 1:
        columns.append(Column("worst_time_us", "worst seed (us)", "{:.2f}", drop_priority=4))
    return columns + [
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
        Column("algorithm", "algorithm", align="left", short="algo"),
        Column("alone_time_us", "alone (us)", "{:.2f}"),
        Column("slowdown", "slowdown", Scaled(1, "{:.3f}x")),
        Column("bound_busbw_gbps", "bound alone", "{:.2f}", short="bound", drop_priority=5),
        Column("efficiency", "eff %", PERCENT, drop_priority=6),
        Column("bottleneck", "bottleneck", tied, align="left", drop_priority=7),
        Column("slowest_ranks", "slowest group", align="left", drop_priority=1),
    ]


def _footer(realisations: int) -> list[str]:
    return [
        "# time and busbw: the slowest group with every group running"
        + ("" if realisations == 1 else " (mean over the seeds of each seed's slowest)")
        + "; alone: the same with every group on its own links; bound alone: the slowest group's bound "
        "by itself (sharing links can only slow it)"
    ]


def _each_group(topology, result, realisations: int) -> Table:
    chosen = result.groups
    each = [
        {
            "group": k,
            "ranks": ranks_text([topology.rank_of[c] for c in chosen[k]]),
            "bytes": r.bytes,
            "time_us": t,
            "busbw_gbps": busbw,
            "vs_run": t / r.time_us,
        }
        for r in result.rows
        for k, (t, busbw) in enumerate(zip(r.group_times_us, r.group_busbw_gbps, strict=True))
    ]
    return Table(
        f"each group with every group running ({len(chosen)} groups x {len(result.rows)} "
        f"size{'s' if len(result.rows) != 1 else ''})",
        [
            Column("group", "group"),
            Column("ranks", "ranks", align="left"),
            Column("bytes", "size (B)"),
            Column("time_us", "time (us)" if realisations == 1 else "mean time (us)", "{:.2f}"),
            Column("busbw_gbps", "busbw (GB/s)", "{:.2f}"),
            Column("vs_run", "vs the run", "{:.3f}"),
        ],
        each,
    )
