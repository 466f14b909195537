"""One path per flow (``single``, ``hash``): every flow walked hop by hop.

``single`` follows destination-address routing (dimension order on tori:
:func:`trnsim.routing.single.route_single`); ``hash`` picks each hop as a switch hashing the flow
would, under the given seed (:func:`trnsim.routing.hashed.route_hashed`). All demands of a batch
are walked together; each flow's latency and length are those of the path it took.
"""

import numpy as np

from trnsim.errors import NotApplicable
from trnsim.routing.hashed import route_hashed
from trnsim.routing.paths import GroupPaths
from trnsim.routing.single import route_single
from trnsim.routing.strategies.base import Demand, LinkLoads, Strategy

# every flow is walked: refuse a batch of more flow-links than this
WALK_LIMIT = 50_000_000


def applies(paths: GroupPaths, demand: Demand) -> bool:
    """A single-path policy (``single`` or ``hash``)."""
    return not paths.ecmp


def loads(paths: GroupPaths, demands: list[Demand], seed: int = 0) -> list[LinkLoads]:
    parts = [demand.flows(paths.p) for demand in demands]
    counts = [len(src) for src, _, _ in parts]
    total = sum(counts)
    if total * max(paths.max_links, 1) > WALK_LIMIT:
        raise NotApplicable(
            f"{total:,} flows are too many to route one by one under routing {paths.policy.label} "
            f"(limit {WALK_LIMIT:,} flow-links)"
        )
    n_edges = len(paths.arrays.src)
    if not total:
        return [LinkLoads(np.zeros(n_edges), 0.0, 0, 0) for _ in demands]
    src = np.concatenate([s for s, _, _ in parts]).astype(np.int64)
    dst = np.concatenate([d for _, d, _ in parts]).astype(np.int64)
    weight = np.concatenate([w for _, _, w in parts]).astype(float)
    sets = np.repeat(np.arange(len(demands)), counts)
    rows = paths.rows
    args = (paths.arrays, paths.dist, rows[src], dst, rows[dst], weight)
    if paths.policy.policy == "single":
        walked = route_single(
            *args, transit=paths.transit, axis_order=paths.axis_order, sets=sets, n_sets=len(demands)
        )
    else:
        walked = route_hashed(*args, seed=seed, transit=paths.transit, sets=sets, n_sets=len(demands))
    latency = np.full(len(demands), -np.inf)
    np.maximum.at(latency, sets, walked.latency_ns)
    links = np.zeros(len(demands), dtype=np.int64)
    np.maximum.at(links, sets, walked.links)
    return [
        LinkLoads(walked.loads[i], float(latency[i]), int(links[i]), count) for i, count in enumerate(counts)
    ]


STRATEGY = Strategy("walked", "one path per flow, walked hop by hop (single, hash)", applies, loads)
