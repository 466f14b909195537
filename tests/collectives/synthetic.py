"""Small synthetic topologies with equal links, for closed-form tests (now in the package, so that
doctests can build them too: :mod:`trnsim.topology.synthetic`)."""

from trnsim.topology.synthetic import CHIP, LATENCY, complete_topology, graph_topology, ring_topology

__all__ = ["CHIP", "LATENCY", "complete_topology", "graph_topology", "ring_topology"]
