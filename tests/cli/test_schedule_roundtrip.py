"""Issue 26's round trip, as a user runs it: a schedule exported in each format, checked by
`trnsim schedule check`, and re-imported with `collective --schedule`, costs what the original did."""

import json

import pytest

SIZES = ["--sizes", "1M,1G"]


def _busbw(cli, *args) -> list[float]:
    result = cli("collective", *args, *SIZES, "--format", "json")
    assert result.code == 0, result.err
    return [row["busbw_gbps"] for row in json.loads(result.out)["rows"]]


def _round_trip(cli, tmp_path, system: list[str], algo: str, fmt: str, name: str) -> None:
    path = tmp_path / name
    original = _busbw(cli, "allreduce", *system, "--algo", algo, "--runtime", "ideal",
                      "--export-schedule", str(path), "--schedule-format", fmt)  # fmt: skip
    read = tmp_path / (name.replace(".et", ".0.et") if fmt == "chakra" else name)
    checked = cli("schedule", "check", str(read), "--format-out", "json")
    assert checked.code == 0, checked.err
    assert json.loads(checked.out)["collective"] == "allreduce"
    again = _busbw(cli, "allreduce", *system, "--schedule", str(read))
    assert again == pytest.approx(original, rel=1e-9), fmt


@pytest.mark.parametrize(
    ("fmt", "name"),
    [("msccl-xml", "ring.xml"), ("mscclpp-json", "ring-plan.json"), ("nccl-graph-xml", "ring-graph.xml"),
     ("chakra", "ring.et"), ("trnsim-schedule", "ring.json")],
)  # fmt: skip
def test_a_ring_on_nl16_comes_back_at_its_busbw_in_every_format(cli, tmp_path, fmt, name):
    _round_trip(cli, tmp_path, ["--sku", "nl16"], "ring", fmt, name)


def test_multidim_on_a_rack_block_of_nl72x2_comes_back_through_msccl_xml(cli, tmp_path):
    # 36 chips: two racks' first trays (a product of lines multidim runs on); the whole system's
    # stream shares are not small fractions, and MSCCL's equal chunks only approximate them
    _round_trip(cli, tmp_path, ["--sku", "nl72x2", "--group", "0-35"], "multidim", "msccl-xml", "md.xml")


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "name"), [("chakra", "md.et"), ("trnsim-schedule", "md.json")])
def test_the_whole_nl72x2_multidim_allreduce_comes_back_at_its_busbw(cli, tmp_path, fmt, name):
    _round_trip(cli, tmp_path, ["--sku", "nl72x2"], "multidim", fmt, name)


def test_a_format_that_cannot_hold_the_program_refuses_it_before_the_run(cli, tmp_path):
    path = tmp_path / "md-graph.xml"
    result = cli("collective", "allreduce", "--sku", "nl72x2", "--algo", "multidim", *SIZES,
                 "--export-schedule", str(path), "--schedule-format", "nccl-graph-xml")  # fmt: skip
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1 and not path.exists()
    assert "ring" in result.err


def test_the_suffix_picks_the_format_when_none_is_named(cli, tmp_path):
    for name, fmt in (("a.xml", "msccl-xml"), ("a.json", "trnsim-schedule/2")):
        path = tmp_path / name
        result = cli("collective", "allreduce", "--sku", "nl16", "--algo", "ring", *SIZES, "--runtime", "ideal",
                     "--export-schedule", str(path))  # fmt: skip
        assert result.code == 0, result.err
        checked = cli("schedule", "check", str(path), "--format-out", "json")
        assert json.loads(checked.out)["format"] == fmt, name
