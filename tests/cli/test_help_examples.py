"""Every --help shows at least one example command line, whole, and every example runs."""

import importlib.util
import shlex
from pathlib import Path

import pytest

from trnsim.cli.app import command_tree

ROOT = Path(__file__).resolve().parents[2]
PLOT = ("topo draw", "plot", "report", "design")  # need the plot extra (matplotlib)


def _commands() -> list[tuple[str, ...]]:
    """Every command path, groups included (``()`` is ``trnsim`` itself)."""
    found = []

    def walk(command, path):
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(command_tree(), ())
    return found


COMMANDS = _commands()


def _declared(path: tuple[str, ...]) -> list[str]:
    """The example lines of a command's help text as written (before the terminal wraps them)."""
    command = command_tree()
    for name in path:
        command = command.commands[name]
    text = command.help or ""
    if "Examples:" not in text:
        return []
    block = text.split("Examples:", 1)[1]
    return [line.strip() for line in block.strip().split("\n\n")[0].splitlines() if line.strip()]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "trnsim")
def test_help_shows_whole_examples(cli, monkeypatch, path):
    monkeypatch.setenv("COLUMNS", "80")
    declared = _declared(path)
    assert declared, f"trnsim {' '.join(path)} --help has no Examples paragraph"
    assert all(line.startswith(f"trnsim {' '.join(path)}".strip()) for line in declared)
    shown = cli(*path, "--help")
    assert shown.code == 0
    lines = [line.strip() for line in shown.out.splitlines()]
    assert "Examples:" in lines
    for example in declared:  # each on one line of an 80-column help: copied whole
        assert example in lines, (example, shown.out)


EXAMPLES = sorted({line: path for path in COMMANDS for line in _declared(path)}.items())


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A folder like the checkout (examples/ and topologies/ at hand), where outputs land."""
    for name in ("examples", "topologies"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("line", "path"), EXAMPLES, ids=[line for line, _ in EXAMPLES])
def test_every_example_runs(cli, workdir, line, path):
    if " ".join(path) in PLOT and importlib.util.find_spec("matplotlib") is None:
        pytest.skip("needs the plot extra")
    args = shlex.split(line)[1:]
    result = cli(*args)
    assert result.code == 0, result.err
    written = {item.name for item in workdir.iterdir()} - {"examples", "topologies"}
    assert result.out or written  # a table on stdout, or the file the example names
