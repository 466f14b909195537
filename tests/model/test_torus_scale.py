"""Whole-system collectives on a torus large enough to be routed by translation (8x8x8, the shape
class of the 32x32x32 example: a cube of even rings) against closed forms: the injection bound of a
chip's six links, the bisection bound of all-to-all, and the dimension-by-dimension ring all-reduce
step by step. The 32,768-chip example's figures follow the same formulas (see the scale section of
the docs)."""

import pytest

from trnsim.model.engine import evaluate
from trnsim.routing.paths import SYMMETRY_FROM
from trnsim.topology import load_topology

K = 8
GIB = 1 << 30


@pytest.fixture(scope="module")
def cube():
    topo = load_topology(
        None, "examples/torus-32x32x32.yaml", overrides=[f"torus.axes.{a}.size={K}" for a in "xyz"]
    )
    assert topo.n_chips == K**3 >= SYMMETRY_FROM  # routed by translation
    return topo


def _link_gbps(topo) -> float:
    """One direction of one link: 16 lanes of 4 GB/s at the file's 88% efficiency."""
    return 16 * 4.0 * 0.88


def test_allreduce_bound_is_a_chips_six_links_and_multidim_reaches_it(cube):
    b = _link_gbps(cube)
    row = evaluate(cube, "allreduce", [GIB], cube.chips, algo="multidim").rows[0]
    # all-reduce busbw = 2 (p-1)/p S / t; each chip injects and receives over 6 links of b
    assert row.bound_busbw_gbps == pytest.approx(6 * b, rel=1e-9)
    assert 0.95 * row.bound_busbw_gbps <= row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9)
    shares = list(row.link_utilisation.values())  # the streams keep the three axes alike
    assert max(shares) - min(shares) < 0.01


def test_alltoall_bound_is_the_bisection_of_the_cube(cube):
    """Halving the cube across one axis cuts 2 K^2 links (the wrap doubles them); (p/2)^2 flows of
    S/p cross each way, so t >= p S / (8 K^2 b) and busbw = (p-1)/p S / t <= (p-1)/p 8 b / K."""
    b, p = _link_gbps(cube), K**3
    bound = (p - 1) / p * 8 * b / K
    row = evaluate(cube, "alltoall", [GIB], cube.chips, algo="mesh").rows[0]
    assert row.bound_busbw_gbps == pytest.approx(bound, rel=1e-9)
    # spread over every shortest path, all pairs load the cut evenly: the bound, but for alpha
    assert row.busbw_gbps == pytest.approx(bound, rel=2e-3)


def test_torus_allreduce_is_its_ring_steps_axis_by_axis(cube):
    """Reduce-scatter over each axis's bidirectional rings, K - 1 steps of a 2K-th of what is left
    each way, then the all-gather back: each step alpha + one link's latency + its bytes over b."""
    b = _link_gbps(cube) * 1e9
    alpha_us, link_us = 1.5, 0.03
    size, expected = float(GIB), 0.0
    for _ in range(3):
        expected += 2 * (K - 1) * (alpha_us + link_us + size / (2 * K) / b * 1e6)
        size /= K
    row = evaluate(cube, "allreduce", [GIB], cube.chips, algo="torus").rows[0]
    assert row.time_us == pytest.approx(expected, rel=1e-9)
