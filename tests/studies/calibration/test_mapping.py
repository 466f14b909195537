"""A measured run's ranks must map onto the system it is fitted to (trnsim.studies.calibration.mapping)."""

import pytest

from trnsim.errors import ConfigError, NotApplicableError, UsageError
from trnsim.model.engine import evaluate
from trnsim.studies.calibration.fit import fit
from trnsim.studies.calibration.mapping import AcrossDomains, check_mapping, domain_nodes, says_ranks_per_chip
from trnsim.studies.calibration.readers import parse_measurement
from trnsim.topology.groups import select_group
from trnsim.topology.load import load_topology

SIZES = [1 << k for k in range(10, 31, 4)]


def _nodes_by_graph(topology) -> int:
    """The nodes the built graph places chips in: (rack, node) of a switched fabric, the server of a
    torus (one when the chips carry none)."""
    chips = [topology.nodes[c] for c in topology.chips]
    if "node" in chips[0]:
        return len({(c["rack"], c["node"]) for c in chips})
    return len({c.get("server", 0) for c in chips})


@pytest.mark.parametrize("name", ["hgx-h100", "gb200-nvl72", "trn2-nl16", "trn2-nl64", "trn1-nl16"])
def test_a_domain_holds_the_nodes_its_graph_places_chips_in(name):
    topology = load_topology(name)
    assert domain_nodes(topology) == _nodes_by_graph(topology)


def _nccom(ranks: int, sku: str = "trn2-nl16", header: str = "") -> str:
    """An nccom-test log of what the model gives on ``ranks`` whole chips of ``sku``."""
    topology = load_topology(sku)
    rows = evaluate(topology, "allreduce", SIZES, select_group(topology, None, ranks)).rows
    lines = [
        header,
        f"# trnsim: op=allreduce ranks={ranks}",
        "size(B) count(elems) type time:avg(us) algbw(GB/s) busbw(GB/s)",
    ]
    lines += [f"{r.bytes} {r.count} fp32 {r.time_us:.4f} {r.algbw_gbps:.4f} {r.busbw_gbps:.4f}" for r in rows]
    return "\n".join(line for line in lines if line) + "\n"


def test_cores_are_not_fitted_as_chips_unless_the_ranks_per_chip_are_said():
    """A 16-rank nccom-test run on Trn2 (chips of one rank in the file) is refused; saying 1 rank per
    chip, or 4 (LNC=2: 4 chips of 4 ranks, with the rank bandwidth the file lacks), fits."""
    run = parse_measurement(_nccom(16), "lnc2.txt")
    with pytest.raises(UsageError, match="nccom-test counts NeuronCores.*ranks_per_chip"):
        fit(run, "trn2-nl16", None, [], None, ["step_ns"])
    assert fit(run, "trn2-nl16", None, [], None, ["step_ns"], ranks_per_chip=1).base_edits == ["chip.ranks=1"]
    four = fit(run, "trn2-nl16", None, ["chip.rank_gbps=870.4"], None, ["step_ns"], ranks_per_chip=4)
    assert four.base_edits[0] == "chip.ranks=4"
    modelled = load_topology("trn2-nl16", overrides=four.base_edits)
    assert len(set(modelled.chips_of(select_group(modelled, None, 16)))) == 16 // 4
    with pytest.raises(UsageError, match="not both"):
        fit(run, "trn2-nl16", None, ["chip.ranks=4"], None, ["step_ns"], ranks_per_chip=4)
    with pytest.raises(UsageError, match="not whole chips"):  # 16 ranks on chips of 3
        fit(run, "trn2-nl16", None, ["chip.rank_gbps=870.4"], None, ["step_ns"], ranks_per_chip=3)
    edited = fit(run, "trn2-nl16", None, ["chip.ranks=1"], None, ["step_ns"])  # an edit says it too
    assert edited.base_edits == ["chip.ranks=1"] and says_ranks_per_chip([" CHIP.RANKS = 2"])


def test_a_run_across_domains_is_refused_not_fitted():
    two_nodes = parse_measurement(_nccom(16, header="nccom-test -r 16 -N 2 allr"), "two.txt")
    assert two_nodes.nodes == 2
    with pytest.raises(AcrossDomains, match="spanned 2 nodes.*trn2-nl16 domain is 1 server"):
        fit(two_nodes, "trn2-nl16", None, [], None, ["step_ns"], ranks_per_chip=1)
    # an UltraServer is four servers on NeuronLink: two of them are one domain
    check_mapping(two_nodes, load_topology("trn2-nl64"), True, None)
    run = parse_measurement(_nccom(16), "one.txt")
    small = load_topology("hgx-h100")  # 8 ranks
    with pytest.raises(AcrossDomains, match="16 ranks and one hgx-h100 domain 8"):
        check_mapping(run, small, True, None)


def test_the_nodes_a_log_spans_are_read_and_must_agree():
    header = "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong"
    ranks = [
        f"#  Rank  {r} Group  0 Pid  1 on  host{r // 4} device  {r % 4} [0x00] NVIDIA H100" for r in range(8)
    ]
    rows = [
        f" {s} {s // 4} float sum -1 {s / 1e4:.2f} {s / (s / 1e4) / 1e3:.2f} {1.75 * s / (s / 1e4) / 1e3:.2f} 0"
        for s in (1 << 20, 1 << 24)
    ]
    text = "\n".join(["# trnsim: op=allreduce", *ranks, header, *rows]) + "\n"
    assert parse_measurement(text, "hosts.txt").nodes == 2
    with pytest.raises(ConfigError, match="nodes=2 here .* but nodes=1 was given"):
        parse_measurement(text, "hosts.txt", nodes=1)
    one_host = text.replace("host1", "host0")
    assert parse_measurement(one_host, "hosts.txt").nodes == 1
    bare = "\n".join([header, *rows]) + "\n"
    assert parse_measurement(bare, "bare.txt", ranks=8, op="allreduce").nodes is None  # not stated
    assert parse_measurement(bare, "bare.txt", ranks=8, op="allreduce", nodes=3).nodes == 3
    assert parse_measurement("# trnsim: nodes=2\n" + bare, "c.txt", ranks=8, op="allreduce").nodes == 2


def test_calibrate_fits_a_runtime_only_where_it_models_the_run():
    run = parse_measurement(_nccom(16), "one.txt")
    assert fit(run, "trn2-nl16", None, [], None, ["step_ns"], ranks_per_chip=1, runtime="ideal").rows
    # the nccl runtime models GPUs: a Trainium file has no runtime.nccl section
    with pytest.raises(NotApplicableError, match="runtime.nccl"):
        fit(run, "trn2-nl16", None, [], None, ["call_us"], ranks_per_chip=1, runtime="nccl")
