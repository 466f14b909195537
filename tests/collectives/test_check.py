"""The program checker: every algorithm's programs are proven correct on four kinds of graph, and every
kind of error, made by mutating a correct program, is caught and named."""

from dataclasses import replace

import pytest

from collectives.graphs import ALL_CASES, cases, contexts
from trnsim.collectives import check as checker
from trnsim.collectives.algorithms import REGISTRY
from trnsim.collectives.check import RULES, check, expected, initial
from trnsim.collectives.program import NETWORK, Chunk, Program, Transfer


def _program(graph: str, algo: str, op: str, skew: bool = False) -> Program:
    plain, skewed = contexts(graph)
    return REGISTRY[algo].program(skewed if skew else plain, op)


def _without(program: Program, index: int, *added: Transfer) -> Program:
    transfers = list(program.transfers)
    del transfers[index]
    return replace(program, transfers=(*transfers, *added))


@pytest.mark.parametrize(("graph", "algo", "op", "skew"), ALL_CASES)
def test_every_algorithm_computes_its_collective(graph, algo, op, skew):
    report = check(_program(graph, algo, op, skew))
    assert report.ok, f"{algo} {op} on {graph}: {report}"


def test_the_collectives_are_defined_independently_of_the_programs():
    # 3 ranks, one part: the start and the end each collective defines, written out
    for op, start, end in [
        ("allgather", [{(0, 0): 1}], [(0, (0, 0), 1), (0, (1, 0), 2), (0, (2, 0), 4)]),
        ("reducescatter", [{(0, 0): 1, (1, 0): 1, (2, 0): 1}], [(0, (0, 0), 7)]),
        ("allreduce", [{(0, 0): 1, (1, 0): 1, (2, 0): 1}], [(0, (0, 0), 7), (0, (1, 0), 7), (0, (2, 0), 7)]),
        ("alltoall", [{(0, 0): 1, (1, 0): 1, (2, 0): 1}], [(0, (0, 0), 1), (0, (3, 0), 2), (0, (6, 0), 4)]),
    ]:
        program = Program(op, 3, 0, ())
        assert initial(program)[:1] == start, op
        assert [(r, tuple(c), m) for r, c, m in expected(program) if r == 0] == end, op


def test_doing_nothing_is_an_error_for_every_collective_of_two_or_more_ranks():
    for op in ("allgather", "reducescatter", "allreduce", "alltoall"):
        report = check(Program(op, 2, 0, ()))
        assert not report.ok and report.violation.rule in ("missing", "incomplete"), op


# --- each kind of error, made by hand from a correct program -----------------------------------


def test_a_dropped_transfer_leaves_its_chunk_missing():
    program = _program("ring5", "ring", "allgather")
    last = max(range(len(program.transfers)), key=lambda i: program.transfers[i].round)
    dropped = program.transfers[last]
    report = check(_without(program, last))
    v = report.violation
    assert (v.rule, v.rank, v.round) == ("missing", dropped.dst, None)
    assert v.chunk == program.describe(dropped.chunks[0])
    assert str(report).startswith(f"missing: at the end, rank {dropped.dst}, block ")


def test_a_reduction_counted_twice_is_caught_where_it_happens():
    program = _program("complete4", "ring", "allreduce")
    # the all-gather half copies reduced blocks round; reducing one instead adds it to a partial sum
    # that already holds the receiver's own contribution
    index = next(i for i, t in enumerate(program.transfers) if not t.reduce)
    t = program.transfers[index]
    report = check(_without(program, index, replace(t, reduce=True)))
    v = report.violation
    assert (v.rule, v.round, v.rank) == ("double-count", t.round, t.dst)
    assert "twice" in v.detail and f"from {t.src}" in v.detail


def test_a_reduction_sent_twice_is_caught():
    program = _program("ring4", "tree", "allreduce")
    t = next(t for t in program.transfers if t.reduce)
    report = check(replace(program, transfers=(*program.transfers, replace(t, round=t.round + 1))))
    assert report.violation.rule == "double-count" and report.violation.rank == t.dst


def test_reading_data_before_it_arrives_is_caught():
    program = _program("ring5", "ring", "allgather")
    index = next(i for i, t in enumerate(program.transfers) if t.round == 1)
    t = program.transfers[index]
    report = check(_without(program, index, replace(t, round=0)))  # forwards what it receives in round 0
    v = report.violation
    assert (v.rule, v.round, v.rank, v.chunk) == ("unavailable", 0, t.src, program.describe(t.chunks[0]))
    assert "before it arrives" in v.detail


def test_a_wrong_destination_is_caught():
    program = _program("complete4", "pairwise", "alltoall")
    t = program.transfers[0]
    wrong = next(r for r in range(4) if r not in (t.src, t.dst))
    report = check(_without(program, 0, replace(t, dst=wrong)))
    v = report.violation
    assert (v.rule, v.rank, v.chunk) == ("missing", t.dst, program.describe(t.chunks[0]))
    # in a reduce-scatter the right receiver ends without one contribution
    program = _program("complete4", "mesh", "reducescatter")
    t = program.transfers[0]
    wrong = next(r for r in range(4) if r not in (t.src, t.dst))
    v = check(_without(program, 0, replace(t, dst=wrong))).violation
    assert (v.rule, v.rank) == ("incomplete", t.dst) and f"lacks {{{t.src}}}" in v.detail


def test_the_switches_hold_nothing_that_was_not_sent_up_in_the_same_round():
    program = _program("hgx8", "nvls", "allgather")
    index = next(i for i, t in enumerate(program.transfers) if t.dst == NETWORK)
    up = program.transfers[index]
    v = check(_without(program, index)).violation
    assert (v.rule, v.rank, v.chunk) == ("unavailable", NETWORK, program.describe(up.chunks[0]))
    assert str(v).startswith("unavailable: round 0, the switches, block ")
    # an all-reduce's multicast reads what the same round's members sent up, not the last round's
    program = _program("hgx8", "nvls", "allreduce")
    ups = [i for i, t in enumerate(program.transfers) if t.round == 1 and t.dst == NETWORK]
    assert check(_without(program, ups[0])).violation.rule == "unavailable"


def test_copies_that_overwrite_each_other_in_one_round_conflict():
    program = _program("complete3", "mesh", "allgather")
    t = program.transfers[0]
    other = next(r for r in range(3) if r not in (t.src, t.dst))
    relay = Transfer(1, t.dst, other, t.chunks)  # block t.src reaches `other` twice at once
    clash = replace(program, rounds=2, transfers=(*program.transfers, relay, replace(relay, src=t.src)))
    v = check(clash).violation
    assert (v.rule, v.round, v.rank) == ("conflict", 1, other)


def test_reducing_into_a_chunk_the_receiver_does_not_hold_is_caught():
    program = _program("complete4", "mesh", "allgather")
    t = program.transfers[0]
    v = check(_without(program, 0, replace(t, reduce=True))).violation
    assert (v.rule, v.rank) == ("unavailable", t.dst) and "does not hold it" in v.detail


@pytest.mark.parametrize(
    ("transfer", "rule"),
    [
        (Transfer(0, 0, 0, (Chunk(0),)), "endpoint"),
        (Transfer(0, 0, 3, (Chunk(0),)), "endpoint"),
        (Transfer(0, NETWORK, NETWORK, (Chunk(0),)), "endpoint"),
        (Transfer(0, 0, 1, (Chunk(3),)), "chunk"),
        (Transfer(0, 0, 1, (Chunk(0, 1),)), "chunk"),
    ],
)
def test_a_transfer_the_program_cannot_make_is_refused(transfer, rule):
    assert check(Program("allgather", 3, 1, (transfer,))).violation.rule == rule


def test_parts_that_do_not_make_up_a_block_are_refused():
    program = _program("complete4", "tree", "allreduce")
    for parts in [(0.5, 0.25), (1.5, -0.5)]:
        v = check(replace(program, parts=parts)).violation
        assert v.rule == "sizes" and str(v).startswith("sizes: the parts' shares")
    skewed = _program("complete4", "mesh", "alltoall", skew=True)
    assert check(replace(skewed, block_sizes=skewed.block_sizes[:-1])).violation.rule == "sizes"


def test_every_rule_is_documented():
    assert all(f"``{rule}``" in checker.__doc__ for rule in RULES)


# --- every correct program, mutated transfer by transfer ----------------------------------------

SMALL = ["complete4", "ring5", "chain4", "torus2x4", "hgx8"]
MUTATED = [(g, *case) for g in SMALL for case in cases(g)]


@pytest.mark.parametrize(("graph", "algo", "op", "skew"), MUTATED)
def test_dropping_redirecting_or_flipping_any_transfer_breaks_the_program(graph, algo, op, skew):
    program = _program(graph, algo, op, skew)
    p = program.p
    for index, t in enumerate(program.transfers):
        if program.fraction(t) == 0:  # a block of zero bytes is not required anywhere
            continue
        assert not check(_without(program, index)).ok, ("drop", t)
        # a reduction sent elsewhere can still be right (sums commute: a ring's next rank may take a
        # share directly rather than through its neighbour), so only copies are redirected
        if t.dst != NETWORK and not t.reduce:
            wrong = next(r for r in range(p) if r not in (t.src, t.dst))
            assert not check(_without(program, index, replace(t, dst=wrong))).ok, ("redirect", t)
        # one member's contribution reduced into the switches' empty buffer is the same as a copy, and
        # so is a first contribution into a relay rank's (``forest``: relays start empty)
        if t.dst != NETWORK and t.dst < p:
            flipped = check(_without(program, index, replace(t, reduce=not t.reduce)))
            assert not flipped.ok, ("flip", t)
            assert flipped.violation.rule in ("double-count", "unavailable", "incomplete", "conflict")


def _relayed(op: str, transfers, relays: int = 1) -> Program:
    return Program(op, 2, 1 + max(t.round for t in transfers), tuple(transfers), relays=relays)


def test_a_relay_forwards_copies_and_reduces_without_holding_anything_itself():
    # all-gather of two ranks through relay 2; reduce-scatter of block 0 reduced at the relay
    through = [Transfer(0, 0, 2, (Chunk(0),)), Transfer(1, 2, 1, (Chunk(0),)), Transfer(0, 1, 0, (Chunk(1),))]
    assert check(_relayed("allgather", through)).ok
    reduced = [
        Transfer(0, 0, 2, (Chunk(0),), True),
        Transfer(0, 1, 2, (Chunk(0),), True),
        Transfer(1, 2, 0, (Chunk(0),)),
        Transfer(0, 0, 1, (Chunk(1),), True),
    ]
    assert check(_relayed("reducescatter", reduced)).ok


def test_a_relay_cannot_send_what_it_never_received_nor_be_left_out_of_the_range():
    made_up = [Transfer(0, 2, 1, (Chunk(0),)), Transfer(0, 1, 0, (Chunk(1),))]
    report = check(_relayed("allgather", made_up))
    assert report.violation.rule == "unavailable" and report.violation.rank == 2
    beyond = [Transfer(0, 0, 3, (Chunk(0),))]
    report = check(_relayed("allgather", beyond))
    assert report.violation.rule == "endpoint" and "outside 0..2" in str(report)
    # without relays the same position is outside the group
    assert (
        check(_relayed("allgather", [Transfer(0, 0, 2, (Chunk(0),))], relays=0)).violation.rule == "endpoint"
    )


def test_a_relay_does_not_count_as_a_contributor_and_members_still_need_everything():
    # rank 0 reduces its block 0 into the relay twice: a double count there too
    twice = [Transfer(0, 0, 2, (Chunk(0),), True), Transfer(1, 0, 2, (Chunk(0),), True)]
    assert check(_relayed("reducescatter", twice)).violation.rule == "double-count"
    # the relay receives rank 1's block but the member never does
    stops = [Transfer(0, 0, 2, (Chunk(0),)), Transfer(0, 1, 0, (Chunk(1),))]
    report = check(_relayed("allgather", stops))
    assert report.violation.rule == "missing" and report.violation.rank == 1


def test_a_root_outside_the_group_is_refused_not_vacuously_correct():
    # a reduce asks its sum of the root alone: with no such rank it would ask nothing at all
    program = _program("complete4", "chain", "reduce")
    assert check(program).ok
    for root in (4, -1):
        report = check(replace(program, root=root))
        assert not report.ok and report.violation.rule == "endpoint" and f"root {root}" in str(report), report
