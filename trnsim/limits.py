"""Documented limits on input size, checked before any work starts.

Each limit protects the machine from an input that would take minutes or gigabytes (a YAML alias
bomb, ``racks: 100000``, a routing matrix of billions of entries). They are defaults, not facts
about hardware: each can be raised with the environment variable named in its message.

========================  ===================================  ============================
environment variable      what it bounds                       default
========================  ===================================  ============================
TRNSIM_MAX_FILE_BYTES     size of a topology or baseline file  4 MiB
TRNSIM_MAX_TRAFFIC_BYTES  size of a --traffic matrix file      64 MiB
TRNSIM_MAX_PICTURE_BYTES  a picture embedded in a report       64 MiB
TRNSIM_MAX_YAML_DEPTH     nesting depth of a YAML document     64
TRNSIM_MAX_YAML_NODES     YAML nodes after expanding aliases   100,000
TRNSIM_MAX_DEVICES        chips, switches and ranks (>1/chip)  131,072
TRNSIM_MAX_LINKS          links of a topology                  1,048,576
TRNSIM_MAX_ROUTING        routing work (see below)             268,435,456
TRNSIM_MAX_PAIRS_WORK     all-pairs statistics work            268,435,456
TRNSIM_MAX_SHARED_WORK    concurrent groups' link loads        268,435,456
TRNSIM_MAX_FAULTS_WORK    a fault sweep (faults)               268,435,456
TRNSIM_MAX_SIZES          message sizes in one run             1,000
TRNSIM_MAX_DEMAND_CELLS   a demand op's matrix of pairs        67,108,864
TRNSIM_MAX_PIPELINE_CELLS a pipeline's cost table              134,217,728
TRNSIM_MAX_MATRIX_CELLS   cells of a topo hops --matrix        4,194,304
TRNSIM_MAX_DESIGN_POINTS  points a design run evaluates        1,000
========================  ===================================  ============================

Work is counted as sources x (devices + directed links): what a breadth-first search from every
source touches. Collective routing counts the group as its sources, except on a wrapped torus
routed by translation (the whole torus as the group), which does one search and reads every
member's rows off it: devices + directed links + group; concurrent groups
(``--groups``, ``layout``) count every group routed by itself (a translate of another on a wrapped
torus costs nothing more), times the hash seeds. Their shared-link work is what they keep and
touch per schedule step: each routed group's load on every directed link, and the sum. At the default
limits a run takes seconds to about half a minute and a few GB on this project's 2-core machines.
"""

import os
from dataclasses import dataclass

from trnsim.errors import UsageError


@dataclass(frozen=True)
class Limit:
    """A named bound with its default and the environment variable that raises it."""

    env: str
    default: int
    what: str

    @property
    def value(self) -> int:
        """The bound in force: the environment's value if it is a positive whole number."""
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        text = raw.strip().replace("_", "")
        if not text.isascii() or not text.isdigit() or int(text) <= 0:
            raise UsageError(f"environment variable {self.env}={raw!r}: expected a whole number > 0")
        return int(text)

    def check(self, amount: int, subject: str) -> None:
        """Raise :class:`UsageError` when ``amount`` exceeds the bound.

        ``subject`` starts the message and names the input, e.g. ``"my.yaml: the torus would have"``.
        """
        bound = self.value
        if amount > bound:
            given = (os.environ.get(self.env) or "").strip()
            origin = (
                f"set by the environment variable {self.env}={given}; raise it there"
                if given
                else f"a default; raise it with the environment variable {self.env}"
            )
            raise UsageError(f"{subject} {amount:,} {self.what}, more than the limit of {bound:,} ({origin})")


FILE_BYTES = Limit("TRNSIM_MAX_FILE_BYTES", 4 << 20, "bytes")
TRAFFIC_BYTES = Limit("TRNSIM_MAX_TRAFFIC_BYTES", 64 << 20, "bytes")
PICTURE_BYTES = Limit("TRNSIM_MAX_PICTURE_BYTES", 64 << 20, "bytes")
YAML_DEPTH = Limit("TRNSIM_MAX_YAML_DEPTH", 64, "levels of nesting")
YAML_NODES = Limit("TRNSIM_MAX_YAML_NODES", 100_000, "YAML nodes once aliases are expanded")
DEVICES = Limit("TRNSIM_MAX_DEVICES", 1 << 17, "devices (chips, switches and the ranks of multi-rank chips)")
LINKS = Limit("TRNSIM_MAX_LINKS", 1 << 20, "links")
ROUTING = Limit("TRNSIM_MAX_ROUTING", 1 << 28, "units of routing work (group x (devices + directed links))")
SHARED_WORK = Limit(
    "TRNSIM_MAX_SHARED_WORK",
    1 << 28,
    "units of shared-link work (schedule steps x directed links x (routed groups + 2), over the algorithms tried)",
)
FAULTS_WORK = Limit(
    "TRNSIM_MAX_FAULTS_WORK",
    1 << 28,
    "units of fault-sweep work (runs x ops x (chips x (devices + directed links) + 2^19), plus parts x "
    "refinement rounds x (devices + directed links))",
)
PAIRS_WORK = Limit("TRNSIM_MAX_PAIRS_WORK", 1 << 28, "units of work (chips x (devices + directed links))")
SIZES = Limit("TRNSIM_MAX_SIZES", 1000, "message sizes")
# gather, scatter, send/recv, permute and all-to-all-v keep every pair's bytes: ranks^2 cells (8 bytes each)
# a pipeline is costed on its distinct step patterns x directed links (8 bytes each): beyond this the
# algorithm is skipped (a chain of 32,767 one-flow stages on the 32x32x32 torus would need 6.4G cells)
PIPELINE_CELLS = Limit(
    "TRNSIM_MAX_PIPELINE_CELLS", 1 << 27, "cells of a pipeline's cost table (step patterns x directed links)"
)
DEMAND_CELLS = Limit("TRNSIM_MAX_DEMAND_CELLS", 1 << 26, "cells of demand (a matrix of every pair's bytes)")
# a distance matrix printed cell by cell: 2,048 ranks (all columns) take a few seconds as CSV or JSON
MATRIX_CELLS = Limit("TRNSIM_MAX_MATRIX_CELLS", 1 << 22, "distances (ranks x columns printed)")
# a design point builds and evaluates a system (about a second for a 144-chip one here): 1,000 of them
# are a quarter of an hour on one core; more wants a search (random:N) or a raised limit and workers
DESIGN_POINTS = Limit("TRNSIM_MAX_DESIGN_POINTS", 1000, "design points")
