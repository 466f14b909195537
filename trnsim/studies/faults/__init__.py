"""Faults as numbers: every single failure's cost, chips lost, failure rates, and stragglers.

One module per job:

* :mod:`~trnsim.studies.faults.sweep`: every part failed alone, the collectives run on the survivors;
* :mod:`~trnsim.studies.faults.classes`: parts that look alike (colour refinement), evaluated once;
* :mod:`~trnsim.studies.faults.blast`: the chips a failure takes out of service, by policy;
* :mod:`~trnsim.studies.faults.work`: the work a study needs, refused past the limit before it runs;
* :mod:`~trnsim.studies.faults.rates`: failure rates (MTTF, FIT), failures a year, availability;
* :mod:`~trnsim.studies.faults.stragglers`: a job over many domains at its slowest one's pace;
* :mod:`~trnsim.studies.faults.draws`: several parts failed at once, drawn by failure rate;
* :mod:`~trnsim.studies.faults.summary`: the statistics over classes of parts and over draws;
* :mod:`~trnsim.studies.faults.study`: all of it for one system, as ``trnsim faults`` shows it.
"""

from trnsim.studies.faults.blast import POLICIES, default_policy, lost_with
from trnsim.studies.faults.classes import Refiner, equivalence_classes
from trnsim.studies.faults.draws import random_failures
from trnsim.studies.faults.rates import HOURS_PER_YEAR, MTTR_H, RATES, Reliability, default_rates, reliability
from trnsim.studies.faults.stragglers import straggler
from trnsim.studies.faults.study import FaultStudy, StudyOptions, loader, run_study
from trnsim.studies.faults.summary import class_rows, draw_summary, loss_summary, worst_losing_no_chip
from trnsim.studies.faults.sweep import CHIP_SAMPLES, ClassResult, FaultReport, Outcome, single_failures
from trnsim.studies.faults.work import RUN_OVERHEAD, check_random, check_sweep, refinement_work

__all__ = [
    "CHIP_SAMPLES",
    "HOURS_PER_YEAR",
    "MTTR_H",
    "POLICIES",
    "RATES",
    "RUN_OVERHEAD",
    "ClassResult",
    "FaultReport",
    "FaultStudy",
    "Outcome",
    "Refiner",
    "Reliability",
    "StudyOptions",
    "check_random",
    "check_sweep",
    "class_rows",
    "default_policy",
    "default_rates",
    "draw_summary",
    "equivalence_classes",
    "loader",
    "loss_summary",
    "lost_with",
    "random_failures",
    "refinement_work",
    "reliability",
    "run_study",
    "single_failures",
    "straggler",
    "worst_losing_no_chip",
]
