"""topo cost's views: the rows hold every line's figures, the footer the totals."""

import pytest

from trnsim.outputs.cost import bill_rows, bill_tables, totals_text
from trnsim.studies.cost import bill_of_materials
from trnsim.topology import load_topology


@pytest.fixture(scope="module")
def bill():
    return bill_of_materials(load_topology("trn3-nl32x2-gen1"))


def test_rows_hold_each_line_and_its_shares(bill):
    rows = bill_rows(bill)
    assert len(rows) == len(bill.lines)
    assert sum(row["capex_share"] for row in rows) == pytest.approx(1)
    assert sum(row["power_share"] for row in rows) == pytest.approx(1)
    assert [row["capex_usd"] for row in rows] == [line.capex_usd for line in bill.lines]


def test_the_footer_says_the_network_and_its_shares(bill):
    totals = bill.totals()
    text = " ".join(totals_text(totals))
    assert f"${totals['network_capex_usd']:,.0f}" in text
    assert f"{100 * totals['network_capex_share']:.1f}% of the system's" in text
    assert f"{100 * totals['network_power_share']:.1f}% of the system's" in text


def test_unit_prices_carry_their_unit_and_the_sources_table_every_part(bill):
    lines, sources = bill_tables(bill, "file", "how")
    units = {row["part"]: row["unit_price"] for row in lines.rows}
    assert (
        units["aec"] == "50 /lane"
        and units["transceiver"] == "0.8 /Gbit/s"
        and units["trainium3"] == "12,000"
    )
    assert [row["part"] for row in sources.rows] == list(dict.fromkeys(line.part for line in bill.lines))
    assert sources.title.endswith("(how)")
