"""council-db sql: ad-hoc questions in SQL, with no way to change the database."""

from __future__ import annotations

import re
import sys
from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.formats import LISTING, Csv, Json, Lines, Output, chosen, destination, format_option, wrote
from council_db.cli.lazy_group import pairs
from council_db.cli.output import emit_rows

READONLY_ENV = "COUNCIL_DB_READONLY"
PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@pairs("param")
def command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="SQL", help="One read-only statement; - reads it from stdin.")],
    param: Annotated[Optional[list[str]], typer.Option(
        "--param", "-p", metavar="NAME VALUE",
        help="Bind VALUE (as text) to :NAME in the query (repeatable).")] = None,
    fmt: Annotated[Optional[str], format_option(*LISTING)] = None,
    as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
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
    wide: Annotated[bool, typer.Option("--wide", help="Tables: every column, each value whole (default: the "
                                                      "columns that fit the terminal, long values cut).")] = False,
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

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    params = _parameters(param or [])
    if query == "-":
        query = sys.stdin.read()
    url = resolve_url(db_readonly) if db_readonly else state(ctx).url
    given = db_readonly or state(ctx).db_option
    with read(url, query, Limits(timeout, max_rows, max_value_bytes), params, given) as answer, destination(output) as out:
        written = emit_rows(answer.as_dicts(), fmt, title=None, out=out, crop=not wide)
        if answer.stopped is not None:
            raise answer.stopped
    wrote(output, fmt, written)


def _parameters(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """-p NAME VALUE pairs as a dict; a name SQL could not hold, or one given twice, is a usage error."""
    params: dict[str, str] = {}
    for name, value in pairs:
        name = name.removeprefix(":")
        if not PARAMETER_NAME.fullmatch(name):
            raise typer.BadParameter(f"{name!r} is not a parameter name: use letters, digits and _, and write "
                                     ":NAME in the query", param_hint="-p/--param")
        if name in params:
            raise typer.BadParameter(f"{name} is given twice", param_hint="-p/--param")
        params[name] = value
    return params
