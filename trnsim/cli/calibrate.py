"""``trnsim calibrate``: fit the model's free parameters to a measured nccl-tests or nccom-test run."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.op_options import Counts, Pairs, Root, check_shape
from trnsim.cli.options import (
    FailOption,
    FormatOption,
    Group,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    check_suffix,
    edits,
    writable,
    write_text,
)
from trnsim.outputs.render import Column, Format, Table, emit, kv_table


def calibrate(
    measurement: Annotated[
        Path,
        typer.Argument(
            help="Measured output: nccl-tests text or -J JSON, nccom-test text or its JSON report.",
            dir_okay=False,
        ),
    ],
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    fail: FailOption = None,
    group: Group = None,
    root: Root = None,
    pairs: Pairs = None,
    counts: Counts = None,
    op: Annotated[
        str | None,
        typer.Option(
            "--op",
            help="The collective the run measured (any op of `trnsim collective`), for a log saved without "
            "it (a bare nccl-tests or nccom-test table); refused if the log names another.",
            show_default=False,
        ),
    ] = None,
    ranks: Annotated[
        int | None,
        typer.Option(
            "--ranks",
            help="The ranks the run used (nccl-tests: GPUs; nccom-test: NeuronCores), for a log saved "
            "without its command line; refused if the log states another.",
            min=2,
            show_default=False,
        ),
    ] = None,
    nodes: Annotated[
        int | None,
        typer.Option(
            "--nodes",
            help="The nodes (hosts, instances) the run spanned, for a log that does not show them; "
            "refused if the log states another. A run across more nodes than one domain holds is refused "
            "(model it with trnsim cluster collective).",
            min=1,
            show_default=False,
        ),
    ] = None,
    ranks_per_chip: Annotated[
        int | None,
        typer.Option(
            "--ranks-per-chip",
            help="How many of the run's ranks share a chip: nccom-test counts NeuronCores (Trn2 at LNC=2: "
            "4, LNC=1: 8). Needed where the file's chips are one rank each; sets chip.ranks, kept in "
            "the calibration (a chip of several ranks also needs chip.rank_gbps).",
            min=1,
            max=64,
            show_default=False,
        ),
    ] = None,
    algo: Annotated[
        str,
        typer.Option(
            "--algo",
            help="The model's algorithm: auto (fastest per size), a name, or measured (each row with the "
            "algorithm the run reports, e.g. nccom-test --show-algorithm; kangaring = multiring or ring).",
        ),
    ] = "auto",
    fit_names: Annotated[
        str | None,
        typer.Option(
            "--fit",
            help="Parameters to fit, comma-separated: step_ns (alpha per step), link_ns (latency per "
            "link), collective_ns (a cost per call), efficiency (one share of raw rate for the link classes "
            "the run's traffic crosses); with --runtime: call_us (the runtime's cost per call) and "
            "efficiency. Default: step_ns,link_ns,efficiency (ideal), call_us (a runtime).",
            show_default=False,
        ),
    ] = None,
    loss: Annotated[
        str,
        typer.Option(
            "--loss",
            help="linear (least squares on log time) or soft_l1 (robust: rows off by more than ~10% weigh less).",
        ),
    ] = "linear",
    fit_sizes: Annotated[
        str | None,
        typer.Option(
            "--fit-sizes",
            metavar="MIN:MAX",
            help="Fit only the rows with sizes in MIN:MAX (either side may be empty, e.g. 64M:); the other "
            "rows are still shown, marked. For libraries that change protocol with size (NCCL's LL, LL128, "
            "Simple), so the parameters describe one regime.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the calibration file (YAML) for --calibration."),
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            "--runtime",
            help="What the fitted parameters are of: ideal (the fabric's model, the default), or a runtime "
            "(nccl, neuron, xla), whose own per-call cost (and link efficiency) is fitted with every row "
            "priced by its pick: the runtime explains the rest of the shortfall.",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Fit alpha, per-link latency and link efficiency (or a runtime's call cost) to a measured run.

    Prints the parameters with their standard errors and every row's residual; -o writes a
    calibration file that every command applies with --calibration.

    Units are detected from the file (size / time against the printed bandwidth: GB/s or GiB/s).
    The run's ranks are the group's first ranks unless --group says which (ranks count cores where a
    chip hosts several: --ranks-per-chip). A log saved without its command line takes --op, --ranks
    and --nodes; a run whose ranks cannot map onto one domain of the system is refused, not fitted.

    Examples:

        trnsim calibrate examples/measurements/n5-allgather-32r.txt --sku trn1-nl16
    """
    from trnsim.cli.flags import error_text
    from trnsim.errors import UsageError
    from trnsim.studies.calibration.files import (
        calibration_document,
        regime_documents,
        write_calibration,
    )
    from trnsim.studies.calibration.fit import fit, fit_each_regime
    from trnsim.studies.calibration.mapping import AcrossDomains
    from trnsim.studies.calibration.readers import read_measurement
    from trnsim.studies.calibration.regimes import parse_fit_sizes
    from trnsim.studies.runtimes import known_runtime

    if (sku is None) == (topology is None):
        raise UsageError("name the system the run measured: --sku NAME or --topology FILE")
    check_suffix(output, "-o", "a calibration file (YAML)", (".yaml", ".yml"))
    writable(output, "-o")
    size_range = parse_fit_sizes(fit_sizes)
    known_runtime(runtime)  # an unknown name before the file is read
    names = {"op": "--op", "ranks": "--ranks", "nodes": "--nodes"}
    measured = read_measurement(measurement, op=op, names=names, ranks=ranks, nodes=nodes)
    options = {
        "algorithm": algo.strip().lower(),
        "loss": loss.strip().lower(),
        "fit_sizes": size_range,
        "ranks_per_chip": ranks_per_chip,
        "runtime": runtime,
        "arguments": _arguments(measured.op, root, pairs, counts),
    }
    if fit_names is None:
        fit_names = "step_ns,link_ns,efficiency" if runtime in (None, "ideal") else "call_us"
    knobs = [name.strip() for name in fit_names.split(",") if name.strip()]
    system = (sku, topology, edits(overrides, routing, fail=fail), group, knobs)
    try:
        result = fit(measured, *system, **options)
        regimes = fit_each_regime(measured, *system, **options)
    except AcrossDomains as exc:
        raise UsageError(f"{error_text(exc)} (trnsim cluster collective --sku NAME --domains N)") from None
    fitted_rows = sum(row.fitted for row in result.rows)
    if fitted_rows <= len(result.parameters):
        typer.echo(
            f"note: {fitted_rows} fitted row(s) for {len(result.parameters)} parameters: the fit is exact or "
            "underdetermined, and its values are one solution of many (fit fewer parameters)",
            err=True,
        )
    if output is not None:
        write_text(output, write_calibration(result, output))
    document = calibration_document(result)
    tables = _tables(measured, result, group, output, size_range)
    if regimes:  # on stdout only: a calibration file holds one set of parameters
        document["regimes"] = regime_documents(regimes)
        tables[-1].footer.append(_regime_note(regimes))
        tables.append(_regime_table(regimes))
    emit(document, tables, fmt)


def _arguments(op: str, root, pairs, counts):
    """The measured op's root, pairs or counts as given (None: none given)."""
    from trnsim.model.backend import Selection

    root, pairs, counts = check_shape([op], root, pairs, counts)
    return Selection(root=root, pairs=pairs, counts_file=counts).arguments()


def _tables(measured, result, group, output, size_range) -> list[Table]:
    """The run and the fit, the fitted parameters, and every measured row against the model."""

    summary = [
        (
            "measurement",
            f"{measured.path} ({measured.tool} {measured.format}, printed in {measured.printed_units})",
        ),
        ("run", f"{measured.op}, {measured.ranks} ranks, {len(measured.rows)} sizes"),
        (
            "model",
            f"{result.sku}, group {group or f'first {measured.ranks} ranks'}, algorithm {result.algorithm}",
        ),
        (
            "rms error (log)",
            f"{result.rms_error:.3f} after fitting, over the fitted rows ({result.evaluations} model runs)",
        ),
    ]
    if output is not None:
        summary.append(("written", str(output)))
    parameters = _parameter_rows(result)
    rows = [
        {
            "bytes": row.bytes,
            "measured_us": row.measured_us,
            "before_us": row.before_us,
            "after_us": row.after_us,
            "error_before": row.error_before,
            "error": row.error,
            "fitted": "yes" if row.fitted else "no",
            "measured_busbw_gbps": row.measured_busbw_gbps,
            "after_busbw_gbps": row.after_busbw_gbps,
            "algorithm": row.algorithm
            + (f" (ran {row.measured_algorithm})" if row.measured_algorithm else ""),
        }
        for row in result.rows
    ]
    percent = lambda v: f"{100 * v:+.1f}%"  # noqa: E731
    tables = [
        kv_table(f"calibration of {result.sku}", summary),
        Table(
            "fitted parameters (fitted to this run, not predicted; stderr from the fit's Jacobian)",
            [
                Column("name", "parameter", align="left", drop_priority=1),  # the key names it too
                Column("key", "--set key", align="left"),
                Column("before", "file value", "{:.4g}"),
                Column("value", "fitted", "{:.4g}"),
                Column("stderr", "std error", align="left"),
                Column("unit", "unit", align="left"),
            ],
            parameters,
        ),
        Table(
            "every measured row against the model (time in us, busbw in GB/s)",
            [
                Column("bytes", "size (B)"),
                Column("measured_us", "measured", "{:.2f}"),
                Column("before_us", "model before", "{:.2f}", drop_priority=3),
                Column("error_before", "err before", percent, drop_priority=1),
                Column("after_us", "model after", "{:.2f}"),
                Column("error", "err after", percent),
                *([Column("fitted", "fitted", align="left")] if size_range != (None, None) else []),
                Column("measured_busbw_gbps", "busbw measured", "{:.2f}", drop_priority=4),
                Column("after_busbw_gbps", "busbw model", "{:.2f}", drop_priority=5),
                Column("algorithm", "model's algorithm", align="left", drop_priority=2),
            ],
            rows,
            [f"# {note}" for note in result.notes],
        ),
    ]
    return tables


def _regime_note(regimes) -> str:
    """The line under the fit of every row that says the curve has kinks, fitted apart below."""
    from trnsim.studies.calibration.regimes import range_text

    ranges = ", ".join(range_text(r.fit_sizes) for r in regimes)
    return (
        f"# the curve has {len(regimes)} regimes ({ranges}), each fitted separately below; this fit spans "
        "them all, and -o writes it: --fit-sizes MIN:MAX fits (and writes) one regime"
    )


def _regime_table(regimes) -> Table:
    """Each regime's sizes and fitted parameters (the fits of :func:`fit_each_regime`)."""
    from trnsim.studies.calibration.regimes import range_text

    names = [p.name for p in regimes[0].parameters]
    rows = [
        {
            "sizes": range_text(r.fit_sizes),
            "rows": sum(row.fitted for row in r.rows),
            **{p.name: p.value for p in r.parameters},
            "rms": r.rms_error,
        }
        for r in regimes
    ]
    return Table(
        "each regime of the measured curve fitted separately (a kink: the library changed protocol)",
        [
            Column("sizes", "sizes", align="left"),
            Column("rows", "rows"),
            *[Column(name, name, "{:.4g}") for name in names],
            Column("rms", "rms error (log)", "{:.3f}"),
        ],
        rows,
    )


def _parameter_rows(result) -> list[dict]:
    """Each fitted parameter: its --set key, the file's value, the fitted one and its standard error."""
    from trnsim.studies.calibration.solve import determined

    return [
        {
            "name": p.name,
            "key": p.key,
            "before": p.before,
            "value": p.value,
            "stderr": "at its limit (the run wants it beyond)"
            if p.at_limit
            else f"{p.stderr:.3g}"
            if determined(p)
            else "not determined by this run",
            "unit": p.unit or "-",
        }
        for p in result.parameters
    ]
