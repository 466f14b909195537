"""Alpha-beta models of collectives evaluated over a topology graph, congestion included."""
