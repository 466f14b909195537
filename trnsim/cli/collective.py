"""``trnsim collective``: model a collective at every message size, in nccl-tests' conventions."""

import typer

from trnsim.cli.flags import edits_text
from trnsim.cli.options import (
    Algo,
    AlphaUs,
    CalibrationOption,
    Dtype,
    Explain,
    ExportSchedule,
    FailOption,
    FormatOption,
    Group,
    Groups,
    Heatmap,
    MaxBytes,
    MaxChunks,
    MinBytes,
    MinChunk,
    Ranks,
    RoutingOption,
    SetOption,
    Sizes,
    Skew,
    SkuOption,
    StepFactor,
    TopologyOption,
    TrafficFile,
    algorithm,
    chunk_bytes,
    edits,
    load,
    note_alpha_override,
    note_calibration_target,
    picture_path,
    resolve_sizes,
    writable,
    write_text,
)
from trnsim.collectives.ops import OPS
from trnsim.outputs.render import Column, Format, Table, emit, tied

app = typer.Typer(
    help="Model all-reduce, all-gather, reduce-scatter and all-to-all over a topology, congestion included."
    "\n\nExamples:\n\ntrnsim collective allreduce --sku nl72x2\ntrnsim collective algorithms",
    no_args_is_help=True,
)


def run(
    op: str,
    sku,
    topology,
    algo,
    minbytes,
    maxbytes,
    stepfactor,
    sizes,
    ranks,
    group,
    dtype,
    alpha_us,
    overrides,
    fmt,
    explain: bool = False,
    export_schedule=None,
    max_chunks: int | None = None,
    min_chunk: str | None = None,
    routing: str | None = None,
    calibration=None,
    groups: str | None = None,
    skew: str | None = None,
    traffic_file=None,
    fail: list[str] | None = None,
    heatmap=None,
) -> None:
    """Evaluate and print one collective."""
    from trnsim.model.backend import Costing, ManyGroups, backend_for

    algo = algorithm(algo)  # one spelling in the header and JSON
    overrides = edits(overrides, routing, calibration, fail)
    note_alpha_override(alpha_us, [overrides])
    topo = load(sku, topology, overrides)
    note_calibration_target(calibration, [topo.name])
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    picture_path(heatmap, "--heatmap")
    if groups is not None:
        from trnsim.errors import UsageError

        if heatmap is not None:
            raise UsageError("--heatmap draws one group's run; --groups is not drawn yet")
        if export_schedule is not None or algo == "all":
            raise UsageError("--groups does not take --export-schedule or --algo all yet")
    elif heatmap is not None:
        from trnsim.outputs.draw import drawable

        if (reason := drawable(topo)) is not None:
            from trnsim.errors import UsageError

            raise UsageError(f"--heatmap: {reason}")
    backend = backend_for(
        topo,
        group=group,
        ranks=ranks,
        groups=groups,
        skew=skew,
        traffic_file=traffic_file,
        costing=Costing(alpha_us, max_chunks, chunk_bytes(min_chunk)),
    )
    traffic = backend.traffic
    if isinstance(backend, ManyGroups):
        result = backend.evaluate(op, size_list, algo, dtype)
        traffic_text = describe(traffic, skew, traffic_file) if traffic is not None else None
        return _print_groups(topo, result, groups, algo, alpha_us, fmt, traffic_text, explain)
    chips = backend.group
    from trnsim.topology.groups import group_label

    writable(export_schedule, "--export-schedule")
    result = backend.evaluate(op, size_list, algo.lower(), dtype)
    alpha = result.alpha_us
    if export_schedule is not None:
        import json

        from trnsim.outputs.schedule_export import schedule_document

        chosen = result.plans[result.rows[-1].algorithm]
        document = schedule_document(topo, chips, op, chosen, [row.bytes for row in result.rows])
        document.update(group=group_label(group, ranks), overrides=list(overrides or ()), alpha_us=alpha)
        write_text(export_schedule, json.dumps(document, indent=1, allow_nan=False) + "\n")
    from trnsim.studies.variants import label_of

    group_text = group_label(group, ranks)
    if heatmap is not None:
        from trnsim.outputs import draw

        heat = result.busiest_links()
        title = f"{topo.name} {op}, group {group_text}" + (
            f", {len(topo.faults)} failed" if topo.faults else ""
        )
        draw.heatmap(topo, heat, heatmap, title)
        typer.echo(f"wrote {heatmap} ({heat.describe()})", err=True)
    applied = tuple(overrides or ())
    variant = label_of(topo, applied)
    n_chips = len(topo.chips_of(chips))
    on_chips = f" on {n_chips} chip{'s' if n_chips != 1 else ''}" if topo.ranks_per_chip > 1 else ""
    assumed = _assumed(topo, alpha_us)
    header = (
        f"{topo.name} {op}: {result.ranks} ranks{on_chips} (group {group_text}), alpha {alpha:g} us/step"
        f"{' (assumed)' if 'alpha' in assumed else ''}, "
        f"algorithm {algo}, routing {result.routing.label}; bandwidth bound limited by "
        f"{result.bound.limited_by}"
        + ("" if result.bound.exact else " (a valid bound, perhaps not the optimum)")
        + (
            f"; links at {topo.uniform_efficiency:.0%} of raw rate"
            if topo.uniform_efficiency is not None
            else "; links at their classes' efficiencies"
        )
        + (" (assumed; see topo show)" if "efficiency" in assumed else "")
    )
    if traffic is not None:
        header += f"; {describe(traffic, skew, traffic_file)} traffic"
    from trnsim.model.borrowed import borrowed_by

    borrowed = borrowed_by(topo, result, every=algo.lower() == "all")
    if borrowed is not None:
        header += f"; the group {borrowed.describe()} with --groups"
    if applied:
        header += f"; with {edits_text(applied)}"
    payload = {
        "sku": topo.name,
        "variant": variant,
        "overrides": list(applied),
        "dtype": dtype.strip().lower(),
        "op": op,
        "ranks": result.ranks,
        "chips": n_chips,
        "group": group_text,
        "group_ranks": [topo.rank_of[c] for c in chips],
        "traffic": describe(traffic, skew, traffic_file),
        "algorithm": algo,
        "alpha_us": alpha,
        "assumed": sorted(assumed),  # the header's figures that are the file's assumptions
        "avg_busbw_gbps": result.avg_busbw_gbps,
        "bound_limited_by": result.bound.limited_by,
        "bound_exact": result.bound.exact,
        "routing": result.routing.label,
        "borrowed": borrowed.as_dict() if borrowed is not None else None,
        "rows": [row.as_dict() for row in result.rows],
        "skipped": result.skipped,
        "dropped_sizes": result.dropped,
    }
    footer = [f"# Avg bus bandwidth    : {result.avg_busbw_gbps:.3f} GB/s"]
    if export_schedule is not None:
        footer.append(f"# schedule of {result.rows[-1].algorithm} written to {export_schedule}")
    if (note := result.alignment_note()) is not None:
        footer.append(f"# {note}")
    if algo.lower() == "all":
        names = list(result.by_algorithm)
        payload["algorithms"] = {
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
        if fmt == Format.csv:  # CSV carries no header line: name the variant and its edits in a column
            columns.insert(0, Column("variant", "variant", align="left"))
            for entry in table_rows:
                entry["variant"] = variant
        columns += [Column("best", "best", align="left"), Column("bound_busbw_gbps", "bound busbw", "{:.2f}")]
        if explain:
            for entry, row in zip(table_rows, result.rows, strict=True):
                entry["links_busy"] = _busy_text(row.link_utilisation)
            columns.append(Column("links_busy", "best's links busy", align="left"))
        skipped = [f"# not applicable: {name}: {why}" for name, why in result.skipped.items()]
        emit(payload, [Table(header + " (busbw in GB/s)", columns, table_rows, footer + skipped)], fmt)
        return
    columns = [
        Column("bytes", "size (B)"),
        # on a narrow terminal the table drops the columns that repeat others first (algbw, count, type)
        Column("count", "count", drop_priority=3),
        Column("type", "type", align="left", drop_priority=2),
        Column("time_us", "time (us)" if result.routing.realisations == 1 else "mean time (us)", "{:.2f}"),
        *(
            [Column("worst_time_us", "worst time (us)", "{:.2f}", short="worst")]
            if result.routing.realisations > 1
            else []
        ),
        Column("algbw_gbps", "algbw (GB/s)", "{:.2f}", short="algbw", drop_priority=4),
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
        Column("algorithm", "algorithm", align="left", short="algo"),
        Column("bound_busbw_gbps", "bound busbw", "{:.2f}", short="bound"),
        Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}"),
        Column("max_hops", "max hops", short="hops", drop_priority=1),
        Column("bottleneck", "bottleneck", tied, align="left"),
    ]
    rows = [row.as_dict() for row in result.rows]
    if explain:
        for entry in rows:
            entry["links_busy"] = _busy_text(entry["link_utilisation"])
        columns += [Column("chunks", "chunks"), Column("links_busy", "links busy", align="left")]
        # to fit the width in this view: the bottleneck (the links busy name it), then eff %
        columns[-3].drop_priority = 0
        next(c for c in columns if c.key == "efficiency").drop_priority = -1
    if fmt == Format.csv:
        columns.insert(0, Column("variant", "variant", align="left"))
        for entry in rows:
            entry["variant"] = variant
    emit(payload, [Table(header, columns, rows, footer)], fmt)


def _assumed(topo, alpha_us: float | None) -> set[str]:
    """Which of the header's figures rest on an assumption of the file (its section's ``source``
    says so) rather than on the user (``--alpha-us``, ``--set``, a calibration): ``alpha``,
    ``efficiency``."""
    from trnsim.topology.metrics import model_parameters

    by_key = {p["key"]: p["basis"] for p in model_parameters(topo)}
    out = set()
    if alpha_us is None and by_key["latency.step_ns"] == "assumption":
        out.add("alpha")
    if any(basis == "assumption" for key, basis in by_key.items() if key.startswith("efficiency.")):
        out.add("efficiency")
    return out


def _print_groups(topo, result, spec, algo, alpha_us, fmt, traffic_text, per_group: bool = False) -> None:
    """``--groups``: the slowest group against the same run with nothing shared (and, with
    ``per_group``, every group's time at every size)."""
    from trnsim.routing.policy import routing_of

    op, chosen, alpha = result.op, result.groups, result.alpha_us
    applied = topo.overrides
    routing = routing_of(topo.spec)
    header = (
        f"{topo.name} {op}: {len(chosen)} group{'s' if len(chosen) != 1 else ''} of {len(chosen[0])} ranks "
        f"({spec}) at once, alpha {alpha:g} "
        f"us/step{' (assumed)' if 'alpha' in _assumed(topo, alpha_us) else ''}, algorithm {algo}, "
        f"routing {routing.label}"
        + (f"; {traffic_text} traffic" if traffic_text is not None else "")
        + (f"; with {edits_text(applied)}" if applied else "")
    )
    rows = [
        {
            "bytes": r.bytes,
            "count": r.count,
            "type": r.type,
            "time_us": r.time_us,
            "busbw_gbps": r.busbw_gbps,
            "algorithm": r.algorithm,
            "alone_time_us": r.alone_time_us,
            "slowdown": r.slowdown,
            "slowest_group": r.slowest,
            "slowest_ranks": _ranks_text([topo.rank_of[c] for c in chosen[r.slowest]]),
            "bound_busbw_gbps": r.bound_busbw_gbps,
            "efficiency": r.efficiency,
            "worst_time_us": r.worst_time_us,
            "bottleneck": r.bottleneck,
        }
        for r in result.rows
    ]
    payload = {
        "sku": topo.name,
        "op": op,
        "groups": [[topo.rank_of[c] for c in g] for g in chosen],
        "algorithm": algo,
        "alpha_us": alpha,
        "overrides": list(applied),
        "rows": [
            {**row, "group_times_us": r.group_times_us} for row, r in zip(rows, result.rows, strict=True)
        ],
        "skipped": result.skipped,
    }
    columns = [
        Column("bytes", "size (B)"),
        Column("count", "count", drop_priority=3),
        Column("type", "type", align="left", drop_priority=2),
        Column("time_us", "time (us)" if routing.realisations == 1 else "mean time (us)", "{:.2f}"),
    ]
    if routing.realisations > 1:
        columns.append(Column("worst_time_us", "worst seed (us)", "{:.2f}", drop_priority=4))
    columns += [
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
        Column("algorithm", "algorithm", align="left", short="algo"),
        Column("alone_time_us", "alone (us)", "{:.2f}"),
        Column("slowdown", "slowdown", lambda v: f"{v:.3f}x"),
        Column("bound_busbw_gbps", "bound alone", "{:.2f}", short="bound", drop_priority=5),
        Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}", drop_priority=6),
        Column("bottleneck", "bottleneck", tied, align="left", drop_priority=7),
        Column("slowest_ranks", "slowest group", align="left", drop_priority=1),
    ]
    footer = [
        "# time and busbw: the slowest group with every group running"
        + ("" if routing.realisations == 1 else " (mean over the seeds of each seed's slowest)")
        + "; alone: the same with every group on its own links; bound alone: the slowest group's bound "
        "by itself (sharing links can only slow it)"
    ]
    tables = [Table(header, columns, rows, footer)]
    if per_group:
        each = [
            {
                "group": k,
                "ranks": _ranks_text([topo.rank_of[c] for c in chosen[k]]),
                "bytes": r.bytes,
                "time_us": t,
                "busbw_gbps": busbw,
                "vs_run": t / r.time_us,
            }
            for r in result.rows
            for k, (t, busbw) in enumerate(zip(r.group_times_us, r.group_busbw_gbps, strict=True))
        ]
        tables.append(
            Table(
                f"each group with every group running ({len(chosen)} groups x {len(result.rows)} "
                f"size{'s' if len(result.rows) != 1 else ''})",
                [
                    Column("group", "group"),
                    Column("ranks", "ranks", align="left"),
                    Column("bytes", "size (B)"),
                    Column(
                        "time_us", "time (us)" if routing.realisations == 1 else "mean time (us)", "{:.2f}"
                    ),
                    Column("busbw_gbps", "busbw (GB/s)", "{:.2f}"),
                    Column("vs_run", "vs the run", "{:.3f}"),
                ],
                each,
            )
        )
    emit(payload, tables, fmt)


def describe(traffic, skew: str | None, path) -> str:
    """How the traffic was given, for a table's header and the JSON (``uniform`` when it was not)."""
    if traffic is None:
        return "uniform"
    from trnsim.collectives.traffic import imbalance

    given = f"--skew {skew}" if skew is not None else f"--traffic {path}"
    factor = imbalance(traffic)
    kind = "skewed" if factor > 1 + 1e-9 else "evenly received"
    return f"{kind} ({given}: max/mean received {factor:.2f})"


def _ranks_text(ranks: list[int]) -> str:
    """``0-3`` for a run of consecutive ranks, else ``0,16,32,48`` (shortened past 8 ranks)."""
    if ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return f"{ranks[0]}-{ranks[-1]}"
    shown = ",".join(str(r) for r in ranks[:8])
    return shown + (f",... ({len(ranks)} ranks)" if len(ranks) > 8 else "")


def _busy_text(utilisation: dict[str, float]) -> str:
    """``backplane 99%, pcb 97%``: each link class's mean busy share, busiest first."""
    ordered = sorted(utilisation.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{cls} {100 * share:.0f}%" for cls, share in ordered)


# each op's examples in its --help (tests/cli/test_help_examples.py runs every one)
EXAMPLES = {
    "allreduce": ["--sku nl72x2", "--sku nl16 --algo all --sizes 64K,1M,16M,1G"],
    "allgather": ["--sku nl64 --group 0-15 --sizes 1M,1G", "--sku nl72x2 --groups 'server:*' --sizes 1M"],
    "reducescatter": ["--sku nl32x2 --sizes 1M,1G --explain"],
    "alltoall": ["--sku nl72x2 --sizes 1M,1G --fail cable:5", "--sku nl72x2 --skew 2:4 --sizes 256M"],
}


def _register(op: str) -> None:
    def command(
        sku: SkuOption = None,
        topology: TopologyOption = None,
        algo: Algo = "auto",
        minbytes: MinBytes = None,
        maxbytes: MaxBytes = None,
        stepfactor: StepFactor = None,
        sizes: Sizes = None,
        ranks: Ranks = None,
        group: Group = None,
        dtype: Dtype = "float",
        alpha_us: AlphaUs = None,
        overrides: SetOption = None,
        fmt: FormatOption = Format.table,
        explain: Explain = False,
        export_schedule: ExportSchedule = None,
        max_chunks: MaxChunks = None,
        min_chunk: MinChunk = None,
        routing: RoutingOption = None,
        calibration: CalibrationOption = None,
        fail: FailOption = None,
        groups: Groups = None,
        skew: Skew = None,
        traffic: TrafficFile = None,
        heatmap: Heatmap = None,
    ) -> None:
        run(
            op,
            sku,
            topology,
            algo,
            minbytes,
            maxbytes,
            stepfactor,
            sizes,
            ranks,
            group,
            dtype,
            alpha_us,
            overrides,
            fmt,
            explain,
            export_schedule,
            max_chunks,
            min_chunk,
            routing,
            calibration,
            groups,
            skew,
            traffic,
            fail,
            heatmap,
        )

    examples = "".join(f"    trnsim collective {op} {line}\n" for line in EXAMPLES[op])
    command.__doc__ = f"Model {op}: {OPS[op].description}.\n\nExamples:\n\n{examples}"
    if op != "alltoall":  # skewed traffic is an all-to-all's: the other ops do not offer the options
        import inspect

        signature = inspect.signature(command)
        kept = [p for name, p in signature.parameters.items() if name not in ("skew", "traffic")]
        command.__signature__ = signature.replace(parameters=kept)
    app.command(op)(command)


for _op in OPS:
    _register(_op)


@app.command("algorithms")
def algorithms_(fmt: FormatOption = Format.table) -> None:
    """List the algorithms, the ops each implements and what it does.

    Examples:

        trnsim collective algorithms
        trnsim collective algorithms --format markdown
    """
    from trnsim.collectives.algorithms import REGISTRY

    rows = [
        {
            "name": a.name,
            "aliases": ", ".join(a.aliases),
            "ops": ", ".join(o for o in OPS if o in a.ops),
            "summary": a.summary,
        }
        for a in REGISTRY.values()
    ]
    emit(
        {"algorithms": rows},
        [
            Table(
                "collective algorithms (plus auto: the fastest per size; all: side by side)",
                [
                    Column("name", "name", align="left"),
                    Column("aliases", "aliases", align="left"),
                    Column("ops", "ops", align="left"),
                    Column("summary", "what it does", align="left"),
                ],
                rows,
            )
        ],
        fmt,
    )


def _lag_rank(name: str, names: list[str], rows: list[dict]) -> int | None:
    """How soon ``--algo all`` leaves out an algorithm's column to fit the width: the algorithms
    furthest behind the best first; one that is the best at some size is always shown."""

    def closest(n: str) -> float:  # its largest share of the best busbw over the sizes
        shares = []
        for row in rows:
            best = max(row[m] for m in names)
            shares.append(row[n] / best if best > 0 else 1.0)
        return max(shares)

    if not rows or closest(name) >= 1.0:
        return None
    return 1 + sorted(names, key=closest, reverse=True).index(name)
