"""The window options every analysis command shares (bias-report, trends, anomalies,
leaderboard; scores takes --dimension): one definition, so their names and help never drift apart."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

Many = Optional[list[str]]
Sessions = Annotated[Optional[int], typer.Option("--sessions", min=1, help="Only the latest N sessions.")]
Days = Annotated[Optional[float], typer.Option("--days", min=0, metavar="D",
                                               help="Only sessions in the D days up to --as-of.")]
Since = Annotated[Optional[str], typer.Option("--since", metavar="TIME",
                                              help="Only sessions at or after this ISO-8601 time.")]
Until = Annotated[Optional[str], typer.Option("--until", metavar="TIME",
                                              help="Only sessions before this ISO-8601 time.")]
AsOf = Annotated[Optional[str], typer.Option(
    "--as-of", metavar="TIME",
    help="As of this time: later sessions and later imports are ignored, so it can be reproduced.")]
Reviewers = Annotated[Many, typer.Option(
    "--reviewer", metavar="ID",
    help="Only scores by this reviewer: a model (with each of its prompts and settings) or one full label "
         "(repeatable).")]
Models = Annotated[Many, typer.Option("--model", metavar="ID",
                                      help="Only scores of this candidate model (repeatable).")]
Configs = Annotated[Many, typer.Option("--config-version", metavar="V",
                                       help="Only sessions with this council_config_version (repeatable).")]
Categories = Annotated[Many, typer.Option("--category", metavar="C",
                                          help="Only sessions of this query category (repeatable).")]
Dimension = Annotated[Optional[str], typer.Option(
    "--dimension", metavar="NAME",
    help="Analyse this rubric dimension's scores (score_dimensions) instead of the overall score; records "
         "without it are left out.")]
SAMPLE_SESSIONS = 5000  # analysis.loading.window.SAMPLE_SESSIONS, written out so --help need not import numpy
SampleSessions = Annotated[int, typer.Option(
    "--sample-sessions", min=0, metavar="N",
    help="Above N sessions, use the bias report's sample of about N of the window's sessions (the output "
         "says so). 0 = never sample.")]


def checked_window(*, sessions: int | None, days: float | None, since: str | None, until: str | None,
                   as_of: str | None, reviewer: list[str] | None, model: list[str] | None,
                   config_version: list[str] | None, category: list[str] | None, dimension: str | None = None):
    """The analysis.loading.window.Window these options give; a time that cannot be read is a usage
    error (exit 2) naming it, before any database is opened."""
    from council_db.analysis.loading.window import Window
    from council_db.cli.context import bad_time, checked_time
    from council_db.contract.fields import LineError

    for option, value in (("--since", since), ("--until", until), ("--as-of", as_of)):
        checked_time(option, value)
    window = Window(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                    reviewers=reviewer or [], models=model or [],
                    config_versions=config_version or [], categories=category or [], dimension=dimension)
    try:
        window.session_query()
    except LineError as error:
        raise bad_time(error.problem) from None
    return window


def window_and_filters(*, sessions: int | None, days: float | None, since: str | None, until: str | None,
                       as_of: str | None, reviewer: list[str] | None, model: list[str] | None,
                       config_version: list[str] | None, category: list[str] | None, dimension: str | None = None):
    """checked_window's window, and the options given as the outputs list them under "filters"
    (not --as-of or --dimension, which are stated with the window itself)."""
    window = checked_window(sessions=sessions, days=days, since=since, until=until, as_of=as_of, reviewer=reviewer,
                            model=model, config_version=config_version, category=category, dimension=dimension)
    given = dict(sessions=sessions, days=days, since=since, until=until, reviewer=reviewer, model=model,
                 config_version=config_version, category=category)
    return window, {name: value for name, value in given.items() if value}
