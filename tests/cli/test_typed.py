"""What the command line typed: variants in the order given across --sku and --topology, and options
that act only with --baseline refused without it, on every command that has them."""

import json
from types import SimpleNamespace

import pytest
from conftest import cli_commands

from trnsim.cli.typed import in_typed_order
from trnsim.spec.catalog import find_sku

NL64 = str(find_sku("nl64"))
GEN2 = str(find_sku("trn3-nl72x2-gen2"))


def _labels(result) -> list[str]:
    assert result.code == 0, result.err
    return [variant["label"] for variant in json.loads(result.out)["variants"]]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--topology", NL64, "--sku", "nl16"], ["trn2-nl64", "trn2-nl16"]),
        (["--sku", "nl16", "--topology", NL64], ["trn2-nl16", "trn2-nl64"]),
        (
            ["--sku=nl72x2", "--topology", NL64, "--sku", "nl16", f"--topology={GEN2}"],
            ["trn3-nl72x2-gen1", "trn2-nl64", "trn2-nl16", "trn3-nl72x2-gen2"],
        ),
    ],
)
def test_compare_keeps_the_variants_in_the_order_typed(cli, argv, expected):
    result = cli("compare", "allreduce", *argv, "--sizes", "1M", "--format", "json")
    assert _labels(result) == expected
    # A, the first typed, is the base of the ratios
    (row,) = json.loads(result.out)["rows"]
    assert row["ratios"][expected[0]] == 1
    for label in expected[1:]:
        want = row["values"][label]["busbw_gbps"] / row["values"][expected[0]]["busbw_gbps"]
        assert row["ratios"][label] == pytest.approx(want, rel=1e-12)


def test_sweep_keeps_the_order_typed_and_puts_the_catalog_where_all_stands(cli):
    result = cli(
        "sweep", "--topology", NL64, "--sku", "nl16", "--op", "allreduce", "--sizes", "1M", "--format", "json"
    )
    assert _labels(result) == ["trn2-nl64", "trn2-nl16"]
    whole = cli(
        "sweep", "--sku", "nl16", "--sku", "all", "--op", "allreduce", "--sizes", "1M", "--format", "json"
    )
    labels = _labels(whole)
    assert labels[0] == "trn2-nl16" and len(labels) == len(set(labels))


def test_every_command_that_names_variants_keeps_their_order():
    # the order is the parser's: a command that takes both lists must record it
    for path, command in cli_commands():
        names = {param.name for param in command.params}
        if {"sku", "topology"} <= names and any(p.multiple for p in command.params if p.name == "sku"):
            assert type(command).__name__ == "OrderedCommand", path


def test_the_order_falls_back_to_the_lists_without_a_parser_record():
    ctx = SimpleNamespace(meta={})
    assert in_typed_order(ctx, sku=["a", "b"], topology=["f"]) == [
        ("sku", "a"),
        ("sku", "b"),
        ("topology", "f"),
    ]
    # a record that does not account for every value (a default, an environment variable) is not used
    ctx.meta["trnsim.typed_order"] = ["topology", "sku"]
    assert in_typed_order(ctx, sku=["a", "b"], topology=["f"])[0] == ("sku", "a")
    ctx.meta["trnsim.typed_order"] = ["sku", "topology", "op", "sku"]
    assert in_typed_order(ctx, sku=["a", "b"], topology=["f"]) == [
        ("sku", "a"),
        ("topology", "f"),
        ("sku", "b"),
    ]


_CHECK_OPTIONS = {"max_regression": "5%", "require_all_rows": None}


def _threshold_cases():
    cases = []
    for path, command in cli_commands():
        params = {param.name: param for param in command.params}
        for name, value in _CHECK_OPTIONS.items():
            if name in params:
                # required arguments (the op) get a valid value: the refusal is not about them
                arguments = [
                    "allreduce" for p in command.params if p.param_type_name == "argument" and p.required
                ]
                flag = params[name].opts[0]
                cases.append([*path, *arguments, flag, *([value] if value else [])])
    return cases


def test_threshold_options_are_found_on_compare_and_sweep():
    found = {tuple(case[:1]) for case in _threshold_cases()}
    assert found >= {("compare",), ("sweep",)}


@pytest.mark.parametrize("argv", _threshold_cases(), ids=" ".join)
def test_a_check_option_without_a_baseline_is_refused_before_the_work(cli, argv):
    # the default value typed out (--max-regression 5%) is refused too: it is the typing that counts
    result = cli(*argv, "--sku", "nl16", "--sizes", "1M")
    assert result.code == 2 and result.out == ""
    option = next(arg for arg in argv if arg.startswith("--"))
    (line,) = result.err.splitlines()
    assert option in line and "--baseline" in line
