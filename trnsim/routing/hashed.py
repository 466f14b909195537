"""Hash routing: one random shortest path per flow, chosen hop by hop.

An ECMP switch hashes a flow's header to pick one of its equal-cost ports; the hash is fixed for the
flow but unrelated across switches and flows, so each hop is modelled as a uniform random choice
among the next hops: a mix of (seed, source, destination, device) keeps a pair on the same path in
every step, as a fixed hash does. Different seeds are different hash functions: callers cost several
and report the mean and the worst.
"""

import numpy as np

from trnsim.routing.mix import GAMMA, MUL1, MUL2, mix64
from trnsim.routing.walk import Walked, walk
from trnsim.topology.arrays import GraphArrays


def route_hashed(
    arrays: GraphArrays,
    dist_to: np.ndarray,
    src_nodes: np.ndarray,
    targets: np.ndarray,
    target_nodes: np.ndarray,
    weight: np.ndarray,
    seed: int,
    transit: np.ndarray | None = None,
    sets: np.ndarray | None = None,
    n_sets: int = 1,
) -> Walked:
    """Loads, latencies and lengths of flows each hashed onto one shortest path."""
    ids = arrays.node_ids.astype(np.uint64)  # whole-topology node numbers, also on a sub-graph
    src_ids = ids[np.asarray(src_nodes)]
    dst_ids = ids[np.asarray(target_nodes)]

    def keys(flows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return _keys(flows, nodes)

    def _keys(flows: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        mixed = mix64(np.uint64(seed) * GAMMA ^ src_ids[flows])
        mixed = mix64(mixed ^ dst_ids[flows] * MUL1)
        mixed = mix64(mixed ^ ids[nodes] * MUL2)
        return (mixed >> np.uint64(33)).astype(np.int64)

    return walk(
        arrays,
        dist_to,
        src_nodes,
        targets,
        target_nodes,
        weight,
        keys=keys,
        transit=transit,
        sets=sets,
        n_sets=n_sets,
    )
