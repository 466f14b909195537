"""MSCCL XML: every program the format can express round-trips (the checker proves the read-back
program, which moves the same bytes per pair), the XML obeys the runtime's structural rules (read
independently with xml.etree), and broken files are caught."""

import xml.etree.ElementTree as ET

import pytest

from collectives.formats.cases import assert_same_totals, case_program, expressible
from collectives.graphs import ALL_CASES
from trnsim.collectives.check import check
from trnsim.collectives.formats import get, read
from trnsim.errors import UsageError

FMT = get("msccl-xml")


def _structure(root) -> None:
    """The runtime's rules, checked on the XML alone."""
    p = int(root.get("ngpus"))
    assert sorted(int(g.get("id")) for g in root.findall("gpu")) == list(range(p))
    for gpu in root.findall("gpu"):
        rank, size = int(gpu.get("id")), {b: int(gpu.get(f"{b}_chunks")) for b in "ios"}
        tbs = {int(tb.get("id")): tb for tb in gpu.findall("tb")}
        assert sorted(tbs) == list(range(len(tbs)))
        seen = set()
        for tb in tbs.values():
            send, recv, chan = int(tb.get("send")), int(tb.get("recv")), int(tb.get("chan"))
            assert rank not in (send, recv) and -1 <= send < p and -1 <= recv < p
            for key in (("send", send, chan), ("recv", recv, chan)):
                assert key[1] < 0 or key not in seen  # one threadblock per peer and channel each way
                seen.add(key)
            steps = tb.findall("step")
            assert len(steps) <= 256
            for s, step in enumerate(steps):
                assert int(step.get("s")) == s
                kind, cnt = step.get("type"), int(step.get("cnt"))
                assert (send >= 0) == (kind == "s") or kind in ("nop", "cpy") or send < 0
                assert kind != "s" or send >= 0
                assert kind not in ("r", "rrc") or recv >= 0
                if kind != "nop":
                    assert 1 <= cnt <= 71
                    for buf, off in (
                        (step.get("srcbuf"), step.get("srcoff")),
                        (step.get("dstbuf"), step.get("dstoff")),
                    ):
                        if kind != "s" or buf == step.get("srcbuf"):
                            assert int(off) >= 0 and int(off) + cnt <= size[buf], (buf, off, cnt, size)
                depid, deps = int(step.get("depid")), int(step.get("deps"))
                if depid >= 0:
                    target = tbs[depid].findall("step")[deps]
                    assert target.get("hasdep") == "1" and depid != int(tb.get("id"))


@pytest.mark.parametrize(("name", "algo", "op", "skewed"), ALL_CASES)
def test_every_expressible_program_round_trips(name, algo, op, skewed):
    program = case_program(name, algo, op, skewed)
    if not expressible(program):
        with pytest.raises(UsageError, match=algo):
            FMT.write(program, [str(i) for i in range(program.p)])
        return
    try:
        data = FMT.write(program, [str(i) for i in range(program.p)])
    except UsageError as error:  # more threadblocks or steps than the runtime loads (forest's trees)
        assert "MSCCL runs at most" in str(error) and algo == "forest", error
        return
    _structure(ET.fromstring(data))
    back = read(data, "f.xml")  # by sniffing
    assert back.format == "msccl-xml"
    assert check(back.program).ok, check(back.program)
    assert_same_totals(program, back.program)


def _ring() -> ET.Element:
    program = case_program("complete4", "mesh", "allreduce", False)
    return ET.fromstring(FMT.write(program, ["a", "b", "c", "d"]))


def _read(root) -> object:
    return FMT.read(ET.tostring(root), "m.xml").program


def test_a_dropped_transfer_leaves_a_rank_without_its_sum():
    root = _ring()
    gpu = root.findall("gpu")[1]
    recv_tb = next(tb for tb in gpu.findall("tb") if tb.get("recv") != "-1")
    peer, chan = recv_tb.get("recv"), recv_tb.get("chan")
    last = recv_tb.findall("step")[-1]
    assert last.get("hasdep") == "0"
    recv_tb.remove(last)
    sender = root.findall("gpu")[int(peer)]
    send_tb = next(tb for tb in sender.findall("tb") if tb.get("send") == "1" and tb.get("chan") == chan)
    send_tb.remove(send_tb.findall("step")[-1])
    report = check(_read(root))
    assert not report.ok and report.violation.rule == "incomplete" and report.violation.rank == 1


def test_a_send_that_forgets_its_dependency_sends_a_partial_sum():
    root = _ring()
    step = next(s for s in root.iter("step") if s.get("type") == "s" and s.get("depid") != "-1")
    step.set("depid", "-1")
    step.set("deps", "-1")
    report = check(_read(root))
    assert not report.ok and report.violation.rule == "incomplete"


def _drop_one_side(root) -> None:
    """Drop a send whose receive stays: the two sides of a connection no longer match."""
    tb = next(
        tb for tb in root.iter("tb") if tb.get("send") != "-1" and tb.findall("step")[-1].get("hasdep") == "0"
    )
    tb.remove(tb.findall("step")[-1])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda root: root.set("coll", "broadcast"), "coll='broadcast'"),
        (lambda root: next(root.iter("step")).set("cnt", "x"), "integer cnt"),
        (lambda root: next(root.iter("step")).set("type", "re"), "local reduction"),
        (lambda root: next(root.iter("step")).set("srcoff", "99"), "outside the gpu's buffers"),
        (
            lambda root: next(s for s in root.iter("step") if s.get("depid") != "-1").set("deps", "99"),
            "does not have",
        ),
        (lambda root: [s.set("hasdep", "0") for s in root.iter("step")], "hasdep is not 1"),
        (_drop_one_side, "receives"),
    ],
)
def test_a_broken_file_is_one_line(mutate, message):
    root = _ring()
    mutate(root)
    with pytest.raises(UsageError, match=message) as error:
        _read(root)
    assert "\n" not in str(error.value) and "m.xml" in str(error.value)


def test_in_network_reduction_is_refused_naming_the_algorithm():
    program = case_program("hgx8", "nvls", "allreduce", False)
    with pytest.raises(UsageError, match="nvls reduces in the network"):
        FMT.write(program, [str(i) for i in range(program.p)])


def test_a_cycle_of_dependencies_is_a_deadlock():
    root = _ring()
    gpu = root.find("gpu")
    tbs = gpu.findall("tb")
    a, b = tbs[0].find("step"), tbs[1].find("step")
    a.set("depid", tbs[1].get("id")), a.set("deps", "0"), b.set("hasdep", "1")
    b.set("depid", tbs[0].get("id")), b.set("deps", "0"), a.set("hasdep", "1")
    with pytest.raises(UsageError, match="deadlock"):
        _read(root)
