"""``trnsim design``: what-if edits varied over a grid (or sampled from it) across systems, each
point's performance per dollar and per watt, constraints, and the Pareto front."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.flags import edits_text, error_text
from trnsim.cli.options import Dtype, FormatOption, SetOption, check_suffix, writable
from trnsim.cli.typed import in_typed_order
from trnsim.cli.variant_options import Files, Skus
from trnsim.errors import UsageError
from trnsim.outputs.render import Format, Table, emit

Vary = Annotated[
    list[str] | None,
    typer.Option(
        "--vary",
        help="A what-if edit over several values, KEY=V1,V2,... (any KEY --set takes, e.g. "
        "switched.cross_rack.lanes=4,8,16 or efficiency.default=0.85,0.95); repeatable: the grid is "
        "every SKU x every combination.",
    ),
]
Search = Annotated[
    str | None,
    typer.Option(
        "--search",
        help="grid (every point; the default) or random:N (N distinct points drawn uniformly with "
        "--seed: a simple random sample; the front shown is the sample's, whose points no evaluated "
        "point beats, not necessarily the grid's).",
        show_default=False,
    ),
]
Objective = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="What a point is judged by, higher is better: busbw:OP:SIZE (default busbw:allreduce:1G), "
        "moe:EP:SIZE (the all-to-all of SIZE bytes per rank in every group of EP consecutive ranks at "
        "once, the slowest group's busbw) or layout:DIM=DEGREE,...:DIM=SIZE,... (a layout's steps per "
        "second, as trnsim layout times it; dp=* takes the ranks left over).",
        show_default=False,
    ),
]
Front = Annotated[
    str,
    typer.Option(
        "--front",
        help="What the front trades the performance against: both (capex and power, all three at "
        "once), cost (capex alone) or power (power alone).",
    ),
]
Constraints = Annotated[
    list[str] | None,
    typer.Option(
        "--constraint",
        help="KEY OP NUMBER over a numeric column of the table (capex_usd <= 4e6, power_w < 2e5, "
        "busbw_gbps_per_kw >= 4); repeatable, all must hold.",
    ),
]
Positive = Annotated[float | None, typer.Option(min=0.0, show_default=False)]


def design(
    ctx: typer.Context,
    sku: Skus = None,
    topology: Files = None,
    vary: Vary = None,
    overrides: SetOption = None,
    objective: Objective = None,
    search: Search = None,
    seed: Annotated[int, typer.Option("--seed", help="The seed of --search random:N.", min=0)] = 0,
    front: Front = "both",
    max_capex_usd: Annotated[
        float | None, typer.Option("--max-capex-usd", help="Constraint: capex_usd <= this.", min=0.0)
    ] = None,
    max_power_w: Annotated[
        float | None, typer.Option("--max-power-w", help="Constraint: power_w <= this.", min=0.0)
    ] = None,
    min_busbw_gbps: Annotated[
        float | None,
        typer.Option(
            "--min-busbw-gbps",
            help="Constraint: busbw_gbps >= this (expected_busbw_gbps with --faults).",
            min=0.0,
        ),
    ] = None,
    constraint: Constraints = None,
    faults: Annotated[
        bool,
        typer.Option(
            "--faults",
            help="Also the expected busbw under the fault model (busbw objective only): the mean over "
            "the healthy state and every single part down, weighted by their steady-state probabilities "
            "(MTTF per part class, --mttr); the front then uses it.",
        ),
    ] = False,
    mttf: Annotated[
        list[str] | None, typer.Option("--mttf", help="With --faults: CLASS=HOURS, as trnsim faults --mttf.")
    ] = None,
    mttr_h: Annotated[
        float | None,
        typer.Option(
            "--mttr",
            help="With --faults: hours a failed part stays down [24; an assumption].",
            min=0.01,
            max=1e6,
            show_default=False,
        ),
    ] = None,
    parts: Annotated[
        Path | None,
        typer.Option(
            "--parts",
            help="A parts file: prices and powers over the defaults (as trnsim topo cost --parts).",
            dir_okay=False,
        ),
    ] = None,
    runtime: Annotated[
        str | None,
        typer.Option(
            "--runtime",
            help="What busbw and moe numbers model: ideal or a runtime (default: each file's; with --faults, ideal, as in trnsim faults).",
            show_default=False,
        ),
    ] = None,
    dtype: Dtype = "float",
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Worker processes.", min=1)] = 1,
    engine: Annotated[str, typer.Option("--engine", help="local (processes) or dask.")] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help="A Dask scheduler's address (tcp://host:8786); implies --engine dask.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write every point to table.csv or table.json.")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot", help="Draw performance vs capex, the front highlighted (.png or .svg; the plot extra)."
        ),
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Search what-if edits across SKUs for the best performance per dollar and per watt.

    Every point of the grid (each SKU x each combination of the --vary values, with the --set edits
    common to all) is built, costed from its bill of materials (capex_usd, power_w: trnsim topo
    cost) and measured by --objective; its figure is shown raw, per thousand dollars and per
    kilowatt. A point whose system cannot be built (a lane or port budget exceeded) is a row marked
    infeasible with its reason; one that breaks a constraint is kept and marked. The table printed
    is the Pareto front: the feasible points within the constraints that no other beats on
    performance (maximised), capex and power (minimised) at once (--front). -o writes every point.

    Examples:

        trnsim design --sku nl72x2 --vary switched.cross_rack.lanes=4,8,16
        trnsim design --sku nl72x2 --sku trn3-nl72x2-gen3 --vary efficiency.default=0.85,0.95 -o d.csv --plot d.png
        trnsim design --sku nl72x2 --objective moe:8:64M --vary switched.cross_rack.lanes=8,16 --max-power-w 2e5
        trnsim design --sku nl72x2 --vary efficiency.default=0.8,0.85,0.9,0.95 --search random:2 --seed 7
    """
    from trnsim.studies.design.grid import choose, parse_search

    plan = _plan(
        ctx, sku, topology, vary, overrides, objective, front, faults, mttf, mttr_h, parts, runtime, dtype
    )
    chosen = choose(plan["grid"], parse_search(search, seed))
    checks = _constraints(plan, max_capex_usd, max_power_w, min_busbw_gbps, constraint)
    _check_outputs(output, plot)
    engine_options = _engine(jobs, engine, scheduler)
    rows = _evaluate(plan, chosen, engine_options)
    _report(plan, rows, checks, parse_search(search, seed), output, plot, fmt)


def _plan(
    ctx, sku, topology, vary, overrides, objective, front, faults, mttf, mttr_h, parts, runtime, dtype
) -> dict:
    """Everything a run needs, checked before any point is evaluated."""
    from trnsim.cli.variant_options import variants_of
    from trnsim.studies.design.grid import make_grid, parse_axis
    from trnsim.studies.design.objectives import parse_objective
    from trnsim.studies.design.run import FRONTS, FaultModel, check_edits

    goal = parse_objective(objective)
    if front not in FRONTS:
        raise UsageError(f"--front {front!r}: expected one of {', '.join(FRONTS)}")
    if faults and goal.kind != "busbw":
        raise UsageError(
            f"--faults gives the expected busbw of one op on every rank: use it with --objective busbw:OP:SIZE, not {goal.text}"
        )
    if not faults and (mttf or mttr_h is not None):
        raise UsageError("--mttf and --mttr are failure rates for --faults: give --faults too")
    model = None
    if faults:
        from trnsim.cli.faults import _rates
        from trnsim.studies.faults import MTTR_H

        rates, _ = _rates(mttf, None)
        model = FaultModel(tuple(rates.items()), MTTR_H if mttr_h is None else mttr_h)
    named = in_typed_order(ctx, sku=sku, topology=topology)
    variants, common = variants_of(named, overrides)
    axes = [parse_axis(text) for text in vary or []]
    grid = make_grid([v.text for v in variants], axes, list(common))
    names = check_edits(variants, [[axis.edit(n) for n in range(len(axis.values))] for axis in axes])
    if runtime is not None:
        from trnsim.studies.runtimes import known_runtime

        runtime = known_runtime(runtime)
    elif faults:  # as trnsim faults: a file's runtime may not model every survivor (NCCL, one NVSwitch domain)
        runtime = "ideal"
    return {
        "grid": grid,
        "names": names,
        "variants": variants,
        "common": tuple(common),
        "objective": goal,
        "front": front,
        "faults": model,
        "parts": parts,
        "runtime": runtime,
        "dtype": dtype,
    }


def _constraints(plan: dict, max_capex_usd, max_power_w, min_busbw_gbps, texts) -> list:
    """The constraints, each checked against the table's numeric columns before any work."""
    from trnsim.studies.design.constraints import parse_constraint
    from trnsim.studies.design.run import numeric_columns

    keys = numeric_columns(plan["objective"], plan["faults"] is not None)
    busbw = "expected_busbw_gbps" if plan["faults"] is not None else "busbw_gbps"
    given = [
        (f"capex_usd <= {max_capex_usd!r}", "--max-capex-usd", max_capex_usd),
        (f"power_w <= {max_power_w!r}", "--max-power-w", max_power_w),
        (f"{busbw} >= {min_busbw_gbps!r}", "--min-busbw-gbps", min_busbw_gbps),
    ]
    found = []
    for text, option, value in given:
        if value is None:
            continue
        if text.split()[0] not in keys:
            raise UsageError(
                f"{option}: the objective {plan['objective'].text} has no busbw; use --constraint"
            )
        found.append(parse_constraint(text, keys))
    for text in texts or []:
        try:
            found.append(parse_constraint(text, keys))
        except UsageError as exc:
            raise UsageError(error_text(exc).replace("constraint ", "--constraint ", 1)) from None
    return found


def _check_outputs(output: Path | None, plot: Path | None) -> None:
    if output is not None and output.suffix.lower() not in (".csv", ".json"):
        raise UsageError(f"-o {output}: give a .csv or .json file")
    writable(output, "-o")
    if plot is not None:
        check_suffix(plot, "--plot", "a picture", (".png", ".svg"))
        if plot.suffix.lower() not in (".png", ".svg"):
            raise UsageError(f"--plot {plot}: give a .png or .svg file")
        from trnsim.outputs.plot import require

        require("matplotlib")  # refused before the work, not after it
    writable(plot, "--plot")


def _engine(jobs: int, engine: str, scheduler: str | None):
    """The engine's options (:mod:`trnsim.studies.engines`), or None for one process here, which
    needs no engine: the rows are the same and in the same order either way."""
    name = "dask" if scheduler is not None else engine.strip().lower()
    if name == "local" and jobs == 1:
        return None
    from trnsim.studies.engines import EngineOptions

    return EngineOptions(
        jobs=jobs, engine=name, scheduler=scheduler, notice=lambda line: typer.echo(line, err=True)
    )


def _evaluate(plan: dict, chosen: list[int], engine) -> list[dict]:
    """Every chosen point's row, in the points' order, with a progress bar on a terminal."""
    from dataclasses import replace

    from trnsim.studies.design.run import PointTask, run_points

    grid, tasks = plan["grid"], []
    for index in chosen:
        system, _ = grid.choice(index)
        base = plan["variants"][system]
        variant = replace(base, overrides=base.overrides + grid.edits(index))
        tasks.append(
            PointTask(
                index,
                variant,
                plan["common"],
                tuple(grid.values(index).items()),
                plan["objective"],
                plan["dtype"],
                plan["runtime"],
                plan["parts"],
                plan["faults"],
                plan["names"][system],
            )
        )
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal or len(tasks) < 2:
        return list(run_points(tasks, engine))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("design"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("", total=len(tasks))
        return list(run_points(tasks, engine, lambda _: progress.update(bar, advance=1)))


def _report(plan: dict, rows: list[dict], checks: list, search, output, plot, fmt: Format) -> None:
    """Constraints and front over the rows; the front printed, every row written, the plot drawn."""
    from trnsim.outputs.design import design_columns, save_design_plot, write_table
    from trnsim.studies.design.run import columns_of, judge, tidy

    goal, grid = plan["objective"], plan["grid"]
    keys = [axis.key for axis in grid.axes]
    performance = "expected_busbw_gbps" if plan["faults"] is not None else goal.metric
    for row in rows:
        if row.get("reason") is not None:
            row["reason"] = _reason(row["reason"], plan["variants"][grid.choice(row["point"])[0]], grid, row)
    if not any(row["feasible"] for row in rows):
        raise UsageError(
            f"no point of the design is feasible: {'; '.join(dict.fromkeys(r['reason'] for r in rows))}"
        )
    judge(rows, checks, performance, plan["front"])
    rows = [tidy(row, columns_of(goal, keys, plan["faults"] is not None)) for row in rows]
    against = {"both": "capex and power", "cost": "capex", "power": "power"}[plan["front"]]
    title = (
        f"design: Pareto front of {search.describe(grid)}; {goal.describe()}, maximised, against "
        f"{against}, minimised"
        + (f"; every point with {edits_text(plan['common'])}" if plan["common"] else "")
    )
    meta = {
        "objective": goal.text,
        "metric": performance,
        "front": plan["front"],
        "search": search.kind,
        "seed": search.seed if search.kind == "random" else None,
        "points": grid.size,
        "overrides": list(plan["common"]),
        "constraints": [c.text for c in checks],
    }
    written = []
    if output is not None:
        write_table(output, rows, meta)
        written.append(f"wrote {len(rows)} point{'s' * (len(rows) != 1)} to {output}")
    if plot is not None:
        save_design_plot(rows, performance, f"{performance} ({goal.unit})", plot, title)
        written.append(f"wrote {plot}")
    shown = sorted((r for r in rows if r["front"]), key=lambda r: (r["capex_usd"], -r[performance]))
    columns = design_columns(goal.metric, goal.unit, keys, plan["faults"] is not None)
    emit({**meta, "rows": rows}, [Table(title, columns, shown, _footer(rows))], fmt)
    for line in written:
        typer.echo(line, err=True)


def _reason(error, base, grid, row) -> str:
    """Why a point is infeasible, without the file and edits its error starts with (the row holds
    them)."""
    text = error_text(error)
    edits = (*base.edits(), *grid.edits(row["point"]))
    where = f" with {edits_text(edits)}: "
    at = text.find(where)
    return text[at + len(where) :] if at >= 0 else text


def _footer(rows: list[dict]) -> list[str]:
    """How many points were feasible, kept the constraints and made the front; why the others fell."""
    feasible = [r for r in rows if r["feasible"]]
    breaking = [r for r in feasible if r["violates"]]
    lines = [
        f"# {len(rows)} point{'s' * (len(rows) != 1)}: {len(feasible)} feasible, {len(breaking)} of them "
        f"breaking a constraint, {sum(1 for r in rows if r['front'])} on the front; per k$: per thousand "
        "dollars of capex, per kW: per kilowatt of power (their bill of materials: trnsim topo cost)"
    ]
    reasons: dict[str, list[int]] = {}
    for row in rows:
        if not row["feasible"]:
            reasons.setdefault(row["reason"], []).append(row["point"])
    for reason, points in reasons.items():
        lines.append(f"# infeasible: point{'s' * (len(points) != 1)} {', '.join(map(str, points))}: {reason}")
    return lines
