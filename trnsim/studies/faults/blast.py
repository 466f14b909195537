"""Blast radius: the chips a failure takes out of service, by policy.

* ``cuboid``: a torus job needs the whole wrapped torus, so one failed chip takes every chip of the
  domain out of service (docs/sources.md#trn2-blast-radius: 64 on NL64, 256 on the 4x4x16 concept);
  links are routed round;
* ``chip``: only the failed chip (with its ranks);
* ``node``: the failed chip's node (server or tray);
* ``rack``: the failed chip's rack (the whole system on a torus).
"""

from trnsim.errors import ParameterError, UsageError
from trnsim.topology.faults import Component
from trnsim.topology.graph import Topology

POLICIES = ("cuboid", "chip", "node", "rack")


def default_policy(topology: Topology) -> str:
    """``cuboid`` on a torus (a job needs the whole torus), ``chip`` on a switched fabric."""
    return "cuboid" if topology.spec.kind == "torus" else "chip"


def check_policy(topology: Topology, policy: str | None) -> str:
    """``policy``, or the system's default; refused when unknown or, for ``cuboid``, not a torus."""
    policy = policy or default_policy(topology)
    if policy not in POLICIES:
        raise ParameterError(f"expected one of {', '.join(POLICIES)}", "blast_radius", repr(policy))
    if policy == "cuboid" and topology.spec.kind != "torus":
        raise UsageError(
            f"{{blast_radius}} cuboid is for tori (a job needs the whole torus); {topology.name} is switched",
            names="blast_radius",
        )
    return policy


def lost_with(topology: Topology, part: Component, policy: str) -> list[str]:
    """Chips (rank endpoints) a failed chip takes out of service under ``policy``.

    Parameters
    ----------
    topology : Topology
        The system before the failure.
    part : Component
        The failed part; only a chip loses chips by policy (other parts lose chips only by cutting
        them off, which the sweep finds on the survivors).
    policy : str
        One of :data:`POLICIES`.

    Returns
    -------
    list of str
        The rank endpoints lost, in rank order.
    """
    if not part.nodes or part.kind != "chip":
        return []
    nodes = topology.nodes
    chip = part.nodes[0]
    ranks = [c for c in topology.chips if nodes[c].get("chip", c) == chip]
    if policy == "chip":
        return ranks
    if policy == "cuboid" or (policy == "rack" and topology.spec.kind == "torus"):
        return list(topology.chips)
    data = nodes[ranks[0]]
    if policy == "node":
        key = ("rack", "node") if topology.spec.kind == "switched" else ("server",)
    else:
        key = ("rack",)
    return [c for c in topology.chips if all(nodes[c].get(k) == data.get(k) for k in key)]
