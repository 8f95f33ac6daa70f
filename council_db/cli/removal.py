"""council-db delete and council-db prune: undo a bad import or a session, keep a retention
window. More than one session is a dry run unless --yes says otherwise."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from council_db.cli.context import checked_time, message, state

Yes = Annotated[bool, typer.Option("--yes", "-y", help="Delete: without it, more than one session is only counted.")]


def delete(
    ctx: typer.Context,
    import_id: Annotated[Optional[int], typer.Option(
        "--import", metavar="ID",
        help="The sessions this import stored (its import_id: in the JSON summary of import, or "
             "council-db sql \"SELECT * FROM imports\").")] = None,
    session: Annotated[Optional[str], typer.Option(
        "--session", metavar="ID", help="One session, by its id or a prefix of it that no other id has.")] = None,
    yes: Yes = False,
) -> None:
    """Delete a bad import's sessions, or one session.

    Their records, statistics and queued push events go with them, in one transaction.
    Deleting an import also forgets that it read its file, so importing it again reads it again."""
    from council_db.store import removal

    if (import_id is None) == (session is None):
        raise typer.BadParameter("give one of --import ID or --session ID", param_hint="--import/--session")
    from council_db.store.session_ids import full_id

    db = _existing(ctx)
    selection = removal.of_import(import_id) if import_id is not None else removal.of_session(full_id(db, session))
    _carry_out(db, selection, yes)


def prune(
    ctx: typer.Context,
    before: Annotated[str, typer.Option("--before", metavar="TIME", help="Delete the sessions dated before this "
                                        "ISO-8601 time (undated sessions stay).")],
    yes: Yes = False,
) -> None:
    """Delete the sessions dated before a time: a retention window.

    One transaction; without --yes it only counts what would go."""
    from council_db.contract.timestamps import format_us, timestamp_us
    from council_db.store import removal

    checked_time("--before", before)
    ts_us = timestamp_us(before)
    if ts_us is None:
        raise typer.BadParameter("an empty time", param_hint="--before")
    _carry_out(_existing(ctx), removal.before(ts_us, format_us(ts_us)), yes)


def _existing(ctx: typer.Context):
    """The database, which must exist: deleting from a mistyped --db must not create one. (Opened
    as a reader is; its writer is an ordinary connection.)"""
    return state(ctx).database(read_only=True)


def _carry_out(db, selection, yes: bool) -> None:
    """Delete when --yes says so or it is one session (counted first only then: the deletion
    counts what it removes itself); say what happened."""
    from council_db.store import removal

    if not yes:
        found = removal.count(db, selection)
        if found.sessions > 1:
            message(f"would delete {_what(found)}: {selection.description}. Nothing was deleted; run again with "
                    "--yes to delete.")
            return
    done = removal.delete(db, selection)
    if done.sessions == 0:
        message(f"nothing to delete: no sessions match ({selection.description})")
        return
    message(f"deleted {_what(done)}: {selection.description}")
    if done.later_imports:
        later = ", ".join(map(str, done.later_imports))
        message(f"note: later imports of the same file ({later}) stay, so importing it again resumes after them")


def _what(counted) -> str:
    from council_db.contract.timestamps import format_us

    span = "" if counted.first_us is None else f", dated {format_us(counted.first_us)} to {format_us(counted.last_us)}"
    return f"{_sessions(counted.sessions)} ({counted.records:,} records{span})"


def _sessions(n: int) -> str:
    return f"{n:,} session" if n == 1 else f"{n:,} sessions"
