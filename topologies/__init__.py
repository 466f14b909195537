"""Makes the topology catalog importable package data (``trnsim.topologies``)."""
