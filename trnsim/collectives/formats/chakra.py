"""Chakra execution traces for ASTRA-sim: one file per rank, the program's sends and receives.

The schema is mlcommons/chakra ``schema/protobuf/et_def.proto`` (read at commit
``6dc63e147b9d115286626cc122459e44d9d08401``): a file is a ``GlobalMetadata`` message, then ``Node``
messages, each preceded by its length as a varint (chakra's ``protolib.encodeMessage``). trnsim
writes the protobuf wire format itself (varints and length-delimited fields, below) rather than
depend on protobuf. The fields used:

* ``Node``: ``id`` 1, ``name`` 2, ``type`` 3 (``COMP_NODE`` 4, ``COMM_SEND_NODE`` 5,
  ``COMM_RECV_NODE`` 6), ``data_deps`` 5 (packed), ``duration_micros`` 7, ``attr`` 10;
* ``AttributeProto``: ``name`` 1, ``int32_val`` 7, ``int64_val`` 9, ``int64_list`` 10,
  ``uint64_val`` 13, ``bool_val`` 27, ``string_val`` 29, ``double_list`` 4 (lists: field 1, packed);
* ``GlobalMetadata``: ``version`` 1 (``0.0.4``), ``attr`` 2.

Every transfer of the program is a ``COMM_SEND_NODE`` on its sender and a ``COMM_RECV_NODE`` on its
receiver with ASTRA-sim's attributes ``comm_src``, ``comm_dst``, ``comm_tag`` (int32: the transfer's
index in the program, unique, the same on both ends) and ``comm_size`` (int64 bytes at the export
size, rounded to whole bytes). A reducing transfer's receive is followed by a ``COMP_NODE`` that
depends on it and on the receiver's previous copy of those chunks (``duration_micros`` 0: trnsim
does not cost the arithmetic; ``tensor_size`` its bytes). A send depends (``data_deps``) on the
nodes that last delivered its chunks to the sender. Attributes prefixed ``trnsim_`` carry what
ASTRA-sim ignores and a reader needs: the round, channel and chunks (``block x parts + part``) of a
transfer, and in the metadata the op, ``p``, the parts and block sizes (and a broadcast's or
reduce's root).

Files: ASTRA-sim reads ``PREFIX.{rank}.et`` for every rank, so :func:`write_traces` returns each
rank's bytes and the caller writes ``FILE.{rank}.et``. The registry's one-file writer refuses (it has
neither the size nor a way to write several files); its reader reads every ``PREFIX.{r}.et`` beside a
``PREFIX.0.et`` it is given. In-network steps (``NETWORK``) have no Chakra node and are refused.
"""

import re
import struct
from pathlib import Path

from trnsim.collectives.formats import Imported, ScheduleFormat, register
from trnsim.collectives.program import NETWORK, Chunk, Program, Transfer
from trnsim.errors import UsageError

NAME = "chakra"
VERSION = "0.0.4"
COMP, SEND, RECV = 4, 5, 6
MAX_BYTES = 256 << 20  # one rank's trace; a program's trace is a few bytes per transfer


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 are sent as their 64-bit two's complement
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, value) -> bytes:
    """One field: an int as a varint, bytes or str length-delimited."""
    if isinstance(value, bool | int):
        return _varint(number << 3) + _varint(int(value))
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _attr(name: str, **value) -> bytes:
    ((kind, v),) = value.items()
    number = {"int32": 7, "int64": 9, "uint64": 13, "bool": 27, "string": 29}.get(kind)
    if kind == "int64_list":
        body = _field(1, b"".join(_varint(x) for x in v))
        return _field(1, name) + _field(10, body)
    if kind == "double_list":
        return _field(1, name) + _field(4, _field(1, struct.pack(f"<{len(v)}d", *v)))
    return _field(1, name) + _field(number, v)


def _node(node_id: int, name: str, kind: int, deps: list[int], attrs: list[bytes]) -> bytes:
    body = _field(1, node_id) + _field(2, name) + _field(3, kind)
    if deps:
        body += _field(5, b"".join(_varint(d) for d in deps))
    if kind == COMP:
        body += _field(7, 0)
    return body + b"".join(_field(10, a) for a in attrs)


def _frame(message: bytes) -> bytes:
    return _varint(len(message)) + message


class _Bad(ValueError):
    pass


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise _Bad("a varint runs past the end")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, int, object]]:
    """A message's fields as ``(number, wire type, value)``: varints as ints, the rest as bytes."""
    out, at = [], 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _read_varint(data, at)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, at = data[at : at + width], at + width
        elif wire == 2:
            length, at = _read_varint(data, at)
            value, at = data[at : at + length], at + length
        else:
            raise _Bad(f"wire type {wire} (field {number}) is not one trnsim reads")
        if at > len(data):
            raise _Bad(f"field {number} runs past the end")
        out.append((number, wire, value))
    return out


def _messages(data: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(data):
        length, at = _read_varint(data, at)
        if at + length > len(data):
            raise _Bad(f"message {len(out)} runs past the end of the file")
        out.append(data[at : at + length])
        at += length
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _attrs(fields) -> dict[str, object]:
    """A node's (or the metadata's) attributes by name (a value of the wrong wire type: ``_Bad``)."""
    out: dict[str, object] = {}
    for _, _, raw in fields:
        parts = _fields(raw)
        name = next((v.decode() for n, w, v in parts if n == 1 and w == 2), "")
        for number, wire, value in parts:
            if number in (7, 9, 13, 27, 29, 10, 4) and (wire == 0) != (number in (7, 9, 13, 27)):
                raise _Bad(f"attribute {name}: field {number} has wire type {wire}")
            if number in (7, 9, 13, 27):
                out[name] = bool(value) if number == 27 else _signed(value)
            elif number == 29:
                out[name] = value.decode()
            elif number == 10:  # Int64List: packed (or not) int64 values
                out[name] = _packed(_fields(value))
            elif number == 4:
                out[name] = [x for _, _, v in _fields(value) for x in struct.unpack(f"<{len(v) // 8}d", v)]
    return out


def _packed(fields) -> list[int]:
    values: list[int] = []
    for _, wire, value in fields:
        if wire == 0:
            values.append(_signed(value))
        else:
            at = 0
            while at < len(value):
                v, at = _read_varint(value, at)
                values.append(_signed(v))
    return values


def _metadata(program: Program, chip: str, size_bytes: int) -> bytes:
    attrs = [
        _attr("trnsim_op", string=program.op),
        _attr("trnsim_p", int64=program.p),
        _attr("trnsim_rounds", int64=program.rounds),
        _attr("trnsim_algorithm", string=program.algorithm),
        _attr("trnsim_pipelined", bool=program.pipelined),
        _attr("trnsim_parts", double_list=list(program.parts)),
        _attr("trnsim_size_bytes", int64=size_bytes),
        _attr("trnsim_chip", string=chip),
    ]
    if program.block_sizes is not None:
        attrs.append(_attr("trnsim_block_sizes", double_list=list(program.block_sizes)))
    if program.op in ("broadcast", "reduce"):
        attrs.append(_attr("trnsim_root", int64=program.root))
    return _field(1, VERSION) + b"".join(_field(2, a) for a in attrs)


def _comm_attrs(program: Program, tag: int, t: Transfer, size_bytes: int) -> list[bytes]:
    n = len(program.parts)
    return [
        _attr("is_cpu_op", bool=False),
        _attr("comm_src", int32=t.src),
        _attr("comm_dst", int32=t.dst),
        _attr("comm_size", int64=round(program.fraction(t) * size_bytes)),
        _attr("comm_tag", int32=tag),
        _attr("trnsim_round", int64=t.round),
        _attr("trnsim_channel", int64=t.channel),
        _attr("trnsim_reduce", bool=t.reduce),
        _attr("trnsim_chunks", int64_list=[c.block * n + c.part for c in t.chunks]),
    ]


def write_traces(program: Program, ranks: list[str], size_bytes: int) -> dict[int, bytes]:
    """Each rank's Chakra trace of ``program`` at a collective of ``size_bytes`` (the module docstring
    says what is written); the caller writes rank ``r``'s as ``PREFIX.{r}.et``."""
    if program.relays:
        raise UsageError(
            f"{program.algorithm or 'this program'} forwards through {program.relays} chips outside the "
            "group: the traces name only the collective's ranks"
        )
    if any(NETWORK in (t.src, t.dst) for t in program.transfers):
        raise UsageError(
            f"{program.algorithm or 'the program'} reduces in the network (NVLS); Chakra's traces have "
            "sends and receives between ranks only"
        )
    if not 1 <= size_bytes <= 1 << 50:
        raise UsageError(f"a Chakra trace's size must be 1 B to 1 PiB, got {size_bytes}")
    nodes: list[list[bytes]] = [[] for _ in range(program.p)]
    last: list[dict[Chunk, int]] = [{} for _ in range(program.p)]  # who last delivered a chunk here

    def add(rank: int, name: str, kind: int, deps, attrs) -> int:
        nodes[rank].append(_node(len(nodes[rank]), name, kind, sorted(set(deps)), attrs))
        return len(nodes[rank]) - 1

    by_round: list[list[int]] = [[] for _ in range(program.rounds)]
    for tag, t in enumerate(program.transfers):
        by_round[t.round].append(tag)
    for tags in by_round:
        for tag in tags:  # sends read the buffers as they were at the start of the round
            t = program.transfers[tag]
            deps = [last[t.src][c] for c in t.chunks if c in last[t.src]]
            attrs = _comm_attrs(program, tag, t, size_bytes)
            add(t.src, f"send {tag} r{t.round} {t.src}->{t.dst}", SEND, deps, attrs)
        for tag in tags:
            t = program.transfers[tag]
            attrs = _comm_attrs(program, tag, t, size_bytes)
            got = add(t.dst, f"recv {tag} r{t.round} {t.src}->{t.dst}", RECV, [], attrs)
            if t.reduce:
                before = [last[t.dst][c] for c in t.chunks if c in last[t.dst]]
                size = _attr("tensor_size", uint64=round(program.fraction(t) * size_bytes))
                got = add(t.dst, f"reduce {tag} r{t.round}", COMP, [got, *before], [size])
            for c in t.chunks:
                last[t.dst][c] = got
    return {
        rank: _frame(_metadata(program, ranks[rank], size_bytes)) + b"".join(map(_frame, nodes[rank]))
        for rank in range(program.p)
    }


def write(program: Program, ranks: list[str]) -> bytes:
    raise UsageError(
        "Chakra traces are one file per rank at a given size: trnsim writes FILE.{rank}.et for every rank "
        "(chakra.write_traces), not one file"
    )


def _parse(data: bytes, where: str) -> tuple[dict, list[tuple[int, dict]]]:
    """A trace's metadata attributes and its nodes as ``(type, attributes)``."""
    if len(data) > MAX_BYTES:
        raise UsageError(
            f"{where}: {len(data):,} bytes is more than a Chakra trace trnsim reads ({MAX_BYTES:,})"
        )
    try:
        messages = _messages(data)
        if not messages:
            raise _Bad("no GlobalMetadata")
        meta = _attrs([f for f in _fields(messages[0]) if f[0] == 2])
        nodes = []
        for message in messages[1:]:
            fields = _fields(message)
            kind = next((v for n, w, v in fields if n == 3 and w == 0), 0)
            nodes.append((kind, _attrs([f for f in fields if f[0] == 10])))
    except (_Bad, UnicodeDecodeError, struct.error) as error:
        raise UsageError(f"{where}: not a Chakra trace ({error})") from None
    return meta, nodes


def _need(attrs: dict, key: str, where: str, kind=int):
    value = attrs.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise UsageError(f"{where}: expected attribute {key} ({kind.__name__}), written by trnsim")
    return value


def _transfer(attrs: dict, n_parts: int, p: int, where: str) -> tuple[int, Transfer]:
    values = {key: _need(attrs, key, where) for key in ("comm_src", "comm_dst", "comm_tag", "trnsim_round")}
    src, dst, round_ = values["comm_src"], values["comm_dst"], values["trnsim_round"]
    chunks = _need(attrs, "trnsim_chunks", where, list)
    if not (0 <= src < p and 0 <= dst < p and round_ >= 0 and all(0 <= c < p * p * n_parts for c in chunks)):
        raise UsageError(f"{where}: transfer {values['comm_tag']}: a rank, round or chunk out of range")
    transfer = Transfer(
        round_,
        src,
        dst,
        tuple(Chunk(c // n_parts, c % n_parts) for c in chunks),
        bool(attrs.get("trnsim_reduce", False)),
        int(attrs.get("trnsim_channel", 0)),
    )
    return values["comm_tag"], transfer


def read_traces(traces: dict[int, bytes], where: str) -> Imported:
    """The program in every rank's trace (``traces[r]``: rank ``r``'s bytes): its sends give the
    transfers, each checked against a receive of the same tag, ends and size on its receiver."""
    parsed = {rank: _parse(data, f"{where} (rank {rank})") for rank, data in traces.items()}
    meta = parsed[min(parsed)][0]
    p = _need(meta, "trnsim_p", where)
    parts = tuple(_need(meta, "trnsim_parts", where, list))
    if sorted(parsed) != list(range(p)) or not parts:
        raise UsageError(f"{where}: expected one trace for each of ranks 0..{p - 1}, got {sorted(parsed)}")
    sends: dict[int, Transfer] = {}
    receives: dict[int, tuple[int, int, int]] = {}
    sizes: dict[int, int] = {}
    for rank, (_, nodes) in parsed.items():
        at = f"{where} (rank {rank})"
        for kind, attrs in nodes:
            if kind in (SEND, RECV):
                tag, transfer = _transfer(attrs, len(parts), p, at)
                end = transfer.src if kind == SEND else transfer.dst
                table = sends if kind == SEND else receives
                if end != rank or tag in table:
                    raise UsageError(f"{at}: transfer {tag} is not this rank's, or appears twice")
                table[tag] = (
                    transfer if kind == SEND else (transfer.src, transfer.dst, attrs.get("comm_size"))
                )
                sizes[tag] = attrs.get("comm_size")
    for tag, t in sends.items():
        if receives.get(tag) != (t.src, t.dst, sizes[tag]):
            raise UsageError(
                f"{where}: send {tag} ({t.src}->{t.dst}) has no matching receive on rank {t.dst}"
            )
    if len(receives) != len(sends):
        raise UsageError(f"{where}: {len(receives) - len(sends)} receive(s) with no matching send")
    transfers = tuple(sends[tag] for tag in sorted(sends))
    blocks = meta.get("trnsim_block_sizes")
    root = meta.get("trnsim_root", 0)
    if not isinstance(root, int) or not 0 <= root < p:
        raise UsageError(f"{where}: trnsim_root {root!r} is not a rank 0..{p - 1}")
    program = Program(
        _need(meta, "trnsim_op", where, str),
        p,
        max(_need(meta, "trnsim_rounds", where), 1 + max((t.round for t in transfers), default=-1)),
        transfers,
        parts,
        tuple(blocks) if isinstance(blocks, list) else None,
        str(meta.get("trnsim_algorithm", "")),
        bool(meta.get("trnsim_pipelined", False)),
        root=root,
    )
    chips = [str(parsed[r][0].get("trnsim_chip", "")) for r in range(p)]
    notes = [f"{p} Chakra traces written at {meta.get('trnsim_size_bytes')} B; chunks from trnsim_chunks"]
    return Imported(program, NAME, chips if all(chips) else None, notes)


def read(data: bytes, where: str) -> Imported:
    """A trace named ``PREFIX.{r}.et``, read with every other rank's ``PREFIX.{r}.et`` beside it."""
    match = re.fullmatch(r"(.*)\.(\d+)\.et", where)
    if match is None:
        raise UsageError(
            f"{where}: a Chakra trace holds one rank's part; name the files PREFIX.{{rank}}.et "
            "(ASTRA-sim's naming) and give any one of them"
        )
    prefix, mine = match.group(1), int(match.group(2))
    p = _need(_parse(data, where)[0], "trnsim_p", where)
    traces = {mine: data}
    for rank in range(p):
        if rank != mine:
            path = Path(f"{prefix}.{rank}.et")
            if not path.is_file():
                raise UsageError(f"{where}: rank {rank}'s trace {path} is missing (expected {p} ranks)")
            if path.stat().st_size > MAX_BYTES:
                raise UsageError(f"{path}: more than {MAX_BYTES:,} bytes, not a trace trnsim wrote")
            traces[rank] = path.read_bytes()
    return read_traces(traces, f"{prefix}.*.et")


def sniff(data: bytes) -> bool:
    """Whether ``data`` starts with a Chakra ``GlobalMetadata`` (a version string, field 1)."""
    try:
        length, at = _read_varint(data[:10], 0)
        first = _fields(data[at : at + min(length, 4096)]) if length <= len(data) - at else []
    except _Bad:
        return False
    version = next((v for n, w, v in first if n == 1 and w == 2), b"")
    return re.fullmatch(rb"\d+\.\d+\.\d+", version) is not None


register(
    ScheduleFormat(
        NAME, (".et",), "Chakra execution traces for ASTRA-sim: one file per rank", write, read, sniff
    )
)
