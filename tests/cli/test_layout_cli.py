"""``trnsim layout`` from the command line: what a runtime cannot price is refused."""

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
