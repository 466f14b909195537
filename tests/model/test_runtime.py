"""The runtime layer: ideal is the engine itself; nccl is NCCL's tuner on the system the graph holds."""

import math

import pytest

from tests.model.systems import load
from trnsim.errors import ConfigError, NotApplicableError, ParameterError
from trnsim.model.backend import OneGroup
from trnsim.model.runtime import RUNTIMES, RuntimeRow, apply_runtime, check_runtime, runtime_of
from trnsim.model.runtimes.nccl import predict, single_domain_system
from trnsim.model.runtimes.nccl_chunking import nvls_fill_us
from trnsim.model.runtimes.nccl_domain import nvlinks_per_gpu
from trnsim.topology import load_topology

SIZES = [8, 4096, 1 << 20, 48 << 20, 1 << 30]


def nvswitch_file(
    gpus=8, switches=4, lanes_per_link=6, lane_gbps=12.5, nvlink_gbps=25.0, cc=90, nvls=True, reduction=True
) -> dict:
    """``gpus`` GPUs on one server, each with ``lanes_per_link`` lanes to each of ``switches`` switches,
    and the facts NCCL needs."""
    slots = [str(i) for i in range(gpus)]
    lanes = switches * lanes_per_link
    return {
        "name": f"nvswitch{gpus}",
        "kind": "switched",
        "chip": {"name": "gpu", "lanes": lanes, "lane_gbps": lane_gbps},
        "latency": {"step_ns": 800.0, "link_ns": 30.0, "relay_ns": 500.0, "switch_ns": 150.0},
        "switch_models": {"sw": {"reduction": reduction}},
        "switched": {
            "racks": 1,
            "nodes_per_rack": 1,
            "node_label": "server",
            "slots": slots,
            "switch_fabric": {
                "planes": [{"name": "nvlink", "slots": slots}],
                "switches_per_plane": switches,
                "switches_per_tray": 0,
                "switch_model": "sw",
                "lanes_per_link": lanes_per_link,
                "backplane_lanes": lanes,
                "active_lanes": lanes,
                "cls": "nvlink",
            },
        },
        "routing": {"policy": "ecmp", "relay": False},
        "efficiency": {"default": 0.9},
        "runtime": {
            "default": "ideal",
            "nccl": {"compute_capability": cc, "nvls": nvls, "nvlink_gbps": nvlink_gbps},
        },
    }


def _ideal(topology, op="allreduce", sizes=SIZES, group=None):
    return OneGroup(topology, list(group or topology.chips)).evaluate(op, sizes)


def test_ideal_is_the_evaluation_itself(tmp_path):
    topology = load(nvswitch_file(), tmp_path)
    ideal = _ideal(topology)
    before = [row.as_dict() for row in ideal.rows]
    assert apply_runtime(topology, ideal, "ideal") is ideal
    assert apply_runtime(topology, ideal, None) is ideal  # the file's default
    assert [row.as_dict() for row in ideal.rows] == before


# issue 25: each catalog family names the library that runs its collectives
FAMILY_RUNTIME = {"hgx-": "nccl", "gb200-": "nccl", "trn": "neuron", "tpu": "xla", "ualink-": "ideal"}


def test_every_catalog_file_defaults_to_its_own_library_which_models_the_whole_system():
    from trnsim.spec.catalog import catalog_files

    seen = set()
    for path in catalog_files():
        (family,) = [prefix for prefix in FAMILY_RUNTIME if path.stem.startswith(prefix)]
        topology = load_topology(topology=path)
        default = runtime_of(topology)
        assert default == FAMILY_RUNTIME[family], path.name
        check_runtime(topology, topology.chips, default)  # it prices the file's default group
        seen.add(default)
    assert seen == set(RUNTIMES)


@pytest.mark.parametrize("op", ["allreduce", "allgather", "reducescatter", "alltoall"])
@pytest.mark.parametrize(
    ("cc", "switches", "lanes_per_link", "lane_gbps", "nvlink_gbps"),
    [(90, 4, 6, 12.5, 25.0), (100, 2, 18, 25.0, 50.0), (90, 3, 4, 12.5, 25.0)],
)
def test_nccl_is_nccls_tuner_on_the_system_the_file_describes(
    tmp_path, op, cc, switches, lanes_per_link, lane_gbps, nvlink_gbps
):
    document = nvswitch_file(8, switches, lanes_per_link, lane_gbps, nvlink_gbps, cc)
    topology = load(document, tmp_path)
    # the NVLinks per GPU from the file's own numbers: every lane to every switch, over one NVLink
    links = switches * lanes_per_link * lane_gbps / nvlink_gbps
    assert links == int(links)
    system = single_domain_system(cc, 8, int(links), nvls=True)
    ideal = _ideal(topology, op)
    result = apply_runtime(topology, ideal, "nccl")
    assert result.runtime == "nccl" and result.ideal is ideal
    assert [row.bytes for row in result.rows] == [row.bytes for row in ideal.rows]
    factor = (2 if op == "allreduce" else 1) * 7 / 8  # nccl-tests' busbw factor for 8 ranks
    for row, base in zip(result.rows, ideal.rows, strict=True):
        assert isinstance(row, RuntimeRow)
        pick = predict(system, op, row.bytes).pick
        assert row.algorithm == f"{pick.algorithm}/{pick.protocol}"
        # NCCL's expected time, and for NVLS its pipeline fill: (16 CTAs on Hopper, 24 on Blackwell)
        # x the NVLS heads pipelines, each waiting two chunk times at its share of the bandwidth
        fill = 0.0
        if pick.algorithm == "nvls":
            ops = (16 if cc < 100 else 24) * system.nvls.n_channels
            fill = nvls_fill_us(row.bytes, ops, pick.model_bw_gbps)
            assert 0 < fill <= 2 * (row.bytes + ops) / (1000 * pick.model_bw_gbps)
        assert math.isclose(row.time_us, pick.time_us + fill, rel_tol=1e-12)
        if fill == 0.0:
            assert math.isclose(row.busbw_gbps, pick.busbw_gbps, rel_tol=1e-9)
        assert math.isclose(row.busbw_gbps, row.bytes / (row.time_us * 1e3) * factor, rel_tol=1e-9)
        assert (row.ideal_time_us, row.ideal_busbw_gbps, row.ideal_algorithm) == (
            base.time_us,
            base.busbw_gbps,
            base.algorithm,
        )
        # the fabric's bound is the ideal's; its share of the runtime's time follows
        assert row.bound_busbw_gbps == base.bound_busbw_gbps
        assert math.isclose(row.efficiency * row.time_us, base.efficiency * base.time_us, rel_tol=1e-9)


def test_nccl_on_part_of_the_domain_counts_the_group(tmp_path):
    topology = load(nvswitch_file(), tmp_path)
    group = topology.chips[:4]
    result = apply_runtime(topology, _ideal(topology, group=group), "nccl")
    system = single_domain_system(90, 4, 12, nvls=True)
    for row in result.rows:
        assert math.isclose(row.time_us, predict(system, "allreduce", row.bytes).pick.time_us, rel_tol=1e-12)


def test_nvls_needs_the_fact_and_switches_that_reduce(tmp_path):
    for nvls, reduction in [(True, False), (False, True)]:
        topology = load(nvswitch_file(nvls=nvls, reduction=reduction), tmp_path)
        result = apply_runtime(topology, _ideal(topology), "nccl")
        assert not any(row.algorithm.startswith("nvls") for row in result.rows)
        assert "no NVLS" in result.runtime_model
    topology = load(nvswitch_file(), tmp_path)
    assert apply_runtime(topology, _ideal(topology), "nccl").rows[-1].algorithm == "nvls/simple"


def _one_line_refusal(call, *words):
    with pytest.raises(NotApplicableError) as caught:
        call()
    text = str(caught.value)
    assert "\n" not in text and text.startswith("runtime nccl on ")
    for word in words:
        assert word in text
    return text


def test_a_file_without_the_facts_is_refused_in_one_line(tmp_path):
    document = nvswitch_file()
    del document["runtime"]
    topology = load(document, tmp_path)
    ideal = _ideal(topology, sizes=[1 << 20])
    _one_line_refusal(lambda: apply_runtime(topology, ideal, "nccl"), "runtime.nccl", "compute_capability")
    _one_line_refusal(lambda: check_runtime(topology, topology.chips, "nccl"), "runtime.nccl")
    assert apply_runtime(topology, ideal, "ideal") is ideal


def test_what_the_one_domain_model_does_not_cover_is_refused(tmp_path):
    # NVLinks that are not whole: 4 x 6 x 12.5 = 300 GB/s over 40 GB/s links
    topology = load(nvswitch_file(nvlink_gbps=40.0), tmp_path)
    _one_line_refusal(lambda: check_runtime(topology, topology.chips, "nccl"), "whole number", "40 GB/s")
    # GPUs joined directly, not through switches
    facts = "runtime={nccl: {compute_capability: 90, nvls: false, nvlink_gbps: 25}}"
    torus = load_topology("nl16", overrides=[facts, "ranges={}"])  # its ranges name runtime.neuron
    _one_line_refusal(lambda: check_runtime(torus, torus.chips, "nccl"), "not to a switch")
    # a failed lane leaves one GPU with less NVLink bandwidth than the others
    topology = load(nvswitch_file(), tmp_path, ["fail=lanes:0:6"])
    _one_line_refusal(lambda: check_runtime(topology, topology.chips, "nccl"), "differs")
    # one GPU
    topology = load(nvswitch_file(), tmp_path)
    _one_line_refusal(lambda: check_runtime(topology, topology.chips[:1], "nccl"), "2 to 72")


def test_runtime_names():
    topology = load_topology("h100")
    assert RUNTIMES == ("ideal", "nccl", "neuron", "xla")
    assert runtime_of(topology) == "nccl"  # the file's runtime.default
    assert runtime_of(load_topology("ualink-72")) == "ideal"
    assert runtime_of(topology, " NCCL ") == "nccl"
    with pytest.raises(ParameterError) as caught:
        runtime_of(topology, "mpi")
    assert (
        caught.value.render(lambda name: f"--{name}")
        == "--runtime 'mpi': expected one of ideal, nccl, neuron, xla"
    )


@pytest.mark.parametrize("sku", ["gb200-nvl72", "hgx-h100", "hgx-b200"])
def test_the_nvidia_peers_have_18_nvlinks_per_gpu(sku):
    # docs/sources.md#nvlink: H100/H200, B200 and GB200 have 18 NVLinks per GPU
    topology = load_topology(sku)
    facts = topology.spec.runtime.nccl
    assert nvlinks_per_gpu(topology, topology.chips, facts.nvlink_gbps) == 18
    assert facts.nvls and topology.spec.runtime.default == "nccl"


def test_a_default_runtime_needs_its_facts(tmp_path):
    document = nvswitch_file()
    document["runtime"] = {"default": "nccl"}
    with pytest.raises(ConfigError) as caught:
        load(document, tmp_path)
    assert "runtime.default" in str(caught.value) and "runtime.nccl" in str(caught.value)
    document["runtime"] = {"default": "mpi"}
    with pytest.raises(ConfigError) as caught:
        load(document, tmp_path)
    assert "expected one of ideal, nccl, neuron, xla" in str(caught.value)
    document = nvswitch_file()
    document["runtime"]["default"] = "nccl"
    topology = load(document, tmp_path)
    assert runtime_of(topology) == "nccl"
    assert isinstance(apply_runtime(topology, _ideal(topology, sizes=[1 << 20]), None).rows[0], RuntimeRow)


@pytest.mark.parametrize("call_us", [0.0, 2.3, 7.5])
def test_nccl_with_a_call_cost_keeps_the_pick_and_prices_its_bandwidth(tmp_path, call_us):
    document = nvswitch_file()
    document["runtime"]["nccl"]["call_us"] = call_us
    topology = load(document, tmp_path)
    system = single_domain_system(90, 8, 12, nvls=True)  # 4 switches x 6 lanes x 12.5 GB/s / 25
    ideal = _ideal(topology)
    result = apply_runtime(topology, ideal, "nccl")
    assert f"call {call_us:g} us" in result.runtime_model
    for row, base in zip(result.rows, ideal.rows, strict=True):
        pick = predict(system, "allreduce", row.bytes).pick  # NCCL's own choice, unchanged
        # its bandwidth term stays; LL's latency gives way to the call cost, the others' stays unless
        # the call costs more
        bandwidth_us = row.bytes / (1000 * pick.model_bw_gbps)
        fixed = call_us if pick.protocol == "ll" else max(call_us, pick.latency_us)
        nvls = pick.algorithm == "nvls"
        fill = nvls_fill_us(row.bytes, 16 * system.nvls.n_channels, pick.model_bw_gbps) if nvls else 0.0
        # no runtime beats the fabric's bandwidth bound: below it the time is the bound's, marked *
        bound_us = base.efficiency * base.time_us
        held = fixed + bandwidth_us + fill < bound_us
        assert row.algorithm == f"{pick.algorithm}/{pick.protocol}" + ("*" if held else "")
        assert math.isclose(row.time_us, max(fixed + bandwidth_us + fill, bound_us), rel_tol=1e-9)
    # at 8 B NCCL picks LL and the time is the call cost (plus nanoseconds; no less than the bound);
    # at 1 GiB NVLS, its own time
    floor = max(call_us, ideal.rows[0].efficiency * ideal.rows[0].time_us)  # held to the bound at 0
    assert result.rows[0].algorithm.rstrip("*").endswith("/ll") and result.rows[0].time_us - floor < 0.01
    big = predict(system, "allreduce", result.rows[-1].bytes).pick
    assert big.protocol == "simple"
    big_fill = nvls_fill_us(result.rows[-1].bytes, 16 * system.nvls.n_channels, big.model_bw_gbps)
    assert math.isclose(
        result.rows[-1].time_us, max(call_us, big.latency_us) + big.time_us - big.latency_us + big_fill
    )


def test_the_catalogs_nccl_cost_per_call_is_nccls_own_latency():
    # default NCCL: no tuned call cost in the catalog; at 8 B the time is NCCL's expected LL time
    from trnsim.model.runtimes.nccl_domain import nccl_system_of

    for sku in ("hgx-h100", "hgx-b200", "gb200-nvl72"):
        topology = load_topology(sku)
        assert topology.spec.runtime.nccl.call_us is None
        ideal = _ideal(topology, sizes=[8])
        pick = predict(nccl_system_of(topology, topology.chips), "allreduce", 8).pick
        time_us = apply_runtime(topology, ideal, "nccl").rows[0].time_us
        if pick.algorithm == "nvls":  # plus a fill of two one-byte shares per pipeline: nanoseconds
            assert pick.time_us < time_us <= pick.time_us + 0.01
        else:
            assert time_us == pick.time_us


def test_forced_choices_narrow_nccl_as_its_environment_does(tmp_path):
    topology = load(nvswitch_file(), tmp_path)
    system = single_domain_system(90, 8, 12, nvls=True)
    ideal = _ideal(topology)
    forced = apply_runtime(topology, ideal, "nccl", {"algorithm": "Ring", "protocol": "LL128"})
    for row in forced.rows:
        assert row.algorithm == "ring/ll128"
        pick = predict(system, "allreduce", row.bytes, ["ring"], ["ll128"]).pick
        assert math.isclose(row.time_us, pick.time_us, rel_tol=1e-12)
    assert "forced" in forced.runtime_model
    with pytest.raises(ParameterError):
        apply_runtime(topology, ideal, "nccl", {"algorithm": "butterfly"})
    with pytest.raises(NotApplicableError):
        apply_runtime(load_topology("trn2-nl16"), ideal, "neuron", {"algorithm": "ring"})
