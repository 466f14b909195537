"""Many groups running the same collective at once, sharing every link.

Each group schedules its own collective; the groups run in lockstep, step ``k`` of every group at the
same time, so a link carries the sum of what every group's step ``k`` puts on it, and a group's step
lasts until the busiest link it uses has carried everyone's bytes. The concurrent run lasts as long
as its slowest group; groups whose links are disjoint take exactly their time alone.

One job per module:

==============  ==================================================================================
``prepare``     the groups checked, every algorithm scheduled for every group, the work counted
``translates``  groups that an automorphism carries onto another (torus shifts, renamed trays...)
``shared``      each group's plan costed on the shared loads of its links
``run``         routing and costing per size, shared and alone, over the hash seeds
``results``     the rows and the evaluation returned
==============  ==================================================================================
"""

from trnsim.model.concurrent.prepare import Prepared, check_work, describe_groups, prepare_concurrent
from trnsim.model.concurrent.results import ConcurrentEvaluation, ConcurrentRow
from trnsim.model.concurrent.run import evaluate_concurrent, run_concurrent

__all__ = [
    "ConcurrentEvaluation",
    "ConcurrentRow",
    "Prepared",
    "check_work",
    "describe_groups",
    "evaluate_concurrent",
    "prepare_concurrent",
    "run_concurrent",
]
