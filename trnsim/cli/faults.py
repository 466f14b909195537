"""``trnsim faults``: every single failure of a system, its blast radius, failure rates, stragglers."""

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.compat import hidden, renamed
from trnsim.cli.engines import Engine, Jobs, Scheduler, engine_options, with_progress
from trnsim.cli.faults_view import (
    one_csv_table,
    side_by_side,
    system_payload,
    system_tables,
)
from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    FormatOption,
    MaxBytes,
    MinBytes,
    RoutingOption,
    SetOption,
    StepFactor,
    edits,
    note_calibration_target,
)
from trnsim.cli.variant_options import RuntimeOfVariants as RuntimeOfSystems
from trnsim.errors import UsageError
from trnsim.outputs.render import Format


def faults(
    skus: Annotated[
        list[str] | None, typer.Argument(help="SKUs (or what-ifs NAME:set=K=V) to sweep, side by side.")
    ] = None,
    sku_options: Annotated[
        list[str] | None,
        typer.Option("--sku", help="A SKU (or what-if) to sweep, as the arguments are; repeatable."),
    ] = None,
    topology: Annotated[
        list[Path] | None, typer.Option("--topology", help="A topology YAML file to sweep; repeatable.")
    ] = None,
    op: Annotated[
        list[str] | None, typer.Option("--op", help="Collectives to run (default allreduce and alltoall).")
    ] = None,
    minbytes: MinBytes = None,
    maxbytes: MaxBytes = None,
    stepfactor: StepFactor = None,
    sizes: Annotated[
        str | None,
        typer.Option("--sizes", help="Comma-separated sizes instead of -b/-e/-f [1G when neither is given]."),
    ] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            "--blast-radius",
            help="What a failed chip takes out of service: cuboid (a torus job needs the whole torus: "
            "every chip lost; the default on tori), chip (the default on switched fabrics), node or rack.",
        ),
    ] = None,
    old_policy: Annotated[str | None, hidden("--policy")] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", help="Only these classes of parts (chip, 'link xrack', 'switch tray', ...)."),
    ] = None,
    exhaustive: Annotated[
        bool,
        typer.Option(
            "--exhaustive",
            help="Evaluate every part, not one per class of parts that look alike (colour refinement).",
        ),
    ] = False,
    mttf: Annotated[
        list[str] | None,
        typer.Option(
            "--mttf",
            help="A failure-rate class's mean time to failure, CLASS=HOURS (chip, switch, 'switch tray', "
            "'copper link', 'optical link'); repeatable. Defaults: the failure-rate table in docs/guide/faults.md (several are assumptions).",
        ),
    ] = None,
    fit: Annotated[
        list[str] | None,
        typer.Option(
            "--failure-rate",
            help="A failure-rate class's rate in FIT (failures per 10^9 hours), CLASS=FIT; the same as "
            "--mttf CLASS=1e9/FIT.",
        ),
    ] = None,
    old_fit: Annotated[list[str] | None, hidden("--fit")] = None,
    mttr_h: Annotated[
        float | None,
        typer.Option(
            "--mttr",
            help="Hours a failed part stays out of service [24; an assumption].",
            min=0.01,
            max=1e6,
            show_default=False,
        ),
    ] = None,  # trnsim.studies.faults.rates.MTTR_H
    domains: Annotated[
        int | None,
        typer.Option(
            "--domains",
            help="A job over this many domains runs at its slowest one's pace: its expected slowdown.",
            min=1,
            max=10_000_000,
        ),
    ] = None,
    random: Annotated[
        int | None,
        typer.Option(
            "--random",
            help="Also fail this many parts at once, drawn by failure rate (Monte Carlo; see --samples, --seed).",
            min=1,
            max=1000,
        ),
    ] = None,
    samples: Annotated[
        int, typer.Option("--samples", help="Monte Carlo draws for --random.", min=1, max=10_000)
    ] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Random seed for --random.", min=0)] = 0,
    jobs: Jobs = 1,
    engine: Engine = None,
    scheduler: Scheduler = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    runtime: RuntimeOfSystems = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Fail every part of a system alone and run collectives on what is left: busbw lost, chips lost
    (blast radius), failures per year, availability, and the straggler effect over many domains.

    The study is the ideal's unless --runtime is given (a file's default runtime may not model every
    survivor).

    Examples:

        trnsim faults nl16 nl32x2 --op allreduce --domains 100
        trnsim faults nl16 --blast-radius chip --failure-rate chip=1e4 --format csv
        trnsim faults h100 --op allreduce --kind chip --runtime nccl
        trnsim faults nl32x2 --op allreduce --random 2 --samples 8 --jobs 2
        trnsim faults nl32x2 --random 2 --samples 8 --engine dask --jobs 2

    On a Dask cluster, name its scheduler: trnsim faults nl72x2 --random 3 --samples 1000 --scheduler
    tcp://HOST:8786. --jobs, --engine and --scheduler say where the --random draws run, never what
    they give (docs/guide/distributed.md).
    """
    options = dict(locals())  # every option's value: what the printed outcome depends on
    where = engine_options(options.pop("engine"), options.pop("scheduler"), options.pop("jobs"))
    from trnsim.cli.options import resolve_sizes
    from trnsim.cli.outcome import Outcome, key_of, remember, replay, sku_file
    from trnsim.collectives.ops import get_op
    from trnsim.studies.faults import MTTR_H, StudyOptions, loader
    from trnsim.studies.faults.study import study_runtime_of as run_study_runtime
    from trnsim.studies.variants import Variant
    from trnsim.units import check_finite

    # what each rate rests on: a figure the user gave, or the default's source (docs/guide/faults.md: failure rates)
    mttr_basis = "assumption" if mttr_h is None else "--mttr"
    mttr_h = MTTR_H if mttr_h is None else mttr_h
    check_finite("--mttr", mttr_h, 0.01, 1e6)  # the option's range lets nan through

    policy = renamed("--policy", "--blast-radius", old_policy, policy)
    fit = renamed("--fit", "--failure-rate", old_fit, fit)
    common = edits(overrides, routing, calibration, fail)
    variants = [Variant.parse(text, common=tuple(common)) for text in [*(skus or []), *(sku_options or [])]]
    variants += [Variant.parse(str(path), is_file=True, common=tuple(common)) for path in topology or []]
    if not variants:
        raise UsageError("name a system: trnsim faults SKU [SKU...], --sku SKU or --topology FILE")
    key = None  # the CSV says a note as it is made; a calibration is a file of its own
    if fmt != Format.csv and calibration is None and not any(variant.calibrations for variant in variants):
        systems = [(variant.sku, variant.file, variant.overrides) for variant in variants]
        files = [sku_file(variant.sku, variant.file) for variant in variants]
        key = key_of("faults", {**options, "variants": systems}, files)
    if replay(key, fmt):
        return
    ops = [get_op(name).name for name in (op or ["allreduce", "alltoall"])]
    sweep = (minbytes, maxbytes, stepfactor) != (None, None, None)
    size_list = resolve_sizes(minbytes, maxbytes, stepfactor, "1G" if sizes is None and not sweep else sizes)
    rates, rate_basis = _rates(mttf, fit)
    options = StudyOptions(
        ops, size_list, rates, mttr_h, policy, kind, exhaustive, domains, random, samples, seed, runtime
    )
    studies, systems = [], [variant.load() for variant in variants]
    for healthy in systems:  # every system's runtime checked before any study runs
        run_study_runtime(healthy, runtime)
    for variant, healthy in zip(variants, systems, strict=True):
        try:
            study = _study(loader(variant), healthy, replace(options, engine=where))
        except UsageError as exc:
            if "every size is below" not in str(exc):
                raise
            flags = zip(("-b", "-e", "-f"), (minbytes, maxbytes, stepfactor), strict=True)
            given = " ".join(f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}"
                             for flag, value in flags if value is not None)  # fmt: skip
            raise UsageError(f"{given if sweep else '--sizes ' + (sizes or '1G')}: {exc}") from None
        note_calibration_target(calibration, [healthy.name])
        label = healthy.name + (f" [{', '.join(variant.overrides)}]" if variant.overrides else "")
        studies.append((label, healthy, study))
    basis = (rate_basis, mttr_basis)
    tables = [
        table
        for label, healthy, study in studies
        for table in system_tables(label, healthy, study, options, basis)
    ]
    summary = [{"system": label, **study.summary} for label, _, study in studies]
    tables.append(side_by_side(summary, studies[-1][2].key, domains))
    payload = {"systems": [system_payload(label, study, rate_basis) for label, _, study in studies]}
    payload.update(_basis_payload(rate_basis, mttr_basis))
    payload.update(
        rates_mttf_h=options.rates, mttr_h=mttr_h, ops=ops, sizes=size_list, seed=seed if random else None
    )
    payload["side_by_side"] = summary
    if fmt == Format.csv:
        every_class = [{"system": label, **row} for label, _, study in studies for row in study.classes]
        tables = [one_csv_table(tables[0], every_class, random is not None)]
    outcome = Outcome(payload, tables)
    outcome.show(fmt)
    remember(key, outcome)


def _study(load, healthy, options):
    """The system's study; its random draws (if any) with their progress on stderr."""
    from trnsim.studies.faults import run_study

    if options.random is None:
        return run_study(load, healthy, options)
    draws = range(options.samples)
    label = f"faults {healthy.name}: draws"
    start = lambda done: iter([run_study(load, healthy, options, done)])  # noqa: E731
    (study,) = with_progress(label, draws, lambda draw: draw.first.spec, start, options.engine)
    return study


def _rates(mttf: list[str] | None, fit: list[str] | None) -> tuple[dict[str, float], dict[str, str]]:
    """The mean time to failure (hours) of each rate class: the defaults, with ``--mttf CLASS=HOURS``
    and ``--failure-rate CLASS=FIT`` (1e9 / FIT hours) read over them; and what each rests on (an
    ``assumption`` or ``cited``, as the default's source says, or the option that gave it)."""
    from trnsim.studies.faults import RATES, default_rates
    from trnsim.studies.faults.rates import mttf_hours_from_fit
    from trnsim.topology.metrics import is_assumption
    from trnsim.units import check_finite

    rates = default_rates()
    basis = {name: "assumption" if is_assumption(text) else "cited" for name, (_, text) in RATES.items()}
    given = [("--mttf", item) for item in mttf or []] + [("--failure-rate", item) for item in fit or []]
    seen: set[str] = set()
    for option, item in given:
        name, sep, value = item.partition("=")
        name = name.strip().lower()
        if name in seen:
            raise UsageError(
                f"{option} {item!r}: the rate of {name!r} is given twice (--mttf and --failure-rate)"
            )
        seen.add(name)
        unit = "HOURS" if option == "--mttf" else "FIT"
        if not sep or name not in rates:
            raise UsageError(f"{option} {item!r}: expected CLASS={unit} with CLASS one of {', '.join(RATES)}")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"{option} {item!r}: {value!r} is not a number") from None
        check_finite(
            f"{option} {name}", number, minimum=1e-6 if option == "--failure-rate" else 1.0, maximum=1e15
        )
        rates[name] = number if option == "--mttf" else mttf_hours_from_fit(number)
        basis[name] = option
    return rates, basis


def _basis_payload(rate_basis: dict[str, str], mttr_basis: str) -> dict:
    """What the failure rates rest on, in ``--format json``."""
    from trnsim.studies.faults import RATES

    sources = {name: text for name, (_, text) in RATES.items() if rate_basis[name] in ("assumption", "cited")}
    return {"rates_basis": rate_basis, "rates_source": sources, "mttr_basis": mttr_basis}
