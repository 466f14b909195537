"""Where a study's tasks run: in this process, over local worker processes, or on a Dask cluster.

:func:`run_ordered` is the one entry point: it runs ``function`` on each task and yields the results
in the tasks' order, identical to a serial run, whichever engine ran them. A task that raises raises
where the tasks' order reaches it, as a serial run would (the results before it come out first).

- ``local`` (:mod:`trnsim.studies.engines.local`): ``jobs`` worker processes on this machine (one:
  this process, no pool).
- ``dask`` (:mod:`trnsim.studies.engines.dask_cluster`): a Dask cluster at ``scheduler``, or a local
  one of ``jobs`` worker processes started for the run. Dask is an optional extra
  (``pip install 'trnsim[dask]'``), imported only when this engine runs.
"""

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from trnsim.errors import ParameterError

ENGINES = ("local", "dask")
# an assumption: a worker may be lost twice more (each time after Dask's own reassignments) before
# a run gives up on a task; a task that kills every worker it runs on would otherwise never end
RETRIES = 2
# an assumption: a scheduler that has not answered within this time is not there (a busy one answers
# in milliseconds; a cluster still starting its scheduler can be waited for with a larger value)
CONNECT_TIMEOUT_S = 10.0
# what a scheduler address looks like: a Dask protocol and host:port, or host:port (tcp)
_ADDRESS = re.compile(r"^((tcp|tls|ucx|ws|wss)://)?\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}$")


@dataclass(frozen=True)
class EngineOptions:
    """Which engine runs a study's tasks, and how.

    Attributes
    ----------
    jobs : int
        Worker processes of the local pool, or of the local Dask cluster started when no
        ``scheduler`` is given (1: the local engine runs the tasks in this process).
    engine : str
        ``local`` or ``dask``.
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:8786``); None with ``dask``: a local cluster.
    retries : int
        Times a task is submitted again after the workers running it were lost (see :data:`RETRIES`).
    connect_timeout_s : float, optional
        How long a scheduler has to answer (None: :data:`CONNECT_TIMEOUT_S`).
    notice : callable, optional
        ``notice(line)`` receives what the engine says along the way (a worker lost, tasks
        resubmitted, where the cluster is); None: nothing is said.
    """

    jobs: int = 1
    engine: str = "local"
    scheduler: str | None = None
    retries: int = RETRIES
    connect_timeout_s: float | None = None
    notice: Callable[[str], None] | None = None

    def __post_init__(self):
        if self.engine not in ENGINES:
            raise ParameterError(f"expected one of {', '.join(ENGINES)}", "engine", repr(self.engine))
        if not isinstance(self.jobs, int) or self.jobs < 1:
            raise ParameterError("expected a whole number >= 1", "jobs", repr(self.jobs))
        if self.connect_timeout_s is not None and not self.connect_timeout_s > 0:
            raise ParameterError(
                "expected a number of seconds > 0", "connect_timeout_s", repr(self.connect_timeout_s)
            )
        if self.retries < 0:
            raise ParameterError("expected a whole number >= 0", "retries", repr(self.retries))
        if self.scheduler is not None:
            if self.engine != "dask":
                raise ParameterError("a scheduler is a Dask cluster's: it needs the dask engine", "scheduler")
            if self.jobs != 1:  # said, not ignored: the cluster's size is its own
                raise ParameterError(
                    "sets the workers of this machine's pool or local cluster; the one at the scheduler "
                    "has its own: leave it out",
                    "jobs",
                    f"{self.jobs}",
                )
            if not _ADDRESS.match(self.scheduler.strip()):
                raise ParameterError(
                    "expected a Dask scheduler's address such as tcp://host:8786",
                    "scheduler",
                    repr(self.scheduler),
                )

    @property
    def timeout_s(self) -> float:
        """How long a scheduler, or a cluster without workers, is waited for (seconds)."""
        return CONNECT_TIMEOUT_S if self.connect_timeout_s is None else self.connect_timeout_s

    def say(self, line: str) -> None:
        """Tell the user ``line`` through :attr:`notice`, if any."""
        if self.notice is not None:
            self.notice(line)


def run_ordered(
    function: Callable,
    tasks: list,
    options: EngineOptions = EngineOptions(),
    progress: Callable | None = None,
    batches: list[list[int]] | None = None,
) -> Iterator:
    """``function(task)`` for each of ``tasks``, yielded in the tasks' order.

    Parameters
    ----------
    function : callable
        A top-level function (workers import it by name), of one task; its result must pickle.
    tasks : list
        The tasks (each must pickle).
    options : EngineOptions
        The engine and its settings.
    progress : callable, optional
        ``progress(task)``, called in the tasks' order as each task's result is yielded.
    batches : list of list of int, optional
        Task indices that run together in one worker, each ascending (what a task builds serves the
        next ones of its batch), in the order they are to start (the longest first, so that no worker
        is left with a long one at the end). Default: each task alone, in order.

    Yields
    ------
    object
        Each task's result, in the tasks' order.

    Raises
    ------
    Exception
        The first error in the tasks' order, as a serial run raises it.
    UsageError
        The engine cannot run (Dask not installed, no scheduler at the address, a task lost on
        every retry).
    """
    tasks = list(tasks)
    if batches is None:
        batches = [[i] for i in range(len(tasks))]
    if options.engine == "dask":
        from trnsim.studies.engines.dask_cluster import run_on_dask

        yield from run_on_dask(function, tasks, options, progress, batches)
        return
    from trnsim.studies.engines.local import run_local

    yield from run_local(function, tasks, options.jobs, progress, batches)


def require_engine(options: EngineOptions) -> None:
    """Refuse at once (one line) an engine that cannot run here: Dask not installed."""
    if options.engine == "dask":
        from trnsim.studies.engines.dask_cluster import require_dask

        require_dask()


def run_batch(function: Callable, tasks: list) -> list:
    """Each task's result, in order, up to the first that raises: that one's error ends the list
    (it is raised in the caller when the tasks' order reaches it)."""
    from trnsim.studies.engines.local import prepare_worker

    prepare_worker()
    out: list = []
    for task in tasks:
        try:
            out.append(function(task))
        except Exception as error:  # noqa: BLE001 - handed back to be raised where a serial run would
            out.append(TaskFailed(error))
            break
    return out


class TaskFailed:
    """A task's error, handed back from a worker as a result (an exception raised in a worker would be
    taken for the worker's failure by some engines)."""

    def __init__(self, error: BaseException):
        self.error = error


def in_order(tasks: list, results: Iterable[tuple[list[int], list]], progress) -> Iterator:
    """Each task's result in the tasks' order, from ``(batch, results)`` pairs in any order; each
    task's result is taken once (a batch run twice gives the same results: the first is kept)."""
    found: dict[int, object] = {}
    ready = 0
    arriving = iter(results)
    while ready < len(tasks):
        while ready not in found:
            arrived = next(arriving, None)
            if arrived is None:  # the engine's bug, not the user's: say which task went missing
                raise RuntimeError(f"the engine ended without task {ready}'s result")
            for i, value in zip(*arrived, strict=False):
                if i >= ready:
                    found.setdefault(i, value)
        value = found.pop(ready)
        if isinstance(value, TaskFailed):
            raise value.error
        if progress:
            progress(tasks[ready])
        yield value
        ready += 1
