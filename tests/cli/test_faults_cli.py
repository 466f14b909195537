"""``trnsim faults`` takes systems and sizes as the other commands do."""

import json


def _json(cli, *args: str) -> dict:
    result = cli("faults", *args, "--op", "allreduce", "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_sku_option_names_a_system_as_the_argument_does(cli):
    assert _json(cli, "--sku", "nl16", "--sizes", "1M") == _json(cli, "nl16", "--sizes", "1M")
    both = _json(cli, "nl16", "--sku", "nl64", "--sizes", "1M")
    assert [system["system"] for system in both["systems"]] == ["trn2-nl16", "trn2-nl64"]


def test_a_size_sweep_is_the_list_it_stands_for(cli):
    swept = _json(cli, "nl16", "-b", "1M", "-e", "4M", "-f", "2")
    assert swept["sizes"] == [1 << 20, 2 << 20, 4 << 20]
    assert swept == _json(cli, "nl16", "--sizes", "1M,2M,4M")
    assert _json(cli, "nl16")["sizes"] == [1 << 30]  # the default stays one size, 1 GiB
    mixed = cli("faults", "nl16", "-b", "1M", "--sizes", "1G")
    assert mixed.code == 2 and "not both" in mixed.err
    tiny = cli("faults", "nl16", "-b", "1", "-e", "1")
    assert tiny.code == 2 and tiny.err.startswith("error: -b 1 -e 1:")


def test_csv_is_one_table_of_one_shape(cli):
    import csv
    import io

    args = ("faults", "nl16", "nl64", "--op", "allreduce", "--sizes", "1M", "--random", "2", "--samples", "2")
    result = cli(*args, "--format", "csv")
    assert result.code == 0, result.err
    rows = list(csv.reader(io.StringIO(result.out)))
    assert len({len(row) for row in rows}) == 1 and not any(row[0].startswith("#") for row in rows)
    header, body = rows[0], rows[1:]
    # the rows are JSON's per-class rows, each with its system, in order
    document = json.loads(cli(*args, "--format", "json").out)
    expected = [
        {"system": system["system"], **row} for system in document["systems"] for row in system["classes"]
    ]
    assert [dict(zip(header, row, strict=True)) for row in body] == [
        {key: str(row[key]) for key in header} for row in expected
    ]
    # what CSV leaves out is in JSON, and stderr says so
    assert "side_by_side" in document and all(system["random"] for system in document["systems"])
    assert "random draws are in --format json" in result.err


def test_the_default_rates_are_labelled_as_their_sources_have_them(cli):
    """Each default MTTF is an assumption exactly when its source says so (the README's failure-rate
    table); a rate or MTTR the user gives is labelled by its option instead."""
    from trnsim.reliability import RATES

    data = _json(cli, "nl16", "--sizes", "1M")
    expected = {name: "assumption" if "assumption" in text else "cited" for name, (_, text) in RATES.items()}
    assert data["rates_basis"] == expected and set(expected.values()) == {"assumption", "cited"}
    assert data["rates_source"] == {name: text for name, (_, text) in RATES.items()}
    assert data["mttr_basis"] == "assumption"
    by_class = data["systems"][0]["reliability"]["by_class"]
    assert all(row["mttf_basis"] == expected[row["rate_class"]] for row in by_class)
    table = cli("faults", "nl16", "--op", "allreduce", "--sizes", "1M").out
    assert "MTTR 24 h, an assumption" in table and "MTTF is" in table
    assert max(len(line) for line in table.splitlines()) <= 80
    given = _json(cli, "nl16", "--sizes", "1M", "--mttf", "chip=1000", "--mttr", "5")
    assert (given["rates_basis"]["chip"], given["mttr_basis"]) == ("--mttf", "--mttr")
    assert "chip" not in given["rates_source"]
