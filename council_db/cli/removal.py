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
        help="The records this import stored, by its id (the import summary shows it, or council-db sql "
             "\"SELECT id, source, status FROM imports\"). Other imports' records stay, in shared sessions "
             "too.")] = None,
    session: Annotated[Optional[str], typer.Option(
        "--session", metavar="ID", help="One session, by its id or a prefix of it that no other id has.")] = None,
    yes: Yes = False,
) -> None:
    """Delete a bad import's records, or one session.

    With them go the sessions left empty, their statistics and queued push events, in one
    transaction. Deleting an import also deletes its row and rejected lines, so importing its
    file again reads it again; an import still running is refused."""
    if (import_id is None) == (session is None):
        raise typer.BadParameter("give one of --import ID or --session ID", param_hint="--import/--session")
    db = _existing(ctx)
    if import_id is not None:
        _undo_import(db, import_id, yes)
        return
    from council_db.store import removal
    from council_db.store.session_ids import full_id

    _carry_out(db, removal.of_session(full_id(db, session)), yes)


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


def _undo_import(db, import_id: int, yes: bool) -> None:
    """Delete an import when --yes says so or it touches one session at most; say what
    happened, and which files to import again to restore what other imports had read."""
    from council_db.store import import_removal

    if not yes:
        found = import_removal.count(db, import_id)
        if found.touched > 1:
            message(f"would delete {_taken(found)}. Nothing was deleted; run again with --yes to delete.")
            return
    done = import_removal.delete(db, import_id)
    message(f"deleted {_taken(done)}, and its row")
    if done.readers:
        named = ", ".join(f"{number} ({source})" for number, source in done.readers)
        one = len(done.readers) == 1
        message(f"import{'' if one else 's'} {named} had read records that went with it: import "
                f"{'its file' if one else 'their files'} again to restore them (they are read again)")


def _taken(deletion) -> str:
    """What deleting an import takes, as "import 2 (bad.jsonl): 10 sessions (160 records, ...)"."""
    what = f"import {deletion.import_id} ({deletion.source}): "
    if not deletion.records:
        what += "it had stored no record"
    elif deletion.sessions == deletion.touched:
        what += _what(deletion)
    else:
        kept = deletion.touched - deletion.sessions
        what += (f"{deletion.records:,} records{_span(deletion)} in {_sessions(deletion.touched)}, of which "
                 f"{_sessions(kept)} keep the records other imports stored")
    rejected = deletion.rejected
    return what + (f"; {rejected:,} rejected line{'s' * (rejected != 1)}" if rejected else "")


def _what(counted) -> str:
    return f"{_sessions(counted.sessions)} ({counted.records:,} records{_span(counted)})"


def _span(counted) -> str:
    from council_db.contract.timestamps import format_us

    return "" if counted.first_us is None else f", dated {format_us(counted.first_us)} to {format_us(counted.last_us)}"


def _sessions(n: int) -> str:
    return f"{n:,} session" if n == 1 else f"{n:,} sessions"
