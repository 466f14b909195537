"""What the fault-study tests share: a loader of a catalog system with failures, a sweep, and a
synthetic report."""

from trnsim.studies.faults import RATES, ClassResult, FaultReport, single_failures
from trnsim.topology import load_topology

GIB = 1 << 30
DEFAULT_RATES = {name: value for name, (value, _) in RATES.items()}


def loader(sku, overrides=()):
    def load(faults, keep_largest=False):
        extra = [f"fail={text}" for text in faults]
        return load_topology(sku, overrides=list(overrides) + extra, keep_largest=keep_largest)

    return load


def sweep(sku, ops=("allreduce",), sizes=(GIB,), overrides=(), **options):
    topology = load_topology(sku, overrides=list(overrides))
    return single_failures(loader(sku, overrides), topology, list(ops), list(sizes), **options)


def by_kind(report):
    return {result.kind: result for result in report.classes}


def synthetic(outcomes_by_kind, chips=10):
    classes = [
        ClassResult(kind, sum(o.weight for o in outcomes), outcomes) for kind, outcomes in outcomes_by_kind
    ]
    return FaultReport("x", chips, "chip", {("allreduce", 1): 100.0}, classes, 0)
