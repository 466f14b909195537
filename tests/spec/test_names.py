"""The catalog's names: a name or alias line read without the YAML parser means what YAML reads."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trnsim.spec.names import _value, catalog_dir, catalog_files, find_sku
from trnsim.yamlio import load_text

WORDS = st.text("abcxyzAZ019._+-", min_size=1, max_size=8)
SPECIAL = st.sampled_from(
    ["true", "False", "null", "NULL", "yes", "off", "on", "no", "y", "inf", "nan", "x1", "e9"]
)
SPACE = st.sampled_from(["", " ", "  ", "\t"])


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(st.one_of(WORDS, SPECIAL), max_size=4),
    flow=st.booleans(),
    pads=st.tuples(SPACE, SPACE),
    comma=st.booleans(),
)
def test_a_line_means_what_yaml_reads(items, flow, pads, comma):
    if flow:
        text = f"{pads[0]}[{', '.join(items)}{',' if comma and items else ''}]{pads[1]}"
    elif items:
        text = f"{pads[0]}{items[0]}{pads[1]}"
    else:
        return
    try:
        expected = load_text(text, "line")
    except Exception:  # noqa: BLE001 - what YAML refuses is not for the fast path to accept
        with pytest.raises(Exception):  # noqa: B017
            _value(text, "line")
        return
    assert _value(text, "line") == expected


def test_every_catalog_name_resolves_to_its_file():
    from trnsim.spec.catalog import read_document

    for path in catalog_files():
        document = read_document(path)
        for name in [document["name"], *document.get("aliases", [])]:
            assert find_sku(name) == path
    assert catalog_dir().is_dir()
