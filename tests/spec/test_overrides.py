"""``--set KEY=VALUE``: values are typed literally (not as YAML 1.1), keys walk the document."""

import math

import pytest

from trnsim.errors import UsageError
from trnsim.spec.overrides import apply_overrides, parse_assignment, parse_value

# YAML 1.1 reads these as 90, 16, true, true, 15, 1000, infinity...: here they stay text
STRINGS = ["1:30", "0x10", "yes", "no", "on", "off", "y", "0o17", "1_000", ".inf", "-.inf", "inf", "nan"]
STRINGS += [".nan", "NaN", "1e999", "+3", "1.5.3", "0b101", "2024-01-01", "abc", "-", ".", "e5", "1e"]


@pytest.mark.parametrize("text", STRINGS)
def test_what_is_not_a_plain_number_stays_a_string(text):
    assert parse_value(text) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("16", 16),
        ("-3", -3),
        ("010", 10),  # decimal, not YAML 1.1's octal 8
        ("2.5", 2.5),
        ("1e-3", 0.001),
        ("1E3", 1000.0),
        (".5", 0.5),
        ("-.5", -0.5),
        ("2.", 2.0),
        ("1e300", 1e300),
        ("true", True),
        ("false", False),
        ("null", None),
        ("  8 ", 8),
        ("", ""),
    ],
)
def test_numbers_bools_and_null(text, value):
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_ints_stay_ints_and_floats_floats():
    assert isinstance(parse_value("16"), int) and isinstance(parse_value("16."), float)
    assert all(math.isfinite(parse_value(t)) for t in ("1e308", "-1e308"))


def test_an_integer_too_long_for_python_stays_a_string():
    digits = "9" * 5000  # int() refuses more than 4,300 digits
    assert parse_value(digits) == digits


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[A,B]", ["A", "B"]),
        ("[A, B, C]", ["A", "B", "C"]),
        ("[]", []),
        ("[1, 2.5, true, null]", [1, 2.5, True, None]),
        ("[1:30, 0x10, yes]", ["1:30", "0x10", "yes"]),
        ("[\"16\", 'x y']", ["16", "x y"]),
        ("{a: 1}", {"a": 1}),
        ("{a: 1, b: [x, 0x1], c: {d: .5}}", {"a": 1, "b": ["x", "0x1"], "c": {"d": 0.5}}),
        ("[a: 1]", [{"a": 1}]),
        ("[!!int 0x10]", ["0x10"]),  # tags do not bring YAML typing back
    ],
)
def test_flow_collections_follow_the_same_rules(text, value):
    assert parse_value(text) == value


@pytest.mark.parametrize(
    ("text", "value"), [('"1:30"', "1:30"), ("'yes'", "yes"), ('"16"', "16"), ('"a\\tb"', "a\tb")]
)
def test_quoted_values_are_strings(text, value):
    assert parse_value(text) == value


@pytest.mark.parametrize("text", ["[1, 2", "[1] [2]", '"open', "{a: 1", "[draft] notes"])
def test_malformed_flow_text_is_a_plain_string(text):
    assert parse_value(text) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[&a x, *a]", "aliases"),
        ("{a: 1, a: 2}", "appears twice"),
        ("{[1]: 2}", "a mapping key must be a plain value"),
        ("[" * 1000, "nests deeper"),
    ],
)
def test_flow_values_that_are_refused(text, message):
    with pytest.raises(UsageError, match=message):
        parse_value(text, "k")


def test_parse_assignment():
    assert parse_assignment(" latency.switch_ns = 50") == ("latency.switch_ns", 50)
    assert parse_assignment("name=a=b") == ("name", "a=b")
    for bad in ("novalue", "=3"):
        with pytest.raises(UsageError, match="expected KEY=VALUE"):
            parse_assignment(bad)


DOC = {
    "latency": {"switch_ns": 0.0},
    "torus": {"axes": [{"name": "x", "lanes": 4}, {"name": "y", "lanes": 4}]},
}


def test_dotted_keys_and_list_elements_by_index_or_name():
    edited = apply_overrides(DOC, ["latency.switch_ns=50", "torus.axes.y.lanes=8", "torus.axes.0.lanes=2"])
    assert edited["latency"]["switch_ns"] == 50
    assert [axis["lanes"] for axis in edited["torus"]["axes"]] == [2, 8]
    assert DOC["torus"]["axes"][0]["lanes"] == 4  # a copy: the original is untouched


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("nope.x=1", "no section 'nope' under the top level; keys there: latency, torus"),
        ("torus.axes.z.lanes=1", "no element 'z' in that list; expected an index 0..1 or one of x, y"),
        # Python would take -1 as the last element; the message offers 0..1, so -1 is refused
        ("torus.axes.-1.lanes=1", "no element '-1' in that list; expected an index 0..1 or one of x, y"),
        ("torus.axes.-0.lanes=1", "no element '-0' in that list"),
        ("torus.axes.2.lanes=1", "no element '2' in that list"),
        ("latency.switch_ns.x=1", "latency.switch_ns is a value, not a section"),
    ],
)
def test_key_errors_keep_their_messages(assignment, message):
    with pytest.raises(UsageError, match=message):
        apply_overrides(DOC, [assignment])


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0x10", "expected `int`, got `str`"), ("1:30", "expected `int`, got `str`"), ("yes", "expected `int`")],
)
def test_a_string_where_the_schema_wants_a_number_is_refused_with_the_key_path(cli, value, expected):
    result = cli("topo", "show", "nl16", "--set", f"torus.axes.x.lanes={value}")
    assert result.code == 2 and result.err.count("\n") == 1 and "Traceback" not in result.err
    assert "torus.axes[0].lanes" in result.err and expected in result.err
    assert f"--set torus.axes.x.lanes={value}" in result.err


def test_nan_and_inf_are_refused_by_the_schema_not_by_the_parser(cli):
    for value in ("nan", "inf", ".inf"):
        result = cli("topo", "show", "nl16", "--set", f"latency.switch_ns={value}")
        assert result.code == 2 and "latency.switch_ns: expected `float`, got `str`" in result.err


def test_numbers_through_the_cli(cli):
    assert cli("topo", "show", "nl16", "--set", "torus.axes.x.lanes=16").code == 0
    assert cli("topo", "show", "nl16", "--set", "latency.switch_ns=1e-3").code == 0
    assert cli("topo", "show", "nl16", "--set", "torus.axes.x.wrap=false").code == 0


def test_an_edit_keeps_its_origin_through_pickling_and_is_blamed_for_its_keys():
    import copy
    import pickle

    from trnsim.spec.overrides import Edit, blame

    edit = Edit("efficiency.classes={nvlink: 7}", "cal.yaml: edits[1]")
    for again in (pickle.loads(pickle.dumps(edit)), copy.deepcopy(edit)):  # sweep's workers get them pickled
        assert again == edit and again.origin == edit.origin
    edits = ["latency.step_ns=1", edit, "chip.lanes=3"]
    assert blame(edits, "efficiency.classes[...]") == "cal.yaml: edits[1] 'efficiency.classes={nvlink: 7}'"
    assert blame(edits, "efficiency.classesx") is None and blame(edits, "chip.lanes") is None
    assert blame([*edits, "efficiency.classes.nvlink=0.5"], "efficiency.classes.nvlink") is None  # --set last


def test_a_negative_zero_is_read_as_zero(cli):
    """step_ns: -0.0 is a valid 0; it must not print as 'alpha -0 us/step'."""
    import math

    from trnsim.topology import load_topology

    spec = load_topology("nl16", overrides=["latency.step_ns=-0.0", "latency.link_ns=-0.0"]).spec
    assert math.copysign(1, spec.latency.step_ns) == math.copysign(1, spec.latency.link_ns) == 1
    out = cli(
        "collective", "allreduce", "--sku", "nl16", "--sizes", "1G", "--set", "latency.step_ns=-0.0"
    ).out
    assert "alpha 0 us/step" in out and "alpha -0" not in out
