"""Topology graphs: the data model, builders, hardware checks and metrics."""

from trnsim.topology.graph import Topology
from trnsim.topology.load import load_topology

__all__ = ["Topology", "load_topology"]
