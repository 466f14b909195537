"""How a cluster collective is composed: the in-domain phases before and after the cross-domain one.

A cluster is ``D`` domains of ``n`` ranks (``N = n D``); the root of a rooted op is rank 0 of the
cluster (rank 0 of the first domain, nccl-tests' default ``-r 0``), and a send/recv sends from each
rank to the next over all ``N`` (the last to the first). ``S`` is nccl-tests' size over all ``N``
ranks. The compositions (:data:`COMPOSITIONS`):

- all-reduce: reduce-scatter inside each domain, all-reduce across domains among the ``n`` groups of
  same-position ranks (each on ``S/n``), all-gather inside each domain;
- all-gather: all-gather across domains (each group gathers ``S/n``), then inside each domain (``S``);
- reduce-scatter: inside each domain (``S``), then across domains (``S/n``);
- all-to-all: inside each domain (each rank collects what its counterparts elsewhere need, ``S``),
  then across domains (each rank sends ``S/D`` to each of its ``D-1`` counterparts);
- broadcast: scatter inside the root's domain (its ``n`` ranks get ``S/n`` each), broadcast of each
  piece across domains among same-position ranks, all-gather inside every domain;
- reduce: reduce-scatter inside every domain, reduce of each ``S/n`` across domains to the root's
  domain, gather inside the root's domain;
- gather: each rank sends its block to its counterpart in the root's domain (whose ``n`` NICs
  receive ``(D-1)/D S``), then gather inside the root's domain; scatter: the mirror (scatter inside
  the root's domain, then each rank sends its counterparts their blocks);
- send/recv: the ``n - 1`` pairs inside each domain on the domain's graph and, at the same time
  (other links), each domain's last rank sending its buffer to the next domain's first;
- an ``allgatherv``, ``reducescatterv`` or ``alltoallv`` (even counts: a cluster takes no counts)
  is its base op; a ``permute`` of each rank to the next (a cluster takes no pairs) a send/recv.

A phase inside "the root's domain" runs there alone while the other domains wait: the machinery
costs every in-domain phase as one domain's, which for these is the root domain's (the slowest).
"""

from dataclasses import dataclass

from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import Op
from trnsim.errors import UsageError


@dataclass(frozen=True)
class Composition:
    """One op's composition (module docstring).

    Attributes
    ----------
    name : str
        The op the composition runs (an even v-op's base; ``sendrecv`` for a permute) and whose
        cross-domain algorithms (:data:`trnsim.model.cluster.inter.INTER_ALGORITHMS`) it takes.
    before, after : str or None
        The in-domain phase before and after the cross-domain one (an op name; None: none).
    spread : bool
        The cross-domain phase moves the buffer spread over the domain's ranks (``S/n`` a rank);
        else each rank's whole buffer (``S``).
    concurrent : bool
        The cross-domain phase runs beside the in-domain one (other data, other links), not after.
    """

    name: str
    before: str | None
    after: str | None
    spread: bool = True
    concurrent: bool = False

    def per_rank(self, size: float, n: int) -> float:
        """The cross-domain phase's bytes per rank for a buffer of ``size``."""
        return size / n if self.spread else size


COMPOSITIONS = {
    "allreduce": Composition("allreduce", "reducescatter", "allgather"),
    "allgather": Composition("allgather", None, "allgather"),
    "reducescatter": Composition("reducescatter", "reducescatter", None),
    "alltoall": Composition("alltoall", "alltoall", None, spread=False),
    "broadcast": Composition("broadcast", "scatter", "allgather"),
    "reduce": Composition("reduce", "reducescatter", "gather"),
    "gather": Composition("gather", None, "gather"),
    "scatter": Composition("scatter", "scatter", None),
    "sendrecv": Composition("sendrecv", "sendrecv", None, spread=False, concurrent=True),
}
# the phase inside the domain before and after the cross-domain one
PHASES = {name: (c.before, c.after) for name, c in COMPOSITIONS.items()}
# ops a cluster runs as another: even counts (a cluster takes none), each rank to the next
ALIASES = {
    "allgatherv": "allgather",
    "reducescatterv": "reducescatter",
    "alltoallv": "alltoall",
    "permute": "sendrecv",
}


def composition(op: Op) -> Composition:
    """The composition ``op`` runs across domains.

    >>> from trnsim.collectives.ops import get_op
    >>> composition(get_op("broadcast"))
    Composition(name='broadcast', before='scatter', after='allgather', spread=True, concurrent=False)
    >>> composition(get_op("permute")).name
    'sendrecv'
    """
    name = ALIASES.get(op.name, op.name)
    if name not in COMPOSITIONS:
        raise UsageError(
            f"a cluster collective composes {', '.join(COMPOSITIONS)} across domains, not {op.name}"
        )
    return COMPOSITIONS[name]


def phase_arguments(phase: str, n: int) -> Arguments | None:
    """What an in-domain phase runs with: a send/recv's pairs inside the domain (rank ``i`` to
    ``i + 1``, the last rank's crossing is the cross-domain phase's); None (root 0) for the others.

    >>> phase_arguments("sendrecv", 3).pairs
    ((0, 1), (1, 2))
    """
    if phase == "sendrecv":
        return Arguments(pairs=tuple((i, i + 1) for i in range(n - 1)))
    return None
