"""Links a group borrows: its routed traffic through chips outside the group.

A group run alone has the whole fabric to itself. Where its flows are routed through chips that are
not members (a relaying torus or a fabric of relaying chips), they use those chips' links, which the
chips' own groups would use when every group runs at once: the result is then an upper bound of what
the group gets in a full job (running every group at once shows it). This is read from the routed plan
itself, not guessed from the group's shape: the directed links that carry load, and which of their
ends are physical chips hosting no member.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class Borrowed:
    """The chips outside a group whose links carry the group's traffic, and how many links."""

    chips: tuple[str, ...]  # physical chips hosting no member, in rank order
    links: int  # directed links with a non-member chip at one end that carry load

    def as_dict(self) -> dict:
        return {"chips": len(self.chips), "links": self.links, "chip_names": list(self.chips)}

    def describe(self) -> str:
        """One clause for a header: what is borrowed, and what to run instead (every group at once,
        which the caller names its own way)."""
        n = len(self.chips)
        return (
            f"relays through {n} chip{'s' if n != 1 else ''} outside the group ({self.links} of their "
            "links), idle here but busy when their own groups run: run every group at once"
        )


def borrowed_links(topology: Topology, group: list[str], plans) -> Borrowed | None:
    """What the routed ``plans`` (an :class:`~trnsim.model.plan.Plan` each, with their other
    hash seeds) of ``group`` borrow from chips outside it, or None when they borrow nothing."""
    from trnsim.topology.arrays import graph_arrays

    arrays = graph_arrays(topology)
    members = set(topology.chips_of(group)) | set(group)
    outside_names = [chip for chip in topology.physical_chips if chip not in members]
    if not outside_names:
        return None
    outside = np.zeros(arrays.n_nodes, dtype=bool)
    outside[[arrays.index[chip] for chip in outside_names]] = True
    loaded = np.zeros(len(arrays.src), dtype=bool)
    for plan in plans:
        for realisation in (plan, *plan.others):
            loaded |= realisation.edge_busy > 0
    touched = loaded & (outside[arrays.src] | outside[arrays.dst])
    if not touched.any():
        return None
    ends = set(arrays.src[touched].tolist()) | set(arrays.dst[touched].tolist())
    chips = tuple(name for name in outside_names if arrays.index[name] in ends)
    return Borrowed(chips, int(touched.sum()))


def borrowed_by(topology: Topology, evaluation, every: bool = False) -> Borrowed | None:
    """What an :class:`~trnsim.model.engine.GroupEvaluation` borrows: the plans of the algorithms
    its rows chose (``every``: of every algorithm evaluated, as algorithm ``all`` shows them)."""
    names = evaluation.plans if every else dict.fromkeys(row.algorithm for row in evaluation.rows)
    return borrowed_links(topology, evaluation.group, [evaluation.plans[name] for name in names])
