"""NCCL's graph file: rings and chains written, read back as the same program, everything else refused."""

import re

import pytest

from collectives.graphs import contexts
from trnsim.collectives.agreement import program_totals
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.check import check
from trnsim.collectives.formats import get, read
from trnsim.collectives.formats.nccl_graph_xml import Builder, chain_collective, program_from_graph
from trnsim.collectives.schedule import Context
from trnsim.errors import UsageError
from trnsim.topology.load import load_topology


@pytest.fixture(scope="module")
def nl16():
    topology = load_topology("nl16")
    return Context(topology, list(topology.chips))


@pytest.mark.parametrize("algo", ["ring", "multiring"])
@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter"])
def test_rings_round_trip_with_the_same_bytes_per_pair(nl16, algo, op):
    program = REGISTRY[algo].program(nl16, op)
    data = get("nccl-graph-xml").write(program, nl16.group)
    imported = program_from_graph(data, "g.xml", op)
    assert check(imported.program).ok
    mine, theirs = program_totals(program), program_totals(imported.program)
    assert mine.keys() == theirs.keys()
    assert all(theirs[pair] == pytest.approx(share, rel=1e-12) for pair, share in mine.items())
    # the file lists one channel per ring, each through all 16 GPUs, in the order the data flows
    channels = re.findall(rb"<channel>(.*?)</channel>", data, re.S)
    assert len(channels) == len({t.channel for t in program.transfers})
    first = [int(r) for r in re.findall(rb'rank="(\d+)"', channels[0])]
    sends = {(t.src, t.dst) for t in program.transfers if t.channel == 0}
    assert {(first[i], first[(i + 1) % 16]) for i in range(16)} == sends


def test_read_gives_an_allreduce_and_says_so(nl16):
    data = get("nccl-graph-xml").write(REGISTRY["ring"].program(nl16, "allgather"), nl16.group)
    imported = read(data, "g.xml")  # sniffed: no format named
    assert imported.program.op == "allreduce" and check(imported.program).ok
    assert any("does not say the collective" in note for note in imported.notes)


def test_chains_are_written_as_a_tree_graph_and_read_back():
    b = Builder("allreduce", 4, "tree", parts=(0.5, 0.5), pipelined=True)
    chain_collective(b, [2, 0, 3, 1], 0, 0)
    chain_collective(b, [1, 3, 0, 2], 1, 1)
    program = b.build()
    assert check(program).ok
    data = get("nccl-graph-xml").write(program, ["a", "b", "c", "d"])
    assert b'pattern="1"' in data and b'id="1"' in data
    back = read(data, "t.xml").program
    assert program_totals(back) == pytest.approx(program_totals(program)) and back.pipelined


@pytest.mark.parametrize(
    ("name", "algo", "why"),
    [
        ("torus4x4", "tree", "not a chain"),
        ("complete8", "rdh", "not a Hamiltonian cycle"),
        ("complete8", "pairwise", "do not run alltoall"),
        ("hgx8", "nvls", "in the network"),
    ],
)
def test_other_programs_are_refused_in_one_line(name, algo, why):
    ctx, _ = contexts(name)
    op = "alltoall" if algo == "pairwise" else "allreduce"
    with pytest.raises(UsageError) as error:
        get("nccl-graph-xml").write(REGISTRY[algo].program(ctx, op), list(ctx.group))
    assert why in str(error.value) and "\n" not in str(error.value)


def test_two_rank_tree_is_a_chain_and_is_written():
    ctx, _ = contexts("complete2")
    program = REGISTRY["tree"].program(ctx, "allreduce")
    back = read(get("nccl-graph-xml").write(program, list(ctx.group)), "t.xml").program
    assert program_totals(back) == pytest.approx(program_totals(program))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            b"<graphs><graph pattern='4'><channel><gpu dev='0'/><gpu dev='0'/></channel></graph></graphs>",
            "every GPU 0..1 once",
        ),
        (b"<graphs><graph pattern='5'/></graphs>", "pattern 4 (ring)"),
        (b"<graphs><graph pattern='x'/></graphs>", "graph[0]@pattern: expected a whole number"),
        (b"<topology/>", "<graphs> root"),
        (b"<graphs", "not well-formed"),
    ],
)
def test_bad_files_get_one_line_naming_the_element(text, expected):
    with pytest.raises(UsageError) as error:
        program_from_graph(text, "bad.xml")
    assert expected in str(error.value) and str(error.value).startswith("bad.xml: ")


def test_dev_is_read_as_nccl_reads_it_when_rank_is_absent():
    gpus = "".join(
        f"<gpu dev='{d}'/>" for d in ("0x0", "0xa", "1", "b", "2", "3", "4", "5", "6", "7", "8", "9")
    )
    program = program_from_graph(
        f"<graphs><graph pattern='4'><channel>{gpus}</channel></graph></graphs>".encode(), "d.xml"
    ).program
    assert program.p == 12 and check(program).ok
    assert (1, 11) in {(t.src, t.dst) for t in program.transfers}  # 0xa -> 1 -> 0xb
