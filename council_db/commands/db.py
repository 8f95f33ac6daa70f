"""council-db db ...: where the database is, and its schema migrations."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from council_db.commands.context import message, state
from council_db.commands.importing import SummaryFormat
from council_db.output import Format, emit_object, emit_rows

app = typer.Typer(help="The database file and its schema migrations.", no_args_is_help=True, rich_markup_mode=None)


def _engine(ctx: typer.Context, *, create: bool = True):
    from council_db.database import create_engine_for

    return create_engine_for(state(ctx).url, create=create)


@app.command()
def path(ctx: typer.Context) -> None:
    """Print the database file (or URL), e.g. for: datasette "$(council-db db path)"."""
    from council_db.location import sqlite_path

    url = state(ctx).url
    found = sqlite_path(url)
    if found is None:
        from sqlalchemy.engine import make_url

        print(make_url(url).render_as_string(hide_password=True))
    else:
        print(found)


@app.command()
def upgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
) -> None:
    """Upgrade the schema (every command also does this on its own when needed)."""
    from council_db import migrate
    from council_db.database import use_wal

    engine = _engine(ctx)
    before, after = migrate.upgrade(engine, revision)
    use_wal(engine)
    message(f"schema {before or '(empty)'} -> {after}" if before != after else f"schema already at {after}")


@app.command()
def downgrade(
    ctx: typer.Context,
    revision: Annotated[str, typer.Argument(help="Target revision, e.g. 0001, or base for an empty schema.")],
) -> None:
    """Downgrade the schema to REVISION (newer tables and columns are dropped)."""
    from council_db import migrate

    before, after = migrate.downgrade(_engine(ctx, create=False), revision)
    message(f"schema {before} -> {after or '(empty)'}")


@app.command()
def current(
    ctx: typer.Context,
    fmt: Annotated[Format, typer.Option("--format", help="table, json, jsonl or csv.")] = Format.table,
) -> None:
    """The database's schema revision and the newest this council-db knows."""
    from council_db import migrate

    revision = migrate.current_revision(_engine(ctx, create=False))
    emit_object({"current": revision, "head": migrate.HEAD, "up_to_date": revision == migrate.HEAD}, fmt)


@app.command()
def history(
    fmt: Annotated[Format, typer.Option("--format", help="table, json, jsonl or csv.")] = Format.table,
) -> None:
    """Every schema revision, newest first."""
    from council_db import migrate

    emit_rows(migrate.history(), fmt, title="schema revisions")


@app.command()
def copy(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", metavar="PATH|URL", help=(
        "The database to copy into, e.g. postgresql+psycopg://user@host/council (created or upgraded "
        "as needed)."))],
    min_consent: Annotated[int, typer.Option(min=1, max=4, help=(
        "Only records with at least this consent level; 1 (local only) is for a server on your own "
        "machine."))] = 2,
    fmt: Annotated[SummaryFormat, typer.Option(
        "--format", help="json also prints the summary as JSON on stdout.")] = SummaryFormat.text,
) -> None:
    """Copy this database's records into another (e.g. the team's PostgreSQL server).

    Idempotent: records are matched on their natural key, so copying again, or from several
    laptops whose data overlap, stores each record once. Import history and rejected lines
    stay here; the target records the copy as one import."""
    from council_db.copier import copy as copy_records
    from council_db.database import open_database
    from council_db.location import resolve_url

    source = state(ctx).database()
    target = open_database(resolve_url(to), notify=message)
    try:
        result = copy_records(source, target, min_consent=min_consent)
    finally:
        target.engine.dispose()
    message(f"{result.target}: {result.inserted:,} new records, {result.duplicates:,} already there, "
            f"{result.left_out:,} kept here (consent level below {min_consent})")
    if fmt is SummaryFormat.json:
        print(json.dumps(result.as_json(), indent=2))
