import pytest

from trnsim.errors import UsageError
from trnsim.variants import Variant


def test_variant_syntax():
    assert Variant.parse("nl72x2") == Variant(sku="nl72x2")
    v = Variant.parse("nl72x2:set=latency.switch_ns=50:set=switched.cross_rack.lanes=8", common=("a.b=1",))
    assert v.sku == "nl72x2" and v.overrides == (
        "a.b=1",
        "latency.switch_ns=50",
        "switched.cross_rack.lanes=8",
    )
    assert Variant.parse("my.yaml", is_file=True).file.name == "my.yaml"
    with pytest.raises(UsageError):
        Variant.parse(":set=a=1")
