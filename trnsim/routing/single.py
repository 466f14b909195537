"""Single-path routing: one deterministic shortest path per source-destination pair.

The rule (a documented convention, named an assumption where a SKU file does not cite its own):

* through switches, destination-address routing: at every device the next hop depends on the
  destination only, the ``(destination rank mod k)``-th of the ``k`` equal-cost ports in link order:
  D-mod-K routing (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations
  on real life fat trees", 2010), the rule of destination-routed fat trees. Trn3's PCIe switches
  route by destination address (docs/sources.md#trn3-address-routing), so a pair's data always takes the same path;
* on tori, dimension-order routing: the first axis (in the file's order) on which the coordinates
  differ is corrected first, along the shorter way round; a tie (half a ring away) goes by the same
  destination rule.
"""

import numpy as np

from trnsim.routing.walk import Walked, walk
from trnsim.topology.arrays import GraphArrays


def axis_priority(arrays: GraphArrays, axis_order: list[str] | None) -> np.ndarray | None:
    """Per undirected edge, its class's place in ``axis_order`` (None: no dimension order)."""
    if not axis_order:
        return None
    place = {cls: i for i, cls in enumerate(axis_order)}
    return np.fromiter((place.get(cls, len(place)) for cls in arrays.edge_cls), dtype=np.int64)


def route_single(
    arrays: GraphArrays,
    dist_to: np.ndarray,
    src_nodes: np.ndarray,
    targets: np.ndarray,
    target_nodes: np.ndarray,
    weight: np.ndarray,
    transit: np.ndarray | None = None,
    axis_order: list[str] | None = None,
    sets: np.ndarray | None = None,
    n_sets: int = 1,
) -> Walked:
    """Loads, latencies and lengths of flows routed by destination (see the module notes)."""
    ids = arrays.node_ids
    return walk(
        arrays,
        dist_to,
        src_nodes,
        targets,
        target_nodes,
        weight,
        keys=lambda flows, nodes: ids[target_nodes[flows]],
        transit=transit,
        priority=axis_priority(arrays, axis_order),
        sets=sets,
        n_sets=n_sets,
    )
