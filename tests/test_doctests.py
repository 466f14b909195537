"""The examples in the public API's docstrings run, and show what they say."""

import doctest
import importlib

import pytest

MODULES = [
    "trnsim.routing.mix",
    "trnsim.routing.symmetry",
    "trnsim.topology.synthetic",
    "trnsim.model.bounds.families",
    "trnsim.model.bounds.lower",
    "trnsim.model.cluster.compose",
    "trnsim.model.cluster.inter",
    "trnsim.model.concurrent.prepare",
    "trnsim.model.concurrent.run",
    "trnsim.model.cost",
    "trnsim.model.engine",
    "trnsim.model.router",
    "trnsim.model.cluster.limits",
    "trnsim.model.optimum.alltoall",
    "trnsim.model.optimum.cuts",
    "trnsim.model.optimum.graph",
    "trnsim.model.optimum.lengths",
    "trnsim.model.optimum.refine",
    "trnsim.model.optimum.solve",
    "trnsim.model.optimum.symmetry",
    "trnsim.model.optimum.twins",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
