"""One system's fault study, whole: every single failure, failure rates, stragglers and random
draws, with the statistics ``trnsim faults`` shows (the command only parses and renders)."""

from dataclasses import dataclass, field

from trnsim.studies.engines import EngineOptions
from trnsim.studies.faults.draws import random_failures
from trnsim.studies.faults.rates import MTTR_H, Reliability, default_rates, reliability
from trnsim.studies.faults.stragglers import straggler
from trnsim.studies.faults.summary import class_rows, draw_summary, worst_losing_no_chip
from trnsim.studies.faults.sweep import FaultReport, single_failures
from trnsim.studies.faults.work import check_random
from trnsim.topology.graph import Topology


@dataclass(frozen=True)
class StudyOptions:
    """What a fault study runs, and on which assumptions."""

    ops: list[str]
    sizes: list[int]  # bytes
    rates: dict[str, float] = field(default_factory=default_rates)  # MTTF (hours) per rate class
    mttr_h: float = MTTR_H
    policy: str | None = None  # blast radius (default: the system's)
    kinds: list[str] | None = None  # only these classes of parts
    exhaustive: bool = False  # every part, not one per class of alike parts
    domains: int | None = None  # a job over this many domains: its straggler slowdown
    random: int | None = None  # parts failed at once in Monte Carlo draws (None: no draws)
    samples: int = 20
    seed: int = 0
    runtime: str | None = None  # what prices the runs (None: the system's own default)
    engine: EngineOptions = EngineOptions()  # where the random draws run (trnsim.studies.engines)


@dataclass
class FaultStudy:
    """A system's fault study: the sweep and what follows from it."""

    report: FaultReport
    keys: list[tuple[str, int]]  # (op, bytes): ops in the order given, sizes ascending
    classes: list[dict]  # loss per class of parts at each key (summary.class_rows)
    reliability: Reliability
    rates_by_class: list[dict]  # reliability.by_class, chips out counted in physical chips
    key: tuple[str, int]  # the first op at its largest size: what the summary and stragglers use
    straggler: dict | None  # stragglers.straggler, when domains are given
    draws: list[dict] | None  # summary.draw_summary per key, when random draws are asked for
    summary: dict  # one row: chips, blast radius, failures a year, availability, worst loss
    runtime: str = "ideal"  # what priced every run (:mod:`trnsim.studies.runtimes`)


@dataclass(frozen=True)
class Loader:
    """``load(failures, keep_largest=False)``: ``variant`` (a :class:`trnsim.studies.variants.Variant`)
    built with ``fail=`` edits added, as the sweep and the draws need. A value, not a closure, so
    that a draw's task carries it to a worker (:mod:`trnsim.studies.engines`)."""

    variant: object

    def __call__(self, failures, keep_largest=False):
        from trnsim.topology import load_topology

        extra = [f"fail={text}" for text in failures]
        variant = self.variant
        return load_topology(variant.sku, variant.file, variant.edits() + extra, keep_largest)


def loader(variant) -> Loader:
    """The :class:`Loader` of ``variant``."""
    return Loader(variant)


def run_study(load, topology: Topology, options: StudyOptions, progress=None) -> FaultStudy:
    """Sweep every single failure of ``topology``, then rates, stragglers and draws.

    Parameters
    ----------
    load : callable
        ``load(failures, keep_largest)`` builds the system with failures (:func:`loader`).
    topology : Topology
        The system as given (with any failures already applied).
    options : StudyOptions
        Ops, sizes, rates and the rest.
    progress : callable, optional
        ``progress(draw)`` as each random draw is done (:func:`random_failures`).

    Returns
    -------
    FaultStudy
        Chips out are counted in physical chips (a chip's ranks are lost with it).
    """
    o = options
    runtime = study_runtime_of(topology, o.runtime)  # refused before the sweep, not after it
    if o.random is not None:
        check_random(topology, o.ops, o.random, o.samples)
    report = single_failures(load, topology, o.ops, o.sizes, o.policy, o.kinds, o.exhaustive, runtime)
    keys = sorted(report.healthy, key=lambda key: (o.ops.index(key[0]), key[1]))
    rows = class_rows(report, keys)
    draws = None
    if o.random is not None:
        outcomes = random_failures(
            load, topology, o.ops, o.sizes, o.random, o.samples, o.seed, o.rates, o.policy, o.kinds, runtime,
            o.engine, progress,
        )  # fmt: skip
        draws = draw_summary(report, outcomes, keys)
    per_chip = topology.spec.chip.ranks
    rel = reliability(report, o.rates, o.mttr_h)
    by_class = [{**row, "chips_out": row["chips_out"] / per_chip} for row in rel.by_class]
    key = (o.ops[0], max(size for name, size in keys if name == o.ops[0]))
    stragglers = straggler(report, o.rates, o.mttr_h, key, o.domains) if o.domains else None
    worst = worst_losing_no_chip(report, rows, key)
    summary = {
        "chips": report.chips,
        "policy": report.policy,
        "failures_per_year": rel.failures_per_year,
        "chips_out": rel.chips_out / per_chip,
        "availability": rel.availability,
        "worst_loss": worst["worst_loss"] if worst else 0.0,
        "worst_part": worst["worst_part"] if worst else "-",
    }
    if stragglers:
        summary.update(
            domains=o.domains,
            p_some_down=stragglers["p_some_down"],
            expected_slowdown=stragglers["expected_slowdown"],
        )
    return FaultStudy(report, keys, rows, rel, by_class, key, stragglers, draws, summary, runtime)


def study_runtime_of(topology: Topology, name: str | None) -> str:
    """The runtime that prices a fault study's runs on ``topology`` (every rank, one group), refused
    before any work where it cannot (:func:`trnsim.studies.runtimes.study_runtime`).

    A fault study is the ideal's unless ``name`` asks for a runtime: its losses compare every
    survivor with the healthy system, and a file's default runtime may not model every survivor (NCCL
    refuses GPUs whose NVLinks reach different switches), which would leave some priced one way and
    some another."""
    from trnsim.model.backend import OneGroup
    from trnsim.studies.runtimes import study_runtime

    if name is None:
        return "ideal"
    return study_runtime(topology, OneGroup(topology, topology.chips), name)
