"""No output replaces an input: every output option of every command, checked before any work."""

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CATALOG
from trnsim.cli.files import OUTPUTS, _labels

ROOT = Path(__file__).resolve().parents[2]
MEASUREMENT = ROOT / "examples" / "measurements" / "n2-allreduce-2r-gbs.txt"
NL16 = next(path for path in CATALOG if path.stem == "trn1-nl16")

# (command line with FILE standing for one file given as an input and as an output, output option,
# how the input is named in the message); FILE's name carries the suffix the output option wants
CASES = [
    (["calibrate", "FILE.txt", "--sku", "nl16", "-o", "FILE.txt"], "-o", "MEASUREMENT"),
    (["topo", "export", "--topology", "FILE.yaml", "-o", "FILE.yaml"], "-o", "--topology"),
    (["topo", "draw", "--topology", "FILE.png", "-o", "FILE.png"], "-o", "--topology"),
    (["topo", "cost", "--topology", "FILE.json", "-o", "FILE.json"], "-o", "--topology"),
    (["topo", "cost", "nl16", "--parts", "FILE.csv", "-o", "FILE.csv"], "-o", "--parts"),
    (["collective", "allreduce", "--topology", "FILE.json", "--export-schedule", "FILE.json"],
     "--export-schedule", "--topology"),
    (["collective", "alltoall", "--sku", "nl16", "--traffic", "FILE.png", "--heatmap", "FILE.png"],
     "--heatmap", "--traffic"),
    (["compare", "allreduce", "--topology", "FILE.yaml", "--save-baseline", "FILE.yaml"],
     "--save-baseline", "--topology"),
    (["compare", "allreduce", "--sku", "nl16", "--baseline", "FILE.json", "--save-baseline", "FILE.json"],
     "--save-baseline", "--baseline"),
    (["compare", "allreduce", "--sku", "nl16", "--set", "calibration=FILE.json", "--save-baseline",
      "FILE.json"], "--save-baseline", "the calibration file"),
    (["compare", "allreduce", "--topology", "FILE-A.png", "--heatmap", "FILE.png"], "--heatmap", "--topology"),
    (["sweep", "--sku", "nl16", "--calibration", "FILE.json", "-o", "FILE.json"], "-o", "--calibration"),
    (["sweep", "--topology", "FILE.json", "--save-baseline", "FILE.json"], "--save-baseline", "--topology"),
    (["sweep", "--topology", "FILE.csv", "--engine", "dask", "--jobs", "2", "-o", "FILE.csv"], "-o", "--topology"),
    (["plot", "allreduce", "--sku", "nl16", "--measured", "FILE.png", "-o", "FILE.png"], "-o", "--measured"),
    (["report", "allreduce", "--sku", "nl16:calibration=FILE.html", "-o", "FILE.html"], "-o",
     "the calibration file"),
    (["measure-plan", "allreduce", "--topology", "FILE.yaml", "-o", "FILE.yaml"], "-o", "--topology"),
    (["design", "--topology", "FILE.json", "-o", "FILE.json"], "-o", "--topology"),
    (["design", "--sku", "nl16", "--parts", "FILE.png", "--plot", "FILE.png"], "--plot", "--parts"),
]  # fmt: skip
# output options of commands that read no file: nothing to replace (`topo new` refuses an existing
# file unless --force: tests/cli/test_topo_cli.py)
READS_NO_FILE = {("topo new", "-o")}


def _command(argv: list[str]) -> str:
    words = [word for word in argv[:2] if not word.startswith("-")]
    return (
        "collective" if words[0] == "collective" else " ".join(words[:2] if words[0] == "topo" else words[:1])
    )


def test_the_cases_cover_every_output_option_of_every_command():
    import inspect

    from tests.conftest import cli_commands

    found = set()
    for path, command in cli_commands():
        labels = _labels(inspect.unwrap(command.callback))  # typer's wrapper, then guarded()
        found.update((_command(list(path)), labels[p]) for p in OUTPUTS if p in labels)
    assert found == {(_command(argv), option) for argv, option, _ in CASES} | READS_NO_FILE


@pytest.mark.parametrize(
    ("argv", "option", "source"), CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_an_output_that_is_an_input_is_refused_before_any_work(
    cli, tmp_path, monkeypatch, argv, option, source
):
    monkeypatch.chdir(tmp_path)
    name = next(word for word in argv if word.startswith("FILE") or "=FILE" in word).split("=")[-1]
    if "FILE-A" in name:
        name = "FILE-A.png"
    content = MEASUREMENT.read_bytes() if argv[0] == "calibrate" else NL16.read_bytes()
    Path(name).write_bytes(content)
    result = cli(*argv)
    assert result.code == 2 and result.out == "", result
    (line,) = result.err.splitlines()
    assert line.startswith(f"error: {option} ") and f"is the same file as {source}" in line, line
    assert line.count(name) >= 2  # both paths named
    assert Path(name).read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == [name]


@pytest.mark.parametrize("spelling", ["./sub/../in.yaml", "link.yaml", "hard.yaml", "ABSOLUTE"])
def test_relative_paths_symlinks_and_hard_links_name_the_same_file(cli, tmp_path, monkeypatch, spelling):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    source = tmp_path / "in.yaml"
    shutil.copy(NL16, source)
    Path("link.yaml").symlink_to(source)
    os.link(source, "hard.yaml")
    output = str(source) if spelling == "ABSOLUTE" else spelling
    shown = str(Path(output))  # as Path prints it (no leading ./)
    result = cli("topo", "export", "--topology", "in.yaml", "-o", output)
    assert result.code == 2 and f"-o {shown} is the same file as --topology in.yaml" in result.err
    assert source.read_bytes() == NL16.read_bytes()


def test_two_outputs_naming_one_file_are_refused(cli, tmp_path):
    output = tmp_path / "r.json"
    result = cli(
        "sweep", "--sku", "nl16", "-o", str(output), "--save-baseline", str(tmp_path / "." / "r.json")
    )
    assert result.code == 2 and "name the same file: give each output its own" in result.err
    assert not output.exists()


def test_a_catalog_file_is_never_an_output(cli, tmp_path):
    before = NL16.read_bytes()
    result = cli("topo", "export", "nl64", "-o", str(NL16))
    assert result.code == 2 and f"is the catalog file {NL16}" in result.err
    assert NL16.read_bytes() == before


def test_other_outputs_still_work(cli, tmp_path):
    source = tmp_path / "in.yaml"
    shutil.copy(NL16, source)
    result = cli("topo", "export", "--topology", str(source), "-o", str(tmp_path / "out.graphml"))
    assert result.code == 0 and (tmp_path / "out.graphml").read_text().startswith("<?xml")


N5 = str(CATALOG[0].parent.parent / "examples" / "measurements" / "n5-allgather-32r.txt")


@pytest.mark.parametrize(
    ("argv", "name", "message"),
    [
        (
            ["calibrate", N5, "--sku", "trn1-nl16"],
            "cal.json",
            "the file is a calibration file (YAML), not JSON",
        ),
        (
            ["topo", "export", "nl16", "--format", "graphml"],
            "x.json",
            "the file is graphml (--format graphml), not JSON",
        ),
        (["topo", "export", "nl16", "--format", "json"], "x.dot", "not Graphviz dot; name it x.json"),
        (
            ["sweep", "--sku", "nl16", "--sizes", "1M", "--format", "json"],
            "s.csv",
            "s.csv writes CSV (by its suffix) but --format json",
        ),
        (
            ["sweep", "--sku", "nl16", "--sizes", "1M", "--format", "markdown"],
            "s.json",
            "--format markdown is for stdout",
        ),
    ],
)
def test_an_output_named_for_another_format_is_refused(cli, tmp_path, argv, name, message):
    result = cli(*argv, "-o", str(tmp_path / name))
    assert result.code == 2 and message in result.err and len(result.err.splitlines()) == 1
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["calibrate", N5, "--sku", "trn1-nl16"], "cal.yml"),
        (["calibrate", N5, "--sku", "trn1-nl16"], "cal"),
        (["topo", "export", "nl16", "--format", "graphml"], "x.xml"),
        (["topo", "export", "nl16", "--format", "dot"], "x.gv"),
        (["topo", "export", "nl16", "--format", "astra-sim"], "x.yaml"),
        (["sweep", "--sku", "nl16", "--sizes", "1M", "--format", "csv"], "s.csv"),
    ],
)
def test_an_output_named_for_its_format_or_not_at_all_is_written(cli, tmp_path, argv, name):
    result = cli(*argv, "-o", str(tmp_path / name))
    assert result.code == 0, result.err
    assert (tmp_path / name).stat().st_size > 0
