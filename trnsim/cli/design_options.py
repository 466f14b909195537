"""The options of ``trnsim design`` (:mod:`trnsim.cli.design`)."""

from pathlib import Path
from typing import Annotated

import typer

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
Seed = Annotated[int, typer.Option("--seed", help="The seed of --search random:N.", min=0)]
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
MaxCapex = Annotated[
    float | None, typer.Option("--max-capex-usd", help="Constraint: capex_usd <= this.", min=0.0)
]
MaxPower = Annotated[
    float | None, typer.Option("--max-power-w", help="Constraint: power_w <= this.", min=0.0)
]
MinBusbw = Annotated[
    float | None,
    typer.Option(
        "--min-busbw-gbps",
        help="Constraint: busbw_gbps >= this (expected_busbw_gbps with --faults).",
        min=0.0,
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
Faults = Annotated[
    bool,
    typer.Option(
        "--faults",
        help="Also the expected busbw under the fault model (busbw objective only): the mean over "
        "the healthy state and each single part down, weighted by their steady-state probabilities "
        "(MTTF per part class, --mttr), given at most one part down; the front then uses it.",
    ),
]
Mttf = Annotated[
    list[str] | None,
    typer.Option("--mttf", help="With --faults: a part class's MTTF, CLASS=HOURS, as trnsim faults --mttf."),
]
Mttr = Annotated[
    float | None,
    typer.Option(
        "--mttr",
        help="With --faults: hours a failed part stays down [24; an assumption].",
        min=0.01,
        max=1e6,
        show_default=False,
    ),
]
PartsFile = Annotated[
    Path | None,
    typer.Option(
        "--parts",
        help="A parts file (parts: {NAME: {price_usd, power_w, ...}}) over the default prices and powers.",
        dir_okay=False,
    ),
]
Runtime = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help="What busbw and moe numbers model: ideal or a runtime (default: each file's; with --faults, "
        "ideal, as in trnsim faults).",
        show_default=False,
    ),
]
Output = Annotated[
    Path | None, typer.Option("-o", "--output", help="Write every point to table.csv or table.json.")
]
Plot = Annotated[
    Path | None,
    typer.Option(
        "--plot", help="Draw performance vs capex, the front highlighted (.png or .svg; the plot extra)."
    ),
]
