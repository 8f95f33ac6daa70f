"""council-db push: per-session summary events to a team telemetry service."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from council_db.cli.context import bad_time, checked_time, message, state

# How a POST is retried and authenticated; council-db watch takes the same options.
Retries = Annotated[int, typer.Option(min=0, max=20, help="Retries of a failed request.")]
Backoff = Annotated[float, typer.Option(min=0, help="Seconds before the first retry; doubled each time (at most "
                                                    "30 s).")]
Timeout = Annotated[float, typer.Option(min=0.1, help="Seconds a request may take, from connecting to the "
                                                      "endpoint's answer.")]
TokenFile = Annotated[Optional[Path], typer.Option(metavar="PATH", help=(
    "A private (chmod 600) file holding a bearer token; or set $COUNCIL_DB_PUSH_TOKEN."))]
HeaderEnv = Annotated[Optional[list[str]], typer.Option(metavar="NAME=VARIABLE", help=(
    "Send header NAME with the value of environment variable VARIABLE (repeatable)."))]


def command(
    ctx: typer.Context,
    endpoint: Annotated[Optional[str], typer.Option(
        metavar="URL", help="Where to POST the events (http or https); not needed with --dry-run.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the events that would go (JSONL) and send "
                                                            "nothing; to --endpoint if given, else every "
                                                            "event of the window.")] = False,
    since: Annotated[Optional[str], typer.Option(metavar="TIME",
                                                 help="Only sessions at or after this ISO-8601 time.")] = None,
    until: Annotated[Optional[str], typer.Option(metavar="TIME",
                                                 help="Only sessions before this ISO-8601 time.")] = None,
    batch_size: Annotated[int, typer.Option(min=1, max=1000, help="Events per request.")] = 100,
    retries: Retries = 5,
    backoff: Backoff = 0.5,
    timeout: Timeout = 10.0,
    token_file: TokenFile = None,
    header_env: HeaderEnv = None,
) -> None:
    """Send consented per-session summaries to a telemetry service.

    A summary of each session with consent level >= 2: rankings (level 2), query metadata
    and bias indicators (3), query hash (4); never raw text. Events wait in an
    outbox until the endpoint accepts them, so a failed or interrupted push resumes, and
    every event has an id derived from its content, so the service can drop a resend.
    Credentials come from the environment or a private file, never the command line."""
    from council_db.contract.fields import LineError
    from council_db.errors import UsageError
    from council_db.outlets.push import PushSettings, check_endpoint, push, would_send
    from council_db.outlets.push_auth import load_credentials, plain_http_warning
    from council_db.store.sql_filters import time_range

    if endpoint is None and not dry_run:
        raise UsageError("missing --endpoint URL (where to POST the events): give it, or --dry-run to see what "
                         "would go")
    if endpoint is not None:
        check_endpoint(endpoint)
    checked_time("--since", since)  # a bad time is a usage error before any database is opened
    checked_time("--until", until)
    try:
        time_range(since, until)
    except LineError as error:
        raise bad_time(error.problem) from None
    credentials = load_credentials(token_file, header_env or ())
    db = state(ctx).database(read_only=dry_run)
    try:
        if dry_run:
            payloads = would_send(db, endpoint, since=since, until=until)
            for payload in payloads:
                print(payload)
            where = f" to {endpoint}" if endpoint else ""
            message(f"dry run: {len(payloads):,} events would go{where}; nothing was sent or queued")
            return
        warning = plain_http_warning(endpoint, credentials)
        if warning:
            message(warning)
        settings = PushSettings(batch_size=batch_size, retries=retries, backoff=backoff, timeout=timeout)
        result = push(db, endpoint, since=since, until=until, settings=settings, credentials=credentials)
    except LineError as error:
        raise bad_time(error.problem) from None
    held_back = (f"{result.records_held_back:,} records below consent level 2 never leave this machine "
                 f"({result.below_consent:,} whole sessions)")
    no_event = ""
    if result.without_scores:
        no_event = f"; {result.without_scores:,} sessions without usable scores have no event"
    message(f"{endpoint}: {result.sent:,} events sent in {result.requests:,} requests ({result.queued:,} newly queued, "
            f"{result.pending:,} still queued); {held_back}{no_event}")
