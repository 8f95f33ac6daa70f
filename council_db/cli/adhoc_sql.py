"""council-db sql: ad-hoc questions in SQL, with no way to change the database."""

from __future__ import annotations

from typing import Annotated

import typer

from council_db.cli.context import state
from council_db.cli.output import Format, emit_rows


def command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="SQL", help="One read-only statement.")],
    fmt: Annotated[Format, typer.Option("--format", help="table, json, jsonl or csv.")] = Format.table,
) -> None:
    """Answer one SELECT (or WITH ... SELECT, VALUES) over the database, read-only.

    Anything that could write is refused with what was refused: several statements,
    INSERT/UPDATE/DELETE, CREATE (temp tables too), ATTACH, VACUUM (INTO), PRAGMAs that set
    a value, load_extension. The database is never created or upgraded by this command."""
    from council_db.outlets.readonly_sql import run

    answer = run(state(ctx).url, query)
    emit_rows(answer.as_dicts(), fmt, title=None)
