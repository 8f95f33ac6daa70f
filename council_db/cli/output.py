"""One way to print what a read command returns: table (for people), json, jsonl, csv.

Data goes to stdout, messages to stderr, so ``| jq`` and ``> file.csv`` get clean output.
A table is as wide as the terminal (or $COLUMNS); written to a pipe or a file, as wide as its
rows. Every cell and title is printed as text, never read as rich markup: stored data such
as "[redacted]" or "[link=...]" shows as it is, a control character as its escape
(``terminal_text``).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import shutil
import sys
from typing import Any, Iterable, Iterator, TextIO

UNLIMITED = 100_000  # a table's width off a terminal: no cell is folded
CELL_CAP = 36  # a cell's characters in a cropped table (sql at a terminal's width: a UUID whole); the rest "…"
SEPARATOR = 3  # " │ " between two columns


def emit_rows(rows: Iterable[dict], fmt: str, *, title: str | None = None, out: TextIO | None = None,
              columns: list[str] | None = None, crop: bool = False) -> int:
    """Print rows (dicts with the same keys) in the chosen format; returns how many. A table
    shows ``columns`` (default: all), folding a long cell onto more lines, or with ``crop`` the
    columns that fit the terminal, each cell cut to one line (saying how many it left out)."""
    out = out or sys.stdout
    counted = _Counted(rows)
    if fmt == "jsonl":
        for row in counted:
            out.write(json.dumps(row, default=str) + "\n")
    elif fmt == "json":
        _json_array(counted, out)
    elif fmt == "csv":
        _csv(iter(counted), out)
    else:
        listed = list(counted)
        _table(listed, columns or (list(listed[0]) if listed else []), title, out, crop)
    return counted.n


class _Counted:
    """Rows passed through once (they may be streamed), counted as they go."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self.rows, self.n = rows, 0

    def __iter__(self) -> Iterator[dict]:
        for row in self.rows:
            self.n += 1
            yield row


def _json_array(rows: Iterable[dict], out: TextIO) -> None:
    """What json.dump(list(rows), indent=2) writes, one row at a time (rows may be streamed)."""
    out.write("[")
    empty = True
    for row in rows:
        out.write(("\n  " if empty else ",\n  ") + json.dumps(row, indent=2, default=str).replace("\n", "\n  "))
        empty = False
    out.write("]\n" if empty else "\n]\n")


def _csv(rows: Iterator[dict], out: TextIO) -> None:
    """A header from the first row's keys, then the rows as they come; text a spreadsheet
    would run as a formula is quoted (``spreadsheet_text``)."""
    from council_db.report.tables import cell  # here: --help need not load the report's modules
    from council_db.spreadsheet_text import spreadsheet_text

    first = next(rows, None)
    columns = list(first) if first is not None else []
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([spreadsheet_text(c) for c in columns])
    for row in itertools.chain([first] if first is not None else [], rows):
        writer.writerow([spreadsheet_text(cell(row.get(c))) for c in columns])


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


def _table(rows: list[dict], columns: list[str], title: str | None, out: TextIO, crop: bool) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from council_db.terminal_text import terminal_text

    def shown(value: str) -> Text:
        return Text(terminal_text(value))

    console = Console(file=out, width=table_width(out), highlight=False)
    if not rows:
        console.print(shown(f"{title + ': ' if title else ''}nothing to show"))
        return
    crop = crop and console.width < UNLIMITED
    shown_columns = _fitting(rows, columns, console.width) if crop else columns
    table = Table(title=None if title is None else shown(title), show_edge=False, header_style="bold")
    for column in shown_columns:
        numeric = rows and all(isinstance(r.get(column), (int, float)) or r.get(column) is None for r in rows)
        table.add_column(shown(column), justify="right" if numeric else "left",
                         **(dict(overflow="ellipsis", no_wrap=True, max_width=CELL_CAP) if crop else dict(overflow="fold")))
    for row in rows:
        table.add_row(*(shown(table_cell(column, row.get(column))) for column in shown_columns))
    console.print(table)
    if len(shown_columns) < len(columns):
        from council_db.cli.context import message

        message(f"{len(shown_columns):,} of {len(columns):,} columns shown, long values cut: --wide shows every "
                "column whole")


def table_cell(column: str, value: Any) -> str:
    """A value as a table for people shows it: whole numbers with thousands separators, but
    not ids (typed back as they are) or times in microseconds (columns named id, *_id, *_us);
    the rest as ``report.tables.cell`` writes it."""
    from council_db.report.tables import cell

    if isinstance(value, int) and not isinstance(value, bool) and column != "id" and not column.endswith(("_id", "_us")):
        return f"{value:,}"
    return cell(value)


def _fitting(rows: list[dict], columns: list[str], width: int) -> list[str]:
    """The leading columns that fit ``width`` with each cell cut at CELL_CAP (at least one)."""
    from council_db.terminal_text import terminal_text

    kept, used = [], -SEPARATOR
    for column in columns:
        needed = min(CELL_CAP, max(len(terminal_text(value)) for value in
                                   (column, *(table_cell(column, row.get(column)) for row in rows))))
        if kept and used + SEPARATOR + needed > width:
            break
        kept.append(column)
        used += SEPARATOR + needed
    return kept


def text_width(out: TextIO) -> int | None:
    """The columns lines of text under a table may take: the terminal's (or $COLUMNS), where
    the table is as wide; None (as long as they are) off a terminal."""
    return shutil.get_terminal_size().columns if table_width(out) is None else None


def table_width(out: TextIO) -> int | None:
    """The terminal's width (None: rich asks it, or reads $COLUMNS); off a terminal, unlimited."""
    return None if out.isatty() or os.environ.get("COLUMNS") else UNLIMITED
