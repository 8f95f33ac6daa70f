"""One way to print what a read command returns: table (for people), json, jsonl, csv.

Data goes to stdout, messages to stderr, so ``| jq`` and ``> file.csv`` get clean output.
A table is as wide as the terminal (or $COLUMNS); written to a pipe or a file, as wide as its
rows. Every cell and title is printed as text, never read as rich markup: stored data such
as "[redacted]" or "[link=...]" shows as it is.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import sys
from typing import Any, Iterable, Iterator, TextIO

UNLIMITED = 100_000  # a table's width off a terminal: no cell is folded


def emit_rows(rows: Iterable[dict], fmt: str, *, title: str | None = None, out: TextIO | None = None,
              columns: list[str] | None = None) -> None:
    """Print rows (dicts with the same keys) in the chosen format; a table shows ``columns``
    (default: all)."""
    out = out or sys.stdout
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, default=str) + "\n")
        return
    if fmt == "json":
        _json_array(rows, out)
        return
    if fmt == "csv":
        _csv(iter(rows), out)
        return
    rows = list(rows)
    _table(rows, columns or (list(rows[0]) if rows else []), title, out)


def _json_array(rows: Iterable[dict], out: TextIO) -> None:
    """What json.dump(list(rows), indent=2) writes, one row at a time (rows may be streamed)."""
    out.write("[")
    empty = True
    for row in rows:
        out.write(("\n  " if empty else ",\n  ") + json.dumps(row, indent=2, default=str).replace("\n", "\n  "))
        empty = False
    out.write("]\n" if empty else "\n]\n")


def _csv(rows: Iterator[dict], out: TextIO) -> None:
    """A header from the first row's keys, then the rows as they come."""
    from council_db.report.tables import cell  # here: --help need not load the report's modules

    first = next(rows, None)
    columns = list(first) if first is not None else []
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in itertools.chain([first] if first is not None else [], rows):
        writer.writerow([cell(row.get(c)) for c in columns])


def emit_object(data: dict, fmt: str, *, title: str | None = None, out: TextIO | None = None) -> None:
    """Print one object: as JSON, or flattened to name/value rows for the other formats."""
    out = out or sys.stdout
    if fmt in ("json", "jsonl"):
        out.write(json.dumps(data, indent=2 if fmt == "json" else None, default=str) + "\n")
        return
    emit_rows(({"name": k, "value": v} for k, v in _flatten(data)), fmt, title=title, out=out)


def _flatten(data: dict, prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _flatten(value, f"{name}.")
        else:
            yield name, value


def _table(rows: list[dict], columns: list[str], title: str | None, out: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from council_db.report.tables import cell

    console = Console(file=out, width=table_width(out), highlight=False)
    if not rows:
        console.print(Text(f"{title + ': ' if title else ''}nothing to show"))
        return
    table = Table(title=None if title is None else Text(title), show_edge=False, header_style="bold")
    for column in columns:
        numeric = rows and all(isinstance(r.get(column), (int, float)) or r.get(column) is None for r in rows)
        table.add_column(Text(column), justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell(row.get(c))) for c in columns))
    console.print(table)


def table_width(out: TextIO) -> int | None:
    """The terminal's width (None: rich asks it, or reads $COLUMNS); off a terminal, unlimited."""
    return None if out.isatty() or os.environ.get("COLUMNS") else UNLIMITED
