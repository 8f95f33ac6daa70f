"""council-db check: the bias report's figures as a CI gate's exit code."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from council_db.cli.context import state
from council_db.cli.formats import Json, chosen, destination, format_option, output_option, wrote
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

FORMATS = ("text", "json", "junit", "github")  # gate.outputs.FORMATS, here so --help need not import it


def command(
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
    fmt: Annotated[Optional[str], format_option(*FORMATS)] = None,
    as_json: Json = False,
    output: Annotated[Optional[str], output_option(*FORMATS)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the session resampling behind bootstrap CIs.")] = 0,
    sample_sessions: SampleSessions = SAMPLE_SESSIONS,
) -> None:
    """Gate a CI job: exit 1 when a rule on the bias report fails.

    Builds the window's bias report once and judges each rule on it: by default on the 95% CI,
    not the estimate. Exit 0 when every rule passes (or cannot be measured: SKIP, and why), 1
    when one fails, 2 on a usage or data error (a bad rules file, an empty window)."""
    from council_db.cli.output import text_width
    from council_db.gate import outputs, verdicts

    fmt = chosen(FORMATS, fmt, json=as_json, output=output)
    rules = rules_from_options(
        rules_file, {"agreement-min": agreement_min, "position-consistency-min": position_consistency_min,
                     "severity-max": severity_max, "length-max": length_max, "retest-max": retest_max,
                     "min-sessions": min_sessions, "min-tier": min_tier, "stability-min": stability_min},
        no_flags, alpha, flag_kind or [], flag_reviewer or [], on)
    window, filters = window_and_filters(sessions=sessions, days=days, since=since, until=until, as_of=as_of,
                                         reviewer=reviewer, model=model, config_version=config_version,
                                         category=category, dimension=dimension)
    judged, outcomes = verdicts.judge_window(state(ctx).database(read_only=True), window, filters, rules, seed=seed,
                                             sample_sessions=sample_sessions)
    page = {"json": lambda out: outputs.as_json(outcomes, rules, judged),
            "junit": lambda out: outputs.junit(outcomes), "github": lambda out: outputs.github(outcomes),
            "text": lambda out: outputs.text(outcomes, judged, text_width(out))}[fmt]
    with destination(output, "the check") as out:
        out.write(page(out))
    wrote(output, fmt, len(outcomes), "result")
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(outputs.step_summary(outcomes, judged))
    raise typer.Exit(verdicts.exit_code(outcomes))
