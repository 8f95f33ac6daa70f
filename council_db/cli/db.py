"""council-db db ...: where the database is, its schema migrations, backups, and derived tables."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Callable, Iterator, Optional

import typer

from council_db.cli.context import db_option, message, state
from council_db.cli.formats import LISTING, SUMMARY, Csv, Json, Lines, Output, chosen, destination, format_option, wrote
from council_db.cli.lazy_group import lazy_group
from council_db.cli.output import emit_object, emit_rows

ListingFormat = Annotated[Optional[str], format_option(*LISTING)]

COMMANDS = {  # in the order --help lists them; each built only when run (lazy_group)
    "path": "council_db.cli.db:path",
    "metadata": "council_db.cli.db:metadata",
    "upgrade": "council_db.cli.db:upgrade",
    "downgrade": "council_db.cli.db:downgrade",
    "current": "council_db.cli.db:current",
    "history": "council_db.cli.db:history",
    "check": "council_db.cli.db:check",
    "pack": "council_db.cli.db:pack",
    "backup": "council_db.cli.db:backup",
    "restore": "council_db.cli.db:restore",
    "copy": "council_db.cli.db:copy",
    "readonly-role": "council_db.cli.db:readonly_role",
}
app = typer.Typer(name="db", cls=lazy_group(COMMANDS, shared=(db_option,)), no_args_is_help=True, rich_markup_mode=None,
                  help="The database: its file, schema, backups and derived tables.")


def _migrate(ctx: typer.Context, step: Callable, revision: str, *, create: bool) -> tuple[str | None, str | None]:
    """Run migrate.upgrade or migrate.downgrade; a revision Alembic cannot reach is a usage error."""
    from alembic.util import CommandError

    from council_db.store import migrate

    engine = _engine(ctx, create=create)
    try:
        return step(engine, revision)
    except CommandError as error:
        known = ", ".join(entry["revision"] for entry in migrate.history())
        raise typer.BadParameter(f"{error} (known revisions: {known}, head, base)", param_hint="REVISION") from None
    finally:
        engine.dispose()


def _engine(ctx: typer.Context, *, create: bool = True):
    from council_db.store.database import create_engine_for

    return create_engine_for(state(ctx).url, create=create)


def path(ctx: typer.Context) -> None:
    """Print the database file or URL.

    For instance for: datasette "$(council-db db path)"."""
    from council_db.store.location import checked_url, sqlite_path

    url = state(ctx).url
    found = sqlite_path(url)
    if found is None:
        print(checked_url(url).render_as_string(hide_password=True))
    else:
        print(found)


def metadata(ctx: typer.Context) -> None:
    """Print where the Datasette metadata file is.

    The file holds view titles and descriptions, for:
    datasette "$(council-db db path)" -m "$(council-db db metadata)"."""
    from council_db.outlets.datasette_metadata import for_database
    from council_db.store.location import sqlite_path

    print(for_database(sqlite_path(state(ctx).url)))


def upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Upgrade the schema (every command does when needed)."""
    from council_db.store import migrate
    from council_db.store.database import use_wal

    before, after = _migrate(ctx, migrate.upgrade, revision, create=True)
    engine = _engine(ctx)
    use_wal(engine)
    engine.dispose()
    message(f"schema {before or '(empty)'} -> {after}" if before != after else f"schema already at {after}")


def downgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision, e.g. 0001, or base for an empty schema.")],
) -> None:
    """Downgrade the schema to REVISION.

    Newer tables and columns are dropped."""
    from council_db.store import migrate

    before, after = _migrate(ctx, migrate.downgrade, revision, create=False)
    message(f"schema {before} -> {after or '(empty)'}")


def current(ctx: typer.Context, fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False,
            as_csv: Csv = False, output: Output = None) -> None:
    """The database's schema revision and the newest known.

    The newest is the one this council-db knows."""
    from council_db.store import migrate
    from council_db.store.database import read_only_engine

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    engine = read_only_engine(state(ctx).url) or _engine(ctx, create=False)
    try:
        revision = migrate.current_revision(engine)
    finally:
        engine.dispose()
    with destination(output) as out:
        emit_object({"current": revision, "head": migrate.HEAD, "up_to_date": revision == migrate.HEAD}, fmt, out=out)
    wrote(output, fmt)


def history(fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False,
            output: Output = None) -> None:
    """Every schema revision, newest first."""
    from council_db.store import migrate

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    with destination(output) as out:
        written = emit_rows(migrate.history(), fmt, title="schema revisions", out=out)
    wrote(output, fmt, written, "revision")


def check(
    ctx: typer.Context,
    repair: Annotated[bool, typer.Option("--repair", help="Delete records that refer to a missing row, then "
                                                          "rebuild the derived rows that differ.")] = False,
    full: Annotated[bool, typer.Option("--full", help="Check every range, not only those changed since the "
                                                      "last clean check.")] = False,
    fmt: ListingFormat = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
) -> None:
    """Verify derived rows and references against the records.

    Every derived row (session_stats, the day totals) is compared with the records, and every
    record must refer to stored rows; exits 1 when some do not (scores edited by hand, say)
    and --repair was not given. Only the ranges of sessions and days changed since the last
    check that found the store clean are read (the first check reads all; --full always).
    The table lists every check (JSON, JSONL and CSV also the ranges it read); stderr says
    what was read, what was found wrong and what to do, in one line each, then the outcome."""
    from council_db.store import check_memory, db_check, derived, references

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    database = state(ctx).database(read_only=not repair)
    scope = check_memory.scope(database, full=full)
    message(scope.describe())
    findings, orphans = db_check.check(database, repair=repair, scope=scope)
    # the ranges each check read: JSON, JSONL and CSV; a table (80 columns) has stderr's first line
    rows = [finding.as_row() | ({} if fmt == "table" else scope.of(finding.table)) for finding in findings + orphans]
    with destination(output) as out:
        written = emit_rows(rows, fmt, title="derived tables and references", out=out)
    wrote(output, fmt, written, "check")
    wrong = [derived.describe(f) for f in findings if f.wrong] + [references.describe(f) for f in orphans if f.wrong]
    for line in wrong:
        message(line)
    checks, left = len(findings + orphans), [f for f in findings + orphans if f.wrong and not f.repaired]
    if left:
        message(f"{checks:,} checks: {len(left):,} found rows that disagree with the records")
        raise typer.Exit(1)
    if not check_memory.record_clean(database, scope):
        message("the store is read-only: this clean check is not recorded, the next one reads as much")
    message(f"{checks:,} checks: every row true to the records" + (", once repaired" if wrong else ""))


def pack(
    ctx: typer.Context,
    off: Annotated[bool, typer.Option("--off", help="Remove the packed copy and stop keeping it.")] = False,
) -> None:
    """Keep a packed copy of each session's records.

    anomalies --every-session then reads a row a session instead of a row a record: about 6
    times faster (6-7 s of CPU instead of 37-40 s at a million 4x4 sessions), for about 455
    bytes a 4x4 session more on disk. Packs every stored session, a range at a time; imports, deletions and db
    check keep the copy true from then on. Running it again does nothing; --off removes it."""
    from council_db.store import packing

    database = state(ctx).database()
    if off:
        had = packing.unpack(database)
        message("packed records removed; the store keeps none" if had else "the store keeps no packed records")
        return
    with _pack_progress() as progress:
        done = packing.pack(database, progress)
    if done.already:
        message("the store's records are packed already (council-db db check verifies them)")
        return
    message(f"packed {done.records:,} records of {done.sessions:,} sessions; imports keep them packed "
            "(council-db db pack --off removes them)")


@contextmanager
def _pack_progress() -> Iterator[Callable[[int, int], None]]:
    """A progress bar of session ids on a terminal; nothing otherwise (rich imported only then)."""
    import sys

    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("packing session ids"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  transient=True) as bar:
        task = bar.add_task("pack", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _sqlite_file(ctx: typer.Context, command: str) -> Path:
    from council_db.errors import CouncilDbError
    from council_db.store.location import sqlite_path

    found = sqlite_path(state(ctx).url)
    if found is None:
        raise CouncilDbError(f"council-db db {command} works on SQLite files; for PostgreSQL use pg_dump / pg_restore")
    return found


def _held(summary) -> str:
    return f"schema {summary.revision}, {summary.sessions:,} sessions, {summary.records:,} records"


def backup(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The backup file to write.", dir_okay=False)],
    force: Annotated[bool, typer.Option("--force", help="Replace FILE if it exists.")] = False,
) -> None:
    """Copy the database to FILE as of one moment (SQLite).

    Safe even while imports run. The copy is checked and made private (0600) before it takes FILE's name."""
    from council_db.store.backup import backup as make_backup

    database = _sqlite_file(ctx, "backup")
    summary = make_backup(database, file.expanduser(), force=force)
    message(f"backed up {database} to {file}: {_held(summary)}")


def restore(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A backup made by council-db db backup.", dir_okay=False)],
    force: Annotated[bool, typer.Option("--force", help="Replace the content of an existing database.")] = False,
) -> None:
    """Replace the database's content with a backup.

    The backup in FILE is checked first; safe even while other council-db processes have the
    database open."""
    from council_db.store import migrate
    from council_db.store.backup import restore as restore_backup

    database = _sqlite_file(ctx, "restore")
    known = {entry["revision"] for entry in migrate.history()}
    summary = restore_backup(file.expanduser(), database, known_revisions=known, force=force)
    message(f"restored {file} into {database}: {_held(summary)}")


def copy(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", metavar="PATH|URL", help=(
        "The database to copy into, e.g. postgresql+psycopg://user@host/council (created or upgraded "
        "as needed)."))],
    min_consent: Annotated[int, typer.Option(min=1, max=4, help=(
        "Only records with at least this consent level; 1 (local only) is for a server on your own "
        "machine."))] = 2,
    fmt: Annotated[Optional[str], format_option(*SUMMARY, help="json also prints the summary on stdout.")] = None,
    as_json: Json = False,
) -> None:
    """Copy this database's records into another database.

    For instance into the team's PostgreSQL server. Idempotent: records are matched on their
    natural key, so copying again, or from several laptops whose data overlap, stores each
    record once. Import history and rejected lines stay here; the target records the copy as
    one import."""
    from council_db.outlets.copier import copy as copy_records
    from council_db.store.location import resolve_url

    fmt = chosen(SUMMARY, fmt, json=as_json)
    source = state(ctx).database(read_only=True)
    target = _open_target(resolve_url(to))
    try:
        result = copy_records(source, target, min_consent=min_consent)
    finally:
        target.engine.dispose()
    message(f"{result.target}: {result.inserted:,} new records, {result.duplicates:,} already there, "
            f"{result.left_out:,} kept here (consent level below {min_consent})")
    if fmt == "json":
        print(json.dumps(result.as_json(), indent=2))


def _open_target(url: str):
    """The database to copy into; a failure to reach or open it names it, not the source."""
    from council_db.cli.failures import describe
    from council_db.errors import CouncilDbError
    from council_db.store.database import open_database
    from council_db.store.location import shown_location

    try:
        return open_database(url, notify=message)
    except Exception as error:
        text = describe(error, shown_location(url))
        if text is None:
            raise
        raise CouncilDbError(text) from None


def readonly_role(
    ctx: typer.Context,
    role: Annotated[str, typer.Argument(help="The role to create.")] = "council_reader",
) -> None:
    """Print SQL that makes a PostgreSQL role able only to read.

    The role may read this database's tables and views, for:
    council-db db readonly-role | psql ...; then council-db sql --db-readonly URL."""
    from council_db.outlets.pg_readonly import role_sql

    sql = role_sql(state(ctx).url, role)
    state(ctx).database()  # created or upgraded: the SQL takes local_keys away, so it must exist
    print(sql, end="")
