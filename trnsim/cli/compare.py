"""``trnsim compare``, ``trnsim sweep``, ``trnsim plot`` and ``trnsim report``: variants side by side,
baselines for CI, pictures and an HTML report."""

import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.flags import edits_text
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
    algorithm,
    chunk_bytes,
    edits,
    note_alpha_override,
    note_calibration_target,
    resolve_sizes,
    writable,
    write_text,
)
from trnsim.cli.typed import OrderedCommand, in_typed_order, refuse_without
from trnsim.errors import ThresholdError, UsageError
from trnsim.outputs.render import Column, Format, Table, emit, tied, visible
from trnsim.topology.groups import group_label


class Metric(str, Enum):
    busbw = "busbw"
    time = "time"
    efficiency = "efficiency"


OpArgument = Annotated[str, typer.Argument(help="allreduce, allgather, reducescatter or alltoall.")]
Skus = Annotated[
    list[str] | None,
    typer.Option(
        "--sku",
        help="A SKU, or a what-if NAME:set=KEY=VALUE, NAME:fail=SPEC or NAME:calibration=FILE (that "
        "variant alone); repeat for more variants.",
    ),
]
Files = Annotated[
    list[Path] | None, typer.Option("--topology", help="A topology YAML file as a variant; repeatable.")
]
MetricOption = Annotated[Metric, typer.Option("--metric", help="What the ratios and the baseline compare.")]
SaveBaseline = Annotated[
    Path | None, typer.Option("--save-baseline", help="Write the results as a baseline.")
]
BaselineOption = Annotated[
    Path | None, typer.Option("--baseline", help="Check against a saved baseline; exit 1 on a regression.")
]
MaxRegression = Annotated[
    str, typer.Option("--max-regression", help="Allowed worsening per row against --baseline (5% or 0.05).")
]
RequireAllRows = Annotated[
    bool,
    typer.Option(
        "--require-all-rows",
        help="Fail (exit 1) when a row of --baseline is missing from the run (another size, variant, op "
        "or algorithm); without it such rows are listed and not checked. Rows new in the run are listed.",
    ),
]
# the options that only act on a check against --baseline
_CHECK_OPTIONS = ("max_regression", "require_all_rows")

_VALUE_KEY = {"busbw": "busbw_gbps", "time": "time_us", "efficiency": "efficiency"}
_VALUE_FMT = {"busbw": "{:.2f}", "time": "{:.2f}", "efficiency": lambda v: f"{100 * v:.1f}"}
_VALUE_HEAD = {"busbw": "busbw (GB/s)", "time": "time (us)", "efficiency": "eff %"}


def _variants(named, overrides, routings=None, calibration=None, fail=None, alpha_us=None):
    """The variants to run, and the edits common to all; each --routing multiplies the variants.

    ``named`` holds ``("sku", text)`` and ``("topology", path)`` pairs in the order typed (see
    :func:`trnsim.cli.typed.in_typed_order`): the first is A, the base of the ratios.
    """
    from dataclasses import replace

    from trnsim.routing.policy import routing_overrides
    from trnsim.studies.variants import Variant

    common = tuple(edits(overrides, None, calibration, fail))
    variants = [Variant.parse(str(value), is_file=kind == "topology", common=common) for kind, value in named]
    if calibration is not None and any(variant.calibrations for variant in variants):
        raise UsageError(
            f"--calibration {calibration} and a variant's own calibration=FILE: give one calibration to "
            "every variant or one per variant, not both"
        )
    if not variants:
        raise UsageError("name at least one variant with --sku or --topology")
    if routings:
        variants = [
            replace(variant, overrides=variant.overrides + tuple(routing_overrides(routing)))
            for variant in variants
            for routing in routings
        ]
    note_alpha_override(alpha_us, [variant.edits() for variant in variants])
    return variants, common


def _letters(count: int) -> list[str]:
    """The variants' letters in tables and file names: A is the baseline of the ratios."""
    return [chr(ord("A") + n) if n < 26 else f"V{n}" for n in range(count)]


def _portable(path: Path) -> str:
    """A catalog file as ``topologies/NAME.yaml``; other files as given."""
    from trnsim.spec.catalog import catalog_dir

    try:
        return str(Path(path).resolve().relative_to(catalog_dir().resolve().parent))
    except ValueError:
        return str(path)


def _variant_meta(results) -> list[dict]:
    from trnsim.studies.variants import file_sha256

    return [
        {
            "label": r.label,
            "sku": r.variant.sku,
            "file": _portable(r.topology.path),
            "overrides": list(r.variant.overrides),
            "sha256": r.sha256,
            **(
                {"calibration_sha256": [file_sha256(path) for path in r.variant.calibrations]}
                if r.variant.calibrations
                else {}
            ),
        }
        for r in results
    ]


def _baselines(
    rows: list[dict],
    variants: list[dict],
    context: dict,
    save_path,
    check_path,
    max_regression,
    metric: str,
    require_all: bool = False,
) -> None:
    """Save and/or check a baseline; a check prints its report on stderr and exits 1 on a regression,
    or with ``require_all`` on a baseline row the run did not produce."""
    from trnsim.studies import baseline
    from trnsim.units import parse_percent

    if save_path is not None:
        try:
            baseline.save(save_path, rows, variants, context)
        except OSError as exc:
            raise UsageError(f"cannot write baseline {save_path}: {exc.strerror}") from None
        typer.echo(f"saved baseline {save_path} ({len(rows)} row{'s' if len(rows) != 1 else ''})", err=True)
    if check_path is None:
        return
    threshold = parse_percent(max_regression)
    saved = baseline.load(check_path)  # read before the run too (_prepare); re-read: it is small
    result = baseline.check(saved, rows, metric, threshold)
    if not result.checks:
        example = baseline.describe_key(result.only_in_baseline[0]) if result.only_in_baseline else "none"
        raise UsageError(
            f"{check_path}: no row of this run matches the baseline (rows match on variant, op, group, "
            f"algorithm, dtype, alpha, chunk limits and size; the baseline has e.g. {example})"
        )
    if saved.get("overrides", []) != context.get("overrides", []):
        before = ", ".join(saved.get("overrides", [])) or "none"
        edits_note = f"note: this run's --set edits ({', '.join(context.get('overrides', [])) or 'none'}) differ from the baseline's ({before})"
    else:
        edits_note = None
    hashes = {v.get("label"): v.get("sha256") for v in saved.get("variants", [])}
    changed = [v["label"] for v in variants if hashes.get(v["label"]) not in (None, v.get("sha256"))]
    bad = result.regressions
    lines = [
        f"baseline {check_path}: {len(result.checks)} rows compared on {metric}, "
        f"threshold {100 * threshold:g}%"
    ]
    if changed:
        lines.append(f"note: topology file changed since the baseline for {', '.join(changed)}")
    if edits_note:
        lines.append(edits_note)
    missing, new = result.only_in_baseline, result.only_in_run
    if missing:
        unless = "" if require_all else "; --require-all-rows fails on them"
        lines.append(
            f"note: {_rows(len(missing))} of the baseline not produced by this run, not checked{unless}: "
            f"{_examples(missing, 3)}"
        )
    if new:
        lines.append(
            f"note: {_rows(len(new))} of this run not in the baseline, not checked: {_examples(new, 3)}"
        )
    lines += [
        f"REGRESSION {c.label}: {metric} {c.baseline:.4g} -> {c.current:.4g} ({100 * c.change:+.1f}%)"
        for c in bad
    ]
    typer.echo(visible("\n".join(lines)), err=True)  # labels and edits come from the baseline file
    failures = []
    if bad:
        named = "; ".join(f"{c.label} {100 * c.change:+.1f}%" for c in bad[:5])
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        failures.append(
            f"{len(bad)} of {len(result.checks)} rows worse than the baseline by more than "
            f"{100 * threshold:g}%: {named}{more}"
        )
    if missing and require_all:
        failures.append(
            f"{_rows(len(missing))} of the baseline not produced by this run (--require-all-rows): "
            f"{_examples(missing, 5)}"
        )
    if failures:
        raise ThresholdError("; ".join(failures))
    typer.echo(f"ok: no row worse than {100 * threshold:g}%", err=True)


def _rows(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def _examples(keys: list[tuple], shown: int) -> str:
    """The first ``shown`` row identities, and how many more there are."""
    from trnsim.studies.baseline import describe_key

    more = f"; and {len(keys) - shown} more" if len(keys) > shown else ""
    return "; ".join(describe_key(key) for key in keys[:shown]) + more


def _prepare(
    algo: str, max_regression: str, baseline, save_baseline, command: str, groups=None, group=None, ranks=None
) -> None:
    """Check before any work: the algorithm choice, the groups, the threshold and where results go."""
    from trnsim.studies import baseline as baselines
    from trnsim.units import parse_percent

    if groups is not None and (group is not None or ranks is not None):
        raise UsageError("give --groups, or --group/--ranks for one group, not both")
    if algo.lower() == "all":
        raise UsageError(f"--algo all is for trnsim collective; {command} takes one algorithm or auto")
    algorithm(algo)  # an unknown name is refused before the work, naming --algo
    parse_percent(max_regression, "--max-regression")  # an error even before a baseline is given
    if baseline is not None:
        baselines.load(baseline)  # a missing or malformed baseline fails before the work, not after
        if save_baseline is not None and Path(save_baseline).resolve() == Path(baseline).resolve():
            raise UsageError(
                f"--save-baseline and --baseline name the same file {baseline}: the run would be checked "
                "against itself"
            )
    writable(save_baseline, "--save-baseline")


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
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    metric: MetricOption = Metric.busbw,
    save_baseline: SaveBaseline = None,
    baseline: BaselineOption = None,
    max_regression: MaxRegression = "5%",
    require_all_rows: RequireAllRows = False,
    heatmap: Annotated[
        Path | None,
        typer.Option(
            "--heatmap",
            help="Draw each variant's link loads (as collective --heatmap) to FILE with the variant's "
            "letter added: heat.png gives heat-A.png, heat-B.png, ...",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Compare variants: one row per size, each variant's metric and time, and its ratio to the first.

    With --groups every variant runs its groups at once and the rows are the slowest group's.

    Examples:

        trnsim compare alltoall --sku nl72x2 --sku trn3-nl72x2-gen3 --sizes 1M,1G
        trnsim compare allreduce --sku nl16 --sku nl16:fail=link:x:0 --sizes 1G
    """
    from trnsim.cli.options import picture_path
    from trnsim.collectives.ops import get_op
    from trnsim.studies.variants import run_variants

    op = get_op(op).name
    algo = algo.strip().lower()  # one spelling in titles, JSON and baselines
    _prepare(algo, max_regression, baseline, save_baseline, "compare", groups, group, ranks)
    refuse_without(ctx, "baseline", _CHECK_OPTIONS)
    picture_path(heatmap, "--heatmap")
    if heatmap is not None and groups is not None:
        raise UsageError("--heatmap draws one group's run; --groups is not drawn yet")
    if (skew is not None or traffic is not None) and op != "alltoall":
        raise UsageError(f"--skew and --traffic are for alltoall; {op} sends the same to every rank")
    named = in_typed_order(ctx, sku=sku, topology=topology)
    variants, common = _variants(named, overrides, routing, calibration, fail, alpha_us)
    if heatmap is not None:  # the files it draws, checked before the work
        for letter in _letters(len(variants)):
            writable(_heat_path(heatmap, letter), "--heatmap")
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    results = run_variants(
        variants,
        op,
        size_list,
        group=group,
        ranks=ranks,
        algo=algo.lower(),
        dtype=dtype,
        alpha_us=alpha_us,
        common=common,
        max_chunks=max_chunks,
        min_chunk_bytes=chunk_bytes(min_chunk),
        groups=groups,
        skew=skew,
        traffic_file=traffic,
    )
    note_calibration_target(calibration, [r.topology.name for r in results])
    for r in results:  # a variant's own calibration file
        for path in r.variant.calibrations:
            note_calibration_target(path, [r.topology.name])
    key = _VALUE_KEY[metric.value]
    # the group, and any skew, are part of a row's identity in a baseline
    shape = group_label(group, ranks, groups)
    skewed = (
        f"skew {skew.strip()}" if skew is not None else f"traffic {traffic}" if traffic is not None else ""
    )
    group_text = f"{shape}; {skewed}" if skewed else shape
    # a variant's rows by requested size: on a small group a size may align to 0 bytes and be left out
    by_size = [{row.requested_bytes: row for row in r.evaluation.rows} for r in results]
    shown_sizes = [size for size in size_list if any(size in rows for rows in by_size)]
    # variants are lettered in the table (A is the baseline of the ratios) and named in the legend
    letters = _letters(len(results))
    table_rows, payload_rows, baseline_rows = [], [], []
    for size in shown_sizes:
        entry, values, ratios = {"bytes": size}, {}, {}
        first = by_size[0].get(size)
        reference = getattr(first, key) if first is not None else None
        for n, result in enumerate(results):
            row, letter = by_size[n].get(size), letters[n]
            entry[f"{letter}_variant"] = result.display
            if row is None:
                continue
            value = getattr(row, key)
            ratio = value / reference if reference else None
            entry[f"{letter}_{key}"], entry[f"{letter}_time_us"], entry[f"{letter}_over_A"] = (
                value,
                row.time_us,
                ratio,
            )
            entry[f"{letter}_algorithm"] = row.algorithm
            values[result.label] = {
                "bytes": row.bytes,
                "time_us": row.time_us,
                "busbw_gbps": row.busbw_gbps,
                "efficiency": row.efficiency,
                "algorithm": row.algorithm,
            }
            ratios[result.label] = ratio
            baseline_rows.append(
                {
                    "variant": result.label,
                    "op": op,
                    "group": group_text,
                    "algo": algo.lower(),
                    "dtype": dtype.strip().lower(),
                    "alpha_us": alpha_us,
                    "max_chunks": max_chunks,
                    "min_chunk_bytes": chunk_bytes(min_chunk),
                    "requested_bytes": size,
                    **values[result.label],
                }
            )
        table_rows.append(entry)
        payload_rows.append({"bytes": size, "values": values, "ratios": ratios})
    columns = [Column("bytes", "size (B)")]
    for n, letter in enumerate(letters):
        if fmt == Format.csv:  # CSV has no legend: name each variant (with its edits) in a column
            columns.append(Column(f"{letter}_variant", f"{letter}_variant", align="left"))
        # to fit the width the times go first, then the algorithms, then the ratios, then the last
        # variants' values (A stays)
        value = Column(f"{letter}_{key}", f"{letter} {_VALUE_HEAD[metric.value]}", _VALUE_FMT[metric.value])
        columns.append(value)
        if n:
            value.drop_priority = 1
        # which algorithm gave the value: variants differ in what they can run (nvls needs switches)
        columns.append(Column(f"{letter}_algorithm", f"{letter} algo", align="left", drop_priority=3))
        if metric != Metric.time:
            columns.append(Column(f"{letter}_time_us", f"{letter} time (us)", "{:.2f}", drop_priority=4))
        if n:
            columns.append(Column(f"{letter}_over_A", f"{letter}/A", "{:.3f}x", drop_priority=2))
    legend = [f"{letter} = {result.display}" for letter, result in zip(letters, results, strict=True)]
    # one line per distinct alignment note, naming the variants it applies to
    by_note: dict[str, list[str]] = {}
    for letter, result in zip(letters, results, strict=True):
        if (note := result.evaluation.alignment_note()) is not None:
            by_note.setdefault(note, []).append(letter)
    notes = [f"{', '.join(names)}: {note}" for note, names in by_note.items()]
    borrowed = {}  # a group run alone may use idle links of chips outside it (see --groups)
    if not groups:
        from trnsim.model.borrowed import borrowed_by

        for letter, result in zip(letters, results, strict=True):
            borrowed[result.label] = borrowed_by(result.topology, result.evaluation)
            if borrowed[result.label] is not None:
                notes.append(f"{letter}: the group {borrowed[result.label].describe()} with --groups")
    count = f"{len(results)} variant{'s' if len(results) != 1 else ''}"
    where = f"{shape} at once (the slowest group)" if groups else f"group {shape}"
    where += f", {skewed}" if skewed else ""
    title = f"{op} on {count}, {where}, algorithm {algo}; ratios of {metric.value} to A"
    if common:
        title += f"; every variant with {edits_text(common)}"
    meta = _variant_meta(results)
    payload = {
        "op": op,
        "metric": metric.value,
        "group": group_text,
        "algorithm": algo,
        "dtype": dtype.strip().lower(),
        "alpha_us": alpha_us,
        "max_chunks": max_chunks,
        "min_chunk_bytes": chunk_bytes(min_chunk),
        "overrides": list(common),
        "variants": meta,
        "borrowed": {label: b.as_dict() if b is not None else None for label, b in borrowed.items()},
        "rows": payload_rows,
    }
    if heatmap is not None:  # every variant drawable, or no picture at all
        from trnsim.outputs.draw import drawable

        for letter, result in zip(letters, results, strict=True):
            if (reason := drawable(result.topology)) is not None:
                raise UsageError(f"--heatmap: variant {letter}: {reason}")
    emit(payload, [Table(title, columns, table_rows, legend + notes)], fmt)
    if heatmap is not None:
        for letter, result in zip(letters, results, strict=True):
            path = _heat_path(heatmap, letter)
            _draw_heat(result, op, path, f"{letter} = {result.display}: {op}, group {group_text}")
    _baselines(
        baseline_rows,
        meta,
        {
            "command": "compare",
            "op": op,
            "metric": metric.value,
            "group": group_text,
            "algorithm": algo,
            "overrides": list(common),
        },
        save_baseline,
        baseline,
        max_regression,
        metric.value,
        require_all_rows,
    )


def _heat_path(heatmap: Path, letter: str) -> Path:
    """``heat.png`` gives ``heat-A.png`` for variant A."""
    return heatmap.with_name(f"{heatmap.stem}-{letter}{heatmap.suffix}")


def _draw_heat(result, op: str, path: Path, title: str) -> None:
    """One variant's heatmap (the chosen algorithm's busiest step at the largest size)."""
    from trnsim.outputs import draw

    heat = result.evaluation.busiest_links()
    draw.heatmap(result.topology, heat, path, title)
    typer.echo(f"wrote {path} ({heat.describe()})", err=True)


def sweep(
    ctx: typer.Context,
    sku: Annotated[
        list[str] | None, typer.Option("--sku", help="SKUs or what-ifs (default: the whole catalog).")
    ] = None,
    topology: Files = None,
    op: Annotated[
        list[str] | None, typer.Option("--op", help="Ops to run (default: all four); repeatable.")
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
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes.", min=1)] = 1,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write results.csv or results.json.")
    ] = None,
    metric: MetricOption = Metric.busbw,
    save_baseline: SaveBaseline = None,
    baseline: BaselineOption = None,
    max_regression: MaxRegression = "5%",
    require_all_rows: RequireAllRows = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Run the cross product of SKUs x ops x algorithms x sizes; write CSV or JSON.

    Examples:

        trnsim sweep --sku nl16 --op allreduce --sizes 1M,1G
        trnsim sweep --sku nl16 --sku nl64 --sizes 1M,1G -o results.csv
    """
    from trnsim.cli.flags import error_text
    from trnsim.collectives.ops import OPS, get_op
    from trnsim.studies.sweep import Task, run_sweep

    if output is not None and output.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"-o {output}: give a .csv or .json file")
    written = output.suffix.lower().lstrip(".") if output is not None else None
    if written is not None and fmt != Format.table and fmt.value != written:
        # -o writes what its suffix says; a --format that says otherwise is a contradiction
        raise UsageError(
            f"-o {output} writes {written.upper()} (by its suffix) but --format {fmt.value} was given: "
            f"name the file {output.stem}.{fmt.value} or leave --format out"
            if fmt.value in ("csv", "json")
            else f"-o {output} writes {written.upper()} (by its suffix); --format {fmt.value} is for stdout: "
            "leave it out"
        )
    writable(output, "-o")
    _prepare("auto", max_regression, baseline, save_baseline, "sweep", groups, group, ranks)
    refuse_without(ctx, "baseline", _CHECK_OPTIONS)
    named = _whole_catalog_for_all(in_typed_order(ctx, sku=sku, topology=topology))
    variants, common = _variants(named, overrides, routing, calibration, fail, alpha_us)
    ops = [get_op(name).name for name in (op or list(OPS))]
    from trnsim.collectives.algorithms import REGISTRY

    algos = [a.lower() for a in (algo or ["auto"])]
    if "all" in algos:  # every algorithm as its own run; those that do not apply are skipped
        algos = [a for a in algos if a != "all"] + [name for name in REGISTRY if name not in algos]
    size_list = tuple(resolve_sizes(minbytes, maxbytes, stepfactor, sizes))
    tasks = [
        Task(
            v,
            common,
            o,
            a,
            size_list,
            group,
            ranks,
            dtype,
            alpha_us,
            max_chunks,
            chunk_bytes(min_chunk),
            groups,
        )
        for v in variants
        for o in ops
        for a in algos
    ]
    rows: list[dict] = []
    skipped: list[str] = []
    for chunk in _with_progress(tasks, lambda done: run_sweep(tasks, jobs, done)):
        rows.extend(r for r in chunk if "skipped" not in r)
        skipped.extend(error_text(r["skipped"]) for r in chunk if "skipped" in r)
    if not rows:  # one error line that carries the reasons
        raise UsageError(f"no combination of the sweep applies: {'; '.join(dict.fromkeys(skipped))}")
    for reason in skipped:
        typer.echo(f"skipped: {reason}", err=True)
    note_calibration_target(calibration, [row["sku"] for row in rows])
    from trnsim.studies.variants import file_sha256

    meta = [
        {
            "label": r["variant"],
            "sku": r["sku"],
            "file": _portable(r["file"]),
            "overrides": [],
            "sha256": file_sha256(r["file"]),
        }
        for r in {r["variant"]: r for r in rows}.values()
    ]
    for row in rows:
        row["file"] = _portable(row["file"])
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
        columns = [Column(k, k) for k in rows[0]] if fmt == Format.csv else _SWEEP_COLUMNS
        emit({"overrides": list(common), "variants": meta, "rows": rows}, [Table(title, columns, rows)], fmt)
    _baselines(
        rows,
        meta,
        {"command": "sweep", "metric": metric.value, "overrides": list(common)},
        save_baseline,
        baseline,
        max_regression,
        metric.value,
        require_all_rows,
    )


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


def _with_progress(tasks, start):
    """Yield the sweep's results, with a progress bar on a terminal (not in a pipe or a file)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal or len(tasks) < 2:
        yield from start(None)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),  # file names are data, not markup
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("", total=len(tasks))

        def done(task):
            progress.update(bar, advance=1, description=f"{task.op} {task.variant.sku or task.variant.file}")

        yield from start(done)


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
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    output: Annotated[Path | None, typer.Option("-o", "--output", help="curve.png, .svg or .pdf.")] = None,
    terminal: Annotated[
        bool, typer.Option("--terminal", help="Draw the chart in the terminal instead.")
    ] = False,
    measured: Annotated[
        list[Path] | None,
        typer.Option(
            "--measured",
            help="Overlay a measured run (nccl-tests or nccom-test output, as `calibrate` reads) as points; "
            "repeatable. Without --sizes the model runs at the measured sizes.",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Plot busbw against size: a line per variant, its bound dashed, measured runs as points.

    Examples:

        trnsim plot allreduce --sku nl16 --sku nl64 -o curve.svg
        trnsim plot alltoall --sku nl16 --terminal
    """
    from trnsim.collectives.ops import get_op
    from trnsim.outputs import plot as plotting
    from trnsim.studies.variants import run_variants

    if output is None and not terminal:
        raise UsageError("give -o curve.png (or .svg) or --terminal")
    op = get_op(op).name
    algo = algo.strip().lower()  # one spelling in titles, JSON and baselines
    _prepare(algo, "5%", None, None, "plot")
    writable(output, "-o")
    variants, common = _variants(
        in_typed_order(ctx, sku=sku, topology=topology), overrides, routing, calibration, fail, alpha_us
    )
    runs = []
    for path in measured or []:
        from trnsim.studies.calibration.readers import read_measurement

        run = read_measurement(path)
        if run.op != op:
            raise UsageError(f"--measured {path}: the run measures {run.op}, the plot is of {op}")
        runs.append(run)
    if runs and (sizes, minbytes, maxbytes, stepfactor) == (None, None, None, None):
        sizes = ",".join(str(s) for s in sorted({row.size_bytes for run in runs for row in run.rows}))
    if runs and group is None and ranks is None:
        ranks = runs[0].ranks  # the measured ranks: the model runs on as many (the first ones)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    results = run_variants(
        variants,
        op,
        size_list,
        group=group,
        ranks=ranks,
        algo=algo.lower(),
        dtype=dtype,
        alpha_us=alpha_us,
        common=common,
        max_chunks=max_chunks,
        min_chunk_bytes=chunk_bytes(min_chunk),
    )
    note_calibration_target(calibration, [r.topology.name for r in results])
    for r in results:  # a variant's own calibration file
        for path in r.variant.calibrations:
            note_calibration_target(path, [r.topology.name])
    for run in runs:
        for result in results:
            if run.ranks != result.evaluation.ranks:
                raise UsageError(
                    f"--measured {run.path}: the run has {run.ranks} ranks, the model of {result.display} "
                    f"{result.evaluation.ranks}; give a group of {run.ranks} ranks (--ranks or --group)"
                )
    title = f"{op} bus bandwidth, group {group_label(group, ranks)}, algorithm {algo}"
    if terminal:
        typer.echo(plotting.terminal_chart(results, op, title, runs))
    if output is not None:
        plotting.save_figure(results, op, output, title, runs)
        typer.echo(f"wrote {output}", err=True)


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
    dtype: Dtype = "float",
    alpha_us: AlphaUs = None,
    max_chunks: MaxChunks = None,
    min_chunk: MinChunk = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The report: an .html file.", show_default=False)
    ] = ...,
    title: Annotated[str | None, typer.Option("--title", help="The report's title.")] = None,
) -> None:
    """Write a comparison as one self-contained HTML file: curves, table, drawings and heatmaps.

    The busbw curves against their bounds, the variants side by side, and per variant its drawing,
    its link-load heatmap (the busiest step at the largest size) and its rows. It opens with no
    network and no other file. Needs the plot extra (matplotlib).

    Examples:

        trnsim report allreduce --sku nl16 --sku nl64 --sizes 1M,1G -o report.html
    """
    import sys
    from functools import partial

    from trnsim.collectives.ops import get_op
    from trnsim.outputs import draw
    from trnsim.outputs import plot as plotting
    from trnsim.outputs import report as reports
    from trnsim.studies.variants import run_variants
    from trnsim.units import format_size

    if output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {output}: give an .html file")
    writable(output, "-o")
    plotting.require("matplotlib")  # before the work, not after
    op = get_op(op).name
    algo = algo.strip().lower()
    _prepare(algo, "5%", None, None, "report")
    variants, common = _variants(
        in_typed_order(ctx, sku=sku, topology=topology), overrides, routing, calibration, fail, alpha_us
    )
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, sizes)
    results = run_variants(
        variants, op, size_list, group=group, ranks=ranks, algo=algo, dtype=dtype, alpha_us=alpha_us,
        common=common, max_chunks=max_chunks, min_chunk_bytes=chunk_bytes(min_chunk),
    )  # fmt: skip
    shape = group_label(group, ranks)
    letters = _letters(len(results))
    heading = (
        title or f"trnsim: {op} on {len(results)} variant{'s' if len(results) != 1 else ''}, group {shape}"
    )
    chart = reports.svg_of(
        lambda path: plotting.save_figure(
            results, op, path, f"{op} bus bandwidth, group {shape}, algorithm {algo}"
        )
    )
    by_size = [{row.requested_bytes: row for row in r.evaluation.rows} for r in results]
    headers = ["size"]
    for n, letter in enumerate(letters):
        headers += [f"{letter} busbw (GB/s)", f"{letter} bound", f"{letter} algorithm"] + (
            [f"{letter}/A"] if n else []
        )
    table = []
    for size in size_list:
        if not any(size in rows for rows in by_size):
            continue
        line = [format_size(size)]
        first = by_size[0].get(size)
        for n, rows in enumerate(by_size):
            row = rows.get(size)
            if row is None:
                line += ["-", "-", "-"] + (["-"] if n else [])
                continue
            line += [f"{row.busbw_gbps:.2f}", f"{row.bound_busbw_gbps:.2f}", row.algorithm]
            if n:
                line.append(
                    f"{row.busbw_gbps / first.busbw_gbps:.3f}x" if first and first.busbw_gbps else "-"
                )
        table.append(line)
    sections = []
    for letter, result in zip(letters, results, strict=True):
        evaluation, topo = result.evaluation, result.topology
        heat = evaluation.busiest_links()
        notes = [
            f"{evaluation.ranks} ranks; routing {evaluation.routing.label}; bandwidth bound limited by "
            f"{evaluation.bound.limited_by}"
            + ("" if evaluation.bound.exact else " (a valid bound, perhaps not the optimum)"),
        ]
        if topo.faults:
            notes.append("failed: " + ", ".join(topo.faults))
        if (note := evaluation.alignment_note()) is not None:
            notes.append(note)
        reason = draw.drawable(topo)
        if reason is not None:
            notes.append(f"not drawn: {reason}")
        picture = draw.layout(topo) if reason is None else None
        sections.append(
            reports.Section(
                f"{letter} = {result.display}",
                notes,
                reports.svg_of(partial(draw.save, picture)) if picture else "",
                reports.svg_of(partial(draw.heatmap, topo, heat, title=f"{letter}: {op}")) if picture else "",
                heat.describe(),
                evaluation.rows,
            )
        )
    document = reports.Report(
        heading,
        "trnsim " + " ".join(sys.argv[1:]),
        op,
        chart,
        headers,
        table,
        sections,
        [f"every variant with {edits_text(common)}"] if common else [],
    )
    write_text(output, reports.render(document))
    typer.echo(
        f"wrote {output} ({len(results)} variant{'s' if len(results) != 1 else ''}, {len(table)} sizes)",
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add the commands to the root app."""
    # the variants keep the order typed across --sku and --topology (A is the base of the ratios)
    app.command("compare", cls=OrderedCommand)(compare)
    app.command("report", cls=OrderedCommand)(report)
    app.command("sweep", cls=OrderedCommand)(sweep)
    app.command("plot", cls=OrderedCommand)(plot)
    from trnsim.cli.calibrate import calibrate
    from trnsim.cli.faults import faults
    from trnsim.cli.layout import layout

    app.command("calibrate")(calibrate)
    app.command("layout")(layout)
    app.command("faults")(faults)
    from trnsim.cli import cluster

    app.add_typer(cluster.app, name="cluster")
