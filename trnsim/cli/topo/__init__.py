"""``trnsim topo``: list, cost, show, hops, path, export, draw, validate and new, one module per command.

Each command's module registers it on :data:`app` when imported; the CLI imports a module when its
command is named (:mod:`trnsim.cli.lazy`), so ``topo list`` loads neither ``show`` nor ``draw``."""

from trnsim.cli.lazy import Entry
from trnsim.cli.topo.common import app

# in the order --help lists them
app.lazy_entries = tuple(
    Entry(name, f"trnsim.cli.topo.{module}")
    for name, module in (
        ("list", "catalog"),
        ("cost", "cost"),
        ("draw", "draw"),
        ("export", "export"),
        ("hops", "hops"),
        ("new", "new"),
        ("path", "path"),
        ("show", "show"),
        ("validate", "validate"),
    )
)

__all__ = ["app"]
