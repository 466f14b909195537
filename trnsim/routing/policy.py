"""Routing policies by name: how a flow's bytes are spread over the shortest paths between its ends.

* ``ecmp``: every flow split evenly over all shortest paths (the ideal of a fabric whose sources and
  switches spray every transfer over all equal-cost ports);
* ``single``: one deterministic path per source-destination pair (:mod:`trnsim.routing.single`):
  destination-address routing through switches, dimension-order on tori;
* ``hash``: one random shortest path per flow, chosen hop by hop as a switch hashing flows would
  (:mod:`trnsim.routing.hashed`); results give the mean and the worst over several seeds.

Each may forbid paths that relay through chips other than the flow's two ends (``no-relay``): then
only switches forward traffic.
"""

from dataclasses import dataclass

from trnsim.errors import ParameterError

POLICIES = ("ecmp", "single", "hash")
# seeds a hash-routed run averages over (an assumption: enough for a stable mean on catalog fabrics)
HASH_SEEDS = 8
MAX_HASH_SEEDS = 64  # each seed routes and costs the schedule again


@dataclass(frozen=True)
class RoutingPolicy:
    """A routing policy and whether chips may relay traffic for others (a file's ``routing:``
    section, :class:`trnsim.spec.schema.RoutingSpec`, with any ``--routing`` applied)."""

    policy: str = "ecmp"
    relay: bool = True
    seeds: int = HASH_SEEDS  # hash only: how many seeds give the mean and the worst

    @property
    def label(self) -> str:
        """The policy as ``--routing`` spells it (``hash:16,no-relay``)."""
        name = self.policy + (f":{self.seeds}" if self.policy == "hash" and self.seeds != HASH_SEEDS else "")
        return name + ("" if self.relay else ",no-relay")

    @property
    def realisations(self) -> int:
        """How many routings of the same flows to cost: one, or one per seed for ``hash``."""
        return self.seeds if self.policy == "hash" else 1


def routing_of(spec) -> RoutingPolicy:
    """The policy a topology file names (its ``routing:`` section, ECMP with relay by default)."""
    section = spec.routing
    return RoutingPolicy(section.policy, section.relay, section.hash_seeds)


def routing_overrides(text: str, parameter: str = "routing") -> list[str]:
    """``--routing`` as ``--set`` edits of the file's ``routing`` section (only the parts given).

    ``single`` -> ``routing.policy=single``; ``hash:16,no-relay`` adds ``routing.hash_seeds=16`` and
    ``routing.relay=false``; ``no-relay`` alone keeps the file's policy.
    """
    parsed = parse_routing(text, parameter=parameter)
    parts = [part.strip().lower() for part in str(text).split(",")]
    edits = []
    head, _, seeds = parts[0].partition(":")
    if head in POLICIES:
        edits.append(f"routing.policy={head}")
    if seeds:
        edits.append(f"routing.hash_seeds={parsed.seeds}")
    if head in ("relay", "no-relay") or len(parts) == 2:
        edits.append(f"routing.relay={'true' if parsed.relay else 'false'}")
    return edits


def parse_routing(
    text: str, default: "RoutingPolicy | None" = None, parameter: str = "routing"
) -> RoutingPolicy:
    """Parse ``POLICY[:SEEDS][,relay|,no-relay]`` (e.g. ``single``, ``hash:16``, ``ecmp,no-relay``).

    Parts left out keep ``default``'s value (the SKU file's routing).
    """
    base = default or RoutingPolicy()
    parts = [part.strip().lower() for part in str(text).split(",")]
    expected = f"expected POLICY[:SEEDS][,relay|,no-relay] with POLICY one of {', '.join(POLICIES)}"
    if not parts[0] or len(parts) > 2:
        raise ParameterError(expected, parameter, repr(text))
    policy, colon, seeds_text = parts[0].partition(":")
    if colon and not seeds_text:
        raise ParameterError("give the number of seeds after the colon (hash:16)", parameter, repr(text))
    relay = base.relay
    if policy in ("relay", "no-relay") and len(parts) == 1:
        return RoutingPolicy(base.policy, policy == "relay", base.seeds)
    if policy not in POLICIES:
        raise ParameterError(expected, parameter, repr(text))
    seeds = base.seeds
    if seeds_text:
        if policy != "hash" or not seeds_text.isdigit() or not 1 <= int(seeds_text) <= MAX_HASH_SEEDS:
            raise ParameterError(
                f"seeds are a whole number 1..{MAX_HASH_SEEDS}, for hash only", parameter, repr(text)
            )
        seeds = int(seeds_text)
    if len(parts) == 2:
        if parts[1] not in ("relay", "no-relay"):
            raise ParameterError(expected, parameter, repr(text))
        relay = parts[1] == "relay"
    return RoutingPolicy(policy, relay, seeds)
