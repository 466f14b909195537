"""Multi-path (relayed): every block of a demand matrix split over paths by a maximum concurrent flow.

``mesh`` sends each block of a demand op (sendrecv, permute, gather, scatter, alltoallv) straight to
its target, and the routing spreads it over shortest paths only: a send/recv between neighbours on
a ring uses the one link between them. ``multipath`` routes the whole matrix at once by the
multicommodity flow whose busiest link is least busy (:func:`trnsim.routing.flow.min_congestion`),
through every device that forwards (switches, and chips where the system's routing lets them
relay): a send/recv between two chips reaches the max-flow between them (both ways round a ring:
twice mesh's).

As data it is mesh's program: each block goes from its source to its target in one round. The
devices on the way only forward bytes as they arrive (no store-and-forward rounds), so the step
costs the flow's link loads, and its latency the longest path's (:class:`~trnsim.collectives.schedule.Step`
``paths``; :meth:`trnsim.model.router.Router.route_all` takes them as given). Where those paths are
longer than the shortest ones, small sizes may be faster on ``mesh``: the cost model picks per size.

A uniform all-to-all is left to mesh and pairwise (its flows are every pair; the flow program grows as
sources x links): ``multipath`` needs a demand matrix, and refuses one whose program would be too
large (:data:`trnsim.routing.flow.MAX_FLOW_VARIABLES`).
"""

from dataclasses import replace

import numpy as np

from trnsim.collectives.algorithms import mesh
from trnsim.collectives.algorithms.registry import algorithm, program_of
from trnsim.collectives.program import Program
from trnsim.collectives.schedule import Context, NotApplicable, Step
from trnsim.routing.flow import check_size, min_congestion
from trnsim.routing.policy import routing_of
from trnsim.routing.shortest import transit_mask
from trnsim.topology.arrays import graph_arrays


def _demand(ctx: Context):
    """The matrix's flows ``(src, dst, weight)`` between positions, as mesh sends them, and the
    graph's arrays and each member's node (refused, like the schedule, where the program would be
    too large)."""
    if ctx.traffic is None:
        raise NotApplicable(
            "routes a demand matrix (sendrecv, permute, gather, scatter, alltoallv, a skewed all-to-all); "
            "a uniform all-to-all is mesh's and pairwise's"
        )
    src, dst = np.nonzero(~np.eye(ctx.p, dtype=bool) & (ctx.traffic > 0))
    arrays = graph_arrays(ctx.topology)
    rows = np.asarray([arrays.index[chip] for chip in ctx.group], dtype=np.int64)
    check_size(arrays, rows[src], rows[dst])
    return (src, dst, ctx.traffic[src, dst]), arrays, rows


@algorithm(
    "multipath",
    {"alltoall"},
    "relayed: each block of a demand matrix (sendrecv, permute, gather, scatter, alltoallv) split over "
    "paths through every forwarding device by a maximum concurrent flow (max-flow for one pair); "
    "up to 6,000 sources (or sinks) x directed links",
    aliases=("relayed", "maxflow"),
    takes_traffic=True,
)
def schedule(ctx: Context, op: str) -> list[Step]:
    (src, dst, weight), arrays, rows = _demand(ctx)
    if not len(src):
        return [Step.of((src, dst), weight, 1, "multipath")]
    transit = transit_mask(arrays, routing_of(ctx.topology.spec).relay)
    routed = min_congestion(arrays, rows[src], rows[dst], weight, transit)
    paths = tuple(
        tuple((tuple(arrays.nodes[node] for node in path), share) for path, share in flow)
        for flow in routed.paths
    )
    return [Step(src, dst, weight, label="multipath (max concurrent flow)", paths=paths)]


@program_of("multipath")
def program(ctx: Context, op: str) -> Program:
    """Mesh's program (one round, each block straight from its source to its target): the devices
    on the paths forward bytes, they hold no block."""
    _demand(ctx)
    return replace(mesh.program(ctx, op), algorithm="multipath")
