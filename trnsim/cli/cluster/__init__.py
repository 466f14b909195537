"""``trnsim cluster``: many scale-up domains over a scale-out network (EFA, InfiniBand, RoCE, DCN): the fabric (``fabric``)
and collectives across domains (``collective``), one module each, registered on :data:`app` here in
the order ``--help`` lists them."""

from trnsim.cli.cluster import collective, fabric
from trnsim.cli.cluster.common import app

app.command("fabric")(fabric.fabric)
app.command("collective")(collective.collective)

__all__ = ["app"]
