"""Text output of either tool: comment lines, the echoed command, one table header and the data
rows after it, read line by line (a run of too many rows is refused at the first row past the
limit)."""

from trnsim.errors import ConfigError
from trnsim.studies.calibration.logs.claims import op_claim, read_trnsim_comment
from trnsim.studies.calibration.logs.nccl import NCCL_BINARY, NCCL_RANK, NCCL_START, nccl_columns
from trnsim.studies.calibration.logs.nccom import nccom_columns, read_nccom_args
from trnsim.studies.calibration.logs.numbers import half_unit, parse_bandwidth, parse_number, parse_size
from trnsim.studies.calibration.logs.parsed import Claim, Parsed, Raw, check_rows, fail, quote


def parse_text(text: str, path: str) -> Parsed:
    """Read text output of either tool: its rows as printed and the claims of its lines."""
    tool = None
    columns: dict[str, int] = {}
    header_line = 0
    time_name = ""
    raws: list[Raw] = []
    source = ""
    ops: list[Claim] = []
    rank_claims: list[Claim] = []
    rank_ids: set[int] = set()
    rank_line = 0
    hosts: set[str] = set()  # the hosts of nccl-tests' rank lines
    node_claims: list[Claim] = []

    for number, raw_line in enumerate(text.splitlines(), 1):
        line = raw_line.strip()
        if not line:
            continue
        where = f"{path}:{number}"
        if line.startswith("#"):
            body = line[1:].strip()
            lowered = body.lower()
            if lowered.startswith("source:"):
                source = source or body[len("source:") :].strip()
            elif lowered.startswith("trnsim:"):
                if raws:
                    raise fail(where, "a '# trnsim:' line must come before the data rows")
                read_trnsim_comment(body[len("trnsim:") :], where, number, ops, rank_claims, node_claims)
            elif match := NCCL_START.match(line):
                ops.append(op_claim(match.group(1), number, "'Collective test starting' line", where))
            elif match := NCCL_RANK.match(line):
                if len(match.group(1)) > 8:
                    raise fail(where, f"rank {quote(match.group(1))} is not a rank number")
                rank_ids.add(int(match.group(1)))
                hosts.add(match.group(2))
                rank_line = rank_line or number
            else:
                tokens = body.split()
                if tokens and tokens[0] == "size" and "count" in tokens and "type" in tokens:
                    if tool is not None:
                        raise fail(
                            where,
                            f"a second table header (the first is at line {header_line}); one run per file",
                        )
                    tool, header_line = "nccl-tests", number
                    columns, time_name = nccl_columns(tokens, where)
            continue

        tokens = line.split()
        if tokens[0].lower() == "size(b)":
            if tool is not None:
                raise fail(
                    where, f"a second table header (the first is at line {header_line}); one run per file"
                )
            tool, header_line = "nccom-test", number
            columns, time_name = nccom_columns(tokens, where)
        elif tool is None:
            read_command(tokens, line, where, number, ops, rank_claims, node_claims)
        elif tokens[0][0] in "0123456789+-.":
            raws.append(text_row(tokens, columns, time_name, where, number))
            check_rows(len(raws), where)  # stop here, not after parsing a million rows
        # anything else after the header (``Avg bus bandwidth: ...``, MPI chatter) is not data

    if tool is None:
        raise ConfigError(
            f"{path}:1: no table header found; expected nccl-tests output (a '#  size  count  type ...' "
            "line) or nccom-test output (a 'size(B)  count(elems)  type ...' line)"
        )
    if not raws:
        raise fail(f"{path}:{header_line}", "no data rows after this table header")
    if rank_ids:
        rank_claims.append(Claim(len(rank_ids), rank_line, f"{len(rank_ids)} '#  Rank' device lines"))
        node_claims.append(Claim(len(hosts), rank_line, f"{len(hosts)} host(s) in the '#  Rank' lines"))
    # no row could tell the units: nccl-tests prints GB/s; nccom-test printed GiB/s under time(us)
    default = "GiB/s" if tool == "nccom-test" and time_name == "time(us)" else "GB/s"
    return Parsed(tool, "text", raws, source, ops, rank_claims, default, header_line, node_claims)


def read_command(
    tokens: list[str], line: str, where: str, number: int, ops: list, ranks: list, nodes: list | None = None
) -> None:
    """Take the op, rank count and nodes from an echoed nccom-test or nccl-tests command line."""
    words = [token.strip("\"'`") for token in tokens]
    for start, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == "nccom-test":
            read_nccom_args(words[start + 1 :], where, number, ops, ranks, nodes)
            return
    if match := NCCL_BINARY.search(line):
        ops.append(op_claim(match.group(1), number, "command line", where))


def text_row(tokens: list[str], columns: dict[str, int], time_name: str, where: str, number: int) -> Raw:
    """One data row of the table, by the header's ``columns``."""
    needed = max(columns.values()) + 1
    if len(tokens) < needed:
        names = ", ".join(name for name, _ in sorted(columns.items(), key=lambda item: item[1]))
        raise fail(where, f"expected at least {needed} columns (with {names}), found {len(tokens)}")
    size = parse_size(tokens[columns.get("size", 0)], where)
    time_text = tokens[columns["time"]]
    time = parse_number(time_text, where, time_name or "time")
    if time <= 0:
        raise fail(where, f"{time_name or 'time'} {time_text}: expected a time > 0 us")
    algbw = busbw = None
    algbw_res = busbw_res = 0.0
    if "algbw" in columns:
        algbw_text = tokens[columns["algbw"]]
        algbw, algbw_res = parse_bandwidth(algbw_text, where, "algbw"), half_unit(algbw_text)
    if "busbw" in columns:
        busbw_text = tokens[columns["busbw"]]
        busbw, busbw_res = parse_bandwidth(busbw_text, where, "busbw"), half_unit(busbw_text)
    dtype = tokens[columns["type"]] if "type" in columns else None
    algorithm = tokens[columns["algorithm"]] if "algorithm" in columns else None
    return Raw(
        where, number, size, time, half_unit(time_text), algbw, algbw_res, busbw, busbw_res, dtype, algorithm
    )
