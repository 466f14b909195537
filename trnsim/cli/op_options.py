"""The options that shape an op beyond its size: ``--root``, ``--pairs``, ``--counts``
(:mod:`trnsim.collectives.arguments`), and which op takes which."""

from pathlib import Path
from typing import Annotated

import typer

from trnsim.collectives.ops import OPS, get_op

Root = Annotated[
    int | None,
    typer.Option(
        "--root",
        help="broadcast, reduce, gather, scatter: the root's rank in the group (default 0, as "
        "nccl-tests' -r).",
    ),
]
Pairs = Annotated[
    str | None,
    typer.Option(
        "--pairs",
        help="sendrecv, permute: source-target rank pairs SRC:DST[,SRC:DST...], or a .json file "
        "holding a list of two-rank lists (nccom-test's --custom-src-target-pairs); every source sends "
        "its whole buffer to its target, all at once. Default: rank i to rank i+1 (mod p).",
    ),
]
Counts = Annotated[
    Path | None,
    typer.Option(
        "--counts",
        help="alltoallv: a text file of p rows of p numbers (row i: what rank i sends each rank), scaled "
        "so a rank sends the size on average; allgatherv, reducescatterv: p numbers (rank i's block), "
        "scaled to add up to the size. Element counts or bytes: only proportions matter. Default: even.",
    ),
]

# the options each kind of op offers (the others are left out of its command's --help)
SHAPE_OPTIONS = ("root", "pairs", "counts")


def shape_options(op_name: str) -> set[str]:
    """The shape options ``op_name`` takes (a subset of :data:`SHAPE_OPTIONS`)."""
    op = get_op(op_name)
    taken = set()
    if op.rooted:
        taken.add("root")
    if op.name in ("sendrecv", "permute"):
        taken.add("pairs")
    if op.name == "alltoallv" or op.uneven:
        taken.add("counts")
    return taken


def check_shape(ops: list[str], root, pairs, counts) -> tuple:
    """``(root, pairs, counts)`` once no option is given that none of ``ops`` takes (else one line
    naming it and the ops that take it)."""
    from trnsim.errors import UsageError

    given = {"root": root, "pairs": pairs, "counts": counts}
    taken = set().union(*(shape_options(op) for op in ops))
    for name, value in given.items():
        if value is not None and name not in taken:
            takers = [op for op in OPS if name in shape_options(op)]
            raise UsageError(f"--{name} is for {', '.join(takers)}; this run is {', '.join(ops)}")
    return root, pairs, counts


def shape_words(shape: tuple) -> str:
    """``(root, pairs, counts)`` as given on the command line, for a title and a baseline row's identity
    (``""``: none given)."""
    root, pairs, counts = shape
    words = [f"root {root}" if root is not None else "", f"pairs {pairs}" if pairs is not None else ""]
    words.append(f"counts {counts}" if counts is not None else "")
    return "; ".join(w for w in words if w)


def offered(command, op_name: str) -> None:
    """Leave out of ``command``'s signature (so its ``--help``) the options ``op_name`` does not take:
    the shape options of other ops, and ``--skew``/``--traffic`` but for an all-to-all."""
    import inspect

    dropped = set(SHAPE_OPTIONS) - shape_options(op_name)
    if op_name != "alltoall":
        dropped |= {"skew", "traffic"}
    # every op's command is one definition: its signature is read once (13 reads cost ~5 ms a run)
    signature = _SIGNATURES.get(command.__code__) or _SIGNATURES.setdefault(
        command.__code__, inspect.signature(command)
    )
    kept = [p for name, p in signature.parameters.items() if name not in dropped]
    command.__signature__ = signature.replace(parameters=kept)


_SIGNATURES: dict = {}


def shape_text(op: str, backend, selection) -> str:
    """The op's root, pairs or counts in words, for the header and the JSON (``""``: none apply)."""
    from trnsim.collectives.arguments import Arguments
    from trnsim.collectives.ops import get_op

    p = len(backend.group if hasattr(backend, "group") else backend.groups[0])
    text = (selection.arguments() or Arguments()).describe(get_op(op), p)
    if text and selection.counts_file is not None:
        text = text.replace("counts given", f"counts from {selection.counts_file}")
    return text
