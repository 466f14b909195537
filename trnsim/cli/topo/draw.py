"""``trnsim topo draw``: a picture of the fabric (PNG, SVG or PDF)."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.cli.options import FailOption, SetOption, SkuOption, TopologyOption, edits
from trnsim.cli.topo.common import SkuArgument, app, count_text, load_topology, pick_sku


@app.command()
def draw(
    sku: SkuArgument = None,
    sku_option: SkuOption = None,
    topology: TopologyOption = None,
    overrides: SetOption = None,
    fail: FailOption = None,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The picture: .png, .svg or .pdf.", show_default=False)
    ] = ...,
    title: Annotated[str | None, typer.Option("--title", help="A title instead of the system's.")] = None,
) -> None:
    """Draw the fabric to a PNG, SVG or PDF file, links coloured by class.

    Tori as grids (3-D: a row of slices along the slowest axis, the links between slices as bands);
    switched fabrics as racks of trays with their chips, each tray's switches and each rack's switch
    planes as boxes, and the cross-rack cables. With --fail, what failed is drawn dashed in grey.
    Needs the plot extra (matplotlib).

    Examples:

        trnsim topo draw nl72x2 -o nl72x2.svg
        trnsim topo draw nl64 --fail chip:5 -o nl64.png
    """
    from trnsim.cli.options import picture_path
    from trnsim.outputs import draw as drawing

    picture_path(output, "-o")
    topo = load_topology(pick_sku(sku, sku_option), topology, edits(overrides, None, None, fail))
    picture = drawing.layout(topo)
    if title is not None:
        picture.title = title
    drawing.save(picture, output)
    counts = picture.title.split(": ", 1)[-1] if title is None else count_text(topo)
    typer.echo(f"wrote {output} ({counts}; {len(picture.segments)} drawn lines)", err=True)
