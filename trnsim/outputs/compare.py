"""Variants side by side: at every size each variant's metric, time and algorithm, and its ratio to
the first (A). Reads only what every evaluator's rows hold (:class:`trnsim.model.rows.Row`), so a
comparison takes results of any backend."""

from trnsim.outputs.render import PERCENT, Column

VALUE_KEY = {"busbw": "busbw_gbps", "time": "time_us", "efficiency": "efficiency"}
_VALUE_FMT = {"busbw": "{:.2f}", "time": "{:.2f}", "efficiency": PERCENT}
_VALUE_HEAD = {"busbw": "busbw (GB/s)", "time": "time (us)", "efficiency": "eff %"}


def shown_sizes(results, sizes: list[int]) -> list[int]:
    """The sizes some variant ran: on a small group a size may align to 0 bytes and be left out."""
    by_size = [{row.requested_bytes for row in r.evaluation.rows} for r in results]
    return [size for size in sizes if any(size in rows for rows in by_size)]


def priced_by_runtime(results) -> bool:
    """Whether some variant's numbers are a runtime's, not the ideal's: the table then shows the
    ideal's beside and says which runtime each variant models (an all-ideal comparison is as before)."""
    return any(result.runtime != "ideal" for result in results)


def runtime_title(results, letters: list[str]) -> str:
    """The title's words on the runtimes: ``runtime nccl`` when all agree, else each variant's;
    empty when every variant is ideal."""
    if not priced_by_runtime(results):
        return ""
    runtimes = [result.runtime for result in results]
    if len(set(runtimes)) == 1:
        return f"runtime {runtimes[0]}"
    return "runtimes " + ", ".join(f"{letter} {r}" for letter, r in zip(letters, runtimes, strict=True))


def runtime_notes(results, letters: list[str]) -> list[str]:
    """One line per variant saying what its numbers model, when some variant's are a runtime's."""
    if not priced_by_runtime(results):
        return []
    return [
        f"{letter} runtime {result.runtime}: "
        + (result.runtime_model or "the fabric's limit under trnsim's best schedule")
        for letter, result in zip(letters, results, strict=True)
    ]


def _ideal(row) -> dict:
    """The ideal's time, busbw and algorithm at a row: a runtime's row keeps them, the ideal's are its own."""
    return {
        "ideal_time_us": getattr(row, "ideal_time_us", row.time_us),
        "ideal_busbw_gbps": getattr(row, "ideal_busbw_gbps", row.busbw_gbps),
        "ideal_algorithm": getattr(row, "ideal_algorithm", row.algorithm),
    }


def comparison(results, sizes: list[int], metric: str, letters: list[str]) -> tuple[list[dict], list[dict]]:
    """The table's rows (each variant's value, time, algorithm and ratio to A, by letter) and the
    JSON's (each variant's values and ratios, by label), one per size any variant ran. When some
    variant is priced by a runtime, every variant's values carry the ideal's beside
    (``ideal_busbw_gbps``...: a variant under ``ideal`` repeats its own)."""
    key = VALUE_KEY[metric]
    with_ideal = priced_by_runtime(results)
    by_size = [{row.requested_bytes: row for row in r.evaluation.rows} for r in results]
    table_rows, payload_rows = [], []
    for size in shown_sizes(results, sizes):
        entry, values, ratios = {"bytes": size}, {}, {}
        first = by_size[0].get(size)
        reference = getattr(first, key) if first is not None else None
        for n, result in enumerate(results):
            row, letter = by_size[n].get(size), letters[n]
            entry[f"{letter}_variant"] = result.display
            if row is None:
                continue
            value = getattr(row, key)
            ratio = value / reference if reference else None
            entry[f"{letter}_{key}"], entry[f"{letter}_time_us"], entry[f"{letter}_over_A"] = (
                value,
                row.time_us,
                ratio,
            )
            entry[f"{letter}_algorithm"] = row.algorithm
            values[result.label] = {
                "bytes": row.bytes,
                "time_us": row.time_us,
                "busbw_gbps": row.busbw_gbps,
                "efficiency": row.efficiency,
                "algorithm": row.algorithm,
            }
            if with_ideal:
                values[result.label].update(_ideal(row))
                entry[f"{letter}_ideal_busbw_gbps"] = values[result.label]["ideal_busbw_gbps"]
            ratios[result.label] = ratio
        table_rows.append(entry)
        payload_rows.append({"bytes": size, "values": values, "ratios": ratios})
    return table_rows, payload_rows


def columns(letters: list[str], metric: str, csv: bool, with_ideal: bool = False) -> list[Column]:
    """The table's columns: the size, then per variant its value, algorithm, time and ratio to A
    (and, ``with_ideal``, the ideal's busbw beside a runtime's: the first left out when narrow)."""
    key = VALUE_KEY[metric]
    out = [Column("bytes", "size (B)")]
    for n, letter in enumerate(letters):
        if csv:  # CSV has no legend: name each variant (with its edits) in a column
            out.append(Column(f"{letter}_variant", f"{letter}_variant", align="left"))
        # to fit the width the times go first, then the algorithms, then the ratios, then the last
        # variants' values (A stays)
        value = Column(f"{letter}_{key}", f"{letter} {_VALUE_HEAD[metric]}", _VALUE_FMT[metric])
        out.append(value)
        if n:
            value.drop_priority = 1
        # which algorithm gave the value: variants differ in what they can run (nvls needs switches)
        out.append(Column(f"{letter}_algorithm", f"{letter} algo", align="left", drop_priority=3))
        if metric != "time":
            out.append(Column(f"{letter}_time_us", f"{letter} time (us)", "{:.2f}", drop_priority=4))
        if n:
            out.append(Column(f"{letter}_over_A", f"{letter}/A", "{:.3f}x", drop_priority=2))
        if with_ideal:
            out.append(
                Column(f"{letter}_ideal_busbw_gbps", f"{letter} ideal busbw", "{:.2f}", drop_priority=5)
            )
    return out


def alignment_notes(results, letters: list[str]) -> list[str]:
    """One line per distinct note on aligned or left-out sizes, naming the variants it applies to."""
    by_note: dict[str, list[str]] = {}
    for letter, result in zip(letters, results, strict=True):
        if (note := result.evaluation.alignment_note()) is not None:
            by_note.setdefault(note, []).append(letter)
    return [f"{', '.join(names)}: {note}" for note, names in by_note.items()]
