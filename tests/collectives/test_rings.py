"""The ring search: edge-disjoint Hamiltonian cycles, checked link by link against the graph itself;
the same cycles whatever Python's string hashing; no split where none can exist."""

import itertools
import os
import random
import subprocess
import sys

import pytest
from conftest import CATALOG, topology

from trnsim.collectives import rings
from trnsim.collectives.schedule import Context


def _torus(*sizes: int) -> rings.Graph:
    nodes = list(itertools.product(*(range(n) for n in sizes)))
    links = []
    for node in nodes:
        for axis, n in enumerate(sizes):
            nxt = tuple((c + 1) % n if a == axis else c for a, c in enumerate(node))
            if n > 2 or node[axis] == 0:  # a ring of two is one link
                links.append((node, nxt))
    return rings.adjacency(nodes, links)


def _assert_split(graph: rings.Graph, cycles: list[list]) -> None:
    """Each cycle visits every node once over links of the graph; no link twice; every link used."""
    links = {frozenset((u, v)) for u in graph for v in graph[u]}
    used = []
    for cycle in cycles:
        assert sorted(cycle, key=str) == sorted(graph, key=str)
        used += [frozenset((cycle[i], cycle[(i + 1) % len(cycle)])) for i in range(len(cycle))]
    assert len(used) == len(set(used)) and set(used) <= links
    assert len(cycles) == len(next(iter(graph.values()))) // 2 and set(used) == links


@pytest.mark.parametrize("sizes", [(5,), (3, 3), (4, 4), (3, 5), (4, 4, 4), (4, 4, 8), (6, 6, 6)])
def test_tori_split_into_their_dimension_count_of_rings(sizes):
    graph = _torus(*sizes)
    _assert_split(graph, rings.disjoint_hamiltonian_cycles(graph))


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_every_catalog_system_that_can_splits_over_its_direct_links(path):
    """A connected 2k-regular graph of direct links (the catalog's tori) splits; any other (nl32x2's
    direct links: 2-regular, in many pieces) does not."""
    topo = topology(path.stem)
    chips = set(topo.chips)
    graph = rings.adjacency(topo.chips, [(u, v) for u, v in topo.links if u in chips and v in chips])
    degrees = {len(neighbours) for neighbours in graph.values()}
    found = Context(topo, list(topo.chips)).disjoint_rings
    reached, stack = {topo.chips[0]}, [topo.chips[0]]
    while stack:
        stack += [n for n in graph[stack.pop()] if n not in reached and not reached.add(n)]
    if len(degrees) == 1 and min(degrees) >= 2 and min(degrees) % 2 == 0 and len(reached) == len(graph):
        _assert_split(graph, found)
    else:
        assert found is None


def test_no_split_where_none_exists():
    path = rings.adjacency(range(4), [(0, 1), (1, 2), (2, 3)])  # degrees 1 and 2
    odd = rings.adjacency(range(4), itertools.combinations(range(4), 2))  # 3-regular
    two = rings.adjacency(range(6), [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])  # two triangles
    assert [rings.disjoint_hamiltonian_cycles(g) for g in (path, odd, two)] == [None, None, None]
    assert rings.hamiltonian_cycle(two) is None and rings.hamiltonian_cycle(_torus(4, 4)) is not None


def test_a_perfect_matching_of_a_regular_bipartite_graph_matches_every_node_over_its_arcs():
    rng = random.Random(3)
    for n, k in [(4, 1), (6, 2), (9, 3), (12, 4)]:
        arcs = {u: [] for u in range(n)}
        for _ in range(k):  # a union of k random permutations: k-regular (as a multigraph)
            for u, v in enumerate(rng.sample(range(n), n)):
                arcs[u].append(v)
        matching = rings._perfect_matching(arcs)
        assert sorted(matching) == list(range(n)) and sorted(matching.values()) == list(range(n))
        assert all(v in arcs[u] for u, v in matching.items())
    assert rings._perfect_matching({0: [0], 1: [0]}) is None  # two left nodes, one right


def test_the_euler_circuit_walks_every_link_once():
    graph = _torus(3, 4)
    circuit = rings._euler_circuit(graph)
    assert len(circuit) == sum(map(len, graph.values())) // 2
    assert {frozenset(arc) for arc in circuit} == {frozenset((u, v)) for u in graph for v in graph[u]}
    assert all(a[1] == b[0] for a, b in zip(circuit, circuit[1:] + circuit[:1], strict=True))


def test_the_rings_are_the_same_under_every_hash_seed():
    """The search once followed a set's order (networkx's matching): the rings changed with
    PYTHONHASHSEED, and with them an exported ring schedule."""
    code = (
        "from trnsim.topology.load import load_topology\n"
        "from trnsim.collectives.schedule import Context\n"
        "for sku in ('trn2-nl16', 'trn2-nl64'):\n"
        "    t = load_topology(sku)\n"
        "    print(Context(t, list(t.chips)).disjoint_rings)\n"
    )
    found = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (0, 1, 2)
    }
    assert len(found) == 1 and found.pop().count("[[") == 2
