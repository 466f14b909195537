"""What a command prints once its work is done, kept on disk between runs (:mod:`trnsim.cache`).

A catalog command asked again (``trnsim collective allreduce --sku nl72x2``, ``trnsim topo show
nl72x2``) prints what it printed before without building the system or running the model. What is
kept is the run's :class:`Outcome`: the notes it says, and the JSON payload and table views it emits,
with each table as printed off a terminal at each width asked for (a terminal's is printed afresh:
the console styles it).

An outcome's key is everything it depends on: the command, the value of every option as parsed and
the edits they make, and each system's file (its path as given, where it leads, and its bytes); the
cache adds trnsim's own code, the installed packages and the ``TRNSIM_*`` environment. A command
keeps only runs that read no file but the systems' and write none: a run given a traffic matrix, a
calibration, a schedule or an output file is worked out afresh every time.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Outcome:
    """A run's printed result: its notes and its payload and tables (see the module's description)."""

    payload: dict
    tables: list
    notes: list[str] = field(default_factory=list)  # said once the work is done
    loaded: list[str] = field(default_factory=list)  # said when the system was loaded (before the work)
    printed: dict = field(default_factory=dict)  # the tables as printed, by :func:`plain_key`

    def show(self, fmt, replay: bool = False) -> bool:
        """Say the notes (``replay``: the loading's too), then print the result in ``fmt``; whether
        a print was added to :attr:`printed` (the outcome is then worth keeping again)."""
        from trnsim.outputs.render import Format, emit, print_error

        for note in [*(self.loaded if replay else []), *self.notes]:
            print_error(note, label="note")
        stream = sys.stdout
        if fmt != Format.table:
            emit(self.payload, self.tables, fmt)
            return False
        from trnsim.outputs.terminal import plain_key, plain_text

        key = plain_key(stream)
        if key is None:  # a terminal
            emit(self.payload, self.tables, fmt)
            return False
        added = key not in self.printed
        if added:
            self.printed[key] = plain_text(self.tables, key[-1])
        stream.write(self.printed[key])
        return added


def sku_file(sku: str | None, topology: Path | None) -> Path | None:
    """The file ``--sku`` or ``--topology`` names, or None when it names none (the run says why)."""
    from trnsim.spec.names import system_file

    return system_file(sku, topology)


def key_of(command: str, options: dict[str, Any], files: list[Path | None]) -> str | None:
    """The key of a run of ``command`` with ``options`` (every option's parsed value and the edits
    they make) on the systems in ``files``, or None when a file cannot be read (the run then
    reports it as it always does)."""
    from trnsim.cache import Unkeyable, digest
    from trnsim.spec.names import system_bytes

    read = []
    for path in files:
        content = system_bytes(path)
        if content is None:
            return None
        # the path as given and where it leads (an output may name either)
        read.append((str(path), os.path.realpath(path), content))
    try:
        return digest(command, sorted(options.items()), read)
    except Unkeyable:  # an option of undecodable bytes: the run is not kept
        return None


def recall(key: str | None) -> Outcome | None:
    """The outcome kept under ``key`` (None: no key, nothing kept, or the cache is off)."""
    if key is None:
        return None
    from trnsim import cache

    found = cache.recall("outcome", key)
    return found if isinstance(found, Outcome) else None


def remember(key: str | None, outcome: Outcome) -> None:
    """Keep ``outcome`` under ``key`` (None: not kept)."""
    if key is not None:
        from trnsim import cache

        cache.remember("outcome", key, outcome)


def finish(key: str | None, outcome: Outcome, fmt) -> None:
    """Print a run's ``outcome`` and keep it under ``key`` (None: not kept)."""
    outcome.show(fmt)
    remember(key, outcome)


def replay(key: str | None, fmt) -> bool:
    """Print the outcome kept under ``key`` as the run that made it did; whether there was one."""
    kept = recall(key)
    if kept is None:
        return False
    if kept.show(fmt, replay=True):
        remember(key, kept)  # with the new width's print
    return True
