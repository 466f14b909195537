"""``trnsim faults`` takes systems and sizes as the other commands do."""

import json


def _json(cli, *args: str) -> dict:
    result = cli("faults", *args, "--op", "allreduce", "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_sku_option_names_a_system_as_the_argument_does(cli):
    assert _json(cli, "--sku", "nl16", "--sizes", "1M") == _json(cli, "nl16", "--sizes", "1M")
    both = _json(cli, "nl16", "--sku", "nl64", "--sizes", "1M")
    assert [system["system"] for system in both["systems"]] == ["trn2-nl16", "trn2-nl64"]


def test_a_size_sweep_is_the_list_it_stands_for(cli):
    swept = _json(cli, "nl16", "-b", "1M", "-e", "4M", "-f", "2")
    assert swept["sizes"] == [1 << 20, 2 << 20, 4 << 20]
    assert swept == _json(cli, "nl16", "--sizes", "1M,2M,4M")
    assert _json(cli, "nl16")["sizes"] == [1 << 30]  # the default stays one size, 1 GiB
    mixed = cli("faults", "nl16", "-b", "1M", "--sizes", "1G")
    assert mixed.code == 2 and "not both" in mixed.err
    tiny = cli("faults", "nl16", "-b", "1", "-e", "1")
    assert tiny.code == 2 and tiny.err.startswith("error: -b 1 -e 1:")
