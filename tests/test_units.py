import pytest

from trnsim.errors import UsageError
from trnsim.units import format_size, parse_percent, parse_size, size_sweep


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8", 8),
        ("64KiB", 65536),
        ("1M", 1 << 20),
        ("1G", 1 << 30),
        ("2GiB", 2 << 30),
        ("1KB", 1000),
        ("1.5K", 1536),
        (4096, 4096),
        ("0", 0),
    ],
)
def test_parse_size_accepts_bytes_and_suffixes(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["12XB", "-5", "-1K", "abc", "", "1.3"])
def test_parse_size_refuses_bad_input(text):
    with pytest.raises(UsageError):
        parse_size(text)


def test_format_size_uses_binary_units():
    assert format_size(1 << 30) == "1 GiB"
    assert format_size(1536) == "1.5 KiB"
    assert format_size(8) == "8 B"


def test_size_sweep_matches_nccl_tests_convention():
    assert size_sweep(8, 128, 2) == [8, 16, 32, 64, 128]
    assert size_sweep(8, 1 << 30, 2)[-1] == 1 << 30
    with pytest.raises(UsageError):
        size_sweep(8, 4, 2)
    with pytest.raises(UsageError):
        size_sweep(8, 64, 1)
    for factor in (float("nan"), float("inf")):
        with pytest.raises(UsageError):
            size_sweep(8, 64, factor)


def test_parse_percent():
    assert parse_percent("5%") == pytest.approx(0.05)
    assert parse_percent("0.1") == pytest.approx(0.1)
    assert parse_percent("150%") == pytest.approx(1.5)
    for bad in ("five", "5", "nan", "inf", "-1%"):  # a bare 5 would be 500%: refused, not a silent pass
        with pytest.raises(UsageError):
            parse_percent(bad)


@pytest.mark.parametrize("exponent", range(6))
def test_every_suffix_up_to_a_pebibyte_is_accepted(exponent):
    # the binary letters K..P, their -iB spellings and the decimal -B ones, the prefix in either case
    # (the B stays a capital: see the next test)
    letter = "BKMGTP"[exponent]
    binary, decimal = 1024**exponent, 1000**exponent
    spellings = {letter: binary, f"{letter}iB": binary, f"{letter}B": decimal} if exponent else {"B": 1}
    for suffix, factor in spellings.items():
        lower = suffix.lower() if len(suffix) == 1 else suffix[:-1].lower() + suffix[-1]
        for text in (f"1{suffix}", f"1{lower}", f"1 {suffix}"):
            assert parse_size(text) == factor, text


@pytest.mark.parametrize("prefix", ["K", "k", "M", "m", "G", "g", "T", "P"])
@pytest.mark.parametrize("unit", ["b", "ib"])
def test_a_lowercase_b_after_a_prefix_is_bits_and_refused(prefix, unit):
    """1Gb is a gigabit: read as bytes it would be 8x too large. One line says how to write bytes."""
    text = f"1{prefix}{unit}"
    upper = prefix.upper()
    with pytest.raises(
        UsageError,
        match=rf"^size '{text}': b means bits; sizes are in bytes: write 1{upper}, 1{upper}B or 1{upper}iB$",
    ):
        parse_size(text)
    assert parse_size(f"1{prefix}{unit[:-1]}B") > 0  # the same with a capital B is bytes


def test_the_cap_is_one_pebibyte_whatever_the_spelling():
    cap = 1 << 50
    assert parse_size("1P") == parse_size("1PiB") == parse_size("1024T") == cap
    assert parse_size("1PB") == 10**15 < cap
    for over in ("1.001P", "1025T", f"{cap + 1}", "2PB"):
        with pytest.raises(UsageError, match="too large"):
            parse_size(over)
    assert format_size(cap) == "1 PiB"
