"""A bill's totals and shares from its lines."""

import pytest

from trnsim.studies.cost.bill import Bill, Line


def _line(part, quantity, price, power, network=True, fabric="scale-up"):
    return Line(part, "k", quantity, quantity, "each", price, power, "assumption: test", "test",
                network=network, fabric=fabric)  # fmt: skip


def test_totals_and_shares():
    bill = Bill(
        "s",
        4,
        [
            _line("chip", 4, 10, 100, network=False, fabric=None),
            _line("sw", 2, 5, 10),
            _line("nic", 4, 1, 5, fabric="scale-out"),
        ],
    )
    assert bill.capex_usd == 40 + 10 + 4
    assert bill.power_w == 400 + 20 + 20
    assert bill.network_capex_usd == 14 and bill.network_power_w == 40
    assert bill.network_capex_share == pytest.approx(14 / 54)
    assert bill.network_power_share == pytest.approx(40 / 440)
    assert bill.fabric_totals("scale-out") == (4, 20)
    totals = bill.totals()
    assert totals["capex_usd_per_chip"] == pytest.approx(54 / 4)
    assert totals["scale_up_capex_usd"] + totals["scale_out_capex_usd"] == bill.network_capex_usd
    assert bill.to_dict()["lines"][1]["capex_usd"] == 10


def test_an_empty_bill_has_no_share_and_no_nan():
    bill = Bill("s", 0, [])
    assert bill.network_capex_share == 0 == bill.network_power_share
    assert bill.totals()["capex_usd_per_chip"] == 0
