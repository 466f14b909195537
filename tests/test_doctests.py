"""The examples in the public API's docstrings run, and show what they say."""

import doctest
import importlib
from pathlib import Path

import pytest

import trnsim

# every module whose docstrings hold an example (a ``>>>`` line): an example that no test runs goes stale
PACKAGE = Path(trnsim.__file__).parent
MODULES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    for path in PACKAGE.rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8") and path.name != "__main__.py"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
