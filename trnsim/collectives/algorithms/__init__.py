"""Collective algorithms as schedules: steps and pipelines of flows between group positions.

One module per algorithm (``ring``, ``multiring``, ``multidim``, ``torus``, ``rdh``, ``tree``,
``chain``, ``scatter_allgather``, ``mesh``, ``pairwise``, ``bruck``, ``nvls``, ``hierarchical``,
``forest``, ``multipath``), each registering its schedule builder
in :mod:`~trnsim.collectives.algorithms.registry` with :func:`algorithm`, and next to it its program
builder with :func:`~trnsim.collectives.algorithms.registry.program_of`: the same collective as data,
chunk by chunk (:mod:`trnsim.collectives.program`), which :mod:`trnsim.collectives.check` proves
correct and :mod:`trnsim.collectives.agreement` proves to be the schedule that is costed. Importing
this package imports them all, in the registry's order. A new algorithm is a new module here,
imported below, with both builders.

Each algorithm builds a list of :class:`~trnsim.collectives.schedule.Step` (flows ``src -> dst``
between positions 0..p-1, each carrying a fraction of the collective's size, repeated ``repeat``
times) and :class:`~trnsim.collectives.schedule.Pipeline` (chains of stages that chunks pass
through: the pipelined ``tree``, ``chain`` and ``multidim``). Schedules depend on the op and the group, never on
the size, so a whole size sweep routes each step once; a pipeline's chunk count is chosen per size
when it is costed.

Each algorithm declares the ops it supports and refuses groups it cannot serve, with a reason.
Closed forms on a fully connected graph with equal links (alpha per step, beta per byte; ``m``
chunks of a pipeline, chosen per size):

=================  ================  ==============================================
algorithm          op                time
=================  ================  ==============================================
ring               allreduce         2(p-1) alpha + 2(p-1)/p S beta
ring               allgather/RS      (p-1) alpha + (p-1)/p S beta
ring               allgatherv/RSv    (p-1) (alpha + b_max S beta)     (b_max: the largest block's share)
rdh                allreduce         2 log p alpha + 2(p-1)/p S beta   (Rabenseifner)
rdh                allgather/RS      log p alpha + (p-1)/p S beta
mesh               allreduce         2 alpha + 2 S/p beta
mesh               broadcast/reduce  2 alpha + 2 S/p beta
mesh               allgatherv/RSv    alpha + b_max S beta
mesh               others            alpha + S/p beta
chain              broadcast/reduce  (p-2+m) (alpha + S/m beta)
tree               broadcast/reduce  (D-1+m) (alpha + S/m beta)      (D = floor(log2 p))
scatter-allgather  broadcast/reduce  p alpha + S beta
scatter-multidim   broadcast/reduce  2 alpha + 2 S/p beta            (one mesh dimension: scatter, all-gather)
pairwise           alltoall          (p-1) alpha + (p-1)/p S beta
bruck              alltoall          log p alpha + (log p) S/2 beta    (p a power of 2)
bruck              allgather         log p alpha + (p-1)/p S beta      (p a power of 2)
=================  ================  ==============================================
"""

from trnsim.collectives.algorithms.registry import ALL, REDUCTIONS, REGISTRY, Algorithm, algorithm, find
from trnsim.collectives.schedule import Context, NotApplicable, Pipeline, Step

# imported for their registration, in the registry's (and ``all``'s) order
from trnsim.collectives.algorithms import ring  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import multiring  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import multidim  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import torus  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import rdh  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import tree  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import chain  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import scatter_allgather  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import mesh  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import pairwise  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import bruck  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import nvls  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import hierarchical  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import forest  # noqa: F401  isort: skip
from trnsim.collectives.algorithms import multipath  # noqa: F401  isort: skip

__all__ = [
    "ALL",
    "REDUCTIONS",
    "REGISTRY",
    "Algorithm",
    "Context",
    "NotApplicable",
    "Pipeline",
    "Step",
    "algorithm",
    "find",
]
