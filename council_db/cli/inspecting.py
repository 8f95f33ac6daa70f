"""council-db stats / sessions / rejected: look at what is stored."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.formats import LISTING, Csv, Json, Lines, Output, Wide, chosen, destination, format_option
from council_db.cli.output import emit_object, emit_rows

ListingFormat = Annotated[Optional[str], format_option(*LISTING)]
SESSION_COLUMNS = ["session_id", "timestamp", "records", "mean_score", "category"]  # fit 80 columns
REJECTED_COLUMNS = ["import_id", "line_number", "field", "reason"]
BEYOND_ANY = 2**62  # more rows than any database holds; SQL integers stop at 2**63


def stats(ctx: typer.Context, fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False,
          as_csv: Csv = False, output: Output = None) -> None:
    """Totals of what is stored.

    Records, sessions, reviewers, models, schema versions, time window, exclusions."""
    from council_db.store.contents import stats as collect

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    totals = collect(state(ctx).database(read_only=True))
    with destination(output) as out:
        emit_object(totals, fmt, title="council-db stats", out=out)


def sessions(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many of the latest sessions.")] = 20,
    fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """The latest sessions, one summary row each."""
    from council_db.cli.table_view import for_people
    from council_db.store.contents import latest_sessions

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    db = state(ctx).database(read_only=True)
    rows = latest_sessions(db, min(limit, BEYOND_ANY))
    columns = None
    if fmt == "table" and not wide:
        rows, columns = for_people(db, rows), SESSION_COLUMNS
    with destination(output) as out:
        emit_rows(rows, fmt, title="latest sessions", out=out, columns=columns)


def rejected(
    ctx: typer.Context,
    import_id: Annotated[Optional[int], typer.Option("--import", metavar="ID",
                                                     help="Only lines of this import (its id).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many lines.")] = 100,
    fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """Lines that failed validation, and why.

    Each with its import, line number, field and reason; the line's byte length, the byte
    where JSON parsing stopped, a hash of the line keyed by this database; how many unknown
    keys it had, and the values of its record fields that are not free text (others by JSON
    type). The line's text is never kept: find it in the file by its line number."""
    from council_db.store.contents import rejected_lines

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    if import_id is not None and abs(import_id) >= BEYOND_ANY:
        import_id = -1  # no such import: SQL integers stop at 2**63
    rows = rejected_lines(state(ctx).database(read_only=True), import_id, min(limit, BEYOND_ANY))
    with destination(output) as out:
        emit_rows(rows, fmt, title="rejected lines", out=out, columns=None if wide else REJECTED_COLUMNS)
