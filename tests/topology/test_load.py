"""Loading a system refuses a parts section that no bill could price, before any work."""

import pytest

from trnsim.errors import TrnsimError
from trnsim.spec.catalog import find_sku
from trnsim.topology import load_topology


def _file(tmp_path, parts: str):
    path = tmp_path / "system.yaml"
    path.write_text(find_sku("nl16").read_text() + parts)
    return path


def test_a_new_part_without_every_figure_is_refused_naming_the_file_and_key(tmp_path):
    path = _file(tmp_path, "parts:\n  my-cable: {price_usd: 3, source: 'assumption: mine'}\n")
    with pytest.raises(TrnsimError) as refused:
        load_topology(topology=path)
    message = str(refused.value)
    assert message.startswith(f"{path}: parts.my-cable.power_w: missing") and "\n" not in message


def test_a_whole_new_part_and_a_partial_known_one_load(tmp_path):
    path = _file(
        tmp_path,
        "parts:\n  my-cable: {price_usd: 3, power_w: 0, source: 'assumption: mine'}\n  aec: {price_usd: 9}\n",
    )
    assert set(load_topology(topology=path).spec.parts) == {"my-cable", "aec"}


def test_a_misspelt_part_edit_is_refused_with_the_close_names():
    with pytest.raises(TrnsimError, match=r"parts\.trainum3\.power_w: missing.*did you mean trainium3"):
        load_topology("nl16", overrides=["parts.trainum3.price_usd=5"])
