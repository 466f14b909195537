"""What the Neuron runtime's collectives cost on Trainium, and which algorithm it picks.

The runtime documents its algorithms and when it uses each (neuron-runtime/explore/
intranode-collective-comm.rst and internode-collective-comm.rst in aws-neuron/aws-neuron-sdk; the
constants and their sections are in :mod:`~trnsim.model.runtimes.neuron_constants`): inside a
NeuronLink domain Mesh below 1 MB, RDH from 1 to 56 MB, KangaRing above, Ring only as a fallback;
across nodes the Hierarchical algorithm, an intra-node phase and an inter-node one over EFA. This
module prices every algorithm that applies with an alpha-beta model,

    time_us = call_overhead_us + steps x hop_latency_us + EFA steps x efa_hop_latency_us
              + per phase max(NeuronLink bytes / link bandwidth, HBM bytes / HBM bandwidth)
              + EFA bytes / (EFA bandwidth x efficiency)

(:mod:`~trnsim.model.runtimes.neuron_algorithms` gives each algorithm's steps and bytes), and returns
the one the runtime *picks by size*, not the fastest: that is what nccom-test would show.

Rules, on numbers only (no instance type):

- inside a node, the pick follows the documented size ranges, applied to each rank's share of the
  buffer when ``ranges_per_rank`` (the ranges were measured at 64 ranks; an assumption, see
  :class:`NeuronSystem`); an algorithm that does not apply falls back to Ring (KangaRing needs rank
  pairs on a chip, so one-rank-per-chip groups run Ring, as the page says; RDH needs a power-of-two
  number of chips: Ring there is an assumption);
- across nodes: all-reduce = intra-node reduce-scatter + inter-node all-reduce (on ``1/(c r)`` of
  the buffer) + intra-node all-gather; all-gather = inter-node then intra-node; reduce-scatter =
  intra-node then inter-node (internode-collective-comm.rst, "Hierarchical Algorithm"). No size
  ranges are published for the inter-node phase: the pick takes the fastest of Ring, Mesh and RDH by
  this model (an assumption). Flat Ring across nodes ("edge cases only", Trn1) is not modelled;
- all-to-all: no algorithm is documented; modelled as one routed Mesh step (plus one EFA step
  across nodes), each rank's off-chip and off-node shares over NeuronLink and EFA at once (an
  assumption);
- Trainium3: no algorithm set is published; the same selection is assumed. Its NeuronSwitch
  fabric is described with ``torus_dims=None`` (every chip one hop away).

Not modelled: the single-step Mesh all-reduce, Flat Ring, SBUF collectives, DMA bandwidth limits
(3.5 TB/s per Trainium2 chip, trainium2.rst) and multi-stream contention beyond the
``bandwidth_share`` a caller passes (see :func:`~neuron_system.dma_shares`).

Sizes follow nccom-test's ``size(B)`` column: the buffer for all-reduce, the gathered output for
all-gather, the whole input for reduce-scatter, each rank's send buffer for all-to-all. Bus bandwidth
uses nccom-test's factors (nccom-test.rst, "Bus Bandwidth Calculation"), in GB/s = 1e9 B/s (older
nccom-test outputs are in GiB/s).

Example: a 16-chip 4x4 torus at LNC=2, 64 ranks with 128 GB/s of NeuronLink each (four 128 GB/s
links per chip), HBM 2.9 TB/s per chip. At 64 MiB the runtime runs KangaRing; Mesh would take twice
the link bytes (the torus' mean distance to another chip is 32/15 hops).

>>> torus = NeuronSystem(chips_per_node=16, ranks_per_chip=4, link_gbps_per_rank=128.0,
...                      torus_dims=(4, 4), hbm_gbps_per_chip=2900.0)
>>> big = predict(torus, "allreduce", 64 << 20)
>>> big.pick.algorithm, [x.algorithm for x in big.candidates]
('kangaring', ['mesh', 'rdh', 'kangaring', 'ring'])
>>> predict(torus, "allreduce", 64 << 10).pick.algorithm
'mesh'
"""

from dataclasses import dataclass

from trnsim.errors import UsageError
from trnsim.model.runtimes import neuron_algorithms as alg
from trnsim.model.runtimes import neuron_constants as c
from trnsim.model.runtimes.neuron_system import NeuronSystem, lnc_ranks_per_chip, torus_mean_hops

__all__ = ["OPS", "NeuronChoice", "NeuronPrediction", "NeuronSystem", "lnc_ranks_per_chip", "predict"]

OPS = ("allreduce", "allgather", "reducescatter", "alltoall")
# nccom-test.rst, "Bus Bandwidth Calculation": the bus bandwidth factor of each operation
BUS_FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
}
# the phases of each operation, in order: (where, phase); "inter" runs on 1/(ranks per node) of it
_STAGES = {
    "allreduce": (("intra", "reducescatter"), ("inter", "reducescatter"), ("inter", "allgather"),
                  ("intra", "allgather")),
    "allgather": (("inter", "allgather"), ("intra", "allgather")),
    "reducescatter": (("intra", "reducescatter"), ("inter", "reducescatter")),
}  # fmt: skip


@dataclass(frozen=True)
class NeuronChoice:
    """One algorithm priced: ``latency_us`` (call overhead and steps), ``transfer_us`` (the bytes),
    their sum ``time_us``, and nccom-test's ``algbw = size / time`` and ``busbw`` for that time.

    ``algorithm`` is ``intra`` inside one node, ``inter`` with one rank per node, else
    ``"intra+inter"`` (nccom-test shows those as ``hier``)."""

    algorithm: str
    intra: str | None
    inter: str | None
    latency_us: float
    transfer_us: float
    time_us: float
    algbw_gbps: float
    busbw_gbps: float


@dataclass(frozen=True)
class NeuronPrediction:
    """Every applicable algorithm, and the one the runtime picks by its size ranges."""

    op: str
    size_bytes: int
    candidates: tuple[NeuronChoice, ...]
    pick: NeuronChoice


def ranged_algorithm(system: NeuronSystem, size_bytes: int) -> str:
    """The intra-node algorithm the documented size ranges give for ``size_bytes``, before fallback:
    Mesh below 1 MiB, RDH up to 56 MiB, KangaRing above (scaled by ranks / 64 when
    ``ranges_per_rank``)."""
    n = system.ranks_per_node if system.ranges_per_rank else c.RANGES_RANKS
    scaled = size_bytes * c.RANGES_RANKS  # compare size / n with bound / 64 in whole numbers
    if scaled < c.MESH_BELOW_BYTES * n:
        return "mesh"
    return "rdh" if scaled <= c.KANGARING_ABOVE_BYTES * n else "kangaring"


def intra_pick(system: NeuronSystem, size_bytes: int) -> str:
    """The runtime's intra-node algorithm: the ranged one, or Ring when that one does not apply."""
    ranged = ranged_algorithm(system, size_bytes)
    return ranged if alg.intra_applicable(system, ranged) else "ring"


def _price(system, op, size, intra, inter, share):
    """(latency_us, transfer_us) of one combination."""
    latency, transfer = system.call_overhead_us, 0.0
    for where, phase in _STAGES[op]:
        if where == "intra" and intra is not None:
            steps, link_us, hbm_us = alg.intra_phase(system, intra, phase, size, share)
            latency += steps * system.hop_latency_us
            transfer += max(link_us, hbm_us)
        elif where == "inter" and inter is not None:
            steps, efa_us = alg.inter_phase(system, inter, size / system.ranks_per_node, share)
            latency += steps * system.efa_hop_latency_us
            transfer += efa_us
    return latency, transfer


def _alltoall(system: NeuronSystem, size: int, share: float):
    """The routed-Mesh model of all-to-all (module docstring)."""
    n, r, chips = system.n_ranks, system.ranks_per_chip, system.chips_per_node
    off_chip = r * size * (chips - 1) * r / n  # bytes a chip sends to other chips of its node
    hops = 1.0 if system.torus_dims is None else torus_mean_hops(system.torus_dims)
    link_us = off_chip * hops / (1000 * system.chip_link_gbps * share)
    efa_us = 0.0
    if system.nodes > 1:
        off_node = size * (n - system.ranks_per_node) / n
        efa_us = off_node / (1000 * system.efa_gbps_per_rank * system.efa_mesh_efficiency * share)
    hbm_us = 0.0
    if system.hbm_gbps_per_chip is not None:
        touched = c.HBM_TOUCHES["mesh"]["allgather"] * r * size * (n - 1) / n
        hbm_us = touched / (1000 * system.hbm_gbps_per_chip * share)
    latency = system.call_overhead_us + system.hop_latency_us * int(system.ranks_per_node > 1)
    latency += system.efa_hop_latency_us * int(system.nodes > 1)
    return latency, max(link_us, efa_us, hbm_us)


def _choice(system, op, size, intra, inter, latency, transfer) -> NeuronChoice:
    time = latency + transfer
    name = "+".join(x for x in (intra, inter) if x is not None)
    algbw = size / (1000 * time)
    return NeuronChoice(
        name, intra, inter, latency, transfer, time, algbw, algbw * BUS_FACTOR[op](system.n_ranks)
    )


def _check_call(system, op, size_bytes, bandwidth_share) -> None:
    if not isinstance(system, NeuronSystem):
        raise UsageError(f"Neuron: system: expected a NeuronSystem, got {type(system).__name__}")
    if op not in OPS:
        raise UsageError(f"Neuron op: expected one of {', '.join(OPS)}, got {op!r}")
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or size_bytes < 1:
        raise UsageError(f"Neuron size: expected a whole number of bytes of at least 1, got {size_bytes!r}")
    share = bandwidth_share
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise UsageError(f"Neuron bandwidth_share: expected a number above 0 and at most 1, got {share!r}")


def predict(system: NeuronSystem, op: str, size_bytes: int, bandwidth_share: float = 1.0) -> NeuronPrediction:
    """The time of every algorithm the runtime could run for ``op`` at ``size_bytes``, and its pick.

    Parameters
    ----------
    system:
        The group, as numbers.
    op:
        One of :data:`OPS`.
    size_bytes:
        nccom-test's size (module docstring), at least 1 byte.
    bandwidth_share:
        The share of every bandwidth this collective gets while other DMA rings compete, for example
        from :func:`~trnsim.model.runtimes.neuron_system.dma_shares` (an assumption: the collective
        is as DMA-bound as it is link-bound). 1 alone.
    """
    _check_call(system, op, size_bytes, bandwidth_share)
    if op == "alltoall":
        only = _choice(system, op, size_bytes, "mesh", None, *_alltoall(system, size_bytes, bandwidth_share))
        return NeuronPrediction(op, size_bytes, (only,), only)
    intras = [a for a in c.INTRA_ALGORITHMS if alg.intra_applicable(system, a)]
    if system.ranks_per_node == 1:
        intras = [None]
    inters = (
        [a for a in c.INTER_ALGORITHMS if alg.inter_applicable(system, a)] if system.nodes > 1 else [None]
    )
    candidates = [
        _choice(
            system,
            op,
            size_bytes,
            intra,
            inter,
            *_price(system, op, size_bytes, intra, inter, bandwidth_share),
        )
        for intra in intras
        for inter in inters
    ]
    wanted = intra_pick(system, size_bytes) if system.ranks_per_node > 1 else None
    # no ranges are published between nodes: the fastest inter-node phase for the runtime's intra pick
    pick = min((x for x in candidates if x.intra == wanted), key=lambda x: x.time_us)
    return NeuronPrediction(op, size_bytes, tuple(candidates), pick)
