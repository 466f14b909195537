"""``trnsim layout``: tensor/context/expert/data/pipeline parallel groups mapped onto a system."""

from typing import Annotated

import typer

from trnsim.cli.options import (
    CalibrationOption,
    Dtype,
    FormatOption,
    Group,
    Ranks,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
    load,
    note_calibration_target,
)
from trnsim.cli.render import Column, Format, Table, emit
from trnsim.errors import UsageError

Degree = Annotated[int, typer.Option(min=1, max=1 << 20)]


def layout(
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    ranks: Ranks = None,
    group: Group = None,
    tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree (all-reduce).", min=1)] = 1,
    cp: Annotated[int, typer.Option("--cp", help="Context-parallel degree (all-gather).", min=1)] = 1,
    ep: Annotated[int, typer.Option("--ep", help="Expert-parallel degree (all-to-all).", min=1)] = 1,
    dp: Annotated[int, typer.Option("--dp", help="Data-parallel degree (all-reduce).", min=1)] = 1,
    pp: Annotated[
        int, typer.Option("--pp", help="Pipeline-parallel degree (shapes the mapping; not costed).", min=1)
    ] = 1,
    order: Annotated[
        str | None,
        typer.Option(
            "--order", help="Dimensions innermost first, e.g. ep,tp (consecutive ranks form the first)."
        ),
    ] = None,
    size: Annotated[
        list[str] | None,
        typer.Option("--size", help="A dimension's message size, NAME=BYTES (tp=16M); repeatable."),
    ] = None,
    compare_mappings: Annotated[
        bool, typer.Option("--compare-mappings", help="Evaluate every order of the dimensions and rank them.")
    ] = False,
    dtype: Dtype = "float",
    fmt: FormatOption = Format.table,
) -> None:
    """Map parallel dimensions onto the ranks and time each one's collective, all groups at once.

    The degrees multiply to the number of ranks (all by default, or --ranks/--group). Each
    dimension's groups run its collective concurrently, sharing links; a layout's time is the sum of
    its dimensions' (no overlap assumed). pp shapes the mapping but is not costed.
    """
    from trnsim.collectives.groups import select_group
    from trnsim.collectives.layout import DIMENSIONS, compare_layouts, evaluate_layout
    from trnsim.routing.policy import routing_of
    from trnsim.units import parse_size

    topo = load(sku, topology, edits(overrides, routing, calibration))
    note_calibration_target(calibration, [topo.name])
    if routing_of(topo.spec).policy == "hash":
        raise UsageError(
            "layout runs ecmp or single routing (hash's seeds are not averaged across groups yet)"
        )
    members = select_group(topo, group, ranks)
    degrees = {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp}
    sizes = {}
    for item in size or []:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            name = name.strip().lower()
            if not sep or name not in DIMENSIONS:
                raise UsageError(
                    f"--size {part!r}: expected NAME=BYTES with NAME one of {', '.join(DIMENSIONS)}"
                )
            try:
                sizes[name] = parse_size(value)
            except UsageError as exc:
                raise UsageError(f"--size {part!r}: {exc}") from None
    active = [name for name in DIMENSIONS if degrees[name] > 1]
    if not active:
        raise UsageError("give at least one degree above 1 (--tp, --cp, --ep, --dp or --pp)")
    chosen = None
    if order is not None:
        chosen = tuple(part.strip().lower() for part in order.split(",") if part.strip())
        if sorted(chosen) != sorted(active):
            raise UsageError(
                f"--order {order!r}: name each dimension of degree above 1 once ({', '.join(active)})"
            )
    if compare_mappings:
        results = compare_layouts(topo, members, degrees, sizes, [chosen] if chosen else None, dtype)
    else:
        results = [evaluate_layout(topo, members, degrees, chosen or tuple(active), sizes, dtype)]
    best = results[0].time_us
    title = (
        f"{topo.name}: {len(members)} ranks as "
        + " x ".join(f"{name}={degrees[name]}" for name in active)
        + (f"; with --set {', '.join(topo.overrides)}" if topo.overrides else "")
    )
    rows = []
    for result in results:
        for dim in result.dimensions:
            row = dim.row
            rows.append(
                {
                    "order": result.label,
                    "total_us": result.time_us,
                    "vs_best": result.time_us / best if best else 1.0,
                    "dimension": dim.name,
                    "degree": dim.degree,
                    "groups": len(dim.groups),
                    "op": dim.op or "point-to-point (not costed)",
                    "bytes": dim.size if dim.op else 0,
                    "time_us": row.time_us if row else 0.0,
                    "busbw_gbps": row.busbw_gbps if row else 0.0,
                    "algorithm": row.algorithm if row else "-",
                    "slowdown": row.slowdown if row else 1.0,
                    "bottleneck": row.bottleneck if row else "-",
                }
            )
    payload = {
        "sku": topo.name,
        "ranks": len(members),
        "degrees": degrees,
        "sizes": sizes,
        "layouts": [
            {
                "order": list(r.order),
                "time_us": r.time_us,
                "dimensions": [row for row in rows if row["order"] == r.label],
                "groups": {d.name: [[topo.rank_of[c] for c in g] for g in d.groups] for d in r.dimensions},
            }
            for r in results
        ],
    }
    columns = [
        Column("order", "order (innermost first)", align="left"),
        Column("total_us", "layout (us)", "{:.2f}"),
        Column("vs_best", "vs best", lambda v: f"{v:.3f}x"),
        Column("dimension", "dim", align="left"),
        Column("degree", "degree"),
        Column("groups", "groups"),
        Column("op", "op", align="left"),
        Column("bytes", "size (B)"),
        Column("time_us", "time (us)", "{:.2f}"),
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}"),
        Column("slowdown", "shared vs alone", lambda v: f"{v:.3f}x"),
        Column("bottleneck", "bottleneck", align="left"),
        Column("algorithm", "algorithm", align="left", drop_priority=1),
    ]
    footer = [
        "# a layout's time is the sum of its dimensions' (no overlap); each dimension's groups run at once"
    ]
    emit(payload, [Table(title, columns, rows, footer)], fmt)
