"""``trnsim sweep``: the cross product of variants x ops x algorithms x sizes, as a table, CSV or
JSON, over several processes if asked; and a baseline for CI."""

import json
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.baseline import baselines, portable
from trnsim.cli.engines import Engine, Jobs, Scheduler, engine_options, with_progress
from trnsim.cli.flags import edits_text, error_text
from trnsim.cli.op_options import Counts, Pairs, Root, check_shape
from trnsim.cli.options import (
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
    StepFactor,
    note_calibration_target,
    resolve_sizes,
    writable,
    write_text,
)
from trnsim.cli.typed import in_typed_order, refuse_without
from trnsim.cli.variant_options import (
    CHECK_OPTIONS,
    BaselineOption,
    Files,
    MaxRegression,
    Metric,
    MetricOption,
    RequireAllRows,
    RuntimeOfVariants,
    SaveBaseline,
    prepare,
    selection,
    variants_of,
)
from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit, tied


def sweep(
    ctx: typer.Context,
    sku: Annotated[
        list[str] | None, typer.Option("--sku", help="SKUs or what-ifs (default: the whole catalog).")
    ] = None,
    topology: Files = None,
    op: Annotated[
        list[str] | None,
        typer.Option(
            "--op",
            help="Ops to run (default: allreduce, allgather, reducescatter, alltoall); repeatable. "
            "Every op of `trnsim collective` runs; broadcast and reduce from root 0, sendrecv rank "
            "i to i+1, the v ops with even counts.",
        ),
    ] = None,
    algo: Annotated[
        list[str] | None, typer.Option("--algo", help="Algorithms (default auto); repeatable.")
    ] = None,
    overrides: SetOption = None,
    routing: RoutingsOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    minbytes: MinBytes = None,
    maxbytes: MaxBytes = None,
    stepfactor: StepFactor = None,
    sizes: Sizes = None,
    ranks: Ranks = None,
    group: Group = None,
    groups: GroupsOfVariants = None,
    root: Root = None,
    pairs: Pairs = None,
    counts: Counts = None,
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    jobs: Jobs = 1,
    engine: Engine = None,
    scheduler: Scheduler = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write results.csv or results.json.")
    ] = None,
    metric: MetricOption = Metric.busbw,
    save_baseline: SaveBaseline = None,
    baseline: BaselineOption = None,
    max_regression: MaxRegression = "5%",
    require_all_rows: RequireAllRows = False,
    runtime: RuntimeOfVariants = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Run the cross product of SKUs x ops x algorithms x sizes; write CSV or JSON.

    Examples:

        trnsim sweep --sku nl16 --op allreduce --sizes 1M,1G
        trnsim sweep --sku nl16 --sku nl64 --sizes 1M,1G -o results.csv
        trnsim sweep --sku h100 --sku b200 --op allreduce --runtime nccl --sizes 1M
        trnsim sweep --sku nl16 --sku nl64 --sizes 1M,1G -o results.csv --jobs 2
        trnsim sweep --sku nl16 --sku nl64 --sizes 1M -o r.csv --engine dask --jobs 2

    On a Dask cluster, name its scheduler: trnsim sweep --sizes 1M,1G -o results.csv --scheduler
    tcp://HOST:8786. --jobs, --engine and --scheduler change where the runs go, never the rows
    (docs/guide/distributed.md).
    """
    from trnsim.collectives.ops import BASIC, get_op
    from trnsim.studies.runtimes import known_runtime
    from trnsim.studies.sweep import Task

    _check_output(output, fmt)
    where = engine_options(engine, scheduler, jobs)
    prepare("auto", max_regression, baseline, save_baseline, "sweep", groups, group, ranks)
    refuse_without(ctx, "baseline", CHECK_OPTIONS)
    runtime = known_runtime(runtime)
    named = _whole_catalog_for_all(in_typed_order(ctx, sku=sku, topology=topology))
    variants, common = variants_of(named, overrides, routing, calibration, fail, alpha_us)
    ops = [get_op(name).name for name in (op or list(BASIC))]
    size_list = tuple(resolve_sizes(minbytes, maxbytes, stepfactor, sizes))
    chosen, algos = (
        selection(
            group,
            ranks,
            groups,
            None,
            None,
            alpha_us,
            max_chunks,
            min_chunk,
            check_shape(ops, root, pairs, counts),
        ),
        _algorithms(algo),
    )
    tasks = [
        Task(v, common, o, a, size_list, chosen, dtype, runtime) for v in variants for o in ops for a in algos
    ]
    rows, skipped = _run(tasks, where)
    note_calibration_target(calibration, [row["sku"] for row in rows])
    meta = _variant_meta(rows)
    files = {
        file: portable(file) for file in {row["file"] for row in rows}
    }  # one resolve per file, not per row
    for row in rows:
        row["file"] = files[row["file"]]
    if output is not None:
        _write_rows(output, rows)
        runs = len(tasks) - len(skipped)
        typer.echo(
            f"wrote {len(rows)} row{'s' if len(rows) != 1 else ''} ({runs} run{'s' if runs != 1 else ''}) "
            f"to {output}",
            err=True,
        )
    else:
        title = f"sweep: {len(tasks)} run{'s' if len(tasks) != 1 else ''}" + (
            f", every variant with {edits_text(common)}" if common else ""
        )
        # CSV is for machines: every field, as -o results.csv writes it; the table shows the essentials
        columns = [Column(k, k) for k in rows[0]] if fmt == Format.csv else _sweep_columns(rows)
        table = Table(title, columns, rows, _runtime_notes(rows))
        emit({"overrides": list(common), "variants": meta, "rows": rows}, [table], fmt)
    context = {"command": "sweep", "metric": metric.value, "overrides": list(common)}
    baselines(rows, meta, context, save_baseline, baseline, max_regression, metric.value, require_all_rows)


def _check_output(output: Path | None, fmt: Format) -> None:
    """``-o`` writes .csv or .json, as its suffix says; a --format that says otherwise is refused."""
    if output is not None and output.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"-o {output}: give a .csv or .json file")
    written = output.suffix.lower().lstrip(".") if output is not None else None
    if written is not None and fmt != Format.table and fmt.value != written:
        raise UsageError(
            f"-o {output} writes {written.upper()} (by its suffix) but --format {fmt.value} was given: "
            f"name the file {output.stem}.{fmt.value} or leave --format out"
            if fmt.value in ("csv", "json")
            else f"-o {output} writes {written.upper()} (by its suffix); --format {fmt.value} is for stdout: "
            "leave it out"
        )
    writable(output, "-o")


def _algorithms(algo: list[str] | None) -> list[str]:
    """The algorithms to run; ``all`` is every algorithm as its own run (those that do not apply
    are skipped)."""
    from trnsim.collectives.algorithms import REGISTRY

    algos = [a.lower() for a in (algo or ["auto"])]
    if "all" in algos:
        algos = [a for a in algos if a != "all"] + [name for name in REGISTRY if name not in algos]
    return algos


def _run(tasks: list, engine) -> tuple[list[dict], list[str]]:
    """Every task's rows, and why the others were skipped; an error when none applies."""
    from trnsim.studies.sweep import run_sweep

    rows: list[dict] = []
    skipped: list[str] = []

    def describe(task) -> str:
        return f"{task.op} {task.variant.sku or task.variant.file}"

    for chunk in with_progress(
        "sweep", tasks, describe, lambda done: run_sweep(tasks, on_done=done, engine=engine), engine
    ):
        rows.extend(r for r in chunk if "skipped" not in r)
        skipped.extend(error_text(r["skipped"]) for r in chunk if "skipped" in r)
    if not rows:  # one error line that carries the reasons
        raise UsageError(f"no combination of the sweep applies: {'; '.join(dict.fromkeys(skipped))}")
    for reason in skipped:
        typer.echo(f"skipped: {reason}", err=True)
    from trnsim.studies.runtimes import uniform_rows

    return uniform_rows(rows), skipped


def _variant_meta(rows: list[dict]) -> list[dict]:
    from trnsim.studies.variants import file_sha256

    return [
        {
            "label": r["variant"],
            "sku": r["sku"],
            "file": portable(r["file"]),
            "overrides": [],
            "sha256": file_sha256(r["file"]),
            **(
                {"runtime": r["runtime"], "runtime_model": r["runtime_model"]}
                if r.get("runtime", "ideal") != "ideal"
                else {}
            ),
        }
        for r in {r["variant"]: r for r in rows}.values()
    ]


def _sweep_columns(rows: list[dict]) -> list[Column]:
    """The table's columns: a runtime's rows add the runtime and the ideal's busbw beside its own."""
    if "runtime" not in rows[0]:
        return _SWEEP_COLUMNS
    columns = list(_SWEEP_COLUMNS)
    columns.insert(2, Column("runtime", "runtime", align="left", drop_priority=2))
    at = next(n for n, c in enumerate(columns) if c.key == "busbw_gbps") + 1
    columns.insert(at, Column("ideal_busbw_gbps", "ideal busbw", "{:.2f}", short="ideal", drop_priority=4))
    return columns


def _runtime_notes(rows: list[dict]) -> list[str]:
    """What each variant's runtime models, one line per variant priced by a runtime."""
    models = {
        (r["variant"], r["runtime"]): r["runtime_model"] for r in rows if r.get("runtime", "ideal") != "ideal"
    }
    return [f"{variant}: runtime {runtime}: {model}" for (variant, runtime), model in models.items()]


def _whole_catalog_for_all(named: list[tuple]) -> list[tuple]:
    """No variant, or ``--sku all``, is the whole catalog: put where ``all`` stands among the others."""
    from trnsim.spec.catalog import catalog_files

    def is_all(item: tuple) -> bool:
        return item[0] == "sku" and str(item[1]).strip().lower() == "all"

    catalog = [("topology", path) for path in catalog_files()]
    if not named:
        return catalog
    first = next((n for n, item in enumerate(named) if is_all(item)), None)
    if first is None:
        return named
    rest = [item for item in named if not is_all(item)]
    return rest[:first] + catalog + rest[first:]


# narrow terminals drop the run's constant settings first, then the derived columns
_SWEEP_COLUMNS = [
    Column("variant", "variant", align="left"),
    Column("op", "op", align="left"),
    Column("group", "group", align="left", drop_priority=8),
    Column("ranks", "ranks", drop_priority=7),
    Column("algo", "algo", align="left", drop_priority=9),
    Column("bytes", "size (B)"),
    Column("time_us", "time (us)", "{:.2f}"),
    Column("busbw_gbps", "busbw (GB/s)", "{:.2f}", short="busbw"),
    Column("algorithm", "algorithm", align="left", drop_priority=3),
    Column("bound_busbw_gbps", "bound busbw", "{:.2f}", short="bound", drop_priority=4),
    Column("efficiency", "eff %", lambda v: f"{100 * v:.1f}", drop_priority=5),
    Column("bottleneck", "bottleneck", tied, align="left", drop_priority=6),
]


def _write_rows(path: Path, rows: list[dict]) -> None:
    import csv
    import io

    if path.suffix.lower() == ".json":
        from trnsim.outputs.render import SCHEMA

        write_text(path, json.dumps({"schema": SCHEMA, "rows": rows}, indent=1) + "\n")
        return
    from trnsim.outputs.render import csv_cell

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    write_text(path, buffer.getvalue())
