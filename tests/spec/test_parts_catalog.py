"""The shipped parts catalog and a user's parts file: every figure named, bad input one line."""

import re
from pathlib import Path

import pytest

from trnsim.errors import ConfigError
from trnsim.spec.parts_catalog import default_parts_file, load_parts, read_parts_file

ROOT = Path(__file__).resolve().parents[2]
ANCHORS = set(
    re.findall(r'<a id="([a-z0-9-]+)"></a>', (ROOT / "docs" / "sources.md").read_text(encoding="utf-8"))
)


def test_the_catalog_ships_next_to_the_topologies():
    assert default_parts_file().is_file()
    assert default_parts_file().parent.parent.name in ("topologies", "trnsim.topologies", "topologies")


def test_every_shipped_figure_is_a_named_assumption_or_cites_a_public_source():
    parts = load_parts()
    for name in parts.names:
        part = parts.get(name)
        cited = re.findall(r"docs/sources\.md#([a-z0-9-]+)", part.source)
        assert "assumption" in part.source or cited, name
        assert set(cited) <= ANCHORS, (name, cited)
        if "assumption" in part.source and part.price_usd:  # an assumed price says its range
            assert "range" in part.source, name


def test_a_user_file_goes_on_top(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("parts:\n  aec: {price_usd: 70}\n")
    parts = load_parts(path)
    assert parts.get("aec").price_usd == 70 and parts.get("aec").origin == f"{path}, {default_parts_file()}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parts:\n  aec: {price_usd: cheap}\n", "parts.aec.price_usd: expected `float | null`, got `str`"),
        (
            "parts:\n  aec: {per: metre}\n",
            "parts.aec.per: Invalid enum value 'metre'; expected one of each, lane, gbit",
        ),
        ("parts:\n  aec: {colour: red}\n", "parts.aec: unknown key `colour`"),
        ("parts:\n  a.b: {price_usd: 1}\n", "parts: part name 'a.b': expected one word"),
        ("aec: {price_usd: 1}\n", "unknown key `aec`"),
        ("", "(top level): expected a mapping with a parts: section, got an empty file"),
        ("- 1\n", "(top level): expected a mapping with a parts: section, got list"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_key(tmp_path, text, expected):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        read_parts_file(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path}: ") and expected in message, message
