"""Collectives across many scale-up domains over the scale-out network, by composition.

No graph of the cluster is built: the phases inside a domain run on the domain's own graph, the
phase across domains is a closed form over the scale-out fabric, and the two are overlapped in
chunks. One job per module: ``compose`` (the phases composed, per size: :func:`evaluate_cluster`),
``inter`` (the cross-domain phase in closed form: :func:`inter_time_us`), ``limits`` (the cluster's
lower bound and the composition's own ceiling), ``phases`` (each op's composition: the in-domain
phases before and after the cross-domain one), ``runtime`` (a runtime's pricing of the cluster).
"""

from trnsim.model.cluster.compose import MAX_CHUNKS, PHASES, ClusterEvaluation, ClusterRow, evaluate_cluster
from trnsim.model.cluster.inter import INTER_ALGORITHMS, inter_time_us

__all__ = [
    "INTER_ALGORITHMS",
    "MAX_CHUNKS",
    "PHASES",
    "ClusterEvaluation",
    "ClusterRow",
    "evaluate_cluster",
    "inter_time_us",
]
