"""A group of GPUs on one NVSwitch domain, read from the graph, as NCCL's tuner sees it.

NCCL builds its view of a node from the hardware: the GPUs, how many NVLinks each has (NVML) and
whether the switches multicast (NVLS). :func:`nccl_system_of` reads the same from a built
:class:`~trnsim.topology.graph.Topology` and the file's ``runtime.nccl`` facts, never from a system's
name:

- ranks: the group's members, one GPU each (a chip that hosts several ranks is not NCCL's);
- nodes: 1. Every member must link only to switches, and all to the same ones: one scale-up domain
  (NCCL fuses a multi-node NVLink domain into one node). A group across domains is refused here;
- NVLinks per GPU: a member's links to the switches at their raw rate (lanes x lane rate, the fabric's
  efficiency is trnsim's, not NCCL's) over the file's ``nvlink_gbps``, a whole number, equal for every
  member (NCCL's single-domain search assumes equal GPUs); NCCL then counts each link at its own
  figure (:func:`~trnsim.model.runtimes.nccl_constants.nvlink_bw_gbps`);
- NVLS: the file's ``nvls`` fact and every switch the members reach reducing in the network (its
  switch model's ``reduction``), so that a what-if that turns reduction off turns NVLS off too.

What does not fit is refused in one line (:class:`~trnsim.errors.NotApplicableError`).
"""

import math

from trnsim.errors import NotApplicableError
from trnsim.model.runtimes.nccl_search import single_domain_system
from trnsim.model.runtimes.nccl_system import NcclSystem
from trnsim.topology.graph import RANK_CLASS, Topology

MAX_LOCAL_RANKS = 72  # NCCL_MAX_LOCAL_RANKS (single_domain_system's limit)


def _refuse(topology: Topology, why: str) -> NotApplicableError:
    return NotApplicableError(f"{{runtime}} nccl on {topology.name}: {why}")


def _switch_links(topology: Topology, member: str) -> dict[str, float]:
    """The member's links by the switch at their other end, at raw rate (GB/s per direction);
    refused when a link leads anywhere but a switch."""
    found: dict[str, float] = {}
    for (u, v), data in topology.links.items():
        if member not in (u, v) or data["cls"] == RANK_CLASS:
            continue
        other = v if u == member else u
        node = topology.nodes[other]
        if node["kind"] != "switch" or node.get("role") == "chip":
            raise _refuse(
                topology,
                f"{member} links to {other}, not to a switch: NCCL's model here is GPUs on one "
                "NVSwitch domain",
            )
        found[other] = found.get(other, 0.0) + data.get("raw_bw_gbps", data["bw_gbps"])
    if not found:
        raise _refuse(topology, f"{member} has no links")
    return found


def nvlinks_per_gpu(topology: Topology, group: list[str], nvlink_gbps: float) -> int:
    """The NVLinks each member has to the switches (all equal), and check that the members share
    every switch."""
    per_member = {member: _switch_links(topology, member) for member in group}
    first = group[0]
    switches = set(per_member[first])
    for member in group[1:]:
        if set(per_member[member]) != switches:
            raise _refuse(
                topology,
                f"{first} and {member} reach different switches: the group spans more than one "
                "NVSwitch domain (several NCCL nodes are not modelled yet)",
            )
    totals = {member: sum(links.values()) for member, links in per_member.items()}
    low, high = min(totals.values()), max(totals.values())
    if not math.isclose(low, high, rel_tol=1e-9):
        raise _refuse(
            topology,
            f"the members' NVLink bandwidth differs ({low:g} to {high:g} GB/s): NCCL's one-domain search "
            "assumes equal GPUs",
        )
    count = high / nvlink_gbps
    if abs(count - round(count)) > 1e-6 or round(count) < 1:
        raise _refuse(
            topology,
            f"a GPU's {high:g} GB/s of links is not a whole number of {nvlink_gbps:g} GB/s NVLinks "
            "(runtime.nccl.nvlink_gbps)",
        )
    return round(count)


def _switches_reduce(topology: Topology, member: str) -> bool:
    """Every switch the member links to reduces in the network (its model's ``reduction``)."""
    models = topology.spec.switch_models
    for switch in _switch_links(topology, member):
        model = models.get(topology.nodes[switch].get("model"))
        if model is None or not model.reduction:
            return False
    return True


def nccl_system_of(topology: Topology, group: list[str]) -> NcclSystem:
    """The :class:`NcclSystem` of ``group`` (rank names) on ``topology`` (see the module docstring).

    Raises
    ------
    NotApplicableError
        The file has no ``runtime.nccl`` facts, a chip hosts several ranks, the group has fewer than
        2 or more than 72 members, or they are not GPUs on one NVSwitch domain with equal NVLinks.
    """
    facts = topology.spec.runtime.nccl
    if facts is None:
        raise _refuse(
            topology,
            "the file has no runtime.nccl section (compute_capability, nvls, nvlink_gbps)",
        )
    if topology.ranks_per_chip > 1:
        raise _refuse(topology, f"a chip hosts {topology.ranks_per_chip} ranks; NCCL runs one rank per GPU")
    if not 2 <= len(group) <= MAX_LOCAL_RANKS:
        raise _refuse(
            topology,
            f"NCCL's one-domain model takes 2 to {MAX_LOCAL_RANKS} GPUs, the group has {len(group)}",
        )
    links = nvlinks_per_gpu(topology, group, facts.nvlink_gbps)
    nvls = facts.nvls and all(_switches_reduce(topology, member) for member in group)
    return single_domain_system(facts.compute_capability, len(group), links, nvls=nvls)
