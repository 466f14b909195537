"""Topology variants: catalog SKUs, users' files and what-ifs of either, evaluated side by side.

A variant is written ``NAME`` or ``NAME:set=KEY=VALUE[:set=KEY=VALUE...]`` (the same ``KEY=VALUE`` as
``--set``), for example ``nl72x2:set=latency.switch_ns=50``; ``NAME:fail=SPEC`` fails a component
(the same as ``--fail SPEC``, or ``:set=fail=SPEC``), and ``NAME:calibration=FILE`` applies a
calibration file to that variant alone (its edits, where the entry stands among the variant's own).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from trnsim.errors import TrnsimError, UsageError
from trnsim.spec.overrides import named_edits

if TYPE_CHECKING:  # the evaluation stack is imported by what runs it, not by a label or a parse
    from trnsim.model.backend import Selection
    from trnsim.model.rows import Evaluation
    from trnsim.topology.graph import Topology

CALIBRATION_KEY = "calibration"  # NAME:calibration=FILE


def _as_is(parameter: str) -> str:
    return parameter


def _same_path(text: str) -> str:
    """``calibration=FILE`` with FILE resolved (``~`` expanded), so that it loads from any folder."""
    key, _, value = text.partition("=")
    if key.strip().lower() != CALIBRATION_KEY or not value.strip():
        return text
    return f"{CALIBRATION_KEY}={Path(value.strip()).expanduser().resolve()}"


def label_form(text: str) -> str:
    """An edit as a variant's label shows it: a calibration file by its name, so that the label, and
    with it a baseline row's identity, does not depend on where the file was given from (its content
    hash is kept in the baseline's variant list)."""
    key, _, value = text.partition("=")
    if key.strip().lower() != CALIBRATION_KEY or not value.strip():
        return text
    return f"{CALIBRATION_KEY}={Path(value.strip()).name}"


@dataclass(frozen=True)
class Variant:
    """One system to evaluate: a SKU or a file, with what-if edits."""

    sku: str | None = None
    file: Path | None = None
    overrides: tuple[str, ...] = ()
    text: str = field(default="", compare=False)  # as the user wrote it, for messages

    @staticmethod
    def parse(text: str, is_file: bool = False, common: tuple[str, ...] = ()) -> Variant:
        """Parse ``NAME[:set=K=V...][:fail=SPEC...][:calibration=FILE]``; ``common`` edits
        (``--set``) apply to every variant first."""
        spelled = text.replace(":fail=", ":set=fail=").replace(":calibration=", ":set=calibration=")
        base, *sets = spelled.split(":set=")
        if not base.strip():
            raise UsageError(f"variant {text!r} names no SKU or file")
        edits = tuple(common) + tuple(_same_path(text) for text in sets)
        if is_file:
            return Variant(file=Path(base), overrides=edits, text=text)
        return Variant(sku=base.strip(), overrides=edits, text=text)

    def load(self) -> Topology:
        """Build the variant's topology; an error names the variant as the user wrote it."""
        from trnsim.topology.load import load_topology

        try:
            return load_topology(self.sku, self.file, self.edits())
        except TrnsimError as exc:
            if not self.text or ":" not in self.text:
                raise
            raise exc.within(f"variant {self.text!r}") from None

    def edits(self) -> list[str]:
        """The variant's edits: its calibration files' edits first, then the others in order."""
        from trnsim.studies.calibration.files import calibration_edits

        # a calibration is a base the --set edits refine (as with --calibration): it applies first,
        # wherever it stands among the variant's edits
        fitted, rest = [], []
        for text in self.overrides:
            key, _, value = text.partition("=")
            if key.strip().lower() == CALIBRATION_KEY:
                if not value.strip():
                    raise UsageError(f"variant {self.text!r}: calibration= names no file")
                fitted += calibration_edits(Path(value.strip()))
            else:
                rest.append(text)
        return fitted + rest

    @property
    def calibrations(self) -> list[Path]:
        """The calibration files the variant applies itself."""
        return [
            Path(text.partition("=")[2].strip())
            for text in self.overrides
            if text.partition("=")[0].strip().lower() == CALIBRATION_KEY
        ]


@dataclass
class VariantResult:
    """A variant's evaluation, with a label and the content hash of the file it came from."""

    label: str  # the SKU's name with the variant's own what-if edits: its identity in baselines
    topology: Topology
    evaluation: Evaluation  # of one group, several at once or a cluster (:mod:`trnsim.model.backend`)
    sha256: str
    variant: Variant = field(repr=False)
    display: str = ""  # the name with every edit it ran with, including the common ones

    @property
    def runtime(self) -> str:
        """The runtime whose numbers the rows hold (``ideal``: the engine's own)."""
        return getattr(self.evaluation, "runtime", "ideal")

    @property
    def runtime_model(self) -> str | None:
        """One line: what the runtime's numbers model (None under ``ideal``)."""
        return getattr(self.evaluation, "runtime_model", None)


def file_sha256(path: Path) -> str:
    """The hash of an input file's bytes, read as every input is (strict UTF-8 re-encodes to the same bytes)."""
    from trnsim.yamlio import read_text

    return hashlib.sha256(read_text(Path(path)).encode("utf-8")).hexdigest()


def label_of(topology: Topology, edits: tuple[str, ...]) -> str:
    """A variant's display name: the SKU's full name plus every what-if edit it ran with."""
    return topology.name + (f" [{', '.join(edits)}]" if edits else "")


def run_variants(
    variants: list[Variant],
    op: str,
    sizes: list[int],
    selection: Selection | None = None,
    *,
    algo: str = "auto",
    dtype: str = "float",
    common: tuple[str, ...] = (),
    name=_as_is,
    runtime: str | None = None,
) -> list[VariantResult]:
    """Evaluate ``op`` on every variant, each through the backend ``selection`` gives for its system
    (one group, several at once or a cluster: :class:`~trnsim.model.backend.Selection`), priced by
    ``runtime`` (None: each system's own default; :mod:`trnsim.studies.runtimes`); labels are
    made unique in order of appearance. ``name`` shows a parameter in the display names as the
    caller calls it (the common edits: ``overrides``, the command line's ``--set``).

    Every variant is loaded and its runtime checked before any is evaluated: a runtime that cannot
    model one variant refuses the study before its work."""
    from trnsim.model.backend import Selection
    from trnsim.studies.runtimes import priced

    selection = selection or Selection()  # every rank of each variant, at its file's costs
    prepared = [_prepare(variant, selection, runtime, len(variants), algo, op) for variant in variants]
    results, seen = [], {}
    for variant, (topology, backend, chosen) in zip(variants, prepared, strict=True):
        try:
            evaluation = priced(topology, backend.evaluate(op, sizes, algo, dtype), chosen)
        except TrnsimError as exc:
            if len(variants) == 1:
                raise
            raise exc.within(f"variant {variant.text or topology.name}") from None
        # common edits stand for a change to the files under test (what a baseline gate is for),
        # so they are shown but are not part of the identity; a variant's own edits are
        label = label_of(topology, tuple(map(label_form, variant.overrides[len(common) :])))
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label} #{seen[label]}"
        display = label + (f" with {named_edits(common, name)}" if common else "")
        results.append(
            VariantResult(label, topology, evaluation, file_sha256(topology.path), variant, display)
        )
    return results


def _prepare(
    variant: Variant, selection: Selection, runtime: str | None, count: int, algo: str = "auto", op=None
):
    """The variant's system, its backend and the runtime that prices it, checked before any work
    (a calibrated variant is priced by what its calibration was fitted against, unless a runtime is
    asked for)."""
    from trnsim.studies.runtimes import study_runtime

    topology = variant.load()
    if runtime is None and variant.calibrations:
        from trnsim.studies.calibration.files import calibration_runtime

        runtime = calibration_runtime(variant.calibrations[-1])
    try:
        backend = selection.backend(topology)
        return topology, backend, study_runtime(topology, backend, runtime, algo, op)
    except TrnsimError as exc:
        if count == 1:
            raise
        raise exc.within(f"variant {variant.text or topology.name}") from None
