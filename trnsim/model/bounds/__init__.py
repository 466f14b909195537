"""Lower bounds on a collective's time: the largest of several bandwidth candidates, and latency.

The bandwidth part is the largest of (:mod:`trnsim.model.bounds.families`):

* Injection: a rank must move at least ``factor * size`` bytes (the op's busbw factor) through its
  own links, so ``time >= factor * size / (the slowest member's total link bandwidth)`` (Patarasuk
  and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009);
  for all-reduce with unequal chips, the members' total.
* Natural cuts: across a natural cut (rack halves, torus halves, a switch plane's chips against the
  rest) with ``a`` and ``b`` members on its sides, allreduce must carry ``size`` each way, allgather
  and reducescatter ``max(a, b) * size / p``, alltoall ``a * b * size / p``; divided by the cut's
  bandwidth per direction.
* Per chip, where chips host several ranks: the ranks of a chip share its links.
* The optimum over every cut and every routing (:mod:`trnsim.model.optimum`): for all-gather
  and reduce-scatter the min-ratio cut over all vertex sets, which is achievable (ForestColl, Zhao et
  al. 2024, arXiv 2402.06787) and so exact; for all-reduce the larger of injection and the reduction
  cut (``size`` across the smallest cut splitting the group, each way); for all-to-all the maximum
  concurrent multicommodity flow through its LP dual (Shahrokhi and Matula 1990; Leighton and Rao
  1999). It is never below the natural-cut bounds when exact; it can be, where it is only a valid
  bound (an irregular group's all-to-all), so the largest of all is taken.

Ties are named in the order above: a bound reached by a chip's own links is "injection (chip)", one
reached by a natural cut "cut <name>", and the optimum's own label otherwise ("cut: 36 of 144
members vs the rest", "reduction cut: ...", "link classes xrack").

Where switches reduce in the network, all-reduce's candidates are a member's ``size`` each way and
every cut's ``size`` each way. A skewed all-to-all (a traffic matrix,
:mod:`trnsim.collectives.traffic`) is bounded by the same arguments with the matrix's own sums, valid
but not marked exact. The demand ops (gather, scatter, sendrecv, permute, all-to-allv) add their
matrix's maximum concurrent flow (:mod:`trnsim.model.optimum.demand`), exact where solved;
broadcast and reduce the smallest cut between the root and a member (exact when every device is a
member); all-gatherv and reduce-scatterv the min-ratio cut weighted by their blocks
(:mod:`trnsim.model.bounds.shaped`).

Latency: one step's alpha plus the fewest links between the farthest two members, each at the
lowest link latency.
"""

from trnsim.model.bounds.families import Candidate, largest
from trnsim.model.bounds.lower import Bound, candidates, lower_bound

__all__ = ["Bound", "Candidate", "candidates", "largest", "lower_bound"]
