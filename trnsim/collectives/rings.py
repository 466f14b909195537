"""Rings over the chips' direct links: one Hamiltonian cycle, or several edge-disjoint ones.

A 4x4 torus splits into two link-disjoint Hamiltonian cycles (AWS Neuron's KangaRing); a 2k-regular
connected graph may split into k of them. The method: Petersen's 2-factorisation (orient the edges
along an Euler circuit, then peel perfect matchings off the out/in bipartite graph), followed by a
local search that merges each 2-factor's cycles by switching the edges of alternating 4-cycles
between two factors. Random choices use a fixed seed, so results are reproducible; a search that
runs out of moves reports failure instead of hanging.
"""

import random

import networkx as nx
from networkx.algorithms import bipartite


def hamiltonian_cycle(graph: nx.Graph, seed: int = 0) -> list | None:
    """A Hamiltonian cycle of ``graph`` as a node list, or ``None`` if none was found."""
    if graph.number_of_nodes() < 3 or not nx.is_connected(graph):
        return None
    degrees = {d for _, d in graph.degree()}
    if len(degrees) == 1:
        cycles = disjoint_hamiltonian_cycles(graph, seed=seed)
        if cycles:
            return cycles[0]
    return None


def two_factorisation(graph: nx.Graph) -> list[set[frozenset]]:
    """Split a connected 2k-regular graph into k 2-factors (Petersen's theorem)."""
    k = next(iter(dict(graph.degree()).values())) // 2
    bip = nx.Graph()
    for u, v in nx.eulerian_circuit(graph):
        bip.add_edge(("out", u), ("in", v))
    factors = []
    for _ in range(k):
        left = {node for node in bip if node[0] == "out"}
        matching = bipartite.hopcroft_karp_matching(bip, top_nodes=left)
        factor = set()
        for node, partner in matching.items():
            if node[0] == "out":
                factor.add(frozenset((node[1], partner[1])))
                bip.remove_edge(node, partner)
        factors.append(factor)
    return factors


def _adjacency(edges: set[frozenset]) -> dict:
    adjacency: dict = {}
    for edge in edges:
        a, b = tuple(edge)
        adjacency.setdefault(a, []).append(b)
        adjacency.setdefault(b, []).append(a)
    return adjacency


def _cycles_of(edges: set[frozenset]) -> dict:
    """Component label of every node in a 2-factor."""
    adjacency = _adjacency(edges)
    label, current = {}, 0
    for start in adjacency:
        if start in label:
            continue
        stack = [start]
        while stack:
            node = stack.pop()
            if node not in label:
                label[node] = current
                stack.extend(adjacency[node])
        current += 1
    return label


def _count(edges: set[frozenset]) -> int:
    labels = _cycles_of(edges)
    return len(set(labels.values()))


def _squares(graph: nx.Graph) -> list[tuple]:
    found = set()
    for a, b in graph.edges:
        for c in graph.adj[b]:
            if c == a:
                continue
            for d in graph.adj[c]:
                if d not in (a, b) and graph.has_edge(d, a):
                    key = frozenset(
                        (frozenset((a, b)), frozenset((b, c)), frozenset((c, d)), frozenset((d, a)))
                    )
                    if key not in found:
                        found.add(key)
                        yield (a, b, c, d)


def disjoint_hamiltonian_cycles(graph: nx.Graph, seed: int = 0, max_moves: int = 20_000) -> list[list] | None:
    """Split a connected 2k-regular graph into k edge-disjoint Hamiltonian cycles.

    Returns
    -------
    list of list, or None
        The cycles as node lists, or ``None`` when the graph is not 2k-regular and connected, or the
        search found no split.
    """
    degrees = {d for _, d in graph.degree()}
    if len(degrees) != 1 or graph.number_of_nodes() < 3 or not nx.is_connected(graph):
        return None
    degree = degrees.pop()
    if degree < 2 or degree % 2:
        return None
    factors = two_factorisation(graph)
    if len(factors) > 1:
        factors = _merge_cycles(graph, factors, random.Random(seed), max_moves)
        if factors is None:
            return None
    elif _count(factors[0]) != 1:
        return None
    return [_cycle_order(edges) for edges in factors]


def _merge_cycles(graph, factors, rng, max_moves):
    owner = {edge: i for i, factor in enumerate(factors) for edge in factor}
    counts = [_count(f) for f in factors]
    squares = list(_squares(graph))
    moves = 0
    while sum(counts) > len(factors):
        rng.shuffle(squares)
        improved = False
        for a, b, c, d in squares:
            ab, bc, cd, da = (frozenset(p) for p in ((a, b), (b, c), (c, d), (d, a)))
            i, j = owner[ab], owner[bc]
            if i == j or owner[cd] != i or owner[da] != j:
                continue
            moves += 1
            if moves > max_moves:
                return None
            fi, fj = factors[i], factors[j]
            fi -= {ab, cd}
            fi |= {bc, da}
            fj -= {bc, da}
            fj |= {ab, cd}
            new_i, new_j = _count(fi), _count(fj)
            delta = new_i + new_j - counts[i] - counts[j]
            if delta < 0 or (delta == 0 and rng.random() < 0.1):
                counts[i], counts[j] = new_i, new_j
                owner.update({bc: i, da: i, ab: j, cd: j})
                improved = improved or delta < 0
                if sum(counts) == len(factors):
                    break
            else:  # undo
                fi -= {bc, da}
                fi |= {ab, cd}
                fj -= {ab, cd}
                fj |= {bc, da}
        if not improved and moves > max_moves:
            return None
    return factors


def _cycle_order(edges: set[frozenset]) -> list:
    adjacency = _adjacency(edges)
    start = next(iter(adjacency))
    order, previous, current = [start], None, start
    while True:
        nxt = adjacency[current][0] if adjacency[current][0] != previous else adjacency[current][1]
        if nxt == start:
            return order
        order.append(nxt)
        previous, current = current, nxt
