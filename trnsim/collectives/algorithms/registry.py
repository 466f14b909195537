"""The algorithm registry: each algorithm module registers its schedule builder under a name.

:func:`algorithm` registers a schedule builder (``build(ctx, op) -> list[Step | Pipeline]``) with
the ops it supports; :func:`find` looks one up by name or alias. The registry's order is the order in
which :mod:`trnsim.collectives.algorithms` imports the algorithm modules (``all`` lists them so).
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from trnsim.collectives.schedule import Context, NotApplicable, Step

ALL = {"allreduce", "allgather", "reducescatter", "alltoall"}
REDUCTIONS = {"allreduce", "allgather", "reducescatter"}


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm."""

    name: str
    ops: frozenset[str]
    summary: str
    build: Callable[[Context, str], list[Step]]
    aliases: tuple[str, ...] = field(default=())
    dominated_by: str | None = None  # never faster than this one under the model, where both apply
    takes_traffic: bool = False  # builds a skewed all-to-all from the context's traffic matrix

    def schedule(self, ctx: Context, op: str) -> list[Step]:
        if op not in self.ops:
            raise NotApplicable(
                f"{self.name} does not implement {op} (it does {', '.join(sorted(self.ops))})"
            )
        if ctx.traffic is not None and not self.takes_traffic:
            raise NotApplicable(
                "a skewed all-to-all runs on algorithms that send each block straight to its "
                "destination (mesh, pairwise); this one combines blocks for several destinations"
            )
        return self.build(ctx, op)


REGISTRY: dict[str, Algorithm] = {}


def algorithm(
    name: str,
    ops: set[str],
    summary: str,
    aliases: tuple[str, ...] = (),
    dominated_by: str | None = None,
    takes_traffic: bool = False,
):
    """Register a schedule builder under ``name``."""

    def register(build):
        REGISTRY[name] = Algorithm(name, frozenset(ops), summary, build, aliases, dominated_by, takes_traffic)
        return build

    return register


def find(name: str) -> Algorithm:
    """An algorithm by name or alias (case-insensitive)."""
    from trnsim.errors import UsageError

    key = name.lower()
    for algo in REGISTRY.values():
        if key == algo.name or key in algo.aliases:
            return algo
    raise UsageError(f"unknown algorithm {name!r}; choose one of {', '.join(REGISTRY)}, auto or all")
