"""MSCCL++ execution plan JSON: every program the format can express round-trips (the checker proves
the read-back program, which moves the same bytes per pair), the JSON obeys the executor's structural
rules (read independently as plain JSON), and broken files are caught."""

import json
from collections import Counter

import pytest

from collectives.formats.cases import assert_same_totals, case_program, expressible
from collectives.graphs import ALL_CASES
from trnsim.collectives.check import check
from trnsim.collectives.formats import FORMATS, get, read
from trnsim.errors import UsageError

FMT = get("mscclpp-json")


def _structure(plan: dict) -> None:
    """The executor's rules, checked on the JSON alone: what every op names exists, every wait has a signal."""
    gpus = plan["gpus"]
    assert [g["id"] for g in gpus] == list(range(len(gpus)))
    signals, waits = Counter(), Counter()
    for gpu in gpus:
        rank = gpu["id"]
        peers = [peer for ch in gpu["channels"] for peer in ch["connected_to"]]
        pair = [(peer, peers[:i].count(peer)) for i, peer in enumerate(peers)]
        size = {"i": gpu["input_chunks"], "o": gpu["output_chunks"], "s": gpu["scratch_chunks"]}
        for tb_id, tb in enumerate(gpu["threadblocks"]):
            assert tb["id"] == tb_id and len(tb["ops"]) <= 64
            chans = [i for ch in tb["channels"] for i in ch["channel_ids"]]
            assert all(0 <= i < len(peers) for i in chans)
            refs = [i for r in tb["remote_buffer_refs"] for i in r["remote_buffer_ids"]]
            assert all(0 <= i < len(gpu["remote_buffers"]) for i in refs)
            for op in tb["ops"]:
                for ref in op.get("channel_ids", []):
                    key = (
                        (rank, *pair[chans[ref]])
                        if op["name"] == "signal"
                        else (pair[chans[ref]][0], rank, pair[chans[ref]][1])
                    )
                    (signals if op["name"] == "signal" else waits)[key] += 1
                for b in op.get("src_buff", []) + op.get("dst_buff", []):
                    if "buffer_id" in b:
                        remote = gpu["remote_buffers"][refs[b["buffer_id"]]]
                        limit = plan["gpus"][remote["rank"]][
                            {"s": "scratch", "i": "input", "o": "output"}[remote["type"]] + "_chunks"
                        ]
                    else:
                        limit = size[b["type"]]
                    assert b["index"] >= 0 and b["size"] >= 1 and b["index"] + b["size"] <= limit
                for s in op.get("semaphore_ids", []):
                    assert 0 <= s < len(gpu["semaphores"]) <= 16
    assert signals == waits


@pytest.mark.parametrize(("name", "algo", "op", "skewed"), ALL_CASES)
def test_every_expressible_program_round_trips(name, algo, op, skewed):
    program = case_program(name, algo, op, skewed)
    if not expressible(program):
        with pytest.raises(UsageError, match=algo):
            FMT.write(program, [str(i) for i in range(program.p)])
        return
    data = FMT.write(program, [str(i) for i in range(program.p)])
    _structure(json.loads(data))
    back = read(data, "f.json")  # by sniffing
    assert back.format == "mscclpp-json"
    assert check(back.program).ok, check(back.program)
    assert_same_totals(program, back.program)


def test_no_other_format_sniffs_a_plan_and_a_plan_sniffs_as_no_other():
    data = FMT.write(case_program("complete4", "ring", "allreduce", False), list("abcd"))
    assert [name for name, f in FORMATS.items() if f.sniff and f.sniff(data)] == ["mscclpp-json"]
    others = [b'{"format": "trnsim-schedule/2", "gpus": []}', b'{"7-Flows": {}, "collective": "x"}']
    assert not any(FMT.sniff(other) for other in others)


def _plan(name="complete4", algo="ring") -> dict:
    return json.loads(FMT.write(case_program(name, algo, "allreduce", False), list("abcd")))


def _read(plan) -> object:
    return FMT.read(json.dumps(plan).encode(), "m.json").program


def _ops(plan, kind):
    return [
        (tb, op)
        for gpu in plan["gpus"]
        for tb in gpu["threadblocks"]
        for op in tb["ops"]
        if op["name"] == kind
    ]


def test_a_dropped_receive_leaves_a_rank_without_its_sum():
    plan = _plan()
    tb, op = _ops(plan, "re")[-1]
    tb["ops"].remove(op)
    report = check(_read(plan))
    assert not report.ok and report.violation.rule in ("incomplete", "missing")


def test_a_removed_wait_reads_the_scratch_slot_before_the_data_is_there():
    plan = _plan()
    for gpu in plan["gpus"][:1]:  # rank 0 stops waiting; its peers still signal, so count them out too
        for tb in gpu["threadblocks"]:
            tb["ops"] = [op for op in tb["ops"] if op["name"] != "wait"]
    for gpu in plan["gpus"]:
        for tb in gpu["threadblocks"]:
            peer = gpu["channels"][0]["connected_to"][tb["channels"][0]["channel_ids"][0]]
            if peer == 0:
                tb["ops"] = [op for op in tb["ops"] if op["name"] != "signal"]
    back = FMT.read(json.dumps(plan).encode(), "m.json")
    assert any("before any write to it is waited for" in note for note in back.notes)
    report = check(back.program)
    assert not report.ok and report.violation.rank == 0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda plan: plan.update(collective="broadcast"), "collective 'broadcast'"),
        (lambda plan: _ops(plan, "put")[0][1]["src_buff"][0].update(index=999), "outside the gpu's buffers"),
        (lambda plan: _ops(plan, "put")[0][1]["dst_buff"][0].update(buffer_id=7), "remote_buffer_refs"),
        (lambda plan: _ops(plan, "signal")[0][1].update(channel_ids=[5]), "channel_ids"),
        (lambda plan: _ops(plan, "signal")[0][0]["ops"].remove(_ops(plan, "signal")[0][1]), "waits"),
        (lambda plan: _ops(plan, "put")[0][1].update(name="ppkt"), "operation 'ppkt'"),
        (lambda plan: plan["gpus"][1].update(id=3), r"gpus\[1\].id"),
        (lambda plan: _ops(plan, "barrier")[0][1].update(num_threadblocks=9), "barrier"),
        (lambda plan: plan["gpus"][0].update(threadblocks="x"), "expected list"),
    ],
)
def test_a_broken_file_is_one_line(mutate, message):
    plan = _plan("complete4", "mesh")
    mutate(plan)
    with pytest.raises(UsageError, match=message) as error:
        _read(plan)
    assert "\n" not in str(error.value) and "m.json" in str(error.value)


def test_not_json_is_one_line():
    with pytest.raises(UsageError, match="not valid JSON"):
        FMT.read(b"{nope", "m.json")


def test_in_network_reduction_is_refused_naming_the_algorithm():
    program = case_program("hgx8", "nvls", "allreduce", False)
    with pytest.raises(UsageError, match="nvls reduces in the network"):
        FMT.write(program, [str(i) for i in range(program.p)])


def test_a_long_program_is_continued_in_threadblocks_chained_by_semaphores():
    plan = _plan("switched16", "ring")
    assert any(gpu["semaphores"] for gpu in plan["gpus"])
    assert check(_read(plan)).ok


def test_a_cycle_of_waits_is_a_deadlock():
    plan = _plan("complete4", "mesh")  # a threadblock both sends to and receives from its peer
    for gpu in plan["gpus"]:  # every rank waits before it signals
        for tb in gpu["threadblocks"]:
            waits = [op for op in tb["ops"] if op["name"] == "wait"]
            tb["ops"] = waits[:1] + [op for op in tb["ops"] if op is not waits[0]] if waits else tb["ops"]
    with pytest.raises(UsageError, match="deadlock"):
        _read(plan)
