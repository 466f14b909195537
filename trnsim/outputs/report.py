"""One self-contained HTML file of a comparison: for a design review or a CI run's artifacts.

It holds the busbw curves against their bounds (:func:`trnsim.outputs.plot.save_figure`), the table of every
variant side by side, and per variant its drawing, its link-load heatmap (:mod:`trnsim.outputs.draw`) and its
rows. Pictures are inline SVG and the style is inline CSS: the file opens with no network and no
other file. Every piece of user text is HTML-escaped.
"""

import html
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from trnsim.units import format_bytes

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text, th.text { text-align: left; }
.note { color: #555; font-size: 0.85em; } figure { margin: 1em 0; } svg { max-width: 100%; height: auto; }
"""


@dataclass
class Section:
    """One variant: its name, what its run said, its pictures (SVG text) and its rows."""

    name: str
    notes: list[str]
    drawing_svg: str
    heatmap_svg: str
    heatmap_caption: str
    rows: list


@dataclass
class Report:
    title: str
    command: str
    op: str
    chart_svg: str
    headers: list[str]
    table: list[list[str]]
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def svg_of(draw_to) -> str:
    """The SVG that ``draw_to(path)`` writes, as text to inline (the XML prologue dropped)."""
    from trnsim import limits
    from trnsim.yamlio import read_text

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "picture.svg"
        draw_to(path)
        text = read_text(path, "picture", limits.PICTURE_BYTES)
    return text[text.index("<svg") :]


def _table(headers: list[str], rows: list[list[str]], text_columns: int = 0) -> str:
    head = "".join(
        f'<th class="text">{html.escape(h)}</th>' if i < text_columns else f"<th>{html.escape(h)}</th>"
        for i, h in enumerate(headers)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="text">{html.escape(c)}</td>' if i < text_columns else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def rows_table(rows) -> tuple[list[str], list[list[str]]]:
    """A variant's rows (any :class:`trnsim.model.rows.Row`) as the collective table shows them."""
    headers = ["size", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm", "bound busbw", "eff %",
               "bottleneck"]  # fmt: skip
    body = [
        [
            format_bytes(row.bytes),
            f"{row.time_us:.2f}",
            f"{row.algbw_gbps:.2f}",
            f"{row.busbw_gbps:.2f}",
            row.algorithm,
            f"{row.bound_busbw_gbps:.2f}",
            f"{100 * row.efficiency:.1f}",
            row.bottleneck,
        ]
        for row in rows
    ]
    return headers, body


def render(report: Report) -> str:
    """The whole HTML document."""
    from trnsim import __version__

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(report.title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(report.title)}</h1>",
        f'<p class="note">trnsim {html.escape(__version__)}: <code>{html.escape(report.command)}</code></p>',
    ]
    parts += [f'<p class="note">{html.escape(note)}</p>' for note in report.notes]
    parts += [
        "<h2>Bus bandwidth against size</h2>",
        f'<figure>{report.chart_svg}<figcaption class="note">each variant\'s busbw (solid) and its '
        "bound (dashed); GB/s = 1e9 B/s per direction</figcaption></figure>",
        "<h2>Side by side</h2>",
        _table(report.headers, report.table),
    ]
    for section in report.sections:
        parts.append(f"<h2>{html.escape(section.name)}</h2>")
        parts += [f'<p class="note">{html.escape(note)}</p>' for note in section.notes]
        if section.drawing_svg:
            parts.append(
                f'<figure>{section.drawing_svg}<figcaption class="note">the fabric</figcaption></figure>'
            )
        if section.heatmap_svg:
            parts.append(
                f'<figure>{section.heatmap_svg}<figcaption class="note">link loads: '
                f"{html.escape(section.heatmap_caption)}</figcaption></figure>"
            )
        headers, body = rows_table(section.rows)
        parts.append(_table(headers, body, text_columns=0))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def side_by_side(results, sizes: list[int], letters: list[str]) -> tuple[list[str], list[list[str]]]:
    """The variants' busbw, bound and algorithm at every size some variant ran, and each one's ratio
    to the first (A)."""
    from trnsim.units import format_size

    by_size = [{row.requested_bytes: row for row in r.evaluation.rows} for r in results]
    headers = ["size"]
    for n, letter in enumerate(letters):
        headers += [f"{letter} busbw (GB/s)", f"{letter} bound", f"{letter} algorithm"] + (
            [f"{letter}/A"] if n else []
        )
    table = []
    for size in sizes:
        if not any(size in rows for rows in by_size):
            continue
        line = [format_size(size)]
        first = by_size[0].get(size)
        for n, rows in enumerate(by_size):
            row = rows.get(size)
            if row is None:
                line += ["-", "-", "-"] + (["-"] if n else [])
                continue
            line += [f"{row.busbw_gbps:.2f}", f"{row.bound_busbw_gbps:.2f}", row.algorithm]
            if n:
                line.append(
                    f"{row.busbw_gbps / first.busbw_gbps:.3f}x" if first and first.busbw_gbps else "-"
                )
        table.append(line)
    return headers, table


def sections(results, letters: list[str], op: str) -> list[Section]:
    """Per variant: what its run said, its drawing and heatmap (when its fabric can be drawn and its
    evaluation names a busiest step: one group's), and its rows."""
    from functools import partial

    from trnsim.outputs import draw
    from trnsim.outputs.collective import bound_caveat

    out = []
    for letter, result in zip(letters, results, strict=True):
        evaluation, topo = result.evaluation, result.topology
        notes = [f"{evaluation.ranks} ranks"]
        if (bound := getattr(evaluation, "bound", None)) is not None:
            notes = [
                f"{evaluation.ranks} ranks; routing {evaluation.routing.label}; bandwidth bound limited by "
                f"{bound.limited_by}" + bound_caveat(bound, evaluation.op, evaluation.ranks)
            ]
        if result.runtime != "ideal":  # the rows are the runtime's; the fabric's figures the ideal's
            notes.append(
                f"runtime {result.runtime}: {result.runtime_model}; bound, routing and heatmap: the ideal's"
            )
        if topo.faults:
            notes.append("failed: " + ", ".join(topo.faults))
        if (note := evaluation.alignment_note()) is not None:
            notes.append(note)
        reason = draw.drawable(topo)
        if reason is not None:
            notes.append(f"not drawn: {reason}")
        picture = draw.layout(topo) if reason is None else None
        heat = evaluation.busiest_links() if hasattr(evaluation, "busiest_links") else None
        out.append(
            Section(
                f"{letter} = {result.display}",
                notes,
                svg_of(partial(draw.save, picture)) if picture else "",
                svg_of(partial(draw.heatmap, topo, heat, title=f"{letter}: {op}"))
                if picture and heat
                else "",
                heat.describe() if heat else "",
                evaluation.rows,
            )
        )
    return out
