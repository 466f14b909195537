"""Which runtime prices each system of a study, refused before any work where it cannot.

A study (a comparison, a sweep, a plot, a report) runs the same collective on several systems; each
is priced by the runtime it is given (``name``), else by its own file's default
(:func:`trnsim.model.runtime.runtime_of`), so a comparison of an NVIDIA peer against a Trainium
system may price each with its own library. :func:`study_runtime` says which. The runtime layer
prices one group of uniform traffic on one system (:func:`trnsim.model.runtime.apply_runtime`);
several groups at once, a cluster and a skewed all-to-all are the ideal's alone. A runtime asked for
that cannot model the run is refused (one line, :class:`~trnsim.errors.NotApplicableError`); a
file's default that cannot gives way to ``ideal`` (:func:`trnsim.model.runtime.choose_runtime`), and
the output names the runtime of every system. ``ideal`` models everything and changes nothing: its
rows are the engine's own.
"""

from trnsim.errors import NotApplicableError
from trnsim.topology.graph import Topology


def study_runtime(
    topology: Topology, backend, name: str | None, algo: str = "auto", op: str | None = None
) -> str:
    """The runtime that prices ``backend``'s run on ``topology`` (``name``, else the file's default).

    Parameters
    ----------
    topology : Topology
        The system.
    backend : OneGroup, ManyGroups or Cluster
        Who runs the collective on it (:meth:`trnsim.model.backend.Selection.backend`).
    name : str or None
        The runtime asked for; None: the file's ``runtime.default``.
    algo : str
        The algorithm asked for: a runtime picks its own, so one of trnsim's names (or ``all``) is
        the ideal's.
    op : str, optional
        The op: one the runtime does not model is the ideal's (a file's default gives way).

    Raises
    ------
    ParameterError
        An unknown runtime.
    NotApplicableError
        The runtime asked for (``name``) cannot model this run: before any work, in one line.
    """
    from trnsim.model.backend import OneGroup
    from trnsim.model.runtime import choose_runtime

    why_not = None
    if algo != "auto":
        why_not = f"a runtime picks its own algorithm per size; {{algo}} {algo} names trnsim's own schedules"
    elif not isinstance(backend, OneGroup):
        why_not = (
            "a runtime prices one group on one system; several groups at once and clusters are the ideal's"
        )
    elif backend.traffic is not None:
        why_not = "a runtime models uniform traffic; {skew} and {traffic} are the ideal's"
    group = backend.group if isinstance(backend, OneGroup) else None
    try:
        return choose_runtime(topology, group, name, why_not, op)[0]
    except NotApplicableError as exc:
        if topology.name in exc.template:  # the runtime's own line names the system already
            raise
        raise exc.within(f"on {topology.name}") from None


def ideal_only(topology: Topology, name: str | None, why: str) -> None:
    """Refuse, before any work, a runtime other than ``ideal`` (``name``, else the file's default)
    for a study whose runs no runtime prices: ``why`` says what the study runs.

    Raises
    ------
    NotApplicableError
        The runtime is not ``ideal``.
    """
    from trnsim.model.runtime import runtime_of

    chosen = runtime_of(topology, name)
    if chosen != "ideal" and name is not None:  # a file's default gives way to ideal
        which = f"{{runtime}} {chosen} on {topology.name}" + (
            "" if name is not None else " (its file's default)"
        )
        raise NotApplicableError(f"{which}: {why}; run with {{runtime}} ideal")


def known_runtime(name: str | None) -> str | None:
    """``name`` checked before any work (any case; None stays None: each system's default).

    Raises
    ------
    ParameterError
        ``name`` is no runtime trnsim models.
    """
    if name is None:
        return None
    from trnsim.errors import ParameterError
    from trnsim.model.runtime import RUNTIMES

    chosen = name.strip().lower()
    if chosen not in RUNTIMES:
        raise ParameterError(f"expected one of {', '.join(RUNTIMES)}", "runtime", repr(name))
    return chosen


def uniform_rows(rows: list[dict]) -> list[dict]:
    """Flat result rows (a sweep's) with the same keys in the same order: when some are a runtime's
    (they carry ``runtime`` and the ideal's ``ideal_*`` figures), the ideal's rows get them too, naming
    ``ideal`` and repeating their own figures. Rows that are all the ideal's are returned as they are."""
    template = next((row for row in rows if "runtime" in row), None)
    if template is None:
        return rows
    out = []
    for row in rows:
        filled = {
            "runtime": "ideal",
            "runtime_model": None,
            "ideal_time_us": row.get("time_us"),
            "ideal_busbw_gbps": row.get("busbw_gbps"),
            "ideal_algorithm": row.get("algorithm"),
            **row,
        }
        out.append({key: filled.get(key) for key in template})
    return out


def priced(topology: Topology, evaluation, runtime: str):
    """``evaluation`` as ``runtime`` runs it (itself under ``ideal``;
    :func:`trnsim.model.runtime.apply_runtime`)."""
    if runtime == "ideal":
        return evaluation
    from trnsim.model.runtime import apply_runtime

    return apply_runtime(topology, evaluation, runtime)


def runtime_of_evaluation(evaluation) -> str:
    """The runtime whose numbers ``evaluation``'s rows hold (``ideal`` for the engine's own)."""
    return getattr(evaluation, "runtime", "ideal")


def runtime_model_of(evaluation) -> str | None:
    """One line: what a runtime's numbers model (None for the ideal's)."""
    return getattr(evaluation, "runtime_model", None)
