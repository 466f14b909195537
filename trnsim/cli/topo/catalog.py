"""``trnsim topo list``: the catalog."""

from trnsim.cli.options import FormatOption
from trnsim.cli.topo.common import app
from trnsim.outputs.render import Column, Format, Table


@app.command("list")
def list_(fmt: FormatOption = Format.table) -> None:
    """List the catalog: name, aliases, chip, chips, switches, kind, per-chip GB/s, source file.

    Examples:

        trnsim topo list
        trnsim topo list --format json
    """
    from trnsim.cli.outcome import Outcome, key_of, remember, replay
    from trnsim.spec.catalog import catalog_files

    files = catalog_files()
    key = key_of("topo list", {"fmt": fmt}, files)
    if replay(key, fmt):
        return
    rows = [_row(path) for path in files]
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
    outcome = Outcome({"skus": rows}, [table])
    outcome.show(fmt)
    remember(key, outcome)


def _row(path) -> dict:
    """A catalog file's row, from the system it builds; kept on disk by the file's bytes, so that
    an edit to one file builds that system alone (:mod:`trnsim.cache`)."""
    from trnsim import cache
    from trnsim.spec.names import system_bytes

    content = system_bytes(path)
    try:
        key = None if content is None else cache.digest("topo list row", path.name, content)
    except cache.Unkeyable:  # a file name that is no Unicode
        key = None
    if key is None:  # no file to read (building it says why), or no key: built as always
        return _built_row(path)
    return cache.cached("catalog", key, lambda: _built_row(path))


def _built_row(path) -> dict:
    from trnsim.studies.structure import counts
    from trnsim.topology import load_topology
    from trnsim.topology.metrics import device_bandwidth_gbps

    topology = load_topology(topology=path)
    return {
        "name": topology.name,
        "aliases": list(topology.spec.aliases),
        "chip": topology.spec.chip.name,
        **{k: v for k, v in counts(topology).items() if k in ("chips", "ranks", "switches")},
        "kind": topology.spec.kind,
        "chip_raw_bw_gbps": max(device_bandwidth_gbps(topology, raw=True).values()),
        "chip_bw_gbps": max(device_bandwidth_gbps(topology).values()),
        "source": f"topologies/{path.name}",
    }
