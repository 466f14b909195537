"""trnsim's own schedule document (``trnsim-schedule/2``), read back as its chunk-level program.

The document is written by :mod:`trnsim.outputs.schedule_export` (it needs the routed plan); its
``program`` holds the algorithm's :class:`~trnsim.collectives.program.Program` as
:func:`program_json` writes it: ``op``, ``p``, ``rounds``, ``parts``, ``block_sizes`` (null: ``1/p``
each), ``algorithm``, ``pipelined``, a broadcast's or reduce's ``root`` and ``transfers``, each
``[round, src, dst, [[block, part], ...], reduce, channel]`` (``src`` or ``dst`` -1: the switches that
reduce in the network). Version 1 files
had no program and incomplete routes: they are refused with what to do.
"""

import json

from trnsim.collectives.formats import Imported, ScheduleFormat, register
from trnsim.collectives.program import Chunk, Program, Transfer
from trnsim.errors import UsageError

NAME = "trnsim-schedule/2"
MAX_BYTES = 256 << 20


def program_json(program: Program) -> dict:
    """The program as JSON-ready data (see the module docstring)."""
    return {
        "op": program.op,
        "p": program.p,
        "rounds": program.rounds,
        "parts": list(program.parts),
        "block_sizes": None if program.block_sizes is None else list(program.block_sizes),
        "algorithm": program.algorithm,
        "pipelined": program.pipelined,
        "transfers": [
            [t.round, t.src, t.dst, [list(c) for c in t.chunks], t.reduce, t.channel]
            for t in program.transfers
        ],
        **({"root": program.root} if program.op in ("broadcast", "reduce") else {}),
    }


def _program(data: dict, where: str) -> Program:
    try:
        transfers = tuple(
            Transfer(
                int(r), int(s), int(d), tuple(Chunk(int(b), int(k)) for b, k in chunks), bool(red), int(ch)
            )
            for r, s, d, chunks, red, ch in data["transfers"]
        )
        blocks = data["block_sizes"]
        return Program(
            str(data["op"]),
            int(data["p"]),
            int(data["rounds"]),
            transfers,
            tuple(float(x) for x in data["parts"]),
            None if blocks is None else tuple(float(x) for x in blocks),
            str(data["algorithm"]),
            bool(data["pipelined"]),
            root=int(data.get("root", 0)),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(f"{where}: program: expected trnsim's program fields ({error!r})") from None


def read(data: bytes, where: str) -> Imported:
    if len(data) > MAX_BYTES:
        raise UsageError(f"{where}: more than {MAX_BYTES:,} bytes")
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"{where}: not JSON ({error})") from None
    fmt = document.get("format") if isinstance(document, dict) else None
    if fmt == "trnsim-schedule/1":
        raise UsageError(
            f"{where}: trnsim-schedule/1 has no program and incomplete routes; export the schedule "
            "again (trnsim now writes trnsim-schedule/2)"
        )
    if fmt != NAME:
        raise UsageError(f"{where}: format: expected {NAME}, got {fmt!r}")
    if not isinstance(document.get("program"), dict):
        raise UsageError(f"{where}: program: this schedule was exported without a chunk-level program")
    program = _program(document["program"], where)
    notes = [f"read from {document.get('sku')}'s {program.algorithm} {program.op} schedule"]
    return Imported(program, NAME, list(document.get("ranks") or []) or None, notes)


def sniff(data: bytes) -> bool:
    return b'"format": "trnsim-schedule/' in data[:512] or b'"format":"trnsim-schedule/' in data[:512]


register(
    ScheduleFormat(
        NAME,
        (".json",),
        "trnsim's routed schedule with its program (collective's schedule export)",
        None,
        read,
        sniff,
    )
)
