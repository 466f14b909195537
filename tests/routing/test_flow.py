"""The maximum concurrent flow: closed forms, devices that do not forward, and paths that add up."""

import numpy as np
import pytest
from collectives.synthetic import complete_topology, ring_topology

from trnsim.errors import NotApplicable
from trnsim.routing.flow import min_congestion
from trnsim.topology.arrays import graph_arrays


def _loads(arrays, weight, routed) -> np.ndarray:
    """Each directed edge's bytes, summed from the paths."""
    edge = {(int(u), int(v)): e for e, (u, v) in enumerate(zip(arrays.src, arrays.dst, strict=True))}
    loads = np.zeros(len(arrays.src))
    for w, paths in zip(weight, routed.paths, strict=True):
        assert sum(share for _, share in paths) == pytest.approx(1.0, abs=1e-12)
        for path, share in paths:
            assert len(set(path)) == len(path)  # simple paths
            for u, v in zip(path, path[1:], strict=False):
                loads[edge[u, v]] += w * share
    return loads


def test_a_gather_on_a_ring_fills_both_links_into_the_root():
    # ranks 1, 2, 3 of a ring of four send one block each to 0: its two in-links carry 3 blocks,
    # 1.5 each at best (2 splits half each way round)
    arrays = graph_arrays(ring_topology(4, lanes=100))
    src, dst, weight = np.array([1, 2, 3]), np.zeros(3, dtype=int), np.ones(3)
    routed = min_congestion(arrays, src, dst, weight)
    assert routed.seconds_per_byte == pytest.approx(1.5 / 100e9, rel=1e-9)
    for s, paths in zip(src, routed.paths, strict=True):
        assert all(path[0] == s and path[-1] == 0 for path, _ in paths)
    busiest = (_loads(arrays, weight, routed) / (arrays.bw_gbps * 1e9)).max()
    assert busiest == pytest.approx(routed.seconds_per_byte, rel=1e-6)


def test_a_uniform_all_to_all_on_a_complete_graph_goes_direct():
    # every link must carry at least its own pair's block (the total over the fewest links fills them)
    p = 5
    arrays = graph_arrays(complete_topology(p, bw_gbps=100.0))
    src, dst = np.nonzero(~np.eye(p, dtype=bool))
    weight = np.full(len(src), 1 / p)
    routed = min_congestion(arrays, src, dst, weight)
    assert routed.seconds_per_byte == pytest.approx(1 / p / 100e9, rel=1e-9)
    assert all(len(path) == 2 for paths in routed.paths for path, _ in paths)


def test_devices_that_do_not_forward_carry_only_their_own_bytes():
    arrays = graph_arrays(ring_topology(5, lanes=100))
    relay = min_congestion(arrays, [0], [1], [1.0])
    alone = min_congestion(arrays, [0], [1], [1.0], transit=np.zeros(arrays.n_nodes, dtype=bool))
    assert 1e-9 / relay.seconds_per_byte == pytest.approx(200.0)
    assert 1e-9 / alone.seconds_per_byte == pytest.approx(100.0)
    assert [path for path, _ in alone.paths[0]] == [(0, 1)]
    with pytest.raises(NotApplicable, match="not joined"):
        min_congestion(arrays, [0], [2], [1.0], transit=np.zeros(arrays.n_nodes, dtype=bool))
