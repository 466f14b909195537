"""One option name, one meaning: renamed options, their old spellings, and a check over every command."""

import pytest

from trnsim.cli.app import command_tree
from trnsim.cli.compat import RENAMED

# (command, old name) -> a command line using the option, with {} where the name goes, and a value
CASES = {
    ("faults", "--policy"): "faults nl16 --op allreduce --sizes 1M {} chip --format json",
    ("faults", "--fit"): "faults nl16 --op allreduce --sizes 1M {} chip=1e4 --format json",
    ("cluster", "--policy"): "cluster fabric --sku nl64 --domains 2 {} hash --format json",
    ("cluster", "--layers"): "cluster fabric --sku nl64 --domains 2 {} 3 --format json",
    ("topo hops", "--metric"): "topo hops nl16 --matrix {} links --format csv",
}


def test_every_rename_has_a_case():
    assert set(CASES) == set(RENAMED)


@pytest.mark.parametrize("key", sorted(CASES))
def test_the_old_spelling_still_works_with_a_note(cli, key):
    old, new = key[1], RENAMED[key]
    line = CASES[key]
    current = cli(*line.format(new).split())
    assert current.code == 0, current.err
    assert current.err == ""
    former = cli(*line.format(old).split())
    assert former.code == 0, former.err
    assert former.out == current.out  # the same meaning
    assert former.err.splitlines() == [f"note: {old} is now {new} (same meaning; the old name is deprecated)"]
    value = line.split("{} ")[1].split()[0]
    both = cli(*line.format(old).split(), new, value)
    assert both.code == 2 and f"give {new} only" in both.err


def _options() -> dict[str, dict[str, str]]:
    """Every visible option name -> {command path: its help}."""
    root = command_tree()
    found: dict[str, dict[str, str]] = {}

    def walk(command, path):
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
            return
        for param in command.params:
            if type(param).__name__.endswith("Option") and not param.hidden:
                for name in param.opts:
                    found.setdefault(name, {})[" ".join(path)] = param.help or ""

    walk(root, [])
    return found


# names whose help is worded per command but whose meaning is one (checked by reading them)
SAME_MEANING = {
    "--algo": "the algorithm (compare, plot and report take one; sweep several; calibrate adds measured)",
    "--domains": "the number of scale-up domains a job or cluster spans",
    "--format": "the output format (topo export writes graph formats)",
    "--groups": "many disjoint groups running at once, sharing links",
    "--heatmap": "a picture of the link loads",
    "--mttf": "a failure-rate class's mean time to failure (design: for --faults)",
    "--mttr": "hours a failed part stays down (design: for --faults)",
    "--parts": "a parts file over the default prices and powers",
    "--op": "the collectives to run",
    "--ranks": "how many ranks run the collective (calibrate: how many the measured run used)",
    "--ranks-per-chip": "how many ranks share a chip, as chip.ranks (calibrate: on the measured run's chips)",
    "--runtime": "what the numbers model: ideal or a library's runtime (layout and calibrate take ideal only; cluster collective's across domains)",
    "--routing": "the scale-up routing policy (compare, sweep and plot take several)",
    "--output": "the file written",
    "-o": "the file written",
    "--seed": "the seed of a command's random draws (faults --random, design --search random:N)",
    "--sizes": "message sizes (faults defaults to 1 GiB, the others to a sweep)",
    "--sku": "a catalog system (compare, plot, report, sweep also take what-ifs)",
    "--title": "a picture's or report's title",
    "--topology": "a topology file",
}


def test_no_option_name_means_two_things():
    worded_apart = {name for name, uses in _options().items() if len(set(uses.values())) > 1}
    # a name outside the list whose help differs between commands is a second meaning: rename it
    assert worded_apart <= set(SAME_MEANING), sorted(worded_apart - set(SAME_MEANING))
    for (command, old), new in RENAMED.items():
        uses = _options()
        assert any(path.startswith(command) for path in uses[new]), (command, new)
        assert not any(path.startswith(command) for path in uses.get(old, {})), (command, old)
