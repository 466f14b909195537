"""The runtime layer: what a collective library makes of the fabric, next to trnsim's ideal.

Every number the engine computes is *ideal*: the fabric's limit under trnsim's best schedule. A
runtime prices the same collective as the library that runs it would (issue 25):

- ``ideal``: the engine's rows, unchanged (:func:`apply_runtime` returns the evaluation itself);
- ``nccl``: NCCL's own tuner (:mod:`trnsim.model.runtimes.nccl`): at each size the (algorithm,
  protocol) NCCL picks, for GPUs on one NVSwitch domain read from the graph and the file's
  ``runtime.nccl`` facts (:mod:`trnsim.model.runtimes.nccl_domain`). The time is NCCL's own expected
  time (its latency tables and its bandwidth), plus for NVLS the pipeline fill of NCCL's chunking
  (:mod:`trnsim.model.runtimes.nccl_chunking`). NCCL's latency is the per-call cost of default NCCL:
  15 us for an 8-byte all-reduce on 8 H100, where a p5.48xlarge run of default NCCL measures 12.9
  (GX4 in the validation set, predicted). The lower floors published for tuned builds (2.3-3 us with
  NCCL 2.27's symmetric-memory kernels, G11; 5.2 us on an experimental branch, G5) are not default
  NCCL; ``runtime.nccl.call_us`` models such a build: it replaces NCCL's latency for LL picks and
  floors it for the others.
- ``neuron``: the Neuron runtime's documented algorithms (:mod:`trnsim.model.runtimes.neuron`), picked
  by their documented size ranges, for NeuronCores on one NeuronLink domain read from the graph and
  ``runtime.neuron`` (:mod:`trnsim.model.runtimes.neuron_domain`);
- ``xla``: TPU collectives ring by ring along the torus axes as the scaling book states them
  (:mod:`trnsim.model.runtimes.xla`), for chips of one ICI torus and ``runtime.xla``
  (:mod:`trnsim.model.runtimes.xla_domain`).

Per-call costs and the measurements that set them (those rows count as *fitted* in a validation, not
predicted): NCCL's per-call cost is its own latency tables (no measurement fitted); the NVLS fill's
two chunk times are fitted to G9 (8x H200, NVLS all-reduce); Neuron ``call_us`` 3 us on every
Trainium file (N5, 32-rank trn1 all-gather of 1 KiB in 6.16 us = 3 us + two Mesh hops of 1.5 us; N6
and N8 are predicted, not fitted, and N8's ~300 us floor is not used); XLA ``call_us`` 2 us, an
assumption with no published TPU floor (range 1-5 us), and its ``efficiency`` 0.95 is T1's figure
(so T1 is fitted).

What a run forces (``forced``: NCCL_ALGO and NCCL_PROTO as ``{"algorithm": "nvls", "protocol":
"simple"}``, in NCCL's spellings or trnsim's) narrows NCCL's choice as those variables do; the other
runtimes take none.

A runtime's evaluation keeps the ideal one (``ideal``), whose rows name the schedules (``plans``)
that the links borrowed, a heatmap or an exported schedule come from. A runtime's rows (:class:`RuntimeRow`) carry its time and bandwidth in the usual fields, its choice
as ``algorithm`` (``nvls/simple``), and the ideal's as ``ideal_time_us``, ``ideal_busbw_gbps`` and
``ideal_algorithm``: what you would measure, and what the hardware leaves on the table. The fabric's
own figures (the bound, hops, bottleneck, chunks, link use) stay the ideal schedule's; ``efficiency``
is the bound's time over the runtime's.
"""

from dataclasses import dataclass, fields
from typing import ClassVar, get_args

from trnsim.errors import NotApplicableError, ParameterError
from trnsim.model.engine import GroupEvaluation, GroupRow
from trnsim.model.rows import algbw_gbps, busbw_gbps
from trnsim.spec.schema import RuntimeName
from trnsim.topology.graph import Topology

RUNTIMES: tuple[str, ...] = get_args(RuntimeName)
HELD = "*"  # a runtime's choice whose time was held to the fabric's bound


def runtime_of(topology: Topology, name: str | None = None) -> str:
    """The runtime a run models: ``name`` (any case), else the file's ``runtime.default``.

    Raises
    ------
    ParameterError
        ``name`` is not one of :data:`RUNTIMES`.
    """
    if name is None:
        return topology.spec.runtime.default
    chosen = name.strip().lower()
    if chosen not in RUNTIMES:
        raise ParameterError(f"expected one of {', '.join(RUNTIMES)}", "runtime", repr(name))
    return chosen


@dataclass(kw_only=True)
class RuntimeRow(GroupRow):
    """One size as a runtime runs it: its time, bandwidth and choice, and the ideal's beside them."""

    ideal_time_us: float
    ideal_busbw_gbps: float
    ideal_algorithm: str  # trnsim's schedule at this size (the fastest, under auto)

    COLUMNS: ClassVar[tuple[str, ...]] = (
        *GroupRow.COLUMNS,
        "ideal_time_us",
        "ideal_busbw_gbps",
        "ideal_algorithm",
    )


@dataclass(kw_only=True)
class RuntimeEvaluation(GroupEvaluation):
    """A collective on one group as a runtime runs it (``rows``), with the ideal's rows kept."""

    runtime: str
    runtime_model: str  # one line: what the numbers model
    ideal: GroupEvaluation  # the same run at the fabric's limit: its rows name the plans it ran

    def busiest_links(self):
        """The ideal schedule's busiest links (the runtime's model has no links of its own)."""
        return self.ideal.busiest_links()


def _runtime_row(ideal: GroupEvaluation, row: GroupRow, time_us: float, choice: str) -> RuntimeRow:
    """``row`` with the runtime's time and choice in place of the ideal's, which it keeps beside.

    No runtime beats the fabric's bandwidth bound: a runtime's model sees its own picture of the
    fabric (the Neuron model sees a switched Trainium3 fabric as every chip one hop away, with no
    congestion on the cross-rack cables), and where its time would be below the bound's, the bound's
    is the time and the choice is marked ``*`` (:data:`HELD`)."""
    bound_us = row.efficiency * row.time_us
    if time_us < bound_us * (1 - 1e-12):
        time_us, choice = bound_us, choice + HELD
    kept = {f.name: getattr(row, f.name) for f in fields(GroupRow)}
    kept.update(
        time_us=time_us,
        algbw_gbps=algbw_gbps(row.bytes, time_us),
        busbw_gbps=busbw_gbps(ideal.op, ideal.ranks, row.bytes, time_us),
        algorithm=choice,
        efficiency=bound_us / time_us if time_us > 0 else 0.0,
        worst_time_us=time_us,  # the runtime's model has no routing: one time
    )
    return RuntimeRow(
        **kept,
        ideal_time_us=row.time_us,
        ideal_busbw_gbps=row.busbw_gbps,
        ideal_algorithm=row.algorithm,
    )


def _nccl(topology: Topology, ideal: GroupEvaluation, forced: dict) -> tuple[str, list[RuntimeRow]]:
    """NCCL's pick at every size of ``ideal`` and its time (module docstring), and the line saying so."""
    from trnsim.model.runtimes import nccl
    from trnsim.model.runtimes.nccl_domain import nccl_system_of

    system = nccl_system_of(topology, ideal.group)
    call_us = topology.spec.runtime.nccl.call_us
    algorithms, protocols = nccl_forced(forced)
    rows = []
    for row in ideal.rows:
        pick = nccl.predict(system, ideal.op, row.bytes, algorithms, protocols).pick
        time_us = nccl_time_us(system, pick, row.bytes, call_us)
        rows.append(_runtime_row(ideal, row, time_us, f"{pick.algorithm}/{pick.protocol}"))
    return describe_nccl(system, call_us, forced), rows


def nccl_forced(forced: dict) -> tuple[list[str] | None, list[str] | None]:
    """NCCL_ALGO and NCCL_PROTO as :func:`~trnsim.model.runtimes.nccl.predict` takes them, from
    NCCL's spellings (``NVLSTree``, ``CollNetChain``, ``LL128``) or trnsim's (``nvls_tree``).

    >>> nccl_forced({"algorithm": "NVLSTree", "protocol": "Simple"})
    (['nvls_tree'], ['simple'])
    """
    from trnsim.model.runtimes import nccl_constants as c

    def named(key: str, known: tuple[str, ...]) -> list[str] | None:
        if key not in forced:
            return None
        wanted = str(forced[key]).strip().lower().replace("_", "")
        for name in known:
            if name.replace("_", "") == wanted:
                return [name]
        raise ParameterError(f"expected one of {', '.join(known)}", key, repr(forced[key]))

    return named("algorithm", c.ALGORITHMS), named("protocol", c.PROTOCOLS)


def nccl_time_us(system, pick, size_bytes: int, call_us: float | None = None) -> float:
    """What one would measure for NCCL's ``pick`` (an NcclChoice) on ``system``: NCCL's expected
    time, plus the pipeline fill of an NVLS pick; with ``call_us``, that cost in place of NCCL's
    latency for LL and as its floor otherwise (module docstring)."""
    from trnsim.model.runtimes.nccl_chunking import nvls_channels, nvls_fill_us

    time_us = pick.time_us
    if call_us is not None:
        fixed = call_us if pick.protocol == "ll" else max(call_us, pick.latency_us)
        time_us = fixed + (pick.time_us - pick.latency_us)
    if pick.algorithm == "nvls" and system.nvls is not None:
        ops = nvls_channels(system.compute_capability, system.n_nodes) * system.nvls.n_channels
        time_us += nvls_fill_us(size_bytes, ops, pick.model_bw_gbps)
    return time_us


def _neuron(topology: Topology, ideal: GroupEvaluation, forced: dict) -> tuple[str, list[RuntimeRow]]:
    """The Neuron runtime's pick and time at every size of ``ideal``, and the line saying so."""
    from trnsim.model.runtimes import neuron
    from trnsim.model.runtimes.neuron_domain import describe_neuron, neuron_system_of

    system = neuron_system_of(topology, ideal.group)
    rows = []
    for row in ideal.rows:
        pick = neuron.predict(system, ideal.op, row.bytes).pick
        rows.append(_runtime_row(ideal, row, pick.time_us, pick.algorithm))
    return describe_neuron(system, topology.spec.runtime.neuron), rows


def _xla(topology: Topology, ideal: GroupEvaluation, forced: dict) -> tuple[str, list[RuntimeRow]]:
    """XLA's time at every size of ``ideal`` (rings axis by axis), and the line saying so."""
    from trnsim.model.runtimes import xla
    from trnsim.model.runtimes.xla_domain import describe_xla, xla_system_of

    system = xla_system_of(topology, ideal.group)
    rows = []
    for row in ideal.rows:
        priced = xla.predict(system, ideal.op, row.bytes)
        rows.append(_runtime_row(ideal, row, priced.time_us, priced.algorithm))
    return describe_xla(system), rows


_MODELS = {"nccl": _nccl, "neuron": _neuron, "xla": _xla}


def describe_nccl(system, call_us: float | None = None, forced: dict | None = None) -> str:
    """One line: NCCL's version and what its search found on ``system`` (an NcclSystem)."""
    from trnsim.model.runtimes import nccl_constants

    ring, nvls = system.ring, system.nvls
    searched = f"ring {ring.n_channels} x {ring.bw_intra_gbps:g} GB/s"
    searched += f", NVLS {nvls.n_channels} x {nvls.bw_intra_gbps:g} GB/s" if nvls else ", no NVLS"
    timed = (
        "its pick and expected time, NVLS with its pipeline fill"
        if call_us is None
        else f"its pick; time = its bandwidth term + call {call_us:g} us (LL) or its own latency"
    )
    if forced:
        timed += "; forced " + ", ".join(f"{key} {value}" for key, value in sorted(forced.items()))
    return (
        f"NCCL {nccl_constants.NCCL_VERSION}'s tuner ({timed}; compute capability "
        f"{system.compute_capability}, {system.n_ranks} GPUs on one node, {searched})"
    )


def modelled_ops(name: str) -> tuple[str, ...] | None:
    """The ops runtime ``name`` models (None: every op, the ``ideal``)."""
    if name == "nccl":
        from trnsim.model.runtimes.nccl import OPS
    elif name == "neuron":
        from trnsim.model.runtimes.neuron import OPS
    elif name == "xla":
        from trnsim.model.runtimes.xla import OPS
    else:
        return None
    return tuple(OPS)


def choose_runtime(
    topology: Topology,
    group: list[str] | None,
    name: str | None = None,
    why_not: str | None = None,
    op: str | None = None,
) -> tuple[str, str | None]:
    """The runtime a run uses, and a note when the file's default gave way to ``ideal``.

    ``name`` (asked for) is checked and kept: a runtime that cannot model the run refuses it. With no
    ``name`` the file's ``runtime.default`` prices the run when it can; when it cannot (``why_not``,
    the caller's reason: several groups, skewed traffic; or ``group`` is not what its model covers)
    the run is the ideal's and the note says why, so a default never refuses what ``ideal`` runs.

    Raises
    ------
    ParameterError, NotApplicableError
        ``name`` is unknown, or cannot model the run.
    """
    from trnsim.errors import NotApplicableError

    chosen = runtime_of(topology, name)
    if chosen == "ideal":
        return chosen, None
    ops = modelled_ops(chosen)
    if why_not is None and op is not None and ops is not None and op not in ops:
        why_not = f"its model covers {', '.join(ops)}, not {op}"
    if name is not None:
        if why_not is not None:
            raise NotApplicableError(f"{{runtime}} {chosen}: {why_not}; run with {{runtime}} ideal")
        check_runtime(topology, group, chosen)
        return chosen, None
    reason = why_not
    if reason is None:
        try:
            check_runtime(topology, group, chosen)
        except NotApplicableError as exc:  # its line names the runtime and system the note names
            reason = exc.template.removeprefix(f"{{runtime}} {chosen} on {topology.name}: ")
    if reason is None:
        return chosen, None
    return (
        "ideal",
        f"{topology.name}'s default runtime {chosen} does not model this run ({reason}): ideal numbers",
    )


def check_runtime(topology: Topology, group: list[str], name: str) -> None:
    """Refuse, before any work, a runtime that cannot model ``group`` on ``topology``: the
    :class:`~trnsim.errors.NotApplicableError` that :func:`apply_runtime` would raise."""
    name = runtime_of(topology, name)
    if name == "nccl":
        from trnsim.model.runtimes.nccl_domain import nccl_system_of

        nccl_system_of(topology, group)
    elif name == "neuron":
        from trnsim.model.runtimes.neuron_domain import neuron_system_of

        neuron_system_of(topology, group)
    elif name == "xla":
        from trnsim.model.runtimes.xla_domain import xla_system_of

        xla_system_of(topology, group)


def apply_runtime(
    topology: Topology, ideal: GroupEvaluation, name: str, forced: dict | None = None
) -> GroupEvaluation:
    """``ideal`` (one group's evaluation on ``topology``) as runtime ``name`` runs it.

    ``ideal`` returns ``ideal`` itself; another runtime a :class:`RuntimeEvaluation` whose rows are
    :class:`RuntimeRow`, in the same sizes. ``forced`` narrows the runtime's choice as a run's
    environment does (NCCL_ALGO, NCCL_PROTO: ``{"algorithm": ..., "protocol": ...}``); only ``nccl``
    takes it, and the ideal ignores it (it is trnsim's best schedule whatever a runtime is told).

    Raises
    ------
    ParameterError
        An unknown runtime.
    NotApplicableError
        The runtime cannot model this group on this system (the file lacks its facts, or the group
        is not what the runtime's model covers); the line says why.
    """
    name = runtime_of(topology, name)
    if name == "ideal":
        return ideal
    forced = dict(forced or {})
    if forced and name != "nccl":
        raise NotApplicableError(f"the {name} runtime's model takes no forced algorithm or protocol")
    model, rows = _MODELS[name](topology, ideal, forced)
    if any(row.algorithm.endswith(HELD) for row in rows):
        model += f"; {HELD} held to the fabric's bandwidth bound, which this model alone would beat"
    kept = {f.name: getattr(ideal, f.name) for f in fields(GroupEvaluation) if f.init}
    kept["rows"] = rows
    return RuntimeEvaluation(**kept, runtime=name, runtime_model=model, ideal=ideal)
