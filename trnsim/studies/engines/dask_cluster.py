"""The Dask engine: a study's tasks on a Dask cluster (``scheduler``), or on a local cluster of
``jobs`` worker processes started for the run and stopped after it.

Each batch of tasks is one Dask task (:func:`trnsim.studies.engines.run_batch`), submitted in the
order given with a priority that keeps that order. A worker that dies or is lost takes its running
tasks with it: Dask's scheduler gives them to another worker (up to its
``distributed.scheduler.allowed-failures``), and a batch that still fails (Dask's ``KilledWorker``,
a lost connection) is submitted again, up to ``retries`` times, before the run stops with one line.
A task's own error is not a failure of the engine: it comes back as a result and is raised where the
tasks' order reaches it. Every task's result is taken once, by its index: a batch run twice (a
worker lost after finishing it) gives no second copy.

Assumed: every worker has the same trnsim installed (checked before any task is sent) and reads the
topology files a study names at the same paths (a shared file system, or catalog SKUs only).
"""

import time
import uuid
from collections.abc import Callable, Iterator

from trnsim.errors import ParameterError

# how often a run waiting on its tasks looks at the cluster's workers (seconds)
POLL_S = 1.0
INSTALL = "pip install 'trnsim[dask]'"
_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def run_on_dask(
    function: Callable, tasks: list, options, progress: Callable | None, batches: list[list[int]]
) -> Iterator:
    """See :func:`trnsim.studies.engines.run_ordered` (the Dask engine's part of it)."""
    from trnsim.studies.engines import in_order

    require_dask()
    if not tasks:
        return
    client, cluster = connect(options, len(batches))
    try:
        yield from in_order(tasks, _results(client, function, tasks, batches, options), progress)
    finally:
        close(client, cluster)


def require_dask() -> None:
    """Dask's distributed scheduler is an optional extra: one line saying how to install it."""
    try:
        import distributed  # noqa: F401
    except ImportError as exc:
        raise ParameterError(
            f"needs Dask's distributed scheduler, which is not installed ({exc.name or exc}): {INSTALL}",
            "engine",
            "dask",
        ) from None


def connect(options, batches: int | None = None):
    """(client, cluster): a client of the scheduler at ``options.scheduler``, checked to answer,
    to have workers and to run this trnsim; or of a local cluster of ``options.jobs`` processes, no
    more than the ``batches`` of work there are, as the local pool (the cluster is None when it is
    not ours to stop)."""
    from distributed import Client

    if options.scheduler is None:
        workers = min(options.jobs, batches or options.jobs)
        cluster = local_cluster(workers)
        client = Client(cluster, set_as_default=False)
        options.say(f"dask: a local cluster of {workers} worker process{'es' if workers > 1 else ''}")
        return client, cluster
    address = options.scheduler.strip()
    wait = f"{options.timeout_s:g} s"
    _probe(address, options.timeout_s)
    try:
        client = Client(address, timeout=options.timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise ParameterError(
            f"no Dask scheduler answered within {wait} ({_reason(exc)})", "scheduler", address
        ) from None
    try:
        client.wait_for_workers(1, timeout=options.timeout_s)
    except (OSError, TimeoutError):
        close(client, None)
        raise ParameterError(
            f"the Dask scheduler has had no worker for {wait}", "scheduler", address
        ) from None
    _check_workers(client, address)
    options.say(f"dask: {len(client.nthreads())} worker(s) at {address}")
    return client, None


def _probe(address: str, timeout_s: float) -> None:
    """One line, within about ``timeout_s``, unless a Dask scheduler answers at ``address``.

    Dask's client waits for ever on a server that accepts the connection and never answers (its
    own timeout covers the connection, not the greeting), and fails with odd errors where something
    else answers (a proxy's bytes read as a frame's length): so the greeting is awaited here first,
    bounded, in a thread of its own (its own event loop, whatever loop the caller runs)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as Late

    async def greet():
        from distributed.comm import connect

        comm = await asyncio.wait_for(connect(address, timeout=timeout_s), timeout_s + 1)
        await comm.close()

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(asyncio.run, greet()).result(timeout=timeout_s + 5)
    except (OSError, TimeoutError, Late) as exc:
        silent = isinstance(exc, TimeoutError) and not str(exc)
        reason = "it accepts the connection but says nothing" if silent else _reason(exc)
        raise ParameterError(
            f"no Dask scheduler answered within {timeout_s:g} s ({reason})", "scheduler", address
        ) from None
    except Exception as exc:  # noqa: BLE001 - whatever answered does not speak Dask's protocol
        raise ParameterError(
            f"what answers there is not a Dask scheduler ({type(exc).__name__})", "scheduler", address
        ) from None
    finally:
        pool.shutdown(wait=False)


def local_cluster(workers: int, **options):
    """A Dask cluster of ``workers`` processes on this machine, one thread each (the tasks hold the
    GIL), reachable from this machine only, with no dashboard, quiet (a lost worker is said once, by
    this engine). ``options`` go to each worker's nanny (``env=``...)."""
    import logging
    import sys

    from distributed import LocalCluster

    # a run stopped by a signal leaves at once (trnsim.cli.entry): multiprocessing's resource
    # tracker (a process of its own, started with this one's -W options) then frees the semaphores
    # the workers' nannies held, and would print a warning for them under the one line the run says
    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # its HTTP server on a free port
        silence_logs=logging.CRITICAL,
        **options,
    )


def _check_workers(client, address: str) -> None:
    """Every worker imports this trnsim (the tasks name its functions): one line if one cannot."""
    from trnsim import __version__

    try:
        found = client.run(worker_version)
    except Exception as exc:  # noqa: BLE001 - a worker without trnsim fails to unpickle the call
        close(client, None)
        raise ParameterError(
            f"a Dask worker cannot run trnsim ({_reason(exc)}): install trnsim {__version__} on every worker",
            "scheduler",
            address,
        ) from None
    other = {worker: version for worker, version in found.items() if version != __version__}
    if other:
        close(client, None)
        worker, version = next(iter(other.items()))
        raise ParameterError(
            f"Dask worker {worker} runs trnsim {version}, this is {__version__}: install the same on every worker",
            "scheduler",
            address,
        )


def worker_version() -> str:
    """The trnsim a worker imports (run on each worker by :func:`_check_workers`)."""
    from trnsim import __version__

    return __version__


def _results(
    client, function, tasks: list, batches: list[list[int]], options
) -> Iterator[tuple[list[int], list]]:
    """(batch, its results) as each batch finishes; a failed batch is submitted again (see the
    module's description)."""
    from distributed import as_completed

    from trnsim.studies.engines import run_batch

    run = uuid.uuid4().hex[:12]  # keys of their own: several runs may share a scheduler
    tries = dict.fromkeys(range(len(batches)), 0)

    def submit(n: int):
        return client.submit(
            run_batch,
            function,
            [tasks[i] for i in batches[n]],
            key=f"trnsim-{run}-{n}-{tries[n]}",
            pure=False,
            priority=len(batches) - n,  # Dask runs the higher first: the order given
        )

    pending = {submit(n): n for n in range(len(batches))}
    finished = as_completed(list(pending), loop=client.loop)
    watch = _Watch(client, options)
    while not finished.is_empty():
        done = finished.next_batch(block=False)
        if not done:  # a short nap, not a blocking wait: the cluster is watched meanwhile
            time.sleep(0.02)
            watch.check()
            continue
        for future in done:
            n = pending.pop(future)
            if future.status == "finished":
                yield batches[n], future.result()
            else:
                tries[n] += 1
                _retry_or_stop(future, batches[n], tries[n], options)
                again = submit(n)
                pending[again] = n
                finished.add(again)
            future.release()


def _retry_or_stop(future, batch: list[int], tries: int, options) -> None:
    """Say that a batch failed and is submitted again, or stop after ``options.retries`` retries."""
    try:
        reason = _reason(future.exception(timeout=options.timeout_s))
    except Exception as exc:  # noqa: BLE001 - a cancelled future raises instead of returning
        reason = _reason(exc)
    what = f"task {batch[0] + 1}" + (
        f" (and the {len(batch) - 1} after it in its batch)" if len(batch) > 1 else ""
    )
    if tries > options.retries:
        raise ParameterError(
            f"{what} failed on {tries} tries, each time with its worker lost or failing ({reason})",
            "engine",
            "dask",
        )
    options.say(f"dask: {what} failed ({reason}); submitting it again (retry {tries} of {options.retries})")


class _Watch:
    """What the cluster's workers do during a run, looked at every :data:`POLL_S`: a worker lost is
    said (Dask gives its tasks to the others), a cluster without workers for ``options.timeout_s``
    stops the run with one line (its tasks would wait for ever), and so does a lost scheduler."""

    def __init__(self, client, options):
        self.client, self.options = client, options
        self.workers = set(client.nthreads())
        self.looked = time.monotonic()
        self.idle_since: float | None = None

    def check(self) -> None:
        now = time.monotonic()
        if now - self.looked < POLL_S:
            return
        self.looked = now
        try:
            workers = set(self.client.nthreads())
        except Exception as exc:  # noqa: BLE001 - the scheduler is gone
            raise ParameterError(f"lost the Dask scheduler ({_reason(exc)})", "engine", "dask") from None
        for worker in sorted(self.workers - workers):
            self.options.say(f"dask: lost worker {worker}; Dask gives its tasks to the others")
        self.workers = workers
        if workers:
            self.idle_since = None
        elif self.idle_since is None:
            self.idle_since = now
        elif now - self.idle_since > self.options.timeout_s:
            raise ParameterError(
                f"the Dask cluster has had no worker for {self.options.timeout_s:g} s", "engine", "dask"
            )


def _reason(exc: BaseException | None) -> str:
    """An exception as a short phrase: its type, and its first line when it has one."""
    if exc is None:
        return "no reason given"
    if type(exc).__name__ == "KilledWorker":  # its text is a paragraph of advice
        return "its worker died: Dask's KilledWorker"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def close(client, cluster) -> None:
    """Close the client, and the local cluster if this run started it, quietly."""
    from contextlib import suppress

    for thing in (client, cluster):
        if thing is not None:
            with suppress(Exception):  # closing after an error must not hide the error
                thing.close()
