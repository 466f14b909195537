"""MSCCL++'s execution plan JSON (microsoft/mscclpp VERSION 0.9.0, commit 1f5f065: what
``python/mscclpp/language``'s ``CollectiveProgram.to_json`` writes and
``src/core/executor/execution_plan.cc`` loads), written from a program and read back.

The file::

    {name, collective, protocol, inplace, reuse_resources, num_threads_per_block,
     use_double_scratch_buffer, buffer_alignment, min_message_size, max_message_size,
     gpus: [{id, input_chunks, output_chunks, scratch_chunks,
             channels: [{channel_type: "memory", connected_to: [peer, ...]}],
             remote_buffers: [{rank, type, access_channel_types}], semaphores: [{init_value}],
             threadblocks: [{id, channels: [{channel_type, channel_ids}],
                             remote_buffer_refs: [{access_channel_type, remote_buffer_ids}],
                             ops: [{name, src_buff, dst_buff, channel_ids, channel_type, ...}]}]}]}

Buffers are ``i``, ``o`` and ``s`` (scratch), cut into equal chunks (``index``, ``size`` count them;
:mod:`~trnsim.collectives.formats.grid` lays the program's parts out). A rank's ``k``-th memory
channel to a peer meets the peer's ``k``-th memory channel back (the order the executor builds
their semaphores in): a ``signal`` on one side is what the other side's ``wait`` waits for.

Writing, every rank gets one threadblock per ``(channel, peer)`` it sends to or receives from, with
one memory channel to that peer. In a round, a transfer is a ``put`` from the sender's buffer into a
scratch slot of the receiver that no other transfer uses, then a ``signal``; the receiver ``wait`` s
and ``copy`` s the slot into place, or adds it in (``re``, in place). The rank's threadblocks meet at
a ``barrier`` after a round in which it received (so the next round's puts send what arrived), and
between a round's puts and its receives when a receive overwrites what a put of that round reads. The
executor runs at most 64 operations a threadblock (``MAX_OPERATION``): a longer list goes on in a
further threadblock that starts with ``sem_acquire`` of a semaphore the previous one ends with
``sem_release`` of. Programs that reduce in the network are refused: MSCCL++'s switch (NVLS) ops
address multicast memory, not the up/down transfers of a program, and are not written.

Reading: :mod:`~trnsim.collectives.formats.mscclpp_plan`.
"""

import json
from collections import defaultdict

from trnsim.collectives.formats import ScheduleFormat, register
from trnsim.collectives.formats.grid import Layout, refuse
from trnsim.collectives.program import Program
from trnsim.errors import UsageError

NAME = "mscclpp-json"
MAX_OPERATION = 64  # execution_common.hpp: operations a threadblock runs
MAX_SEMAPHORES = 16  # execution_common.hpp: MAX_DEVICE_SEMAPHORES, per gpu
MAX_MESSAGE = 2**64 - 1  # the file is valid at every size
BARRIER_ID = 0


def _runs(layout: Layout, t) -> list[tuple]:
    """``t``'s chunks as runs ``(src slot, dst slot, units)`` contiguous at both ends."""
    items = sorted(
        (layout.slot(t.src, c), layout.slot(t.dst, c), layout.n[c.part]) for c in t.chunks if layout.n[c.part]
    )
    runs: list[list] = []
    for src, dst, n in items:
        last = runs[-1] if runs else None
        if (
            last
            and last[0][0] == src[0]
            and last[0][1] + last[2] == src[1]
            and last[1][0] == dst[0]
            and last[1][1] + last[2] == dst[1]
        ):
            last[2] += n
        else:
            runs.append([src, dst, n])
    return [tuple(run) for run in runs]


def _buff(slot: tuple[str, int], size: int) -> dict:
    return {"type": slot[0], "index": slot[1], "size": size}


def _rounds(program: Program, layout: Layout) -> tuple[list, list[int]]:
    """Per round, every transfer's runs with the scratch slot each lands in; scratch units per rank."""
    runs = [[(t, _runs(layout, t)) for t in transfers] for transfers in program.by_round()]
    top = [layout.scratch_units(rank) for rank in range(program.p)]  # relay slots come first
    out = []
    for transfers in runs:
        placed = []
        for t, rs in transfers:
            landed = []
            for src, dst, n in rs:
                landed.append((src, dst, n, top[t.dst]))
                top[t.dst] += n
            placed.append((t, landed))
        out.append(placed)
    return out, top


def _ops(program: Program, layout: Layout, rounds: list) -> dict[int, dict[tuple, list[dict]]]:
    """Every rank's threadblocks, keyed ``(channel, peer)``, as lists of operations (module docstring)."""
    channel = {c: i for i, c in enumerate(sorted({t.channel for t in program.transfers}))}
    keys: dict[int, set] = defaultdict(set)
    for t in program.transfers:
        keys[t.src].add((channel[t.channel], t.dst))
        keys[t.dst].add((channel[t.channel], t.src))
    tbs: dict[int, dict[tuple, list[dict]]] = {r: {k: [] for k in sorted(keys[r])} for r in range(program.p)}
    if program.op == "alltoall":  # a rank's own block goes from input to output
        for rank in range(program.p):
            if tbs[rank]:
                own = (("i", rank * layout.g), ("o", rank * layout.g))
                first = tbs[rank][min(tbs[rank])]
                first.append(
                    {
                        "name": "copy",
                        "src_buff": [_buff(own[0], layout.g)],
                        "dst_buff": [_buff(own[1], layout.g)],
                    }
                )
    signal = {"channel_ids": [0], "channel_type": "memory"}
    for r, placed in enumerate(rounds):
        sends, recvs = defaultdict(list), defaultdict(list)
        read, written = defaultdict(set), defaultdict(set)
        for t, landed in placed:
            key = channel[t.channel]
            for src, dst, n, at in landed:
                sends[t.src, (key, t.dst)].append(
                    {
                        "name": "put",
                        "src_buff": [_buff(src, n)],
                        "dst_buff": [{"buffer_id": 0, "index": at, "size": n}],
                        "channel_type": "memory",
                    }
                )
                scratch = _buff(("s", at), n)
                op = {
                    "name": "re",
                    "src_buff": [_buff(dst, n), scratch],
                    "dst_buff": [_buff(dst, n)],
                    "reduce_op": "sum",
                }
                recvs[t.dst, (key, t.src)].append(
                    op if t.reduce else {"name": "copy", "src_buff": [scratch], "dst_buff": [_buff(dst, n)]}
                )
                read[t.src].update((src[0], src[1] + u) for u in range(n))
                written[t.dst].update((dst[0], dst[1] + u) for u in range(n))
        for rank, mine in tbs.items():
            for key, ops in mine.items():
                ops += [*sends[rank, key], {"name": "signal", **signal}] if sends[rank, key] else []
            if read[rank] & written[rank] and len(mine) > 1:
                _barrier(mine)
            for key, ops in mine.items():
                ops += [{"name": "wait", **signal}, *recvs[rank, key]] if recvs[rank, key] else []
            if written[rank] and r + 1 < len(rounds) and len(mine) > 1:
                _barrier(mine)
    return tbs


def _barrier(tbs: dict[tuple, list[dict]]) -> None:
    for ops in tbs.values():
        ops.append({"name": "barrier", "barrier_id": BARRIER_ID, "num_threadblocks": len(tbs)})


def _gpu(rank: int, tbs: dict[tuple, list[dict]], top: int, layout: Layout, name: str) -> dict:
    """One ``gpus`` entry: its channels, remote buffers and threadblocks, long ones continued."""
    keys = list(tbs)
    targets = sorted({peer for key in keys for op in tbs[key] if op["name"] == "put" for peer in [key[1]]})
    threadblocks, semaphores = [], []
    for key in keys:
        chan_id = keys.index(key)  # the gpu's memory channel to this peer for this (channel, peer)
        ops, previous = tbs[key], None
        while True:
            room = MAX_OPERATION - (previous is not None)
            last = len(ops) <= room
            segment = ops[:room] if last else ops[: room - 1]
            ops = ops[len(segment) :]
            if previous is not None:
                segment = [{"name": "sem_acquire", "semaphore_ids": [previous]}, *segment]
            if not last:
                previous = len(semaphores)
                semaphores.append({"init_value": 0})
                segment.append({"name": "sem_release", "semaphore_ids": [previous]})
            tb = {
                "id": len(threadblocks),
                "ops": segment,
                "channels": [{"channel_type": "memory", "channel_ids": [chan_id]}],
            }
            refs = [targets.index(key[1])] if key[1] in targets else []
            tb["remote_buffer_refs"] = (
                [{"access_channel_type": "memory", "remote_buffer_ids": refs}] if refs else []
            )
            threadblocks.append(tb)
            if last:
                break
    if len(semaphores) > MAX_SEMAPHORES:
        raise UsageError(
            f"{name} needs {len(semaphores)} semaphores on rank {rank} to chain its threadblocks; MSCCL++ has {MAX_SEMAPHORES}"
        )
    inputs, outputs = layout.buffers()
    return {
        "id": rank,
        "input_chunks": inputs,
        "output_chunks": outputs,
        "scratch_chunks": top,
        "threadblocks": threadblocks,
        "channels": [{"channel_type": "memory", "connected_to": [peer for _, peer in keys]}] if keys else [],
        "remote_buffers": [
            {"rank": peer, "type": "s", "access_channel_types": ["memory"]} for peer in targets
        ],
        "semaphores": semaphores,
    }


def write(program: Program, ranks: list[str]) -> bytes:
    """``program`` as an MSCCL++ execution plan (module docstring); what it cannot express raises one line."""
    refuse(program, NAME)
    name = program.algorithm or "this program"
    if program.relays:
        raise UsageError(
            f"{name} forwards through {program.relays} chips outside the group: {NAME} has only its ranks"
        )
    layout = Layout(program)
    rounds, top = _rounds(program, layout)
    tbs = _ops(program, layout, rounds)
    plan = {
        "name": program.algorithm or "trnsim",
        "collective": program.op,
        "protocol": "Simple",
        "inplace": program.op != "alltoall",
        "reuse_resources": False,
        "gpus": [_gpu(rank, tbs[rank], top[rank], layout, name) for rank in range(program.p)],
        "num_threads_per_block": 1024,
        "use_double_scratch_buffer": False,
        "buffer_alignment": 16,
        "min_message_size": 0,
        "max_message_size": MAX_MESSAGE,
    }
    return (json.dumps(plan, indent=1) + "\n").encode()


def sniff(data: bytes) -> bool:
    """A JSON object naming ``gpus`` with ``threadblocks`` and a ``collective`` (no other format has them)."""
    head = data[: 1 << 16]
    return (
        head.lstrip().startswith(b"{")
        and b'"threadblocks"' in head
        and b'"collective"' in head
        and b'"gpus"' in head
    )


def read(data: bytes, where: str):
    """An MSCCL++ execution plan's bytes as a program (:mod:`~trnsim.collectives.formats.mscclpp_plan`)."""
    from trnsim.collectives.formats import mscclpp_plan

    return mscclpp_plan.read(data, where, NAME)


register(
    ScheduleFormat(
        NAME, (".json",), "MSCCL++'s execution plan JSON (mscclpp.language, the executor)", write, read, sniff
    )
)
