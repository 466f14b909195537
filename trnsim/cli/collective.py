"""``trnsim collective``: model a collective at every message size, in nccl-tests' conventions."""

from dataclasses import replace
from types import SimpleNamespace
from typing import Annotated

import typer

from trnsim.cli.chip_options import RanksPerChip
from trnsim.cli.export_format import ScheduleFormatOption, schedule_shape
from trnsim.cli.flags import edits_text
from trnsim.cli.op_options import Counts, Pairs, Root, offered, shape_text
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
    RuntimeOption,
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
from trnsim.cli.referee import ScheduleFile
from trnsim.collectives.ops import OPS
from trnsim.outputs.render import Format

RangeOption = Annotated[
    bool,
    typer.Option(
        "--range",
        help="Add a low and a high busbw per size: the run priced at every corner of the ranges the file "
        "gives its assumptions (its `ranges:` section, e.g. efficiency.default 0.85-0.91; at most 4, 16 "
        "runs). Parameters you --set are not ranged. JSON: busbw_low_gbps, busbw_high_gbps.",
    ),
]

app = typer.Typer(
    help="Model every collective nccl-tests and nccom-test run (all-reduce, all-gather, reduce-scatter, "
    "all-to-all, broadcast, reduce, gather, scatter, send/recv, permute and the v forms) as the system's "
    "library runs them, next to trnsim's best schedule, congestion included."
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
    runtime: str | None = None,
    ranks_per_chip: int | None = None,
    show_range: bool = False,
    schedule=None,
    schedule_format: str | None = None,
    root: int | None = None,
    pairs: str | None = None,
    counts=None,
) -> None:
    """Evaluate and print one collective: one group, or several at once with ``groups``; with
    ``schedule``, referee that file's schedule (:mod:`trnsim.cli.referee`). A run that reads no file
    but the system's and writes none prints what it printed before, if it ran before
    (:mod:`trnsim.cli.outcome`)."""
    options = dict(locals())  # every option's value: what the printed outcome depends on
    from trnsim.cli.outcome import key_of, remember, replay, sku_file

    algo = algorithm(algo)  # one spelling in the header and JSON
    overrides = edits(overrides, routing, calibration, fail, ranks_per_chip)
    note_alpha_override(alpha_us, [overrides])
    key = None
    if all(given is None for given in (export_schedule, heatmap, traffic_file, calibration, schedule)):
        key = key_of("collective", {**options, "edits": overrides}, [sku_file(sku, topology)])
    if replay(key, fmt):
        return
    topo = load(sku, topology, overrides)
    note_calibration_target(calibration, [topo.name])
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    if schedule is not None:
        from trnsim.cli.referee import referee_run

        options = dict(algo=algo, groups=groups, skew=skew, traffic_file=traffic_file, heatmap=heatmap)
        options.update(export_schedule=export_schedule, show_range=show_range, runtime=runtime, group=group)
        options.update(ranks=ranks, dtype=dtype, alpha_us=alpha_us, fmt=fmt)
        options["chunking"] = (max_chunks, chunk_bytes(min_chunk))
        referee_run(op, schedule, schedule_format, topo, size_list, options)
        return
    options.update(algo=algo, size_list=size_list)
    outcome = _outcome(topo, op, SimpleNamespace(**options))
    outcome.show(fmt)
    remember(key, outcome)


def _outcome(topo, op: str, o: SimpleNamespace):
    """The run's notes, payload and table (and the pictures and files it was asked for)."""
    from trnsim.cli.outcome import Outcome
    from trnsim.model.backend import Costing, ManyGroups, OneGroup, Selection
    from trnsim.model.cost import assumptions
    from trnsim.model.runtime import apply_runtime
    from trnsim.outputs.collective import each_size, every_algorithm, one_group
    from trnsim.outputs.groups import many_groups

    algo, size_list, export_schedule = o.algo, o.size_list, o.export_schedule
    _check_outputs(topo, o.heatmap, o.groups, export_schedule, algo)
    _check_range(o.show_range, o.groups, algo)
    costing = Costing(o.alpha_us, o.max_chunks, chunk_bytes(o.min_chunk))
    chosen = Selection(
        o.group, o.ranks, o.groups, o.skew, o.traffic_file, costing, None, o.root, o.pairs, o.counts
    )
    selection, backend, runtime, note = _prepare(topo, op, chosen, o.calibration, o.runtime, algo)
    if o.fmt != Format.json and isinstance(backend, OneGroup):
        backend = replace(backend, raw_bounds=False)  # the JSON alone shows the bound at raw rates
    notes = [] if note is None else [note]
    given = _given(topo, o.group, o.ranks, o.groups, backend.traffic, o.skew, o.traffic_file, export_schedule)
    given = replace(given, shape=shape_text(op, backend, selection))
    assumed = assumptions(topo, o.alpha_us)
    if isinstance(backend, ManyGroups):
        result = backend.evaluate(op, size_list, algo, o.dtype)
        return Outcome(*many_groups(topo, result, algo, assumed, given, o.explain), notes, list(topo.notes))
    writable(export_schedule, "--export-schedule")
    shape = schedule_shape(export_schedule, o.schedule_format)
    if shape is not None and algo not in ("auto", "all"):  # refused before the run
        shape.program(topo, backend.group, backend.traffic, algo, op)
    result = backend.evaluate(op, size_list, algo, o.dtype)
    if shape is not None:
        shape.write(topo, backend.traffic, result, export_schedule)
    elif export_schedule is not None:
        _export_schedule(topo, result, export_schedule, given.group)
    if o.heatmap is not None:
        _draw_heatmap(topo, result, o.heatmap, given.group)
    result = apply_runtime(topo, result, runtime)  # the schedule and heatmap above are the ideal's
    header, payload, footer = one_group(topo, result, algo, o.dtype, assumed, given)
    csv = o.fmt == Format.csv
    if algo == "all":
        payload["algorithms"], table = every_algorithm(result, header, footer, given, o.explain, csv)
    else:
        table = each_size(result, header, footer, given, o.explain, csv)
    if o.show_range:
        from trnsim.model.ranges import ranged_collective
        from trnsim.outputs.collective import with_ranges

        spans = ranged_collective(topo, selection, op, size_list, algo, o.dtype, runtime)
        with_ranges(topo, payload, table, spans)
    return Outcome(payload, [table], notes, list(topo.notes))


def _prepare(topo, op: str, selection, calibration, runtime: str | None, algo: str):
    """The selection, its backend, the runtime that prices the run and the note saying why the
    file's default gave way (None: it did not)."""
    from trnsim.model.backend import ManyGroups
    from trnsim.model.runtime import choose_runtime, runtime_of

    if calibration is not None and runtime is None:  # a calibration models what it was fitted against
        from trnsim.studies.calibration.files import calibration_runtime

        runtime = calibration_runtime(calibration)
    runtime_of(topo, runtime)  # an unknown name is refused first
    why_not = _why_not(selection.groups, algo, selection.skew, selection.traffic_file)
    backend = selection.backend(topo)
    group_of = None if isinstance(backend, ManyGroups) else backend.group
    runtime, note = choose_runtime(topo, group_of, runtime, why_not, op)  # said once the run succeeded
    return selection, backend, runtime, note


def _check_range(show_range: bool, groups, algo: str) -> None:
    """Refuse, before any work, a ranged run of what ranges do not cover yet."""
    from trnsim.errors import UsageError

    if show_range and (groups is not None or algo == "all"):
        raise UsageError("--range prices one group's chosen schedule: not with --groups or --algo all")


def _check_outputs(topo, heatmap, groups, export_schedule, algo: str) -> None:
    """Refuse, before any work, the pictures and files a run cannot give."""
    from trnsim.errors import UsageError

    picture_path(heatmap, "--heatmap")
    if groups is not None:
        if heatmap is not None:
            raise UsageError("--heatmap draws one group's run; --groups is not drawn yet")
        if export_schedule is not None or algo == "all":
            raise UsageError("--groups does not take --export-schedule or --algo all yet")
    elif heatmap is not None:
        from trnsim.outputs.draw import drawable

        if (reason := drawable(topo)) is not None:
            raise UsageError(f"--heatmap: {reason}")


def _why_not(groups, algo: str, skew, traffic_file) -> str | None:
    """What a runtime other than ideal does not model in this run (None: nothing)."""
    if groups is not None:
        return "a runtime prices one group, not several at once (--groups)"
    if algo == "all":
        return "a runtime prints its own pick per size; --algo all compares trnsim's own schedules"
    if algo != "auto":
        return f"a runtime picks its own algorithm per size; --algo {algo} names one of trnsim's schedules"
    if skew is not None or traffic_file is not None:
        return "a runtime models uniform traffic, not --skew or --traffic"
    return None


def _given(topo, group, ranks, groups, traffic, skew, traffic_file, export_schedule):
    """What the run was given, as the command line names it."""
    from trnsim.outputs.collective import Given
    from trnsim.studies.variants import label_of
    from trnsim.topology.groups import group_label

    return Given(
        group=groups if groups is not None else group_label(group, ranks),
        edits=edits_text(topo.overrides) if topo.overrides else "",
        traffic=_traffic_text(traffic, skew, traffic_file),
        skewed=traffic is not None,
        borrowed=" with --groups",
        variant=label_of(topo, tuple(topo.overrides)),
        schedule=None if export_schedule is None else str(export_schedule),
    )


def _export_schedule(topo, result, path, group_text: str) -> None:
    """Write the schedule of the algorithm chosen at the largest size as JSON."""
    import json

    from trnsim.outputs.schedule_export import schedule_document

    chosen = result.plans[result.rows[-1].algorithm]
    document = schedule_document(topo, result.group, result.op, chosen, [row.bytes for row in result.rows])
    document.update(group=group_text, overrides=list(topo.overrides), alpha_us=result.alpha_us)
    write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n")


def _draw_heatmap(topo, result, path, group_text: str) -> None:
    """Draw the link loads of the run's busiest step at its largest size."""
    from trnsim.outputs import draw

    heat = result.busiest_links()
    title = f"{topo.name} {result.op}, group {group_text}" + (
        f", {len(topo.faults)} failed" if topo.faults else ""
    )
    draw.heatmap(topo, heat, path, title)
    typer.echo(f"wrote {path} ({heat.describe()})", err=True)


def _traffic_text(traffic, skew: str | None, path) -> str:
    """How the traffic was given, for a table's header and the JSON (``uniform`` when it was not)."""
    from trnsim.collectives.traffic import describe

    return describe(traffic, f"--skew {skew}" if skew is not None else f"--traffic {path}")


# each op's examples in its --help (tests/cli/test_help_examples.py runs every one)
EXAMPLES = {
    "allreduce": ["--sku nl72x2", "--sku nl16 --algo all --sizes 64K,1M,16M,1G", "--sku v5e --runtime xla"],
    "allgather": ["--sku nl64 --group 0-15 --sizes 1M,1G", "--sku nl72x2 --groups 'server:*' --sizes 1M"],
    "reducescatter": ["--sku nl32x2 --sizes 1M,1G --explain"],
    "alltoall": ["--sku nl72x2 --sizes 1M,1G --fail cable:5", "--sku nl72x2 --skew 2:4 --sizes 256M"],
    "broadcast": ["--sku nl16 --sizes 1M,1G", "--sku nl72x2 --root 5 --algo all --sizes 1G"],
    "reduce": ["--sku nl64 --sizes 1M,1G"],
    "gather": ["--sku nl16 --root 3 --sizes 1M,1G"],
    "scatter": ["--sku nl64 --group 0-15 --sizes 1M,1G"],
    "sendrecv": ["--sku nl16 --sizes 1M,1G", "--sku nl72x2 --group 0,100 --pairs 0:1 --sizes 1G"],
    "permute": ["--sku nl64 --pairs 0:21,21:42,42:0 --sizes 1G"],
    "alltoallv": ["--sku nl16 --sizes 1M,1G"],
    "allgatherv": ["--sku nl16 --sizes 1M,1G"],
    "reducescatterv": ["--sku nl16 --sizes 1M,1G"],
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
        runtime: RuntimeOption = None,
        ranks_per_chip: RanksPerChip = None,
        show_range: RangeOption = False,
        schedule: ScheduleFile = None,
        schedule_format: ScheduleFormatOption = None,
        root: Root = None,
        pairs: Pairs = None,
        counts: Counts = None,
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
            runtime,
            ranks_per_chip,
            show_range,
            schedule,
            schedule_format,
            root,
            pairs,
            counts,
        )

    examples = "".join(f"    trnsim collective {op} {line}\n" for line in EXAMPLES[op])
    command.__doc__ = f"Model {op}: {OPS[op].description}.\n\nExamples:\n\n{examples}"
    offered(command, op)
    app.command(op)(command)


for _op in OPS:
    _register(_op)


from trnsim.cli.algorithms import algorithms  # noqa: E402 - registered after the ops, as listed

app.command("algorithms")(algorithms)
