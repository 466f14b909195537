"""The root command: exit codes, bare group commands, ``--debug`` and literal error text."""

from pathlib import Path

import pytest
from conftest import cli_commands

from trnsim.collectives.ops import OPS
from trnsim.errors import UsageError
from trnsim.spec.catalog import find_sku


@pytest.mark.parametrize("argv", [[], ["topo"], ["collective"], ["--debug", "topo"]])
def test_a_bare_group_prints_its_help_and_exits_2(cli, argv):
    result = cli(*argv)
    assert result.code == 2
    assert "Usage: trnsim" in result.err and result.out == ""
    assert result.err.count("Usage: trnsim") == 1  # once, not once per formatter


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["topo", "--help"], ["collective", "--help"]])
def test_help_exits_0_on_stdout(cli, argv):
    result = cli(*argv)
    assert result.code == 0 and "Usage: trnsim" in result.out


def test_version_exits_0(cli):
    result = cli("--version")
    assert result.code == 0 and result.out.startswith("trnsim ")


def test_a_usage_error_is_one_line_and_exits_2(cli):
    result = cli("topo", "show", "nope")
    assert result.code == 2
    assert result.err.startswith("error: unknown SKU 'nope'") and result.err.count("\n") == 1
    assert "Traceback" not in result.err


@pytest.mark.parametrize("where", ["first", "last"])
def test_debug_keeps_exit_2_and_shows_the_traceback(cli, where):
    argv = ["topo", "show", "nope"]
    argv = ["--debug", *argv] if where == "first" else [*argv, "--debug"]
    result = cli(*argv)
    assert result.code == 2
    assert "Traceback" in result.err and "UsageError: unknown SKU 'nope'" in result.err


def test_debug_keeps_exit_2_for_a_parser_error(cli):
    plain = cli("topo", "show", "nl16", "--no-such-option")
    assert plain.code == 2 and plain.err.count("\n") == 1 and "No such option" in plain.err
    debug = cli("--debug", "topo", "show", "nl16", "--no-such-option")
    assert debug.code == 2 and "Traceback" in debug.err


def _regression(cli, tmp_path, *extra):
    base = tmp_path / "base.json"
    sizes = ("--sku", "nl72x2", "--sizes", "1G")
    assert cli("compare", "alltoall", *sizes, "--save-baseline", str(base)).code == 0
    return cli(
        "compare",
        "alltoall",
        *sizes,
        "--set",
        "switched.cross_rack.lanes=8",
        "--baseline",
        str(base),
        "--max-regression",
        "5%",
        *extra,
    )


def test_a_failed_threshold_exits_1(cli, tmp_path):
    result = _regression(cli, tmp_path)
    assert result.code == 1 and "Traceback" not in result.err and "regression:" in result.err


def test_debug_keeps_exit_1_for_a_failed_threshold(cli, tmp_path):
    result = _regression(cli, tmp_path, "--debug")
    assert result.code == 1 and "Traceback" in result.err and "ThresholdError" in result.err


def test_an_internal_error_exits_2_with_and_without_debug(cli, monkeypatch):
    import trnsim.topology

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(trnsim.topology, "load_topology", broken)
    plain = cli("topo", "list")
    assert plain.code == 2 and "internal error: RuntimeError: a bug" in plain.err
    assert "Traceback" not in plain.err
    debug = cli("--debug", "topo", "list")
    assert debug.code == 2 and "Traceback" in debug.err


@pytest.mark.parametrize("name", ["[/]x[bold]", "[red]x[/red]", "[link=http://a]b", "\\[x]", ":smile:"])
def test_user_text_in_an_error_is_never_markup(cli, name):
    result = cli("topo", "show", name)
    assert result.code == 2
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert f"unknown SKU {name!r}" in result.err


def test_parser_error_text_is_never_markup(cli):
    result = cli("topo", "show", "nl16", "--[bold]x")
    assert result.code == 2 and "--[bold]x" in result.err and result.err.count("\n") == 1


def test_an_error_stays_on_one_line_when_user_text_has_a_line_break(cli, tmp_path):
    result = cli("topo", "show", "--topology", str(tmp_path / "two\nlines.yaml"))
    assert result.code == 2 and result.err.count("\n") == 1 and "two lines.yaml: no such file" in result.err


def _sku_cases(folder) -> dict[tuple[str, ...], list[str]]:
    """A command line per command that takes a SKU, with a topology file where the SKU goes."""
    file = str(find_sku("nl16"))
    log = str(Path(__file__).resolve().parents[2] / "examples" / "measurements" / "n5-allgather-32r.txt")
    lines = {
        ("compare",): ["allreduce", "--sku", file],
        ("report",): ["allreduce", "--sku", file, "-o", str(folder / "r.html")],
        # the engine options change nothing: the file is refused before any cluster is started or reached
        ("sweep",): ["--sku", file, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"],
        ("plot",): ["allreduce", "--sku", file, "--terminal"],
        ("design",): ["--sku", file],
        ("calibrate",): [log, "--sku", file],
        ("layout",): ["--sku", file, "--tp", "2"],
        ("faults",): [file, "--random", "2", "--engine", "dask", "--jobs", "2"],
        ("topo", "show"): [file],
        ("topo", "cost"): [file],
        ("topo", "hops"): ["--sku", file],
        ("topo", "path"): ["--sku", file, "0", "1"],
        ("topo", "export"): ["--sku", file],
        ("topo", "draw"): ["--sku", file, "-o", str(folder / "d.svg")],
        ("cluster", "fabric"): ["--sku", file, "--domains", "2"],
        ("cluster", "collective"): ["allreduce", "--sku", file, "--domains", "2"],
        ("measure-plan",): ["allreduce", "--sku", file],
    }
    for op in OPS:
        lines[("collective", op)] = ["--sku", file]
    return lines


def test_every_command_that_takes_a_sku_says_a_file_goes_to_topology(cli, tmp_path):
    cases = _sku_cases(tmp_path)
    takers = {path for path, command in cli_commands() if any("sku" in p.name for p in command.params)}
    assert set(cases) == takers  # a new command with a SKU gets a line here
    for path, args in cases.items():
        result = cli(*path, *args)
        assert result.code == 2 and result.out == "", (path, result.err)
        (line,) = result.err.splitlines()
        assert "is a file path, not a SKU name" in line and line.endswith("with --topology"), (path, line)


def test_a_non_finite_result_names_the_inputs_given(cli, monkeypatch):
    """A NaN in a result has no one input to blame: the message lists the options the run was given
    (not how its output is written)."""
    import trnsim.outputs.plain as plain
    import trnsim.outputs.render as render

    monkeypatch.setattr(
        plain, "check_finite", lambda value: (_ for _ in ()).throw(UsageError(render.NON_FINITE))
    )
    result = cli("collective", "allreduce", "--sku", "nl16", "--sizes", "1G", "--set", "latency.link_ns=7",
                 "--format", "csv")  # fmt: skip
    assert result.code == 2
    assert result.err == (
        f"error: {render.NON_FINITE} (given: --sku nl16 --sizes 1G --set latency.link_ns=7)\n"
    )
