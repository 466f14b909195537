"""``trnsim topo list``: the catalog."""

from trnsim.cli.options import FormatOption
from trnsim.cli.topo.common import app
from trnsim.outputs.render import Column, Format, Table, emit
from trnsim.studies.structure import counts


@app.command("list")
def list_(fmt: FormatOption = Format.table) -> None:
    """List the catalog: name, aliases, chip, chips, switches, kind, per-chip GB/s, source file.

    Examples:

        trnsim topo list
        trnsim topo list --format json
    """
    from trnsim.spec.catalog import catalog_files
    from trnsim.topology import load_topology
    from trnsim.topology.metrics import device_bandwidth_gbps

    rows = []
    for path in catalog_files():
        topology = load_topology(topology=path)
        rows.append(
            {
                "name": topology.name,
                "aliases": list(topology.spec.aliases),
                "chip": topology.spec.chip.name,
                **{k: v for k, v in counts(topology).items() if k in ("chips", "ranks", "switches")},
                "kind": topology.spec.kind,
                "chip_raw_bw_gbps": max(device_bandwidth_gbps(topology, raw=True).values()),
                "chip_bw_gbps": max(device_bandwidth_gbps(topology).values()),
                "source": f"topologies/{path.name}",
            }
        )
    rows.sort(key=lambda r: (r["chip"], r["kind"] == "switched", r["chips"], r["name"]))
    # aliases are a list in JSON (as in `topo show`); the table, CSV and Markdown views join them
    table_rows = [{**row, "aliases": ", ".join(row["aliases"])} for row in rows]
    table = Table(
        "trnsim catalog",
        [
            Column("name", "name", align="left"),
            Column("aliases", "aliases", align="left", drop_priority=3),
            Column("chip", "chip", align="left", drop_priority=2),
            Column("chips", "chips"),
            Column("ranks", "ranks", drop_priority=4),
            Column("switches", "switches"),
            Column("kind", "topology", align="left"),
            Column("chip_raw_bw_gbps", "raw GB/s per chip", "{:,.0f}"),
            Column("chip_bw_gbps", "effective", "{:,.0f}"),
            Column("source", "file", align="left", drop_priority=5),
        ],
        table_rows,
    )
    emit({"skus": rows}, [table], fmt)
