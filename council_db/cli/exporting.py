"""council-db export: records out as llm-council JSONL or CSV, streamed."""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated, Optional

import typer

from council_db.cli.context import bad_time, message, state


class ExportFormat(str, Enum):
    jsonl = "jsonl"
    csv = "csv"


def command(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("--output", "-o", help="File to write; - (the default) is stdout.")] = "-",
    fmt: Annotated[ExportFormat, typer.Option("--format", help="jsonl is what llm-council reads.")] = (
        ExportFormat.jsonl),
    since: Annotated[Optional[str], typer.Option(help="Only sessions at or after this ISO-8601 time.")] = None,
    until: Annotated[Optional[str], typer.Option(help="Only sessions before this ISO-8601 time.")] = None,
    reviewer: Annotated[Optional[str], typer.Option(help="Only scores given by this reviewer id.")] = None,
    model: Annotated[Optional[str], typer.Option(help="Only scores of this candidate model id.")] = None,
    session: Annotated[Optional[str], typer.Option(help="Only this session id.")] = None,
    min_consent: Annotated[int, typer.Option(
        min=0, max=4, help="Only records with at least this consent level (2+ may leave the machine).")] = 0,
) -> None:
    """Export stored records as llm-council JSONL, JSON or CSV.

    import -> export -> import gives the same rows, field for field."""
    from council_db.contract.fields import LineError
    from council_db.outlets.export import ExportFilter, write

    filters = ExportFilter(since, until, reviewer, model, session, min_consent)
    try:
        filters.where()
    except LineError as error:
        raise bad_time(error.problem) from None
    db = state(ctx).database(read_only=True)
    if output == "-":
        count = write(db, filters, sys.stdout, fmt.value)
    else:
        # A new file is private (0600), like the database: exported records are evidence too.
        descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(descriptor, "w", encoding="utf-8", newline="") as out:
            count = write(db, filters, out, fmt.value)
    message(f"exported {count:,} records" + ("" if output == "-" else f" to {output}"))
