"""``trnsim layout`` from the command line: what a runtime cannot price is refused; pipeline stages
placed across NL72x2's racks or inside them."""

import json

from trnsim.topology import load_topology


def test_layout_refuses_a_runtime_other_than_ideal(cli):
    argv = ["layout", "--sku", "h100", "--tp", "4", "--dp", "2", "--size", "tp=16M,dp=64M"]
    refused = cli(*argv, "--runtime", "nccl")
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1
    assert "--runtime nccl on hgx-h100: a layout runs each dimension's groups at once" in refused.err
    assert "run with --runtime ideal" in refused.err
    ideal, default = cli(*argv, "--runtime", "ideal"), cli(*argv)
    assert ideal.code == 0
    # hgx-h100's own runtime (nccl) cannot price a layout either: unasked, it gives way to the ideal
    assert load_topology("h100").spec.runtime.default == "nccl"
    assert default.code == 0 and default.out == ideal.out
    assert cli(*argv, "--runtime", "mpi").code == 2


def test_pipeline_stages_across_the_racks_send_over_the_cross_rack_cables(cli):
    """tp=4 x dp=18 x pp=2 on NL72x2's two racks of 72: pp outermost makes each rack a stage, so
    every send crosses the racks; dp outermost keeps each pipeline in one rack."""
    argv = ["layout", "--sku", "nl72x2", "--tp", "4", "--dp", "18", "--pp", "2", "--format", "json"]
    shape = [
        "--hidden",
        "4096",
        "--tokens",
        "4096",
        "--layers",
        "8",
        "--micro-batches",
        "3",
        "--dtype",
        "bf16",
    ]
    rows = {}
    for order in ("tp,dp,pp", "tp,pp,dp"):
        result = cli(*argv, *shape, "--order", order, "--size", "dp=64M")
        assert result.code == 0, result.err
        document = json.loads(result.out)
        (layout,) = document["layouts"]
        rows[order] = next(d for d in layout["dimensions"] if d["dimension"] == "pp")
        racks = {tuple(rank // 72 for rank in group) for group in layout["groups"]["pp"]}
        assert racks == ({(0, 1)} if order.endswith("pp") else {(0, 0), (1, 1)})
    assert document["sizes"]["pp"] == 4096 // 4 * 4096 * 2  # a tp rank's shard of the activations
    across, inside = rows["tp,dp,pp"], rows["tp,pp,dp"]
    assert across["op"] == "sendrecv" and across["calls"] == 2 * 3  # forward and backward per micro-batch
    assert across["dim_total_us"] == across["calls"] * across["time_us"]
    assert "xrack" in across["bottleneck"] and "xrack" not in inside["bottleneck"]
    assert across["time_us"] > inside["time_us"]
    refused = cli(
        "layout", "--sku", "nl72x2", "--tp", "4", "--dp", "36", "--pp", "1", "--size", "tp=1M,dp=1M,pp=1M"
    )
    assert refused.code == 2 and "pp has degree 1" in refused.err
