"""The plain-text formats: CSV (values as they are) and Markdown (text escaped, never read as markup)."""

import csv
import re

from trnsim.outputs.table import Table, check_finite, visible


def emit_csv(tables: list[Table], stream) -> None:
    # CSV stays plain (the csv module quotes what needs it); check every value before writing any
    for table in tables:
        for row in table.rows:
            for column in table.columns:
                check_finite(row.get(column.key))
    writer = csv.writer(stream, lineterminator="\n")
    for i, table in enumerate(tables):
        if len(tables) > 1:
            if i:
                stream.write("\n")
            stream.write(f"# {visible(table.title or '')}\n")
        writer.writerow([c.key for c in table.columns])
        for row in table.rows:
            writer.writerow([csv_cell(row.get(c.key)) for c in table.columns])


def csv_cell(value):
    """A value as one CSV cell: nothing for None, ``key=value;...`` for a mapping (link shares)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        return visible(";".join(f"{key}={item}" for key, item in value.items()))
    return visible(value) if isinstance(value, str) else value


# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones that start inline
# markup (emphasis, code, links, HTML, entities, strikethrough) or end a table cell.
_MD_INLINE = re.compile(r"([\\|`*_\[\]<>&~])")
# at the start of a paragraph: a bullet ("- x", "+ x", "---") or an ordered list ("1. x", "2) x")
_MD_BULLET = re.compile(r"[-+](?=\s|$|-)")
_MD_ORDERED = re.compile(r"(\d{1,9})([.)])(?=\s|$)")


def _md(text: str, paragraph: bool = False) -> str:
    """``text`` escaped so Markdown renders it literally, on one line.

    Numbers (``1073741824``, ``1.000x``, ``-0.5``) are left as they are. A ``paragraph`` (a footer
    line) also loses its leading spaces (four make a code block) and has a list marker escaped.
    """
    text = visible(" ".join(text.splitlines()))
    if paragraph:
        text = text.lstrip()
    text = _MD_INLINE.sub(r"\\\1", text)
    if text.startswith("#"):  # a heading where a line starts; harmless inside a cell
        return "\\" + text
    if paragraph:
        if _MD_BULLET.match(text):
            return "\\" + text
        ordered = _MD_ORDERED.match(text)
        if ordered:  # escape the "." or ")" after the digits, so the number itself stays readable
            return f"{ordered[1]}\\{ordered[2]}{text[ordered.end() :]}"
    return text


def emit_markdown(tables: list[Table], stream) -> None:
    # build everything first: a NaN in the last row must not leave half a document behind
    lines: list[str] = []
    for i, table in enumerate(tables):
        if i:
            lines.append("")
        if table.title:
            lines += [f"**{_md(table.title)}**", ""]
        lines.append("| " + " | ".join(_md(c.header) for c in table.columns) + " |")
        lines.append("|" + "|".join("---:" if c.align == "right" else "---" for c in table.columns) + "|")
        for row in table.rows:
            lines.append("| " + " | ".join(_md(c.text(row.get(c.key))) for c in table.columns) + " |")
        for footer in table.footer:
            # each footer line is its own paragraph, so none can turn into a heading or a list
            for part in footer.splitlines() or [""]:
                lines += ["", _md(part, paragraph=True)]
    stream.write("".join(line + "\n" for line in lines))


# Rich's box table: one space of padding each side of a cell and a border between and around columns
