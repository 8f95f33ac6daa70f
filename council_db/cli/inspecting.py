"""council-db stats / sessions / rejected: look at what is stored."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.output import Format, emit_object, emit_rows

FormatOption = Annotated[Format, typer.Option("--format", help="table, json, jsonl or csv.")]


def stats(ctx: typer.Context, fmt: FormatOption = Format.table) -> None:
    """Totals of what is stored.

    Records, sessions, reviewers, models, schema versions, time window, exclusions."""
    from council_db.store.contents import stats as collect

    emit_object(collect(state(ctx).database(read_only=True)), fmt, title="council-db stats")


def sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many of the latest sessions.")] = 20,
    fmt: FormatOption = Format.table,
) -> None:
    """The latest sessions, one summary row each."""
    from council_db.store.contents import latest_sessions

    emit_rows(latest_sessions(state(ctx).database(read_only=True), limit), fmt, title="latest sessions")


def rejected(
    ctx: typer.Context,
    import_id: Annotated[Optional[int], typer.Option("--import", help="Only lines of this import (its id).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many lines.")] = 100,
    fmt: FormatOption = Format.table,
) -> None:
    """Lines that failed validation, and why.

    Each with its import, line number, field and reason; the line's byte length, the byte
    where JSON parsing stopped, a hash of the line keyed by this database; how many unknown
    keys it had, and the values of its record fields that are not free text (others by JSON
    type). The line's text is never kept: find it in the file by its line number."""
    from council_db.store.contents import rejected_lines

    emit_rows(rejected_lines(state(ctx).database(read_only=True), import_id, limit), fmt, title="rejected lines")
