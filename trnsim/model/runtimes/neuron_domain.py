"""A group of NeuronCores on one NeuronLink domain, read from the graph, as the Neuron runtime sees it.

:func:`neuron_system_of` builds the :class:`~trnsim.model.runtimes.neuron_system.NeuronSystem` of a
group from a built :class:`~trnsim.topology.graph.Topology` and the file's ``runtime.neuron`` facts,
never from a system's name:

- ranks: the group's members; a rank is a logical NeuronCore, ``chip.ranks`` of them per chip
  (``--ranks-per-chip``), as nccom-test counts them. The group must take the same ranks on each of
  its chips, and no more than the chip's logical cores (``cores_per_chip / lnc``);
- one node: every chip of the file is one NeuronLink domain (the runtime's "intra-node"); EFA between
  files is the cluster commands' business;
- link bandwidth per rank: the slowest chip's NeuronLink bandwidth to the rest of the group (its links
  to the group's other chips and to switches, after the file's efficiency: NeuronLink's protocol
  overhead is physical, not the runtime's) over its ranks. On a torus whose axes differ in rate
  (Trn2 UltraServer's slower links between instances) that is their sum, spread evenly (an
  assumption of the model, which treats a chip's links as one pool);
- torus: on a torus file the group must be a box of whole rings (a full axis, which wraps) or pairs of
  neighbours along each axis it spans; ``torus_dims`` are those extents. On a switched file every chip
  is one hop from every other (``torus_dims=None``);
- HBM bandwidth and the per-call cost: the facts ``hbm_gbps`` and ``call_us`` (unset: the model's
  assumption, :data:`~trnsim.model.runtimes.neuron_constants.CALL_OVERHEAD_US`).

What does not fit is refused in one line (:class:`~trnsim.errors.NotApplicableError`).
"""

from trnsim.errors import NotApplicableError
from trnsim.model.runtimes import neuron_constants as c
from trnsim.model.runtimes.group_shape import GroupShapeError, chip_bandwidth, chips_of, torus_spans
from trnsim.model.runtimes.neuron_system import NeuronSystem
from trnsim.topology.graph import Topology


def _refuse(topology: Topology, why: str) -> NotApplicableError:
    return NotApplicableError(f"{{runtime}} neuron on {topology.name}: {why}")


def _torus_dims(topology: Topology, chips: list[str]) -> tuple[int, ...] | None:
    if topology.spec.kind != "torus" or len(chips) == 1:
        return None
    spans = torus_spans(topology, chips)
    for span in spans:
        if not span.wrap and span.size > 2:
            raise GroupShapeError(
                f"its {span.size} chips along axis {span.name} are a line, not a ring: the Neuron model takes "
                "whole torus axes or pairs of neighbours"
            )
    return tuple(span.size for span in spans)


def neuron_system_of(topology: Topology, group: list[str]) -> NeuronSystem:
    """The :class:`NeuronSystem` of ``group`` (rank names) on ``topology`` (see the module docstring).

    Raises
    ------
    NotApplicableError
        The file has no ``runtime.neuron`` facts, the group has fewer than 2 ranks, more ranks on a
        chip than its logical cores, unequal ranks per chip, or a shape the model does not cover.
    """
    facts = topology.spec.runtime.neuron
    if facts is None:
        raise _refuse(topology, "the file has no runtime.neuron section (hbm_gbps, cores_per_chip, lnc)")
    if len(group) < 2:
        raise _refuse(topology, f"a collective needs at least 2 ranks, the group has {len(group)}")
    try:
        chips, per_chip = chips_of(topology, group)
        logical = facts.cores_per_chip // facts.lnc
        if per_chip > logical:
            raise GroupShapeError(
                f"{per_chip} ranks on a chip, more than its {logical} logical NeuronCores ({facts.cores_per_chip} "
                f"cores at LNC={facts.lnc}, runtime.neuron.lnc)"
            )
        dims = _torus_dims(topology, chips)
    except GroupShapeError as exc:
        raise _refuse(topology, str(exc)) from None
    chip_gbps = chip_bandwidth(topology, chips) if len(chips) > 1 else 1.0
    if chip_gbps <= 0:
        raise _refuse(topology, "the group's chips have no links to each other")
    return NeuronSystem(
        chips_per_node=len(chips),
        ranks_per_chip=per_chip,
        link_gbps_per_rank=chip_gbps / per_chip,
        torus_dims=dims,
        hbm_gbps_per_chip=facts.hbm_gbps,
        call_overhead_us=c.CALL_OVERHEAD_US if facts.call_us is None else facts.call_us,
    )


def describe_neuron(system: NeuronSystem, facts) -> str:
    """One line: what the Neuron numbers model on ``system``."""
    if system.chips_per_node == 1:
        shape, links = "one chip", ""
    else:
        dims = system.torus_dims
        shape = (
            "switched, one hop"
            if dims is None
            else "x".join(map(str, dims)) + (" ring" if len(dims) == 1 else " torus")
        )
        links = f", {system.chip_link_gbps:g} GB/s of NeuronLink per chip"
    whole = facts.cores_per_chip // facts.lnc
    hint = "" if system.ranks_per_chip == whole else f"; a whole chip at LNC={facts.lnc} is {whole} ranks"
    return (
        f"the Neuron runtime's documented algorithms by size (Mesh < 1 MiB, RDH to 56 MiB, KangaRing above, "
        f"Ring fallback; ranges per rank from 64 ranks), {system.chips_per_node} chips x {system.ranks_per_chip} "
        f"ranks ({shape}{hint}){links}, call "
        f"{system.call_overhead_us:g} us + {system.hop_latency_us:g} us per hop"
    )
