"""``trnsim cluster``: many scale-up domains over a scale-out network (EFA, InfiniBand, RoCE, DCN): the fabric (``fabric``)
and collectives across domains (``collective``), one module each, declared on :data:`app` here in
the order ``--help`` lists them (each module is imported when its command is named)."""

from trnsim.cli.cluster.common import app
from trnsim.cli.lazy import Entry

app.lazy_entries = (
    Entry("fabric", "trnsim.cli.cluster.fabric:fabric"),
    Entry("collective", "trnsim.cli.cluster.collective:collective"),
)

__all__ = ["app"]
