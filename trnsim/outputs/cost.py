"""``trnsim topo cost``'s views of a bill of materials: the lines, the totals, the assumptions."""

from trnsim.outputs.table import PERCENT, Column, Table

_PER = {"each": "", "lane": " /lane", "gbit": " /Gbit/s"}


def _count(value: float) -> str:
    """A count: whole numbers with separators, a share of a cluster's switch with two decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _money(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == 0 else f"{value:,.3g}"


def _watts(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or value == 0 else f"{value:,.3g}"


def bill_rows(bill) -> list[dict]:
    """One row per line: what it is, how many, its unit figures and what it comes to."""
    capex, power = bill.capex_usd, bill.power_w
    return [
        {
            "kind": line.kind,
            "part": line.part,
            "fabric": line.fabric or "-",
            "medium": line.medium,
            "length": line.length,
            "count": line.count,
            "quantity": line.quantity,
            "per": line.per,
            "price_usd": line.price_usd,
            "power_w": line.power_w,
            "capex_usd": line.capex_usd,
            "total_power_w": line.total_power_w,
            "capex_share": line.capex_usd / capex if capex else 0.0,
            "power_share": line.total_power_w / power if power else 0.0,
            "network": line.network,
            "detail": line.detail,
        }
        for line in bill.lines
    ]


def bill_lines(bill) -> Table:
    """Every line with every field as a number or a name (:func:`bill_rows`): what ``-o bill.csv``
    writes and ``--format csv`` prints, for machines (the terminal's table shows units as text)."""
    rows = bill_rows(bill)
    return Table("", [Column(key, key) for key in rows[0]], rows)


def _unit_texts(row: dict) -> dict:
    """A row with its unit price and power as text with their unit (``50 /lane``)."""
    per = _PER.get(row["per"], f" /{row['per']}")
    return {**row, "unit_price": _money(row["price_usd"]) + per, "unit_power": _watts(row["power_w"]) + per}


def bill_tables(bill, where: str, overrides: str = "") -> list[Table]:
    """The bill (lines and totals in its footer) and the assumptions behind every figure
    (``overrides``: how the caller changes a figure, said in the second table's title)."""
    totals = bill.totals()
    lines = Table(
        f"{bill.system}: bill of materials ({bill.chips:,} chips)",
        [
            Column("kind", "kind", align="left"),
            Column("part", "part", align="left"),
            Column("medium", "medium", align="left", drop_priority=4),
            Column("length", "length", align="left", drop_priority=3),
            Column("count", "count", _count),
            Column("unit_price", "unit $", align="left"),
            Column("capex_usd", "capex $", "{:,.0f}"),
            Column("capex_share", "capex %", PERCENT, drop_priority=5),
            Column("unit_power", "unit W", align="left", drop_priority=6),
            Column("total_power_w", "power W", "{:,.0f}"),
            Column("power_share", "power %", PERCENT, drop_priority=7),
            Column("detail", "detail", align="left", drop_priority=2),
            # the unit figures as numbers, for CSV and Markdown (a terminal shows them as text above)
            Column("price_usd", "price_usd", "{:g}", drop_priority=10),
            Column("power_w", "power_w", "{:g}", drop_priority=9),
            Column("per", "per", align="left", drop_priority=8),
        ],
        [_unit_texts(row) for row in bill_rows(bill)],
        footer=totals_text(totals) + [f"system file: {where}"],
    )
    return [lines, assumptions_table(bill, overrides)]


def totals_text(totals: dict) -> list[str]:
    """The totals as the footer says them."""
    return [
        f"capex ${totals['capex_usd']:,.0f} (${totals['capex_usd_per_chip']:,.0f} per chip); power "
        f"{totals['power_w'] / 1e3:,.1f} kW ({totals['power_w_per_chip']:,.0f} W per chip)",
        f"network capex ${totals['network_capex_usd']:,.0f} = {100 * totals['network_capex_share']:.1f}% of "
        f"the system's; network power {totals['network_power_w'] / 1e3:,.1f} kW = "
        f"{100 * totals['network_power_share']:.1f}% of the system's",
        f"of which scale-up ${totals['scale_up_capex_usd']:,.0f} and {totals['scale_up_power_w'] / 1e3:,.1f} kW, "
        f"scale-out ${totals['scale_out_capex_usd']:,.0f} and {totals['scale_out_power_w'] / 1e3:,.1f} kW",
    ]


def assumptions_table(bill, overrides: str = "") -> Table:
    """Every part the bill prices with where its figures come from, and how the bill was counted."""
    seen: dict[str, dict] = {}
    for line in bill.lines:
        seen.setdefault(line.part, {"part": line.part, "from": line.origin, "source": line.source})
    return Table(
        "where each figure comes from" + (f" ({overrides})" if overrides else ""),
        [
            Column("part", "part", align="left"),
            Column("source", "source", align="left"),
            Column("from", "file", align="left", drop_priority=1),
        ],
        list(seen.values()),
        footer=[*bill.notes, *COUNTING_NOTES],
    )


# how the bill counts, said under every bill (docs/guide/cost.md says it at length)
COUNTING_NOTES = [
    "counted from the built system: chips, switch chips by model, switch trays, links by medium and length "
    "class (in-node, in-rack, cross-rack), retimers where the file declares them, transceivers of optical links",
    "not counted: hosts (CPUs, memory), compute-tray boards, racks, power delivery and cooling; a chip's price "
    "includes its HBM",
    "assumptions of the scale-out count: a NIC of the part's capacity serves capacity / rate chips; passive "
    "copper from chip to ToR; optics above the ToR, one transceiver at each end of a link",
]
