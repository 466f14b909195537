"""The options that say where a study's tasks run (``--jobs``, ``--engine``, ``--scheduler``), shared
by ``sweep``, ``faults`` and ``design``, and the progress they show on stderr."""

import time
from typing import Annotated

import typer

from trnsim.studies.engines import EngineOptions

Jobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        help="Worker processes: of the local pool, or of the local Dask cluster that --engine dask "
        "starts when no --scheduler is given.",
        min=1,
    ),
]
Engine = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="Where the tasks run: local (this machine, --jobs processes) or dask (a Dask cluster: "
        "--scheduler, or a local one of --jobs workers; needs pip install 'trnsim\\[dask]'). "
        "Default: dask with --scheduler, local without. The results are the same either way.",
        show_default=False,
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="A Dask scheduler's address (tcp://host:8786): run on its cluster (implies --engine dask).",
    ),
]

# how often a run on Dask says how far it is when stderr is not a terminal (seconds)
PLAIN_EVERY_S = 10.0


def engine_options(engine: str | None, scheduler: str | None, jobs: int) -> EngineOptions:
    """The engine the options ask for, refused at once (one line) when it cannot run: an unknown
    engine, --scheduler with --engine local, Dask not installed."""
    from trnsim.studies.engines import require_engine

    name = (engine or ("dask" if scheduler else "local")).strip().lower()
    options = EngineOptions(jobs=jobs, engine=name, scheduler=scheduler, notice=say)
    require_engine(options)
    return options


def say(line: str) -> None:
    """An engine's notice, as one line on stderr (its text is data: never markup)."""
    from trnsim.errors import printable

    typer.echo(printable(line), err=True)


def with_progress(label: str, tasks: list, describe, start, engine: EngineOptions | None = None):
    """Yield ``start(progress)``'s results, with a progress bar on a terminal; when stderr is not a
    terminal, a run on Dask says how far it is in a plain line every :data:`PLAIN_EVERY_S` and when
    it is done (a local run stays quiet there, as it always has). Nothing goes to stdout.

    ``describe(task)`` is the bar's text for the task just done; ``progress(task)`` is what
    ``start`` hands the engine (:func:`trnsim.studies.engines.run_ordered`)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal or len(tasks) < 2:
        if engine is None or engine.engine != "dask" or console.is_terminal:
            yield from start(None)
        else:
            yield from _plain(label, len(tasks), start)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(label, markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}", markup=False),  # file names are data, not markup
        console=console,
        transient=True,
    ) as progress:
        bar = progress.add_task("", total=len(tasks))

        def done(task):
            progress.update(bar, advance=1, description=describe(task))

        yield from start(done)


def _plain(label: str, total: int, start):
    """``start``'s results, saying ``label: done/total`` every :data:`PLAIN_EVERY_S` and at the end."""
    began = last = time.monotonic()
    count = 0

    def done(task):
        nonlocal count, last
        count += 1
        now = time.monotonic()
        if now - last >= PLAIN_EVERY_S and count < total:
            say(f"{label}: {count}/{total} done, {now - began:.0f} s")
            last = now

    yield from start(done)
    say(f"{label}: {total}/{total} done in {time.monotonic() - began:.1f} s")
