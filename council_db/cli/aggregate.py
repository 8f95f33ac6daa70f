"""council-db scores and council-db leaderboard: the calibrated view (ADR 0017's strategies)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from council_db.cli.context import message, state
from council_db.cli.window_options import (
    SAMPLE_SESSIONS,
    AsOf,
    Categories,
    Configs,
    Days,
    Models,
    Reviewers,
    SampleSessions,
    Sessions,
    Since,
    Until,
    checked_window,
)

if TYPE_CHECKING:
    from council_db.analysis.aggregation.view import Settings


class MethodName(str, Enum):
    mean = "mean"
    weighted = "weighted"
    median = "median"
    bias_adjusted = "bias-adjusted"
    normalized = "normalized"


class RankingName(str, Enum):
    """The leaderboard's methods: the consensus strategies, and the joint model's quality."""

    quality = "quality"
    mean = "mean"
    weighted = "weighted"
    median = "median"
    bias_adjusted = "bias-adjusted"
    normalized = "normalized"


class ViewFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


MethodOption = Annotated[MethodName, typer.Option(
    "--method", help="mean, weighted, median, bias-adjusted (minus each reviewer's offset) or normalized "
                     "(per-reviewer z-scores).")]
RankingOption = Annotated[RankingName, typer.Option(
    "--method", help="quality (default: the bias report's joint-model quality, with reviewer severity, display "
                     "slot, self-preference and answer length removed), or a consensus score: mean, weighted, "
                     "median, bias-adjusted (minus each reviewer's offset) or normalized (per-reviewer z-scores).")]
WeightsOption = Annotated[Optional[str], typer.Option(
    metavar="REVIEWER=W,...", help="weighted: weight per reviewer (>= 0); reviewers not named weigh 1.")]
OffsetsOption = Annotated[Optional[str], typer.Option(
    metavar="REVIEWER=X,...", help="bias-adjusted: each reviewer's bias in score points (negative = harsh), "
                                   "subtracted; reviewers not named get 0. Default: the joint model's severities.")]
ConfigOption = Annotated[Optional[Path], typer.Option(
    metavar="FILE", help="TOML (.toml) or JSON file with 'weights' and/or 'offsets' tables; options win.")]
IncludeSelfOption = Annotated[bool, typer.Option(
    "--include-self", help="Keep self-reviews (a model scoring its own answer); left out by default.")]
FormatOption = Annotated[ViewFormat, typer.Option("--format", help="table, json or csv.")]


def _settings(method: MethodName | RankingName, weights: str | None, offsets: str | None, config: Path | None,
              include_self: bool) -> Settings:
    from council_db.analysis.aggregation import Method, parse_pairs, read_config
    from council_db.analysis.aggregation.view import Settings

    tables = read_config(config) if config is not None else {"weights": {}, "offsets": {}}
    chosen = Method(method.value)
    given = {"weights": tables["weights"] | parse_pairs(weights, "--weights"),
             "offsets": tables["offsets"] | parse_pairs(offsets, "--offsets")}
    used = {Method.weighted: "weights", Method.bias_adjusted: "offsets"}.get(chosen)
    for name, values in given.items():
        if values and name != used:
            message(f"note: {name} are not used by --method {chosen.value}")
    if include_self and chosen is Method.quality:
        message("note: --include-self is not used by --method quality (the joint model estimates "
                "self-preference from the self-reviews and removes it)")
    return Settings(chosen, given["weights"], given["offsets"], include_self)


def scores(
    ctx: typer.Context,
    session: Annotated[str, typer.Option("--session", help="The session's id, as in council-db sessions.")],
    method: MethodOption = MethodName.mean,
    weights: WeightsOption = None,
    offsets: OffsetsOption = None,
    config: ConfigOption = None,
    include_self: IncludeSelfOption = False,
    fmt: FormatOption = ViewFormat.table,
) -> None:
    """Each candidate's consensus score in one session.

    Under one aggregation method (--method). Offsets and per-reviewer scales are estimated
    over every stored session. Stored scores are never changed."""
    from council_db.analysis.aggregation.view import check_names, session_scores

    settings = _settings(method, weights, offsets, config, include_self)
    db = state(ctx).database(read_only=True)
    check_names(db, settings)
    result = session_scores(db, session, settings)
    title = f"session {result['session_id']} ({result['timestamp'] or 'no timestamp'}), {result['method']}, " \
            f"scale {result['scale']}"
    _emit(result, result["candidates"], fmt, title, {"session_id": result["session_id"], "method": result["method"]})


def leaderboard(
    ctx: typer.Context,
    method: RankingOption = RankingName.quality,
    weights: WeightsOption = None,
    offsets: OffsetsOption = None,
    config: ConfigOption = None,
    include_self: IncludeSelfOption = False,
    sessions: Sessions = None,
    days: Days = None,
    since: Since = None,
    until: Until = None,
    as_of: AsOf = None,
    reviewer: Reviewers = None,
    model: Models = None,
    config_version: Configs = None,
    category: Categories = None,
    seed: Annotated[int, typer.Option(help="Seed of the session resampling behind the CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
    fmt: FormatOption = ViewFormat.table,
) -> None:
    """Models ranked over a window, with 95% CIs.

    By default by the bias report's candidate quality (--method quality): the joint model's
    estimate, reviewer severity, display slot, self-preference and answer length removed.
    Other methods: mean consensus score, CIs from resampling sessions; their offsets and
    per-reviewer scales are estimated over the same window. Every output says what the
    method removes. Stored scores are never changed."""
    from council_db.analysis.aggregation.view import check_names, model_leaderboard
    settings = _settings(method, weights, offsets, config, include_self)
    window = checked_window(sessions=sessions, days=days, since=since, until=until, as_of=as_of, reviewer=reviewer,
                            model=model, config_version=config_version, category=category)
    db = state(ctx).database(read_only=True)
    check_names(db, settings)
    filters = {k: v for k, v in dict(sessions=sessions, days=days, since=since, until=until, reviewer=reviewer,
                                     model=model, config_version=config_version, category=category).items() if v}
    result = model_leaderboard(db, window, settings, filters=filters, seed=seed, sample_sessions=sample_sessions)
    w = result["window"]
    sampled = f" (a sample of the window's {w['sample']['of']:,})" if "sample" in w else ""
    rows = [{"rank": m["rank"], "model": m["model"], "score": m["score"]["estimate"], "ci_low": m["score"]["ci_low"],
             "ci_high": m["score"]["ci_high"], "rank_ci_low": m["rank_ci_low"], "rank_ci_high": m["rank_ci_high"],
             "sessions": m["sessions"], "answers": m["answers"], "records": m["records"]} for m in result["models"]]
    title = f"leaderboard, {result['method']}: {w['sessions']} sessions{sampled}, {w['records']} records " \
            f"(scale {w['scale']}), 95% CIs; asked: {w['requested']}; found: {w['start'] or '?'} to {w['end'] or '?'}"
    _emit(result, rows, fmt, title, {"method": result["method"], "window_start": w["start"],
                                     "window_end": w["end"], "window_sessions": w["sessions"]})
    for warning in result["warnings"]:
        message(f"warning: {warning}")


def _emit(result: dict[str, Any], rows: list[dict], fmt: ViewFormat, title: str, context: dict[str, Any]) -> None:
    """json: the whole result; table: rows under a title, calibration on stderr; csv: rows
    carrying the method and window in their own columns, so a file says what it holds."""
    from council_db.cli.output import Format, emit_rows

    if fmt is ViewFormat.json:
        print(json.dumps(result, indent=2))
    elif fmt is ViewFormat.csv:
        emit_rows([row | context for row in rows], Format.csv)
    else:
        emit_rows(rows, Format.table, title=title)
        message(f"calibration: {result['calibration']['source']}")
        if "removes" in result:
            message(f"removes: {result['removes']}")
