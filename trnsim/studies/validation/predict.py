"""Each published run through the model as its system's file sets it up: the catalog system, the
run's edits, the file's default runtime (what the run's tool would measure: NCCL for nccl-tests on
NVIDIA GPUs, the Neuron runtime for nccom-test, XLA on TPUs) and what the run forced (an algorithm,
a protocol).

A run on one node is one group of the system's first ``chips`` chips; a run across nodes is a
cluster of ``nodes`` copies of the system over its scale-out network (:mod:`trnsim.model.cluster`).
"""

from dataclasses import dataclass

from trnsim.errors import NotApplicableError, TrnsimError
from trnsim.studies.validation.runs import PublishedRun


@dataclass(frozen=True)
class Predicted:
    """The model's answer for one published run: a time per size, or why it has none."""

    run: PublishedRun
    runtime: str  # the runtime that priced it
    model: str  # one line: what the numbers model
    times_us: dict[int, float]  # bytes -> predicted time
    choices: dict[int, str]  # bytes -> the algorithm (and protocol) the runtime picked
    refused: str = ""  # why the model could not price the run (empty when it did)


def predict(run: PublishedRun) -> Predicted:
    """Price ``run`` at each of its sizes; a run the model cannot price is returned ``refused``."""
    sizes = [nbytes for nbytes, _ in run.measured_us()]
    try:
        if run.nodes > 1:
            return _across_nodes(run, sizes)
        return _one_node(run, sizes)
    except NotApplicableError as exc:  # the model does not cover it: listed, not fatal
        return Predicted(run, "", "", {}, {}, refused=str(exc))
    except TrnsimError as exc:  # the run file is wrong (an unknown system, a bad edit): say which
        raise exc.within(run.path) from None


def _edits(run: PublishedRun) -> list[str]:
    """The run's edits, with its ranks per chip when it has several."""
    edits = list(run.set)
    if run.ranks_per_chip > 1 and not any(edit.startswith("chip.ranks=") for edit in edits):
        edits.append(f"chip.ranks={run.ranks_per_chip}")
    return edits


def _one_node(run: PublishedRun, sizes: list[int]) -> Predicted:
    """One group of ``run.chips`` chips, priced by the file's default runtime."""
    from trnsim.model.backend import Selection
    from trnsim.model.runtime import apply_runtime, check_runtime, runtime_of
    from trnsim.topology import load_topology

    topology = load_topology(run.system, None, _edits(run))
    runtime = runtime_of(topology, None)
    backend = Selection(ranks=run.ranks).backend(topology)  # a file with several ranks a chip counts ranks
    check_runtime(topology, backend.group, runtime)
    # what a run forced is the runtime's to follow; the ideal is trnsim's best schedule whatever it was
    ideal = backend.evaluate(run.op, sizes, "auto", run.dtype)
    result = apply_runtime(topology, ideal, runtime, dict(run.forced) if runtime == "nccl" else None)
    return _priced(run, runtime, result, "trnsim's ideal schedule at the fabric's limit")


def _across_nodes(run: PublishedRun, sizes: list[int]) -> Predicted:
    """``run.nodes`` copies of the system over its scale-out network, every rank of each."""
    from trnsim.model.backend import Fabric, Selection
    from trnsim.model.cluster.runtime import CLUSTER_RUNTIMES, apply_cluster_runtime
    from trnsim.model.runtime import runtime_of
    from trnsim.topology import load_topology

    if run.forced:
        raise NotApplicableError("a forced algorithm across nodes is not modelled")
    topology = load_topology(run.system, None, _edits(run))
    per_node = run.ranks // run.nodes
    if per_node != len(topology.chips):
        raise NotApplicableError(
            f"{per_node} ranks a node: a cluster node is the whole {run.system} ({len(topology.chips)} ranks)"
        )
    runtime = runtime_of(topology, None)
    if runtime not in CLUSTER_RUNTIMES:
        raise NotApplicableError(f"the {runtime} runtime is not modelled across nodes")
    ideal = Selection(fabric=Fabric(run.nodes)).backend(topology).evaluate(run.op, sizes, "auto", "float")
    result = apply_cluster_runtime(topology, ideal, runtime)
    return _priced(run, runtime, result, "trnsim's ideal composition across nodes")


def _priced(run: PublishedRun, runtime: str, result, ideal_model: str) -> Predicted:
    """``result``'s rows as the run's prediction, each by the size the run asked for: the engine
    rounds a size down to whole elements per rank, as nccl-tests does (a 10 MB all-gather over 16
    ranks is priced at the bytes it moves)."""
    return Predicted(
        run,
        runtime,
        getattr(result, "runtime_model", ideal_model),
        {row.requested_bytes: row.time_us for row in result.rows},
        {row.requested_bytes: row.algorithm for row in result.rows},
    )
