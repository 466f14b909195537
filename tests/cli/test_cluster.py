import json
import subprocess
import sys

import pytest

from tests.conftest import topology


def test_fabric_prints_the_switch_math_and_the_layers(cli):
    result = cli("cluster", "fabric", "--sku", "nl64", "--chips", "400000")
    assert result.code == 0, result.err
    assert "6,250 x 64 chips = 400,000 chips" in result.out
    assert "k^2/2" in result.out and "k^3/4" in result.out
    data = json.loads(cli("cluster", "fabric", "--sku", "nl64", "--chips", "400000", "--format", "json").out)
    assert data["domains"] == 6250 and data["chips"] == 400_000
    assert [layer["layer"] for layer in data["layers"]][0] == "ToR"
    # the published switch math (docs/sources.md#clos-math), from the command line
    data = json.loads(
        cli(
            "cluster",
            "fabric",
            "--sku",
            "nl64",
            "--domains",
            "2",
            "--fabric-tbit",
            "12.8",
            "--format",
            "json",
        ).out
    )
    assert (data["endpoints_2_layers"], data["endpoints_3_layers"]) == (8192, 524288)


def test_cluster_collective_answers_for_400k_chips(cli):
    result = cli(
        "cluster",
        "collective",
        "allreduce",
        "--sku",
        "nl64",
        "--domains",
        "6250",
        "--sizes",
        "1M,1G",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["ranks"] == 400_000 and len(data["rows"]) == 2
    row = data["rows"][1]
    assert 0 < row["busbw_gbps"] <= row["bound_busbw_gbps"]
    for op in ("allgather", "reducescatter", "alltoall"):
        again = cli("cluster", "collective", op, "--sku", "nl72x2", "--domains", "16", "--sizes", "64M")
        assert again.code == 0, (op, again.err)


def test_a_cluster_of_torus_domains_imports_neither_scipy_nor_networkx():
    """400,000 chips of nl64 answer from one domain's phases: their parts' labels and the torus's ring
    search are plain array and dict work, without scipy's or networkx's import (which cost a third
    of the run). A process of its own: the test process has imported both long before."""
    code = (
        "import sys\n"
        "from trnsim.cli.app import main\n"
        "try:\n"
        "    main(['cluster', 'collective', 'allreduce', '--sku', 'nl64', '--domains', '6250', '--format', 'json'])\n"
        "finally:\n"
        "    print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'networkx'}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and json.loads(done.stdout)["ranks"] == 400_000, done.stderr
    assert done.stderr == "[]\n"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["cluster", "fabric", "--sku", "nl64"], "--domains N or --chips N"),
        (["cluster", "fabric", "--domains", "4"], "--sku NAME or --topology FILE"),
        (["cluster", "fabric", "--sku", "nl72x2", "--domains", "2", "--tor-tbit", "12.8"], "a ToR needs 72 ports down"),
        (["cluster", "fabric", "--sku", "nl64", "--domains", "0"], "--domains"),
        (["cluster", "fabric", "--sku", "nl64", "--domains", "2", "--efa-routing", "random"], "--efa-routing"),
        (["cluster", "fabric", "--sku", "nvl72", "--domains", "2", "--set", "scale_out=null"], "--nic-gbit"),
        (["cluster", "fabric", "--sku", "nl64", "--domains", "2", "--port-gbit", "nan"], "--port-gbit"),
        (["cluster", "collective", "alltoall", "--sku", "nl64", "--domains", "2", "--inter-algo", "ring"], "pairwise"),
        (["cluster", "fabric", "--sku", "nl64", "--domains", "200", "--switch-layers", "2"], "--switch-layers 2"),
        (["cluster", "collective", "allreduce", "--sku", "nl64", "--domains", "2", "--intra-algo", "foo"], "error: --intra-algo 'foo': not an algorithm"),
    ],
)  # fmt: skip
def test_bad_cluster_input_is_one_line_and_exit_2(cli, args, words):
    result = cli(*args)
    assert result.code == 2 and words in result.err and "Traceback" not in result.err


def test_a_peer_without_scale_out_runs_with_a_nic_rate(cli):
    result = cli(
        "cluster",
        "fabric",
        "--sku",
        "nvl72",
        "--set",
        "scale_out=null",
        "--domains",
        "8",
        "--nic-gbit",
        "800",
        "--tor-tbit",
        "51.2",
        "--tors-per-rack",
        "8",
    )
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--tors-per-rack", "4"], "cannot reach 4 planes"),
        (["--port-gbit", "400"], "shared between chips"),
        (["--fabric-tbit", "0.1"], "--fabric-tbit 0.1"),
        (["--hop-us", "-1"], "--hop-us"),
    ],
)
def test_a_chip_needs_a_port_on_every_plane(cli, args, words):
    result = cli("cluster", "fabric", "--sku", "nl64", "--domains", "4", *args)
    assert result.code == 2 and words in result.err, result.err


def _cluster_json(cli, *args: str) -> dict:
    result = cli(
        "cluster", "collective", "allreduce", "--domains", "4", "--sizes", "1M,1G", *args, "--format", "json"
    )
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_cluster_collective_takes_routing_as_the_set_it_stands_for(cli):
    # --routing edits the domain's graph exactly as the routing fields of the file would (the ideal
    # composition routes on that graph; a runtime's model has no routing)
    ideal = ("--sku", "nl72x2", "--runtime", "ideal")
    default = _cluster_json(cli, *ideal)
    single = _cluster_json(cli, *ideal, "--routing", "single")
    by_set = _cluster_json(cli, *ideal, "--set", "routing.policy=single")
    assert single["rows"] == by_set["rows"] and single["routing"] == by_set["routing"] != default["routing"]
    # one path per flow inside the domain: the large all-reduce is slower (the NICs did not change)
    assert single["rows"][1]["busbw_gbps"] < default["rows"][1]["busbw_gbps"]
    assert single["nic_gbps"] == default["nic_gbps"]


def test_cluster_collective_applies_a_calibration_as_its_edits(cli):
    import yaml

    path = "examples/measurements/calibrations/n5-allgather-32r.yaml"
    with open(path, encoding="utf-8") as stream:
        fitted = yaml.safe_load(stream)["edits"]
    calibrated = _cluster_json(cli, "--sku", "trn1-nl16", "--calibration", path)
    by_set = _cluster_json(cli, "--sku", "trn1-nl16", *[arg for edit in fitted for arg in ("--set", edit)])
    assert calibrated["rows"] == by_set["rows"]
    assert calibrated["rows"] != _cluster_json(cli, "--sku", "trn1-nl16")["rows"]


def test_cluster_collective_fails_a_part_in_every_domain(cli):
    ideal = ("--sku", "nl72x2", "--runtime", "ideal")  # the composition on each domain's graph
    healthy = _cluster_json(cli, *ideal)
    chip = _cluster_json(cli, *ideal, "--fail", "chip:5")
    # the survivors of each domain take part; the fabric is the healthy domain's
    assert chip["ranks_per_domain"] == healthy["ranks_per_domain"] - 1
    assert chip["ranks"] == 4 * (healthy["ranks_per_domain"] - 1)
    assert (chip["layers"], chip["nic_gbps"]) == (healthy["layers"], healthy["nic_gbps"])
    assert chip["overrides"] == ["fail=chip:5"]
    # a cross-rack cable costs the in-domain phases (17% of all-reduce on collective), not the ranks
    cable = _cluster_json(cli, *ideal, "--fail", "cable:5")
    assert cable["ranks"] == healthy["ranks"]
    assert cable["rows"][1]["busbw_gbps"] < healthy["rows"][1]["busbw_gbps"]
    table = cli("cluster", "collective", "allreduce", "--sku", "nl72x2", "--domains", "4", "--sizes", "1G",
                "--fail", "cable:5")  # fmt: skip
    assert "every domain with --fail cable:5" in " ".join(table.out.split())


def test_peers_run_a_cluster_from_the_catalog_alone(cli):
    nvl72 = _cluster_json(cli, "--sku", "gb200-nvl72", "--domains", "20")
    assert nvl72["ranks"] == 1440 and nvl72["network"] == "infiniband" and nvl72["policy"] == "spray"
    efa = _cluster_json(cli, "--sku", "hgx-h100", "--domains", "2")
    assert efa["network"] == "efa" and efa["policy"] == "spray" and efa["ranks"] == 16
    ib = _cluster_json(cli, "--sku", "hgx-h100", "--domains", "2", "--set", "scale_out.network=infiniband")
    assert ib["network"] == "infiniband" and ib["policy"] == "spray"


def test_the_files_runtime_is_the_default_and_keeps_the_ideal_composition_beside(cli):
    args = ("--sku", "hgx-h100", "--domains", "2")
    default = _cluster_json(cli, *args)
    ideal = _cluster_json(cli, *args, "--runtime", "ideal")
    nccl = _cluster_json(cli, *args, "--runtime", "nccl")
    assert topology("hgx-h100").spec.runtime.default == "nccl"
    assert default == nccl and nccl["runtime"] == "nccl"
    assert ideal["runtime"] == "ideal" and "ideal_busbw_gbps" not in ideal["rows"][0]
    for mine, theirs in zip(nccl["rows"], ideal["rows"], strict=True):
        assert mine["ideal_busbw_gbps"] == theirs["busbw_gbps"]
        assert "/" in mine["algorithm"] and mine["busbw_gbps"] > 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--sku", "hgx-h100", "--runtime", "neuron"],
            "error: --runtime neuron on hgx-h100: its chips are GPUs",
        ),
        (["--sku", "trn2", "--runtime", "nccl"], "error: --runtime nccl on trn2-nl16"),
        (["--sku", "trn2", "--runtime", "xla"], "--runtime 'xla': expected one of ideal, nccl, neuron"),
    ],
)
def test_a_runtime_that_cannot_model_the_cluster_is_refused_in_one_line(cli, args, words):
    result = cli("cluster", "collective", "allreduce", "--domains", "2", "--sizes", "1M", *args)
    assert result.code == 2 and words in result.err and result.err.count("\n") == 1, result.err


def test_a_default_runtime_that_cannot_model_the_cluster_gives_way_to_the_ideal_with_a_note(cli):
    """nl72x2 defaults to neuron, whose model takes equal chips: with a chip failed in every domain
    the run is the ideal composition's, said on stderr; asked for by name, neuron is refused."""
    argv = ["cluster", "collective", "allreduce", "--sku", "nl72x2", "--domains", "4", "--sizes", "1M,1G"]
    argv += ["--fail", "chip:5"]
    given = cli(*argv, "--format", "json")
    assert given.code == 0, given.err
    assert given.err.startswith("note: trn3-nl72x2-gen1's default runtime neuron does not model this")
    assert given.err.count("\n") == 1 and "{" not in given.err
    ideal = cli(*argv, "--runtime", "ideal", "--format", "json")
    assert json.loads(given.out) == json.loads(ideal.out) and ideal.err == ""
    refused = cli(*argv, "--runtime", "neuron")
    assert refused.code == 2 and "error: --runtime neuron on trn3-nl72x2-gen1" in refused.err
    # a healthy nl72x2 runs its default
    healthy = _cluster_json(cli, "--sku", "nl72x2")
    assert healthy["runtime"] == "neuron"


@pytest.mark.parametrize("op", ["broadcast", "reduce", "gather", "scatter", "sendrecv", "alltoallv"])
def test_cluster_collective_composes_the_ops_of_issue_27(cli, op):
    """nl16's default runtime (neuron) models none of these but alltoallv's base, and not that one by
    name: it gives way to the ideal composition with a note; the header says the op's shape."""
    argv = ["cluster", "collective", op, "--sku", "nl16", "--domains", "4", "--sizes", "1M,1G"]
    result = cli(*argv, "--format", "json")
    assert result.code == 0, result.err
    assert result.err.startswith("note: trn2-nl16's default runtime neuron does not model this cluster")
    data = json.loads(result.out)
    assert data["ranks"] == 64 and data["runtime"] == "ideal" and len(data["rows"]) == 2
    assert data["op_shape"] == {"sendrecv": "64 pairs 0->1, 1->2, 2->3, 3->4, ... (each rank to the next)",
                                "alltoallv": "even counts"}.get(op, "root 0")  # fmt: skip
    for row in data["rows"]:
        assert 0 < row["busbw_gbps"] <= row["bound_busbw_gbps"]
    refused = cli(*argv, "--runtime", "neuron")
    assert refused.code == 2 and refused.err.count("\n") == 1, refused.err
    assert (
        f"error: --runtime neuron: its model covers allreduce, allgather, reducescatter, alltoall, not {op}"
        in refused.err
    )
