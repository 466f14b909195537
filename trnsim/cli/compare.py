"""``trnsim compare``: variants side by side at every size, each one's ratio to the first, and a
baseline for CI."""

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.baseline import baselines, variant_meta
from trnsim.cli.flags import edits_text, flag
from trnsim.cli.op_options import Counts, Pairs, Root, check_shape, shape_words
from trnsim.cli.options import (
    AlgoOne,
    AlphaUs,
    CalibrationOption,
    Dtype,
    FailOption,
    FormatOption,
    Group,
    GroupsOfVariants,
    MaxBytes,
    MaxChunks,
    MinBytes,
    MinChunk,
    Ranks,
    RoutingsOption,
    SetOption,
    Sizes,
    Skew,
    StepFactor,
    TrafficFile,
    chunk_bytes,
    picture_path,
    resolve_sizes,
    writable,
)
from trnsim.cli.typed import in_typed_order, refuse_without
from trnsim.cli.variant_options import (
    CHECK_OPTIONS,
    BaselineOption,
    Files,
    MaxRegression,
    Metric,
    MetricOption,
    OpArgument,
    RequireAllRows,
    RuntimeOfVariants,
    SaveBaseline,
    Skus,
    letters,
    note_calibrations,
    prepare,
    selection,
    variants_of,
)
from trnsim.errors import UsageError
from trnsim.outputs.render import Format, Table

HeatmapOfVariants = Annotated[
    Path | None,
    typer.Option(
        "--heatmap",
        help="Draw each variant's link loads (as collective --heatmap) to FILE with the variant's "
        "letter added: heat.png gives heat-A.png, heat-B.png, ...",
        show_default=False,
    ),
]


def compare(
    ctx: typer.Context,
    op: OpArgument,
    sku: Skus = None,
    topology: Files = None,
    overrides: SetOption = None,
    routing: RoutingsOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    algo: AlgoOne = "auto",
    minbytes: MinBytes = None,
    maxbytes: MaxBytes = None,
    stepfactor: StepFactor = None,
    sizes: Sizes = None,
    ranks: Ranks = None,
    group: Group = None,
    groups: GroupsOfVariants = None,
    skew: Skew = None,
    traffic: TrafficFile = None,
    root: Root = None,
    pairs: Pairs = None,
    counts: Counts = None,
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    metric: MetricOption = Metric.busbw,
    save_baseline: SaveBaseline = None,
    baseline: BaselineOption = None,
    max_regression: MaxRegression = "5%",
    require_all_rows: RequireAllRows = False,
    heatmap: HeatmapOfVariants = None,
    runtime: RuntimeOfVariants = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Compare variants: one row per size, each variant's metric and time, and its ratio to the first.

    With --groups every variant runs its groups at once and the rows are the slowest group's.

    Examples:

        trnsim compare alltoall --sku nl72x2 --sku trn3-nl72x2-gen3 --sizes 1M,1G
        trnsim compare allreduce --sku nl16 --sku nl16:fail=link:x:0 --sizes 1G
        trnsim compare allreduce --sku h100 --sku b200 --runtime nccl --sizes 1M,1G
    """
    from trnsim.cli.outcome import Outcome, finish, replay
    from trnsim.collectives.ops import get_op
    from trnsim.outputs.compare import (
        alignment_notes,
        columns,
        comparison,
        priced_by_runtime,
        runtime_notes,
        runtime_title,
    )
    from trnsim.studies.baseline import comparison_rows
    from trnsim.studies.variants import run_variants

    op = get_op(op).name
    algo = algo.strip().lower()  # one spelling in titles, JSON and baselines
    prepare(algo, max_regression, baseline, save_baseline, "compare", groups, group, ranks)
    refuse_without(ctx, "baseline", CHECK_OPTIONS)
    _check_options(op, heatmap, groups, skew, traffic)
    named = in_typed_order(ctx, sku=sku, topology=topology)
    variants, common = variants_of(named, overrides, routing, calibration, fail, alpha_us)
    if heatmap is not None:  # the files it draws, checked before the work
        for letter in letters(len(variants)):
            writable(_heat_path(heatmap, letter), "--heatmap")
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    given_shape = check_shape([op], root, pairs, counts)
    chosen = _selection(group, ranks, groups, skew, traffic, alpha_us, max_chunks, min_chunk, given_shape)
    key = _outcome_key(locals(), variants, common)
    if replay(key, fmt):
        return
    results = run_variants(
        variants, op, size_list, chosen, algo=algo, dtype=dtype, common=common, name=flag, runtime=runtime
    )
    note_calibrations(calibration, results)
    shape, skewed, group_text = _group_texts(group, ranks, groups, skew, traffic, given_shape)
    names = letters(len(results))
    table_rows, payload_rows = comparison(results, size_list, metric.value, names)
    identity = {
        "op": op,
        "group": group_text,
        "algo": algo,
        "dtype": dtype.strip().lower(),
        "alpha_us": alpha_us,
        "max_chunks": max_chunks,
        "min_chunk_bytes": chunk_bytes(min_chunk),
    }
    borrowed, borrowed_notes = _borrowed(results, names, groups)
    legend = [f"{letter} = {result.display}" for letter, result in zip(names, results, strict=True)]
    meta = variant_meta(results)
    payload = {
        "op": op,
        "metric": metric.value,
        "group": group_text,
        "algorithm": algo,
        "dtype": identity["dtype"],
        "alpha_us": alpha_us,
        "max_chunks": max_chunks,
        "min_chunk_bytes": identity["min_chunk_bytes"],
        "overrides": list(common),
        "variants": meta,
        "borrowed": {label: b.as_dict() if b is not None else None for label, b in borrowed.items()},
        "rows": payload_rows,
    }
    if heatmap is not None:
        _check_drawable(results, names)
    title = _title(op, len(results), shape, groups, skewed, algo, metric.value, common)
    if runtimes := runtime_title(results, names):
        title += f"; {runtimes}"
    notes = legend + runtime_notes(results, names) + alignment_notes(results, names) + borrowed_notes
    shown = columns(names, metric.value, fmt == Format.csv, priced_by_runtime(results))
    finish(key, Outcome(payload, [Table(title, shown, table_rows, notes)]), fmt)
    if heatmap is not None:
        for letter, result in zip(names, results, strict=True):
            path = _heat_path(heatmap, letter)
            _draw_heat(result, path, f"{letter} = {result.display}: {op}, group {group_text}")
    context = {"command": "compare", "op": op, "metric": metric.value, "group": group_text}
    context.update(algorithm=algo, overrides=list(common))
    rows = comparison_rows(payload_rows, identity)
    baselines(rows, meta, context, save_baseline, baseline, max_regression, metric.value, require_all_rows)


def _selection(*options):
    """Who runs each variant and how (:func:`~trnsim.cli.variant_options.selection` of ``options``),
    without the bound at raw link rates: no view of a comparison shows it."""
    return replace(selection(*options), raw_bounds=False)


def _outcome_key(given: dict, variants, common: tuple[str, ...]) -> str | None:
    """The key a comparison's outcome is kept under (:mod:`trnsim.cli.outcome`): every option's value
    in ``given`` (the command's locals), the variants and their files; None for one that reads or
    writes another file (a baseline, a picture, a traffic matrix, counts, a calibration)."""
    import inspect

    from trnsim.cli.outcome import key_of, sku_file

    options = {name: given[name] for name in inspect.signature(compare).parameters if name != "ctx"}

    files = ("heatmap", "save_baseline", "baseline", "traffic", "counts", "calibration")
    if any(options[name] is not None for name in files) or any(v.calibrations for v in variants):
        return None
    systems = [(variant.sku, variant.file, variant.overrides) for variant in variants]
    paths = [sku_file(variant.sku, variant.file) for variant in variants]
    return key_of("compare", {**options, "variants": systems, "common": common}, paths)


def _group_texts(group, ranks, groups, skew, traffic, given_shape) -> tuple[str, str, str]:
    """The group, what shapes the op (skew, traffic, root, pairs, counts) and both together: the
    title's words and a baseline row's identity."""
    from trnsim.topology.groups import group_label

    shape = group_label(group, ranks, groups)
    skewed = (
        f"skew {skew.strip()}" if skew is not None else f"traffic {traffic}" if traffic is not None else ""
    )
    skewed = "; ".join(x for x in (skewed, shape_words(given_shape)) if x)
    return shape, skewed, "; ".join(x for x in (shape, skewed) if x)


def _check_options(op: str, heatmap, groups, skew, traffic) -> None:
    picture_path(heatmap, "--heatmap")
    if heatmap is not None and groups is not None:
        raise UsageError("--heatmap draws one group's run; --groups is not drawn yet")
    if (skew is not None or traffic is not None) and op != "alltoall":
        raise UsageError(f"--skew and --traffic are for alltoall; {op} sends the same to every rank")


def _title(op, count, shape, groups, skewed, algo, metric, common) -> str:
    where = f"{shape} at once (the slowest group)" if groups else f"group {shape}"
    where += f", {skewed}" if skewed else ""
    title = f"{op} on {count} variant{'s' if count != 1 else ''}, {where}, algorithm {algo}; ratios of {metric} to A"
    return title + (f"; every variant with {edits_text(common)}" if common else "")


def _borrowed(results, names: list[str], groups) -> tuple[dict, list[str]]:
    """What each variant's group borrows from chips outside it (nothing is, with every group at
    once), and a note for each that borrows."""
    from trnsim.model.borrowed import borrowed_by

    borrowed, notes = {}, []
    if groups:
        return borrowed, notes
    for letter, result in zip(names, results, strict=True):
        # the links a group borrows are its schedules' (a runtime's rows keep the ideal's run)
        ideal = getattr(result.evaluation, "ideal", result.evaluation)
        borrowed[result.label] = borrowed_by(result.topology, ideal)
        if borrowed[result.label] is not None:
            notes.append(f"{letter}: the group {borrowed[result.label].describe()} with --groups")
    return borrowed, notes


def _check_drawable(results, names: list[str]) -> None:
    """Every variant drawable, or no picture at all."""
    from trnsim.outputs.draw import drawable

    for letter, result in zip(names, results, strict=True):
        if (reason := drawable(result.topology)) is not None:
            raise UsageError(f"--heatmap: variant {letter}: {reason}")


def _heat_path(heatmap: Path, letter: str) -> Path:
    """``heat.png`` gives ``heat-A.png`` for variant A."""
    return heatmap.with_name(f"{heatmap.stem}-{letter}{heatmap.suffix}")


def _draw_heat(result, path: Path, title: str) -> None:
    """One variant's heatmap (the chosen algorithm's busiest step at the largest size)."""
    from trnsim.outputs import draw

    heat = result.evaluation.busiest_links()
    draw.heatmap(result.topology, heat, path, title)
    typer.echo(f"wrote {path} ({heat.describe()})", err=True)
