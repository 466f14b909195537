"""A pipeline's cost against its definition, round by round: the basis of patterns, the distinct
links and the rounds costed in blocks change no time and no chunk count."""

import numpy as np
import pytest

from trnsim.collectives.schedule import Step
from trnsim.model import cost
from trnsim.model.cost import PipelineCost
from trnsim.model.router import StepRoute


def _chains(rng, links: int, alike: bool):
    """Random chains of stages; ``alike``: every pattern loads the links in a few equal groups (as a
    translation-invariant step on a torus loads each orbit alike)."""
    units = [Step(np.zeros(1, int), np.ones(1, int), np.ones(1)) for _ in range(4)]
    group = rng.integers(0, 3, links)
    patterns = []
    for _ in units:
        loads = rng.random(3)[group] if alike else rng.random(links) * (rng.random(links) < 0.6)
        patterns.append(StepRoute(1e-9, float(rng.uniform(0, 500)), 1, "x", loads))
    chains = []
    for _ in range(rng.integers(1, 4)):
        chain = []
        for _ in range(rng.integers(1, 7)):
            stage = []
            for k in rng.choice(4, size=rng.integers(1, 3), replace=False):
                scale = float(rng.uniform(0.1, 2))
                step = units[k].scaled(scale) if rng.random() < 0.7 else units[k]
                route = patterns[k]
                if step.unit is not None:  # the router scales a unit's loads by the step's scale
                    route = StepRoute(0, route.latency_ns, 1, "x", route.link_loads * scale)
                stage.append((step, route))
            chain.append(stage)
        chains.append(chain)
    return chains


def _by_definition(chains, alpha_ns, bw, size, counts) -> dict[int, float]:
    """Each chunk count's time: ``m + D - 1`` rounds, stage ``i`` of a chain busy in round ``r`` when
    ``0 <= r - i < m``; a round costs its busy stages' largest latency plus ``size / m`` over the
    busiest link's bandwidth under their summed loads."""
    depth = max(len(chain) for chain in chains)
    out = {}
    for m in counts:
        total = 0.0
        for r in range(m + depth - 1):
            loads, latency = np.zeros(len(bw)), 0.0
            for chain in chains:
                for i, stage in enumerate(chain):
                    if 0 <= r - i < m:
                        for step, route in stage:
                            loads += step.repeat * route.link_loads
                            latency = max(latency, step.repeat * (alpha_ns + route.latency_ns) / 1e3)
            total += latency + size / m * 1e6 * (loads / bw).max()
        out[m] = total
    return out


@pytest.mark.parametrize("alike", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_pipeline_times_follow_the_definition(seed, alike, monkeypatch):
    monkeypatch.setattr(cost, "_BLOCK_ENTRIES", 50)  # several blocks of rounds
    rng = np.random.default_rng(seed)
    links = 40
    chains = _chains(rng, links, alike)
    bw = rng.uniform(1e9, 4e9, links)
    pipeline = PipelineCost(chains, alpha_ns=800.0, bw_bps=bw, max_chunks=40, min_chunk_bytes=1)
    for size in (1e3, 1e6, 1e9):
        counts, times = pipeline._times_us(size)
        expected = _by_definition(chains, 800.0, bw, size, counts.tolist())
        for m, t in zip(counts.tolist(), times.tolist(), strict=True):
            assert t == pytest.approx(expected[m], rel=1e-12), (size, m)
        assert pipeline.time_us(size) == pytest.approx(min(expected.values()), rel=1e-12)


def test_equal_links_are_costed_once():
    rng = np.random.default_rng(1)
    per_bw = rng.random((5, 4))[:, rng.integers(0, 4, 300)]
    distinct = cost._distinct_columns(per_bw)
    assert distinct.shape[1] == len({tuple(col) for col in per_bw.T})
    assert {tuple(col) for col in distinct.T} == {tuple(col) for col in per_bw.T}
    unequal = rng.random((5, 300))
    assert cost._distinct_columns(unequal) is unequal
