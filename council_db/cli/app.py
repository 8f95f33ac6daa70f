"""The council-db command line. At start-up only typer and this command table load; a
command's module is imported, and its options built, when that command runs (lazy_group),
and the command modules import their heavy libraries inside the commands, so --help stays fast."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from council_db import __version__
from council_db.cli.context import DB_HELP, State, db_option, message
from council_db.cli.lazy_group import lazy_group
from council_db.errors import CouncilDbError

COMMANDS = {  # in the order --help lists them
    "bias-report": "council_db.cli.report:bias_report",
    "audit": "council_db.cli.report:audit",
    "trends": "council_db.cli.trends:trends",
    "anomalies": "council_db.cli.trends:anomalies",
    "check": "council_db.cli.check:command",
    "diff": "council_db.cli.diff:command",
    "watch": "council_db.cli.watch:command",
    "import": "council_db.cli.importing:command",
    "export": "council_db.cli.exporting:command",
    "ingest": "council_db.cli.recording:ingest",
    "orders": "council_db.cli.orders:command",
    "push": "council_db.cli.push:command",
    "stats": "council_db.cli.inspecting:stats",
    "sessions": "council_db.cli.inspecting:sessions",
    "rejected": "council_db.cli.inspecting:rejected",
    "reviewers": "council_db.cli.reviewers:command",
    "simulate": "council_db.cli.simulate:command",
    "scores": "council_db.cli.aggregate:scores",
    "leaderboard": "council_db.cli.aggregate:leaderboard",
    "sql": "council_db.cli.adhoc_sql:command",
    "delete": "council_db.cli.removal:delete",
    "prune": "council_db.cli.removal:prune",
    "db": "council_db.cli.db:app",
}
# What --help lists for each: the first sentence of its help, here so that --help imports none
# of the command modules (tests/cli/test_startup.py checks that they agree).
SUMMARIES = {
    "bias-report": "The bias report: severity, position, length, self-preference.",
    "audit": "One session's bias indicators: length, slots, reviewers.",
    "trends": "Drift over time: slopes, change points, rolling series.",
    "anomalies": "Sessions whose scores do not fit the others.",
    "check": "Gate a CI job: exit 1 when a rule on the bias report fails.",
    "diff": "Compare two judges, config versions or time windows, with CIs.",
    "watch": "Alert a webhook when a check rule starts failing or recovers.",
    "import": "Import records: llm-council's, or other judge logs (--from).",
    "export": "Export stored records as llm-council JSONL, JSON or CSV.",
    "ingest": "Record one council session from its JSON.",
    "orders": "The order each reviewer should see the answers in.",
    "push": "Send consented per-session summaries to a telemetry service.",
    "stats": "Totals of what is stored.",
    "sessions": "The latest sessions, one summary row each.",
    "rejected": "Lines that failed validation, and why.",
    "reviewers": "The stored reviewers and their kind: judge, human or gold.",
    "simulate": "Write simulated records with planted biases.",
    "scores": "Each candidate's consensus score in one session.",
    "leaderboard": "Models ranked over a window, with 95% CIs.",
    "sql": "Answer one read-only SELECT over the database.",
    "delete": "Delete a bad import's records, or one session.",
    "prune": "Delete the sessions dated before a time: a retention window.",
    "db": "The database: its file, schema, backups and derived tables.",
}

app = typer.Typer(
    name="council-db",
    cls=lazy_group(COMMANDS, SUMMARIES, shared=(db_option,)),
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
    db_option: Annotated[Optional[str], typer.Option("--db", metavar="PATH|URL", help=DB_HELP)] = None,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    if ctx.obj is None:  # main() passes one in; typer's test runner does not
        ctx.obj = State()
    if db_option is not None:  # a --db after the command, read later, wins
        ctx.obj.db_option = db_option


def main() -> None:
    """The entry point: a CouncilDbError, or a failure of what is around council-db (a file,
    a disk, the database), is one line on stderr; a bug keeps its traceback."""
    invocation = State()  # the --db option fills it in: failures name the database
    try:
        app(obj=invocation)
    except CouncilDbError as error:
        message(f"error: {error}")
        sys.exit(error.exit_code)
    except Exception as error:
        from council_db.cli.failures import describe

        text = describe(error, invocation.shown_location)
        if text is None:
            raise
        message(f"error: {text}")
        sys.exit(1)
