"""Schedules: what a collective algorithm sends, as steps of flows between group positions.

A :class:`Step` lists flows ``src -> dst`` (positions in the group, 0..p-1) with the fraction of the
collective's size each carries, how many times the same pattern repeats (a ring repeats one
pattern), and optionally the link classes its flows may use (a schedule that places its traffic on
chosen links pins it this way; otherwise flows may take any shortest path).

A step may instead name each flow's paths (``Step.paths``: devices in order, each path with its
share of the flow's bytes): the router then takes those paths as given (``multipath``).

A :class:`Pipeline` is a chain of stages that the data passes through in chunks: while chunk ``j``
is in stage ``i``, chunk ``j + 1`` is in stage ``i - 1``. It is costed round by round, with its fill
and drain, at the chunk count that is fastest for each size (see :mod:`trnsim.model.cost`).
"""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from trnsim.errors import NotApplicable  # noqa: F401 (algorithms raise it from here)
from trnsim.topology.graph import Topology

# the ring decomposition's local search recomputes cycles per move: about 3 s at 512 chips, 20 s at 1,024
RING_SEARCH_LIMIT = 512


@dataclass(frozen=True, eq=False)
class Step:
    """One step: flows between group positions, each carrying ``weight`` x size bytes.

    ``all_pairs`` marks the step in which every position sends ``weight[0]`` to every other one: its
    p(p-1) flows are built only if something asks for them, so the router can take its shortcuts.
    """

    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    repeat: int = 1
    label: str = ""
    all_pairs: int = 0  # the group size when the step is all pairs, else 0
    links: frozenset[str] | None = None  # link classes the flows may use (None: any shortest path)
    # the same flows as ``unit`` with every weight times ``scale``: routed once, loads scaled
    unit: "Step | None" = None
    scale: float = 1.0
    # in-network reduction and multicast (NVLS/SHARP): no flows between members; position i sends
    # ``up[i]`` x size into these switches and receives ``down[i]`` x size from them
    in_network: tuple[str, ...] = ()
    up: np.ndarray | None = None
    down: np.ndarray | None = None
    # chips outside the group that relay: positions p, p+1, ... of the flows name them in this order
    # (the router routes the step as if the group were these chips too: ``forest``)
    relays: tuple[str, ...] = ()
    # explicit routes (``multipath``): per flow, its paths as device names, each with the share of the
    # flow's bytes it carries; the router puts the bytes on those links instead of routing the flows
    paths: tuple[tuple[tuple[tuple[str, ...], float], ...], ...] | None = None

    @staticmethod
    def through_switches(switches, up, down, label: str = "") -> "Step":
        """A step of in-network reduction or multicast through ``switches`` (see the fields)."""
        empty = np.zeros(0, dtype=np.int64)
        return Step(
            empty,
            empty,
            np.zeros(0),
            1,
            label,
            in_network=tuple(switches),
            up=np.asarray(up),
            down=np.asarray(down),
        )

    def scaled(self, factor: float, label: str | None = None) -> "Step":
        """These flows with every weight times ``factor`` (routed as this step, loads scaled)."""
        base = self.unit or self
        return Step(
            self.src,
            self.dst,
            self.weight * factor,
            self.repeat,
            self.label if label is None else label,
            self.all_pairs,
            self.links,
            base,
            self.scale * factor,
            relays=self.relays,
            paths=self.paths,
        )

    @staticmethod
    def everyone(p: int, weight: float, repeat: int = 1, label: str = "") -> "Step":
        """Every position sends ``weight`` to every other position."""
        return Step(None, None, np.array([weight]), repeat, label, all_pairs=p)

    def flows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, weight)`` arrays, built for an all-pairs step."""
        if not self.all_pairs:
            return self.src, self.dst, self.weight
        src, dst = np.nonzero(~np.eye(self.all_pairs, dtype=bool))
        return src, dst, np.full(len(src), self.weight[0])

    @staticmethod
    def of(pairs, weight, repeat: int = 1, label: str = "", links: frozenset[str] | None = None) -> "Step":
        """A step from ``(src, dst)`` pairs and one weight for all or one per pair (self-pairs dropped)."""
        if isinstance(pairs, tuple) and len(pairs) == 2 and isinstance(pairs[0], np.ndarray):
            src, dst = pairs  # already arrays, without self-pairs
            weights = np.broadcast_to(np.asarray(weight, dtype=float), src.shape).copy()
            return Step(src.astype(np.int64), dst.astype(np.int64), weights, repeat, label, links=links)
        pairs = list(pairs)
        weights = np.broadcast_to(np.asarray(weight, dtype=float), (len(pairs),))
        keep = [i for i, (a, b) in enumerate(pairs) if a != b]
        src = np.fromiter((pairs[i][0] for i in keep), dtype=np.int64, count=len(keep))
        dst = np.fromiter((pairs[i][1] for i in keep), dtype=np.int64, count=len(keep))
        return Step(src, dst, weights[keep].copy(), repeat, label, links=links)

    def reversed(self, label: str | None = None) -> "Step":
        """The same flows in the opposite direction (a reduce-scatter mirrors an all-gather)."""
        if self.all_pairs:
            return self
        return Step(
            self.dst,
            self.src,
            self.weight,
            self.repeat,
            label or self.label,
            links=self.links,
            relays=self.relays,
            paths=None if self.paths is None else tuple(_backwards(flow) for flow in self.paths),
        )


def _backwards(paths: tuple[tuple[tuple[str, ...], float], ...]) -> tuple[tuple[tuple[str, ...], float], ...]:
    """A flow's paths walked the other way."""
    return tuple((path[::-1], share) for path, share in paths)


@dataclass(frozen=True, eq=False)
class Pipeline:
    """Chains of stages that chunks of data pass through, all chains at once on the same chunk count.

    Each chain is a sequence of stages a chunk passes through in order (a tree's levels, a stream's
    dimensions); each stage is steps that run at once. Chains share links but not data.
    """

    chains: tuple[tuple[tuple[Step, ...], ...], ...]
    label: str = ""

    @property
    def steps(self) -> list[Step]:
        return [step for chain in self.chains for stage in chain for step in stage]

    @property
    def depth(self) -> int:
        return max(len(chain) for chain in self.chains)


def mirrored(schedule: list[Step | Pipeline], label: str | None = None) -> list[Step | Pipeline]:
    """The schedule run backwards: its items and a pipeline's stages in reverse order, every flow
    reversed. A reduce mirrors a broadcast (each rank's sum goes up the broadcast's tree), as a
    reduce-scatter mirrors an all-gather. ``label`` renames every step (None keeps the labels)."""
    out: list[Step | Pipeline] = []
    for item in reversed(schedule):
        if isinstance(item, Pipeline):
            chains = tuple(
                tuple(tuple(step.reversed(label) for step in stage) for stage in reversed(chain))
                for chain in item.chains
            )
            out.append(Pipeline(chains, item.label))
        else:
            out.append(item.reversed(label))
    return out


_RINGS: dict[tuple, list | None] = {}  # ring searches done in this process, by group and links


@dataclass
class Context:
    """What an algorithm may look at: the topology, the group (chips in rank order), for an all-to-all
    of uneven demands its traffic matrix (:mod:`trnsim.collectives.traffic`; None: uniform), for a
    broadcast or reduce its root, and for an all-gather or reduce-scatter of unequal blocks each
    block's share of the size (None: ``1/p`` each; :mod:`trnsim.collectives.arguments`)."""

    topology: Topology
    group: list[str]
    traffic: np.ndarray | None = field(default=None, compare=False)
    root: int = 0
    blocks: tuple[float, ...] | None = None

    @property
    def p(self) -> int:
        return len(self.group)

    def attr(self, position: int, key: str):
        return self.topology.nodes[self.group[position]].get(key)

    @cached_property
    def disjoint_rings(self) -> list[list[str]] | None:
        """Edge-disjoint Hamiltonian cycles over the group's direct links, if they split into some."""
        members = set(self.group)
        degree = dict.fromkeys(self.group, 0)
        inside = []
        for u, v in self.topology.links:
            if u in members and v in members:
                degree[u] += 1
                degree[v] += 1
                inside.append((u, v))
        values = set(degree.values())
        # only a connected 2k-regular graph splits into Hamiltonian cycles; most fabrics fail here cheaply
        if len(values) != 1 or min(values) < 2 or min(values) % 2 or self.p > RING_SEARCH_LIMIT:
            return None
        # the search is deterministic and depends on the group's links alone: every op (and every
        # variant with the same wiring) in one process reuses it
        key = (tuple(self.group), tuple(inside))
        if key not in _RINGS:
            from trnsim.collectives.rings import adjacency, disjoint_hamiltonian_cycles

            _RINGS[key] = disjoint_hamiltonian_cycles(adjacency(self.group, inside))
        found = _RINGS[key]
        return None if found is None else [list(ring) for ring in found]

    @cached_property
    def ring_order(self) -> list[int]:
        """Positions in ring order: a Hamiltonian cycle over direct links if there is one, else rank order."""
        if self.disjoint_rings is None:
            return list(range(self.p))
        position = {chip: i for i, chip in enumerate(self.group)}
        return [position[chip] for chip in self.disjoint_rings[0]]
