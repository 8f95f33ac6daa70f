"""One way to print what a read command returns: table (for people), json, jsonl, csv.

Data goes to stdout, messages to stderr, so ``| jq`` and ``> file.csv`` get clean output.
"""

from __future__ import annotations

import csv
import json
import sys
from enum import Enum
from typing import Any, Iterable, TextIO


class Format(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def emit_rows(rows: Iterable[dict], fmt: Format, *, title: str | None = None, out: TextIO | None = None) -> None:
    """Print rows (dicts with the same keys) in the chosen format."""
    out = out or sys.stdout
    if fmt is Format.jsonl:
        for row in rows:
            out.write(json.dumps(row, default=str) + "\n")
        return
    rows = list(rows)
    if fmt is Format.json:
        json.dump(rows, out, indent=2, default=str)
        out.write("\n")
        return
    columns = list(rows[0]) if rows else []
    if fmt is Format.csv:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_cell(row.get(c)) for c in columns] for row in rows)
        return
    _table(rows, columns, title, out)


def emit_object(data: dict, fmt: Format, *, title: str | None = None, out: TextIO | None = None) -> None:
    """Print one object: as JSON, or flattened to name/value rows for the other formats."""
    out = out or sys.stdout
    if fmt in (Format.json, Format.jsonl):
        out.write(json.dumps(data, indent=2 if fmt is Format.json else None, default=str) + "\n")
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

    table = Table(title=title, show_edge=False, header_style="bold")
    for column in columns:
        numeric = rows and all(isinstance(r.get(column), (int, float)) or r.get(column) is None for r in rows)
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    console = Console(file=out, width=None if out.isatty() else 200)
    if not rows:
        console.print(f"{title + ': ' if title else ''}nothing to show")
        return
    console.print(table)
