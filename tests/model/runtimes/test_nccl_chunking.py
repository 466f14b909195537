"""NCCL's NVLS chunking: the thresholds at their boundaries, and the fill as a closed form."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnsim.model.runtimes.nccl_chunking import nvls_channels, nvls_chunk_bytes, nvls_fill_us


@pytest.mark.parametrize("ops", [8, 128, 768])
def test_each_threshold_halves_the_chunk_exactly_at_its_boundary(ops):
    # below 64 x ops x 128K: 64K; below 8 x ops x 64K: 32K; below 2 x ops x 32K: 16K
    assert nvls_chunk_bytes(64 * ops * 131072, ops) == 131072
    assert nvls_chunk_bytes(64 * ops * 131072 - 1, ops) == 65536
    assert nvls_chunk_bytes(8 * ops * 65536, ops) == 65536
    assert nvls_chunk_bytes(8 * ops * 65536 - 1, ops) == 32768
    assert nvls_chunk_bytes(2 * ops * 32768, ops) == 32768
    assert nvls_chunk_bytes(2 * ops * 32768 - 1, ops) == 16384
    assert nvls_chunk_bytes(1, ops) == 16384


def test_channels_by_architecture_and_domains():
    assert nvls_channels(90, 1) == 16 and nvls_channels(100, 1) == 24 and nvls_channels(100, 2) == 32


@given(st.integers(1, 1 << 34), st.sampled_from([8, 128, 192, 768]), st.floats(1.0, 2000.0))
def test_the_fill_is_two_chunk_times_of_a_pipelines_share(size, ops, algbw):
    chunk = min(nvls_chunk_bytes(size, ops), math.ceil(size / ops))
    expected = 2 * chunk * ops / (algbw * 1e3)
    assert math.isclose(nvls_fill_us(size, ops, algbw), expected, rel_tol=1e-12)
    # a fill never exceeds the time of moving the whole buffer twice (plus one rounding per pipeline)
    assert nvls_fill_us(size, ops, algbw) <= 2 * (size + ops) / (algbw * 1e3) + 1e-9


def test_no_bytes_or_no_bandwidth_costs_no_fill():
    assert nvls_fill_us(0, 128, 100.0) == 0.0 and nvls_fill_us(1024, 128, 0.0) == 0.0
