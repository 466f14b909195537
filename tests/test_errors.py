"""Errors speak the library's terms: a parameter in braces, shown as the caller names it."""

import pickle

import pytest

from trnsim.errors import PARAMETERS, ConfigError, ParameterError, TrnsimError, UsageError


def _flag(parameter: str) -> str:
    return "--" + parameter.replace("_", "-")


def test_a_parameter_is_shown_as_itself_or_as_the_caller_names_it():
    error = UsageError("give {skew} or {traffic}, not both")
    assert str(error) == "give skew or traffic, not both"
    assert error.render(_flag) == "give --skew or --traffic, not both"


def test_only_parameters_are_replaced_not_a_values_own_braces():
    error = UsageError("group '{a}' of {groups} and {nvlink: 7} in {mine}", names="mine")
    assert "{a}" in str(error) and "{nvlink: 7}" in str(error)  # not parameters: shown as given
    assert error.render(_flag) == "group '{a}' of --groups and {nvlink: 7} in --mine"


def test_a_parameter_error_starts_with_the_parameter_and_its_value():
    error = ParameterError("expected spray or hash", "efa_routing", "'x'")
    assert str(error) == "efa_routing 'x': expected spray or hash"
    assert error.render(_flag) == "--efa-routing 'x': expected spray or hash"
    assert error.parameters == ("efa_routing",) and error.value == "'x'"
    both = ParameterError("change either", ("port_gbit", "tors_per_rack"))
    assert both.render(_flag) == "--port-gbit/--tors-per-rack: change either"


def test_an_error_inside_another_keeps_what_it_names():
    inner = ParameterError("no link joins a and b", "fail", "'link:a,b'")
    outer = ConfigError(inner.within("variant 'nl16:fail=link:a,b'"))
    assert outer.render(_flag) == "variant 'nl16:fail=link:a,b': --fail 'link:a,b': no link joins a and b"
    assert isinstance(inner.within("x"), ParameterError)  # the same type, for the exit code and catchers


@pytest.mark.parametrize(
    "error",
    [
        UsageError("give {group} or {ranks}"),
        ParameterError("bad", "alpha_us", "-1"),
        TrnsimError("{mine} is wrong", names="mine").within("variant 'a'"),
    ],
)
def test_an_error_survives_pickling_as_a_sweeps_worker_sends_it(error):
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and again.render(_flag) == error.render(_flag)
    assert str(again) == str(error)


def test_the_parameters_are_identifiers():
    assert all(name.isidentifier() for name in PARAMETERS) and len(set(PARAMETERS)) == len(PARAMETERS)
