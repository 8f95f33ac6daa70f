"""council-db stats / sessions / rejected: look at what is stored."""

from __future__ import annotations

from typing import Annotated, Callable, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import (
    LISTING,
    Csv,
    Json,
    Lines,
    Output,
    Wide,
    chosen,
    destination,
    format_option,
    to_file,
    wrote,
)
from council_db.cli.output import emit_object, emit_rows

ListingFormat = Annotated[Optional[str], format_option(*LISTING)]
SESSION_COLUMNS = ["session_id", "timestamp", "records", "mean_score", "category"]  # fit 80 columns
REJECTED_COLUMNS = ["import_id", "line_number", "field", "reason"]
BEYOND_ANY = 2**62  # more rows than any database holds; SQL integers stop at 2**63
SESSIONS_SHOWN, LINES_SHOWN = 20, 100  # what stdout gets unless told; a file gets every row


def stats(ctx: typer.Context, fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False,
          as_csv: Csv = False, output: Output = None) -> None:
    """Totals of what is stored.

    Records, sessions, reviewers, models, schema versions, time window, exclusions."""
    from council_db.store.contents import stats as collect

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    totals = collect(state(ctx).database(read_only=True))
    with destination(output) as out:
        emit_object(totals, fmt, title="council-db stats", out=out)
    wrote(output, fmt)


def sessions(
    ctx: typer.Context,
    latest: Annotated[Optional[int], typer.Option(
        "--sessions", "-n", min=1, metavar="N",
        help=f"Only the latest N sessions (default: {SESSIONS_SHOWN} on stdout, every one in a file -o writes).")
    ] = None,
    fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """The latest sessions, one summary row each.

    Printed, the latest 20 (it says how many of how many); a file written with -o holds
    every session unless --sessions says otherwise."""
    from council_db.cli.table_view import for_people
    from council_db.store.contents import latest_sessions, session_count

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    db = state(ctx).database(read_only=True)
    limit = _how_many(latest, output, SESSIONS_SHOWN)
    rows = latest_sessions(db, limit)
    columns = None
    if fmt == "table" and not wide:
        rows, columns = for_people(db, rows), SESSION_COLUMNS
    with destination(output) as out:
        written = emit_rows(rows, fmt, title="latest sessions", out=out, columns=columns)
    _shown(written, limit, lambda: session_count(db), "sessions", "--sessions")
    wrote(output, fmt, written, "session")


def rejected(
    ctx: typer.Context,
    import_id: Annotated[Optional[int], typer.Option("--import", metavar="ID",
                                                     help="Only lines of this import (its id).")] = None,
    limit: Annotated[Optional[int], typer.Option(
        "--limit", "-n", min=1, metavar="N",
        help=f"At most N lines (default: {LINES_SHOWN} on stdout, every one in a file -o writes).")] = None,
    fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """Lines that failed validation, and why.

    Each with its import, line number, field and reason; the line's byte length, the byte
    where JSON parsing stopped, a hash of the line keyed by this database; how many unknown
    keys it had, and the values of its record fields that are not free text (others by JSON
    type). The line's text is never kept: find it in the file by its line number."""
    from council_db.store.contents import rejected_count, rejected_lines

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    if import_id is not None and abs(import_id) >= BEYOND_ANY:
        import_id = -1  # no such import: SQL integers stop at 2**63
    db = state(ctx).database(read_only=True)
    most = _how_many(limit, output, LINES_SHOWN)
    rows = rejected_lines(db, import_id, most)
    with destination(output) as out:
        written = emit_rows(rows, fmt, title="rejected lines", out=out, columns=None if wide else REJECTED_COLUMNS)
    _shown(written, most, lambda: rejected_count(db, import_id), "rejected lines", "--limit")
    wrote(output, fmt, written, "line")


def _how_many(given: int | None, output: str | None, shown: int) -> int:
    """How many rows to read: as given, else all of them for a file and ``shown`` for stdout."""
    if given is not None:
        return min(given, BEYOND_ANY)
    return BEYOND_ANY if to_file(output) else shown


def _shown(written: int, limit: int, total: Callable[[], int], what: str, option: str) -> None:
    """Say "20 of 300 sessions shown" when the limit left rows out (counted only then)."""
    if written == limit and (stored := total()) > written:
        message(f"{written:,} of {stored:,} {what} shown: {option} N for more, or -o FILE for all of them")
