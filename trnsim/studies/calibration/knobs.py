"""The model's free parameters a calibration fits ("knobs"): what each is, the ``--set`` edit that
sets it, its range, and the scale it is fitted on.

* ``latency.step_ns``: software and synchronisation per algorithm step (alpha);
* ``latency.collective_ns`` (only when asked for): a fixed cost per collective call;
* ``latency.link_ns``: latency per link a message crosses (the per-hop term);
* ``efficiency``: the share of the raw rate that payload reaches, one factor for the link classes
  the run's traffic uses (the others keep the file's values: a run inside one chip says nothing
  about the links between chips);
* ``call_us`` (a runtime's, with a runtime other than ``ideal``): the runtime's fixed cost per call,
  ``runtime.NAME.call_us`` (:mod:`trnsim.model.runtime`). A runtime's time depends on the link
  rates and its own call cost, not on the ideal model's latencies: with a runtime only ``call_us``
  and ``efficiency`` are fitted.
"""

from dataclasses import dataclass

import numpy as np

from trnsim.errors import ParameterError


@dataclass(frozen=True)
class Knob:
    """A fitted parameter: its name, the edit that sets it, its range and the scale it is fitted on."""

    name: str
    key: str
    low: float
    high: float
    unit: str

    def edits(self, value: float, used: list[str] = (), kept: dict[str, float] | None = None) -> list[str]:
        """The ``--set`` edits for ``value``. The efficiency applies to the link classes ``used`` by
        the run; ``kept`` are the file's other per-class values."""
        if self.name == "efficiency":
            classes = {**(kept or {}), **dict.fromkeys(used, value)}
            return ["efficiency.classes={" + ", ".join(f"{k}: {v:.6g}" for k, v in classes.items()) + "}"]
        return [f"{self.key}={value:.6g}"]


KNOB_NAMES = ("collective_ns", "step_ns", "link_ns", "efficiency", "call_us")
RUNTIME_KNOBS = ("call_us", "efficiency")  # what a runtime's time depends on
KNOBS = {
    "collective_ns": Knob("collective_ns", "latency.collective_ns", 0.0, 1e7, "ns"),
    "step_ns": Knob("step_ns", "latency.step_ns", 0.0, 1e6, "ns"),
    "link_ns": Knob("link_ns", "latency.link_ns", 0.0, 1e5, "ns"),
    "efficiency": Knob("efficiency", "efficiency.classes", 0.01, 1.0, ""),
}


def knob_for(name: str, runtime: str = "ideal") -> Knob:
    """The knob ``name`` as ``runtime`` reads it (``call_us`` is a runtime's own)."""
    if name == "call_us":
        return Knob("call_us", f"runtime.{runtime}.call_us", 0.0, 1e5, "us")
    return KNOBS[name]


def choose(names: list[str], runtime: str = "ideal") -> list[Knob]:
    """The knobs named, each once, in the order given, as ``runtime`` reads them.

    Raises
    ------
    UsageError
        When a name is not one of :data:`KNOB_NAMES`, none is given, or it is not what ``runtime``'s
        time depends on (``call_us`` only with a runtime; with a runtime only :data:`RUNTIME_KNOBS`).
    """
    unknown = [name for name in names if name not in KNOB_NAMES]
    if unknown or not names:
        raise ParameterError(f"expected one or more of {', '.join(KNOB_NAMES)}", "fit", f"{','.join(names)}")
    allowed = RUNTIME_KNOBS if runtime != "ideal" else tuple(KNOBS)
    stray = [name for name in names if name not in allowed]
    if stray:
        whose = f"the {runtime} runtime's time" if runtime != "ideal" else "the ideal model"
        raise ParameterError(
            f"{whose} does not depend on {stray[0]}; fit {', '.join(allowed)}", "fit", ",".join(names)
        )
    return [knob_for(name, runtime) for name in dict.fromkeys(names)]


def scales(knobs: list[Knob]) -> np.ndarray:
    """The factor each knob is fitted on: latencies in microseconds, so the parameters are comparable."""
    return np.asarray([1e3 if knob.unit == "ns" else 1.0 for knob in knobs])  # us and shares as they are


def initial_value(spec, knob: Knob, used: list[str]) -> float:
    """The file's own value of a parameter (for efficiency, the mean over the classes used): the
    fit's starting point."""
    if knob.name == "efficiency":
        return float(np.mean([spec.efficiency.of(cls) for cls in used]))
    if knob.name == "call_us":  # a runtime's: its file value, else a few microseconds
        facts = getattr(spec.runtime, knob.key.split(".")[1], None)
        value = getattr(facts, "call_us", None)
        return float(value) if value is not None else 5.0
    return float(getattr(spec.latency, knob.key.split(".")[1]))
