"""The algorithm registry: each algorithm module registers its schedule builder under a name.

:func:`algorithm` registers a schedule builder (``build(ctx, op) -> list[Step | Pipeline]``) with
the ops it supports, and :func:`program_of` the same algorithm's program builder (``lower(ctx, op) ->
Program``: the data it moves, :mod:`trnsim.collectives.program`); :func:`find` looks one up by name
or alias. The registry's order is the order in
which :mod:`trnsim.collectives.algorithms` imports the algorithm modules (``all`` lists them so).
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from trnsim.collectives.program import Program
from trnsim.collectives.schedule import Context, NotApplicable, Step

ALL = {"allreduce", "allgather", "reducescatter", "alltoall"}
REDUCTIONS = {"allreduce", "allgather", "reducescatter"}
ROOTED = {"broadcast", "reduce"}  # the bases of the other ops (:attr:`trnsim.collectives.ops.Op.base`)


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
    lower: Callable[[Context, str], Program] | None = None  # the program builder
    named_only: bool = False  # left out of auto: run by name or with all
    takes_blocks: bool = False  # builds an all-gather or reduce-scatter of unequal blocks (``allgatherv``)

    def schedule(self, ctx: Context, op: str) -> list[Step]:
        """The schedule of ``op`` on this group (what the cost model routes and costs)."""
        self._refuse(ctx, op)
        return self.build(ctx, op)

    def program(self, ctx: Context, op: str) -> Program:
        """The program of ``op`` on this group: the same transfers, as data (what the checker runs)."""
        self._refuse(ctx, op)
        if self.lower is None:
            raise NotApplicable(f"{self.name} has no program builder")
        return self.lower(ctx, op)

    def _refuse(self, ctx: Context, op: str) -> None:
        if op not in self.ops:
            raise NotApplicable(
                f"{self.name} does not implement {op} (it does {', '.join(sorted(self.ops))})"
            )
        if ctx.traffic is not None and not self.takes_traffic:
            raise NotApplicable(
                "a skewed all-to-all runs on algorithms that send each block straight to its "
                "destination (mesh, pairwise, multipath); this one combines blocks for several destinations"
            )
        if ctx.blocks is not None and not self.takes_blocks:
            raise NotApplicable(f"{self.name} moves blocks of equal sizes; this group's differ")


REGISTRY: dict[str, Algorithm] = {}


def refuse_blocks(op: str) -> None:
    """Unequal blocks (:attr:`Context.blocks`) make an all-gather or a reduce-scatter, nothing else."""
    if op not in ("allgather", "reducescatter"):
        raise NotApplicable(f"unequal blocks are for all-gather and reduce-scatter, not {op}")


def algorithm(
    name: str,
    ops: set[str],
    summary: str,
    aliases: tuple[str, ...] = (),
    dominated_by: str | None = None,
    takes_traffic: bool = False,
    named_only: bool = False,
    takes_blocks: bool = False,
):
    """Register a schedule builder under ``name``."""

    def register(build):
        REGISTRY[name] = Algorithm(
            name,
            frozenset(ops),
            summary,
            build,
            aliases,
            dominated_by,
            takes_traffic,
            named_only=named_only,
            takes_blocks=takes_blocks,
        )
        return build

    return register


def program_of(name: str):
    """Register the program builder of the algorithm already registered as ``name``."""

    def register(lower):
        REGISTRY[name] = replace(REGISTRY[name], lower=lower)
        return lower

    return register


def find(name: str) -> Algorithm:
    """An algorithm by name or alias (case-insensitive)."""
    from trnsim.errors import UsageError

    key = name.lower()
    for algo in REGISTRY.values():
        if key == algo.name or key in algo.aliases:
            return algo
    raise UsageError(f"unknown algorithm {name!r}; choose one of {', '.join(REGISTRY)}, auto or all")
