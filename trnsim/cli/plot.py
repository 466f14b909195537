"""``trnsim plot``: busbw against size, a line per variant with its bound, and measured runs as
points."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.flags import flag
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
)
from trnsim.cli.typed import in_typed_order
from trnsim.cli.variant_options import (
    Files,
    OpArgument,
    RuntimeOfVariants,
    Skus,
    note_calibrations,
    prepare,
    selection,
    variants_of,
)
from trnsim.errors import UsageError

Measured = Annotated[
    list[Path] | None,
    typer.Option(
        "--measured",
        help="Overlay a measured run (nccl-tests or nccom-test output, as `calibrate` reads) as points; "
        "repeatable. Without --sizes the model runs at the measured sizes.",
        dir_okay=False,
    ),
]


def plot(
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
    output: Annotated[Path | None, typer.Option("-o", "--output", help="curve.png, .svg or .pdf.")] = None,
    terminal: Annotated[
        bool, typer.Option("--terminal", help="Draw the chart in the terminal instead.")
    ] = False,
    measured: Measured = None,
    runtime: RuntimeOfVariants = None,
) -> None:
    """Plot busbw against size: a line per variant, its bound dashed, measured runs as points.

    Examples:

        trnsim plot allreduce --sku nl16 --sku nl64 -o curve.svg
        trnsim plot alltoall --sku nl16 --terminal
        trnsim plot allreduce --sku h100 --runtime nccl -o curve.svg
    """
    from trnsim.collectives.ops import get_op
    from trnsim.outputs import plot as plotting
    from trnsim.studies.variants import run_variants
    from trnsim.topology.groups import group_label

    if output is None and not terminal:
        raise UsageError("give -o curve.png (or .svg) or --terminal")
    op = get_op(op).name
    algo = algo.strip().lower()  # one spelling in titles, JSON and baselines
    prepare(algo, "5%", None, None, "plot")
    writable(output, "-o")
    variants, common = variants_of(
        in_typed_order(ctx, sku=sku, topology=topology), overrides, routing, calibration, fail, alpha_us
    )
    runs = _measured(measured, op)
    if runs and (sizes, minbytes, maxbytes, stepfactor) == (None, None, None, None):
        sizes = ",".join(str(s) for s in sorted({row.size_bytes for run in runs for row in run.rows}))
    if runs and group is None and ranks is None:
        ranks = runs[0].ranks  # the measured ranks: the model runs on as many (the first ones)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    shape = check_shape([op], root, pairs, counts)
    chosen = selection(group, ranks, None, None, None, alpha_us, max_chunks, min_chunk, shape)
    results = run_variants(
        variants, op, size_list, chosen, algo=algo, dtype=dtype, common=common, name=flag, runtime=runtime
    )
    note_calibrations(calibration, results)
    for run in runs:
        for result in results:
            if run.ranks != result.evaluation.ranks:
                raise UsageError(
                    f"--measured {run.path}: the run has {run.ranks} ranks, the model of {result.display} "
                    f"{result.evaluation.ranks}; give a group of {run.ranks} ranks (--ranks or --group)"
                )
    words = shape_words(shape)
    title = f"{op} bus bandwidth, group {group_label(group, ranks)}{', ' + words if words else ''}, algorithm {algo}"
    title += _runtimes(results)
    if terminal:
        typer.echo(plotting.terminal_chart(results, op, title, runs))
    if output is not None:
        plotting.save_figure(results, op, output, title, runs)
        typer.echo(f"wrote {output}", err=True)


def _runtimes(results) -> str:
    """The title's words on the runtimes the curves model (none when all are the ideal's)."""
    from trnsim.cli.variant_options import letters
    from trnsim.outputs.compare import runtime_title

    words = runtime_title(results, letters(len(results)))
    return f"; {words}" if words else ""


def _measured(paths: list[Path] | None, op: str) -> list:
    """The measured runs to overlay, each of ``op``."""
    if not paths:
        return []
    from trnsim.studies.calibration.readers import read_measurement

    runs = []
    for path in paths:
        run = read_measurement(path)
        if run.op != op:
            raise UsageError(f"--measured {path}: the run measures {run.op}, the plot is of {op}")
        runs.append(run)
    return runs
