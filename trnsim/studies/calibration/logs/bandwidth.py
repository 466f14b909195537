"""The units the bandwidth columns were printed in (GB/s or GiB/s, decided row by row; see
:mod:`~trnsim.studies.calibration.readers`), and the check that busbw is algbw times the busbw
factor of the op and rank count."""

from trnsim.studies.calibration.logs.parsed import Parsed, Raw, fail

UNITS = {"GB/s": 1e9, "GiB/s": float(1 << 30)}
TOLERANCE = 0.03


def busbw_factor(op: str, ranks: int) -> float:
    """busbw / algbw, as the model's rows take it (:meth:`trnsim.collectives.ops.Op.busbw_factor`)."""
    from trnsim.collectives.ops import get_op

    return get_op(op).busbw_factor(ranks)


def close(expected: float, printed: float, printed_res: float, time_rel: float) -> bool:
    """Whether a printed value matches the expected one within the tolerance, the printed rounding
    and the time's printed rounding (``time_rel``, relative)."""
    return abs(expected - printed) <= TOLERANCE * expected + printed_res + expected * time_rel


def decide_units(parsed: Parsed, factor: float) -> str:
    """The unit every row's printed bandwidth agrees with (see the module documentation)."""
    first: tuple[str, Raw] | None = None
    for raw in parsed.raws:
        if raw.algbw is not None:
            printed, res, scale, name = raw.algbw, raw.algbw_res, 1.0, "algbw"
        else:
            printed, res, scale, name = raw.busbw, raw.busbw_res, factor, "busbw"
        rate = raw.size / raw.time * 1e6 * scale  # B/s, times the busbw factor for busbw
        time_rel = raw.time_res / raw.time
        matches = [unit for unit, per in UNITS.items() if close(rate / per, printed, res, time_rel)]
        if not matches:
            raise fail(
                raw.where,
                f"{name} {printed:g} matches neither size/time in GB/s ({rate / 1e9:.4g}) nor in GiB/s "
                f"({rate / (1 << 30):.4g})",
            )
        if len(matches) > 1:
            continue  # too small to tell
        if first is None:
            first = (matches[0], raw)
        elif matches[0] != first[0]:
            other = first[1]
            at = f"line {other.line}" if parsed.format == "text" else f"results[{other.line}]"
            raise fail(
                raw.where,
                f"bandwidth in {matches[0]} here but in {first[0]} at {at}; a file must use one unit throughout",
            )
    return first[0] if first else parsed.default_units


def check_busbw(parsed: Parsed, units: str, factor: float, op: str, ranks: int) -> None:
    """Every printed busbw is size/time times the busbw factor, in ``units``: a wrong rank count shows here."""
    per = UNITS[units]
    for raw in parsed.raws:
        if raw.busbw is None:
            continue
        expected = raw.size / raw.time * 1e6 * factor / per
        if not close(expected, raw.busbw, raw.busbw_res, raw.time_res / raw.time):
            raise fail(
                raw.where,
                f"busbw {raw.busbw:g} {units} does not match size/time x {factor:.4g} = {expected:.4g} "
                f"for {op} on {ranks} ranks; is the rank count right?",
            )
