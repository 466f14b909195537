"""Every output pasted into the README or a documentation page is what its command prints today.

A page marks a pasted output with the command that printed it (``<!-- output: trnsim ... -->`` before
it, ``<!-- end output -->`` after); the test runs that command and compares, character for character
but for trailing spaces and the checkout's own path. A change to the model that moves a number shows
here, naming the page: paste the new output after checking that the text around it still holds.
"""

import shlex

import pytest

from tests.docs.pages import exit_code, outputs, printed, unfence

OUTPUTS = outputs()


def test_the_pages_paste_outputs():
    assert len(OUTPUTS) >= 20  # the mechanism is in use (a broken marker pattern would find none)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A folder like the checkout (its examples, topologies and benchmarks at hand, an empty docs/),
    where the commands' output files land; tables 100 columns wide."""
    from tests.docs.pages import ROOT

    for name in ("examples", "topologies", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


@pytest.mark.parametrize(
    ("page", "stream", "command", "pasted"),
    OUTPUTS,
    ids=[f"{page}: {command}"[:100] for page, _, command, _ in OUTPUTS],
)
def test_pasted_output_is_what_the_command_prints(cli, checkout, page, stream, command, pasted):
    args = shlex.split(command, comments=True)
    result = cli(*args[1:])
    assert result.code == exit_code(command), (page, command, result.err[-500:])
    shown = result.out if stream == "output" else result.err
    assert unfence(pasted) == printed(shown), f"{page}: the {stream} of `{command}` changed"
