"""``trnsim report``: a comparison as one self-contained HTML file (curves, table, drawings and
heatmaps; :mod:`trnsim.outputs.report`)."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.flags import edits_text, flag
from trnsim.cli.op_options import Counts, Pairs, Root, check_shape, shape_words
from trnsim.cli.options import (
    AlgoOne,
    AlphaUs,
    CalibrationOption,
    Dtype,
    FailOption,
    Group,
    MaxBytes,
    MaxChunks,
    MinBytes,
    MinChunk,
    Ranks,
    RoutingsOption,
    SetOption,
    Sizes,
    StepFactor,
    resolve_sizes,
    writable,
    write_text,
)
from trnsim.cli.typed import in_typed_order
from trnsim.cli.variant_options import (
    Files,
    OpArgument,
    RuntimeOfVariants,
    Skus,
    letters,
    prepare,
    selection,
    variants_of,
)
from trnsim.errors import UsageError


def report(
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
    root: Root = None,
    pairs: Pairs = None,
    counts: Counts = None,
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The report: an .html file.", show_default=False)
    ] = ...,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
    runtime: RuntimeOfVariants = None,
) -> None:
    """Write a comparison as one self-contained HTML file: curves, table, drawings and heatmaps.

    The busbw curves against their bounds, the variants side by side, and per variant its drawing,
    its link-load heatmap (the busiest step at the largest size) and its rows. It opens with no
    network and no other file. Needs the plot extra (matplotlib).

    Examples:

        trnsim report allreduce --sku nl16 --sku nl64 --sizes 1M,1G -o report.html
        trnsim report allreduce --sku h100 --sku b200 --runtime nccl -o report.html
    """
    import sys

    from trnsim.collectives.ops import get_op
    from trnsim.outputs import plot as plotting
    from trnsim.outputs import report as reports
    from trnsim.outputs.compare import runtime_notes, runtime_title
    from trnsim.studies.variants import run_variants
    from trnsim.topology.groups import group_label

    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {output}: give an .html file")
    writable(output, "-o")
    plotting.require("matplotlib")  # before the work, not after
    op = get_op(op).name
    algo = algo.strip().lower()
    prepare(algo, "5%", None, None, "report")
    variants, common = variants_of(
        in_typed_order(ctx, sku=sku, topology=topology), overrides, routing, calibration, fail, alpha_us
    )
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    given = check_shape([op], root, pairs, counts)
    chosen = selection(group, ranks, None, None, None, alpha_us, max_chunks, min_chunk, given)
    results = run_variants(
        variants, op, size_list, chosen, algo=algo, dtype=dtype, common=common, name=flag, runtime=runtime
    )
    shape = group_label(group, ranks) + (f", {shape_words(given)}" if shape_words(given) else "")
    names = letters(len(results))
    heading = (
        title or f"trnsim: {op} on {len(results)} variant{'s' if len(results) != 1 else ''}, group {shape}"
    )
    words = runtime_title(results, names)
    runtimes = f"; {words}" if words else ""
    chart = reports.svg_of(
        lambda path: plotting.save_figure(
            results, op, path, f"{op} bus bandwidth, group {shape}, algorithm {algo}{runtimes}"
        )
    )
    headers, table = reports.side_by_side(results, size_list, names)
    document = reports.Report(
        heading,
        "trnsim " + " ".join(sys.argv[1:]),
        op,
        chart,
        headers,
        table,
        reports.sections(results, names, op),
        ([f"every variant with {edits_text(common)}"] if common else []) + runtime_notes(results, names),
    )
    write_text(output, reports.render(document))
    typer.echo(
        f"wrote {output} ({len(results)} variant{'s' if len(results) != 1 else ''}, {len(table)} sizes)",
        err=True,
    )
