"""council-db bias-report and council-db audit."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import REPORT, Json, Output, chosen, destination, format_option
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

AUDIT = ("text", "json", "markdown")

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
    fmt: Annotated[Optional[str], format_option(*REPORT)] = None,
    as_json: Json = False,
    output: Output = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
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

    fmt = chosen(REPORT, fmt, json=as_json, output=output)
    if schema:
        with destination(output) as out:
            out.write(json.dumps(contract.json_schema(), indent=2) + "\n")
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
    if data.n_sessions == 0:
        from council_db.analysis.empty_window import where_the_data_is

        hint = where_the_data_is(db, window)
        if hint:
            result.warnings.insert(0, hint)
            message(f"note: {hint}")
    if fmt == "json":
        page = contract.to_json(result)
    elif fmt == "markdown":
        page = render.markdown(result)
    elif fmt == "html":
        from council_db.analysis.session_means import session_series
        from council_db.report import render_html

        page = render_html.html(result, session_series(data))
    else:
        page = render.text(result)
    with destination(output, "the report") as out:
        out.write(page)


def audit(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(
        help="The session's id, as in council-db sessions, or any prefix of it that no other id has.")],
    fmt: Annotated[Optional[str], format_option(*AUDIT)] = None,
    as_json: Json = False,
    output: Output = None,
) -> None:
    """One session's ADR-015 indicators: length, slots, reviewers.

    The length correlation, slot means and reviewer calibration. Indicators only: 4-5
    answers cannot show a bias (use bias-report for that)."""
    from council_db.analysis import session_audit
    from council_db.store.session_ids import full_id

    fmt = chosen(AUDIT, fmt, json=as_json, output=output)
    db = state(ctx).database(read_only=True)
    result = session_audit.audit(db, full_id(db, session_id))
    if fmt == "json":
        page = result.model_dump_json(indent=2) + "\n"
    else:
        page = session_audit.markdown(result) if fmt == "markdown" else session_audit.text(result)
    with destination(output) as out:
        out.write(page)
