"""``trnsim design``: what-if edits varied over a grid (or sampled from it) across systems, each
point's performance per dollar and per watt, constraints, and the Pareto front."""

from pathlib import Path

import typer

from trnsim.cli import design_options as o
from trnsim.cli.engines import Engine, Jobs, Scheduler
from trnsim.cli.flags import edits_text, error_text
from trnsim.cli.options import (
    CalibrationOption,
    Dtype,
    FailOption,
    FormatOption,
    RoutingsOption,
    SetOption,
    check_suffix,
    writable,
)
from trnsim.cli.typed import in_typed_order
from trnsim.cli.variant_options import Files, Skus
from trnsim.errors import UsageError
from trnsim.outputs.render import Format, Table, emit


def design(
    ctx: typer.Context,
    sku: Skus = None,
    topology: Files = None,
    vary: o.Vary = None,
    overrides: SetOption = None,
    routing: RoutingsOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    objective: o.Objective = None,
    search: o.Search = None,
    seed: o.Seed = 0,
    front: o.Front = "both",
    max_capex_usd: o.MaxCapex = None,
    max_power_w: o.MaxPower = None,
    min_busbw_gbps: o.MinBusbw = None,
    constraint: o.Constraints = None,
    faults: o.Faults = False,
    mttf: o.Mttf = None,
    mttr_h: o.Mttr = None,
    parts: o.PartsFile = None,
    runtime: o.Runtime = None,
    dtype: Dtype = "float",
    jobs: Jobs = 1,
    engine: Engine = None,
    scheduler: Scheduler = None,
    output: o.Output = None,
    plot: o.Plot = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Search what-if edits across SKUs for the best performance per dollar and per watt.

    Every point of the grid (each SKU x each combination of the --vary values, with the --set edits
    common to all) is built, costed from its bill of materials (capex_usd, power_w: trnsim topo
    cost) and measured by --objective; its figure is shown raw, per thousand dollars and per
    kilowatt. A point whose system cannot be built (a lane or port budget exceeded) is a row marked
    infeasible with its reason; one that breaks a constraint is kept and marked. The table printed
    is the Pareto front: the feasible points within the constraints that no other beats on
    performance (maximised), capex and power (minimised) at once (--front). Every point, with every
    field, is what -o writes and what --format json or csv prints.

    Examples:

        trnsim design --sku nl72x2 --vary switched.cross_rack.lanes=4,8,16
        trnsim design --sku nl16 --vary efficiency.default=0.8,0.9 -o d.csv
        trnsim design --sku nl16 --vary efficiency.default=0.8,0.9 --plot d.png
        trnsim design --sku h100 --objective moe:4:16M --max-power-w 2e4
        trnsim design --sku nl16 --vary efficiency.default=0.8,0.9 --search random:1
    """
    from trnsim.studies.design.grid import parse_search

    named = in_typed_order(ctx, sku=sku, topology=topology)
    systems = (named, overrides, routing, calibration, fail)
    plan = _plan(systems, vary, objective, front, faults, mttf, mttr_h, parts, runtime, dtype, search, seed)
    chosen = plan["chosen"]
    checks = _constraints(plan, max_capex_usd, max_power_w, min_busbw_gbps, constraint)
    _check_outputs(output, plot)
    engine_options = _engine(jobs, engine, scheduler)
    rows = _evaluate(plan, chosen, engine_options)
    _report(plan, rows, checks, parse_search(search, seed), output, plot, fmt)


def _plan(systems, vary, objective, front, faults, mttf, mttr_h, parts, runtime, dtype, search, seed) -> dict:
    """Everything a run needs, checked before any point is evaluated; ``systems`` is what
    :func:`~trnsim.cli.variant_options.variants_of` takes (each --routing makes each SKU a system)."""
    from trnsim.cli.variant_options import variants_of
    from trnsim.collectives.ops import dtype_size
    from trnsim.studies.design.grid import choose, make_grid, parse_axis, parse_search
    from trnsim.studies.design.objectives import parse_objective
    from trnsim.studies.design.run import FRONTS, FaultModel, check_edits

    dtype_size(dtype)  # a bad --dtype is the input's mistake, not every point's infeasibility
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
    variants, common = variants_of(*systems)
    axes = [parse_axis(text) for text in vary or []]
    grid = make_grid([v.text for v in variants], axes, list(common))
    chosen = choose(grid, parse_search(search, seed))  # an oversized grid goes before its values are read
    names = check_edits(variants, [[axis.edit(n) for n in range(len(axis.values))] for axis in axes])
    from trnsim.studies.variants import label_form

    # a system's label: its name and its own edits (NAME:set=..., each --routing), as sweep labels it
    own = [tuple(map(label_form, v.overrides[len(common) :])) for v in variants]
    names = [
        name + (f" [{', '.join(edits)}]" if edits else "") for name, edits in zip(names, own, strict=True)
    ]
    from trnsim.studies.cost import load_parts

    load_parts(parts)  # a parts file that cannot be read is refused before any point runs
    if runtime is not None:
        from trnsim.studies.runtimes import known_runtime

        runtime = known_runtime(runtime)
    elif faults:
        # as trnsim faults: a file's runtime may not model every survivor (NCCL: one NVSwitch domain)
        runtime = "ideal"
    return {
        "grid": grid,
        "chosen": chosen,
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
    return found + [parse_constraint(text, keys) for text in texts or []]


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


def _engine(jobs: int, engine: str | None, scheduler: str | None):
    """The engine's options (:mod:`trnsim.studies.engines`), or None for one process here, which
    needs no engine: the rows are the same and in the same order either way."""
    from trnsim.cli.engines import engine_options

    if engine is None and scheduler is None and jobs == 1:
        return None
    return engine_options(engine, scheduler, jobs)


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
    from trnsim.cli.engines import with_progress

    def describe(task: PointTask) -> str:
        return f"{task.system} {', '.join(f'{k}={v}' for k, v in task.values)}"

    return list(
        with_progress("design", tasks, describe, lambda done: run_points(tasks, engine, done), engine)
    )


def _report(plan: dict, rows: list[dict], checks: list, search, output, plot, fmt: Format) -> None:
    """Constraints and front over the rows; the front printed, every row written, the plot drawn."""
    from trnsim.outputs.design import design_columns, every_point, save_design_plot, write_table
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
    # CSV is for machines: every point and field, as -o d.csv writes them; the table shows the front
    table = every_point(rows, title) if fmt == Format.csv else Table(title, columns, shown, _footer(rows))
    emit({**meta, "rows": rows}, [table], fmt)
    for line in written:
        typer.echo(line, err=True)
    if plan["faults"] is not None:
        _note_multiple_failures(rows, plan["faults"].mttr_h)


def _note_multiple_failures(rows: list[dict], mttr_h: float) -> None:
    """Say when two parts or more are down too often for the single-failure expectation to stand for
    the system (:data:`~trnsim.studies.design.faults.MULTIPLE_FAILURES_NOTE`)."""
    from trnsim.studies.design.faults import MULTIPLE_FAILURES_NOTE, often_multiple

    often = often_multiple(rows)
    if not often:
        return
    worst = max(row["p_multiple_failures"] for row in often)
    share = f"up to {worst:.1%}" if worst < 0.9995 else "all" if worst >= 1 else "over 99.9%"
    points = ", ".join(str(row["point"]) for row in often[:8]) + (", ..." if len(often) > 8 else "")
    typer.echo(
        f"note: with parts down {mttr_h:g} h per failure, two or more are down at once "
        f"{share} of the time (points {points}; over {MULTIPLE_FAILURES_NOTE:.0%}, an assumption): "
        "expected_busbw_gbps averages only the states with at most one down; a shorter --mttr or a "
        "longer --mttf makes it stand for the system",
        err=True,
    )


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
    broke = f", {len(breaking)} of them breaking a constraint" if breaking else ""
    lines = [
        f"# {len(rows)} point{'s' * (len(rows) != 1)}: {len(feasible)} feasible{broke}, "
        f"{sum(1 for r in rows if r['front'])} on the front; per k$: per thousand dollars of capex, per kW: "
        "per kilowatt of power (their bill of materials: trnsim topo cost)"
    ]
    reasons: dict[str, list[int]] = {}
    for row in rows:
        if not row["feasible"]:
            reasons.setdefault(row["reason"], []).append(row["point"])
    for reason, points in reasons.items():
        lines.append(f"# infeasible: point{'s' * (len(points) != 1)} {', '.join(map(str, points))}: {reason}")
    return lines
