"""Clusters the cluster tests share: synthetic domains (complete graphs, closed forms known) and
catalog ones, each joined by its scale-out fabric."""

from trnsim.topology.load import load_topology
from trnsim.topology.scaleout import fabric_choice, plan_fabric
from trnsim.topology.synthetic import complete_topology

NIC_GBIT = 800.0  # per chip, at the assumed 90%: 90 GB/s a rank across domains
HOP_US = 15.0  # the assumed latency of a step across domains


def complete_cluster(n: int, domains: int, link_gbps: float, **edits):
    """``domains`` complete graphs of ``n`` chips (every pair one link of ``link_gbps``, 1 us a step)
    with 800 Gbit/s NICs."""
    domain = complete_topology(n, bw_gbps=link_gbps)
    choice = fabric_choice(domain.spec, n, None, nic_gbit_per_chip=NIC_GBIT, **edits)
    return domain, plan_fabric(choice, n, domains)


def catalog_cluster(sku: str, domains: int, **edits):
    """``domains`` copies of a catalog system over the scale-out network its file describes."""
    domain = load_topology(sku)
    spec = domain.spec
    choice = fabric_choice(spec, domain.n_chips, spec.switched.racks if spec.switched else None, **edits)
    return domain, plan_fabric(choice, domain.n_chips, domains)
