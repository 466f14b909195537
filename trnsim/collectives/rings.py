"""Rings over the chips' direct links: one Hamiltonian cycle, or several edge-disjoint ones.

A 4x4 torus splits into two link-disjoint Hamiltonian cycles (AWS Neuron's KangaRing); a 2k-regular
connected graph may split into k of them. The method: Petersen's 2-factorisation (orient the edges
along an Euler circuit, then peel perfect matchings off the out/in bipartite graph), followed by a
local search that merges each 2-factor's cycles by switching the edges of alternating 4-cycles
between two factors. Random choices use a fixed seed, so results are reproducible; a search that
runs out of moves reports failure instead of hanging.

A graph is its adjacency: each node's neighbours, in the order of the links (:func:`adjacency`).
Every choice follows that order (never the iteration order of a set), so the cycles found are the
same whatever Python's string hashing; and plain dicts spare a scale-up domain networkx's import.
"""

import random
from collections import deque
from collections.abc import Hashable, Iterable

Graph = dict[Hashable, list[Hashable]]  # each node's neighbours, in link order


def adjacency(nodes: Iterable[Hashable], links: Iterable[tuple[Hashable, Hashable]]) -> Graph:
    """The graph of ``links`` (pairs of ``nodes``; an undirected simple graph) as adjacency lists."""
    graph: Graph = {node: [] for node in nodes}
    for u, v in links:
        graph[u].append(v)
        graph[v].append(u)
    return graph


def hamiltonian_cycle(graph: Graph, seed: int = 0) -> list | None:
    """A Hamiltonian cycle of ``graph`` as a node list, or ``None`` if none was found."""
    cycles = disjoint_hamiltonian_cycles(graph, seed=seed)
    return cycles[0] if cycles else None


def _connected(graph: Graph) -> bool:
    start = next(iter(graph))
    seen, stack = {start}, [start]
    while stack:
        for nxt in graph[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return len(seen) == len(graph)


def _euler_circuit(graph: Graph) -> list[tuple]:
    """The edges of an Euler circuit (every node of even degree, connected), each oriented as walked
    (Hierholzer's algorithm from the first node, taking each node's first unused link)."""
    unused = {node: dict.fromkeys(neighbours) for node, neighbours in graph.items()}
    stack, last, circuit = [next(iter(graph))], None, []
    while stack:
        node = stack[-1]
        if unused[node]:
            nxt = next(iter(unused[node]))
            del unused[node][nxt], unused[nxt][node]
            stack.append(nxt)
        else:
            if last is not None:
                circuit.append((last, node))
            last = stack.pop()
    return circuit


def _perfect_matching(arcs: dict) -> dict | None:
    """A perfect matching of a bipartite graph given as each left node's right neighbours (in order):
    left node -> right node, by augmenting paths found breadth first; None if there is none."""
    left_of: dict = {}  # right node -> its left partner
    right_of: dict = {}
    for start in arcs:
        reached, queue, seen, free = {}, deque([start]), {start}, None
        while queue and free is None:
            node = queue.popleft()
            for right in arcs[node]:
                if right in reached:
                    continue
                reached[right] = node
                if right not in left_of:
                    free = right
                    break
                if left_of[right] not in seen:
                    seen.add(left_of[right])
                    queue.append(left_of[right])
        if free is None:
            return None
        right = free
        while True:  # flip the path's edges: every left node on it takes the right node that reached it
            node = reached[right]
            right_of[node], right = right, right_of.get(node)
            left_of[right_of[node]] = node
            if node == start:
                break
    return right_of


def two_factorisation(graph: Graph) -> list[set[frozenset]]:
    """Split a connected 2k-regular graph into k 2-factors (Petersen's theorem)."""
    k = len(next(iter(graph.values()))) // 2
    arcs: dict = {node: [] for node in graph}  # out-copy -> in-copies, along the Euler circuit
    for u, v in _euler_circuit(graph):
        arcs[u].append(v)
    factors = []
    for _ in range(k):
        matching = _perfect_matching(arcs)
        if matching is None:  # cannot happen: what is left of a regular bipartite graph stays regular
            raise AssertionError("a regular bipartite graph without a perfect matching")
        factors.append({frozenset(pair) for pair in matching.items()})
        for u, v in matching.items():
            arcs[u].remove(v)
    return factors


def _adjacency(edges: set[frozenset]) -> dict:
    found: dict = {}
    for edge in edges:
        a, b = tuple(edge)
        found.setdefault(a, []).append(b)
        found.setdefault(b, []).append(a)
    return found


def _count(edges: set[frozenset]) -> int:
    """The number of cycles of a 2-factor."""
    links, seen, count = _adjacency(edges), set(), 0
    for start in links:
        if start in seen:
            continue
        count += 1
        stack = [start]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(links[node])
    return count


def _edges(graph: Graph):
    """Each link once, ``(node, neighbour)`` in the graph's order (as networkx lists them)."""
    done = set()
    for node, neighbours in graph.items():
        for nxt in neighbours:
            if nxt not in done:
                yield node, nxt
        done.add(node)


def _squares(graph: Graph):
    linked = {node: set(neighbours) for node, neighbours in graph.items()}
    found = set()
    for a, b in _edges(graph):
        for c in graph[b]:
            if c == a:
                continue
            for d in graph[c]:
                if d not in (a, b) and a in linked[d]:
                    key = frozenset(
                        (frozenset((a, b)), frozenset((b, c)), frozenset((c, d)), frozenset((d, a)))
                    )
                    if key not in found:
                        found.add(key)
                        yield (a, b, c, d)


def disjoint_hamiltonian_cycles(graph: Graph, seed: int = 0, max_moves: int = 20_000) -> list[list] | None:
    """Split a connected 2k-regular graph into k edge-disjoint Hamiltonian cycles.

    Returns
    -------
    list of list, or None
        The cycles as node lists (each from the graph's first node, towards its neighbour that comes
        first in the graph's order), or ``None`` when the graph is not 2k-regular and connected, or
        the search found no split.
    """
    degrees = {len(neighbours) for neighbours in graph.values()}
    if len(degrees) != 1 or len(graph) < 3 or not _connected(graph):
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
    order = {node: i for i, node in enumerate(graph)}
    return [_cycle_order(edges, order) for edges in factors]


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


def _cycle_order(edges: set[frozenset], order: dict) -> list:
    """A Hamiltonian cycle's nodes from the first node of ``order``, towards its earlier neighbour."""
    links = _adjacency(edges)
    start = min(links, key=order.__getitem__)
    previous, current = start, min(links[start], key=order.__getitem__)
    cycle = [start]
    while current != start:
        cycle.append(current)
        a, b = links[current]
        previous, current = current, (b if a == previous else a)
    return cycle
