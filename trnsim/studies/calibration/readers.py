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

import math
from pathlib import Path

from trnsim.errors import ConfigError
from trnsim.studies.calibration.logs.agree import resolve_nodes, resolve_op, resolve_ranks
from trnsim.studies.calibration.logs.bandwidth import busbw_factor, check_busbw, decide_units
from trnsim.studies.calibration.logs.claims import OPS
from trnsim.studies.calibration.logs.json_reader import parse_json
from trnsim.studies.calibration.logs.parsed import common_dtype
from trnsim.studies.calibration.logs.text import parse_text
from trnsim.studies.calibration.measurement import MeasuredRow, Measurement
from trnsim.yamlio import read_text

__all__ = ["OPS", "MeasuredRow", "Measurement", "parse_measurement", "read_measurement"]


def read_measurement(
    path: str | Path,
    op: str | None = None,
    names: dict[str, str] | None = None,
    ranks: int | None = None,
    nodes: int | None = None,
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
        How the caller takes each value (``{"op": "{op}", "ranks": ""}``), for the messages; ``""``
        says it takes none. By default, this function's keywords (``op=``).
    ranks, nodes : int, optional
        The rank count and the nodes (hosts, instances) the run spanned, for a file that does not
        state them; refused if the file states others.

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
    text = read_text(path, "measurement file")
    return parse_measurement(text, str(path), ranks=ranks, op=op, names=names, nodes=nodes)


def parse_measurement(
    text: str,
    path: str = "<text>",
    ranks: int | None = None,
    op: str | None = None,
    names: dict[str, str] | None = None,
    nodes: int | None = None,
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
        How the caller takes ``op``, ``ranks`` and ``nodes``, for the messages (see
        :func:`read_measurement`).
    nodes : int, optional
        The nodes the run spanned, for output that does not state them (None: as the output says,
        else unknown).

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
    parsed = parse_json(text, path) if text.lstrip()[:1] in ("{", "[") else parse_text(text, path)

    names = {"op": "op=", "ranks": "ranks=", "nodes": "nodes=", **(names or {})}
    op_name = resolve_op(op, parsed, path, names["op"])
    rank_count = resolve_ranks(ranks, parsed, path, names["ranks"])
    node_count = resolve_nodes(nodes, parsed, path, names["nodes"])
    factor = busbw_factor(op_name, rank_count)
    units = decide_units(parsed, factor)
    check_busbw(parsed, units, factor, op_name, rank_count)
    dtype = common_dtype(parsed)

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
        nodes=node_count,
    )
