"""Read what nccl-tests and nccom-test print into typed rows of size, time and bandwidth.

This module knows the tools' output layouts and nothing about topologies or the model.

Formats read
------------
nccl-tests, text (NVIDIA/nccl-tests ``src/common.cu``, ``src/util.cu``)
    ``#``-comment lines first: ``# Collective test starting: all_reduce_perf`` (newer versions),
    ``# nThread 1 nGpus 8 minBytes ...``, one ``#  Rank  0 Group  0 Pid ... device  0 [...] NAME``
    line per rank, then the header ``#  size  count  type  redop  root  time  algbw  busbw  #wrong``
    followed by the same four columns again for in-place (older versions have no ``root`` column
    and call the last one ``error``). Data rows are not comments. The first ``time`` column is the
    out-of-place time in us; bandwidths are decimal GB/s.
nccl-tests, JSON (``-J FILE``; ``src/util.cu``)
    One object: ``args`` (argv, whose first entry names the binary), ``config`` (``nthreads``,
    ``ngpus`` and ``devices``, one entry per process), ``results`` (each with ``size``, ``type`` and
    ``out_of_place``/``in_place`` objects holding ``time``, ``alg_bw``, ``bus_bw``).
nccom-test, text (aws-neuron/aws-neuron-sdk ``tools/neuron-sys-tools/nccom-test.rst``)
    A table ``size(B)  count(elems)  type  time(us)  algbw(GB/s)  busbw(GB/s)`` (newer versions:
    ``time:avg(us)``, optional ``time:pNN(us)``, ``total_input_size(B)``, ``algorithm`` columns),
    then ``Avg bus bandwidth: ...``. The echoed command (``nccom-test -r 32 ... allg``) gives the
    ranks and the op.
nccom-test, JSON (``--report-to-json-file``)
    ``{"results": [{"size(B)": ..., "type": ..., "time:avg(us)": ..., "algbw(GB/s)": ...,
    "busbw(GB/s)": ...}, ...]}``.

Units
-----
nccom-test printed GiB/s (2**30 B/s) until 2024 and decimal GB/s since, under the same column
title. Each row's printed algbw (or busbw divided by the busbw factor) is compared with size / time
in both units (3 % plus the rounding of the printed digits); every row that matches exactly one
unit votes, and all votes must agree. Rows too small to tell (printed 0.00 or 0.01) do not vote.
A file where no row votes takes the tool's convention (nccl-tests and JSON: GB/s; nccom-test text:
GiB/s under ``time(us)``, GB/s under ``time:avg(us)``). The rows' bandwidths are always recomputed
from size and time in decimal GB/s, never copied.

Own convention
--------------
A comment ``# trnsim: op=allreduce ranks=32`` before the data gives what the header lacks (in JSON,
a top-level ``"trnsim": {"op": ..., "ranks": ..., "source": ..., "note": ...}`` object), and
``# source: ...`` names where the figures come from. When the op or rank count is given in several
places (argument, comment, the tool's own lines), they must agree.
"""

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from trnsim.errors import ConfigError
from trnsim.yamlio import read_text

OPS = ("allreduce", "allgather", "reducescatter", "alltoall")

# names the tools and users write for the four ops, after lower-casing and dropping _ and -
_OP_NAMES = {
    "allreduce": "allreduce",
    "allr": "allreduce",
    "allgather": "allgather",
    "allg": "allgather",
    "reducescatter": "reducescatter",
    "redsct": "reducescatter",
    "alltoall": "alltoall",
}
# nccom-test's op arguments, including those this reader does not support (refused by name)
_NCCOM_OPS = {"all_reduce", "allr", "all_gather", "allg", "reduce_scatter", "redsct", "alltoall"}
_NCCOM_OTHER_OPS = {"sendrecv", "permute", "alltoallv"}

_UNITS = {"GB/s": 1e9, "GiB/s": float(1 << 30)}
_MAX_SIZE = 1 << 50  # 1 PiB: far beyond any buffer
_MAX_RANKS = 1 << 20
_TOLERANCE = 0.03

_NCCL_START = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_NCCL_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+\d+")
# an nccl-tests binary in an echoed command line: ./build/all_reduce_perf, alltoall_perf_mpi
_NCCL_BINARY = re.compile(
    r"(?:^|[\s/\"'=])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*?)_perf(?:_mpi)?(?=$|[\s\"'])"
)
_WHOLE = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class MeasuredRow:
    """One measured size of one collective.

    Attributes
    ----------
    op : str
        ``"allreduce"``, ``"allgather"``, ``"reducescatter"`` or ``"alltoall"``.
    size_bytes : int
        The tools' convention: all-reduce the buffer size; all-gather and reduce-scatter the full
        gathered buffer; all-to-all the bytes each rank sends in all.
    time_us : float
        The time as the tool reports it (nccl-tests: out-of-place; nccom-test: the average, or the
        first time column when there is no average).
    algbw_gbps : float
        ``size_bytes / time`` in decimal GB/s (1e9 B/s), recomputed, never copied from the file.
    busbw_gbps : float
        ``algbw_gbps`` times the busbw factor: all-reduce 2(r-1)/r, the others (r-1)/r.
    line : int
        The 1-based line of the row in a text file; in a JSON file, the index of the entry in
        ``results``.
    algorithm : str or None
        The algorithm column when the tool printed one (nccom-test ``--show-algorithm``).
    """

    op: str
    size_bytes: int
    time_us: float
    algbw_gbps: float
    busbw_gbps: float
    line: int
    algorithm: str | None = None


@dataclass(frozen=True)
class Measurement:
    """One measured run read from a file.

    Attributes
    ----------
    path : str
        The file (or the name given to :func:`parse_measurement`).
    tool : str
        ``"nccl-tests"`` or ``"nccom-test"``.
    format : str
        ``"text"`` or ``"json"``.
    ranks : int
        The number of ranks of the collective (nccom-test: NeuronCores, not chips).
    printed_units : str
        ``"GB/s"`` or ``"GiB/s"``: what the file's bandwidth columns turned out to be.
    dtype : str or None
        The data type column (``float``, ``fp32``, ...), when present.
    rows : list of MeasuredRow
        The rows in file order.
    source : str
        The text of a ``# source: ...`` comment (JSON: ``trnsim.source``), else ``""``.
    """

    path: str
    tool: str
    format: str
    ranks: int
    printed_units: str
    dtype: str | None
    rows: list[MeasuredRow]
    source: str

    @property
    def op(self) -> str:
        """The collective every row measures."""
        return self.rows[0].op


def read_measurement(
    path: str | Path, op: str | None = None, names: dict[str, str] | None = None
) -> Measurement:
    """Read a file of nccl-tests or nccom-test output (text or JSON).

    Parameters
    ----------
    path : str or Path
        The file. Its rank count must be in the file, and its op unless ``op`` gives it (see the
        module documentation).
    op : str, optional
        The op, for a file that does not state it; refused if the file states another.
    names : dict, optional
        How the caller takes each value (``{"op": "--op", "ranks": ""}``), for the messages; ``""``
        says it takes none. By default, this function's keywords (``op=``).

    Returns
    -------
    Measurement

    Raises
    ------
    ConfigError
        A one-line message ``"{path}:{line}: {what was expected}"`` (file-level problems such as a
        missing file name the path only).
    """
    path = Path(path)
    return parse_measurement(read_text(path, "measurement file"), str(path), op=op, names=names)


def parse_measurement(
    text: str,
    path: str = "<text>",
    ranks: int | None = None,
    op: str | None = None,
    names: dict[str, str] | None = None,
) -> Measurement:
    """Parse nccl-tests or nccom-test output given as a string.

    Parameters
    ----------
    text : str
        The output, text or JSON (told apart by content).
    path : str
        The name used in messages and in :attr:`Measurement.path`.
    ranks : int, optional
        The rank count, for output that does not state it. If the output states it too, both must
        agree.
    op : str, optional
        The op (``allreduce``, ``all_gather``, ``allg``, ...), for output that does not state it.
        If the output states it too, both must agree.
    names : dict, optional
        How the caller takes ``op`` and ``ranks``, for the messages (see :func:`read_measurement`).

    Returns
    -------
    Measurement

    Raises
    ------
    ConfigError
        With a one-line message ``"{path}:{line}: {what was expected}"``; JSON entries are named
        ``"{path}:0: results[i]: ..."``.
    """
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise ConfigError(f"{path}:1: the file is empty; expected nccl-tests or nccom-test output")
    parsed = _parse_json(text, path) if text.lstrip()[:1] in ("{", "[") else _parse_text(text, path)

    names = {"op": "op=", "ranks": "ranks=", **(names or {})}
    op_name = _resolve_op(op, parsed, path, names["op"])
    rank_count = _resolve_ranks(ranks, parsed, path, names["ranks"])
    factor = _busbw_factor(op_name, rank_count)
    units = _decide_units(parsed, factor)
    _check_busbw(parsed, units, factor, op_name, rank_count)
    dtype = _common_dtype(parsed)

    rows = []
    for raw in parsed.raws:
        algbw = raw.size / raw.time / 1e3  # B/us -> GB/s
        if not math.isfinite(algbw):
            raise ConfigError(f"{raw.where}: time {raw.time!r} us is too small to give a bandwidth")
        rows.append(MeasuredRow(op_name, raw.size, raw.time, algbw, algbw * factor, raw.line, raw.algorithm))
    return Measurement(
        path=path,
        tool=parsed.tool,
        format=parsed.format,
        ranks=rank_count,
        printed_units=units,
        dtype=dtype,
        rows=rows,
        source=parsed.source,
    )


# ----------------------------------------------------------------------------------------------
# what a parser hands back


@dataclass
class _Raw:
    """A row as printed, with the rounding of its printed digits."""

    where: str  # "path:line" or "path:0: results[i]", the start of a message about this row
    line: int
    size: int
    time: float
    time_res: float  # half a unit of the last printed digit of the time (0 for JSON)
    algbw: float | None
    algbw_res: float
    busbw: float | None
    busbw_res: float
    dtype: str | None
    algorithm: str | None


@dataclass
class _Claim:
    """A value for the op or rank count, with where it was found."""

    value: object
    line: int
    origin: str


@dataclass
class _Parsed:
    tool: str
    format: str
    raws: list[_Raw]
    source: str
    ops: list[_Claim]
    ranks: list[_Claim]
    default_units: str
    anchor: int  # the line a "not stated" message points at (the header; 0 for JSON)


def _fail(where: str, what: str) -> ConfigError:
    return ConfigError(f"{where}: {what}")


def _quote(text: str) -> str:
    """``repr(text)``, shortened when long: a message stays one readable line."""
    if len(text) <= 40:
        return repr(text)
    return f"{text[:16]!r}...{text[-8:]!r} ({len(text):,} characters)"


def _check_rows(count: int, where: str) -> None:
    """Refuse a run of more rows than one run may have, as soon as the count passes the limit."""
    from trnsim import limits

    limits.SIZES.check(count, f"{where}: the run has at least")


# ----------------------------------------------------------------------------------------------
# text


def _parse_text(text: str, path: str) -> _Parsed:
    tool = None
    columns: dict[str, int] = {}
    header_line = 0
    time_name = ""
    raws: list[_Raw] = []
    source = ""
    ops: list[_Claim] = []
    rank_claims: list[_Claim] = []
    rank_ids: set[int] = set()
    rank_line = 0

    for number, raw_line in enumerate(text.splitlines(), 1):
        line = raw_line.strip()
        if not line:
            continue
        where = f"{path}:{number}"
        if line.startswith("#"):
            body = line[1:].strip()
            lowered = body.lower()
            if lowered.startswith("source:"):
                source = source or body[len("source:") :].strip()
            elif lowered.startswith("trnsim:"):
                if raws:
                    raise _fail(where, "a '# trnsim:' line must come before the data rows")
                _read_trnsim_comment(body[len("trnsim:") :], where, number, ops, rank_claims)
            elif match := _NCCL_START.match(line):
                ops.append(_op_claim(match.group(1), number, "'Collective test starting' line", where))
            elif match := _NCCL_RANK.match(line):
                if len(match.group(1)) > 8:
                    raise _fail(where, f"rank {_quote(match.group(1))} is not a rank number")
                rank_ids.add(int(match.group(1)))
                rank_line = rank_line or number
            else:
                tokens = body.split()
                if tokens and tokens[0] == "size" and "count" in tokens and "type" in tokens:
                    if tool is not None:
                        raise _fail(
                            where,
                            f"a second table header (the first is at line {header_line}); one run per file",
                        )
                    tool, header_line = "nccl-tests", number
                    columns, time_name = _nccl_columns(tokens, where)
            continue

        tokens = line.split()
        if tokens[0].lower() == "size(b)":
            if tool is not None:
                raise _fail(
                    where, f"a second table header (the first is at line {header_line}); one run per file"
                )
            tool, header_line = "nccom-test", number
            columns, time_name = _nccom_columns(tokens, where)
        elif tool is None:
            _read_command(tokens, line, where, number, ops, rank_claims)
        elif tokens[0][0] in "0123456789+-.":
            raws.append(_text_row(tokens, columns, time_name, where, number))
            _check_rows(len(raws), where)  # stop here, not after parsing a million rows
        # anything else after the header (``Avg bus bandwidth: ...``, MPI chatter) is not data

    if tool is None:
        raise ConfigError(
            f"{path}:1: no table header found; expected nccl-tests output (a '#  size  count  type ...' "
            "line) or nccom-test output (a 'size(B)  count(elems)  type ...' line)"
        )
    if not raws:
        raise _fail(f"{path}:{header_line}", "no data rows after this table header")
    if rank_ids:
        rank_claims.append(_Claim(len(rank_ids), rank_line, f"{len(rank_ids)} '#  Rank' device lines"))
    # no row could tell the units: nccl-tests prints GB/s; nccom-test printed GiB/s under time(us)
    default = "GiB/s" if tool == "nccom-test" and time_name == "time(us)" else "GB/s"
    return _Parsed(tool, "text", raws, source, ops, rank_claims, default, header_line)


def _read_trnsim_comment(body: str, where: str, number: int, ops: list, ranks: list) -> None:
    for item in body.split():
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise _fail(
                where, f"'# trnsim:' expects key=value items (op=..., ranks=...), found {_quote(item)}"
            )
        if key == "op":
            ops.append(_op_claim(value, number, "'# trnsim:' line", where))
        elif key == "ranks":
            ranks.append(_Claim(_rank_count(value, where), number, "'# trnsim:' line"))
        else:
            raise _fail(where, f"'# trnsim:' has an unknown key {_quote(key)}; expected op= or ranks=")


def _read_command(tokens: list[str], line: str, where: str, number: int, ops: list, ranks: list) -> None:
    """Take the op and rank count from an echoed nccom-test or nccl-tests command line."""
    words = [token.strip("\"'`") for token in tokens]
    for start, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == "nccom-test":
            _read_nccom_args(words[start + 1 :], where, number, ops, ranks)
            return
    if match := _NCCL_BINARY.search(line):
        ops.append(_op_claim(match.group(1), number, "command line", where))


def _read_nccom_args(words: list[str], where: str, number: int, ops: list, ranks: list) -> None:
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-r", "--nworkers") and index + 1 < len(words):
            ranks.append(_Claim(_rank_count(words[index + 1], where), number, "nccom-test -r"))
            index += 1
        elif word.startswith("--nworkers="):
            ranks.append(_Claim(_rank_count(word.partition("=")[2], where), number, "nccom-test -r"))
        elif word in _NCCOM_OPS or word in _NCCOM_OTHER_OPS:
            ops.append(_op_claim(word, number, "nccom-test command line", where))
        index += 1


def _nccl_columns(tokens: list[str], where: str) -> tuple[dict[str, int], str]:
    columns: dict[str, int] = {}
    time_name = ""
    for index, token in enumerate(tokens):
        if token in ("size", "type", "algbw", "busbw") and token not in columns:
            columns[token] = index
        elif token in ("time", "cputime") and "time" not in columns:
            columns["time"], time_name = index, token
    return _require_columns(columns, where, "nccl-tests"), time_name


def _nccom_columns(tokens: list[str], where: str) -> tuple[dict[str, int], str]:
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
    return _require_columns(columns, where, "nccom-test"), time_name


def _require_columns(columns: dict[str, int], where: str, tool: str) -> dict[str, int]:
    if "time" not in columns:
        raise _fail(where, f"the {tool} header has no time column")
    if "algbw" not in columns and "busbw" not in columns:
        raise _fail(where, f"the {tool} header has neither an algbw nor a busbw column")
    return columns


def _text_row(tokens: list[str], columns: dict[str, int], time_name: str, where: str, number: int) -> _Raw:
    needed = max(columns.values()) + 1
    if len(tokens) < needed:
        names = ", ".join(name for name, _ in sorted(columns.items(), key=lambda item: item[1]))
        raise _fail(where, f"expected at least {needed} columns (with {names}), found {len(tokens)}")
    size = _size(tokens[columns.get("size", 0)], where)
    time_text = tokens[columns["time"]]
    time = _number(time_text, where, time_name or "time")
    if time <= 0:
        raise _fail(where, f"{time_name or 'time'} {time_text}: expected a time > 0 us")
    algbw = busbw = None
    algbw_res = busbw_res = 0.0
    if "algbw" in columns:
        algbw_text = tokens[columns["algbw"]]
        algbw, algbw_res = _bandwidth(algbw_text, where, "algbw"), _half_unit(algbw_text)
    if "busbw" in columns:
        busbw_text = tokens[columns["busbw"]]
        busbw, busbw_res = _bandwidth(busbw_text, where, "busbw"), _half_unit(busbw_text)
    dtype = tokens[columns["type"]] if "type" in columns else None
    algorithm = tokens[columns["algorithm"]] if "algorithm" in columns else None
    return _Raw(
        where, number, size, time, _half_unit(time_text), algbw, algbw_res, busbw, busbw_res, dtype, algorithm
    )


def _size(text: str, where: str) -> int:
    if not _WHOLE.fullmatch(text):
        if text.startswith("-") and _WHOLE.fullmatch(text[1:]):
            raise _fail(where, f"size {text} is negative; expected a whole number of bytes > 0")
        raise _fail(where, f"size {_quote(text)} is not a whole number of bytes")
    if len(text) > 20 or int(text) > _MAX_SIZE:
        shown = text if len(text) <= 40 else f"of {len(text):,} digits"
        raise _fail(where, f"size {shown} is larger than {_MAX_SIZE:,} bytes")
    if int(text) == 0:
        raise _fail(where, "size 0: expected a size > 0 bytes")
    return int(text)


def _number(text: str, where: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _fail(where, f"{what} {_quote(text)} is not a number") from None
    if not math.isfinite(value):
        raise _fail(where, f"{what} {_quote(text)} is not a finite number")
    return value


def _bandwidth(text: str, where: str, what: str) -> float:
    value = _number(text, where, what)
    if value < 0:
        raise _fail(where, f"{what} {text} is negative")
    return value


def _half_unit(text: str) -> float:
    """Half a unit of the last printed digit: the rounding a printed number carries."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        shift = int(exponent) if exponent else 0
    except ValueError:
        shift = 0
    return 0.5 * 10.0 ** (shift - decimals)


# ----------------------------------------------------------------------------------------------
# JSON


class _Refused(ValueError):
    pass


def _refuse_constant(name: str):
    raise _Refused(f"{name} is not a number this reader accepts")


def _parse_int(text: str) -> int:
    # Python refuses int() of more than 4,300 digits with a ValueError of its own
    if len(text.lstrip("-")) > 40:
        raise _Refused(f"a number of {len(text.lstrip('-')):,} digits")
    return int(text)


def _parse_json(text: str, path: str) -> _Parsed:
    try:
        document = json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise _fail(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except _Refused as exc:
        long = re.search(r"[0-9]{41,}", text)
        line = text.count("\n", 0, long.start()) + 1 if long and "digits" in str(exc) else 0
        raise _fail(f"{path}:{line}", f"JSON: {exc}") from None
    except RecursionError:
        raise _fail(f"{path}:1", "JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise _fail(f"{path}:1", "expected a JSON object with a 'results' list")
    results = document.get("results")
    if not isinstance(results, list):
        raise _fail(
            f"{path}:0", "expected a 'results' list (nccl-tests -J or nccom-test --report-to-json-file)"
        )
    if not results:
        raise _fail(f"{path}:0", "'results' is empty: no data rows")
    _check_rows(len(results), f"{path}:0")
    ops: list[_Claim] = []
    ranks: list[_Claim] = []
    source = _read_trnsim_object(document.get("trnsim"), path, ops, ranks)
    first = results[0]
    if isinstance(first, dict) and ("out_of_place" in first or "size" in first):
        tool = "nccl-tests"
        raws = [_nccl_entry(entry, f"{path}:0: results[{i}]", i) for i, entry in enumerate(results)]
        _nccl_json_claims(document, path, ops, ranks)
    elif isinstance(first, dict) and "size(B)" in first:
        tool = "nccom-test"
        raws = [_nccom_entry(entry, f"{path}:0: results[{i}]", i) for i, entry in enumerate(results)]
    else:
        raise _fail(
            f"{path}:0: results[0]",
            "expected an nccl-tests entry (size, out_of_place) or an nccom-test entry (size(B), time:avg(us))",
        )
    return _Parsed(tool, "json", raws, source, ops, ranks, "GB/s", 0)


def _read_trnsim_object(meta, path: str, ops: list, ranks: list) -> str:
    if meta is None:
        return ""
    where = f"{path}:0: trnsim"
    if not isinstance(meta, dict):
        raise _fail(where, "expected an object with op, ranks, source, note")
    for key, value in meta.items():
        if key == "op":
            if not isinstance(value, str):
                raise _fail(where, f"op must be a string, found {value!r}")
            ops.append(_op_claim(value, 0, "'trnsim' object", where))
        elif key == "ranks":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _fail(where, f"ranks must be a whole number, found {value!r}")
            ranks.append(_Claim(_rank_count(str(value), where), 0, "'trnsim' object"))
        elif key in ("source", "note"):
            if not isinstance(value, str):
                raise _fail(where, f"{key} must be a string")
        else:
            raise _fail(where, f"unknown key {key!r}; expected op, ranks, source, note")
    return meta.get("source", "")


def _nccl_json_claims(document: dict, path: str, ops: list, ranks: list) -> None:
    args = document.get("args")
    if isinstance(args, list) and args and isinstance(args[0], str):
        match = _NCCL_BINARY.search(args[0])
        if match:
            ops.append(_op_claim(match.group(1), 0, "args[0]", f"{path}:0: args[0]"))
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
            ranks.append(_Claim(count, 0, "config: devices x nthreads x ngpus"))


def _json_number(entry: dict, key: str, where: str, required: bool) -> float | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise _fail(where, f"no {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, f"{key} {value!r} is not a number")
    if not math.isfinite(value):
        raise _fail(where, f"{key} {value!r} is not a finite number")
    return float(value)


def _json_size(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"size {value!r} is not a whole number of bytes")
    return _size(str(value), where)


def _nccl_entry(entry, where: str, index: int) -> _Raw:
    if not isinstance(entry, dict):
        raise _fail(where, "expected an object")
    size = _json_size(entry.get("size"), where)
    result = entry.get("out_of_place")
    if not isinstance(result, dict):
        raise _fail(where, "no out_of_place result (an in-place-only run is not read)")
    key = "time" if "time" in result else "cpu_time"
    time = _json_number(result, key, where, required=True)
    if time <= 0:
        raise _fail(where, f"{key} {time!r}: expected a time > 0 us")
    algbw = _json_number(result, "alg_bw", where, required=False)
    busbw = _json_number(result, "bus_bw", where, required=False)
    if algbw is None and busbw is None:
        raise _fail(where, "neither alg_bw nor bus_bw")
    for name, value in (("alg_bw", algbw), ("bus_bw", busbw)):
        if value is not None and value < 0:
            raise _fail(where, f"{name} {value!r} is negative")
    dtype = entry.get("type") if isinstance(entry.get("type"), str) else None
    return _Raw(where, index, size, time, 0.0, algbw, 0.0, busbw, 0.0, dtype, None)


def _nccom_entry(entry, where: str, index: int) -> _Raw:
    if not isinstance(entry, dict):
        raise _fail(where, "expected an object")
    size = _json_size(entry.get("size(B)"), where)
    times = [key for key in entry if isinstance(key, str) and key.lower().startswith("time")]
    key = next((k for k in ("time:avg(us)", "time(us)") if k in entry), times[0] if times else None)
    if key is None:
        raise _fail(where, "no time (expected 'time:avg(us)')")
    time = _json_number(entry, key, where, required=True)
    if time <= 0:
        raise _fail(where, f"{key} {time!r}: expected a time > 0 us")
    algbw = _json_number(entry, "algbw(GB/s)", where, required=False)
    busbw = _json_number(entry, "busbw(GB/s)", where, required=False)
    if algbw is None and busbw is None:
        raise _fail(where, "neither 'algbw(GB/s)' nor 'busbw(GB/s)'")
    for name, value in (("algbw", algbw), ("busbw", busbw)):
        if value is not None and value < 0:
            raise _fail(where, f"{name} {value!r} is negative")
    dtype = entry.get("type") if isinstance(entry.get("type"), str) else None
    algorithm = entry.get("algorithm") if isinstance(entry.get("algorithm"), str) else None
    return _Raw(where, index, size, time, 0.0, algbw, 0.0, busbw, 0.0, dtype, algorithm)


# ----------------------------------------------------------------------------------------------
# op, ranks, units


def _op_claim(name: str, line: int, origin: str, where: str) -> _Claim:
    canonical = _canonical_op(name)
    if canonical is None:
        raise _fail(where, f"op {_quote(name)} is not supported; expected one of {', '.join(OPS)}")
    return _Claim(canonical, line, origin)


def _canonical_op(name: str) -> str | None:
    key = name.strip().lower()
    for suffix in ("_perf_mpi", "_perf"):
        key = key.removesuffix(suffix)
    return _OP_NAMES.get(key.replace("_", "").replace("-", ""))


def _rank_count(text: str, where: str) -> int:
    if not _WHOLE.fullmatch(text) or len(text) > 8:
        raise _fail(where, f"ranks {_quote(text)} is not a whole number")
    value = int(text)
    if not 2 <= value <= _MAX_RANKS:
        raise _fail(where, f"ranks {value}: a collective needs 2 to {_MAX_RANKS:,} ranks")
    return value


def _agree(kind: str, given, claims: list[_Claim], parsed: _Parsed, path: str, name: str):
    """The one value of ``kind`` the file's claims and the caller's ``given`` agree on; ``name`` is
    how the caller takes it (``op=``, ``--op``; ``""``: not at all), for the messages."""
    given_as = f"{name}{given}" if name.endswith("=") else f"{name} {given}"
    if given is not None:
        for claim in claims:
            if claim.value != given:
                raise _fail(
                    f"{path}:{claim.line}",
                    f"{kind}={claim.value} here ({claim.origin}) but {given_as} was given",
                )
        return given
    if not claims:
        raise _fail(
            f"{path}:{parsed.anchor}",
            f"the output does not state the {kind}; add a line '# trnsim: {kind}=...' before the data"
            + (f" or pass {name}{'' if name.endswith('=') else ' ' + kind.upper()}" if name else ""),
        )
    first = claims[0]
    for claim in claims[1:]:
        if claim.value != first.value:
            raise _fail(
                f"{path}:{claim.line}",
                f"{kind}={claim.value} here ({claim.origin}) but {kind}={first.value} at line {first.line} "
                f"({first.origin})",
            )
    return first.value


def _resolve_op(op: str | None, parsed: _Parsed, path: str, name: str) -> str:
    given = None
    if op is not None:
        given = _canonical_op(op) if isinstance(op, str) else None
        if given is None:
            # an option's value is no place in the file: the message names the option alone
            where, what = (f"{path}:0", f"op {op!r}") if name.endswith("=") else (f"{name} {op!r}", "the op")
            raise _fail(where, f"{what} is not supported; expected one of {', '.join(OPS)}")
    return _agree("op", given, parsed.ops, parsed, path, name)


def _resolve_ranks(ranks: int | None, parsed: _Parsed, path: str, name: str) -> int:
    if ranks is not None:
        if isinstance(ranks, bool) or not isinstance(ranks, int):
            raise _fail(f"{path}:0", f"ranks {ranks!r} is not a whole number")
        ranks = _rank_count(str(ranks), f"{path}:0")
    return _agree("ranks", ranks, parsed.ranks, parsed, path, name)


def _busbw_factor(op: str, ranks: int) -> float:
    if op == "allreduce":
        return 2 * (ranks - 1) / ranks
    return (ranks - 1) / ranks


def _close(expected: float, printed: float, printed_res: float, time_rel: float) -> bool:
    return abs(expected - printed) <= _TOLERANCE * expected + printed_res + expected * time_rel


def _decide_units(parsed: _Parsed, factor: float) -> str:
    """The unit every row's printed bandwidth agrees with (see the module documentation)."""
    first: tuple[str, _Raw] | None = None
    for raw in parsed.raws:
        if raw.algbw is not None:
            printed, res, scale, name = raw.algbw, raw.algbw_res, 1.0, "algbw"
        else:
            printed, res, scale, name = raw.busbw, raw.busbw_res, factor, "busbw"
        rate = raw.size / raw.time * 1e6 * scale  # B/s, times the busbw factor for busbw
        time_rel = raw.time_res / raw.time
        matches = [unit for unit, per in _UNITS.items() if _close(rate / per, printed, res, time_rel)]
        if not matches:
            raise _fail(
                raw.where,
                f"{name} {printed:g} matches neither size/time in GB/s ({rate / 1e9:.4g}) nor in GiB/s "
                f"({rate / (1 << 30):.4g})",
            )
        if len(matches) > 1:
            continue  # too small to tell
        if first is None:
            first = (matches[0], raw)
        elif matches[0] != first[0]:
            other = first[1]
            at = f"line {other.line}" if parsed.format == "text" else f"results[{other.line}]"
            raise _fail(
                raw.where,
                f"bandwidth in {matches[0]} here but in {first[0]} at {at}; a file must use one unit throughout",
            )
    return first[0] if first else parsed.default_units


def _check_busbw(parsed: _Parsed, units: str, factor: float, op: str, ranks: int) -> None:
    per = _UNITS[units]
    for raw in parsed.raws:
        if raw.busbw is None:
            continue
        expected = raw.size / raw.time * 1e6 * factor / per
        if not _close(expected, raw.busbw, raw.busbw_res, raw.time_res / raw.time):
            raise _fail(
                raw.where,
                f"busbw {raw.busbw:g} {units} does not match size/time x {factor:.4g} = {expected:.4g} "
                f"for {op} on {ranks} ranks; is the rank count right?",
            )


def _common_dtype(parsed: _Parsed) -> str | None:
    dtype = None
    first_line = 0
    for raw in parsed.raws:
        if raw.dtype is None:
            continue
        if dtype is None:
            dtype, first_line = raw.dtype, raw.line
        elif raw.dtype != dtype:
            raise _fail(
                raw.where, f"type {raw.dtype} here but {dtype} at line {first_line}; one data type per file"
            )
    return dtype
