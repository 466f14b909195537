"""JSON output of either tool: one object with a ``results`` list, told apart by the first entry's
keys. Python's own limits (NaN, numbers of thousands of digits, deep nesting) become one-line
messages."""

import json
import re

from trnsim.studies.calibration.logs.claims import read_trnsim_object
from trnsim.studies.calibration.logs.nccl import nccl_entry, nccl_json_claims
from trnsim.studies.calibration.logs.nccom import nccom_entry
from trnsim.studies.calibration.logs.parsed import Claim, Parsed, check_rows, fail


class Refused(ValueError):
    pass


def refuse_constant(name: str):
    raise Refused(f"{name} is not a number this reader accepts")


def parse_int(text: str) -> int:
    # Python refuses int() of more than 4,300 digits with a ValueError of its own
    if len(text.lstrip("-")) > 40:
        raise Refused(f"a number of {len(text.lstrip('-')):,} digits")
    return int(text)


def parse_json(text: str, path: str) -> Parsed:
    """Read JSON output of either tool: its rows as printed and the claims of its keys."""
    try:
        document = json.loads(text, parse_constant=refuse_constant, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise fail(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except Refused as exc:
        long = re.search(r"[0-9]{41,}", text)
        line = text.count("\n", 0, long.start()) + 1 if long and "digits" in str(exc) else 0
        raise fail(f"{path}:{line}", f"JSON: {exc}") from None
    except RecursionError:
        raise fail(f"{path}:1", "JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise fail(f"{path}:1", "expected a JSON object with a 'results' list")
    results = document.get("results")
    if not isinstance(results, list):
        raise fail(
            f"{path}:0", "expected a 'results' list (nccl-tests -J or nccom-test --report-to-json-file)"
        )
    if not results:
        raise fail(f"{path}:0", "'results' is empty: no data rows")
    check_rows(len(results), f"{path}:0")
    ops: list[Claim] = []
    ranks: list[Claim] = []
    nodes: list = []
    source = read_trnsim_object(document.get("trnsim"), path, ops, ranks, nodes)
    first = results[0]
    if isinstance(first, dict) and ("out_of_place" in first or "size" in first):
        tool = "nccl-tests"
        raws = [nccl_entry(entry, f"{path}:0: results[{i}]", i) for i, entry in enumerate(results)]
        nccl_json_claims(document, path, ops, ranks)
    elif isinstance(first, dict) and "size(B)" in first:
        tool = "nccom-test"
        raws = [nccom_entry(entry, f"{path}:0: results[{i}]", i) for i, entry in enumerate(results)]
    else:
        raise fail(
            f"{path}:0: results[0]",
            "expected an nccl-tests entry (size, out_of_place) or an nccom-test entry (size(B), time:avg(us))",
        )
    return Parsed(tool, "json", raws, source, ops, ranks, "GB/s", 0, nodes)
