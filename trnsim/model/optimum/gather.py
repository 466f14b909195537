"""All-gather's and reduce-scatter's optimum on a group, with the cut that attains it named.

The min-ratio cut (:func:`trnsim.model.optimum.cuts.gather_cut`) is searched on the network with
twins merged (:mod:`trnsim.model.optimum.twins`), from one target per member orbit
(:mod:`trnsim.model.optimum.symmetry`) and with the topology's natural cuts as starting points.
Reduce-scatter is the same on the reversed graph (the data flows the other way). The same search
with weights gives the all-gatherv's optimum (blocks of unequal sizes) and a broadcast's or reduce's
min cut (all the weight on the root).
"""

import numpy as np

from trnsim.model.bounds.families import TIE
from trnsim.model.optimum.cuts import gather_cut
from trnsim.model.optimum.disk import kept
from trnsim.model.optimum.graph import Network, network
from trnsim.model.optimum.symmetry import member_orbit_reps, translations
from trnsim.model.optimum.twins import merge_twins
from trnsim.topology.graph import Topology


def cut_label(topology: Topology, group: list[str], net: Network, side: np.ndarray) -> str:
    """Name a cut by its member split: a natural cut of the topology if one matches."""
    from trnsim.topology.arrays import graph_arrays

    nodes = graph_arrays(topology).nodes
    inside = {nodes[i] for i in net.members[side[net.members]]}
    a, p = len(inside), net.p
    members = set(group)
    for name, cut_side in topology.cuts.items():
        natural = members & cut_side
        if 0 < len(natural) < p and (natural == inside or members - natural == inside):
            return f"cut {name} ({a}|{p - a} members)"
    return f"cut: {a} of {p} members vs the rest"


def _natural_masks(topology: Topology, net: Network) -> list[np.ndarray]:
    from trnsim.topology.arrays import graph_arrays

    index = graph_arrays(topology).index
    masks = []
    for side in topology.cuts.values():
        mask = np.zeros(net.n, dtype=bool)
        mask[[index[v] for v in side]] = True
        masks.append(mask)
    return masks


def prepared(topology: Topology, group: list[str], reverse: bool, symmetric_targets: bool = True):
    """The network for a cut search: (network, merged network, merged node of each node, hints, targets).

    Twins are merged unless the group is fixed by a torus's translations (they name nodes by rank;
    a torus has no switches anyway); the natural cuts become hints; ``targets`` is one member per
    orbit where symmetries are found and asked for (``symmetric_targets``), else None (every member).
    """
    net = network(topology, group)
    net = net.reversed() if reverse else net
    symmetry = translations(topology, group) if symmetric_targets else None
    merged, mapping = (net, np.arange(net.n)) if symmetry is not None else merge_twins(net)
    hints = []
    for mask in _natural_masks(topology, net):
        hint = np.zeros(merged.n, dtype=bool)
        hint[mapping[mask]] = True
        hints.append(hint)
    targets = None
    if symmetry is not None:
        targets = symmetry.reps
    elif symmetric_targets:
        reps = member_orbit_reps(topology, net)
        targets = None if reps is None else np.unique(mapping[reps])
    return net, merged, mapping, hints, targets


def gather_optimum(
    topology: Topology, group: list[str], reverse: bool, blocks: tuple[float, ...] | None = None
) -> tuple[float, str, bool]:
    """All-gather's optimum (``reverse``: on the reversed graph, reduce-scatter's): (seconds per
    byte, label, exact), kept in the topology's cache per group, direction and blocks.

    ``blocks`` (an all-gatherv's or reduce-scatterv's shares of the size, summing to 1; None or equal
    shares: the all-gather) weight the cut: what must leave ``X`` is the blocks of the members in it,
    ``time >= b(X n C) S / B(X)`` over ``X`` missing some member. Achievable as the all-gather's is (a
    packing of broadcast trees, ``b_i S`` of them rooted at member ``i``: Edmonds' theorem with
    several roots, as ForestColl uses it), so exact when the search finishes. Unequal blocks break the
    symmetries, so every member is a target.
    """
    if blocks is not None and max(blocks) <= min(blocks):
        blocks = None  # equal shares: the all-gather itself, with its symmetries
    cache = topology.cache.optimum_gather
    key = (tuple(group), reverse) if blocks is None else (tuple(group), reverse, tuple(blocks))
    if key not in cache:
        cache[key] = kept(topology, "gather", key, lambda: _gather_optimum(topology, group, reverse, blocks))
    return cache[key]


def _gather_optimum(
    topology: Topology, group: list[str], reverse: bool, blocks: tuple[float, ...] | None
) -> tuple[float, str, bool]:
    net, merged, mapping, hints, targets = prepared(topology, group, reverse, blocks is None)
    p = net.p
    weights = None if blocks is None else np.asarray(blocks, dtype=float)
    cut = gather_cut(merged, targets, hints=hints, weights=weights)
    side = cut.side[mapping]  # the same cut in the original network
    member = np.zeros(net.n, dtype=bool)
    member[net.members] = True
    in_bw = np.bincount(net.dst, weights=net.cap, minlength=net.n)[net.members]
    if blocks is None:
        ratio = net.out_bandwidth(side) / np.count_nonzero(side & member)
        seconds = 1.0 / (p * ratio * 1e9)
        slowest = int(np.argmin(in_bw))
        injected = ratio >= in_bw[slowest] / (p - 1) * (1 - TIE)
    else:
        weight = np.zeros(net.n)
        weight[net.members] = weights
        ratio = net.out_bandwidth(side) / float(weight[side].sum())
        seconds = 1.0 / (ratio * 1e9)
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.nan_to_num(
                (1 - weights) / in_bw, nan=0.0, posinf=np.inf
            )  # a member's own reception, per byte of S
        slowest = int(np.argmax(need))
        injected = seconds <= need[slowest] / 1e9 * (1 + TIE)
    label = f"injection ({group[slowest]})" if injected else cut_label(topology, group, net, side)
    return seconds, label, cut.exact


def rooted_optimum(topology: Topology, group: list[str], root: int, reverse: bool) -> tuple[float, str, bool]:
    """A broadcast's bound from ``group[root]`` (``reverse``: a reduce's, to it): (seconds per byte,
    label, exact), kept in the topology's cache.

    Every member must receive all of ``S`` from the root, so ``time >= S / min over members v of
    maxflow(root -> v)`` (a reduce: ``maxflow(v -> root)``, the same on symmetric links): the
    smallest cut ``B(X)`` over ``X`` holding the root and missing a member, found as the min-ratio cut
    with all the weight on the root (:func:`~trnsim.model.optimum.cuts.gather_cut`).

    Exact when every device is a member: packing spanning arborescences rooted at the root reaches
    the min cut (Edmonds' branching theorem, 1973). Otherwise (switches, chips outside the group) it
    is a Steiner problem: network coding reaches the min cut (Ahlswede, Cai, Li and Yeung 2000) but
    routing, which is what schedules do, may not, so the bound is valid and flagged not exact.
    """
    cache = topology.cache.optimum
    key = (tuple(group), "reduce" if reverse else "broadcast", root)
    if key not in cache:
        cache[key] = kept(topology, "rooted", key, lambda: _rooted_optimum(topology, group, root, reverse))
    return cache[key]


def _rooted_optimum(
    topology: Topology, group: list[str], root: int, reverse: bool
) -> tuple[float, str, bool]:
    net, merged, mapping, hints, _ = prepared(topology, group, reverse, symmetric_targets=False)
    weights = np.zeros(net.p)
    weights[root] = 1.0
    targets = np.unique(mapping[np.delete(net.members, root)])
    cut = gather_cut(merged, targets, hints=hints, weights=weights)
    side = cut.side[mapping]
    value = net.out_bandwidth(side)
    seconds = 1.0 / (value * 1e9) if value > 0 else float("inf")
    where = "from" if not reverse else "to"
    label = f"min cut {where} {group[root]} ({cut_label(topology, group, net, side)})"
    return seconds, label, cut.exact and net.n == net.p
