"""nccom-test's dialect (aws-neuron-sdk ``tools/neuron-sys-tools/nccom-test.rst``): the echoed
command's arguments (ranks and op), the text header's columns (older and newer versions), and the
JSON entries (``--report-to-json-file``)."""

from trnsim.studies.calibration.logs.claims import node_count, op_claim, rank_count
from trnsim.studies.calibration.logs.numbers import json_number, json_size
from trnsim.studies.calibration.logs.parsed import Claim, Raw, fail, require_columns

# nccom-test's op arguments (aws-neuron-sdk nccom-test.rst): the basic four, and permute, sendrecv and the v ops
NCCOM_OPS = {"all_reduce", "allr", "all_gather", "allg", "reduce_scatter", "redsct", "alltoall"}
NCCOM_OTHER_OPS = {"sendrecv", "permute", "alltoallv", "all_gatherv", "allgatherv", "reduce_scatterv"}


def read_nccom_args(
    words: list[str], where: str, number: int, ops: list, ranks: list, nodes: list | None = None
) -> None:
    """The ranks (``-r``, ``--nworkers``), nodes (``-N``, ``--nnodes``: instances) and op of the words
    after ``nccom-test`` on an echoed command."""
    index = 0
    nodes = [] if nodes is None else nodes
    while index < len(words):
        word = words[index]
        if word in ("-r", "--nworkers") and index + 1 < len(words):
            ranks.append(Claim(rank_count(words[index + 1], where), number, "nccom-test -r"))
            index += 1
        elif word.startswith("--nworkers="):
            ranks.append(Claim(rank_count(word.partition("=")[2], where), number, "nccom-test -r"))
        elif word in ("-N", "--nnodes") and index + 1 < len(words):
            nodes.append(Claim(node_count(words[index + 1], where), number, f"nccom-test {word}"))
            index += 1
        elif word.startswith("--nnodes="):
            nodes.append(Claim(node_count(word.partition("=")[2], where), number, "nccom-test --nnodes"))
        elif word in NCCOM_OPS or word in NCCOM_OTHER_OPS:
            ops.append(op_claim(word, number, "nccom-test command line", where))
        index += 1


def nccom_columns(tokens: list[str], where: str) -> tuple[dict[str, int], str]:
    """The column of each field in an nccom-test header (time: the average when printed), and
    the time column's name."""
    columns: dict[str, int] = {}
    times: dict[str, int] = {}
    for index, token in enumerate(tokens):
        name = token.lower()
        if name == "size(b)":
            columns["size"] = index
        elif name == "type":
            columns["type"] = index
        elif name.startswith("time"):
            times.setdefault(name, index)
        elif name.startswith("algbw"):
            columns.setdefault("algbw", index)
        elif name.startswith("busbw"):
            columns.setdefault("busbw", index)
        elif name == "algorithm":
            columns["algorithm"] = index
    time_name = ""
    for preferred in ("time:avg(us)", "time(us)", *times):
        if preferred in times:
            columns["time"], time_name = times[preferred], preferred
            break
    return require_columns(columns, where, "nccom-test"), time_name


def nccom_entry(entry, where: str, index: int) -> Raw:
    """One entry of nccom-test's JSON ``results``."""
    if not isinstance(entry, dict):
        raise fail(where, "expected an object")
    size = json_size(entry.get("size(B)"), where)
    times = [key for key in entry if isinstance(key, str) and key.lower().startswith("time")]
    key = next((k for k in ("time:avg(us)", "time(us)") if k in entry), times[0] if times else None)
    if key is None:
        raise fail(where, "no time (expected 'time:avg(us)')")
    time = json_number(entry, key, where, required=True)
    if time <= 0:
        raise fail(where, f"{key} {time!r}: expected a time > 0 us")
    algbw = json_number(entry, "algbw(GB/s)", where, required=False)
    busbw = json_number(entry, "busbw(GB/s)", where, required=False)
    if algbw is None and busbw is None:
        raise fail(where, "neither 'algbw(GB/s)' nor 'busbw(GB/s)'")
    for name, value in (("algbw", algbw), ("busbw", busbw)):
        if value is not None and value < 0:
            raise fail(where, f"{name} {value!r} is negative")
    dtype = entry.get("type") if isinstance(entry.get("type"), str) else None
    algorithm = entry.get("algorithm") if isinstance(entry.get("algorithm"), str) else None
    return Raw(where, index, size, time, 0.0, algbw, 0.0, busbw, 0.0, dtype, algorithm)
