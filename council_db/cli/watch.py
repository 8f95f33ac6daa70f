"""council-db watch: check's rules on a schedule, a webhook told when one starts failing or recovers."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from council_db.cli.context import message, state
from council_db.cli.push import Backoff, HeaderEnv, Retries, Timeout, TokenFile
from council_db.cli.rule_options import (
    AgreementMin,
    Alpha,
    FlagKinds,
    FlagReviewers,
    LengthMax,
    MinSessions,
    MinTier,
    NoFlags,
    On,
    PositionConsistencyMin,
    RetestMax,
    RulesFile,
    SeverityMax,
    StabilityMin,
    rules_from_options,
)
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Dimension,
    Models,
    Reviewers,
    SampleSessions,
    Sessions,
    Since,
    Until,
    window_and_filters,
)

WEBHOOK_ENV = "COUNCIL_DB_WEBHOOK"  # --webhook's variable: read where the command line would show it

if TYPE_CHECKING:
    from datetime import datetime

    from council_db.gate.alerts import Change
    from council_db.gate.rules import Rule
    from council_db.report.model import ReportWindow
    from council_db.store.database import Database
    from council_db.store.watch_state import Acted


def _acted(change: Change, now: datetime, alert_id: str | None = None) -> Acted:
    from council_db.store.watch_state import Acted

    o = change.outcome
    return Acted(o.rule, o.subject, o.status, now, now if alert_id else None, alert_id)


def _alerts(db: Database, due: list[Change], rules: list[Rule], watch: str, endpoint: str, window: ReportWindow,
            now: datetime, slack: bool) -> list[tuple[Change, dict, bytes]]:
    """Each due change with its alert and the body that carries it (JSON, or Slack's text)."""
    from council_db.gate import alerts
    from council_db.store.watch_state import database_fingerprint, database_name

    by_name = {rule.name: rule for rule in rules}
    database = {"name": database_name(db), "fingerprint": database_fingerprint(db)}
    made = []
    for change in due:
        alert = alerts.body(change, watch=watch, endpoint=endpoint, rule=by_name[change.outcome.rule], window=window,
                            database=database, evaluated_at=now)
        made.append((change, alert, json.dumps(alerts.slack(alert) if slack else alert).encode()))
    return made


def command(
    ctx: typer.Context,
    webhook: Annotated[str, typer.Option(
        "--webhook", metavar="URL", envvar=WEBHOOK_ENV, show_envvar=False,
        help=f"Where to POST an alert (http or https), or ${WEBHOOK_ENV}: a Slack webhook's URL is its secret, "
             "kept out of shell history and ps that way; its fingerprint, never the URL, keys the watch's state.")],
    name: Annotated[str, typer.Option(
        "--name", metavar="NAME", help="The watch's name, in each alert: watches of other names keep their own "
                                       "state.")] = "default",
    slack: Annotated[bool, typer.Option("--slack", help="Send Slack-compatible {\"text\": ...} bodies.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the alerts that are due (JSONL) and send and "
                                                            "remember nothing.")] = False,
    sessions: Sessions = None,
    days: Days = None,
    since: Since = None,
    until: Until = None,
    as_of: AsOf = None,
    reviewer: Reviewers = None,
    model: Models = None,
    config_version: Configs = None,
    category: Categories = None,
    dimension: Dimension = None,
    rules_file: RulesFile = None,
    no_flags: NoFlags = False,
    alpha: Alpha = None,
    flag_kind: FlagKinds = None,
    flag_reviewer: FlagReviewers = None,
    agreement_min: AgreementMin = None,
    position_consistency_min: PositionConsistencyMin = None,
    severity_max: SeverityMax = None,
    length_max: LengthMax = None,
    retest_max: RetestMax = None,
    stability_min: StabilityMin = None,
    min_sessions: MinSessions = None,
    min_tier: MinTier = None,
    on: On = None,
    retries: Retries = 5,
    backoff: Backoff = 0.5,
    timeout: Timeout = 10.0,
    token_file: TokenFile = None,
    header_env: HeaderEnv = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
) -> None:
    """Alert a webhook when a check rule starts failing or recovers.

    Judges check's rules on the window, as check does, and compares each outcome with the state
    this watch keeps in the database: an outcome that starts or stops failing is POSTed to the
    webhook once (a documented JSON body, or --slack text), and remembered only once the webhook
    took it, so a failed delivery is sent again by the next run. Exit 0 when every rule passes, 1
    when one fails, 2 on a usage or data error, 3 when an alert was not delivered."""
    from council_db.cli.output import text_width
    from council_db.counted_text import counted
    from council_db.errors import UsageError
    from council_db.gate import alerts, outputs, verdicts
    from council_db.ingest.importer import now_utc
    from council_db.outlets import webhook as hook
    from council_db.outlets.push import PushSettings, check_endpoint
    from council_db.outlets.push_auth import load_credentials, plain_http_warning
    from council_db.store import watch_state

    check_endpoint(webhook, "--webhook")
    if not name.strip():
        raise UsageError("--name is empty: give the watch a name, e.g. --name nightly")
    rules = rules_from_options(
        rules_file, {"agreement-min": agreement_min, "position-consistency-min": position_consistency_min,
                     "severity-max": severity_max, "length-max": length_max, "retest-max": retest_max,
                     "min-sessions": min_sessions, "min-tier": min_tier, "stability-min": stability_min},
        no_flags, alpha, flag_kind or [], flag_reviewer or [], on)
    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    credentials = load_credentials(token_file, header_env or ())
    db = state(ctx).database(read_only=dry_run)
    judged, outcomes = verdicts.judge_window(db, window, filters, rules, seed=seed, sample_sessions=sample_sessions)
    endpoint, now = watch_state.fingerprint(webhook), now_utc()
    found = alerts.changes(outcomes, rules, watch_state.known(db, name, endpoint))
    due = _alerts(db, [c for c in found if c.alert_due], rules, name, endpoint, judged, now, slack)
    if dry_run:
        for _, _, body in due:
            print(body.decode())
        message(f"dry run: {counted(len(due), 'alert')} would go to {hook.host(webhook)}; nothing was sent or "
                "remembered")
        raise typer.Exit(verdicts.exit_code(outcomes))
    print(outputs.text(outcomes, judged, text_width(sys.stdout)), end="")
    watch_state.remember(db, name, endpoint, [_acted(c, now) for c in found if not c.alert_due])
    warning = plain_http_warning(webhook, credentials)
    if warning:
        message(warning)
    settings = PushSettings(retries=retries, backoff=backoff, timeout=timeout)
    requests = hook.send(webhook, [body for _, _, body in due], credentials, settings,
                         accepted=lambda i: watch_state.remember(db, name, endpoint,
                                                                 [_acted(due[i][0], now, due[i][1]["alert_id"])]))
    message(f"watch {name}: {counted(len(due), 'alert')} sent to {hook.host(webhook)} "
            f"({counted(requests, 'request')}); "
            f"{counted(len(found) - len(due), 'other change')} remembered")
    raise typer.Exit(verdicts.exit_code(outcomes))
