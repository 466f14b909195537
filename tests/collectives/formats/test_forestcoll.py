"""ForestColl's trees read as a program: the example file's trees, proven correct, and bad files refused."""

import re
from pathlib import Path

import pytest

from trnsim.collectives import formats
from trnsim.collectives.check import check
from trnsim.collectives.program import as_op
from trnsim.errors import UsageError

EXAMPLE = Path(__file__).parents[3] / "examples" / "schedules" / "forestcoll-8.xml"


def _tree(root: str, index: int, nchunks: int, sends) -> str:
    body = "".join(f'<send src="{a}" dst="{b}" path="{a},{b}"/>' for a, b in sends)
    return f'<tree root="{root}" index="{index}" nchunks="{nchunks}" height="1">{body}</tree>'


def _file(k: int, *trees: str) -> bytes:
    return f'<Algo nchunkspernode="{k}">{"".join(trees)}</Algo>'.encode()


def test_the_example_is_sniffed_read_and_proven_for_every_op():
    data = EXAMPLE.read_bytes()
    imported = formats.read(data, str(EXAMPLE))
    program = imported.program
    text = data.decode()
    roots = set(re.findall(r'root="([^"]+)"', text))
    nodes = roots | set(re.findall(r'(?:src|dst)="([^"]+)"', text))
    assert imported.format == "forestcoll"
    assert (program.p, program.relays) == (len(roots), len(nodes - roots))
    assert imported.ranks[: program.p] == sorted(roots, key=lambda n: tuple(re.findall(r"\w+", n)))
    # the bytes each tree's sends carry: its nchunks / k of its root's block (1/p) per send
    k = int(re.search(r'nchunkspernode="(\d+)"', text).group(1))
    per_tree = re.findall(r'nchunks="(\d+)"[^>]*>(.*?)</tree>', text, re.S)
    want = sum(int(n) / k / len(roots) * body.count("<send") for n, body in per_tree)
    assert sum(program.fraction(t) for t in program.transfers) == pytest.approx(want)
    for op in ("allgather", "reducescatter", "allreduce"):
        assert check(as_op(program, op)).ok, op


def test_a_tree_that_skips_a_rank_is_read_and_then_refused_by_the_checker():
    a, b, c = "A", "B", "C"
    data = _file(
        1,
        _tree(a, 0, 1, [(a, b)]),  # never reaches C
        _tree(b, 0, 1, [(b, a), (b, c)]),
        _tree(c, 0, 1, [(c, a), (a, b)]),
    )
    report = check(formats.read(data, "x.xml", "forestcoll").program)
    assert not report.ok and report.violation.rule == "missing" and report.violation.rank == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"<Algo nchunkspernode='1'><tree", "x.xml: not well-formed XML"),
        (b"<algo/>", "the root element is <algo>"),
        (b"<Algo nchunkspernode='zero'/>", "nchunkspernode='zero': expected a whole number >= 1"),
        (_file(1), "no <tree>"),
        (
            _file(2, _tree("A", 0, 1, [("A", "B")]), _tree("B", 0, 2, [("B", "A")])),
            "carry 1 of nchunkspernode=2",
        ),
        (_file(1, _tree("A", 0, 1, [("B", "C")])), "B -> C sends from a node the tree never reaches"),
        (_file(1, _tree("A", 0, 1, [("A", "")])), "a <send> without src= or dst="),
    ],
)
def test_a_bad_file_is_refused_in_one_line_naming_it(data, message):
    with pytest.raises(UsageError, match=re.escape(message)) as error:
        formats.read(data, "x.xml", "forestcoll")
    assert "\n" not in str(error.value) and str(error.value).startswith("x.xml: ")
