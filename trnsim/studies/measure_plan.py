"""What to run on real hardware to check a prediction: the benchmark's command line and input files.

A prediction is worth as much as the measurement that can test it. :func:`measure_plan` writes, for a
group, op, sizes and dtype on a system, the command of the benchmark its runtime is measured with,
and the files the command reads, so the same run happens on the machine and its output goes straight
back into ``calibrate``:

* ``neuron`` (Trainium): ``nccom-test`` (aws-neuron-sdk, tools/neuron-sys-tools/nccom-test.rst).
  Its ranks are logical NeuronCores numbered instance by instance (``cores_per_chip / lnc`` per chip,
  chips in the file's order within an instance), so a group of whole chips is not its first ranks:
  the command runs every rank of the instances the group touches (``-r``, ``-N``) and a
  ``--custom-replica-groups`` file names the group's cores. ``--show-algorithm`` prints the algorithm
  the runtime took, to set beside the runtime model's pick.
* ``nccl``: ``nccl-tests`` (NVIDIA/nccl-tests), one process per GPU (``mpirun -np P ... -g 1``), with
  ``NCCL_ALGO`` and ``NCCL_PROTO`` pinned to the tuner's pick: one command per run of sizes that
  share a pick, so each measured row is the algorithm the prediction priced.

Sizes: one ``-b``/``-e``/``-f`` sweep where they are a geometric series with a whole factor, else
one command per size. The other runtimes (``xla``, ``ideal``) have no public benchmark command to
write, and are refused.

Examples
--------
>>> from trnsim.topology.load import load_topology
>>> topo = load_topology("trn2-nl16")
>>> plan = measure_plan(topo, topo.chips[:4], "allgather", [1 << 20, 1 << 30], "bf16", "neuron")
>>> plan.commands[0]
'nccom-test -r 64 -b 1048576 -e 1073741824 -f 1024 -d bf16 --show-algorithm --custom-replica-groups replica-groups.json all_gather'
>>> plan.files["replica-groups.json"].split()  # 4 ranks per chip (8 cores at LNC=2): chips 0-3 take cores 0, 4, 8, 12
['{"replica_groups":', '[[[0,', '4,', '8,', '12]]]}']
"""

import json
from dataclasses import dataclass, field

from trnsim.collectives.arguments import Arguments
from trnsim.collectives.ops import get_op
from trnsim.errors import UsageError
from trnsim.topology.graph import Topology
from trnsim.topology.replica_groups import instance_of, instances

# nccom-test's ops (aws-neuron-sdk nccom-test.rst): no broadcast, reduce, gather, scatter or v ops but
# alltoallv, which it runs only across instances and with absolute counts (not written here)
NCCOM_OPS = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter"}
NCCOM_OPS |= {"alltoall": "alltoall", "sendrecv": "sendrecv", "permute": "permute"}
NCCOM_DTYPES = {"int8": "int8", "uint8": "uint8", "fp8": "fp8", "fp8e4m3": "fp8", "half": "fp16"}
NCCOM_DTYPES |= {"fp16": "fp16", "float16": "fp16", "bfloat16": "bf16", "bf16": "bf16", "float": "fp32"}
NCCOM_DTYPES |= {"fp32": "fp32", "float32": "fp32", "int32": "int32", "int": "int32", "uint32": "uint32"}
NCCL_BINARIES = {
    "allreduce": "all_reduce_perf",
    "allgather": "all_gather_perf",
    "reducescatter": "reduce_scatter_perf",
    "alltoall": "alltoall_perf",
    "broadcast": "broadcast_perf",
    "reduce": "reduce_perf",
    "gather": "gather_perf",
    "scatter": "scatter_perf",
    "sendrecv": "sendrecv_perf",
}
NCCL_DTYPES = {"int8": "int8", "uint8": "uint8", "int32": "int32", "int": "int32", "uint32": "uint32"}
NCCL_DTYPES |= {"int64": "int64", "uint64": "uint64", "half": "half", "fp16": "half", "float16": "half"}
NCCL_DTYPES |= {"float": "float", "fp32": "float", "float32": "float", "double": "double", "fp64": "double"}
NCCL_DTYPES |= {"float64": "double", "bfloat16": "bfloat16", "bf16": "bfloat16", "fp8e4m3": "f8e4m3"}
NCCL_DTYPES |= {"fp8e5m2": "f8e5m2"}
# the names NCCL_ALGO and NCCL_PROTO take, from the runtime model's lower-case picks
NCCL_ALGO_NAMES = {"ring": "Ring", "tree": "Tree", "nvls": "NVLS", "nvlstree": "NVLSTree", "pat": "PAT"}
NCCL_ALGO_NAMES |= {"collnet_direct": "CollnetDirect", "collnet_chain": "CollnetChain"}
NCCL_PROTO_NAMES = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}


@dataclass
class MeasurePlan:
    """A benchmark run that measures what a prediction priced."""

    tool: str  # "nccom-test" or "nccl-tests"
    runtime: str
    commands: list[str]
    files: dict[str, str] = field(default_factory=dict)  # file name -> content
    notes: list[str] = field(default_factory=list)
    predicted: list = field(default_factory=list)  # the runtime's rows at the sizes run (with_prediction)
    priced_by: str = ""  # what priced the prediction: the runtime, or ideal where it does not model the op
    # nccom-test counts NeuronCores: how many of the group's ranks share a chip (None: nccl-tests' GPUs)
    cores_per_chip_used: int | None = None


def measure_plan(
    topology: Topology,
    group: list[str],
    op: str,
    sizes: list[int],
    dtype: str,
    runtime: str,
    picks=None,
    arguments: Arguments | None = None,
) -> MeasurePlan:
    """The benchmark run for ``op`` on ``group`` (rank names) at ``sizes`` under ``runtime``.

    ``picks`` (NCCL only) lists the tuner's ``algorithm/protocol`` for each size, as the runtime
    model's rows name them; without it NCCL chooses at run time and the commands pin nothing.
    ``arguments`` gives the op's root (nccl-tests ``-r``) or pairs (nccom-test's
    ``--custom-src-target-pairs`` file).
    """
    op = get_op(op).name
    check_runtime(topology, runtime)
    check_op(runtime, op, arguments)
    arguments = (arguments or Arguments()).for_op(get_op(op))
    if runtime == "neuron":
        return _nccom(topology, group, op, sorted(sizes), dtype, arguments)
    return _nccl(topology, group, op, sizes, dtype, picks, arguments.root)


def check_op(runtime: str, op: str, arguments: Arguments | None = None) -> None:
    """Refuse, before any work, an op (or its pairs) the runtime's benchmark does not run."""
    tool, ops = ("nccom-test", NCCOM_OPS) if runtime == "neuron" else ("nccl-tests", NCCL_BINARIES)
    if op not in ops:
        raise UsageError(f"{tool} has no {op}; it runs {', '.join(ops)}")
    if tool == "nccl-tests" and op == "sendrecv" and arguments is not None and arguments.pairs is not None:
        raise UsageError(
            "nccl-tests' sendrecv_perf sends rank i to rank i+1: it takes no {pairs}", names="pairs"
        )


def check_runtime(topology: Topology, runtime: str) -> None:
    """Refuse, before any work, a runtime with no benchmark command to write."""
    if runtime not in ("neuron", "nccl"):
        raise UsageError(
            f"{topology.name}: no benchmark command to write for the {runtime} runtime (nccom-test runs "
            "under neuron, nccl-tests under nccl); choose {runtime} neuron or nccl",
            names="runtime",
        )


def with_prediction(backend, op: str, sizes: list[int], dtype: str, runtime: str) -> MeasurePlan:
    """The plan for ``backend``'s one group (:class:`~trnsim.model.backend.OneGroup`), with the
    runtime's predicted rows beside it; NCCL's commands pin the tuner's pick per size. An op the
    runtime does not model is predicted by the ideal model (``priced_by``), and nothing is pinned.

    The sizes run are the ones the prediction priced: nccl-tests' alignment of the sizes asked.
    """
    from trnsim.model.runtime import apply_runtime, modelled_ops

    topology = backend.topology
    check_runtime(topology, runtime)
    check_op(runtime, get_op(op).name, backend.arguments)
    modelled = modelled_ops(runtime)
    priced = runtime if modelled is None or get_op(op).name in modelled else "ideal"
    result = backend.evaluate(op, sizes, "auto", dtype)
    if priced != "ideal":
        result = apply_runtime(topology, result, runtime)
    aligned = [row.bytes for row in result.rows]
    picks = [row.algorithm for row in result.rows] if priced == "nccl" else None
    plan = measure_plan(
        topology, backend.group, op, aligned, dtype.strip().lower(), runtime, picks, backend.arguments
    )
    plan.predicted, plan.priced_by = list(result.rows), priced
    if priced != runtime:
        plan.notes.append(
            f"the {runtime} runtime model does not cover {get_op(op).name}: the prediction is the ideal's"
        )
    return plan


def size_arguments(sizes: list[int]) -> list[str]:
    """``-b/-e/-f`` for a geometric series with a whole factor (one size: ``-b S -e S``), else one
    ``-b S -e S`` per size.

    >>> size_arguments([8, 16, 32]), size_arguments([1000, 2500])
    (['-b 8 -e 32 -f 2'], ['-b 1000 -e 1000', '-b 2500 -e 2500'])
    """
    sizes = sorted(set(sizes))
    if len(sizes) == 1:
        return [f"-b {sizes[0]} -e {sizes[0]}"]
    factor, rest = divmod(sizes[1], sizes[0])
    if factor >= 2 and rest == 0 and all(b == a * factor for a, b in zip(sizes, sizes[1:], strict=False)):
        return [f"-b {sizes[0]} -e {sizes[-1]} -f {factor}"]
    return [f"-b {size} -e {size}" for size in sizes]


def _nccom(
    topology: Topology, group: list[str], op: str, sizes: list[int], dtype: str, arguments: Arguments
) -> MeasurePlan:
    facts = topology.spec.runtime.neuron
    if facts is None:
        raise UsageError(f"{topology.name}: the file has no runtime.neuron section: no NeuronCores to number")
    if dtype not in NCCOM_DTYPES:
        raise UsageError(f"nccom-test has no {dtype}; choose one of {', '.join(sorted(set(NCCOM_DTYPES)))}")
    logical = facts.cores_per_chip // facts.lnc
    by_instance = instances(topology)
    chips = topology.chips_of(group)
    touched = list(dict.fromkeys(instance_of(topology, chip) for chip in chips))
    per_instance = {len(by_instance[key]) for key in touched}
    if len(per_instance) > 1:
        raise UsageError(f"{topology.name}: the group's instances hold different numbers of chips")
    width = per_instance.pop() * logical  # ranks (logical cores) per instance
    cores = []
    seen: dict[str, int] = {}
    for rank in group:
        chip = topology.nodes[rank].get("chip", rank)
        within = seen.get(chip, 0)
        seen[chip] = within + 1
        if within >= logical:
            raise UsageError(f"{topology.name}: more ranks on chip {chip} than its {logical} logical cores")
        instance = touched.index(instance_of(topology, chip))
        cores.append(instance * width + by_instance[touched[instance]].index(chip) * logical + within)
    n_ranks = len(touched) * width
    files, extra = {}, []
    if cores != list(range(n_ranks)):
        files["replica-groups.json"] = json.dumps({"replica_groups": [[cores]]})
        extra = ["--custom-replica-groups replica-groups.json"]
    if op == "permute":  # the pairs in cores, as nccom-test's example file nests them
        pairs = arguments.pairs or tuple((i, (i + 1) % len(group)) for i in range(len(group)))
        files["pairs.json"] = json.dumps({"src_target_pairs": [[[cores[a], cores[b]] for a, b in pairs]]})
        extra.append("--custom-src-target-pairs pairs.json")
    nodes = len(touched)
    head = f"nccom-test -r {n_ranks}" + (f" -N {nodes}" if nodes > 1 else "")
    hosts = " --hosts " + " ".join(f"HOST{i}" for i in range(nodes)) if nodes > 1 else ""
    env = "NEURON_RT_ROOT_COMM_ID=HOST0:44444 " if nodes > 1 else ""
    commands = [
        f"{env}{head} {sizes_arg} -d {NCCOM_DTYPES[dtype]} --show-algorithm {' '.join(extra)} "
        f"{NCCOM_OPS[op]}{hosts}".replace("  ", " ")
        for sizes_arg in size_arguments(sizes)
    ]
    notes = [
        f"ranks are logical NeuronCores: {logical} per chip ({facts.cores_per_chip} cores at LNC={facts.lnc}), "
        f"{width} per instance; the group's {len(group)} ranks are cores {_span(cores)}",
        "busbw: recent nccom-test prints GB/s (10^9 B/s); output from 2023 to mid-2024 printed GiB/s, which "
        "calibrate detects from size / time",
    ]
    if nodes > 1:
        notes.append(f"HOST0..HOST{nodes - 1}: the instances' addresses, HOST0 the one you run on")
    if extra:
        notes.append(
            "ranks outside the replica group take no part; nccom-test's examples list groups that cover every "
            "rank, so if yours refuses a partial one, add the remaining ranks as groups of their own"
        )
    used = max(seen.values())
    return MeasurePlan("nccom-test", "neuron", commands, files, notes, cores_per_chip_used=used)


def _span(values: list[int]) -> str:
    return ", ".join(map(str, values)) if len(values) <= 8 else f"{values[0]}, {values[1]}, ..., {values[-1]}"


def _nccl(
    topology: Topology, group: list[str], op: str, sizes: list[int], dtype: str, picks, root: int = 0
) -> MeasurePlan:
    if dtype not in NCCL_DTYPES:
        raise UsageError(f"nccl-tests has no {dtype}; choose one of {', '.join(sorted(set(NCCL_DTYPES)))}")
    by_instance = instances(topology)
    touched = list(dict.fromkeys(instance_of(topology, chip) for chip in group))
    whole = all(chip in group for key in touched for chip in by_instance[key])
    local = ""
    if not whole:
        if len(touched) > 1:
            raise UsageError(
                f"{topology.name}: nccl-tests runs every GPU its processes are given; a group that takes part "
                "of several nodes needs a rank file of its own: give whole nodes or one node's GPUs"
            )
        devices = [by_instance[touched[0]].index(chip) for chip in group]
        local = f"CUDA_VISIBLE_DEVICES={','.join(map(str, devices))} "
    p, nodes = len(group), len(touched)
    launcher = f"mpirun -np {p} -N {p // nodes}" + (
        " -H " + ",".join(f"HOST{i}:{p // nodes}" for i in range(nodes)) if nodes > 1 else ""
    )
    by_pick = _runs_by_pick(sizes, picks)
    commands = []
    for pick, run in by_pick:
        env = _nccl_env(pick)
        exported = " ".join(f"-x {assignment}" for assignment in env)
        for sizes_arg in size_arguments(run):
            commands.append(
                f"{local}{launcher} {exported} ./build/{NCCL_BINARIES[op]} {sizes_arg} -g 1 "
                f"-d {NCCL_DTYPES[dtype]}{f' -r {root}' if get_op(op).rooted else ''}".replace("  ", " ")
            )
    notes = ["one process per GPU (-g 1); nccl-tests prints busbw in GB/s (10^9 B/s)"]
    if picks is not None:
        notes.append(
            "NCCL_ALGO and NCCL_PROTO pinned to the tuner's pick for each size: a row measures what was priced"
        )
    if nodes > 1:
        notes.append(f"HOST0..HOST{nodes - 1}: the nodes' addresses")
    return MeasurePlan("nccl-tests", "nccl", commands, {}, notes)


def _runs_by_pick(sizes: list[int], picks) -> list[tuple[str | None, list[int]]]:
    """Sizes in order, grouped into runs that share a pick (one run of all when nothing is pinned)."""
    if picks is None:
        return [(None, sorted(sizes))]
    runs: list[tuple[str | None, list[int]]] = []
    for size, pick in sorted(zip(sizes, picks, strict=True)):
        pick = pick.rstrip("*")  # held to the fabric's bound: still the tuner's algorithm
        if runs and runs[-1][0] == pick:
            runs[-1][1].append(size)
        else:
            runs.append((pick, [size]))
    return runs


def _nccl_env(pick: str | None) -> list[str]:
    """``NCCL_ALGO=...``/``NCCL_PROTO=...`` for a pick such as ``ring/ll``."""
    if pick is None:
        return []
    algo, _, proto = pick.partition("/")
    env = [f"NCCL_ALGO={NCCL_ALGO_NAMES.get(algo, algo)}"]
    if proto:
        env.append(f"NCCL_PROTO={NCCL_PROTO_NAMES.get(proto, proto)}")
    return env
