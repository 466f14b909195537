"""``trnsim faults`` takes systems and sizes as the other commands do."""

import json

import pytest


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


def test_faults_on_the_command_line(cli):
    result = cli("faults", "nl64", "nl72x2", "--op", "allreduce", "--domains", "10", "--format", "json")
    assert result.code == 0, result.err
    systems = {s["system"]: s for s in json.loads(result.out)["systems"]}
    nl64 = {row["kind"]: row for row in systems["trn2-nl64"]["classes"]}
    assert nl64["chip"]["chips_lost_max"] == 64 and nl64["link z"]["chips_lost_max"] == 0
    assert (
        systems["trn2-nl64"]["reliability"]["availability"]
        < systems["trn3-nl72x2-gen1"]["reliability"]["availability"]
    )
    assert systems["trn3-nl72x2-gen1"]["straggler"]["expected_slowdown"] >= 1.0
    fit = cli("faults", "nl16", "--op", "allreduce", "--failure-rate", "chip=1e4", "--format", "json")
    assert json.loads(fit.out)["rates_mttf_h"]["chip"] == pytest.approx(1e5)  # 10^9 h / 10^4 failures
    for bad in (
        ("--blast-radius", "x"),
        ("--mttf", "chip"),
        ("--mttf", "chip=-1"),
        ("--kind", "nope"),
        ("--failure-rate", "chip=0"),
    ):
        failed = cli("faults", "nl16", *bad)
        assert failed.code == 2 and "Traceback" not in failed.err
    assert cli("faults").code == 2
    tiny = cli("faults", "nl16", "--sizes", "1")
    assert tiny.code == 2 and "--sizes 1" in tiny.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mttr", "nan"], "error: --mttr nan is not a finite number"),  # the option's range let nan through
        (["--sizes", "-1G"], "error: --sizes: size '-1G' is negative"),
        (["--sizes", ""], "error: --sizes needs at least one size"),  # was run silently at 1 GiB
    ],
)
def test_bad_faults_options_are_named(cli, args, message):
    result = cli("faults", "nl16", *args)
    assert result.code == 2 and result.err.strip().splitlines()[0].startswith(message), result.err
    assert len(result.err.strip().splitlines()) == 1


def test_the_default_rates_are_labelled_as_their_sources_have_them(cli):
    """Each default MTTF is an assumption exactly when its source says so (the README's failure-rate
    table); a rate or MTTR the user gives is labelled by its option instead."""
    from trnsim.studies.faults import RATES

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


def test_faults_under_a_runtime_price_before_and_after_each_failure(cli):
    """A chip failure leaves 7 GPUs on the switches: NCCL's tuner prices both, and the loss is the
    drop of its busbw (checked against `collective --runtime nccl` on each system)."""
    import json

    argv = ["faults", "h100", "--op", "allreduce", "--kind", "chip", "--sizes", "1G", "--format", "json"]
    result = cli(*argv, "--runtime", "nccl")
    assert result.code == 0, result.err
    system = json.loads(result.out)["systems"][0]
    assert system["runtime"] == "nccl"
    before = json.loads(
        cli(
            "collective",
            "allreduce",
            "--sku",
            "h100",
            "--sizes",
            "1G",
            "--runtime",
            "nccl",
            "--format",
            "json",
        ).out
    )
    assert system["healthy_busbw_gbps"][0]["busbw_gbps"] == before["rows"][0]["busbw_gbps"]
    worst = system["classes"][0]
    after = json.loads(
        cli("collective", "allreduce", "--sku", "h100", "--sizes", "1G", "--runtime", "nccl",
            "--fail", worst["worst_part"], "--format", "json").out
    )["rows"][0]["busbw_gbps"]  # fmt: skip
    assert worst["worst_loss"] == pytest.approx(1 - after / before["rows"][0]["busbw_gbps"], rel=1e-9)
    ideal = json.loads(cli(*argv, "--runtime", "ideal").out)["systems"][0]
    assert "runtime" not in ideal


def test_faults_refuse_a_runtime_that_cannot_price_a_failure(cli):
    result = cli("faults", "h100", "--op", "allreduce", "--kind", "link nvlink", "--runtime", "nccl")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert result.err.startswith("error: with link:") and "--runtime nccl on hgx-h100" in result.err
    first = cli("faults", "nl16", "h100", "--op", "allreduce", "--runtime", "nccl")
    assert first.code == 2 and "trn2-nl16" in first.err
