"""A design run's views: the front as a table, the whole table as CSV or JSON, and a plot of
performance against cost with the front highlighted (matplotlib, the ``plot`` extra)."""

from __future__ import annotations

import json
from pathlib import Path

from trnsim.outputs.pictures import quiet, save_picture
from trnsim.outputs.table import Column, Table


def _money(value: float) -> str:
    return f"{value:,.0f}"


def design_columns(metric: str, unit: str, keys: list[str], faults: bool) -> list[Column]:
    """The printed table's columns: the point, its system and values, the metric raw, per k$ and per
    kW, capex and power, and the constraints it breaks."""
    perf = "expected_busbw_gbps" if faults else metric
    columns = [
        Column("point", "#"),
        Column("system", "system", align="left"),
        *(Column(key, ".".join(key.split(".")[-2:]), align="left", short=key.split(".")[-1]) for key in keys),
        Column(metric, f"{metric} ({unit})" if unit else metric, "{:.4g}", short=metric.split("_")[0]),
    ]
    if faults:
        columns.append(Column("expected_busbw_gbps", "expected busbw (GB/s)", "{:.4g}", short="E busbw"))
    columns += [
        # on a narrow terminal the ratios go first: the front is drawn against capex and power
        Column(f"{perf}_per_kusd", f"{unit} per k$", "{:.4g}", short="per k$", drop_priority=3),
        Column(f"{perf}_per_kw", f"{unit} per kW", "{:.4g}", short="per kW", drop_priority=4),
        Column("capex_usd", "capex ($)", _money, short="capex"),
        Column("power_w", "power (W)", _money, short="power"),
        Column("violates", "breaks", align="left", drop_priority=2),
    ]
    return columns


def every_point(rows: list[dict], title: str = "") -> Table:
    """Every point with every field: what ``-o d.csv`` writes and ``--format csv`` prints."""
    return Table(title, [Column(key, key) for key in rows[0]], rows)


def write_table(path: Path, rows: list[dict], meta: dict) -> None:
    """Every row to ``path``: CSV (one line per point) or JSON (with ``meta``), written atomically."""
    import io

    from trnsim.atomic import write_atomic
    from trnsim.outputs.plain import emit_csv
    from trnsim.outputs.table import SCHEMA

    if path.suffix.lower() == ".json":
        text = json.dumps({"schema": SCHEMA, **meta, "rows": rows}, indent=1, allow_nan=False) + "\n"
        write_atomic(path, text)
        return
    buffer = io.StringIO()
    emit_csv([every_point(rows)], buffer)
    write_atomic(path, buffer.getvalue())


@quiet()
def save_design_plot(rows: list[dict], performance: str, label: str, output: Path, title: str) -> None:
    """Performance against capital cost, one marker per feasible point: the front filled and joined
    in a staircase, points that break a constraint as crosses, the rest hollow."""
    import textwrap

    from trnsim.outputs.plot import _literal, require

    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    pyplot = require("matplotlib.pyplot")
    figure, axes = pyplot.subplots(figsize=(9, 5.5), dpi=120)
    feasible = [row for row in rows if row["feasible"] and row.get(performance) is not None]
    groups = [
        ("on the front", [r for r in feasible if r["front"]], {"marker": "o", "s": 60, "zorder": 4}),
        ("off the front", [r for r in feasible if not r["front"] and not r["violates"]],
         {"marker": "o", "s": 36, "facecolors": "none", "edgecolors": "grey"}),
        ("breaks a constraint", [r for r in feasible if r["violates"]],
         {"marker": "x", "s": 36, "color": "tab:red"}),
    ]  # fmt: skip
    for name, chosen, style in groups:
        if chosen:
            axes.scatter(
                [r["capex_usd"] for r in chosen], [r[performance] for r in chosen], label=name, **style
            )
    front = sorted((r["capex_usd"], -r[performance]) for r in feasible if r["front"])
    # the staircase: the best performance at each capex or less (a point on the front by its power
    # alone may sit under it)
    stairs, best = [], None
    for capex, negative in front:
        if best is None or -negative > best:
            stairs.append((capex, -negative))
            best = -negative
    if stairs:
        axes.step([c for c, _ in stairs], [p for _, p in stairs], where="post", linewidth=1, zorder=3)
    labels: dict[tuple[float, float], list[str]] = {}
    for row in (r for r in feasible if r["front"]):  # points that coincide share one label
        labels.setdefault((row["capex_usd"], row[performance]), []).append(str(row["point"]))
    for (capex, value), points in labels.items():
        axes.annotate(
            ", ".join(points), (capex, value), fontsize=7, xytext=(4, 4), textcoords="offset points"
        )
    axes.set_xlabel("capital cost (USD, the bill of materials)")
    axes.set_ylabel(_literal(label))
    axes.set_title(_literal(textwrap.fill(title, 110)), fontsize=8)
    ticker = require("matplotlib.ticker")
    axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: f"${value / 1e6:,.2f}M"))
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_picture(figure, output)
