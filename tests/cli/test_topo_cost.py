"""``trnsim topo cost``: every catalog system gets a bill or one clear line, the outputs agree, user
text is printed as text."""

import csv
import json

import pytest

from tests.conftest import CATALOG
from trnsim.spec.catalog import load_spec
from trnsim.spec.parts_catalog import load_parts

PRICED_CHIPS = set(load_parts().names)


@pytest.mark.parametrize("path", CATALOG, ids=lambda path: path.stem)
def test_every_catalog_system_gets_a_bill_or_one_line_saying_which_part_is_missing(cli, path):
    result = cli("topo", "cost", path.stem, "--format", "json")
    chip = load_spec(path.stem).spec.chip.name
    if chip in PRICED_CHIPS:
        assert result.code == 0, result.err
        bill = json.loads(result.out)
        assert bill["capex_usd"] == pytest.approx(sum(line["capex_usd"] for line in bill["lines"]))
        assert bill["power_w"] == pytest.approx(sum(line["total_power_w"] for line in bill["lines"]))
        network = sum(line["capex_usd"] for line in bill["lines"] if line["network"])
        assert bill["network_capex_share"] == pytest.approx(network / bill["capex_usd"])
    else:
        assert result.code == 2 and result.out == ""
        (line,) = result.err.splitlines()
        assert f"no part {chip!r} (chip of {path.stem})" in line and "price_usd" in line


def test_an_edit_moves_the_totals_by_what_it_names(cli):
    base = json.loads(cli("topo", "cost", "nl72x2", "--format", "json").out)
    edited = json.loads(
        cli("topo", "cost", "nl72x2", "--set", "parts.aec.price_usd=100", "--format", "json").out
    )
    assert edited["capex_usd"] - base["capex_usd"] == pytest.approx(50 * 18 * 4 * 16)
    assert edited["network_capex_usd"] - base["network_capex_usd"] == pytest.approx(50 * 18 * 4 * 16)
    assert edited["power_w"] == base["power_w"]


def test_the_table_says_the_totals_and_every_source(cli):
    result = cli("topo", "cost", "nl72x2", "--wide")
    assert result.code == 0, result.err
    assert "network capex $" in result.out and "% of the system's" in result.out
    for part in ("trainium3", "scorpio-x-160", "aec", "nic-efa", "transceiver"):
        assert part in result.out
    assert result.out.count("assumption") >= 5


def test_outputs_to_files_agree_with_stdout(cli, tmp_path):
    stdout = json.loads(cli("topo", "cost", "nl64", "--format", "json").out)
    written = tmp_path / "bill.json"
    result = cli("topo", "cost", "nl64", "-o", str(written))
    assert result.code == 0 and f"wrote {written}" in result.err
    document = json.loads(written.read_text())
    assert document["capex_usd"] == stdout["capex_usd"] and document["lines"] == stdout["lines"]
    table = tmp_path / "bill.csv"
    assert cli("topo", "cost", "nl64", "-o", str(table)).code == 0
    rows = list(csv.DictReader(table.open()))
    assert [row["part"] for row in rows] == [line["part"] for line in stdout["lines"]]
    assert sum(float(row["capex_usd"]) for row in rows) == pytest.approx(stdout["capex_usd"])
    printed = cli("topo", "cost", "nl64", "--format", "csv")
    assert printed.code == 0 and printed.out == table.read_text()  # numbers, as the file has them
    assert all(float(row["price_usd"]) >= 0 and row["per"] in ("each", "lane", "gbit") for row in rows)


def test_an_output_of_another_kind_is_refused(cli, tmp_path):
    result = cli("topo", "cost", "nl64", "-o", str(tmp_path / "bill.txt"))
    assert result.code == 2 and result.err.startswith("error: -o ") and ".csv or .json" in result.err


def test_a_bad_parts_file_is_one_line_with_the_file_and_the_key(cli, tmp_path):
    path = tmp_path / "parts.yaml"
    path.write_text("parts:\n  aec: {power_w: lots}\n")
    result = cli("topo", "cost", "nl72x2", "--parts", str(path))
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert line.startswith(f"error: {path}: parts.aec.power_w: expected")


def test_a_parts_file_goes_over_the_default_and_the_edits_over_it(cli, tmp_path):
    path = tmp_path / "parts.yaml"
    path.write_text("parts:\n  trainium3: {price_usd: 1000}\n")
    bill = json.loads(cli("topo", "cost", "nl72x2", "--parts", str(path), "--format", "json").out)
    assert bill["lines"][0]["price_usd"] == 1000
    args = ("--parts", str(path), "--set", "parts.trainium3.price_usd=2000", "--format", "json")
    bill = json.loads(cli("topo", "cost", "nl72x2", *args).out)
    assert bill["lines"][0]["price_usd"] == 2000


def test_user_text_is_never_markup(cli, tmp_path):
    path = tmp_path / "parts.yaml"
    path.write_text(
        'parts:\n  aec: {price_usd: 60, source: "assumption: [bold red]loud[/bold red] :fire:"}\n'
    )
    result = cli("topo", "cost", "nl72x2", "--parts", str(path), "--wide")
    assert result.code == 0, result.err
    (row,) = [line for line in result.out.splitlines() if "loud" in line]
    assert "assumption: [bold red]loud[/bold red] :fire:" in row  # one line: --wide wraps nothing


def test_domains_are_checked(cli):
    result = cli("topo", "cost", "nl72x2", "--domains", "0")
    assert result.code == 2


def test_a_scale_out_refusal_names_the_edit_that_changes_it(cli):
    result = cli("topo", "cost", "nl72x2", "--set", "scale_out.tor_tbit=1")
    assert result.code == 2 and result.out == ""
    (line,) = result.err.splitlines()
    assert "use a larger --set scale_out.tor_tbit" in line and "--tor-tbit" not in line
    result = cli("topo", "cost", "nl72x2", "--domains", "16000000")
    assert result.code == 2 and result.err.startswith("error: --domains 16,000,000: ")
