"""Command groups whose commands are built when named: a run imports and converts only its own command.

Typer turns every command of an app into a click command (reading each signature's annotations)
before it parses a single argument, and the app can only do that once every command's module is
imported. Here a group is built bare and its :attr:`commands` is a :class:`LazyCommands` mapping that
knows every name, in the order ``--help`` lists them, and builds a command the first time it is
looked up: ``trnsim collective allreduce`` imports :mod:`trnsim.cli.collective` and converts the
``allreduce`` command alone. Anything that walks the whole tree (``--help``, the docs, the tests)
reads every entry and so builds every command, with the same text as before.

A group's entries come from two places: the commands and groups registered on its Typer app (their
module is imported: only the conversion waits), and :class:`Entry` declarations naming a module
that is imported when the entry is first looked up.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field

import typer
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo


@dataclass(frozen=True)
class Entry:
    """A command or group of a group, declared by where it lives.

    ``target`` is ``"module:attribute"``: a function (a command) or a Typer app (a group); with
    no attribute (``"module"``) the module registers the command itself on the group's app when it is
    imported (a ``@app.command()`` decorator), and the entry names it. ``options`` are what
    ``Typer.command`` takes (``cls``, ...).
    """

    name: str
    target: str
    options: dict = field(default_factory=dict)


class LazyCommands(MutableMapping):
    """A group's commands by name, each built by its loader on first lookup.

    Iteration, ``len`` and ``in`` use the names alone; reading a value (``commands[name]``,
    ``.get``, ``.items()``, ``.values()``) builds that command.
    """

    def __init__(self, loaders: dict[str, Callable[[], object]]):
        self._loaders = dict(loaders)
        self._built: dict[str, object] = {}

    def __getitem__(self, name: str):
        if name not in self._built:
            loader = self._loaders.get(name)
            if loader is None:
                raise KeyError(name)
            self._built[name] = loader()
        return self._built[name]

    def __setitem__(self, name: str, command) -> None:
        self._loaders.setdefault(name, None)  # keeps its place among the names
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaders[name]
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._loaders

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaders))

    def __len__(self) -> int:
        return len(self._loaders)


def settings_of(app: typer.Typer) -> dict:
    """The conversion settings a root app hands down to every command (as ``typer.main.get_group``)."""
    return {
        "pretty_exceptions_short": app.pretty_exceptions_short,
        "rich_markup_mode": app.rich_markup_mode,
        "suggest_commands": app.suggest_commands,
    }


def lazy_group(
    info: TyperInfo, settings: dict, entries: tuple[Entry, ...] = (), prepare: Callable | None = None
):
    """The click group of ``info`` (a Typer app as registered under its name) with lazy commands.

    Parameters
    ----------
    info : TyperInfo
        The group as ``Typer.add_typer`` registers it (for the root: ``TyperInfo(app)``).
    settings : dict
        :func:`settings_of` the root app.
    entries : tuple of Entry
        Commands and groups declared by module, in the order ``--help`` lists them; the commands and
        groups registered on the app that no entry names follow, in their order.
    prepare : callable, optional
        Called with each :class:`~typer.models.CommandInfo` before it is converted (it may replace
        the callback: the wrapper then runs instead); must be idempotent.
    """
    app = info.typer_instance
    shell = copy.copy(app)  # the group itself (its callback, options and help) without its commands
    shell.registered_commands, shell.registered_groups = [], []
    bare = copy.copy(info)
    bare.typer_instance = shell
    group = get_group_from_info(bare, **settings)
    loaders = {entry.name: _loader(app, entry, settings, prepare) for entry in entries}
    for command in app.registered_commands:
        name = _name_of(command)
        loaders.setdefault(name, _loader(app, Entry(name, ""), settings, prepare))
    for sub in app.registered_groups:
        loaders.setdefault(sub.name, _loader(app, Entry(sub.name, ""), settings, prepare))
    group.commands = LazyCommands(loaders)
    return group


def _name_of(command: CommandInfo) -> str:
    return command.name or command.callback.__name__.lower().replace("_", "-")


def _loader(app: typer.Typer, entry: Entry, settings: dict, prepare: Callable | None) -> Callable:
    def load():
        module, _, attribute = entry.target.partition(":")
        holder = app
        if module:
            loaded = importlib.import_module(module)
            if attribute:
                holder = typer.Typer()
                target = getattr(loaded, attribute)
                if isinstance(target, typer.Typer):
                    holder.add_typer(target, name=entry.name)
                else:
                    holder.command(entry.name, **entry.options)(target)
        return _convert(holder, entry.name, settings, prepare)

    return load


def _convert(holder: typer.Typer, name: str, settings: dict, prepare: Callable | None):
    """The command or group ``name`` registered on ``holder``, converted to click."""
    for command in holder.registered_commands:
        if _name_of(command) == name:
            if prepare is not None:
                prepare(command)
            return get_command_from_info(
                command,
                pretty_exceptions_short=settings["pretty_exceptions_short"],
                rich_markup_mode=settings["rich_markup_mode"],
            )
    for sub in holder.registered_groups:
        if sub.name == name:
            # a group declares its entries on its app (``app.lazy_entries``), if it has any
            return lazy_group(sub, settings, getattr(sub.typer_instance, "lazy_entries", ()), prepare)
    raise LookupError(f"no command {name!r} is registered")  # a wrong Entry: a bug, not an input
