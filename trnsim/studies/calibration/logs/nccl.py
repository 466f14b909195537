"""nccl-tests' dialect (NVIDIA/nccl-tests ``src/common.cu``, ``src/util.cu``): the comment lines
that name the op and the ranks, the text header's columns, and the JSON entries (``-J FILE``) and
the op and rank count its ``args`` and ``config`` give."""

import re

from trnsim.studies.calibration.logs.claims import op_claim
from trnsim.studies.calibration.logs.numbers import json_number, json_size
from trnsim.studies.calibration.logs.parsed import Claim, Raw, fail, require_columns

NCCL_START = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
# a rank's line: its number and the host it ran on (distinct hosts: the nodes the run spanned)
NCCL_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+")
# an nccl-tests binary in an echoed command line: ./build/all_reduce_perf, alltoall_perf_mpi
NCCL_BINARY = re.compile(
    r"(?:^|[\s/\"'=])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*?)_perf(?:_mpi)?(?=$|[\s\"'])"
)


def nccl_columns(tokens: list[str], where: str) -> tuple[dict[str, int], str]:
    """The column of each field in an nccl-tests header (the first ``time``: out-of-place), and
    the time column's name."""
    columns: dict[str, int] = {}
    time_name = ""
    for index, token in enumerate(tokens):
        if token in ("size", "type", "algbw", "busbw") and token not in columns:
            columns[token] = index
        elif token in ("time", "cputime") and "time" not in columns:
            columns["time"], time_name = index, token
    return require_columns(columns, where, "nccl-tests"), time_name


def nccl_json_claims(document: dict, path: str, ops: list, ranks: list) -> None:
    """The op named by ``args[0]`` (the binary) and the rank count ``config`` gives."""
    args = document.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        match = NCCL_BINARY.search(args[0])
        if match:
            ops.append(op_claim(match.group(1), 0, "args[0]", f"{path}:0: args[0]"))
    config = document.get("config")
    if isinstance(config, dict):
        devices, threads, gpus = config.get("devices"), config.get("nthreads"), config.get("ngpus")
        if (
            isinstance(devices, list)
            and devices
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in (threads, gpus))
        ):
            # one device entry per process (nccl-tests keeps the first of each process's lines)
            count = len(devices) * threads * gpus
            ranks.append(Claim(count, 0, "config: devices x nthreads x ngpus"))


def nccl_entry(entry, where: str, index: int) -> Raw:
    """One entry of nccl-tests' JSON ``results``: its out-of-place result."""
    if not isinstance(entry, dict):
        raise fail(where, "expected an object")
    size = json_size(entry.get("size"), where)
    result = entry.get("out_of_place")
    if not isinstance(result, dict):
        raise fail(where, "no out_of_place result (an in-place-only run is not read)")
    key = "time" if "time" in result else "cpu_time"
    time = json_number(result, key, where, required=True)
    if time <= 0:
        raise fail(where, f"{key} {time!r}: expected a time > 0 us")
    algbw = json_number(result, "alg_bw", where, required=False)
    busbw = json_number(result, "bus_bw", where, required=False)
    if algbw is None and busbw is None:
        raise fail(where, "neither alg_bw nor bus_bw")
    for name, value in (("alg_bw", algbw), ("bus_bw", busbw)):
        if value is not None and value < 0:
            raise fail(where, f"{name} {value!r} is negative")
    dtype = entry.get("type") if isinstance(entry.get("type"), str) else None
    return Raw(where, index, size, time, 0.0, algbw, 0.0, busbw, 0.0, dtype, None)
