"""A drawing rendered with matplotlib (the optional ``plot`` extra) to PNG, SVG or PDF: boxes, link
lines coloured by class, or by busy share on a heatmap with the bottlenecks outlined, chips, legend.

Every artist is added in a fixed order, so the same drawing gives the same picture byte for byte
(PNG; SVG and PDF up to the date and ids matplotlib writes).
"""

from dataclasses import dataclass
from pathlib import Path

from trnsim.errors import UsageError
from trnsim.outputs.draw.shapes import Drawing, extent, link_key, polyline
from trnsim.outputs.pictures import quiet, save_picture

FORMATS = (".png", ".svg", ".pdf")
# the bottlenecks' halo: a colour the heatmap's scale (plasma) never uses
_OUTLINE = "#00c8ff"
# a drawn link at least this share of the busiest is a bottleneck (ties within rounding)
BOTTLENECK_SHARE = 0.995
_SCALE = 0.55  # inches per unit of the layout
_BOX_STYLES = {
    "rack": dict(facecolor="#f7f7f7", edgecolor="#999999", linewidth=1.0, zorder=0),
    "slice": dict(facecolor="#f7f7f7", edgecolor="#999999", linewidth=1.0, zorder=0),
    "tray": dict(facecolor="#ffffff", edgecolor="#777777", linewidth=0.8, zorder=3),
    "switches": dict(facecolor="#e8eef7", edgecolor="#4a6fa5", linewidth=0.9, zorder=3),
    "plane": dict(facecolor="#e8eef7", edgecolor="#4a6fa5", linewidth=0.9, zorder=1),
}


@dataclass
class _Lines:
    """How the links were drawn, for the legend: the busiest share of each line, whether the
    bottlenecks are outlined, how many, and where a line lost some of its links."""

    used: list[float]
    peaks: int
    outline: bool
    bottlenecks: int
    partly: list[tuple[float, float]]


@quiet()
def save(
    drawing: Drawing,
    output: Path,
    shares: dict[tuple[str, str], float] | None = None,
    subtitle: str = "",
) -> None:
    """Render ``drawing`` to ``output`` (.png, .svg or .pdf).

    Parameters
    ----------
    drawing : Drawing
        A placed system (:func:`trnsim.outputs.draw.layout`).
    output : Path
        The picture, written whole or not at all.
    shares : dict, optional
        Link -> busy share (:func:`trnsim.outputs.draw.link_shares`): a heatmap, links coloured by
        their share, the bottlenecks outlined. None: links coloured by class.
    subtitle : str
        A line under the title.
    """
    from trnsim.outputs.plot import require

    if output.suffix.lower() not in FORMATS:
        raise UsageError(f"{output}: give a .png, .svg or .pdf file")
    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    pyplot = require("matplotlib.pyplot")
    width = min(max(drawing.width * _SCALE + 2.5, 7.0), 40.0)
    height = min(max(drawing.height * _SCALE + 2.2, 4.0), 40.0)
    figure, axes = pyplot.subplots(figsize=(width, height), dpi=110)
    colours = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    class_colour = {cls: colours[i % len(colours)] for i, cls in enumerate(drawing.classes)}
    top_bw = max((bw for _, bw in drawing.classes.values()), default=1.0) or 1.0
    cmap = pyplot.get_cmap("plasma")
    _draw_boxes(axes, drawing)
    lines = _draw_links(axes, drawing, shares, class_colour, top_bw, cmap)
    _draw_chips(axes, drawing)
    _legend(axes, drawing, shares, lines, class_colour, top_bw)
    if shares is not None:
        mappable = pyplot.cm.ScalarMappable(cmap=cmap, norm=matplotlib.colors.Normalize(0.15, 1.0))
        bar = figure.colorbar(mappable, ax=axes, fraction=0.025, shrink=0.5, pad=0.01, location="left")
        bar.set_ticks([0.15, 0.575, 1.0], labels=["0%", "50%", "100%"])
        bar.set_label("busy share of the busiest step", fontsize=7)
        bar.ax.tick_params(labelsize=6)
    _frame(axes, drawing, subtitle)
    figure.tight_layout()
    save_picture(figure, output, bbox_inches="tight")


def _draw_boxes(axes, drawing: Drawing) -> None:
    """Racks, slices, trays, switch groups and planes, each with its label."""
    from trnsim.outputs.plot import _literal, require

    patches = require("matplotlib.patches")
    for box in drawing.boxes:
        axes.add_patch(patches.Rectangle((box.x, box.y), box.w, box.h, **_BOX_STYLES[box.kind]))
        if box.kind in ("rack", "slice"):
            axes.text(
                box.x + 0.1, box.y - 0.15, _literal(box.label), fontsize=8, va="bottom", color="#555555"
            )
        elif box.kind == "plane":
            # fit the column: about 0.62 em per character, 72 points per inch
            fits = box.h * _SCALE * 72 / (0.62 * max(len(box.label), 1))
            axes.text(
                box.x + box.w / 2, box.y + box.h / 2, _literal(box.label), fontsize=max(3.0, min(7.0, fits)), ha="center",
                va="center", rotation=90, zorder=4, color="#22406e",
            )  # fmt: skip
        elif box.kind == "switches":
            axes.text(
                box.x + box.w / 2, box.y + box.h / 2, _literal(box.label), fontsize=6, ha="center",
                va="center", zorder=4, color="#22406e",
            )  # fmt: skip
        else:
            axes.text(box.x + 0.06, box.y + 0.04, _literal(box.label), fontsize=5, ha="left", va="top",
                      color="#777777", zorder=4)  # fmt: skip


def _draw_links(axes, drawing: Drawing, shares, class_colour, top_bw, cmap) -> _Lines:
    """The link lines, in layers of z-order and style (one collection each, the busiest on top),
    the bands' labels, and a grey cross on a line that lost some of its links."""
    from trnsim.outputs.plot import _literal, require

    used = (
        [max(shares.get(link_key(*link), 0.0) for link in s.links) for s in drawing.segments]
        if shares
        else []
    )
    peaks = sum(1 for share in used if share >= BOTTLENECK_SHARE)
    # when most links are at the peak the load is balanced: outlining them all would say nothing
    outline = shares is not None and peaks <= sum(1 for share in used if share > 0) / 2
    lines = _Lines(used, peaks, outline, 0, [])
    layers: dict[tuple, list] = {}  # (z-order, line style) -> [(points, colour, width, alpha)]
    for segment in drawing.segments:
        width_pt = 0.5 + 2.0 * segment.bw_gbps / top_bw
        if segment.band:
            width_pt = 3.0 + 3.0 * segment.bw_gbps / top_bw
        alpha = 0.9 if segment.band or shares is not None else 0.7
        points = polyline(segment)
        if segment.failed:
            colour, style, zorder = "#bbbbbb", "--", 1.0
        elif shares is not None:
            share = max(shares.get(link_key(*link), 0.0) for link in segment.links)
            colour = cmap(0.15 + 0.85 * share) if share > 0 else "#d9d9d9"
            style, zorder = "-", 2.0 + share * 0.5  # the busiest on top
            if share >= BOTTLENECK_SHARE and outline:
                lines.bottlenecks += 1
                layers.setdefault((1.9, "-"), []).append((points, _OUTLINE, width_pt + 3.0, 0.9))
        else:
            colour, style, zorder = class_colour.get(segment.cls, "black"), "-", 2.0
        if segment.inside:
            zorder += 1.6
            width_pt = min(width_pt, 1.2)
        layers.setdefault((round(zorder, 2), style), []).append((points, colour, width_pt, alpha))
        if segment.lost:  # some of the links this line stands for failed: a grey cross on it
            middle = points[len(points) // 2]
            lines.partly.append((float(middle[0]), float(middle[1])))
        if segment.label and segment.band:
            mx, my = (segment.a[0] + segment.b[0]) / 2, (segment.a[1] + segment.b[1]) / 2
            offset = -0.55 if segment.curve else -0.25
            axes.text(mx, my + offset, _literal(segment.label), fontsize=6, ha="center", color="#333333")
    collections = require("matplotlib.collections")
    colors = require("matplotlib.colors")
    for (zorder, style), entries in sorted(layers.items(), key=lambda kv: kv[0][0]):
        rgba = [colors.to_rgba(colour, alpha) for _, colour, _, alpha in entries]
        axes.add_collection(
            collections.LineCollection(
                [points for points, *_ in entries], colors=rgba, linewidths=[w for _, _, w, _ in entries],
                linestyles=style, zorder=zorder, capstyle="round",
            )
        )  # fmt: skip
    if lines.partly:
        axes.scatter(
            [x for x, _ in lines.partly],
            [y for _, y in lines.partly],
            s=30,
            marker="x",
            color="#888888",
            zorder=6,
        )
    return lines


def _draw_chips(axes, drawing: Drawing) -> None:
    """Chips (and lone switches) as squares, failed ones as grey crosses; names up to 64 chips."""
    from trnsim.outputs.plot import _literal

    chips = [m for m in drawing.marks if m.kind == "chip"]
    small = len(chips) > 64
    for failed in (False, True):
        marks = [m for m in drawing.marks if m.failed == failed]
        if marks:
            axes.scatter(
                [m.x for m in marks], [m.y for m in marks], s=28 if small else 60,
                marker="x" if failed else "s", color="#bbbbbb" if failed else "#2b2b2b", zorder=5,
            )  # fmt: skip
    if not small:
        for mark in chips:
            axes.text(
                mark.x, mark.y + 0.28, _literal(mark.label), fontsize=5, ha="center", va="top", zorder=6
            )


def _legend(axes, drawing: Drawing, shares, lines: _Lines, class_colour, top_bw) -> None:
    """Link classes (or, on a heatmap, the bottlenecks and idle links), failed parts."""
    from trnsim.outputs.plot import _literal, require

    line = require("matplotlib.lines").Line2D
    handles = []
    if shares is None:
        for cls, (count, bw) in drawing.classes.items():
            handles.append(
                line([], [], color=class_colour[cls], linewidth=0.5 + 2.0 * bw / top_bw,
                     label=_literal(f"{cls}: {count} links, {bw:.4g} GB/s each"))
            )  # fmt: skip
    else:
        label = (
            f"bottleneck ({lines.bottlenecks} of {len(lines.used)} drawn links)"
            if lines.outline
            else f"balanced: {lines.peaks} of {len(lines.used)} drawn links at the peak"
        )
        handles.append(
            line([], [], color=_OUTLINE, alpha=0.9 if lines.outline else 0.0, linewidth=4, label=label)
        )
        if not lines.peaks:  # the busiest links are inside devices (a chip's ranks, a switch group)
            hidden = sorted(
                {
                    drawing.link_class.get(key, "?")
                    for key, share in shares.items()
                    if share >= BOTTLENECK_SHARE
                }
            )
            handles.append(
                line(
                    [],
                    [],
                    alpha=0.0,
                    label=_literal(
                        f"busiest links not drawn ({', '.join(hidden)}): inside devices or switch groups"
                    ),
                )
            )
        handles.append(line([], [], color="#d9d9d9", linewidth=2, label="idle in that step"))
    if any(s.failed for s in drawing.segments) or any(m.failed for m in drawing.marks):
        handles.append(line([], [], color="#bbbbbb", linestyle=(0, (3, 2)), label="failed"))
    if lines.partly:
        handles.append(
            line([], [], color="#888888", marker="x", linestyle="none", label="some of its links failed")
        )
    axes.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _frame(axes, drawing: Drawing, subtitle: str) -> None:
    """The title (wrapped), equal scales, and the extent with y growing downwards."""
    import textwrap

    from trnsim.outputs.plot import _literal

    parts = [drawing.title, subtitle, "; ".join(drawing.notes)]
    title = "\n".join(textwrap.fill(part, 110) for part in parts if part)
    axes.set_title(_literal(title), fontsize=9, pad=14)
    axes.set_aspect("equal")
    low_x, low_y, high_x, high_y = extent(drawing)
    axes.set_xlim(low_x - 0.5, high_x + 0.5)
    axes.set_ylim(high_y + 0.6, low_y - 0.6)  # y grows downwards: tray 0 and slice rows on top
    axes.axis("off")
