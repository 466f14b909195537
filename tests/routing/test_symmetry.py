"""On a wrapped torus, routing from one BFS and translations equals routing from every source."""

import numpy as np
import pytest
from conftest import topology

from trnsim.collectives import routing
from trnsim.collectives.engine import evaluate
from trnsim.collectives.ops import OPS
from trnsim.routing.symmetry import torus_symmetry

SIZES = [64, 1 << 16, 1 << 24, 1 << 30]


@pytest.mark.parametrize("sku", ["trn2-nl64", "trn2-nl256-concept"])
@pytest.mark.parametrize("op", list(OPS))
def test_symmetric_router_equals_the_plain_one(sku, op, monkeypatch):
    topo = topology(sku)
    plain = evaluate(topo, op, SIZES, topo.chips, algo="all")
    monkeypatch.setattr(routing, "_SYMMETRY_FROM", 1)
    fast = evaluate(topo, op, SIZES, topo.chips, algo="all")
    assert plain.by_algorithm.keys() == fast.by_algorithm.keys()
    for name, rows in plain.by_algorithm.items():
        for a, b in zip(rows, fast.by_algorithm[name], strict=True):
            assert a.time_us == pytest.approx(b.time_us, rel=1e-12), (name, a.bytes)
            assert (a.max_hops, a.bottleneck) == (b.max_hops, b.bottleneck)


def test_shifted_rows_are_translations():
    sym = torus_symmetry(topology("trn2-nl64"))
    base = np.arange(64) * 10
    rows = sym.shifted(base, np.array([0, 5, 63]))
    assert np.array_equal(rows[0], base)
    for r, s in enumerate([0, 5, 63]):
        for v in (0, 7, 42):
            assert rows[r, v] == base[sym.offset(np.array(s), np.array(v))]


def test_only_wrapped_tori_are_symmetric():
    assert torus_symmetry(topology("trn3-nl72x2-gen1")) is None
    assert torus_symmetry(topology("trn2-nl16")) is not None
