"""The op and rank count a file claims: the names tools and users write for the ops, rank counts,
and trnsim's own convention (a ``# trnsim: op=... ranks=...`` comment; in JSON, a ``"trnsim"``
object with op, ranks, source and note)."""

from trnsim.collectives.ops import OPS as KNOWN
from trnsim.studies.calibration.logs.numbers import WHOLE
from trnsim.studies.calibration.logs.parsed import Claim, fail, quote

OPS = tuple(KNOWN)
# names the tools and users write for the ops, after lower-casing and dropping _ and -: trnsim's own,
# nccom-test's short ones (allr, allg, redsct) and nccl-tests' binaries (broadcast_perf, sendrecv_perf)
OP_NAMES = {name: name for name in OPS} | {
    "allr": "allreduce",
    "allg": "allgather",
    "redsct": "reducescatter",
    "bcast": "broadcast",
    "alltoallv": "alltoallv",
}
MAX_RANKS = 1 << 20


def canonical_op(name: str) -> str | None:
    """``"allreduce"``... for any name the tools or users write (``all_gather_perf``, ``allg``),
    else ``None``."""
    key = name.strip().lower()
    for suffix in ("_perf_mpi", "_perf"):
        key = key.removesuffix(suffix)
    return OP_NAMES.get(key.replace("_", "").replace("-", ""))


def op_claim(name: str, line: int, origin: str, where: str) -> Claim:
    """A claim of the op named ``name``; an op outside :data:`OPS` is refused by name."""
    canonical = canonical_op(name)
    if canonical is None:
        raise fail(where, f"op {quote(name)} is not supported; expected one of {', '.join(OPS)}")
    return Claim(canonical, line, origin)


def rank_count(text: str, where: str) -> int:
    """A rank count written as text: a whole number from 2 to :data:`MAX_RANKS`."""
    if not WHOLE.fullmatch(text) or len(text) > 8:
        raise fail(where, f"ranks {quote(text)} is not a whole number")
    value = int(text)
    if not 2 <= value <= MAX_RANKS:
        raise fail(where, f"ranks {value}: a collective needs 2 to {MAX_RANKS:,} ranks")
    return value


def node_count(text: str, where: str) -> int:
    """A node (host, instance) count written as text: a whole number from 1 to :data:`MAX_RANKS`."""
    if not WHOLE.fullmatch(text) or len(text) > 8 or not 1 <= int(text) <= MAX_RANKS:
        raise fail(where, f"nodes {quote(text)}: expected a whole number of nodes from 1 to {MAX_RANKS:,}")
    return int(text)


def read_trnsim_comment(
    body: str, where: str, number: int, ops: list, ranks: list, nodes: list | None = None
) -> None:
    """The claims of a ``# trnsim: op=... ranks=... nodes=...`` comment (``body`` after ``trnsim:``)."""
    for item in body.split():
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise fail(where, f"'# trnsim:' expects key=value items (op=..., ranks=...), found {quote(item)}")
        if key == "op":
            ops.append(op_claim(value, number, "'# trnsim:' line", where))
        elif key == "ranks":
            ranks.append(Claim(rank_count(value, where), number, "'# trnsim:' line"))
        elif key == "nodes" and nodes is not None:
            nodes.append(Claim(node_count(value, where), number, "'# trnsim:' line"))
        else:
            raise fail(where, f"'# trnsim:' has an unknown key {quote(key)}; expected op=, ranks= or nodes=")


def read_trnsim_object(meta, path: str, ops: list, ranks: list, nodes: list | None = None) -> str:
    """The claims of JSON's top-level ``"trnsim"`` object; returns its ``source`` (``""`` if none)."""
    if meta is None:
        return ""
    where = f"{path}:0: trnsim"
    if not isinstance(meta, dict):
        raise fail(where, "expected an object with op, ranks, source, note")
    for key, value in meta.items():
        if key == "op":
            if not isinstance(value, str):
                raise fail(where, f"op must be a string, found {value!r}")
            ops.append(op_claim(value, 0, "'trnsim' object", where))
        elif key == "ranks":
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(where, f"ranks must be a whole number, found {value!r}")
            ranks.append(Claim(rank_count(str(value), where), 0, "'trnsim' object"))
        elif key == "nodes" and nodes is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail(where, f"nodes must be a whole number, found {value!r}")
            nodes.append(Claim(node_count(str(value), where), 0, "'trnsim' object"))
        elif key in ("source", "note"):
            if not isinstance(value, str):
                raise fail(where, f"{key} must be a string")
        else:
            raise fail(where, f"unknown key {key!r}; expected op, ranks, nodes, source, note")
    return meta.get("source", "")
