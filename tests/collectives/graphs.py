"""Small groups of four kinds (complete graph, ring, torus, two-level switched fabric) on which every
registered algorithm's programs are checked, and the algorithm x op cases that apply on each."""

from functools import cache

import numpy as np

from collectives.synthetic import complete_topology, ring_topology
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.schedule import Context, NotApplicable
from trnsim.collectives.traffic import hot_destinations
from trnsim.topology.load import load_topology


def _whole(topology):
    return topology, list(topology.chips)


def _catalog(sku: str, overrides=(), group=None):
    topology = load_topology(sku, overrides=list(overrides))
    chips = list(topology.chips)
    return topology, chips if group is None else [chips[i] for i in group]


def _sub_block(sku: str, keep):
    topology = load_topology(sku)
    return topology, [chip for chip in topology.chips if keep(*topology.nodes[chip]["coord"])]


# name -> a function building (topology, group); kept small: p = 2..16
GRAPHS = {
    **{f"complete{p}": (lambda p=p: _whole(complete_topology(p))) for p in (2, 3, 4, 5, 8)},
    **{f"ring{p}": (lambda p=p: _whole(ring_topology(p))) for p in (3, 4, 5, 8)},
    # four chips of a ring of six: an open line (multidim's chain mode)
    "chain4": lambda: (ring_topology(6), ring_topology(6).chips[:4]),
    "torus4x4": lambda: _catalog("trn2-nl16"),
    # three columns of the 4x4 torus: open lines of 3 along x, rings of 4 along y
    "torus3x4": lambda: _sub_block("trn2-nl16", lambda x, y: x < 3),
    # a 2x4 torus with a slower y axis: the axes' order and a two-chip ring
    "torus2x4": lambda: _catalog(
        "trn2-nl16", ["torus.axes.x.size=2", "torus.hypercube_plane=null", "torus.axes.y.lanes=16"]
    ),
    # eight chips of each rack of a two-rack fabric: pcb x cross-rack x backplane, and two racks
    "switched16": lambda: _catalog("trn3-nl32x2-gen1", group=[*range(8), *range(32, 40)]),
    # the same on gen2, where a second link class serves the pcb dimension
    "switched16-gen2": lambda: _catalog("trn3-nl32x2-gen2", group=[*range(8), *range(32, 40)]),
    # NVSwitches that reduce in the network (nvls)
    "hgx8": lambda: _catalog("hgx-h100"),
    "nvl72-12": lambda: _catalog("gb200-nvl72", group=range(12)),
}
KIND = {
    **{name: "complete" for name in GRAPHS if name.startswith("complete")},
    **{name: "ring" for name in GRAPHS if name.startswith(("ring", "chain"))},
    **{name: "torus" for name in GRAPHS if name.startswith("torus")},
    **{name: "switched" for name in GRAPHS if name.startswith(("switched", "hgx", "nvl"))},
}


@cache
def graph(name: str):
    return GRAPHS[name]()


def skewed(p: int) -> np.ndarray:
    """A skewed all-to-all: a hot destination, and a pair in every row that sends nothing."""
    traffic = hot_destinations(p, min(2.0, p / 2), hot=1)
    traffic[np.arange(p), (np.arange(p) + 1) % p] = 0.0
    return traffic


def contexts(name: str):
    """The uniform context on this graph, and the skewed all-to-all one. A broadcast's or reduce's
    root is the middle rank, so that a chain or tree that starts at rank 0 is caught."""
    topology, group = graph(name)
    root = len(group) // 2
    return Context(topology, group, root=root), Context(topology, group, skewed(len(group)))


@cache
def cases(name: str) -> list[tuple[str, str, bool]]:
    """``(algorithm, op, skewed)`` for every registered algorithm and op whose schedule applies here."""
    out = []
    plain, skew = contexts(name)
    for algo in REGISTRY.values():
        for op in sorted(algo.ops):
            for ctx in (plain, skew) if op == "alltoall" and algo.takes_traffic else (plain,):
                try:
                    algo.schedule(ctx, op)
                except NotApplicable:
                    continue
                out.append((algo.name, op, ctx.traffic is not None))
    return out


# broadcast and reduce are checked on one or two graphs of each kind (the suite's time budget);
# cases() still lists them everywhere they apply
ROOTED_GRAPHS = ("complete2", "complete5", "ring4", "chain4", "torus3x4", "switched16", "hgx8")
ALL_CASES = [
    (name, *case)
    for name in GRAPHS
    for case in cases(name)
    if case[1] not in ("broadcast", "reduce") or name in ROOTED_GRAPHS
]
