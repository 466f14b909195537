"""nccom-test's replica-group files read into the topology's ranks: the inverse of what measure-plan
writes, the form of nccom-test's own page, and one clear line for a file that is neither."""

import json

import pytest

from trnsim.errors import UsageError
from trnsim.studies.measure_plan import measure_plan
from trnsim.topology.groups import select_groups
from trnsim.topology.load import load_topology
from trnsim.topology.replica_groups import read_replica_groups


@pytest.mark.parametrize(
    ("name", "pick"),
    [
        ("trn2-nl16", lambda chips: chips[:4]),  # 4 logical cores a chip: cores 0, 4, 8, 12
        ("trn2-nl64", lambda chips: chips[2:32:3]),  # across the first two instances
        ("trn1-nl16", lambda chips: chips[4:12]),  # two ranks a chip, each its core
        ("nl72x2", lambda chips: chips[1:16:2]),  # nodes of 4 chips, each instance its own host
    ],
)
def test_a_group_measure_plan_writes_reads_back_as_the_same_group(tmp_path, name, pick):
    topo = load_topology(name)
    group = pick(topo.chips)
    plan = measure_plan(topo, group, "allgather", [1 << 20], "bf16", "neuron")
    path = tmp_path / "replica-groups.json"
    path.write_text(plan.files["replica-groups.json"], encoding="utf-8")
    assert read_replica_groups(topo, path) == [group]
    assert select_groups(topo, str(path)) == [group]


def test_nccom_tests_own_example_names_consecutive_cores(tmp_path):
    """nccom-test.rst's stream_0_rg.json: 4 groups of 16 of 64 ranks. On one instance whose every
    logical core is a rank (chip.ranks = cores per chip / lnc), core c is rank c."""
    topo = load_topology("trn2-nl16", overrides=["chip.ranks=4", "chip.rank_gbps=1000"])
    assert topo.n_ranks == 64
    path = tmp_path / "stream_0_rg.json"
    path.write_text(json.dumps({"replica_groups": [[list(range(k, k + 16)) for k in range(0, 64, 16)]]}))
    assert select_groups(topo, str(path)) == [topo.chips[k : k + 16] for k in range(0, 64, 16)]
    plain = tmp_path / "plain.json"  # without nccom-test's wrapping, on a system without NeuronCores
    plain.write_text("[[0, 1], [2, 3], [4, 5], [6, 7]]")
    h100 = load_topology("h100")
    assert select_groups(h100, str(plain)) == [h100.chips[k : k + 2] for k in range(0, 8, 2)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[0, 4", "not JSON"),
        ('{"groups": [[0, 4]]}', "expected an object with one key, replica_groups"),
        ('[[0, 4], [8, "12"]]', "expected nccom-test's replica groups, lists of ranks"),
        ('{"replica_groups": [[[0, 4]], [[8, 12]]]}', "2 lists of replica groups; expected one"),
        ("[[0, 1]]", "rank 1 is logical NeuronCore 1 of chip x0.y0, which trn2-nl16 models as 1 rank"),
        ("[[0, 640]]", "rank 640; nccom-test numbers trn2-nl16's logical NeuronCores 0..63"),
        ("[[0, 4, 0]]", "replica group 0 names rank 0 twice"),
    ],
)
def test_a_bad_file_gets_one_line_naming_it(tmp_path, text, expected):
    path = tmp_path / "groups.json"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        select_groups(load_topology("trn2-nl16"), str(path))
    message = caught.value.render()
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message
