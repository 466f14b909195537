"""TE-CCL's schedules (read only): the JSON its solver writes (github.com/microsoft/TE-CCL).

TE-CCL (Liu et al., "Rethinking Machine Learning Collective Communication as a Multi-Commodity Flow
Problem", SIGCOMM 2024) solves for which chunk crosses which link in which epoch. Its output JSON
(``flows_str_info`` in ``teccl``'s solver, as in its ``examples/experiments/output_provided``) holds::

    {"1-Epoch_Duration": 1e-09, ..., "4-Collective_Finish_Time": ..., "5-Algo_Bandwidth": ...,
     "6-Demand_Met": {"GPU 1": {"GPU 0": {"Chunk 0": 7.04e-07}, ...}, ...},
     "7-Flows": ["Chunk 0 from 13 traveled over 13->12 in epoch 0",
                 "Chunk 1 from 2 traveled over 2->9 in epoch 3 via switches 17 -> 18", ...],
     "8-Chunk paths": {...}}

``6-Demand_Met[d][s][c]`` says GPU ``d`` needed chunk ``c`` of GPU ``s``; ``7-Flows`` how each chunk
moved (TE-CCL merges hops through switches into one flow, named ``via switches``). How it is read:

* the ranks are the GPUs of the demand, in the order of their numbers; a node a flow passes through
  that is not one of them relays (:class:`~trnsim.collectives.program.Program`'s ``relays``); without
  a demand (an A* run writes none) the ranks are the flows' sources and the demand an all-gather;
* if every GPU needs every chunk of every other, it is an all-gather: block ``s`` is GPU ``s``'s
  chunks, as equal parts (every GPU must have as many); if each chunk is needed by one GPU, an
  all-to-all: block ``s -> d`` is the chunks ``d`` needs from ``s`` (as many for every pair);
* a flow in epoch ``e`` is a copy in round ``e``; the epochs that have flows are numbered
  ``0, 1, ...`` in order (an epoch without flows is TE-CCL's timing, not a step of the algorithm);
  hops through switches are one transfer, which trnsim routes itself;
* TE-CCL's epoch duration, chunk size and finish time are its own model's and are not used: trnsim
  costs each round as a step (alpha + its busiest link) at the sizes asked for.

An all-gather made this way can be run as a reduce-scatter or all-reduce
(:func:`~trnsim.collectives.program.as_op`), which the checker then proves.
"""

import json
import re

from trnsim.collectives.formats import Imported, ScheduleFormat, register
from trnsim.collectives.program import Chunk, Program, Transfer
from trnsim.errors import UsageError

FLOW = re.compile(
    r"Chunk (\d+) from (\d+) traveled over (\d+)->(\d+) (?:in|at) epoch (\d+)(?: via switches .*)?$"
)
GPU = re.compile(r"GPU (\d+)$")


def sniff(data: bytes) -> bool:
    return b'"7-Flows"' in data[: 1 << 20] or b'"6-Demand_Met"' in data[:4096]


def _flows(document: dict, where: str) -> list[tuple[int, int, int, int, int]]:
    """``(chunk, source, i, j, epoch)`` of every flow."""
    flows = document.get("7-Flows")
    if not isinstance(flows, list):
        raise UsageError(f"{where}: 7-Flows: expected a list of flow strings")
    out = []
    for n, text in enumerate(flows):
        found = FLOW.match(text) if isinstance(text, str) else None
        if found is None:
            raise UsageError(
                f"{where}: 7-Flows[{n}]: expected 'Chunk C from S traveled over I->J in epoch K', got {text!r}"
            )
        out.append(tuple(int(x) for x in found.groups()))
    return out


def _gpu(name: str, where: str, key: str) -> int:
    found = GPU.match(name)
    if found is None:
        raise UsageError(f"{where}: {key}: expected 'GPU <number>', got {name!r}")
    return int(found.group(1))


def _demand(document: dict, flows, where: str) -> dict[tuple[int, int], set[int]]:
    """``(source, chunk) -> GPUs that need it``."""
    met = document.get("6-Demand_Met")
    if met is None:  # an A* run: an all-gather among the flows' sources
        sources = {s for _, s, *_ in flows}
        return {(s, c): sources - {s} for c, s, *_ in flows}
    if not isinstance(met, dict):
        raise UsageError(f"{where}: 6-Demand_Met: expected an object of GPUs")
    demand: dict[tuple[int, int], set[int]] = {}
    for dst, by_source in met.items():
        d = _gpu(dst, where, "6-Demand_Met")
        if not isinstance(by_source, dict):
            raise UsageError(f"{where}: 6-Demand_Met.{dst}: expected an object of GPUs")
        for src, chunks in by_source.items():
            s = _gpu(src, where, f"6-Demand_Met.{dst}")
            for chunk in chunks if isinstance(chunks, dict) else ():
                found = re.fullmatch(r"Chunk (\d+)", chunk)
                if found is None:
                    raise UsageError(
                        f"{where}: 6-Demand_Met.{dst}.{src}: expected 'Chunk <number>', got {chunk!r}"
                    )
                demand.setdefault((s, int(found.group(1))), set()).add(d)
    return demand


def _blocks(demand, members: list[int], where: str) -> tuple[str, dict[tuple[int, int], Chunk], int]:
    """The collective, each ``(source GPU, chunk)``'s program chunk, and the parts per block."""
    rank = {gpu: i for i, gpu in enumerate(members)}
    p = len(members)
    everyone = all(needs == set(members) - {s} for (s, _), needs in demand.items())
    if everyone:
        op, keys = "allgather", {(s, c): s for s, c in demand}
    elif all(len(needs) == 1 for needs in demand.values()):
        op, keys = "alltoall", {(s, c): (s, next(iter(needs))) for (s, c), needs in demand.items()}
    else:
        raise UsageError(f"{where}: 6-Demand_Met is neither an all-gather nor an all-to-all")
    groups: dict = {}
    for (_, c), key in sorted(keys.items()):
        groups.setdefault(key, []).append(c)
    counts = {len(chunks) for chunks in groups.values()}
    wanted = p if op == "allgather" else p * (p - 1)
    if len(counts) != 1 or len(groups) != wanted:
        raise UsageError(
            f"{where}: 6-Demand_Met: every block must have as many chunks (found {sorted(counts)})"
        )
    out = {}
    for key, chunks in groups.items():
        src = key if op == "allgather" else key[0]
        block = rank[key] if op == "allgather" else rank[key[0]] * p + rank[key[1]]
        for part, c in enumerate(chunks):
            out[src, c] = Chunk(block, part)
    return op, out, counts.pop()


def read(data: bytes, where: str) -> Imported:
    """A TE-CCL output file as its program (module docstring)."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise UsageError(f"{where}: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise UsageError(f"{where}: expected a TE-CCL output object with 7-Flows")
    flows = _flows(document, where)
    demand = _demand(document, flows, where)
    members = sorted({s for s, _ in demand} | {d for needs in demand.values() for d in needs})
    relays = sorted({n for _, _, i, j, _ in flows for n in (i, j)} - set(members))
    position = {gpu: i for i, gpu in enumerate(members + relays)}
    op, chunk_of, parts = _blocks(demand, members, where)
    epochs = {e: n for n, e in enumerate(sorted({e for *_, e in flows}))}
    moves: dict[tuple[int, int, int], dict[Chunk, None]] = {}
    for c, s, i, j, e in flows:
        chunk = chunk_of.get((s, c))
        if chunk is None:
            raise UsageError(f"{where}: 7-Flows: chunk {c} of GPU {s} is not in 6-Demand_Met")
        moves.setdefault((epochs[e], position[i], position[j]), {})[chunk] = None
    transfers = tuple(Transfer(r, a, b, tuple(chunks)) for (r, a, b), chunks in sorted(moves.items()))
    program = Program(
        op,
        len(members),
        max(len(epochs), 1),
        transfers,
        (1 / parts,) * parts,
        algorithm="te-ccl",
        relays=len(relays),
    )
    notes = [f"TE-CCL's {max(epochs, default=-1) + 1} epochs have flows in {len(epochs)}: one round each"]
    if relays:
        notes.append(f"GPUs {', '.join(map(str, relays))} relay only (not in the demand)")
    return Imported(program, "te-ccl", [f"GPU {g}" for g in members + relays], notes)


register(ScheduleFormat("te-ccl", (".json",), "TE-CCL solver output (read only)", read=read, sniff=sniff))
