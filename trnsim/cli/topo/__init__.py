"""``trnsim topo``: list, show, hops, path, export, draw, validate and new, one module per command.

Importing the package registers every command on :data:`app` (each module's heavy imports happen
inside its command, so start-up stays light)."""

from trnsim.cli.topo import catalog, draw, export, hops, new, path, show, validate  # noqa: F401  (registers)
from trnsim.cli.topo.common import app

__all__ = ["app"]
