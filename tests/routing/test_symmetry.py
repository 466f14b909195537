"""On a wrapped torus, routing from one BFS and translations equals routing from every source."""

import numpy as np
import pytest
from conftest import topology
from hypothesis import given, settings
from hypothesis import strategies as st

from trnsim.collectives.ops import BASIC
from trnsim.model.engine import evaluate
from trnsim.model.router import Router
from trnsim.routing import paths as group_paths
from trnsim.routing.symmetry import TorusSymmetry, torus_symmetry

SIZES = [64, 1 << 16, 1 << 24, 1 << 30]


@pytest.mark.parametrize("sku", ["trn2-nl64", "trn2-nl256-concept"])
@pytest.mark.parametrize("op", list(BASIC))
def test_symmetric_router_equals_the_plain_one(sku, op, monkeypatch):
    topo = topology(sku)
    plain = evaluate(topo, op, SIZES, topo.chips, algo="all")
    monkeypatch.setattr(group_paths, "SYMMETRY_FROM", 1)
    fast = evaluate(topo, op, SIZES, topo.chips, algo="all")
    assert plain.by_algorithm.keys() == fast.by_algorithm.keys()
    for name, rows in plain.by_algorithm.items():
        for a, b in zip(rows, fast.by_algorithm[name], strict=True):
            assert a.time_us == pytest.approx(b.time_us, rel=1e-12, abs=0), (name, a.bytes)
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


# ---------------------------------------------------------------------------------------------
# automorphisms from node names (switched fabrics)


def _is_automorphism(perm, arrays, node_key) -> bool:
    """Brute force: every directed edge maps onto an edge of the same bandwidth, class and latency."""
    edges = {}
    for e, (u, v) in enumerate(zip(arrays.src, arrays.dst, strict=True)):
        key = (
            int(u),
            int(v),
            float(arrays.bw_gbps[e]),
            arrays.edge_cls[arrays.edge[e]],
            float(arrays.link_latency_ns[e]),
        )
        edges[key] = edges.get(key, 0) + 1
    image = {}
    for (u, v, *rest), count in edges.items():
        key = (int(perm[u]), int(perm[v]), *rest)
        image[key] = image.get(key, 0) + count
    return image == edges and np.array_equal(node_key[perm], node_key)


def _keys(arrays, members):
    from trnsim.routing.shortest import transit_mask

    member = np.zeros(arrays.n_nodes, dtype=np.int64)
    member[members] = 1
    relays = transit_mask(arrays, True)
    relays = np.ones(arrays.n_nodes, dtype=np.int64) if relays is None else relays.astype(np.int64)
    node_key = (relays * 2 + (np.arange(arrays.n_nodes) < arrays.n_chips)) * 2 + member
    cls = np.unique(np.asarray(arrays.edge_cls)[arrays.edge], return_inverse=True)[1].ravel()
    edge_key = np.unique(
        np.stack([arrays.bw_gbps, arrays.link_latency_ns, cls], axis=1), axis=0, return_inverse=True
    )[1].ravel()
    return edge_key, node_key


@pytest.mark.parametrize(("sku", "fails", "chip_orbits"), [
    ("trn3-nl72x2-gen1", [], 1),  # racks, trays and planes are all alike
    ("trn3-nl32x2-gen1", [], 1),
    ("trn3-nl72x2-gen1", ["fail=link:r0.n0.A,r0.A.sw0"], None),  # a failure breaks some symmetry
])  # fmt: skip
def test_name_automorphisms_are_true_automorphisms(sku, fails, chip_orbits):
    from trnsim.routing.symmetry import name_automorphisms, orbits
    from trnsim.topology.arrays import graph_arrays
    from trnsim.topology.load import load_topology

    topo = load_topology(sku, overrides=fails)
    arrays = graph_arrays(topo)
    members = np.arange(topo.n_ranks)
    edge_key, node_key = _keys(arrays, members)
    perms = name_automorphisms(arrays.nodes, arrays.src, arrays.dst, edge_key, node_key)
    assert perms
    for perm in perms:
        assert sorted(perm) == list(range(arrays.n_nodes))
        assert _is_automorphism(perm, arrays, node_key)
    label = orbits(perms, arrays.n_nodes)
    found = len(np.unique(label[members]))
    if chip_orbits is not None:
        assert found == chip_orbits
    else:  # the damaged chip is in an orbit of its own, yet some symmetry is left
        assert 1 < found < topo.n_ranks
        assert np.sum(label[members] == label[arrays.index["r0.n0.A"]]) == 1


def test_names_alone_never_make_a_symmetry():
    """The names n0, n1, n2 suggest a rotation and a swap; only the graph decides."""
    from trnsim.routing.symmetry import name_automorphisms

    names = ["n0", "n1", "n2"]
    same = np.zeros(3, dtype=np.int64)
    path_src, path_dst = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    assert name_automorphisms(names, path_src, path_dst, np.zeros(4, dtype=np.int64), same) == []
    ring_src, ring_dst = np.array([0, 1, 2, 1, 2, 0]), np.array([1, 2, 0, 0, 1, 2])
    kept = name_automorphisms(names, ring_src, ring_dst, np.zeros(6, dtype=np.int64), same)
    assert [list(perm) for perm in kept] == [[1, 2, 0], [1, 0, 2], [0, 2, 1]]
    slower = np.array([0, 0, 1, 0, 0, 1])  # n2 - n0 slower: no rotation, no swap
    assert name_automorphisms(names, ring_src, ring_dst, slower, same) == []


@pytest.mark.parametrize("fails", [[], ["fail=link:r0.n0.A,r0.A.sw0"]])
def test_all_pairs_loads_from_orbit_representatives_equal_every_source(fails):
    from trnsim.routing.strategies import compiled, orbits
    from trnsim.routing.strategies.base import Demand
    from trnsim.topology.load import load_topology

    topo = load_topology("trn3-nl72x2-gen1", overrides=fails)
    router = Router(topo, topo.chips)
    router.paths.compiled = True  # catalog sizes take the numpy path; force the compiled one
    p = len(topo.chips)
    demand = Demand.all_pairs(1.0 / p)
    assert orbits.applies(router.paths, demand) and compiled.applies(router.paths, demand)
    (fast,) = orbits.loads(router.paths, [demand])
    (plain,) = compiled.loads(router.paths, [demand])
    assert np.allclose(fast.loads, plain.loads, rtol=1e-12, atol=1e-15)
    assert (fast.latency_ns, fast.max_links, fast.flows) == (plain.latency_ns, plain.max_links, plain.flows)


# ---------------------------------------------------------------------------------------------
# translations of a torus: applied, fixing a set, orbits, edges carried along (brute force)


def _shift(sizes, rank, offset):
    """Brute force: the coordinates of ``rank`` (last axis fastest), shifted, back to a rank."""
    digits = []
    for size in reversed(sizes):
        digits.append(rank % size)
        rank //= size
    digits.reverse()
    out = 0
    for digit, step, size in zip(digits, offset, sizes, strict=True):
        out = out * size + (digit + step) % size
    return out


def _offsets(sizes):
    return [np.unravel_index(k, sizes) for k in range(int(np.prod(sizes)))]


tori = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(tori, st.data())
def test_stabiliser_and_orbits_match_every_translation_tried(sizes, data):
    sym = TorusSymmetry(sizes)
    n = sym.n
    members = np.asarray(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))), dtype=np.int64)
    for offset in _offsets(sizes)[:5]:
        assert sym.translate(np.arange(n), np.asarray(offset)).tolist() == [
            _shift(sizes, r, offset) for r in range(n)
        ]
    fixing = [
        o for o in _offsets(sizes) if {_shift(sizes, int(m), o) for m in members} == set(members.tolist())
    ]
    block = data.draw(st.sampled_from([1, 7, 4_000_000]))  # the blocking changes nothing
    got = sym.stabiliser(members, block)
    assert sorted(map(tuple, got.tolist())) == sorted(tuple(int(x) for x in o) for o in fixing)
    orbit = sym.orbits(got, block)
    assert orbit.tolist() == [min(_shift(sizes, r, o) for o in fixing) for r in range(n)]


def test_an_edge_moves_to_the_edge_between_its_ends_moved():
    topo = topology("trn2-nl64")
    sym = torus_symmetry(topo)
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topo)
    move = sym.edge_mover(arrays.src, arrays.dst)
    for a, b in [(0, 0), (0, 5), (3, 42), (63, 17)]:
        offset = sym.displacement(a, b)
        assert sym.translate(np.array(a), offset) == b
        image = move(offset)
        assert sorted(image.tolist()) == list(range(len(arrays.src)))  # a bijection of the edges
        assert np.array_equal(arrays.src[image], sym.translate(arrays.src, offset))
        assert np.array_equal(arrays.dst[image], sym.translate(arrays.dst, offset))
