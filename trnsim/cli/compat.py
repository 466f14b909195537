"""Old spellings of renamed options: still accepted, with a one-line note on stderr.

One option name means one thing in every command. Where a name meant two things, the command that
used it for the rarer meaning got a name of its own; the old spelling stays as a hidden option so
that scripts keep working.
"""

from typing import Any

import typer

from trnsim.errors import UsageError

# old name -> (command, new name): the README's table of renamed options says the same
RENAMED = {
    ("faults", "--policy"): "--blast-radius",
    ("faults", "--fit"): "--failure-rate",
    ("cluster", "--policy"): "--efa-routing",
    ("cluster", "--layers"): "--switch-layers",
    ("topo hops", "--metric"): "--distance",
}


def _given(value: Any) -> bool:
    return value is not None and value != [] and value != ()


def renamed(old: str, new: str, old_value: Any, new_value: Any) -> Any:
    """The value of an option renamed from ``old`` to ``new``.

    The old spelling's value is used (with a note on stderr) when only it is given; both at once
    is refused, since they would disagree or repeat each other.
    """
    if not _given(old_value):
        return new_value
    if _given(new_value):
        raise UsageError(f"{old} is the old name of {new}: give {new} only")
    typer.echo(f"note: {old} is now {new} (same meaning; the old name is deprecated)", err=True)
    return old_value


def hidden(old: str, **kwargs: Any) -> Any:
    """The hidden option that keeps an old spelling working."""
    return typer.Option(old, hidden=True, show_default=False, **kwargs)
