"""The exact bandwidth bounds against brute force, an independent LP, and published closed forms."""

import itertools

import numpy as np
import pytest
from collectives.synthetic import CHIP, LATENCY, complete_topology, graph_topology, ring_topology
from conftest import topology

from model import systems
from trnsim.collectives.ops import BASIC, OPS
from trnsim.model import optimum as O
from trnsim.model.bounds import lower_bound
from trnsim.model.optimum.symmetry import member_orbit_reps
from trnsim.topology.arrays import graph_arrays
from trnsim.topology.groups import select_group

SEEDS = range(40)


# --- helpers -------------------------------------------------------------------------------------


def random_topology(seed: int, cuts: bool = False):
    """A connected random graph of at most 10 devices, some of them switches, with random links."""
    rng = np.random.default_rng(seed)
    chips = int(rng.integers(2, 8))
    switches = int(rng.integers(0, 11 - chips)) if chips < 10 else 0
    switches = min(switches, 3)
    names = [f"c{i}" for i in range(chips)] + [f"s{k}" for k in range(switches)]
    order = list(rng.permutation(len(names)))
    pairs = set()
    for i in range(1, len(order)):  # a random spanning tree keeps it connected
        u, v = names[order[i]], names[order[int(rng.integers(0, i))]]
        pairs.add((u, v))
    for u, v in itertools.combinations(names, 2):
        if rng.random() < 0.15 and (v, u) not in pairs:
            pairs.add((u, v))
    links = {pair: float(8 * rng.integers(1, 33)) for pair in pairs}  # lanes of 8 GB/s
    if seed % 2:  # thin links across a random split, so that cuts other than a chip's own bind
        side = set(rng.choice(names, len(names) // 2, replace=False))
        links = {(u, v): bw / 8 if (u in side) != (v in side) else bw for (u, v), bw in links.items()}
    natural = {}
    if cuts:
        natural["half"] = frozenset(names[: len(names) // 2])
    return graph_topology(chips, switches, links, cuts=natural, name=f"random{seed}")


def random_group(topo, seed: int) -> list[str]:
    rng = np.random.default_rng(seed + 1000)
    if rng.random() < 0.3:
        return list(topo.chips)
    k = int(rng.integers(2, topo.n_ranks + 1))
    return [topo.chips[i] for i in sorted(rng.choice(topo.n_ranks, k, replace=False))]


def subsets(n: int) -> np.ndarray:
    """Every vertex subset as a boolean matrix (2^n x n)."""
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)


def brute_gather(n, src, dst, cap, members) -> float:
    """max over X of |X n C| / B(X -> rest): the all-gather time per byte of S is this / p / 1e9."""
    sets = subsets(n)
    inside = sets[:, members].sum(axis=1)
    leaving = (sets[:, src] & ~sets[:, dst]) @ cap
    valid = (inside > 0) & (inside < len(members))
    return float(np.max(inside[valid] / leaving[valid]))


def brute_member_cut(n, src, dst, cap, members) -> float:
    sets = subsets(n)
    inside = sets[:, members].sum(axis=1)
    leaving = (sets[:, src] & ~sets[:, dst]) @ cap
    return float(np.min(leaving[(inside > 0) & (inside < len(members))]))


def mcf_lp(n, src, dst, cap, members) -> float:
    """The all-to-all optimum (seconds per byte of S) from the source-aggregated multicommodity LP.

    Variables x[s, e] (bytes of source s on directed edge e, per byte of S) and T (ns per byte).
    """
    from scipy.optimize import linprog

    p, m = len(members), len(src)
    nvar = p * m + 1
    a_eq = np.zeros((p * n, nvar))
    b_eq = np.zeros(p * n)
    for i, s in enumerate(members):
        for e in range(m):
            a_eq[i * n + dst[e], i * m + e] += 1.0  # into dst
            a_eq[i * n + src[e], i * m + e] -= 1.0  # out of src
        for t in members:
            if t != s:
                b_eq[i * n + t] += 1.0 / p
                b_eq[i * n + s] -= 1.0 / p
    a_ub = np.zeros((m, nvar))
    for e in range(m):
        a_ub[e, [i * m + e for i in range(p)]] = 1.0
        a_ub[e, -1] = -cap[e]
    cost = np.zeros(nvar)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=b_eq, method="highs")
    assert result.status == 0
    return result.fun / 1e9


def arrays_of(topo, group):
    arrays = graph_arrays(topo)
    members = np.array([arrays.index[c] for c in group])
    return arrays.n_nodes, arrays.src, arrays.dst, arrays.bw_gbps, members


def busbw(topo, group, op) -> float:
    return systems.busbw_factor(op, len(group)) / O.optimum(topo, group, op).seconds_per_byte / 1e9


# --- all-gather and reduce-scatter: brute force over every vertex subset --------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_gather_bounds_equal_the_best_cut_by_brute_force(seed):
    topo = random_topology(seed)
    group = random_group(topo, seed)
    n, src, dst, cap, members = arrays_of(topo, group)
    worst = brute_gather(n, src, dst, cap, members)
    p = len(group)
    for op in ("allgather", "reducescatter"):
        got = O.optimum(topo, group, op)
        assert got.exact
        assert got.seconds_per_byte == pytest.approx(worst / p / 1e9, rel=1e-9, abs=0), op
    # reduce-scatter runs on the reversed graph: the same by brute force on the reversed arrays
    assert brute_gather(n, dst, src, cap, members) == pytest.approx(worst, rel=1e-12, abs=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_directed_min_ratio_and_member_cuts_by_brute_force(seed):
    """On directed graphs whose two directions differ, both directions and the member cut."""
    topo = random_topology(seed)
    group = random_group(topo, seed)
    n, src, dst, cap, members = arrays_of(topo, group)
    rng = np.random.default_rng(seed)
    cap = cap * rng.uniform(0.5, 2.0, size=len(cap))  # the two directions of a link now differ
    net = O.network(topo, group)
    net = O.Network(net.n, net.src, net.dst, cap, net.members, net.node_key, net.edge_cls)
    assert not net.is_symmetric()
    p = len(group)
    for forward in (True, False):
        use = net if forward else net.reversed()
        a, b = (src, dst) if forward else (dst, src)
        cut = O.gather_cut(use)
        assert cut.exact
        assert 1 / cut.ratio == pytest.approx(brute_gather(n, a, b, cap, members), rel=1e-9, abs=0)
        # the cut reported is a real one with that ratio
        k = np.count_nonzero(cut.side[members])
        assert 0 < k < p and use.out_bandwidth(cut.side) / k == pytest.approx(cut.ratio, rel=1e-12, abs=0)
    assert O.member_cut(net).ratio == pytest.approx(
        brute_member_cut(n, src, dst, cap, members), rel=1e-9, abs=0
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_allreduce_is_injection_or_the_reduction_cut(seed):
    topo = random_topology(seed)
    group = random_group(topo, seed)
    n, src, dst, cap, members = arrays_of(topo, group)
    p = len(group)
    chip_bw = np.bincount(dst, weights=cap, minlength=n)[members]
    # each member receives at least S; all together at least 2(p-1) S
    injection = max(1 / chip_bw.min(), 2 * (p - 1) / chip_bw.sum()) / 1e9
    reduction = 1 / brute_member_cut(n, src, dst, cap, members) / 1e9
    got = O.optimum(topo, group, "allreduce")
    assert got.seconds_per_byte == pytest.approx(max(injection, reduction), rel=1e-9, abs=0)
    if reduction > injection * (1 + 1e-6):
        assert got.limited_by.startswith("reduction")
    elif injection > reduction * (1 + 1e-6):
        assert got.limited_by.startswith("injection")


def test_cut_labels_name_natural_cuts_and_member_splits():
    # two triangles joined by one thin link: the bridge limits everything
    links = {("c0", "c1"): 100, ("c1", "c2"): 100, ("c0", "c2"): 100}
    links |= {("c3", "c4"): 100, ("c4", "c5"): 100, ("c3", "c5"): 100, ("c2", "c3"): 10}
    halves = {"triangles": frozenset({"c0", "c1", "c2"})}
    topo = graph_topology(6, 0, links, cuts=halves)
    got = O.optimum(topo, topo.chips, "allgather")
    assert got.limited_by == "cut triangles (3|3 members)" and got.exact
    assert got.seconds_per_byte == pytest.approx(3 / 6 / 10e9)
    # all-reduce: the bridge must carry the whole size each way
    reduce = O.optimum(topo, topo.chips, "allreduce")
    assert reduce.limited_by == "reduction cut triangles (3|3 members)"
    assert reduce.seconds_per_byte == pytest.approx(1 / 10e9)
    unnamed = graph_topology(6, 0, links)
    assert O.optimum(unnamed, unnamed.chips, "allgather").limited_by == "cut: 3 of 6 members vs the rest"
    # a sub-group: the natural cut is named by how it splits the members
    group = ["c0", "c1", "c4"]
    assert O.optimum(topo, group, "allgather").limited_by == "cut triangles (2|1 members)"
    assert O.optimum(unnamed, group, "allgather").limited_by == "cut: 2 of 3 members vs the rest"


def test_the_rack_cut_binds_all_to_all_on_nl72x2_and_ties_name_it():
    topo = topology("trn3-nl72x2-gen1", raw=True)
    got = O.optimum(topo, topo.chips, "alltoall")
    assert got.limited_by == "link classes xrack" and got.exact
    # 72 x 72 blocks of S/144 cross 72 links of 128 GB/s each way (raw: the file's efficiency would
    # scale them; compared with a relative tolerance only, as seconds per byte are ~1e-12)
    assert got.seconds_per_byte == pytest.approx(72 * 72 / 144 / (72 * 128e9), rel=1e-6, abs=0)
    bound = lower_bound(topo, topo.chips, OPS["alltoall"], 0.0, 1)
    assert bound.limited_by == "cut rack-halves"  # a tie names the natural cut
    assert bound.seconds_per_byte == pytest.approx(got.seconds_per_byte, rel=1e-6, abs=0)


# --- all-to-all: an independent LP ---------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_alltoall_bound_never_exceeds_the_lp_and_meets_it_where_exact(seed):
    topo = random_topology(seed)
    group = random_group(topo, seed)
    n, src, dst, cap, members = arrays_of(topo, group)
    lp = mcf_lp(n, src, dst, cap, members)
    got = O.optimum(topo, group, "alltoall")
    assert got.seconds_per_byte <= lp * (1 + 1e-6)
    assert got.exact
    assert got.seconds_per_byte == pytest.approx(lp, rel=2e-4, abs=0)
    # Kelley's method on the colour classes, whatever the size rules choose
    net = O.network(topo, group)
    classes = O.edge_classes(net)
    dual = O.alltoall_dual(net, classes)
    assert dual.seconds_per_byte <= lp * (1 + 1e-6)
    assert dual.primal_seconds_per_byte >= lp * (1 - 1e-6)  # the certificate's flow is a real one
    if classes.max() + 1 == len(classes):  # discrete classes: the restricted dual is the dual
        assert dual.seconds_per_byte == pytest.approx(lp, rel=5e-3, abs=0)
        assert dual.exact
    if dual.exact:  # a primal certificate was built: it must be right
        assert dual.seconds_per_byte == pytest.approx(lp, rel=2e-4, abs=0)
    # and coarser classes give a valid bound too
    assert O.alltoall_dual(net, O.edge_classes(net, max_classes=1)).seconds_per_byte <= lp * (1 + 1e-6)


def _torus(sizes, lanes=(8, 8, 8)):
    from trnsim.spec.catalog import validate_document
    from trnsim.topology.builders import build

    axes = [{"name": "xyz"[i], "size": s, "lanes": lanes[i]} for i, s in enumerate(sizes)]
    return build(
        validate_document(
            {"name": "t", "kind": "torus", "chip": CHIP, "latency": LATENCY, "torus": {"axes": axes}},
            "t.yaml",
        )
    )


def _star(chips: int, switches: int):
    links = {(f"c{i}", f"s{k}"): 16.0 for i in range(chips) for k in range(switches)}
    return graph_topology(chips, switches, links)


SYMMETRIC = {
    "ring6": lambda: ring_topology(6),
    "ring7": lambda: ring_topology(7),
    "complete5": lambda: complete_topology(5),
    "torus3x3": lambda: _torus((3, 3)),
    "torus2x4": lambda: _torus((2, 4), lanes=(4, 8)),
    "torus4x3-uneven": lambda: _torus((4, 3), lanes=(8, 2)),
    "star6x2": lambda: _star(6, 2),
}


@pytest.mark.parametrize("name", SYMMETRIC)
def test_alltoall_on_symmetric_graphs_equals_the_lp(name):
    topo = SYMMETRIC[name]()
    n, src, dst, cap, members = arrays_of(topo, topo.chips)
    lp = mcf_lp(n, src, dst, cap, members)
    got = O.optimum(topo, topo.chips, "alltoall")
    assert got.seconds_per_byte <= lp * (1 + 1e-6)
    assert got.seconds_per_byte == pytest.approx(lp, rel=5e-3, abs=0)
    assert got.exact
    net = O.network(topo, topo.chips)
    symmetry = O.translations(topo, topo.chips)
    for dual in (
        O.alltoall_dual(net, O.edge_classes(net)),
        O.alltoall_dual(net, symmetry.edge_orbit, symmetry) if symmetry else None,
    ):
        if dual is not None:
            assert dual.exact and dual.seconds_per_byte == pytest.approx(lp, rel=2e-4, abs=0)
            assert dual.primal_seconds_per_byte >= lp * (1 - 1e-6)


TORUS_GROUPS = {
    "4x4 two rows": ((4, 4), (8, 8, 8), [0, 1, 2, 3, 4, 5, 6, 7]),
    "4x4 a column": ((4, 4), (8, 2, 8), [0, 4, 8, 12]),
    "4x4 checkerboard": ((4, 4), (8, 8, 8), [0, 2, 5, 7, 8, 10, 13, 15]),
    "3x4 uneven pair of rows": ((3, 4), (16, 4, 8), [0, 1, 2, 3, 8, 9, 10, 11]),
    "2x2x3 a layer": ((2, 2, 3), (8, 8, 4), [0, 3, 6, 9]),
    "4x4 no symmetry": ((4, 4), (8, 8, 8), [0, 1, 5, 10, 11]),
}


@pytest.mark.parametrize("name", TORUS_GROUPS)
def test_torus_subgroups_fixed_by_translations_match_brute_force_and_the_lp(name):
    """Translations that fix the group cut the targets and Dijkstra sources to one per orbit."""
    sizes, lanes, ranks = TORUS_GROUPS[name]
    topo = _torus(sizes, lanes)
    group = [topo.chips[r] for r in ranks]
    symmetry = O.translations(topo, group)
    if name == "4x4 no symmetry":
        assert symmetry is None
    else:
        assert symmetry is not None and len(symmetry.reps) < len(group)
    n, src, dst, cap, members = arrays_of(topo, group)
    p = len(group)
    got = O.optimum(topo, group, "allgather")
    assert got.exact
    assert got.seconds_per_byte == pytest.approx(
        brute_gather(n, src, dst, cap, members) / p / 1e9, rel=1e-9, abs=0
    )
    lp = mcf_lp(n, src, dst, cap, members)
    got = O.optimum(topo, group, "alltoall")
    assert got.seconds_per_byte <= lp * (1 + 1e-6)
    assert got.exact and got.seconds_per_byte == pytest.approx(lp, rel=2e-4, abs=0)
    if symmetry is not None:  # Kelley with the representatives only, on the colour classes
        dual = O.alltoall_dual(O.network(topo, group), O.edge_classes(O.network(topo, group)), symmetry)
        assert dual.seconds_per_byte <= lp * (1 + 1e-6)
        assert dual.primal_seconds_per_byte >= lp * (1 - 1e-6)
        assert dual.exact and dual.seconds_per_byte == pytest.approx(lp, rel=2e-4, abs=0)


def test_alltoall_on_a_ring_is_the_textbook_value():
    # a ring of p (odd) with b per direction: sum of distances (p^2-1)/4 per source over 2p links
    p = 7
    got = O.optimum(ring_topology(p, lanes=100), ring_topology(p, lanes=100).chips, "alltoall")
    assert got.seconds_per_byte == pytest.approx((p * p - 1) / 4 / (2 * p * 100e9), rel=1e-6, abs=0)


# --- the catalog: published and closed-form values ------------------------------------------------


def bisection_busbw(p: int, links: int, link_gbps: float) -> float:
    """All-to-all busbw across a bisection of ``links`` links of ``link_gbps`` each way: ``(p/2)^2``
    blocks of ``S/p``, i.e. ``p/4`` of the size, cross it each way; busbw = ``(p-1)/p S`` / time."""
    return (p - 1) / p * links * link_gbps / (p / 4)


# the catalog's figures, from their files (raw rates): Trn2 lanes run at 4 GB/s, Trn3 lanes at 8
# trn1: a chip's two ranks share its four 51.54 GB/s links, so each rank-level op runs at the chip's
# 206.16 GB/s times (n-1)/n over (m-1)/m with n = 32 ranks, m = 16 chips; all-to-all crosses the torus
# bisection (8 links) with 16 x 16 / 32 = 8 units of the size
TRN1_GATHER = 4 * 51.54 * (31 / 32) / (15 / 16)
CHIP_BW = {
    "trn2-nl16": 4 * 32 * 4,  # four torus neighbours, 32 lanes each
    "trn2-nl64": 4 * 32 * 4 + 2 * 16 * 4,  # x and y neighbours at 32 lanes, two z neighbours at 16
    "trn2-nl256-concept": 4 * 32 * 4 + 2 * 16 * 4,
    "trn1-nl16": TRN1_GATHER,
}
ALLTOALL = {
    "trn1-nl16": bisection_busbw(32, 8, 51.54),  # 32 ranks; the 4x4 torus's halves: 4 rings x 2 links
    "trn2-nl16": bisection_busbw(16, 2 * 4, 32 * 4),  # 4x4 torus, halves: 4 rings of 4 x 2 links
    # 4x4x4 and 4x4x16 tori: halves across z, the slow axis (16 lanes): 4 x 4 z rings x 2 links
    "trn2-nl64": bisection_busbw(64, 2 * 4 * 4, 16 * 4),
    "trn2-nl256-concept": bisection_busbw(256, 2 * 4 * 4, 16 * 4),
    # two racks: each chip's cross-rack cable (16 lanes) to its counterpart is all that joins them
    "trn3-nl32x2-gen1": bisection_busbw(64, 32, 16 * 8),
    "trn3-nl32x2-gen2": bisection_busbw(64, 32, 16 * 8),
    "trn3-nl32x2-gen3": bisection_busbw(64, 32, 16 * 8),
    "trn3-ultraserver-gen1": bisection_busbw(64, 32, 16 * 8),
    "trn3-ultraserver-gen2": bisection_busbw(144, 72, 16 * 8),
}


# peers: one switch layer that every GPU reaches with all its links is non-blocking, so every op is
# bound by a GPU's own links; a k x k torus's all-to-all crosses its bisection (2k links) with
# (p/2)^2/p = p/4 units of the size, busbw factor (p-1)/p
PEERS = {"gb200-nvl72": 900, "hgx-h100": 450, "hgx-b200": 900, "ualink-72": 900}
IN_NETWORK = {"gb200-nvl72", "hgx-h100", "hgx-b200"}  # NVSwitches reduce (NVLS)
TORUS_2D = {"tpu-v5e-16x16": 45, "tpu-v6e-16x16": 90}  # 16 x 16, per-link GB/s
# a k x k x k torus: 6 links per chip; the halves' cut has 2 k^2 links, p/4 units of the size cross it
TORUS_3D = {"tpu7x-4x4x4": 100}  # 4 x 4 x 4, per-link GB/s
# twisted tori have no closed form here: tests/topology/test_twisted.py holds their graphs to the
# definition, and the model reaches their LP optimum (README)
NO_CLOSED_FORM = ["tpu-v4-4x4x8", "tpu-v4-4x8x8", "tpu-v5p-4x4x8"]


def _catalog_expectation(sku):
    if sku in PEERS:
        return PEERS[sku], PEERS[sku]
    if sku in TORUS_2D:
        link, p = TORUS_2D[sku], 256
        return 4 * link, (p - 1) / p / ((p / 4) / (2 * 16 * link))
    if sku in TORUS_3D:
        link, k = TORUS_3D[sku], 4
        p = k**3
        return 6 * link, (p - 1) / p / ((p / 4) / (2 * k * k * link))
    if sku.startswith(("trn3-nl32x2", "trn3-nl72x2")):
        chip = 144 * 8  # a Trn3 chip's 144 active lanes
    elif sku.startswith("trn3-ultraserver"):
        chip = (32 + 40 + 16) * 8  # to its server's switch, to the rack switch, across the racks
    else:
        chip = CHIP_BW[sku]
    alltoall = bisection_busbw(144, 72, 16 * 8) if sku.startswith("trn3-nl72x2") else ALLTOALL[sku]
    return chip, alltoall


CATALOG_SKUS = [
    "trn1-nl16",
    "trn2-nl16",
    "trn2-nl64",
    "trn2-nl256-concept",
    "trn3-nl32x2-gen1",
    "trn3-nl32x2-gen2",
    "trn3-nl32x2-gen3",
    "trn3-nl72x2-gen1",
    "trn3-nl72x2-gen2",
    "trn3-nl72x2-gen3",
    "trn3-nl72x2-pex90144",
    "trn3-ultraserver-gen1",
    "trn3-ultraserver-gen2",
    *PEERS,
    *TORUS_2D,
    *TORUS_3D,
]


def test_the_catalog_list_is_complete():
    from conftest import CATALOG

    assert sorted(path.stem for path in CATALOG) == sorted(CATALOG_SKUS + NO_CLOSED_FORM)


@pytest.mark.parametrize("sku", CATALOG_SKUS)
def test_catalog_optima_match_the_closed_forms(sku):
    topo = topology(sku, raw=True)
    chip, alltoall = _catalog_expectation(sku)
    p = topo.n_ranks
    in_network = sku in IN_NETWORK  # switches reduce: a member sends and receives the size once
    for op, expected, tolerance in [
        ("allgather", chip, 1e-9),
        ("reducescatter", chip, 1e-9),
        ("allreduce", chip * (2 * (p - 1) / p if in_network else 1), 1e-9),
        ("alltoall", alltoall, 5e-3),
    ]:
        bound = lower_bound(topo, topo.chips, OPS[op], 0.0, 1)
        got = systems.busbw_factor(op, topo.n_ranks) / bound.seconds_per_byte / 1e9
        assert got == pytest.approx(expected, rel=tolerance, abs=0), op
        assert bound.exact or (in_network and op == "allreduce"), op


@pytest.mark.parametrize("sku", ["trn2-nl16", "trn3-nl72x2-gen1"])
def test_link_efficiency_scales_every_bound_by_itself(sku):
    # one efficiency on every link class scales every link, so every bound scales by it exactly
    raw, effective = topology(sku, raw=True), topology(sku)
    share = effective.spec.efficiency.default
    assert share < 1 and not effective.spec.efficiency.classes
    for op in BASIC:
        got = busbw(effective, effective.chips, op)
        assert got == pytest.approx(share * busbw(raw, raw.chips, op), rel=1e-6, abs=0), op


# --- sub-groups -----------------------------------------------------------------------------------

GROUPS = ["rack:0", "plane:A", "slot:B", "0-35", "0,5,77,100,143", "tray:3"]


def _by_hand(topo, group: list[str], op: str) -> tuple[float, float]:
    """The injection bound and the best natural cut of ``op`` on ``group``, from the links themselves
    (seconds per byte of S): a member's links carry ``(p-1)/p S`` (all-gather, reduce-scatter,
    all-to-all) or, for all-reduce, ``S`` alone and ``2(p-1) S`` over all members together (Patarasuk
    and Yuan 2009); a cut with ``a | b`` members carries ``S`` (all-reduce), ``max(a, b) S/p``
    (all-gather, reduce-scatter) or ``a b S/p`` (all-to-all) over the links crossing it."""
    p = len(group)
    chip = {c: sum(d["bw_gbps"] for ends, d in topo.links.items() if c in ends) * 1e9 for c in group}
    if op == "allreduce":
        injection = max(1 / min(chip.values()), 2 * (p - 1) / sum(chip.values()))
    else:
        injection = (p - 1) / p / min(chip.values())
    cuts = []
    for side in topo.cuts.values():
        a = sum(c in side for c in group)
        b = p - a
        if a and b:
            crossing = sum(d["bw_gbps"] for (u, v), d in topo.links.items() if (u in side) != (v in side))
            moved = {"allreduce": 1.0, "alltoall": a * b / p}.get(op, max(a, b) / p)
            cuts.append(moved / (crossing * 1e9))
    return injection, max(cuts, default=0.0)


@pytest.mark.parametrize("spec", GROUPS)
@pytest.mark.parametrize("op", list(BASIC))
def test_subgroup_bounds_are_never_below_the_natural_cuts(spec, op):
    """The bound is at least every candidate worked out by hand from the links, the exact optimum
    too, and its peak is the members' own links."""
    topo = topology("trn3-nl72x2-gen1")
    group = select_group(topo, spec)
    injection, natural = _by_hand(topo, group, op)
    got = O.optimum(topo, group, op)
    if got.exact:
        assert got.seconds_per_byte >= max(injection, natural) * (1 - 1e-4)
    bound = lower_bound(topo, group, OPS[op], 1000.0, 3)
    assert bound.seconds_per_byte >= max(injection, natural, got.seconds_per_byte) * (1 - 1e-12)
    assert bound.peak_seconds_per_byte == pytest.approx(injection, rel=1e-9, abs=0)


def test_a_rack_group_is_limited_by_its_chips_links():
    """One rack of nl72x2: the other rack's chips relay, so every link of a member counts."""
    topo = topology("trn3-nl72x2-gen1", raw=True)
    rack = select_group(topo, "rack:0")
    for op in ("allgather", "reducescatter", "allreduce"):
        got = O.optimum(topo, rack, op)
        assert got.limited_by.startswith("injection (r0.") and got.exact, op
        assert busbw(topo, rack, op) == pytest.approx(1152, rel=1e-9, abs=0)
    # all-to-all in a rack: 72 x 71 blocks over the rack's own links and the relays
    got = O.optimum(topo, rack, "alltoall")
    assert got.exact and got.limited_by.startswith("link classes")


def test_the_bound_names_the_optimum_where_it_beats_every_natural_cut():
    """Half of nl64 (two servers): all-to-all relays through the other half, which no natural cut sees."""
    topo = topology("trn2-nl64")
    group = select_group(topo, "0-31")
    natural = max(_by_hand(topo, group, "alltoall"))
    bound = lower_bound(topo, group, OPS["alltoall"], 0.0, 1)
    assert bound.limited_by == "link classes z"
    assert bound.seconds_per_byte == pytest.approx(2 * natural, rel=1e-6, abs=0)
    assert O.optimum(topo, group, "alltoall").exact


def test_twin_merging_changes_no_optimum():
    topo = topology("trn3-nl72x2-gen1")
    group = select_group(topo, "0-35")
    net = O.network(topo, group)
    merged, mapping = O.merge_twins(net)
    assert merged.n < net.n and len(mapping) == net.n
    assert O.gather_cut(merged).ratio == pytest.approx(O.gather_cut(net).ratio, rel=1e-9, abs=0)
    small = select_group(topo, "0-3")
    net = O.network(topo, small)
    merged, _ = O.merge_twins(net)
    assert O.alltoall_lp(merged).seconds_per_byte == pytest.approx(
        O.alltoall_lp(net).seconds_per_byte, rel=1e-6, abs=0
    )


@pytest.mark.parametrize(
    ("groups", "fails"), [("all", []), ("0-35", []), ("all", ["fail=link:r0.n0.A,r0.A.sw0"])]
)
def test_one_target_per_orbit_finds_the_cut_every_target_finds(groups, fails, monkeypatch):
    """The automorphisms found from node names leave the all-gather cut as every target gives it."""
    from trnsim.topology.load import load_topology

    topo = load_topology("trn3-nl72x2-gen1", overrides=fails)
    group = select_group(topo, groups)
    net = O.network(topo, group)
    reps = member_orbit_reps(topo, net)
    assert reps is not None and len(reps) < len(group)
    merged, mapping = O.merge_twins(net)
    for reverse in (False, True):
        flows = merged.reversed() if reverse else merged
        every = O.gather_cut(flows)
        fewer = O.gather_cut(flows, np.unique(mapping[reps]))
        assert every.exact and fewer.exact
        assert fewer.ratio == pytest.approx(every.ratio, rel=1e-12, abs=0)


def test_one_member_moves_nothing():
    topo = topology("trn2-nl16")
    for op in BASIC:
        assert O.optimum(topo, topo.chips[:1], op).seconds_per_byte == 0.0


@pytest.mark.parametrize("seed", range(24))
def test_no_algorithm_beats_the_bound_on_random_graphs(seed):
    from trnsim.model.engine import evaluate

    topo = random_topology(seed)
    group = random_group(topo, seed)
    for op in ("allreduce", "allgather", "reducescatter", "alltoall"):
        result = evaluate(topo, op, [1 << 20, 1 << 30], group, algo="all")
        for name, rows in result.by_algorithm.items():
            for row in rows:
                assert row.busbw_gbps <= row.bound_busbw_gbps * (1 + 1e-9), (op, name, row.bytes)
