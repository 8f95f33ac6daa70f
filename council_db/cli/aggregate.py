"""council-db scores and council-db leaderboard: the calibrated view (ADR 0017's strategies)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TextIO

import typer

from council_db.cli.context import message, state
from council_db.cli.formats import LISTING, Csv, Json, Lines, Output, Wide, chosen, destination, format_option, wrote
from council_db.cli.output import text_width
from council_db.cli.pairwise_table import coefficient_lines, pairwise_columns, pairwise_shown
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
    ppi = "ppi"
    bradley_terry = "bradley-terry"


MethodOption = Annotated[MethodName, typer.Option(
    "--method", help="mean, weighted, median, bias-adjusted (minus each reviewer's offset) or normalized "
                     "(per-reviewer z-scores).")]
RankingOption = Annotated[RankingName, typer.Option(
    "--method", help="quality (default: the bias report's joint-model quality, with reviewer severity, display "
                     "slot, self-preference and answer length removed), or a consensus score: mean, weighted, "
                     "median, bias-adjusted (minus each reviewer's offset) or normalized (per-reviewer z-scores); "
                     "or ppi: quality on the human (or gold) raters' scale, the judges' scores of every session "
                     "corrected by the sessions people rated; or bradley-terry: pairwise strengths, the first-shown "
                     "advantage per judge removed, ties modelled, CIs from resampling sessions.")]
StyleOption = Annotated[Optional[str], typer.Option(
    metavar="length[,markdown]", help="bradley-terry: style covariates whose effect is removed: length (Arena's "
                                      "normalised length difference), markdown (header, list and bold counts, "
                                      "where imported), or length,markdown.")]
BaselineOption = Annotated[Optional[str], typer.Option(
    metavar="MODEL", help="bradley-terry: strengths and win rates against this candidate (default: strengths sum "
                          "to 0, win rates against a candidate of average strength); adds AlpacaEval's "
                          "length-controlled win rate.")]
StrongOption = Annotated[bool, typer.Option(
    "--strong-as-three", help="bradley-terry on five-level verdicts (A>>B ... B>>A): count A>>B as three wins, as "
                              "arena-hard does, instead of the ordinal model.")]
WeightsOption = Annotated[Optional[str], typer.Option(
    metavar="REVIEWER=W,...", help="weighted: weight per reviewer (>= 0); reviewers not named weigh 1.")]
OffsetsOption = Annotated[Optional[str], typer.Option(
    metavar="REVIEWER=X,...", help="bias-adjusted: each reviewer's bias in score points (negative = harsh), "
                                   "subtracted; reviewers not named get 0. Default: the joint model's severities.")]
ConfigOption = Annotated[Optional[Path], typer.Option(
    metavar="FILE", help="TOML (.toml) or JSON file with 'weights' and/or 'offsets' tables; options win.")]
IncludeSelfOption = Annotated[bool, typer.Option(
    "--include-self", help="Keep self-reviews (a model scoring its own answer); left out by default.")]
FormatOption = Annotated[Optional[str], format_option(
    *LISTING, help="table, json (the whole result), jsonl or csv (a row per candidate, with the method and window); "
                   "default table, or as -o's suffix says.")]


def _settings(method: MethodName | RankingName, weights: str | None, offsets: str | None, config: Path | None,
              include_self: bool, pairwise: dict[str, Any] | None = None) -> Settings:
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
    pairwise = {name: value for name, value in (pairwise or {}).items() if value}
    if pairwise and chosen is not Method.bradley_terry:
        message(f"note: {', '.join('--' + name.replace('_', '-') for name in pairwise)} "
                f"{'is' if len(pairwise) == 1 else 'are'} used by --method bradley-terry only")
        pairwise = {}
    style = tuple(part.strip() for part in pairwise.get("style", "").split(",") if part.strip())
    return Settings(chosen, given["weights"], given["offsets"], include_self, style=style,
                    baseline=pairwise.get("baseline"), strong_as_three=bool(pairwise.get("strong_as_three")))


def scores(
    ctx: typer.Context,
    session: Annotated[str, typer.Option("--session", metavar="ID", help="The session's id, as in council-db "
                                                                          "sessions, or a prefix no other id has.")],
    method: MethodOption = MethodName.mean,
    weights: WeightsOption = None,
    offsets: OffsetsOption = None,
    config: ConfigOption = None,
    include_self: IncludeSelfOption = False,
    dimension: Dimension = None,
    fmt: FormatOption = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """Each candidate's consensus score in one session.

    Under one aggregation method (--method). Offsets and per-reviewer scales are estimated
    over every stored session. Stored scores are never changed."""
    from council_db.analysis.aggregation.view import check_names, session_scores
    from council_db.cli.table_view import minute
    from council_db.store.session_ids import abbreviations, full_id

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    settings = _settings(method, weights, offsets, config, include_self)
    db = state(ctx).database(read_only=True)
    check_names(db, settings)
    result = session_scores(db, full_id(db, session), settings, dimension=dimension)
    shown = result["session_id"] if wide else abbreviations(db, [result["session_id"]])[result["session_id"]]
    when = (result["timestamp"] if wide else minute(result["timestamp"])) or "no timestamp"
    title = f"session {shown} ({when}), {result['method']}, scale {result['scale']}" + (
        f", dimension: {dimension}" if dimension else "")
    with destination(output) as out:
        _emit(result, result["candidates"], fmt, title,
              {"session_id": result["session_id"], "method": result["method"]}, out)
    wrote(output, fmt, len(result["candidates"]), "candidate")


def leaderboard(
    ctx: typer.Context,
    method: RankingOption = RankingName.quality,
    weights: WeightsOption = None,
    offsets: OffsetsOption = None,
    config: ConfigOption = None,
    include_self: IncludeSelfOption = False,
    style: StyleOption = None,
    baseline: BaselineOption = None,
    strong_as_three: StrongOption = False,
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
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind the CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
    fmt: FormatOption = None, as_json: Json = False, nl: Lines = False, as_csv: Csv = False, output: Output = None,
    wide: Wide = False,
) -> None:
    """Models ranked over a window, with 95% CIs.

    By default by the bias report's candidate quality (--method quality): the joint model's
    estimate, reviewer severity, display slot, self-preference and answer length removed.
    Other methods: mean consensus score, CIs from resampling sessions; their offsets and
    per-reviewer scales are estimated over the same window. --method ppi: prediction-powered
    inference, the judges' mean on every session corrected by the sessions human or gold raters
    also scored. --method bradley-terry: pairwise strengths with the first-shown advantage per
    judge (and, with --style, answer length and markdown) removed and ties modelled, win rates
    against --baseline or the average candidate. Every output says what the method removes.
    Stored scores are never changed."""
    from council_db.analysis.aggregation.view import check_names, model_leaderboard
    from council_db.cli.table_view import minute

    fmt = chosen(LISTING, fmt, json=as_json, nl=nl, csv=as_csv, output=output)
    settings = _settings(method, weights, offsets, config, include_self,
                         {"style": style, "baseline": baseline, "strong_as_three": strong_as_three})
    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    db = state(ctx).database(read_only=True)
    check_names(db, settings)
    result = model_leaderboard(db, window, settings, filters=filters, seed=seed, sample_sessions=sample_sessions)
    w = result["window"]
    sampled = f" (a sample of the window's {w['sample']['of']:,})" if "sample" in w else ""
    rows = [{"rank": m["rank"], "model": m["model"], "score": m["score"]["estimate"], "ci_low": m["score"]["ci_low"],
             "ci_high": m["score"]["ci_high"], "rank_ci_low": m["rank_ci_low"], "rank_ci_high": m["rank_ci_high"],
             "sessions": m["sessions"], **_count_columns(m), **_ppi_columns(m), **pairwise_columns(m)}
            for m in result["models"]]
    start, end = (w["start"], w["end"]) if wide else (minute(w["start"]), minute(w["end"]))
    found = f"{start} to {end}" if start else "no session with a time"
    scale = f"scale {w['scale']}" + (f", dimension: {w['dimension']}" if "dimension" in w else "")
    title = f"leaderboard, {result['method']}: {w['sessions']:,} sessions{sampled}, {w['records']:,} records " \
            f"({scale}), 95% CIs; asked: {w['requested']}; found: {found}"
    with destination(output) as out:
        _emit(result, rows if wide or fmt != "table" else [_standing_for_people(row) for row in rows], fmt, title,
              {"method": result["method"], "window_start": w["start"], "window_end": w["end"],
               "window_sessions": w["sessions"]}, out)
        if fmt == "table" and "coefficients" in result:
            out.write(coefficient_lines(result, None if wide else text_width(out)))
    wrote(output, fmt, len(rows), "model")
    for warning in result["warnings"]:
        message(f"warning: {warning}")


def _count_columns(model: dict[str, Any]) -> dict[str, Any]:
    """What a standing rests on: answers and records, or (bradley-terry) games."""
    return {"games": model["games"]} if "games" in model else {"answers": model["answers"], "records": model["records"]}


def _ppi_columns(model: dict[str, Any]) -> dict[str, Any]:
    """--method ppi's own columns: the labelled sessions, lambda and the judges' bias removed."""
    if "lambda" not in model:
        return {}
    bias = model["judge_bias"]
    return {"labelled": model["labelled_sessions"], "lambda": model["lambda"], "judge_bias": bias["estimate"],
            "judge_bias_ci_low": bias["ci_low"], "judge_bias_ci_high": bias["ci_high"],
            "judges_only": model["judges_only"]["estimate"]}


def _standing_for_people(row: dict[str, Any]) -> dict[str, Any]:
    """A model's standing as an 80-column table shows it (--wide and the other formats: every column)."""
    def number(value: float | None) -> str:
        return "" if value is None else f"{value:+.3f}"

    shown = {"rank": row["rank"], "model": row["model"], "score": number(row["score"]),
             "95% CI": "" if row["ci_low"] is None else f"[{number(row['ci_low'])}, {number(row['ci_high'])}]",
             "ranks": f"{row['rank_ci_low']}-{row['rank_ci_high']}"}
    if "labelled" in row:
        shown |= {"labelled": row["labelled"], "judge bias": number(row["judge_bias"])}
    return shown | pairwise_shown(row)


def _emit(result: dict[str, Any], rows: list[dict], fmt: str, title: str, context: dict[str, Any],
          out: TextIO) -> None:
    """json: the whole result; table: rows under a title, calibration on stderr; csv and jsonl:
    rows carrying the method and window in their own columns, so a file says what it holds."""
    from council_db.cli.output import emit_rows

    if fmt == "json":
        out.write(json.dumps(result, indent=2) + "\n")
    elif fmt in ("csv", "jsonl"):
        emit_rows([row | context for row in rows], fmt, out=out)
    else:
        emit_rows(rows, "table", title=title, out=out)
        message(f"calibration: {result['calibration']['source']}")
        if "removes" in result:
            message(f"removes: {result['removes']}")
