"""council-db sql: ad-hoc questions in SQL, with no way to change the database."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.output import Format, emit_rows

READONLY_ENV = "COUNCIL_DB_READONLY"


def command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="SQL", help="One read-only statement.")],
    fmt: Annotated[Format, typer.Option("--format", help="table, json, jsonl or csv.")] = Format.table,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", min=0,
                                           help="Stop the query after this long (0: no limit).")] = 30.0,
    max_rows: Annotated[int, typer.Option("--max-rows", metavar="N", min=0,
                                          help="Print at most N rows, then stop with an error (0: no limit).")
                        ] = 100_000,
    max_value_bytes: Annotated[int, typer.Option("--max-value-bytes", metavar="N", min=0,
                                                 help="Stop at any value (string or blob) larger than N bytes "
                                                      "(0: no limit).")] = 10_000_000,
    db_readonly: Annotated[Optional[str], typer.Option(
        "--db-readonly", metavar="PATH|URL", envvar=READONLY_ENV,
        help=f"Read through this URL instead of --db, e.g. as a read-only PostgreSQL role "
             f"(council-db db readonly-role). Default: ${READONLY_ENV}.")] = None,
) -> None:
    """Answer one read-only SELECT over the database.

    One SELECT, WITH ... SELECT or VALUES. Anything that could write is refused with what
    was refused: several statements, INSERT/UPDATE/DELETE, CREATE (temp tables too), ATTACH,
    VACUUM (INTO), PRAGMAs that set a value, load_extension, and on PostgreSQL server
    functions with side effects. Rows are printed as they are read. The database is never
    created or upgraded by this command."""
    from council_db.outlets.readonly_sql import read
    from council_db.outlets.sql_answer import Limits
    from council_db.store.location import resolve_url

    url = resolve_url(db_readonly) if db_readonly else state(ctx).url
    with read(url, query, Limits(timeout, max_rows, max_value_bytes)) as answer:
        emit_rows(answer.as_dicts(), fmt, title=None)
        if answer.stopped is not None:
            raise answer.stopped
