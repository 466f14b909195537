"""A group of TPU chips on one ICI torus, read from the graph, as XLA's collectives see it.

:func:`xla_system_of` builds the :class:`~trnsim.model.runtimes.xla.XlaSystem` of a group from a
built :class:`~trnsim.topology.graph.Topology` and the file's ``runtime.xla`` facts, never from a
system's name: the group must be one rank per chip on a torus file, its chips a box of the torus
(whole axes, which wrap, or runs of neighbours, which do not); each axis it spans becomes an
:class:`~trnsim.model.runtimes.xla.XlaAxis` at the slowest link along it, at its raw rate (the
shortfall is the runtime's ``efficiency``, not the file's). What does not fit is refused in one line
(:class:`~trnsim.errors.NotApplicableError`).
"""

from trnsim.errors import NotApplicableError
from trnsim.model.runtimes import xla
from trnsim.model.runtimes.group_shape import GroupShapeError, chips_of, torus_spans
from trnsim.topology.graph import Topology


def _refuse(topology: Topology, why: str) -> NotApplicableError:
    return NotApplicableError(f"{{runtime}} xla on {topology.name}: {why}")


def xla_system_of(topology: Topology, group: list[str]) -> xla.XlaSystem:
    """The :class:`XlaSystem` of ``group`` (rank names) on ``topology``.

    Raises
    ------
    NotApplicableError
        The file has no ``runtime.xla`` facts or is not a torus, a chip hosts several ranks, the group
        has fewer than 2 chips or is not a box of neighbours.
    """
    facts = topology.spec.runtime.xla
    if facts is None:
        raise _refuse(topology, "the file has no runtime.xla section (efficiency, hop_us, call_us)")
    if topology.spec.kind != "torus":
        raise _refuse(topology, "XLA's collectives here run on a TPU torus; the file is switched")
    if len(group) < 2:
        raise _refuse(topology, f"a collective needs at least 2 chips, the group has {len(group)}")
    try:
        chips, per_chip = chips_of(topology, group)
        if per_chip > 1:
            raise GroupShapeError(f"{per_chip} ranks on a chip; XLA runs one per TPU chip")
        spans = torus_spans(topology, chips)
    except GroupShapeError as exc:
        raise _refuse(topology, str(exc)) from None
    axes = tuple(xla.XlaAxis(s.name, s.size, s.wrap, s.raw_gbps) for s in spans)
    return xla.XlaSystem(
        axes=axes,
        efficiency=facts.efficiency,
        hop_us=facts.hop_us,
        call_us=xla.CALL_US if facts.call_us is None else facts.call_us,
    )


def describe_xla(system: xla.XlaSystem) -> str:
    """One line: what the XLA numbers model on ``system``."""
    axes = ", ".join(
        f"{a.name} {a.size}{' ring' if a.wrap else ' line'} at {a.link_gbps:g} GB/s" for a in system.axes
    )
    return (
        f"XLA's collectives as the scaling book states them: rings along each axis ({axes}) at "
        f"{system.efficiency:g} of the link rate, {system.hop_us:g} us per hop, call {system.call_us:g} us"
    )
