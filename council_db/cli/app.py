"""The council-db command line. Only typer and the command modules (which import their
heavy libraries inside the commands) load at start-up, so --help stays fast."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from council_db import __version__
from council_db.cli import (
    adhoc_sql,
    aggregate,
    db,
    exporting,
    importing,
    inspecting,
    orders,
    push,
    recording,
    report,
    simulate,
    trends,
)
from council_db.cli.context import State
from council_db.errors import CouncilDbError

app = typer.Typer(
    name="council-db",
    help="Keep LLM-council judge scores in a database and find out whether the judges can be trusted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: loading rich for it would cost ~80 ms per --help
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"council-db {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    db_option: Annotated[Optional[str], typer.Option(
        "--db", metavar="PATH|URL",
        help="Database file or SQLAlchemy URL. Default: $COUNCIL_DB, else council.db in your user data directory.",
    )] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    if ctx.obj is None:  # main() passes one in; typer's test runner does not
        ctx.obj = State()
    ctx.obj.db_option = db_option


app.command("bias-report")(report.bias_report)
app.command("audit")(report.audit)
app.command("trends")(trends.trends)
app.command("anomalies")(trends.anomalies)
app.command("import")(importing.command)
app.command("export")(exporting.command)
app.command("ingest")(recording.ingest)
app.command("orders")(orders.command)
app.command("push")(push.command)
app.command("stats")(inspecting.stats)
app.command("sessions")(inspecting.sessions)
app.command("rejected")(inspecting.rejected)
app.command("simulate")(simulate.command)
app.command("scores")(aggregate.scores)
app.command("leaderboard")(aggregate.leaderboard)
app.command("sql")(adhoc_sql.command)
app.add_typer(db.app, name="db")


def main() -> None:
    """The entry point: a CouncilDbError, or a failure of what is around council-db (a file,
    a disk, the database), is one line on stderr; a bug keeps its traceback."""
    invocation = State()  # the --db option fills it in: failures name the database
    try:
        app(obj=invocation)
    except CouncilDbError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except Exception as error:
        from council_db.cli.failures import describe

        text = describe(error, invocation.shown_location)
        if text is None:
            raise
        print(f"error: {text}", file=sys.stderr)
        sys.exit(1)
