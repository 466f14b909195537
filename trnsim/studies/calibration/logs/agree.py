"""One op and one rank count for the run: every value the file claims and the caller's argument
must agree. The messages for a disagreement and for a value the output does not state are built in
:func:`agree`."""

from trnsim.studies.calibration.logs.claims import OPS, canonical_op, rank_count
from trnsim.studies.calibration.logs.parsed import Claim, Parsed, fail


def agree(kind: str, given, claims: list[Claim], parsed: Parsed, path: str, name: str):
    """The one value of ``kind`` (``"op"`` or ``"ranks"``) the caller's ``given`` and the file's
    claims agree on; every message about the op or rank count disagreeing or not being stated is
    built here. ``name`` is how the caller takes the value (``op=``, ``--op``; ``""``: not at
    all), for the messages."""
    given_as = f"{name}{given}" if name.endswith("=") else f"{name} {given}"
    if given is not None:
        for claim in claims:
            if claim.value != given:
                raise fail(
                    f"{path}:{claim.line}",
                    f"{kind}={claim.value} here ({claim.origin}) but {given_as} was given",
                )
        return given
    if not claims:
        raise fail(
            f"{path}:{parsed.anchor}",
            f"the output does not state the {kind}; add a line '# trnsim: {kind}=...' before the data"
            + (f" or pass {name}{'' if name.endswith('=') else ' ' + kind.upper()}" if name else ""),
        )
    first = claims[0]
    for claim in claims[1:]:
        if claim.value != first.value:
            raise fail(
                f"{path}:{claim.line}",
                f"{kind}={claim.value} here ({claim.origin}) but {kind}={first.value} at line {first.line} "
                f"({first.origin})",
            )
    return first.value


def resolve_op(op: str | None, parsed: Parsed, path: str, name: str = "op=") -> str:
    """The run's op: the caller's ``op`` (any name :func:`.claims.canonical_op` knows) and the
    file's claims."""
    given = None
    if op is not None:
        given = canonical_op(op) if isinstance(op, str) else None
        if given is None:
            # an option's value is no place in the file: the message names the option alone
            where, what = (f"{path}:0", f"op {op!r}") if name.endswith("=") else (f"{name} {op!r}", "the op")
            raise fail(where, f"{what} is not supported; expected one of {', '.join(OPS)}")
    return agree("op", given, parsed.ops, parsed, path, name)


def resolve_ranks(ranks: int | None, parsed: Parsed, path: str, name: str = "ranks=") -> int:
    """The run's rank count: the caller's ``ranks`` and the file's claims."""
    if ranks is not None:
        if isinstance(ranks, bool) or not isinstance(ranks, int):
            raise fail(f"{path}:0", f"ranks {ranks!r} is not a whole number")
        ranks = rank_count(str(ranks), f"{path}:0")
    return agree("ranks", ranks, parsed.ranks, parsed, path, name)


def resolve_nodes(nodes: int | None, parsed: Parsed, path: str, name: str = "nodes=") -> int | None:
    """The nodes (hosts, instances) the run spanned: the caller's ``nodes`` and the file's claims
    (nccl-tests' rank lines' hosts, nccom-test's ``-N``), which must agree; None when neither says."""
    if nodes is None and not parsed.nodes:
        return None
    return agree("nodes", nodes, parsed.nodes, parsed, path, name)
