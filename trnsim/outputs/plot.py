"""Bus bandwidth against message size: a PNG or SVG with matplotlib, or a terminal chart with plotext.

Both are optional (the ``plot`` extra: ``pip install '.[plot]'`` in a trnsim checkout); without
them the command says how to get them. Labels and titles are user text: matplotlib would read
``$...$`` in them as mathematics and hide a legend entry that starts with ``_``, so both are escaped,
and control characters (which no font draws) are shown as escapes. matplotlib's warnings stay off
stderr and a picture is written whole or not at all (:mod:`trnsim.outputs.pictures`).
"""

from pathlib import Path

from trnsim.errors import UsageError, printable
from trnsim.outputs.pictures import quiet, save_picture
from trnsim.studies.variants import VariantResult
from trnsim.units import format_size

HINT = "install the plot extra: pip install '.[plot]' in the trnsim checkout (or: pip install matplotlib plotext)"


def _literal(text: str) -> str:
    """``text`` as matplotlib shows it verbatim: no mathtext, no hidden ``_`` legend entries, control
    characters as escapes (a bell or a terminal escape has no glyph: matplotlib would warn)."""
    text = printable(text, newlines=True).replace("$", r"\$")
    return "\u200b" + text if text.startswith("_") else text


def require(module: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"plotting needs {module.split('.')[0]}, which is not installed: {HINT}") from None


def _named(result: VariantResult) -> str:
    """A variant's curve in the legend: its name, and the runtime whose numbers it draws (not the ideal)."""
    return result.display + (f" ({result.runtime})" if result.runtime != "ideal" else "")


@quiet()
def save_figure(results: list[VariantResult], op: str, output: Path, title: str, measured=()) -> None:
    """Draw busbw vs size (log x axis), one line per variant and its bound dashed, to PNG or SVG.

    ``measured`` runs (:class:`trnsim.studies.calibration.measurement.Measurement`) are drawn as points.
    """
    if output.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"-o {output}: give a .png, .svg or .pdf file")
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    pyplot = require("matplotlib.pyplot")
    ticker = require("matplotlib.ticker")

    figure, axes = pyplot.subplots(figsize=(9, 5.5), dpi=120)
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    markers = "osD^vP*X"
    for i, result in enumerate(results):
        rows = result.evaluation.rows
        sizes = [row.bytes for row in rows]
        colour = colours[i % len(colours)]
        # distinct, shrinking markers keep variants that coincide visible on top of each other
        axes.plot(
            sizes,
            [row.busbw_gbps for row in rows],
            marker=markers[i % len(markers)],
            markersize=max(7 - 1.5 * i, 2.5),
            markerfacecolor="none" if i % 2 == 0 else colour,
            color=colour,
            label=_literal(_named(result)),
        )
        axes.plot(
            sizes,
            [row.bound_busbw_gbps for row in rows],
            linestyle="--",
            linewidth=1,
            color=colour,
            label=_literal(f"{result.display} (bound)"),
        )
        if result.runtime != "ideal":  # the runtime's curve is solid; the ideal's beside it, dotted
            axes.plot(
                sizes,
                [row.ideal_busbw_gbps for row in rows],
                linestyle=":",
                linewidth=1,
                color=colour,
                label=_literal(f"{result.display} (ideal)"),
            )
    for j, run in enumerate(measured):
        axes.scatter(
            [row.size_bytes for row in run.rows],
            [row.busbw_gbps for row in run.rows],
            marker="x",
            s=40,
            color="black" if j == 0 else colours[(len(results) + j) % len(colours)],
            zorder=5,
            label=_literal(f"measured: {Path(run.path).name}"),
        )
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _: format_size(value).replace(" ", "")))
    axes.set_xlabel("message size (bytes, nccl-tests convention)")
    axes.set_ylabel("bus bandwidth (GB/s, 1 GB = 1e9 B)")
    axes.set_title(_literal(title))
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_picture(figure, output)


def terminal_chart(results: list[VariantResult], op: str, title: str, measured=()) -> str:
    """The same chart drawn with characters, for a terminal."""
    plotext = require("plotext")
    plotext.clear_figure()
    for run in measured:
        plotext.scatter(
            [row.size_bytes for row in run.rows],
            [row.busbw_gbps for row in run.rows],
            label=printable(f"measured: {Path(run.path).name}"),
            marker="x",
        )
    for result in results:
        rows = result.evaluation.rows
        sizes = [row.bytes for row in rows]
        label = printable(result.display)  # the terminal would act on a control character
        plotext.plot(sizes, [row.busbw_gbps for row in rows], label=printable(_named(result)))
        if result.runtime != "ideal":
            plotext.plot(sizes, [row.ideal_busbw_gbps for row in rows], label=f"{label} (ideal)", marker="x")
        # characters have no dashes: the bound is drawn with dots
        plotext.plot(sizes, [row.bound_busbw_gbps for row in rows], label=f"{label} (bound)", marker="dot")
    plotext.xscale("log")
    sizes = [row.bytes for row in results[0].evaluation.rows]
    ticks = sizes[:: max(1, len(sizes) // 6)]
    plotext.xticks(ticks, [format_size(size).replace(" ", "") for size in ticks])
    plotext.title(printable(title))
    plotext.xlabel("message size (bytes)")
    plotext.ylabel("busbw (GB/s)")
    plotext.plotsize(100, 25)
    return plotext.build()
