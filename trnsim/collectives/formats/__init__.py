"""Schedule files: programs written in the formats runtimes and simulators read, and read back.

A format module registers itself with :func:`register`: a name (what ``--schedule-format`` and
``--schedule`` files are known by), the file suffixes it is usually saved with, a one-line summary,
and a writer, a reader, or both:

* ``write(program, ranks) -> bytes``: the :class:`~trnsim.collectives.program.Program` on the group
  whose chips are ``ranks`` (position ``i`` is ``ranks[i]``), in the format's published schema;
* ``read(data, where) -> Imported``: a file's bytes back as a program (``where`` names the file in
  errors, which are :class:`~trnsim.errors.UsageError` naming the file, the element and what was
  expected);
* ``sniff(data) -> bool``: whether bytes look like this format (to read a file whose suffix is
  ambiguous, such as ``.json`` or ``.xml``).

A format that needs more than the program (a routed schedule's paths) is written in a higher layer
and only read here. :func:`read` picks the reader by ``fmt``, else by sniffing.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from trnsim.collectives.program import Program
from trnsim.errors import UsageError


@dataclass(frozen=True)
class Imported:
    """A program read from a file, and what the file said about it."""

    program: Program
    format: str
    ranks: list[str] | None = None  # the chips the file names for each rank, if it names any
    notes: list[str] = field(default_factory=list)  # what was assumed or left out in reading it


@dataclass(frozen=True)
class ScheduleFormat:
    """A registered schedule format (see the module docstring)."""

    name: str
    suffixes: tuple[str, ...]
    summary: str
    write: Callable[[Program, list[str]], bytes] | None = None
    read: Callable[[bytes, str], Imported] | None = None
    sniff: Callable[[bytes], bool] | None = None


FORMATS: dict[str, ScheduleFormat] = {}


def register(fmt: ScheduleFormat) -> ScheduleFormat:
    """Add ``fmt`` to :data:`FORMATS` (a module calls this once, at import)."""
    FORMATS[fmt.name] = fmt
    return fmt


def _load() -> None:
    """Import every format module (each registers itself); cheap, and only when a format is used."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def get(name: str) -> ScheduleFormat:
    """The format called ``name`` (raises a one-line :class:`~trnsim.errors.UsageError` otherwise)."""
    _load()
    if name not in FORMATS:
        raise UsageError(f"unknown schedule format {name!r}; choose one of {', '.join(sorted(FORMATS))}")
    return FORMATS[name]


def read(data: bytes, where: str, fmt: str | None = None) -> Imported:
    """A schedule file's bytes as a program: read by ``fmt``, else by the format that recognises them."""
    if fmt is not None:
        chosen = get(fmt)
        if chosen.read is None:
            raise UsageError(f"{where}: trnsim writes {fmt} but does not read it")
        return chosen.read(data, where)
    _load()
    for candidate in FORMATS.values():
        if candidate.read is not None and candidate.sniff is not None and candidate.sniff(data):
            return candidate.read(data, where)
    readable = sorted(name for name, f in FORMATS.items() if f.read is not None)
    raise UsageError(f"{where}: not a schedule file trnsim reads ({', '.join(readable) or 'none yet'})")
