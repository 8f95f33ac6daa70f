"""council-db bias-report and council-db audit."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Models,
    Reviewers,
    Sessions,
    Since,
    Until,
    checked_window,
)
from council_db.errors import CouncilDbError


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


def bias_report(
    ctx: typer.Context,
    sessions: Sessions = None,
    days: Days = None,
    since: Since = None,
    until: Until = None,
    as_of: AsOf = None,
    reviewer: Reviewers = None,
    model: Models = None,
    config_version: Configs = None,
    category: Categories = None,
    fmt: Annotated[ReportFormat, typer.Option("--format", help="text, json, markdown or html.")] = ReportFormat.text,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", dir_okay=False,
                                                   help="Write the report to this file instead of stdout.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: Annotated[int, typer.Option(
        "--sample-sessions", min=0, metavar="N",
        help="Above N sessions, record-level analyses use a sample of N of the window's sessions "
             "(counts and length correlations still use all). 0 = never sample.")] = SAMPLE_SESSIONS,
    schema: Annotated[bool, typer.Option("--schema", help="Print the JSON Schema of --format json and exit.")] = False,
    exclude_anomalies: Annotated[bool, typer.Option(
        "--exclude-anomalies", help="Leave out sessions council-db anomalies flags (says how many).")] = False,
) -> None:
    """The bias report: severity, position, length, self-preference.

    Reviewer severity, position, answer length, self-preference, agreement and more. Every
    number has its sample size, 95% CI, window and confidence tier; flags are
    Benjamini-Hochberg controlled (q <= 0.05)."""
    from council_db.report import model as contract

    if schema:
        print(json.dumps(contract.json_schema(), indent=2))
        return
    from concurrent.futures import ThreadPoolExecutor  # here: its logging import would slow --help

    from council_db.analysis.window import load_for_report

    window = checked_window(sessions=sessions, days=days, since=since, until=until, as_of=as_of, reviewer=reviewer,
                            model=model, config_version=config_version, category=category)
    db = state(ctx).database(read_only=True)
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The window's queries run (the database releases the GIL) while the analyses load:
        # over a million sessions each takes about a second.
        loading = pool.submit(load_for_report, db, window, sample_sessions)
        from council_db.analysis import anomalies, version_drift
        from council_db.report import render
        from council_db.report.builder import build
        loaded = loading.result()
    data, totals = loaded.data, loaded.totals
    filters = {k: v for k, v in dict(sessions=sessions, days=days, since=since, until=until, reviewer=reviewer,
                                     model=model, config_version=config_version, category=category).items() if v}
    versions = version_drift.load_config_versions(db, data)
    dropped = []
    if exclude_anomalies:
        data, dropped = anomalies.exclude(data)
        filters["exclude_anomalies"] = len(dropped)
        totals = None  # whole-window sums would still hold the excluded sessions
    result = build(data, as_of=as_of, filters=filters, seed=seed, totals=totals,
                   window_sessions=loaded.window_sessions, requested=window.requested())
    result.warnings.extend(version_drift.mixed_version_warnings(data, versions))
    if exclude_anomalies:
        result.warnings.insert(0, anomalies.excluded_note(dropped))
    if fmt is ReportFormat.json:
        page = contract.to_json(result)
    elif fmt is ReportFormat.markdown:
        page = render.markdown(result)
    elif fmt is ReportFormat.html:
        from council_db.analysis.session_means import session_series
        from council_db.report import render_html

        page = render_html.html(result, session_series(data))
    else:
        page = render.text(result)
    if output is None:
        print(page, end="")
        return
    from council_db.private_files import write_private

    try:
        write_private(output, page)  # 0600 when new, like export -o: a report is evidence too
    except OSError as error:
        raise CouncilDbError(f"cannot write the report to {output}: {error.strerror}") from None


class AuditFormat(str, Enum):
    text = "text"
    json = "json"


def audit(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(help="The session's id, as in council-db sessions.")],
    fmt: Annotated[AuditFormat, typer.Option("--format", help="text or json.")] = AuditFormat.text,
) -> None:
    """One session's ADR-015 indicators: length, slots, reviewers.

    The length correlation, slot means and reviewer calibration. Indicators only: 4-5
    answers cannot show a bias (use bias-report for that)."""
    from council_db.analysis import session_audit as session_audit

    result = session_audit.audit(state(ctx).database(read_only=True), session_id)
    print(result.model_dump_json(indent=2) if fmt is AuditFormat.json else session_audit.text(result), end="")
