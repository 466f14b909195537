"""Chakra traces: every program of the test graphs written per rank and read back unchanged."""

import pytest

from collectives.graphs import ALL_CASES, contexts
from trnsim.collectives.agreement import program_rounds
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.check import check
from trnsim.collectives.formats import get, read
from trnsim.collectives.formats.chakra import (
    RECV,
    SEND,
    _attrs,
    _fields,
    _frame,
    _messages,
    _packed,
    read_traces,
    write_traces,
)
from trnsim.errors import UsageError

SIZE = 3 << 20


def _program(case):
    name, algo, op, skewed = case
    ctx = contexts(name)[1 if skewed else 0]
    return REGISTRY[algo].program(ctx, op), list(ctx.group)


# in-network steps and relays (chips outside the group: forest) have no place in the traces
LINK_CASES = [case for case in ALL_CASES if case[1] not in ("nvls", "forest")]


def test_a_program_through_relays_is_refused_in_one_line():
    program, group = next(
        (program, group)
        for program, group in map(_program, (c for c in ALL_CASES if c[1] == "forest"))
        if program.relays
    )
    with pytest.raises(UsageError, match="outside the group"):
        write_traces(program, group, SIZE)


@pytest.mark.parametrize("case", LINK_CASES, ids=["-".join(map(str, c)) for c in LINK_CASES])
def test_every_program_round_trips_unchanged(case):
    program, group = _program(case)
    back = read_traces(write_traces(program, group, SIZE), "t")
    assert back.program == program and check(back.program).ok and back.ranks == group


def _nodes(data: bytes):
    """Each node as (id, type, data_deps, attributes), decoded independently of the reader's tables."""
    out = []
    for message in _messages(data)[1:]:
        fields = _fields(message)
        node_id = next(v for n, _, v in fields if n == 1)
        kind = next(v for n, _, v in fields if n == 3)
        deps = _packed([f for f in fields if f[0] == 5])
        out.append((node_id, kind, deps, _attrs([f for f in fields if f[0] == 10])))
    return out


def test_sizes_are_the_bytes_each_pair_carries_and_sends_wait_for_their_chunks():
    program, group = _program(("ring4", "ring", "allgather", False))
    traces = write_traces(program, group, SIZE)
    sent: dict = {}
    for data in traces.values():
        nodes = _nodes(data)
        for node_id, kind, deps, attrs in nodes:
            assert all(dep < node_id for dep in deps)
            if kind == SEND:
                pair = (attrs["comm_src"], attrs["comm_dst"])
                sent[pair] = sent.get(pair, 0) + attrs["comm_size"]
                # a ring all-gather forwards at step s what it received at step s - 1 (its own block first)
                waits = [nodes[d] for d in deps]
                if attrs["trnsim_round"] == 0:
                    assert waits == []
                else:
                    assert [(w[1], w[3]["trnsim_round"], w[3]["trnsim_chunks"]) for w in waits] == [
                        (RECV, attrs["trnsim_round"] - 1, attrs["trnsim_chunks"])
                    ]
    expected: dict = {}
    for loads in program_rounds(program):
        for pair, share in loads.items():
            expected[pair] = expected.get(pair, 0) + round(share * SIZE)
    assert sent == expected and sum(sent.values()) == 3 * SIZE  # p - 1 blocks of S / p to each of 4 ranks


def test_reductions_follow_their_receive_as_a_compute_node():
    program, group = _program(("ring4", "ring", "reducescatter", False))
    nodes = _nodes(write_traces(program, group, SIZE)[0])
    for node_id, kind, deps, attrs in nodes:
        if kind == 4:
            assert nodes[node_id - 1][1] == RECV and node_id - 1 in deps
            assert attrs["tensor_size"] == nodes[node_id - 1][3]["comm_size"]
    assert sum(kind == 4 for _, kind, _, _ in nodes) == 3


def test_files_are_read_through_the_registry_by_their_names(tmp_path):
    program, group = _program(("torus4x4", "ring", "allreduce", False))
    for rank, data in write_traces(program, group, SIZE).items():
        (tmp_path / f"ar.{rank}.et").write_bytes(data)
    first = (tmp_path / "ar.5.et").read_bytes()
    imported = read(first, str(tmp_path / "ar.5.et"))  # sniffed as Chakra
    assert imported.format == "chakra" and imported.program == program
    (tmp_path / "ar.3.et").unlink()
    with pytest.raises(UsageError, match="rank 3's trace .* is missing"):
        read(first, str(tmp_path / "ar.5.et"))
    with pytest.raises(UsageError, match="name the files PREFIX"):
        read(first, "trace.bin", "chakra")


def test_bad_input_and_in_network_programs_are_refused_in_one_line():
    program, group = _program(("hgx8", "nvls", "allreduce", False))
    with pytest.raises(UsageError, match="reduces in the network"):
        write_traces(program, group, SIZE)
    with pytest.raises(UsageError, match="one file per rank"):
        get("chakra").write(program, group)
    ring, ring_group = _program(("ring4", "ring", "allreduce", False))
    traces = write_traces(ring, ring_group, SIZE)
    with pytest.raises(UsageError, match=r"rank 1\).*not a Chakra trace"):
        read_traces({**traces, 1: traces[1][:-3]}, "t")
    with pytest.raises(UsageError, match="one trace for each of ranks 0..3"):
        read_traces({r: traces[r] for r in (0, 1, 2)}, "t")
    with pytest.raises(UsageError, match="no matching receive"):
        kept = [m for m in _messages(traces[1]) if next((v for n, _, v in _fields(m) if n == 3), 0) != RECV]
        read_traces({**traces, 1: b"".join(map(_frame, kept))}, "t")


def test_a_broadcasts_root_is_written_and_a_root_outside_the_group_refused():
    from dataclasses import replace

    program, group = _program(("ring4", "chain", "broadcast", False))
    assert program.root == 2  # the test graphs' root is the middle rank, not the default 0
    assert read_traces(write_traces(program, group, SIZE), "t").program.root == 2
    with pytest.raises(UsageError, match="trnsim_root 4 is not a rank 0..3"):
        read_traces(write_traces(replace(program, root=4), group, SIZE), "t")
