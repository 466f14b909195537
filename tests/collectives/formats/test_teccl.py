"""TE-CCL's flows read as a program: all-gathers and all-to-alls, relays, and bad files refused."""

import json
import re
from pathlib import Path

import pytest

from trnsim.collectives import formats
from trnsim.collectives.check import check
from trnsim.collectives.program import as_op
from trnsim.errors import UsageError

EXAMPLE = Path(__file__).parents[3] / "examples" / "schedules" / "teccl-4.json"


def _flow(c, s, i, j, e):
    return f"Chunk {c} from {s} traveled over {i}->{j} in epoch {e}"


def _file(flows, demand=None) -> bytes:
    doc = {"1-Epoch_Duration": 1e-6, "7-Flows": flows}
    if demand is not None:
        doc["6-Demand_Met"] = {
            f"GPU {d}": {f"GPU {s}": {f"Chunk {c}": 1e-6 for c in cs} for s, cs in by.items()}
            for d, by in demand.items()
        }
    return json.dumps(doc).encode()


def test_the_example_is_sniffed_read_and_proven_for_every_op():
    data = EXAMPLE.read_bytes()
    imported = formats.read(data, str(EXAMPLE))
    doc = json.loads(data)
    program = imported.program
    gpus = {int(g.split()[1]) for g in doc["6-Demand_Met"]}
    flows = [tuple(map(int, re.findall(r"\d+", f)[:5])) for f in doc["7-Flows"]]
    assert imported.format == "te-ccl" and program.op == "allgather"
    assert (program.p, program.relays) == (len(gpus), len({n for f in flows for n in f[2:4]} - gpus))
    assert program.rounds == len({f[4] for f in flows})
    # one chunk per GPU: every flow carries a whole block, 1/p of the size
    assert sum(program.fraction(t) for t in program.transfers) == pytest.approx(len(flows) / len(gpus))
    for op in ("allgather", "reducescatter", "allreduce"):
        assert check(as_op(program, op)).ok, op


def test_an_all_to_all_demand_is_read_as_one():
    # three GPUs, two chunks from each source to each destination, sent straight in epoch 0 and 2
    flows, demand = [], {d: {} for d in range(3)}
    for s in range(3):
        for n, d in enumerate(x for x in range(3) if x != s):
            chunks = [2 * n, 2 * n + 1]
            demand[d][s] = chunks
            flows += [_flow(chunks[0], s, s, d, 0), _flow(chunks[1], s, s, d, 2)]
    program = formats.read(_file(flows, demand), "a.json", "te-ccl").program
    assert (program.op, program.p, program.rounds, program.parts) == ("alltoall", 3, 2, (0.5, 0.5))
    assert check(program).ok


def test_a_flow_that_sends_a_chunk_before_it_arrives_is_read_and_refused_by_the_checker():
    flows = [_flow(0, 0, 0, 1, 1), _flow(0, 1, 1, 0, 0), _flow(0, 0, 1, 2, 0), _flow(0, 2, 2, 0, 0)]
    flows += [_flow(0, 1, 1, 2, 1), _flow(0, 2, 2, 1, 1), _flow(0, 2, 0, 1, 2)]
    report = check(formats.read(_file(flows), "w.json", "te-ccl").program)
    assert not report.ok and report.violation.rule == "unavailable" and report.violation.rank == 1


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{", "w.json: not JSON"),
        (b"[]", "expected a TE-CCL output object"),
        (_file(["Chunk zero went"]), "7-Flows[0]: expected 'Chunk C from S traveled over I->J in epoch K'"),
        (
            _file([_flow(0, 0, 0, 1, 0)], {1: {0: [0]}, 2: {0: [0]}, 3: {1: [0]}}),
            "neither an all-gather nor an all-to-all",
        ),
        (
            _file([_flow(5, 0, 0, 1, 0)], {1: {0: [0]}, 0: {1: [0]}}),
            "chunk 5 of GPU 0 is not in 6-Demand_Met",
        ),
    ],
)
def test_a_bad_file_is_refused_in_one_line_naming_it(data, message):
    with pytest.raises(UsageError, match=re.escape(message)) as error:
        formats.read(data, "w.json", "te-ccl")
    assert "\n" not in str(error.value) and str(error.value).startswith("w.json: ")
