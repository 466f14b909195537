"""The CLI builds only the command that runs (trnsim.cli.lazy), with the same --help as built all at once."""

import contextlib
import copy
import importlib
import io

import pytest
import typer
import typer.main

from tests.cli.imported import modules_imported_by
from trnsim.cli import app as root
from trnsim.cli.lazy import LazyCommands

# what each command line must not import: every other command's module, and the heavy optional parts
OTHERS = (
    "trnsim.cli.compare",
    "trnsim.cli.report",
    "trnsim.cli.sweep",
    "trnsim.cli.plot",
    "trnsim.cli.calibrate",
    "trnsim.cli.layout",
    "trnsim.cli.faults",
    "trnsim.cli.validate",
    "trnsim.cli.measure_plan",
    "trnsim.cli.schedule",
    "trnsim.cli.cluster.collective",
    "trnsim.cli.cluster.fabric",
    "trnsim.outputs.draw",
    "matplotlib",
)
LINES = {
    ("collective", "allreduce", "--sku", "nl16", "--sizes", "1M"): (
        "trnsim.cli.topo.show",
        "trnsim.cli.topo.catalog",
    ),
    ("topo", "list"): ("trnsim.cli.collective", "trnsim.cli.topo.show", "trnsim.cli.topo.draw"),
    ("topo", "show", "nl16"): ("trnsim.cli.collective", "trnsim.cli.topo.catalog", "trnsim.cli.topo.draw"),
    ("collective", "allreduce", "--help"): ("trnsim.cli.topo.show",),
}


@pytest.mark.parametrize("line", list(LINES), ids=" ".join)
def test_a_command_line_imports_its_own_command_alone(line, tmp_path):
    modules = modules_imported_by(line, tmp_path)
    assert not modules & set(OTHERS + LINES[line])


def test_the_names_are_known_before_any_command_is_built():
    calls = []
    commands = LazyCommands({"a": lambda: calls.append("a") or "A", "b": lambda: calls.append("b") or "B"})
    assert list(commands) == ["a", "b"] and "a" in commands and "c" not in commands and len(commands) == 2
    assert calls == []
    assert commands.get("b") == "B" and commands.get("c") is None and calls == ["b"]
    assert dict(commands.items()) == {"a": "A", "b": "B"} and calls == ["b", "a"]  # each built once


def _eager() -> typer.Typer:
    """The reference: every command registered on one Typer app and converted at once (as typer does)."""
    eager = copy.copy(root.app)
    eager.registered_commands, eager.registered_groups = [], []
    for entry in root.COMMANDS:
        module, _, attribute = entry.target.partition(":")
        target = getattr(importlib.import_module(module), attribute)
        if not isinstance(target, typer.Typer):
            eager.command(entry.name, **entry.options)(target)
            continue
        for sub in getattr(target, "lazy_entries", ()):
            importlib.import_module(sub.target.partition(":")[0])  # registers a decorated command
        group = copy.copy(target)
        group.registered_commands = list(target.registered_commands)
        for sub in getattr(target, "lazy_entries", ()):
            name, _, attribute = sub.target.partition(":")
            if attribute:
                group.command(sub.name, **sub.options)(getattr(importlib.import_module(name), attribute))
        order = [sub.name for sub in getattr(target, "lazy_entries", ())]
        if order:  # the order --help lists, not the order the modules happened to be imported in
            group.registered_commands.sort(key=lambda c: order.index(c.name or c.callback.__name__))
        eager.add_typer(group, name=entry.name)

    def prepare(app: typer.Typer) -> None:
        for command in app.registered_commands:
            root._prepare(command)
        for group in app.registered_groups:
            prepare(group.typer_instance)

    prepare(eager)
    return eager


def _help(command, path: tuple[str, ...]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        command.main(args=[*path, "--help"], prog_name="trnsim", standalone_mode=False)
    return out.getvalue()


def test_every_help_is_the_text_of_the_commands_built_all_at_once(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    eager = typer.main.get_command(_eager())
    paths = []

    def walk(command, path):
        paths.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(eager, ())
    assert len(paths) > 30
    for path in paths:
        # a fresh lazy tree per command line: only what that line names is built
        assert _help(root.command_tree(), path) == _help(eager, path), path
