"""Validation against published measurements: read the bundled runs (:mod:`.runs`), price each with
the model as its file sets it up (:mod:`.predict`), and compare row by row and per system and rank
count, fitted and predicted kept apart (:mod:`.summary`)."""

from trnsim.studies.validation.predict import Predicted, predict
from trnsim.studies.validation.runs import PublishedRun, bundled_runs_dir, load_runs, parse_run
from trnsim.studies.validation.summary import (
    GroupSummary,
    ValidationRow,
    geomean_error,
    rows_of,
    summarise,
)

__all__ = [
    "GroupSummary",
    "Predicted",
    "PublishedRun",
    "ValidationRow",
    "bundled_runs_dir",
    "geomean_error",
    "load_runs",
    "parse_run",
    "predict",
    "rows_of",
    "summarise",
]
