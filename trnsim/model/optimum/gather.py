"""All-gather's and reduce-scatter's optimum on a group, with the cut that attains it named.

The min-ratio cut (:func:`trnsim.model.optimum.cuts.gather_cut`) is searched on the network with
twins merged (:mod:`trnsim.model.optimum.twins`), from one target per member orbit
(:mod:`trnsim.model.optimum.symmetry`) and with the topology's natural cuts as starting points.
Reduce-scatter is the same on the reversed graph (the data flows the other way).
"""

import numpy as np

from trnsim.model.bounds.families import TIE
from trnsim.model.optimum.cuts import gather_cut
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


def gather_optimum(topology: Topology, group: list[str], reverse: bool) -> tuple[float, str, bool]:
    """All-gather's optimum (``reverse``: on the reversed graph, reduce-scatter's): (seconds per
    byte, label, exact), kept in the topology's cache per group and direction."""
    cache = topology.cache.optimum_gather
    key = (tuple(group), reverse)
    if key in cache:
        return cache[key]
    net = network(topology, group)
    net = net.reversed() if reverse else net
    symmetry = translations(topology, group)
    # translations name nodes by rank: no twin merging under them (a torus has no switches anyway)
    merged, mapping = (net, np.arange(net.n)) if symmetry is not None else merge_twins(net)
    hints = []
    for mask in _natural_masks(topology, net):
        hint = np.zeros(merged.n, dtype=bool)
        hint[mapping[mask]] = True
        hints.append(hint)
    if symmetry is not None:
        targets = symmetry.reps
    else:
        reps = member_orbit_reps(topology, net)
        targets = None if reps is None else np.unique(mapping[reps])
    cut = gather_cut(merged, targets, hints=hints)
    side = cut.side[mapping]  # the same cut in the original network
    p = net.p
    member = np.zeros(net.n, dtype=bool)
    member[net.members] = True
    ratio = net.out_bandwidth(side) / np.count_nonzero(side & member)
    seconds = 1.0 / (p * ratio * 1e9)
    in_bw = np.bincount(net.dst, weights=net.cap, minlength=net.n)[net.members]
    slowest = int(np.argmin(in_bw))
    if ratio >= in_bw[slowest] / (p - 1) * (1 - TIE):
        label = f"injection ({group[slowest]})"
    else:
        label = cut_label(topology, group, net, side)
    cache[key] = seconds, label, cut.exact
    return cache[key]
