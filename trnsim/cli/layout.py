"""``trnsim layout``: tensor/context/expert/data/pipeline parallel groups mapped onto a system."""

from typing import Annotated

import typer

from trnsim.cli.flags import edits_text
from trnsim.cli.options import (
    CalibrationOption,
    Dtype,
    FailOption,
    FormatOption,
    Group,
    Ranks,
    RoutingOption,
    SetOption,
    Skew,
    SkuOption,
    TopologyOption,
    edits,
    load,
    note_calibration_target,
)
from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit, tied

Degree = Annotated[int, typer.Option(min=1, max=1 << 20)]
# the options each model-shape size is derived from (trnsim.studies.layout.ModelShape.sizes)
_DERIVED_FROM = {
    "tp": "--tokens / --cp x --hidden x --dtype",
    "cp": "2 x --tokens x --hidden x --dtype / --tp",
    "ep": "--tokens / (--cp x --tp) x --topk x --hidden x --dtype",
    "dp": "--params x --dtype / (--tp x --pp)",
    "pp": "--tokens / (--cp x --tp) x --hidden x --dtype",
}


def _check_derived(sizes: dict[str, int], names: list[str]) -> None:
    """Refuse a size derived from the model shape above the cap every size option has (1 PiB)."""
    from trnsim.units import MAX_SIZE

    for name in names:
        if sizes.get(name, 0) > MAX_SIZE:
            raise UsageError(
                f"the {name} message size derived from the model shape ({_DERIVED_FROM[name]}) is "
                f"{sizes[name]:,} bytes, more than {MAX_SIZE:,} (1 PiB): give a smaller shape or "
                f"--size {name}=BYTES"
            )


RuntimeOfLayout = Annotated[
    str | None,
    typer.Option(
        "--runtime",
        help="What the numbers model: ideal (the fabric's limit under trnsim's best schedule, every "
        "dimension's groups at once). A library's runtime prices one group alone, not groups sharing "
        "links: it is refused here. Default: the file's runtime.default.",
        show_default=False,
    ),
]


def layout(
    sku: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    ranks: Ranks = None,
    group: Group = None,
    tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree (all-reduce).", min=1)] = 1,
    cp: Annotated[int, typer.Option("--cp", help="Context-parallel degree (all-gather).", min=1)] = 1,
    ep: Annotated[int, typer.Option("--ep", help="Expert-parallel degree (all-to-all).", min=1)] = 1,
    dp: Annotated[int, typer.Option("--dp", help="Data-parallel degree (all-reduce).", min=1)] = 1,
    pp: Annotated[
        int,
        typer.Option(
            "--pp", help="Pipeline-parallel degree (send/recv of activations between stages).", min=1
        ),
    ] = 1,
    order: Annotated[
        str | None,
        typer.Option(
            "--order",
            help="Dimensions innermost first, e.g. ep,tp (consecutive ranks form the first); default "
            "tp,cp,ep,dp,pp.",
        ),
    ] = None,
    size: Annotated[
        list[str] | None,
        typer.Option("--size", help="A dimension's message size, NAME=BYTES (tp=16M); repeatable."),
    ] = None,
    hidden: Annotated[
        int | None,
        typer.Option("--hidden", help="Model shape: hidden size (width); derives sizes not given.", min=1),
    ] = None,
    tokens: Annotated[
        int | None,
        typer.Option(
            "--tokens", help="Model shape: tokens per micro-batch of one replica (sequence x batch).", min=1
        ),
    ] = None,
    topk: Annotated[int, typer.Option("--topk", help="Model shape: experts each token goes to.", min=1)] = 1,
    experts: Annotated[
        int | None,
        typer.Option("--experts", help="Model shape: experts per layer (ep must divide it).", min=1),
    ] = None,
    params: Annotated[
        str | None,
        typer.Option("--params", help="Model shape: parameters of one replica (70B, 7e10) for the dp size."),
    ] = None,
    layers: Annotated[
        int | None,
        typer.Option(
            "--layers", help="Model shape: layers; weights each dimension by its calls per step.", min=1
        ),
    ] = None,
    micro_batches: Annotated[
        int,
        typer.Option("--micro-batches", help="Model shape: micro-batches per step (with --layers).", min=1),
    ] = 1,
    skew: Skew = None,
    compare_mappings: Annotated[
        bool, typer.Option("--compare-mappings", help="Evaluate every order of the dimensions and rank them.")
    ] = False,
    dtype: Dtype = "float",
    runtime: RuntimeOfLayout = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Map parallel dimensions onto the ranks and time each one's collective, all groups at once.

    The degrees multiply to the number of ranks (all by default, or --ranks/--group). Each
    dimension's groups run its collective concurrently, sharing links; a layout's time is the sum of
    its dimensions' (no overlap assumed). pp splits the ranks into stages: each rank sends its
    activations to the rank in its place in the next stage (sendrecv), every boundary at once.

    Sizes come from --size or from a model shape (--hidden and --tokens, plus --topk, --params):
    tp T/cp*H*e, cp 2*T*H*e/tp, ep T/(cp*tp)*k*H*e, dp N*e/(tp*pp), pp T/(cp*tp)*H*e, with e the
    --dtype's bytes (assumptions: Megatron-style accounting, sequence parallelism, keys and values
    as wide as the model). With --layers, each dimension counts its calls per training step: tp and
    ep 4, cp 2 per layer and micro-batch, dp once, pp 2 per micro-batch (forward and backward).

    Examples:

        trnsim layout --sku nl72x2 --ep 72 --tp 2 --size ep=64M,tp=16M
        trnsim layout --sku nl64 --ep 16 --tp 4 --size ep=8M,tp=4M --compare-mappings
        trnsim layout --sku nl72x2 --tp 4 --dp 18 --pp 2 --size tp=16M,dp=1G,pp=8M
    """
    from trnsim.collectives.ops import dtype_size
    from trnsim.collectives.traffic import hot_destinations, parse_skew
    from trnsim.studies.layout import DIMENSIONS, compare_layouts, evaluate_layout
    from trnsim.studies.runtimes import ideal_only
    from trnsim.topology.groups import select_group

    degrees = {"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp}
    shape = _model_shape(degrees, hidden, tokens, topk, experts, params, layers, micro_batches)
    traffic = None
    if skew is not None:
        if ep < 2:
            raise UsageError("--skew skews the expert-parallel all-to-all: give --ep 2 or more")
        traffic = hot_destinations(ep, *parse_skew(skew))
    topo = load(sku, topology, edits(overrides, routing, calibration, fail))
    note_calibration_target(calibration, [topo.name])
    ideal_only(
        topo,
        runtime,
        "a layout runs each dimension's groups at once, sharing links, which a runtime does not price",
    )
    members = select_group(topo, group, ranks)
    sizes = shape.sizes(degrees, dtype_size(dtype)) if shape is not None else {}
    calls = shape.calls(degrees) if shape is not None else {}
    explicit = _explicit_sizes(size, sizes)
    active = [name for name in DIMENSIONS if degrees[name] > 1]
    if not active:
        raise UsageError(
            f"{sku or topology}: {len(members)} ranks to lay out; give degrees above 1 (--tp, --cp, --ep, --dp or "
            f"--pp) whose product is {len(members)}"
        )
    _check_derived(sizes, [name for name in active if name not in explicit])
    for name in explicit:
        if degrees[name] == 1:
            raise UsageError(f"--size {name}=...: {name} has degree 1, so it runs no collective to size")
    chosen = _chosen_order(order, active)
    if compare_mappings:
        orders = [chosen] if chosen else None
        results = compare_layouts(topo, members, degrees, sizes, orders, dtype, calls, traffic)
    else:
        order = chosen or tuple(active)
        results = [evaluate_layout(topo, members, degrees, order, sizes, dtype, calls, traffic)]
    title = (
        f"{topo.name}: {len(members)} ranks as "
        + " x ".join(f"{name}={degrees[name]}" for name in active)
        + (f"; ep all-to-all skewed (--skew {skew})" if skew is not None else "")
        + (
            f"; sizes from the model shape, times per training step of {layers} layers"
            if calls
            else "; sizes from the model shape, one call each"
            if shape is not None
            else ""
        )
        + (f"; with {edits_text(topo.overrides)}" if topo.overrides else "")
    )
    rows = _rows(results)
    payload = {
        "sku": topo.name,
        "ranks": len(members),
        "degrees": degrees,
        "sizes": sizes,
        "calls": calls,
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
    footer = [
        "# a layout's time is the sum of its dimensions' (no overlap); each dimension's groups run at once"
    ]
    emit(payload, [Table(title, _columns(calls), rows, footer)], fmt)


def _model_shape(degrees, hidden, tokens, topk, experts, params, layers, micro_batches):
    """The model shape the options describe (None without --hidden and --tokens), checked."""
    from trnsim.studies.layout import ModelShape
    from trnsim.units import parse_count

    shape = None
    if hidden is not None or tokens is not None:
        if hidden is None or tokens is None:
            raise UsageError("a model shape needs both --hidden and --tokens")
        shape = ModelShape(
            hidden,
            tokens,
            topk,
            experts,
            None if params is None else parse_count(params, "--params"),
            layers,
            micro_batches,
        )
        shape.check(degrees)
    elif params is not None or layers is not None or experts is not None or micro_batches != 1:
        raise UsageError(
            "--params, --layers, --experts and --micro-batches describe a model shape: give --hidden and "
            "--tokens too"
        )
    if micro_batches != 1 and layers is None:
        raise UsageError("--micro-batches counts calls per training step: give --layers too")
    return shape


def _explicit_sizes(size: list[str] | None, sizes: dict[str, int]) -> list[str]:
    """Read ``--size NAME=BYTES`` items into ``sizes``; the names given."""
    from trnsim.studies.layout import DIMENSIONS
    from trnsim.units import parse_size

    explicit = []
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
            explicit.append(name)
    return explicit


def _chosen_order(order: str | None, active: list[str]) -> tuple[str, ...] | None:
    """The ``--order`` given, each dimension of degree above 1 named once."""
    if order is None:
        return None
    chosen = tuple(part.strip().lower() for part in order.split(",") if part.strip())
    if sorted(chosen) != sorted(active):
        raise UsageError(
            f"--order {order!r}: name each dimension of degree above 1 once ({', '.join(active)})"
        )
    return chosen


def _rows(results) -> list[dict]:
    """One row per layout and dimension, the layouts' times relative to the best."""
    best = results[0].time_us
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
                    "op": dim.op,
                    "bytes": row.bytes,  # as nccl-tests runs it (aligned)
                    "time_us": row.time_us,
                    "calls": dim.calls,
                    "dim_total_us": dim.total_us,
                    "busbw_gbps": row.busbw_gbps,
                    "algorithm": row.algorithm,
                    "slowdown": row.slowdown,
                    "bottleneck": row.bottleneck,
                }
            )
    return rows


def _columns(calls: dict) -> list[Column]:
    """The table's columns; with calls per step, each dimension's total too."""
    columns = [
        # at 80 columns the table keeps the order, the times, busbw and the bottleneck
        Column("order", "order (innermost first)", align="left", short="order"),
        Column("total_us", "layout (us)", "{:.2f}"),
        Column("vs_best", "vs best", lambda v: f"{v:.3f}x"),
        Column("dimension", "dim", align="left"),
        Column("degree", "degree", drop_priority=2),
        Column("groups", "groups", drop_priority=6),
        Column("op", "op", align="left", drop_priority=3),
        Column("bytes", "size (B)", drop_priority=5),
        Column("time_us", "time (us)", "{:.2f}"),
    ]
    if calls:
        columns[-1].drop_priority = 1  # a call's time: the dimension's total matters more here
        columns += [
            Column("calls", "calls", "{:g}", drop_priority=8),
            Column("dim_total_us", "dim total (us)", "{:.1f}"),
        ]
    columns += [
        Column("busbw_gbps", "busbw (GB/s)", "{:.2f}"),
        Column("slowdown", "shared vs alone", lambda v: f"{v:.3f}x", drop_priority=4),
        Column("bottleneck", "bottleneck", tied, align="left"),
        Column("algorithm", "algorithm", align="left", drop_priority=7),
    ]
    return columns
