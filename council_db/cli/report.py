"""council-db bias-report and council-db audit."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import REPORT, Json, chosen, destination, format_option, output_option, to_file, wrote
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Dimension,
    Models,
    Reviewers,
    Sessions,
    Since,
    Until,
    window_and_filters,
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
    dimension: Dimension = None,
    fmt: Annotated[Optional[str], format_option(*REPORT)] = None,
    as_json: Json = False,
    output: Annotated[Optional[str], output_option(*REPORT)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: Annotated[int, typer.Option(
        "--sample-sessions", min=0, metavar="N",
        help="Above N sessions, record-level analyses use a sample of N of the window's sessions "
             "(counts and length correlations still use all). 0 = never sample.")] = SAMPLE_SESSIONS,
    schema: Annotated[bool, typer.Option("--schema", help="Print the JSON Schema of --format json and exit.")] = False,
    exclude_anomalies: Annotated[bool, typer.Option(
        "--exclude-anomalies", help="Leave out sessions council-db anomalies flags (says how many).")] = False,
    wide: Annotated[bool, typer.Option(
        "--wide", help="Text: every table whole and each line as long as it is (default: 80 columns).")] = False,
    method: Annotated[str, typer.Option(
        metavar="frequentist|bayes",
        help="bayes: also the hierarchical model's posteriors (each effect's credible interval and the "
             "probability of its sign); the JSON keeps both.")] = "frequentist",
) -> None:
    """The bias report: severity, position, length, self-preference.

    Reviewer severity, position, answer length, self-preference, agreement and more. Every
    number has its sample size, 95% CI, window and confidence tier; flags are
    Benjamini-Hochberg controlled (q <= 0.05)."""
    from council_db.report import model as contract

    fmt = chosen(REPORT, fmt, json=as_json, output=output)
    if method not in ("frequentist", "bayes"):
        raise typer.BadParameter(f"{method!r} is not a method: expected frequentist or bayes", param_hint="'--method'")
    if schema:
        with destination(output) as out:
            out.write(json.dumps(contract.json_schema(), indent=2) + "\n")
        wrote(output, "JSON Schema")
        return
    from council_db.report import render
    from council_db.report.for_window import report_for_window

    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    db = state(ctx).database(read_only=True)
    made = report_for_window(db, window, filters, seed=seed, sample_sessions=sample_sessions,
                             exclude_anomalies=exclude_anomalies, method=method)
    result = made.report
    if made.empty_window_hint:
        message(f"note: {made.empty_window_hint}")
    if fmt == "json":
        page = contract.to_json(result)
    elif fmt == "markdown":
        page = render.markdown(result)
    elif fmt == "html":
        page = made.html()
    else:
        page = render.text(result, None if wide else _text_width(output))
    with destination(output, "the report") as out:
        out.write(page)
    wrote(output, fmt, result.window.sessions, "session")


def _text_width(output: str | None) -> int:
    """80 columns, or a narrower terminal's ($COLUMNS, else the terminal's own) when printed there."""
    import shutil

    from council_db.report.text_layout import WIDTH

    return WIDTH if to_file(output) else min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns)


def audit(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(
        help="The session's id, as in council-db sessions, or any prefix of it that no other id has.")],
    fmt: Annotated[Optional[str], format_option(*AUDIT)] = None,
    as_json: Json = False,
    output: Annotated[Optional[str], output_option(*AUDIT)] = None,
) -> None:
    """One session's bias indicators: length, slots, reviewers.

    The length correlation, slot means and reviewer calibration. Indicators only: 4-5
    answers cannot show a bias (use bias-report for that)."""
    from council_db.analysis.sessions import session_audit
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
    wrote(output, fmt, result.records, "score")
