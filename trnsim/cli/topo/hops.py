"""``trnsim topo hops``: hop and link counts from one chip, for all pairs, or as a matrix."""

from enum import Enum
from typing import Annotated

import typer

from trnsim.cli.compat import hidden, renamed
from trnsim.cli.options import (
    CalibrationOption,
    FailOption,
    FormatOption,
    RoutingOption,
    SetOption,
    SkuOption,
    TopologyOption,
    edits,
)
from trnsim.cli.topo.common import SkuArgument, app, count, load_topology, pick_sku, resolve_rank
from trnsim.errors import UsageError
from trnsim.outputs.render import Column, Format, Table, emit
from trnsim.studies.structure import distances_from, endpoint_unit


class DistanceMetric(str, Enum):
    hops = "hops"
    links = "links"


@app.command()
def hops(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    routing: RoutingOption = None,
    calibration: CalibrationOption = None,
    fail: FailOption = None,
    source: Annotated[str | None, typer.Option("--from", help="Rank or chip name to measure from.")] = None,
    matrix: Annotated[bool, typer.Option("--matrix", help="Print the all-pairs matrix.")] = False,
    metric: Annotated[
        DistanceMetric | None,
        typer.Option(
            "--distance",
            help="What --matrix counts: hops (devices passed through; the default) or links (links crossed).",
        ),
    ] = None,
    old_metric: Annotated[DistanceMetric | None, hidden("--metric")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Hop and link counts from one chip (--from) or for all pairs (histogram, or --matrix).

    Examples:

        trnsim topo hops nl32x2
        trnsim topo hops nl72x2 --from 0
        trnsim topo hops nl16 --matrix --distance links
    """
    from trnsim.routing import hops

    metric = renamed("--metric", "--distance", old_metric, metric) or DistanceMetric.hops
    topo = load_topology(pick_sku(sku, sku_option), topology, edits(overrides, routing, calibration, fail))
    if source is not None and matrix:
        raise UsageError("give --from RANK (one chip's distances) or --matrix (all pairs), not both")
    if source is not None:
        origin = resolve_rank(topo, source, "--from")
        rows = distances_from(topo, origin)
        payload = {"name": topo.name, "from": origin, "from_rank": topo.rank_of[origin], "rows": rows}
        table = Table(
            f"{topo.name}: from rank {topo.rank_of[origin]} ({origin})",
            [
                Column("rank", "rank"),
                Column("chip", "chip", align="left"),
                Column("links", "links"),
                Column("hops", "hops"),
            ],
            rows,
        )
        emit(payload, [table], fmt)
        return
    if matrix:
        _matrix(topo, metric, fmt)
        return
    stats = hops.hop_stats(topo)
    rows = [{"hops": h, "links": h + 1, "pairs": n} for h, n in stats.histogram_hops.items()]
    payload = {
        "name": topo.name,
        "pairs": stats.pairs,
        "diameter_links": stats.diameter_links,
        "diameter_hops": stats.diameter_hops,
        "avg_links": stats.avg_links,
        "avg_hops": stats.avg_hops,
        "hop_histogram": {str(k): v for k, v in stats.histogram_hops.items()},
    }
    table = Table(
        f"{topo.name}: hops over {stats.pairs:,} {endpoint_unit(topo)} pairs"
        + (" (a rank's path starts and ends on its chip's on-chip link)" if topo.spec.chip.ranks > 1 else ""),
        [
            Column("hops", "hops"),
            Column("links", "links"),
            Column("pairs", f"{endpoint_unit(topo)} pairs", "{:,}"),
        ],
        rows,
        footer=[
            f"diameter {count(stats.diameter_links, 'link')} = {count(stats.diameter_hops, 'hop')}; average "
            f"{stats.avg_links:.3f} links = {stats.avg_hops:.3f} hops"
        ],
    )
    emit(payload, [table], fmt)


def _matrix(topo, metric: "DistanceMetric", fmt: Format) -> None:
    """``topo hops --matrix``: every format holds all ranks x ranks but a table, which builds only
    the columns its width can show; either is refused beyond :data:`trnsim.limits.MATRIX_CELLS`."""
    from trnsim import limits
    from trnsim.outputs.render import available_width
    from trnsim.routing import hops

    n = topo.n_ranks
    width = available_width() if fmt == Format.table else None
    shown = n if width is None else _columns_that_fit(n, width)
    limits.MATRIX_CELLS.check(n * shown, f"{topo.where}: the --matrix would print")
    # distances are symmetric (every link runs both ways): a table's BFS runs from its columns only
    links = hops.link_distances(topo) if shown == n else hops.link_distances(topo, topo.chips[:shown]).T
    values = links if metric == DistanceMetric.links else (links - 1).clip(min=0)
    if shown < n:  # now that the values are known, as many columns as their widths let fit
        shown = _columns_that_fit(n, width, [len(str(v)) for v in values.max(axis=0)])
    rows = [{"rank": r, **{str(c): int(values[r, c]) for c in range(shown)}} for r in range(n)]
    # the last ranks' columns go first to fit the width (every one is in --format csv)
    columns = [Column("rank", "rank")] + [Column(str(c), str(c), drop_priority=c + 1) for c in range(shown)]
    footer = []
    if shown < n:
        footer.append(
            f"not shown to fit {width} columns: ranks {shown} to {n - 1} ({n - shown} columns); see every "
            "column with --wide, --format json|csv|markdown or a larger COLUMNS"
        )
    payload = (
        {"name": topo.name, "metric": metric.value, "matrix": values.tolist()} if fmt == Format.json else {}
    )
    emit(payload, [Table(f"{topo.name}: {metric.value} between ranks", columns, rows, footer)], fmt)


def _columns_that_fit(n: int, width: int, cells: list[int] | None = None) -> int:
    """How many rank columns of an ``n``-rank matrix fit a table ``width`` wide: each is as wide as
    its header (the rank number) or its widest value (``cells``, when known), plus its border and
    padding; at least one."""
    used = max(len("rank"), len(str(n - 1))) + 4  # the rank column and the left border
    for column in range(n):
        if cells is not None and column == len(cells):
            return column
        used += max(len(str(column)), cells[column] if cells is not None else 1) + 3
        if used > width:
            return max(column, 1)
    return n
