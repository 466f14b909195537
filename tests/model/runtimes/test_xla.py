"""XLA's TPU collectives (trnsim.model.runtimes.xla): the scaling book's ring formulas, by hand."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.errors import UsageError
from trnsim.model.runtimes.xla import CALL_US, XlaAxis, XlaSystem, predict


def ring(x=16, gbps=45.0, wrap=True, name="y"):
    return XlaAxis(name=name, size=x, wrap=wrap, link_gbps=gbps)


def test_one_wrapping_axis_all_gather_by_hand():
    # 16 chips, 45 GB/s one way at 95%: 1 MiB moves 15/16 MiB over both directions; 8 hops of 1 us
    system = XlaSystem(axes=(ring(),))
    size = 1 << 20
    transfer = size * 15 / 16 / (2 * 45e3 * 0.95)
    got = predict(system, "allgather", size)
    assert got.algorithm == "ring"
    assert got.time_us == pytest.approx(CALL_US + max(8.0, transfer))
    assert got.transfer_us == pytest.approx(transfer) and got.latency_us == pytest.approx(CALL_US + 8.0)


def test_latency_bound_below_a_hops_worth_of_bytes():
    # a hop's chunk (size / 16) below 1 us x 45 GB/s = 45 kB: the 8 hops set the time (T4)
    system = XlaSystem(axes=(ring(),), efficiency=1.0, call_us=0.0)
    assert predict(system, "allgather", 16 * 40_000).time_us == pytest.approx(8.0)
    assert predict(system, "allgather", 16 * 50_000).time_us > 8.0


def test_a_line_has_one_direction_and_more_hops():
    wrap = XlaSystem(axes=(ring(8),), call_us=0.0)
    line = XlaSystem(axes=(ring(8, wrap=False),), call_us=0.0)
    size = 1 << 30
    assert predict(line, "allgather", size).transfer_us == pytest.approx(
        2 * predict(wrap, "allgather", size).transfer_us
    )
    assert predict(line, "allgather", 8).latency_us == pytest.approx(7.0)
    assert predict(wrap, "allgather", 8).latency_us == pytest.approx(4.0)


@pytest.mark.parametrize("size", [8, 4096, 1 << 20, 1 << 30])
def test_all_reduce_is_reduce_scatter_then_all_gather(size):
    system = XlaSystem(axes=(ring(4, name="x"), ring(16)))
    ag = predict(system, "allgather", size)
    assert predict(system, "reducescatter", size).time_us == pytest.approx(ag.time_us)
    assert predict(system, "allreduce", size).time_us == pytest.approx(2 * ag.time_us - CALL_US)


def test_two_axes_run_one_after_the_other_in_the_best_order():
    # 4x4, x links 45 GB/s, y links 90: gather along x first (the smaller data on the slower links)
    fast, slow = ring(4, 90.0, name="y"), ring(4, 45.0, name="x")
    system = XlaSystem(axes=(fast, slow), efficiency=1.0, hop_us=0.0, call_us=0.0)
    size = 1 << 30
    first_x = size / 4 * 3 / 4 / (2 * 45e3) + size * 3 / 4 / (2 * 90e3)
    first_y = size / 4 * 3 / 4 / (2 * 90e3) + size * 3 / 4 / (2 * 45e3)
    got = predict(system, "allgather", size)
    assert first_x < first_y
    assert got.time_us == pytest.approx(first_x) and got.algorithm == "ring-xy"


def test_all_to_all_is_a_quarter_of_the_all_gather_of_the_whole_array():
    # 8 chips on a ring, each sending S: byte-hops S/8 x (1+2+3+4+3+2+1) over two directions = S per
    # direction; the all-gather of the whole 8 S array moves 7/8 of it over two directions (3.5 S)
    system = XlaSystem(axes=(ring(8),), efficiency=1.0, call_us=0.0, hop_us=0.0)
    s = 1 << 30
    a2a = predict(system, "alltoall", s).time_us
    assert a2a == pytest.approx(s / 45e3)
    assert a2a / predict(system, "allgather", 8 * s).time_us == pytest.approx(1 / 4 * 8 / 7)
    # a line of 4: its middle link carries the 2 x 2 pairs' S/4 each way
    line = XlaSystem(axes=(ring(4, wrap=False),), efficiency=1.0, call_us=0.0, hop_us=0.0)
    assert predict(line, "alltoall", s).time_us == pytest.approx(s / 45e3)


@given(
    st.integers(1, 1 << 34), st.integers(1, 1 << 34), st.sampled_from(["allreduce", "allgather", "alltoall"])
)
def test_time_grows_with_size_and_large_sizes_reach_the_link_rate(a, b, op):
    system = XlaSystem(axes=(ring(16),))
    small, large = sorted((a, b))
    assert predict(system, op, small).time_us <= predict(system, op, large).time_us
    if op == "allgather":  # busbw = size x 15/16 / time never beats both directions at 95%
        assert large * 15 / 16 / (1e3 * predict(system, op, large).time_us) <= 2 * 45 * 0.95 + 1e-9
    huge = predict(system, "allgather", 1 << 40)
    assert math.isclose((1 << 40) * 15 / 16 / (1e3 * huge.time_us), 2 * 45 * 0.95, rel_tol=1e-4)


@pytest.mark.parametrize(
    "make",
    [
        lambda: XlaSystem(axes=()),
        lambda: XlaSystem(axes=(ring(1),)),
        lambda: XlaSystem(axes=(ring(),), efficiency=0.0),
        lambda: XlaSystem(axes=(ring(),), call_us=-1.0),
        lambda: XlaSystem(axes=(ring(),), hop_us=float("nan")),
        lambda: predict(XlaSystem(axes=(ring(),)), "broadcast", 8),
        lambda: predict(XlaSystem(axes=(ring(),)), "allgather", 0),
    ],
)
def test_bad_values_are_refused(make):
    with pytest.raises(UsageError):
        make()
