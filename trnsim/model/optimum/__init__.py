"""Exact bandwidth lower bounds for collectives on any fabric: min-ratio cuts and multicommodity flow.

Conventions: ``S`` is the nccl-tests size, the group ``C`` has ``p`` member chips, and every other
device (switches, chips outside the group) may relay. Links carry ``bw_gbps`` (1e9 B/s) in each
direction. Bounds are seconds per byte of ``S``; ``B(X)`` is the bandwidth of the directed links
leaving a vertex set ``X``.

* **All-gather.** Each member holds ``S/p`` and needs all of it. For any ``X`` holding some members
  but not all, the blocks of the members in ``X`` must leave it: ``time >= |X n C| (S/p) / B(X)``.
  The largest such ratio (the min-ratio cut) is achievable, so it is the exact optimum.
* **Reduce-scatter.** The same on the reversed graph.
* **All-reduce.** The larger of injection and the reduction cut (``S`` across the smallest cut
  splitting the group, each way).
* **All-to-all.** The maximum concurrent multicommodity flow, through its LP dual.
* **Demand ops** (gather, scatter, send/recv, permute, all-to-allv: a traffic matrix). The maximum
  concurrent flow of the matrix: a max-flow for one source or one sink, else the LP.
* **All-gatherv, reduce-scatterv.** The all-gather's cut weighted by the blocks.
* **Broadcast, reduce.** ``S`` over the smallest cut between the root and a member (exact when
  every device is a member; a Steiner bound otherwise).

One job per module:

==============  ==================================================================================
``graph``       the fabric as a directed capacity network with a group (:class:`Network`)
``twins``       graph reduction: non-member twins merged (:func:`merge_twins`)
``cuts``        max-flow cut searches: the min-ratio cut and the smallest member cut
``symmetry``    one member per orbit: a torus's translations fixing the group, name automorphisms
``gather``      all-gather's and reduce-scatter's optimum (weighted by blocks: the v ops), labelled by
                the cut that attains it; broadcast's and reduce's rooted min cut
``demand``      the demand ops' maximum concurrent flow (max-flow, or the multicommodity LP)
``refine``      edge classes from 1-WL colour refinement
``lengths``     the all-to-all dual at given edge lengths (Dijkstra, ECMP loads, supergradient)
``alltoall``    the all-to-all dual maximised (Kelley's cutting planes, or the whole LP)
``solve``       the entry point :func:`optimum` and the all-reduce bound
==============  ==================================================================================

Any cut or any lengths give a valid bound, so a search stopped by a budget still returns a valid (if
possibly loose) bound, flagged ``exact=False``.
"""

from trnsim.model.optimum.alltoall import Dual, alltoall_dual, alltoall_lp
from trnsim.model.optimum.cuts import Cut, gather_cut, member_cut
from trnsim.model.optimum.demand import demand_optimum
from trnsim.model.optimum.gather import gather_optimum, rooted_optimum
from trnsim.model.optimum.graph import Network, network
from trnsim.model.optimum.refine import edge_classes
from trnsim.model.optimum.solve import Optimum, optimum
from trnsim.model.optimum.symmetry import Translations, translations
from trnsim.model.optimum.twins import merge_twins

__all__ = [
    "Cut",
    "Dual",
    "Network",
    "Optimum",
    "Translations",
    "alltoall_dual",
    "alltoall_lp",
    "demand_optimum",
    "edge_classes",
    "gather_cut",
    "gather_optimum",
    "member_cut",
    "merge_twins",
    "network",
    "optimum",
    "rooted_optimum",
    "translations",
]
