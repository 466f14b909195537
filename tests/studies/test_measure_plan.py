"""The benchmark a prediction is measured with: NeuronCores numbered as nccom-test numbers them,
NCCL's pick pinned per size, sizes as one sweep where they are one."""

import json

import pytest

from trnsim.errors import UsageError
from trnsim.model.backend import OneGroup
from trnsim.model.runtime import apply_runtime
from trnsim.studies.measure_plan import measure_plan, size_arguments, with_prediction
from trnsim.topology.load import load_topology


def _cores(plan) -> list[int] | None:
    text = plan.files.get("replica-groups.json")
    return None if text is None else json.loads(text)["replica_groups"][0][0]


def test_whole_chips_take_every_logical_cores_first_rank():
    topo = load_topology("trn2-nl16")
    facts = topo.spec.runtime.neuron
    logical = facts.cores_per_chip // facts.lnc  # from the file: 8 cores at LNC=2
    plan = measure_plan(topo, topo.chips[:5], "allgather", [1 << 20], "bf16", "neuron")
    assert _cores(plan) == [logical * i for i in range(5)]
    assert f"-r {16 * logical} " in plan.commands[0] and " -N " not in plan.commands[0]
    assert plan.commands[0].endswith("all_gather") and "-d bf16" in plan.commands[0]
    assert plan.cores_per_chip_used == 1


def test_a_group_in_a_later_instance_is_numbered_within_the_instances_it_touches():
    topo = load_topology("trn2-nl64")
    servers = {topo.nodes[c]["server"] for c in topo.chips}
    in_second = [c for c in topo.chips if topo.nodes[c]["server"] == sorted(servers)[1]]
    facts = topo.spec.runtime.neuron
    logical = facts.cores_per_chip // facts.lnc
    plan = measure_plan(topo, in_second[2:6], "allreduce", [1 << 30], "float", "neuron")
    # one instance touched: its cores start at 0, chip k of the instance at k x logical
    assert _cores(plan) == [logical * k for k in range(2, 6)]
    assert f"-r {len(in_second) * logical} " in plan.commands[0]
    two = measure_plan(topo, topo.chips[:32], "allreduce", [1 << 30], "float", "neuron")
    assert " -N 2 " in two.commands[0] and "--hosts HOST0 HOST1" in two.commands[0]


def test_every_core_of_the_instance_needs_no_replica_group():
    topo = load_topology("trn2-nl16", overrides=["chip.ranks=4", "chip.rank_gbps=1000"])
    plan = measure_plan(topo, topo.chips, "allreduce", [1 << 20], "float", "neuron")
    assert plan.files == {} and "--custom-replica-groups" not in plan.commands[0]


def test_nccl_commands_pin_the_tuners_pick_for_exactly_their_sizes():
    topo = load_topology("hgx-h100")
    sizes = [8, 1 << 16, 1 << 20, 1 << 26, 1 << 30]
    backend = OneGroup(topo, topo.chips)
    plan = with_prediction(backend, "allreduce", sizes, "float", "nccl")
    expected = apply_runtime(topo, backend.evaluate("allreduce", sizes), "nccl")
    picks = {row.bytes: row.algorithm.rstrip("*") for row in expected.rows}
    covered = set()
    for command in plan.commands:
        words = command.split()
        algo = next(w.split("=")[1] for w in words if w.startswith("NCCL_ALGO="))
        proto = next(w.split("=")[1] for w in words if w.startswith("NCCL_PROTO="))
        low, high = int(words[words.index("-b") + 1]), int(words[words.index("-e") + 1])
        for size in (s for s in picks if low <= s <= high):
            assert f"{algo}/{proto}".lower() == picks[size], size
            covered.add(size)
    assert covered == set(picks)


def test_sizes_are_one_sweep_only_when_they_are_a_whole_geometric_series():
    assert size_arguments([1 << 10, 1 << 12, 1 << 14]) == ["-b 1024 -e 16384 -f 4"]
    assert size_arguments([5]) == ["-b 5 -e 5"]
    assert size_arguments([8, 16, 40]) == ["-b 8 -e 8", "-b 16 -e 16", "-b 40 -e 40"]


def test_what_cannot_be_written_is_refused():
    with pytest.raises(UsageError, match="xla"):
        measure_plan(load_topology("tpu-v5p-4x4x8"), ["z0.x0.y0"], "allreduce", [8], "float", "xla")
    nvl72 = load_topology("gb200-nvl72")
    with pytest.raises(UsageError, match="whole nodes"):
        measure_plan(nvl72, nvl72.chips[:6], "allreduce", [8], "float", "nccl")
    with pytest.raises(UsageError, match="float64|double|fp64"):
        measure_plan(load_topology("trn2-nl16"), ["x0.y0", "x1.y0"], "allreduce", [8], "double", "neuron")


def test_a_permute_writes_its_pairs_in_neuroncores_as_nccom_tests_example_nests_them():
    from trnsim.collectives.arguments import Arguments

    topo = load_topology("trn2-nl16")
    pairs = ((0, 1), (1, 0), (2, 3), (3, 3))
    plan = measure_plan(
        topo, topo.chips[:4], "permute", [1 << 25], "uint8", "neuron", arguments=Arguments(pairs=pairs)
    )
    cores = _cores(plan)
    assert json.loads(plan.files["pairs.json"]) == {
        "src_target_pairs": [[[cores[a], cores[b]] for a, b in pairs]]
    }
    assert "--custom-src-target-pairs pairs.json" in plan.commands[0] and plan.commands[0].endswith("permute")


def test_nccl_tests_takes_the_root_and_each_tool_refuses_the_ops_it_lacks():
    from trnsim.collectives.arguments import Arguments

    h100 = load_topology("hgx-h100")
    plan = measure_plan(
        h100, h100.chips, "broadcast", [1 << 20], "float", "nccl", arguments=Arguments(root=3)
    )
    assert "./build/broadcast_perf" in plan.commands[0] and plan.commands[0].endswith("-r 3")
    allgather = measure_plan(
        h100, h100.chips, "allgather", [1 << 20], "float", "nccl", arguments=Arguments(root=3)
    )
    assert " -r " not in allgather.commands[0]  # the root is a rooted op's alone
    with pytest.raises(UsageError, match="nccom-test has no broadcast"):
        measure_plan(
            load_topology("trn2-nl16"),
            load_topology("trn2-nl16").chips,
            "broadcast",
            [1 << 20],
            "float",
            "neuron",
        )
    with pytest.raises(UsageError, match="nccl-tests has no permute"):
        measure_plan(h100, h100.chips, "permute", [1 << 20], "float", "nccl")
    with pytest.raises(UsageError, match="takes no pairs"):
        measure_plan(
            h100, h100.chips, "sendrecv", [1 << 20], "float", "nccl", arguments=Arguments(pairs=((0, 5),))
        )


def test_an_op_the_runtime_does_not_model_is_predicted_by_the_ideal_model_and_says_so():
    from trnsim.model.engine import evaluate

    topo = load_topology("trn2-nl16")
    plan = with_prediction(OneGroup(topo, topo.chips[:4]), "sendrecv", [1 << 20, 1 << 30], "float", "neuron")
    ideal = evaluate(topo, "sendrecv", [1 << 20, 1 << 30], topo.chips[:4])
    assert plan.priced_by == "ideal" and any("prediction is the ideal's" in note for note in plan.notes)
    assert [r.time_us for r in plan.predicted] == [r.time_us for r in ideal.rows]
