"""One group's collective as a table and JSON: nccl-tests' columns at every size, or every algorithm
side by side; and the list of algorithms.

What the run was given (the group, the edits, the traffic) is named by the caller in its own terms
(:class:`Given`; the command line names its flags), so that these tables say nothing of how they
were asked for.
"""

from dataclasses import dataclass

from trnsim.outputs.render import PERCENT, Column, Table, tied


@dataclass(frozen=True)
class Given:
    """How the caller names what a run was given, in its own terms."""

    group: str = "all"  # the group, as given
    edits: str = ""  # the edits applied ("": none)
    traffic: str = "uniform"  # how the traffic was given
    skewed: bool = False  # whether a traffic matrix was given at all (the header says so)
    borrowed: str = ""  # what to run instead of borrowing links, after the borrowed clause
    variant: str = ""  # the system with its edits (a CSV's first column)
    schedule: str | None = None  # the file the schedule was written to
    shape: str = ""  # the op's root, pairs or counts in words ("": an op without them)


def achievable_busbw_gbps(bound, op: str, ranks: int) -> float | None:
    """Where a bound is not exact but a known schedule's bandwidth term is, that schedule's busbw (the
    optimum lies between the two); else None."""
    from trnsim.model.rows import busbw_gbps

    if bound.exact or bound.achievable_seconds_per_byte is None:
        return None
    return busbw_gbps(op, ranks, 1.0, bound.achievable_seconds_per_byte * 1e6)


def bound_caveat(bound, op: str, ranks: int) -> str:
    """What the header adds to the bound's name: nothing when it is the optimum, else how far the
    optimum can be from it where that is known.

    >>> from trnsim.model.bounds import Bound
    >>> bound_caveat(Bound(1e-11, 1.0, "injection (c0)", 1e-11, exact=False), "allgather", 4)
    ' (a valid bound, perhaps not the optimum)'
    >>> loose = Bound(1e-11, 1.0, "reduction cut", 1e-11, exact=False, achievable_seconds_per_byte=1.5e-11)
    >>> bound_caveat(loose, "allreduce", 4)  # 2 (4 - 1) / 4 / 1.5e-11 = 100 GB/s
    ' (a valid bound; the optimum is between it and 100.0 GB/s busbw, what reduce-scatter then all-gather reach at their optima)'
    """
    if bound.exact:
        return ""
    achievable = achievable_busbw_gbps(bound, op, ranks)
    if achievable is None:
        return " (a valid bound, perhaps not the optimum)"
    return (
        f" (a valid bound; the optimum is between it and {achievable:.1f} GB/s busbw, what reduce-scatter"
        " then all-gather reach at their optima)"
    )


def one_group(
    topology, result, algo: str, dtype: str, assumed: set[str], given: Given
) -> tuple[str, dict, list[str]]:
    """The header, the JSON payload and the footer of a one-group run (``result``: a
    :class:`~trnsim.model.engine.GroupEvaluation`); ``assumed`` names the header's figures that are
    the file's assumptions (:func:`trnsim.model.cost.assumptions`)."""
    from trnsim.model.borrowed import borrowed_by

    n_chips = len(topology.chips_of(result.group))
    on_chips = f" on {n_chips} chip{'s' if n_chips != 1 else ''}" if topology.ranks_per_chip > 1 else ""
    runtime = getattr(result, "runtime", "ideal")
    # a runtime's numbers come first: say what they model, and that what follows is the ideal's
    modelled = "" if runtime == "ideal" else f"runtime {runtime}: {result.runtime_model}; ideal: "
    header = (
        f"{topology.name} {result.op}: {result.ranks} ranks{on_chips} (group {given.group}), {modelled}alpha "
        f"{result.alpha_us:g} us/step{' (assumed)' if 'alpha' in assumed else ''}, "
        f"algorithm {algo}, routing {result.routing.label}; bandwidth bound limited by "
        f"{result.bound.limited_by}"
        + bound_caveat(result.bound, result.op, result.ranks)
        + (
            f"; links at {topology.uniform_efficiency:.0%} of raw rate"
            if topology.uniform_efficiency is not None
            else "; links at their classes' efficiencies"
        )
        + (" (assumed; see topo show)" if "efficiency" in assumed else "")
    )
    if given.skewed:
        header += f"; {given.traffic} traffic"
    if given.shape:
        header += f"; {given.shape}"
    ideal = getattr(result, "ideal", result)  # the schedules a runtime's numbers were priced beside
    borrowed = borrowed_by(topology, ideal, every=algo == "all")
    if borrowed is not None:
        header += f"; the group {borrowed.describe()}{given.borrowed}"
    if given.edits:
        header += f"; with {given.edits}"
    payload = {
        "sku": topology.name,
        "variant": given.variant,
        "overrides": list(topology.overrides),
        "dtype": dtype.strip().lower(),
        "op": result.op,
        "ranks": result.ranks,
        "chips": n_chips,
        "group": given.group,
        "group_ranks": [topology.rank_of[c] for c in result.group],
        "traffic": given.traffic,
        "op_shape": given.shape or None,
        "algorithm": algo,
        "runtime": runtime,
        "runtime_model": getattr(result, "runtime_model", None),
        "alpha_us": result.alpha_us,
        "assumed": sorted(assumed),  # the header's figures that are the file's assumptions
        "avg_busbw_gbps": result.avg_busbw_gbps,
        "bound_limited_by": result.bound.limited_by,
        "bound_exact": result.bound.exact,
        "bound_achievable_busbw_gbps": achievable_busbw_gbps(result.bound, result.op, result.ranks),
        "routing": result.routing.label,
        "borrowed": borrowed.as_dict() if borrowed is not None else None,
        "rows": [row.as_dict() for row in result.rows],
        "skipped": result.skipped,
        "dropped_sizes": result.dropped,
    }
    footer = [f"# Avg bus bandwidth    : {result.avg_busbw_gbps:.3f} GB/s"]
    if given.schedule is not None:
        footer.append(f"# schedule of {ideal.rows[-1].algorithm} written to {given.schedule}")
    if (note := result.alignment_note()) is not None:
        footer.append(f"# {note}")
    return header, payload, footer


def each_size(result, header: str, footer: list[str], given: Given, explain: bool, csv: bool) -> Table:
    """nccl-tests' columns at every size, the bound and the bottleneck (``explain``: each link
    class's busy share and the chunks too)."""
    hashed = result.routing.realisations > 1
    columns = [
        Column("bytes", "size (B)"),
        # on a narrow terminal the table drops the columns that repeat others first (algbw, count, type)
        Column("count", "count", drop_priority=3),
        Column("type", "type", align="left", drop_priority=2),
        Column("time_us", "mean time (us)" if hashed else "time (us)", "{:.2f}"),
        *([Column("worst_time_us", "worst time (us)", "{:.2f}", short="worst")] if hashed else []),
        Column("algbw_gbps", "algbw (GB/s)", "{:.2f}", short="algbw", drop_priority=4),
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
        Column("algorithm", "algorithm", align="left", short="algo"),
        Column("bound_busbw_gbps", "bound busbw", "{:.2f}", short="bound"),
        Column("efficiency", "eff %", PERCENT),
        Column("max_hops", "max hops", short="hops", drop_priority=1),
        Column("bottleneck", "bottleneck", tied, align="left"),
    ]
    if getattr(result, "runtime", "ideal") != "ideal":
        columns = _runtime_columns(columns, result.runtime)
    rows = [row.as_dict() for row in result.rows]
    if explain:
        for entry in rows:
            entry["links_busy"] = busy_text(entry["link_utilisation"])
        columns += [Column("chunks", "chunks"), Column("links_busy", "links busy", align="left")]
        # to fit the width in this view: the bottleneck (the links busy name it), then eff %
        columns[-3].drop_priority = 0
        next(c for c in columns if c.key == "efficiency").drop_priority = -1
    if csv:
        columns.insert(0, Column("variant", "variant", align="left"))
        for entry in rows:
            entry["variant"] = given.variant
    return Table(header, columns, rows, footer)


# on a narrow terminal a runtime's table leaves out the fabric's figures before the ideal busbw
_RUNTIME_DROPS = {"bottleneck": 6, "efficiency": 5}


def _runtime_columns(columns: list[Column], runtime: str) -> list[Column]:
    """The columns of a runtime's rows: its choice where the algorithm was, then the ideal's busbw
    and algorithm beside the runtime's (the runtime's model has one time: no worst time)."""
    out = []
    for column in columns:
        if column.key == "worst_time_us":
            continue
        if column.key == "time_us":
            column = Column("time_us", "time (us)", "{:.2f}")
        elif column.key in _RUNTIME_DROPS:  # the ideal's busbw beside the runtime's comes first
            column.drop_priority = _RUNTIME_DROPS[column.key]
        if column.key == "algorithm":
            out += [
                Column("algorithm", f"{runtime} algo", align="left", short="algo"),
                Column("ideal_busbw_gbps", "ideal busbw", "{:.2f}", short="ideal"),
                Column("ideal_algorithm", "ideal algo", align="left", drop_priority=1),
            ]
            continue
        out.append(column)
    return out


def every_algorithm(
    result, header: str, footer: list[str], given: Given, explain: bool, csv: bool
) -> tuple[dict, Table]:
    """Every algorithm's busbw side by side at every size, the best and the bound; and each
    algorithm's rows for the JSON."""
    names = list(result.by_algorithm)
    algorithms = {
        name: [
            {
                "bytes": r.bytes,
                "time_us": r.time_us,
                "busbw_gbps": r.busbw_gbps,
                "chunks": r.chunks,
                "link_utilisation": r.link_utilisation,
            }
            for r in rows
        ]
        for name, rows in result.by_algorithm.items()
    }
    table_rows = []
    for i, row in enumerate(result.rows):
        entry = {"bytes": row.bytes, "best": row.algorithm, "bound_busbw_gbps": row.bound_busbw_gbps}
        entry.update({name: result.by_algorithm[name][i].busbw_gbps for name in names})
        table_rows.append(entry)
    columns = [Column("bytes", "size (B)")] + [
        Column(n, f"{n} busbw", "{:.2f}", drop_priority=_lag_rank(n, names, table_rows)) for n in names
    ]
    if csv:  # CSV carries no header line: name the variant and its edits in a column
        columns.insert(0, Column("variant", "variant", align="left"))
        for entry in table_rows:
            entry["variant"] = given.variant
    columns += [Column("best", "best", align="left"), Column("bound_busbw_gbps", "bound busbw", "{:.2f}")]
    if explain:
        for entry, row in zip(table_rows, result.rows, strict=True):
            entry["links_busy"] = busy_text(row.link_utilisation)
        columns.append(Column("links_busy", "best's links busy", align="left"))
    skipped = [f"# not applicable: {name}: {why}" for name, why in result.skipped.items()]
    return algorithms, Table(header + " (busbw in GB/s)", columns, table_rows, footer + skipped)


def _lag_rank(name: str, names: list[str], rows: list[dict]) -> int | None:
    """How soon a side-by-side table leaves out an algorithm's column to fit the width: the
    algorithms furthest behind the best first; one that is the best at some size is always shown."""

    def closest(n: str) -> float:  # its largest share of the best busbw over the sizes
        shares = []
        for row in rows:
            best = max(row[m] for m in names)
            shares.append(row[n] / best if best > 0 else 1.0)
        return max(shares)

    if not rows or closest(name) >= 1.0:
        return None
    return 1 + sorted(names, key=closest, reverse=True).index(name)


def busy_text(utilisation: dict[str, float]) -> str:
    """``backplane 99%, pcb 97%``: each link class's mean busy share, busiest first."""
    ordered = sorted(utilisation.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{cls} {100 * share:.0f}%" for cls, share in ordered)


def ranks_text(ranks: list[int]) -> str:
    """``0-3`` for a run of consecutive ranks, else ``0,16,32,48`` (shortened past 8 ranks)."""
    if ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return f"{ranks[0]}-{ranks[-1]}"
    shown = ",".join(str(r) for r in ranks[:8])
    return shown + (f",... ({len(ranks)} ranks)" if len(ranks) > 8 else "")


def algorithms_table(registry: dict, ops: list[str]) -> tuple[dict, Table]:
    """Each algorithm (``registry``: name -> algorithm), its aliases, the ops it runs (in the order of
    ``ops``) and what it does. An algorithm runs an op whose base it implements (:attr:`Op.base`);
    a demand op's matrix only if it takes a traffic matrix, and ``allgatherv``/``reducescatterv``
    with unequal counts only if it takes unequal blocks (with even counts they are the base op)."""
    from trnsim.collectives.ops import OPS

    def runs(a, name: str) -> bool:
        op = OPS[name]
        matrix = op.demand and op.name != "alltoall"
        return op.base in a.ops and (a.takes_traffic or not matrix) and (a.takes_blocks or not op.uneven)

    rows = [
        {
            "name": a.name,
            "aliases": ", ".join(a.aliases),
            "ops": ", ".join(o for o in ops if runs(a, o)),
            "summary": a.summary,
        }
        for a in registry.values()
    ]
    table = Table(
        "collective algorithms (plus auto: the fastest per size; all: side by side)",
        [
            Column("name", "name", align="left"),
            Column("aliases", "aliases", align="left"),
            Column("ops", "ops", align="left"),
            Column("summary", "what it does", align="left"),
        ],
        rows,
    )
    return {"algorithms": rows}, table


def with_ranges(topology, payload: dict, table: Table, spans) -> None:
    """Add each row's low and high bus bandwidth (:mod:`trnsim.model.ranges`) to the JSON and the
    table, after the bus bandwidth, and say in the footer what was ranged."""
    ranged = {
        key: span
        for key, span in topology.spec.ranges.items()
        if key not in {str(text).split("=", 1)[0].strip() for text in topology.overrides}
    }
    for entry, row, span in zip(payload["rows"], table.rows, spans or [None] * len(table.rows), strict=True):
        low, high = span if span is not None else (entry["busbw_gbps"], entry["busbw_gbps"])
        entry.update(busbw_low_gbps=low, busbw_high_gbps=high)
        row.update(busbw_low_gbps=low, busbw_high_gbps=high)
    at = next(i for i, c in enumerate(table.columns) if c.key == "busbw_gbps") + 1
    table.columns[at:at] = [
        Column("busbw_low_gbps", "busbw low", "{:.2f}", short="low"),
        Column("busbw_high_gbps", "busbw high", "{:.2f}", short="high"),
    ]
    payload["ranges"] = {key: list(span) for key, span in ranged.items()}
    if ranged:
        text = ", ".join(f"{key} {low:g}-{high:g}" for key, (low, high) in sorted(ranged.items()))
        table.footer.append(
            f"# low/high: the lowest and highest busbw over the corners of {text} (assumed ranges)"
        )
    else:
        table.footer.append("# low/high: the file ranges none of the assumptions this run leaves to it")
