"""Published TPU figures the catalog's peers predict (not fitted to them).

docs/sources.md#t1 (v5e) and docs/sources.md#t8 (Ironwood) are a single point and a curve in a custom unit: too
little to fit, enough to check where the model's curve bends. The efficiency (0.95) comes from T1's
plateau, so the plateau agrees by construction; what is predicted is the size where it is reached,
from T4's 1 us per hop (an assumption the files carry).
"""

import pytest

from trnsim.model.engine import evaluate
from trnsim.topology.groups import select_group
from trnsim.topology.load import load_topology


def _busbw(topology, group, sizes):
    return [row.busbw_gbps for row in evaluate(topology, "allgather", sizes, group).rows]


def test_v5e_ring_all_gather_reaches_its_plateau_near_10_mb():
    # T1: an all-gather over a full 16-chip v5e ring reaches ~95% of the link rate only at ~10 MB
    topology = load_topology("tpu-v5e-16x16")
    ring = select_group(topology, "0-15", None)  # one full ring of the last axis
    at_1mb, at_10mb, plateau = _busbw(topology, ring, [1_000_000 // 16 * 16, 10_000_000 // 16 * 16, 1 << 32])
    assert plateau == pytest.approx(2 * 45 * 0.95, rel=0.01)  # both directions of a ring, at 95%
    assert at_10mb > 0.9 * plateau  # reached by about 10 MB ...
    assert at_1mb < 0.75 * plateau  # ... and not a decade earlier


# T8: Ironwood all-gather, normalised to its 403 MB value (the unit is custom: shape only)
IRONWOOD_SIZES = [1_600_000, 6_300_000, 25_000_000, 101_000_000, 403_000_000]
IRONWOOD_SHAPE = [71.8 / 178.8, 129 / 178.8, 162 / 178.8, 175 / 178.8, 1.0]


def test_ironwood_2x2x2_all_gather_bends_where_the_measured_curve_does():
    # a 2x2x2 slice of the catalog's Ironwood file: every size-2 ring keeps both links (6 per chip)
    edits = [f"torus.axes.{axis}.size=2" for axis in "xyz"]
    topology = load_topology("ironwood", overrides=edits)
    sizes = [size // 4096 * 4096 for size in IRONWOOD_SIZES]
    busbw = _busbw(topology, topology.chips, sizes)
    shape = [value / busbw[-1] for value in busbw]
    assert shape == pytest.approx(IRONWOOD_SHAPE, abs=0.05)
    # and the shape is not one every curve has: halving the per-hop latency misses it
    fast = load_topology("ironwood", overrides=edits + ["latency.step_ns=500"])
    quick = _busbw(fast, fast.chips, sizes)
    assert quick[0] / quick[-1] - IRONWOOD_SHAPE[0] > 0.1
